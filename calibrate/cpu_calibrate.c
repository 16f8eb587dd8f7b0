/* cpu_calibrate.c — see cpu_calibrate.h.
 *
 * Order matters on CPUs with AMX: heavy tile work lowers the vector clock
 * for a while afterwards, so everything fp32 is measured before the first
 * AMX instruction (the peaks, bandwidths, fp32 GEMMs and fp32 kernels),
 * then the AMX peak and the bf16 GEMMs. */
#include "cpu_calibrate.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "cpu.h"
#include "cpu_features.h"
#include "cpu_host_state.h"
#include "cpu_noise.h"
#include "cpu_gemm.h"
#include "cpu_params.h"
#include "cpu_runners.h"
#include "fileio.h"
#include "fit.h"
#include "layer_ops.h"
#include "measure.h"
#include "peak.h"
#include "stream.h"
#include "targets.h"
#include "threads_cal.h"

#include "xs_version.h"

/* The kernels' mainloop step: a 32 x 32 C block times 32 of K. */
#define KSTEP_FLOPS (2.0 * 32 * 32 * 32)

typedef struct {
    const xs_cal_run_opts *o;
    xs_cal_opts h;
    int N;               /* threads */
    double l2_core;      /* bytes of L2 per core */
    xs_meas_list ms;
    double t0;
    xs_error *err;
} cal;

__attribute__((format(printf, 2, 3))) static void say(const cal *c, const char *fmt, ...)
{
    if (!c->o->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(c->o->log, "calibrate [%5.1f s] ", xs_cal_now() - c->t0);
    vfprintf(c->o->log, fmt, ap);
    fputc('\n', c->o->log);
    fflush(c->o->log);
    va_end(ap);
}

static int keep(cal *c, const xs_meas *m)
{
    if (xs_meas_add(&c->ms, m))
        return xs_error_set(c->err, XS_ENOMEM, "calibrate: out of memory keeping measurements");
    return XS_OK;
}

/* A measurement row: what ran, on how many threads, over how many
 * elements; row() leaves the shape and the timing to the caller. */
static xs_meas row(const char *bench, const char *name, int threads, double elems)
{
    xs_meas m;
    memset(&m, 0, sizeof m);
    snprintf(m.bench, sizeof m.bench, "%s", bench);
    snprintf(m.name, sizeof m.name, "%s", name);
    m.threads = threads;
    m.elems = elems;
    return m;
}

/* Time k into m (its bytes and FLOPs are k's) and keep the row. */
static int time_row(cal *c, const xs_cal_kernel *k, xs_meas *m)
{
    m->bytes = k->bytes;
    m->flops = k->flops;
    xs_cal_measure(k, &c->h, &m->r);
    return keep(c, m);
}

/* Time runner r and keep the row. hot: no prepare step, so its data stay
 * in cache between calls; else the training-step state of
 * xs_runner_prepare. */
static int measure(cal *c, xs_runner *r, const char *bench, const char *name, int hot)
{
    xs_meas m = row(bench, name, r->threads, r->elems);
    m.m = r->fn < 0 ? r->m : r->rows;
    m.n = r->fn < 0 ? r->n : r->width;
    m.k = r->fn < 0 ? r->k : 0;
    m.ta = r->ta;
    m.tb = r->tb;
    xs_cal_kernel k = xs_runner_kernel_desc(r, name);
    if (hot)
        k.prepare = NULL;
    return time_row(c, &k, &m);
}

/* ---- fork/join and in-core peaks -------------------------------------------- */

typedef struct {
    int threads;
} fork_ctx;

static void run_fork(void *p)
{
    int nt = ((fork_ctx *)p)->threads;
#pragma omp parallel num_threads(nt)
    {
        __asm__ volatile("" ::: "memory");
    }
}

typedef struct {
    long iters;
    int threads, amx;
    double flops;
} peak_ctx;

static void run_peak(void *p)
{
    peak_ctx *c = p;
    c->flops = c->amx ? xs_krn_peak_amx_bf16(c->iters, c->threads)
                      : xs_krn_peak_fma_f32(c->iters, c->threads);
}

/* Returns the peak in FLOP/s, or 0 when the engine is missing. */
static double peak(cal *c, int amx)
{
    peak_ctx p = {c->o->quick ? 500000 : 2000000, c->N, amx, 0};
    run_peak(&p);
    if (p.flops <= 0)
        return 0;
    xs_cal_kernel k = {amx ? "amx" : "fma", 0, p.flops, run_peak, &p, NULL};
    xs_meas m = row("peak", k.name, c->N, 0);
    if (time_row(c, &k, &m))
        return -1;
    return p.flops / m.r.median_s;
}

/* ---- bandwidth ------------------------------------------------------------------ */

/* The working set of a bandwidth measurement: triad's three arrays. */
static double working_set(const xs_meas *m)
{
    return !strcmp(m->bench, "triad") ? 12.0 * m->elems : m->bytes;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile double read_sink;
static void run_read(void *p)
{
    xs_triad *t = p;
    read_sink = xs_krn_read(t->b, t->n, t->threads);
}

typedef struct {
    double bw, bw_sd; /* bytes/s */
    xs_fit fit;
    int points;
} level_fit;

/* Triad time against bytes over the rows of threads t whose working set is
 * within [lo, hi]: bandwidth is the inverse slope. */
static int fit_level(cal *c, const char *bench, int t, double lo, double hi, const char *what,
                     int origin, level_fit *out)
{
    double X[2 * 64], y[64];
    int n = 0, p = origin ? 1 : 2;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < c->ms.n && n < 64; i++) {
        const xs_meas *m = &c->ms.v[i];
        if (strcmp(m->bench, bench) || m->threads != t || working_set(m) < lo ||
            working_set(m) > hi)
            continue;
        if (!origin)
            X[p * n] = 1;
        X[p * n + p - 1] = m->bytes;
        y[n++] = m->r.median_s;
    }
    out->points = n;
    if (n < 2)
        return xs_error_set(c->err, XS_ERANGE,
                            "calibrate: %s: %d %s sizes between %.3g and %.3g MB at %d "
                            "threads, need 2",
                            what, n, bench, lo / 1048576, hi / 1048576, t);
    int rc = xs_fit_nonneg(X, y, n, p, what, &out->fit, c->err);
    if (rc)
        return rc;
    double s = out->fit.coef[p - 1];
    if (!(s > 0))
        return xs_error_set(c->err, XS_ERANGE, "calibrate: %s: time does not grow with size",
                            what);
    out->bw = 1 / s;
    out->bw_sd = out->fit.sd[p - 1] / (s * s);
    return XS_OK;
}

typedef struct {
    int threads[16], nthreads;
    double llc_bytes; /* effective */
    level_fit l2[16], llc[16], dram[16];
    level_fit l2_read; /* one core */
} bw_result;

static double phys_mem_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 4e9;
}

/* The working-set sizes of the sweep: inside L2 (per thread), then
 * geometric from 2 L2 to past the last-level cache. */
static int sweep_sizes(const cal *c, int t, double *ws, double max_ws)
{
    static const double in_l2_full[] = {1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2};
    static const double in_l2_quick[] = {1.0 / 8, 1.0 / 4, 1.0 / 2};
    int n = 0, q = c->o->quick;
    const double *f = q ? in_l2_quick : in_l2_full;
    for (int i = 0; i < (q ? 3 : 4); i++)
        ws[n++] = f[i] * c->l2_core * t;
    for (double s = 2 * c->l2_core * t; s <= max_ws && n < 40; s *= 2)
        ws[n++] = s;
    return n;
}

static int bandwidth(cal *c, bw_result *bw)
{
    double max_ws = xs_cpu_dram_set_bytes();
    size_t cap = ((size_t)(max_ws / 12) + 64) / 16 * 16; /* whole 64-byte lines */
    xs_triad tc = {aligned_alloc(64, cap * 4), aligned_alloc(64, cap * 4),
                    aligned_alloc(64, cap * 4), 0, 1};
    if (!tc.a || !tc.b || !tc.c) {
        free(tc.a);
        free(tc.b);
        free(tc.c);
        return xs_error_set(c->err, XS_ENOMEM, "calibrate: cannot allocate %.0f MB for the "
                                               "bandwidth sweep",
                            max_ws / 1048576);
    }
    for (size_t i = 0; i < cap; i++)
        tc.a[i] = tc.b[i] = tc.c[i] = 1.0f + (float)(i % 7);
    bw->nthreads = 0;
    for (int t = 1; t < c->N; t *= 2)
        bw->threads[bw->nthreads++] = t;
    bw->threads[bw->nthreads++] = c->N;
    int rc = XS_OK;
    for (int ti = 0; ti < bw->nthreads && !rc; ti++) {
        int t = bw->threads[ti];
        double ws[48];
        int n = sweep_sizes(c, t, ws, max_ws);
        for (int i = 0; i < n && !rc; i++) {
            tc.n = (size_t)(ws[i] / 12) / 16 * 16;
            tc.threads = t;
            /* 16 bytes an element move: STREAM counts 12, but the store to
             * a fetches each line of a first (write-allocate) */
            xs_cal_kernel k = {"triad", 16.0 * (double)tc.n, 2.0 * (double)tc.n, xs_triad_run, &tc,
                               NULL};
            xs_meas m = row("triad", "-", t, (double)tc.n);
            rc = time_row(c, &k, &m);
        }
        say(c, "triad sweep at %d thread%s: %d sizes up to %.0f MB", t, t > 1 ? "s" : "", n,
            max_ws / 1048576);
        if (t == 1)
            for (int i = 0; i < 3 && !rc; i++) { /* read-only, inside one core's L2 */
                tc.n = (size_t)(c->l2_core * (i + 1) / 8 / 4) / 16 * 16;
                tc.threads = 1;
                xs_cal_kernel k = {"read", 4.0 * (double)tc.n, (double)tc.n, run_read, &tc, NULL};
                xs_meas m = row("read", "-", 1, (double)tc.n);
                rc = time_row(c, &k, &m);
            }
    }
    free(tc.a);
    free(tc.b);
    free(tc.c);
    return rc;
}

/* The effective last-level cache: from the sweep at N threads, where the
 * bandwidth falls halfway from the LLC plateau (the median of the points
 * past twice the L2s) to the DRAM plateau (the two largest sets),
 * interpolated in log size. The L2s' size when there is no such level. */
static double find_llc(const cal *c)
{
    double ws[64], bwv[64], plateau[64];
    int n = 0, np = 0;
    double l2t = c->l2_core * c->N;
    for (size_t i = 0; i < c->ms.n && n < 64; i++) {
        const xs_meas *m = &c->ms.v[i];
        if (!strcmp(m->bench, "triad") && m->threads == c->N) {
            ws[n] = working_set(m);
            bwv[n++] = m->bytes / m->r.median_s;
        }
    }
    if (n < 4)
        return l2t;
    double dram = 0.5 * (bwv[n - 1] + bwv[n - 2]);
    for (int i = 0; i < n - 2; i++)
        if (ws[i] > 1.9 * l2t)
            plateau[np++] = bwv[i];
    if (np == 0)
        return l2t;
    qsort(plateau, (size_t)np, sizeof *plateau, by_value);
    double llc = plateau[np / 2], mid = 0.5 * (llc + dram);
    if (llc < 1.25 * dram)
        return l2t; /* no level between L2 and DRAM */
    for (int i = n - 3; i >= 0; i--)
        if (bwv[i] > mid) {
            double f = (bwv[i] - mid) / fmax(bwv[i] - bwv[i + 1], 1e-9);
            f = fmin(1, fmax(0, f));
            return exp(log(ws[i]) + f * (log(ws[i + 1]) - log(ws[i])));
        }
    return l2t;
}

static double second_largest_ws(const cal *c, int t)
{
    double a = 0, b = 0;
    for (size_t i = 0; i < c->ms.n; i++) {
        const xs_meas *m = &c->ms.v[i];
        if (strcmp(m->bench, "triad") || m->threads != t)
            continue;
        double w = working_set(m);
        if (w > a) {
            b = a;
            a = w;
        } else if (w > b) {
            b = w;
        }
    }
    return b;
}

static int fit_bandwidths(cal *c, bw_result *bw)
{
    bw->llc_bytes = find_llc(c);
    int rc =
        fit_level(c, "read", 1, 0, INFINITY, "L2 read bandwidth, 1 thread", 0, &bw->l2_read);
    for (int ti = 0; ti < bw->nthreads && !rc; ti++) {
        int t = bw->threads[ti];
        double l2t = c->l2_core * t;
        char what[64];
        snprintf(what, sizeof what, "L2 bandwidth, %d threads", t);
        rc = fit_level(c, "triad", t, 0, 0.51 * l2t, what, 0, &bw->l2[ti]);
        if (rc)
            break;
        snprintf(what, sizeof what, "DRAM bandwidth, %d threads", t);
        /* past the LLC: from 2.9 x its size, or at least the two largest.
         * Through the origin: a call there moves hundreds of MB (ms), where
         * the per-call cost (us) is below the timing noise, and a free
         * intercept over two or three close sizes turned that noise into
         * the slope (a quick calibration on a busy host once read 1822
         * GB/s of DRAM bandwidth on two cores and refused its own file) */
        double from = fmin(2.9 * bw->llc_bytes, second_largest_ws(c, t));
        rc = fit_level(c, "triad", t, from, INFINITY, what, 1, &bw->dram[ti]);
        if (rc)
            break;
        snprintf(what, sizeof what, "LLC bandwidth, %d threads", t);
        if (bw->llc_bytes > 8 * l2t)
            rc = fit_level(c, "triad", t, 1.9 * l2t, 0.55 * bw->llc_bytes, what, 0, &bw->llc[ti]);
        else /* no cache level between L2 and DRAM */
            bw->llc[ti] = bw->dram[ti];
    }
    return rc;
}

/* ---- GEMM ---------------------------------------------------------------------- */

/* m, n, k, ta, tb: shapes unlike any Transformer layer's (odd sizes, skinny
 * and square, all four transpositions), none of them in the check. */
static const long long GEMM_FIT[][5] = {
    {96, 352, 384, 0, 1},     {1000, 96, 40, 1, 0},   {320, 1200, 777, 0, 0},
    {1536, 352, 1536, 1, 1},  {96, 160, 64, 0, 1},    {96, 96, 2048, 0, 0},
    {1000, 1200, 384, 0, 1},  {160, 96, 96, 0, 0},    {320, 64, 1536, 1, 0},
    {1536, 1200, 40, 0, 0},   {64, 64, 32, 1, 0},     {200, 700, 200, 1, 1},
    {64, 2000, 96, 0, 1},     {2000, 64, 640, 1, 0},  {704, 704, 704, 0, 0},
    {200, 48, 160, 1, 0},     {1536, 96, 777, 0, 0},  {96, 1200, 1536, 1, 0},
    {1000, 352, 2048, 0, 1},  {48, 200, 80, 0, 0},    {320, 352, 96, 1, 1},
    {2000, 700, 200, 0, 0},   {64, 64, 384, 1, 0},    {700, 2000, 320, 0, 1},
    {160, 160, 4000, 0, 0},   {1200, 1000, 1000, 1, 0}, {40, 1536, 1536, 0, 0},
    {1536, 40, 1536, 0, 1},   {448, 448, 448, 1, 1},  {224, 224, 96, 0, 1},
};
#define GEMM_FIT_COUNT (sizeof GEMM_FIT / sizeof GEMM_FIT[0])

int xs_cpu_cal_gemm_shape_used(long long m, long long n, long long k)
{
    for (size_t i = 0; i < GEMM_FIT_COUNT; i++)
        if (GEMM_FIT[i][0] == m && GEMM_FIT[i][1] == n && GEMM_FIT[i][2] == k)
            return 1;
    return 0;
}

static int gemm_sweep(cal *c, int bf16)
{
    size_t count = c->o->quick ? GEMM_FIT_COUNT / 2 : GEMM_FIT_COUNT;
    for (size_t i = 0; i < count; i++) {
        const long long *s = GEMM_FIT[i];
        /* every shape on all cores, every third on one core too */
        for (int pass = 0; pass < (c->N > 1 && i % 3 == 0 ? 2 : 1); pass++) {
            xs_runner r;
            if (xs_runner_gemm(&r, bf16, s[0], s[1], s[2], (int)s[3], (int)s[4],
                               pass ? 1 : c->N))
                return xs_error_set(c->err, XS_ENOMEM, "calibrate: out of memory for a GEMM");
            int rc = measure(c, &r, "gemm", bf16 ? "bf16" : "fp32", 0);
            if (!rc && !pass) /* and with its data in cache */
                rc = measure(c, &r, "gemm", bf16 ? "bf16-hot" : "fp32-hot", 1);
            xs_runner_free(&r);
            if (rc)
                return rc;
        }
    }
    say(c, "%s GEMM sweep: %zu shapes", bf16 ? "bf16" : "fp32", count);
    return XS_OK;
}

/* The features of a GEMM measurement in the joint fit:
 * call_bf16 call_fp32 ksteps_bf16 ksteps_fp32 blocks_bf16 blocks_fp32
 * contig_bytes/threads transposed_bytes/threads cold_bytes_bf16/threads
 * cold_bytes_fp32/threads. Per core: waves of 32 x 32 blocks over the
 * threads, times K steps of 32 (the bf16 kernel pads K to whole steps; the
 * fp32 one loops over K exactly). Cold runs (name without "-hot") had L2
 * swept and C flushed first: their A + B + C bytes come from beyond L2. */
#define GEMM_P 10
static void gemm_features(const xs_meas *m, const char *isa, double *x)
{
    int cold = !strstr(m->name, "-hot"), direct;
    xs_cpu_gemm_kernel kern = xs_cpu_gemm_kernel_for(isa, !strncmp(m->name, "bf16", 4));
    /* bf16 on a set without a bf16 unit runs the fp32 kernel: its rows
     * share the fp32 parameters, their packing reads 2 bytes an element */
    int bf16 = kern == XS_CPU_GEMM_BF16_DOT || kern == XS_CPU_GEMM_BF16_AMX;
    double tiles = ceil((double)m->m / 32) * ceil((double)m->n / 32);
    double waves = ceil(tiles / m->threads);
    double steps = bf16 ? ceil((double)m->k / 32) : (double)m->k / 32;
    double contig, transposed;
    xs_cpu_gemm_pack_bytes(kern, m->m, m->n, m->k, m->ta, m->tb, &contig, &transposed, &direct);
    memset(x, 0, GEMM_P * sizeof *x);
    x[bf16 ? 0 : 1] = 1;
    x[bf16 ? 2 : 3] = waves * steps;
    x[bf16 ? 4 : 5] = waves;
    x[6] = contig / m->threads;
    x[7] = transposed / m->threads;
    x[bf16 ? 8 : 9] = cold ? m->bytes / m->threads : 0;
}

/* The GEMMs on all N cores: the parameters describe the N-core kernel
 * (packing by one core and reading by another costs cache-line transfers
 * that a one-core run does not have; those runs stay in the CSV). */
static int is_fit_gemm(const cal *c, const xs_meas *m)
{
    return !strcmp(m->bench, "gemm") && m->threads == c->N;
}

static int fit_gemm(cal *c, const char *isa, xs_fit *f)
{
    size_t n = 0;
    for (size_t i = 0; i < c->ms.n; i++)
        n += is_fit_gemm(c, &c->ms.v[i]);
    double *X = malloc((n + 1) * GEMM_P * sizeof *X), *y = malloc((n + 1) * sizeof *y);
    if (!X || !y) {
        free(X);
        free(y);
        return xs_error_set(c->err, XS_ENOMEM, "calibrate: out of memory fitting GEMMs");
    }
    size_t j = 0;
    for (size_t i = 0; i < c->ms.n; i++)
        if (is_fit_gemm(c, &c->ms.v[i])) {
            gemm_features(&c->ms.v[i], isa, X + j * GEMM_P);
            y[j++] = c->ms.v[i].r.median_s;
        }
    int rc = xs_fit_nonneg(X, y, (int)n, GEMM_P, "GEMM", f, c->err);
    free(X);
    free(y);
    return rc;
}

/* ---- the other kernels ------------------------------------------------------------ */

/* Row lengths the kernels are fitted at (the check uses others). */
static long long fit_width(int fn, int which)
{
    switch (fn) {
    case XS_FN_XENT: return which ? 1500 : 500;
    case XS_FN_COPY: return which ? 384 : 96;
    default: return which ? 400 : 96;
    }
}

/* Each kernel at three sizes beyond L2 (cold: L2 swept and outputs flushed
 * before each call, as in a training step) and two small ones with their
 * data left in L2 (hot), over one or two row lengths. */
static int kernel_sweep(cal *c, int fn)
{
    static const double frac[] = {1.0 / 512, 1.0 / 64, 1.0 / 4, 1.0 / 2, 1.0};
    static const int hot[] = {1, 1, 0, 0, 0};
    int widths = c->o->quick ? 1 : 2;
    for (int w = 0; w < widths; w++)
        for (int s = 0; s < 5; s++) {
            long long width = fit_width(fn, w);
            xs_runner probe;
            if (xs_runner_kernel(&probe, fn, 1, width, c->N))
                return xs_error_set(c->err, XS_ENOMEM, "calibrate: cannot set up kernel %s",
                                    xs_cpu_fn_name(fn));
            double bpe = probe.bytes / probe.elems;
            xs_runner_free(&probe);
            /* hot: a fraction of one core's L2; cold: of all the cores' L2 */
            double bytes = frac[s] * c->l2_core * (hot[s] ? 1 : c->N);
            long long rows = (long long)(bytes / bpe / (double)width);
            if (rows < 1)
                rows = 1;
            xs_runner r;
            if (xs_runner_kernel(&r, fn, rows, width, c->N))
                return xs_error_set(c->err, XS_ENOMEM, "calibrate: out of memory for %s",
                                    xs_cpu_fn_name(fn));
            char name[32];
            snprintf(name, sizeof name, "%s%s", xs_cpu_fn_name(fn), hot[s] ? "-hot" : "");
            int rc = measure(c, &r, "kernel", name, hot[s]);
            xs_runner_free(&r);
            if (rc)
                return rc;
        }
    return XS_OK;
}

/* time = overhead + elements x (hot or cold time per element) / threads */
static int fit_kernel(cal *c, int fn, xs_fit *f)
{
    double X[3 * 16], y[16];
    int n = 0;
    const char *name = xs_cpu_fn_name(fn);
    size_t len = strlen(name);
    for (size_t i = 0; i < c->ms.n && n < 16; i++) {
        const xs_meas *m = &c->ms.v[i];
        if (strcmp(m->bench, "kernel") || strncmp(m->name, name, len) ||
            (m->name[len] && strcmp(m->name + len, "-hot")))
            continue;
        int hot = m->name[len] != '\0';
        X[3 * n] = 1;
        X[3 * n + 1] = hot ? 0 : m->elems / m->threads;
        X[3 * n + 2] = hot ? m->elems / m->threads : 0;
        y[n++] = m->r.median_s;
    }
    return xs_fit_nonneg(X, y, n, 3, name, f, c->err);
}

/* ---- the device file ---------------------------------------------------------- */

static void add_fit(cJSON *fits, const char *name, const xs_fit *f)
{
    cJSON *o = cJSON_AddObjectToObject(fits, name);
    cJSON_AddNumberToObject(o, "points", f->n);
    cJSON_AddNumberToObject(o, "rms_residual_pct", round(f->rms_rel_pct * 100) / 100);
    cJSON_AddNumberToObject(o, "max_residual_pct", round(f->max_rel_pct * 100) / 100);
}

typedef struct {
    double peak_fma, peak_amx, fork_s;
    bw_result bw;
    xs_fit gemm;
    xs_fit kern[XS_FN_COUNT];
    const xs_cpu_features *f;
    double seconds;
    xs_cpu_noise noise_before, noise_after; /* the reference kernel around the run */
    double run_spread;                      /* the measurements' median IQR / median */
} results;

static const char *isa_name(const xs_cpu_features *f)
{
    return xs_cpu_isa_name(f->isa);
}

/* The core clock, MHz, from the FMA peak and the kernel set's FLOPs per
 * cycle; for the portable set (no vector unit assumed) the kernel's rated
 * maximum (sysfs cpufreq), else one multiply-add a cycle. *how says which. */
static double derive_clock_mhz(const xs_cpu_features *f, double peak_core, const char **how)
{
    double per_cycle = xs_cpu_isa_fma_flop_per_cycle(f->isa);
    if (per_cycle > 0) {
        *how = "FMA peak per core / FLOPs per cycle";
        return peak_core / per_cycle / 1e6;
    }
    FILE *fp = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
    double khz = 0;
    if (fp) {
        if (fscanf(fp, "%lf", &khz) != 1)
            khz = 0;
        fclose(fp);
    }
    if (khz > 0) {
        *how = "cpufreq cpuinfo_max_freq (portable set: no FLOPs per cycle known)";
        return khz / 1e3;
    }
    *how = "the portable peak per core / 2 FLOPs a cycle (no cpufreq)";
    return peak_core / 2 / 1e6;
}

/* The fitted model as a device: every number the CPU schema stores, rounded
 * to what the fits can tell apart. */
static void fill_device(const cal *c, const results *R, const char *id, xs_device *d)
{
    const xs_cpu_features *f = R->f;
    int N = c->N, ti_1 = 0, ti_n = R->bw.nthreads - 1;
    const bw_result *bw = &R->bw;
    const char *clock_how;
    double clock_mhz = derive_clock_mhz(f, R->peak_fma / N, &clock_how);
    /* without AMX the bf16 kernels run VDPBF16PS: twice the FMA rate
     * (datasheets.md section 3, marked unverified there); without either,
     * bf16 runs on the fp32 kernel and has no engine of its own (0: the
     * model computes bf16 GEMMs on the fp32 engine, as the kernels do) */
    double peak_bf16 = R->peak_amx > 0 ? R->peak_amx : f->avx512_bf16 ? 2 * R->peak_fma : 0;
    int emulated = !xs_cpu_isa_has_bf16_unit(f->isa);
    const xs_fit *g = &R->gemm;
    double epilogue_s = 32.0 * 32 * 4 / bw->l2_read.bw; /* the C store the GEMM model adds */
    double eff[2], eff_sd[2], block_ns[2];
    for (int b = 0; b < 2; b++) { /* 0: bf16, 1: fp32 */
        double peak_core = (b ? R->peak_fma : peak_bf16) / N;
        double ks = g->coef[2 + b];
        eff[b] = ks > 0 && peak_core > 0 ? fmin(1, KSTEP_FLOPS / ks / peak_core) : 1;
        eff_sd[b] = ks > 0 ? eff[b] * g->sd[2 + b] / ks : 0;
        block_ns[b] = fmax(0, (g->coef[4 + b] - epilogue_s) * 1e9);
    }
    /* emulated bf16: one kernel, fitted once (the bf16 columns are empty);
     * the bf16 fields repeat the fp32 ones */
    int b16 = emulated ? 1 : 0;
    /* a dropped packing feature means packing was too cheap to see */
    double pack = g->coef[6] > 0 ? 1 / g->coef[6] / 1e9 : 1000;
    double pack_s = g->coef[7] > 0 ? 1 / g->coef[7] / 1e9 : 1000;

    memset(d, 0, sizeof *d);
    d->backend = xs_backend_find("cpu", &d->cls);
    snprintf(d->id, sizeof d->id, "%.63s", id); /* length checked before measuring */
    snprintf(d->name, sizeof d->name, "%s, %d core%s", f->model[0] ? f->model : "CPU", N,
             N > 1 ? "s" : "");
    xs_cpu_params *p = xs_cpu_of(d);
    p->cores = N;
    p->clock_mhz = xs_fit_round(clock_mhz, 4);
    d->peak_tflops[XS_FP32] = xs_fit_round(R->peak_fma / 1e12, 4);
    d->peak_tflops[XS_BF16] = xs_fit_round(peak_bf16 / 1e12, 4);
    snprintf(p->isa, sizeof p->isa, "%s", isa_name(f));
    snprintf(p->cpu_model, sizeof p->cpu_model, "%s", f->model[0] ? f->model : "unknown");
    snprintf(p->cpu_signature, sizeof p->cpu_signature, "%s", f->signature);
    d->mem_capacity_gb = xs_fit_round(phys_mem_bytes() / 1e9, 3);
    p->l2_kb_per_core = c->l2_core / 1024;
    p->llc_mb = xs_fit_round(bw->llc_bytes / 1048576, 3);
    p->bw_l2_core = xs_fit_round(bw->l2[ti_1].bw / 1e9, 4);
    p->bw_l2_core_sd = xs_fit_round(bw->l2[ti_1].bw_sd / 1e9, 2);
    p->bw_l2_read_core = xs_fit_round(bw->l2_read.bw / 1e9, 4);
    p->bw_llc_core = xs_fit_round(bw->llc[ti_1].bw / 1e9, 4);
    p->bw_llc_core_sd = xs_fit_round(bw->llc[ti_1].bw_sd / 1e9, 2);
    p->bw_dram_core = xs_fit_round(bw->dram[ti_1].bw / 1e9, 4);
    p->bw_dram_core_sd = xs_fit_round(bw->dram[ti_1].bw_sd / 1e9, 2);
    d->mem_bw_gbs = xs_fit_round(bw->dram[ti_n].bw / 1e9, 4);
    p->bw_dram_all_sd = xs_fit_round(bw->dram[ti_n].bw_sd / 1e9, 2);
    /* not measurable here: the cores' share of a Xeon Platinum 8480+ */
    d->tdp_w = xs_fit_round(350.0 / 56 * N, 3);
    d->idle_w = xs_fit_round(0.3 * 350.0 / 56 * N, 3);
    d->power_memory_frac = 0.5;
    d->price_usd_per_hour = xs_fit_round(0.089 * N, 3);
    snprintf(d->price_provider, sizeof d->price_provider,
             "AWS c7i (1 physical core = 2 vCPU), us-east-1");
    snprintf(d->price_as_of, sizeof d->price_as_of, "2026-09");
    /* the blocking of kernels/cpu/gemm_bf16.c and gemm_f32.c */
    snprintf(p->tiles_text, sizeof p->tiles_text, "32x32/2");
    /* AMX and VDPBF16PS consume 32 bf16 of K a step; the fp32 kernel one
     * element (of bf16 when it emulates: 2 bytes) */
    p->bf16_blocks.k_bytes = emulated ? 2 : 64;
    p->fp32_blocks.k_bytes = 4;
    p->gemm_eff_bf16 = xs_fit_round(eff[b16], 4);
    p->gemm_eff_bf16_sd = xs_fit_round(eff_sd[b16], 2);
    p->gemm_eff_fp32 = xs_fit_round(eff[1], 4);
    p->gemm_eff_fp32_sd = xs_fit_round(eff_sd[1], 2);
    p->block_ns_bf16 = xs_fit_round(block_ns[b16], 4);
    p->block_ns_fp32 = xs_fit_round(block_ns[1], 4);
    p->gemm_call_us_bf16 = xs_fit_round(g->coef[b16] * 1e6, 4);
    p->gemm_call_us_fp32 = xs_fit_round(g->coef[1] * 1e6, 4);
    p->pack_gbs_core = xs_fit_round(pack, 4);
    p->pack_transposed_gbs_core = xs_fit_round(pack_s, 4);
    p->cold_gbs_core_bf16 =
        xs_fit_round(g->coef[8 + b16] > 0 ? 1 / g->coef[8 + b16] / 1e9 : 1000, 4);
    p->cold_gbs_core_fp32 = xs_fit_round(g->coef[9] > 0 ? 1 / g->coef[9] / 1e9 : 1000, 4);
    p->fork_us = xs_fit_round(R->fork_s * 1e6, 3);
    for (int fn = 0; fn < XS_FN_COUNT; fn++) {
        const xs_fit *kf = &R->kern[fn];
        p->k[fn].ns_per_elem = xs_fit_round(fmax(kf->coef[1] * 1e9, 1e-4), 4);
        p->k[fn].ns_per_elem_sd = xs_fit_round(kf->sd[1] * 1e9, 2);
        p->k[fn].ns_per_elem_hot = xs_fit_round(fmax(kf->coef[2] * 1e9, 1e-4), 4);
        p->k[fn].overhead_us = xs_fit_round(kf->coef[0] * 1e6, 3);
    }
}

/* Put a string at a dotted path of doc ("memory.source"). */
static void note(cJSON *doc, const char *obj, const char *key, const char *text)
{
    cJSON *o = obj ? cJSON_GetObjectItemCaseSensitive(doc, obj) : doc;
    if (obj && !o)
        o = cJSON_AddObjectToObject(doc, obj);
    cJSON_AddStringToObject(o, key, text);
}

/* The file's text: where each group of numbers comes from, and the
 * calibration's provenance (host, date, command, kernel versions, fits). */
static cJSON *notes_json(const cal *c, const results *R, const char *meas_path)
{
    const xs_cpu_features *f = R->f;
    const bw_result *bw = &R->bw;
    char date[16], host[128] = "unknown";
    time_t now = time(NULL);
    struct tm utc;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime_r(&now, &utc));
    gethostname(host, sizeof host - 1);

    cJSON *d = cJSON_CreateObject();
    note(d, NULL, "note", "written by xpusim calibrate --backend cpu; every model "
                          "number below was measured on this host and fitted by "
                          "least squares (see calibration)");
    const char *clock_how;
    derive_clock_mhz(f, R->peak_fma / c->N, &clock_how);
    char text[768];
    snprintf(text, sizeof text,
             "measured with the %s kernel set: in-core peaks from chains of independent %s%s "
             "on registers (kernels/cpu/peak.c), all cores; clock_mhz = %s (%g FLOP/cycle: "
             "kernels/cpu/cpu_features.c cites the sources)%s",
             isa_name(f), xs_krn_peak_fma_name(), f->amx_bf16 ? " and AMX TDPBF16PS" : "",
             clock_how, xs_cpu_isa_fma_flop_per_cycle(f->isa),
             xs_cpu_isa_has_bf16_unit(f->isa)
                 ? ""
                 : "; no bf16 unit: peak_bf16_tflops 0, bf16 GEMMs are converted to fp32 while "
                   "packed and run on the fp32 kernel, so the model computes them on the fp32 "
                   "engine");
    note(d, "compute", "source", text);
    note(d, "memory", "source",
         "measured: STREAM triad (16 bytes an element with the write-"
         "allocate read of a; STREAM itself counts 12) swept over working "
         "sets from inside L2 to past the last-level cache at 1..N threads; "
         "each level's bandwidth is the inverse slope of time against bytes "
         "(GSL weighted least squares); llc_mb is where the curve falls "
         "halfway from the LLC plateau to the DRAM one; bw_l2_read from a read-only sum inside "
         "one core's L2; l2_kb_per_core from sysconf");
    note(d, "power", "source",
         "not measurable here: the cores' share of a Xeon Platinum 8480+ "
         "(350 W for 56 cores, shared/reference/datasheets.md section 3)");
    note(d, "power", "note", "idle_w (30% of tdp_w) and memory_frac are stated "
                             "defaults; edit them for a metered host");
    note(d, "price", "source",
         "shared/reference/datasheets.md section 3 [G1]: c7i.large about "
         "$0.089/h per physical core (marked unverified there), times cores");
    snprintf(text, sizeof text,
             "the blocking of kernels/cpu/gemm_bf16.c and gemm_f32.c: 32 x 32 C blocks spread "
             "over the cores (fp32 micro-kernel: %s; bf16: %s); the AMX and AVX512-BF16 kernels "
             "consume K 32 elements (64 bytes) a step, padding K, the fp32 one K element by "
             "element%s",
             xs_krn_gemm_f32_path(), xs_krn_gemm_bf16_path(),
             xs_cpu_isa_has_bf16_unit(f->isa) ? ""
                                              : " (k_bytes_bf16 2: one bf16 element a step)");
    note(d, "gemm", "source", text);
    note(d, "model", "source",
         "fitted: one weighted least-squares fit (GSL, relative residuals, "
         "non-negative) of every fp32 and bf16 GEMM of the sweep: time = "
         "call + K steps per core x step + blocks per core x block + packed "
         "bytes per core / pack rate (contiguous and transposed); efficiency = "
         "32x32x32 step FLOPs / step time / per-core peak; block_ns is the "
         "block cost less the C store the GEMM model adds; fork_us measured");
    note(d, "kernels", "source",
         "fitted per kernel: time = overhead + elements x ns_per_elem / "
         "threads, over three sizes beyond L2 (L2 swept and outputs flushed "
         "before each call: cold, ns_per_elem) and two small ones left in L2 "
         "(ns_per_elem_hot), one or two row lengths, weighted least squares "
         "(GSL)");
    cJSON *ca = cJSON_AddObjectToObject(d, "calibration");
    cJSON_AddStringToObject(ca, "date", date);
    cJSON_AddStringToObject(ca, "host", host);
    cJSON_AddStringToObject(ca, "command", c->o->command ? c->o->command : "xpusim calibrate");
    cJSON_AddStringToObject(ca, "xpusim_version", XS_VERSION);
    cJSON_AddBoolToObject(ca, "quick", c->o->quick);
    cJSON_AddNumberToObject(ca, "seconds", round(R->seconds));
    cJSON_AddStringToObject(ca, "measurements", meas_path);
    cJSON_AddNumberToObject(ca, "measurement_rows", (double)c->ms.n);
    /* how quiet the host was: cpu_noise.h's probe around the run */
    cJSON *hn = cJSON_AddObjectToObject(ca, "host_noise");
    cJSON_AddNumberToObject(hn, "reference_gflops_thread_before",
                            round(R->noise_before.gflops_thread * 10) / 10);
    cJSON_AddNumberToObject(hn, "reference_gflops_thread_after",
                            round(R->noise_after.gflops_thread * 10) / 10);
    cJSON_AddNumberToObject(hn, "reference_spread_pct",
                            round(1000 * fmax(R->noise_before.spread, R->noise_after.spread)) / 10);
    cJSON_AddNumberToObject(hn, "reference_scaling",
                            round(100 * fmin(R->noise_before.scaling, R->noise_after.scaling)) /
                                100);
    cJSON_AddNumberToObject(hn, "measurements_median_spread_pct", round(1000 * R->run_spread) / 10);
    if (R->noise_before.load1 >= 0)
        cJSON_AddNumberToObject(hn, "load_average_before", R->noise_before.load1);
    cJSON *kv = cJSON_AddObjectToObject(ca, "kernel_versions");
    cJSON_AddStringToObject(kv, "gemm_bf16", xs_krn_gemm_bf16_path());
    cJSON_AddStringToObject(kv, "kernel_set", isa_name(f));
    cJSON_AddStringToObject(kv, "gemm_fp32", xs_krn_gemm_f32_path());
    cJSON_AddStringToObject(kv, "layer_ops", xs_krn_layer_ops_path());
    snprintf(text, sizeof text, "%s fused",
             f->avx512 ? "avx512" : f->avx2 ? "avx2" : f->neon ? "neon" : "portable");
    cJSON_AddStringToObject(kv, "optimizers", text);
    cJSON *bt = cJSON_AddArrayToObject(ca, "bandwidth_gbs_by_threads");
    for (int ti = 0; ti < bw->nthreads; ti++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "threads", bw->threads[ti]);
        cJSON_AddNumberToObject(o, "l2", xs_fit_round(bw->l2[ti].bw / 1e9, 4));
        cJSON_AddNumberToObject(o, "llc", xs_fit_round(bw->llc[ti].bw / 1e9, 4));
        cJSON_AddNumberToObject(o, "dram", xs_fit_round(bw->dram[ti].bw / 1e9, 4));
        cJSON_AddItemToArray(bt, o);
    }
    cJSON *fits = cJSON_AddObjectToObject(ca, "fits");
    for (int ti = 0; ti < bw->nthreads; ti++) {
        char key[48];
        snprintf(key, sizeof key, "triad_l2_t%d", bw->threads[ti]);
        add_fit(fits, key, &bw->l2[ti].fit);
        snprintf(key, sizeof key, "triad_dram_t%d", bw->threads[ti]);
        add_fit(fits, key, &bw->dram[ti].fit);
        if (bw->llc[ti].points) {
            snprintf(key, sizeof key, "triad_llc_t%d", bw->threads[ti]);
            add_fit(fits, key, &bw->llc[ti].fit);
        }
    }
    add_fit(fits, "read_l2_t1", &bw->l2_read.fit);
    add_fit(fits, "gemm", &R->gemm);
    for (int fn = 0; fn < XS_FN_COUNT; fn++) {
        char key[48];
        snprintf(key, sizeof key, "kernel_%s", xs_cpu_fn_name(fn));
        add_fit(fits, key, &R->kern[fn]);
    }
    return d;
}

/* ---- the whole calibration -------------------------------------------------------- */

static int run_all(cal *c, results *R)
{
    int rc;
    R->f = xs_cpu_features_get();
    fork_ctx fc = {c->N};
    xs_cal_kernel kf = {"fork", 0, 0, run_fork, &fc, NULL};
    xs_meas m = row("fork", "-", c->N, 0);
    if ((rc = time_row(c, &kf, &m)))
        return rc;
    R->fork_s = m.r.median_s;
    R->peak_fma = peak(c, 0);
    if (R->peak_fma <= 0)
        return xs_error_set(c->err, XS_EUNSUPPORTED, "calibrate: the %s peak measured %.3g FLOP/s",
                            xs_krn_peak_fma_name(), R->peak_fma);
    say(c, "fork/join %.2f us, FMA peak %.0f GFLOP/s on %d cores", R->fork_s * 1e6,
        R->peak_fma / 1e9, c->N);
    if ((rc = bandwidth(c, &R->bw)) || (rc = fit_bandwidths(c, &R->bw)))
        return rc;
    say(c, "bandwidth per core: L2 %.0f, LLC %.0f, DRAM %.1f GB/s; DRAM all cores %.1f GB/s; "
           "LLC %.0f MB",
        R->bw.l2[0].bw / 1e9, R->bw.llc[0].bw / 1e9, R->bw.dram[0].bw / 1e9,
        R->bw.dram[R->bw.nthreads - 1].bw / 1e9, R->bw.llc_bytes / 1048576);
    if ((rc = gemm_sweep(c, 0)))
        return rc;
    for (int fn = 0; fn < XS_FN_COUNT; fn++)
        if ((rc = kernel_sweep(c, fn)) || (rc = fit_kernel(c, fn, &R->kern[fn])))
            return rc;
    say(c, "%d kernels fitted", XS_FN_COUNT);
    R->peak_amx = R->f->amx_bf16 ? peak(c, 1) : 0;
    if (R->peak_amx < 0)
        return XS_ENOMEM;
    if ((rc = gemm_sweep(c, 1)))
        return rc;
    if ((rc = fit_gemm(c, isa_name(R->f), &R->gemm)))
        return rc;
    say(c, "GEMM fit over %d calls: rms residual %.1f%%, max %.1f%%", R->gemm.n,
        R->gemm.rms_rel_pct, R->gemm.max_rel_pct);
    return XS_OK;
}

int xs_cpu_host_check(xs_error *err)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    if (f->isa_error[0])
        return xs_error_set(err, xs_cpu_isa_parse(getenv("XS_CPU_ISA")) < 0 ? XS_EARG : XS_ENOHW,
                            "--backend cpu: %s", f->isa_error);
    return XS_OK;
}

const char *xs_cpu_kernel_set(void)
{
    return isa_name(xs_cpu_features_get());
}

int xs_cpu_same_host(const xs_device *dev, char *why, size_t size)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    if (strcmp(xs_cpu_of(dev)->cpu_model, f->model) != 0) {
        snprintf(why, size, "device %s was calibrated on \"%s\", this host is \"%s\"", dev->id,
                 xs_cpu_of(dev)->cpu_model, f->model);
        return 0;
    }
    /* one brand string can name several generations (cloud VMs) */
    if (xs_cpu_of(dev)->cpu_signature[0] && f->signature[0] &&
        strcmp(xs_cpu_of(dev)->cpu_signature, f->signature) != 0) {
        snprintf(why, size, "device %s was calibrated on CPU signature \"%s\", this host's is \"%s\"", dev->id,
                 xs_cpu_of(dev)->cpu_signature, f->signature);
        return 0;
    }
    /* the same CPU running another kernel set (XS_CPU_ISA, or a build
     * that lacks one) is another machine to the model */
    if (!f->isa_error[0] && strcmp(xs_cpu_of(dev)->isa, isa_name(f)) != 0) {
        snprintf(why, size,
                 "device %s was calibrated with the %s kernel set, this run uses %s "
                 "(XS_CPU_ISA=%s runs that set here)",
                 dev->id, xs_cpu_of(dev)->isa, isa_name(f), xs_cpu_of(dev)->isa);
        return 0;
    }
    return 1;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median IQR / median of the run's measurements; -1 when none. */
static double median_spread(const xs_meas_list *ms)
{
    if (!ms->n)
        return -1;
    double *v = malloc(ms->n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < ms->n; i++)
        v[i] = ms->v[i].r.rel_iqr;
    qsort(v, ms->n, sizeof *v, by_double);
    double m = ms->n % 2 ? v[ms->n / 2] : 0.5 * (v[ms->n / 2 - 1] + v[ms->n / 2]);
    free(v);
    return m;
}

/* The fits and the thread sweeps, from a clean slate, into R, dev and thr. */
static int calibrate_once(cal *c, const char *id, results *R, xs_device *dev, xs_thr_cal *thr)
{
    xs_meas_free(&c->ms);
    memset(R, 0, sizeof *R);
    int rc = run_all(c, R);
    if (!rc) { /* the thread sweeps check the model fitted so far */
        fill_device(c, R, id, dev);
        /* its tile list parsed, as a load would, for the GEMMs of the check */
        rc = xs_cpu_check_fields(dev, c->o->out, c->err);
        if (!rc)
            rc = xs_thr_calibrate(dev, c->o->quick, &c->ms, c->o->log, thr, c->err);
    }
    return rc;
}

/* Calibrate on a quiet host: probed quiet before, steady after (the
 * reference kernel unmoved, the measurements repeating); a run the host
 * disturbed is done once more, and one disturbed again is refused. */
static int calibrate_quiet(cal *c, const char *id, results *R, xs_device *dev, xs_thr_cal *thr)
{
    static const char *outcome = "no device file was written";
    char why[512] = "";
    for (int attempt = 0; attempt < 2; attempt++) {
        xs_cpu_noise before, after;
        int rc = xs_cpu_noise_wait(c->N, "calibrate", outcome, c->o->log, &before, c->err);
        if (!rc)
            rc = calibrate_once(c, id, R, dev, thr);
        if (rc)
            return rc;
        xs_cpu_noise_probe(c->N, &after);
        double spread = median_spread(&c->ms);
        R->noise_before = before;
        R->noise_after = after;
        R->run_spread = spread;
        if (xs_cpu_noise_steady(&before, &after, spread, why, sizeof why)) {
            say(c, "host steady: reference %.1f then %.1f GFLOP/s a thread, measurements' "
                   "median spread %.1f%%",
                before.gflops_thread, after.gflops_thread, 100 * spread);
            return XS_OK;
        }
        say(c, "the host was disturbed during the run: %s%s", why,
            attempt ? "" : "; calibrating once more");
    }
    return xs_cpu_noise_refuse("calibrate", c->N, why, outcome, c->err);
}

int xs_cpu_calibrate(const xs_cal_run_opts *o, xs_error *err)
{
    int hrc = xs_cpu_host_check(err);
    if (hrc)
        return hrc;
    cal c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.err = err;
    c.t0 = xs_cal_now();
    const xs_cpu_features *f = xs_cpu_features_get();
    c.N = o->threads > 0 ? o->threads : f->cores;
    if (c.N < 1 || c.N > f->cores)
        return xs_error_set(err, XS_EARG, "calibrate: --threads must be in 1..%d, got %d",
                            f->cores, o->threads);
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    c.l2_core = l2 > 0 ? (double)l2 : 1048576.0;
    c.h = xs_cal_default_opts();
    c.h.time_cap_s = o->quick ? 0.12 : 0.5;
    c.h.max_reps = o->quick ? 40 : 200;
    char meas_path[4096], id[256];
    if (o->measurements)
        snprintf(meas_path, sizeof meas_path, "%s", o->measurements);
    else
        xs_cal_measurements_path(o->out, meas_path, sizeof meas_path);
    int rc = xs_cal_device_id(o->out, id, sizeof id, err);
    if (rc)
        return rc;
    say(&c, "%s, %d cores, %s kernels, %s run", f->model, c.N, isa_name(f),
        o->quick ? "quick" : "full");
    results R;
    xs_device dev;
    xs_thr_cal thr;
    rc = calibrate_quiet(&c, id, &R, &dev, &thr);
    R.seconds = xs_cal_now() - c.t0;
    if (c.ms.n) { /* kept even when a fit failed, to see why */
        xs_error werr;
        int wrc = xs_meas_write_csv(&c.ms, meas_path, rc ? &werr : err);
        if (!rc)
            rc = wrc;
        else if (!wrc && o->log)
            fprintf(o->log, "calibrate: measurements so far in %s\n", meas_path);
    }
    if (!rc) { /* written from the schema it is read with, checked as a load checks it */
        cJSON *notes = notes_json(&c, &R, meas_path);
        if (notes && xs_thr_cal_notes(notes, &thr)) {
            cJSON_Delete(notes);
            notes = NULL;
        }
        rc = notes ? xs_dev_write(&dev, notes, o->out, err)
                   : xs_error_set(err, XS_ENOMEM, "calibrate: out of memory building the device");
        cJSON_Delete(notes);
    }
    if (!rc)
        say(&c, "wrote %s and %s", o->out, meas_path);
    xs_meas_free(&c.ms);
    return rc;
}
