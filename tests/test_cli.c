/* test_cli.c — the xpusim binary as a user runs it: outputs, help, exit
 * codes and one-line errors. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>

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
    /* 8 x 1024 tokens of GPT-2 medium need more than an L4's memory: the
     * op list is predicted all the same */
    tu_result r = tu_run("predict -d l4 -s gpt2-medium-finetune --format csv --ignore-memory");
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
        {"predict -d a100", 2, "unknown device 'a100'; did you mean 'a10'? (known: a10,"},
        {"predict -d a100-sxm-80gb", 2, "did you mean 'a100-sxm4-80gb'?"},
        {"predict -s bert-larg-squad", 2, "did you mean 'bert-large-squad'?"},
        {"predict --set train.bacth=4", 2, "unknown key 'train.bacth'; did you mean 'train.batch'?"},
        {"predict --set batch=4", 2, "did you mean 'train.batch'?"},
        {"predict --summary --format csv", 2, "--summary goes with --format table or json"},
        {"predict --price a10=1", 2, "'a10' is not among the devices of this run"},
        {"predict --price a100-sxm4-80gb=-1", 2, "expected DEVICE=USD_PER_HOUR"},
        {"compare -d a10,,l4", 2, "has an empty device id"},
        {"compare -d a10 --all", 2, "-d and --all are alternatives"},
        {"predict -s squad", 2, "unknown scenario 'squad'"},
        {"predict --set train.batch=-4", 1, "'train.batch' must be an integer in [1, 1048576], got -4"},
        {"predict --set train.bach=4", 2, "unknown key 'train.bach'"},
        {"predict -d xeon-amx-2c --set cluster.devices=4", 1, "cluster.devices 4 needs GPUs"},
        {"predict --format xml", 2, "--format must be one of table|json|csv"},
        {"predict --bogus", 2, "unknown option '--bogus'"},
        {"predict -d", 2, "needs a value"},
        {"predict extra", 2, "unexpected argument 'extra'"},
        {"devices -d t4", 2, "option '--device' does not apply here"},
        {"scenarios --format json", 2, "option '--format' does not apply here"},
        {"frobnicate", 2, "unknown command 'frobnicate'"},
        {"predict --set 'train.ba\ntch=3'", 2, "unknown key 'train.ba\\ntch'"},
        {"predict -d 'a1\n0'", 2, "unknown device 'a1\\n0'"},
        {"predict -d tests/data/none.json", 1, "tests/data/none.json: no such file"},
        {"predict -s tests/data/scenarios/tiny.json --set train.seq=4096", 1,
         "error: --set train.seq=4096: "},
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
    /* each sub-command's help ends with worked examples */
    static const char *subs[] = {"predict", "workload", "compare", "sweep", "fit", "gemm",
                                 "advise", "validate", "calibrate", "devices", "scenarios",
                                 "steps", "plot", "threads"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "%s --help", subs[i]);
        tu_result h = tu_run(cmd);
        const char *ex = strstr(h.out, "\nExamples:\n");
        int examples = 0;
        for (const char *l = ex ? strchr(ex + 1, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n'))
            examples += strncmp(l + 1, "  xpusim ", 9) == 0;
        if (examples < 2)
            fprintf(stderr, "\n`xpusim %s` has %d examples at its end\n", cmd, examples);
        CU_ASSERT(examples >= 2);
        tu_run_free(&h);
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
    CU_ASSERT_EQUAL(tu_lines(r.out), 1 + 23); /* 17 GPUs, 5 TPUs and the calibrated CPU */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\ntpu-v4,\"Google TPU v4 (chip, megacore)\",tpu,v4,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nrtx-3090,"));
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
    CU_ASSERT_EQUAL(tu_lines(r.out), 5 + 22 + 2); /* header, every accelerator, footer */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\ntpu-v5p "));
    CU_ASSERT_PTR_NULL(strstr(r.out, "xeon-amx-2c"));
    tu_run_free(&r);
    r = tu_run("compare -d t4,nope");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "unknown device 'nope'"));
    tu_run_free(&r);
}


/* The columns of CSV line `row` (0: the header) of text, split at commas
 * (the fields tested here hold none). */
static int csv_field(const char *text, int row, int col, char *dst, size_t size)
{
    const char *line = text;
    for (int i = 0; i < row && line; i++)
        line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    if (!line || !*line)
        return -1;
    for (int c = 0; c < col && line; c++) {
        const char *comma = strchr(line, ','), *nl = strchr(line, '\n');
        line = comma && (!nl || comma < nl) ? comma + 1 : NULL;
    }
    if (!line)
        return -1;
    size_t len = strcspn(line, ",\n");
    snprintf(dst, size, "%.*s", (int)len, line);
    return 0;
}

/* A device that cannot run the scenario (the CPU has no fused-attention
 * kernel) is listed last with the reason; the others are still ranked. */
static void compare_should_rank_the_rest_when_one_device_cannot_run(void)
{
    tu_result r = tu_run("compare -s gpt2-medium-finetune --all --format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 1 + 23);
    char dev[64] = "", cost[64] = "";
    CU_ASSERT_EQUAL(csv_field(r.out, 23, 0, dev, sizeof dev), 0);
    CU_ASSERT_STRING_EQUAL(dev, "xeon-amx-2c");
    CU_ASSERT_EQUAL(csv_field(r.out, 23, 9, cost, sizeof cost), 0);
    CU_ASSERT_STRING_EQUAL(cost, ""); /* no prediction, no cost */
    const char *last = strstr(r.out, "\nxeon-amx-2c,");
    CU_ASSERT(last && strstr(last, "no kernel for op 'attn.flash'"));
    /* ranked rows have no reason: the field before the three memory columns
     * (memory_gb, capacity_gb, fits) is empty */
    const char *row1 = strchr(r.out, '\n') + 1, *q = strchr(row1, '\n');
    for (int commas = 0; q && q > row1 && commas < 3;)
        commas += *--q == ',';
    CU_ASSERT(q && q > row1 && q[-1] == ',');
    tu_run_free(&r);
    r = tu_run("compare -s gpt2-medium-finetune -d t4,xeon-amx-2c");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "cannot run this scenario:\n  xeon-amx-2c"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nt4 "));
    tu_run_free(&r);
    r = tu_run("compare -s gpt2-medium-finetune -d xeon-amx-2c --format json");
    CU_ASSERT_EQUAL(r.status, 1); /* nothing could run: the report, then the error */
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "devices")), 0);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "unavailable")), 1);
    cJSON_Delete(doc);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no device could run this scenario"));
    tu_run_free(&r);
}

/* -d ids are trimmed, fold case, and a device named twice is one row; the
 * CPU is compared when named. */
static void compare_device_list_should_be_trimmed_and_merged(void)
{
    tu_result r = tu_run("compare -s bert-base-squad -d ' a10, L4 ,a10,devices/l4.json,xeon-amx-2c' "
                         "--format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 1 + 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\na10,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nl4,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nxeon-amx-2c,"));
    tu_run_free(&r);
}

/* --price replaces the list price: the run costs scale with it, and the
 * row says whose price it is. */
static void price_override_should_scale_the_cost_and_say_so(void)
{
    char list[64], mine[64], provider[128];
    tu_result r = tu_run("compare -s bert-base-squad -d a10 --format csv");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_EQUAL(csv_field(r.out, 1, 9, list, sizeof list), 0);
    CU_ASSERT_EQUAL(csv_field(r.out, 1, 12, provider, sizeof provider), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(provider, "Lambda"));
    tu_run_free(&r);
    r = tu_run("compare -s bert-base-squad -d a10 --price A10=2.58 --format csv");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_EQUAL(csv_field(r.out, 1, 9, mine, sizeof mine), 0);
    CU_ASSERT_EQUAL(csv_field(r.out, 1, 12, provider, sizeof provider), 0);
    CU_ASSERT_STRING_EQUAL(provider, "your quote (--price)");
    CU_ASSERT_DOUBLE_EQUAL(atof(mine) / atof(list), 2.58 / 1.29, 1e-6);
    tu_run_free(&r);
    r = tu_run("compare -s bert-base-squad -d a10 --price t4=1");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "'t4' is not among the devices of this run"));
    tu_run_free(&r);
}

/* --set values are read whole: a number with anything after it, hex, or a
 * float for a count is refused naming the --set, the key and the text. */
static void set_values_should_be_parsed_strictly(void)
{
    static const char *bad[] = {"train.batch=64abc", "train.batch=64,128", "train.batch=6.4e1",
                                "train.batch=0x40",  "train.batch=64.0",   "train.batch= 64",
                                "train.grad_clip=false,", "train.batch="};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "predict --summary --set '%s'", bad[i]);
        tu_result r = tu_run(cmd);
        char want[128];
        snprintf(want, sizeof want, "xpusim: error: --set %s: ", bad[i]);
        int ok = r.status != 0 && tu_lines(r.err) == 1 && strncmp(r.err, want, strlen(want)) == 0 &&
                 r.out[0] == '\0';
        if (!ok)
            fprintf(stderr, "\n`%s` -> %d, %s", cmd, r.status, r.err);
        CU_ASSERT(ok);
        tu_run_free(&r);
    }
    tu_result r = tu_run("predict --summary --set train.batch=64 --set train.grad_clip=false");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "batch 64 x seq"));
    tu_run_free(&r);
    /* a file named by --set is relative to the working folder, not the scenario's */
    r = tu_run("predict --summary -s bert-base-squad "
               "--set model.hf_config=scenarios/models/bert-large-uncased.json");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "24 layers, hidden 1024"));
    tu_run_free(&r);
    r = tu_run("predict --summary --set model.hf_config=no-such-config.json");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "error: --set model.hf_config=no-such-config.json: "));
    tu_run_free(&r);
    /* the measured-run CSV's set column goes through the same parser */
    const char *csv = tu_write("strict.csv", "device,scenario,set,metric,value,source\n"
                                             "a10,bert-base-squad,train.batch=64abc,samples_per_s,"
                                             "100,test\n");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "validate --measured '%s' --format csv", csv);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "written in decimal digits, got '64abc'"));
    tu_run_free(&r);
}

/* --summary prints the answer alone. */
static void predict_summary_should_print_only_the_answer(void)
{
    tu_result r = tu_run("predict --summary");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 10);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nhost      "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nmemory    "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nstep      "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nband      "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nrun       "));
    CU_ASSERT_PTR_NULL(strstr(r.out, "attn.q"));
    tu_run_free(&r);
    r = tu_run("predict --summary --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(doc, "step"));
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(doc, "run"));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(doc, "ops"));
    cJSON_Delete(doc);
    tu_run_free(&r);
}

/* Each row advise proposes, its `set` list given to predict after the same
 * options, predicts the row's samples/s: the advice is what predict says. */
static void advise_sets_should_reproduce_their_samples_per_s(void)
{
    static const char *runs[] = {
        "-d a100-sxm4-80gb -s bert-base-squad-hf",
        "-d h100-sxm5-80gb -s gpt2-medium-finetune --set train.attention=unfused",
        "-d t4 -s bert-large-squad --set train.batch=25 --set train.seq=100",
        "-d a100-sxm4-80gb -s tests/data/scenarios/tiny.json",
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "advise %s --architecture --format json", runs[i]);
        tu_result r = tu_run(cmd);
        CU_ASSERT_EQUAL_FATAL(r.status, 0);
        cJSON *doc = cJSON_Parse(r.out);
        CU_ASSERT_FATAL(cJSON_IsArray(doc));
        CU_ASSERT(cJSON_GetArraySize(doc) > 1);
        const cJSON *row;
        cJSON_ArrayForEach(row, doc)
        {
            size_t used = (size_t)snprintf(cmd, sizeof cmd, "predict %s --format json", runs[i]);
            const cJSON *kv;
            cJSON_ArrayForEach(kv, cJSON_GetObjectItem(row, "set"))
            used += (size_t)snprintf(cmd + used, sizeof cmd - used, " --set %s",
                                     cJSON_GetStringValue(kv));
            CU_ASSERT_FATAL(used < sizeof cmd);
            tu_result p = tu_run(cmd);
            CU_ASSERT_EQUAL(p.status, 0);
            cJSON *pd = cJSON_Parse(p.out);
            double want = cJSON_GetObjectItem(row, "samples_per_s")->valuedouble;
            const cJSON *got = cJSON_GetObjectItem(cJSON_GetObjectItem(pd, "step"), "samples_per_s");
            CU_ASSERT(cJSON_IsNumber(got));
            if (cJSON_IsNumber(got) && fabs(got->valuedouble - want) > 1e-9 * want) {
                fprintf(stderr, "\n`xpusim %s`: %.9g samples/s, advise said %.9g\n", cmd,
                        got->valuedouble, want);
                CU_FAIL("advise and predict disagree");
            }
            cJSON_Delete(pd);
            tu_run_free(&p);
        }
        cJSON_Delete(doc);
        tu_run_free(&r);
    }
    /* --architecture is advise's alone */
    tu_result r = tu_run("predict --architecture");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "option '--architecture' does not apply here"));
    tu_run_free(&r);
}

/* scenarios --new: a template that predicts as written, never written
 * over a file, and only under a name that can be a scenario id. */
static void new_scenario_template_should_predict_and_not_overwrite(void)
{
    char dir[600], cmd[1400], path[700];
    snprintf(dir, sizeof dir, "%s/new", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "scenarios --new my-run -o '%s'", dir);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "my-run.json"));
    CU_ASSERT_STRING_EQUAL(r.err, "");
    tu_run_free(&r);
    snprintf(path, sizeof path, "%s/my-run.json", dir);
    snprintf(cmd, sizeof cmd, "predict -s '%s' -d l4 --format json", path);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"samples_per_s\""));
    tu_run_free(&r);
    /* the same name again, by folder or by file: refused, the file kept */
    char before[256] = "", after[256] = "";
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(fread(before, 1, sizeof before - 1, f) > 0);
    fclose(f);
    const char *again[] = {"scenarios --new my-run -o '%s'", "scenarios --new my-run.json -o '%s'"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, again[i], i ? path : dir);
        r = tu_run(cmd);
        CU_ASSERT_EQUAL(r.status, 1);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "exists; --new does not overwrite a file"));
        tu_run_free(&r);
    }
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(fread(after, 1, sizeof after - 1, f) > 0);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(before, after);
    /* names that cannot be an id, or a file that would not match it */
    static const char *bad[] = {"scenarios --new 'my run'", "scenarios --new ../up",
                                "scenarios --new -x", "scenarios --new", "scenarios -o x.json"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = tu_run(bad[i]);
        if (r.status != 2 || tu_lines(r.err) != 1)
            fprintf(stderr, "\n`xpusim %s` -> %d: %s", bad[i], r.status, r.err);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        tu_run_free(&r);
    }
    snprintf(cmd, sizeof cmd, "scenarios --new other -o '%s/mine.json'", dir);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "the file must be named other.json"));
    tu_run_free(&r);
    snprintf(path, sizeof path, "%s/mine.json", dir);
    f = fopen(path, "r");
    CU_ASSERT_PTR_NULL(f);
    if (f)
        fclose(f);
}

/* A scenario with three problems: three error lines, each naming the file
 * and the field, and no prediction. */
static void scenario_problems_should_all_be_reported(void)
{
    const char *p = tu_write("three-cli.json",
                             "{\"id\":\"three-cli\",\"model\":{\"hf_config\":\"x.json\"},"
                             "\"train\":{\"precison\":\"amp_bf16\",\"attention\":\"sdpa\"},"
                             "\"data\":{\"epochs\":0}}");
    tu_write("x.json", "{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,\"n_head\":4,"
                       "\"vocab_size\":100,\"n_positions\":256}");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "predict -s '%s' -d l4", p);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    /* precison unknown; model.head missing; attention bad; samples missing;
     * epochs bad: the unknown keys first, then the table's order */
    static const char *part[] = {"unknown field 'train.precison'",
                                 "missing required field 'model.head'",
                                 "field 'train.attention' must be one of unfused|flash",
                                 "missing required field 'data.samples'",
                                 "field 'data.epochs' must be an integer"};
    CU_ASSERT_EQUAL(tu_lines(r.err), 5);
    const char *line = r.err;
    for (size_t i = 0; i < sizeof part / sizeof *part && line; i++) {
        CU_ASSERT_EQUAL(strncmp(line, "xpusim: error: ", 15), 0);
        CU_ASSERT_EQUAL(strncmp(line + 15, p, strlen(p)), 0);
        const char *end = strchr(line, '\n');
        char one[1200];
        snprintf(one, sizeof one, "%.*s", end ? (int)(end - line) : (int)strlen(line), line);
        if (!strstr(one, part[i]))
            fprintf(stderr, "\nline %zu: %s (wanted %s)", i + 1, one, part[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(one, part[i]));
        line = end ? end + 1 : NULL;
    }
    tu_run_free(&r);
}

/* The line of text that starts with prefix, or NULL. */
static const char *line_starting(const char *text, const char *prefix)
{
    size_t len = strlen(prefix);
    for (const char *l = text; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, prefix, len) == 0)
            return l;
    return NULL;
}

static void sweep_csv_should_have_a_row_per_point_and_device(void)
{
    char path[512], cmd[1024];
    snprintf(path, sizeof path, "%s/sweep.csv", tu_tmpdir());
    snprintf(cmd, sizeof cmd,
             "sweep -s bert-base-squad -d t4,a10 --vary train.batch=8:64:8 --vary "
             "train.attention=unfused,flash --set data.samples=1000 -o '%s'",
             path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    char *csv = NULL;
    CU_ASSERT_EQUAL_FATAL(xs_read_file(path, &csv, NULL, NULL), 0);
    CU_ASSERT_EQUAL(tu_lines(csv), 1 + 8 * 2 * 2); /* the header, batch x attention x device */
    CU_ASSERT(strncmp(csv, "train.batch,train.attention,device,matmul_engine,step_time_s,"
                           "samples_per_s,tokens_per_s,mfu,avg_power_w,run_time_s,energy_kwh,"
                           "cost_usd,memory_gb,capacity_gb,fits,reason\n", 161) == 0);
    /* grid order: the first --vary key slowest, devices fastest */
    const char *l = strchr(csv, '\n') + 1;
    CU_ASSERT(strncmp(l, "8,unfused,t4,", 13) == 0);
    l = strchr(l, '\n') + 1;
    CU_ASSERT(strncmp(l, "8,unfused,a10,", 14) == 0);
    l = strchr(l, '\n') + 1;
    CU_ASSERT(strncmp(l, "8,flash,t4,", 11) == 0);
    /* 64 x 384 tokens of unfused attention need more than a T4's 15 GB:
     * the row is there, unpriced, with the reason */
    const char *big = line_starting(csv, "64,unfused,t4,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    CU_ASSERT(strstr(big, ",,,") && strstr(big, ",0,\"does not fit: the step needs "));
    const char *ok = line_starting(csv, "64,unfused,a10,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ok);
    CU_ASSERT(strstr(ok, ",1,\n") != NULL); /* fits, no reason */
    free(csv);
    tu_run_free(&r);
}

static void sweep_with_no_row_predicted_should_write_the_reasons_and_exit_1(void)
{
    /* BERT has 512 positions: no device can run 1024 tokens */
    tu_result r = tu_run("sweep -s bert-base-squad -d t4,l4 --vary train.seq=1024,2048");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_EQUAL(tu_lines(r.out), 1 + 2 * 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\n2048,l4,,,,,,,,,,,,0,--vary train.seq=2048: "));
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no point of the grid could be predicted"));
    tu_run_free(&r);
}

static void sweep_should_not_depend_on_the_thread_count(void)
{
    const char *cmd = "sweep -s bert-base-squad -d t4,l4,xeon-amx-2c --vary train.batch=1:24 "
                      "--vary train.attention=unfused,flash --set data.samples=500 --format json";
    setenv("OMP_NUM_THREADS", "1", 1);
    tu_result one = tu_run(cmd);
    setenv("OMP_NUM_THREADS", "2", 1);
    tu_result two = tu_run(cmd);
    unsetenv("OMP_NUM_THREADS");
    CU_ASSERT_EQUAL(one.status, 0);
    CU_ASSERT_EQUAL(two.status, 0);
    CU_ASSERT_STRING_EQUAL(one.out, two.out);
    cJSON *doc = cJSON_Parse(one.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(rows), 24 * 2 * 3);
    /* the CPU has no fused attention: its flash rows say so */
    int cpu_flash = 0;
    cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        cJSON *pt = cJSON_GetObjectItem(row, "point");
        CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(pt, "train.batch")));
        if (strcmp(cJSON_GetObjectItem(row, "device")->valuestring, "xeon-amx-2c") == 0 &&
            strcmp(cJSON_GetObjectItem(pt, "train.attention")->valuestring, "flash") == 0) {
            cpu_flash++;
            CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(row, "step_time_s")));
            CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetObjectItem(row, "reason")->valuestring,
                                          "attn.flash"));
        }
    }
    CU_ASSERT_EQUAL(cpu_flash, 24);
    cJSON_Delete(doc);
    tu_run_free(&one);
    tu_run_free(&two);
}

static void sweep_bad_grids_should_give_one_line_and_write_nothing(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/never.csv", tu_tmpdir());
    static const struct {
        const char *args, *says;
        int status;
    } bad[] = {
        {"--vary train.batch=64:8", "range '64:8' is empty or goes backwards", 2},
        {"--vary train.batch=8:64:0", "is empty or goes backwards", 2},
        {"--vary train.batch=8:x", "is not a range A:B[:STEP] of integers", 2},
        {"--vary train.batch=0,8", "--vary train.batch=0: ", 1},
        {"--vary train.batch=8 --vary train.batch=16", "varied twice", 2},
        {"--vary train.batch=8 --set train.batch=16", "both fixed and varied", 2},
        {"--vary train.btach=8", "did you mean 'train.batch'", 2},
        {"--vary data.samples=1:6000000 -d t4,l4", "more than the 10000000 rows", 2},
        {"--vary train.batch=8 --format table", "--format must be csv or json", 2},
        {"--vary train.batch=8 --weights time=1", "'--weights' does not apply here", 2},
        {"--vary train.batch=8 -d nosuch", "unknown device 'nosuch'", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "sweep -s bert-base-squad %s -o '%s'", bad[i].args, path);
        tu_result r = tu_run(cmd);
        if (r.status != bad[i].status || !strstr(r.err, bad[i].says))
            fprintf(stderr, "\nxpusim %s: exit %d, %s", cmd, r.status, r.err);
        CU_ASSERT_EQUAL(r.status, bad[i].status);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad[i].says));
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        CU_ASSERT(!xs_file_exists(path));
        tu_run_free(&r);
    }
}

static void compare_weights_should_rank_by_score_and_mark_the_pareto_runs(void)
{
    tu_result r = tu_run("compare -s bert-base-squad --set train.batch=32 --weights "
                         "time=1,cost=1 --format json -d t4,l4,a10,a40,a100-sxm4-80gb,"
                         "h100-sxm5-80gb,h200-sxm-141gb,tpu-v4,tpu-v5e");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(rows), 9); /* every device asked for fits */
    static const char *keys[] = {"device", "step_time_s", "run_time_s", "energy_kwh",
                                 "cost_usd", "mfu", "score", "pareto", "band"};
    double last = 2, best_time = 1e300, best_cost = 1e300;
    int pareto = 0;
    cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(row, keys[i]));
        double score = cJSON_GetObjectItem(row, "score")->valuedouble;
        CU_ASSERT(score > 0 && score <= 1 && score <= last); /* best first */
        last = score;
        double t = cJSON_GetObjectItem(row, "run_time_s")->valuedouble;
        double c = cJSON_GetObjectItem(row, "cost_usd")->valuedouble;
        best_time = t < best_time ? t : best_time;
        best_cost = c < best_cost ? c : best_cost;
        pareto += cJSON_IsTrue(cJSON_GetObjectItem(row, "pareto"));
        cJSON *band = cJSON_GetObjectItem(row, "band");
        CU_ASSERT(cJSON_GetObjectItem(band, "cost_usd_low")->valuedouble <= c);
        CU_ASSERT(cJSON_GetObjectItem(band, "cost_usd_high")->valuedouble >= c);
    }
    CU_ASSERT(pareto >= 2 && pareto < 9);
    /* the fastest and the cheapest runs are on the frontier */
    cJSON_ArrayForEach(row, rows)
    {
        double t = cJSON_GetObjectItem(row, "run_time_s")->valuedouble;
        double c = cJSON_GetObjectItem(row, "cost_usd")->valuedouble;
        if (t == best_time || c == best_cost)
            CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(row, "pareto")));
    }
    cJSON_Delete(doc);
    tu_run_free(&r);
    /* the same step figures as plain compare */
    tu_result plain = tu_run("compare -s bert-base-squad -d t4 --format csv");
    tu_result ranked = tu_run("compare -s bert-base-squad -d t4 --weights cost=1 --format csv");
    CU_ASSERT_EQUAL(ranked.status, 0);
    const char *p = strchr(plain.out, '\n'), *q = strchr(ranked.out, '\n');
    CU_ASSERT_FATAL(p && q);
    /* device, matmul, step, samples/s, tokens/s, MFU, W, run time, kWh, $:
     * the first ten columns of both, the same text */
    const char *end = q + 1;
    for (int commas = 0; commas < 10 && end; commas++)
        end = strchr(end, ',') ? strchr(end, ',') + 1 : NULL;
    CU_ASSERT_FATAL(end != NULL);
    CU_ASSERT(strncmp(p + 1, q + 1, (size_t)(end - q - 1)) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(ranked.out, ",score,pareto,reason\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(ranked.out, ",1,1,\n")); /* alone: score 1, on the frontier */
    tu_run_free(&plain);
    tu_run_free(&ranked);
}

static void compare_filters_should_drop_runs_over_and_fail_when_none_is_left(void)
{
    tu_result r = tu_run("compare -s bert-base-squad -d t4,l4,a10 --vary train.batch=16,32 "
                         "--budget-usd 0.45 --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    double dropped = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "filters"), "dropped")->valuedouble;
    CU_ASSERT(dropped >= 1);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(rows) + (int)dropped, 2 * 3);
    cJSON *row;
    cJSON_ArrayForEach(row, rows)
        CU_ASSERT(cJSON_GetObjectItem(row, "cost_usd")->valuedouble <= 0.45);
    cJSON_Delete(doc);
    tu_run_free(&r);

    r = tu_run("compare -s bert-base-squad -d t4,l4 --deadline-h 0.65");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "1 run over 0.65 h left out"));
    CU_ASSERT_PTR_NULL(line_starting(r.out, "t4 "));     /* 0.69 h */
    CU_ASSERT_PTR_NOT_NULL(line_starting(r.out, "l4 ")); /* 0.60 h */
    tu_run_free(&r);

    r = tu_run("compare -s bert-base-squad -d t4,l4 --budget-usd 0.1 --deadline-h 100");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_STRING_EQUAL(r.out, "");
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no run is within --budget-usd 0.1 and --deadline-h "
                                         "100: the cheapest run costs $0.36"));
    tu_run_free(&r);
    static const char *bad[] = {"--budget-usd 0", "--budget-usd -1", "--deadline-h x",
                                "--weights speed=1", "--vary train.batch=9:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "compare -s bert-base-squad -d t4 %s", bad[i]);
        r = tu_run(cmd);
        CU_ASSERT_EQUAL(r.status, 2);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        CU_ASSERT_STRING_EQUAL(r.out, "");
        tu_run_free(&r);
    }
}

/* gemm --sweep walks its points by count: a step near 2^63 was a signed
 * overflow (v += step; UBSan in the sanitizer build); and a document
 * nested past the JSON reader's limit is valid JSON, said so. */
static void sweeps_and_deep_documents_should_be_handled(void)
{
    tu_result r = tu_run("gemm -d t4 --m 64 --k 64 --sweep n=1:16777216:9223372036854775807");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 2); /* the header and n = 1 */
    tu_run_free(&r);
    r = tu_run("gemm -d t4 --m 64 --k 64 --sweep n=1:10:3");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 5); /* 1, 4, 7, 10 */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\n10,"));
    tu_run_free(&r);
    char *deep = malloc(2 * 1001 + 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    memset(deep, '[', 1001);
    memset(deep + 1001, ']', 1001);
    deep[2002] = '\n';
    deep[2003] = '\0';
    const char *path = tu_write("deep.json", deep);
    free(deep);
    char args[600];
    snprintf(args, sizeof args, "predict -d '%s'", path);
    r = tu_run(args);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "nested more than 1000 deep"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "malformed JSON"));
    tu_run_free(&r);
}

int tu_add_cli_suite(void)
{
    CU_pSuite s = CU_add_suite("cli", NULL, NULL);
    return !s ||
           !CU_add_test(s, "sweeps_and_deep_documents_should_be_handled",
                        sweeps_and_deep_documents_should_be_handled) ||
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
           !CU_add_test(s, "compare_should_rank_the_rest_when_one_device_cannot_run",
                        compare_should_rank_the_rest_when_one_device_cannot_run) ||
           !CU_add_test(s, "compare_device_list_should_be_trimmed_and_merged",
                        compare_device_list_should_be_trimmed_and_merged) ||
           !CU_add_test(s, "price_override_should_scale_the_cost_and_say_so",
                        price_override_should_scale_the_cost_and_say_so) ||
           !CU_add_test(s, "set_values_should_be_parsed_strictly", set_values_should_be_parsed_strictly) ||
           !CU_add_test(s, "predict_summary_should_print_only_the_answer",
                        predict_summary_should_print_only_the_answer) ||
           !CU_add_test(s, "compare_should_rank_devices_by_run_cost",
                        compare_should_rank_devices_by_run_cost) ||
           !CU_add_test(s, "devices_and_scenarios_should_list_everything_shipped",
                        devices_and_scenarios_should_list_everything_shipped) ||
           !CU_add_test(s, "advise_sets_should_reproduce_their_samples_per_s",
                        advise_sets_should_reproduce_their_samples_per_s) ||
           !CU_add_test(s, "new_scenario_template_should_predict_and_not_overwrite",
                        new_scenario_template_should_predict_and_not_overwrite) ||
           !CU_add_test(s, "scenario_problems_should_all_be_reported",
                        scenario_problems_should_all_be_reported) ||
           !CU_add_test(s, "sweep_csv_should_have_a_row_per_point_and_device",
                        sweep_csv_should_have_a_row_per_point_and_device) ||
           !CU_add_test(s, "sweep_with_no_row_predicted_should_write_the_reasons_and_exit_1",
                        sweep_with_no_row_predicted_should_write_the_reasons_and_exit_1) ||
           !CU_add_test(s, "sweep_should_not_depend_on_the_thread_count",
                        sweep_should_not_depend_on_the_thread_count) ||
           !CU_add_test(s, "sweep_bad_grids_should_give_one_line_and_write_nothing",
                        sweep_bad_grids_should_give_one_line_and_write_nothing) ||
           !CU_add_test(s, "compare_weights_should_rank_by_score_and_mark_the_pareto_runs",
                        compare_weights_should_rank_by_score_and_mark_the_pareto_runs) ||
           !CU_add_test(s, "compare_filters_should_drop_runs_over_and_fail_when_none_is_left",
                        compare_filters_should_drop_runs_over_and_fail_when_none_is_left);
}
