/* layer_ops_vec.c — the timed layer kernels (layer_ops_vec.h): the
 * references' loops (layer_math.h) run over rows or elements in parallel,
 * compiled into one table per ISA. Which table this object defines is set
 * by the Makefile: XS_LOPS_AVX2 (-mavx2 -mfma), XS_LOPS_AVX512 (-mavx512f),
 * neither for the base ISA. Nothing here may run unless the CPU has that
 * ISA: layer_ops.c chooses the table from cpu_features. */
#include "layer_ops_vec.h"

#include <string.h>

#include "layer_math.h"
#include "share.h"

#if defined(XS_LOPS_AVX512)
#define TABLE xs_krn_lops_avx512
#define ISA "avx512"
#elif defined(XS_LOPS_AVX2)
#define TABLE xs_krn_lops_avx2
#define ISA "avx2"
#else
#define TABLE xs_krn_lops_base
#define ISA "base"
#endif

static void layernorm_fwd(const float *x, const float *gamma, const float *beta,
                          float *y, float *mean, float *rstd, size_t rows, size_t width,
                          int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t r = 0; r < rows; r++)
        ln_row(x + r * width, gamma, beta, y + r * width, &mean[r], &rstd[r], width);
}

/* The parameter gradients: each thread owns a range of columns and walks
 * the rows in order, so every column sums in the reference's order (and
 * the same result for any thread count) while reading rows contiguously. */
static void column_sums_xhat(const float *dy, const float *x, const float *mean,
                             const float *rstd, float *dgamma, float *dbeta, size_t rows,
                             size_t width, int threads)
{
#pragma omp parallel num_threads(NT(threads))
    {
        size_t lo, hi;
        xs_krn_share(width, 16, &lo, &hi);
        for (size_t r = 0; r < rows; r++) {
            const float *d = dy + r * width, *xr = x + r * width;
#pragma omp simd
            for (size_t i = lo; i < hi; i++) {
                dgamma[i] += d[i] * (xr[i] - mean[r]) * rstd[r];
                dbeta[i] += d[i];
            }
        }
    }
}

static void layernorm_bwd(const float *dy, const float *x, const float *gamma,
                          const float *mean, const float *rstd, float *dx, float *dgamma,
                          float *dbeta, size_t rows, size_t width, int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t r = 0; r < rows; r++)
        ln_bwd_row(dy + r * width, x + r * width, gamma, mean[r], rstd[r], dx + r * width, width);
    column_sums_xhat(dy, x, mean, rstd, dgamma, dbeta, rows, width, threads);
}

static void softmax_fwd(const float *x, float *y, float scale, size_t rows, size_t width,
                        int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t r = 0; r < rows; r++)
        softmax_row(x + r * width, y + r * width, scale, width);
}

static void softmax_bwd(const float *dy, const float *y, float *dx, float scale,
                        size_t rows, size_t width, int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t r = 0; r < rows; r++)
        softmax_bwd_row(dy + r * width, y + r * width, dx + r * width, scale, width);
}

static void gelu_fwd(const float *x, float *y, size_t count, int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t i = 0; i < count; i++)
        y[i] = gelu(x[i]);
}

static void gelu_bwd(const float *dy, const float *x, float *dx, size_t count,
                     int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t i = 0; i < count; i++)
        dx[i] = dy[i] * gelu_grad(x[i]);
}

static void bias_add(float *y, const float *b, size_t rows, size_t width, int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t r = 0; r < rows; r++)
#pragma omp simd
        for (size_t i = 0; i < width; i++)
            y[r * width + i] += b[i];
}

static void bias_grad(const float *dy, float *db, size_t rows, size_t width, int threads)
{
    /* columns split over the threads, rows in order: the reference's sums */
#pragma omp parallel num_threads(NT(threads))
    {
        size_t lo, hi;
        xs_krn_share(width, 16, &lo, &hi);
        for (size_t r = 0; r < rows; r++)
#pragma omp simd
            for (size_t i = lo; i < hi; i++)
                db[i] += dy[r * width + i];
    }
}

static void add(const float *a, const float *b, float *y, size_t count, int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t i = 0; i < count; i++)
        y[i] = a[i] + b[i];
}

static void dropout_fwd(const float *x, float *y, uint8_t *keep, float p, uint64_t seed,
                        size_t count, int threads)
{
    float s = 1.0f / (1.0f - p);
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t i = 0; i < count; i++) {
        keep[i] = uniform(seed, i) >= p;
        y[i] = keep[i] ? x[i] * s : 0.0f;
    }
}

static void dropout_bwd(const float *dy, const uint8_t *keep, float *dx, float p,
                        size_t count, int threads)
{
    float s = 1.0f / (1.0f - p);
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t i = 0; i < count; i++)
        dx[i] = keep[i] ? dy[i] * s : 0.0f;
}

/* xs_f32_to_bf16 per element: integer arithmetic the compiler vectorizes */
static void cast_bf16(const float *x, xs_bf16 *y, size_t count, int threads)
{
#pragma omp parallel for num_threads(NT(threads)) schedule(static)
    for (size_t i = 0; i < count; i++)
        y[i] = xs_f32_to_bf16(x[i]);
}

const xs_krn_lops_table TABLE = {
    .isa = ISA,
    .layernorm_fwd = layernorm_fwd,
    .layernorm_bwd = layernorm_bwd,
    .softmax_fwd = softmax_fwd,
    .softmax_bwd = softmax_bwd,
    .gelu_fwd = gelu_fwd,
    .gelu_bwd = gelu_bwd,
    .bias_add = bias_add,
    .bias_grad = bias_grad,
    .add = add,
    .dropout_fwd = dropout_fwd,
    .dropout_bwd = dropout_bwd,
    .cast_bf16 = cast_bf16,
};
