/* test_kernels_optim.c — the optimizer and bandwidth kernels against their
 * references, on every kernel set this CPU runs (AVX-512, AVX2, NEON,
 * portable), at sizes
 * that are not multiples of the vector width, over many steps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpu_features.h"
#include "harness.h"
#include "kernel_sets.h"
#include "optim.h"
#include "stream.h"
#include "test_util.h"

#define COUNT 1037 /* 64 lines of 16 and a tail of 13 */
#define STEPS 60

static unsigned rng = 12345;
static float frand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 65536.0f - 0.5f;
}

typedef struct {
    float p[COUNT], gp[COUNT], m[COUNT], v[COUNT], n[COUNT];
} adan_state;

static void init_state(adan_state *s, const float *g0)
{
    for (int i = 0; i < COUNT; i++) {
        s->p[i] = frand();
        s->gp[i] = g0[i]; /* the first step's g_prev is g: diff 0 */
        s->m[i] = s->v[i] = s->n[i] = 0;
    }
}

/* A fresh gradient for each step, the same for every implementation. */
static void gradient(float *g, int step)
{
    rng = 777u + (unsigned)step * 131u;
    for (int i = 0; i < COUNT; i++)
        g[i] = frand() * (1.0f + (float)(i % 7));
}

static void adan_fused_should_match_the_reference_bit_for_bit(void)
{
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set)) {
        static adan_state ref, fus;
        float g[COUNT];
        gradient(g, 1);
        rng = 1;
        init_state(&ref, g);
        rng = 1;
        init_state(&fus, g);
        xs_adan_hparams h = xs_adan_defaults(1e-2f, 0.02f);
        for (int k = 1; k <= STEPS; k++) {
            gradient(g, k);
            xs_krn_adan_ref(&h, k, ref.p, g, ref.gp, ref.m, ref.v, ref.n, COUNT);
            xs_krn_adan_fused(&h, k, fus.p, g, fus.gp, fus.m, fus.v, fus.n, COUNT, 2);
        }
        CU_ASSERT(memcmp(&ref, &fus, sizeof ref) == 0);
        CU_ASSERT(fabsf(ref.p[5]) > 0); /* the arrays really moved */
    }
}

/* Eager rounds differently (it divides by sqrt(bc3) and updates p in two
 * steps): after 60 steps every value stays within tol + |ref| * 64 ulp. */
static void adan_eager_should_stay_within_a_few_ulps_of_the_reference(void)
{
    static adan_state ref, eag;
    static float tmp[COUNT];
    float g[COUNT];
    gradient(g, 1);
    rng = 1;
    init_state(&ref, g);
    rng = 1;
    init_state(&eag, g);
    for (int i = 0; i < COUNT; i++)
        eag.gp[i] = -eag.gp[i];
    xs_adan_hparams h = xs_adan_defaults(1e-2f, 0.02f);
    for (int k = 1; k <= STEPS; k++) {
        gradient(g, k);
        xs_krn_adan_ref(&h, k, ref.p, g, ref.gp, ref.m, ref.v, ref.n, COUNT);
        xs_krn_adan_eager(&h, k, eag.p, g, eag.gp, eag.m, eag.v, eag.n, tmp, COUNT, 2);
    }
    double worst = 0;
    for (int i = 0; i < COUNT; i++) {
        double tol = 1e-7 + fabs(ref.p[i]) * 64 * 1.19e-7;
        worst = fmax(worst, fabs(eag.p[i] - ref.p[i]) / tol);
        CU_ASSERT(fabsf(eag.m[i] - ref.m[i]) <= 1e-7f + fabsf(ref.m[i]) * 8 * 1.19e-7f);
        CU_ASSERT(fabsf(eag.n[i] - ref.n[i]) <= 1e-7f + fabsf(ref.n[i]) * 8 * 1.19e-7f);
        CU_ASSERT_EQUAL(-eag.gp[i], ref.gp[i]); /* -g_prev is exact */
    }
    CU_ASSERT(worst <= 1.0);
    if (worst > 1.0)
        fprintf(stderr, "\neager vs reference: worst p error %.2f of the tolerance\n", worst);
}

static void adamw_fused_should_match_the_reference_bit_for_bit(void)
{
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set)) {
        static float p1[COUNT], m1[COUNT], v1[COUNT], p2[COUNT], m2[COUNT], v2[COUNT];
        float g[COUNT];
        rng = 9;
        for (int i = 0; i < COUNT; i++) {
            p1[i] = p2[i] = frand();
            m1[i] = m2[i] = v1[i] = v2[i] = 0;
        }
        xs_adamw_hparams h = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f};
        for (int k = 1; k <= STEPS; k++) {
            gradient(g, k);
            xs_krn_adamw_ref(&h, k, p1, g, m1, v1, COUNT);
            xs_krn_adamw_fused(&h, k, p2, g, m2, v2, COUNT, 2);
        }
        CU_ASSERT(memcmp(p1, p2, sizeof p1) == 0);
        CU_ASSERT(memcmp(m1, m2, sizeof m1) == 0);
        CU_ASSERT(memcmp(v1, v2, sizeof v1) == 0);
    }
}

static void stream_kernels_should_compute_what_they_say(void)
{
    static float a[COUNT], b[COUNT], c[COUNT];
    double sum = 0;
    for (int i = 0; i < COUNT; i++) {
        b[i] = (float)i;
        c[i] = 0.5f * (float)(i % 9);
        sum += b[i];
    }
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set)) {
        xs_krn_triad(a, b, c, 3.0f, COUNT, 2);
        for (int i = 0; i < COUNT; i++)
            CU_ASSERT_EQUAL(a[i], b[i] + 3.0f * c[i]);
        CU_ASSERT_DOUBLE_EQUAL(xs_krn_read(b, COUNT, 2), sum, 1e-3);
    }
}

static int calls;
static volatile double busy_sink;
static void busy(void *ctx)
{
    double x = busy_sink;
    for (int i = 0; i < 20000; i++)
        x += i * 1e-9;
    busy_sink = x; /* kept, so the loop is not elided */
    (void)ctx;
    calls++;
}

static void harness_should_report_median_spread_and_rates(void)
{
    xs_cal_kernel k = {"busy", 1e6, 2e6, busy, NULL, NULL};
    xs_cal_opts o = xs_cal_default_opts();
    o.time_cap_s = 0.2;
    xs_cal_result r;
    calls = 0;
    xs_cal_measure(&k, &o, &r);
    CU_ASSERT(r.reps >= o.min_reps && r.reps <= o.max_reps);
    CU_ASSERT_EQUAL(calls, r.reps + o.warmup);
    CU_ASSERT(r.min_s <= r.q1_s && r.q1_s <= r.median_s && r.median_s <= r.q3_s);
    CU_ASSERT_DOUBLE_EQUAL(r.gbs, 1e6 / r.median_s / 1e9, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.gflops, 2e6 / r.median_s / 1e9, 1e-9);
    xs_cal_result ra, rb;
    double ratio = xs_cal_compare(&k, &k, &o, &ra, &rb);
    CU_ASSERT(ratio > 0.5 && ratio < 2.0); /* the same kernel against itself */
    CU_ASSERT_EQUAL(ra.reps, rb.reps);
}

int tu_add_kernels_optim_suite(void)
{
    CU_pSuite s = CU_add_suite("kernels_optim", NULL, NULL);
    return !s ||
           !CU_add_test(s, "adan_fused_should_match_the_reference_bit_for_bit",
                        adan_fused_should_match_the_reference_bit_for_bit) ||
           !CU_add_test(s, "adan_eager_should_stay_within_a_few_ulps_of_the_reference",
                        adan_eager_should_stay_within_a_few_ulps_of_the_reference) ||
           !CU_add_test(s, "adamw_fused_should_match_the_reference_bit_for_bit",
                        adamw_fused_should_match_the_reference_bit_for_bit) ||
           !CU_add_test(s, "stream_kernels_should_compute_what_they_say",
                        stream_kernels_should_compute_what_they_say) ||
           !CU_add_test(s, "harness_should_report_median_spread_and_rates",
                        harness_should_report_median_spread_and_rates);
}
