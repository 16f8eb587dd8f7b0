/* test_bounds.c — absurd but well-formed inputs (bounds.h): each gives a
 * finite answer or one clear refusal naming the field, never an inf, a NaN,
 * a wrapped integer or a crash; in the library and through the CLI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "device.h"
#include "gemm.h"
#include "paths.h"
#include "predict.h"
#include "scenario.h"
#include "test_util.h"
#include "validate.h"
#include "workload.h"

static int load_scn(const char *id, const char *const *sets, int n, xs_scenario *s,
                    xs_error *err)
{
    return xs_scn_open(id, sets, n, s, err);
}

/* A device file: devices/<base>.json with one number replaced, written as
 * <tmp>/<id>.json (id: the file stem, as the loader wants). */
static const char *device_with(const char *base, const char *id, const char *section,
                               const char *key, double value)
{
    char path[64];
    snprintf(path, sizeof path, "devices/%s.json", base);
    cJSON *doc = tu_load_json(path);
    cJSON_ReplaceItemInObject(doc, "id", cJSON_CreateString(id));
    cJSON *sec = cJSON_GetObjectItem(doc, section);
    if (cJSON_GetObjectItem(sec, key))
        cJSON_ReplaceItemInObject(sec, key, cJSON_CreateNumber(value));
    else
        cJSON_AddNumberToObject(sec, key, value);
    char name[80];
    snprintf(name, sizeof name, "%s.json", id);
    const char *out = tu_write_json(name, doc);
    cJSON_Delete(doc);
    return out;
}

/* A step's tokens (b x s x grad_accum x devices) past 2^50: 2^35 x 2^32,
 * which wrapped int64 before (undefined behaviour). */
static const char *const TOKENS_SETS[] = {
    "model.max_positions=1048576", "train.batch=1048576", "train.seq=32768",
    "model.hidden=1",              "model.heads=1",       "model.ffn=1",
    "model.vocab=1",               "train.grad_accum=65536", "cluster.devices=65536"};

static void scenario_counts_past_2_50_should_be_refused_naming_the_fields(void)
{
    xs_scenario s;
    xs_error err;
    CU_ASSERT_EQUAL(tu_scn_open_gated("bert-large-squad", TOKENS_SETS, 9, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.batch x train.seq x train.grad_accum x "
                                           "cluster.devices = 1.48e+20 tokens a step, over "
                                           "the limit of 2^50"));
    /* 4096 layers of hidden 131072 and FFN 2^20: 1.4e15 parameters */
    const char *params[] = {"model.layers=4096", "model.hidden=131072", "model.heads=16",
                            "model.ffn=1048576", "train.batch=1", "train.seq=1"};
    CU_ASSERT_EQUAL(tu_scn_open_gated("bert-large-squad", params, 6, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "= 1.41e+15 parameters, over the limit of 2^50"));
    /* the logits of an LM head: b s V */
    const char *logits[] = {"model.vocab=16777216", "train.batch=65536",
                            "train.seq=1024", "train.grad_accum=1"};
    CU_ASSERT_EQUAL(load_scn("gpt2-medium-finetune", logits, 4, &s, &err), XS_OK);
    const char *more[] = {"model.vocab=16777216", "train.batch=131072", "train.seq=1024"};
    CU_ASSERT_EQUAL(tu_scn_open_gated("gpt2-medium-finetune", more, 3, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.batch x train.seq x model.vocab"));
    /* the largest values each field allows alone, with the rest small, load */
    const char *each[][2] = {{"model.layers=4096", "train.batch=1"},
                             {"model.vocab=16777216", "train.batch=1"},
                             {"data.samples=1000000000000", "data.epochs=1000000"},
                             {"train.grad_accum=65536", "train.batch=1"}};
    for (size_t i = 0; i < sizeof each / sizeof each[0]; i++)
        CU_ASSERT_EQUAL(load_scn("bert-base-squad", each[i], 2, &s, &err), XS_OK);
}

/* xs_wl_build divides by the samples a step: a scenario made in code (no
 * loader, no schema) with a zero count is an error, not SIGFPE. */
static void workload_should_refuse_a_zero_count_from_code(void)
{
    xs_scenario s;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(load_scn("bert-base-squad", NULL, 0, &s, &err), XS_OK);
    s.devices = 0;
    xs_workload wl;
    CU_ASSERT_EQUAL(xs_wl_build(&s, &wl, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cluster.devices must be at least 1, got 0"));
    s.devices = 1;
    s.train.grad_accum = (int64_t)1 << 40; /* past the schema: the counts wrap */
    s.train.batch = (int64_t)1 << 30;
    CU_ASSERT_EQUAL(xs_wl_build(&s, &wl, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "scenarios/bert-base-squad.json: ")); /* its file */
    s.train.grad_accum = 1;
    s.model.heads = 0; /* the gate's relations divide by it: refused first */
    CU_ASSERT_EQUAL(xs_wl_build(&s, &wl, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.heads must be at least 1, got 0"));
    s.model.heads = 12;
    s.train.grad_accum = (int64_t)1 << 40;
    s.source[0] = '\0'; /* made in code: named by its id */
    CU_ASSERT_EQUAL(xs_wl_build(&s, &wl, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "scenario bert-base-squad: "));
}

static void device_figures_beyond_the_physical_range_should_be_refused(void)
{
    static const struct {
        const char *section, *key;
        double value;
    } bad[] = {
        {"memory", "bandwidth_gbs", 1e-9}, /* 1 byte/s */
        {"memory", "bandwidth_gbs", 1e308},
        {"compute", "peak_fp16_tflops", 1e-9},
        {"compute", "peak_fp32_tflops", 1e-21},
        {"model", "kernel_launch_us", 1e308}, /* printed inf s and -nan W */
        {"memory", "latency_ns", 1e308},      /* printed inf kWh */
        {"power", "tdp_w", 1e308},
        {"price", "usd_per_hour", 1e308},
        {"memory", "smem_per_sm_kb", 1e308}, /* a double too big for an int */
        {"model", "gemm_efficiency_low", 1e-300},
        {"memory", "l2_bw_gbs", 1e-9},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = device_with("a100-sxm4-80gb", "absurd", bad[i].section, bad[i].key,
                                       bad[i].value);
        xs_device d;
        xs_error err;
        CU_ASSERT_EQUAL(xs_dev_load(path, &d, &err), XS_ERANGE);
        char field[96];
        snprintf(field, sizeof field, "field '%s.%s' must be", bad[i].section, bad[i].key);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, field));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the physical range of a device figure"));
    }
    /* a CPU's bf16 peak may be 0 (no matrix engine), not almost 0 */
    const char *cpu = device_with("xeon-amx-2c", "tinybf16", "compute", "peak_bf16_tflops",
                                  1e-300);
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL(xs_dev_load(cpu, &d, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'compute.peak_bf16_tflops' must be 0 or in [1e-06"));
    /* at the ends of the range the answer is finite */
    xs_scenario s;
    CU_ASSERT_EQUAL_FATAL(load_scn("bert-large-squad", NULL, 0, &s, &err), XS_OK);
    const char *slow = device_with("a100-sxm4-80gb", "slowest", "memory", "bandwidth_gbs", 1e-6);
    CU_ASSERT_EQUAL_FATAL(xs_dev_load(slow, &d, &err), XS_OK);
    d.peak_tflops[XS_FP16] = d.peak_tflops[XS_FP32] = 1e-6;
    xs_workload wl;
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    xs_prediction p;
    CU_ASSERT_EQUAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
    CU_ASSERT(isfinite(p.run_cost_usd) && p.run_cost_usd > 0);
    CU_ASSERT(isfinite(p.run_energy_kwh) && isfinite(p.samples_per_s) && p.samples_per_s > 0);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
}

/* A device made in code skips the loader's ranges: the prediction itself
 * refuses to hand back an inf. */
static void predict_should_refuse_a_non_finite_figure(void)
{
    xs_device d;
    xs_scenario s;
    xs_workload wl;
    xs_prediction p;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("a100-sxm4-80gb", &d, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(load_scn("bert-base-squad", NULL, 0, &s, &err), XS_OK);
    s.epochs = 100; /* a run of hours */
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    d.mem_bw_gbs = 1e-320; /* memory time: bytes / 1e-311 = inf */
    CU_ASSERT_EQUAL(xs_predict(&d, &s, &wl, &p, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "scenario bert-base-squad on device a100-sxm4-80gb: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no finite time"));
    CU_ASSERT_PTR_NULL(p.est);
    xs_dev_open("a100-sxm4-80gb", &d, &err);
    d.price_usd_per_hour = 1e308; /* hours x 1e308 $ an hour: inf */
    CU_ASSERT_EQUAL(xs_predict(&d, &s, &wl, &p, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the predicted run cost is inf, not a finite number"));
    xs_wl_free(&wl);
}

/* 8 x 8 tiles and split-K 256 over 2^24-wide matrices, 2^20 of them: 2^63
 * tiles and more, which wrapped int64 before. */
static void gemm_tile_counts_that_overflow_should_be_refused(void)
{
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("a100-sxm4-80gb", &d, &err), XS_OK);
    xs_gemm_engine e;
    xs_dev_gemm_engine(&d, &e);
    static xs_tile_set tiny;
    tiny = *e.matrix;
    tiny.tiles[0] = (xs_tile){8, 8, 2, 1};
    tiny.n = 1;
    e.matrix = e.unaligned = &tiny;
    e.split_k_max = 256;
    int64_t big = (int64_t)1 << 24;
    xs_gemm_shape g = {big, big, big, (int64_t)1 << 20, 0, 0, XS_FP16, 2};
    xs_gemm_result r;
    CU_ASSERT_EQUAL(xs_gemm_model(&e, &g, &r, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tiles of 8x8 overflow 64 bits"));
    /* the largest GEMM the CLI takes, on the shipped tiles: a finite time */
    xs_dev_gemm_engine(&d, &e);
    CU_ASSERT_EQUAL(xs_gemm_model(&e, &g, &r, &err), XS_OK);
    CU_ASSERT(isfinite(r.time_s) && r.time_s > 0 && r.tiles > 0 && r.waves > 0);
}

static void a_generic_loop_efficiency_near_zero_should_be_refused(void)
{
    xs_scenario s;
    xs_error err;
    const char *sets[] = {"train.generic_loop_efficiency=1e-300"};
    CU_ASSERT_EQUAL(load_scn("bert-base-squad", sets, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "must be a number in [0.01, 1], got 1e-300"));
}

/* Measured values at the ends of a double: the error would be inf. */
static void validate_should_give_a_reason_where_the_error_is_not_finite(void)
{
    const char *csv = tu_write("extreme.csv",
                               "device,scenario,set,metric,value,source\n"
                               "a100-sxm4-80gb,bert-base-squad,,step_time_s,1e308,x\n"
                               "a100-sxm4-80gb,bert-base-squad,,step_time_s,4.9e-324,x\n"
                               "a100-sxm4-80gb,bert-base-squad,,samples_per_s,1e-308,x\n");
    const char *files[] = {csv};
    xs_vrow *rows = NULL;
    size_t n = 0;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_FALSE(rows[i].ok);
        CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[i]), "the error is not a finite number"));
    }
    xs_vrows_free(rows, n);
}

/* No report of any command prints nan or inf. */
static int has_nan_or_inf(const char *text)
{
    for (const char *p = text; *p; p++) {
        int word_start = p == text || !((p[-1] >= 'a' && p[-1] <= 'z') || p[-1] == '_');
        if (word_start && (strncmp(p, "nan", 3) == 0 || strncmp(p, "inf", 3) == 0)) {
            char next = p[3];
            if (!((next >= 'a' && next <= 'z') || next == '_'))
                return 1;
        }
    }
    return 0;
}

/* The absurd inputs through the CLI: a finite answer (status 0) or one
 * line on stderr naming the field (status 1 or 2). */
static void absurd_cli_inputs_should_answer_finitely_or_refuse_in_one_line(void)
{
    char tokens[600] = "workload";
    for (size_t i = 0; i < sizeof TOKENS_SETS / sizeof TOKENS_SETS[0]; i++) {
        strcat(tokens, " --set ");
        strcat(tokens, TOKENS_SETS[i]);
    }
    char bw[700], launch[700], tiles[700];
    snprintf(bw, sizeof bw, "predict -d '%s'",
             device_with("a100-sxm4-80gb", "bytepersec", "memory", "bandwidth_gbs", 1e-9));
    snprintf(launch, sizeof launch, "predict -d '%s'",
             device_with("a100-sxm4-80gb", "slowlaunch", "model", "kernel_launch_us", 1e308));
    /* the same 8x8-tile, split-K 256 engine as above, from a device file */
    cJSON *doc = tu_load_json("devices/a100-sxm4-80gb.json");
    cJSON_ReplaceItemInObject(doc, "id", cJSON_CreateString("tiny-tiles"));
    cJSON *gemm = cJSON_GetObjectItem(doc, "gemm");
    cJSON_ReplaceItemInObject(gemm, "tensor_tiles", cJSON_CreateString("8x8/2"));
    cJSON_ReplaceItemInObject(gemm, "split_k_max", cJSON_CreateNumber(256));
    snprintf(tiles, sizeof tiles,
             "gemm -d '%s' --m 16777216 --n 16777216 --k 16777216 --batch 1048576",
             tu_write_json("tiny-tiles.json", doc));
    cJSON_Delete(doc);
    const struct {
        const char *args;
        int status;
        const char *part; /* in the one stderr line, or in stdout when status is 0 */
    } cases[] = {
        {"predict --set train.batch=1000000 --set train.seq=1000000", 1,
         "train.seq (1000000) must not exceed model.max_positions (512)"},
        {"predict --set model.max_positions=1048576 --set train.batch=1048576 --set "
         "train.seq=1048576", 1, "train.batch x train.seq x model.hidden x 3 = 3.38e+15"},
        {"predict --set model.layers=4096 --set model.hidden=131072 --set model.heads=16 --set "
         "model.ffn=1048576 --set train.batch=1 --set train.seq=1", 1,
         "parameters, over the limit of 2^50"},
        {"predict --set model.vocab=1000000000", 1,
         "'model.vocab' must be an integer in [1, 16777216]"},
        {"predict --set data.samples=0", 1, "'data.samples' must be an integer in [1, "},
        {"predict --set data.epochs=1000000000", 1,
         "'data.epochs' must be an integer in [1, 1000000]"},
        {"predict --set train.grad_accum=1000000", 1,
         "'train.grad_accum' must be an integer in [1, 65536]"},
        {"predict --set data.samples=1000000000000 --set data.epochs=1000000", 0,
         "41666666667000000 steps"},
        {"predict --set model.layers=4096 --set train.batch=1 --ignore-memory", 0, "step "},
        {tokens, 1, "tokens a step, over the limit of 2^50"},
        {bw, 1, "field 'memory.bandwidth_gbs' must be in [1e-06, 1e+06]"},
        {launch, 1, "field 'model.kernel_launch_us' must be in [1e-06, 1e+06]"},
        {"predict --set train.generic_loop_efficiency=1e-300", 1, "in [0.01, 1]"},
        {"advise --set train.generic_loop_efficiency=1e-300", 1, "in [0.01, 1]"},
        {"compare -d t4,l4 --set train.generic_loop_efficiency=1e-300", 1, "in [0.01, 1]"},
        {"gemm --m 16777216 --n 16777216 --k 16777216 --batch 1048576", 0, "bound"},
        {tiles, 1, "tiles of 8x8 overflow 64 bits"},
        {"gemm --m 16777217 --n 1 --k 1", 2, "--m must be an integer in [1, 16777216]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_result r = tu_run(cases[i].args);
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        CU_ASSERT_FALSE(has_nan_or_inf(r.out));
        CU_ASSERT_FALSE(has_nan_or_inf(r.err));
        if (cases[i].status) {
            CU_ASSERT_EQUAL(tu_lines(r.err), 1);
            CU_ASSERT_PTR_NOT_NULL(strstr(r.err, cases[i].part));
        } else {
            CU_ASSERT_PTR_NOT_NULL(strstr(r.out, cases[i].part));
        }
        if (r.status != cases[i].status || !strstr(cases[i].status ? r.err : r.out, cases[i].part))
            fprintf(stderr, "\n%s\n-> %d %.300s\n", cases[i].args, r.status, r.err);
        tu_run_free(&r);
    }
}

int tu_add_bounds_suite(void)
{
    CU_pSuite s = CU_add_suite("bounds", NULL, NULL);
    return !s ||
           !CU_add_test(s, "scenario_counts_past_2_50_should_be_refused_naming_the_fields",
                        scenario_counts_past_2_50_should_be_refused_naming_the_fields) ||
           !CU_add_test(s, "workload_should_refuse_a_zero_count_from_code",
                        workload_should_refuse_a_zero_count_from_code) ||
           !CU_add_test(s, "device_figures_beyond_the_physical_range_should_be_refused",
                        device_figures_beyond_the_physical_range_should_be_refused) ||
           !CU_add_test(s, "predict_should_refuse_a_non_finite_figure",
                        predict_should_refuse_a_non_finite_figure) ||
           !CU_add_test(s, "gemm_tile_counts_that_overflow_should_be_refused",
                        gemm_tile_counts_that_overflow_should_be_refused) ||
           !CU_add_test(s, "a_generic_loop_efficiency_near_zero_should_be_refused",
                        a_generic_loop_efficiency_near_zero_should_be_refused) ||
           !CU_add_test(s, "validate_should_give_a_reason_where_the_error_is_not_finite",
                        validate_should_give_a_reason_where_the_error_is_not_finite) ||
           !CU_add_test(s, "absurd_cli_inputs_should_answer_finitely_or_refuse_in_one_line",
                        absurd_cli_inputs_should_answer_finitely_or_refuse_in_one_line);
}
