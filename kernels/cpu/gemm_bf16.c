/* gemm_bf16.c — bf16 GEMM with fp32 accumulation on the bf16 units of
 * x86-64 (AMX tiles, AVX512-BF16); every other kernel set converts to fp32
 * while packing and runs the fp32 kernel (gemm_f32.c).
 *
 * Both operands are packed first, in parallel, into panels that the
 * micro-kernels read contiguously (AMX reads A in place when its rows are
 * contiguous and K is a multiple of 32: tile loads take any row stride):
 *   A: for each block of 32 rows, for each 32-deep K step, the 32 x 32
 *      sub-matrix row by row (a 16-row AMX tile is 1 KB at a 64-byte stride);
 *   B: for each block of 32 columns, for each pair of K rows, the 32 columns
 *      with the two K values interleaved ("VNNI", the layout AMX and
 *      VDPBF16PS read) — 128 bytes a pair.
 * Edges are zero-padded, so partial blocks compute exactly. C is produced in
 * 32 x 32 blocks: columns in chunks whose B panels fit in L2, and within a
 * chunk row blocks outer, so each A panel is reused across the chunk; the
 * blocks are spread over the threads. Full blocks are stored straight into
 * C (accumulation loads C into the accumulators first), edge blocks go
 * through a small buffer. */
#include "cpu_gemm.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "scratch.h"
#include "simd.h"

#define TILE 32 /* rows and columns of a C block, and the K step */
/* B panels of a column chunk should stay in a core's L2 (2 MB on the
 * machines this was tuned on; half of it, leaving room for A and C) */
#define L2_PANEL_BYTES (1u << 20)



#ifdef XS_X86
static size_t up32(size_t x)
{
    return (x + TILE - 1) / TILE * TILE;
}

/* ---- packing ------------------------------------------------------------- */

/* Ap panel of row block ib, K step q: Ap + (ib * kq + q) * 1024. A stored
 * transposed (k x m) is copied a K row at a time: 32 contiguous values
 * read, written down a column of the 2 KB block (which stays in L1). */
static void pack_a(int ta, size_t m, size_t k, const xs_bf16 *A, xs_bf16 *Ap, size_t mp,
                   size_t kp, int threads)
{
    size_t kq = kp / TILE;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t ib = 0; ib < mp / TILE; ib++)
        for (size_t q = 0; q < kq; q++) {
            xs_bf16 *dst = Ap + (ib * kq + q) * TILE * TILE;
            size_t i0 = ib * TILE, p0 = q * TILE;
            if (ta) {
                for (size_t c = 0; c < TILE; c++) {
                    int in_k = p0 + c < k;
                    const xs_bf16 *src = in_k ? A + (p0 + c) * m + i0 : A;
                    for (size_t r = 0; r < TILE; r++)
                        dst[r * TILE + c] = in_k && i0 + r < m ? src[r] : 0;
                }
                continue;
            }
            for (size_t r = 0; r < TILE; r++) {
                size_t i = i0 + r;
                xs_bf16 *row = dst + r * TILE;
                if (i < m && p0 + TILE <= k) {
                    memcpy(row, A + i * k + p0, TILE * sizeof *row);
                } else {
                    for (size_t c = 0; c < TILE; c++)
                        row[c] = i < m && p0 + c < k ? A[i * k + p0 + c] : 0;
                }
            }
        }
}

__attribute__((target("avx512f,avx512bw"))) static void vnni_pair_avx512(const xs_bf16 *r0,
                                                                         const xs_bf16 *r1,
                                                                         xs_bf16 *dst)
{
    static const uint16_t lo[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                    37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                    11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    static const uint16_t hi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                    53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                    27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
    __m512i a = _mm512_loadu_si512(r0), b = _mm512_loadu_si512(r1);
    _mm512_storeu_si512(dst, _mm512_permutex2var_epi16(a, _mm512_loadu_si512(lo), b));
    _mm512_storeu_si512(dst + 32, _mm512_permutex2var_epi16(a, _mm512_loadu_si512(hi), b));
}

/* Bp panel of column block jb, K pair t: Bp + (jb * kp / 2 + t) * 64. B
 * stored transposed (n x k) is read a column at a time, 32 K values (64
 * contiguous bytes) per step, and spread into the step's 16 pairs. */
static void pack_b(int tb, size_t n, size_t k, const xs_bf16 *B, xs_bf16 *Bp, size_t np,
                   size_t kp, int threads, int vec)
{
    size_t pairs = kp / 2;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t jb = 0; jb < np / TILE; jb++) {
        size_t j0 = jb * TILE;
        xs_bf16 *panel = Bp + jb * pairs * 2 * TILE;
        if (tb) {
            /* a K pair of one column is adjacent in memory: move it as one
             * 32-bit word */
            for (size_t t0 = 0; t0 < pairs; t0 += TILE / 2)
                for (size_t c = 0; c < TILE; c++) {
                    int in_n = j0 + c < n;
                    const xs_bf16 *src = in_n ? B + (j0 + c) * k : B;
                    for (size_t t = t0; t < t0 + TILE / 2; t++) {
                        xs_bf16 w[2] = {0, 0};
                        if (in_n && 2 * t + 1 < k)
                            memcpy(w, src + 2 * t, sizeof w);
                        else if (in_n && 2 * t < k)
                            w[0] = src[2 * t];
                        memcpy(panel + t * 2 * TILE + 2 * c, w, sizeof w);
                    }
                }
            continue;
        }
        for (size_t t = 0; t < pairs; t++) {
            xs_bf16 *dst = panel + t * 2 * TILE;
            size_t p = 2 * t;
            if (vec && p + 1 < k && j0 + TILE <= n) {
                vnni_pair_avx512(B + p * n + j0, B + (p + 1) * n + j0, dst);
            } else {
                for (size_t c = 0; c < TILE; c++)
                    for (size_t q = 0; q < 2; q++)
                        dst[2 * c + q] = p + q < k && j0 + c < n ? B[(p + q) * n + j0 + c] : 0;
            }
        }
    }
}

/* Write a 32 x 32 block held in buf into C, clipped to m x n. */
static void store_block(float *C, size_t m, size_t n, size_t i0, size_t j0, const float *buf,
                        int accumulate)
{
    for (size_t i = 0; i < TILE && i0 + i < m; i++)
        for (size_t j = 0; j < TILE && j0 + j < n; j++) {
            float v = buf[i * TILE + j];
            C[(i0 + i) * n + j0 + j] = accumulate ? C[(i0 + i) * n + j0 + j] + v : v;
        }
}

/* ---- AMX: four 16 x 16 fp32 accumulator tiles per 32 x 32 block ---------- */

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) tile_config;

/* Every tile 16 rows of 64 bytes (palette 1). */
static const tile_config AMX_CONFIG = {
    1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

/* The tile configuration is loaded here, right before the tile code, and
 * not once per thread: glibc's lazy-binding trampoline (the first call of
 * any not-yet-bound function, e.g. an OpenMP runtime call) saves and
 * restores the vector state without the AMX tile configuration, resetting
 * it, and the next tile instruction then faults. No call happens between
 * here and the last tile instruction. c/ldc: where the accumulators start
 * and end (C itself for full blocks, a buffer at the edges). */
__attribute__((target("amx-tile,amx-bf16,avx512f,prfchw"))) static void
amx_block(const xs_bf16 *a, size_t lda, size_t a_step, const xs_bf16 *b, size_t kq, float *c,
          size_t ldc, int load_c)
{
    /* Ask for C's 64 lines for writing now, so that their misses overlap
     * the mainloop: a tile store to a line not in cache waits for it, one
     * line after another (measured: a cold 1 MB C tripled a 1024x256x256
     * GEMM; with the prefetch it costs a third more than a warm one). */
    for (size_t r = 0; r < TILE; r++) {
        __builtin_prefetch(c + r * ldc, 1, 3);
        __builtin_prefetch(c + r * ldc + 16, 1, 3);
    }
    _tile_loadconfig(&AMX_CONFIG);
    const size_t cs = ldc * sizeof(float);
    if (load_c) {
        _tile_loadd(0, c, cs);
        _tile_loadd(1, c + 16, cs);
        _tile_loadd(2, c + 16 * ldc, cs);
        _tile_loadd(3, c + 16 * ldc + 16, cs);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (size_t q = 0; q < kq; q++) {
        const xs_bf16 *aq = a + q * a_step, *bq = b + q * (TILE / 2) * 2 * TILE;
        _tile_loadd(4, aq, lda * sizeof(xs_bf16));
        _tile_loadd(5, aq + 16 * lda, lda * sizeof(xs_bf16));
        _tile_loadd(6, bq, 128);
        _tile_loadd(7, bq + 32, 128);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, c, cs);
    _tile_stored(1, c + 16, cs);
    _tile_stored(2, c + 16 * ldc, cs);
    _tile_stored(3, c + 16 * ldc + 16, cs);
    _tile_release();
}

/* ---- AVX512-BF16: 8 rows x 32 columns at a time, 16 zmm accumulators ----- */

__attribute__((target("avx512f,avx512bf16"))) static void
avx512bf16_block(const xs_bf16 *a, const xs_bf16 *b, size_t kq, float *c, size_t ldc,
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
        for (size_t q = 0; q < kq; q++) {
            const xs_bf16 *aq = a + q * TILE * TILE + r * TILE;
            const xs_bf16 *bq = b + q * (TILE / 2) * 2 * TILE;
            for (size_t t = 0; t < TILE / 2; t++) {
                __m512bh b0 = (__m512bh)_mm512_loadu_si512(bq + t * 2 * TILE);
                __m512bh b1 = (__m512bh)_mm512_loadu_si512(bq + t * 2 * TILE + 32);
#pragma GCC unroll 8
                for (int i = 0; i < 8; i++) {
                    uint32_t pair;
                    memcpy(&pair, aq + (size_t)i * TILE + 2 * t, sizeof pair);
                    __m512bh av = (__m512bh)_mm512_set1_epi32((int)pair);
                    acc[i][0] = _mm512_dpbf16_ps(acc[i][0], av, b0);
                    acc[i][1] = _mm512_dpbf16_ps(acc[i][1], av, b1);
                }
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

/* The GEMM on AMX (path 2) or AVX512-BF16 (path 1). */
static void gemm_bf16_units(const xs_cpu_features *f, int ta, int tb, size_t m, size_t n,
                            size_t k, const xs_bf16 *A, const xs_bf16 *B, float *C,
                            int accumulate, int threads)
{
    if (m == 0 || n == 0)
        return;
    int nt = threads > 0 ? threads : 1;
    size_t mp = up32(m), np = up32(n), kp = up32(k > 0 ? k : 1), kq = kp / TILE;
    int path = f->amx_bf16 ? 2 : 1;
    /* AMX tile loads read A in place when its rows hold whole K steps */
    int direct = path == 2 && !ta && k % TILE == 0 && m % TILE == 0;
    xs_bf16 *Ap = direct ? NULL : xs_krn_scratch(XS_SCRATCH_A, mp * kp * sizeof *Ap);
    xs_bf16 *Bp = xs_krn_scratch(XS_SCRATCH_B, kp * np * sizeof *Bp);
    if ((!direct && !Ap) || !Bp) { /* out of memory: the unpacked reference still answers */
        xs_krn_gemm_bf16_ref(ta, tb, m, n, k, A, B, C, accumulate);
        return;
    }
    if (!direct)
        pack_a(ta, m, k, A, Ap, mp, kp, nt);
    pack_b(tb, n, k, B, Bp, np, kp, nt, f->avx512);
    size_t bm = mp / TILE, bn = np / TILE;
    size_t chunk = L2_PANEL_BYTES / (kp * TILE * sizeof(xs_bf16));
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
                    int load_c = full && accumulate;
                    const xs_bf16 *b = Bp + jb * kq * TILE * TILE;
                    if (path == 2 && direct)
                        amx_block(A + i0 * k, k, TILE, b, kq, c, ldc, load_c);
                    else if (path == 2)
                        amx_block(Ap + ib * kq * TILE * TILE, TILE, TILE * TILE, b, kq, c, ldc,
                                  load_c);
                    else
                        avx512bf16_block(Ap + ib * kq * TILE * TILE, b, kq, c, ldc, load_c);
                    if (!full)
                        store_block(C, m, n, i0, j0, buf, accumulate);
                }
        }
    }
}
#endif

const char *xs_krn_gemm_bf16_path(void)
{
    return xs_cpu_bf16_path();
}

void xs_krn_gemm_bf16(int ta, int tb, size_t m, size_t n, size_t k, const xs_bf16 *A,
                      const xs_bf16 *B, float *C, int accumulate, int threads)
{
    const xs_cpu_features *f = xs_cpu_features_get();
#ifdef XS_X86
    if (f->amx_bf16 || f->avx512_bf16) {
        gemm_bf16_units(f, ta, tb, m, n, k, A, B, C, accumulate, threads);
        return;
    }
#endif
    (void)f;
    xs_krn_gemm_bf16_on_f32(ta, tb, m, n, k, A, B, C, accumulate, threads);
}
