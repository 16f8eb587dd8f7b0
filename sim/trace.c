/* trace.c — see trace.h. Kernel names follow cuBLAS/CUTLASS ("...gemm...",
 * "cutlass::Kernel", "sm80_xmma_gemm"), flash-attention ("flash", "fmha")
 * and ATen ("softmax", "layer_norm", "elementwise_kernel", "copy",
 * "reduce_kernel", "embedding", "nll_loss", "multi_tensor_apply"). */
#include "trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "schema.h"

const char *xs_kclass_name(int c)
{
    static const char *names[XS_KC_COUNT] = {"gemm",   "attention", "softmax", "norm",
                                             "elementwise", "copy", "reduce", "embed",
                                             "loss", "optimizer"};
    return c >= 0 && c < XS_KC_COUNT ? names[c] : "?";
}

static int has(const char *name, const char *part)
{
    return strstr(name, part) != NULL;
}

int xs_kclass_of_kernel(const char *n)
{
    /* order matters: "softmax" before "elementwise", optimizers before copies */
    /* not "lamb": every C++ lambda in an ATen kernel name contains it */
    if (has(n, "multi_tensor") || has(n, "adam") || has(n, "Adam") || has(n, "LAMB") ||
        has(n, "sgd") || has(n, "adan"))
        return XS_KC_OPTIMIZER;
    if (has(n, "flash") || has(n, "fmha") || has(n, "attention"))
        return XS_KC_ATTENTION;
    if (has(n, "gemm") || has(n, "Gemm") || has(n, "cutlass") || has(n, "xmma") ||
        has(n, "gemv") || has(n, "cublas"))
        return XS_KC_GEMM;
    if (has(n, "nll_loss") || has(n, "cross_entropy") || has(n, "CrossEntropy"))
        return XS_KC_LOSS;
    if (has(n, "softmax") || has(n, "Softmax") || has(n, "SoftMax"))
        return XS_KC_SOFTMAX;
    if (has(n, "layer_norm") || has(n, "LayerNorm") || has(n, "layernorm") ||
        has(n, "cuApplyLayerNorm") || has(n, "cuComputeGradInput") ||
        has(n, "cuComputePartGradGammaBeta") || has(n, "cuComputeGradGammaBeta"))
        return XS_KC_NORM;
    if (has(n, "embedding") || has(n, "indexSelect") || has(n, "index_select") ||
        has(n, "EmbeddingBag") || has(n, "radixSort") || has(n, "sort"))
        return XS_KC_EMBED;
    if (has(n, "copy") || has(n, "Copy") || has(n, "transpose") || has(n, "Memcpy") ||
        has(n, "Memset") || has(n, "cat"))
        return XS_KC_COPY;
    if (has(n, "reduce") || has(n, "Reduce"))
        return XS_KC_REDUCE;
    return XS_KC_ELEMENTWISE;
}

int xs_kclass_of_op(int kind)
{
    switch (kind) {
    case XS_OP_GEMM:
    case XS_OP_BGEMM: return XS_KC_GEMM;
    case XS_OP_ATTENTION: return XS_KC_ATTENTION;
    case XS_OP_SOFTMAX: return XS_KC_SOFTMAX;
    case XS_OP_NORM: return XS_KC_NORM;
    case XS_OP_CAST:
    case XS_OP_COPY: return XS_KC_COPY;
    case XS_OP_REDUCE: return XS_KC_REDUCE;
    case XS_OP_EMBED: return XS_KC_EMBED;
    case XS_OP_LOSS: return XS_KC_LOSS;
    case XS_OP_OPTIMIZER: return XS_KC_OPTIMIZER;
    default: return XS_KC_ELEMENTWISE;
    }
}

int xs_trace_load(const char *path, xs_trace *t, xs_error *err)
{
    memset(t, 0, sizeof *t);
    cJSON *root = NULL;
    int rc = xs_json_load(path, &root, err);
    if (rc)
        return rc;
    const cJSON *events = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root,
                                                                                     "traceEvents");
    if (!cJSON_IsArray(events)) {
        cJSON_Delete(root);
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'traceEvents' must be an array of trace events", path);
    }
    t->first_ts_us = INFINITY;
    int index = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        index++;
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0 || !cJSON_IsString(cat) ||
            (strcmp(cat->valuestring, "kernel") != 0 && strcmp(cat->valuestring, "Kernel") != 0))
            continue;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
        const cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
        if (!cJSON_IsString(name) || !cJSON_IsNumber(ts) || !cJSON_IsNumber(dur) ||
            dur->valuedouble < 0) {
            cJSON_Delete(root);
            return xs_error_set(err, XS_EFIELD,
                                "%s: kernel event %d must have a string 'name' and numbers "
                                "'ts' and 'dur' >= 0",
                                path, index);
        }
        int c = xs_kclass_of_kernel(name->valuestring);
        t->kernels[c]++;
        t->measured_s[c] += dur->valuedouble * 1e-6;
        t->first_ts_us = fmin(t->first_ts_us, ts->valuedouble);
        t->last_end_us = fmax(t->last_end_us, ts->valuedouble + dur->valuedouble);
        t->total++;
    }
    cJSON_Delete(root);
    if (t->total == 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: no GPU kernel events (\"ph\": \"X\", \"cat\": \"kernel\"); "
                            "export the trace with CUDA activities on",
                            path);
    return XS_OK;
}

int xs_trace_rows(const xs_trace *t, const char *trace_path, const xs_device *dev,
                  const char *scenario, const char *set, const xs_workload *wl,
                  const xs_prediction *p, xs_vrow **rows, size_t *n, xs_error *err)
{
    double predicted[XS_KC_COUNT] = {0};
    double launches[XS_KC_COUNT] = {0};
    for (size_t i = 0; i < wl->n; i++) {
        int c = xs_kclass_of_op(wl->ops[i].kind);
        predicted[c] += p->est[i].time_s * (double)wl->ops[i].count;
        launches[c] += (double)(wl->ops[i].launches * wl->ops[i].count);
    }
    xs_vrow *out = calloc(XS_KC_COUNT + 1, sizeof *out);
    if (!out)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    size_t m = 0;
    for (int c = 0; c < XS_KC_COUNT; c++) {
        if (!t->kernels[c] && !launches[c])
            continue;
        xs_vrow *r = &out[m++];
        r->file = trace_path;
        r->line = c + 1;
        snprintf(r->device, sizeof r->device, "%s", dev->id);
        snprintf(r->scenario, sizeof r->scenario, "%s", scenario);
        snprintf(r->set, sizeof r->set, "%s%skernels measured %zu, predicted %.0f", set,
                 set[0] ? "; " : "", t->kernels[c], launches[c]);
        snprintf(r->metric, sizeof r->metric, "kernel_time_s:%s", xs_kclass_name(c));
        r->measured = t->measured_s[c];
        r->predicted = predicted[c];
        r->low = r->high = predicted[c];
        if (t->kernels[c] == 0) {
            snprintf(r->reason, sizeof r->reason,
                     "no %s kernels in the trace, %.0f predicted (%.3g s)", xs_kclass_name(c),
                     launches[c], predicted[c]);
        } else if (launches[c] == 0) {
            snprintf(r->reason, sizeof r->reason,
                     "%zu %s kernels in the trace (%.3g s) that the model does not predict",
                     t->kernels[c], xs_kclass_name(c), t->measured_s[c]);
        } else {
            r->ok = 1;
            r->error_pct = 100 * (r->predicted - r->measured) / r->measured;
        }
    }
    xs_vrow *r = &out[m++];
    r->file = trace_path;
    r->line = 0;
    snprintf(r->device, sizeof r->device, "%s", dev->id);
    snprintf(r->scenario, sizeof r->scenario, "%s", scenario);
    snprintf(r->set, sizeof r->set, "%s", set);
    snprintf(r->metric, sizeof r->metric, "step_time_s");
    r->measured = (t->last_end_us - t->first_ts_us) * 1e-6;
    r->predicted = p->step_time_s;
    r->low = p->step_time_low_s > 0 ? p->step_time_low_s : p->step_time_s;
    r->high = p->step_time_high_s > 0 ? p->step_time_high_s : p->step_time_s;
    r->ok = r->measured > 0;
    if (r->ok)
        r->error_pct = 100 * (r->predicted - r->measured) / r->measured;
    else
        snprintf(r->reason, sizeof r->reason, "the trace's kernels span no time");
    *rows = out;
    *n = m;
    return XS_OK;
}
