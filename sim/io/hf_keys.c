/* hf_keys.c — see hf_keys.h. */
#include "hf_keys.h"

#include <stdio.h>

#include "scenario.h"

int xs_hf_put_default(cJSON *model, const char *key, cJSON *v)
{
    if (!v)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(model, key)) {
        cJSON_Delete(v);
        return 0;
    }
    cJSON_AddItemToObject(model, key, v);
    return 0;
}

/* v checked as the model key it becomes checks it, the message naming
 * the Hugging Face key: the user's file says hidden_size, not model.hidden */
static int check_as(xs_hf_key key, const cJSON *v, const char *path, xs_error *err)
{
    char canon[64];
    snprintf(canon, sizeof canon, "model.%s", key.canon);
    const xs_field *f = xs_scn_field(canon);
    if (!f)
        return XS_OK; /* a key of no scenario field: the family checks it */
    xs_field as = *f;
    as.path = key.hf;
    return xs_schema_check(&as, v, path, err);
}

int xs_hf_copy_keys(cJSON *model, const cJSON *hf, const xs_hf_key *map, size_t n,
                    cJSON *(*dflt)(const char *canon, const cJSON *hf), const char *path,
                    xs_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (cJSON_GetObjectItemCaseSensitive(model, map[i].canon))
            continue; /* a key beside hf_config (or a --set) wins */
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, map[i].hf);
        if (cJSON_IsNull(v) && map[i].null == XS_HF_NULL_REFUSED)
            return xs_error_set(err, XS_EFIELD,
                                "%s: field '%s' must be a value, got null (transformers would "
                                "build the model with None; give the number or leave the key "
                                "out for its default)",
                                path, map[i].hf);
        if (v && !cJSON_IsNull(v)) {
            int rc = check_as(map[i], v, path, err);
            if (rc)
                return rc;
        }
        cJSON *copy = v && !cJSON_IsNull(v) ? cJSON_Duplicate(v, 1) : dflt(map[i].canon, hf);
        if (!copy)
            return xs_error_set(err, XS_EFIELD, "%s: missing required field '%s' (model.%s)",
                                path, map[i].hf, map[i].canon);
        cJSON_AddItemToObject(model, map[i].canon, copy);
    }
    return XS_OK;
}
