/* cpu_runners.c — see cpu_runners.h. */
#include "cpu_runners.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_gemm.h"
#include "cpu_params.h"
#include "layer_ops.h"
#include "optim.h"
#include "simd.h"
#include "stream.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Buffers are 64-byte aligned and filled with small varied values (no
 * denormals, no zeros that could take fast paths). */
static void *alloc_filled(size_t count, size_t es, unsigned seed)
{
    size_t bytes = (count * es + 63) / 64 * 64 + 64;
    unsigned char *p = aligned_alloc(64, bytes);
    if (!p)
        return NULL;
    if (es == 4) {
        float *f = (float *)p;
        for (size_t i = 0; i < bytes / 4; i++) {
            seed = seed * 1664525u + 1013904223u;
            f[i] = (float)((seed >> 9) & 0xfff) / 4096.0f - 0.5f;
        }
    } else {
        memset(p, 0, bytes);
    }
    return p;
}

static void free_all(xs_runner *r)
{
    for (int i = 0; i < 8; i++) {
        free(r->buf[i]);
        r->buf[i] = NULL;
    }
}

void xs_runner_free(xs_runner *r)
{
    free_all(r);
}

/* Allocate buf[i] for i < n with the element counts and sizes given. */
static int alloc_bufs(xs_runner *r, int n, const size_t *counts, const size_t *sizes)
{
    for (int i = 0; i < n; i++) {
        r->size[i] = counts[i] * sizes[i];
        r->buf[i] = alloc_filled(counts[i], sizes[i], 17u + 31u * (unsigned)i);
        if (!r->buf[i]) {
            free_all(r);
            return -1;
        }
    }
    return 0;
}

static double bytes_per_elem(int fn)
{
    static const double b[XS_FN_COUNT] = {
        [XS_FN_ZERO] = XS_KRN_B_ZERO,           [XS_FN_ADD] = XS_KRN_B_ADD,
        [XS_FN_BIAS] = XS_KRN_B_BIAS,           [XS_FN_BIAS_GRAD] = XS_KRN_B_BIAS_GRAD,
        [XS_FN_DROPOUT] = XS_KRN_B_DROPOUT,     [XS_FN_DROPOUT_BWD] = XS_KRN_B_DROPOUT_BWD,
        [XS_FN_GELU] = XS_KRN_B_GELU,           [XS_FN_GELU_BWD] = XS_KRN_B_GELU_BWD,
        [XS_FN_LAYERNORM] = XS_KRN_B_LAYERNORM, [XS_FN_LAYERNORM_BWD] = XS_KRN_B_LAYERNORM_BWD,
        [XS_FN_SOFTMAX] = XS_KRN_B_SOFTMAX,     [XS_FN_SOFTMAX_BWD] = XS_KRN_B_SOFTMAX_BWD,
        [XS_FN_XENT] = XS_KRN_B_XENT,           [XS_FN_EMBED] = XS_KRN_B_EMBED,
        [XS_FN_EMBED_BWD] = XS_KRN_B_EMBED_BWD, [XS_FN_CAST] = XS_KRN_B_CAST,
        [XS_FN_COPY] = XS_KRN_B_COPY,           [XS_FN_ADAN] = XS_ADAN_FUSED_BYTES,
        [XS_FN_ADAMW] = XS_ADAMW_FUSED_BYTES,
    };
    return b[fn];
}

/* The embedding tables of the runners: a vocabulary and a sequence length
 * unlike the BERT step's, so the check does not reuse what was fitted. */
#define EMB_VOCAB 1000
#define EMB_SEQ 100
#define COPY_HEADS 4

int xs_runner_kernel(xs_runner *r, int fn, long long rows, long long width, int threads)
{
    memset(r, 0, sizeof *r);
    if (fn < 0 || fn >= XS_FN_COUNT || rows < 1 || width < 1 || threads < 1)
        return -1;
    if (fn == XS_FN_COPY && width % (3 * COPY_HEADS))
        return -1;
    r->fn = fn;
    r->threads = threads;
    r->rows = rows;
    r->width = width;
    size_t N = (size_t)rows * (size_t)width, R = (size_t)rows, W = (size_t)width;
    r->elems = (double)N;
    r->bytes = bytes_per_elem(fn) * (double)N;
    size_t f = 4, b = 1;
    int rc = 0;
    switch (fn) {
    case XS_FN_ZERO: rc = alloc_bufs(r, 1, (size_t[]){N}, (size_t[]){f}); break;
    case XS_FN_ADD: rc = alloc_bufs(r, 3, (size_t[]){N, N, N}, (size_t[]){f, f, f}); break;
    case XS_FN_BIAS:
    case XS_FN_BIAS_GRAD: rc = alloc_bufs(r, 2, (size_t[]){N, W}, (size_t[]){f, f}); break;
    case XS_FN_DROPOUT:
    case XS_FN_DROPOUT_BWD: rc = alloc_bufs(r, 3, (size_t[]){N, N, N}, (size_t[]){f, f, b}); break;
    case XS_FN_GELU: rc = alloc_bufs(r, 2, (size_t[]){N, N}, (size_t[]){f, f}); break;
    case XS_FN_GELU_BWD: rc = alloc_bufs(r, 3, (size_t[]){N, N, N}, (size_t[]){f, f, f}); break;
    case XS_FN_LAYERNORM:
    case XS_FN_LAYERNORM_BWD:
        /* x, gamma, beta, y, mean, rstd, dy (and dx in y's place), dgamma+dbeta */
        rc = alloc_bufs(r, 8, (size_t[]){N, W, W, N, R, R, N, 2 * W},
                        (size_t[]){f, f, f, f, f, f, f, f});
        if (!rc)
            xs_krn_layernorm_fwd(r->buf[0], r->buf[1], r->buf[2], r->buf[3], r->buf[4],
                                 r->buf[5], R, W, threads);
        break;
    case XS_FN_SOFTMAX:
    case XS_FN_SOFTMAX_BWD:
        rc = alloc_bufs(r, 3, (size_t[]){N, N, N}, (size_t[]){f, f, f});
        if (!rc)
            xs_krn_softmax_fwd(r->buf[0], r->buf[1], 0.125f, R, W, threads);
        break;
    case XS_FN_XENT:
        rc = alloc_bufs(r, 3, (size_t[]){N, R, N}, (size_t[]){f, f, f});
        if (!rc)
            for (size_t i = 0; i < R; i++)
                ((int32_t *)r->buf[1])[i] = (int32_t)((i * 7919) % W);
        break;
    case XS_FN_EMBED:
    case XS_FN_EMBED_BWD:
        /* tokens, wte, wpe, out (or dout) */
        rc = alloc_bufs(r, 4, (size_t[]){R, EMB_VOCAB * W, EMB_SEQ * W, N},
                        (size_t[]){f, f, f, f});
        if (!rc)
            for (size_t i = 0; i < R; i++)
                ((int32_t *)r->buf[0])[i] = (int32_t)((i * 7919) % EMB_VOCAB);
        break;
    case XS_FN_CAST: rc = alloc_bufs(r, 2, (size_t[]){N, N}, (size_t[]){f, 2}); break;
    case XS_FN_COPY:
        rc = alloc_bufs(r, 4, (size_t[]){N, N / 3, N / 3, N / 3}, (size_t[]){f, f, f, f});
        break;
    case XS_FN_ADAN:
        rc = alloc_bufs(r, 6, (size_t[]){N, N, N, N, N, N}, (size_t[]){f, f, f, f, f, f});
        break;
    case XS_FN_ADAMW: rc = alloc_bufs(r, 4, (size_t[]){N, N, N, N}, (size_t[]){f, f, f, f}); break;
    default: return -1;
    }
    if (rc)
        return -1;
    if (fn == XS_FN_DROPOUT_BWD) /* a real mask: a constant one predicts every branch */
        xs_krn_dropout_fwd(r->buf[0], r->buf[1], r->buf[2], 0.1f, 99, N, threads);
    if (fn == XS_FN_ADAN || fn == XS_FN_ADAMW) /* second moments must be >= 0 */
        memset(r->buf[fn == XS_FN_ADAN ? 4 : 3], 0, N * sizeof(float));
    if (fn == XS_FN_ADAN)
        memset(r->buf[5], 0, N * sizeof(float));
    return 0;
}

int xs_runner_gemm(xs_runner *r, int bf16, long long m, long long n, long long k, int ta, int tb,
                   int threads)
{
    memset(r, 0, sizeof *r);
    if (m < 1 || n < 1 || k < 1 || threads < 1)
        return -1;
    r->fn = -1;
    r->bf16 = bf16;
    r->threads = threads;
    r->m = m;
    r->n = n;
    r->k = k;
    r->ta = ta;
    r->tb = tb;
    size_t es = bf16 ? 2 : 4, A = (size_t)(m * k), B = (size_t)(k * n), C = (size_t)(m * n);
    if (alloc_bufs(r, 3, (size_t[]){A, B, C}, (size_t[]){4, 4, 4}))
        return -1;
    if (bf16) { /* the operands cast from their fp32 fill */
        for (int i = 0; i < 2; i++) {
            size_t count = i ? B : A;
            xs_bf16 *h = aligned_alloc(64, (count * 2 + 63) / 64 * 64 + 64);
            if (!h) {
                free_all(r);
                return -1;
            }
            xs_krn_cast_bf16(r->buf[i], h, count, threads);
            free(r->buf[i]);
            r->buf[i] = h;
            r->size[i] = count * 2;
        }
    }
    r->flops = 2.0 * (double)m * (double)n * (double)k;
    r->bytes = (double)es * (double)(A + B) + 4.0 * (double)C;
    return 0;
}

void xs_runner_run(void *ctx)
{
    xs_runner *r = ctx;
    int nt = r->threads;
    void **b = r->buf;
    size_t N = (size_t)(r->rows * r->width), R = (size_t)r->rows, W = (size_t)r->width;
    if (r->fn < 0) {
        if (r->bf16)
            xs_krn_gemm_bf16(r->ta, r->tb, (size_t)r->m, (size_t)r->n, (size_t)r->k, b[0], b[1],
                             b[2], 0, nt);
        else
            xs_krn_gemm_f32(r->ta, r->tb, (size_t)r->m, (size_t)r->n, (size_t)r->k, b[0], b[1],
                            b[2], 0, nt);
        return;
    }
    r->step++;
    switch (r->fn) {
    case XS_FN_ZERO: xs_krn_zero(b[0], N, nt); break;
    case XS_FN_ADD: xs_krn_add(b[0], b[1], b[2], N, nt); break;
    case XS_FN_BIAS: xs_krn_bias_add(b[0], b[1], R, W, nt); break;
    case XS_FN_BIAS_GRAD: xs_krn_bias_grad(b[0], b[1], R, W, nt); break;
    case XS_FN_DROPOUT: xs_krn_dropout_fwd(b[0], b[1], b[2], 0.1f, (uint64_t)r->step, N, nt); break;
    case XS_FN_DROPOUT_BWD: xs_krn_dropout_bwd(b[0], b[2], b[1], 0.1f, N, nt); break;
    case XS_FN_GELU: xs_krn_gelu_fwd(b[0], b[1], N, nt); break;
    case XS_FN_GELU_BWD: xs_krn_gelu_bwd(b[0], b[1], b[2], N, nt); break;
    case XS_FN_LAYERNORM:
        xs_krn_layernorm_fwd(b[0], b[1], b[2], b[3], b[4], b[5], R, W, nt);
        break;
    case XS_FN_LAYERNORM_BWD: {
        float *dgb = b[7];
        xs_krn_layernorm_bwd(b[6], b[0], b[1], b[4], b[5], b[3], dgb, dgb + W, R, W, nt);
        break;
    }
    case XS_FN_SOFTMAX: xs_krn_softmax_fwd(b[0], b[1], 0.125f, R, W, nt); break;
    case XS_FN_SOFTMAX_BWD: xs_krn_softmax_bwd(b[0], b[1], b[2], 0.125f, R, W, nt); break;
    case XS_FN_XENT: xs_krn_cross_entropy(b[0], b[1], b[2], R, W, nt); break;
    case XS_FN_EMBED: xs_krn_embedding_fwd(b[0], b[1], b[2], b[3], R, EMB_SEQ, W, nt); break;
    case XS_FN_EMBED_BWD: xs_krn_embedding_bwd(b[0], b[3], b[1], b[2], R, EMB_SEQ, W, nt); break;
    case XS_FN_CAST: xs_krn_cast_bf16(b[0], b[1], N, nt); break;
    case XS_FN_COPY:
        xs_krn_heads_split(b[0], b[1], b[2], b[3], 1, R, COPY_HEADS, W / (3 * COPY_HEADS), nt);
        break;
    case XS_FN_ADAN: {
        xs_adan_hparams h = xs_adan_defaults(1e-4f, 0.01f);
        xs_krn_adan_fused(&h, r->step, b[0], b[1], b[2], b[3], b[4], b[5], N, nt);
        break;
    }
    case XS_FN_ADAMW: {
        xs_adamw_hparams h = {1e-4f, 0.9f, 0.999f, 1e-8f, 0.01f};
        xs_krn_adamw_fused(&h, r->step, b[0], b[1], b[2], b[3], N, nt);
        break;
    }
    default: break;
    }
}

/* The buffers a kernel fills with new data (see xs_runner_prepare). */
static int new_outputs(const xs_runner *r, int *idx)
{
    switch (r->fn) {
    case -1: idx[0] = 2; return 1; /* C */
    case XS_FN_ZERO: idx[0] = 0; return 1;
    case XS_FN_ADD: idx[0] = 2; return 1;
    case XS_FN_DROPOUT: idx[0] = 1; idx[1] = 2; return 2;
    case XS_FN_DROPOUT_BWD: idx[0] = 1; return 1;
    case XS_FN_GELU: idx[0] = 1; return 1;
    case XS_FN_GELU_BWD: idx[0] = 2; return 1;
    case XS_FN_LAYERNORM:
    case XS_FN_LAYERNORM_BWD: idx[0] = 3; return 1;
    case XS_FN_SOFTMAX: idx[0] = 1; return 1;
    case XS_FN_SOFTMAX_BWD: idx[0] = 2; return 1;
    case XS_FN_XENT: idx[0] = 2; return 1;
    case XS_FN_EMBED: idx[0] = 3; return 1;
    case XS_FN_COPY: idx[0] = 1; idx[1] = 2; idx[2] = 3; return 3;
    default: return 0; /* in place, staging, or small */
    }
}

#define FLUSH_MAX_BYTES ((size_t)64 << 20)

/* Write back and drop every line of p from all caches: CLFLUSH on x86-64,
 * DC CIVAC on aarch64 (Linux lets user code run it); elsewhere the lines
 * stay (the L2 sweep below still pushes them out of the core's L2). */
static void flush_lines(const void *p, size_t bytes)
{
#if defined(XS_X86)
    for (size_t i = 0; i < bytes; i += 64)
        _mm_clflush((const char *)p + i);
#elif defined(XS_NEON)
    for (size_t i = 0; i < bytes; i += 64)
        __asm__ volatile("dc civac, %0" ::"r"((const char *)p + i) : "memory");
#else
    (void)p;
    (void)bytes;
#endif
}

/* The flushes and sweeps done before the timed call starts. */
static void fence(void)
{
#if defined(XS_X86)
    _mm_mfence();
#elif defined(XS_NEON)
    __asm__ volatile("dsb ish" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* Every core reads its own twice-L2-sized part of one buffer, which
 * pushes whatever its L2 held out to the LLC. */
static volatile float evict_sink;
static void evict_l2(int threads)
{
    static float *buf;
    static size_t per; /* floats per thread */
    static int have;
    if (!buf) {
        long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        per = (size_t)(2 * (l2 > 0 ? l2 : 1 << 20)) / sizeof(float);
        have = threads;
        buf = alloc_filled(per * (size_t)threads, sizeof(float), 5);
        if (!buf)
            return;
    }
    int nt = threads < have ? threads : have;
#pragma omp parallel num_threads(nt)
    {
        float s = 0;
#ifdef _OPENMP
        size_t t = (size_t)omp_get_thread_num();
#else
        size_t t = 0;
#endif
        for (size_t i = t * per; i < (t + 1) * per; i += 16)
            s += buf[i];
        evict_sink = s;
    }
}

void xs_runner_prepare(void *ctx)
{
    xs_runner *r = ctx;
    int idx[4], n = new_outputs(r, idx);
    for (int i = 0; i < n; i++)
        if (r->size[idx[i]] <= FLUSH_MAX_BYTES)
            flush_lines(r->buf[idx[i]], r->size[idx[i]]);
    evict_l2(r->threads);
    fence();
}

xs_cal_kernel xs_runner_kernel_desc(xs_runner *r, const char *name)
{
    xs_cal_kernel k = {name, r->bytes, r->flops, xs_runner_run, r, xs_runner_prepare};
    return k;
}

void xs_triad_run(void *ctx)
{
    xs_triad *t = ctx;
    xs_krn_triad(t->a, t->b, t->c, 3.0f, t->n, t->threads);
}
