/* cpu_check.c — see cpu_check.h. */
#include "cpu_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bert.h"
#include "cpu.h"
#include "cpu_calibrate.h"
#include "cpu_features.h"
#include "cpu_host_state.h"
#include "cpu_noise.h"
#include "cpu_runners.h"
#include "grow.h"
#include "harness.h"
#include "report.h"

#define FILE_TAG "cpu-check"

/* A BERT-style encoder small enough for two cores, large enough that its
 * GEMMs are not all overhead: 4 layers, hidden 256, 4 heads, FFN 1024,
 * vocabulary 2048, 8 sequences of 128 tokens (quick: 2 layers, 4). */
static xs_bert_cfg bert_config(int quick, int bf16, int threads)
{
    xs_bert_cfg c = {.layers = quick ? 2 : 4, .hidden = 256, .heads = 4, .ffn = 1024,
                     .vocab = 2048, .seq = 128, .batch = quick ? 4 : 8, .dropout = 0.1f,
                     .bf16 = bf16, .threads = threads};
    return c;
}

static const char *model_text(int quick)
{
    return quick ? "BERT 2 layers, hidden 256, 4 heads, FFN 1024, vocab 2048, batch 4 x 128"
                 : "BERT 4 layers, hidden 256, 4 heads, FFN 1024, vocab 2048, batch 8 x 128";
}

typedef struct {
    xs_vrow *v;
    size_t n, cap;
    const xs_device *dev;
    xs_error *err;
} rowset;

static xs_vrow *new_row(rowset *s)
{
    xs_vrow *grown = xs_grow(s->v, &s->cap, s->n, sizeof *grown, 64);
    if (!grown)
        return NULL;
    s->v = grown;
    xs_vrow *r = &s->v[s->n++];
    memset(r, 0, sizeof *r);
    r->file = FILE_TAG;
    r->line = (int)s->n;
    snprintf(r->device, sizeof r->device, "%s", s->dev->id);
    r->ok = 1;
    return r;
}

static void finish_row(xs_vrow *r, double measured, double q1, double q3, double pred,
                       double lo, double hi)
{
    r->measured = measured;
    r->predicted = pred;
    r->low = fmin(lo, hi);
    r->high = fmax(lo, hi);
    r->error_pct = xs_verror_pct(r->metric, pred, measured);
    r->has_spread = 1;
    r->spread_pct = 100 * (q3 - q1) / measured;
    xs_vrow_classify(r);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and quartiles of v[0..n) (sorted in place). */
static void quartiles(double *v, size_t n, double *q1, double *med, double *q3)
{
    qsort(v, n, sizeof *v, by_double);
    double pos[3] = {0.25, 0.5, 0.75}, *out[3] = {q1, med, q3};
    for (int i = 0; i < 3; i++) {
        double x = pos[i] * (double)(n - 1);
        size_t lo = (size_t)floor(x), hi = (size_t)ceil(x);
        *out[i] = v[lo] + (x - (double)lo) * (v[hi] - v[lo]);
    }
}

/* ---- predictions ------------------------------------------------------------- */

/* A recorded kernel call as the op the CPU model costs. */
static int op_of(const xs_bert_op *b, xs_op *op, xs_error *err)
{
    *op = xs_op_make(XS_OP_ELTWISE, XS_PH_FWD, XS_FP32, b->name);
    op->bytes = b->bytes;
    op->flops = b->flops;
    if (!strcmp(b->fn, "gemm")) {
        op->kind = XS_OP_GEMM;
        op->dtype = !strcmp(b->dtype, "bf16") ? XS_BF16 : XS_FP32;
        op->m = b->m;
        op->n = b->n;
        op->k = b->k;
        op->batch = 1;
        op->ta = b->ta;
        op->tb = b->tb;
        return XS_OK;
    }
    op->hints.fn = xs_cpu_fn_index(b->fn);
    if (op->hints.fn < 0)
        return xs_error_set(err, XS_EUNSUPPORTED, "kernel '%s' (%s) has no CPU model", b->name,
                            b->fn);
    op->elems = b->elems;
    return XS_OK;
}

/* Runs of one kernel name in a trace, with the casts among them (a loop
 * over attention heads: cast, cast, GEMM, cast, ...): the bytes the run's
 * GEMMs and its casts touch together, for each op of the run. */
static void group_bytes(const xs_bert_trace *t, double *group)
{
    size_t i = 0;
    while (i < t->n) {
        size_t j = i;
        const char *name = NULL;
        while (j < t->n) {
            const xs_bert_op *o = &t->ops[j];
            if (strcmp(o->fn, "cast") != 0) {
                if (name && strcmp(o->name, name) != 0)
                    break;
                name = o->name;
            }
            j++;
        }
        double casts = 0, others = 0;
        for (size_t q = i; q < j; q++)
            *(strcmp(t->ops[q].fn, "cast") ? &others : &casts) += t->ops[q].bytes;
        for (size_t q = i; q < j; q++)
            group[q] = strcmp(t->ops[q].fn, "cast") ? others : casts;
        i = j;
    }
}

/* Time of op at the fitted parameters and at the two corners. */
static int predict3(const xs_device *dev, const xs_device corners[2], const xs_op *op,
                    double out[3], xs_error *err)
{
    int t = (int)xs_cpu_of(dev)->cores;
    xs_estimate e;
    int rc = xs_cpu_estimate(dev, op, t, &e, err);
    out[0] = e.time_s;
    for (int c = 0; c < 2 && !rc; c++) {
        rc = xs_cpu_estimate(&corners[c], op, t, &e, err);
        out[1 + c] = e.time_s;
    }
    return rc;
}

/* ---- the BERT step ---------------------------------------------------------- */

typedef struct {
    char name[40];
    int calls;       /* per step */
    double pred[3];  /* per step: fitted, slow, fast */
    double *times;   /* per measured step */
} kernel_sum;

static int bert_rows(rowset *s, const xs_device corners[2], int quick, int bf16, FILE *log)
{
    int threads = (int)xs_cpu_of(s->dev)->cores, warm = 2, steps = quick ? 5 : 10;
    xs_bert_cfg cfg = bert_config(quick, bf16, threads);
    xs_bert *b = xs_bert_create(&cfg, 7);
    size_t T = (size_t)cfg.batch * (size_t)cfg.seq;
    int32_t *tok = malloc(T * sizeof *tok), *tgt = malloc(T * sizeof *tgt);
    double *step_t = calloc((size_t)steps, sizeof *step_t);
    kernel_sum *ks = NULL;
    size_t nk = 0;
    int rc = XS_OK;
    if (!b || !tok || !tgt || !step_t) {
        rc = xs_error_set(s->err, XS_ENOMEM, "validate: out of memory for the BERT step");
        goto done;
    }
    xs_adan_hparams h = xs_adan_defaults(1e-3f, 0.01f);
    double first_loss = 0, last_loss = 0;
    for (int st = 0; st < warm + steps && !rc; st++) {
        unsigned r = 1234u + (unsigned)st;
        for (size_t i = 0; i < T; i++) {
            r = r * 1664525u + 1013904223u;
            tok[i] = (int32_t)((r >> 8) % (unsigned)cfg.vocab);
            tgt[i] = (tok[i] * 7 + 3) % cfg.vocab;
        }
        xs_bert_trace tr = {0};
        double t0 = xs_cal_now();
        double loss = xs_bert_step(b, tok, tgt, &h, st >= warm ? &tr : NULL);
        double wall = xs_cal_now() - t0;
        if (st == 0)
            first_loss = loss;
        last_loss = loss;
        if (st < warm)
            continue;
        int m = st - warm;
        step_t[m] = wall;
        if (!ks) { /* the first measured step fixes the kernel list and predictions */
            ks = calloc(tr.n, sizeof *ks);
            double *group = calloc(tr.n, sizeof *group);
            if (group)
                group_bytes(&tr, group);
            for (size_t i = 0; ks && i < tr.n; i++) {
                size_t j = 0;
                while (j < nk && strcmp(ks[j].name, tr.ops[i].name))
                    j++;
                if (j == nk) {
                    snprintf(ks[nk].name, sizeof ks[nk].name, "%s", tr.ops[i].name);
                    ks[nk].times = calloc((size_t)steps, sizeof(double));
                    if (!ks[nk].times)
                        break;
                    nk++;
                }
                xs_op op;
                double p[3];
                rc = op_of(&tr.ops[i], &op, s->err);
                op.hints.group_bytes = group ? group[i] : 0;
                if (!rc)
                    rc = predict3(s->dev, corners, &op, p, s->err);
                if (rc)
                    break;
                ks[j].calls++;
                for (int c = 0; c < 3; c++)
                    ks[j].pred[c] += p[c];
            }
            if (!ks || !group || (nk && !ks[nk - 1].times))
                rc = xs_error_set(s->err, XS_ENOMEM, "validate: out of memory for the trace");
            free(group);
        }
        for (size_t i = 0; !rc && i < tr.n; i++)
            for (size_t j = 0; j < nk; j++)
                if (!strcmp(ks[j].name, tr.ops[i].name)) {
                    ks[j].times[m] += tr.ops[i].time_s;
                    break;
                }
        xs_bert_trace_free(&tr);
    }
    if (rc)
        goto done;
    const char *scen = bf16 ? "bert-cpu-bf16" : "bert-cpu-fp32";
    double step_pred[3] = {0, 0, 0};
    for (size_t j = 0; j < nk; j++) {
        double q1, med, q3;
        quartiles(ks[j].times, (size_t)steps, &q1, &med, &q3);
        xs_vrow *r = new_row(s);
        if (!r) {
            rc = xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
            goto done;
        }
        snprintf(r->scenario, sizeof r->scenario, "%s", scen);
        if (xs_vrow_set(r, "op=%s;calls=%d", ks[j].name, ks[j].calls)) {
            rc = xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
            goto done;
        }
        snprintf(r->metric, sizeof r->metric, "time_s");
        finish_row(r, med, q1, q3, ks[j].pred[0], ks[j].pred[1], ks[j].pred[2]);
        for (int c = 0; c < 3; c++)
            step_pred[c] += ks[j].pred[c];
    }
    double q1, med, q3;
    quartiles(step_t, (size_t)steps, &q1, &med, &q3);
    xs_vrow *r = new_row(s);
    if (!r) {
        rc = xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
        goto done;
    }
    snprintf(r->scenario, sizeof r->scenario, "%s", scen);
    if (xs_vrow_set(r, "layers=%d;hidden=%d;batch=%dx%d;loss=%.2f->%.2f", cfg.layers,
                    cfg.hidden, cfg.batch, cfg.seq, first_loss, last_loss)) {
        rc = xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
        goto done;
    }
    snprintf(r->metric, sizeof r->metric, "step_time_s");
    finish_row(r, med, q1, q3, step_pred[0], step_pred[1], step_pred[2]);
    if (log)
        fprintf(log, "validate: %s step %.1f ms measured (median of %d), %.1f ms predicted\n",
                scen, med * 1e3, steps, step_pred[0] * 1e3);
done:
    for (size_t j = 0; j < nk; j++)
        free(ks[j].times);
    free(ks);
    free(step_t);
    free(tok);
    free(tgt);
    xs_bert_free(b);
    return rc;
}

/* ---- single kernels at new shapes ------------------------------------------------ */

/* GEMMs unlike the calibration sweep's (checked against it) and unlike the
 * BERT step's: large square, Transformer-like, odd, tall and wide. */
static const long long CHECK_GEMMS[][5] = {
    {1024, 1024, 1024, 0, 0}, {512, 3072, 768, 0, 1}, {333, 1111, 555, 1, 0},
    {4096, 128, 512, 0, 1},   {160, 3000, 64, 1, 1},  {2048, 384, 1536, 0, 0},
};
#define CHECK_GEMM_COUNT (sizeof CHECK_GEMMS / sizeof CHECK_GEMMS[0])

/* Elementwise kernels at sizes past L2 (the calibration fits inside it):
 * fn, rows, width. */
static const long long CHECK_KERNELS[][3] = {
    {XS_FN_GELU, 4096, 1024},     {XS_FN_ADD, 8192, 2048},       {XS_FN_LAYERNORM, 8192, 768},
    {XS_FN_SOFTMAX, 16384, 384},  {XS_FN_DROPOUT, 4096, 2048},   {XS_FN_CAST, 8192, 2048},
    {XS_FN_BIAS_GRAD, 8192, 768}, {XS_FN_ADAN, 4096, 4096},      {XS_FN_ADAMW, 8192, 4096},
    {XS_FN_XENT, 1024, 8000},     {XS_FN_LAYERNORM_BWD, 8192, 768},
};
#define CHECK_KERNEL_COUNT (sizeof CHECK_KERNELS / sizeof CHECK_KERNELS[0])

static int single_row(rowset *s, const xs_device corners[2], xs_runner *run, const xs_op *op,
                      const char *set, const xs_cal_opts *ho)
{
    xs_cal_kernel k = xs_runner_kernel_desc(run, op->name);
    xs_cal_result res;
    xs_cal_measure(&k, ho, &res);
    double p[3];
    int rc = predict3(s->dev, corners, op, p, s->err);
    if (rc)
        return rc;
    xs_vrow *r = new_row(s);
    if (!r)
        return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
    snprintf(r->scenario, sizeof r->scenario, "-");
    if (xs_vrow_set(r, "%s", set))
        return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
    snprintf(r->metric, sizeof r->metric, "time_s");
    finish_row(r, res.median_s, res.q1_s, res.q3_s, p[0], p[1], p[2]);
    return XS_OK;
}

static int kernel_rows(rowset *s, const xs_device corners[2], int quick)
{
    int threads = (int)xs_cpu_of(s->dev)->cores;
    xs_cal_opts ho = xs_cal_default_opts();
    ho.time_cap_s = quick ? 0.15 : 0.5;
    for (int bf16 = 0; bf16 <= 1; bf16++)
        for (size_t i = 0; i < (quick ? CHECK_GEMM_COUNT / 2 : CHECK_GEMM_COUNT); i++) {
            const long long *g = CHECK_GEMMS[i];
            xs_runner run;
            if (xs_runner_gemm(&run, bf16, g[0], g[1], g[2], (int)g[3], (int)g[4], threads))
                return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory for a GEMM");
            xs_op op = xs_op_make(XS_OP_GEMM, XS_PH_FWD, bf16 ? XS_BF16 : XS_FP32, "gemm");
            op.m = g[0];
            op.n = g[1];
            op.k = g[2];
            op.ta = (int)g[3];
            op.tb = (int)g[4];
            op.batch = 1;
            char set[160];
            snprintf(set, sizeof set, "op=gemm;dtype=%s;m=%lld;n=%lld;k=%lld;ta=%c;tb=%c",
                     bf16 ? "bf16" : "fp32", g[0], g[1], g[2], g[3] ? 'T' : 'N',
                     g[4] ? 'T' : 'N');
            int rc = single_row(s, corners, &run, &op, set, &ho);
            xs_runner_free(&run);
            if (rc)
                return rc;
        }
    for (size_t i = 0; i < (quick ? CHECK_KERNEL_COUNT / 2 + 1 : CHECK_KERNEL_COUNT); i++) {
        const long long *kd = CHECK_KERNELS[i];
        xs_runner run;
        if (xs_runner_kernel(&run, (int)kd[0], kd[1], kd[2], threads))
            return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory for kernel %s",
                                xs_cpu_fn_name((int)kd[0]));
        xs_op op = xs_op_make(XS_OP_ELTWISE, XS_PH_FWD, XS_FP32, xs_cpu_fn_name((int)kd[0]));
        op.hints.fn = (int)kd[0];
        op.elems = run.elems;
        op.bytes = run.bytes;
        char set[160];
        snprintf(set, sizeof set, "op=%s;rows=%lld;width=%lld;MB=%.0f", op.name, kd[1], kd[2],
                 run.bytes / 1048576);
        int rc = single_row(s, corners, &run, &op, set, &ho);
        xs_runner_free(&run);
        if (rc)
            return rc;
    }
    return XS_OK;
}

/* The host's ceilings now against the file's: logged, and in the report
 * (its host_state, a note when they moved on what should be this host). */
static int host_state(const xs_device *dev, const xs_cal_check_opts *o, xs_error *err)
{
    xs_cpu_host_state hs;
    xs_cpu_host_state_measure(dev, o->quick, &hs);
    char text[320], what[96], note[400];
    xs_cpu_host_state_text(&hs, text, sizeof text);
    int moved = !o->other_host && xs_cpu_host_state_moved(&hs, what, sizeof what);
    if (o->log) {
        fprintf(o->log, "validate: this host now: %s\n", text);
        if (moved)
            fprintf(o->log, "validate: warning: %s against %s's figures (see the report's note)\n",
                    what, dev->id);
    }
    if (!o->extra)
        return XS_OK;
    cJSON *j = xs_cpu_host_state_json(&hs);
    if (!j || !cJSON_AddItemToObject(o->extra, "host_state", j)) {
        cJSON_Delete(j);
        return xs_error_set(err, XS_ENOMEM, "validate: out of memory for the report");
    }
    if (moved && xs_cpu_host_state_drift(dev->id, &hs, note, sizeof note) &&
        xs_report_add_note(o->extra, note))
        return xs_error_set(err, XS_ENOMEM, "validate: out of memory for the report");
    return XS_OK;
}

/* The check's rows: the BERT steps, then the single kernels. */
static int check_rows(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows, size_t *n,
                      xs_error *err)
{
    xs_device corners[2];
    xs_dev_corner(dev, -1, &corners[0]);
    xs_dev_corner(dev, +1, &corners[1]);
    rowset s = {NULL, 0, 0, dev, err};
    int rc = 0;
    /* fp32 first: AMX work slows the vector units for a while after it */
    for (int bf16 = 0; bf16 <= 1 && !rc; bf16++)
        rc = bert_rows(&s, corners, o->quick, bf16, o->log);
    if (!rc)
        rc = kernel_rows(&s, corners, o->quick);
    if (rc) {
        xs_vrows_free(s.v, s.n);
        return rc;
    }
    *rows = s.v;
    *n = s.n;
    return XS_OK;
}

/* The rows' median measured IQR / median; -1 when none has one. */
static double median_spread(const xs_vrow *rows, size_t n)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; v && i < n; i++)
        if (rows[i].has_spread)
            v[m++] = rows[i].spread_pct / 100;
    double med = -1;
    if (m) {
        qsort(v, m, sizeof *v, by_double);
        med = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
    }
    free(v);
    return med;
}

/* Move the host state and the notes of from into extra (NULL: drop
 * them); from is freed. */
static int take_extra(cJSON *extra, cJSON *from, xs_error *err)
{
    int rc = XS_OK;
    cJSON *hs = cJSON_DetachItemFromObjectCaseSensitive(from, "host_state");
    if (extra && hs && !cJSON_AddItemToObject(extra, "host_state", hs))
        rc = XS_ENOMEM;
    else if (!extra)
        cJSON_Delete(hs);
    const cJSON *note;
    cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(from, "notes"))
    if (!rc && extra && cJSON_IsString(note) && xs_report_add_note(extra, note->valuestring))
        rc = XS_ENOMEM;
    cJSON_Delete(from);
    return rc ? xs_error_set(err, XS_ENOMEM, "validate: out of memory for the report") : XS_OK;
}

/* The report's host_noise object: the reference kernel around the check. */
static int noise_json(cJSON *extra, const xs_cpu_noise *before, const xs_cpu_noise *after,
                      double spread, xs_error *err)
{
    if (!extra)
        return XS_OK;
    cJSON *j = cJSON_CreateObject();
    if (!j || !cJSON_AddNumberToObject(j, "reference_gflops_thread_before",
                                       before->gflops_thread) ||
        !cJSON_AddNumberToObject(j, "reference_gflops_thread_after", after->gflops_thread) ||
        !cJSON_AddNumberToObject(j, "reference_spread_pct",
                                 100 * fmax(before->spread, after->spread)) ||
        !cJSON_AddNumberToObject(j, "reference_scaling", fmin(before->scaling, after->scaling)) ||
        !cJSON_AddNumberToObject(j, "measurements_median_spread_pct", 100 * spread) ||
        !cJSON_AddItemToObject(extra, "host_noise", j)) {
        cJSON_Delete(j);
        return xs_error_set(err, XS_ENOMEM, "validate: out of memory for the report");
    }
    return XS_OK;
}

int xs_cpu_check(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows, size_t *n,
                 xs_error *err)
{
    *rows = NULL;
    *n = 0;
    if (xs_backend_of(dev) != &xs_cpu_backend)
        return xs_error_set(err, XS_EARG,
                            "validate --backend cpu: device %s is not a cpu device (make one "
                            "with `xpusim calibrate --backend cpu`)",
                            dev->id);
    const xs_cpu_features *f = xs_cpu_features_get();
    if (xs_cpu_of(dev)->cores > f->cores)
        return xs_error_set(err, XS_EARG,
                            "validate --backend cpu: device %s was calibrated for %lld cores, "
                            "this host has %d",
                            dev->id, (long long)xs_cpu_of(dev)->cores, f->cores);
    if (o->log)
        fprintf(o->log, "validate: running %s, fp32 then bf16, and single kernels on %lld cores\n",
                model_text(o->quick), (long long)xs_cpu_of(dev)->cores);
    if (o->log && strcmp(xs_cpu_of(dev)->cpu_model, f->model) != 0)
        fprintf(o->log, "validate: warning: device %s was calibrated on \"%s\", this is \"%s\"\n",
                dev->id, xs_cpu_of(dev)->cpu_model, f->model);
    if (o->log && !xs_cpu_of(dev)->cpu_signature[0])
        fprintf(o->log,
                "validate: device %s records no CPU signature (written before calibrate "
                "recorded it): a host of another generation under the same name would go "
                "unnoticed but for the ceilings measured next\n",
                dev->id);
    for (size_t i = 0; i < CHECK_GEMM_COUNT; i++)
        if (xs_cpu_cal_gemm_shape_used(CHECK_GEMMS[i][0], CHECK_GEMMS[i][1], CHECK_GEMMS[i][2]))
            return xs_error_set(err, XS_ERANGE, "validate: check GEMM %zu was used in the fit",
                                i);
    /* a check the host disturbed is run once more; disturbed again, refused */
    static const char *outcome = "no report";
    int threads = (int)xs_cpu_of(dev)->cores;
    char why[512] = "";
    for (int attempt = 0; attempt < 2; attempt++) {
        xs_cpu_noise before, after;
        /* this attempt's host state and notes, the report's if it holds */
        xs_cal_check_opts mine = *o;
        mine.extra = cJSON_CreateObject();
        if (!mine.extra)
            return xs_error_set(err, XS_ENOMEM, "validate: out of memory for the report");
        int rc = xs_cpu_noise_wait(threads, "validate", outcome, o->log, &before, err);
        if (!rc)
            rc = host_state(dev, &mine, err);
        if (!rc)
            rc = check_rows(dev, o, rows, n, err);
        if (rc) {
            cJSON_Delete(mine.extra);
            return rc;
        }
        xs_cpu_noise_probe(threads, &after);
        double spread = median_spread(*rows, *n);
        if (xs_cpu_noise_steady(&before, &after, spread, why, sizeof why)) {
            rc = take_extra(o->extra, mine.extra, err);
            if (!rc)
                rc = noise_json(o->extra, &before, &after, spread, err);
            if (rc) {
                xs_vrows_free(*rows, *n);
                *rows = NULL;
                *n = 0;
            }
            return rc;
        }
        cJSON_Delete(mine.extra);
        if (o->log)
            fprintf(o->log, "validate: the host was disturbed during the check: %s%s\n", why,
                    attempt ? "" : "; checking once more");
        xs_vrows_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return xs_cpu_noise_refuse("validate", threads, why, outcome, err);
}
