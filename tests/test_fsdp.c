/* test_fsdp.c — PyTorch FSDP in the op list and the prediction (fsdp.h):
 * a unit per Transformer layer plus the root, gathered twice and reduced
 * once under FULL_SHARD (1.5 times an all-reduce's traffic), once each
 * under SHARD_GRAD_OP; BACKWARD_PRE's order on NCCL's stream; the memory
 * a device holds against DDP and ZeRO; the overlap never faster than the
 * compute or the collectives alone; what it refuses. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "fsdp.h"
#include "memory.h"
#include "predict.h"
#include "scenario.h"
#include "test_util.h"
#include "workload.h"

/* Bytes on one GPU's link for a collective of S bytes over n GPUs
 * (nccl-tests' bus bandwidth factors: 2(n-1)/n for all-reduce, (n-1)/n
 * for reduce-scatter and all-gather). */
static double wire_bytes(const xs_workload *wl, int n)
{
    double w = 0;
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        if (op->kind != XS_OP_COMM)
            continue;
        double f = (op->coll == XS_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n;
        w += op->bytes * f * (double)op->count;
    }
    return w;
}

static double coll_bytes(const xs_workload *wl, int coll, const char *suffix)
{
    double b = 0;
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        size_t ln = strlen(op->name), ls = strlen(suffix);
        if (op->kind == XS_OP_COMM && op->coll == coll &&
            (ls == 0 || (ln >= ls && strcmp(op->name + ln - ls, suffix) == 0)))
            b += op->bytes;
    }
    return b;
}

/* FULL_SHARD gathers every parameter twice and reduce-scatters every
 * gradient once: 3(n-1)/n P bytes a GPU against DDP's 2(n-1)/n P, the
 * same format on the wire (fp32 here: no MixedPrecision, autocast's fp32
 * gradients for DDP), but for the root unit's R parameters, which stay
 * gathered from the forward into the backward: (3P - R) / 2P, 1.5 when
 * the layers hold everything. SHARD_GRAD_OP gathers once: DDP's volume. */
static void full_shard_should_move_one_and_a_half_all_reduces(void)
{
    const char *ddp[] = {"cluster.devices=8", "train.amp_mode=autocast"};
    const char *full[] = {"cluster.devices=8", "train.amp_mode=autocast", "cluster.sharding=fsdp",
                          "cluster.fsdp_mixed_precision=false"};
    const char *grad_op[] = {"cluster.devices=8", "train.amp_mode=autocast",
                             "cluster.sharding=fsdp_grad_op",
                             "cluster.fsdp_mixed_precision=false"};
    xs_scenario s;
    xs_workload w_ddp, w_full, w_op;
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", ddp, 2, &s, &w_ddp), XS_OK);
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", full, 4, &s, &w_full), XS_OK);
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", grad_op, 4, &s, &w_op), XS_OK);
    double P = w_full.trainable_params, R = w_full.fsdp_root_bytes / 4;
    CU_ASSERT(R > 0 && R < 0.1 * P); /* the embeddings and the span head */
    /* the closed forms, op by op */
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(&w_full, XS_COLL_ALLGATHER, ".fwd"), P * 4, 1e-6 * P);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(&w_full, XS_COLL_ALLGATHER, ".bwd"), (P - R) * 4, 1e-6 * P);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(&w_full, XS_COLL_REDUCE_SCATTER, ""), P * 4, 1e-6 * P);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(&w_full, XS_COLL_ALLREDUCE, ""), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(&w_op, XS_COLL_ALLGATHER, ".bwd"), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(&w_op, XS_COLL_ALLGATHER, ".fwd"), P * 4, 1e-6 * P);
    /* against DDP's own buckets */
    double ddp_wire = wire_bytes(&w_ddp, 8);
    CU_ASSERT_DOUBLE_EQUAL(ddp_wire, 2.0 * 7 / 8 * P * 4, 1e-6 * P);
    CU_ASSERT_DOUBLE_EQUAL(wire_bytes(&w_full, 8) / ddp_wire, (3 * P - R) / (2 * P), 1e-9);
    CU_ASSERT(wire_bytes(&w_full, 8) / ddp_wire > 1.4);
    CU_ASSERT_DOUBLE_EQUAL(wire_bytes(&w_op, 8) / ddp_wire, 1.0, 1e-9);
    xs_wl_free(&w_ddp);
    xs_wl_free(&w_full);
    xs_wl_free(&w_op);
    /* MixedPrecision in fp16 halves every collective */
    const char *mp[] = {"cluster.devices=8", "train.amp_mode=autocast", "cluster.sharding=fsdp"};
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", mp, 3, &s, &w_full), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(coll_bytes(&w_full, XS_COLL_REDUCE_SCATTER, ""), P * 2, 1e-6 * P);
    CU_ASSERT_DOUBLE_EQUAL(wire_bytes(&w_full, 8), 7.0 / 8 * (3 * P - R) * 2, 1e-6 * P);
    xs_wl_free(&w_full);
}

/* One unit a Transformer layer (T5: encoder and decoder layers, numbered
 * from 0 each) and the root; together they hold every parameter; each
 * unit's first op waits for its all-gather, each reduce-scatter follows
 * its unit's last backward op. */
static void units_should_be_the_layers_and_the_root(void)
{
    struct {
        const char *id;
        int64_t layers;
    } cases[] = {{"bert-base-squad", 12},         {"gpt2-medium-finetune", 24},
                 {"t5-base-summarization", 24},   {"tinyllama-1.1b-finetune", 22},
                 {"vit-base-finetune", 12},       {"distilbert-sst2", 6}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *sets[] = {"cluster.devices=4", "cluster.sharding=fsdp",
                              "train.amp_mode=autocast"};
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build(cases[k].id, sets, 3, &s, &wl), XS_OK);
        CU_ASSERT_EQUAL(wl.fsdp_units, cases[k].layers + 1);
        xs_fsdp_formats f;
        xs_fsdp_formats_of(&s, &f);
        double gathered = coll_bytes(&wl, XS_COLL_ALLGATHER, ".fwd") / f.gather;
        CU_ASSERT_DOUBLE_EQUAL(gathered, wl.trainable_params, 1e-9 * wl.trainable_params);
        int64_t ag = 0, rs = 0;
        for (size_t i = 0; i < wl.n; i++) {
            const xs_op *op = &wl.ops[i];
            if (op->kind == XS_OP_COMM) {
                ag += op->coll == XS_COLL_ALLGATHER;
                rs += op->coll == XS_COLL_REDUCE_SCATTER;
                /* a reduce-scatter starts after the op just before it */
                if (op->coll == XS_COLL_REDUCE_SCATTER)
                    CU_ASSERT_EQUAL(op->dep_op, (int32_t)i);
                continue;
            }
            if (op->comm_dep > 0) { /* a compute op waits for an earlier collective */
                CU_ASSERT((size_t)op->comm_dep <= i);
                CU_ASSERT_EQUAL(wl.ops[op->comm_dep - 1].kind, XS_OP_COMM);
            }
        }
        CU_ASSERT_EQUAL(ag, 2 * cases[k].layers + 1); /* the root's once: not freed after its forward */
        CU_ASSERT_EQUAL(rs, cases[k].layers + 1);
        tu_check_memory_balance(&s, &wl);
        xs_wl_free(&wl);
    }
}

/* BACKWARD_PRE: at unit u's backward, the next unit's gather goes on
 * NCCL's stream before u's reduce-scatter, and limit_all_gathers holds a
 * forward gather until the unit two before is freed. */
static void backward_prefetch_should_gather_the_next_unit_first(void)
{
    const char *sets[] = {"cluster.devices=8", "cluster.sharding=fsdp", "train.amp_mode=autocast"};
    xs_scenario s;
    xs_workload wl;
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-squad", sets, 3, &s, &wl), XS_OK);
    char order[64][48];
    int n = 0;
    for (size_t i = 0; i < wl.n && n < 64; i++)
        if (wl.ops[i].kind == XS_OP_COMM && wl.ops[i].phase == XS_PH_COMM &&
            (strstr(wl.ops[i].name, ".bwd") || strstr(wl.ops[i].name, "reduce_scatter")))
            snprintf(order[n++], sizeof order[0], "%s", wl.ops[i].name);
    /* 12 gathers, 13 reduce-scatters: the last layer's and its prefetch first */
    CU_ASSERT_EQUAL_FATAL(n, 25);
    CU_ASSERT_STRING_EQUAL(order[0], "fsdp.all_gather.u11.bwd");
    CU_ASSERT_STRING_EQUAL(order[1], "fsdp.all_gather.u10.bwd");
    CU_ASSERT_STRING_EQUAL(order[2], "fsdp.reduce_scatter.u11");
    CU_ASSERT_STRING_EQUAL(order[3], "fsdp.all_gather.u9.bwd");
    CU_ASSERT_STRING_EQUAL(order[4], "fsdp.reduce_scatter.u10");
    CU_ASSERT_STRING_EQUAL(order[22], "fsdp.reduce_scatter.u1");
    CU_ASSERT_STRING_EQUAL(order[23], "fsdp.reduce_scatter.u0");
    CU_ASSERT_STRING_EQUAL(order[24], "fsdp.reduce_scatter.root");
    /* the forward's gathers of units 2.. wait for unit u-2's last op */
    int limited = 0;
    for (size_t i = 0; i < wl.n; i++) {
        const xs_op *op = &wl.ops[i];
        if (op->kind != XS_OP_COMM || !strstr(op->name, ".fwd") || op->dep_op == 0)
            continue;
        const xs_op *freed = &wl.ops[op->dep_op - 1];
        CU_ASSERT(freed->mem.fsdp_free > 0);
        CU_ASSERT_EQUAL(freed->layer, op->layer - 2);
        limited++;
    }
    CU_ASSERT_EQUAL(limited, 10);
    xs_wl_free(&wl);
}

/* Per device: FULL_SHARD keeps a 1/N shard of the parameters, gradients
 * and optimizer state, plus the units gathered at the peak (the root and
 * at most two layers, BACKWARD_PRE's current and next); SHARD_GRAD_OP
 * keeps every unit gathered through the backward; both hold less than
 * ZeRO-2, which holds less than DDP. */
static void fsdp_should_hold_a_shard_and_the_gathered_units(void)
{
    const char *ids[] = {"none", "zero2", "fsdp", "fsdp_grad_op"};
    xs_memory m[4];
    xs_workload wl[4];
    double P = 0;
    for (int k = 0; k < 4; k++) {
        char sh[64];
        snprintf(sh, sizeof sh, "cluster.sharding=%s", ids[k]);
        const char *sets[] = {"cluster.devices=8", "train.amp_mode=autocast", sh};
        xs_scenario s;
        CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", sets, 3, &s, &wl[k]), XS_OK);
        xs_device d = tu_device("a100-sxm4-80gb");
        xs_error err;
        CU_ASSERT_EQUAL(xs_memory_predict(&d, &s, &wl[k], &m[k], &err), XS_OK);
        P = wl[k].trainable_params;
    }
    /* autocast: fp32 parameters, AdamW's two fp32 states */
    CU_ASSERT_DOUBLE_EQUAL(m[0].weights, wl[0].params * 4, 1);
    CU_ASSERT_DOUBLE_EQUAL(m[2].optimizer, P * 8 / 8, 1);
    double shard = wl[2].params * 4 / 8;
    double gathered = m[2].weights - shard;
    CU_ASSERT(gathered > 0);
    CU_ASSERT(gathered <= wl[2].fsdp_root_bytes + 2 * wl[2].fsdp_unit_bytes + 1);
    /* SHARD_GRAD_OP: every unit still gathered at the backward's start */
    CU_ASSERT_DOUBLE_EQUAL(m[3].weights - shard, P * 2, 1e-6 * P);
    CU_ASSERT(m[2].total < m[3].total);
    CU_ASSERT(m[3].total < m[1].total);
    CU_ASSERT(m[1].total < m[0].total);
    for (int k = 0; k < 4; k++)
        xs_wl_free(&wl[k]);
}

/* Two streams: the step lasts at least its compute and at least its
 * collectives, at most both in series plus what sharing the GPU costs. */
static void fsdp_overlap_should_never_beat_compute_or_communication_alone(void)
{
    struct {
        const char *dev, *id;
        const char *sets[5];
        int n;
    } cases[] = {
        {"a100-sxm4-80gb", "bert-large-squad",
         {"cluster.devices=8", "cluster.sharding=fsdp", "train.amp_mode=autocast"}, 3},
        {"h100-pcie-80gb", "gpt2-medium-finetune",
         {"cluster.devices=4", "cluster.sharding=fsdp", "train.batch=1"}, 3},
        {"h100-sxm5-80gb", "tinyllama-1.1b-finetune",
         {"cluster.devices=16", "cluster.network_gbs=2", "cluster.sharding=fsdp",
          "train.grad_accum=2"}, 4},
        {"v100-sxm2-16gb", "bert-base-squad",
         {"cluster.devices=2", "cluster.sharding=fsdp_grad_op", "train.amp_mode=autocast",
          "train.batch=4"}, 4},
        {"a100-sxm4-80gb", "t5-base-summarization",
         {"cluster.devices=8", "cluster.sharding=fsdp", "cluster.fsdp_mixed_precision=false"}, 3},
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
        xs_prediction_free(&p);
        xs_wl_free(&wl);
    }
}

/* Across two nodes on a slow network the forward's gathers cannot hide. */
static void a_slow_network_should_expose_the_gathers(void)
{
    double stall[2];
    const char *nets[] = {"cluster.network_gbs=400", "cluster.network_gbs=1"};
    for (int k = 0; k < 2; k++) {
        const char *sets[] = {"cluster.devices=16", nets[k], "cluster.sharding=fsdp",
                              "train.amp_mode=autocast"};
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build("bert-large-squad", sets, 4, &s, &wl), XS_OK);
        xs_device d = tu_device("h100-sxm5-80gb");
        xs_prediction p;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
        stall[k] = p.serial_s;
        xs_prediction_free(&p);
        xs_wl_free(&wl);
    }
    CU_ASSERT(stall[1] > 10 * stall[0]);
}

/* MixedPrecision hands autocast half weights: no weight casts either way. */
static void mixed_precision_should_drop_autocast_weight_casts(void)
{
    const char *mp[] = {"cluster.devices=2", "cluster.sharding=fsdp", "train.amp_mode=autocast"};
    const char *no[] = {"cluster.devices=2", "cluster.sharding=fsdp", "train.amp_mode=autocast",
                        "cluster.fsdp_mixed_precision=false"};
    xs_scenario s;
    xs_workload wl;
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-squad", mp, 3, &s, &wl), XS_OK);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.cast_w", 0));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.dW.cast", 0));
    xs_wl_free(&wl);
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-squad", no, 4, &s, &wl), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.q.cast_w", 0));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.q.dW.cast", 0));
    xs_wl_free(&wl);
}

/* What FSDP is not modelled for is refused with the key that says so. */
static void fsdp_should_refuse_what_it_does_not_model(void)
{
    struct {
        const char *sets[3];
        const char *want;
    } cases[] = {
        {{"cluster.devices=2", "cluster.sharding=fsdp", NULL}, "train.amp_mode autocast"},
        {{"cluster.sharding=fsdp", "train.lora.rank=8", "cluster.devices=2"}, "train.lora"},
        {{"cluster.devices=1", "cluster.sharding=fsdp_grad_op", NULL}, "cluster.devices > 1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *sets[4] = {cases[k].sets[0], cases[k].sets[1], cases[k].sets[2],
                               "train.amp_mode=autocast"};
        int n = cases[k].sets[2] ? 3 : 2;
        if (k > 0) /* autocast, so that only the key under test is wrong */
            sets[n++] = "train.amp_mode=autocast";
        xs_scenario s;
        xs_workload wl;
        xs_error err;
        /* bert-large-squad runs apex O2 */
        int rc = tu_build_err(k == 0 ? "bert-large-squad" : "bert-base-squad", sets, n, &s, &wl,
                              &err);
        CU_ASSERT_NOT_EQUAL(rc, XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[k].want));
        if (!strstr(err.msg, cases[k].want))
            fprintf(stderr, "\n%s\n", err.msg);
    }
    xs_scenario s;
    xs_workload wl;
    xs_error err;
    /* a recipe's DDP wrapper (bert-base-squad: apex's) gives way to FSDP */
    const char *apex[] = {"cluster.devices=2", "cluster.sharding=fsdp", "train.amp_mode=autocast",
                          "cluster.ddp=apex"};
    CU_ASSERT_EQUAL_FATAL(tu_build_err("bert-base-squad", apex, 4, &s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL(wl.buckets, 0);
    CU_ASSERT_EQUAL(wl.fsdp_units, 13);
    xs_wl_free(&wl);
    const char *fp8[] = {"cluster.devices=2", "cluster.sharding=fsdp"};
    CU_ASSERT_NOT_EQUAL(tu_build_err("llama2-7b-fp8", fp8, 2, &s, &wl, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fp8"));
}

/* predict says what FSDP did, in the table and in JSON. */
static void predict_should_report_the_units(void)
{
    tu_result r = tu_run("predict -d a100-sxm4-80gb -s bert-base-squad --set cluster.devices=8 "
                         "--set cluster.sharding=fsdp --set train.amp_mode=autocast --summary");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "sharding fsdp (FULL_SHARD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "13 units (12 layers"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "the compute waiting for all-gathers"));
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s bert-base-squad --set cluster.devices=8 "
               "--set cluster.sharding=fsdp --set train.amp_mode=autocast --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *j = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *dp = cJSON_GetObjectItem(j, "data_parallel");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(dp, "sharding")->valuestring, "fsdp");
    cJSON *f = cJSON_GetObjectItem(dp, "fsdp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(f, "units")->valueint, 13);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(f, "gather_format")->valuestring, "fp16");
    cJSON_Delete(j);
    tu_run_free(&r);
}

int tu_add_fsdp_suite(void)
{
    CU_pSuite s = CU_add_suite("fsdp", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, full_shard_should_move_one_and_a_half_all_reduces);
    CU_ADD_TEST(s, units_should_be_the_layers_and_the_root);
    CU_ADD_TEST(s, backward_prefetch_should_gather_the_next_unit_first);
    CU_ADD_TEST(s, fsdp_should_hold_a_shard_and_the_gathered_units);
    CU_ADD_TEST(s, fsdp_overlap_should_never_beat_compute_or_communication_alone);
    CU_ADD_TEST(s, a_slow_network_should_expose_the_gathers);
    CU_ADD_TEST(s, mixed_precision_should_drop_autocast_weight_casts);
    CU_ADD_TEST(s, fsdp_should_refuse_what_it_does_not_model);
    CU_ADD_TEST(s, predict_should_report_the_units);
    return 0;
}
