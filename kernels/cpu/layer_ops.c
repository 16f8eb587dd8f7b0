/* layer_ops.c — see layer_ops.h. The references, the kernels that need
 * no vector code (copies, memset, embedding, cross-entropy), and the
 * timed kernels' dispatch: the table of layer_ops_vec.c compiled for the
 * kernel set in force (AVX-512, AVX2, or the base ISA). Where the timed
 * versions sum in a different order than the references, the tests allow
 * for rounding. */
#include "layer_ops.h"

#include <math.h>
#include <string.h>

#include "cpu_features.h"
#include "layer_math.h"
#include "layer_ops_vec.h"
#include "share.h"
#include "simd.h"

/* The timed kernels compiled for the kernel set in force. */
static const xs_krn_lops_table *vec(void)
{
#ifdef XS_X86
    const xs_cpu_features *f = xs_cpu_features_get();
    if (f->avx512)
        return &xs_krn_lops_avx512;
    if (f->avx2)
        return &xs_krn_lops_avx2;
#endif
    return &xs_krn_lops_base;
}

const char *xs_krn_layer_ops_path(void)
{
    return vec()->isa;
}

void xs_krn_layernorm_fwd(const float *x, const float *gamma, const float *beta, float *y,
                          float *mean, float *rstd, size_t rows, size_t width, int threads)
{
    vec()->layernorm_fwd(x, gamma, beta, y, mean, rstd, rows, width, threads);
}

void xs_krn_layernorm_bwd(const float *dy, const float *x, const float *gamma, const float *mean,
                          const float *rstd, float *dx, float *dgamma, float *dbeta, size_t rows,
                          size_t width, int threads)
{
    vec()->layernorm_bwd(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, width, threads);
}

void xs_krn_softmax_fwd(const float *x, float *y, float scale, size_t rows, size_t width,
                        int threads)
{
    vec()->softmax_fwd(x, y, scale, rows, width, threads);
}

void xs_krn_softmax_bwd(const float *dy, const float *y, float *dx, float scale, size_t rows,
                        size_t width, int threads)
{
    vec()->softmax_bwd(dy, y, dx, scale, rows, width, threads);
}

void xs_krn_gelu_fwd(const float *x, float *y, size_t count, int threads)
{
    vec()->gelu_fwd(x, y, count, threads);
}

void xs_krn_gelu_bwd(const float *dy, const float *x, float *dx, size_t count, int threads)
{
    vec()->gelu_bwd(dy, x, dx, count, threads);
}

void xs_krn_bias_add(float *y, const float *b, size_t rows, size_t width, int threads)
{
    vec()->bias_add(y, b, rows, width, threads);
}

void xs_krn_bias_grad(const float *dy, float *db, size_t rows, size_t width, int threads)
{
    vec()->bias_grad(dy, db, rows, width, threads);
}

void xs_krn_add(const float *a, const float *b, float *y, size_t count, int threads)
{
    vec()->add(a, b, y, count, threads);
}

void xs_krn_dropout_fwd(const float *x, float *y, uint8_t *keep, float p, uint64_t seed,
                        size_t count, int threads)
{
    vec()->dropout_fwd(x, y, keep, p, seed, count, threads);
}

void xs_krn_dropout_bwd(const float *dy, const uint8_t *keep, float *dx, float p, size_t count,
                        int threads)
{
    vec()->dropout_bwd(dy, keep, dx, p, count, threads);
}

/* ---- LayerNorm -------------------------------------------------------------- */

void xs_krn_layernorm_fwd_ref(const float *x, const float *gamma, const float *beta, float *y,
                              float *mean, float *rstd, size_t rows, size_t width)
{
    for (size_t r = 0; r < rows; r++)
        ln_row(x + r * width, gamma, beta, y + r * width, &mean[r], &rstd[r], width);
}

void xs_krn_layernorm_bwd_ref(const float *dy, const float *x, const float *gamma,
                              const float *mean, const float *rstd, float *dx, float *dgamma,
                              float *dbeta, size_t rows, size_t width)
{
    for (size_t r = 0; r < rows; r++) {
        ln_bwd_row(dy + r * width, x + r * width, gamma, mean[r], rstd[r], dx + r * width, width);
        for (size_t i = 0; i < width; i++) {
            dgamma[i] += dy[r * width + i] * (x[r * width + i] - mean[r]) * rstd[r];
            dbeta[i] += dy[r * width + i];
        }
    }
}

/* ---- softmax -------------------------------------------------------------- */

void xs_krn_softmax_fwd_ref(const float *x, float *y, float scale, size_t rows, size_t width)
{
    for (size_t r = 0; r < rows; r++)
        softmax_row(x + r * width, y + r * width, scale, width);
}

void xs_krn_softmax_bwd_ref(const float *dy, const float *y, float *dx, float scale, size_t rows,
                            size_t width)
{
    for (size_t r = 0; r < rows; r++)
        softmax_bwd_row(dy + r * width, y + r * width, dx + r * width, scale, width);
}

/* ---- GELU ------------------------------------------------------------------ */

void xs_krn_gelu_fwd_ref(const float *x, float *y, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = gelu(x[i]);
}

void xs_krn_gelu_bwd_ref(const float *dy, const float *x, float *dx, size_t count)
{
    for (size_t i = 0; i < count; i++)
        dx[i] = dy[i] * gelu_grad(x[i]);
}

/* ---- bias, residual --------------------------------------------------------- */

void xs_krn_bias_grad_ref(const float *dy, float *db, size_t rows, size_t width)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < width; i++)
            db[i] += dy[r * width + i];
}

void xs_krn_zero(float *x, size_t count, int threads)
{
#pragma omp parallel num_threads(NT(threads))
    {
        size_t lo, hi;
        xs_krn_share(count, 16, &lo, &hi);
        memset(x + lo, 0, (hi - lo) * sizeof *x);
    }
}

/* ---- attention head layouts --------------------------------------------------- */

void xs_krn_heads_split(const float *qkv, float *q, float *k, float *v, size_t B, size_t s,
                        size_t a, size_t d, int threads)
{
    size_t h = a * d;
#pragma omp parallel for num_threads(NT(threads)) schedule(static) collapse(2)
    for (size_t bi = 0; bi < B; bi++)
        for (size_t hd = 0; hd < a; hd++)
            for (size_t t = 0; t < s; t++) {
                const float *row = qkv + (bi * s + t) * 3 * h + hd * d;
                size_t o = ((bi * a + hd) * s + t) * d;
                memcpy(q + o, row, d * sizeof(float));
                memcpy(k + o, row + h, d * sizeof(float));
                memcpy(v + o, row + 2 * h, d * sizeof(float));
            }
}

void xs_krn_heads_merge(const float *dq, const float *dk, const float *dv, float *dqkv,
                        size_t B, size_t s, size_t a, size_t d, int threads)
{
    size_t h = a * d;
#pragma omp parallel for num_threads(NT(threads)) schedule(static) collapse(2)
    for (size_t bi = 0; bi < B; bi++)
        for (size_t hd = 0; hd < a; hd++)
            for (size_t t = 0; t < s; t++) {
                float *row = dqkv + (bi * s + t) * 3 * h + hd * d;
                size_t o = ((bi * a + hd) * s + t) * d;
                memcpy(row, dq + o, d * sizeof(float));
                memcpy(row + h, dk + o, d * sizeof(float));
                memcpy(row + 2 * h, dv + o, d * sizeof(float));
            }
}

void xs_krn_heads_to_rows(const float *xh, float *x, size_t B, size_t s, size_t a, size_t d,
                          int threads)
{
    size_t h = a * d;
#pragma omp parallel for num_threads(NT(threads)) schedule(static) collapse(2)
    for (size_t bi = 0; bi < B; bi++)
        for (size_t hd = 0; hd < a; hd++)
            for (size_t t = 0; t < s; t++)
                memcpy(x + (bi * s + t) * h + hd * d, xh + ((bi * a + hd) * s + t) * d,
                       d * sizeof(float));
}

void xs_krn_rows_to_heads(const float *x, float *xh, size_t B, size_t s, size_t a, size_t d,
                          int threads)
{
    size_t h = a * d;
#pragma omp parallel for num_threads(NT(threads)) schedule(static) collapse(2)
    for (size_t bi = 0; bi < B; bi++)
        for (size_t hd = 0; hd < a; hd++)
            for (size_t t = 0; t < s; t++)
                memcpy(xh + ((bi * a + hd) * s + t) * d, x + (bi * s + t) * h + hd * d,
                       d * sizeof(float));
}

/* ---- bf16 cast ------------------------------------------------------------- */

void xs_krn_cast_bf16_ref(const float *x, xs_bf16 *y, size_t count)
{
    for (size_t i = 0; i < count; i++)
        y[i] = xs_f32_to_bf16(x[i]);
}

#ifdef XS_X86
/* xs_f32_to_bf16 sixteen lanes at a time, in integer arithmetic: the same
 * bits as the reference for every input, NaNs and subnormals included
 * (VCVTNEPS2BF16 would flush subnormal inputs to zero). */
__attribute__((target("avx512f,avx512bw"))) static void cast_avx512(const float *x, xs_bf16 *y,
                                                                     size_t lo, size_t hi)
{
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000),
                  bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1),
                  quiet = _mm512_set1_epi32(0x40);
    size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
        __m512i u = _mm512_loadu_si512(x + i);
        __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs_mask), inf);
        __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
        __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(bias, odd)), 16);
        r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), quiet);
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtepi32_epi16(r));
    }
    for (; i < hi; i++)
        y[i] = xs_f32_to_bf16(x[i]);
}

#endif

void xs_krn_cast_bf16(const float *x, xs_bf16 *y, size_t count, int threads)
{
#ifdef XS_X86
    if (xs_cpu_features_get()->avx512) {
#pragma omp parallel num_threads(NT(threads))
        {
            size_t lo, hi;
            xs_krn_share(count, 16, &lo, &hi);
            cast_avx512(x, y, lo, hi);
        }
        return;
    }
#endif
    vec()->cast_bf16(x, y, count, threads);
}

/* ---- dropout ---------------------------------------------------------------- */

void xs_krn_dropout_fwd_ref(const float *x, float *y, uint8_t *keep, float p, uint64_t seed,
                            size_t count)
{
    float s = 1.0f / (1.0f - p);
    for (size_t i = 0; i < count; i++) {
        keep[i] = uniform(seed, i) >= p;
        y[i] = keep[i] ? x[i] * s : 0.0f;
    }
}

/* ---- embedding, loss ------------------------------------------------------- */

void xs_krn_embedding_fwd(const int32_t *tok, const float *wte, const float *wpe, float *out,
                          size_t tokens, size_t seq, size_t width, int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t t = 0; t < tokens; t++)
        for (size_t i = 0; i < width; i++)
            out[t * width + i] = wte[(size_t)tok[t] * width + i] + wpe[(t % seq) * width + i];
}

void xs_krn_embedding_bwd(const int32_t *tok, const float *dout, float *dwte, float *dwpe,
                          size_t tokens, size_t seq, size_t width, int threads)
{
    /* rows of dwte repeat: each thread owns a range of columns and walks
     * the tokens in order, so every sum keeps the serial order */
#pragma omp parallel num_threads(NT(threads))
    {
        size_t lo, hi;
        xs_krn_share(width, 16, &lo, &hi);
        for (size_t t = 0; t < tokens; t++) {
            float *te = dwte + (size_t)tok[t] * width, *pe = dwpe + (t % seq) * width;
            const float *d = dout + t * width;
#pragma omp simd
            for (size_t i = lo; i < hi; i++) {
                te[i] += d[i];
                pe[i] += d[i];
            }
        }
    }
}

void xs_krn_embedding_bwd_ref(const int32_t *tok, const float *dout, float *dwte, float *dwpe,
                              size_t tokens, size_t seq, size_t width)
{
    for (size_t t = 0; t < tokens; t++)
        for (size_t i = 0; i < width; i++) {
            dwte[(size_t)tok[t] * width + i] += dout[t * width + i];
            dwpe[(t % seq) * width + i] += dout[t * width + i];
        }
}

double xs_krn_cross_entropy(const float *logits, const int32_t *target, float *dlogits,
                            size_t tokens, size_t vocab, int threads)
{
    double loss = 0;
#pragma omp parallel for num_threads(NT(threads)) schedule(static) reduction(+ : loss)
    for (size_t t = 0; t < tokens; t++) {
        const float *l = logits + t * vocab;
        float *d = dlogits + t * vocab;
        softmax_row(l, d, 1.0f, vocab);
        loss += -log(fmax(d[target[t]], 1e-30));
        for (size_t v = 0; v < vocab; v++)
            d[v] = (d[v] - (v == (size_t)target[t] ? 1.0f : 0.0f)) / (float)tokens;
    }
    return loss / (double)tokens;
}
