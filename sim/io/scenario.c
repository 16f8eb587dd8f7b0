/* scenario.c — loads scenarios and applies --set overrides, through one
 * schema table (scenario_fields.c): the document read, the overrides put
 * in, the Hugging Face config imported (hf_config.c), the derived defaults
 * completed, every field checked. The relations between fields are the
 * workload's gate's (gate.h). */
#include "scenario.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "family.h"
#include "fileio.h"
#include "hf_config.h"
#include "paths.h"
#include "suggest.h"

/* An unknown --set key, with the nearest known key when one is close. */
static int unknown_key(const char *kv, const char *key, xs_error *err)
{
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    const char **paths = malloc(n * sizeof *paths);
    const char *near = NULL;
    if (paths) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(f[i].path, "id") != 0 && f[i].type != XS_F_OBJ)
                paths[k++] = f[i].path;
        near = xs_suggest(key, paths, k);
    }
    free(paths);
    if (near)
        return xs_error_set(err, XS_EARG,
                            "--set %s: unknown key '%s'; did you mean '%s'? (see `xpusim "
                            "predict --help` for the keys)",
                            kv, key, near);
    return xs_error_set(err, XS_EARG,
                        "--set %s: unknown key '%s' (see `xpusim predict --help` for the keys)",
                        kv, key);
}

/* One override "key=value" read and checked as its field takes it: the
 * field, and the value (owned by the caller). */
static int parse_override(const char *kv, const xs_field **field, cJSON **parsed,
                          xs_error *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return xs_error_set(err, XS_EARG, "--set %s: expected key=value, e.g. train.batch=32",
                            kv);
    char key[128];
    size_t klen = (size_t)(eq - kv);
    if (klen >= sizeof key)
        return xs_error_set(err, XS_EARG, "--set %s: key too long", kv);
    memcpy(key, kv, klen);
    key[klen] = '\0';
    const xs_field *f = xs_scn_field(key);
    if (!f || strcmp(key, "id") == 0 || f->type == XS_F_OBJ) /* notes are for files */
        return unknown_key(kv, key, err);
    const char *text = eq + 1;
    cJSON *value = xs_set_value(f, kv, text, err);
    if (!value)
        return err ? err->code : XS_EARG;
    /* a file named on the command line is relative to where the user is,
     * not to the scenario file (which is what a path inside the file is
     * relative to) */
    char cwd[PATH_MAX], abs[2 * PATH_MAX];
    if (strcmp(key, "model.hf_config") == 0 && cJSON_IsString(value) && text[0] &&
        text[0] != '/' && getcwd(cwd, sizeof cwd)) {
        snprintf(abs, sizeof abs, "%s/%s", cwd, text);
        cJSON_Delete(value);
        if (!(value = cJSON_CreateString(abs)))
            return xs_error_set(err, XS_ENOMEM, "--set %s: out of memory", kv);
    }
    char where[160];
    snprintf(where, sizeof where, "--set %s", kv);
    int rc = xs_schema_check(f, value, where, err);
    if (rc) {
        cJSON_Delete(value);
        return rc;
    }
    *field = f;
    *parsed = value;
    return XS_OK;
}

static int apply_override(cJSON *root, const char *kv, xs_error *err)
{
    const xs_field *f;
    cJSON *value;
    int rc = parse_override(kv, &f, &value, err);
    if (rc)
        return rc;
    const char *key = f->path;
    if (xs_scn_doc_put(root, key, value) != 0) {
        cJSON_Delete(value);
        return xs_error_set(err, XS_EARG, "--set %s: cannot set '%s' in the scenario", kv, key);
    }
    return XS_OK;
}

/* The defaults that depend on other keys (scenario.h), put into the
 * document before it is checked, so that --set and an imported
 * config.json count:
 * train.seq: what the Hugging Face example script of model.head pads or
 * cuts every sample to (run_clm.py's block_size min(1024, the positions),
 * huggingface/transformers@00d481d18f914b55e65faa31e82321629691eadb; run_qa.py's
 * max_seq_length 384 @03ea97ae17f461340572ce7c7250b22d7a146893; run_glue.py's 128
 * @0055f834470c4662897181543b27d8cf8c50b9d6), within model.max_positions,
 * unless the family derives its own (family.h's complete);
 * train.optimizer_impl: foreach, torch.optim's choice on CUDA, when neither
 * it nor train.fused_optimizer is given and the optimizer is adam or adamw
 * (a file that states fused_optimizer keeps auto, its meaning before). A
 * key they need that is absent or bad is left for the schema to report. */
int xs_scn_complete(cJSON *root, xs_error *err)
{
    const cJSON *train = cJSON_GetObjectItemCaseSensitive(root, "train");
    if (train && !cJSON_IsObject(train))
        return XS_OK;
    /* the family's own first (ViT's sequence, T5's lengths) */
    const cJSON *family = xs_scn_doc_value(root, "model.family");
    const xs_family *fam = family ? xs_family_named(family->valuestring) : NULL;
    int rc = fam && fam->complete ? fam->complete(root, err) : XS_OK;
    if (rc)
        return rc;
    const cJSON *head = xs_scn_doc_value(root, "model.head");
    const cJSON *maxpos = xs_scn_doc_value(root, "model.max_positions");
    cJSON *add_seq = NULL, *add_impl = NULL;
    if (!xs_json_path(root, "train.seq") && head && maxpos) {
        static const double by_head[] = {384, 1024, 128}; /* XS_HEAD_CHOICES order */
        double seq = by_head[xs_choice_index(XS_HEAD_CHOICES, head->valuestring)];
        add_seq = cJSON_CreateNumber(seq < maxpos->valuedouble ? seq : maxpos->valuedouble);
        if (!add_seq)
            return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    const cJSON *opt = xs_scn_doc_value(root, "train.optimizer");
    const char *o = opt ? opt->valuestring : xs_scn_field("train.optimizer")->def;
    if (!xs_json_path(root, "train.optimizer_impl") &&
        !xs_json_path(root, "train.fused_optimizer") &&
        (opt || !xs_json_path(root, "train.optimizer")) &&
        (strcmp(o, "adam") == 0 || strcmp(o, "adamw") == 0)) {
        add_impl = cJSON_CreateString("foreach");
        if (!add_impl) {
            cJSON_Delete(add_seq);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
    }
    /* train.lora.train_head: PEFT's task models add the head to
     * modules_to_save for sequence classification (classifier_module_names
     * ["classifier", "score"]) and question answering ({"qa_outputs"})
     * (huggingface/peft src/peft/peft_model.py, PeftModelForSequenceClassification
     * and PeftModelForQuestionAnswering; team code index, find_string ids
     * 270209158 and 43280701); a causal LM's head stays frozen */
    const cJSON *rank = xs_scn_doc_value(root, "train.lora.rank");
    if (!xs_json_path(root, "train.lora.train_head") && head && rank && rank->valuedouble > 0) {
        cJSON *th = cJSON_CreateBool(strcmp(head->valuestring, "lm") != 0);
        if (!th || xs_scn_doc_put(root, "train.lora.train_head", th)) {
            cJSON_Delete(th);
            cJSON_Delete(add_seq);
            cJSON_Delete(add_impl);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
    }
    int failed = 0;
    if (add_seq && xs_scn_doc_put(root, "train.seq", add_seq)) {
        cJSON_Delete(add_seq);
        failed = 1;
    }
    if (add_impl && xs_scn_doc_put(root, "train.optimizer_impl", add_impl)) {
        cJSON_Delete(add_impl);
        failed = 1;
    }
    return failed ? xs_error_set(err, XS_ENOMEM, "out of memory") : XS_OK;
}

static int check_id(const xs_scenario *s, const char *path, xs_error *err)
{
    if (xs_is_stdin(path)) /* no file name to match */
        return XS_OK;
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strrchr(stem, '.');
    if (dot && strcmp(dot, ".json") == 0)
        *dot = '\0';
    if (strcmp(stem, s->id) != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'id' must equal the file name '%s', got \"%s\"", path,
                            stem, s->id);
    return XS_OK;
}

/* See scenario.h: the user looks at the right place. */
void xs_scn_name_sets(const char *const *overrides, int n, xs_error *err)
{
    if (!err || strncmp(err->msg, "--set ", 6) == 0)
        return; /* the override's own error already names it */
    char prefix[sizeof err->msg] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof prefix; i++) {
        const char *eq = strchr(overrides[i], '=');
        if (!eq)
            continue;
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - overrides[i]), overrides[i]);
        const char *leaf = strrchr(key, '.');
        const char *value = eq + 1; /* a file it names, say */
        if (strstr(err->msg, key) || (leaf && strstr(err->msg, leaf + 1)) ||
            (strlen(value) >= 4 && strstr(err->msg, value)))
            used += (size_t)snprintf(prefix + used, sizeof prefix - used, "--set %s: ",
                                     overrides[i]);
    }
    if (used == 0 || used >= sizeof prefix)
        return;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s%s", prefix, err->msg);
    memcpy(err->msg, msg, sizeof msg);
    xs_error_one_line(err->msg, sizeof err->msg); /* the overrides are the user's text */
}

/* The keys that completing a scenario read (xs_json_path's hook): the
 * values its derived defaults depend on. */
static void note_read(const char *path, void *ctx)
{
    xs_scn_base *b = ctx;
    for (size_t i = 0; i < b->nread; i++)
        if (strcmp(b->read[i], path) == 0)
            return;
    if (b->nread == sizeof b->read / sizeof b->read[0] || strlen(path) >= sizeof b->read[0])
        b->read_all = 1; /* too many to tell: none is plain */
    else
        snprintf(b->read[b->nread++], sizeof b->read[0], "%s", path);
}

/* The scenario document at path with the n overrides applied. */
static int read_doc(const char *path, const char *const *overrides, int n, cJSON **out,
                    xs_error *err)
{
    cJSON *root = NULL;
    int rc = xs_json_load(path, &root, err);
    if (rc)
        return rc;
    if (!cJSON_IsObject(root))
        rc = xs_error_set(err, XS_EFIELD, "%s: the document must be a JSON object", path);
    else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "inference")))
        rc = xs_error_set(err, XS_EUNSUPPORTED,
                          "%s: an inference scenario (it has an \"inference\" section): "
                          "`xpusim threads -s %s` plans its thread counts; the other commands "
                          "take training scenarios",
                          path, path);
    for (int i = 0; i < n && rc == XS_OK; i++)
        rc = apply_override(root, overrides[i], err);
    if (rc == XS_OK) {
        *out = root;
    } else {
        cJSON_Delete(root);
        xs_scn_name_sets(overrides, n, err);
    }
    return rc;
}

/* A document with its overrides (taken: deleted here) to the scenario:
 * the Hugging Face config, the completion, the schema, the checks. reads:
 * the base whose completion reads are noted and whose hf cache is filled
 * (one thread); hf: a cache lent read only (any thread). */
static int finish(cJSON *root, const char *path, xs_scn_base *reads, const xs_hf_cache *hf,
                  xs_scenario *scn, xs_error *err)
{
    int rc = XS_OK;
    if (reads)
        xs_json_path_watch(note_read, reads);
    cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (cJSON_IsObject(model))
        rc = xs_hf_import(model, path, hf, reads ? &reads->hf : NULL, err);
    if (rc == XS_OK)
        rc = xs_scn_complete(root, err);
    if (reads)
        xs_json_path_watch(NULL, NULL);
    xs_scenario s;
    memset(&s, 0, sizeof s);
    if (rc == XS_OK) {
        size_t nf;
        const xs_field *fields = xs_scn_fields(&nf);
        rc = xs_schema_apply_all(fields, nf, root, path, &s, err);
    }
    cJSON_Delete(root);
    if (rc == XS_OK)
        rc = check_id(&s, path, err);
    if (rc == XS_OK) {
        if (strlen(path) < sizeof s.source) /* else the gate names it by its id */
            memcpy(s.source, path, strlen(path) + 1);
        *scn = s;
    }
    return rc;
}

static int load(const char *path, const char *const *overrides, int n, xs_scenario *scn,
                xs_scn_base *reads, xs_error *err)
{
    cJSON *root = NULL;
    int rc = read_doc(path, overrides, n, &root, err);
    if (rc)
        return rc;
    if (reads && !(reads->doc = cJSON_Duplicate(root, 1))) {
        cJSON_Delete(root);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    rc = finish(root, path, reads, NULL, scn, err);
    if (rc != XS_OK)
        xs_scn_name_sets(overrides, n, err);
    return rc;
}

int xs_scn_load(const char *path, const char *const *overrides, int n, xs_scenario *scn,
                xs_error *err)
{
    return load(path, overrides, n, scn, NULL, err);
}

int xs_scn_open(const char *id_or_path, const char *const *overrides, int n, xs_scenario *scn,
                xs_error *err)
{
    char path[PATH_MAX];
    int rc = xs_resolve("scenarios", id_or_path, path, sizeof path, err);
    return rc ? rc : xs_scn_load(path, overrides, n, scn, err);
}

int xs_scn_base_open(const char *id_or_path, const char *const *overrides, int n,
                     xs_scn_base *b, xs_error *err)
{
    memset(b, 0, sizeof *b);
    int rc = xs_resolve("scenarios", id_or_path, b->path, sizeof b->path, err);
    if (rc == XS_OK && (rc = load(b->path, overrides, n, &b->s, b, err)) != XS_OK)
        xs_scn_base_free(b);
    return rc;
}

/* A key whose value is only its own field: not read by the completion
 * (which derives other keys' defaults from what it reads), not a model
 * key (a model's keys come from its Hugging Face config too), stored. */
static int plain_key(const xs_scn_base *b, const xs_field *f)
{
    if (b->read_all || f->offset == XS_NOSTORE || strncmp(f->path, "model.", 6) == 0)
        return 0;
    for (size_t i = 0; i < b->nread; i++)
        if (strcmp(b->read[i], f->path) == 0)
            return 0;
    return 1;
}

/* A variant whose keys other keys derive from (or model keys): the
 * base's document again, from memory, the overrides applied after its
 * own, and the rest of a load (the Hugging Face config from the base's
 * copy when it names the same file). Any refusal is XS_EARG: the caller
 * loads it whole for the loader's message. */
static int derived_variant(const xs_scn_base *b, const char *const *vary, int n,
                           xs_scenario *out)
{
    cJSON *root = b->doc ? cJSON_Duplicate(b->doc, 1) : NULL;
    xs_error ignored;
    int rc = root ? XS_OK : XS_EARG;
    for (int i = 0; i < n && rc == XS_OK; i++)
        rc = apply_override(root, vary[i], &ignored);
    if (rc != XS_OK) {
        cJSON_Delete(root);
        return XS_EARG;
    }
    return finish(root, b->path, NULL, &b->hf, out, &ignored) == XS_OK ? XS_OK : XS_EARG;
}

int xs_scn_variant(const xs_scn_base *b, const char *const *vary, int n, xs_scenario *out,
                   xs_error *err)
{
    xs_scenario s = b->s;
    int plain = 1;
    for (int i = 0; i < n && plain; i++) {
        const xs_field *f;
        cJSON *v;
        xs_error ignored;
        if (parse_override(vary[i], &f, &v, &ignored) != XS_OK)
            return XS_EARG; /* the caller loads it whole: the loader's message */
        if ((plain = plain_key(b, f)))
            xs_schema_store(f, v, &s);
        cJSON_Delete(v);
    }
    if (!plain)
        return derived_variant(b, vary, n, out);
    *out = s;
    (void)err;
    return XS_OK;
}

void xs_scn_base_free(xs_scn_base *b)
{
    if (!b)
        return;
    cJSON_Delete(b->doc);
    cJSON_Delete(b->hf.doc);
    b->doc = b->hf.doc = NULL;
}

int xs_scn_check_set(const char *kv, xs_error *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    int rc = apply_override(root, kv, err);
    cJSON_Delete(root);
    return rc;
}
