/* cuda_calibrate.c — see cuda_calibrate.h.
 *
 * Order: the launch cost first (an idle GPU), then bandwidth, GEMMs, row
 * kernels and optimizers timed with L2 flushed before each repetition
 * (arrays that fit in L2 are left warm: they measure the L2 plateau), then
 * the sustained runs with NVML sampling: idle first (the board cools
 * between), a copy, a dense GEMM. */
#include "cuda_calibrate.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "fileio.h"
#include "gpu.h"
#include "kernel_op.h"
#include "nvml.h"
#include "paths.h"
#include "scenario.h"
#include "schema.h"
#include "targets.h"
#include "workload.h"

#include "xs_version.h"

/* ---- the base device from the GPU's name ---------------------------------------- */

/* CUDA's device names (cudaDeviceProp.name, as nvidia-smi shows them) of
 * the boards devices/ ships; every word must appear (case-insensitive),
 * none of `not`. More specific rows first. */
static const struct {
    const char *words[3];
    const char *not_;
    const char *id;
} NAMES[] = {
    {{"H100", "PCIe", NULL}, NULL, "h100-pcie-80gb"},
    {{"H100", "HBM3", NULL}, "NVL", "h100-sxm5-80gb"},
    {{"H100", "SXM", NULL}, NULL, "h100-sxm5-80gb"},
    {{"H200", "NVL", NULL}, NULL, "h200-nvl-141gb"},
    {{"H200", NULL, NULL}, "NVL", "h200-sxm-141gb"},
    {{"A100", "SXM4", "80GB"}, NULL, "a100-sxm4-80gb"},
    {{"A100", "SXM4", "40GB"}, NULL, "a100-sxm4-40gb"},
    {{"A100", "80GB", "PCIe"}, NULL, "a100-pcie-80gb"},
    {{"A100", "PCIE", "40GB"}, NULL, "a100-pcie-40gb"},
    {{"A100", "PCIe", NULL}, "80GB", "a100-pcie-40gb"},
    {{"A10", NULL, NULL}, "A100", "a10"},
    {{"A40", NULL, NULL}, NULL, "a40"},
    {{"L4", NULL, NULL}, "L40", "l4"},
    {{"RTX 6000", "Quadro", NULL}, NULL, "quadro-rtx-6000"},
    {{"RTX 3090", NULL, NULL}, "Ti", "rtx-3090"},
    {{"T4", NULL, NULL}, NULL, "t4"},
    {{"V100", "PCIE", "32GB"}, NULL, "v100-pcie-32gb"},
    {{"V100", "SXM2", "16GB"}, NULL, "v100-sxm2-16gb"},
    {{"V100", "SXM2", "32GB"}, NULL, "v100-sxm2-32gb"},
};

/* strcasestr without _GNU_SOURCE */
static const char *find_ci(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (strncasecmp(s, w, n) == 0)
            return s;
    return NULL;
}

/* whole word (letters and digits around it are not part of it) */
static int has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = s; (p = find_ci(p, w)) != NULL; p++) {
        int before = p > s && ((p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= 'a' && p[-1] <= 'z') ||
                               (p[-1] >= '0' && p[-1] <= '9'));
        char a = p[n];
        int after = (a >= 'A' && a <= 'Z') || (a >= 'a' && a <= 'z') || (a >= '0' && a <= '9');
        if (!before && !after)
            return 1;
    }
    return 0;
}

const char *xs_cuda_base_for_name(const char *cuda_name)
{
    const char *found = NULL;
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
        int all = 1;
        for (int w = 0; w < 3 && NAMES[i].words[w]; w++)
            all &= has_word(cuda_name, NAMES[i].words[w]) ||
                   (strchr(NAMES[i].words[w], ' ') && find_ci(cuda_name, NAMES[i].words[w]));
        if (all && NAMES[i].not_ && find_ci(cuda_name, NAMES[i].not_))
            all = 0;
        if (all) {
            if (found && strcmp(found, NAMES[i].id) != 0)
                return NULL; /* two boards fit: ambiguous */
            found = NAMES[i].id;
        }
    }
    return found;
}

/* ---- shapes ------------------------------------------------------------------------ */

static int add_shape(xs_cuda_shape *s, int n, long long m, long long nn, long long k)
{
    if (n >= XS_CUDA_MAX_SHAPES || m < 1 || nn < 1 || k < 1)
        return n;
    for (int i = 0; i < n; i++)
        if (s[i].m == m && s[i].n == nn && s[i].k == k)
            return n;
    s[n].m = m;
    s[n].n = nn;
    s[n].k = k;
    return n + 1;
}

int xs_cuda_gemm_sweep(const xs_device *base, int quick, xs_cuda_shape *s)
{
    int n = 0;
    /* BERT-base and -large layers at 4096 tokens (batch 8 x 512): QKV,
     * attention output, MLP up and down */
    static const long long T[][3] = {{4096, 2304, 768},  {4096, 768, 768},   {4096, 3072, 768},
                                     {4096, 768, 3072},  {4096, 3072, 1024}, {4096, 1024, 1024},
                                     {4096, 4096, 1024}, {4096, 1024, 4096}};
    int nt = quick ? 4 : 8;
    for (int i = 0; i < nt; i++)
        n = add_shape(s, n, T[i][0], T[i][1], T[i][2]);
    /* around the first tensor tile of the base file, and its waves */
    const xs_gpu_params *g = xs_gpu_of(base);
    long long tm = g->tensor_tiles.n ? g->tensor_tiles.tiles[0].m : 128;
    long long tn = g->tensor_tiles.n ? g->tensor_tiles.tiles[0].n : 128;
    long long sms = g->sm_count > 0 ? g->sm_count : 80;
    for (int d = -1; d <= 1; d++) {
        n = add_shape(s, n, tm * 16 + d, tn * 8, 1024);       /* m past a tile edge */
        n = add_shape(s, n, tm * 8, tn * 16 + d, 1024);       /* n past a tile edge */
        n = add_shape(s, n, tm * (sms + d), tn, 2048);        /* one wave, +-1 tile */
        if (!quick)
            n = add_shape(s, n, tm * (2 * sms + d), tn, 2048); /* two waves, +-1 tile */
    }
    /* skinny n */
    n = add_shape(s, n, 4096, 16, 4096);
    n = add_shape(s, n, 4096, 64, 4096);
    if (!quick)
        n = add_shape(s, n, 4096, 128, 4096);
    return n;
}

int xs_cuda_gemm_shape_used(const xs_device *base, long long m, long long n, long long k)
{
    xs_cuda_shape s[XS_CUDA_MAX_SHAPES];
    int ns = xs_cuda_gemm_sweep(base, 0, s);
    for (int i = 0; i < ns; i++)
        if (s[i].m == m && s[i].n == n && s[i].k == k)
            return 1;
    return 0;
}

/* ---- statistics and the model's view of a row ----------------------------------------- */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)floor(pos);
    double f = pos - i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

void xs_cuda_row_stats(const xs_cuda_result *res, xs_cmeas *row)
{
    double v[XS_CUDA_MAX_REPS];
    int n = res->reps < XS_CUDA_MAX_REPS ? res->reps : XS_CUDA_MAX_REPS;
    memcpy(v, res->time_s, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    row->reps = n;
    row->median_s = quantile(v, n, 0.5);
    row->q1_s = quantile(v, n, 0.25);
    row->q3_s = quantile(v, n, 0.75);
}

static int is_gemm(int b)
{
    return b == XS_CB_GEMM_CUBLAS || b == XS_CB_GEMM_OWN || b == XS_CB_SUSTAIN_GEMM;
}

/* The model's time of a row and the launch share of it. */
static int predict(const xs_device *dev, const xs_cmeas *r, double *t, double *over, xs_error *err)
{
    *t = *over = 0;
    if (r->dtype < 0 && (is_gemm(r->bench) || r->bench == XS_CB_LAYERNORM || r->bench == XS_CB_SOFTMAX))
        return xs_error_set(err, XS_EFIELD, "a %s row needs a dtype", xs_cbench_name(r->bench));
    xs_dtype dt = r->dtype < 0 ? XS_FP32 : (xs_dtype)r->dtype; /* the same order */
    if (is_gemm(r->bench)) {
        xs_gemm_engine e;
        xs_dev_gemm_engine(dev, &e);
        /* row-major C (m x n): the model's row layout, as validate's layout=row */
        xs_gemm_shape g = {r->m, r->n, r->k, 1, r->ta, r->tb, dt, xs_dtype_bytes(dt)};
        xs_gemm_result res;
        int rc = xs_gemm_model(&e, &g, &res, err);
        *t = res.time_s;
        *over = res.overhead_s;
        return rc;
    }
    xs_op ops[XS_KERNEL_OPS_MAX];
    int nops = 0, rc = XS_OK;
    if (r->bench == XS_CB_LAYERNORM || r->bench == XS_CB_SOFTMAX) {
        xs_kernel_spec k;
        memset(&k, 0, sizeof k);
        k.op = r->bench == XS_CB_LAYERNORM ? XS_KOP_LAYERNORM : XS_KOP_SOFTMAX;
        k.rows = (double)r->m;
        k.cols = (double)r->n;
        k.dtype = k.out_dtype = k.b_dtype = dt;
        k.loop_elems = XS_KOP_LOOP_ELEMS;
        k.generic_loop_efficiency = XS_KOP_GENERIC_LOOP_EFFICIENCY;
        rc = xs_kernel_ops(&k, ops, &nops, err);
    } else if (r->bench == XS_CB_ADAN_FUSED || r->bench == XS_CB_ADAN_EAGER ||
               r->bench == XS_CB_ADAMW_FUSED) {
        int o = r->bench == XS_CB_ADAMW_FUSED ? XS_OPT_ADAMW : XS_OPT_ADAN;
        rc = xs_wl_optimizer_op(o, r->bench != XS_CB_ADAN_EAGER, (double)r->elems,
                                r->tensors > 0 ? r->tensors : 1, 4, &ops[0]);
        if (rc)
            return xs_error_set(err, rc, "optimizer of %lld parameters in %d tensors: no such op",
                                r->elems, r->tensors);
        nops = 1;
    } else if (r->bench == XS_CB_COPY || r->bench == XS_CB_TRIAD || r->bench == XS_CB_SUSTAIN_COPY) {
        memset(&ops[0], 0, sizeof ops[0]);
        snprintf(ops[0].name, sizeof ops[0].name, "%s", xs_cbench_name(r->bench));
        ops[0].layer = -1;
        ops[0].kind = XS_OP_ELTWISE;
        ops[0].dtype = XS_FP32;
        ops[0].elems = (double)r->elems;
        ops[0].bytes = r->bytes;
        ops[0].flops = r->bench == XS_CB_TRIAD ? 2.0 * (double)r->elems : 0;
        ops[0].launches = 1;
        ops[0].hints.fn = -1;
        nops = 1;
    } else {
        return xs_error_set(err, XS_EUNSUPPORTED, "the model has no prediction for a %s row",
                            xs_cbench_name(r->bench));
    }
    for (int i = 0; !rc && i < nops; i++) {
        xs_estimate est;
        memset(&est, 0, sizeof est);
        rc = xs_dev_estimate(dev, &ops[i], &est, err);
        *t += est.time_s;
        *over += est.overhead_s;
    }
    return rc;
}

int xs_cuda_predict_row(const xs_device *dev, const xs_cmeas *row, double *time_s, xs_error *err)
{
    double over;
    return predict(dev, row, time_s, &over, err);
}

/* ---- the fit --------------------------------------------------------------------------- */

static void fit_stats(xs_fit *f, const double *rel, int n, double value, double sd)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->p = 1;
    f->coef[0] = value;
    f->sd[0] = sd;
    f->used[0] = 1;
    double ss = 0, mx = 0;
    for (int i = 0; i < n; i++) {
        ss += rel[i] * rel[i];
        mx = fmax(mx, fabs(rel[i]));
    }
    f->rms_rel_pct = n ? 100 * sqrt(ss / n) : 0;
    f->max_rel_pct = 100 * mx;
}

/* Sum of squared log errors of the GEMM rows of dtype dt (-1: all) at efficiency e. */
static int gemm_cost(const xs_cmeas_list *l, const xs_device *dev, int dt, double e, double *cost,
                     double *rel, int *n, xs_error *err)
{
    xs_device d = *dev;
    xs_gpu_of(&d)->gemm_efficiency = e;
    *cost = 0;
    *n = 0;
    for (size_t i = 0; i < l->n; i++) {
        const xs_cmeas *r = &l->v[i];
        if (r->bench != XS_CB_GEMM_CUBLAS || (dt >= 0 && r->dtype != dt))
            continue;
        double t, over;
        int rc = predict(&d, r, &t, &over, err);
        if (rc)
            return rc;
        double lr = log(t / r->median_s);
        *cost += lr * lr;
        if (rel) /* sized for every row */
            rel[*n] = t / r->median_s - 1;
        (*n)++;
    }
    return XS_OK;
}

/* The efficiency that makes the GEMM model reproduce the sweep: a golden
 * section on the summed squared log error (the model's time falls as the
 * efficiency rises, through max() terms, so no closed form). */
static int fit_gemm(const xs_cmeas_list *l, const xs_device *dev, int dt, double *eff, xs_fit *f,
                    xs_error *err)
{
    double a = 0.02, b = 1.0, gr = (sqrt(5.0) - 1) / 2, c1, c2;
    int n, rc;
    double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    if ((rc = gemm_cost(l, dev, dt, x1, &c1, NULL, &n, err)) ||
        (rc = gemm_cost(l, dev, dt, x2, &c2, NULL, &n, err)))
        return rc;
    if (n == 0) {
        *eff = 0;
        memset(f, 0, sizeof *f);
        return XS_OK;
    }
    for (int it = 0; it < 60 && b - a > 1e-6; it++) {
        if (c1 < c2) {
            b = x2;
            x2 = x1;
            c2 = c1;
            x1 = b - gr * (b - a);
            if ((rc = gemm_cost(l, dev, dt, x1, &c1, NULL, &n, err)))
                return rc;
        } else {
            a = x1;
            x1 = x2;
            c1 = c2;
            x2 = a + gr * (b - a);
            if ((rc = gemm_cost(l, dev, dt, x2, &c2, NULL, &n, err)))
                return rc;
        }
    }
    *eff = 0.5 * (a + b);
    double *rel = malloc(l->n * sizeof *rel), cost;
    if (!rel)
        return xs_error_set(err, XS_ENOMEM, "calibrate: out of memory");
    rc = gemm_cost(l, dev, dt, *eff, &cost, rel, &n, err);
    /* sd: the efficiency's spread that the residual scatter allows, by the
     * local sensitivity d log t / d log e (about -1 where compute bounds) */
    if (!rc)
        fit_stats(f, rel, n, *eff, n > 1 ? *eff * sqrt(cost / (n - 1)) / sqrt((double)n) : 0);
    free(rel);
    return rc;
}

/* One multiplier of a class's kernel bodies: min sum ((b f + o - t) / t)^2. */
static int fit_class(const xs_cmeas_list *l, const xs_device *dev, int kc, const int *benches,
                     int nb, double *factor, xs_fit *f, xs_error *err)
{
    double sxy = 0, sxx = 0;
    int n = 0;
    double *b = malloc((l->n + 1) * sizeof *b), *o = malloc((l->n + 1) * sizeof *o),
           *t = malloc((l->n + 1) * sizeof *t);
    int rc = b && o && t ? XS_OK : xs_error_set(err, XS_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < l->n; i++) {
        const xs_cmeas *r = &l->v[i];
        int mine = 0;
        for (int j = 0; j < nb; j++)
            mine |= r->bench == benches[j];
        if (!mine)
            continue;
        double p, over;
        if ((rc = predict(dev, r, &p, &over, err)))
            break;
        b[n] = p - over;
        o[n] = over;
        t[n] = r->median_s;
        sxy += b[n] * (t[n] - o[n]) / (t[n] * t[n]);
        sxx += b[n] * b[n] / (t[n] * t[n]);
        n++;
    }
    *factor = 0;
    memset(f, 0, sizeof *f);
    if (!rc && n && sxx > 0) {
        *factor = sxy / sxx;
        if (!(*factor >= 0.1 && *factor <= 10))
            rc = xs_error_set(err, XS_ERANGE,
                              "calibrate: the %s kernels ran %.3g times the model's time (allowed "
                              "0.1..10): the measurements are not of this device (--base)",
                              xs_kclass_name(kc), *factor);
        double ss = 0;
        for (int i = 0; !rc && i < n; i++) {
            double rr = (b[i] * *factor + o[i]) / t[i] - 1;
            b[i] = rr;
            ss += rr * rr;
        }
        if (!rc)
            fit_stats(f, b, n, *factor, n > 1 ? sqrt(ss / (n - 1) / sxx) : 0);
    }
    free(b);
    free(o);
    free(t);
    return rc;
}

static const xs_cmeas *first_of(const xs_cmeas_list *l, int bench)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].bench == bench)
            return &l->v[i];
    return NULL;
}

int xs_cuda_fit(const xs_cmeas_list *l, const xs_device *base, xs_device *dev,
                xs_cuda_fit_result *f, xs_error *err)
{
    memset(f, 0, sizeof *f);
    *dev = *base;
    xs_gpu_params *g = xs_gpu_of(dev);
    /* launch cost: median over the launch rows */
    double v[256];
    int n = 0;
    for (size_t i = 0; i < l->n && n < 256; i++)
        if (l->v[i].bench == XS_CB_LAUNCH)
            v[n++] = l->v[i].median_s;
    if (!n)
        return xs_error_set(err, XS_EFIELD, "calibrate: no launch row in the measurements");
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    f->launch_n = n;
    f->launch_us = quantile(v, n, 0.5) * 1e6;
    const xs_cmeas *l0 = first_of(l, XS_CB_LAUNCH);
    f->launch_sd = n > 1 ? (quantile(v, n, 0.75) - quantile(v, n, 0.25)) / 1.349 * 1e6
                         : (l0->q3_s - l0->q1_s) / 1.349 * 1e6;
    g->kernel_launch_us = xs_fit_round(f->launch_us, 4);
    /* streaming efficiency: copies and triads of at least 4x L2 */
    double l2 = g->l2_mb * 1048576.0, eff[256], rel[256], sum = 0;
    n = 0;
    for (size_t i = 0; i < l->n && n < 256; i++) {
        const xs_cmeas *r = &l->v[i];
        if ((r->bench == XS_CB_COPY || r->bench == XS_CB_TRIAD) && r->bytes >= 3.5 * l2) {
            double body = r->median_s - f->launch_us * 1e-6;
            if (body <= 0)
                return xs_error_set(err, XS_ERANGE,
                                    "calibrate: a %s of %.3g bytes took %.3g s, less than the "
                                    "launch cost",
                                    xs_cbench_name(r->bench), r->bytes, r->median_s);
            eff[n] = r->bytes / body / (dev->mem_bw_gbs * 1e9);
            sum += eff[n++];
        }
    }
    if (!n)
        return xs_error_set(err, XS_EFIELD,
                            "calibrate: no copy or triad row of at least 3.5 x L2 (%.0f MB) in "
                            "the measurements",
                            3.5 * g->l2_mb);
    qsort(eff, (size_t)n, sizeof *eff, cmp_d);
    f->mem_eff = quantile(eff, n, 0.5);
    f->mem_eff_lo = eff[0];
    f->mem_eff_hi = eff[n - 1];
    double ss = 0;
    for (int i = 0; i < n; i++) {
        rel[i] = eff[i] / f->mem_eff - 1;
        ss += (eff[i] - sum / n) * (eff[i] - sum / n);
    }
    f->mem_eff_sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
    fit_stats(&f->mem_fit, rel, n, f->mem_eff, f->mem_eff_sd);
    if (!(f->mem_eff_hi <= 1.0 && f->mem_eff_lo > 0))
        return xs_error_set(err, XS_ERANGE,
                            "calibrate: streaming reached %.3g..%.3g of %s's %.0f GB/s (must be "
                            "at most 1): the measurements are not of this device (--base)",
                            f->mem_eff_lo, f->mem_eff_hi, base->id, dev->mem_bw_gbs);
    g->mem_bw_efficiency = xs_fit_round(f->mem_eff, 4);
    g->mem_bw_efficiency_low = xs_fit_round(fmin(f->mem_eff_lo, g->mem_bw_efficiency), 4);
    g->mem_bw_efficiency_high = xs_fit_round(fmax(f->mem_eff_hi, g->mem_bw_efficiency), 4);
    /* the clock a dense GEMM holds (NVML) */
    const xs_cmeas *sg = first_of(l, XS_CB_SUSTAIN_GEMM), *sc = first_of(l, XS_CB_SUSTAIN_COPY),
                   *idle = first_of(l, XS_CB_IDLE);
    if (!sg || !sc || !idle)
        return xs_error_set(err, XS_EFIELD,
                            "calibrate: the measurements lack the sustained %s row (power needs "
                            "idle, sustain_copy and sustain_gemm)",
                            !idle ? "idle" : !sc ? "sustain_copy" : "sustain_gemm");
    if (sg->sm_mhz > 0) {
        double top = fmax(g->clock_boost_mhz, g->clock_tensor_mhz);
        if (sg->sm_mhz > top * 1.001)
            return xs_error_set(err, XS_ERANGE,
                                "calibrate: the dense GEMM held %.0f MHz, above %s's top clock "
                                "%.0f MHz: the measurements are not of this device (--base)",
                                sg->sm_mhz, base->id, top);
        f->clock_mhz = fmin(sg->sm_mhz, top);
        f->clock_n = 1;
        g->clock_sustained_mhz = round(f->clock_mhz);
        g->clock_sustained_low_mhz = fmin(g->clock_sustained_low_mhz, g->clock_sustained_mhz);
    }
    /* GEMM efficiency, all dtypes together (the file holds one), and each alone */
    int rc = fit_gemm(l, dev, -1, &f->gemm_eff, &f->gemm_fit, err);
    if (rc)
        return rc;
    if (f->gemm_fit.n == 0)
        return xs_error_set(err, XS_EFIELD, "calibrate: no gemm_cublas row in the measurements");
    double lo = f->gemm_eff, hi = f->gemm_eff;
    for (int dt = 0; dt < 4; dt++) {
        if ((rc = fit_gemm(l, dev, dt, &f->gemm_dtype_eff[dt], &f->gemm_dtype_fit[dt], err)))
            return rc;
        if (f->gemm_dtype_fit[dt].n) {
            lo = fmin(lo, f->gemm_dtype_eff[dt]);
            hi = fmax(hi, f->gemm_dtype_eff[dt]);
        }
    }
    g->gemm_efficiency = xs_fit_round(f->gemm_eff, 4);
    g->gemm_efficiency_low = xs_fit_round(fmin(lo, g->gemm_efficiency), 4);
    g->gemm_efficiency_high = xs_fit_round(fmax(hi, g->gemm_efficiency), 4);
    /* class factors, on the fitted model without the base's factors */
    for (int c = 0; c < XS_KC_COUNT; c++)
        g->class_time_factor[c] = 0;
    static const int NORM[] = {XS_CB_LAYERNORM}, SOFT[] = {XS_CB_SOFTMAX},
                     OPT[] = {XS_CB_ADAN_FUSED, XS_CB_ADAN_EAGER, XS_CB_ADAMW_FUSED};
    struct {
        int kc;
        const int *b;
        int nb;
    } cls[] = {{XS_KC_NORM, NORM, 1}, {XS_KC_SOFTMAX, SOFT, 1}, {XS_KC_OPTIMIZER, OPT, 3}};
    double factor[XS_KC_COUNT] = {0};
    for (int i = 0; i < 3; i++)
        if ((rc = fit_class(l, dev, cls[i].kc, cls[i].b, cls[i].nb, &factor[cls[i].kc],
                            &f->class_fit[cls[i].kc], err)))
            return rc;
    for (int c = 0; c < XS_KC_COUNT; c++) {
        f->class_factor[c] = factor[c];
        if (factor[c] > 0)
            g->class_time_factor[c] = xs_fit_round(factor[c], 4);
    }
    /* power: P = idle + e_flop FLOP/s + e_byte B/s over the sustained runs */
    f->idle_w = idle->power_w;
    f->copy_power_w = sc->power_w;
    f->dense_power_w = sg->power_w;
    f->energy_from_counter = sg->energy_src == 1 && sc->energy_src == 1;
    double bc = sc->bytes / sc->median_s, fg = sg->flops / sg->median_s,
           bg = sg->bytes / sg->median_s;
    if (!(bc > 0 && fg > 0))
        return xs_error_set(err, XS_EFIELD,
                            "calibrate: the sustained copy moved no bytes or the sustained GEMM "
                            "did no FLOPs (bytes, flops columns)");
    double e_byte = (sc->power_w - f->idle_w) / bc;
    double e_flop = (sg->power_w - f->idle_w - e_byte * bg) / fg;
    f->pj_per_byte = e_byte * 1e12;
    f->pj_per_flop = e_flop * 1e12;
    if (!(f->idle_w > 0 && f->idle_w < dev->tdp_w))
        return xs_error_set(err, XS_ERANGE,
                            "calibrate: idle power %.4g W is not between 0 and %s's TDP %.4g W",
                            f->idle_w, base->id, dev->tdp_w);
    /* the file's memory share: a copy at the measured streaming rate draws
     * idle + memory_frac (tdp - idle) */
    f->memory_frac = fmin(fmax((sc->power_w - f->idle_w) / (dev->tdp_w - f->idle_w), 0), 1);
    dev->idle_w = xs_fit_round(f->idle_w, 4);
    dev->power_memory_frac = xs_fit_round(f->memory_frac, 4);
    /* the dense share: the energy model (energy.c) reproducing the
     * sustained GEMM's power with the memory share just fitted */
    xs_op op;
    memset(&op, 0, sizeof op);
    snprintf(op.name, sizeof op.name, "gemm");
    op.layer = -1;
    op.kind = XS_OP_GEMM;
    op.dtype = sg->dtype >= 0 ? (xs_dtype)sg->dtype : XS_FP16;
    op.m = sg->m;
    op.n = sg->n;
    op.k = sg->k;
    op.batch = 1;
    op.flops = sg->flops;
    op.bytes = sg->bytes;
    op.launches = 1;
    op.hints.fn = -1;
    xs_estimate est;
    memset(&est, 0, sizeof est);
    dev->power_compute_frac = 0;
    if ((rc = xs_dev_estimate(dev, &op, &est, err)))
        return rc;
    double bcomp = est.compute_s / est.time_s, bmem = dev->power_memory_frac * est.memory_s / est.time_s;
    if (bcomp + bmem > 1) { /* as energy.c shares the board */
        double s = bcomp + bmem;
        bcomp /= s;
        bmem /= s;
    }
    double share = (sg->power_w - f->idle_w) / (dev->tdp_w - f->idle_w);
    f->compute_frac = bcomp > 0 ? fmin(fmax((share - bmem) / bcomp, 0.01), 1) : 1;
    dev->power_compute_frac = xs_fit_round(f->compute_frac, 4);
    return XS_OK;
}

/* ---- measuring ------------------------------------------------------------------------ */

typedef struct {
    const xs_cal_run_opts *o;
    xs_cuda_lib lib;
    xs_nvml *nvml;
    xs_cmeas_list ms;
    const xs_device *base;
    double t0;
    xs_error *err;
} cal;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((format(printf, 2, 3))) static void say(const cal *c, const char *fmt, ...)
{
    if (!c->o->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(c->o->log, "calibrate [%5.1f s] ", now_s() - c->t0);
    vfprintf(c->o->log, fmt, ap);
    fputc('\n', c->o->log);
    fflush(c->o->log);
    va_end(ap);
}

static void row_from(int bench, const xs_cuda_job *j, const xs_cuda_result *res, xs_cmeas *r)
{
    memset(r, 0, sizeof *r);
    r->bench = bench;
    r->dtype = bench == XS_CB_LAUNCH || bench == XS_CB_COPY || bench == XS_CB_TRIAD ||
                       bench == XS_CB_SUSTAIN_COPY || bench == XS_CB_IDLE
                   ? -1
                   : j->dtype;
    r->m = j->m;
    r->n = j->n;
    r->k = j->k;
    r->ta = j->ta;
    r->tb = j->tb;
    r->elems = j->elems;
    r->hidden = j->hidden;
    r->bytes = res->bytes;
    r->flops = res->flops;
    r->launches = res->launches;
    r->tensors = res->tensors;
    snprintf(r->impl, sizeof r->impl, "%s", res->impl);
}

/* Time job and keep its row; a job this GPU does not support (bf16 before
 * sm_80) is skipped with a line, not an error. */
static int timed(cal *c, int bench, const xs_cuda_job *j)
{
    xs_cuda_result res;
    char what[96];
    snprintf(what, sizeof what, "%s %lldx%lldx%lld elems %lld", xs_cbench_name(bench), j->m, j->n,
             j->k, j->elems);
    xs_error e;
    int rc = xs_cuda_lib_run(&c->lib, j, &res, what, &e);
    /* bf16 before sm_80 and the like; the own GEMM is a comparison, not
     * a fitted figure, so a shape it refuses costs its row only */
    if (rc == XS_EUNSUPPORTED || (rc == XS_EIO && bench == XS_CB_GEMM_OWN)) {
        say(c, "skipped: %s", e.msg);
        return XS_OK;
    }
    if (rc) {
        *c->err = e;
        return rc;
    }
    xs_cmeas r;
    row_from(bench, j, &res, &r);
    xs_cuda_row_stats(&res, &r);
    return xs_cmeas_add(&c->ms, &r) ? xs_error_set(c->err, XS_ENOMEM, "out of memory") : XS_OK;
}

/* A sustained run of j (NULL: the board idle for seconds) with the board sampled. */
static int sustained(cal *c, int bench, const xs_cuda_job *j, double seconds)
{
    int rc = xs_nvml_sampler_start(c->nvml, 0.015, c->err);
    if (rc)
        return rc;
    xs_cuda_result res;
    memset(&res, 0, sizeof res);
    xs_error e = {0, "", ""};
    double t = now_s();
    if (j)
        rc = xs_cuda_lib_run(&c->lib, j, &res, xs_cbench_name(bench), &e);
    else {
        struct timespec ts = {(time_t)seconds, (long)((seconds - floor(seconds)) * 1e9)};
        nanosleep(&ts, NULL);
    }
    double wall = now_s() - t;
    xs_nvml_summary s;
    int src = xs_nvml_sampler_stop(c->nvml, &s, rc ? NULL : c->err);
    if (rc) {
        *c->err = e;
        return rc;
    }
    if (src)
        return src;
    xs_cuda_job idle_job;
    memset(&idle_job, 0, sizeof idle_job);
    xs_cmeas r;
    row_from(bench, j ? j : &idle_job, &res, &r);
    if (j) {
        r.reps = res.sustain_calls;
        r.median_s = r.q1_s = r.q3_s = res.sustain_time_s / (double)res.sustain_calls;
        r.sustain_s = res.sustain_time_s;
    } else {
        r.sustain_s = wall;
    }
    r.power_w = s.power_median_w;
    r.energy_j = s.energy_j;
    r.energy_src = s.energy_from_counter ? 1 : 2;
    r.sm_mhz = s.sm_mhz_median;
    r.mem_mhz = s.mem_mhz_median;
    r.temp_c = s.temp_max_c;
    r.reasons = s.reasons_seen;
    char why[160];
    xs_nvml_reasons_text(s.reasons_seen, why, sizeof why);
    say(c, "%s: %.1f W median over %d samples, SM %.0f MHz, reasons %s", xs_cbench_name(bench),
        s.power_median_w, s.n, s.sm_mhz_median, why);
    return xs_cmeas_add(&c->ms, &r) ? xs_error_set(c->err, XS_ENOMEM, "out of memory") : XS_OK;
}

static int measure_all(cal *c)
{
    int q = c->o->quick, reps = q ? 10 : 30, rc;
    const xs_cuda_info *info = &c->lib.info;
    double l2 = (info->l2_mb > 0 ? info->l2_mb : xs_gpu_of(c->base)->l2_mb) * 1048576.0;
    /* launch cost: 256 empty launches timed together, a few times */
    for (int i = 0; i < (q ? 3 : 5); i++) {
        xs_cuda_job j = xs_cuda_job_make(XS_CJ_LAUNCH, XS_CD_FP32, 256);
        j.flush_l2 = 0;
        if ((rc = timed(c, XS_CB_LAUNCH, &j)))
            return rc;
    }
    say(c, "launch cost measured");
    /* bandwidth: total bytes from a quarter of L2 to 8x past it */
    static const double SIZES[] = {0.25, 0.5, 1, 2, 4, 8};
    for (int kind = XS_CJ_COPY; kind <= XS_CJ_TRIAD; kind++)
        for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
            xs_cuda_job j = xs_cuda_job_make(kind, XS_CD_FP32, reps);
            j.elems = (long long)(SIZES[s] * l2 / (kind == XS_CJ_COPY ? 8.0 : 12.0));
            j.flush_l2 = SIZES[s] > 1; /* in L2: the warm plateau */
            if ((rc = timed(c, kind == XS_CJ_COPY ? XS_CB_COPY : XS_CB_TRIAD, &j)))
                return rc;
        }
    say(c, "copy and triad measured");
    xs_cuda_shape sh[XS_CUDA_MAX_SHAPES];
    int ns = xs_cuda_gemm_sweep(c->base, q, sh);
    for (int dt = 0; dt < XS_CD_COUNT; dt++)
        for (int i = 0; i < ns; i++) {
            xs_cuda_job j = xs_cuda_job_make(XS_CJ_GEMM_CUBLAS, dt, reps);
            j.m = sh[i].m;
            j.n = sh[i].n;
            j.k = sh[i].k;
            if ((rc = timed(c, XS_CB_GEMM_CUBLAS, &j)))
                return rc;
        }
    say(c, "cuBLAS GEMM sweep: %d shapes x 4 dtypes", ns);
    for (int dt = XS_CD_FP16; dt <= XS_CD_BF16; dt++)
        for (int i = 0; i < (q ? 2 : 4); i++) {
            xs_cuda_job j = xs_cuda_job_make(XS_CJ_GEMM, dt, reps);
            j.m = sh[i].m;
            j.n = sh[i].n;
            j.k = sh[i].k;
            if ((rc = timed(c, XS_CB_GEMM_OWN, &j)))
                return rc;
        }
    /* layernorm and softmax at BERT widths: 4096 tokens; softmax over
     * attention scores of batch 8 x 12 heads x 512 */
    static const long long LN[][2] = {{4096, 768}, {4096, 1024}, {8192, 768}};
    static const long long SM[][2] = {{8 * 12 * 512, 512}, {8 * 16 * 128, 128}, {8 * 12 * 128, 128}};
    for (int dt = XS_CD_FP32; dt <= XS_CD_FP16; dt += 2)
        for (int i = 0; i < 3; i++) {
            xs_cuda_job j = xs_cuda_job_make(XS_CJ_LAYERNORM, dt, reps);
            j.m = LN[i][0];
            j.n = LN[i][1];
            if ((rc = timed(c, XS_CB_LAYERNORM, &j)))
                return rc;
            j = xs_cuda_job_make(XS_CJ_SOFTMAX, dt, reps);
            j.m = SM[i][0];
            j.n = SM[i][1];
            if ((rc = timed(c, XS_CB_SOFTMAX, &j)))
                return rc;
        }
    /* optimizers over a BERT-base (110M) and a smaller model's tensors */
    static const long long OP[][2] = {{110000000, 768}, {25000000, 512}};
    static const int OK_[] = {XS_CJ_ADAN_FUSED, XS_CJ_ADAN_EAGER, XS_CJ_ADAMW_FUSED};
    static const int OB[] = {XS_CB_ADAN_FUSED, XS_CB_ADAN_EAGER, XS_CB_ADAMW_FUSED};
    for (int i = 0; i < (q ? 1 : 2); i++)
        for (int k = 0; k < 3; k++) {
            xs_cuda_job j = xs_cuda_job_make(OK_[k], XS_CD_FP32, q ? 5 : 10);
            j.elems = OP[q ? 1 : i][0];
            j.hidden = (int)OP[q ? 1 : i][1];
            if ((rc = timed(c, OB[k], &j)))
                return rc;
        }
    say(c, "row kernels and optimizers measured");
    double secs = q ? 2.0 : 5.0;
    if ((rc = sustained(c, XS_CB_IDLE, NULL, q ? 1.5 : 3.0)))
        return rc;
    xs_cuda_job j = xs_cuda_job_make(XS_CJ_COPY, XS_CD_FP32, 1);
    j.elems = (long long)(8 * l2 / 8.0);
    j.flush_l2 = 0;
    j.sustain_s = secs;
    if ((rc = sustained(c, XS_CB_SUSTAIN_COPY, &j, secs)))
        return rc;
    j = xs_cuda_job_make(XS_CJ_GEMM_CUBLAS, XS_CD_FP16, 1);
    j.m = j.n = j.k = 8192;
    j.flush_l2 = 0;
    j.sustain_s = secs;
    return sustained(c, XS_CB_SUSTAIN_GEMM, &j, secs);
}

/* ---- the device file --------------------------------------------------------------------- */

static void set_text(cJSON *doc, const char *obj, const char *key, const char *text)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, obj);
    if (!o)
        o = cJSON_AddObjectToObject(doc, obj);
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    cJSON_AddStringToObject(o, key, text);
}

static void add_fit(cJSON *o, const char *name, double value, const xs_fit *f, const char *unit)
{
    cJSON *x = cJSON_AddObjectToObject(o, name);
    cJSON_AddNumberToObject(x, "value", xs_fit_round(value, 4));
    if (unit)
        cJSON_AddStringToObject(x, "unit", unit);
    cJSON_AddNumberToObject(x, "sd", xs_fit_round(f->sd[0], 3));
    cJSON_AddNumberToObject(x, "n", f->n);
    cJSON_AddNumberToObject(x, "rms_residual_pct", xs_fit_round(f->rms_rel_pct, 3));
    cJSON_AddNumberToObject(x, "max_residual_pct", xs_fit_round(f->max_rel_pct, 3));
}

static cJSON *calibration_json(const xs_cmeas_list *l, const xs_cuda_fit_result *f,
                               const xs_device *base, const char *meas_path, const char *command)
{
    cJSON *ca = cJSON_CreateObject();
    cJSON *gpu = cJSON_AddObjectToObject(ca, "gpu");
    static const char *const META[] = {"gpu_name", "pci_bus_id", "compute_capability", "sm_count",
                                       "driver", "cuda_driver", "cuda_runtime", "power_limit_w",
                                       "max_sm_mhz", "max_mem_mhz", "libxscuda"};
    for (size_t i = 0; i < sizeof META / sizeof META[0]; i++) {
        const char *v = xs_cmeas_meta_get(l, META[i]);
        cJSON_AddStringToObject(gpu, i == 0 ? "name" : META[i], v ? v : "unknown");
    }
    const char *date = xs_cmeas_meta_get(l, "date");
    cJSON_AddStringToObject(ca, "date", date ? date : "unknown");
    const char *mc = xs_cmeas_meta_get(l, "command");
    cJSON_AddStringToObject(ca, "measured_by", mc ? mc : "unknown");
    cJSON_AddStringToObject(ca, "command", command ? command : "xpusim calibrate --backend cuda");
    const char *ver = xs_cmeas_meta_get(l, "xpusim_version");
    cJSON_AddStringToObject(ca, "xpusim_version_measured", ver ? ver : "unknown");
    cJSON_AddStringToObject(ca, "xpusim_version", XS_VERSION);
    cJSON_AddStringToObject(ca, "base", base->id);
    cJSON_AddStringToObject(ca, "measurements", meas_path);
    cJSON_AddNumberToObject(ca, "measurement_rows", (double)l->n);
    unsigned long long seen = 0;
    double tmax = -1;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].bench >= XS_CB_SUSTAIN_GEMM) {
            seen |= l->v[i].reasons;
            tmax = fmax(tmax, l->v[i].temp_c);
        }
    char why[256];
    xs_nvml_reasons_text(seen, why, sizeof why);
    cJSON_AddStringToObject(ca, "clocks_event_reasons_seen", why);
    cJSON_AddNumberToObject(ca, "temperature_max_c", tmax);
    /* the implementations that ran, one each */
    cJSON *impl = cJSON_AddArrayToObject(ca, "impl");
    for (size_t i = 0; i < l->n; i++) {
        int dup = 0;
        for (size_t k = 0; k < i && !dup; k++)
            dup = strcmp(l->v[k].impl, l->v[i].impl) == 0;
        if (!dup && l->v[i].impl[0] && strcmp(l->v[i].impl, "-") != 0 &&
            cJSON_GetArraySize(impl) < 32)
            cJSON_AddItemToArray(impl, cJSON_CreateString(l->v[i].impl));
    }
    cJSON *fits = cJSON_AddObjectToObject(ca, "fits");
    xs_fit lf;
    memset(&lf, 0, sizeof lf);
    lf.n = f->launch_n;
    lf.sd[0] = f->launch_sd;
    add_fit(fits, "kernel_launch_us", f->launch_us, &lf, "us");
    add_fit(fits, "mem_bw_efficiency", f->mem_eff, &f->mem_fit, NULL);
    add_fit(fits, "gemm_efficiency", f->gemm_eff, &f->gemm_fit, NULL);
    static const char *const DT[] = {"fp32", "tf32", "fp16", "bf16"};
    cJSON *pd = cJSON_AddObjectToObject(fits, "gemm_efficiency_by_dtype");
    for (int dt = 0; dt < 4; dt++)
        if (f->gemm_dtype_fit[dt].n)
            add_fit(pd, DT[dt], f->gemm_dtype_eff[dt], &f->gemm_dtype_fit[dt], NULL);
    if (f->clock_n) {
        cJSON *c = cJSON_AddObjectToObject(fits, "clock_sustained_mhz");
        cJSON_AddNumberToObject(c, "value", round(f->clock_mhz));
        cJSON_AddStringToObject(c, "from", "median NVML SM clock over the sustained dense GEMM");
    }
    cJSON *cf = cJSON_AddObjectToObject(fits, "class_time_factor");
    for (int c = 0; c < XS_KC_COUNT; c++)
        if (f->class_fit[c].n)
            add_fit(cf, xs_kclass_name(c), f->class_factor[c], &f->class_fit[c], NULL);
    cJSON *pw = cJSON_AddObjectToObject(fits, "power");
    cJSON_AddNumberToObject(pw, "idle_w", xs_fit_round(f->idle_w, 4));
    cJSON_AddNumberToObject(pw, "sustained_copy_w", xs_fit_round(f->copy_power_w, 4));
    cJSON_AddNumberToObject(pw, "sustained_gemm_w", xs_fit_round(f->dense_power_w, 4));
    cJSON_AddNumberToObject(pw, "pj_per_flop", xs_fit_round(f->pj_per_flop, 4));
    cJSON_AddNumberToObject(pw, "pj_per_byte", xs_fit_round(f->pj_per_byte, 4));
    cJSON_AddNumberToObject(pw, "memory_frac", xs_fit_round(f->memory_frac, 4));
    cJSON_AddNumberToObject(pw, "compute_frac", xs_fit_round(f->compute_frac, 4));
    cJSON_AddStringToObject(pw, "energy_from",
                            f->energy_from_counter ? "counter (nvmlDeviceGetTotalEnergyConsumption)"
                                                   : "power samples integrated (no energy counter)");
    cJSON_AddStringToObject(
        pw, "note",
        "P = idle + pj_per_flop FLOP/s + pj_per_byte B/s, solved from the idle, sustained-copy "
        "and sustained-GEMM runs (median NVML power); the file keeps idle_w and memory_frac "
        "(the copy's share of tdp - idle) and compute_frac (the share that makes the energy "
        "model give sustained_gemm_w for the sustained GEMM)");
    return ca;
}

static int write_device(const xs_cmeas_list *l, const xs_device *base, const char *base_path,
                        const xs_cal_run_opts *o, const char *meas_path, const char *id,
                        xs_error *err)
{
    xs_device dev;
    xs_cuda_fit_result f;
    int rc = xs_cuda_fit(l, base, &dev, &f, err);
    if (rc)
        return rc;
    snprintf(dev.id, sizeof dev.id, "%.*s", (int)sizeof dev.id - 1, id);
    const char *gn = xs_cmeas_meta_get(l, "gpu_name");
    if (gn && gn[0]) /* the board it was measured on, as CUDA names it */
        snprintf(dev.name, sizeof dev.name, "%.*s", (int)sizeof dev.name - 1, gn);
    cJSON *notes = NULL;
    if ((rc = xs_json_load(base_path, &notes, err)))
        return rc;
    cJSON_DeleteItemFromObjectCaseSensitive(notes, "calibration");
    cJSON *ca = calibration_json(l, &f, base, meas_path, o->command);
    cJSON_AddItemToObject(notes, "calibration", ca);
    char text[1024];
    const char *gname = xs_cmeas_meta_get(l, "gpu_name");
    snprintf(text, sizeof text,
             "written by xpusim calibrate --backend cuda from %s (measured on %s): "
             "kernel_launch_us, mem_bw_efficiency (and its band), gemm_efficiency (its band: the "
             "per-dtype fits) and class_time_factor (norm, softmax, optimizer) fitted to the "
             "measurements; the rest is %s's (see calibration)",
             meas_path, gname ? gname : "an unnamed GPU", base->id);
    set_text(notes, "model", "source", text);
    snprintf(text, sizeof text,
             "idle_w, memory_frac and compute_frac measured with NVML (calibration.fits.power); "
             "tdp_w and the limits are %s's",
             base->id);
    set_text(notes, "power", "source", text);
    snprintf(text, sizeof text,
             "tdp_w, the limits, v_floor, vf_knee_mhz and leak_frac are %s's, with the sources "
             "its power.note gives; idle_w, memory_frac and compute_frac are measured here (the "
             "power-limit clock model, power.h, still takes a dense kernel at tdp_w)",
             base->id);
    set_text(notes, "power", "note", text);
    if (f.clock_n)
        set_text(notes, "compute", "note",
                 "clock_sustained_mhz: the median NVML SM clock under a sustained dense fp16 "
                 "cuBLAS GEMM (calibration.fits.clock_sustained_mhz); clock_sustained_low_mhz: "
                 "the lower of that and the base file's");
    rc = xs_dev_write(&dev, notes, o->out, err);
    cJSON_Delete(notes);
    if (!rc && o->log)
        fprintf(o->log,
                "calibrate: launch %.3g us, streaming %.3g of %.0f GB/s, GEMM efficiency %.3g "
                "(rms %.2g%%, max %.2g%% over %d GEMMs), idle %.4g W, %.3g pJ/FLOP, %.3g pJ/B "
                "(memory_frac %.3g)\n",
                f.launch_us, f.mem_eff, dev.mem_bw_gbs, f.gemm_eff, f.gemm_fit.rms_rel_pct,
                f.gemm_fit.max_rel_pct, f.gemm_fit.n, f.idle_w, f.pj_per_flop, f.pj_per_byte,
                f.memory_frac);
    return rc;
}

/* The base device: --base, else from the GPU's name. */
static int open_base(const char *given, const char *gpu_name, xs_device *base, char *path,
                     size_t size, xs_error *err)
{
    const char *id = given ? given : gpu_name ? xs_cuda_base_for_name(gpu_name) : NULL;
    if (!id)
        return xs_error_set(err, XS_EARG,
                            "calibrate --backend cuda: no shipped device file is known for \"%s\" "
                            "(or the name fits more than one): give --base DEVICE, the datasheet "
                            "device the fit starts from",
                            gpu_name ? gpu_name : "an unnamed GPU");
    int rc = xs_resolve("devices", id, path, size, err);
    if (!rc)
        rc = xs_dev_load(path, base, err);
    if (!rc && strcmp(xs_backend_of(base)->name, "gpu") != 0)
        rc = xs_error_set(err, XS_EARG, "calibrate --backend cuda: --base %s is not a gpu device",
                          id);
    return rc;
}

int xs_cuda_host_check(xs_error *err)
{
    xs_cuda_lib lib;
    int rc = xs_cuda_lib_open(&lib, 0, err);
    if (!rc)
        xs_cuda_lib_close(&lib);
    return rc;
}

int xs_cuda_same_host(const xs_device *dev, char *why, size_t size)
{
    xs_cuda_lib lib;
    xs_error e;
    if (xs_cuda_lib_open(&lib, 0, &e))
        return 1; /* no GPU to compare with: host_check says so next (exit 3) */
    char probed[96];
    snprintf(probed, sizeof probed, "%s", lib.info.name);
    xs_cuda_lib_close(&lib);
    /* a calibrated file is named after its GPU (calibration.gpu.name); a
     * datasheet file is the board the name table maps this GPU to */
    const char *id = xs_cuda_base_for_name(probed);
    int same = strcmp(dev->name, probed) == 0 || (id && strcmp(id, dev->id) == 0);
    if (!same)
        snprintf(why, size, "device %s is %s, this GPU is \"%s\"%s%s", dev->id, dev->name,
                 probed, id ? ", which is " : "", id ? id : "");
    return same;
}

static void meta(xs_cmeas_list *l, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void meta(xs_cmeas_list *l, const char *key, const char *fmt, ...)
{
    char v[224];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    for (char *p = v; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            *p = '?';
    xs_cmeas_meta_set(l, key, v);
}

int xs_cuda_calibrate(const xs_cal_run_opts *o, xs_error *err)
{
    char id[256], base_path[4096], meas_path[4096];
    int rc = xs_cal_device_id(o->out, id, sizeof id, err);
    if (rc)
        return rc;
    if (o->measurements)
        snprintf(meas_path, sizeof meas_path, "%s", o->measurements);
    else
        xs_cal_measurements_path(o->out, meas_path, sizeof meas_path);
    xs_device base;
    if (o->from_measurements) { /* no GPU: the fit alone */
        xs_cmeas_list l;
        if ((rc = xs_cmeas_read(o->from_measurements, &l, err)))
            return rc;
        rc = open_base(o->base, xs_cmeas_meta_get(&l, "gpu_name"), &base, base_path,
                       sizeof base_path, err);
        if (!rc)
            rc = write_device(&l, &base, base_path, o, o->from_measurements, id, err);
        if (!rc && o->log)
            fprintf(o->log, "calibrate: wrote %s from %s\n", o->out, o->from_measurements);
        xs_cmeas_free(&l);
        return rc;
    }
    cal c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.err = err;
    c.t0 = now_s();
    if ((rc = xs_cuda_lib_open(&c.lib, o->device_index, err)))
        return rc;
    const xs_cuda_info *in = &c.lib.info;
    rc = open_base(o->base, in->name, &base, base_path, sizeof base_path, err);
    if (!rc)
        rc = xs_nvml_open(in->pci_bus_id, in->device_index, &c.nvml, err);
    xs_nvml_board b;
    memset(&b, 0, sizeof b);
    if (!rc)
        rc = xs_nvml_board_info(c.nvml, &b, err);
    if (!rc) {
        c.base = &base;
        time_t now = time(NULL);
        char date[32];
        struct tm utc;
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &utc));
        meta(&c.ms, "gpu_name", "%s", in->name);
        meta(&c.ms, "pci_bus_id", "%s", in->pci_bus_id);
        meta(&c.ms, "compute_capability", "%d.%d", in->cc_major, in->cc_minor);
        meta(&c.ms, "sm_count", "%d", in->sm_count);
        meta(&c.ms, "driver", "%s", b.driver);
        meta(&c.ms, "cuda_driver", "%d", in->driver_version);
        meta(&c.ms, "cuda_runtime", "%d", in->runtime_version);
        meta(&c.ms, "power_limit_w", "%.1f", b.power_limit_w);
        meta(&c.ms, "max_sm_mhz", "%.0f", b.max_sm_mhz);
        meta(&c.ms, "max_mem_mhz", "%.0f", b.max_mem_mhz);
        meta(&c.ms, "energy_counter", "%s", b.has_energy_counter ? "yes" : "no");
        meta(&c.ms, "libxscuda", "%s", c.lib.path);
        meta(&c.ms, "date", "%s", date);
        meta(&c.ms, "command", "%s", o->command ? o->command : "xpusim calibrate --backend cuda");
        meta(&c.ms, "xpusim_version", "%s", XS_VERSION);
        meta(&c.ms, "quick", "%d", o->quick);
        say(&c, "%s (%s, sm_%d%d, %d SMs), driver %s, base %s, %s run", in->name, in->pci_bus_id,
            in->cc_major, in->cc_minor, in->sm_count, b.driver, base.id, o->quick ? "quick" : "full");
        rc = measure_all(&c);
    }
    if (c.ms.n) { /* kept even when a later step failed, to see why */
        xs_error werr;
        int wrc = xs_cmeas_write(&c.ms, meas_path, rc ? &werr : err);
        if (!rc)
            rc = wrc;
    }
    xs_nvml_close(c.nvml);
    xs_cuda_lib_close(&c.lib);
    if (!rc)
        rc = write_device(&c.ms, &base, base_path, o, meas_path, id, err);
    if (!rc)
        say(&c, "wrote %s and %s", o->out, meas_path);
    xs_cmeas_free(&c.ms);
    return rc;
}
