/* test_trace_calibrate.c — calibrate --backend trace: a simulated trace with
 * known per-class slowdowns gives those slowdowns back; the written file is
 * a device that loads and predicts exactly that much slower per class; the
 * fit's residuals are written; bad input is refused with its reason. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "gpu.h"
#include "job.h"
#include "kernel_class.h"
#include "schema.h"
#include "test_util.h"
#include "trace.h"
#include "trace_calibrate.h"

#define DEV "h100-sxm5-80gb"
#define SCN "bert-base-squad"

static const char *const SETS[] = {"train.batch=64"};

/* Tolerance of a recovered factor: the file keeps 6 significant digits;
 * the trace keeps every kernel's time to double precision. */
#define FACTOR_TOL 1e-5

static int simulate(const char *path, const double *factor, double step_s, int steps)
{
    xs_trace_sim_opts o = {.device = DEV, .scenario = SCN, .sets = SETS, .nsets = 1,
                           .step_s = step_s, .steps = steps, .out = path};
    if (factor)
        memcpy(o.factor, factor, sizeof o.factor);
    xs_error err;
    int rc = xs_trace_simulate(&o, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    return rc;
}

static int calibrate(const char *trace, const char *out, xs_error *err)
{
    xs_cal_run_opts o = {.out = out, .trace = trace, .device = DEV, .scenario = SCN,
                         .sets = SETS, .nsets = 1};
    return xs_trace_calibrate(&o, err);
}

static void sim_names_should_classify_back_into_their_class(void)
{
    for (int c = 0; c < XS_KC_OTHER; c++) {
        const char *name = xs_trace_sim_kernel_name(c);
        CU_ASSERT_PTR_NOT_NULL_FATAL(name);
        CU_ASSERT_EQUAL(xs_kclass_of_kernel(name), c);
    }
    CU_ASSERT_PTR_NULL(xs_trace_sim_kernel_name(-1));
}

/* Known slowdowns per class in, the same factors out; the other classes 1. */
static void fit_should_recover_known_class_factors(void)
{
    double f[XS_KC_COUNT] = {0};
    f[XS_KC_GEMM] = 1.3;
    f[XS_KC_SOFTMAX] = 0.7;
    f[XS_KC_NORM] = 2.0;
    f[XS_KC_ELEMENTWISE] = 1.15;
    f[XS_KC_OPTIMIZER] = 0.5;
    char trace[4096], out[4096];
    snprintf(trace, sizeof trace, "%s/known.json", tu_tmpdir());
    snprintf(out, sizeof out, "%s/known-cal.json", tu_tmpdir());
    CU_ASSERT_EQUAL_FATAL(simulate(trace, f, 0, 3), XS_OK);
    xs_error err;
    int rc = calibrate(trace, out, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
    xs_device cal;
    CU_ASSERT_EQUAL_FATAL(xs_dev_load(out, &cal, &err), XS_OK);
    CU_ASSERT_STRING_EQUAL(cal.id, "known-cal");
    for (int c = 0; c < XS_KC_OTHER; c++) {
        double want = f[c] > 0 ? f[c] : 1.0, got = xs_gpu_of(&cal)->class_time_factor[c];
        if (c == XS_KC_ATTENTION || c == XS_KC_COMM) { /* not in this scenario: absent */
            CU_ASSERT_EQUAL(got, 0);
            continue;
        }
        if (fabs(got / want - 1) > FACTOR_TOL)
            fprintf(stderr, "\nclass %s: factor %g, want %g\n", xs_kclass_name(c), got, want);
        CU_ASSERT(fabs(got / want - 1) <= FACTOR_TOL);
    }
    /* the fit and its residuals are in the file */
    cJSON *doc;
    CU_ASSERT_EQUAL_FATAL(xs_json_load(out, &doc, &err), XS_OK);
    const cJSON *g = xs_json_path(doc, "calibration.classes.gemm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(g, "n")->valueint, 3);
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(g, "residuals_pct")), 3);
    CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(g, "rms_rel_pct")));
    CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(g, "sd")));
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(g, "trace_kernels_per_step")->valuedouble,
                    cJSON_GetObjectItem(g, "predicted_kernels_per_step")->valuedouble);
    CU_ASSERT_PTR_NOT_NULL(xs_json_path(doc, "calibration.not_fitted"));
    /* every GEMM shape of the step, each at the GEMM factor */
    const cJSON *ps = cJSON_GetObjectItem(g, "per_shape");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ps);
    CU_ASSERT(cJSON_GetObjectItem(ps, "n")->valueint >= 4);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(ps, "multiplier")->valuedouble, 1.3,
                           1.3 * FACTOR_TOL);
    CU_ASSERT(cJSON_GetObjectItem(ps, "max_rel_pct")->valuedouble < 1e-3);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(ps, "trace_s_without_shape")->valuedouble, 0);
    const cJSON *sh;
    cJSON_ArrayForEach(sh, cJSON_GetObjectItem(ps, "shapes"))
    {
        CU_ASSERT(cJSON_GetObjectItem(sh, "m")->valuedouble <=
                  cJSON_GetObjectItem(sh, "n")->valuedouble);
        CU_ASSERT_EQUAL(cJSON_GetObjectItem(sh, "trace_kernels_per_step")->valuedouble,
                        cJSON_GetObjectItem(sh, "predicted_kernels_per_step")->valuedouble);
    }
    CU_ASSERT(cJSON_IsString(xs_json_path(doc, "model.source")));
    cJSON_Delete(doc);
}

/* The calibrated file predicts each op's body that many times longer; the
 * launch cost stays. */
static void calibrated_file_should_scale_each_class_body(void)
{
    double f[XS_KC_COUNT] = {0};
    f[XS_KC_GEMM] = 1.25;
    f[XS_KC_COPY] = 3.0;
    char trace[4096], out[4096];
    snprintf(trace, sizeof trace, "%s/scale.json", tu_tmpdir());
    snprintf(out, sizeof out, "%s/scale-cal.json", tu_tmpdir());
    CU_ASSERT_EQUAL_FATAL(simulate(trace, f, 0, 1), XS_OK);
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(calibrate(trace, out, &err), XS_OK);
    xs_job a, b;
    xs_job_init(&a);
    xs_job_init(&b);
    CU_ASSERT_EQUAL_FATAL(xs_dev_open(DEV, &a.dev, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_dev_open(out, &b.dev, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_scenario(&a, SCN, SETS, 1, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_scenario(&b, SCN, SETS, 1, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_predict(&a, 1, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_predict(&b, 1, &err), XS_OK);
    int checked[XS_KC_COUNT] = {0};
    for (size_t i = 0; i < a.wl.n; i++) {
        const xs_estimate *x = &a.p.est[i], *y = &b.p.est[i];
        int c = xs_kclass_of_op(a.wl.ops[i].kind);
        double want = f[c] > 0 ? f[c] : 1.0, body = x->time_s - x->overhead_s;
        CU_ASSERT_DOUBLE_EQUAL(y->overhead_s, x->overhead_s, 1e-15);
        CU_ASSERT_DOUBLE_EQUAL(y->time_s - y->overhead_s, body * want, body * 1e-5 + 1e-15);
        checked[c]++;
    }
    CU_ASSERT(checked[XS_KC_GEMM] > 0 && checked[XS_KC_COPY] > 0 && checked[XS_KC_NORM] > 0);
    CU_ASSERT(b.p.step_time_s > a.p.step_time_s);
    /* the band moves with it */
    CU_ASSERT(b.p.step_time_high_s > a.p.step_time_high_s);
    xs_job_free(&a);
    xs_job_free(&b);
}

/* A trace scaled to a measured step: the calibrated file predicts that step. */
static void simulated_step_should_be_predicted_after_calibration(void)
{
    char trace[4096], out[4096];
    snprintf(trace, sizeof trace, "%s/step.json", tu_tmpdir());
    snprintf(out, sizeof out, "%s/step-cal.json", tu_tmpdir());
    const double step_s = 0.1;
    CU_ASSERT_EQUAL_FATAL(simulate(trace, NULL, step_s, 2), XS_OK);
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(calibrate(trace, out, &err), XS_OK);
    xs_trace t;
    CU_ASSERT_EQUAL_FATAL(xs_trace_load(trace, &t, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(t.step_s, step_s, step_s * 1e-6);
    CU_ASSERT_EQUAL(t.nsteps, 2);
    xs_trace_free(&t);
    xs_job j;
    xs_job_init(&j);
    CU_ASSERT_EQUAL_FATAL(xs_dev_open(out, &j.dev, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_scenario(&j, SCN, SETS, 1, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_predict(&j, 0, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(j.p.step_time_s, step_s, step_s * 1e-4);
    xs_job_free(&j);
}

/* Steps that differ leave residuals: step 1 of three 10% slower. */
static void uneven_steps_should_leave_residuals(void)
{
    char trace[4096], out[4096];
    snprintf(trace, sizeof trace, "%s/uneven.json", tu_tmpdir());
    snprintf(out, sizeof out, "%s/uneven-cal.json", tu_tmpdir());
    CU_ASSERT_EQUAL_FATAL(simulate(trace, NULL, 0, 3), XS_OK);
    xs_error err;
    cJSON *doc;
    CU_ASSERT_EQUAL_FATAL(xs_json_load(trace, &doc, &err), XS_OK);
    const cJSON *e;
    double end1 = -1;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "traceEvents"))
    {
        const char *cat = cJSON_GetObjectItem(e, "cat")->valuestring;
        if (!strcmp(cat, "user_annotation") &&
            !strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "ProfilerStep#1"))
            end1 = cJSON_GetObjectItem(e, "ts")->valuedouble +
                   cJSON_GetObjectItem(e, "dur")->valuedouble;
        if (!strcmp(cat, "kernel") && cJSON_GetObjectItem(e, "ts")->valuedouble < end1) {
            cJSON *dur = cJSON_GetObjectItem(e, "dur");
            cJSON_SetNumberValue(dur, dur->valuedouble * 1.1);
        }
    }
    char *text = cJSON_Print(doc);
    CU_ASSERT_EQUAL_FATAL(xs_write_atomic(trace, text, strlen(text), &err), XS_OK);
    free(text);
    cJSON_Delete(doc);
    CU_ASSERT_EQUAL_FATAL(calibrate(trace, out, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_json_load(out, &doc, &err), XS_OK);
    const cJSON *g = xs_json_path(doc, "calibration.classes.gemm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    double factor = cJSON_GetObjectItem(g, "factor")->valuedouble;
    double rms = cJSON_GetObjectItem(g, "rms_rel_pct")->valuedouble;
    double mx = cJSON_GetObjectItem(g, "max_rel_pct")->valuedouble;
    CU_ASSERT(factor > 1.0 && factor < 1.1);
    CU_ASSERT(rms > 1 && rms < 10 && mx >= rms);
    CU_ASSERT(cJSON_GetObjectItem(g, "sd")->valuedouble > 0);
    const cJSON *r = cJSON_GetObjectItem(g, "residuals_pct");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(r), 3);
    /* the slow step is under the fit, the others over it */
    CU_ASSERT(cJSON_GetArrayItem(r, 0)->valuedouble < 0);
    CU_ASSERT(cJSON_GetArrayItem(r, 1)->valuedouble > 0);
    cJSON_Delete(doc);
}

/* GEMM kernels take the shape of the ATen op their launch ran in. */
static void gemm_kernels_should_take_their_ops_shape(void)
{
    static const char *const head =
        "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\"}], "
        "\"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", "
        "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1000},"
        /* addmm(bias, x[512, 768], W^T[768, 3072]) */
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, "
        "\"tid\": 1, \"ts\": 10, \"dur\": 20, \"args\": {\"Input Dims\": [[3072], [512, 768], "
        "[768, 3072], [], []]}},"
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
        "\"pid\": 1, \"tid\": 1, \"ts\": 15, \"dur\": 2, \"args\": {\"correlation\": 1}},"
        /* bmm([12, 384, 64], [12, 64, 384]) on the autograd thread */
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::bmm\", \"pid\": 1, "
        "\"tid\": 2, \"ts\": 12, \"dur\": 30, \"args\": {\"Input Dims\": %s}},"
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
        "\"pid\": 1, \"tid\": 2, \"ts\": 35, \"dur\": 2, \"args\": {\"correlation\": 2}},"
        /* a GEMM launched outside any op */
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
        "\"pid\": 1, \"tid\": 1, \"ts\": 50, \"dur\": 2, \"args\": {\"correlation\": 3}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": 100, \"dur\": 40, \"args\": {\"correlation\": 1}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": 150, \"dur\": 10, \"args\": {\"correlation\": 2}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": 170, \"dur\": 5, \"args\": {\"correlation\": 3}}]}";
    const char *gemm = xs_trace_sim_kernel_name(XS_KC_GEMM);
    char text[4096];
    snprintf(text, sizeof text, head, "[[12, 384, 64], [12, 64, 384]]", gemm, gemm, gemm);
    xs_trace t;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_trace_load(tu_write("shapes.json", text), &t, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(t.nshapes, 2);
    const xs_trace_shape *a = &t.shapes[0], *b = &t.shapes[1];
    if (a->batch != 1) {
        const xs_trace_shape *x = a;
        a = b;
        b = x;
    }
    CU_ASSERT(a->m == 512 && a->n == 3072 && a->k == 768 && a->batch == 1);
    CU_ASSERT_DOUBLE_EQUAL(a->time_s, 40e-6, 1e-12);
    CU_ASSERT(b->m == 384 && b->n == 384 && b->k == 64 && b->batch == 12 && b->events == 1);
    CU_ASSERT_EQUAL(t.gemm_unshaped, 1);
    CU_ASSERT_DOUBLE_EQUAL(t.gemm_unshaped_s, 5e-6, 1e-12);
    xs_trace_free(&t);
    /* Input Dims that are not a GEMM's matrices are refused, naming the op */
    snprintf(text, sizeof text, head, "[[12, 384, 64], [12, 65, 384]]", gemm, gemm, gemm);
    CU_ASSERT_EQUAL(xs_trace_load(tu_write("shapes-bad.json", text), &t, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "aten::bmm"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Input Dims"));
    snprintf(text, sizeof text, head, "[[12, 384, -64], [12, 64, 384]]", gemm, gemm, gemm);
    CU_ASSERT_EQUAL(xs_trace_load(tu_write("shapes-bad2.json", text), &t, &err), XS_EFIELD);
    snprintf(text, sizeof text, head, "\"12x384\"", gemm, gemm, gemm);
    CU_ASSERT_EQUAL(xs_trace_load(tu_write("shapes-bad3.json", text), &t, &err), XS_EFIELD);
}

static void expect_refused(const char *args, int status, const char *reason)
{
    tu_result r = tu_run(args);
    if (r.status != status || !strstr(r.err, reason) || tu_lines(r.err) != 1)
        fprintf(stderr, "\n`xpusim %s`: exit %d, stderr '%s', want %d and '%s'\n", args,
                r.status, r.err, status, reason);
    CU_ASSERT_EQUAL(r.status, status);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, reason));
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_free(&r);
}

static void bad_input_should_be_refused_with_its_reason(void)
{
    char trace[4096], cmd[9000];
    snprintf(trace, sizeof trace, "%s/bad-base.json", tu_tmpdir());
    CU_ASSERT_EQUAL_FATAL(simulate(trace, NULL, 0, 1), XS_OK);
    /* no trace */
    expect_refused("calibrate --backend trace -d " DEV " -s " SCN, 2, "give --trace");
    /* a trace that is not there */
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s/absent.json -d " DEV " -s " SCN " -o %s/a.json",
             tu_tmpdir(), tu_tmpdir());
    expect_refused(cmd, 1, "absent.json");
    /* a trace with no GPU kernel */
    const char *cpu_only = tu_write(
        "cpu-only.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                         "\"aten::mm\", \"ts\": 1, \"dur\": 5}]}");
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN " -o %s/b.json", cpu_only,
             tu_tmpdir());
    expect_refused(cmd, 1, "no GPU kernel events");
    /* a trace with GPU events, none of a class the model costs */
    const char *host_copies = tu_write(
        "copies.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": "
                       "\"Memcpy HtoD (Pageable -> Device)\", \"ts\": 1, \"dur\": 5}]}");
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN " -o %s/c.json",
             host_copies, tu_tmpdir());
    expect_refused(cmd, 1, "no GPU kernel of a class the model costs");
    /* a trace of another board */
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d a100-sxm4-80gb -s " SCN
             " --set train.batch=64 -o %s/d.json",
             trace, tu_tmpdir());
    expect_refused(cmd, 2, "not on a100-sxm4-80gb");
    /* no scenario, an unknown one, one that is not the traced run */
    snprintf(cmd, sizeof cmd, "calibrate --backend trace --trace %s -d " DEV " -o %s/e.json",
             trace, tu_tmpdir());
    expect_refused(cmd, 2, "-s SCENARIO");
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s no-such-scenario -o %s/f.json",
             trace, tu_tmpdir());
    expect_refused(cmd, 2, "unknown scenario 'no-such-scenario'");
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN
             " --set train.batch=2048 -o %s/g.json",
             trace, tu_tmpdir());
    expect_refused(cmd, 1, "not this scenario");
    /* half the traced batch: every class inside 0.1..10x, but the recorded
     * GEMM shapes are none of the scenario's */
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN
             " --set train.batch=32 -o %s/g2.json",
             trace, tu_tmpdir());
    expect_refused(cmd, 1, "none of the trace's 10 GEMM shapes");
    /* a CPU device file */
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d xeon-amx-2c -s " SCN " -o %s/h.json",
             trace, tu_tmpdir());
    expect_refused(cmd, 2, "traces calibrate class gpu device files");
    /* options of the other backend, and the other way round */
    snprintf(cmd, sizeof cmd, "calibrate --backend trace --trace %s -d " DEV " -s " SCN " --quick",
             trace);
    expect_refused(cmd, 2, "do not go with --backend trace");
    expect_refused("calibrate --backend cpu --trace x.json", 2, "go with --backend trace");
    expect_refused("calibrate --backend trace --simulate-trace x.json -d " DEV " -s " SCN
                   " --class-factor gemm=50",
                   2, "--class-factor must be CLASS=X");
    expect_refused("calibrate --backend trace --simulate-trace x.json -d " DEV " -s " SCN
                   " --class-factor other=2",
                   2, "--class-factor must be CLASS=X");
    expect_refused("calibrate --backend trace --simulate-trace x.json -d " DEV " -s " SCN
                   " --step-s 1e-9",
                   1, "outside what");
    /* validate --backend trace says how a trace calibration is checked */
    expect_refused("validate --backend trace -d " DEV, 2, "validate --measured");
}

/* The written file replaces only what calibrate wrote, unless forced. */
static void shipped_and_foreign_files_should_not_be_replaced(void)
{
    char trace[4096], cmd[9000];
    snprintf(trace, sizeof trace, "%s/target.json", tu_tmpdir());
    CU_ASSERT_EQUAL_FATAL(simulate(trace, NULL, 0, 1), XS_OK);
    char *before = NULL, *after = NULL;
    size_t nb = 0, na = 0;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_read_file("devices/" DEV ".json", &before, &nb, &err), XS_OK);
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN
             " --set train.batch=64 -o devices/" DEV ".json",
             trace);
    expect_refused(cmd, 2, "shipped with xpusim");
    CU_ASSERT_EQUAL_FATAL(xs_read_file("devices/" DEV ".json", &after, &na, &err), XS_OK);
    CU_ASSERT(nb == na && memcmp(before, after, nb) == 0);
    free(before);
    free(after);
    const char *foreign = tu_write("foreign.json", "{\"mine\": true}\n");
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN
             " --set train.batch=64 -o %s",
             trace, foreign);
    expect_refused(cmd, 2, "was not written by xpusim calibrate");
    /* a file calibrate wrote is replaced; with --force anything is */
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN
             " --set train.batch=64 -o %s/mine.json",
             trace, tu_tmpdir());
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --trace %s -d " DEV " -s " SCN
             " --set train.batch=64 -o %s --force",
             trace, foreign);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    /* and the result is a device predict takes */
    snprintf(cmd, sizeof cmd, "predict -d %s -s " SCN " --set train.batch=128 --summary",
             foreign);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "samples/s"));
    tu_run_free(&r);
    /* a simulated trace replaces only a simulated trace */
    snprintf(cmd, sizeof cmd,
             "calibrate --backend trace --simulate-trace %s -d " DEV " -s " SCN, foreign);
    expect_refused(cmd, 2, "not a trace written by --simulate-trace");
}

/* Factors out of range or of unknown classes are refused by the loader. */
static void class_factor_fields_should_be_bounded(void)
{
    cJSON *doc = tu_load_json("devices/" DEV ".json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *model = cJSON_GetObjectItem(doc, "model");
    cJSON *cf = cJSON_AddObjectToObject(model, "class_time_factor");
    cJSON *g = cJSON_AddNumberToObject(cf, "gemm", 20);
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL(xs_dev_load(tu_write_json(DEV ".json", doc), &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.class_time_factor.gemm"));
    cJSON_SetNumberValue(g, 1.5);
    CU_ASSERT_EQUAL(xs_dev_load(tu_write_json(DEV ".json", doc), &d, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_of(&d)->class_time_factor[XS_KC_GEMM], 1.5, 0);
    CU_ASSERT_EQUAL(xs_gpu_of(&d)->class_time_factor[XS_KC_NORM], 0);
    cJSON_AddNumberToObject(cf, "other", 1.2);
    CU_ASSERT_EQUAL(xs_dev_load(tu_write_json(DEV ".json", doc), &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.class_time_factor.other"));
    cJSON_Delete(doc);
}

int tu_add_trace_calibrate_suite(void)
{
    CU_pSuite s = CU_add_suite("trace_calibrate", NULL, NULL);
    if (!s ||
        !CU_add_test(s, "sim_names_should_classify_back_into_their_class",
                     sim_names_should_classify_back_into_their_class) ||
        !CU_add_test(s, "fit_should_recover_known_class_factors",
                     fit_should_recover_known_class_factors) ||
        !CU_add_test(s, "calibrated_file_should_scale_each_class_body",
                     calibrated_file_should_scale_each_class_body) ||
        !CU_add_test(s, "simulated_step_should_be_predicted_after_calibration",
                     simulated_step_should_be_predicted_after_calibration) ||
        !CU_add_test(s, "uneven_steps_should_leave_residuals",
                     uneven_steps_should_leave_residuals) ||
        !CU_add_test(s, "gemm_kernels_should_take_their_ops_shape",
                     gemm_kernels_should_take_their_ops_shape) ||
        !CU_add_test(s, "bad_input_should_be_refused_with_its_reason",
                     bad_input_should_be_refused_with_its_reason) ||
        !CU_add_test(s, "shipped_and_foreign_files_should_not_be_replaced",
                     shipped_and_foreign_files_should_not_be_replaced) ||
        !CU_add_test(s, "class_factor_fields_should_be_bounded",
                     class_factor_fields_should_be_bounded))
        return -1;
    return 0;
}
