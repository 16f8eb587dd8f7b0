/* test_advise.c — the shape advisor: which candidates it proposes, their
 * parameter accounting against an independent count, the tolerance, the
 * ranking, and the CLI. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "advise.h"
#include "paths.h"
#include "test_util.h"

static xs_advice *advise(const char *dev_id, const char *scn, const char *const *sets, int n,
                         double tol, xs_advice *base, size_t *count)
{
    char dpath[512], spath[512];
    xs_error err;
    xs_device d;
    CU_ASSERT_EQUAL(xs_resolve("devices", dev_id, dpath, sizeof dpath, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_dev_load(dpath, &d, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_resolve("scenarios", scn, spath, sizeof spath, &err), XS_OK);
    xs_advice *a = NULL;
    int rc = xs_advise(&d, spath, sets, n, tol, base, &a, count, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
    return a;
}

static const xs_advice *find(const xs_advice *a, size_t n, const char *change)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].change, change) == 0)
            return &a[i];
    return NULL;
}

/* GPT-2 medium parameters as a function of vocab and hidden (tied head):
 * (V + 1024) h + L (12 h^2 + 13 h) + 2 h with f = 4h, from the layer
 * shapes, independently of the workload's bookkeeping. */
static double gpt2_params(double V, double h)
{
    return (V + 1024) * h + 24 * (12 * h * h + 13 * h) + 2 * h;
}

static void advisor_should_account_parameters_exactly(void)
{
    xs_advice base;
    size_t n;
    xs_advice *a = advise("h100-sxm5-80gb", "gpt2-medium-finetune", NULL, 0, 5, &base, &n);
    CU_ASSERT_DOUBLE_EQUAL(base.params, gpt2_params(50257, 1024), 0.5);
    const xs_advice *v = find(a, n, "vocab 50257 -> 50304");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_STRING_EQUAL(v->rule, "vocab divisible by 64");
    CU_ASSERT_DOUBLE_EQUAL(v->params, gpt2_params(50304, 1024), 0.5);
    CU_ASSERT_DOUBLE_EQUAL(v->params_delta_pct, 100.0 * 47 * 1024 / gpt2_params(50257, 1024),
                           1e-9);
    /* TMA-fed kernels need 16-byte rows: padding the vocabulary pays on Hopper */
    CU_ASSERT(v->speedup > 1.01);
    for (size_t i = 0; i + 1 < n; i++)
        CU_ASSERT(a[i].speedup >= a[i + 1].speedup);
    free(a);
}

/* BERT with a span head: embeddings (V + 512 + 2) h + LN, per layer
 * 4(h^2 + h) + 2 h f + f + h + 4h, head 2h + 2. */
static double bert_params(double h, double f)
{
    return (30522 + 512 + 2) * h + 2 * h + 12 * (4 * (h * h + h) + 2 * h * f + f + 5 * h) +
           2 * h + 2;
}

static void tolerance_should_bound_the_parameter_change(void)
{
    xs_advice base;
    size_t n;
    const char *sets[] = {"model.hidden=1000", "model.heads=8", "model.ffn=4000"};
    xs_advice *loose = advise("a100-sxm4-80gb", "bert-base-squad", sets, 3, 20, &base, &n);
    CU_ASSERT_DOUBLE_EQUAL(base.params, bert_params(1000, 4000), 0.5);
    const xs_advice *h = find(loose, n, "hidden 1000 -> 1024");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    double expect = 100 * (bert_params(1024, 4000) / bert_params(1000, 4000) - 1);
    CU_ASSERT_DOUBLE_EQUAL(h->params_delta_pct, expect, 1e-9);
    free(loose);
    xs_advice *tight = advise("a100-sxm4-80gb", "bert-base-squad", sets, 3, 1, &base, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(fabs(tight[i].params_delta_pct) <= 1);
    CU_ASSERT_PTR_NULL(find(tight, n, "hidden 1000 -> 1024")); /* +3.1% */
    CU_ASSERT_PTR_NOT_NULL(find(tight, n, "ffn 4000 -> 4032"));
    free(tight);
}

static void batch_should_be_offered_only_when_b_times_s_is_not_a_large_power_of_two(void)
{
    xs_advice base;
    size_t n;
    const char *odd[] = {"train.batch=25"}; /* 25 x 384 = 9600 = 75 x 128: fine */
    xs_advice *a = advise("a100-sxm4-80gb", "bert-base-squad", odd, 1, 5, &base, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(strncmp(a[i].change, "batch", 5) != 0);
    free(a);
    /* 25 x 100 = 2500 = 4 x 625. Upwards 32 x 100 = 3200 = 128 x 25 is the
     * first multiple of 128; downwards to 13 none is (24 x 100 = 32 x 75) */
    const char *seq[] = {"train.batch=25", "train.seq=100"};
    a = advise("a100-sxm4-80gb", "bert-base-squad", seq, 2, 5, &base, &n);
    const xs_advice *hi = find(a, n, "batch 25 -> 32");
    CU_ASSERT_PTR_NOT_NULL(hi);
    if (hi)
        CU_ASSERT_STRING_EQUAL(hi->rule, "b x s = 3200, a multiple of 128");
    int batches = 0;
    for (size_t i = 0; i < n; i++)
        batches += strncmp(a[i].change, "batch", 5) == 0;
    CU_ASSERT_EQUAL(batches, 1);
    free(a);
}

static void candidates_that_break_the_model_should_be_skipped(void)
{
    xs_advice base;
    size_t n;
    /* hidden 768 with 12 heads: hidden 704/832 do not divide by 12, so only
     * the variants that also change the heads remain */
    const char *sets[] = {"model.hidden=760", "model.heads=8"};
    xs_advice *a = advise("a100-sxm4-80gb", "bert-base-squad", sets, 2, 10, &base, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(strstr(a[i].change, "hidden 760 -> 7") == NULL ||
                  strstr(a[i].change, "heads") != NULL || (atoi(a[i].change + 14) % 8) == 0);
    CU_ASSERT_PTR_NOT_NULL(find(a, n, "hidden 760 -> 768"));
    free(a);
}

static void advise_cli_should_say_when_the_shape_is_good(void)
{
    /* hidden, FFN and head size multiples of 64, b.s = 12288 = 3 x 4096 */
    tu_result r = tu_run("advise -d a100-sxm4-80gb -s bert-large-squad --set model.heads=8 "
                         "--set train.batch=32 --set model.vocab=30528");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "already good"));
    tu_run_free(&r);
    r = tu_run("advise -d h100-sxm5-80gb -s gpt2-medium-finetune --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT(cJSON_IsArray(doc));
    cJSON *o;
    cJSON_ArrayForEach(o, doc)
    {
        CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(o, "change")));
        CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(o, "params_delta_pct")));
        CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(o, "predicted_speedup")));
    }
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("advise --tolerance 0");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--tolerance must be a percentage"));
    tu_run_free(&r);
}

static void gemm_cli_should_report_tile_waves_and_bound(void)
{
    tu_result r = tu_run("gemm -d v100-sxm2-16gb --m 4096 --n 4096 --k 4096 --dtype fp32 "
                         "--format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    static const char *keys[] = {"time_s", "tflops", "tile_m", "tile_n", "tiles", "waves",
                                 "bound", "wave_efficiency", "fraction_of_peak"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(doc, keys[i]));
    double tf = cJSON_GetObjectItem(doc, "tflops")->valuedouble;
    CU_ASSERT(tf > 10 && tf < 15.7); /* an SGEMM on V100 */
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(doc, "engine")->valuestring, "fp32");
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("gemm --m 100 --n 0 --k 5");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--n must be an integer in [1, 16777216], got '0'"));
    tu_run_free(&r);
    r = tu_run("gemm --m 100 --n 100");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--m, --n and --k are required"));
    tu_run_free(&r);
    r = tu_run("gemm --m 64 --n 64 --k 64 --dtype fp64");
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_free(&r);
    r = tu_run("gemm --m 64 --k 64 --sweep n=5:1");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--sweep must look like n=1:4096"));
    tu_run_free(&r);
}

/* Throughput of an aligned sweep row: the value just past a multiple of
 * the tile is slower than the multiple itself (a new, mostly empty tile). */
static void gemm_sweep_should_show_the_tile_quantization_sawtooth(void)
{
    tu_result r = tu_run("gemm -d a100-sxm4-80gb --m 4096 --k 4096 --sweep n=1:1100");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 1 + 1100);
    double tf[1101] = {0};
    const char *line = strchr(r.out, '\n');
    for (int i = 1; line && line[1] && i <= 1100; i++, line = strchr(line + 1, '\n')) {
        long long n;
        double t, f;
        if (sscanf(line + 1, "%lld,%lf,%lf", &n, &t, &f) == 3 && n >= 1 && n <= 1100)
            tf[n] = f;
    }
    int drops = 0;
    for (int n = 128; n < 1100; n += 128) /* every tile shape here divides 128 */
        drops += tf[n + 2] < tf[n];
    CU_ASSERT(drops >= 6);
    tu_run_free(&r);
}

int tu_add_advise_suite(void)
{
    CU_pSuite s = CU_add_suite("advise", NULL, NULL);
    return !s ||
           !CU_add_test(s, "advisor_should_account_parameters_exactly",
                        advisor_should_account_parameters_exactly) ||
           !CU_add_test(s, "tolerance_should_bound_the_parameter_change",
                        tolerance_should_bound_the_parameter_change) ||
           !CU_add_test(s, "batch_should_be_offered_only_when_b_times_s_is_not_a_large_power_of_two",
                        batch_should_be_offered_only_when_b_times_s_is_not_a_large_power_of_two) ||
           !CU_add_test(s, "candidates_that_break_the_model_should_be_skipped",
                        candidates_that_break_the_model_should_be_skipped) ||
           !CU_add_test(s, "advise_cli_should_say_when_the_shape_is_good",
                        advise_cli_should_say_when_the_shape_is_good) ||
           !CU_add_test(s, "gemm_sweep_should_show_the_tile_quantization_sawtooth",
                        gemm_sweep_should_show_the_tile_quantization_sawtooth) ||
           !CU_add_test(s, "gemm_cli_should_report_tile_waves_and_bound",
                        gemm_cli_should_report_tile_waves_and_bound);
}
