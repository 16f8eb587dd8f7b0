/* bench.c — `make bench`: the kernels' headline figures, measured in one
 * run with the harness (median of repetitions; ratios from interleaved
 * runs), on the kernel set in force (XS_CPU_ISA caps it; oneDNN is held to
 * the same instruction set). Prints figures for people and one `bench:
 * NAME VALUE` line each for scripts, or `bench: NAME skipped: REASON` where
 * a figure cannot be measured here; every section it announces has rows.
 * Asserts nothing: targets are read by people. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "cpu_features.h"
#include "cpu_gemm.h"
#include "cpu_runners.h"
#include "onednn.h"
#include "peak.h"
#include "harness.h"
#include "optim.h"

/* Working sets far beyond the caches, so both sides stream from DRAM. */
#define STREAM_FLOATS ((size_t)64 << 20)

typedef struct {
    xs_adan_hparams h;
    int step;
    float *p, *g, *gp, *m, *v, *n, *tmp;
    size_t count;
    int threads;
} adan_ctx;

static void run_adan_fused(void *q)
{
    adan_ctx *c = q;
    xs_krn_adan_fused(&c->h, c->step++, c->p, c->g, c->gp, c->m, c->v, c->n, c->count, c->threads);
}

static void run_adan_eager(void *q)
{
    adan_ctx *c = q;
    xs_krn_adan_eager(&c->h, c->step++, c->p, c->g, c->gp, c->m, c->v, c->n, c->tmp, c->count,
                      c->threads);
}

static float *filled(size_t n, float base)
{
    float *x = malloc(n * sizeof *x);
    if (!x) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        x[i] = base + (float)(i % 1000) * 1e-4f;
    return x;
}

static void report(const char *name, const xs_cal_result *r, const char *what)
{
    printf("  %-28s median %9.3f ms  IQR %5.1f%%  reps %3d  %8.2f %s\n", name, r->median_s * 1e3,
           100 * r->rel_iqr, r->reps, strcmp(what, "GB/s") == 0 ? r->gbs : r->gflops, what);
}

typedef struct {
    int bf16, own;
    size_t m, n, k;
    void *A, *B;
    float *C;
    xs_dnnl_matmul *dnnl;
    int threads;
} gemm_ctx;

static void run_gemm(void *q)
{
    gemm_ctx *g = q;
    if (!g->own)
        xs_dnnl_matmul_run(g->dnnl);
    else if (g->bf16)
        xs_krn_gemm_bf16(0, 0, g->m, g->n, g->k, g->A, g->B, g->C, 0, g->threads);
    else
        xs_krn_gemm_f32(0, 0, g->m, g->n, g->k, g->A, g->B, g->C, 0, g->threads);
}

typedef struct {
    long iters;
    int threads, amx;
} peak_ctx;

static void run_peak(void *q)
{
    peak_ctx *c = q;
    if (c->amx)
        xs_krn_peak_amx_bf16(c->iters, c->threads);
    else
        xs_krn_peak_fma_f32(c->iters, c->threads);
}

/* Own GEMM against oneDNN on Transformer-shaped problems; returns the
 * geometric mean of (oneDNN time / own time), or NAN when oneDNN ran none
 * of them (*why says why), and the best own GFLOP/s. */
static double gemm_vs_onednn(int bf16, int threads, const xs_cal_opts *o, double *best_gflops,
                             const char **why)
{
    static const size_t shapes[][3] = {{2048, 512, 512}, {2048, 2048, 512}, {2048, 512, 2048}};
    double log_sum = 0;
    int counted = 0;
    *best_gflops = 0;
    *why = xs_dnnl_available() ? "oneDNN refused every shape" : "oneDNN is not built in "
                                                                "(libdnnl-dev)";
    for (size_t s = 0; s < 3; s++) {
        size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        size_t es = bf16 ? 2 : 4;
        void *A = malloc(m * k * es), *B = malloc(k * n * es);
        float *C1 = malloc(m * n * 4), *C2 = malloc(m * n * 4);
        if (!A || !B || !C1 || !C2) {
            fprintf(stderr, "bench: out of memory\n");
            exit(1);
        }
        for (size_t i = 0; i < m * k; i++)
            bf16 ? (void)(((xs_bf16 *)A)[i] = xs_f32_to_bf16(0.01f * (float)(i % 97)))
                 : (void)(((float *)A)[i] = 0.01f * (float)(i % 97));
        for (size_t i = 0; i < k * n; i++)
            bf16 ? (void)(((xs_bf16 *)B)[i] = xs_f32_to_bf16(0.02f * (float)(i % 89)))
                 : (void)(((float *)B)[i] = 0.02f * (float)(i % 89));
        double flops = 2.0 * (double)m * (double)n * (double)k;
        gemm_ctx own = {bf16, 1, m, n, k, A, B, C1, NULL, threads};
        gemm_ctx ref = {bf16, 0, m, n, k, A, B, C2, xs_dnnl_matmul_create(bf16, m, n, k, A, B, C2),
                        threads};
        xs_cal_kernel ko = {"own", 0, flops, run_gemm, &own, NULL};
        xs_cal_kernel kr = {"onednn", 0, flops, run_gemm, &ref, NULL};
        xs_cal_result ro, rr;
        if (ref.dnnl) {
            double ratio = xs_cal_compare(&ko, &kr, o, &ro, &rr); /* t_onednn / t_own */
            printf("  %s %5zu x %5zu x %5zu   own %7.1f GFLOP/s   oneDNN %7.1f GFLOP/s (%s)   "
                   "own/oneDNN %.2f\n",
                   bf16 ? "bf16" : "fp32", m, n, k, ro.gflops, rr.gflops,
                   xs_dnnl_matmul_impl(ref.dnnl), ratio);
            log_sum += log(ratio);
            counted++;
        } else {
            xs_cal_measure(&ko, o, &ro);
            printf("  %s %5zu x %5zu x %5zu   own %7.1f GFLOP/s   oneDNN: %s\n",
                   bf16 ? "bf16" : "fp32", m, n, k, ro.gflops,
                   xs_dnnl_available() ? "no primitive for it at this instruction set"
                                       : "not built in");
        }
        if (ro.gflops > *best_gflops)
            *best_gflops = ro.gflops;
        xs_dnnl_matmul_free(ref.dnnl);
        free(A), free(B), free(C1), free(C2);
    }
    if (counted && counted < 3)
        *why = NULL; /* a partial mean, over the shapes oneDNN ran */
    return counted ? exp(log_sum / counted) : NAN;
}

/* One `bench:` line: the figure, or why there is none. */
static void figure(const char *name, double value, const char *why)
{
    if (isfinite(value))
        printf("bench: %s %.3f\n", name, value);
    else
        printf("bench: %s skipped: %s\n", name, why ? why : "not measured");
}

int main(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    if (f->isa_error[0]) {
        fprintf(stderr, "bench: %s\n", f->isa_error);
        return 2;
    }
    int threads = f->cores;
    const char *dnnl_isa = xs_dnnl_limit_isa(f->isa);
    printf("xpusim bench on %s: %d threads, kernel set %s (AVX2+FMA %s, AVX-512 %s, "
           "AVX512-BF16 %s, AMX-BF16 %s, NEON %s; XS_CPU_ISA caps it)\n",
           f->model, threads, xs_cpu_isa_name(f->isa), f->avx2 ? "yes" : "no",
           f->avx512 ? "yes" : "no", f->avx512_bf16 ? "yes" : "no", f->amx_bf16 ? "yes" : "no",
           f->neon ? "yes" : "no");
    xs_cal_opts o = xs_cal_default_opts();
    o.time_cap_s = 4;

    size_t n = STREAM_FLOATS;
    xs_triad tc = {filled(n, 1), filled(n, 2), filled(n, 3), n, threads};
    xs_cal_kernel triad = {"stream triad", 12.0 * (double)n, 2.0 * (double)n, xs_triad_run, &tc,
                           NULL};

    adan_ctx ac = {xs_adan_defaults(1e-3f, 0.02f), 1, filled(n, 0.5f), filled(n, 0.01f),
                   filled(n, 0.01f), filled(n, 0), filled(n, 0), filled(n, 0), NULL, n, threads};
    xs_cal_kernel fused = {"adan fused", XS_ADAN_FUSED_BYTES * (double)n, 24.0 * (double)n,
                           run_adan_fused, &ac, NULL};
    xs_cal_result rt, rf;
    double ratio = xs_cal_compare(&triad, &fused, &o, &rt, &rf);
    printf("\nbandwidth (%zu M floats an array, %.0f MB a kernel's working set)\n", n >> 20,
           44.0 * (double)n / 1e6);
    report("stream triad", &rt, "GB/s");
    report("adan fused (44 B/param)", &rf, "GB/s");
    /* effective bandwidth ratio from the interleaved pairs: (bytes_f/t_f)/(bytes_t/t_t) */
    double bw_ratio = (fused.bytes / triad.bytes) / ratio;
    if (isfinite(bw_ratio))
        printf("  fused Adan reaches %.2f of the triad bandwidth (target >= 0.85)\n", bw_ratio);
    figure("adan_fused_vs_triad", bw_ratio, "the interleaved runs gave no ratio");

    adan_ctx ec = ac;
    ec.tmp = filled(n, 0);
    /* the eager sequence keeps -g_prev: same starting state, negated */
    ec.gp = filled(n, -0.01f);
    for (size_t i = 0; i < n; i++)
        ec.gp[i] = -ac.gp[i];
    xs_cal_kernel eager = {"adan eager", XS_ADAN_EAGER_BYTES * (double)n, 24.0 * (double)n,
                           run_adan_eager, &ec, NULL};
    xs_cal_opts oe = o;
    oe.min_reps = 3;
    xs_cal_result rf2, re;
    double speedup = xs_cal_compare(&fused, &eager, &oe, &rf2, &re);
    report("adan fused", &rf2, "GB/s");
    report("adan eager (176 B/param)", &re, "GB/s");
    if (isfinite(speedup))
        printf("  fused Adan is %.2fx faster than eager (target >= 3)\n", speedup);
    figure("adan_fused_vs_eager", speedup, "the interleaved runs gave no ratio");
    free(tc.a), free(tc.b), free(tc.c), free(ac.p), free(ac.g), free(ac.gp), free(ac.m);
    free(ac.v), free(ac.n), free(ec.tmp), free(ec.gp);

    xs_cal_opts og = xs_cal_default_opts();
    og.time_cap_s = 2;
    /* fp32 first: after heavy AMX work the cores run the FMA units at a lower
     * clock for a while (measured: half speed right after the AMX peak test),
     * which would charge our fp32 GEMM with the AMX section's aftermath */
    printf("\nvector and matrix engines (in-core peaks, measured)\n");
    peak_ctx pa = {2000000, threads, 1}, pf = {2000000, threads, 0};
    xs_cal_kernel kpa = {"amx peak", 0, 4.0 * 2e6 * 16384 * threads, run_peak, &pa, NULL};
    /* a chain's FLOPs depend on the kernel set: one iteration's, times 2e6 */
    xs_cal_kernel kpf = {"fma peak", 0, xs_krn_peak_fma_f32(1, threads) * 2e6, run_peak, &pf,
                         NULL};
    xs_cal_result rpa = {0}, rpf = {0};
    xs_cal_measure(&kpf, &og, &rpf);
    report(xs_krn_peak_fma_name(), &rpf, "GFLOP/s");
    if (!f->amx_bf16)
        printf("  AMX bf16 peak: skipped: %s\n",
               f->isa < XS_ISA_AMX_BF16 && xs_cpu_isa_parse(getenv("XS_CPU_ISA")) >= 0
                   ? "the kernel set is capped below amx-bf16 (XS_CPU_ISA)"
                   : "no AMX on this CPU");
    printf("\nGEMM against oneDNN (%s, %s; interleaved runs; own/oneDNN > 1: ours faster)\n",
           xs_dnnl_available() ? "oneDNN built in" : "oneDNN NOT built in",
           dnnl_isa ? dnnl_isa : "oneDNN's instruction set not limited");
    printf("  fp32 path: %s\n", xs_krn_gemm_f32_path());
    double best_bf16, best_f32;
    const char *why;
    double r32 = gemm_vs_onednn(0, threads, &og, &best_f32, &why);
    figure("gemm_fp32_vs_onednn", r32, why);
    if (rpf.gflops > 0)
        printf("  best own fp32 GEMM %.1f GFLOP/s = %.2f of the measured FMA peak %.1f\n",
               best_f32, best_f32 / rpf.gflops, rpf.gflops);
    printf("  bf16 path: %s%s\n", xs_krn_gemm_bf16_path(),
           xs_cpu_isa_has_bf16_unit(f->isa) ? "" : " (no bf16 unit: converted to fp32 while packed)");
    double r16 = gemm_vs_onednn(1, threads, &og, &best_bf16, &why);
    figure("gemm_bf16_vs_onednn", r16, why);
    if (f->amx_bf16) {
        xs_cal_measure(&kpa, &og, &rpa);
        report("AMX bf16 TDPBF16PS peak", &rpa, "GFLOP/s");
        printf("  best own bf16 GEMM %.1f GFLOP/s = %.2f of the measured AMX peak %.1f\n",
               best_bf16, best_bf16 / rpa.gflops, rpa.gflops);
        figure("gemm_bf16_vs_amx_peak", best_bf16 / rpa.gflops, NULL);
    } else if (rpf.gflops > 0) {
        printf("  best own bf16 GEMM %.1f GFLOP/s = %.2f of the measured fp32 FMA peak %.1f\n",
               best_bf16, best_bf16 / rpf.gflops, rpf.gflops);
    }
    return 0;
}
