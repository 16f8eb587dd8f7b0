/* schema.c — see schema.h. */
#include "schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "fileio.h"

int xs_choice_index(const char *choices, const char *word)
{
    size_t wl = strlen(word);
    int idx = 0;
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == wl && strncmp(p, word, len) == 0)
            return idx;
        if (!bar)
            break;
        p = bar + 1;
        idx++;
    }
    return -1;
}

int xs_choice_word(const char *choices, int index, char *dst, size_t size)
{
    const char *p = choices;
    for (int i = 0; i < index && p; i++) {
        p = strchr(p, '|');
        if (p)
            p++;
    }
    if (!p || index < 0)
        return -1;
    snprintf(dst, size, "%.*s", (int)strcspn(p, "|"), p);
    return 0;
}

static void fmt_range_num(char *buf, size_t size, const xs_field *f, const char *what)
{
    int has_hi = isfinite(f->hi);
    if (f->lo_open && !has_hi)
        snprintf(buf, size, "%s > %.15g", what, f->lo);
    else if (f->lo_open)
        snprintf(buf, size, "%s in (%.15g, %.15g]", what, f->lo, f->hi);
    else if (!has_hi)
        snprintf(buf, size, "%s >= %.15g", what, f->lo);
    else
        snprintf(buf, size, "%s in [%.15g, %.15g]", what, f->lo, f->hi);
}

void xs_schema_expect(const xs_field *f, char *buf, size_t size)
{
    switch (f->type) {
    case XS_F_NUM: fmt_range_num(buf, size, f, "a number"); break;
    case XS_F_INT: fmt_range_num(buf, size, f, "an integer"); break;
    case XS_F_STR: snprintf(buf, size, "a non-empty string of at most %zu characters, no "
                                       "control character",
                            f->size ? f->size - 1 : (size_t)4095); break;
    case XS_F_BOOL: snprintf(buf, size, "true or false"); break;
    case XS_F_ENUM: snprintf(buf, size, "one of %s", f->choices); break;
    case XS_F_OBJ: snprintf(buf, size, "a JSON object"); break;
    }
}

/* Render a JSON value briefly for "got ..." in messages. */
static void describe(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsNumber(v))
        snprintf(buf, size, "%.17g", v->valuedouble);
    else if (cJSON_IsString(v))
        snprintf(buf, size, "\"%.60s%s\"", v->valuestring,
                 strlen(v->valuestring) > 60 ? "..." : "");
    else if (cJSON_IsBool(v))
        snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        snprintf(buf, size, "null");
    else if (cJSON_IsArray(v))
        snprintf(buf, size, "an array");
    else
        snprintf(buf, size, "an object");
}

static int bad_value(const xs_field *f, const cJSON *v, const char *where, xs_error *err)
{
    char want[160], got[96];
    xs_schema_expect(f, want, sizeof want);
    describe(v, got, sizeof got);
    return xs_error_set(err, XS_EFIELD, "%s: field '%s' must be %s, got %s", where, f->path,
                        want, got);
}

static int in_range(const xs_field *f, double x)
{
    if (!isfinite(x))
        return 0;
    if (f->lo_open ? !(x > f->lo) : !(x >= f->lo))
        return 0;
    return !(x > f->hi);
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

int xs_schema_check(const xs_field *f, const cJSON *v, const char *where, xs_error *err)
{
    switch (f->type) {
    case XS_F_NUM:
        if (!cJSON_IsNumber(v) || !in_range(f, v->valuedouble))
            return bad_value(f, v, where, err);
        break;
    case XS_F_INT:
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
            !in_range(f, v->valuedouble))
            return bad_value(f, v, where, err);
        break;
    case XS_F_STR:
        /* reports print ids, names and notes as they are: a newline or an
         * escape sequence of the file's would forge lines or reach the
         * terminal */
        if (!cJSON_IsString(v) || v->valuestring[0] == '\0' ||
            (f->size && strlen(v->valuestring) >= f->size) || has_control(v->valuestring))
            return bad_value(f, v, where, err);
        break;
    case XS_F_BOOL:
        if (!cJSON_IsBool(v))
            return bad_value(f, v, where, err);
        break;
    case XS_F_ENUM:
        if (!cJSON_IsString(v) || xs_choice_index(f->choices, v->valuestring) < 0)
            return bad_value(f, v, where, err);
        break;
    case XS_F_OBJ:
        if (!cJSON_IsObject(v))
            return bad_value(f, v, where, err);
        break;
    }
    return XS_OK;
}

void xs_schema_store(const xs_field *f, const cJSON *v, void *dest)
{
    if (f->offset == XS_NOSTORE || !dest)
        return;
    char *at = (char *)dest + f->offset;
    switch (f->type) {
    case XS_F_NUM: *(double *)at = v->valuedouble; break;
    case XS_F_INT: *(int64_t *)at = (int64_t)v->valuedouble; break;
    case XS_F_STR: snprintf(at, f->size, "%s", v->valuestring); break;
    case XS_F_BOOL: *(int *)at = cJSON_IsTrue(v); break;
    case XS_F_ENUM: *(int *)at = xs_choice_index(f->choices, v->valuestring); break;
    case XS_F_OBJ: break;
    }
}

void xs_json_num_or_null(cJSON *o, const char *key, int known, double v)
{
    if (known)
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static _Thread_local xs_json_path_hook path_hook;
static _Thread_local void *path_hook_ctx;

void xs_json_path_watch(xs_json_path_hook hook, void *ctx)
{
    path_hook = hook;
    path_hook_ctx = ctx;
}

cJSON *xs_json_path(const cJSON *root, const char *path)
{
    if (path_hook)
        path_hook(path, path_hook_ctx);
    const cJSON *cur = root;
    char part[128];
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len >= sizeof part || !cJSON_IsObject(cur))
            return NULL;
        memcpy(part, p, len);
        part[len] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, part);
        p = dot ? dot + 1 : p + len;
    }
    return (cJSON *)cur;
}

/* 1 if some field's path is exactly path; 2 if path is a strict prefix
 * (an object holding fields); 0 if unknown. */
static int classify_scan(const xs_field *fields, size_t n, const char *path, size_t len)
{
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(fields[i].path, path) == 0)
            return 1;
        if (strncmp(fields[i].path, path, len) == 0 && fields[i].path[len] == '.')
            found = 2;
    }
    return found;
}

/* classify_scan's answers, remembered per thread by table and path: a
 * document's keys are looked up against every field of the table (a
 * sweep loads its scenario at each point), and a table is static, so the
 * answer for its address and a path never changes. Direct-mapped: a
 * collision only scans again. */
#define CLASS_SLOTS 256
typedef struct {
    const xs_field *fields;
    size_t n;
    char path[88];
    int kind;
} class_entry;
static _Thread_local class_entry class_memo[CLASS_SLOTS];

static int classify(const xs_field *fields, size_t n, const char *path)
{
    size_t len = strlen(path);
    if (len >= sizeof class_memo[0].path)
        return classify_scan(fields, n, path, len);
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)fields; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)path[i]) * 0x100000001b3ull;
    class_entry *e = &class_memo[(h ^ h >> 32) & (CLASS_SLOTS - 1)];
    if (e->fields == fields && e->n == n && memcmp(e->path, path, len + 1) == 0)
        return e->kind;
    e->kind = classify_scan(fields, n, path, len);
    e->fields = fields;
    e->n = n;
    memcpy(e->path, path, len + 1);
    return e->kind;
}

/* List the names allowed directly under prefix, for "unknown field" help. */
static void known_children(const xs_field *fields, size_t n, const char *prefix, char *buf,
                           size_t size)
{
    size_t plen = strlen(prefix), used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *path = fields[i].path;
        if (plen && (strncmp(path, prefix, plen) != 0 || path[plen] != '.'))
            continue;
        const char *name = plen ? path + plen + 1 : path;
        size_t nl = strcspn(name, ".");
        /* skip names already listed (several fields share an object) */
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) {
            const char *q = fields[j].path;
            if (plen && (strncmp(q, prefix, plen) != 0 || q[plen] != '.'))
                continue;
            const char *qn = plen ? q + plen + 1 : q;
            dup = strcspn(qn, ".") == nl && strncmp(qn, name, nl) == 0;
        }
        if (dup || used + nl + 3 >= size)
            continue;
        used += (size_t)snprintf(buf + used, size - used, "%s%.*s", used ? ", " : "",
                                 (int)nl, name);
    }
}

/* The problems of one document: the first goes to err as it is, the
 * others after it (err->more) when all; without all the first ends the
 * check, as it always did for devices. */
typedef struct {
    xs_error *err;
    int all, count, dropped, code;
} problems;

/* Note rc's problem (its message in one); 1 when the check stops here. */
static int record(problems *p, int rc, const xs_error *one)
{
    if (rc == XS_OK)
        return 0;
    if (p->count++ == 0) {
        p->code = rc;
        if (p->err)
            *p->err = *one;
    } else {
        xs_error_add(p->err, one, &p->dropped);
    }
    return !p->all;
}

static int walk(const xs_field *fields, size_t n, const cJSON *obj, const char *prefix,
                const char *where, problems *p)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        char path[256];
        xs_error one;
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", c->string);
        int twice = 0;
        for (const cJSON *d = obj->child; d != c && !twice; d = d->next)
            twice = strcmp(d->string, c->string) == 0;
        if (twice) {
            if (record(p, xs_error_set(&one, XS_EFIELD, "%s: field '%s' appears twice", where,
                                       path),
                       &one))
                return 1;
            continue;
        }
        int kind = classify(fields, n, path);
        if (kind == 0) {
            char known[512];
            known_children(fields, n, prefix, known, sizeof known);
            if (record(p, xs_error_set(&one, XS_EFIELD,
                                       "%s: unknown field '%s' (known here: %s)", where, path,
                                       known),
                       &one))
                return 1;
            continue;
        }
        if (kind == 2) {
            if (!cJSON_IsObject(c)) {
                if (record(p, xs_error_set(&one, XS_EFIELD, "%s: field '%s' must be an object",
                                           where, path),
                           &one))
                    return 1;
                continue;
            }
            if (walk(fields, n, c, path, where, p))
                return 1;
        }
    }
    return 0;
}

/* 1 if a value on the way to path is there but not an object (walk has
 * said so already: the fields under it are not missing as well). */
static int blocked(const cJSON *root, const char *path)
{
    const cJSON *cur = root;
    char part[128];
    for (const char *p = path; cur;) {
        size_t len = strcspn(p, ".");
        if (!p[len])
            return 0;
        if (!cJSON_IsObject(cur))
            return 1;
        if (len >= sizeof part)
            return 0;
        memcpy(part, p, len);
        part[len] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, part);
        if (cur && !cJSON_IsObject(cur))
            return 1;
        p += len + 1;
    }
    return 0;
}

int xs_schema_check_field(const xs_field *f, const cJSON *root, const char *where,
                          xs_error *err)
{
    const cJSON *v = xs_json_path(root, f->path);
    if (v)
        return xs_schema_check(f, v, where, err);
    if (!f->required || f->def)
        return XS_OK;
    char want[160];
    xs_schema_expect(f, want, sizeof want);
    return xs_error_set(err, XS_EFIELD, "%s: missing required field '%s' (%s: %s)", where,
                        f->path, want, f->help);
}

cJSON *xs_schema_default(const xs_field *f)
{
    if (!f->def)
        return NULL;
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(f->def, &end, 1);
    if (!v || cJSON_IsObject(v) || cJSON_IsArray(v)) {
        cJSON_Delete(v);
        v = cJSON_CreateString(f->def);
    }
    return v;
}

/* Store f's default into dest; a default the field refuses is a bug of
 * the table, reported as such. */
static int store_default(const xs_field *f, const char *where, void *dest, xs_error *err)
{
    cJSON *d = xs_schema_default(f);
    if (!d)
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", where);
    char what[320];
    snprintf(what, sizeof what, "%s (the default of '%s')", where, f->path);
    int rc = xs_schema_check(f, d, what, err);
    if (rc == XS_OK)
        xs_schema_store(f, d, dest);
    cJSON_Delete(d);
    return rc;
}

static int apply(const xs_field *fields, size_t n, const cJSON *root, const char *where,
                 void *dest, xs_error *err, int all)
{
    if (!cJSON_IsObject(root))
        return xs_error_set(err, XS_EFIELD, "%s: the document must be a JSON object", where);
    problems p = {err, all, 0, 0, XS_OK};
    int stop = walk(fields, n, root, "", where, &p);
    for (size_t i = 0; i < n && !stop; i++) {
        const xs_field *f = &fields[i];
        const cJSON *v = xs_json_path(root, f->path);
        xs_error one;
        if (!v && all && blocked(root, f->path))
            continue;
        int rc = xs_schema_check_field(f, root, where, &one);
        if (rc == XS_OK && v)
            xs_schema_store(f, v, dest);
        else if (rc == XS_OK && f->def)
            rc = store_default(f, where, dest, &one);
        stop = record(&p, rc, &one);
    }
    if (p.count)
        xs_error_close(err, where, p.dropped);
    return p.code;
}

int xs_schema_apply(const xs_field *fields, size_t n, const cJSON *root, const char *where,
                    void *dest, xs_error *err)
{
    return apply(fields, n, root, where, dest, err, 0);
}

int xs_schema_apply_all(const xs_field *fields, size_t n, const cJSON *root, const char *where,
                        void *dest, xs_error *err)
{
    return apply(fields, n, root, where, dest, err, 1);
}

/* The value of stored field f in src, or NULL when the field is optional
 * and unset (0 or ""), as a load leaves an absent optional field. */
static cJSON *stored_value(const xs_field *f, const void *src)
{
    const char *at = (const char *)src + f->offset;
    char word[64];
    switch (f->type) {
    case XS_F_NUM: {
        double x = *(const double *)at;
        return !f->required && !f->def && x == 0 ? NULL : cJSON_CreateNumber(x);
    }
    case XS_F_INT: {
        int64_t x = *(const int64_t *)at;
        return !f->required && !f->def && x == 0 ? NULL : cJSON_CreateNumber((double)x);
    }
    case XS_F_STR: return !f->required && !at[0] ? NULL : cJSON_CreateString(at);
    case XS_F_BOOL: return cJSON_CreateBool(*(const int *)at);
    case XS_F_ENUM:
        return xs_choice_word(f->choices, *(const int *)at, word, sizeof word)
                   ? NULL
                   : cJSON_CreateString(word);
    case XS_F_OBJ: break;
    }
    return NULL;
}

/* Put v at the dotted path of root, making the objects on the way. */
static int put(cJSON *root, const char *path, cJSON *v)
{
    cJSON *cur = root;
    char part[128];
    for (const char *p = path;;) {
        size_t len = strcspn(p, ".");
        if (len >= sizeof part)
            return -1;
        memcpy(part, p, len);
        part[len] = '\0';
        if (!p[len])
            return cJSON_AddItemToObject(cur, part, v) ? 0 : -1;
        cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, part);
        if (!next)
            next = cJSON_AddObjectToObject(cur, part);
        if (!cJSON_IsObject(next))
            return -1;
        cur = next;
        p += len + 1;
    }
}

int xs_schema_write(const xs_field *fields, size_t n, const void *src, const cJSON *extra,
                    const char *where, cJSON **out, xs_error *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", where);
    for (size_t i = 0; i < n; i++) {
        const xs_field *f = &fields[i];
        cJSON *v;
        if (f->offset != XS_NOSTORE) {
            v = stored_value(f, src);
        } else {
            const cJSON *e = extra ? xs_json_path(extra, f->path) : NULL;
            v = e ? cJSON_Duplicate(e, 1) : NULL;
            if (!e && f->required) {
                cJSON_Delete(root);
                return xs_error_set(err, XS_EFIELD, "%s: nothing to write for required field "
                                                    "'%s' (%s)",
                                    where, f->path, f->help);
            }
        }
        if (v && put(root, f->path, v)) {
            cJSON_Delete(v);
            cJSON_Delete(root);
            return xs_error_set(err, XS_ENOMEM, "%s: cannot place field '%s'", where, f->path);
        }
    }
    *out = root;
    return XS_OK;
}

/* The deepest nesting of arrays and objects in text, strings skipped: a
 * document the parser refused for its depth is valid JSON all the same. */
static int nesting(const char *text)
{
    int depth = 0, deepest = 0, in_string = 0;
    for (const char *p = text; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = 0;
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '[' || *p == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if (*p == ']' || *p == '}') {
            depth--;
        }
    }
    return deepest;
}

int xs_json_parse(const char *text, const char *where, cJSON **out, xs_error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root && nesting(text) > CJSON_NESTING_LIMIT)
        return xs_error_set(err, XS_EJSON,
                            "%s: arrays and objects nested more than %d deep, the most the "
                            "JSON reader takes (no xpusim document nests past a few levels)",
                            where, CJSON_NESTING_LIMIT);
    if (!root) {
        int line = 1, col = 1;
        for (const char *p = text; end && p < end && *p; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return xs_error_set(err, XS_EJSON, "%s: malformed JSON at line %d, column %d", where,
                            line, col);
    }
    *out = root;
    return XS_OK;
}

int xs_json_load(const char *path, cJSON **out, xs_error *err)
{
    char *text = NULL;
    int rc = xs_read_text(path, "a JSON file", &text, NULL, err);
    if (rc)
        return rc;
    rc = xs_json_parse(text, path, out, err);
    free(text);
    return rc;
}

/* [-]digits and nothing else: no blanks, exponent, point or hex. */
static int is_decimal_integer(const char *text)
{
    const char *p = text + (*text == '-');
    if (!*p)
        return 0;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

cJSON *xs_set_value(const xs_field *f, const char *kv, const char *text, xs_error *err)
{
    const char *end = NULL;
    cJSON *value = cJSON_ParseWithOpts(text, &end, 1);
    if (!value || cJSON_IsObject(value) || cJSON_IsArray(value)) {
        cJSON_Delete(value);
        value = cJSON_CreateString(text);
    }
    if (value && f->type == XS_F_INT && !is_decimal_integer(text)) {
        cJSON_Delete(value);
        char want[160];
        xs_schema_expect(f, want, sizeof want);
        xs_error_set(err, XS_EFIELD, "--set %s: '%s' expects %s written in decimal digits, got '%s'",
                     kv, f->path, want, text);
        return NULL;
    }
    if (!value)
        xs_error_set(err, XS_ENOMEM, "--set %s: out of memory", kv);
    return value;
}
