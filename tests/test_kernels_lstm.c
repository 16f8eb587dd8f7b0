/* test_kernels_lstm.c — the LSTM inference kernel (kernels/cpu/lstm.c) against its
 * plain reference over shapes that stress its edges (hidden not a multiple
 * of the 8-unit work item, one or three layers, input wider and narrower
 * than hidden, batch 1), in fp32 and bf16 on every kernel set, with the
 * thread count changed between layers; the answer must not depend on the
 * plan; the weight layout is nn.LSTM's. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "kernel_sets.h"
#include "lstm.h"
#include "scratch.h"
#include "test_util.h"

static float *filled(size_t n, unsigned seed, float scale)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u; /* the C standard's example LCG */
        v[i] = scale * ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f);
    }
    return v;
}

/* y from the kernel under a plan, against the reference: the largest
 * error over tol + |ref| eps (llm.c's rule) must stay within 1. fp32: tol
 * 1e-5, eps 1e-4. bf16: the reference rounds as the kernel does, but a sum
 * that lands near a rounding boundary can round the other way, one bf16
 * ulp of h (2^-8 relative), which the next steps carry on: tol 1e-2. */
static void check_shape(size_t layers, size_t input, size_t hidden, size_t seq, size_t batch,
                        int bf16)
{
    xs_krn_lstm_shape s = {layers, input, hidden, seq, batch, bf16};
    double tol = bf16 ? 1e-2 : 1e-5, eps = bf16 ? 1e-2 : 1e-4;
    size_t nw = xs_krn_lstm_weights_len(&s), ny = seq * batch * hidden;
    float *w = filled(nw, 7u + (unsigned)hidden, 1.0f / sqrtf((float)hidden));
    float *x = filled(seq * batch * input, 3u, 1.0f);
    float *ref = malloc(ny * sizeof *ref), *y = malloc(ny * sizeof *y), *y2 = malloc(ny * sizeof *y2);
    xs_krn_lstm_ref(&s, w, x, ref);
    xs_krn_lstm *k = xs_krn_lstm_alloc(&s, w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    int one[8], mixed[8];
    for (int i = 0; i < 8; i++) {
        one[i] = 1;
        mixed[i] = 1 + (i % 3 == 1); /* 1, 2, 1, 1, 2, ...: switched between groups */
    }
    double group_s[8] = {0};
    xs_krn_lstm_run(k, x, y, mixed, group_s);
    double worst = 0;
    for (size_t i = 0; i < ny; i++)
        worst = fmax(worst, fabs((double)y[i] - ref[i]) / (tol + fabs(ref[i]) * eps));
    CU_ASSERT(worst <= 1);
    if (worst > 1)
        fprintf(stderr, "\nlstm %s %zux%zux%zu seq %zu batch %zu: error %.3g of the tolerance\n",
                bf16 ? "bf16" : "fp32", layers, input, hidden, seq, batch, worst);
    for (size_t g = 0; g < 2 * layers; g++)
        CU_ASSERT(group_s[g] > 0);
    /* every work item computes the same sums whatever thread runs it */
    xs_krn_lstm_run(k, x, y2, one, NULL);
    CU_ASSERT_EQUAL(memcmp(y, y2, ny * sizeof *y), 0);
    xs_krn_lstm_free(k);
    xs_krn_scratch_free();
    free(w), free(x), free(ref), free(y), free(y2);
}

/* on every kernel set this CPU runs: the step's AVX2 or portable build,
 * and the bf16 input projection on AMX, AVX512-BF16 or the fp32 kernel */
static void lstm_kernel_should_match_its_reference(void)
{
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set))
        for (int bf16 = 0; bf16 <= 1; bf16++) {
            check_shape(1, 16, 8, 3, 1, bf16);
            check_shape(2, 24, 37, 5, 3, bf16); /* hidden 37: a partial work item */
            check_shape(3, 5, 64, 4, 9, bf16);  /* input narrower than hidden, odd batch */
            check_shape(2, 100, 20, 2, 2, bf16);
        }
}

/* The bf16 kernel's h are bf16 values, and they differ from fp32's by
 * about what bf16's 8-bit significand allows, not more: the reference in
 * fp32 against the bf16 kernel, over 2 layers and 20 steps. */
static void lstm_bf16_should_stay_near_fp32(void)
{
    xs_krn_lstm_shape s = {2, 32, 48, 20, 4, 1};
    size_t nw = xs_krn_lstm_weights_len(&s), ny = s.seq * s.batch * s.hidden;
    float *w = filled(nw, 11u, 1.0f / sqrtf((float)s.hidden));
    float *x = filled(s.seq * s.batch * s.input, 5u, 1.0f);
    float *ref = malloc(ny * sizeof *ref), *y = malloc(ny * sizeof *y);
    s.bf16 = 0;
    xs_krn_lstm_ref(&s, w, x, ref);
    s.bf16 = 1;
    xs_krn_lstm *k = xs_krn_lstm_alloc(&s, w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    int threads[4] = {1, 2, 2, 1};
    xs_krn_lstm_run(k, x, y, threads, NULL);
    double worst = 0, mean = 0;
    int rounded = 1;
    for (size_t i = 0; i < ny; i++) {
        double e = fabs((double)y[i] - ref[i]);
        worst = fmax(worst, e);
        mean += e / (double)ny;
        uint32_t bits;
        memcpy(&bits, &y[i], sizeof bits);
        rounded &= (bits & 0xffffu) == 0;
    }
    CU_ASSERT(rounded);
    CU_ASSERT(worst < 0.05); /* |h| < 1: a few bf16 ulps at most */
    CU_ASSERT(mean > 1e-5);  /* and it did round: not the fp32 kernel */
    if (worst >= 0.05 || !(mean > 1e-5))
        fprintf(stderr, "\nlstm bf16 vs fp32: max %.3g mean %.3g\n", worst, mean);
    xs_krn_lstm_free(k);
    xs_krn_scratch_free();
    free(w), free(x), free(ref), free(y);
}

static void lstm_weights_should_follow_nn_lstm_parameter_order(void)
{
    xs_krn_lstm_shape s = {2, 10, 6, 1, 1, 0};
    /* weight_ih_l0 24x10, weight_hh_l0 24x6, bias_ih_l0 24, bias_hh_l0 24, then
     * weight_ih_l1 24x6, weight_hh_l1 24x6, the two biases */
    CU_ASSERT_EQUAL(xs_krn_lstm_weights_len(&s), 240 + 144 + 48 + 144 + 144 + 48);
    size_t ih, hh, bi, bh;
    xs_krn_lstm_offsets(&s, 1, &ih, &hh, &bi, &bh);
    CU_ASSERT_EQUAL(ih, 240 + 144 + 48);
    CU_ASSERT_EQUAL(hh, ih + 144);
    CU_ASSERT_EQUAL(bi, hh + 144);
    CU_ASSERT_EQUAL(bh, bi + 24);
}

static void lstm_alloc_should_refuse_empty_shapes(void)
{
    float w[4] = {0};
    xs_krn_lstm_shape s = {1, 1, 0, 1, 1, 0};
    CU_ASSERT_PTR_NULL(xs_krn_lstm_alloc(&s, w));
    s.hidden = 1, s.seq = 0;
    CU_ASSERT_PTR_NULL(xs_krn_lstm_alloc(&s, w));
    s.seq = 1;
    CU_ASSERT_PTR_NULL(xs_krn_lstm_alloc(&s, NULL));
    const char *path = xs_krn_lstm_path();
    CU_ASSERT(strcmp(path, "portable") == 0 || strcmp(path, "avx2 fma") == 0);
}

int tu_add_kernels_lstm_suite(void)
{
    CU_pSuite s = CU_add_suite("kernels_lstm", NULL, NULL);
    return !s ||
           !CU_add_test(s, "lstm_kernel_should_match_its_reference",
                        lstm_kernel_should_match_its_reference) ||
           !CU_add_test(s, "lstm_bf16_should_stay_near_fp32", lstm_bf16_should_stay_near_fp32) ||
           !CU_add_test(s, "lstm_weights_should_follow_nn_lstm_parameter_order",
                        lstm_weights_should_follow_nn_lstm_parameter_order) ||
           !CU_add_test(s, "lstm_alloc_should_refuse_empty_shapes",
                        lstm_alloc_should_refuse_empty_shapes);
}
