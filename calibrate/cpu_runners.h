/* cpu_runners.h — one CPU kernel call made repeatable for the harness:
 * buffers sized for a shape, filled once, and a run function the harness
 * times. Used by the calibration (fit shapes) and by the check (other
 * shapes), so both time the very same calls the BERT step makes. */
#ifndef XS_CAL_CPU_RUNNERS_H
#define XS_CAL_CPU_RUNNERS_H

#include <stddef.h>

#include "harness.h"

typedef struct {
    int fn;          /* xs_cpu_fn, or -1 for a GEMM */
    int bf16;        /* GEMM: bf16 operands (else fp32) */
    int threads;
    long long rows, width;   /* non-GEMM: rows x width elements */
    long long m, n, k;       /* GEMM */
    int ta, tb;
    double elems, bytes, flops; /* one call, by the kernels' own accounting */
    int step;
    void *buf[8];
    size_t size[8]; /* bytes of each buffer */
} xs_runner;

/* Allocate and fill buffers for kernel fn (xs_cpu_fn) over rows x width
 * elements (for the row kernels, width is the row length). 0, or -1 when
 * out of memory or the shape does not suit the kernel. */
int xs_runner_kernel(xs_runner *r, int fn, long long rows, long long width, int threads);

/* The same for C[m x n] = op(A) op(B), bf16 (AMX/AVX512-BF16) or fp32. */
int xs_runner_gemm(xs_runner *r, int bf16, long long m, long long n, long long k, int ta, int tb,
                   int threads);

/* The harness callback: one call of the kernel (ctx is the runner). */
void xs_runner_run(void *ctx);

/* The untimed step before each call: caches as a training step leaves
 * them. Its activations and optimizer state exceed the caches, so a kernel
 * reads data another kernel wrote a while ago (pushed out of L2: every
 * core's L2 is swept) and writes outputs whose lines are in no cache (the
 * new data's lines are flushed, below 64 MB; larger ones do not stay
 * cached anyway). In-place updates, the bf16 staging buffer of the casts
 * and small gradient sums keep their lines. */
void xs_runner_prepare(void *ctx);

/* A harness kernel descriptor for r (name is not copied), with the
 * prepare step. */
xs_cal_kernel xs_runner_kernel_desc(xs_runner *r, const char *name);

void xs_runner_free(xs_runner *r);

/* STREAM triad a = b + 3 c over n floats on `threads` threads, as a
 * harness callback (ctx is an xs_triad). */
typedef struct {
    float *a, *b, *c;
    size_t n;
    int threads;
} xs_triad;

void xs_triad_run(void *ctx);

#endif
