/* gemm_f32.c — fp32 GEMM, and the bf16 GEMM of kernel sets without a bf16
 * unit (operands converted to fp32 while packed: bf16 -> fp32 is exact).
 * A is packed in panels of 32 rows (24 for avx2), each panel in strips of
 * rows stored one after the other (the whole panel for avx512, neon and
 * portable; 6 rows for avx2, the rows of its micro-kernel), a strip holding
 * for each K index its row values side by side, so a micro-kernel's
 * broadcasts read contiguous memory. B is packed in panels of 32 columns
 * (each K index's 32 values, 128 contiguous bytes). Blocks of C (a panel's
 * rows x 32) are spread over the threads and stored straight into C when
 * the block is whole. A block is computed by the kernel set's micro-kernel:
 *   avx512: 8 rows x 32 columns at a time, 16 zmm accumulators;
 *   avx2:   6 rows x 16 columns, 12 ymm accumulators of the 16 registers,
 *           over the whole K slice (its 6-row strip of A, 6 KB, and half
 *           of the B panel slice, 16 KB, stay in L1), C added at the end;
 *   neon:   8 rows x 8 columns, 16 of the 32 q registers, lane FMAs;
 *   portable: plain loops the compiler vectorizes for the base ISA. */
#include "cpu_gemm.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_features.h"
#include "scratch.h"
#include "simd.h"

#define TILE 32
/* K elements per chunk of the neon block: a chunk of an A panel and of a B
 * panel, 128 x 128 bytes each, is 32 KB (Neoverse cores have 64 KB of L1) */
#define KC 128
/* Rows of an A panel for the avx2 set: four strips of AVX2_MS rows, so
 * that no strip runs with fewer than the 12 accumulators that hide the FMA
 * latency */
#define AVX2_MT 24
#define AVX2_MS 6
/* The K slice of the plans whose threads pack as they go: an A or B panel's
 * slice (at most 32 x 256 x 4 B = 32 KB) is one thread's buffer */
#define KB_INLINE 256
/* The avx2 set's K slice when A and B are packed first: each pass over C
 * (k / kb of them) loads and stores it, which cost more on Zen 3 than the
 * strip's half B panel slice (32 KB) spilling from L1 to L2 */
#define AVX2_KB 512

static size_t up(size_t x, size_t q)
{
    return (x + q - 1) / q * q;
}



/* Element i of an fp32 or bf16 array, as fp32. */
static inline float elem(const void *x, size_t i, int bf16)
{
    return bf16 ? xs_bf16_to_f32(((const xs_bf16 *)x)[i]) : ((const float *)x)[i];
}

#ifdef XS_X86
/* Eight K indices of a 6-row strip: dst[q * 6 + r] = src[r * lds + q] for
 * r < 6, q < 8, as 48 contiguous floats (an 8 x 8 transpose with two zero
 * rows). Each K index is stored as 8 floats, the next store overwriting the
 * 2 extra; the last as 6 (tail), where nothing of this strip follows. */
__attribute__((target("avx2"))) static void strip6_avx2(const float *src, size_t lds,
                                                       float *dst, int tail)
{
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 6; i++)
        r[i] = _mm256_loadu_ps(src + (size_t)i * lds);
    r[6] = r[7] = _mm256_setzero_ps();
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
    }
    __m256 col[8]; /* K index q's six values in lanes 0..5 */
    for (int i = 0; i < 4; i++) {
        col[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        col[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
    for (int q = 0; q < 7; q++)
        _mm256_storeu_ps(dst + q * 6, col[q]);
    if (tail) {
        _mm_storeu_ps(dst + 42, _mm256_castps256_ps128(col[7]));
        _mm_storel_pi((__m64 *)(dst + 46), _mm256_extractf128_ps(col[7], 1));
    } else {
        _mm256_storeu_ps(dst + 42, col[7]);
    }
}
#endif

/* How an A panel is laid out: mt rows, in strips of ms rows (mt a multiple
 * of ms) each holding span K indices; element (row r, K offset q) at
 * a_index. */
typedef struct {
    size_t mt, ms, span;
} a_layout;

/* The distance between a panel's strips (a block's `as`) */
static inline size_t a_strips_apart(const a_layout *l)
{
    return l->span * l->ms;
}

static inline size_t a_index(const a_layout *l, size_t r, size_t q)
{
    return r / l->ms * a_strips_apart(l) + q * l->ms + r % l->ms;
}

/* Where panel ib's K offset q starts, its panels one after the other */
static size_t a_panel_at(const a_layout *l, size_t ib, size_t q)
{
    return ib * l->span * l->mt + a_index(l, 0, q);
}

/* Rows [ib * mt, ib * mt + mt) of op(A), K indices [k0, k1), packed at dst
 * (K offset q = p - k0; rows past m are zeros), strip by strip, each in
 * pieces of 32 K indices so that the reads stay within a few KB. vec6: a
 * row-major fp32 A is transposed with AVX2 eight K indices at a time (the
 * avx2 set's plan; the avx512 one packs as it was calibrated, element by
 * element). */
static void pack_a_slice(int ta, size_t m, size_t k, const void *A, int bf16, size_t ib,
                         const a_layout *l, size_t k0, size_t k1, float *dst, int vec6)
{
    for (size_t r0 = 0; r0 < l->mt; r0 += l->ms)
        for (size_t p0 = k0; p0 < k1; p0 += TILE) {
            size_t pe = p0 + TILE < k1 ? p0 + TILE : k1;
            size_t i0 = ib * l->mt + r0, p = p0;
#ifdef XS_X86
            if (vec6 && !ta && !bf16 && i0 + AVX2_MS <= m)
                for (; p + 8 <= pe; p += 8)
                    strip6_avx2((const float *)A + i0 * k + p, k, dst + a_index(l, r0, p - k0),
                                p + 8 == k0 + l->span);
#else
            (void)vec6;
            (void)i0;
#endif
            for (size_t r = r0; r < r0 + l->ms; r++) {
                size_t i = ib * l->mt + r;
                for (size_t q = p; q < pe; q++)
                    dst[a_index(l, r, q - k0)] =
                        i >= m ? 0 : elem(A, xs_krn_a_index(ta, m, k, i, q), bf16);
            }
        }
}

/* All of A (l->span == k). */
static void pack_a(int ta, size_t m, size_t k, const void *A, int bf16, float *Ap, size_t mp,
                   const a_layout *l, int nt, int vec6)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t ib = 0; ib < mp / l->mt; ib++)
        pack_a_slice(ta, m, k, A, bf16, ib, l, 0, k, Ap + a_panel_at(l, ib, 0), vec6);
}

/* Columns [jb * 32, jb * 32 + 32) of op(B), K indices [k0, k1), packed as
 * one panel slice: element (p, c) at (p - k0) * 32 + c (columns past n are
 * zeros). B stored transposed (n x k) is copied in 32 x 32 squares like A. */
static void pack_b_slice(int tb, size_t n, size_t k, const void *B, int bf16, size_t jb,
                         size_t k0, size_t k1, float *dst)
{
    size_t j0 = jb * TILE;
    if (tb) {
        for (size_t p0 = k0; p0 < k1; p0 += TILE) {
            size_t pe = p0 + TILE < k1 ? p0 + TILE : k1;
            for (size_t c = 0; c < TILE; c++) {
                int in_n = j0 + c < n;
                for (size_t p = p0; p < pe; p++)
                    dst[(p - k0) * TILE + c] = in_n ? elem(B, (j0 + c) * k + p, bf16) : 0;
            }
        }
        return;
    }
    for (size_t p = k0; p < k1; p++) {
        if (!bf16 && j0 + TILE <= n)
            memcpy(dst + (p - k0) * TILE, (const float *)B + p * n + j0, TILE * sizeof *dst);
        else
            for (size_t c = 0; c < TILE; c++)
                dst[(p - k0) * TILE + c] = j0 + c < n ? elem(B, p * n + j0 + c, bf16) : 0;
    }
}

/* All of B, panel jb at Bp + jb * k * 32. */
static void pack_b(int tb, size_t n, size_t k, const void *B, int bf16, float *Bp, size_t np,
                   int nt)
{
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t jb = 0; jb < np / TILE; jb++)
        pack_b_slice(tb, n, k, B, bf16, jb, 0, k, Bp + jb * k * TILE);
}

/* A block's micro-kernel: C[mt x 32] (= C when load_c) + the panels' product
 * over k; a: the panel at the slice's first K index, as: the distance
 * between its strips (ignored where a panel is one strip); c/ldc: where C
 * starts and its row stride. */
typedef void (*block_fn)(const float *a, size_t as, const float *b, size_t k, float *c,
                         size_t ldc, int load_c);

#ifdef XS_X86
__attribute__((target("avx512f"))) static void block_avx512(const float *a, size_t as,
                                                            const float *b, size_t k, float *c,
                                                            size_t ldc, int load_c)
{
    (void)as;
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

/* 6 rows x 16 columns over k K indices: 12 ymm accumulators, two B vectors
 * and one broadcast, 15 of the 16 registers. a: the strip (6 values a K
 * index); b: the strip's first column in the B panel. The accumulators
 * start from zero and C is added at the end, its lines prefetched first,
 * so that a miss on C is not waited for before the first FMA. */
__attribute__((target("avx2,fma"))) static void strip_avx2(const float *a, const float *b,
                                                          size_t k, float *c, size_t ldc,
                                                          int load)
{
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++) {
        if (load) {
            _mm_prefetch((const char *)(c + (size_t)i * ldc), _MM_HINT_T0);
            _mm_prefetch((const char *)(c + (size_t)i * ldc + 15), _MM_HINT_T0);
        }
        acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    }
    for (size_t p = 0; p < k; p++) {
        __m256 b0 = _mm256_loadu_ps(b + p * TILE), b1 = _mm256_loadu_ps(b + p * TILE + 8);
        const float *ap = a + p * AVX2_MS;
#pragma GCC unroll 6
        for (int i = 0; i < 6; i++) {
            __m256 av = _mm256_broadcast_ss(ap + i);
            acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++) {
        float *crow = c + (size_t)i * ldc;
        if (load) {
            acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(crow));
            acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(crow + 8));
        }
        _mm256_storeu_ps(crow, acc[i][0]);
        _mm256_storeu_ps(crow + 8, acc[i][1]);
    }
}

/* AVX2_MT (24) rows as four strips of 6, for each 16-column half of the B
 * panel (which stays in L1 while the strips pass over it). */
static void block_avx2(const float *a, size_t as, const float *b, size_t k, float *c, size_t ldc,
                       int load_c)
{
    for (size_t j = 0; j < TILE; j += 16)
        for (size_t r = 0; r < AVX2_MT; r += AVX2_MS)
            strip_avx2(a + r / AVX2_MS * as, b + j, k, c + r * ldc + j, ldc, load_c);
}
#endif

#ifdef XS_NEON
/* 8 rows x 8 columns over K [p0, pe): 16 accumulators, each row's A value
 * taken from a lane of the two A vectors (vfmaq_laneq_f32). */
#define NEON_ROW(i, av, lane)                                                                 \
    acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, av, lane);                                     \
    acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, av, lane)
static void strip_neon(const float *a, const float *b, size_t p0, size_t pe, float *c,
                       size_t ldc, int load)
{
    float32x4_t acc[8][2];
    for (int i = 0; i < 8; i++) {
        acc[i][0] = load ? vld1q_f32(c + (size_t)i * ldc) : vdupq_n_f32(0);
        acc[i][1] = load ? vld1q_f32(c + (size_t)i * ldc + 4) : vdupq_n_f32(0);
    }
    for (size_t p = p0; p < pe; p++) {
        float32x4_t b0 = vld1q_f32(b + p * TILE), b1 = vld1q_f32(b + p * TILE + 4);
        float32x4_t a0 = vld1q_f32(a + p * TILE), a1 = vld1q_f32(a + p * TILE + 4);
        NEON_ROW(0, a0, 0);
        NEON_ROW(1, a0, 1);
        NEON_ROW(2, a0, 2);
        NEON_ROW(3, a0, 3);
        NEON_ROW(4, a1, 0);
        NEON_ROW(5, a1, 1);
        NEON_ROW(6, a1, 2);
        NEON_ROW(7, a1, 3);
    }
    for (int i = 0; i < 8; i++) {
        vst1q_f32(c + (size_t)i * ldc, acc[i][0]);
        vst1q_f32(c + (size_t)i * ldc + 4, acc[i][1]);
    }
}

static void block_neon(const float *a, size_t as, const float *b, size_t k, float *c,
                       size_t ldc, int load_c)
{
    (void)as;
    size_t p0 = 0;
    do {
        size_t pe = p0 + KC < k ? p0 + KC : k;
        int load = load_c || p0 > 0;
        for (size_t r = 0; r < TILE; r += 8)
            for (size_t j = 0; j < TILE; j += 8)
                strip_neon(a + r, b + j, p0, pe, c + r * ldc + j, ldc, load);
        p0 = pe;
    } while (p0 < k);
}
#endif

static void block_portable(const float *a, size_t as, const float *b, size_t k, float *c,
                           size_t ldc, int load_c)
{
    (void)as;
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

/* How a kernel set runs the blocks: its micro-kernel; K in slices of kb
 * (0: all of K at once), every block of C done for one slice before the
 * next, so that a slice of the A and B panels stays in L2; the bytes of B
 * panels a column chunk may hold (L2 they share with A); whether each
 * thread packs the A panel slice it is about to use into its own buffer
 * (a_inline) rather than all of A being packed first, which writes packed A
 * out and reads it back once per column chunk (from L3 when it fits there)
 * but packs it only once, not once per chunk; and whether a thin product
 * packs B as it goes (b_inline_thin). */
typedef struct {
    block_fn block;
    size_t kb;
    size_t panel_bytes;
    int vec6; /* pack a row-major fp32 A with AVX2 transposes of 6-row strips */
    size_t mt; /* rows of an A panel and of a block: TILE, or AVX2_MT */
    size_t ms; /* rows of an A strip: mt, or AVX2_MS */
    int a_inline; /* PACK_A_INLINE unless thin; kb must then be 1..KB_INLINE */
    int b_inline_thin; /* PACK_B_INLINE for a thin product, K by KB_INLINE */
    const char *name;
} gemm_plan;

/* Half of one core's L2 (sysconf; 512 KB where it says nothing): B's share. */
static size_t half_l2(void)
{
    static size_t bytes;
    if (!bytes) {
        long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        bytes = (l2 > 0 ? (size_t)l2 : 512u << 10) / 2;
    }
    return bytes;
}

/* The plan of the kernel set in force. The avx512 one is what the shipped
 * calibration (devices/xeon-amx-2c.json) measured: all of K at once and
 * 1 MB of B panels (half the 2 MB L2 of the Sapphire Rapids it was tuned
 * on). The others size the column chunk to this CPU's L2 (512 KB on Zen
 * 2/3) and pack B as they go for a thin product. The avx2 one otherwise
 * packs A and B first and slices K by 512: on the Zen 3 it was tuned on
 * (interleaved runs, 2 threads, 2048 x 512..2048 x 512..2048) that beat
 * packing A per column chunk by 10-19% (the AVX2 transposes were 12-17% of
 * the time) and K slices of 256 by 3-5%. The neon and portable ones slice
 * K by 256 and pack A as they go (a 32 KB slice of an A panel and of each
 * B panel), as before: untimed on their hardware. */
static gemm_plan pick_plan(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    gemm_plan p = {block_portable, KB_INLINE, half_l2(), 0, TILE, TILE, 1, 1, "portable"};
#ifdef XS_X86
    if (f->avx512) {
        p.block = block_avx512;
        p.kb = 0;
        p.panel_bytes = 1u << 20;
        p.a_inline = 0;
        p.b_inline_thin = 0;
        p.name = "avx512 fma 8x32";
    } else if (f->avx2) {
        p.block = block_avx2;
        p.vec6 = 1;
        p.mt = AVX2_MT;
        p.ms = AVX2_MS;
        p.kb = AVX2_KB;
        p.a_inline = 0;
        p.name = "avx2 fma 6x16";
    }
#endif
#ifdef XS_NEON
    if (f->neon) {
        p.block = block_neon;
        p.name = "neon fma 8x8";
    }
#endif
    (void)f;
    return p;
}

const char *xs_krn_gemm_f32_path(void)
{
    return pick_plan().name;
}

/* The block of C at rows i0.., columns j0.. from the panel slices a and b
 * (kk deep); a partial block is computed into buf and added from there. */
static void run_block(const gemm_plan *plan, const float *a, size_t as, const float *b, size_t kk,
                      float *C, size_t m, size_t n, size_t i0, size_t j0, int add, float *buf)
{
    size_t mt = plan->mt;
    int full = i0 + mt <= m && j0 + TILE <= n;
    plan->block(a, as, b, kk, full ? C + i0 * n + j0 : buf, full ? n : TILE, full && add);
    if (!full)
        for (size_t i = 0; i < mt && i0 + i < m; i++)
            for (size_t j = 0; j < TILE && j0 + j < n; j++) {
                float *d = &C[(i0 + i) * n + j0 + j];
                *d = add ? *d + buf[i * TILE + j] : buf[i * TILE + j];
            }
}

/* How the blocks are spread and which operand is packed where:
 *   PACK_BOTH: A and B packed first; column chunks, blocks (rows outer)
 *     spread over the threads (the avx512 plan, as calibrated);
 *   PACK_A_INLINE: B packed first; each thread packs the A panel slice of
 *     the blocks it runs (the other plans);
 *   PACK_B_INLINE: A packed first; the column panels spread over the
 *     threads, each packing its B panel slice and running it against every
 *     row panel. For a thin product (fewer rows than columns, every row
 *     panel's slice together in L2), where B is the big operand: it is then
 *     read once and never written back packed. */
enum { PACK_BOTH, PACK_A_INLINE, PACK_B_INLINE };

/* C = op(A) op(B) (+ C) with A and B fp32, or bf16 when bf16 is set. */
static void gemm_packed(int bf16, int ta, int tb, size_t m, size_t n, size_t k, const void *A,
                        const void *B, float *C, int accumulate, int threads)
{
    if (m == 0 || n == 0)
        return;
    int nt = threads > 0 ? threads : 1;
    gemm_plan plan = pick_plan();
    size_t mt = plan.mt, mp = up(m, mt), np = up(n, TILE);
    size_t kb_inline = KB_INLINE < k ? KB_INLINE : k;
    int mode = plan.b_inline_thin && mp < np && mp * kb_inline * sizeof(float) <= plan.panel_bytes
                   ? PACK_B_INLINE
               : plan.a_inline ? PACK_A_INLINE
                               : PACK_BOTH;
    size_t kb = mode == PACK_B_INLINE ? kb_inline : plan.kb && plan.kb < k ? plan.kb : k;
    float *Ap = mode == PACK_A_INLINE ? NULL
                                      : xs_krn_scratch(XS_SCRATCH_A, mp * k * sizeof(float) + 64);
    float *Bp = mode == PACK_B_INLINE ? NULL
                                      : xs_krn_scratch(XS_SCRATCH_B, k * np * sizeof(float) + 64);
    if ((!Ap && mode != PACK_A_INLINE) || (!Bp && mode != PACK_B_INLINE)) {
        /* out of memory: the unpacked reference still answers */
        if (bf16)
            xs_krn_gemm_bf16_ref(ta, tb, m, n, k, A, B, C, accumulate);
        else
            xs_krn_gemm_f32_ref(ta, tb, m, n, k, A, B, C, accumulate);
        return;
    }
    a_layout whole = {mt, plan.ms, k}; /* Ap */
    if (Ap)
        pack_a(ta, m, k, A, bf16, Ap, mp, &whole, nt, plan.vec6);
    if (Bp)
        pack_b(tb, n, k, B, bf16, Bp, np, nt);
    size_t bm = mp / mt, bn = np / TILE;
    /* columns in chunks whose B panels (one K slice of them) stay in L2;
     * rows outer within one */
    size_t chunk = plan.panel_bytes / (kb * TILE * sizeof(float) + 1);
    if (chunk < 1)
        chunk = 1;
#pragma omp parallel num_threads(nt)
    {
        float buf[TILE * TILE] __attribute__((aligned(64)));
        float slice[TILE * KB_INLINE] __attribute__((aligned(64))); /* an inline-packed slice */
        size_t k0 = 0;
        /* K slices: the later ones add to what the earlier wrote. No barrier
         * between loops: schedule(static) over the same iteration count
         * gives every thread the same blocks in every slice (OpenMP 4.5,
         * 2.7.1), so a block's slices run in order on one thread, and a
         * thread the OS preempts holds up the others once, at the end. */
        do {
            size_t kk = k0 + kb < k ? kb : k - k0;
            int add = accumulate || k0 > 0;
            a_layout part = {mt, plan.ms, kk}; /* an inline-packed A slice */
            if (mode == PACK_B_INLINE) {
#pragma omp for schedule(static) nowait
                for (size_t jb = 0; jb < bn; jb++) {
                    pack_b_slice(tb, n, k, B, bf16, jb, k0, k0 + kk, slice);
                    for (size_t ib = 0; ib < bm; ib++)
                        run_block(&plan, Ap + a_panel_at(&whole, ib, k0), a_strips_apart(&whole),
                                  slice, kk, C, m, n, ib * mt, jb * TILE, add, buf);
                }
                k0 += kk;
                continue;
            }
            for (size_t jc = 0; jc < bn; jc += chunk) {
                size_t je = jc + chunk < bn ? jc + chunk : bn;
                size_t slice_ib = SIZE_MAX; /* the A panel slice holds */
#pragma omp for schedule(static) collapse(2) nowait
                for (size_t ib = 0; ib < bm; ib++)
                    for (size_t jb = jc; jb < je; jb++) {
                        const a_layout *l = mode == PACK_BOTH ? &whole : &part;
                        const float *a = slice;
                        if (mode == PACK_BOTH)
                            a = Ap + a_panel_at(&whole, ib, k0);
                        else if (ib != slice_ib) { /* a thread's blocks come row by row */
                            pack_a_slice(ta, m, k, A, bf16, ib, &part, k0, k0 + kk, slice,
                                         plan.vec6);
                            slice_ib = ib;
                        }
                        run_block(&plan, a, a_strips_apart(l), Bp + (jb * k + k0) * TILE, kk, C,
                                  m, n, ib * mt, jb * TILE, add, buf);
                    }
            }
            k0 += kk;
        } while (k0 < k);
    }
}

void xs_krn_gemm_f32(int ta, int tb, size_t m, size_t n, size_t k, const float *A,
                     const float *B, float *C, int accumulate, int threads)
{
    gemm_packed(0, ta, tb, m, n, k, A, B, C, accumulate, threads);
}

void xs_krn_gemm_bf16_on_f32(int ta, int tb, size_t m, size_t n, size_t k, const xs_bf16 *A,
                             const xs_bf16 *B, float *C, int accumulate, int threads)
{
    gemm_packed(1, ta, tb, m, n, k, A, B, C, accumulate, threads);
}
