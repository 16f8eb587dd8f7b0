/* test_kernels_gemm.c — the GEMM kernels against their references on every
 * path (AMX, AVX512-BF16, portable; AVX-512 and portable fp32), for shapes
 * at, inside and past the tile edges, with transposes and accumulation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpu_features.h"
#include "cpu_gemm.h"
#include "test_util.h"

static unsigned seed = 99;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void set_paths(const char *disable)
{
    if (disable)
        setenv("XS_CPU_DISABLE", disable, 1);
    else
        unsetenv("XS_CPU_DISABLE");
    xs_cpu_features_redetect();
}

/* |got - ref| <= 1e-5 + 2 k eps sum |a b|: a bound on fp32 summation in any order. */
static int close_enough(const float *got, const float *ref, const float *absdot, size_t count,
                        size_t k)
{
    for (size_t i = 0; i < count; i++) {
        double tol = 1e-5 + 2.0 * (double)k * 1.19e-7 * absdot[i];
        if (fabs((double)got[i] - ref[i]) > tol) {
            fprintf(stderr, "\n  element %zu: %g vs %g (tol %g)\n", i, got[i], ref[i], tol);
            return 0;
        }
    }
    return 1;
}

static void check_bf16(size_t m, size_t n, size_t k, int ta, int tb, int acc)
{
    xs_bf16 *A = malloc(m * k * sizeof *A), *B = malloc(k * n * sizeof *B);
    float *C = malloc(m * n * sizeof *C), *R = malloc(m * n * sizeof *R);
    float *absdot = calloc(m * n, sizeof *absdot);
    for (size_t i = 0; i < m * k; i++)
        A[i] = xs_f32_to_bf16(frand());
    for (size_t i = 0; i < k * n; i++)
        B[i] = xs_f32_to_bf16(frand());
    for (size_t i = 0; i < m * n; i++)
        C[i] = R[i] = frand();
    /* sum |a b| per output, from the reference with absolute values */
    xs_bf16 *Aa = malloc(m * k * sizeof *Aa), *Ba = malloc(k * n * sizeof *Ba);
    for (size_t i = 0; i < m * k; i++)
        Aa[i] = A[i] & 0x7fff;
    for (size_t i = 0; i < k * n; i++)
        Ba[i] = B[i] & 0x7fff;
    xs_krn_gemm_bf16_ref(ta, tb, m, n, k, Aa, Ba, absdot, 0);
    xs_krn_gemm_bf16_ref(ta, tb, m, n, k, A, B, R, acc);
    xs_krn_gemm_bf16(ta, tb, m, n, k, A, B, C, acc, 2);
    int ok = close_enough(C, R, absdot, m * n, k);
    if (!ok)
        fprintf(stderr, "  bf16 %s m=%zu n=%zu k=%zu ta=%d tb=%d acc=%d\n",
                xs_krn_gemm_bf16_path(), m, n, k, ta, tb, acc);
    CU_ASSERT(ok);
    free(A), free(B), free(C), free(R), free(absdot), free(Aa), free(Ba);
}

static void check_f32(size_t m, size_t n, size_t k, int ta, int tb, int acc)
{
    float *A = malloc(m * k * sizeof *A), *B = malloc(k * n * sizeof *B);
    float *C = malloc(m * n * sizeof *C), *R = malloc(m * n * sizeof *R);
    float *Aa = malloc(m * k * sizeof *Aa), *Ba = malloc(k * n * sizeof *Ba);
    float *absdot = calloc(m * n, sizeof *absdot);
    for (size_t i = 0; i < m * k; i++)
        Aa[i] = fabsf(A[i] = frand());
    for (size_t i = 0; i < k * n; i++)
        Ba[i] = fabsf(B[i] = frand());
    for (size_t i = 0; i < m * n; i++)
        C[i] = R[i] = frand();
    xs_krn_gemm_f32_ref(ta, tb, m, n, k, Aa, Ba, absdot, 0);
    xs_krn_gemm_f32_ref(ta, tb, m, n, k, A, B, R, acc);
    xs_krn_gemm_f32(ta, tb, m, n, k, A, B, C, acc, 2);
    int ok = close_enough(C, R, absdot, m * n, k);
    if (!ok)
        fprintf(stderr, "  f32 m=%zu n=%zu k=%zu ta=%d tb=%d acc=%d\n", m, n, k, ta, tb, acc);
    CU_ASSERT(ok);
    free(A), free(B), free(C), free(R), free(absdot), free(Aa), free(Ba);
}

/* shapes on, inside and just past the 32 x 32 blocks and the 32-deep K step */
static const size_t SHAPES[][3] = {{1, 1, 1},   {32, 32, 32}, {33, 31, 65}, {7, 45, 3},
                                   {64, 96, 64}, {100, 17, 129}, {31, 64, 1}, {65, 33, 96}};

static void bf16_gemm_should_match_the_reference_on_every_path(void)
{
    static const char *paths[] = {NULL, "amx", "amx,avx512bf16"};
    for (int p = 0; p < 3; p++) {
        set_paths(paths[p]);
        for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++)
            for (int t = 0; t < 4; t++)
                check_bf16(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], t & 1, t >> 1, s % 2);
    }
    set_paths(NULL);
}

static void f32_gemm_should_match_the_reference_on_every_path(void)
{
    for (int p = 0; p < 2; p++) {
        set_paths(p ? "avx512" : NULL);
        for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++)
            for (int t = 0; t < 4; t++)
                check_f32(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], t & 1, t >> 1, s % 2);
    }
    set_paths(NULL);
}

static void bf16_conversion_should_round_to_nearest_even(void)
{
    CU_ASSERT_EQUAL(xs_f32_to_bf16(1.0f), 0x3f80);
    CU_ASSERT_EQUAL(xs_bf16_to_f32(0x3f80), 1.0f);
    /* 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1) */
    CU_ASSERT_EQUAL(xs_f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);
    /* 1 + 3 * 2^-8 ties up to 1 + 2^-6 */
    CU_ASSERT_EQUAL(xs_f32_to_bf16(1.0f + 3.0f / 256), 0x3f82);
    CU_ASSERT_EQUAL(xs_f32_to_bf16(-2.0f), 0xc000);
    CU_ASSERT(isnan(xs_bf16_to_f32(xs_f32_to_bf16(NAN))));
    CU_ASSERT(isinf(xs_bf16_to_f32(xs_f32_to_bf16(INFINITY))));
}

int tu_add_kernels_gemm_suite(void)
{
    CU_pSuite s = CU_add_suite("kernels_gemm", NULL, NULL);
    return !s ||
           !CU_add_test(s, "bf16_gemm_should_match_the_reference_on_every_path",
                        bf16_gemm_should_match_the_reference_on_every_path) ||
           !CU_add_test(s, "f32_gemm_should_match_the_reference_on_every_path",
                        f32_gemm_should_match_the_reference_on_every_path) ||
           !CU_add_test(s, "bf16_conversion_should_round_to_nearest_even",
                        bf16_conversion_should_round_to_nearest_even);
}
