/* hf_config.c — see hf_config.h. */
#include "hf_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "family.h"
#include "fileio.h"
#include "schema.h"

typedef struct {
    const char *key;
    size_t at;
    cJSON *item;
} keyed;

static int by_key_then_place(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Drop every member of each object in doc that a later member of the same
 * name repeats, at every depth: Python's json keeps the last, so that is
 * the config transformers builds (cJSON would find the first). Sorting
 * keeps a hostile file of many keys O(n log n). 0, or -1 out of memory. */
static int keep_last_of_each_key(cJSON *doc)
{
    size_t n = 0;
    cJSON *c;
    cJSON_ArrayForEach(c, doc)
    {
        if (keep_last_of_each_key(c))
            return -1;
        n++;
    }
    if (!cJSON_IsObject(doc) || n < 2)
        return 0;
    keyed *k = malloc(n * sizeof *k);
    if (!k)
        return -1;
    size_t i = 0;
    cJSON_ArrayForEach(c, doc)
    {
        k[i] = (keyed){c->string ? c->string : "", i, c};
        i++;
    }
    qsort(k, n, sizeof *k, by_key_then_place);
    for (i = 0; i + 1 < n; i++)
        if (strcmp(k[i].key, k[i + 1].key) == 0)
            cJSON_Delete(cJSON_DetachItemViaPointer(doc, k[i].item));
    free(k);
    return 0;
}

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
    if (keep_last_of_each_key(hf)) {
        cJSON_Delete(hf);
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
    }
    rc = import_doc(model, hf, path, err);
    if (fill && !fill->doc) {
        fill->doc = hf;
        snprintf(fill->path, sizeof fill->path, "%s", path);
    } else {
        cJSON_Delete(hf);
    }
    return rc;
}

