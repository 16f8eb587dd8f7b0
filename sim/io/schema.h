/* schema.h — table-driven validation of a JSON document against a list of
 * fields (dotted path, type, range, required), storing each value into a C
 * struct. Devices and scenarios both use it, so every loader error reads the
 * same: "<file>: field '<path>' must be <expected>, got <value>". */
#ifndef XS_SCHEMA_H
#define XS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "error.h"

typedef enum {
    XS_F_NUM,  /* stored as double */
    XS_F_INT,  /* stored as int64_t; must be integral */
    XS_F_STR,  /* stored as char[size] */
    XS_F_BOOL, /* stored as int (0/1) */
    XS_F_ENUM, /* stored as int: index into choices "a|b|c" */
    XS_F_OBJ   /* any JSON object, kept in the document, not stored or looked into */
} xs_ftype;

#define XS_NOSTORE ((size_t)-1)

typedef struct {
    const char *path;    /* dotted path from the document root */
    xs_ftype type;
    int required;
    double lo, hi;       /* NUM/INT: inclusive range, lo exclusive if lo_open */
    int lo_open;
    const char *choices; /* ENUM only */
    size_t offset;       /* into the destination struct, or XS_NOSTORE */
    size_t size;         /* STR: destination buffer size */
    const char *help;    /* what the field means, for --help and errors */
    /* NULL, or the value an absent field takes, written as a --set value
     * is (8, 0.78, true, adamw): JSON when all of it parses, else a word.
     * A field with one is optional. */
    const char *def;
} xs_field;

/* Check that root holds only known fields (no duplicates, objects where the
 * table nests), every required field, values of the right type and range;
 * store them into dest, and each absent field's default. where names the
 * document in messages. Stops at the first problem. fields is a static
 * table: which paths it knows is remembered by its address. */
int xs_schema_apply(const xs_field *fields, size_t n, const cJSON *root, const char *where,
                    void *dest, xs_error *err);

/* xs_schema_apply that goes on past a problem: every unknown or doubled
 * key, missing required field and bad value is reported, the first as
 * err->msg (what xs_schema_apply would say) and the others in err->more. */
int xs_schema_apply_all(const xs_field *fields, size_t n, const cJSON *root, const char *where,
                        void *dest, xs_error *err);

/* f's default as a new JSON value (caller frees), or NULL when f has none
 * (or memory ran out). */
cJSON *xs_schema_default(const xs_field *f);

/* The inverse of xs_schema_apply: a new document (*out, caller frees) with
 * the fields in table order, stored ones taken from src (an optional
 * field left 0 or "" is omitted, as a load would leave it), the others
 * (notes, free-form objects) copied from extra at the same path when
 * there. A required field with nothing to write is an error naming it. */
int xs_schema_write(const xs_field *fields, size_t n, const void *src, const cJSON *extra,
                    const char *where, cJSON **out, xs_error *err);

/* Check field f of the document root alone: present if required, and a
 * value it accepts; the same message xs_schema_apply would give. */
int xs_schema_check_field(const xs_field *f, const cJSON *root, const char *where,
                          xs_error *err);

/* Check one value against one field; used for command-line overrides too. */
int xs_schema_check(const xs_field *f, const cJSON *v, const char *where, xs_error *err);

/* Describe what a field expects ("a number > 0", "one of fp32|tf32"). */
void xs_schema_expect(const xs_field *f, char *buf, size_t size);

/* The value of an override kv ("train.batch=32", "--set kv" in messages) for
 * field f, from text (what follows the '='), as every --set reads one: JSON
 * when all of the text parses as JSON (32, true, 0.1), else the text as a
 * string (amp_fp16: no quotes needed), so that "32abc" or "8 64" stays text
 * the field refuses; a count must be written in decimal digits (6.4e1 and
 * 0x20 are slips, not 64 and 32). The value is the caller's (cJSON_Delete),
 * still to be checked against f (xs_schema_check, where "--set kv"); NULL
 * with err on a non-decimal count or out of memory. */
cJSON *xs_set_value(const xs_field *f, const char *kv, const char *text, xs_error *err);

/* Parse text as JSON; on failure report line and column. Caller frees. */
int xs_json_parse(const char *text, const char *where, cJSON **out, xs_error *err);

/* Read path and parse it as JSON (errors name the file, line and column).
 * Caller frees. */
int xs_json_load(const char *path, cJSON **out, xs_error *err);

/* Find a value by dotted path; NULL if any part is missing. */
cJSON *xs_json_path(const cJSON *root, const char *path);
/* Have this thread's xs_json_path calls report each path they look up to
 * hook (NULL: none): which keys a computation read. */
typedef void (*xs_json_path_hook)(const char *path, void *ctx);
void xs_json_path_watch(xs_json_path_hook hook, void *ctx);
/* Store v (checked against f already) into dest at f's offset. */
void xs_schema_store(const xs_field *f, const cJSON *v, void *dest);

/* Add key to o: the number v when known, else null (a figure a row
 * does not have, e.g. a run that does not fit has no cost). */
void xs_json_num_or_null(cJSON *o, const char *key, int known, double v);

/* Index of word in "a|b|c", or -1. */
int xs_choice_index(const char *choices, const char *word);

/* The index-th word of "a|b|c" into dst; 0, or -1 when there is none. */
int xs_choice_word(const char *choices, int index, char *dst, size_t size);

#endif
