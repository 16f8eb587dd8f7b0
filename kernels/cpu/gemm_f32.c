/* gemm_f32.c — fp32 GEMM. A is packed in panels of 32 rows (for each K
 * index the 32 row values side by side, so a micro-kernel's broadcasts read
 * contiguous memory), B in panels of 32 columns (each K index's 32 values,
 * 128 contiguous bytes). Blocks of 32 x 32 of C are spread over the
 * threads, each computed 8 rows at a time with 16 AVX-512 FMA accumulators
 * and stored straight into C when the block is whole. */
#include "cpu_gemm.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "scratch.h"

#define TILE 32

static size_t up(size_t x, size_t q)
{
    return (x + q - 1) / q * q;
}

void xs_krn_gemm_f32_ref(int ta, int tb, size_t m, size_t n, size_t k, const float *A,
                         const float *B, float *C, int accumulate)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float s = 0;
            for (size_t p = 0; p < k; p++)
                s += A[xs_krn_a_index(ta, m, k, i, p)] * B[xs_krn_b_index(tb, n, k, p, j)];
            C[i * n + j] = accumulate ? C[i * n + j] + s : s;
        }
}

/* Ap panel ib: Ap + ib * k * 32, element (p, r) at p * 32 + r; copied in
 * 32 x 32 squares so both the reads and the writes stay within a few KB */
static void pack_a(int ta, size_t m, size_t k, const float *A, float *Ap, size_t mp, int nt)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t ib = 0; ib < mp / TILE; ib++) {
        float *dst = Ap + ib * k * TILE;
        for (size_t p0 = 0; p0 < k; p0 += TILE) {
            size_t pe = p0 + TILE < k ? p0 + TILE : k;
            for (size_t r = 0; r < TILE; r++) {
                size_t i = ib * TILE + r;
                for (size_t p = p0; p < pe; p++)
                    dst[p * TILE + r] = i >= m ? 0 : A[xs_krn_a_index(ta, m, k, i, p)];
            }
        }
    }
}

/* Bp panel jb: Bp + jb * k * 32, element (p, c) at p * 32 + c. B stored
 * transposed (n x k) is copied in 32 x 32 squares like A. */
static void pack_b(int tb, size_t n, size_t k, const float *B, float *Bp, size_t np, int nt)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t jb = 0; jb < np / TILE; jb++) {
        float *dst = Bp + jb * k * TILE;
        size_t j0 = jb * TILE;
        if (tb) {
            for (size_t p0 = 0; p0 < k; p0 += TILE) {
                size_t pe = p0 + TILE < k ? p0 + TILE : k;
                for (size_t c = 0; c < TILE; c++) {
                    int in_n = j0 + c < n;
                    const float *src = in_n ? B + (j0 + c) * k : B;
                    for (size_t p = p0; p < pe; p++)
                        dst[p * TILE + c] = in_n ? src[p] : 0;
                }
            }
            continue;
        }
        for (size_t p = 0; p < k; p++) {
            if (j0 + TILE <= n)
                memcpy(dst + p * TILE, B + p * n + j0, TILE * sizeof *dst);
            else
                for (size_t c = 0; c < TILE; c++)
                    dst[p * TILE + c] = j0 + c < n ? B[p * n + j0 + c] : 0;
        }
    }
}

__attribute__((target("avx512f"))) static void block_avx512(const float *a, const float *b,
                                                            size_t k, float *c, size_t ldc,
                                                            int load_c)
{
    for (size_t r = 0; r < TILE; r += 8) {
        __m512 acc[8][2]; /* fully unrolled below, so it lives in 16 registers */
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            float *crow = c + (r + (size_t)i) * ldc;
            acc[i][0] = load_c ? _mm512_loadu_ps(crow) : _mm512_setzero_ps();
            acc[i][1] = load_c ? _mm512_loadu_ps(crow + 16) : _mm512_setzero_ps();
        }
        for (size_t p = 0; p < k; p++) {
            __m512 b0 = _mm512_loadu_ps(b + p * TILE), b1 = _mm512_loadu_ps(b + p * TILE + 16);
            const float *ap = a + p * TILE + r;
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++) {
                __m512 av = _mm512_set1_ps(ap[i]);
                acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
                acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
            }
        }
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            float *crow = c + (r + (size_t)i) * ldc;
            _mm512_storeu_ps(crow, acc[i][0]);
            _mm512_storeu_ps(crow + 16, acc[i][1]);
        }
    }
}

static void block_portable(const float *a, const float *b, size_t k, float *c, size_t ldc,
                           int load_c)
{
    for (size_t i = 0; i < TILE; i++) {
        float acc[TILE];
        for (size_t j = 0; j < TILE; j++)
            acc[j] = load_c ? c[i * ldc + j] : 0;
        for (size_t p = 0; p < k; p++) {
            float av = a[p * TILE + i];
            for (size_t j = 0; j < TILE; j++)
                acc[j] += av * b[p * TILE + j];
        }
        for (size_t j = 0; j < TILE; j++)
            c[i * ldc + j] = acc[j];
    }
}

void xs_krn_gemm_f32(int ta, int tb, size_t m, size_t n, size_t k, const float *A,
                     const float *B, float *C, int accumulate, int threads)
{
    if (m == 0 || n == 0)
        return;
    int nt = threads > 0 ? threads : 1;
    size_t mp = up(m, TILE), np = up(n, TILE);
    float *Ap = xs_krn_scratch(XS_SCRATCH_A, mp * k * sizeof(float) + 64);
    float *Bp = xs_krn_scratch(XS_SCRATCH_B, k * np * sizeof(float) + 64);
    if (!Ap || !Bp) { /* out of memory: the unpacked reference still answers */
        xs_krn_gemm_f32_ref(ta, tb, m, n, k, A, B, C, accumulate);
        return;
    }
    pack_a(ta, m, k, A, Ap, mp, nt);
    pack_b(tb, n, k, B, Bp, np, nt);
    int vec = xs_cpu_features_get()->avx512;
    size_t bm = mp / TILE, bn = np / TILE;
    /* columns in chunks whose B panels stay in L2; rows outer within one */
    size_t chunk = (1u << 20) / (k * TILE * sizeof(float) + 1);
    if (chunk < 1)
        chunk = 1;
#pragma omp parallel num_threads(nt)
    {
        float buf[TILE * TILE] __attribute__((aligned(64)));
        for (size_t jc = 0; jc < bn; jc += chunk) {
            size_t je = jc + chunk < bn ? jc + chunk : bn;
#pragma omp for schedule(static) collapse(2)
            for (size_t ib = 0; ib < bm; ib++)
                for (size_t jb = jc; jb < je; jb++) {
                size_t i0 = ib * TILE, j0 = jb * TILE;
                int full = i0 + TILE <= m && j0 + TILE <= n;
                float *c = full ? C + i0 * n + j0 : buf;
                size_t ldc = full ? n : TILE;
                const float *a = Ap + ib * k * TILE, *b = Bp + jb * k * TILE;
                if (vec)
                    block_avx512(a, b, k, c, ldc, full && accumulate);
                else
                    block_portable(a, b, k, c, ldc, full && accumulate);
                if (!full)
                    for (size_t i = 0; i < TILE && i0 + i < m; i++)
                        for (size_t j = 0; j < TILE && j0 + j < n; j++) {
                            float *d = &C[(i0 + i) * n + j0 + j];
                            *d = accumulate ? *d + buf[i * TILE + j] : buf[i * TILE + j];
                        }
                }
        }
    }
}
