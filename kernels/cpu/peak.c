/* peak.c — see peak.h. */
#include "peak.h"

#include <stdint.h>

#include "cpu_features.h"
#include "simd.h"

#ifdef XS_X86

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) peak_tile_config;

static const peak_tile_config PEAK_CONFIG = {
    1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

/* four independent accumulators hide the TMUL latency; no call inside
 * (the tile configuration must survive, see gemm_bf16.c) */
__attribute__((target("amx-tile,amx-bf16"))) static void amx_chain(long iters)
{
    _tile_loadconfig(&PEAK_CONFIG); /* loading a configuration zeroes the tiles */
    for (long i = 0; i < iters; i++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_release();
}


/* 12 independent chains (2 FMA ports x 4-cycle latency, with margin), each
 * a register of its own. */
__attribute__((target("avx512f"))) static float fma_chain(long iters)
{
    __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-6f);
    __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2),
           a3 = _mm512_set1_ps(3), a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5),
           a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7), a8 = _mm512_set1_ps(8),
           a9 = _mm512_set1_ps(9), a10 = _mm512_set1_ps(10), a11 = _mm512_set1_ps(11);
    for (long i = 0; i < iters; i++) {
        a0 = _mm512_fmadd_ps(a0, x, y);
        a1 = _mm512_fmadd_ps(a1, x, y);
        a2 = _mm512_fmadd_ps(a2, x, y);
        a3 = _mm512_fmadd_ps(a3, x, y);
        a4 = _mm512_fmadd_ps(a4, x, y);
        a5 = _mm512_fmadd_ps(a5, x, y);
        a6 = _mm512_fmadd_ps(a6, x, y);
        a7 = _mm512_fmadd_ps(a7, x, y);
        a8 = _mm512_fmadd_ps(a8, x, y);
        a9 = _mm512_fmadd_ps(a9, x, y);
        a10 = _mm512_fmadd_ps(a10, x, y);
        a11 = _mm512_fmadd_ps(a11, x, y);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

/* The same 12 chains on ymm registers (AVX2 + FMA: 2 ports x 4-5 cycles). */
__attribute__((target("avx2,fma"))) static float fma_chain_avx2(long iters)
{
    __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-6f), a[12];
    for (int j = 0; j < 12; j++)
        a[j] = _mm256_set1_ps((float)j);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 12
        for (int j = 0; j < 12; j++)
            a[j] = _mm256_fmadd_ps(a[j], x, y);
    }
    __m256 s = a[0];
    for (int j = 1; j < 12; j++)
        s = _mm256_add_ps(s, a[j]);
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    return lanes[0] + lanes[7];
}
#endif

#ifdef XS_NEON
/* 16 chains of 4-lane FMAs (up to 4 FMA pipes x 4 cycles of latency), 16
 * of the 32 registers. */
static float fma_chain_neon(long iters)
{
    float32x4_t x = vdupq_n_f32(0.999f), y = vdupq_n_f32(1e-6f), a[16];
    for (int j = 0; j < 16; j++)
        a[j] = vdupq_n_f32((float)j);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++)
            a[j] = vfmaq_f32(y, a[j], x);
    }
    float32x4_t s = a[0];
    for (int j = 1; j < 16; j++)
        s = vaddq_f32(s, a[j]);
    return vaddvq_f32(s);
}
#endif

/* 12 scalar chains of a multiply and an add (no vector unit assumed; the
 * compiler may pack them into its base ISA's vectors, which the portable
 * kernels get too). */
static float chain_portable(long iters)
{
    volatile float seed = 0.999f;
    float x = seed, y = 1e-6f, a[12];
    for (int j = 0; j < 12; j++)
        a[j] = (float)j;
    for (long i = 0; i < iters; i++)
        for (int j = 0; j < 12; j++)
            a[j] = a[j] * x + y;
    float s = 0;
    for (int j = 0; j < 12; j++)
        s += a[j];
    return s;
}

double xs_krn_peak_amx_bf16(long iters, int threads)
{
#ifdef XS_X86
    if (!xs_cpu_features_get()->amx_bf16)
        return 0;
    int nt = threads > 0 ? threads : 1;
#pragma omp parallel num_threads(nt)
    amx_chain(iters);
    return 4.0 * iters * (2.0 * 16 * 16 * 32) * nt;
#else
    (void)iters;
    (void)threads;
    return 0;
#endif
}

/* FLOPs of one thread's chain on the kernel set in force; the chain runs
 * when run is set. */
static double chain(const xs_cpu_features *f, long iters, int run, float *out)
{
    float v = 0;
    double flops;
#ifdef XS_X86
    if (f->avx512) {
        if (run)
            v = fma_chain(iters);
        flops = 12.0 * 16 * 2 * iters;
    } else if (f->avx2) {
        if (run)
            v = fma_chain_avx2(iters);
        flops = 12.0 * 8 * 2 * iters;
    } else
#endif
#ifdef XS_NEON
    if (f->neon) {
        if (run)
            v = fma_chain_neon(iters);
        flops = 16.0 * 4 * 2 * iters;
    } else
#endif
    {
        if (run)
            v = chain_portable(iters);
        flops = 12.0 * 2 * iters;
    }
    (void)f;
    *out = v;
    return flops;
}

double xs_krn_peak_fma_f32(long iters, int threads)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    int nt = threads > 0 ? threads : 1;
    volatile float sink = 0;
#pragma omp parallel num_threads(nt)
    {
        float v;
        chain(f, iters, 1, &v);
#pragma omp atomic
        sink += v;
    }
    (void)sink;
    float unused;
    return chain(f, iters, 0, &unused) * nt;
}

const char *xs_krn_peak_fma_name(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    return f->avx512 ? "AVX-512 fp32 FMA" : f->avx2 ? "AVX2 fp32 FMA" : f->neon ? "NEON fp32 FMA"
                                                                           : "portable fp32 mul+add";
}
