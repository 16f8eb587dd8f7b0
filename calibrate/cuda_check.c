/* cuda_check.c — see cuda_check.h. */
#include "cuda_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_calibrate.h"
#include "energy.h"
#include "gpu.h"
#include "grow.h"
#include "nvml.h"

#define FILE_TAG "cuda-check"

typedef struct {
    xs_vrow *v;
    size_t n, cap;
    const xs_device *dev;
    xs_device lo, hi; /* the band's corners: slow, fast */
    xs_cuda_lib lib;
    xs_error *err;
} chk;

static xs_vrow *new_row(chk *s)
{
    xs_vrow *g = xs_grow(s->v, &s->cap, s->n, sizeof *g, 64);
    if (!g)
        return NULL;
    s->v = g;
    xs_vrow *r = &s->v[s->n++];
    memset(r, 0, sizeof *r);
    r->file = FILE_TAG;
    r->line = (int)s->n;
    snprintf(r->device, sizeof r->device, "%s", s->dev->id);
    snprintf(r->scenario, sizeof r->scenario, "-");
    r->ok = 1;
    return r;
}

/* Time job, predict it on the device and its corners, keep the row. */
static int kernel_row(chk *s, int bench, const xs_cuda_job *j, const char *kclass)
{
    xs_cuda_result res;
    int rc = xs_cuda_lib_run(&s->lib, j, &res, kclass, s->err);
    if (rc == XS_EUNSUPPORTED)
        return XS_OK; /* this GPU lacks the format: no row */
    if (rc)
        return rc;
    xs_cmeas m;
    memset(&m, 0, sizeof m);
    m.bench = bench;
    m.dtype = j->dtype;
    m.m = j->m;
    m.n = j->n;
    m.k = j->k;
    m.ta = j->ta;
    m.tb = j->tb;
    m.elems = j->elems;
    m.bytes = res.bytes;
    m.flops = res.flops;
    m.launches = res.launches;
    m.tensors = res.tensors;
    xs_cuda_row_stats(&res, &m);
    double p, lo, hi;
    if ((rc = xs_cuda_predict_row(s->dev, &m, &p, s->err)) ||
        (rc = xs_cuda_predict_row(&s->lo, &m, &hi, s->err)) ||
        (rc = xs_cuda_predict_row(&s->hi, &m, &lo, s->err)))
        return rc;
    xs_vrow *r = new_row(s);
    if (!r)
        return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
    static const char *const DT[] = {"fp32", "tf32", "fp16", "bf16"};
    const char *dt = j->dtype >= 0 && j->dtype < 4 ? DT[j->dtype] : "fp32";
    if (bench == XS_CB_GEMM_CUBLAS)
        rc = xs_vrow_set(r, "op=gemm;m=%lld;n=%lld;k=%lld;dtype=%s;layout=row;%s", j->m, j->n,
                         j->k, dt,
                         xs_cuda_gemm_shape_used(s->dev, j->m, j->n, j->k) ? "in_sweep"
                                                                           : "shape_not_in_sweep");
    else if (bench == XS_CB_LAYERNORM || bench == XS_CB_SOFTMAX)
        rc = xs_vrow_set(r, "op=%s;rows=%lld;cols=%lld;dtype=%s", kclass, j->m, j->n, dt);
    else
        rc = xs_vrow_set(r, "op=%s;elems=%lld;tensors=%d;launches=%d", kclass, j->elems,
                         res.tensors, res.launches);
    if (rc)
        return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
    snprintf(r->metric, sizeof r->metric, "time_s");
    snprintf(r->kclass, sizeof r->kclass, "%s", kclass);
    r->measured = m.median_s;
    r->predicted = p;
    r->low = fmin(lo, hi);
    r->high = fmax(lo, hi);
    r->error_pct = xs_verror_pct(r->metric, p, m.median_s);
    r->has_spread = 1;
    r->spread_pct = 100 * (m.q3_s - m.q1_s) / m.median_s;
    return XS_OK;
}

/* Energy of one sustained GEMM: NVML's average board power over the run
 * times the run's GPU time, against calls x the model's energy per call. */
static int energy_row(chk *s, int quick)
{
    xs_nvml *nv;
    int rc = xs_nvml_open(s->lib.info.pci_bus_id, s->lib.info.device_index, &nv, s->err);
    if (rc)
        return rc;
    xs_cuda_job j = xs_cuda_job_make(XS_CJ_GEMM_CUBLAS, XS_CD_BF16, 1);
    j.m = j.n = j.k = 6144;
    j.flush_l2 = 0;
    j.sustain_s = quick ? 1.5 : 4.0;
    xs_cuda_result res;
    xs_nvml_summary sum;
    rc = xs_nvml_sampler_start(nv, 0.015, s->err);
    if (!rc) {
        int jr = xs_cuda_lib_run(&s->lib, &j, &res, "sustained bf16 GEMM", s->err);
        if (jr == XS_EUNSUPPORTED) { /* before sm_80: fp16 */
            j.dtype = XS_CD_FP16;
            jr = xs_cuda_lib_run(&s->lib, &j, &res, "sustained fp16 GEMM", s->err);
        }
        rc = xs_nvml_sampler_stop(nv, &sum, jr ? NULL : s->err);
        if (jr)
            rc = jr;
    }
    xs_nvml_close(nv);
    if (rc)
        return rc;
    xs_cmeas m;
    memset(&m, 0, sizeof m);
    m.bench = XS_CB_SUSTAIN_GEMM;
    m.dtype = j.dtype;
    m.m = m.n = m.k = j.m;
    double per_call[3];
    const xs_device *d3[3] = {s->dev, &s->lo, &s->hi};
    for (int c = 0; c < 3; c++) {
        xs_op op;
        memset(&op, 0, sizeof op);
        snprintf(op.name, sizeof op.name, "gemm");
        op.layer = -1;
        op.kind = XS_OP_GEMM;
        op.dtype = (xs_dtype)j.dtype;
        op.m = op.n = op.k = j.m;
        op.batch = 1;
        op.flops = res.flops;
        op.bytes = res.bytes;
        op.launches = 1;
        op.hints.fn = -1;
        xs_estimate est;
        memset(&est, 0, sizeof est);
        if ((rc = xs_dev_estimate(d3[c], &op, &est, s->err)))
            return rc;
        xs_energy_fill(d3[c], &est);
        per_call[c] = est.energy_j;
    }
    double measured = sum.seconds > 0 ? sum.energy_j / sum.seconds * res.sustain_time_s : 0;
    xs_vrow *r = new_row(s);
    if (!r)
        return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
    if (xs_vrow_set(r, "op=gemm;m=%lld;n=%lld;k=%lld;dtype=%s;layout=row;calls=%lld;energy_from=%s",
                    j.m, j.n, j.k, j.dtype == XS_CD_BF16 ? "bf16" : "fp16", res.sustain_calls,
                    sum.energy_from_counter ? "counter" : "samples"))
        return xs_error_set(s->err, XS_ENOMEM, "validate: out of memory");
    snprintf(r->metric, sizeof r->metric, "energy_j");
    snprintf(r->kclass, sizeof r->kclass, "gemm.energy");
    double calls = (double)res.sustain_calls;
    r->measured = measured;
    r->predicted = per_call[0] * calls;
    r->low = fmin(per_call[1], per_call[2]) * calls;
    r->high = fmax(per_call[1], per_call[2]) * calls;
    if (!(measured > 0)) {
        xs_vrow_fail(r, "NVML measured no energy over %.2f s", sum.seconds);
    } else {
        r->error_pct = xs_verror_pct(r->metric, r->predicted, measured);
    }
    return XS_OK;
}

int xs_cuda_check(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows, size_t *n,
                  xs_error *err)
{
    *rows = NULL;
    *n = 0;
    chk s;
    memset(&s, 0, sizeof s);
    s.dev = dev;
    s.err = err;
    xs_dev_corner(dev, -1, &s.lo);
    xs_dev_corner(dev, 1, &s.hi);
    int rc = xs_cuda_lib_open(&s.lib, 0, err);
    if (rc)
        return rc;
    int q = o->quick, reps = q ? 10 : 30;
    double l2 = (s.lib.info.l2_mb > 0 ? s.lib.info.l2_mb : xs_gpu_of(dev)->l2_mb) * 1048576.0;
    /* GEMMs outside the sweep: other token counts, widths and odd sizes */
    static const long long G[][3] = {{2048, 2304, 768}, {8192, 1024, 1024}, {3000, 2000, 1000},
                                     {1536, 6144, 1536}, {4096, 5120, 1280}, {777, 4096, 4096}};
    int ng = q ? 3 : 6;
    for (int dt = 0; !rc && dt < XS_CD_COUNT; dt++)
        for (int i = 0; !rc && i < ng; i++) {
            xs_cuda_job j = xs_cuda_job_make(XS_CJ_GEMM_CUBLAS, dt, reps);
            j.m = G[i][0];
            j.n = G[i][1];
            j.k = G[i][2];
            rc = kernel_row(&s, XS_CB_GEMM_CUBLAS, &j, "gemm");
        }
    /* streaming sizes between the sweep's (3x, 6x, 12x L2) */
    static const double SZ[] = {3, 6, 12};
    for (int kind = XS_CJ_COPY; !rc && kind <= XS_CJ_TRIAD; kind++)
        for (int i = 0; !rc && i < (q ? 2 : 3); i++) {
            xs_cuda_job j = xs_cuda_job_make(kind, XS_CD_FP32, reps);
            j.elems = (long long)(SZ[i] * l2 / (kind == XS_CJ_COPY ? 8.0 : 12.0));
            rc = kernel_row(&s, kind == XS_CJ_COPY ? XS_CB_COPY : XS_CB_TRIAD, &j,
                            kind == XS_CJ_COPY ? "copy" : "triad");
        }
    static const long long LN[][2] = {{4096, 1536}, {2048, 2048}};
    static const long long SM[][2] = {{8 * 16 * 384, 384}, {8 * 12 * 256, 256}};
    for (int i = 0; !rc && i < 2; i++) {
        xs_cuda_job j = xs_cuda_job_make(XS_CJ_LAYERNORM, XS_CD_FP16, reps);
        j.m = LN[i][0];
        j.n = LN[i][1];
        rc = kernel_row(&s, XS_CB_LAYERNORM, &j, "layernorm");
        if (rc)
            break;
        j = xs_cuda_job_make(XS_CJ_SOFTMAX, XS_CD_FP16, reps);
        j.m = SM[i][0];
        j.n = SM[i][1];
        rc = kernel_row(&s, XS_CB_SOFTMAX, &j, "softmax");
    }
    static const int OK_[] = {XS_CJ_ADAN_FUSED, XS_CJ_ADAN_EAGER, XS_CJ_ADAMW_FUSED};
    static const int OB[] = {XS_CB_ADAN_FUSED, XS_CB_ADAN_EAGER, XS_CB_ADAMW_FUSED};
    static const char *const ON[] = {"adan_fused", "adan_eager", "adamw_fused"};
    for (int k = 0; !rc && k < 3; k++) {
        xs_cuda_job j = xs_cuda_job_make(OK_[k], XS_CD_FP32, q ? 5 : 10);
        j.elems = 50000000;
        j.hidden = 1024;
        rc = kernel_row(&s, OB[k], &j, ON[k]);
    }
    if (!rc)
        rc = energy_row(&s, q);
    xs_cuda_lib_close(&s.lib);
    if (rc) {
        xs_vrows_free(s.v, s.n);
        return rc;
    }
    if (o->log)
        fprintf(o->log, "validate: %zu rows on %s (%s)\n", s.n, s.lib.info.name, dev->id);
    *rows = s.v;
    *n = s.n;
    return XS_OK;
}
