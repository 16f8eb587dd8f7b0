/* peak.c — see peak.h. */
#include "peak.h"

#include <immintrin.h>
#include <stdint.h>

#include "cpu_features.h"

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

double xs_krn_peak_amx_bf16(long iters, int threads)
{
    if (!xs_cpu_features_get()->amx_bf16)
        return 0;
    int nt = threads > 0 ? threads : 1;
#pragma omp parallel num_threads(nt)
    amx_chain(iters);
    return 4.0 * iters * (2.0 * 16 * 16 * 32) * nt;
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

double xs_krn_peak_fma_f32(long iters, int threads)
{
    if (!xs_cpu_features_get()->avx512)
        return 0;
    int nt = threads > 0 ? threads : 1;
    volatile float sink = 0;
#pragma omp parallel num_threads(nt)
    {
        float v = fma_chain(iters);
#pragma omp atomic
        sink += v;
    }
    (void)sink;
    return 12.0 * 16 * 2 * iters * nt;
}
