/* test_cli.c — the xpusim binary as a user runs it: outputs, help, exit
 * codes and one-line errors. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "fileio.h"
#include "test_util.h"

static void predict_default_should_print_a_table_with_totals(void)
{
    tu_result r = tu_run("predict");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "bert-large-squad on a100-sxm4-80gb"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "samples/s"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kWh"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "ffn.up.dW"));
    CU_ASSERT_STRING_EQUAL(r.err, "");
    tu_run_free(&r);
}

static void predict_json_should_hold_the_documented_keys(void)
{
    tu_result r = tu_run("predict -d t4 -s bert-base-squad --set train.batch=8 --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "device"), "id")->valuestring, "t4");
    cJSON *scn = cJSON_GetObjectItem(doc, "scenario");
    CU_ASSERT_PTR_NOT_NULL_FATAL(scn);
    CU_ASSERT_DOUBLE_EQUAL(
        cJSON_GetObjectItem(cJSON_GetObjectItem(scn, "data"), "loader_us")->valuedouble, 35, 0);
    CU_ASSERT_STRING_EQUAL(
        cJSON_GetObjectItem(cJSON_GetObjectItem(scn, "train"), "ffn_bias")->valuestring,
        "separate");
    cJSON *ops = cJSON_GetObjectItem(doc, "ops");
    CU_ASSERT(cJSON_GetArraySize(ops) > 100);
    static const char *keys[] = {"name", "layer", "phase", "kind", "m", "n", "k", "batch",
                                 "flops", "bytes", "time_s", "bound", "energy_j", "calls"};
    double sum = 0, energy = 0;
    cJSON *op;
    cJSON_ArrayForEach(op, ops)
    {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(op, keys[i]));
        sum += cJSON_GetObjectItem(op, "time_s")->valuedouble;
        energy += cJSON_GetObjectItem(op, "energy_j")->valuedouble;
    }
    cJSON *step = cJSON_GetObjectItem(doc, "step");
    static const char *skeys[] = {"time_s", "samples_per_s", "tokens_per_s", "energy_j", "mfu"};
    for (size_t i = 0; i < sizeof skeys / sizeof skeys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(step, skeys[i]));
    double st = cJSON_GetObjectItem(step, "time_s")->valuedouble;
    double wait = cJSON_GetObjectItem(step, "host_wait_s")->valuedouble;
    CU_ASSERT(fabs(sum - cJSON_GetObjectItem(step, "device_time_s")->valuedouble) / st < 1e-9);
    CU_ASSERT(fabs(sum + wait - st) / st < 1e-9);
    CU_ASSERT(energy <= cJSON_GetObjectItem(step, "energy_j")->valuedouble * (1 + 1e-9));
    cJSON *run = cJSON_GetObjectItem(doc, "run");
    static const char *rkeys[] = {"steps", "time_s", "energy_kwh", "cost_usd"};
    for (size_t i = 0; i < sizeof rkeys / sizeof rkeys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(run, rkeys[i]));
    CU_ASSERT_EQUAL((int)cJSON_GetObjectItem(run, "steps")->valuedouble, 2 * ((88641 + 7) / 8));
    cJSON_Delete(doc);
    tu_run_free(&r);
}

static void predict_csv_should_have_one_row_per_op(void)
{
    tu_result r = tu_run("predict -d l4 -s gpt2-medium-finetune --format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT(strncmp(r.out, "name,layer,phase,kind,dtype,m,n,k,batch", 39) == 0);
    tu_result j = tu_run("workload -s gpt2-medium-finetune --format json");
    cJSON *doc = cJSON_Parse(j.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(tu_lines(r.out), 1 + cJSON_GetArraySize(cJSON_GetObjectItem(doc, "ops")));
    cJSON_Delete(doc);
    tu_run_free(&j);
    tu_run_free(&r);
}

static void output_file_should_be_written_whole_without_temporaries(void)
{
    char cmd[700], path[600];
    snprintf(path, sizeof path, "%s/out/pred.json", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/out'", tu_tmpdir());
    CU_ASSERT_EQUAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "predict -s bert-base-squad --format json -o '%s'", path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    char *text = NULL;
    CU_ASSERT_EQUAL_FATAL(xs_read_file(path, &text, NULL, NULL), 0);
    cJSON *doc = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL(doc);
    cJSON_Delete(doc);
    free(text);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/out", tu_tmpdir());
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        files += e->d_name[0] != '.';
    if (d)
        closedir(d);
    CU_ASSERT_EQUAL(files, 1);
    tu_run_free(&r);
    snprintf(cmd, sizeof cmd, "predict -o '%s/no/such/dir/x.txt'", tu_tmpdir());
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_free(&r);
}

/* Every bad input gives one line on stderr naming the problem and a
 * non-zero exit: 2 for usage, 1 for data. */
static void bad_input_should_give_one_clear_line_and_nonzero_exit(void)
{
    static const struct {
        const char *args;
        int status;
        const char *part;
    } cases[] = {
        {"predict -d a100", 2, "unknown device 'a100' (known: a10,"},
        {"predict -s squad", 2, "unknown scenario 'squad'"},
        {"predict --set train.batch=-4", 1, "'train.batch' must be an integer in [1, 1048576], got -4"},
        {"predict --set train.bach=4", 2, "unknown key 'train.bach'"},
        {"predict --set cluster.devices=4", 1, "needs the multi-device communication model"},
        {"predict --format xml", 2, "--format must be one of table|json|csv"},
        {"predict --bogus", 2, "unknown option '--bogus'"},
        {"predict -d", 2, "needs a value"},
        {"predict extra", 2, "unexpected argument 'extra'"},
        {"devices -d t4", 2, "option '--device' does not apply here"},
        {"scenarios --format json", 2, "option '--format' does not apply here"},
        {"frobnicate", 2, "unknown command 'frobnicate'"},
        {"predict -d tests/data/none.json", 1, "tests/data/none.json: no such file"},
        {"predict -s tests/data/scenarios/tiny.json --set train.seq=4096", 1,
         "train.seq (4096) must not exceed model.max_positions (128)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_result r = tu_run(cases[i].args);
        int ok = r.status == cases[i].status && tu_lines(r.err) == 1 &&
                 strncmp(r.err, "xpusim: error: ", 15) == 0 && strstr(r.err, cases[i].part) &&
                 r.out[0] == '\0';
        if (!ok)
            fprintf(stderr, "\n`xpusim %s` -> %d, stderr: %s", cases[i].args, r.status, r.err);
        CU_ASSERT(ok);
        tu_run_free(&r);
    }
    tu_result r = tu_run("");
    CU_ASSERT_EQUAL(r.status, 2); /* no command: usage on stdout, non-zero */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Commands:"));
    tu_run_free(&r);
}

static void every_command_should_have_help(void)
{
    static const char *cmds[] = {"--help", "predict --help", "workload --help", "devices --help",
                                 "scenarios --help", "compare --help", "--version"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        tu_result r = tu_run(cmds[i]);
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT(strlen(r.out) > 10);
        tu_run_free(&r);
    }
    tu_result r = tu_run("predict --help");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "train.precision"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "one of fp32|tf32|amp_fp16|amp_bf16|bf16"));
    tu_run_free(&r);
}

static void devices_and_scenarios_should_list_everything_shipped(void)
{
    tu_result r = tu_run("devices --format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 1 + 14); /* 13 GPUs and the calibrated CPU */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nh200-sxm-141gb,"));
    tu_run_free(&r);
    r = tu_run("scenarios");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "bert-base-squad"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "gpt2-medium-finetune"));
    tu_run_free(&r);
}

static void compare_should_rank_devices_by_run_cost(void)
{
    tu_result r = tu_run("compare -s bert-base-squad -d t4,h100-sxm5-80gb,a100-sxm4-80gb "
                         "--format csv");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 4);
    double last = 0;
    int rows = 0;
    for (char *line = strchr(r.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        /* run_cost_usd is the 10th column */
        const char *c = line + 1;
        for (int col = 0; col < 9 && c; col++)
            c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        double cost = atof(c);
        CU_ASSERT(cost >= last && cost > 0);
        last = cost;
        rows++;
    }
    CU_ASSERT_EQUAL(rows, 3);
    tu_run_free(&r);
    r = tu_run("compare");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 5 + 14 + 2); /* header, every device, footer */
    tu_run_free(&r);
    r = tu_run("compare -d t4,nope");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unknown device 'nope'"));
    tu_run_free(&r);
}

int tu_add_cli_suite(void)
{
    CU_pSuite s = CU_add_suite("cli", NULL, NULL);
    return !s ||
           !CU_add_test(s, "predict_default_should_print_a_table_with_totals",
                        predict_default_should_print_a_table_with_totals) ||
           !CU_add_test(s, "predict_json_should_hold_the_documented_keys",
                        predict_json_should_hold_the_documented_keys) ||
           !CU_add_test(s, "predict_csv_should_have_one_row_per_op",
                        predict_csv_should_have_one_row_per_op) ||
           !CU_add_test(s, "output_file_should_be_written_whole_without_temporaries",
                        output_file_should_be_written_whole_without_temporaries) ||
           !CU_add_test(s, "bad_input_should_give_one_clear_line_and_nonzero_exit",
                        bad_input_should_give_one_clear_line_and_nonzero_exit) ||
           !CU_add_test(s, "every_command_should_have_help", every_command_should_have_help) ||
           !CU_add_test(s, "compare_should_rank_devices_by_run_cost",
                        compare_should_rank_devices_by_run_cost) ||
           !CU_add_test(s, "devices_and_scenarios_should_list_everything_shipped",
                        devices_and_scenarios_should_list_everything_shipped);
}
