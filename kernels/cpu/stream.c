/* stream.c — see stream.h. */
#include "stream.h"

#include <immintrin.h>

#include "cpu_features.h"
#include "share.h"

__attribute__((target("avx512f"))) static void triad_avx512(float *a, const float *b,
                                                            const float *c, float s, size_t lo,
                                                            size_t hi)
{
    __m512 vs = _mm512_set1_ps(s);
    size_t i = lo;
    for (; i + 16 <= hi; i += 16)
        _mm512_storeu_ps(a + i, _mm512_add_ps(_mm512_loadu_ps(b + i),
                                              _mm512_mul_ps(vs, _mm512_loadu_ps(c + i))));
    for (; i < hi; i++)
        a[i] = b[i] + s * c[i];
}

void xs_krn_triad(float *a, const float *b, const float *c, float s, size_t count, int threads)
{
    int vec = xs_cpu_features_get()->avx512;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        size_t lo, hi;
        xs_krn_share(count, 16, &lo, &hi);
        if (vec)
            triad_avx512(a, b, c, s, lo, hi);
        else
            for (size_t i = lo; i < hi; i++)
                a[i] = b[i] + s * c[i];
    }
}

__attribute__((target("avx512f"))) static double read_avx512(const float *x, size_t lo,
                                                             size_t hi)
{
    /* four independent accumulators keep the loads in flight */
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = lo;
    for (; i + 64 <= hi; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + i));
        s1 = _mm512_add_ps(s1, _mm512_loadu_ps(x + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_loadu_ps(x + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_loadu_ps(x + i + 48));
    }
    double sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    for (; i < hi; i++)
        sum += x[i];
    return sum;
}

double xs_krn_read(const float *x, size_t count, int threads)
{
    int vec = xs_cpu_features_get()->avx512;
    double total = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : 1) reduction(+ : total)
    {
        size_t lo, hi;
        xs_krn_share(count, 64, &lo, &hi);
        if (vec) {
            total += read_avx512(x, lo, hi);
        } else {
            double s = 0;
            for (size_t i = lo; i < hi; i++)
                s += x[i];
            total += s;
        }
    }
    return total;
}
