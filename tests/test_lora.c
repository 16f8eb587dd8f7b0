/* test_lora.c — LoRA, QLoRA and activation checkpointing: what freezing
 * the base removes from the step and what the adapters add, the GEMM FLOPs
 * of a LoRA step against 4 P_frozen + 6 P_trainable, PEFT's target
 * matching and trainable count, NF4's bytes a weight, and checkpointing's
 * one extra forward of each layer and its activation memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "family.h"
#include "lora.h"
#include "memory.h"
#include "scenario.h"
#include "test_util.h"
#include "workload.h"

static void build_ok(const char *id, const char *const *sets, int n, xs_scenario *s,
                     xs_workload *wl)
{
    CU_ASSERT_EQUAL_FATAL(tu_build(id, sets, n, s, wl), XS_OK);
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

static const xs_op *find(const xs_workload *wl, const char *name, int layer, int phase)
{
    for (size_t i = 0; i < wl->n; i++)
        if (strcmp(wl->ops[i].name, name) == 0 && wl->ops[i].layer == layer &&
            wl->ops[i].phase == phase)
            return &wl->ops[i];
    return NULL;
}

/* GEMM FLOPs of the ops whose names pass keep, per micro-batch. */
static double gemm_flops(const xs_workload *wl, int (*keep)(const char *))
{
    double f = 0;
    for (size_t i = 0; i < wl->n; i++)
        if (xs_op_is_matmul(wl->ops[i].kind) && (!keep || keep(wl->ops[i].name)))
            f += wl->ops[i].flops * (double)wl->ops[i].count;
    return f / (double)wl->micro_batches;
}

static int is_base_dw(const char *name)
{
    return ends_with(name, ".dW") && !strstr(name, ".lora_");
}

static int is_adapter(const char *name)
{
    return strstr(name, ".lora_") != NULL;
}

/* The base weights' dW GEMMs go, all and only them (the trained head's
 * stays); dX stays wherever the input needs a gradient; each targeted
 * linear gains A and B: 2 forward and 4 backward skinny GEMMs. */
static void lora_should_remove_exactly_the_base_dw(void)
{
    xs_scenario s;
    xs_workload full, lora;
    const char *sets[] = {"train.lora.rank=8", "train.lora.targets=query,value"};
    build_ok("bert-base-squad-hf", NULL, 0, &s, &full);
    build_ok("bert-base-squad-hf", sets, 2, &s, &lora);
    int dw_full = 0, dw_lora = 0, adapters = 0;
    for (size_t i = 0; i < full.n; i++)
        dw_full += xs_op_is_matmul(full.ops[i].kind) && is_base_dw(full.ops[i].name);
    for (size_t i = 0; i < lora.n; i++) {
        dw_lora += xs_op_is_matmul(lora.ops[i].kind) && is_base_dw(lora.ops[i].name);
        adapters += xs_op_is_matmul(lora.ops[i].kind) && is_adapter(lora.ops[i].name);
    }
    CU_ASSERT_EQUAL(dw_full, 12 * 6 + 1); /* six linears a layer, the QA head */
    CU_ASSERT_EQUAL(dw_lora, 1);          /* the QA head, trained (modules_to_save) */
    CU_ASSERT_PTR_NOT_NULL(find(&lora, "head.qa.dW", -1, XS_PH_BWD));
    /* two adapters a layer: A and B forward, dX and dW of B, dW of A, and
     * A's dX but in layer 0 (its input, the frozen embeddings', needs none) */
    CU_ASSERT_EQUAL(adapters, 12 * 2 * 6 - 2);
    double T = (double)s.train.batch * (double)s.train.seq, h = 768, r = 8;
    double removed = gemm_flops(&full, is_base_dw) - gemm_flops(&lora, is_base_dw);
    CU_ASSERT_DOUBLE_EQUAL(removed, 12 * 2 * T * (4 * h * h + 2 * h * 3072), 1e-6 * removed);
    const xs_op *a = find(&lora, "attn.q.lora_A", 3, XS_PH_FWD);
    const xs_op *b = find(&lora, "attn.v.lora_B", 3, XS_PH_FWD);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT(a->m == (int64_t)T && a->n == 8 && a->k == 768);
    CU_ASSERT(b->m == (int64_t)T && b->n == 768 && b->k == 8);
    CU_ASSERT_DOUBLE_EQUAL(gemm_flops(&lora, is_adapter), 2 * 12 * (6 * 2 * T * h * r) -
                                                              2 * (2 * T * h * r),
                           1e-6);
    /* no weight gradient of a frozen tensor, no embedding backward */
    CU_ASSERT_PTR_NULL(find(&lora, "attn.q.db", 5, XS_PH_BWD));
    CU_ASSERT_PTR_NULL(find(&lora, "embed.word.bwd", -1, XS_PH_BWD));
    CU_ASSERT_PTR_NULL(find(&lora, "attn.q.dX", 0, XS_PH_BWD));
    CU_ASSERT_PTR_NOT_NULL(find(&lora, "attn.q.dX", 1, XS_PH_BWD));
    CU_ASSERT_PTR_NOT_NULL(find(&full, "embed.word.bwd", -1, XS_PH_BWD));
    xs_wl_free(&full);
    xs_wl_free(&lora);
}

/* The Llama layer's input needs no gradient in layer 0 only (the frozen
 * embeddings'), so every later layer keeps its frozen projections' dX:
 * without checkpointing, which would make the embeddings' output require
 * grad. */
static void llama_lora_should_keep_dx_past_layer_0(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *sets[] = {"train.checkpointing=none"};
    build_ok("llama2-7b-lora", sets, 1, &s, &wl);
    int kdx = 0;
    for (size_t i = 0; i < wl.n; i++)
        kdx += wl.ops[i].phase == XS_PH_BWD && strcmp(wl.ops[i].name, "attn.k.dX") == 0;
    CU_ASSERT_EQUAL(kdx, s.model.layers - 1);
    CU_ASSERT_PTR_NULL(find(&wl, "attn.q.dX", 0, XS_PH_BWD));
    CU_ASSERT_PTR_NOT_NULL(find(&wl, "attn.q.dX", 1, XS_PH_BWD));
    CU_ASSERT_PTR_NOT_NULL(find(&wl, "ffn.down.dX", 0, XS_PH_BWD));
    xs_wl_free(&wl);
}

/* A LoRA step multiplies each frozen weight twice a token (forward, dX) and
 * each trainable one three times: GEMM FLOPs = 4 P_frozen T + 6 P_trainable
 * T + the attention's 12 L b s^2 h, within 2% (the first layer skips the
 * dX of its input projections). GPT-2 medium, all-linear, seq 1024, the
 * attention unfused (flash skips the masked half of the causal scores). */
static void lora_step_flops_should_follow_4p_plus_6p(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *sets[] = {"train.lora.rank=16", "train.lora.targets=all-linear",
                          "train.attention=unfused"};
    build_ok("gpt2-medium-finetune", sets, 3, &s, &wl);
    const xs_model *m = &s.model;
    double h = (double)m->hidden, f = (double)m->ffn, L = (double)m->layers, V = (double)m->vocab;
    double b = (double)s.train.batch, sq = (double)s.train.seq, T = b * sq, r = 16;
    double frozen = L * (4 * h * h + 2 * h * f) + V * h; /* the tied LM head's too */
    double trainable = L * r * ((h + 3 * h) + (h + h) + (h + f) + (f + h));
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, trainable, 0.5);
    double expect = 4 * frozen * T + 6 * trainable * T + 12 * L * b * sq * sq * h;
    double got = gemm_flops(&wl, NULL);
    CU_ASSERT(fabs(got - expect) / expect < 0.02);
    if (fabs(got - expect) / expect >= 0.02)
        fprintf(stderr, "\nLoRA GEMM FLOPs %.4g, 4Pf + 6Pt rule %.4g\n", got, expect);
    xs_wl_free(&wl);
}

/* PEFT's print_trainable_parameters() for bert-base-uncased sequence
 * classification, r 8 on query and value: "trainable params: 296,450 ||
 * all params: 109,780,228" (team code index, find_string id 65807601609);
 * its all-params count has a second copy of the 2 x 768 + 2 classifier
 * (modules_to_save keeps the original beside the trained one). */
static void trainable_params_should_match_peft(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok("bert-base-lora-sst2", NULL, 0, &s, &wl);
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, 296450, 0);
    CU_ASSERT_DOUBLE_EQUAL(wl.params + (2 * 768 + 2), 109780228, 0);
    xs_wl_free(&wl);
    /* the head frozen: the adapters alone, 12 layers x 2 x (768 x 8 x 2) */
    const char *sets[] = {"train.lora.train_head=false"};
    build_ok("bert-base-lora-sst2", sets, 1, &s, &wl);
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, 294912, 0);
    xs_wl_free(&wl);
}

/* Whether s's LoRA adapts the linear, with its family's module names. */
static int targeted(const xs_scenario *s, const char *linear, int layer)
{
    return xs_lora_targeted(s, xs_family_lora(xs_family_of(s->model.family), s), linear, layer);
}

/* PEFT matches a target as the module's name or a '.'-suffix of it. */
static void targets_should_match_as_peft_does(void)
{
    xs_scenario s;
    const char *sets[] = {"model.head=cls", "train.lora.rank=8", "train.lora.targets=dense",
                          "train.seq=128"};
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_scn_open("bert-base-squad-hf", sets, 4, &s, &err), XS_OK);
    static const char *const dense[] = {"attn.out", "ffn.up", "ffn.down"};
    for (int i = 0; i < 3; i++)
        CU_ASSERT(targeted(&s, dense[i], 4));
    CU_ASSERT(targeted(&s, "head.pooler", -1));
    CU_ASSERT(!targeted(&s, "attn.q", 4));
    CU_ASSERT(!targeted(&s, "head.classifier", -1));
    snprintf(s.train.lora_targets, sizeof s.train.lora_targets, "output.dense");
    CU_ASSERT(targeted(&s, "attn.out", 0) && targeted(&s, "ffn.down", 0));
    CU_ASSERT(!targeted(&s, "ffn.up", 0));
    snprintf(s.train.lora_targets, sizeof s.train.lora_targets, "layer.3.attention.self.query");
    CU_ASSERT(targeted(&s, "attn.q", 3) && !targeted(&s, "attn.q", 13));
    CU_ASSERT(!targeted(&s, "attn.q", 1)); /* "layer.13" is not "layer.3" */
    s.train.lora_targets[0] = '\0'; /* PEFT's default for bert: query, value */
    CU_ASSERT(targeted(&s, "attn.q", 0) && targeted(&s, "attn.v", 0));
    CU_ASSERT(!targeted(&s, "attn.k", 0));
    snprintf(s.train.lora_targets, sizeof s.train.lora_targets, "all-linear");
    CU_ASSERT(targeted(&s, "attn.k", 0) && targeted(&s, "head.pooler", -1));
    CU_ASSERT(!targeted(&s, "head.classifier", -1));
    const char *g[] = {"train.lora.rank=8", "train.lora.targets=c_proj"};
    CU_ASSERT_EQUAL_FATAL(xs_scn_open("gpt2-medium-finetune", g, 2, &s, &err), XS_OK);
    CU_ASSERT(targeted(&s, "attn.out", 0) && targeted(&s, "ffn.down", 0));
    CU_ASSERT(!targeted(&s, "attn.qkv", 0) && !targeted(&s, "head.lm", -1));
    char path[128];
    CU_ASSERT_EQUAL(xs_lora_module(xs_family_lora(&xs_family_llama, &s), "ffn.gate", 2, path, sizeof path), 0);
    CU_ASSERT_STRING_EQUAL(path, "model.layers.2.mlp.gate_proj");
}

/* Bad LoRA keys: one line naming the key and what it expects. */
static void bad_lora_keys_should_be_refused_by_name(void)
{
    static const struct {
        const char *id;
        const char *sets[3];
        const char *says;
    } cases[] = {
        {"bert-base-squad-hf", {"train.lora.rank=8", "train.lora.targets=q_proj", NULL},
         "'q_proj' names no linear module"},
        {"bert-base-squad-hf", {"train.lora.targets=query", NULL, NULL},
         "train.lora.targets needs train.lora.rank > 0"},
        {"bert-base-squad-hf", {"train.quant=nf4", NULL, NULL}, "train.quant nf4 needs"},
        {"bert-base-squad-hf", {"train.lora.rank=8", "train.kernels=fused", NULL},
         "needs train.kernels eager"},
        {"bert-base-squad-hf", {"train.lora.rank=8", "train.lora.targets=qa_outputs", NULL},
         "names only the task head"},
        {"bert-base-squad-hf", {"train.lora.rank=8", "train.lora.targets=query,,value", NULL},
         "comma-separated"},
        {"gpt2-medium-finetune", {"train.lora.rank=8", "train.lora.train_head=true", NULL},
         "train_head true with model.head lm"},
        {"bert-base-squad-hf", {"train.lora.rank=-1", NULL, NULL}, "train.lora.rank"},
        {"bert-base-squad-hf", {"train.lora.dropout=0.1", NULL, NULL},
         "train.lora.dropout 0.1 needs train.lora.rank > 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = 0;
        while (n < 3 && cases[i].sets[n])
            n++;
        xs_scenario s;
        xs_error err;
        CU_ASSERT_NOT_EQUAL(tu_scn_open_gated(cases[i].id, cases[i].sets, n, &s, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        if (!strstr(err.msg, cases[i].says))
            fprintf(stderr, "\ncase %zu: %s\n", i, err.msg);
        CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
    }
}

/* QLoRA: NF4 with double quantization is 4 + 8/64 + 32/(64 x 256) bits a
 * weight (Dettmers et al. 2023, section 3); every frozen weight of the
 * layers is stored so, dequantized for each forward and each dX. */
static void nf4_should_store_4_127_bits_a_weight(void)
{
    CU_ASSERT_DOUBLE_EQUAL(xs_quant_bytes(XS_QUANT_NF4, 4096, 4096) / (4096.0 * 4096),
                           (4 + 0.125 + 32.0 / 16384) / 8, 1e-12);
    xs_scenario s;
    xs_workload wl, plain;
    const char *sets[] = {"train.lora.rank=16", "train.precision=amp_bf16", "train.quant=nf4"};
    build_ok("gpt2-medium-finetune", sets, 3, &s, &wl);
    build_ok("gpt2-medium-finetune", sets, 2, &s, &plain);
    double h = 1024, f = 4096, L = 24;
    CU_ASSERT_DOUBLE_EQUAL(wl.quant_params, L * (4 * h * h + 2 * h * f), 0.5);
    CU_ASSERT_DOUBLE_EQUAL(wl.quant_bytes, wl.quant_params * (4 + 0.125 + 32.0 / 16384) / 8, 1);
    int fwd = 0, bwd = 0;
    for (size_t i = 0; i < wl.n; i++) {
        if (!ends_with(wl.ops[i].name, ".dequant") && !ends_with(wl.ops[i].name, ".dequant.bwd"))
            continue;
        if (wl.ops[i].phase == XS_PH_FWD)
            fwd += (int)(wl.ops[i].count / wl.micro_batches);
        else
            bwd += (int)(wl.ops[i].count / wl.micro_batches);
    }
    CU_ASSERT_EQUAL(fwd, 24 * 4);
    CU_ASSERT_EQUAL(bwd, 24 * 4 - 1); /* layer 0's c_attn needs no dX */
    /* the same GEMMs as LoRA on bf16 weights; the weights take their packed bytes */
    CU_ASSERT_DOUBLE_EQUAL(gemm_flops(&wl, NULL), gemm_flops(&plain, NULL), 1);
    xs_device dev = tu_device("a100-sxm4-80gb");
    xs_memory mq, mp;
    xs_error err;
    CU_ASSERT_EQUAL(xs_memory_predict(&dev, &s, &wl, &mq, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_memory_predict(&dev, &s, &plain, &mp, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(mp.weights - mq.weights, wl.quant_params * 4 - wl.quant_bytes, 1);
    CU_ASSERT_DOUBLE_EQUAL(mq.optimizer, wl.trainable_params * 2 * 4, 1);
    xs_wl_free(&wl);
    xs_wl_free(&plain);
}

/* Checkpointing adds exactly one forward of each layer to the backward:
 * the same op names, shapes and FLOPs, each layer's run right before its
 * backward ops. */
static void checkpointing_should_add_one_forward_of_each_layer(void)
{
    static const char *const ids[] = {"bert-base-squad-hf", "gpt2-medium-finetune"};
    for (int k = 0; k < 2; k++) {
        xs_scenario s;
        xs_workload a, b;
        const char *sets[] = {"train.checkpointing=layer"};
        build_ok(ids[k], NULL, 0, &s, &a);
        build_ok(ids[k], sets, 1, &s, &b);
        size_t layer_fwd = 0;
        double flops = 0;
        for (size_t i = 0; i < a.n; i++)
            if (a.ops[i].phase == XS_PH_FWD && a.ops[i].layer >= 0) {
                layer_fwd++;
                flops += a.ops[i].flops * (double)a.ops[i].count;
            }
        CU_ASSERT_EQUAL(b.n, a.n + layer_fwd);
        double extra = 0;
        size_t first_fwd = 0;
        while (first_fwd < b.n && b.ops[first_fwd].layer < 0)
            first_fwd++;
        for (size_t i = 0; i < b.n; i++) {
            const xs_op *op = &b.ops[i];
            if (op->phase != XS_PH_BWD || op->layer < 0)
                continue;
            /* a recomputed op: a forward op of this layer by name and FLOPs */
            const xs_op *f = find(&a, op->name, op->layer, XS_PH_FWD);
            if (f && fabs(f->flops - op->flops) <= 1e-9 * (f->flops + 1))
                extra += op->flops * (double)op->count;
        }
        CU_ASSERT_DOUBLE_EQUAL(extra, flops, 1e-9 * flops);
        /* each layer's backward opens with its first forward op, recomputed */
        for (int l = 0; l < (int)s.model.layers; l++) {
            const xs_op *first = NULL, *first_bwd = NULL;
            for (size_t i = 0; i < b.n && !first_bwd; i++) {
                if (b.ops[i].layer != l)
                    continue;
                if (!first && b.ops[i].phase == XS_PH_FWD)
                    first = &b.ops[i];
                if (b.ops[i].phase == XS_PH_BWD)
                    first_bwd = &b.ops[i];
            }
            CU_ASSERT_PTR_NOT_NULL_FATAL(first);
            CU_ASSERT_PTR_NOT_NULL_FATAL(first_bwd);
            CU_ASSERT_STRING_EQUAL(first_bwd->name, first->name);
        }
        xs_wl_free(&a);
        xs_wl_free(&b);
    }
}

/* What checkpointing keeps at most: every layer's input and one layer's
 * tensors at a time (besides what the embeddings and the head keep). */
static void checkpointing_should_keep_layer_inputs_and_one_layer(void)
{
    xs_scenario s;
    xs_workload a, b;
    const char *sets[] = {"train.checkpointing=layer"};
    build_ok("gpt2-medium-finetune", NULL, 0, &s, &a);
    build_ok("gpt2-medium-finetune", sets, 1, &s, &b);
    double layer = 0, outside = 0;
    for (size_t i = 0; i < a.n; i++) {
        if (a.ops[i].layer == 0)
            layer += a.ops[i].mem.saved;
        else if (a.ops[i].layer < 0)
            outside += a.ops[i].mem.saved;
    }
    double L = (double)s.model.layers, T = (double)s.train.batch * (double)s.train.seq;
    double inputs = L * T * (double)s.model.hidden * 4; /* fp32 residual stream under autocast */
    xs_device dev = tu_device("a100-sxm4-80gb");
    xs_memory ma, mb;
    xs_error err;
    CU_ASSERT_EQUAL(xs_memory_predict(&dev, &s, &a, &ma, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_memory_predict(&dev, &s, &b, &mb, &err), XS_OK);
    CU_ASSERT(mb.activations_max <= inputs + layer + outside + 1);
    CU_ASSERT(mb.activations_max >= inputs + outside);
    CU_ASSERT_DOUBLE_EQUAL(ma.activations_max, L * layer + outside, 1e-9 * ma.activations_max);
    CU_ASSERT(mb.total < ma.total);
    xs_wl_free(&a);
    xs_wl_free(&b);
}

/* predict --format json reports the trainable parameters. */
static void predict_json_should_report_trainable_params(void)
{
    tu_result r = tu_run("predict -d a10 -s bert-base-lora-sst2 --format json");
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *mo = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "scenario"), "model");
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(mo, "trainable_params")->valuedouble, 296450, 0);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(mo, "params")->valuedouble, 109778690, 0);
    cJSON_Delete(doc);
    tu_run_free(&r);
}

/* bitsandbytes' layers are CUDA kernels: a TPU or the host CPU refuses a
 * quantized base in one line naming the device and its class. */
static void quantized_bases_should_be_refused_off_gpus(void)
{
    static const char *cmds[] = {"predict -s mistral-7b-qlora -d tpu-v4",
                                 "predict -s mistral-7b-qlora -d xeon-amx-2c",
                                 "predict -s llama2-7b-lora -d tpu-v5p --set train.quant=int8"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        tu_result r = tu_run(cmds[i]);
        CU_ASSERT_NOT_EQUAL(r.status, 0);
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "modelled on GPUs only"));
        tu_run_free(&r);
    }
    tu_result ok = tu_run("predict -s mistral-7b-qlora -d a100-sxm4-80gb --summary");
    CU_ASSERT_EQUAL(ok.status, 0);
    tu_run_free(&ok);
}

int tu_add_lora_suite(void)
{
    CU_pSuite s = CU_add_suite("lora", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, lora_should_remove_exactly_the_base_dw);
    CU_ADD_TEST(s, llama_lora_should_keep_dx_past_layer_0);
    CU_ADD_TEST(s, lora_step_flops_should_follow_4p_plus_6p);
    CU_ADD_TEST(s, trainable_params_should_match_peft);
    CU_ADD_TEST(s, targets_should_match_as_peft_does);
    CU_ADD_TEST(s, bad_lora_keys_should_be_refused_by_name);
    CU_ADD_TEST(s, nf4_should_store_4_127_bits_a_weight);
    CU_ADD_TEST(s, checkpointing_should_add_one_forward_of_each_layer);
    CU_ADD_TEST(s, checkpointing_should_keep_layer_inputs_and_one_layer);
    CU_ADD_TEST(s, predict_json_should_report_trainable_params);
    CU_ADD_TEST(s, quantized_bases_should_be_refused_off_gpus);
    return 0;
}
