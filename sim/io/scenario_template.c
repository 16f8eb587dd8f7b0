/* scenario_template.c — what `xpusim scenarios --new` writes: the minimal
 * scenario (an id, a model, data.samples) with every train, data and
 * cluster key written out at its default, and a "notes" object in each
 * section saying what each key means and where its default comes from.
 * The values and the notes come from the schema table, so the template
 * cannot drift from what the loader accepts. */
#include "scenario.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int xs_scn_check_id(const char *id, xs_error *err)
{
    size_t len = strlen(id);
    int ok = len > 0 && len < sizeof ((xs_scenario *)0)->id && isalnum((unsigned char)id[0]);
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)id[i]) || strchr("-_.", id[i]) != NULL;
    if (!ok)
        return xs_error_set(err, XS_EARG,
                            "'%s' is not a scenario id: expected 1 to 63 letters, digits, '-', "
                            "'_' or '.', starting with a letter or digit (it becomes the file "
                            "name ID.json and the scenario's \"id\")",
                            id);
    return XS_OK;
}

/* The model the template starts from: bert-base-uncased's shape, as its
 * config.json on the Hugging Face hub gives it (scenarios/models/
 * bert-base-uncased.json), with a sequence-classification head. */
static const struct {
    const char *key;
    double num;
    const char *word;
} MODEL[] = {
    {"arch", 0, "encoder"},      {"layers", 12, NULL},       {"hidden", 768, NULL},
    {"heads", 12, NULL},         {"ffn", 3072, NULL},        {"vocab", 30522, NULL},
    {"max_positions", 512, NULL}, {"type_vocab", 2, NULL},   {"activation", 0, "gelu"},
    {"dropout", 0.1, NULL},      {"attn_dropout", 0.1, NULL}, {"head", 0, "cls"},
};

/* GLUE SST-2's training split (huggingface.co/datasets/nyu-mll/glue, sst2:
 * 67,349 examples), a stand-in the user replaces with their own count */
#define TEMPLATE_SAMPLES 67349

static const struct {
    const char *name, *note;
} SECTION_NOTE[] = {
    {"model", "the shape of the model: here bert-base-uncased's, from its config.json. To use "
              "a published model instead, replace these keys by {\"hf_config\": "
              "\"path/to/config.json\", \"head\": \"cls\"} (path relative to this file; "
              "model_type bert, roberta, gpt2, llama, mistral or qwen2); a key written beside hf_config overrides it"},
    {"train", "the training recipe; every key here is at its default, what the Hugging Face "
              "Trainer does on PyTorch 2.0-2.7 when given no flags. Delete a key to take its "
              "default, or change it to describe your run"},
    {"data", "data.samples is the one key with no default: set it to your training set's "
             "sample count (sequences of train.seq tokens)"},
    {"cluster", "how many devices share the run"},
};

static const char *section_note(const char *section)
{
    for (size_t i = 0; i < sizeof SECTION_NOTE / sizeof *SECTION_NOTE; i++)
        if (strcmp(SECTION_NOTE[i].name, section) == 0)
            return SECTION_NOTE[i].note;
    return "";
}

/* The section's keys in table order, from doc (the completed minimal
 * scenario) or their defaults, then "notes": the section's note and each
 * key's help (a key with no value, train.host_op_us, only there). */
static cJSON *section(const char *name, const cJSON *doc)
{
    size_t n, plen = strlen(name);
    const xs_field *f = xs_scn_fields(&n);
    cJSON *out = cJSON_CreateObject(), *notes = cJSON_CreateObject();
    int ok = out && notes && cJSON_AddStringToObject(notes, "about", section_note(name));
    for (size_t i = 0; i < n && ok; i++) {
        if (strncmp(f[i].path, name, plen) != 0 || f[i].path[plen] != '.' ||
            f[i].type == XS_F_OBJ)
            continue;
        const char *key = f[i].path + plen + 1;
        const cJSON *given = xs_json_path(doc, f[i].path);
        cJSON *v = given ? cJSON_Duplicate(given, 1) : xs_schema_default(&f[i]);
        /* a key one level down (train.lora.rank) goes into its object */
        const char *dot = strchr(key, '.');
        cJSON *into = out;
        if (v && dot) {
            char sub[64];
            snprintf(sub, sizeof sub, "%.*s", (int)(dot - key), key);
            into = cJSON_GetObjectItemCaseSensitive(out, sub);
            if (!into)
                into = cJSON_AddObjectToObject(out, sub);
            ok = into != NULL;
        }
        if (v && ok)
            ok = cJSON_AddItemToObject(into, dot ? dot + 1 : key, v) != 0;
        else
            cJSON_Delete(v);
        ok = ok && cJSON_AddStringToObject(notes, key, f[i].help);
    }
    if (ok && cJSON_AddItemToObject(out, "notes", notes))
        return out;
    cJSON_Delete(notes);
    cJSON_Delete(out);
    return NULL;
}

int xs_scn_template(const char *id, cJSON **out, xs_error *err)
{
    int rc = xs_scn_check_id(id, err);
    if (rc)
        return rc;
    cJSON *doc = cJSON_CreateObject();
    cJSON *model = cJSON_AddObjectToObject(doc, "model");
    cJSON *data = cJSON_AddObjectToObject(doc, "data");
    int ok = model && data && cJSON_AddNumberToObject(data, "samples", TEMPLATE_SAMPLES);
    for (size_t i = 0; ok && i < sizeof MODEL / sizeof *MODEL; i++)
        ok = MODEL[i].word ? cJSON_AddStringToObject(model, MODEL[i].key, MODEL[i].word) != NULL
                           : cJSON_AddNumberToObject(model, MODEL[i].key, MODEL[i].num) != NULL;
    rc = ok ? xs_scn_complete(doc, err) : xs_error_set(err, XS_ENOMEM, "out of memory");
    cJSON *t = rc ? NULL : cJSON_CreateObject();
    char description[256];
    snprintf(description, sizeof description,
             "%s: bert-base-uncased sequence classification, %d samples, with the Hugging "
             "Face Trainer's defaults (a template: edit it)",
             id, TEMPLATE_SAMPLES);
    ok = t && cJSON_AddStringToObject(t, "id", id) &&
         cJSON_AddStringToObject(t, "description", description) &&
         cJSON_AddStringToObject(
             t, "source",
             "written by `xpusim scenarios --new`. A minimal scenario is an id, a model and "
             "data.samples; every other train, data and cluster key has a default, and this "
             "file writes each one out with a note (each section's \"notes\", which xpusim "
             "does not read). The defaults are what the Hugging Face Trainer does on PyTorch "
             "2.0-2.7 when given no flags (transformers' TrainingArguments and Trainer, "
             "torch.optim; `xpusim scenarios --help` cites them). data.samples 67349 is GLUE "
             "SST-2's training split (huggingface.co/datasets/nyu-mll/glue): put your own. "
             "Optional sections not written here: host (the host CPU's per-op costs, `xpusim "
             "predict --help`), device.power_limit_w and device.cuda_context_mib");
    static const char *const parts[] = {"model", "train", "data", "cluster"};
    for (size_t i = 0; ok && i < sizeof parts / sizeof *parts; i++) {
        cJSON *s = section(parts[i], doc);
        ok = s && cJSON_AddItemToObject(t, parts[i], s);
        if (s && !ok)
            cJSON_Delete(s);
    }
    cJSON_Delete(doc);
    if (rc)
        return rc;
    if (!ok) {
        cJSON_Delete(t);
        return xs_error_set(err, XS_ENOMEM, "out of memory while writing the template");
    }
    *out = t;
    return XS_OK;
}
