/* stream.c — see stream.h. Vector loops for the kernel set in force
 * (AVX-512, AVX2, NEON), the scalar loop elsewhere. */
#include "stream.h"

#include "cpu_features.h"
#include "share.h"
#include "simd.h"

#ifdef XS_X86
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

__attribute__((target("avx2"))) static void triad_avx2(float *a, const float *b, const float *c,
                                                       float s, size_t lo, size_t hi)
{
    __m256 vs = _mm256_set1_ps(s);
    size_t i = lo;
    for (; i + 8 <= hi; i += 8)
        _mm256_storeu_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i),
                                              _mm256_mul_ps(vs, _mm256_loadu_ps(c + i))));
    for (; i < hi; i++)
        a[i] = b[i] + s * c[i];
}
#endif

#ifdef XS_NEON
static void triad_neon(float *a, const float *b, const float *c, float s, size_t lo, size_t hi)
{
    float32x4_t vs = vdupq_n_f32(s);
    size_t i = lo;
    for (; i + 4 <= hi; i += 4)
        vst1q_f32(a + i, vaddq_f32(vld1q_f32(b + i), vmulq_f32(vs, vld1q_f32(c + i))));
    for (; i < hi; i++)
        a[i] = b[i] + s * c[i];
}
#endif

void xs_krn_triad(float *a, const float *b, const float *c, float s, size_t count, int threads)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    (void)f;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        size_t lo, hi;
        xs_krn_share(count, 16, &lo, &hi);
#ifdef XS_X86
        if (f->avx512)
            triad_avx512(a, b, c, s, lo, hi);
        else if (f->avx2)
            triad_avx2(a, b, c, s, lo, hi);
        else
#endif
#ifdef XS_NEON
        if (f->neon)
            triad_neon(a, b, c, s, lo, hi);
        else
#endif
            for (size_t i = lo; i < hi; i++)
                a[i] = b[i] + s * c[i];
    }
}

#ifdef XS_X86
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

__attribute__((target("avx2"))) static double read_avx2(const float *x, size_t lo, size_t hi)
{
    /* eight accumulators: two loads a cycle, add latency 3-4 cycles */
    __m256 s[8];
    for (int j = 0; j < 8; j++)
        s[j] = _mm256_setzero_ps();
    size_t i = lo;
    for (; i + 64 <= hi; i += 64)
        for (int j = 0; j < 8; j++)
            s[j] = _mm256_add_ps(s[j], _mm256_loadu_ps(x + i + 8 * j));
    __m256 t = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3])),
                             _mm256_add_ps(_mm256_add_ps(s[4], s[5]), _mm256_add_ps(s[6], s[7])));
    float lanes[8];
    _mm256_storeu_ps(lanes, t);
    double sum = 0;
    for (int j = 0; j < 8; j++)
        sum += lanes[j];
    for (; i < hi; i++)
        sum += x[i];
    return sum;
}
#endif

#ifdef XS_NEON
static double read_neon(const float *x, size_t lo, size_t hi)
{
    float32x4_t s[8];
    for (int j = 0; j < 8; j++)
        s[j] = vdupq_n_f32(0);
    size_t i = lo;
    for (; i + 32 <= hi; i += 32)
        for (int j = 0; j < 8; j++)
            s[j] = vaddq_f32(s[j], vld1q_f32(x + i + 4 * j));
    double sum = 0;
    for (int j = 0; j < 8; j++)
        sum += vaddvq_f32(s[j]);
    for (; i < hi; i++)
        sum += x[i];
    return sum;
}
#endif

double xs_krn_read(const float *x, size_t count, int threads)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    (void)f;
    double total = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : 1) reduction(+ : total)
    {
        size_t lo, hi;
        xs_krn_share(count, 64, &lo, &hi);
#ifdef XS_X86
        if (f->avx512)
            total += read_avx512(x, lo, hi);
        else if (f->avx2)
            total += read_avx2(x, lo, hi);
        else
#endif
#ifdef XS_NEON
        if (f->neon)
            total += read_neon(x, lo, hi);
        else
#endif
        {
            double s = 0;
            for (size_t i = lo; i < hi; i++)
                s += x[i];
            total += s;
        }
    }
    return total;
}
