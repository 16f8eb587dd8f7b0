/* family.h — a model family (model.family) is whole behind one const
 * record, as a device class is behind backend.h's: the Hugging Face
 * model_types it reads and how it imports their config.json, the scenario
 * keys it derives from others, the relations its builder needs (the
 * workload's gate asks), its forward pass (the op-list builder's), the
 * module names PEFT gives its linears, and the lines reports describe it
 * with. Nothing outside the family's own file (workload/families/)
 * switches on the family: it asks the record. Adding a family is its file
 * and one slot in family.c's table (and its choice in XS_FAMILY_CHOICES).
 *
 * The record lives here, below the workload, because the loader reads a
 * config.json through it; the slots whose arguments are the workload's
 * own types take them as opaque pointers. */
#ifndef XS_FAMILY_H
#define XS_FAMILY_H

#include <cjson/cJSON.h>

#include "error.h"
#include "scenario.h"
#include "strbuf.h"

struct xs_wb;         /* the op-list builder's state (workload/wl_build.h) */
struct xs_lora_names; /* PEFT's names of a model's linears (workload/lora.h) */

typedef struct xs_family {
    const char *name; /* model.family */
    /* The config.json model_types read as this family (NULL-terminated, in
     * the order errors list them), and the import of one: model (the
     * scenario's model section) completed from hf, a config of model_type
     * type read from path, where the scenario does not give a key; or one
     * error line naming the config's key that it cannot model. */
    const char *const *model_types;
    int (*import)(cJSON *model, const cJSON *hf, const char *type, const char *path,
                  xs_error *err);
    /* NULL, or the keys of the document root (a scenario of this family)
     * whose defaults follow from its model, put in before the schema reads
     * it (ViT's sequence from its patches) */
    int (*complete)(cJSON *root, xs_error *err);
    /* The relations between s's fields its builder needs (and the other
     * families' fields left at their defaults); where names s. */
    int (*check)(const xs_scenario *s, const char *where, xs_error *err);
    /* Its whole forward pass, head and loss included. */
    void (*forward)(struct xs_wb *c);
    /* The names PEFT gives its linears; or, where the model's arch picks
     * them (BERT's or GPT-2's), lora(s) instead (lora_names NULL). */
    const struct xs_lora_names *lora_names;
    const struct xs_lora_names *(*lora)(const xs_scenario *s);
    /* The table report's model lines; params: the model's parameters. */
    void (*describe)(xs_strbuf *sb, const xs_scenario *s, double params);
    /* NULL, or its own keys in the JSON report's model and train objects */
    void (*model_json)(cJSON *model, const xs_scenario *s);
    void (*train_json)(cJSON *train, const xs_scenario *s);
} xs_family;

extern const xs_family xs_family_classic;
extern const xs_family xs_family_llama;
extern const xs_family xs_family_distilbert;
extern const xs_family xs_family_vit;
extern const xs_family xs_family_t5;

/* The record of model.family id (XS_FAMILY_*); the classic one for an id
 * out of range (the schema allows none). */
const xs_family *xs_family_of(int id);

/* PEFT's names of the linears of s's model, a model of family f. */
const struct xs_lora_names *xs_family_lora(const xs_family *f, const xs_scenario *s);

/* The record named name ("llama"), or NULL. */
const xs_family *xs_family_named(const char *name);

/* The record that reads config.json model_type type, or NULL; and the
 * model_types every family reads, '|'-separated, into buf. */
const xs_family *xs_family_for_type(const char *type);
void xs_family_types(char *buf, size_t size);

#endif
