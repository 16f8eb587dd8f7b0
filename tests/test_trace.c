/* test_trace.c — reading profiler traces (steps, the launch that gives a
 * kernel to its step, medians over steps, the GPU's name) and comparing
 * them with a prediction. Kernel names are test_kernel_class.c's. */
#include <math.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "test_util.h"
#include "trace.h"

#define ONE_STEP "tests/data/traces/synthetic-a100-step.json"
#define THREE_STEPS "tests/data/traces/synthetic-a100-3steps.json"
#define TINY "-d a100-sxm4-80gb -s tests/data/scenarios/tiny.json"

static void a_trace_without_steps_should_be_one_step(void)
{
    xs_trace t;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_trace_load(ONE_STEP, &t, &err), XS_OK);
    CU_ASSERT_EQUAL(t.has_steps, 0);
    CU_ASSERT_EQUAL(t.nsteps, 1);
    CU_ASSERT_EQUAL(t.steps[0].number, -1);
    CU_ASSERT_EQUAL(t.total, 21); /* 20 kernels and the memcpy; not the CPU op or instant */
    CU_ASSERT_EQUAL(t.assigned[XS_TA_WHOLE], 21);
    CU_ASSERT_EQUAL(t.seen[XS_KC_GEMM], 5);
    CU_ASSERT_DOUBLE_EQUAL(t.measured_s[XS_KC_GEMM], (9 + 9 + 9 + 8 + 7) * 1e-6, 1e-12);
    CU_ASSERT_EQUAL(t.seen[XS_KC_SOFTMAX], 2);
    CU_ASSERT_EQUAL(t.seen[XS_KC_COPY], 2);
    CU_ASSERT_EQUAL(t.seen[XS_KC_REDUCE], 1);
    CU_ASSERT_EQUAL(t.seen[XS_KC_OPTIMIZER], 1);
    CU_ASSERT_EQUAL(t.seen[XS_KC_OTHER], 1); /* the host-to-device copy */
    CU_ASSERT_STRING_EQUAL(t.unknown[0].name, "Memcpy HtoD (Pageable -> Device)");
    CU_ASSERT_STRING_EQUAL(t.gpu_name, "NVIDIA A100-SXM4-80GB");
    /* no host spans: the step is its GPU activity, the copy at 9000 us to
     * the last kernel's end (20 kernels of 117 us, 2 us apart, from 10000) */
    CU_ASSERT_EQUAL(t.step_is_host, 0);
    CU_ASSERT_DOUBLE_EQUAL(t.step_s, (10000 + 117 + 19 * 2 - 9000) * 1e-6, 1e-12);
    CU_ASSERT(t.spread_pct[XS_KC_GEMM] < 0); /* one step has no spread */
    xs_trace_free(&t);
}

/* The generator's numbers (make_multistep.py): steps #2, #3, #4 run their
 * kernels at 1.5x, 1x and 1.1x; GEMMs take 20+8+18+20+22 us at 1x. */
static void a_multi_step_trace_should_give_the_median_step(void)
{
    xs_trace t;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_trace_load(THREE_STEPS, &t, &err), XS_OK);
    CU_ASSERT_EQUAL(t.has_steps, 1);
    CU_ASSERT_EQUAL_FATAL(t.nsteps, 3);
    CU_ASSERT_EQUAL(t.steps[0].number, 2);
    CU_ASSERT_EQUAL(t.steps[2].number, 4);
    CU_ASSERT_EQUAL(t.assigned[XS_TA_LAUNCH], 72);
    CU_ASSERT_EQUAL(t.outside, 1); /* the readback after the last prof.step() */
    CU_ASSERT_EQUAL(t.events[XS_KC_GEMM], 5);
    CU_ASSERT_EQUAL(t.seen[XS_KC_GEMM], 15);
    double gemm = (20 + 8 + 18 + 20 + 22) * 1e-6;
    CU_ASSERT_DOUBLE_EQUAL(t.measured_s[XS_KC_GEMM], 1.1 * gemm, 1e-12); /* not 3.6x, not 1.2x */
    CU_ASSERT_DOUBLE_EQUAL(t.spread_pct[XS_KC_GEMM], 100 * (1.3 - 1.05) / 1.1, 1e-6);
    CU_ASSERT_EQUAL(t.events[XS_KC_LOSS], 2); /* log_softmax + nll_loss */
    CU_ASSERT_EQUAL(t.events[XS_KC_OPTIMIZER], 1);
    CU_ASSERT_EQUAL(t.events[XS_KC_OTHER], 2); /* the batch's copy in, the loss's copy out */
    CU_ASSERT_DOUBLE_EQUAL(t.measured_s[XS_KC_OTHER], (1.1 * 3 + 1) * 1e-6, 1e-12);
    CU_ASSERT_EQUAL(t.step_is_host, 1);
    CU_ASSERT_DOUBLE_EQUAL(t.step_s, 225.8e-6, 1e-9); /* ProfilerStep#4's host span */
    CU_ASSERT_DOUBLE_EQUAL(t.events_per_step, 24, 0);
    xs_trace_free(&t);
}

/* The trace with every event of category cat removed, written to name. */
static const char *without(const char *name, const char *cat1, const char *cat2)
{
    cJSON *doc = tu_load_json(THREE_STEPS);
    cJSON *ev = cJSON_GetObjectItem(doc, "traceEvents");
    for (int i = cJSON_GetArraySize(ev) - 1; i >= 0; i--) {
        const cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(ev, i), "cat");
        if (cJSON_IsString(c) && (!strcmp(c->valuestring, cat1) || (cat2 && !strcmp(c->valuestring,
                                                                                       cat2))))
            cJSON_DeleteItemFromArray(ev, i);
    }
    const char *path = tu_write_json(name, doc);
    cJSON_Delete(doc);
    return path;
}

static void kernels_should_go_to_the_step_that_launched_them(void)
{
    xs_trace launch, span, time;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_trace_load(THREE_STEPS, &launch, &err), XS_OK);
    /* no launches: the GPU-side ProfilerStep spans give the same steps */
    const char *nolaunch = without("nolaunch.json", "cuda_runtime", NULL);
    CU_ASSERT_EQUAL_FATAL(xs_trace_load(nolaunch, &span, &err), XS_OK);
    CU_ASSERT_EQUAL(span.assigned[XS_TA_GPU_SPAN], 72);
    CU_ASSERT_EQUAL(span.assigned[XS_TA_TIME], 1); /* the readback, after every GPU span */
    for (int c = 0; c < XS_KC_OTHER; c++)
        CU_ASSERT_DOUBLE_EQUAL(span.measured_s[c], launch.measured_s[c], 1e-12);
    /* host spans alone: by time, step #2's last backward and optimizer
     * kernels, which ran while the host was inside step #3, move there */
    CU_ASSERT_EQUAL_FATAL(xs_trace_load(without("bytime.json", "cuda_runtime",
                                                "gpu_user_annotation"),
                                        &time, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(time.assigned[XS_TA_TIME], 73);
    CU_ASSERT_EQUAL(launch.steps[0].events[XS_KC_OPTIMIZER], 1);
    CU_ASSERT_EQUAL(time.steps[0].events[XS_KC_OPTIMIZER], 0);
    size_t moved = 0;
    for (int c = 0; c < XS_KC_COUNT; c++)
        moved += launch.steps[0].events[c] - time.steps[0].events[c];
    CU_ASSERT(moved >= 2); /* at least the optimizer and the memset */
    xs_trace_free(&launch);
    xs_trace_free(&span);
    xs_trace_free(&time);
}

static void bad_traces_should_be_refused_with_a_reason(void)
{
    static const struct {
        const char *text, *says;
        int rc;
    } cases[] = {
        {"{\"traceEvents\": 5}", "'traceEvents' must be an array", XS_EFIELD},
        {"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\"}]}",
         "no GPU kernel events", XS_EFIELD},
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]",
         "GPU event 0 (cat kernel) must have", XS_EFIELD},
        {"{\"traceEvents\": [", NULL, XS_EJSON},
        {"{\"deviceProperties\": {\"name\": \"x\"}, \"traceEvents\": []}",
         "'deviceProperties' must be an array", XS_EFIELD},
        {"[{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#x\", \"ts\": 1, "
         "\"dur\": 5}]",
         "event 0: field 'name' must be ProfilerStep#<step number>, got \"ProfilerStep#x\"",
         XS_EFIELD},
        {"[{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"ts\": 1}]",
         "event 0 (ProfilerStep#3) must have numbers 'ts' and 'dur'", XS_EFIELD},
        /* a duration past any profiled step (1e300 us), or inf (1e400
         * overflows the parse), would make the sums and fits infinite */
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 2, \"dur\": 1e300}]",
         "GPU event 0 (cat kernel) must have a string 'name' and numbers 'ts' and 'dur' (us, "
         "'dur' from 0 to 1e12)",
         XS_EFIELD},
        {"[{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"ts\": 1, "
         "\"dur\": 1e400}]",
         "event 0 (ProfilerStep#3) must have numbers 'ts' and 'dur'", XS_EFIELD},
        {"[{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"ts\": 1, "
         "\"dur\": 5}, {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", "
         "\"ts\": 9, \"dur\": 5}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 2, "
         "\"dur\": 1}]",
         "events 0 and 1: ProfilerStep#3 appears twice on the host", XS_EFIELD},
        {"[{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"ts\": 10, "
         "\"dur\": 5}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 2, \"dur\": 1}]",
         "no GPU event falls in a ProfilerStep span", XS_EFIELD},
        /* fuzz_trace: a device index past an int was converted to one (UBSan) */
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 2, \"dur\": 1, "
         "\"args\": {\"device\": 90071992547409930}}]",
         "GPU event 0: args.device must be a device index in [0, 65535]", XS_EFIELD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        xs_trace t;
        xs_error err;
        char name[32];
        snprintf(name, sizeof name, "bad%zu.json", i);
        const char *path = tu_write(name, cases[i].text);
        int rc = xs_trace_load(path, &t, &err);
        CU_ASSERT_EQUAL(rc, cases[i].rc);
        if (cases[i].says && (rc != cases[i].rc || !strstr(err.msg, cases[i].says)))
            fprintf(stderr, "\ncase %zu: got \"%s\"\n", i, rc ? err.msg : "no error");
        if (cases[i].says)
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path)); /* every message names the file */
    }
}

static void gpu_names_should_match_their_device_files(void)
{
    static const struct {
        const char *cuda, *device;
        int same;
    } cases[] = {
        {"NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80 GB", 1},
        {"NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 80 GB", 0},
        {"NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80 GB", 1},
        {"NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40 GB", 1},
        {"NVIDIA A100-PCIE-40GB", "NVIDIA A100 SXM4 40 GB", 0},
        {"NVIDIA A10", "NVIDIA A100 SXM4 80 GB", 0},
        {"NVIDIA A100-SXM4-80GB", "NVIDIA A10", 0},
        {"NVIDIA A10", "NVIDIA A10", 1},
        {"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80 GB", 1}, /* the SXM board's CUDA name */
        {"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe 80 GB", 0},
        {"NVIDIA H100 PCIe", "NVIDIA H100 PCIe 80 GB", 1},
        {"NVIDIA H200", "NVIDIA H200 SXM 141 GB", 1},
        {"NVIDIA H200", "NVIDIA H200 NVL 141 GB (PCIe)", 0},
        {"NVIDIA H200 NVL", "NVIDIA H200 NVL 141 GB (PCIe)", 1},
        {"Tesla V100-SXM2-16GB", "NVIDIA Tesla V100 SXM2 16 GB", 1},
        {"Tesla V100-SXM2-32GB", "NVIDIA Tesla V100 SXM2 16 GB", 0},
        {"Tesla T4", "NVIDIA T4", 1},
        {"NVIDIA L4", "NVIDIA T4", 0},
        {"nvidia  a100_sxm4_80gb", "NVIDIA A100 SXM4 80 GB", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int got = xs_gpu_name_matches(cases[i].cuda, cases[i].device);
        if (got != cases[i].same)
            fprintf(stderr, "\n'%s' vs '%s': %d\n", cases[i].cuda, cases[i].device, got);
        CU_ASSERT_EQUAL(got, cases[i].same);
    }
}

static void validate_trace_cli_should_compare_every_class_and_the_step(void)
{
    tu_result r = tu_run("validate --trace " ONE_STEP " " TINY " --format json");
    CU_ASSERT_EQUAL(r.status, 0); /* every class in the trace is predicted and vice versa */
    CU_ASSERT_STRING_EQUAL(r.err, "");
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows"), *row;
    int step = 0, classes = 0;
    cJSON_ArrayForEach(row, rows)
    {
        const char *m = cJSON_GetObjectItem(row, "metric")->valuestring;
        step += strcmp(m, "step_time_s") == 0;
        classes += strncmp(m, "kernel_time_s:", 14) == 0;
        CU_ASSERT_PTR_NULL(strstr(m, "other")); /* reported with the trace, never a row */
        const cJSON *steps = cJSON_GetObjectItem(row, "trace_steps");
        CU_ASSERT(cJSON_IsNumber(steps) && steps->valueint == 1);
    }
    CU_ASSERT_EQUAL(step, 1);
    CU_ASSERT_EQUAL(classes, 9); /* all but attention: the tiny model runs unfused */
    cJSON *tr = cJSON_GetObjectItem(doc, "trace");
    CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(tr, "steps")) &&
              cJSON_GetObjectItem(tr, "steps")->valueint == 1);
    CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(tr, "has_step_spans")));
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("validate --trace " ONE_STEP " -s tiny");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--trace needs the -d DEVICE and -s SCENARIO"));
    tu_run_free(&r);
}

static void validate_trace_table_should_say_steps_and_other_time(void)
{
    tu_result r = tu_run("validate --trace " THREE_STEPS " " TINY " --set train.batch=3");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "steps     3 (ProfilerStep#2 to #4)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "the median step, never the sum"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "by their launch (correlation id): 72"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "1 GPU event (0.001 ms) outside every step"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "other     0.004 ms a step"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Memcpy HtoD (Pageable -> Device)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kernels/step"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "step (host span)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "set       batch=3")); /* train. dropped: unambiguous */
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.out, "gemm                          5        102       0.0968"));
    tu_run_free(&r);
    r = tu_run("validate --trace " ONE_STEP " " TINY);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "steps     1: the trace has no ProfilerStep spans"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "step (GPU span)"));
    tu_run_free(&r);
}

static void a_trace_from_another_gpu_should_warn_once_naming_both(void)
{
    cJSON *doc = tu_load_json(THREE_STEPS);
    cJSON *dev = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "deviceProperties"), 0);
    cJSON_ReplaceItemInObject(dev, "name", cJSON_CreateString("NVIDIA A100-SXM4-40GB"));
    const char *path = tu_write_json("a100-40.json", doc);
    cJSON_Delete(doc);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "validate --trace '%s' " TINY " --format csv", path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0); /* compared all the same */
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "xpusim: warning: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "NVIDIA A100-SXM4-40GB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "a100-sxm4-80gb (NVIDIA A100 SXM4 80 GB)"));
    tu_run_free(&r);
    r = tu_run("validate --trace " THREE_STEPS " " TINY " --format csv");
    CU_ASSERT_STRING_EQUAL(r.err, ""); /* the same board, spelt differently */
    tu_run_free(&r);
}

/* A trace's kernel and GPU names reach the report and the warning as
 * text: a newline or an escape sequence in them is shown escaped, never
 * sent to the terminal or turned into a line of its own. */
static void trace_text_should_never_be_printed_raw(void)
{
    cJSON *doc = tu_load_json(THREE_STEPS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *dev = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "deviceProperties"), 0);
    cJSON_ReplaceItemInObject(dev, "name", cJSON_CreateString("NVIDIA H100\x1b[2J"));
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "traceEvents"))
    {
        cJSON *name = cJSON_GetObjectItem(e, "name");
        if (cJSON_IsString(name) && strncmp(name->valuestring, "Memcpy HtoD", 11) == 0)
            cJSON_ReplaceItemInObject(e, "name",
                                      cJSON_CreateString("Memcpy HtoD\x1b[31m\nforged 1.000 ms"));
    }
    const char *path = tu_write_json("escapes.json", doc);
    cJSON_Delete(doc);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "validate --trace '%s' " TINY, path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NULL(strchr(r.out, 0x1b));
    CU_ASSERT_PTR_NULL(strchr(r.err, 0x1b));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "Memcpy HtoD\\x1b[31m\\nforged"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "\nforged"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "NVIDIA H100\\x1b[2J")); /* the other-GPU warning */
    tu_run_free(&r);
}

int tu_add_trace_suite(void)
{
    CU_pSuite s = CU_add_suite("trace", NULL, NULL);
    return !s ||
           !CU_add_test(s, "a_trace_without_steps_should_be_one_step",
                        a_trace_without_steps_should_be_one_step) ||
           !CU_add_test(s, "a_multi_step_trace_should_give_the_median_step",
                        a_multi_step_trace_should_give_the_median_step) ||
           !CU_add_test(s, "kernels_should_go_to_the_step_that_launched_them",
                        kernels_should_go_to_the_step_that_launched_them) ||
           !CU_add_test(s, "bad_traces_should_be_refused_with_a_reason",
                        bad_traces_should_be_refused_with_a_reason) ||
           !CU_add_test(s, "gpu_names_should_match_their_device_files",
                        gpu_names_should_match_their_device_files) ||
           !CU_add_test(s, "validate_trace_cli_should_compare_every_class_and_the_step",
                        validate_trace_cli_should_compare_every_class_and_the_step) ||
           !CU_add_test(s, "validate_trace_table_should_say_steps_and_other_time",
                        validate_trace_table_should_say_steps_and_other_time) ||
           !CU_add_test(s, "trace_text_should_never_be_printed_raw",
                        trace_text_should_never_be_printed_raw) ||
           !CU_add_test(s, "a_trace_from_another_gpu_should_warn_once_naming_both",
                        a_trace_from_another_gpu_should_warn_once_naming_both);
}
