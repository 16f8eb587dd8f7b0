/* hf_config.c — see hf_config.h. */
#include "hf_config.h"

#include <stdio.h>
#include <string.h>

#include "family.h"
#include "fileio.h"
#include "schema.h"

/* The model keys of hf (a Hugging Face config.json read from path) put
 * into model where the scenario does not give them, by the family that
 * reads its model_type. */
static int import_doc(cJSON *model, const cJSON *hf, const char *path, xs_error *err)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(hf, "model_type");
    const char *t = cJSON_IsString(type) ? type->valuestring : NULL;
    const xs_family *f = t ? xs_family_for_type(t) : NULL;
    if (!f) {
        char types[256];
        xs_family_types(types, sizeof types);
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'model_type' must be one of %s, got %s%s%s", path, types,
                            t ? "\"" : "", t ? t : "nothing", t ? "\"" : "");
    }
    return f->import(model, hf, t, path, err);
}

int xs_hf_import(cJSON *model, const char *scn_path, const xs_hf_cache *lend,
                 xs_hf_cache *fill, xs_error *err)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(model, "hf_config");
    if (!ref)
        return XS_OK;
    if (!cJSON_IsString(ref) || !ref->valuestring[0])
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'model.hf_config' must be a path to a config.json",
                            scn_path);
    char dir[1024], path[sizeof((xs_hf_cache *)0)->path];
    xs_dirname(scn_path, dir, sizeof dir);
    if (ref->valuestring[0] == '/')
        snprintf(path, sizeof path, "%s", ref->valuestring);
    else
        snprintf(path, sizeof path, "%s/%s", dir, ref->valuestring);
    if (lend && lend->doc && strcmp(lend->path, path) == 0)
        return import_doc(model, lend->doc, path, err);
    cJSON *hf = NULL;
    int rc = xs_json_load(path, &hf, err);
    if (rc)
        return rc;
    rc = import_doc(model, hf, path, err);
    if (fill && !fill->doc) {
        fill->doc = hf;
        snprintf(fill->path, sizeof fill->path, "%s", path);
    } else {
        cJSON_Delete(hf);
    }
    return rc;
}

