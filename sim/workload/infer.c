/* infer.c — see infer.h. */
#include "infer.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kernel_fn.h"
#include "paths.h"
#include "schema.h"

#define OFF(m) offsetof(xs_inf_scenario, m)
#define DIM(path, req, hi, m, help) {path, XS_F_INT, req, 1, hi, 0, NULL, OFF(m), 0, help, NULL}

/* Sizes stay below what a 2^40-element activation would need: a check
 * against typos (hidden 1e9), not a statement about any host. */
static const xs_field FIELDS[] = {
    {"id", XS_F_STR, 1, 0, 0, 0, NULL, OFF(id), sizeof(((xs_inf_scenario *)0)->id),
     "scenario id, equal to the file name without .json", NULL},
    {"description", XS_F_STR, 1, 0, 0, 0, NULL, OFF(description),
     sizeof(((xs_inf_scenario *)0)->description), "what runs", NULL},
    {"source", XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096, "where the shape comes from", NULL},
    {"model.family", XS_F_ENUM, 1, 0, 0, 0, XS_INF_FAMILY_CHOICES, OFF(family),
     0, "lstm (torch.nn.LSTM) or encoder (a Transformer encoder's forward)", NULL},
    DIM("model.layers", 1, 4096, layers, "stacked layers"),
    DIM("model.hidden", 1, 65536, hidden, "hidden size"),
    DIM("model.input_size", 0, 65536, input_size, "lstm: features of each input step"),
    DIM("model.heads", 0, 1024, heads, "encoder: attention heads (divide hidden)"),
    DIM("model.ffn", 0, 262144, ffn, "encoder: FFN inner size"),
    DIM("inference.batch", 1, 65536, batch, "samples run together"),
    DIM("inference.seq", 1, 65536, seq, "sequence length (time steps, tokens)"),
    {"inference.precision", XS_F_ENUM, 0, 0, 0, 0, XS_INF_PRECISION_CHOICES, OFF(precision), 0,
     "number format: fp32, or bf16 (lstm only: weights and activations bf16, sums and the cell "
     "state fp32, as torch.nn.LSTM after .to(torch.bfloat16))",
     "fp32"},
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

int xs_inf_is_inference(const char *path)
{
    cJSON *root = NULL;
    if (xs_json_load(path, &root, NULL) != XS_OK)
        return 0;
    int yes = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "inference"));
    cJSON_Delete(root);
    return yes;
}

static const xs_field *field_of(const char *key)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(FIELDS[i].path, key) == 0 && FIELDS[i].offset != XS_NOSTORE &&
            strcmp(key, "id") != 0)
            return &FIELDS[i];
    return NULL;
}

/* KEY=VALUE into root at KEY's dotted path; the schema checks the value. */
static int apply_set(cJSON *root, const char *kv, xs_error *err)
{
    const char *eq = strchr(kv, '=');
    char key[64];
    if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key)
        return xs_error_set(err, XS_EARG, "--set %s: expected KEY=VALUE (inference.batch=64)", kv);
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    if (!field_of(key)) {
        char keys[512] = "";
        for (size_t i = 0; i < NFIELDS; i++)
            if (field_of(FIELDS[i].path) && FIELDS[i].type != XS_F_STR)
                snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s",
                         keys[0] ? ", " : "", FIELDS[i].path);
        return xs_error_set(err, XS_EARG, "--set %s: an inference scenario has no key '%s' "
                                          "(keys: %s)",
                            kv, key, keys);
    }
    const xs_field *f = field_of(key);
    cJSON *v = xs_set_value(f, kv, eq + 1, err);
    if (!v)
        return err ? err->code : XS_EARG;
    char where[160];
    snprintf(where, sizeof where, "--set %s", kv);
    int rc = xs_schema_check(f, v, where, err);
    if (rc) {
        cJSON_Delete(v);
        return rc;
    }
    cJSON *at = root;
    char *dot = strchr(key, '.');
    if (dot) {
        *dot = '\0';
        cJSON *sub = cJSON_GetObjectItemCaseSensitive(root, key);
        if (!cJSON_IsObject(sub)) {
            cJSON_DeleteItemFromObjectCaseSensitive(root, key);
            sub = cJSON_AddObjectToObject(root, key);
        }
        at = sub;
    }
    const char *leaf = dot ? dot + 1 : key;
    if (!at) {
        cJSON_Delete(v);
        return xs_error_set(err, XS_ENOMEM, "out of memory applying --set %s", kv);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(at, leaf);
    cJSON_AddItemToObject(at, leaf, v);
    return XS_OK;
}

/* A family's own keys, required for it and refused for the other. */
static int check_family(const xs_inf_scenario *s, const char *path, xs_error *err)
{
    int lstm = s->family == XS_INF_LSTM;
    const char *need = lstm ? (s->input_size ? NULL : "model.input_size")
                            : !s->heads ? "model.heads" : !s->ffn ? "model.ffn" : NULL;
    if (need)
        return xs_error_set(err, XS_EFIELD, "%s: field '%s' is required for model.family %s",
                            path, need, lstm ? "lstm" : "encoder");
    const char *other = lstm ? (s->heads ? "model.heads" : s->ffn ? "model.ffn" : NULL)
                             : s->input_size ? "model.input_size" : NULL;
    if (other)
        return xs_error_set(err, XS_EFIELD, "%s: field '%s' does not apply to model.family %s",
                            path, other, lstm ? "lstm" : "encoder");
    if (!lstm && s->precision == XS_INF_BF16)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'inference.precision' must be fp32 for model.family "
                            "encoder, got bf16 (bf16 is the LSTM kernel's only)",
                            path);
    if (!lstm && s->hidden % s->heads)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'model.heads' must divide model.hidden (%lld), got %lld",
                            path, (long long)s->hidden, (long long)s->heads);
    /* the LSTM kernel's activations: seq x batch x 4 hidden floats */
    double acts = (double)s->seq * (double)s->batch * 4.0 * (double)s->hidden;
    if (acts > 0x1p40)
        return xs_error_set(err, XS_ERANGE,
                            "%s: inference.seq x inference.batch x 4 x model.hidden must stay "
                            "below 2^40 elements, got %.3g",
                            path, acts);
    return XS_OK;
}

int xs_inf_open(const char *id_or_path, const char *const *sets, int nsets, xs_inf_scenario *s,
                xs_error *err)
{
    char path[PATH_MAX];
    int rc = xs_resolve("scenarios", id_or_path, path, sizeof path, err);
    if (rc)
        return rc;
    cJSON *root = NULL;
    if ((rc = xs_json_load(path, &root, err)))
        return rc;
    if (!cJSON_IsObject(root))
        rc = xs_error_set(err, XS_EFIELD, "%s: the document must be a JSON object", path);
    else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "inference")))
        rc = xs_error_set(err, XS_EFIELD,
                          "%s: not an inference scenario (no \"inference\" section with batch "
                          "and seq): xpusim threads takes scenarios/lstm-inference.json, "
                          "scenarios/encoder-inference.json or one like them",
                          path);
    for (int i = 0; i < nsets && rc == XS_OK; i++)
        rc = apply_set(root, sets[i], err);
    xs_inf_scenario out;
    memset(&out, 0, sizeof out);
    if (rc == XS_OK)
        rc = xs_schema_apply(FIELDS, NFIELDS, root, path, &out, err);
    cJSON_Delete(root);
    if (rc == XS_OK)
        rc = check_family(&out, path, err);
    if (rc == XS_OK)
        *s = out;
    return rc;
}

/* ---- the op lists ------------------------------------------------------------- */

/* A GEMM of fp32 or bf16 operands (dt), fp32 output; its parallel regions
 * come from the device's kernel set (xs_thr_gemm_regions). */
static xs_thr_item gemm(int group, const char *name, xs_dtype dt, int64_t m, int64_t n,
                        int64_t k, int tb, int64_t batch, double calls)
{
    xs_thr_item it;
    memset(&it, 0, sizeof it);
    it.group = group;
    it.kind = XS_THR_OP;
    xs_op_init(&it.op, batch > 1 ? XS_OP_BGEMM : XS_OP_GEMM, XS_PH_FWD, dt, name);
    it.op.m = m, it.op.n = n, it.op.k = k, it.op.tb = tb;
    it.op.batch = batch > 1 ? batch : 0;
    it.op.flops = 2.0 * (double)m * (double)n * (double)k * (double)(batch > 1 ? batch : 1);
    double es = dt == XS_BF16 ? 2 : 4;
    it.op.bytes = (es * ((double)m * (double)k + (double)k * (double)n) + 4.0 * (double)m * (double)n) *
                  (double)(batch > 1 ? batch : 1);
    it.calls = calls;
    return it;
}

/* A row-parallel kernel of the CPU model (fn: its xs_cpu_fn) over rows x
 * width fp32 elements, reading `reads` arrays and writing one. */
static xs_thr_item rows_op(int group, const char *name, int kind, int fn, int64_t rows,
                           int64_t width, int reads, double calls)
{
    xs_thr_item it;
    memset(&it, 0, sizeof it);
    it.group = group;
    it.kind = XS_THR_OP;
    xs_op_init(&it.op, kind, XS_PH_FWD, XS_FP32, name);
    it.op.hints.fn = fn;
    it.op.elems = (double)rows * (double)width;
    it.op.bytes = 4.0 * (reads + 1) * it.op.elems;
    it.calls = calls;
    it.par = rows;
    it.regions = 1;
    return it;
}

static int add_group_items(xs_thr_work *w, const char *name, const xs_thr_item *items, int n,
                           xs_error *err)
{
    int g = xs_thr_add_group(w, name, err);
    if (g < 0)
        return g;
    for (int i = 0; i < n; i++) {
        xs_thr_item it = items[i];
        it.group = g;
        int rc = xs_thr_add_item(w, &it, err);
        if (rc)
            return rc;
    }
    return XS_OK;
}

/* Per layer: the input projection of the whole sequence (one GEMM: seq x
 * batch rows, 4 hidden columns; bf16: the layer's input cast to bf16 first,
 * then the bf16 GEMM), then seq recurrent steps (kernels/cpu/lstm.c). */
static int lstm_work(const xs_inf_scenario *s, xs_thr_work *w, xs_error *err)
{
    int rc = XS_OK, bf16 = s->precision == XS_INF_BF16;
    xs_dtype dt = bf16 ? XS_BF16 : XS_FP32;
    for (int64_t l = 0; l < s->layers && !rc; l++) {
        char name[48], cast_name[64];
        int64_t rows = s->seq * s->batch, k = l ? s->hidden : s->input_size;
        snprintf(name, sizeof name, "l%lld.input_proj", (long long)l);
        snprintf(cast_name, sizeof cast_name, "%s.cast", name);
        xs_thr_item proj[2];
        int n = 0;
        if (bf16) { /* fp32 read, bf16 written */
            proj[n] = rows_op(0, cast_name, XS_OP_CAST, XS_FN_CAST, rows, k, 1, 1);
            proj[n++].op.bytes = 6.0 * (double)rows * (double)k;
        }
        proj[n++] = gemm(0, name, dt, rows, 4 * s->hidden, k, 1, 0, 1);
        if ((rc = add_group_items(w, name, proj, n, err)))
            break;
        snprintf(name, sizeof name, "l%lld.recurrent", (long long)l);
        xs_thr_item step;
        memset(&step, 0, sizeof step);
        step.kind = XS_THR_LSTM_STEP;
        xs_op_init(&step.op, XS_OP_GEMM, XS_PH_FWD, dt, name);
        step.batch = s->batch;
        step.hidden = s->hidden;
        step.calls = (double)s->seq;
        step.par = (s->hidden + 7) / 8;
        step.regions = 1;
        rc = add_group_items(w, name, &step, 1, err);
    }
    return rc;
}

/* One encoder layer's forward in fp32 with the CPU kernels (post-LN, as
 * BERT): qkv, scores and context per (sample, head) matrix, softmax over
 * each row of scores, the output projection, add + LayerNorm, the FFN,
 * add + LayerNorm. Each group runs `layers` times. No dropout (inference). */
static int encoder_work(const xs_inf_scenario *s, xs_thr_work *w, xs_error *err)
{
    int64_t rows = s->batch * s->seq, h = s->hidden, dh = h / s->heads, bh = s->batch * s->heads;
    double L = (double)s->layers;
    xs_thr_item qkv[] = {gemm(0, "attn.qkv", XS_FP32, rows, 3 * h, h, 1, 0, L),
                         rows_op(0, "attn.qkv.bias", XS_OP_ELTWISE, XS_FN_BIAS, rows, 3 * h, 1, L)};
    xs_thr_item scores[] = {gemm(0, "attn.scores", XS_FP32, s->seq, s->seq, dh, 1, bh, L)};
    xs_thr_item soft[] = {
        rows_op(0, "attn.softmax", XS_OP_SOFTMAX, XS_FN_SOFTMAX, bh * s->seq, s->seq, 1, L)};
    xs_thr_item ctx[] = {gemm(0, "attn.context", XS_FP32, s->seq, dh, s->seq, 0, bh, L)};
    xs_thr_item out[] = {gemm(0, "attn.out", XS_FP32, rows, h, h, 1, 0, L),
                         rows_op(0, "attn.out.bias", XS_OP_ELTWISE, XS_FN_BIAS, rows, h, 1, L)};
    xs_thr_item ln1[] = {rows_op(0, "attn.residual", XS_OP_ELTWISE, XS_FN_ADD, rows, h, 2, L),
                         rows_op(0, "attn.ln", XS_OP_NORM, XS_FN_LAYERNORM, rows, h, 1, L)};
    xs_thr_item up[] = {gemm(0, "ffn.up", XS_FP32, rows, s->ffn, h, 1, 0, L),
                        rows_op(0, "ffn.up.bias", XS_OP_ELTWISE, XS_FN_BIAS, rows, s->ffn, 1, L)};
    xs_thr_item gelu[] = {
        rows_op(0, "ffn.gelu", XS_OP_ELTWISE, XS_FN_GELU, rows, s->ffn, 1, L)};
    xs_thr_item down[] = {gemm(0, "ffn.down", XS_FP32, rows, h, s->ffn, 1, 0, L),
                          rows_op(0, "ffn.down.bias", XS_OP_ELTWISE, XS_FN_BIAS, rows, h, 1, L)};
    xs_thr_item ln2[] = {rows_op(0, "ffn.residual", XS_OP_ELTWISE, XS_FN_ADD, rows, h, 2, L),
                         rows_op(0, "ffn.ln", XS_OP_NORM, XS_FN_LAYERNORM, rows, h, 1, L)};
    struct {
        const char *name;
        const xs_thr_item *items;
        int n;
    } groups[] = {{"attn.qkv", qkv, 2},       {"attn.scores", scores, 1}, {"attn.softmax", soft, 1},
                  {"attn.context", ctx, 1},   {"attn.out", out, 2},       {"attn.add_ln", ln1, 2},
                  {"ffn.up", up, 2},          {"ffn.gelu", gelu, 1},      {"ffn.down", down, 2},
                  {"ffn.add_ln", ln2, 2}};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        int rc = add_group_items(w, groups[g].name, groups[g].items, groups[g].n, err);
        if (rc)
            return rc;
    }
    return XS_OK;
}

int xs_inf_work(const xs_inf_scenario *s, xs_thr_work *w, xs_error *err)
{
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "%s", s->id);
    int rc = s->family == XS_INF_LSTM ? lstm_work(s, w, err) : encoder_work(s, w, err);
    if (rc)
        xs_thr_work_free(w);
    return rc;
}
