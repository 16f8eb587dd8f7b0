/* test_advise.c — the advisor: which candidates it proposes for a
 * pretrained checkpoint and with --architecture, their parameter accounting
 * against an independent count, the tolerance, the ranking, the combined
 * row, and the CLI. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "advise.h"
#include "paths.h"
#include "test_util.h"

static xs_advice *advise_opt(const char *dev_id, const char *scn, const char *const *sets, int n,
                             double tol, int architecture, xs_advice *base, size_t *count)
{
    char dpath[512], spath[512];
    xs_error err;
    xs_device d;
    CU_ASSERT_EQUAL(xs_resolve("devices", dev_id, dpath, sizeof dpath, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_dev_load(dpath, &d, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_resolve("scenarios", scn, spath, sizeof spath, &err), XS_OK);
    xs_advice *a = NULL;
    xs_advise_opts opt = {tol, architecture};
    int rc = xs_advise(&d, spath, sets, n, &opt, base, &a, count, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
    return a;
}

/* With model shapes (--architecture), as the shape tests need. */
static xs_advice *advise(const char *dev_id, const char *scn, const char *const *sets, int n,
                         double tol, xs_advice *base, size_t *count)
{
    return advise_opt(dev_id, scn, sets, n, tol, 1, base, count);
}

/* The row whose --set list holds kv, or NULL. */
static const xs_advice *find_set(const xs_advice *a, size_t n, const char *kv)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < a[i].nsets; k++)
            if (strcmp(a[i].sets[k], kv) == 0)
                return &a[i];
    return NULL;
}

/* Whether any row's --set list sets a key starting with prefix. */
static int sets_prefix(const xs_advice *a, size_t n, const char *prefix)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < a[i].nsets; k++)
            if (strncmp(a[i].sets[k], prefix, strlen(prefix)) == 0)
                return 1;
    return 0;
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
    CU_ASSERT_STRING_EQUAL(v->rule,
                           "vocab divisible by 64: resize_token_embeddings(pad_to_multiple_of=64)");
    CU_ASSERT_EQUAL(v->kind, XS_ADVICE_FINETUNE); /* a fine-tune can pad its vocabulary */
    CU_ASSERT_DOUBLE_EQUAL(v->params, gpt2_params(50304, 1024), 0.5);
    CU_ASSERT_DOUBLE_EQUAL(v->params_delta_pct, 100.0 * 47 * 1024 / gpt2_params(50257, 1024),
                           1e-9);
    /* TMA-fed kernels need 16-byte rows: padding the vocabulary pays on Hopper */
    CU_ASSERT(v->speedup > 1.01);
    for (size_t i = 0; i + 1 < n; i++)
        CU_ASSERT(a[i].samples_per_s >= a[i + 1].samples_per_s);
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
        CU_ASSERT(strstr(a[i].rule, "b x s") == NULL);
    free(a);
    /* 25 x 100 = 2500 = 4 x 625. Upwards 32 x 100 = 3200 = 128 x 25 is the
     * first multiple of 128; downwards to 13 none is (24 x 100 = 32 x 75) */
    const char *seq[] = {"train.batch=25", "train.seq=100"};
    a = advise("a100-sxm4-80gb", "bert-base-squad", seq, 2, 5, &base, &n);
    const xs_advice *hi = find(a, n, "micro-batch 25 -> 32 (global batch 25 -> 32)");
    CU_ASSERT_PTR_NOT_NULL(hi);
    if (hi) {
        CU_ASSERT_STRING_EQUAL(hi->rule, "b x s = 3200, a multiple of 128; a new global batch: "
                                         "retune the learning rate and warm-up");
        CU_ASSERT(hi->changes_global_batch);
    }
    int batches = 0;
    for (size_t i = 0; i < n; i++)
        batches += strstr(a[i].rule, "b x s") != NULL;
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

/* A pretrained checkpoint (model.hf_config) keeps its shape: no hidden,
 * heads or FFN change unless asked; asked, they come as kind architecture.
 * An inline model gets them unasked. */
static void pretrained_should_get_architecture_changes_only_when_asked(void)
{
    xs_advice base;
    size_t n;
    xs_advice *a = advise_opt("t4", "bert-large-squad", NULL, 0, 5, 0, &base, &n);
    CU_ASSERT(n > 0);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL(a[i].kind, XS_ADVICE_FINETUNE);
    CU_ASSERT_FALSE(sets_prefix(a, n, "model.hidden=") || sets_prefix(a, n, "model.heads=") ||
                    sets_prefix(a, n, "model.ffn="));
    free(a);
    /* on a board where batch 24 fits (on a T4 it does not: nothing of that
     * shape is proposed there) */
    a = advise_opt("a100-sxm4-80gb", "bert-large-squad", NULL, 0, 5, 1, &base, &n);
    const xs_advice *heads = find(a, n, "heads 16 -> 8"); /* head size 128 */
    CU_ASSERT_PTR_NOT_NULL(heads);
    if (heads)
        CU_ASSERT_EQUAL(heads->kind, XS_ADVICE_ARCHITECTURE);
    free(a);
    /* tiny.json is inline: hidden 64, 4 heads of 16 -> 1 head of 64 */
    a = advise_opt("a100-sxm4-80gb", "tests/data/scenarios/tiny.json", NULL, 0, 50, 0,
                   &base, &n);
    const xs_advice *tiny = find(a, n, "heads 4 -> 1");
    CU_ASSERT_PTR_NOT_NULL(tiny);
    if (tiny)
        CU_ASSERT_EQUAL(tiny->kind, XS_ADVICE_ARCHITECTURE);
    free(a);
}

/* fp32 on an A100: TF32 and AMP are proposed and predicted faster; on a
 * V100, which has neither TF32 nor bf16, only fp16 AMP is. */
static void fp32_should_be_offered_the_formats_the_device_has(void)
{
    xs_advice base;
    size_t n;
    xs_advice *a = advise_opt("a100-sxm4-80gb", "bert-base-squad-hf", NULL, 0, 5, 0, &base, &n);
    static const char *const wanted[] = {"train.precision=tf32", "train.precision=amp_fp16",
                                         "train.precision=amp_bf16"};
    for (size_t i = 0; i < 3; i++) {
        const xs_advice *p = find_set(a, n, wanted[i]);
        CU_ASSERT_PTR_NOT_NULL(p);
        if (p) {
            CU_ASSERT(p->speedup > 1);
            CU_ASSERT_EQUAL(p->kind, XS_ADVICE_FINETUNE);
        }
    }
    /* apex O2 and autocast are both offered, each naming its amp_mode */
    const xs_advice *o2 = find(a, n, "precision fp32 -> amp_fp16 (o2)");
    CU_ASSERT_PTR_NOT_NULL(o2);
    if (o2) {
        CU_ASSERT_EQUAL(o2->nsets, 2);
        CU_ASSERT_STRING_EQUAL(o2->sets[1], "train.amp_mode=o2");
    }
    CU_ASSERT_PTR_NOT_NULL(find(a, n, "precision fp32 -> amp_fp16 (autocast)"));
    free(a);
    a = advise_opt("v100-sxm2-16gb", "bert-base-squad-hf", NULL, 0, 5, 0, &base, &n);
    CU_ASSERT_PTR_NULL(find_set(a, n, "train.precision=tf32"));
    CU_ASSERT_PTR_NULL(find_set(a, n, "train.precision=amp_bf16"));
    const xs_advice *fp16 = find_set(a, n, "train.precision=amp_fp16");
    CU_ASSERT_PTR_NOT_NULL(fp16);
    if (fp16)
        CU_ASSERT(fp16->speedup > 1);
    free(a);
}

/* Already at AMP, flash attention, fused kernels and a fused optimizer:
 * none of those is proposed again. */
static void a_scenario_at_amp_flash_fused_should_not_be_offered_them(void)
{
    xs_advice base;
    size_t n;
    const char *sets[] = {"train.kernels=fused"}; /* gpt2: amp_bf16, flash, fused AdamW */
    xs_advice *a = advise_opt("h100-sxm5-80gb", "gpt2-medium-finetune", sets, 1, 5, 0, &base, &n);
    CU_ASSERT(n > 0);
    static const char *const keys[] = {"train.precision=", "train.amp_mode=", "train.attention=",
                                       "train.kernels=", "train.fused_optimizer=",
                                       "train.optimizer_impl="};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        CU_ASSERT_FALSE(sets_prefix(a, n, keys[k]));
    free(a);
}

/* The combined row holds each group's best single change that adds up; it
 * is the fastest row and predicts faster than any one of its parts. */
static void all_of_the_above_should_combine_the_changes_that_add_up(void)
{
    xs_advice base;
    size_t n;
    xs_advice *a = advise_opt("a100-sxm4-80gb", "bert-base-squad-hf", NULL, 0, 5, 0, &base, &n);
    CU_ASSERT_FATAL(n > 1);
    CU_ASSERT(strstr(a[0].change, "all of the above: ") == a[0].change);
    CU_ASSERT(a[0].speedup > a[1].speedup);
    CU_ASSERT_FALSE(a[0].changes_global_batch);
    /* every set of the combination is some single row's */
    for (int k = 0; k < a[0].nsets; k++) {
        const xs_advice *single = NULL;
        for (size_t i = 1; i < n && !single; i++)
            for (int j = 0; j < a[i].nsets; j++)
                if (strcmp(a[i].sets[j], a[0].sets[k]) == 0)
                    single = &a[i];
        CU_ASSERT_PTR_NOT_NULL(single);
        if (single)
            CU_ASSERT(single->speedup >= XS_ADVICE_MIN_SPEEDUP && !single->changes_global_batch);
    }
    CU_ASSERT_PTR_NOT_NULL(find_set(&a[0], 1, "train.precision=amp_fp16"));
    CU_ASSERT_PTR_NOT_NULL(find_set(&a[0], 1, "train.attention=flash"));
    /* the same global batch, said so; a new one marked */
    const xs_advice *acc = find(a, n, "micro-batch 12 x 1 -> 6 x 2");
    CU_ASSERT_PTR_NOT_NULL(acc);
    if (acc)
        CU_ASSERT_FALSE(acc->changes_global_batch);
    const xs_advice *dbl = find_set(a, n, "train.batch=24");
    CU_ASSERT_PTR_NOT_NULL(dbl);
    if (dbl)
        CU_ASSERT(dbl->changes_global_batch);
    free(a);
}

/* Rows at the same global batch keep micro-batch x accumulation (8 x 4 =
 * 32: 16 x 2 above, 4 x 8 below; 32 x 1 needs about 94 GB of the H100's 80
 * and is not proposed); a doubled micro-batch is marked as a new global
 * batch. */
static void same_global_batch_rows_should_keep_batch_times_accumulation(void)
{
    xs_advice base;
    size_t n;
    xs_advice *a = advise_opt("h100-sxm5-80gb", "gpt2-medium-finetune", NULL, 0, 5, 0, &base, &n);
    static const char *const same[] = {"micro-batch 8 x 4 -> 16 x 2", "micro-batch 8 x 4 -> 4 x 8"};
    CU_ASSERT_PTR_NULL(find(a, n, "micro-batch 8 x 4 -> 32 x 1"));
    for (size_t i = 0; i < 2; i++) {
        const xs_advice *r = find(a, n, same[i]);
        CU_ASSERT_PTR_NOT_NULL(r);
        if (r) {
            CU_ASSERT_FALSE(r->changes_global_batch);
            CU_ASSERT_EQUAL(r->nsets, 2);
            CU_ASSERT(atoi(strchr(r->sets[0], '=') + 1) * atoi(strchr(r->sets[1], '=') + 1) == 32);
        }
    }
    const xs_advice *dbl = find(a, n, "micro-batch 8 -> 16 (global batch 32 -> 64)");
    CU_ASSERT_PTR_NOT_NULL(dbl);
    if (dbl)
        CU_ASSERT(dbl->changes_global_batch);
    free(a);
}

static void advise_cli_should_say_when_the_shape_is_good(void)
{
    /* hidden, FFN and head size multiples of 64, b.s = 98304 = 3 x 32768,
     * flash, fused kernels and optimizer, apex O2: a doubled micro-batch
     * gains under 1% at 256 */
    tu_result r = tu_run("advise -d a100-sxm4-80gb -s bert-large-squad --set model.heads=8 "
                         "--set train.batch=256 --set model.vocab=30528 --set train.attention=flash "
                         "--set train.kernels=fused --architecture");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Nothing to gain here"));
    tu_run_free(&r);
    r = tu_run("advise -d h100-sxm5-80gb -s gpt2-medium-finetune --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT(cJSON_IsArray(doc));
    cJSON *o;
    cJSON_ArrayForEach(o, doc)
    {
        CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(o, "change")));
        CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(o, "kind")));
        CU_ASSERT(cJSON_IsArray(cJSON_GetObjectItem(o, "set")));
        CU_ASSERT(cJSON_IsBool(cJSON_GetObjectItem(o, "changes_global_batch")));
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
           !CU_add_test(s, "pretrained_should_get_architecture_changes_only_when_asked",
                        pretrained_should_get_architecture_changes_only_when_asked) ||
           !CU_add_test(s, "fp32_should_be_offered_the_formats_the_device_has",
                        fp32_should_be_offered_the_formats_the_device_has) ||
           !CU_add_test(s, "a_scenario_at_amp_flash_fused_should_not_be_offered_them",
                        a_scenario_at_amp_flash_fused_should_not_be_offered_them) ||
           !CU_add_test(s, "all_of_the_above_should_combine_the_changes_that_add_up",
                        all_of_the_above_should_combine_the_changes_that_add_up) ||
           !CU_add_test(s, "same_global_batch_rows_should_keep_batch_times_accumulation",
                        same_global_batch_rows_should_keep_batch_times_accumulation) ||
           !CU_add_test(s, "advise_cli_should_say_when_the_shape_is_good",
                        advise_cli_should_say_when_the_shape_is_good) ||
           !CU_add_test(s, "gemm_sweep_should_show_the_tile_quantization_sawtooth",
                        gemm_sweep_should_show_the_tile_quantization_sawtooth) ||
           !CU_add_test(s, "gemm_cli_should_report_tile_waves_and_bound",
                        gemm_cli_should_report_tile_waves_and_bound);
}
