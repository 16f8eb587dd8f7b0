/* hf_keys.c — see hf_keys.h. */
#include "hf_keys.h"

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

int xs_hf_copy_keys(cJSON *model, const cJSON *hf, const xs_hf_key *map, size_t n,
                    cJSON *(*dflt)(const char *canon, const cJSON *hf), const char *path,
                    xs_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (cJSON_GetObjectItemCaseSensitive(model, map[i].canon))
            continue; /* a key beside hf_config (or a --set) wins */
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, map[i].hf);
        cJSON *copy = v && !cJSON_IsNull(v) ? cJSON_Duplicate(v, 1) : dflt(map[i].canon, hf);
        if (!copy)
            return xs_error_set(err, XS_EFIELD, "%s: missing required field '%s' (model.%s)",
                                path, map[i].hf, map[i].canon);
        cJSON_AddItemToObject(model, map[i].canon, copy);
    }
    return XS_OK;
}
