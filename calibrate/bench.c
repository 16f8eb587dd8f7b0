/* bench.c — `make bench`: the kernels' headline figures, measured in one
 * run with the harness (median of repetitions; ratios from interleaved
 * runs). Prints figures for people and one `bench: NAME VALUE` line each
 * for scripts. Asserts nothing: targets are read by people. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "harness.h"
#include "optim.h"
#include "stream.h"

/* Working sets far beyond the caches, so both sides stream from DRAM. */
#define STREAM_FLOATS ((size_t)64 << 20)

typedef struct {
    float *a, *b, *c;
    size_t n;
    int threads;
} triad_ctx;

static void run_triad(void *p)
{
    triad_ctx *t = p;
    xs_krn_triad(t->a, t->b, t->c, 3.0f, t->n, t->threads);
}

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

int main(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    int threads = f->cores;
    printf("xpusim bench on %s: %d threads, AVX-512 %s, AVX512-BF16 %s, AMX-BF16 %s\n",
           f->model, threads, f->avx512 ? "yes" : "no", f->avx512_bf16 ? "yes" : "no",
           f->amx_bf16 ? "yes" : "no");
    xs_cal_opts o = xs_cal_default_opts();
    o.time_cap_s = 4;

    size_t n = STREAM_FLOATS;
    triad_ctx tc = {filled(n, 1), filled(n, 2), filled(n, 3), n, threads};
    xs_cal_kernel triad = {"stream triad", 12.0 * (double)n, 2.0 * (double)n, run_triad, &tc};

    adan_ctx ac = {xs_adan_defaults(1e-3f, 0.02f), 1, filled(n, 0.5f), filled(n, 0.01f),
                   filled(n, 0.01f), filled(n, 0), filled(n, 0), filled(n, 0), NULL, n, threads};
    xs_cal_kernel fused = {"adan fused", XS_ADAN_FUSED_BYTES * (double)n, 24.0 * (double)n,
                           run_adan_fused, &ac};
    xs_cal_result rt, rf;
    double ratio = xs_cal_compare(&triad, &fused, &o, &rt, &rf);
    printf("\nbandwidth (%zu M floats an array, %.0f MB a kernel's working set)\n", n >> 20,
           44.0 * (double)n / 1e6);
    report("stream triad", &rt, "GB/s");
    report("adan fused (44 B/param)", &rf, "GB/s");
    /* effective bandwidth ratio from the interleaved pairs: (bytes_f/t_f)/(bytes_t/t_t) */
    double bw_ratio = (fused.bytes / triad.bytes) / ratio;
    printf("  fused Adan reaches %.2f of the triad bandwidth (target >= 0.85)\n", bw_ratio);
    printf("bench: adan_fused_vs_triad %.3f\n", bw_ratio);

    adan_ctx ec = ac;
    ec.tmp = filled(n, 0);
    /* the eager sequence keeps -g_prev: same starting state, negated */
    ec.gp = filled(n, -0.01f);
    for (size_t i = 0; i < n; i++)
        ec.gp[i] = -ac.gp[i];
    xs_cal_kernel eager = {"adan eager", XS_ADAN_EAGER_BYTES * (double)n, 24.0 * (double)n,
                           run_adan_eager, &ec};
    xs_cal_opts oe = o;
    oe.min_reps = 3;
    xs_cal_result rf2, re;
    double speedup = xs_cal_compare(&fused, &eager, &oe, &rf2, &re);
    report("adan fused", &rf2, "GB/s");
    report("adan eager (176 B/param)", &re, "GB/s");
    printf("  fused Adan is %.2fx faster than eager (target >= 3)\n", speedup);
    printf("bench: adan_fused_vs_eager %.3f\n", speedup);
    return 0;
}
