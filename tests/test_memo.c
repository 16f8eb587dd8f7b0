/* test_memo.c — memoization never changes a result: the GEMM memo gives
 * the tile search's own result (xs_gemm_model_direct) for every shape on
 * every engine, engines taken in turn so that they evict each other, and
 * through a bound engine; a prediction made with the op-estimate memo
 * warm is the one made from nothing, whatever devices, clock limits and
 * corners came between. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "backend.h"
#include "est_memo.h"
#include "gemm.h"
#include "predict.h"
#include "test_util.h"

static uint64_t next(uint64_t *x) /* xorshift64*: deterministic */
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ull;
}

static void gemm_memo_should_give_the_search_result(void)
{
    /* six engines: more than the memo keeps, so they evict each other */
    const char *const ids[] = {"a100-sxm4-80gb", "t4",    "h100-sxm5-80gb",
                               "v100-sxm2-16gb", "l4",    "xeon-amx-2c"};
    enum { ENGINES = sizeof ids / sizeof ids[0] };
    xs_device devs[ENGINES];
    xs_gemm_engine eng[ENGINES];
    for (int d = 0; d < ENGINES; d++) {
        devs[d] = tu_device(ids[d]);
        xs_backend_of(&devs[d])->gemm_engine(&devs[d], &eng[d]);
    }
    const xs_dtype dtypes[] = {XS_FP16, XS_BF16, XS_FP32, XS_TF32};
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    int compared = 0, differ = 0;
    for (int round = 0; round < 3; round++) { /* the same shapes again: hits */
        uint64_t s = seed;
        for (int i = 0; i < 3000; i++) {
            int d = (int)(next(&s) % ENGINES);
            xs_gemm_shape g = {(int64_t)(next(&s) % 8192) + 1,
                               (int64_t)(next(&s) % 8192) + 1,
                               (int64_t)(next(&s) % 8192) + 1,
                               (int64_t)(next(&s) % 4) + 1,
                               (int)(next(&s) & 1),
                               (int)(next(&s) & 1),
                               dtypes[next(&s) % 4],
                               2};
            xs_gemm_result a, b;
            xs_error e1, e2;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            if (round == 2) /* through a binding, as a prediction does */
                xs_gemm_memo_bind(&eng[d]);
            int ra = xs_gemm_model_direct(&eng[d], &g, &a, &e1);
            int rb = xs_gemm_model(&eng[d], &g, &b, &e2);
            CU_ASSERT_EQUAL(ra, rb);
            compared++;
            if (ra == XS_OK && rb == XS_OK && memcmp(&a, &b, sizeof a) != 0 && differ++ < 5)
                fprintf(stderr, "\n  %s %lldx%lldx%lld: memo differs\n", ids[d], (long long)g.m,
                        (long long)g.n, (long long)g.k);
            memset(&eng[d].memo, 0, sizeof eng[d].memo);
        }
    }
    CU_ASSERT_EQUAL(compared, 9000);
    CU_ASSERT_EQUAL(differ, 0);
}

/* The figures of a prediction and its per-op estimates. */
static int same_prediction(const xs_prediction *p, const xs_prediction *q, size_t n)
{
    xs_prediction a = *p, b = *q;
    a.est = b.est = NULL;
    return memcmp(&a, &b, sizeof a) == 0 && memcmp(p->est, q->est, n * sizeof *p->est) == 0;
}

#define CASES 20

/* Scenarios and batches whose ops share names and differ in shape: a memo
 * that told ops apart by less than all of them would hand one's estimate
 * to another; and pairs that differ only in grad_accum (the ops' counts,
 * which the memo does not tell apart: an estimate is one call's). */
static int open_case(int c, xs_scenario *s, xs_workload *wl, int capped)
{
    static const char *const scns[] = {"bert-base-squad", "gpt2-medium-finetune",
                                       "llama2-7b-lora", "t5-base-summarization",
                                       "vit-base-finetune"};
    static const char *const batch[] = {"train.batch=2", "train.batch=2", "train.batch=3",
                                        "train.batch=3"};
    static const char *const accum[] = {"train.grad_accum=1", "train.grad_accum=3",
                                        "train.grad_accum=1", "train.grad_accum=2"};
    const char *sets[] = {batch[c % 4], accum[c % 4], "device.power_limit_w=200"};
    xs_error err;
    if (xs_scn_open(scns[c / 4], sets, capped ? 3 : 2, s, &err) != XS_OK)
        return -1;
    return xs_wl_build_compact(s, wl, NULL, &err);
}

static void estimate_memo_should_not_change_a_prediction(void)
{
    const char *const devs[] = {"a100-sxm4-80gb", "t4", "h100-sxm5-80gb", "tpu-v3",
                                "xeon-amx-2c"};
    int compared = 0;
    for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++)
        for (int capped = 0; capped < 2; capped++) {
            xs_device dev = tu_device(devs[d]);
            xs_scenario s[CASES];
            xs_workload wl[CASES];
            xs_prediction cold[CASES];
            int ok[CASES];
            xs_error err;
            memset(wl, 0, sizeof wl);
            /* each from nothing */
            for (int c = 0; c < CASES; c++) {
                ok[c] = open_case(c, &s[c], &wl[c], capped) == XS_OK;
                xs_est_memo_forget();
                ok[c] = ok[c] && xs_predict(&dev, &s[c], &wl[c], &cold[c], &err) == XS_OK;
            }
            /* then all in turn, twice, the memo warm; a corner device and
             * another device in between */
            for (int round = 0; round < 2; round++)
                for (int c = 0; c < CASES; c++) {
                    if (!ok[c])
                        continue;
                    xs_prediction warm, other;
                    CU_ASSERT_EQUAL_FATAL(xs_predict(&dev, &s[c], &wl[c], &warm, &err), XS_OK);
                    CU_ASSERT(same_prediction(&cold[c], &warm, wl[c].n));
                    compared++;
                    xs_prediction_free(&warm);
                    xs_device dev2 = tu_device(devs[(d + 1 + (size_t)c) % 5]);
                    if (xs_predict(&dev2, &s[c], &wl[c], &other, &err) == XS_OK)
                        xs_prediction_free(&other);
                    xs_prediction band = cold[c];
                    band.est = NULL;
                    xs_predict_band(&dev, &s[c], &wl[c], &band, &err);
                }
            for (int c = 0; c < CASES; c++) {
                if (ok[c])
                    xs_prediction_free(&cold[c]);
                xs_wl_free(&wl[c]);
            }
        }
    if (compared < 200)
        fprintf(stderr, "\n  only %d predictions compared\n", compared);
    CU_ASSERT(compared >= 200);
}

int tu_add_memo_suite(void)
{
    CU_pSuite s = CU_add_suite("memo", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, gemm_memo_should_give_the_search_result);
    CU_ADD_TEST(s, estimate_memo_should_not_change_a_prediction);
    return 0;
}
