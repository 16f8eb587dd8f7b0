/* test_kernels_gemm.c — the GEMM kernels against their references on every
 * kernel set this CPU runs (bf16: AMX, AVX512-BF16, or emulated on the fp32
 * kernel; fp32: AVX-512, AVX2, NEON, portable), for shapes at, inside and
 * past the tile edges and the K chunks, with transposes and accumulation. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpu_features.h"
#include "cpu_gemm.h"
#include "kernel_sets.h"
#include "scratch.h"
#include "test_util.h"

static unsigned seed = 99;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
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
    float *C2 = malloc(m * n * sizeof *C2);
    memcpy(C2, C, m * n * sizeof *C2);
    xs_krn_gemm_bf16(ta, tb, m, n, k, A, B, C, acc, 2);
    int ok = close_enough(C, R, absdot, m * n, k);
    if (!ok)
        fprintf(stderr, "  bf16 %s m=%zu n=%zu k=%zu ta=%d tb=%d acc=%d\n",
                xs_krn_gemm_bf16_path(), m, n, k, ta, tb, acc);
    CU_ASSERT(ok);
    /* the emulation, called directly, on every set */
    xs_krn_gemm_bf16_on_f32(ta, tb, m, n, k, A, B, C2, acc, 2);
    ok = close_enough(C2, R, absdot, m * n, k);
    if (!ok)
        fprintf(stderr, "  bf16 on fp32 (%s) m=%zu n=%zu k=%zu ta=%d tb=%d acc=%d\n",
                xs_krn_gemm_f32_path(), m, n, k, ta, tb, acc);
    CU_ASSERT(ok);
    free(C2);
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

/* shapes on, inside and just past the 32 x 32 blocks, the avx2 set's
 * 24-row panels and 6-row strips, the 32-deep K step, the 128-deep K chunk
 * of the neon block, the 256-deep K slice packed as the threads go and the
 * avx2 set's 512-deep one ({49, 40, 520}); K = 0; {25, 1090, 260}: a thin
 * product, B packed as the threads go, two column chunks where half of L2
 * is 1 MB or less */
static const size_t SHAPES[][3] = {{1, 1, 1},      {32, 32, 32},   {33, 31, 65}, {7, 45, 3},
                                   {64, 96, 64},   {100, 17, 129}, {31, 64, 1},  {65, 33, 96},
                                   {40, 70, 300},  {32, 32, 256},  {5, 3, 0},    {24, 24, 24},
                                   {49, 40, 520},  {25, 1090, 260}};
#define NSHAPES (sizeof SHAPES / sizeof SHAPES[0])

static void bf16_gemm_should_match_the_reference_on_every_kernel_set(void)
{
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set))
        for (size_t s = 0; s < NSHAPES; s++)
            for (int t = 0; t < 4; t++)
                check_bf16(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], t & 1, t >> 1, s % 2);
}

static void f32_gemm_should_match_the_reference_on_every_kernel_set(void)
{
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set))
        for (size_t s = 0; s < NSHAPES; s++)
            for (int t = 0; t < 4; t++)
                check_f32(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], t & 1, t >> 1, s % 2);
}

/* One GEMM of its own shape, run again and again on one thread while
 * another thread runs its own: each must keep matching its reference. */
typedef struct {
    size_t m, n, k;
    float *A, *B, *C, *R, *absdot;
    int ok;
} gemm_job;

static void *run_gemm_job(void *arg)
{
    gemm_job *j = arg;
    for (int rep = 0; rep < 20 && j->ok; rep++) {
        xs_krn_gemm_f32(0, 0, j->m, j->n, j->k, j->A, j->B, j->C, 0, 1);
        j->ok = close_enough(j->C, j->R, j->absdot, j->m * j->n, j->k);
    }
    xs_krn_scratch_free(); /* this thread's buffers, before it ends */
    return NULL;
}

/* The packing buffers were one global set: two threads calling a GEMM at
 * once packed into (and freed) each other's. Now each thread has its own
 * (scratch.h), and the CPU features are detected once (cpu_features.c). */
static void concurrent_gemms_should_not_share_buffers(void)
{
    static const size_t shapes[2][3] = {{96, 160, 200}, {160, 96, 330}};
    gemm_job jobs[2];
    for (int t = 0; t < 2; t++) {
        gemm_job *j = &jobs[t];
        j->m = shapes[t][0], j->n = shapes[t][1], j->k = shapes[t][2], j->ok = 1;
        j->A = malloc(j->m * j->k * sizeof(float));
        j->B = malloc(j->k * j->n * sizeof(float));
        j->C = malloc(j->m * j->n * sizeof(float));
        j->R = malloc(j->m * j->n * sizeof(float));
        float *Aa = malloc(j->m * j->k * sizeof(float)), *Ba = malloc(j->k * j->n * sizeof(float));
        j->absdot = calloc(j->m * j->n, sizeof(float));
        for (size_t i = 0; i < j->m * j->k; i++)
            Aa[i] = fabsf(j->A[i] = frand());
        for (size_t i = 0; i < j->k * j->n; i++)
            Ba[i] = fabsf(j->B[i] = frand());
        xs_krn_gemm_f32_ref(0, 0, j->m, j->n, j->k, Aa, Ba, j->absdot, 0);
        xs_krn_gemm_f32_ref(0, 0, j->m, j->n, j->k, j->A, j->B, j->R, 0);
        free(Aa), free(Ba);
    }
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[t], NULL, run_gemm_job, &jobs[t]), 0);
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
        CU_ASSERT(jobs[t].ok);
        free(jobs[t].A), free(jobs[t].B), free(jobs[t].C), free(jobs[t].R), free(jobs[t].absdot);
    }
}

/* Each set names the kernels it runs: the paths the device file records. */
static void kernel_sets_should_name_their_gemm_paths(void)
{
    static const char *f32[XS_ISA_COUNT] = {
        [XS_ISA_PORTABLE] = "portable",        [XS_ISA_NEON] = "neon fma 8x8",
        [XS_ISA_AVX2] = "avx2 fma 6x16",       [XS_ISA_AVX512] = "avx512 fma 8x32",
        [XS_ISA_AVX512_BF16] = "avx512 fma 8x32", [XS_ISA_AMX_BF16] = "avx512 fma 8x32"};
    static const char *b16[XS_ISA_COUNT] = {
        [XS_ISA_PORTABLE] = "fp32-portable", [XS_ISA_NEON] = "fp32-neon",
        [XS_ISA_AVX2] = "fp32-avx2",         [XS_ISA_AVX512] = "fp32-avx512",
        [XS_ISA_AVX512_BF16] = "avx512bf16", [XS_ISA_AMX_BF16] = "amx"};
    int ran = 0;
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set)) {
        CU_ASSERT_EQUAL((int)xs_cpu_features_get()->isa, set);
        CU_ASSERT_STRING_EQUAL(xs_krn_gemm_f32_path(), f32[set]);
        CU_ASSERT_STRING_EQUAL(xs_krn_gemm_bf16_path(), b16[set]);
        CU_ASSERT_EQUAL(xs_cpu_isa_has_bf16_unit((xs_cpu_isa)set),
                        set == XS_ISA_AMX_BF16 || set == XS_ISA_AVX512_BF16);
        ran++;
    }
    CU_ASSERT(ran >= 1); /* portable runs everywhere */
    /* an unknown set, or one this CPU lacks: the kernels keep the best set
     * and the entry points get the reason */
    setenv("XS_CPU_ISA", "avx3", 1);
    xs_cpu_features_redetect();
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_cpu_features_get()->isa_error, "names no kernel set"));
#if defined(__x86_64__)
    setenv("XS_CPU_ISA", "neon", 1);
#else
    setenv("XS_CPU_ISA", "avx2", 1);
#endif
    xs_cpu_features_redetect();
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_cpu_features_get()->isa_error, "cannot run that kernel set"));
    tu_set_use(-1);
    CU_ASSERT_EQUAL(xs_cpu_features_get()->isa_error[0], '\0');
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
           !CU_add_test(s, "bf16_gemm_should_match_the_reference_on_every_kernel_set",
                        bf16_gemm_should_match_the_reference_on_every_kernel_set) ||
           !CU_add_test(s, "f32_gemm_should_match_the_reference_on_every_kernel_set",
                        f32_gemm_should_match_the_reference_on_every_kernel_set) ||
           !CU_add_test(s, "concurrent_gemms_should_not_share_buffers",
                        concurrent_gemms_should_not_share_buffers) ||
           !CU_add_test(s, "kernel_sets_should_name_their_gemm_paths",
                        kernel_sets_should_name_their_gemm_paths) ||
           !CU_add_test(s, "bf16_conversion_should_round_to_nearest_even",
                        bf16_conversion_should_round_to_nearest_even);
}
