/* test_ddp.c — data parallel in the op list and the prediction: DDP's
 * bucket boundaries (1 MiB first, 25 MiB then, in the order the backward
 * produces gradients; apex's 1e7 elements), the gradients' format on the
 * wire, the overlap (never faster than the compute or the communication
 * alone, never slower than both in series), ZeRO's memory per device, and
 * one device left exactly as it was. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "memory.h"
#include "predict.h"
#include "report.h"
#include "scenario.h"
#include "test_util.h"
#include "workload.h"

#define MIB (1024.0 * 1024.0)

/* Walk the op list as the reducer sees it: gradients accumulate in the
 * backward's order; each bucket's collective follows the op that filled
 * it, which is the first op to reach the cap. */
static void check_buckets(const xs_workload *wl, double grad_bytes, double first, double rest,
                          int64_t *buckets)
{
    double acc = 0, last_grads = 0, cap = first, total = 0;
    int last_layer = 1 << 30;
    int64_t k = 0;
    size_t last_grad_op = 0;
    for (size_t i = 0; i < wl->n; i++)
        if (wl->ops[i].phase == XS_PH_BWD && wl->ops[i].mem.grads > 0)
            last_grad_op = i;
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        if (op->phase == XS_PH_BWD && op->mem.grads > 0) {
            acc += op->mem.grads * grad_bytes;
            last_grads = op->mem.grads * grad_bytes;
            /* reverse parameter order: layers come back from the last */
            if (op->layer >= 0) {
                CU_ASSERT(op->layer <= last_layer);
                last_layer = op->layer;
            }
        }
        if (op->kind != XS_OP_COMM || op->phase != XS_PH_COMM)
            continue;
        CU_ASSERT_DOUBLE_EQUAL(op->bytes, acc, 1e-6 * acc);
        int is_last = i > last_grad_op;
        CU_ASSERT(is_last || acc >= cap);
        CU_ASSERT(acc - last_grads < cap); /* closed at the first op that filled it */
        total += acc;
        acc = 0;
        cap = rest;
        k++;
    }
    CU_ASSERT_DOUBLE_EQUAL(acc, 0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(total, wl->trainable_params * grad_bytes,
                           1e-9 * wl->trainable_params);
    CU_ASSERT_EQUAL(k, wl->buckets);
    *buckets = k;
}

static void buckets_should_be_1_mib_then_25_mib_in_backward_order(void)
{
    xs_scenario s;
    xs_workload wl;
    int64_t k;
    /* autocast: fp32 parameters, fp32 gradients on the wire */
    const char *torch[] = {"cluster.devices=4", "train.precision=amp_fp16",
                           "train.amp_mode=autocast", "cluster.ddp=torch"};
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-squad", torch, 4, &s, &wl), XS_OK);
    check_buckets(&wl, 4, MIB, 25 * MIB, &k);
    /* 12 layers of 7.1 M fp32 gradients (28 MB, just over the cap): a
     * bucket a layer or so, and the embeddings' */
    CU_ASSERT(k >= 12 && k <= 20);
    CU_ASSERT(wl.first_bucket_bytes < wl.largest_bucket_bytes);
    tu_check_memory_balance(&s, &wl);
    CU_ASSERT_DOUBLE_EQUAL(wl.ddp_buffer_bytes, wl.trainable_params * 4, 1);
    xs_wl_free(&wl);
    /* apex O2: a half model, so half gradients; apex's 1e7-element buckets */
    const char *apex[] = {"cluster.devices=8", "cluster.ddp=apex"};
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", apex, 2, &s, &wl), XS_OK);
    check_buckets(&wl, 2, 2e7, 2e7, &k);
    CU_ASSERT_EQUAL(wl.ddp_buffer_bytes, 0); /* flattened into temporaries */
    tu_check_memory_balance(&s, &wl);
    xs_wl_free(&wl);
    /* LoRA: only the adapters' gradients travel */
    const char *lora[] = {"cluster.devices=2", "train.lora.rank=8"};
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-squad", lora, 2, &s, &wl), XS_OK);
    double gb = s.train.amp_mode == XS_AMP_O2 && s.train.precision == XS_P_AMP_FP16 ? 2 : 4;
    check_buckets(&wl, gb, MIB, 25 * MIB, &k);
    xs_wl_free(&wl);
}

/* One device: no collective, no DDP op, nothing in the prediction's data
 * parallel fields. */
static void one_device_should_have_no_collectives(void)
{
    xs_scenario s;
    xs_workload wl;
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", NULL, 0, &s, &wl), XS_OK);
    for (size_t i = 0; i < wl.n; i++) {
        CU_ASSERT_NOT_EQUAL(wl.ops[i].kind, XS_OP_COMM);
        CU_ASSERT(strncmp(wl.ops[i].name, "ddp.", 4) != 0);
    }
    CU_ASSERT_EQUAL(wl.buckets, 0);
    xs_device d = tu_device("a100-sxm4-80gb");
    xs_prediction p;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
    CU_ASSERT_EQUAL(p.comm_s, 0);
    CU_ASSERT_EQUAL(p.scaling_efficiency, 0);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
}

/* Whatever the overlap, the device time is at least the compute's and at
 * least the collectives' (one stream each), at most both in series plus
 * what sharing the GPU costs the compute. */
static void overlap_should_never_beat_compute_or_communication_alone(void)
{
    struct {
        const char *dev, *id;
        const char *sets[4];
        int n;
    } cases[] = {
        {"a100-sxm4-80gb", "bert-large-squad", {"cluster.devices=8"}, 1},
        {"v100-sxm2-16gb", "bert-base-squad", {"cluster.devices=2", "train.batch=4"}, 2},
        {"h100-pcie-80gb", "bert-large-squad", {"cluster.devices=8", "train.batch=1"}, 2},
        {"h100-sxm5-80gb", "gpt2-medium-finetune",
         {"cluster.devices=32", "cluster.network_gbs=3", "train.grad_accum=2"}, 3},
        {"a100-sxm4-80gb", "bert-base-squad",
         {"cluster.devices=4", "cluster.sharding=zero2", "train.batch=2"}, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build(cases[k].id, cases[k].sets, cases[k].n, &s, &wl), XS_OK);
        xs_device d = tu_device(cases[k].dev);
        xs_prediction p;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
        tu_check_two_streams(&wl, &p);
        /* above 1 only where ZeRO splits the optimizer's work too */
        CU_ASSERT(p.scaling_efficiency > 0 &&
                  (p.scaling_efficiency <= 1 || s.sharding != XS_SHARD_NONE));
        xs_prediction_free(&p);
        xs_wl_free(&wl);
    }
}

/* A slow network leaves more of the collectives exposed than NVLink does. */
static void slower_links_should_expose_more(void)
{
    double exposed[2];
    const char *sets[2][3] = {{"cluster.devices=16", "cluster.network_gbs=400", "train.batch=4"},
                              {"cluster.devices=16", "cluster.network_gbs=1", "train.batch=4"}};
    for (int k = 0; k < 2; k++) {
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", sets[k], 3, &s, &wl), XS_OK);
        xs_device d = tu_device("h100-sxm5-80gb");
        xs_prediction p;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
        exposed[k] = p.exposed_tail_s;
        xs_prediction_free(&p);
        xs_wl_free(&wl);
    }
    CU_ASSERT(exposed[1] > exposed[0]);
}

/* ZeRO (Rajbhandari et al. 2020): stage 1 divides the optimizer state and
 * the master copy by the devices, stage 2 the gradients too; the
 * activations stay. */
static void zero_should_divide_state_per_device(void)
{
    const char *ids[] = {"none", "zero1", "zero2"};
    xs_memory m[3];
    double P = 0;
    for (int k = 0; k < 3; k++) {
        char sh[64];
        snprintf(sh, sizeof sh, "cluster.sharding=%s", ids[k]);
        const char *sets[] = {"cluster.devices=8", sh};
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", sets, 2, &s, &wl), XS_OK);
        xs_device d = tu_device("a100-sxm4-80gb");
        xs_error err;
        CU_ASSERT_EQUAL(xs_memory_predict(&d, &s, &wl, &m[k], &err), XS_OK);
        P = wl.trainable_params;
        xs_wl_free(&wl);
    }
    /* bert-large-squad: apex O2, AdamW: 2 x 4 bytes of state, a 4-byte master */
    CU_ASSERT_DOUBLE_EQUAL(m[0].optimizer, P * 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(m[1].optimizer, P * 8 / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(m[0].weights - m[1].weights, P * 4 * 7 / 8, 1);
    CU_ASSERT_DOUBLE_EQUAL(m[1].activations, m[0].activations, 1);
    CU_ASSERT(m[2].grads < m[1].grads);
    CU_ASSERT(m[2].total < m[1].total && m[1].total < m[0].total);
}

/* The per-GPU prices that are shares of an instance say its shape in
 * their provider text; compare marks what a partly used one bills. */
static void instance_shapes_should_come_from_the_price(void)
{
    struct {
        const char *id;
        int gpus;
    } want[] = {{"h100-sxm5-80gb", 8}, {"h200-sxm-141gb", 8}, {"v100-sxm2-32gb", 8},
                {"a10", 1},            {"a100-pcie-80gb", 1}, {"l4", 1}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        xs_device d = tu_device(want[k].id);
        CU_ASSERT_EQUAL(xs_instance_gpus(&d), want[k].gpus);
    }
    tu_result r = tu_run("compare -d h100-sxm5-80gb,a10 -s bert-base-squad --set cluster.devices=2");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "h100-sxm5-80gb   2 devices on 1 8-GPU instance: billed "
                                         "for 8 GPUs"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "a10              2 devices"));
    tu_run_free(&r);
}

/* predict shows the data-parallel answer in the table and in JSON, and
 * only for several devices. */
static void predict_should_report_scaling_and_exposed_communication(void)
{
    tu_result r = tu_run("predict -d a100-sxm4-80gb -s bert-base-squad --set cluster.devices=8");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\ncluster   8 devices = 1 node x 8, nvlink 300 GB/s"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "scaling efficiency"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "exposed"));
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s bert-base-squad --set cluster.devices=8 --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *j = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *dp = cJSON_GetObjectItem(j, "data_parallel");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
    double eff = cJSON_GetObjectItem(dp, "scaling_efficiency")->valuedouble;
    double job = cJSON_GetObjectItem(dp, "samples_per_s_job")->valuedouble;
    double per = cJSON_GetObjectItem(dp, "samples_per_s_per_device")->valuedouble;
    double one = cJSON_GetObjectItem(dp, "samples_per_s_one_device")->valuedouble;
    CU_ASSERT(eff > 0.5 && eff <= 1);
    CU_ASSERT_DOUBLE_EQUAL(job, 8 * per, 1e-9 * job);
    CU_ASSERT_DOUBLE_EQUAL(eff, per / one, 1e-9);
    cJSON_Delete(j);
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s bert-base-squad --format json");
    CU_ASSERT_PTR_NULL(strstr(r.out, "data_parallel"));
    tu_run_free(&r);
}

int tu_add_ddp_suite(void)
{
    CU_pSuite s = CU_add_suite("ddp", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, buckets_should_be_1_mib_then_25_mib_in_backward_order);
    CU_ADD_TEST(s, one_device_should_have_no_collectives);
    CU_ADD_TEST(s, overlap_should_never_beat_compute_or_communication_alone);
    CU_ADD_TEST(s, slower_links_should_expose_more);
    CU_ADD_TEST(s, zero_should_divide_state_per_device);
    CU_ADD_TEST(s, instance_shapes_should_come_from_the_price);
    CU_ADD_TEST(s, predict_should_report_scaling_and_exposed_communication);
    return 0;
}
