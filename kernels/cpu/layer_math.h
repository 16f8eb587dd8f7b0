/* layer_math.h — the per-row and per-element math of the layer kernels,
 * shared by the serial references (layer_ops.c) and the timed versions
 * compiled once per vector ISA (layer_ops_vec.c), so every version runs
 * the same operations in the same order. Private to kernels/cpu. */
#ifndef XS_KRN_LAYER_MATH_H
#define XS_KRN_LAYER_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define NT(t) ((t) > 0 ? (t) : 1)

static inline void ln_row(const float *x, const float *gamma, const float *beta, float *y,
                          float *mean, float *rstd, size_t width)
{
    float m = 0, v = 0;
    for (size_t i = 0; i < width; i++)
        m += x[i];
    m /= (float)width;
    for (size_t i = 0; i < width; i++)
        v += (x[i] - m) * (x[i] - m);
    v /= (float)width;
    float r = 1.0f / sqrtf(v + 1e-5f);
    for (size_t i = 0; i < width; i++)
        y[i] = (x[i] - m) * r * gamma[i] + beta[i];
    *mean = m;
    *rstd = r;
}

static inline void ln_bwd_row(const float *dy, const float *x, const float *gamma, float mean,
                              float rstd, float *dx, size_t width)
{
    float sum_g = 0, sum_gx = 0;
    for (size_t i = 0; i < width; i++) {
        float xh = (x[i] - mean) * rstd, g = dy[i] * gamma[i];
        sum_g += g;
        sum_gx += g * xh;
    }
    sum_g /= (float)width;
    sum_gx /= (float)width;
    for (size_t i = 0; i < width; i++) {
        float xh = (x[i] - mean) * rstd;
        dx[i] = rstd * (dy[i] * gamma[i] - sum_g - xh * sum_gx);
    }
}

static inline void softmax_row(const float *x, float *y, float scale, size_t width)
{
    float mx = -INFINITY, sum = 0;
    for (size_t i = 0; i < width; i++)
        mx = fmaxf(mx, scale * x[i]);
    for (size_t i = 0; i < width; i++) {
        y[i] = expf(scale * x[i] - mx);
        sum += y[i];
    }
    float inv = 1.0f / sum;
    for (size_t i = 0; i < width; i++)
        y[i] *= inv;
}

static inline void softmax_bwd_row(const float *dy, const float *y, float *dx, float scale,
                                   size_t width)
{
    float dot = 0;
    for (size_t i = 0; i < width; i++)
        dot += dy[i] * y[i];
    for (size_t i = 0; i < width; i++)
        dx[i] = scale * y[i] * (dy[i] - dot);
}

static inline float gelu(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678f));
}

static inline float gelu_grad(float x)
{
    float cdf = 0.5f * (1.0f + erff(x * 0.70710678f));
    float pdf = 0.39894228f * expf(-0.5f * x * x);
    return cdf + x * pdf;
}

/* splitmix64 of (seed, index): a counter-based generator, the same draw for
 * an element whichever thread or order computes it */
static inline float uniform(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

#endif
