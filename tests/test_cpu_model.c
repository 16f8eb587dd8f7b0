/* test_cpu_model.c — the calibrated CPU device (devices/xeon-amx-2c.json)
 * loads and feeds the shared GEMM model; its loader refuses bad copies;
 * the CPU cost model behaves as its physics says (more work costs more,
 * threads divide the work, cold data cost more than cached, a batched GEMM
 * is that many calls, the band brackets the estimate); the fitter recovers
 * known parameters. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "backend.h"
#include "cpu.h"
#include "cpu_calibrate.h"
#include "device.h"
#include "fileio.h"
#include "fit.h"
#include "gemm.h"
#include "paths.h"
#include "predict.h"
#include "scenario.h"
#include "test_util.h"

#define CPU_ID "xeon-amx-2c"

static void load_cpu(xs_device *d)
{
    char path[512];
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_resolve("devices", CPU_ID, path, sizeof path, &err), XS_OK);
    int rc = xs_dev_load(path, d, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
}

static cJSON *good_cpu(void)
{
    return tu_load_json("devices/" CPU_ID ".json");
}

static void calibrated_cpu_should_load_into_the_gemm_model(void)
{
    xs_device d;
    load_cpu(&d);
    CU_ASSERT_PTR_EQUAL(xs_backend_of(&d), &xs_cpu_backend);
    CU_ASSERT_STRING_EQUAL(d.arch, xs_cpu_of(&d)->isa);
    /* what listings show is the calibrated all-core DRAM bandwidth */
    cJSON *doc = good_cpu();
    CU_ASSERT_DOUBLE_EQUAL(d.mem_bw_gbs, xs_json_path(doc, "memory.bw_dram_gbs")->valuedouble, 0);
    cJSON_Delete(doc);
    xs_gemm_engine e;
    xs_dev_gemm_engine(&d, &e);
    CU_ASSERT_EQUAL(e.units, xs_cpu_of(&d)->cores);
    CU_ASSERT_EQUAL(e.max_tiles_per_unit, 1);
    CU_ASSERT_EQUAL(e.matrix->n, 1);
    CU_ASSERT_EQUAL(e.matrix->tiles[0].m, 32);
    CU_ASSERT_EQUAL(e.vector->n, 1);
    CU_ASSERT_EQUAL(e.vector->tiles[0].m, 32);
    CU_ASSERT_EQUAL(e.matrix->k_bytes, 64); /* the AMX kernel: 32 bf16 of K a step */
    CU_ASSERT_EQUAL(e.vector->k_bytes, 4);  /* the fp32 kernel: one element a step */
    CU_ASSERT(e.packs_operands);
    /* the peaks are measured at the held clock: no scaling */
    CU_ASSERT_DOUBLE_EQUAL(e.peak_flops[XS_FP32], d.peak_tflops[XS_FP32] * 1e12, 1);
    /* fp16 has no matrix-engine path on this CPU: the GEMM model runs it in fp32 */
    xs_dtype engine;
    int tensor;
    double r16 = xs_gemm_rate(&e, XS_FP16, &engine, &tensor);
    CU_ASSERT_EQUAL(engine, XS_FP32);
    CU_ASSERT_DOUBLE_EQUAL(r16, d.peak_tflops[XS_FP32] * 1e12 * xs_cpu_of(&d)->gemm_eff_fp32, 1);
    double r_bf16 = xs_gemm_rate(&e, XS_BF16, &engine, &tensor);
    CU_ASSERT_EQUAL(engine, XS_BF16);
    CU_ASSERT_DOUBLE_EQUAL(r_bf16, d.peak_tflops[XS_BF16] * 1e12 * xs_cpu_of(&d)->gemm_eff_bf16, 1);
    /* waves: 32 x 32 blocks over the cores, one at a time */
    xs_gemm_shape g = {1024, 1024, 1024, 1, 0, 0, XS_BF16, 4};
    xs_gemm_result r;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_gemm_model(&e, &g, &r, &err), XS_OK);
    CU_ASSERT_EQUAL(r.tiles, 1024);
    CU_ASSERT_EQUAL(r.waves, 1024 / xs_cpu_of(&d)->cores);
}

static void expect_bad_cpu(cJSON *doc, const char *part)
{
    const char *path = tu_write_json(CPU_ID ".json", doc);
    xs_device d;
    xs_error err;
    int rc = xs_dev_load(path, &d, &err);
    CU_ASSERT(rc != XS_OK);
    if (rc && !strstr(err.msg, part))
        fprintf(stderr, "\nmessage '%s' lacks '%s'\n", err.msg, part);
    CU_ASSERT(rc && strstr(err.msg, part) != NULL && strstr(err.msg, CPU_ID ".json") != NULL);
    cJSON_Delete(doc);
}

static void cpu_loader_should_reject_each_bad_field(void)
{
    cJSON *doc = good_cpu();
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "kernels"), "gelu"),
                               "ns_per_elem");
    expect_bad_cpu(doc, "missing required field 'kernels.gelu.ns_per_elem'");

    doc = good_cpu();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "memory"), "bw_llc_gbs_per_core",
                              cJSON_CreateNumber(-3));
    expect_bad_cpu(doc, "field 'memory.bw_llc_gbs_per_core' must be a number > 0, got -3");

    doc = good_cpu();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "memory"), "bw_dram_gbs",
                              cJSON_CreateNumber(1e6));
    expect_bad_cpu(doc, "field 'memory.bw_dram_gbs' must not exceed");

    doc = good_cpu();
    cJSON_AddNumberToObject(cJSON_GetObjectItem(doc, "model"), "gemm_efficiency", 0.5);
    expect_bad_cpu(doc, "unknown field 'model.gemm_efficiency'");

    doc = good_cpu();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "gemm"), "tiles",
                              cJSON_CreateString("32by32"));
    expect_bad_cpu(doc, "field 'gemm.tiles' must list");

    doc = good_cpu(); /* provenance is free-form but must be an object */
    cJSON_ReplaceItemInObject(doc, "calibration", cJSON_CreateString("today"));
    expect_bad_cpu(doc, "field 'calibration' must be a JSON object");
}

static xs_op eltwise(int fn, double elems, double bytes_per_elem)
{
    xs_op op = xs_op_make(XS_OP_ELTWISE, XS_PH_FWD, XS_FP32, xs_cpu_fn_name(fn));
    op.hints.fn = fn;
    op.elems = elems;
    op.bytes = elems * bytes_per_elem;
    return op;
}

static xs_op gemm_op(xs_dtype t, int64_t m, int64_t n, int64_t k, int64_t batch)
{
    xs_op op = xs_op_make(batch > 1 ? XS_OP_BGEMM : XS_OP_GEMM, XS_PH_FWD, t, "g");
    op.m = m;
    op.n = n;
    op.k = k;
    op.batch = batch;
    return op;
}

static double est(const xs_device *d, const xs_op *op, int threads)
{
    xs_estimate e;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_cpu_estimate(d, op, threads, &e, &err), XS_OK);
    CU_ASSERT(e.time_s > 0 && isfinite(e.time_s));
    return e.time_s;
}

static void cpu_estimates_should_follow_the_physics(void)
{
    xs_device d;
    load_cpu(&d);
    int N = (int)xs_cpu_of(&d)->cores;
    /* elementwise: more elements cost more; beyond the caches DRAM bounds */
    xs_op small = eltwise(XS_FN_GELU, 1e5, 12), big = eltwise(XS_FN_GELU, 1e7, 12);
    CU_ASSERT(est(&d, &big, N) > 10 * est(&d, &small, N) * 0.5);
    xs_op add = eltwise(XS_FN_ADD, 1e8, 16);
    xs_estimate e;
    xs_error err;
    CU_ASSERT_EQUAL(xs_cpu_estimate(&d, &add, N, &e, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(e.memory_s, 1.6e9 / (d.mem_bw_gbs * 1e9), 1e-9);
    /* threads divide the work of a compute-bound kernel */
    if (N > 1)
        CU_ASSERT(est(&d, &big, 1) > 1.5 * est(&d, &big, N));
    /* cached data cost the hot rate, the same kernel on data beyond L2 the cold one */
    double l2q = xs_cpu_of(&d)->l2_kb_per_core * 1024 / 4;
    xs_op hot = eltwise(XS_FN_CAST, l2q / 8 * 0.9, 8), cold = hot;
    cold.hints.group_bytes = 10 * l2q; /* one call of a loop over many heads */
    CU_ASSERT_EQUAL(xs_cpu_is_cold(xs_cpu_of(&d), hot.bytes), 0);
    CU_ASSERT(est(&d, &cold, N) >= est(&d, &hot, N));
    /* GEMMs: more K costs more; a batch of 4 is 4 calls */
    xs_op g1 = gemm_op(XS_BF16, 512, 512, 256, 1), g2 = gemm_op(XS_BF16, 512, 512, 1024, 1);
    CU_ASSERT(est(&d, &g2, N) > est(&d, &g1, N));
    xs_op small1 = gemm_op(XS_BF16, 128, 128, 64, 1), small4 = gemm_op(XS_BF16, 128, 128, 64, 4);
    xs_estimate e1, e4;
    CU_ASSERT_EQUAL(xs_cpu_estimate(&d, &small1, N, &e1, &err), XS_OK);
    small1.hints.group_bytes = 4 * (2.0 * (128 * 64 + 64 * 128) + 4.0 * 128 * 128);
    CU_ASSERT_EQUAL(xs_cpu_estimate(&d, &small1, N, &e1, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_cpu_estimate(&d, &small4, N, &e4, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(e4.time_s, 4 * e1.time_s, 1e-12);
    /* the matrix engine beats the vector units on a large GEMM */
    xs_op f32 = gemm_op(XS_FP32, 1024, 1024, 1024, 1), b16 = gemm_op(XS_BF16, 1024, 1024, 1024, 1);
    CU_ASSERT(est(&d, &f32, N) > 2 * est(&d, &b16, N));
    /* what the CPU has no kernel for, and bad thread counts, are errors */
    xs_op att = gemm_op(XS_BF16, 128, 128, 64, 8);
    att.kind = XS_OP_ATTENTION;
    CU_ASSERT_EQUAL(xs_cpu_estimate(&d, &att, N, &e, &err), XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no kernel"));
    CU_ASSERT_EQUAL(xs_cpu_estimate(&d, &g1, N + 1, &e, &err), XS_ERANGE);
    CU_ASSERT_EQUAL(xs_cpu_estimate(&d, &g1, 0, &e, &err), XS_ERANGE);
}

static void cpu_band_should_bracket_the_estimate(void)
{
    xs_device d, slow, fast;
    load_cpu(&d);
    xs_dev_corner(&d, -1, &slow);
    xs_dev_corner(&d, +1, &fast);
    int N = (int)xs_cpu_of(&d)->cores;
    xs_op ops[] = {gemm_op(XS_BF16, 1024, 768, 256, 1), gemm_op(XS_FP32, 512, 512, 512, 1),
                   eltwise(XS_FN_LAYERNORM, 1e6, 12), eltwise(XS_FN_ADAN, 1e7, 44)};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        double t = est(&d, &ops[i], N);
        CU_ASSERT(est(&slow, &ops[i], N) >= t);
        CU_ASSERT(est(&fast, &ops[i], N) <= t);
    }
}

static void workload_ops_should_map_to_cpu_kernels(void)
{
    xs_op op = xs_op_make(XS_OP_ELTWISE, XS_PH_BWD, XS_FP32, "ffn.gelu.bwd");
    CU_ASSERT_EQUAL(xs_cpu_fn_for_op(&op), XS_FN_GELU_BWD);
    op.phase = XS_PH_FWD;
    snprintf(op.name, sizeof op.name, "attn.probs.dropout");
    CU_ASSERT_EQUAL(xs_cpu_fn_for_op(&op), XS_FN_DROPOUT);
    op.kind = XS_OP_NORM;
    CU_ASSERT_EQUAL(xs_cpu_fn_for_op(&op), XS_FN_LAYERNORM);
    op.kind = XS_OP_OPTIMIZER;
    snprintf(op.name, sizeof op.name, "optimizer.adamw");
    CU_ASSERT_EQUAL(xs_cpu_fn_for_op(&op), XS_FN_ADAMW);
    op.hints.fn = XS_FN_COPY; /* a set fn wins */
    CU_ASSERT_EQUAL(xs_cpu_fn_for_op(&op), XS_FN_COPY);
    op.hints.fn = -1;
    op.kind = XS_OP_COMM;
    CU_ASSERT_EQUAL(xs_cpu_fn_for_op(&op), -1);
    for (int f = 0; f < XS_FN_COUNT; f++)
        CU_ASSERT_EQUAL(xs_cpu_fn_index(xs_cpu_fn_name(f)), f);
    CU_ASSERT_EQUAL(xs_cpu_fn_index("flash"), -1);
}

static void scenarios_should_predict_on_the_cpu(void)
{
    tu_result r = tu_run("predict -d " CPU_ID " -s bert-base-squad --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    double t = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "step"), "time_s")->valuedouble;
    CU_ASSERT(t > 0.1 && t < 1e4);
    cJSON_Delete(doc);
    tu_run_free(&r);
    /* flash attention has no CPU kernel: one clear line, exit 1 */
    r = tu_run("predict -d " CPU_ID " -s gpt2-medium-finetune");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no kernel for op 'attn.flash'"));
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_free(&r);
}

/* y = 2e-6 + 3e-9 x - 2e-10 z with 1% alternating noise: z's coefficient
 * would come out negative, so the fit drops it and refits; the two others
 * are close to the truth and the residuals are of the size of the noise
 * plus what z explained. */
static void fit_should_recover_known_parameters(void)
{
    enum { N = 12 };
    double X[N * 3], y[N];
    for (int i = 0; i < N; i++) {
        double x = 1000.0 * (i + 1) * (i + 1), z = (i % 3) * 1e3;
        X[3 * i] = 1;
        X[3 * i + 1] = x;
        X[3 * i + 2] = z;
        y[i] = (2e-6 + 3e-9 * x) * (1 + (i % 2 ? 0.01 : -0.01)) - 2e-10 * z;
    }
    xs_fit f;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_fit_nonneg(X, y, N, 3, "test", &f, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(f.coef[0], 2e-6, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(f.coef[1], 3e-9, 1e-10);
    CU_ASSERT_EQUAL(f.used[2], 0);
    CU_ASSERT_EQUAL(f.coef[2], 0.0);
    CU_ASSERT(f.sd[1] > 0 && f.sd[1] < 1e-10);
    CU_ASSERT(f.rms_rel_pct > 0.5 && f.rms_rel_pct < 10);
    CU_ASSERT(f.max_rel_pct >= f.rms_rel_pct);
    double x0[3] = {1, 1e6, 0};
    CU_ASSERT_DOUBLE_EQUAL(xs_fit_eval(&f, x0), 2e-6 + 3e-3, 1e-4);
    /* too few points, a non-positive time */
    CU_ASSERT_EQUAL(xs_fit_nonneg(X, y, 2, 3, "test", &f, &err), XS_ERANGE);
    y[3] = 0;
    CU_ASSERT_EQUAL(xs_fit_nonneg(X, y, N, 3, "test", &f, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "point 3"));
}

/* The whole loop on this host, as CI runs it: a quick calibration writes a
 * device file and its measurements, the check runs the BERT step and the
 * single kernels against it. Accuracy is reported, not asserted (timings
 * on a shared machine); the shape of the report is. */
static const char *last_line(const char *text)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n')
        n--;
    while (n && text[n - 1] != '\n')
        n--;
    return text + n;
}

static void close_the_loop(const char *set)
{
    if (getenv("XS_TEST_UNDER_VALGRIND")) { /* make test-valgrind */
        fprintf(stderr, "\n(skipped: under valgrind a quick calibration alone takes more than 13 "
                        "minutes; make test-rel runs the loop natively)\n");
        return;
    }
#if defined(__SANITIZE_ADDRESS__)
    /* the calibration times the kernels: instrumented, every load runs at
     * the sanitizer's pace and the fits see no memory hierarchy (its
     * sanity checks refuse them); make test-rel runs the loop natively */
    fprintf(stderr, "\n(skipped: under ASan the timed kernels are the sanitizer's; make test-rel "
                    "runs the loop natively)\n");
    return;
#endif
    char cmd[1024], dev[600], meas[600];
    snprintf(dev, sizeof dev, "%s/host-test%s.json", tu_tmpdir(), set);
    snprintf(meas, sizeof meas, "%s/host-test%s.measurements.csv", tu_tmpdir(), set);
    snprintf(cmd, sizeof cmd, "calibrate --backend cpu --quick -o '%s'", dev);
    tu_result r = tu_run(cmd);
    if (r.status == 3 && (strstr(r.err, "built without the CPU kernels") ||
                          strstr(r.err, "cannot run that kernel set") ||
                          strstr(r.err, "too noisy to time kernels on"))) {
        /* the last line: a busy host's refusal follows its probes' lines */
        fprintf(stderr, "\n(skipped: %s)\n", last_line(r.err));
        tu_run_free(&r);
        return;
    }
    int status = r.status, wrote = strstr(r.err, "wrote") != NULL;
    if (status != 0)
        fprintf(stderr, "\ncalibrate -> %d: %s\n", status, r.err);
    tu_run_free(&r);
    CU_ASSERT_EQUAL_FATAL(status, 0);
    CU_ASSERT(wrote);
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_load(dev, &d, &err), XS_OK);
    CU_ASSERT(xs_cpu_of(&d)->bw_l2_core > xs_cpu_of(&d)->bw_dram_core);
    CU_ASSERT(xs_cpu_of(&d)->gemm_eff_fp32 > 0.05 && xs_cpu_of(&d)->gemm_eff_fp32 <= 1);
#if defined(__x86_64__)
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_cpu_of(&d)->cpu_signature, " family ")); /* which CPU, by CPUID */
#endif
    if (set[0]) { /* the file says which kernel set it describes */
        CU_ASSERT_STRING_EQUAL(xs_cpu_of(&d)->isa, set);
    }
    if (strcmp(xs_cpu_of(&d)->isa, "amx-bf16") && strcmp(xs_cpu_of(&d)->isa, "avx512-bf16")) {
        /* no bf16 unit: bf16 runs on the fp32 kernel, and the model says so */
        CU_ASSERT_EQUAL(d.peak_tflops[XS_BF16], 0);
        CU_ASSERT_EQUAL(xs_cpu_of(&d)->bf16_blocks.k_bytes, 2);
        CU_ASSERT_EQUAL(xs_cpu_gemm_kernel_for(xs_cpu_of(&d)->isa, 1), XS_CPU_GEMM_BF16_ON_FP32);
    }
    char *csv = NULL;
    FILE *f = fopen(meas, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[512];
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
    CU_ASSERT(strncmp(line, "bench,name,threads,m,n,k", 24) == 0);
    int rows = 0;
    while (fgets(line, sizeof line, f))
        rows++;
    fclose(f);
    free(csv);
    CU_ASSERT(rows > 100);
    snprintf(cmd, sizeof cmd, "validate --backend cpu --quick -d '%s' --format json", dev);
    r = tu_run(cmd);
    if (r.status == 3 && strstr(r.err, "too noisy to time kernels on")) {
        fprintf(stderr, "\n(check skipped: %s)\n", last_line(r.err));
        tu_run_free(&r);
        return;
    }
    if (r.status != 0) {
        fprintf(stderr, "\nvalidate -> %d: %s\n", r.status, r.err);
        tu_run_free(&r);
        CU_FAIL_FATAL("validate --backend cpu failed");
    }
    /* the host's ceilings measured again before the check */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "validate: this host now: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "GFLOP/s a core (device file "));
    cJSON *doc = cJSON_ParseWithOpts(r.out, NULL, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    /* how quiet the host was around the check */
    cJSON *hn = cJSON_GetObjectItem(doc, "host_noise");
    CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(hn, "reference_scaling")) >= 0.8);
    /* and in the report, with the note it led to (if any) */
    cJSON *hs = cJSON_GetObjectItem(doc, "host_state");
    CU_ASSERT_PTR_NOT_NULL_FATAL(hs);
    CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(hs, "fma_gflops_core")) > 0);
    CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(hs, "device_fma_gflops_core")) > 0);
    int moved = cJSON_IsTrue(cJSON_GetObjectItem(hs, "moved"));
    CU_ASSERT_EQUAL(moved, cJSON_GetArraySize(cJSON_GetObjectItem(doc, "notes")));
    CU_ASSERT_EQUAL(moved, strstr(r.err, "(see the report's note)") != NULL);
    cJSON *arr = cJSON_GetObjectItem(doc, "rows"), *row;
    int steps = 0, kernels = 0, singles = 0;
    cJSON_ArrayForEach(row, arr)
    {
        const char *metric = cJSON_GetObjectItem(row, "metric")->valuestring;
        const char *scen = cJSON_GetObjectItem(row, "scenario")->valuestring;
        steps += !strcmp(metric, "step_time_s");
        kernels += !strcmp(metric, "time_s") && strcmp(scen, "-") != 0;
        singles += !strcmp(scen, "-");
        CU_ASSERT(cJSON_GetObjectItem(row, "measured")->valuedouble > 0);
        CU_ASSERT(cJSON_GetObjectItem(row, "predicted")->valuedouble > 0);
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(row, "measured_iqr_pct"));
    }
    CU_ASSERT_EQUAL(steps, 2); /* fp32 and bf16 */
    CU_ASSERT(kernels > 40);
    CU_ASSERT(singles >= 6);
    cJSON *sum = cJSON_GetObjectItem(doc, "summary");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(sum, "n")->valueint, cJSON_GetArraySize(arr));
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(sum, "failed")->valueint, 0);
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "by_metric"),
                                               "step_time_s"));
    cJSON_Delete(doc);
    tu_run_free(&r);
}


static void calibrate_then_check_should_close_the_loop(void)
{
    close_the_loop("");
}

/* The same loop with the kernels capped at AVX2 + FMA (XS_CPU_ISA), as on
 * a Zen 2/3 or an Intel client host: bf16 emulated on the fp32 kernel. */
static void calibrate_then_check_should_close_the_loop_on_avx2(void)
{
    const char *set = xs_cpu_kernel_set();
    if (set && strcmp(set, "avx2") == 0) { /* an AVX2 host, or valgrind's CPU */
        fprintf(stderr, "\n(skipped: the kernels run avx2 here already: the loop below covers it)\n");
        return;
    }
    setenv("XS_CPU_ISA", "avx2", 1); /* for the commands the loop runs */
    close_the_loop("avx2");
    unsetenv("XS_CPU_ISA");
}

/* 1 when the file at path holds exactly text (NULL: the file is absent). */
static int file_is(const char *path, const char *text)
{
    char *have = NULL;
    xs_error err;
    if (xs_read_file(path, &have, NULL, &err) != XS_OK)
        return text == NULL;
    int same = text && strcmp(have, text) == 0;
    free(have);
    return same;
}

/* An audit found the README's calibrate command truncating the committed
 * measurements before refusing the host: calibrate judges the host and
 * every target before it opens anything. */
static void calibrate_should_damage_no_file_it_did_not_create(void)
{
    char *dev0 = NULL, *meas0 = NULL;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_read_file("devices/" CPU_ID ".json", &dev0, NULL, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(
        xs_read_file("calibrate/runs/" CPU_ID ".measurements.csv", &meas0, NULL, &err), XS_OK);
    /* the shipped files, as the README once wrote them */
    tu_result r = tu_run("calibrate --backend cpu --quick -o devices/" CPU_ID ".json "
                         "--measurements calibrate/runs/" CPU_ID ".measurements.csv");
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT(strstr(r.err, "shipped with xpusim") || strstr(r.err, "without the CPU kernels"));
    tu_run_free(&r);
    CU_ASSERT(file_is("devices/" CPU_ID ".json", dev0)); /* byte for byte */
    CU_ASSERT(file_is("calibrate/runs/" CPU_ID ".measurements.csv", meas0));
    free(dev0);
    free(meas0);

    /* files of another kind, or not made by calibrate */
    const char *json = tu_write("mine.json", "{\"id\": \"mine\"}\n");
    const char *csv = tu_write("notes.csv", "a,b\n1,2\n");
    char cmd[1400], other[600];
    snprintf(cmd, sizeof cmd, "calibrate --backend cpu --quick -o '%s'", json);
    r = tu_run(cmd);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT(strstr(r.err, "was not written by xpusim calibrate") ||
              strstr(r.err, "without the CPU kernels"));
    tu_run_free(&r);
    CU_ASSERT(file_is(json, "{\"id\": \"mine\"}\n"));
    snprintf(other, sizeof other, "%s/fresh.json", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "calibrate --backend cpu --quick -o '%s' --measurements '%s'", other,
             csv);
    r = tu_run(cmd);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT(strstr(r.err, "was not written by xpusim calibrate") ||
              strstr(r.err, "without the CPU kernels"));
    tu_run_free(&r);
    CU_ASSERT(file_is(csv, "a,b\n1,2\n"));
    CU_ASSERT(file_is(other, NULL));

    /* a kernel set this CPU lacks, or none by that name: refused before any
     * file exists */
#if defined(__x86_64__)
    setenv("XS_CPU_ISA", "neon", 1);
#else
    setenv("XS_CPU_ISA", "avx2", 1);
#endif
    snprintf(cmd, sizeof cmd, "calibrate --backend cpu --quick -o '%s'", other);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 3); /* EXIT_NOHW */
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT(strstr(r.err, "cannot run that kernel set") ||
              strstr(r.err, "without the CPU kernels"));
    tu_run_free(&r);
    setenv("XS_CPU_ISA", "avx3", 1);
    r = tu_run(cmd);
    unsetenv("XS_CPU_ISA");
    CU_ASSERT(r.status == 2 || strstr(r.err, "without the CPU kernels")); /* a usage error */
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT(strstr(r.err, "XS_CPU_ISA='avx3' names no kernel set") ||
              strstr(r.err, "without the CPU kernels"));
    tu_run_free(&r);
    char meas[700];
    snprintf(meas, sizeof meas, "%s/fresh.measurements.csv", tu_tmpdir());
    CU_ASSERT(file_is(other, NULL));
    CU_ASSERT(file_is(meas, NULL));
}

/* A device calibrated on another CPU model is refused by the check unless
 * asked for, and then the report ends saying two machines were compared. */
static void check_should_refuse_another_hosts_device(void)
{
    xs_error err;
    if (xs_cpu_host_check(&err)) { /* a build without the CPU kernels knows no CPU model */
        fprintf(stderr, "\n(skipped: %s)\n", err.msg);
        return;
    }
    cJSON *doc = tu_load_json("devices/" CPU_ID ".json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON_ReplaceItemInObject(doc, "id", cJSON_CreateString("elsewhere"));
    cJSON *compute = cJSON_GetObjectItem(doc, "compute");
    cJSON_ReplaceItemInObject(compute, "cpu_model", cJSON_CreateString("Some Other CPU 9000"));
    const char *path = tu_write_json("elsewhere.json", doc);
    cJSON_Delete(doc);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "validate --backend cpu --quick -d '%s'", path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "calibrated on \"Some Other CPU 9000\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--allow-other-host"));
    CU_ASSERT_EQUAL(r.out[0], '\0');
    tu_run_free(&r);
}

/* The same CPU with its kernels capped at another set (XS_CPU_ISA) is
 * another machine to the model: the shipped amx-bf16 file is refused, in
 * one line, before anything runs. */
static void check_should_refuse_another_kernel_sets_device(void)
{
    xs_device d;
    load_cpu(&d);
    xs_error err;
    char why[320];
    if (xs_cpu_host_check(&err)) {
        fprintf(stderr, "\n(skipped: %s)\n", err.msg);
        return;
    }
    /* only meaningful on the CPU the shipped file was calibrated on */
    if (!xs_cpu_same_host(&d, why, sizeof why)) {
        fprintf(stderr, "\n(skipped: %s)\n", why);
        return;
    }
    setenv("XS_CPU_ISA", "avx2", 1);
    tu_result r = tu_run("validate --backend cpu --quick -d " CPU_ID);
    unsetenv("XS_CPU_ISA");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "calibrated with the amx-bf16 kernel set, this run "
                                         "uses avx2"));
    CU_ASSERT_EQUAL(r.out[0], '\0');
    tu_run_free(&r);
}

/* Busy loops on every core, as other work on a shared host; 0 started.
 * Each child stops when killed, or after a minute whatever happens. */
static int spin_all_cores(pid_t *pids, int max)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = 0;
    for (long i = 0; i < cores && n < max; i++) {
        pid_t p = fork();
        if (p == 0) {
            alarm(60);
            for (volatile unsigned long x = 0;; x++)
                ;
        }
        if (p > 0)
            pids[n++] = p;
    }
    return n;
}

static void stop_spinning(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
}

/* One error line, the last, saying how noisy and what to do; exit 3. */
static void expect_noisy(const tu_result *r, const char *outcome)
{
    CU_ASSERT_EQUAL(r->status, 3); /* EXIT_NOHW */
    const char *last = last_line(r->err);
    CU_ASSERT(strncmp(last, "xpusim: error: ", 15) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(last, "too noisy to time kernels on"));
    CU_ASSERT_PTR_NOT_NULL(strstr(last, outcome));
    CU_ASSERT_PTR_NOT_NULL(strstr(last, "quieter machine"));
    CU_ASSERT(strstr(last, "spread") || strstr(last, "times as fast"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err, "host noisy (probe 3 of 3)"));
    if (r->status != 3 || !strstr(last, "too noisy"))
        fprintf(stderr, "\n-> %d: %s\n", r->status, r->err);
}

/* A host whose cores other work keeps busy times nonsense: calibrate
 * refuses with how noisy it was and writes no file, validate --backend
 * cpu refuses with no report. */
static void a_busy_host_should_be_refused(void)
{
    xs_error err;
    if (xs_cpu_host_check(&err)) {
        fprintf(stderr, "\n(skipped: %s)\n", err.msg);
        return;
    }
    if (getenv("XS_TEST_UNDER_VALGRIND")) {
        fprintf(stderr, "\n(skipped: under valgrind every kernel is slow and noisy alike)\n");
        return;
    }
#if defined(__SANITIZE_ADDRESS__)
    fprintf(stderr, "\n(skipped: under ASan the timed kernels are the sanitizer's; make test-rel "
                    "runs it natively)\n");
    return;
#endif
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "\n(skipped: one core: its threads cannot lose a core to each other)\n");
        return;
    }
    char dev[600], meas[600], cmd[1400];
    snprintf(dev, sizeof dev, "%s/busy-host.json", tu_tmpdir());
    snprintf(meas, sizeof meas, "%s/busy-host.measurements.csv", tu_tmpdir());
    pid_t pids[256];
    int n = spin_all_cores(pids, 256);
    CU_ASSERT_FATAL(n > 0);
    snprintf(cmd, sizeof cmd, "calibrate --backend cpu --quick -o '%s'", dev);
    tu_result r = tu_run(cmd);
    /* a shipped cpu device of the same core count, whatever its CPU */
    tu_result v = tu_run("validate --backend cpu --quick --allow-other-host -d " CPU_ID);
    stop_spinning(pids, n);
    expect_noisy(&r, "no device file was written");
    CU_ASSERT(file_is(dev, NULL));
    CU_ASSERT(file_is(meas, NULL)); /* refused before it measured */
    expect_noisy(&v, "no report");
    CU_ASSERT_EQUAL(v.out[0], '\0');
    tu_run_free(&r);
    tu_run_free(&v);
}

static void calibrate_and_check_should_refuse_bad_usage(void)
{
    static const struct {
        const char *args, *part;
        int status;
    } cases[] = {
        {"calibrate", "give --backend cpu", 2},
        {"calibrate --backend gpu", "--backend must be one of cpu|trace|cuda (", 2},
        {"calibrate --backend cpu -o out.txt", "must name a .json device file", 2},
        {"calibrate --backend cpu --threads 0", "--threads must be an integer", 2},
        {"validate --backend cpu", "needs -d DEVICE", 2},
        {"validate --backend cpu -d a100-sxm4-80gb", "is not a cpu device", 2},
        {"validate --backend cpu -d nonexistent-cpu", "unknown device 'nonexistent-cpu'", 2},
        {"validate --backend cpu -d " CPU_ID " -s bert-base-squad", "do not go with it", 2},
        {"validate --quick --measured x.csv", "--quick and --allow-other-host go with --backend", 2},
        {"validate --allow-other-host --measured x.csv", "go with --backend cpu", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_result r = tu_run(cases[i].args);
        CU_ASSERT_EQUAL(r.status, cases[i].status);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, cases[i].part));
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        if (r.status != cases[i].status || !strstr(r.err, cases[i].part))
            fprintf(stderr, "\n'%s': status %d, stderr %s\n", cases[i].args, r.status, r.err);
        tu_run_free(&r);
    }
}

int tu_add_cpu_model_suite(void)
{
    CU_pSuite s = CU_add_suite("cpu_model", NULL, NULL);
    return !s ||
           !CU_add_test(s, "calibrated_cpu_should_load_into_the_gemm_model",
                        calibrated_cpu_should_load_into_the_gemm_model) ||
           !CU_add_test(s, "cpu_loader_should_reject_each_bad_field",
                        cpu_loader_should_reject_each_bad_field) ||
           !CU_add_test(s, "cpu_estimates_should_follow_the_physics",
                        cpu_estimates_should_follow_the_physics) ||
           !CU_add_test(s, "cpu_band_should_bracket_the_estimate",
                        cpu_band_should_bracket_the_estimate) ||
           !CU_add_test(s, "workload_ops_should_map_to_cpu_kernels",
                        workload_ops_should_map_to_cpu_kernels) ||
           !CU_add_test(s, "scenarios_should_predict_on_the_cpu",
                        scenarios_should_predict_on_the_cpu) ||
           !CU_add_test(s, "fit_should_recover_known_parameters",
                        fit_should_recover_known_parameters) ||
           !CU_add_test(s, "calibrate_and_check_should_refuse_bad_usage",
                        calibrate_and_check_should_refuse_bad_usage) ||
           !CU_add_test(s, "calibrate_should_damage_no_file_it_did_not_create",
                        calibrate_should_damage_no_file_it_did_not_create) ||
           !CU_add_test(s, "check_should_refuse_another_kernel_sets_device",
                        check_should_refuse_another_kernel_sets_device) ||
           !CU_add_test(s, "check_should_refuse_another_hosts_device",
                        check_should_refuse_another_hosts_device) ||
           !CU_add_test(s, "a_busy_host_should_be_refused", a_busy_host_should_be_refused) ||
           !CU_add_test(s, "calibrate_then_check_should_close_the_loop_on_avx2",
                        calibrate_then_check_should_close_the_loop_on_avx2) ||
           !CU_add_test(s, "calibrate_then_check_should_close_the_loop",
                        calibrate_then_check_should_close_the_loop);
}
