/* test_distilbert.c — the distilbert family (model_type distilbert): the
 * parameter counts transformers and PEFT print, the op list of its layer
 * and heads where it differs from BERT's (no token types, no dropout after
 * the attention's output projection, pre_classifier + ReLU + dropout,
 * dropout before qa_outputs), LoRA on its module names, checkpointing, the
 * memory bookkeeping, and the config keys refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>

#include "fileio.h"
#include "paths.h"
#include "scenario.h"
#include "test_util.h"
#include "workload.h"

#define SCN "distilbert-sst2"

static int build(const char *const *sets, int n, xs_scenario *s, xs_workload *wl, xs_error *err)
{
    return tu_build_err(SCN, sets, n, s, wl, err);
}

static void build_ok(const char *const *sets, int n, xs_scenario *s, xs_workload *wl)
{
    CU_ASSERT_EQUAL_FATAL(tu_build(SCN, sets, n, s, wl), XS_OK);
}

/* Forward ops of layer l whose name holds word. */
static int count_fwd(const xs_workload *wl, int l, const char *word)
{
    int n = 0;
    for (size_t k = 0; k < wl->n; k++)
        if (wl->ops[k].layer == l && wl->ops[k].phase == XS_PH_FWD && !wl->ops[k].recompute &&
            strstr(wl->ops[k].name, word))
            n++;
    return n;
}

/* sum(p.numel()) of DistilBertForSequenceClassification (2 labels) and
 * DistilBertForQuestionAnswering for distilbert-base-uncased
 * (scenarios/models/README.md has the sums): the base model is
 * 66,362,880, the cls head adds pre_classifier (768^2 + 768) and
 * classifier (2 x 768 + 2), the QA head qa_outputs (2 x 768 + 2). */
static void parameter_counts_should_equal_transformers(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, 0, &s, &wl);
    CU_ASSERT_EQUAL(s.model.family, XS_FAMILY_DISTILBERT);
    CU_ASSERT_EQUAL(s.model.type_vocab, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.model.head_dropout, 0.2, 1e-12); /* seq_classif_dropout */
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 66955010.0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, wl.params, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(wl.params - (768.0 * 768 + 768) - (2 * 768.0 + 2), 66362880.0, 0.5);
    if (fabs(wl.params - 66955010.0) > 0.5)
        fprintf(stderr, "\ncls: %.0f parameters, transformers 66955010\n", wl.params);
    xs_wl_free(&wl);
    const char *span[] = {"model.head=span", "train.seq=384"};
    build_ok(span, 2, &s, &wl);
    CU_ASSERT_DOUBLE_EQUAL(s.model.head_dropout, 0.1, 1e-12); /* qa_dropout */
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 66362880.0 + 2 * 768 + 2, 0.5);
    xs_wl_free(&wl);
}

/* PEFT on the SST-2 classifier, LoraConfig(task_type=SEQ_CLS, r=8,
 * target_modules=["q_lin", "v_lin"]): "trainable params: 739,586 || all
 * params: 67,694,596" (scenarios/models/README.md cites it): the adapters
 * of 6 layers x 2 projections x 8 x (768 + 768), and pre_classifier and
 * classifier whole; PEFT's all params also count its second copy of both
 * heads (modules_to_save keeps the original). */
static void lora_should_train_what_peft_prints(void)
{
    const char *lora[] = {"train.lora.rank=8", "train.lora.alpha=16", "train.lora.dropout=0.1",
                          "train.lora.targets=q_lin,v_lin"};
    xs_scenario s;
    xs_workload wl;
    build_ok(lora, 4, &s, &wl);
    CU_ASSERT_TRUE(s.train.lora_train_head);
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, 739586.0, 0.5);
    double heads = (768.0 * 768 + 768) + (2 * 768.0 + 2);
    CU_ASSERT_DOUBLE_EQUAL(wl.params + heads, 67694596.0, 0.5);
    if (fabs(wl.trainable_params - 739586.0) > 0.5)
        fprintf(stderr, "\nLoRA: %.0f trainable, PEFT 739586\n", wl.trainable_params);
    for (int l = 0; l < 6; l++) {
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.q.lora_A", l));
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.v.lora_B", l));
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.k.lora_A", l));
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.dW", l)); /* frozen base */
        /* the frozen embeddings need no gradient: the first layer's
         * projections have no dX, the others' do */
        CU_ASSERT_EQUAL(tu_find_op(&wl, "attn.q.dX", l) != NULL, l > 0);
    }
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.pre_classifier.dW", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.classifier.dW", -1));
    tu_check_memory_balance(&s, &wl);
    xs_wl_free(&wl);
    /* all-linear: every layer linear, not the heads */
    const char *all[] = {"train.lora.rank=8", "train.lora.targets=all-linear"};
    build_ok(all, 2, &s, &wl);
    double per_layer = 8.0 * (4 * (768 + 768) + (768 + 3072) * 2);
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, 6 * per_layer + heads, 0.5);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.pre_classifier.lora_A", -1));
    xs_wl_free(&wl);
    /* BERT's names are not DistilBERT's, and PEFT has no default for it */
    xs_error err;
    const char *bert_names[] = {"train.lora.rank=8", "train.lora.targets=query,value"};
    CU_ASSERT_EQUAL(build(bert_names, 2, &s, &wl, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'query' names no linear module of this DistilBERT"));
    const char *no_targets[] = {"train.lora.rank=8"};
    CU_ASSERT_EQUAL(build(no_targets, 1, &s, &wl, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.lora.targets is required"));
}

/* Embeddings: word + position, one add, LayerNorm, dropout; no token
 * types. A layer: q, k, v, out_lin, then the residual and sa_layer_norm
 * with no dropout between; lin1, activation, lin2, dropout, residual,
 * output_layer_norm. */
static void layer_should_be_distilberts(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, 0, &s, &wl);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "embed.word", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "embed.position", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "embed.token_type", -1));
    CU_ASSERT_EQUAL(count_fwd(&wl, -1, "embed.add"), 1);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "embed.dropout", -1));
    for (int l = 0; l < 6; l++) {
        /* flash: the attention's dropout is inside the kernel */
        CU_ASSERT_EQUAL(count_fwd(&wl, l, "dropout"), 1);
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "ffn.dropout", l));
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.dropout", l));
        CU_ASSERT_EQUAL(count_fwd(&wl, l, ".ln"), 2);
        CU_ASSERT_EQUAL(count_fwd(&wl, l, "residual"), 2);
        const xs_op *up = tu_find_op(&wl, "ffn.up", l), *out = tu_find_op(&wl, "attn.out", l);
        CU_ASSERT_PTR_NOT_NULL_FATAL(up);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        CU_ASSERT_EQUAL(up->n, 3072);
        CU_ASSERT_EQUAL(out->n, 768);
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.flash", l));
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "ffn.gelu", l));
    }
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "ffn.dropout", 6));
    xs_wl_free(&wl);
    /* eager attention: the probabilities' dropout too, two a layer; q is
     * scaled (T h elements), not the scores, and the mask is a masked_fill
     * over the scores; under autocast, softmax's cast to fp32 */
    const char *unfused[] = {"train.attention=unfused", "train.precision=amp_fp16"};
    build_ok(unfused, 2, &s, &wl);
    double T = (double)(s.train.batch * s.train.seq);
    double S2 = (double)s.train.batch * 12 * (double)s.train.seq * (double)s.train.seq;
    for (int l = 0; l < 6; l++) {
        CU_ASSERT_EQUAL(count_fwd(&wl, l, "dropout"), 2);
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.probs.dropout", l));
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.softmax", l));
        const xs_op *qs = tu_find_op(&wl, "attn.q_scale", l);
        const xs_op *mf = tu_find_op(&wl, "attn.masked_fill", l);
        CU_ASSERT_PTR_NOT_NULL_FATAL(qs);
        CU_ASSERT_PTR_NOT_NULL_FATAL(mf);
        CU_ASSERT_DOUBLE_EQUAL(qs->elems, T * 768, 0.5);
        CU_ASSERT_DOUBLE_EQUAL(mf->elems, S2, 0.5);
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.softmax.cast", l));
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.scale", l));
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.mask", l));
    }
    xs_wl_free(&wl);
}

/* The cls head: the first token of each sequence, pre_classifier (h x h),
 * ReLU, dropout (seq_classif_dropout), classifier (h x 2): no pooler, no
 * tanh. The span head: dropout (qa_dropout) over every token, qa_outputs. */
static void heads_should_be_distilberts(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, 0, &s, &wl);
    double b = (double)s.train.batch, T = b * (double)s.train.seq;
    const xs_op *pre = tu_find_op(&wl, "head.pre_classifier", -1);
    const xs_op *cls = tu_find_op(&wl, "head.classifier", -1);
    const xs_op *drop = tu_find_op(&wl, "head.dropout", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pre);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cls);
    CU_ASSERT_PTR_NOT_NULL_FATAL(drop);
    CU_ASSERT_EQUAL(pre->m, (int64_t)b);
    CU_ASSERT_EQUAL(pre->n, 768);
    CU_ASSERT_EQUAL(pre->k, 768);
    CU_ASSERT_EQUAL(cls->n, 2);
    CU_ASSERT_DOUBLE_EQUAL(drop->elems, b * 768, 0.5);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.first_token", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.relu", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.relu.bwd", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.loss", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.pooler", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.tanh", -1));
    xs_wl_free(&wl);
    /* seq_classif_dropout 0: no dropout kernel */
    const char *nodrop[] = {"model.head_dropout=0"};
    build_ok(nodrop, 1, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.dropout", -1));
    xs_wl_free(&wl);
    const char *span[] = {"model.head=span"};
    build_ok(span, 1, &s, &wl);
    drop = tu_find_op(&wl, "head.dropout", -1);
    const xs_op *qa = tu_find_op(&wl, "head.qa", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(drop);
    CU_ASSERT_PTR_NOT_NULL_FATAL(qa);
    CU_ASSERT_DOUBLE_EQUAL(drop->elems, T * 768, 0.5);
    CU_ASSERT_EQUAL(qa->m, (int64_t)T);
    CU_ASSERT_EQUAL(qa->n, 2);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.pre_classifier", -1));
    xs_wl_free(&wl);
}

/* A full fine-tune's GEMMs cost 6 FLOPs a weight a token over the layers'
 * linears: within 2% of 6 P T with P the layers' matmul weights (the
 * embeddings are gathers; the cls head sees one token a sequence). */
static void gemm_flops_should_be_six_p_per_token(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, 0, &s, &wl);
    double gemm = 0;
    for (size_t k = 0; k < wl.n; k++)
        if (wl.ops[k].kind == XS_OP_GEMM && wl.ops[k].layer >= 0)
            gemm += wl.ops[k].flops * (double)wl.ops[k].count;
    double T = (double)(s.train.batch * s.train.seq), h = 768, f = 3072;
    double P = 6 * (4 * h * h + 2 * h * f);
    double ratio = gemm / (6 * P * T);
    CU_ASSERT(fabs(ratio - 1) < 0.02);
    if (fabs(ratio - 1) >= 0.02)
        fprintf(stderr, "\nGEMM FLOPs %.4g of 6 P T\n", ratio);
    xs_wl_free(&wl);
}

/* Checkpointing each layer adds exactly its forward once more, in the
 * backward; nothing else changes in the list. */
static void checkpointing_should_add_one_forward(void)
{
    xs_scenario s, sc;
    xs_workload wl, wc;
    build_ok(NULL, 0, &s, &wl);
    const char *ckpt[] = {"train.checkpointing=layer"};
    build_ok(ckpt, 1, &sc, &wc);
    size_t layer_fwd = 0, recomputed = 0;
    for (size_t k = 0; k < wl.n; k++)
        layer_fwd += wl.ops[k].phase == XS_PH_FWD && wl.ops[k].layer >= 0;
    for (size_t k = 0; k < wc.n; k++)
        recomputed += wc.ops[k].recompute != 0;
    CU_ASSERT_EQUAL(recomputed, layer_fwd);
    CU_ASSERT_EQUAL(wc.n, wl.n + layer_fwd);
    tu_check_memory_balance(&sc, &wc);
    xs_wl_free(&wl);
    xs_wl_free(&wc);
}

/* What the forward keeps the backward releases, and every trained
 * parameter gets one gradient, across precisions, attention paths, heads,
 * LoRA and checkpointing. */
static void kept_and_released_should_balance(void)
{
    static const char *const cases[][4] = {
        {NULL},
        {"train.attention=unfused", NULL},
        {"train.precision=amp_fp16", NULL},
        {"train.precision=amp_fp16", "train.attention=unfused", NULL},
        {"train.precision=amp_bf16", "train.amp_mode=o2", NULL},
        {"train.precision=bf16", "train.grad_accum=2", NULL},
        {"model.head=span", "train.precision=amp_fp16", NULL},
        {"model.activation=relu", NULL},
        {"train.lora.rank=16", "train.lora.targets=q_lin,k_lin,v_lin,out_lin",
         "train.lora.dropout=0.1", NULL},
        {"train.lora.rank=8", "train.lora.targets=all-linear", "train.checkpointing=layer", NULL},
        {"train.lora.rank=8", "train.lora.targets=lin1", "train.lora.train_head=false", NULL},
    };
    tu_check_balance_recipes(SCN, cases, sizeof cases / sizeof cases[0]);
}

/* Config keys that would change the op list and are not modelled are
 * refused by name, and so are the relations the family needs. */
static void configs_should_refuse_what_is_not_modelled(void)
{
    static const struct {
        const char *extra; /* keys added after a minimal DistilBERT config's */
        const char *says;
    } cases[] = {
        {"\"sinusoidal_pos_embds\":true,", "'sinusoidal_pos_embds' true is not modelled"},
        {"\"sinusoidal_pos_embds\":1,", "'sinusoidal_pos_embds' must be true or false"},
        {"\"chunk_size_feed_forward\":64,", "'chunk_size_feed_forward' must be 0"},
        {"\"seq_classif_dropout\":\"x\",", "'seq_classif_dropout' must be a number"},
        {"\"n_layers\":null,", "'n_layers' must be a value, got null"},
    };
    char text[2048], set[1024];
    xs_error err;
    xs_scenario s;
    xs_workload wl;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* a repeated key takes its last value: the extra key goes last */
        snprintf(text, sizeof text,
                 "{\"model_type\":\"distilbert\",\"dim\":256,\"hidden_dim\":512,"
                 "\"n_layers\":2,\"n_heads\":4,\"vocab_size\":1000,"
                 "\"max_position_embeddings\":512,%.*s}",
                 (int)strlen(cases[i].extra) - 1, cases[i].extra);
        char name[32];
        snprintf(name, sizeof name, "distilbert-bad%zu.json", i);
        snprintf(set, sizeof set, "model.hf_config=%s", tu_write(name, text));
        const char *sets[] = {set};
        CU_ASSERT_NOT_EQUAL(build(sets, 1, &s, &wl, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, name)); /* names the file */
        if (!strstr(err.msg, cases[i].says))
            fprintf(stderr, "\ncase %zu: %s\n", i, err.msg);
    }
    /* the minimal config loads, with DistilBertConfig's defaults */
    snprintf(text, sizeof text,
             "{\"model_type\":\"distilbert\",\"dim\":256,\"hidden_dim\":512,\"n_layers\":2,"
             "\"n_heads\":4,\"vocab_size\":1000,\"max_position_embeddings\":512}");
    snprintf(set, sizeof set, "model.hf_config=%s", tu_write("distilbert-min.json", text));
    const char *sets[] = {set};
    CU_ASSERT_EQUAL_FATAL(build(sets, 1, &s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.activation, XS_ACT_GELU);
    CU_ASSERT_DOUBLE_EQUAL(s.model.dropout, 0.1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.model.attn_dropout, 0.1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.model.head_dropout, 0.2, 1e-12);
    xs_wl_free(&wl);
    static const struct {
        const char *set;
        const char *says;
    } relations[] = {
        {"model.type_vocab=2", "model.family distilbert needs model.type_vocab 0"},
        {"model.head=lm", "DistilBertForMaskedLM is not modelled"},
        {"train.kernels=fused", "model.family distilbert needs train.kernels eager"},
        {"model.activation=silu", "needs model.family llama"},
    };
    for (size_t i = 0; i < sizeof relations / sizeof relations[0]; i++) {
        const char *one[] = {relations[i].set};
        CU_ASSERT_NOT_EQUAL(build(one, 1, &s, &wl, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, relations[i].says));
        if (!strstr(err.msg, relations[i].says))
            fprintf(stderr, "\n%s: %s\n", relations[i].set, err.msg);
    }
    /* model.head_dropout is DistilBERT's */
    char path[512];
    const char *hd[] = {"model.head_dropout=0.1"};
    CU_ASSERT_EQUAL_FATAL(xs_resolve("scenarios", "bert-base-lora-sst2", path, sizeof path, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(tu_scn_load_gated(path, hd, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.head_dropout needs model.family distilbert"));
}

/* The CLI: predict's JSON names the family and carries the counts. */
static void cli_should_report_the_family_and_params(void)
{
    tu_result r = tu_run("predict -d a100-sxm4-80gb -s " SCN " --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *fam = xs_json_path(doc, "scenario.model.family");
    const cJSON *p = xs_json_path(doc, "scenario.model.params");
    CU_ASSERT(cJSON_IsString(fam) && strcmp(fam->valuestring, "distilbert") == 0);
    CU_ASSERT(cJSON_IsNumber(p) && p->valuedouble == 66955010.0);
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s " SCN);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "model     distilbert encoder, 6 layers"));
    tu_run_free(&r);
}

int tu_add_distilbert_suite(void)
{
    CU_pSuite s = CU_add_suite("distilbert", NULL, NULL);
    return !s ||
           !CU_add_test(s, "parameter_counts_should_equal_transformers", parameter_counts_should_equal_transformers) ||
           !CU_add_test(s, "lora_should_train_what_peft_prints", lora_should_train_what_peft_prints) ||
           !CU_add_test(s, "layer_should_be_distilberts", layer_should_be_distilberts) ||
           !CU_add_test(s, "heads_should_be_distilberts", heads_should_be_distilberts) ||
           !CU_add_test(s, "gemm_flops_should_be_six_p_per_token", gemm_flops_should_be_six_p_per_token) ||
           !CU_add_test(s, "checkpointing_should_add_one_forward", checkpointing_should_add_one_forward) ||
           !CU_add_test(s, "kept_and_released_should_balance", kept_and_released_should_balance) ||
           !CU_add_test(s, "configs_should_refuse_what_is_not_modelled", configs_should_refuse_what_is_not_modelled) ||
           !CU_add_test(s, "cli_should_report_the_family_and_params", cli_should_report_the_family_and_params)
           ? -1
           : 0;
}
