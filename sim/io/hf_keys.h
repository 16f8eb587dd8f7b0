/* hf_keys.h — a Hugging Face config.json's keys onto the scenario's
 * model keys, for the families' imports (family.h): the map of one
 * family's config (its key names), the transformers defaults of the keys
 * a config may omit, and a key put only where the scenario does not give
 * it (a key beside model.hf_config, or a --set, wins). */
#ifndef XS_HF_KEYS_H
#define XS_HF_KEYS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "error.h"

/* What a null for a key means: an error (transformers would build a
 * broken module from None: nn.Dropout(None), a None hidden size), or the
 * family's default, where the config class itself turns None into one
 * (GPT2Config's n_inner: 4 x n_embd; num_key_value_heads: the head count;
 * T5's num_decoder_layers: num_layers). */
typedef enum { XS_HF_NULL_REFUSED, XS_HF_NULL_DEFAULT } xs_hf_null;

/* One Hugging Face key mapped onto a model key (canon: "layers"). */
typedef struct {
    const char *canon;
    const char *hf;
    xs_hf_null null;
} xs_hf_key;

/* Put key into model unless the scenario (or a --set) gives it; v is
 * taken (deleted when not put). 0, or -1 when v is NULL (out of memory). */
int xs_hf_put_default(cJSON *model, const char *key, cJSON *v);

/* Each of the n keys of map that model lacks, copied from hf, or where hf
 * lacks it (or holds a null its map entry allows) the family's default
 * (dflt(canon, hf); NULL: none). A copied value is checked as the model
 * key checks it, and an error names path and the Hugging Face key
 * ("config.json: field 'hidden_size' must be ..."), as does a key with
 * neither value nor default. */
int xs_hf_copy_keys(cJSON *model, const cJSON *hf, const xs_hf_key *map, size_t n,
                    cJSON *(*dflt)(const char *canon, const cJSON *hf), const char *path,
                    xs_error *err);

#endif
