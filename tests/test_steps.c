/* test_steps.c — the optimisation waterfall (steps.h): that it is
 * composition only (each step is the plain prediction of its overrides),
 * which AMP it picks, why steps are skipped, --order, the refusals, and the
 * `xpusim steps` and `xpusim plot` command lines (JSON keys, CSV, errors). */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "job.h"
#include "steps.h"
#include "test_util.h"

static const int ALL[] = {XS_STEP_AMP, XS_STEP_FUSED_OPTIMIZER, XS_STEP_FUSED_KERNELS,
                          XS_STEP_FLASH, XS_STEP_BATCH};

/* The waterfall of scenario on dev with sets, the default order, batch;
 * a failure is a test failure (NULL). The caller frees. */
static xs_steps *run(const xs_device *dev, const char *scenario, const char *const *sets,
                     int nsets, const int *order, int norder, int64_t batch)
{
    xs_steps *st = malloc(sizeof *st);
    xs_error err;
    xs_steps_spec sp = {dev, scenario, sets, nsets, order ? order : ALL,
                        order ? norder : XS_STEP_COUNT, batch};
    int rc = xs_steps_run(&sp, st, &err);
    if (rc)
        fprintf(stderr, "\nsteps %s on %s: %s\n", scenario, dev->id, err.msg);
    CU_ASSERT_EQUAL(rc, XS_OK);
    if (rc) {
        free(st);
        return NULL;
    }
    return st;
}

/* predict scenario on dev with the overrides, as `xpusim predict` does */
static int plain(const xs_device *dev, const char *scenario, const char *const *sets, int n,
                 xs_job *j)
{
    xs_error err;
    xs_job_init(j);
    j->dev = *dev;
    int rc = xs_job_scenario(j, scenario, sets, n, &err);
    if (!rc)
        rc = xs_job_predict(j, 0, &err);
    if (rc)
        fprintf(stderr, "\npredict %s on %s: %s\n", scenario, dev->id, err.msg);
    return rc;
}

static void same(const xs_step *s, const xs_job *j)
{
    CU_ASSERT_EQUAL(s->batch, j->s.train.batch);
    CU_ASSERT_EQUAL(s->step_time_s, j->p.step_time_s);
    CU_ASSERT_EQUAL(s->samples_per_s, j->p.samples_per_s);
    CU_ASSERT_EQUAL(s->run_time_s, j->p.run_time_s);
    CU_ASSERT_EQUAL(s->energy_kwh, j->p.run_energy_kwh);
    CU_ASSERT_EQUAL(s->cost_usd, j->p.run_cost_usd);
    CU_ASSERT_EQUAL(s->mfu, j->p.mfu);
    CU_ASSERT_EQUAL(s->memory_gb * XS_GIB, j->p.mem.total);
    CU_ASSERT_EQUAL(s->fits, j->p.mem.fits);
}

static void first_step_should_be_a_plain_prediction_with_every_optimisation_off(void)
{
    xs_device dev = tu_device("a100-sxm4-80gb");
    xs_steps *st = run(&dev, "bert-large-squad", NULL, 0, NULL, 0, 0);
    if (!st)
        return;
    /* the overrides written out here, not read back from the waterfall */
    static const char *off[] = {"train.precision=fp32", "train.fused_optimizer=false",
                                "train.kernels=eager", "train.attention=unfused"};
    xs_job j;
    CU_ASSERT_EQUAL_FATAL(plain(&dev, "bert-large-squad", off, 4, &j), XS_OK);
    CU_ASSERT_EQUAL(st->step[0].kind, -1);
    CU_ASSERT_EQUAL(st->step[0].applied, 1);
    same(&st->step[0], &j);
    /* the recipe trains fp32 with BertAdam (train.fp32_optimizer) */
    CU_ASSERT_PTR_NOT_NULL(strstr(st->step[0].setting, "bertadam"));
    CU_ASSERT_EQUAL(j.p.matmul_engine, XS_FP32);
    CU_ASSERT_EQUAL(st->step[0].matmul_engine, XS_FP32);
    xs_job_free(&j);
    free(st);
}

/* every step, applied or not, against `predict` with the step's overrides;
 * a skipped step repeats the step before it */
static void check_composition(const xs_device *dev, const char *scenario,
                              const char *const *sets, int nsets, int64_t batch)
{
    xs_steps *st = run(dev, scenario, sets, nsets, NULL, 0, batch);
    if (!st)
        return;
    CU_ASSERT_EQUAL(st->n, 1 + XS_STEP_COUNT);
    for (size_t i = 0; i < st->n; i++) {
        const xs_step *s = &st->step[i];
        if (i > 0)
            CU_ASSERT_EQUAL(s->kind, ALL[i - 1]);
        if (!s->applied) {
            CU_ASSERT(s->why[0] != '\0');
            CU_ASSERT_EQUAL(s->setting[0], '\0');
            CU_ASSERT_EQUAL(s->step_time_s, st->step[i - 1].step_time_s);
            CU_ASSERT_EQUAL(s->nsets, st->step[i - 1].nsets);
            continue;
        }
        const char *v[XS_STEPS_MAX_SETS];
        for (int k = 0; k < s->nsets; k++)
            v[k] = st->sets[k];
        /* the user's overrides come first, as given */
        for (int k = 0; k < nsets; k++)
            CU_ASSERT_STRING_EQUAL(v[k], sets[k]);
        /* a step adds overrides: more than the step before it */
        if (i > 0)
            CU_ASSERT(s->nsets > st->step[i - 1].nsets);
        xs_job j;
        CU_ASSERT_EQUAL_FATAL(plain(dev, scenario, v, s->nsets, &j), XS_OK);
        same(s, &j);
        xs_job_free(&j);
    }
    free(st);
}

static void each_step_should_be_a_plain_prediction_with_its_cumulative_sets(void)
{
    xs_device a100 = tu_device("a100-sxm4-80gb"), t4 = tu_device("t4"), l4 = tu_device("l4");
    check_composition(&a100, "bert-large-squad", NULL, 0, 0);
    check_composition(&t4, "gpt2-medium-finetune", NULL, 0, 0);
    static const char *b8[] = {"train.batch=8", "data.epochs=1"};
    check_composition(&l4, "bert-base-squad", b8, 2, 48);
    check_composition(&a100, "tinyllama-1.1b-finetune", NULL, 0, 0);
    check_composition(&a100, "bert-base-lora-sst2", NULL, 0, 0);
}

static void amp_should_be_bf16_where_the_device_has_it_else_fp16_else_skipped(void)
{
    static const int amp[] = {XS_STEP_AMP};
    xs_device a100 = tu_device("a100-sxm4-80gb"), t4 = tu_device("t4");
    xs_steps *st = run(&a100, "bert-base-squad", NULL, 0, amp, 1, 0);
    if (st) {
        CU_ASSERT_EQUAL(st->step[1].applied, 1);
        CU_ASSERT_STRING_EQUAL(st->step[1].setting, "train.precision=amp_bf16");
        CU_ASSERT_EQUAL(st->step[1].matmul_engine, XS_BF16);
        free(st);
    }
    st = run(&t4, "bert-base-squad", NULL, 0, amp, 1, 0);
    if (st) {
        CU_ASSERT_STRING_EQUAL(st->step[1].setting, "train.precision=amp_fp16");
        CU_ASSERT_EQUAL(st->step[1].matmul_engine, XS_FP16);
        free(st);
    }
    /* a T4 without its tensor cores' fp16 figure: nothing to run AMP on */
    xs_device bare = t4;
    bare.peak_tflops[XS_FP16] = bare.peak_tflops[XS_BF16] = 0;
    st = run(&bare, "bert-base-squad", NULL, 0, amp, 1, 0);
    if (st) {
        CU_ASSERT_EQUAL(st->step[1].applied, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(st->step[1].why, "no fp16 or bf16 matrix engine"));
        CU_ASSERT_EQUAL(st->step[1].samples_per_s, st->step[0].samples_per_s);
        free(st);
    }
}

/* the reason a step of scenario on dev is skipped says says */
static void check_skip(const char *dev_id, const char *scenario, const char *const *sets,
                       int nsets, int kind, int64_t batch, const char *says)
{
    xs_device dev = tu_device(dev_id);
    int order[] = {XS_STEP_AMP, kind};
    xs_steps *st = run(&dev, scenario, sets, nsets, order, kind == XS_STEP_AMP ? 1 : 2, batch);
    if (!st)
        return;
    const xs_step *s = &st->step[st->n - 1];
    CU_ASSERT_EQUAL(s->kind, kind);
    CU_ASSERT_EQUAL(s->applied, 0);
    if (!strstr(s->why, says))
        fprintf(stderr, "\n%s on %s, step %s: '%s' lacks '%s'\n", scenario, dev_id,
                xs_step_name(kind), s->why, says);
    CU_ASSERT_PTR_NOT_NULL(strstr(s->why, says));
    free(st);
}

static void steps_that_cannot_apply_should_be_skipped_with_the_reason(void)
{
    check_skip("a100-sxm4-80gb", "tinyllama-1.1b-finetune", NULL, 0, XS_STEP_FUSED_KERNELS, 0,
               "classic family");
    check_skip("a100-sxm4-80gb", "bert-base-lora-sst2", NULL, 0, XS_STEP_FUSED_KERNELS, 0,
               "LoRA");
    static const char *bert_adam[] = {"train.optimizer=bertadam"};
    check_skip("a100-sxm4-80gb", "bert-base-squad", bert_adam, 1, XS_STEP_FUSED_OPTIMIZER, 0,
               "bertadam");
    check_skip("t4", "bert-base-squad", NULL, 0, XS_STEP_BATCH, 4096, "does not fit t4");
    check_skip("t4", "bert-base-squad", NULL, 0, XS_STEP_BATCH, 32, "train.batch is 32 already");
    check_skip("h100-sxm5-80gb", "llama2-7b-fp8", NULL, 0, XS_STEP_BATCH, 0,
               "not even train.batch=1 fits");
    /* gpt2-medium at batch 8 in amp_fp16 does not fit a T4; 7 does */
    check_skip("t4", "gpt2-medium-finetune", NULL, 0, XS_STEP_BATCH, 0,
               "train.batch=8 does not fit t4");
    /* the largest batch that fits is the scenario's own: nothing to add */
    static const char *b[] = {"train.batch=32"};
    xs_device t4 = tu_device("t4");
    int amp[] = {XS_STEP_AMP, XS_STEP_BATCH};
    xs_steps *st = run(&t4, "bert-base-squad", b, 1, amp, 2, 0);
    if (st) {
        int64_t max = st->step[2].batch;
        free(st);
        char set[64];
        snprintf(set, sizeof set, "train.batch=%lld", (long long)max);
        const char *at[] = {set};
        check_skip("t4", "bert-base-squad", at, 1, XS_STEP_BATCH, 0, "already the largest");
    }
}

static void the_batch_step_should_take_the_largest_batch_that_fits(void)
{
    xs_device t4 = tu_device("t4");
    int order[] = {XS_STEP_AMP, XS_STEP_FLASH, XS_STEP_BATCH};
    xs_steps *st = run(&t4, "bert-base-squad", NULL, 0, order, 3, 0);
    if (!st)
        return;
    const xs_step *s = &st->step[3];
    CU_ASSERT_EQUAL_FATAL(s->applied, 1);
    CU_ASSERT(s->batch > st->step[2].batch);
    CU_ASSERT(s->fits);
    /* one more does not fit */
    char more[64];
    snprintf(more, sizeof more, "train.batch=%lld", (long long)s->batch + 1);
    const char *v[XS_STEPS_MAX_SETS];
    for (int k = 0; k < s->nsets; k++)
        v[k] = st->sets[k];
    v[s->nsets] = more;
    xs_job j;
    CU_ASSERT_EQUAL_FATAL(plain(&t4, "bert-base-squad", v, s->nsets + 1, &j), XS_OK);
    CU_ASSERT_EQUAL(j.p.mem.fits, 0);
    xs_job_free(&j);
    free(st);
}

static void order_should_be_followed_and_steps_left_out_stay_off(void)
{
    int order[XS_STEP_COUNT], n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_steps_parse_order("batch,amp", order, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(order[0] == XS_STEP_BATCH && order[1] == XS_STEP_AMP);
    xs_device t4 = tu_device("t4");
    static const char *b8[] = {"train.batch=8"};
    xs_steps *st = run(&t4, "bert-base-squad", b8, 1, order, n, 0);
    if (!st)
        return;
    CU_ASSERT_EQUAL(st->n, 3);
    CU_ASSERT_EQUAL(st->step[1].kind, XS_STEP_BATCH);
    CU_ASSERT_EQUAL(st->step[2].kind, XS_STEP_AMP);
    /* the batch is chosen where the order puts it: in fp32, which it fits */
    CU_ASSERT_EQUAL(st->step[1].applied, 1);
    CU_ASSERT(st->step[1].batch > 8);
    CU_ASSERT(st->step[1].fits);
    CU_ASSERT_EQUAL(st->step[1].matmul_engine, XS_FP32);
    for (int k = 0; k < st->step[2].nsets; k++) {
        CU_ASSERT_PTR_NULL(strstr(st->sets[k], "fused_optimizer=true"));
        CU_ASSERT_PTR_NULL(strstr(st->sets[k], "attention=flash"));
        CU_ASSERT_PTR_NULL(strstr(st->sets[k], "kernels=fused"));
    }
    free(st);
    static const struct {
        const char *text, *says;
    } bad[] = {{"amp,amp", "named twice"}, {"speed", "'speed' is not a step"},
               {"", "'' is not a step"},   {"amp,", "'' is not a step"},
               {"amp,,flash", "'' is not a step"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(xs_steps_parse_order(bad[i].text, order, &n, &err), XS_EARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].says));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--order"));
    }
}

static void a_set_of_a_key_the_waterfall_owns_should_be_refused(void)
{
    xs_device dev = tu_device("a100-sxm4-80gb");
    static const char *keys[] = {"train.precision=bf16", "train.kernels=fused",
                                 "train.attention=flash", "train.fused_optimizer=true",
                                 "train.optimizer_impl=foreach"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        xs_steps *st = malloc(sizeof *st);
        xs_error err;
        xs_steps_spec sp = {&dev, "bert-base-squad", &keys[i], 1, ALL, XS_STEP_COUNT, 0};
        CU_ASSERT_EQUAL(xs_steps_run(&sp, st, &err), XS_EARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "leave the step out of --order"));
        CU_ASSERT_EQUAL(strncmp(err.msg + strlen("steps: --set "), keys[i],
                                strcspn(keys[i], "=")),
                        0);
        free(st);
    }
    CU_ASSERT(!xs_steps_owns_key("train.batch=8"));
    CU_ASSERT(!xs_steps_owns_key("train.precisionx=1"));
}

static void steps_json_should_have_the_documented_keys(void)
{
    tu_result r = tu_run("steps -d t4 -s tinyllama-1.1b-finetune --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(doc, "device")->valuestring, "t4");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(doc, "scenario")->valuestring,
                           "tinyllama-1.1b-finetune");
    const cJSON *steps = cJSON_GetObjectItem(doc, "steps");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(steps), 6);
    static const char *nums[] = {"batch",           "step_time_s",       "samples_per_s",
                                 "tokens_per_s",    "run_time_s",        "energy_kwh",
                                 "cost_usd",        "mfu",               "memory_gb",
                                 "capacity_gb",     "speedup_vs_prev",   "speedup_vs_start",
                                 "cost_change_vs_prev", "cost_change_vs_start"};
    int skipped = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, steps)
    {
        int applied = cJSON_IsTrue(cJSON_GetObjectItem(s, "applied"));
        skipped += !applied;
        CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(s, "index")));
        CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(s, "step")));
        CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(s, "setting")));
        CU_ASSERT(cJSON_IsArray(cJSON_GetObjectItem(s, "sets")));
        CU_ASSERT(applied ? cJSON_IsString(cJSON_GetObjectItem(s, "why"))
                          : cJSON_IsNull(cJSON_GetObjectItem(s, "why")));
        CU_ASSERT(applied ? cJSON_IsNull(cJSON_GetObjectItem(s, "skipped"))
                          : cJSON_IsString(cJSON_GetObjectItem(s, "skipped")));
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
            const cJSON *v = cJSON_GetObjectItem(s, nums[k]);
            CU_ASSERT(applied ? cJSON_IsNumber(v) : cJSON_IsNull(v));
        }
        CU_ASSERT(applied ? cJSON_IsBool(cJSON_GetObjectItem(s, "fits"))
                          : cJSON_IsNull(cJSON_GetObjectItem(s, "fits")));
        CU_ASSERT(applied ? cJSON_IsString(cJSON_GetObjectItem(s, "matmul_engine"))
                          : cJSON_IsNull(cJSON_GetObjectItem(s, "matmul_engine")));
    }
    /* llama: no fused kernels */
    CU_ASSERT(skipped >= 1);
    const cJSON *first = cJSON_GetArrayItem(steps, 0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(first, "step")->valuestring, "start");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(first, "speedup_vs_start")->valuedouble, 1);
    cJSON_Delete(doc);
    tu_run_free(&r);
}

static void steps_csv_and_table_should_list_every_step(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/steps.csv", tu_tmpdir());
    char cmd[700];
    snprintf(cmd, sizeof cmd, "steps -d a10 -s vit-base-finetune --format csv -o '%s'", path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    tu_run_free(&r);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[2048];
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT_EQUAL(strncmp(line, "index,step,applied,setting,batch,step_time_s,samples_per_s,", 59),
                    0);
    int rows = 0, cols_ok = 1;
    while (fgets(line, sizeof line, f)) {
        rows++;
        /* 21 columns, the setting and note quoted where they hold commas */
        int cols = 1, q = 0;
        for (const char *c = line; *c; c++) {
            q ^= *c == '"';
            cols += !q && *c == ',';
        }
        cols_ok &= cols == 21;
    }
    fclose(f);
    CU_ASSERT_EQUAL(rows, 6);
    CU_ASSERT(cols_ok);
    r = tu_run("steps -d a10 -s vit-base-finetune");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Optimisation waterfall: vit-base-finetune on a10"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "fused_kernels   skipped: "));
    tu_run_free(&r);
}

static void steps_and_plot_errors_should_be_one_line(void)
{
    static const struct {
        const char *args, *says;
        int status;
    } bad[] = {
        {"steps --order amp,speed", "'speed' is not a step", 2},
        {"steps --set train.attention=flash", "--set train.attention", 2},
        {"steps --batch 0", "--batch must be an integer", 2},
        {"steps -d nosuch", "unknown device 'nosuch'", 2},
        {"steps extra", "unexpected argument 'extra'", 2},
        {"steps --vary train.batch=1,2", "unknown option", 2},
        {"plot", "give KIND", 2},
        {"plot pie -o x", "KIND must be one of", 2},
        {"plot roofline", "give -o DIR", 2},
        {"plot time-by-kind --order amp -o x", "--order and --batch go with KIND waterfall", 2},
        {"plot roofline -d t4,l4 -o /nonexistent/x", "", 1},
        {"plot -o x roofline", "give KIND first", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_result r = tu_run(bad[i].args);
        if (r.status != bad[i].status || tu_lines(r.err) != 1 || !strstr(r.err, bad[i].says))
            fprintf(stderr, "\n`xpusim %s`: exit %d, stderr: %s\n", bad[i].args, r.status,
                    r.err);
        CU_ASSERT_EQUAL(r.status, bad[i].status);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad[i].says));
        CU_ASSERT_STRING_EQUAL(r.out, "");
        tu_run_free(&r);
    }
}

int tu_add_steps_suite(void)
{
    CU_pSuite s = CU_add_suite("steps", NULL, NULL);
    return !s ||
           !CU_add_test(s, "first_step_should_be_a_plain_prediction_with_every_optimisation_off",
                        first_step_should_be_a_plain_prediction_with_every_optimisation_off) ||
           !CU_add_test(s, "each_step_should_be_a_plain_prediction_with_its_cumulative_sets",
                        each_step_should_be_a_plain_prediction_with_its_cumulative_sets) ||
           !CU_add_test(s, "amp_should_be_bf16_where_the_device_has_it_else_fp16_else_skipped",
                        amp_should_be_bf16_where_the_device_has_it_else_fp16_else_skipped) ||
           !CU_add_test(s, "steps_that_cannot_apply_should_be_skipped_with_the_reason",
                        steps_that_cannot_apply_should_be_skipped_with_the_reason) ||
           !CU_add_test(s, "the_batch_step_should_take_the_largest_batch_that_fits",
                        the_batch_step_should_take_the_largest_batch_that_fits) ||
           !CU_add_test(s, "order_should_be_followed_and_steps_left_out_stay_off",
                        order_should_be_followed_and_steps_left_out_stay_off) ||
           !CU_add_test(s, "a_set_of_a_key_the_waterfall_owns_should_be_refused",
                        a_set_of_a_key_the_waterfall_owns_should_be_refused) ||
           !CU_add_test(s, "steps_json_should_have_the_documented_keys",
                        steps_json_should_have_the_documented_keys) ||
           !CU_add_test(s, "steps_csv_and_table_should_list_every_step",
                        steps_csv_and_table_should_list_every_step) ||
           !CU_add_test(s, "steps_and_plot_errors_should_be_one_line",
                        steps_and_plot_errors_should_be_one_line);
}
