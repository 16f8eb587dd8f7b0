/* test_api.c — the public interface (include/xpusim.h) in-process: errors
 * for a bad device, scenario and --set, each with its code and message;
 * the JSON text equal to the command's; op rows adding up to the step;
 * compare's and sweep's rows against the command's; NULL frees; handles
 * shared by threads. The installed library and header are checked by
 * tests/api_check.sh (make test-install). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "test_util.h"
#include "xpusim.h"

/* cJSON prints a double with 15 digits where they read back within one
 * epsilon (print_number), not always 17 */
static int same(double a, double b)
{
    return fabs(a - b) <= 4e-16 * fmax(fabs(a), fabs(b));
}

static xs_device_h *open_dev(const char *id)
{
    xs_device_h *d = NULL;
    xs_status st;
    CU_ASSERT_EQUAL(xs_device_open(id, &d, &st), XS_STATUS_OK);
    CU_ASSERT_EQUAL(st.code, XS_STATUS_OK);
    CU_ASSERT_STRING_EQUAL(st.msg, "");
    return d;
}

static xs_scenario_h *open_scn(const char *id, const char *const *sets, int n)
{
    xs_scenario_h *s = NULL;
    xs_status st;
    if (xs_scenario_open(id, sets, n, &s, &st) != XS_STATUS_OK)
        fprintf(stderr, "\n%s: %s\n", id, st.msg);
    CU_ASSERT_PTR_NOT_NULL(s);
    return s;
}

static void bad_device_should_fail_with_its_code_and_message(void)
{
    xs_device_h *d = (xs_device_h *)&d; /* must be reset to NULL */
    xs_status st;
    CU_ASSERT_EQUAL(xs_device_open("a100-sxm9", &d, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT_EQUAL(st.code, XS_STATUS_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "unknown device 'a100-sxm9'"));
    CU_ASSERT_PTR_NULL(strchr(st.msg, '\n'));
    CU_ASSERT_EQUAL(xs_device_open("/no/such/dev.json", &d, &st), XS_STATUS_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "/no/such/dev.json: no such file"));
    const char *bad = tu_write("api-bad-dev.json", "{\"id\": \"x\"");
    CU_ASSERT_EQUAL(xs_device_open(bad, &d, &st), XS_STATUS_JSON);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, bad));
    /* the status is optional: the code alone */
    CU_ASSERT_EQUAL(xs_device_open("a100-sxm9", &d, NULL), XS_STATUS_ARG);
    CU_ASSERT_EQUAL(xs_device_open(NULL, &d, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(d);
    /* ids fold case, as on the command line */
    CU_ASSERT_EQUAL_FATAL(xs_device_open("L4", &d, &st), XS_STATUS_OK);
    CU_ASSERT_STRING_EQUAL(xs_device_id(d), "l4");
    xs_device_free(d);
}

static void bad_scenario_or_set_should_fail_naming_it(void)
{
    xs_scenario_h *s = NULL;
    xs_status st;
    CU_ASSERT_EQUAL(xs_scenario_open("bert-huge", NULL, 0, &s, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "unknown scenario 'bert-huge'"));
    const char *key[] = {"train.batchsize=8"};
    CU_ASSERT_NOT_EQUAL(xs_scenario_open("bert-base-squad", key, 1, &s, &st), XS_STATUS_OK);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "train.batchsize"));
    const char *val[] = {"train.batch=0"};
    CU_ASSERT_NOT_EQUAL(xs_scenario_open("bert-base-squad", val, 1, &s, &st), XS_STATUS_OK);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "train.batch"));
    /* the same line the command prints */
    tu_result r = tu_run("predict -s bert-base-squad --set train.batch=0");
    CU_ASSERT_EQUAL(r.status, 2 - (st.code != XS_STATUS_ARG)); /* usage 2, data 1 */
    char line[1200];
    snprintf(line, sizeof line, "xpusim: error: %s\n", st.msg);
    CU_ASSERT_STRING_EQUAL(r.err, line);
    tu_run_free(&r);
    const char *null_set[] = {NULL};
    CU_ASSERT_EQUAL(xs_scenario_open("bert-base-squad", null_set, 1, &s, &st), XS_STATUS_ARG);
    CU_ASSERT_EQUAL(xs_scenario_open("bert-base-squad", NULL, 1, &s, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(s);
}

/* The library's JSON against `xpusim predict --format json`, byte for byte. */
static void check_json_equals_cli(const char *dev, const char *scn, const char *const *sets,
                                  int n)
{
    xs_device_h *d = open_dev(dev);
    xs_scenario_h *s = open_scn(scn, sets, n);
    xs_status st;
    char *json = xs_predict_json(d, s, &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    CU_ASSERT_EQUAL(st.code, XS_STATUS_OK);
    char cmd[512];
    int used = snprintf(cmd, sizeof cmd, "predict -d %s -s %s --format json --ignore-memory",
                        dev, scn);
    for (int i = 0; i < n; i++)
        used += snprintf(cmd + used, sizeof cmd - (size_t)used, " --set %s", sets[i]);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT(strlen(json) > 1000);
    CU_ASSERT_STRING_EQUAL(json, r.out);
    tu_run_free(&r);
    xs_free(json);
    xs_scenario_free(s);
    xs_device_free(d);
}

static void json_should_equal_what_predict_prints(void)
{
    check_json_equals_cli("a100-sxm4-80gb", "bert-large-squad", NULL, 0);
    const char *sets[] = {"train.batch=16", "train.precision=amp_bf16"};
    check_json_equals_cli("l4", "bert-base-squad", sets, 2);
    check_json_equals_cli("h100-sxm5-80gb", "mistral-7b-qlora", NULL, 0);
    /* a step that does not fit: predicted all the same */
    const char *big[] = {"train.batch=256"};
    check_json_equals_cli("t4", "gpt2-medium-finetune", big, 1);
}

static void op_rows_should_add_up_to_the_step(void)
{
    xs_device_h *d = open_dev("a100-sxm4-80gb");
    const char *sets[] = {"train.batch=32"};
    xs_scenario_h *s = open_scn("bert-large-squad", sets, 1);
    xs_summary sum;
    xs_op_row *ops = NULL;
    size_t n = 0;
    xs_status st;
    CU_ASSERT_EQUAL_FATAL(xs_predict_run(d, s, &sum, &ops, &n, &st), XS_STATUS_OK);
    CU_ASSERT_EQUAL(n, sum.nops);
    CU_ASSERT(n > 1000);
    double t = sum.host_wait_s, flops = 0;
    size_t gemms = 0, fwd = 0;
    for (size_t i = 0; i < n; i++) {
        t += ops[i].time_s;
        flops += ops[i].flops;
        CU_ASSERT(ops[i].calls >= 1 && ops[i].time_s > 0 && ops[i].name[0]);
        gemms += strcmp(ops[i].kind, "gemm") == 0;
        fwd += strcmp(ops[i].phase, "fwd") == 0;
    }
    CU_ASSERT_DOUBLE_EQUAL(t, sum.step_time_s, 1e-9 * sum.step_time_s);
    CU_ASSERT(gemms > 0 && fwd > 0);
    /* BERT-large: 6 FLOPs a token for each of its ~302M parameters outside
     * the embeddings (which only gather), 32 x 384 tokens, plus attention */
    CU_ASSERT(flops > 6 * 3.0e8 * 32 * 384 && flops < 6 * 3.4e8 * 32 * 384 * 1.3);
    /* the summary is the command's */
    tu_result r = tu_run("predict -s bert-large-squad --set train.batch=32 --format json");
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *step = cJSON_GetObjectItem(doc, "step"), *run = cJSON_GetObjectItem(doc, "run");
    CU_ASSERT(same(cJSON_GetObjectItem(step, "time_s")->valuedouble, sum.step_time_s));
    CU_ASSERT(same(cJSON_GetObjectItem(step, "samples_per_s")->valuedouble, sum.samples_per_s));
    CU_ASSERT(same(cJSON_GetObjectItem(run, "cost_usd")->valuedouble, sum.run_cost_usd));
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "ops")), (int)n);
    CU_ASSERT(sum.step_time_low_s < sum.step_time_s && sum.step_time_s < sum.step_time_high_s);
    CU_ASSERT(sum.fits && sum.memory_gb > 1 && sum.capacity_gb > 70);
    cJSON_Delete(doc);
    tu_run_free(&r);
    /* the summary alone; ops without nops is refused */
    xs_summary again;
    CU_ASSERT_EQUAL(xs_predict_run(d, s, &again, NULL, NULL, &st), XS_STATUS_OK);
    CU_ASSERT_EQUAL(again.step_time_s, sum.step_time_s);
    xs_op_row *o2 = NULL;
    CU_ASSERT_EQUAL(xs_predict_run(d, s, NULL, &o2, NULL, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(o2);
    CU_ASSERT_EQUAL(xs_predict_run(NULL, s, &again, NULL, NULL, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(xs_predict_json(d, NULL, &st));
    CU_ASSERT_EQUAL(st.code, XS_STATUS_ARG);
    xs_free(ops);
    xs_scenario_free(s);
    xs_device_free(d);
}

static void frees_should_accept_null(void)
{
    xs_free(NULL);
    xs_device_free(NULL);
    xs_scenario_free(NULL);
    CU_ASSERT_PTR_NULL(xs_device_id(NULL));
    CU_ASSERT_PTR_NULL(xs_scenario_id(NULL));
    CU_ASSERT_STRING_EQUAL(xs_lib_version(), "0.1.0");
}

static void list_should_give_the_shipped_ids(void)
{
    char **ids = NULL;
    size_t n = 0;
    xs_status st;
    CU_ASSERT_EQUAL_FATAL(xs_list("devices", &ids, &n, &st), XS_STATUS_OK);
    int a100 = 0;
    for (size_t i = 0; i < n; i++) {
        a100 += strcmp(ids[i], "a100-sxm4-80gb") == 0;
        if (i)
            CU_ASSERT(strcmp(ids[i - 1], ids[i]) < 0);
    }
    CU_ASSERT_EQUAL(a100, 1);
    CU_ASSERT_PTR_NULL(ids[n]);
    xs_free(ids);
    CU_ASSERT_EQUAL(xs_list("models", &ids, &n, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(ids);
}

/* compare's rows: the command's, in its order, with its scores. */
static void compare_should_rank_as_the_command_does(void)
{
    const char *ids[] = {"l4", "t4", "a10", "a100-sxm4-80gb"};
    xs_device_h *devs[4];
    for (int i = 0; i < 4; i++)
        devs[i] = open_dev(ids[i]);
    const char *vary[] = {"train.batch=8,32"};
    const char *sets[] = {"train.precision=amp_fp16"};
    xs_grid_opts o = {(const xs_device_h *const *)devs, 4, vary, 1, "time=1,cost=2", 0, 0};
    xs_run_row *rows = NULL;
    size_t n = 0;
    xs_status st;
    CU_ASSERT_EQUAL_FATAL(xs_compare("bert-base-squad", sets, 1, &o, &rows, &n, &st), XS_STATUS_OK);
    CU_ASSERT_EQUAL(n, 8);
    tu_result r = tu_run("compare -s bert-base-squad -d l4,t4,a10,a100-sxm4-80gb --vary "
                         "train.batch=8,32 --set train.precision=amp_fp16 --weights "
                         "time=1,cost=2 --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *jr = cJSON_GetObjectItem(doc, "rows");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(jr), (int)n);
    int pareto = 0;
    for (size_t i = 0; i < n; i++) {
        cJSON *row = cJSON_GetArrayItem(jr, (int)i);
        CU_ASSERT_STRING_EQUAL(rows[i].device, cJSON_GetObjectItem(row, "device")->valuestring);
        cJSON *pt = cJSON_GetObjectItem(row, "point");
        char point[64];
        snprintf(point, sizeof point, "train.batch=%d",
                 cJSON_GetObjectItem(pt, "train.batch")->valueint);
        CU_ASSERT_STRING_EQUAL(rows[i].point, point);
        CU_ASSERT(same(rows[i].score, cJSON_GetObjectItem(row, "score")->valuedouble));
        CU_ASSERT_EQUAL(rows[i].pareto, cJSON_IsTrue(cJSON_GetObjectItem(row, "pareto")));
        CU_ASSERT(same(rows[i].run_cost_usd, cJSON_GetObjectItem(row, "cost_usd")->valuedouble));
        pareto += rows[i].pareto;
        if (i)
            CU_ASSERT(rows[i - 1].score >= rows[i].score);
    }
    /* with time and cost both weighted, a dominated run scores below its
     * dominator: the best is on the frontier */
    CU_ASSERT(pareto >= 1 && rows[0].pareto);
    cJSON_Delete(doc);
    tu_run_free(&r);
    xs_free(rows);
    /* no grid: one row a device, the point "" */
    o.nvary = 0;
    CU_ASSERT_EQUAL_FATAL(xs_compare("bert-base-squad", sets, 1, &o, &rows, &n, &st), XS_STATUS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_STRING_EQUAL(rows[i].point, "");
    xs_free(rows);
    /* no options: every shipped accelerator, the host CPUs left out */
    CU_ASSERT_EQUAL_FATAL(xs_compare("bert-base-squad", NULL, 0, NULL, &rows, &n, &st),
                          XS_STATUS_OK);
    CU_ASSERT(n >= 10);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(strncmp(rows[i].device, "xeon", 4) != 0);
    xs_free(rows);
    /* a budget nothing meets: one error saying what the runs would take */
    o.budget_usd = 1e-6;
    CU_ASSERT_EQUAL(xs_compare("bert-base-squad", sets, 1, &o, &rows, &n, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(rows);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "the cheapest run costs $"));
    o.budget_usd = 0;
    o.weights = "speed=1";
    CU_ASSERT_EQUAL(xs_compare("bert-base-squad", sets, 1, &o, &rows, &n, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "unknown metric 'speed'"));
    for (int i = 0; i < 4; i++)
        xs_device_free(devs[i]);
}

static void sweep_should_give_a_row_a_point_and_device(void)
{
    xs_device_h *devs[2] = {open_dev("t4"), open_dev("a100-sxm4-80gb")};
    const char *vary[] = {"train.batch=8:32:8", "train.attention=unfused,flash"};
    xs_grid_opts o = {(const xs_device_h *const *)devs, 2, vary, 2, NULL, 0, 0};
    xs_run_row *rows = NULL;
    size_t n = 0;
    xs_status st;
    CU_ASSERT_EQUAL_FATAL(xs_sweep("gpt2-medium-finetune", NULL, 0, &o, &rows, &n, &st),
                          XS_STATUS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 4 * 2 * 2);
    /* grid order: the last key fastest, then the devices */
    CU_ASSERT_STRING_EQUAL(rows[0].point, "train.batch=8 train.attention=unfused");
    CU_ASSERT_STRING_EQUAL(rows[0].device, "t4");
    CU_ASSERT_STRING_EQUAL(rows[1].device, "a100-sxm4-80gb");
    CU_ASSERT_STRING_EQUAL(rows[2].point, "train.batch=8 train.attention=flash");
    CU_ASSERT_STRING_EQUAL(rows[15].point, "train.batch=32 train.attention=flash");
    int nofit = 0;
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(rows[i].predicted);
        CU_ASSERT((rows[i].reason == NULL) == rows[i].fits);
        nofit += !rows[i].fits;
    }
    CU_ASSERT(nofit > 0); /* gpt2-medium at batch 32 is past a T4's 15 GB */
    xs_free(rows);
    /* a bad axis, no device, and a bad scenario are errors, not rows */
    const char *bad[] = {"train.batch=0:4"};
    o.vary = bad;
    o.nvary = 1;
    CU_ASSERT_NOT_EQUAL(xs_sweep("gpt2-medium-finetune", NULL, 0, &o, &rows, &n, &st),
                        XS_STATUS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "train.batch"));
    o.nvary = 0;
    o.ndevices = 0;
    CU_ASSERT_EQUAL(xs_sweep("gpt2-medium-finetune", NULL, 0, &o, &rows, &n, &st),
                    XS_STATUS_ARG);
    o.ndevices = 2;
    CU_ASSERT_EQUAL(xs_sweep("nope", NULL, 0, &o, &rows, &n, &st), XS_STATUS_ARG);
    CU_ASSERT_PTR_NULL(rows);
    CU_ASSERT_EQUAL(n, 0);
    xs_device_free(devs[0]);
    xs_device_free(devs[1]);
}

static void validate_should_equal_what_the_command_prints(void)
{
    const char *files[] = {"data/published/zeus-v100-bert-base-squad.csv"};
    size_t failed = 99;
    xs_status st;
    char *json = xs_validate_json(files, 1, &failed, &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    tu_result r = tu_run("validate --measured data/published/zeus-v100-bert-base-squad.csv "
                         "--format json");
    CU_ASSERT_STRING_EQUAL(json, r.out);
    CU_ASSERT_EQUAL(failed, 0);
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    xs_free(json);
    const char *none[] = {"/no/such.csv"};
    CU_ASSERT_PTR_NULL(xs_validate_json(none, 1, NULL, &st));
    CU_ASSERT_EQUAL(st.code, XS_STATUS_IO);
    CU_ASSERT_PTR_NULL(xs_validate_json(NULL, 0, NULL, &st));
    CU_ASSERT_EQUAL(st.code, XS_STATUS_ARG);
}

typedef struct {
    const xs_device_h *d;
    const xs_scenario_h *s;
    char *json;
} shared_job;

static void *predict_thread(void *arg)
{
    shared_job *j = arg;
    j->json = xs_predict_json(j->d, j->s, NULL);
    return NULL;
}

static void threads_should_share_handles(void)
{
    xs_device_h *d = open_dev("h100-sxm5-80gb");
    xs_scenario_h *s = open_scn("llama2-7b-lora", NULL, 0);
    shared_job jobs[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (shared_job){d, s, NULL};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, predict_thread, &jobs[i]), 0);
    }
    char *here = xs_predict_json(d, s, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(here);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CU_ASSERT_PTR_NOT_NULL(jobs[i].json);
        if (jobs[i].json)
            CU_ASSERT_STRING_EQUAL(jobs[i].json, here);
        xs_free(jobs[i].json);
    }
    xs_free(here);
    xs_scenario_free(s);
    xs_device_free(d);
}

int tu_add_api_suite(void)
{
    CU_pSuite s = CU_add_suite("api", NULL, NULL);
    return !s ||
           !CU_add_test(s, "bad_device_should_fail_with_its_code_and_message",
                        bad_device_should_fail_with_its_code_and_message) ||
           !CU_add_test(s, "bad_scenario_or_set_should_fail_naming_it",
                        bad_scenario_or_set_should_fail_naming_it) ||
           !CU_add_test(s, "json_should_equal_what_predict_prints",
                        json_should_equal_what_predict_prints) ||
           !CU_add_test(s, "op_rows_should_add_up_to_the_step", op_rows_should_add_up_to_the_step) ||
           !CU_add_test(s, "frees_should_accept_null", frees_should_accept_null) ||
           !CU_add_test(s, "list_should_give_the_shipped_ids", list_should_give_the_shipped_ids) ||
           !CU_add_test(s, "compare_should_rank_as_the_command_does",
                        compare_should_rank_as_the_command_does) ||
           !CU_add_test(s, "sweep_should_give_a_row_a_point_and_device",
                        sweep_should_give_a_row_a_point_and_device) ||
           !CU_add_test(s, "validate_should_equal_what_the_command_prints",
                        validate_should_equal_what_the_command_prints) ||
           !CU_add_test(s, "threads_should_share_handles", threads_should_share_handles);
}
