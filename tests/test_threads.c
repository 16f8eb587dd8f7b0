/* test_threads.c — the thread-count model (sim/devices/cpu/threads.c) and the plan
 * search over it, on the calibrated 2-core device and on a what-if device
 * with its per-core figures on 64 cores (the plan only matters with many):
 * no op's fixed cost falls as threads are added, all cores reproduce the
 * CPU model, parallel work caps the speed-up, the plans are the argmins;
 * the inference scenarios load, refuse bad input, and `xpusim threads`
 * prints what its help promises. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpu.h"
#include "cpu_calibrate.h"
#include "device.h"
#include "fileio.h"
#include "infer.h"
#include "test_util.h"
#include "threads.h"

#define CPU_ID "xeon-amx-2c"

/* the shipped host's per-core figures on 64 cores (a what-if, not a device) */
static xs_device many_cores(void)
{
    xs_device d = tu_device(CPU_ID);
    xs_cpu_of(&d)->cores = 64;
    return d;
}

static xs_thr_item op_item(int kind, int fn, int64_t m, int64_t n, int64_t k, int64_t par)
{
    xs_thr_item it;
    memset(&it, 0, sizeof it);
    it.kind = XS_THR_OP;
    xs_op_init(&it.op, kind, XS_PH_FWD, XS_FP32, "t");
    it.op.hints.fn = fn;
    it.op.m = m, it.op.n = n, it.op.k = k;
    if (kind != XS_OP_GEMM) {
        it.op.elems = (double)m * (double)n;
        it.op.bytes = 8 * it.op.elems;
    }
    it.par = par;
    it.regions = kind == XS_OP_GEMM ? 0 : 1; /* a GEMM's: by the device's kernel set */
    it.calls = 1;
    return it;
}

static xs_thr_item step_item(int64_t batch, int64_t hidden)
{
    xs_thr_item it;
    memset(&it, 0, sizeof it);
    it.kind = XS_THR_LSTM_STEP;
    it.batch = batch, it.hidden = hidden, it.par = (hidden + 7) / 8;
    it.regions = 1;
    it.calls = 1;
    return it;
}

static void more_threads_should_never_reduce_per_op_overhead(void)
{
    xs_device devs[2] = {tu_device(CPU_ID), many_cores()};
    xs_thr_item items[] = {op_item(XS_OP_GEMM, -1, 800, 2048, 256, 0),
                           op_item(XS_OP_GEMM, -1, 8, 64, 64, 0),
                           op_item(XS_OP_NORM, XS_FN_LAYERNORM, 128, 768, 0, 128),
                           op_item(XS_OP_ELTWISE, XS_FN_GELU, 4, 3072, 0, 4),
                           step_item(1, 64), step_item(16, 1024)};
    for (int d = 0; d < 2; d++) {
        CU_ASSERT(xs_cpu_of(&devs[d])->thr.region_us > 0);
        for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
            double last = 0;
            for (int t = 1; t <= xs_cpu_of(&devs[d])->cores; t++) {
                xs_estimate e;
                xs_error err;
                CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&devs[d], &items[i], t, &e, &err), XS_OK);
                CU_ASSERT(e.overhead_s >= last);
                CU_ASSERT(e.overhead_s > 0 && e.time_s >= e.overhead_s);
                last = e.overhead_s;
            }
            CU_ASSERT(xs_thr_region_s(&devs[d], 2) >= xs_thr_region_s(&devs[d], 1));
        }
    }
}

static void all_cores_should_reproduce_the_cpu_model(void)
{
    xs_device d = tu_device(CPU_ID);
    xs_thr_item items[] = {op_item(XS_OP_GEMM, -1, 800, 2048, 256, 0),
                           op_item(XS_OP_SOFTMAX, XS_FN_SOFTMAX, 1536, 128, 0, 1536)};
    for (size_t i = 0; i < 2; i++) {
        xs_estimate a, b;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &items[i], (int)xs_cpu_of(&d)->cores, &a, &err), 0);
        CU_ASSERT_EQUAL_FATAL(xs_cpu_estimate(&d, &items[i].op, (int)xs_cpu_of(&d)->cores, &b, &err), 0);
        CU_ASSERT_DOUBLE_EQUAL(a.time_s, b.time_s, 1e-12 * b.time_s);
    }
    xs_estimate e;
    xs_error err;
    CU_ASSERT_EQUAL(xs_thr_item_time(&d, &items[0], 3, &e, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "threads must be in 1..2, got 3"));
}

static void parallel_work_should_cap_the_speedup(void)
{
    xs_device d = many_cores();
    /* 4 rows: beyond 4 threads the work part stays, the overhead grows */
    xs_thr_item it = op_item(XS_OP_NORM, XS_FN_LAYERNORM, 4, 1 << 16, 0, 4);
    xs_estimate e4, e32, e1;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &it, 1, &e1, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &it, 4, &e4, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &it, 32, &e32, &err), 0);
    CU_ASSERT(e4.compute_s < e1.compute_s);
    CU_ASSERT_DOUBLE_EQUAL(e32.compute_s, e4.compute_s, 1e-15);
    CU_ASSERT(e32.time_s > e4.time_s);
    /* an LSTM step of 64 hidden units holds 8 work items */
    xs_thr_item s = step_item(1, 64);
    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &s, 8, &e4, &err), 0);
    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &s, 64, &e32, &err), 0);
    CU_ASSERT_DOUBLE_EQUAL(e32.compute_s, e4.compute_s, 1e-15);
    CU_ASSERT(e32.time_s > e4.time_s);
}

static void plan_should_pick_the_argmin(void)
{
    xs_device d = many_cores();
    const char *ids[] = {"lstm-inference", "encoder-inference"};
    const char *sets[] = {"model.hidden=64", "inference.batch=1"};
    for (int v = 0; v < 3; v++) {
        xs_inf_scenario s;
        xs_thr_work w;
        xs_thr_plan p;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_inf_open(ids[v == 1], sets, v == 2 ? 2 : 0, &s, &err), XS_OK);
        CU_ASSERT_EQUAL_FATAL(xs_inf_work(&s, &w, &err), XS_OK);
        CU_ASSERT_EQUAL_FATAL(xs_thr_plan_make(&d, &w, &p, &err), XS_OK);
        CU_ASSERT_EQUAL(p.counts[p.ncounts - 1], 64);
        CU_ASSERT_EQUAL(p.default_threads, 64);
        /* every group's time, recomputed item by item at every count */
        double dyn = 0, fixed = INFINITY, def = 0;
        for (int g = 0; g < p.ngroups; g++) {
            double best = INFINITY;
            for (int c = 0; c < p.ncounts; c++) {
                double t = 0;
                for (size_t i = 0; i < w.n; i++) {
                    xs_estimate e;
                    if (w.items[i].group != g)
                        continue;
                    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &w.items[i], p.counts[c], &e,
                                                           &err), 0);
                    t += w.items[i].calls * e.time_s;
                }
                CU_ASSERT_DOUBLE_EQUAL(p.time[g * p.ncounts + c], t, 1e-9 * t);
                best = fmin(best, t);
            }
            CU_ASSERT_DOUBLE_EQUAL(p.time[g * p.ncounts + p.best[g]], best, 0);
            dyn += best;
            def += p.time[g * p.ncounts + p.ncounts - 1];
        }
        for (int c = 0; c < p.ncounts; c++) {
            double t = 0;
            for (int g = 0; g < p.ngroups; g++)
                t += p.time[g * p.ncounts + c];
            fixed = fmin(fixed, t);
        }
        CU_ASSERT_DOUBLE_EQUAL(p.dynamic_s, dyn, 1e-9 * dyn);
        CU_ASSERT_DOUBLE_EQUAL(p.best_fixed_s, fixed, 1e-9 * fixed);
        CU_ASSERT_DOUBLE_EQUAL(p.default_s, def, 1e-9 * def);
        CU_ASSERT(p.dynamic_s <= p.best_fixed_s && p.best_fixed_s <= p.default_s);
        if (v == 2) { /* hidden 64, batch 1: 8 work items a step; the GEMM has more */
            CU_ASSERT(p.counts[p.best[1]] <= 8);
            CU_ASSERT(p.counts[p.best[0]] > p.counts[p.best[1]]);
            CU_ASSERT(p.dynamic_s < p.best_fixed_s);
        }
        xs_thr_plan_free(&p);
        xs_thr_work_free(&w);
    }
}

static void device_without_thread_sweeps_should_be_refused(void)
{
    xs_device d = tu_device(CPU_ID);
    xs_cpu_of(&d)->thr.region_us = 0;
    xs_error err;
    CU_ASSERT_EQUAL(xs_thr_device_ok(&d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no 'threads' section"));
    xs_device g = tu_device("a100-sxm4-80gb");
    CU_ASSERT_EQUAL(xs_thr_device_ok(&g, &err), XS_EUNSUPPORTED);
    /* a section with part of its fields is a broken file */
    cJSON *doc = tu_load_json("devices/" CPU_ID ".json");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "threads"), "lstm_gate_ns");
    xs_device bad;
    CU_ASSERT_NOT_EQUAL(xs_dev_load(tu_write_json(CPU_ID ".json", doc), &bad, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "section 'threads' must give"));
    cJSON_Delete(doc);
}

static void inference_scenarios_should_refuse_bad_input(void)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"lstm\",\"layers\":1,"
         "\"hidden\":8},\"inference\":{\"batch\":1,\"seq\":1}}",
         "field 'model.input_size' is required for model.family lstm"},
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"encoder\",\"layers\":1,"
         "\"hidden\":10,\"heads\":3,\"ffn\":8},\"inference\":{\"batch\":1,\"seq\":1}}",
         "field 'model.heads' must divide model.hidden (10), got 3"},
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"lstm\",\"layers\":1,"
         "\"hidden\":8,\"input_size\":4,\"heads\":2},\"inference\":{\"batch\":1,\"seq\":1}}",
         "field 'model.heads' does not apply to model.family lstm"},
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"rnn\",\"layers\":1,"
         "\"hidden\":8},\"inference\":{\"batch\":1,\"seq\":1}}",
         "field 'model.family' must be one of lstm|encoder"},
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"lstm\",\"layers\":1,"
         "\"hidden\":8,\"input_size\":4},\"inference\":{\"batch\":0,\"seq\":1}}",
         "field 'inference.batch' must be"},
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"lstm\"}}",
         "not an inference scenario"},
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"encoder\",\"layers\":1,"
         "\"hidden\":8,\"heads\":2,\"ffn\":8},\"inference\":{\"batch\":1,\"seq\":1,"
         "\"precision\":\"bf16\"}}",
         "field 'inference.precision' must be fp32 for model.family encoder, got bf16"},
        {"{\"id\":\"x\",\"description\":\"d\",\"model\":{\"family\":\"lstm\",\"layers\":1,"
         "\"hidden\":8,\"input_size\":4},\"inference\":{\"batch\":1,\"seq\":1,"
         "\"precision\":\"fp16\"}}",
         "field 'inference.precision' must be one of fp32|bf16"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        xs_inf_scenario s;
        xs_error err;
        CU_ASSERT_NOT_EQUAL(xs_inf_open(tu_write("x.json", bad[i].text), NULL, 0, &s, &err), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].msg));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "x.json"));
        if (!strstr(err.msg, bad[i].msg))
            fprintf(stderr, "\nexpected '%s', got '%s'\n", bad[i].msg, err.msg);
    }
    const char *typo[] = {"inference.bacth=2"};
    xs_inf_scenario s;
    xs_error err;
    CU_ASSERT_EQUAL(xs_inf_open("lstm-inference", typo, 1, &s, &err), XS_EARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no key 'inference.bacth'"));
}

/* -d host takes a shipped file only if it was calibrated on this CPU with
 * the kernel set this run uses: under XS_CPU_ISA=portable no shipped file
 * is (they were measured with amx-bf16), and the refusal names what it
 * looked for. */
static void threads_host_should_need_this_kernel_set(void)
{
    if (xs_file_exists("host-cpu.json")) {
        fprintf(stderr, "\n(skipped: ./host-cpu.json exists and -d host takes it first)\n");
        return;
    }
    setenv("XS_CPU_ISA", "portable", 1);
    tu_result r = tu_run("threads -s lstm-inference");
    unsetenv("XS_CPU_ISA");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "-d host: no device file for this CPU"));
    if (xs_cpu_kernel_set()) /* a build with the kernels reads this CPU */
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, ", kernel set portable)"));
    tu_run_free(&r);
}

static void threads_command_should_print_what_its_help_promises(void)
{
    tu_result r = tu_run("threads -d " CPU_ID " -s lstm-inference --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "groups"), 1);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(g, "name")->valuestring, "l0.recurrent");
    CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(g, "best_threads")));
    CU_ASSERT(cJSON_IsNumber(xs_json_path(g, "time_s_by_threads.2")));
    const char *keys[] = {"default_s", "best_fixed_s", "best_fixed_threads", "dynamic_s"};
    for (int i = 0; i < 4; i++)
        CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "totals"), keys[i])));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(doc, "measured"));
    cJSON_Delete(doc);
    tu_run_free(&r);

    r = tu_run("threads -d " CPU_ID " -s encoder-inference");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "attn.softmax"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "best fixed"));
    tu_run_free(&r);

    static const struct {
        const char *args;
        int status;
        const char *msg;
    } bad[] = {
        {"threads -d " CPU_ID " -s encoder-inference --run", 2, "predicted only"},
        {"threads -d a100-sxm4-80gb", 1, "the thread model is the CPU's"},
        {"threads -d " CPU_ID " -s bert-base-squad", 1, "not an inference scenario"},
        {"threads -d " CPU_ID " --save-io /tmp", 2, "--save-io goes with --run"},
        {"threads -d " CPU_ID " --format csv", 2, "--format must be table or json"},
        {"predict -s lstm-inference -d " CPU_ID, 1, "an inference scenario"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = tu_run(bad[i].args);
        CU_ASSERT_EQUAL(r.status, bad[i].status);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, bad[i].msg));
        if (!strstr(r.err, bad[i].msg))
            fprintf(stderr, "\n%s: %s\n", bad[i].args, r.err);
        tu_run_free(&r);
    }
    r = tu_run("scenarios");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "lstm-inference"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "(inference: xpusim threads)"));
    tu_run_free(&r);
}

/* Every --set reads its value the one way (xs_set_value): a count with
 * anything after it, blanks, hex or an exponent is refused by threads as by
 * predict, one line naming --set, the key and what it expects; the same
 * value written plainly is taken. */
static void every_set_should_refuse_the_same_slips(void)
{
    static const char *const slips[] = {"32abc", "8 64", "16junk", "0x20", "6.4e1"};
    for (size_t i = 0; i < sizeof slips / sizeof slips[0]; i++) {
        char args[256], want[128];
        snprintf(args, sizeof args, "threads -d " CPU_ID " -s lstm-inference --set "
                                    "'inference.batch=%s'", slips[i]);
        snprintf(want, sizeof want, "--set inference.batch=%s: 'inference.batch' expects an "
                                    "integer in [1, 65536] written in decimal digits", slips[i]);
        tu_result r = tu_run(args);
        CU_ASSERT_NOT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, want));
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        if (!strstr(r.err, want))
            fprintf(stderr, "\n%s: %s\n", args, r.err);
        tu_run_free(&r);
        snprintf(args, sizeof args, "predict -s bert-base-squad --set 'train.batch=%s'", slips[i]);
        r = tu_run(args);
        CU_ASSERT_NOT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "written in decimal digits"));
        tu_run_free(&r);
    }
    tu_result r = tu_run("threads -d " CPU_ID " -s lstm-inference --set model.layers=64abc");
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--set model.layers=64abc: 'model.layers'"));
    tu_run_free(&r);
    r = tu_run("threads -d " CPU_ID " -s lstm-inference --set inference.batch=3");
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
}

/* bf16: the step at its own fitted rates with weights of half the bytes,
 * refused on a file swept before the bf16 kernel; the input projection a
 * cast and a bf16 GEMM; a GEMM's regions from the device's kernel set */
static void bf16_lstm_should_be_modelled_with_its_own_rates(void)
{
    xs_device d = tu_device(CPU_ID);
    CU_ASSERT(xs_cpu_of(&d)->thr.lstm_bf16_ns_per_mac > 0 && xs_cpu_of(&d)->thr.lstm_bf16_gate_ns > 0);
    /* hidden 300, one thread: fp32 weights 1.44 MB, past half the 2 MB L2;
     * bf16 0.72 MB, inside it */
    CU_ASSERT_EQUAL_FATAL(xs_cpu_of(&d)->l2_kb_per_core, 2048);
    xs_thr_item f = step_item(8, 300), b = f;
    b.op.dtype = XS_BF16;
    xs_estimate ef, eb;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &f, 1, &ef, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_thr_item_time(&d, &b, 1, &eb, &err), XS_OK);
    CU_ASSERT(ef.memory_s > 0);
    CU_ASSERT_EQUAL(eb.memory_s, 0);
    double macs = 8.0 * 32 * 300 * 38, gates = 8.0 * 8 * 38; /* 38 items of 8 units */
    CU_ASSERT_DOUBLE_EQUAL(eb.compute_s,
                           (macs * xs_cpu_of(&d)->thr.lstm_bf16_ns_per_mac +
                            gates * xs_cpu_of(&d)->thr.lstm_bf16_gate_ns) * 1e-9,
                           1e-12);
    xs_device old = d;
    xs_cpu_of(&old)->thr.lstm_bf16_ns_per_mac = 0;
    CU_ASSERT_EQUAL(xs_thr_item_time(&old, &b, 1, &eb, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no bf16 LSTM rates"));
    CU_ASSERT_EQUAL(xs_thr_item_time(&old, &f, 1, &ef, &err), XS_OK); /* fp32 still runs */

    const char *sets[] = {"inference.precision=bf16"};
    xs_inf_scenario s;
    xs_thr_work w;
    CU_ASSERT_EQUAL_FATAL(xs_inf_open("lstm-inference", sets, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_inf_work(&s, &w, &err), XS_OK);
    int casts = 0, bf16_gemms = 0, bf16_steps = 0;
    for (size_t i = 0; i < w.n; i++) {
        const xs_thr_item *it = &w.items[i];
        casts += it->op.kind == XS_OP_CAST && strstr(w.groups[it->group], "input_proj") != NULL;
        bf16_gemms += it->op.kind == XS_OP_GEMM && it->kind == XS_THR_OP &&
                      it->op.dtype == XS_BF16;
        bf16_steps += it->kind == XS_THR_LSTM_STEP && it->op.dtype == XS_BF16;
    }
    CU_ASSERT_EQUAL(casts, s.layers);
    CU_ASSERT_EQUAL(bf16_gemms, s.layers);
    CU_ASSERT_EQUAL(bf16_steps, s.layers);
    xs_thr_work_free(&w);

    /* the shipped amx-bf16 file's GEMMs open 3 regions; an avx2 host's 2 */
    CU_ASSERT_EQUAL(xs_thr_gemm_regions(&d), 3);
    snprintf(xs_cpu_of(&d)->isa, sizeof xs_cpu_of(&d)->isa, "avx2");
    CU_ASSERT_EQUAL(xs_thr_gemm_regions(&d), 2);

    /* the pair comes together or not at all */
    cJSON *doc = tu_load_json("devices/" CPU_ID ".json");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "threads"), "lstm_bf16_gate_ns");
    xs_device bad;
    CU_ASSERT_NOT_EQUAL(xs_dev_load(tu_write_json(CPU_ID ".json", doc), &bad, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lstm_bf16_ns_per_mac and lstm_bf16_gate_ns"));
    cJSON_Delete(doc);
}

/* --run on a small LSTM: measured next to predicted, the kernel checked */
static void threads_run_should_measure_the_three_settings(void)
{
    tu_result r = tu_run("threads -d " CPU_ID " -s lstm-inference --set model.hidden=40 "
                         "--set model.input_size=12 --set inference.seq=6 "
                         "--set inference.batch=3 --run --quick --format json");
    if (r.status == 3 && strstr(r.err, "built without the CPU kernels")) {
        fprintf(stderr, "\n(skipped: %s)\n", r.err);
        tu_run_free(&r);
        return;
    }
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const char *keys[] = {"default_s", "best_fixed_s", "best_fixed_threads", "dynamic_s"};
    for (int i = 0; i < 4; i++) {
        cJSON *v = xs_json_path(doc, "measured");
        CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(v, keys[i])) &&
                  cJSON_GetObjectItem(v, keys[i])->valuedouble > 0);
    }
    CU_ASSERT(xs_json_path(doc, "measured.max_abs_err")->valuedouble <= 1e-4);
    cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "groups"), 0);
    CU_ASSERT(cJSON_IsNumber(xs_json_path(g, "measured_time_s_by_threads.1")));
    cJSON_Delete(doc);
    tu_run_free(&r);
    /* the bf16 kernel, against its bf16 reference */
    r = tu_run("threads -d " CPU_ID " -s lstm-inference --set model.hidden=40 "
               "--set model.input_size=12 --set inference.seq=6 --set inference.batch=3 "
               "--set inference.precision=bf16 --run --quick --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "precision")), "bf16");
    CU_ASSERT(xs_json_path(doc, "measured.max_abs_err")->valuedouble <= 2e-2);
    CU_ASSERT(xs_json_path(doc, "measured.dynamic_s")->valuedouble > 0);
    cJSON_Delete(doc);
    tu_run_free(&r);
}

int tu_add_threads_suite(void)
{
    CU_pSuite s = CU_add_suite("threads", NULL, NULL);
    return !s ||
           !CU_add_test(s, "more_threads_should_never_reduce_per_op_overhead",
                        more_threads_should_never_reduce_per_op_overhead) ||
           !CU_add_test(s, "all_cores_should_reproduce_the_cpu_model",
                        all_cores_should_reproduce_the_cpu_model) ||
           !CU_add_test(s, "parallel_work_should_cap_the_speedup",
                        parallel_work_should_cap_the_speedup) ||
           !CU_add_test(s, "plan_should_pick_the_argmin", plan_should_pick_the_argmin) ||
           !CU_add_test(s, "device_without_thread_sweeps_should_be_refused",
                        device_without_thread_sweeps_should_be_refused) ||
           !CU_add_test(s, "inference_scenarios_should_refuse_bad_input",
                        inference_scenarios_should_refuse_bad_input) ||
           !CU_add_test(s, "every_set_should_refuse_the_same_slips",
                        every_set_should_refuse_the_same_slips) ||
           !CU_add_test(s, "threads_host_should_need_this_kernel_set",
                        threads_host_should_need_this_kernel_set) ||
           !CU_add_test(s, "threads_command_should_print_what_its_help_promises",
                        threads_command_should_print_what_its_help_promises) ||
           !CU_add_test(s, "bf16_lstm_should_be_modelled_with_its_own_rates",
                        bf16_lstm_should_be_modelled_with_its_own_rates) ||
           !CU_add_test(s, "threads_run_should_measure_the_three_settings",
                        threads_run_should_measure_the_three_settings);
}
