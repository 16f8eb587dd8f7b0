/* test_host.c — the host model: each way of issuing a kernel priced as
 * host.c states, the defaults of each framework era, the nn.Module calls
 * the workload records, the scenario's host section and train.host_op_us
 * as overrides, bad host figures and unknown eras refused, and the step's
 * issue time and its report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "device.h"
#include "host.h"
#include "paths.h"
#include "predict.h"
#include "scenario.h"
#include "test_util.h"
#include "workload.h"

static xs_op op_issued(int issue, int64_t launches)
{
    xs_op op = xs_op_make(XS_OP_ELTWISE, XS_PH_FWD, XS_FP32, "x");
    op.issue = issue;
    op.launches = launches;
    return op;
}

static void each_issue_path_should_cost_its_stated_parts(void)
{
    xs_host h;
    xs_host_defaults(&h);
    /* the parts host.c cites: Python 1.0, dispatcher 1.0, autograd 1.8, launch 1.3 */
    CU_ASSERT_DOUBLE_EQUAL(h.python_us, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.dispatch_us, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.autograd_us, 1.8, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.launch_us, 1.3, 0);
    xs_op eager = op_issued(XS_ISSUE_EAGER, 3), engine = op_issued(XS_ISSUE_ENGINE, 3);
    xs_op autocast = op_issued(XS_ISSUE_AUTOCAST, 3), loop = op_issued(XS_ISSUE_LOOP, 3);
    xs_op multi = op_issued(XS_ISSUE_MULTI, 3);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &eager), 3 * 5.1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &engine), 3 * 2.3e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &autocast), 3 * 4.1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &loop), 3 * 3.3e-6, 1e-15);
    /* one Python call, then a launch per chunk list */
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &multi), 2.0e-6 + 3 * 1.3e-6, 1e-15);
    /* no launch, no host time */
    xs_op none = op_issued(XS_ISSUE_EAGER, 0);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &none), 0, 0);
    /* the order the paths must keep: Python + autograd > Python > engine */
    CU_ASSERT(xs_host_launch_us(&h, XS_ISSUE_EAGER) > xs_host_launch_us(&h, XS_ISSUE_LOOP));
    CU_ASSERT(xs_host_launch_us(&h, XS_ISSUE_LOOP) > xs_host_launch_us(&h, XS_ISSUE_ENGINE));
    CU_ASSERT(xs_host_launch_us(&h, XS_ISSUE_AUTOCAST) > xs_host_launch_us(&h, XS_ISSUE_ENGINE));
}

static void overrides_should_replace_only_what_they_name(void)
{
    xs_host given, h;
    memset(&given, 0, sizeof given);
    given.launch_us = 4;
    given.cpu_scale = 2;
    xs_host_resolve(&given, &h);
    CU_ASSERT_DOUBLE_EQUAL(h.launch_us, 4, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.python_us, 1.0, 0);
    /* a host twice as fast halves every part */
    CU_ASSERT_DOUBLE_EQUAL(xs_host_launch_us(&h, XS_ISSUE_ENGINE), (1.0 + 4) / 2, 1e-12);
    xs_op multi = op_issued(XS_ISSUE_MULTI, 2);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &multi), (2.0 + 2 * 4) / 2 * 1e-6, 1e-15);
    /* train.host_op_us: one figure for every launch, whoever issues it */
    given.flat_us = 10;
    xs_host_resolve(&given, &h);
    for (int i = 0; i < XS_ISSUE_COUNT; i++) {
        xs_op op = op_issued(i, 7);
        CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &op), 70e-6, 1e-15);
    }
}

static int load(const char *const *sets, int n, xs_scenario *s, xs_error *err)
{
    char path[512];
    int rc = xs_resolve("scenarios", "bert-base-squad", path, sizeof path, err);
    return rc ? rc : xs_scn_load(path, sets, n, s, err);
}

static void scenario_host_section_should_load_and_refuse_bad_figures(void)
{
    xs_scenario s;
    xs_error err;
    const char *ok[] = {"host.launch_us=2.5", "host.cpu_scale=1.5", "host.autograd_us=3"};
    CU_ASSERT_EQUAL_FATAL(load(ok, 3, &s, &err), XS_OK);
    xs_host h;
    xs_scn_host(&s, &h);
    CU_ASSERT_DOUBLE_EQUAL(h.launch_us, 2.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.autograd_us, 3, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.cpu_scale, 1.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.python_us, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.flat_us, 0, 0); /* the shipped scenarios use the model */
    const char *flat[] = {"train.host_op_us=12"};
    CU_ASSERT_EQUAL_FATAL(load(flat, 1, &s, &err), XS_OK);
    xs_scn_host(&s, &h);
    CU_ASSERT_DOUBLE_EQUAL(h.flat_us, 12, 0);
    static const struct {
        const char *set, *field;
    } bad[] = {
        {"host.launch_us=-1", "host.launch_us"},  {"host.python_us=0", "host.python_us"},
        {"host.cpu_scale=0", "host.cpu_scale"},   {"host.dispatch_us=abc", "host.dispatch_us"},
        {"host.autograd_us=5000", "host.autograd_us"}, {"train.host_op_us=0", "train.host_op_us"},
        {"host.speed=2", "host.speed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *one[] = {bad[i].set};
        CU_ASSERT_NOT_EQUAL(load(one, 1, &s, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].field));
    }
    /* in a file too: the message names the file and the field */
    cJSON *doc = tu_load_json("tests/data/scenarios/tiny.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *host = cJSON_AddObjectToObject(doc, "host");
    cJSON_AddStringToObject(host, "launch_us", "fast");
    const char *path = tu_write_json("tiny.json", doc);
    cJSON_Delete(doc);
    CU_ASSERT_NOT_EQUAL(xs_scn_load(path, NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tiny.json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'host.launch_us'"));
}

static xs_device a100(void)
{
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("a100-sxm4-80gb", &d, &err), XS_OK);
    return d;
}

static void step_issue_time_should_add_up_the_ops_as_priced(void)
{
    xs_device d = a100();
    xs_scenario s;
    xs_workload wl;
    xs_prediction p;
    xs_error err;
    const char *sets[] = {"train.grad_accum=2"};
    CU_ASSERT_EQUAL_FATAL(load(sets, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
    double want = 0, launches = 0;
    int seen[XS_ISSUE_COUNT] = {0};
    for (size_t i = 0; i < wl.n; i++) {
        const xs_op *op = &wl.ops[i];
        want += xs_host_op_s(&p.host, op) * (double)op->count;
        launches += (double)(op->launches * op->count);
        seen[op->issue] = 1;
        /* who issues what: the forward from Python, the backward from the engine */
        if (op->phase == XS_PH_BWD)
            CU_ASSERT_EQUAL(op->issue, XS_ISSUE_ENGINE);
    }
    CU_ASSERT_DOUBLE_EQUAL(p.host_issue_s, want, want * 1e-12);
    /* apex O2 with FusedAdam uses every path but autocast's casts */
    CU_ASSERT(seen[XS_ISSUE_EAGER] && seen[XS_ISSUE_ENGINE] && seen[XS_ISSUE_MULTI] &&
              seen[XS_ISSUE_LOOP]);
    CU_ASSERT(!seen[XS_ISSUE_AUTOCAST]);
    /* far cheaper than 10 us a launch, dearer than a bare launch each */
    CU_ASSERT(p.host_issue_s < launches * 10e-6);
    CU_ASSERT(p.host_issue_s > launches * 1.3e-6);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
    /* the flat override prices every launch alike */
    const char *flat[] = {"train.grad_accum=2", "train.host_op_us=10"};
    CU_ASSERT_EQUAL_FATAL(load(flat, 2, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(p.host_issue_s, launches * 10e-6, launches * 1e-17);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
}

static void a_slower_host_should_wait_longer_after_read_backs(void)
{
    xs_device d = a100();
    xs_scenario s;
    xs_workload wl;
    xs_prediction fast, slow;
    xs_error err;
    const char *f[] = {"train.batch=4"};
    const char *sl[] = {"train.batch=4", "host.cpu_scale=0.25"};
    CU_ASSERT_EQUAL_FATAL(load(f, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &fast, &err), XS_OK);
    xs_wl_free(&wl);
    CU_ASSERT_EQUAL_FATAL(load(sl, 2, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &slow, &err), XS_OK);
    xs_wl_free(&wl);
    CU_ASSERT_DOUBLE_EQUAL(slow.host_issue_s, 4 * fast.host_issue_s, fast.host_issue_s * 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(slow.device_time_s, fast.device_time_s, 1e-12);
    CU_ASSERT(slow.host_wait_s > fast.host_wait_s);
    xs_prediction_free(&fast);
    xs_prediction_free(&slow);
}

/* Per era as host.c states: the per-op parts are the same in every era;
 * an nn.Module call costs 2.17 us (3.08 - 0.91, pytorch#50431) up to 1.8
 * and is not priced after the no-hooks fast path. */
static void each_era_should_take_its_stated_defaults(void)
{
    for (int fw = 0; fw < XS_FW_COUNT; fw++) {
        xs_host h;
        xs_host_framework_defaults(fw, &h);
        CU_ASSERT_EQUAL(h.framework, fw);
        CU_ASSERT_DOUBLE_EQUAL(h.python_us, 1.0, 0);
        CU_ASSERT_DOUBLE_EQUAL(h.dispatch_us, 1.0, 0);
        CU_ASSERT_DOUBLE_EQUAL(h.autograd_us, 1.8, 0);
        CU_ASSERT_DOUBLE_EQUAL(h.launch_us, 1.3, 0);
        CU_ASSERT_DOUBLE_EQUAL(h.cpu_scale, 1.0, 0);
        CU_ASSERT_DOUBLE_EQUAL(h.module_us, fw == XS_FW_PT18 ? 2.17 : 0, 1e-12);
    }
    CU_ASSERT_STRING_EQUAL(xs_framework_name(XS_FW_PT18), "pytorch-1.8");
    CU_ASSERT_STRING_EQUAL(xs_framework_name(XS_FW_PT113), "pytorch-1.13");
    CU_ASSERT_STRING_EQUAL(xs_framework_name(XS_FW_PT2), "pytorch-2");
    CU_ASSERT_STRING_EQUAL(xs_framework_name(XS_FW_COUNT), "?");
    /* an era out of range falls back to the era-free figures */
    xs_host h;
    xs_host_framework_defaults(XS_FW_COUNT + 3, &h);
    CU_ASSERT_EQUAL(h.framework, XS_FW_UNSTATED);
    /* a module call adds its cost to the op it wraps, scaled by the CPU,
     * and nothing under the flat override */
    xs_host given;
    memset(&given, 0, sizeof given);
    given.framework = XS_FW_PT18;
    given.cpu_scale = 2;
    xs_host_resolve(&given, &h);
    xs_op op = op_issued(XS_ISSUE_EAGER, 1);
    op.modules = 3;
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &op), (5.1 + 3 * 2.17) / 2 * 1e-6, 1e-15);
    given.module_us = 4; /* a measured figure replaces the era's */
    xs_host_resolve(&given, &h);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &op), (5.1 + 3 * 4.0) / 2 * 1e-6, 1e-15);
    given.flat_us = 10;
    xs_host_resolve(&given, &h);
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &op), 10e-6, 1e-15);
    /* a module call with no launch of its own still costs the host */
    xs_host_framework_defaults(XS_FW_PT18, &h);
    xs_op bare = op_issued(XS_ISSUE_EAGER, 0);
    bare.modules = 1;
    CU_ASSERT_DOUBLE_EQUAL(xs_host_op_s(&h, &bare), 2.17e-6, 1e-15);
}

static int load_id(const char *id, const char *const *sets, int n, xs_scenario *s,
                   xs_error *err)
{
    char path[512];
    int rc = xs_resolve("scenarios", id, path, sizeof path, err);
    return rc ? rc : xs_scn_load(path, sets, n, s, err);
}

/* The shipped scenarios state the era of the recipe's PyTorch; the key is
 * checked like any other. */
static void framework_key_should_load_and_refuse_unknown_eras(void)
{
    static const struct {
        const char *id;
        int fw;
    } shipped[] = {
        {"bert-base-squad", XS_FW_PT113},    /* NGC 22.09: PyTorch 1.13.0a0 */
        {"bert-large-squad", XS_FW_PT113},
        {"bert-base-squad-hf", XS_FW_PT113}, /* Zeus, 2022 */
        {"gpt2-medium-finetune", XS_FW_PT2}, /* HF Trainer, PyTorch >= 2.0 */
    };
    xs_scenario s;
    xs_error err;
    xs_host h;
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(load_id(shipped[i].id, NULL, 0, &s, &err), XS_OK);
        xs_scn_host(&s, &h);
        CU_ASSERT_EQUAL(h.framework, shipped[i].fw);
        CU_ASSERT_DOUBLE_EQUAL(h.module_us, 0, 0);
    }
    const char *old[] = {"host.framework=pytorch-1.8"};
    CU_ASSERT_EQUAL_FATAL(load(old, 1, &s, &err), XS_OK);
    xs_scn_host(&s, &h);
    CU_ASSERT_EQUAL(h.framework, XS_FW_PT18);
    CU_ASSERT_DOUBLE_EQUAL(h.module_us, 2.17, 1e-12);
    const char *both[] = {"host.framework=pytorch-2", "host.module_us=1.5"};
    CU_ASSERT_EQUAL_FATAL(load(both, 2, &s, &err), XS_OK);
    xs_scn_host(&s, &h);
    CU_ASSERT_EQUAL(h.framework, XS_FW_PT2);
    CU_ASSERT_DOUBLE_EQUAL(h.module_us, 1.5, 0);
    /* an unknown era is refused, naming the field and listing the choices */
    const char *bad[] = {"host.framework=pytorch-3"};
    CU_ASSERT_NOT_EQUAL(load(bad, 1, &s, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "host.framework"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, XS_FRAMEWORK_CHOICES));
    static const char *const refused[] = {"host.module_us=0", "host.module_us=-2",
                                          "host.module_us=2000", "host.module_us=x"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CU_ASSERT_NOT_EQUAL(load(&refused[i], 1, &s, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "host.module_us"));
    }
    /* in a file: a number where a name belongs, the file and field named */
    cJSON *doc = tu_load_json("tests/data/scenarios/tiny.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *host = cJSON_AddObjectToObject(doc, "host");
    cJSON_AddNumberToObject(host, "framework", 1.13);
    const char *path = tu_write_json("tiny.json", doc);
    cJSON_Delete(doc);
    CU_ASSERT_NOT_EQUAL(xs_scn_load(path, NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tiny.json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'host.framework'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "pytorch-1.13"));
}

/* BERT-base as Hugging Face and NVIDIA write it: per layer six containers
 * (BertLayer, BertAttention, BertSelfAttention, BertSelfOutput,
 * BertIntermediate, BertOutput), six nn.Linear, three nn.Dropout, two
 * nn.LayerNorm; before the layers the task model, BertModel,
 * BertEmbeddings, BertEncoder, three nn.Embedding, a LayerNorm and a
 * Dropout; the span head's nn.Linear. No module call outside the forward. */
static void workload_should_count_the_module_calls_of_the_forward(void)
{
    xs_scenario s;
    xs_workload wl;
    xs_error err;
    const char *sets[] = {"train.grad_accum=2"};
    CU_ASSERT_EQUAL_FATAL(load(sets, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    int64_t per_call = 0, per_layer = 0;
    for (size_t i = 0; i < wl.n; i++) {
        const xs_op *op = &wl.ops[i];
        CU_ASSERT(op->modules >= 0);
        if (op->phase != XS_PH_FWD) {
            CU_ASSERT_EQUAL(op->modules, 0);
            continue;
        }
        CU_ASSERT_EQUAL(op->count, 2); /* once a micro-batch */
        per_call += op->modules;
        if (op->layer == 0)
            per_layer += op->modules;
    }
    CU_ASSERT_EQUAL(per_layer, 6 + 6 + 3 + 2);
    CU_ASSERT_EQUAL(per_call, 4 + 3 + 1 + 1 + 12 * per_layer + 1);
    xs_wl_free(&wl);
    /* GPT-2 blocks: GPT2Block, GPT2Attention, GPT2MLP, four Conv1D, two
     * LayerNorm, and the residual dropouts (attention dropout is inside
     * the flash kernel) */
    CU_ASSERT_EQUAL_FATAL(load_id("gpt2-medium-finetune", NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    int64_t block = 0;
    for (size_t i = 0; i < wl.n; i++)
        if (wl.ops[i].phase == XS_PH_FWD && wl.ops[i].layer == 0)
            block += wl.ops[i].modules;
    CU_ASSERT_EQUAL(block, 3 + 4 + 2 + (s.model.dropout > 0 ? 2 : 0));
    xs_wl_free(&wl);
}

/* PyTorch <= 1.8 pays each module call on top of the launches: the step's
 * issue time grows by the calls times 2.17 us, and nothing else moves. */
static void an_older_era_should_add_its_module_calls_to_the_issue_time(void)
{
    xs_device d = a100();
    xs_scenario s;
    xs_workload wl;
    xs_prediction now, old;
    xs_error err;
    const char *a[] = {"host.framework=pytorch-1.13"};
    const char *b[] = {"host.framework=pytorch-1.8"};
    CU_ASSERT_EQUAL_FATAL(load(a, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &now, &err), XS_OK);
    double calls = 0;
    for (size_t i = 0; i < wl.n; i++)
        calls += (double)(wl.ops[i].modules * wl.ops[i].count);
    xs_wl_free(&wl);
    CU_ASSERT(calls > 100);
    CU_ASSERT_EQUAL_FATAL(load(b, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &old, &err), XS_OK);
    xs_wl_free(&wl);
    CU_ASSERT_DOUBLE_EQUAL(old.host_issue_s - now.host_issue_s, calls * 2.17e-6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(old.device_time_s, now.device_time_s, 1e-12);
    CU_ASSERT(old.step_time_s >= now.step_time_s);
    xs_prediction_free(&now);
    xs_prediction_free(&old);
}

static void predict_should_report_the_host_model_used(void)
{
    tu_result r = tu_run("predict -s bert-base-squad -d a100-sxm4-80gb");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nhost      us a launch: eager 5.1, engine 2.3, "
                                         "autocast 4.1, loop 3.3, multi-tensor 1.3 + 2 a call"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "nn.Module call 0 (framework pytorch-1.13, "));
    tu_run_free(&r);
    r = tu_run("predict -s bert-base-squad -d a100-sxm4-80gb --set host.framework=pytorch-1.8");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "nn.Module call 2.17 (framework pytorch-1.8, "));
    tu_run_free(&r);
    r = tu_run("predict -s bert-base-squad -d a100-sxm4-80gb --set train.host_op_us=7");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\nhost      7 us a launch (train.host_op_us)"));
    tu_run_free(&r);
    r = tu_run("predict -s bert-base-squad -d a100-sxm4-80gb --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *pl = xs_json_path(doc, "scenario.host.per_launch_us");
    CU_ASSERT_PTR_NOT_NULL(pl);
    const cJSON *eager = xs_json_path(doc, "scenario.host.per_launch_us.eager");
    CU_ASSERT(cJSON_IsNumber(eager) && fabs(eager->valuedouble - 5.1) < 1e-12);
    CU_ASSERT(cJSON_IsNumber(xs_json_path(doc, "step.host_issue_s")));
    const cJSON *op0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "ops"), 0);
    CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(op0, "issue")));
    CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(op0, "modules")));
    const cJSON *fw = xs_json_path(doc, "scenario.host.framework");
    CU_ASSERT(cJSON_IsString(fw) && strcmp(fw->valuestring, "pytorch-1.13") == 0);
    CU_ASSERT(cJSON_IsNumber(xs_json_path(doc, "scenario.host.module_us")));
    cJSON_Delete(doc);
    tu_run_free(&r);
}

int tu_add_host_suite(void)
{
    CU_pSuite s = CU_add_suite("host", NULL, NULL);
    return !s ||
           !CU_add_test(s, "each_issue_path_should_cost_its_stated_parts",
                        each_issue_path_should_cost_its_stated_parts) ||
           !CU_add_test(s, "overrides_should_replace_only_what_they_name",
                        overrides_should_replace_only_what_they_name) ||
           !CU_add_test(s, "scenario_host_section_should_load_and_refuse_bad_figures",
                        scenario_host_section_should_load_and_refuse_bad_figures) ||
           !CU_add_test(s, "step_issue_time_should_add_up_the_ops_as_priced",
                        step_issue_time_should_add_up_the_ops_as_priced) ||
           !CU_add_test(s, "a_slower_host_should_wait_longer_after_read_backs",
                        a_slower_host_should_wait_longer_after_read_backs) ||
           !CU_add_test(s, "each_era_should_take_its_stated_defaults",
                        each_era_should_take_its_stated_defaults) ||
           !CU_add_test(s, "framework_key_should_load_and_refuse_unknown_eras",
                        framework_key_should_load_and_refuse_unknown_eras) ||
           !CU_add_test(s, "workload_should_count_the_module_calls_of_the_forward",
                        workload_should_count_the_module_calls_of_the_forward) ||
           !CU_add_test(s, "an_older_era_should_add_its_module_calls_to_the_issue_time",
                        an_older_era_should_add_its_module_calls_to_the_issue_time) ||
           !CU_add_test(s, "predict_should_report_the_host_model_used",
                        predict_should_report_the_host_model_used);
}
