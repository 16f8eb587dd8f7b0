/* test_t5.c — the t5 family (T5ForConditionalGeneration from a t5
 * config.json): parameter counts equal to transformers', the GEMMs of each
 * encoder and decoder layer and their FLOPs, cross-attention over the
 * encoder length, the relative position bias built in layer 0 only, the
 * memory bookkeeping, the config keys and options refused, and the CLI. */
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

#define SCN "t5-base-summarization"

/* "model.hf_config=<data root>/scenarios/models/<name>.json" */
static const char *config_set(const char *name)
{
    static char set[1024];
    char root[512];
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_data_root(root, sizeof root, &err), XS_OK);
    snprintf(set, sizeof set, "model.hf_config=%s/scenarios/models/%s.json", root, name);
    return set;
}

static void build_ok(const char *const *sets, int n, xs_scenario *s, xs_workload *wl)
{
    CU_ASSERT_EQUAL_FATAL(tu_build(SCN, sets, n, s, wl), XS_OK);
}

/* ops of a kind and phase in a layer whose name starts with prefix */
static int count_ops(const xs_workload *wl, int kind, int phase, int layer, const char *prefix)
{
    int n = 0;
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        if (op->kind == kind && op->phase == phase && op->layer == layer &&
            strncmp(op->name, prefix, strlen(prefix)) == 0 && !op->recompute)
            n++;
    }
    return n;
}

/* sum(p.numel() for p in model.parameters()) of T5ForConditionalGeneration:
 * t5-base 222,903,552 (the figure printed for google-t5/t5-base in many
 * public fine-tuning logs and pinned in code, e.g. team code index,
 * find_string ids 21340840042 and 28244099189), and from modeling_t5.py's
 * modules: the shared V x h embedding, 12 encoder layers of q, k, v, o
 * (h x h), wi, wo (h x f) and two h norms, 12 decoder layers with a
 * cross-attention and a third norm more, one 32 x 12 bias table a stack,
 * two final norms; v1.1-base (gated wi_0, wi_1, wo of f = 2048, untied
 * lm_head) 247,577,856 = the same layers (3 h f = 2 h 3072) + V h. */
static void parameter_counts_should_equal_transformers(void)
{
    static const struct {
        const char *model;
        double params;
        int tied, gated;
    } cases[] = {
        {"t5-base", 222903552.0, 1, 0},
        {"t5-v1_1-base", 247577856.0, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *sets[] = {config_set(cases[i].model)};
        xs_scenario s;
        xs_workload wl;
        build_ok(sets, 1, &s, &wl);
        CU_ASSERT_EQUAL(s.model.family, XS_FAMILY_T5);
        CU_ASSERT_EQUAL(s.model.arch, XS_ENCODER_DECODER);
        CU_ASSERT_EQUAL(s.model.tied, cases[i].tied);
        CU_ASSERT_EQUAL(s.model.gated_ffn, cases[i].gated);
        CU_ASSERT_EQUAL(s.model.relative_buckets, 32);
        CU_ASSERT_EQUAL(xs_model_decoder_layers(&s.model), 12);
        CU_ASSERT_DOUBLE_EQUAL(wl.params, cases[i].params, 0.5);
        CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, wl.params, 0.5);
        if (fabs(wl.params - cases[i].params) > 0.5)
            fprintf(stderr, "\n%s: %.0f parameters, transformers %.0f\n", cases[i].model,
                    wl.params, cases[i].params);
        xs_wl_free(&wl);
    }
}

/* An encoder layer runs q, k, v, o, wi, wo (gated: wi_0, wi_1): 6 (7)
 * GEMMs forward, each with a dX and a dW GEMM backward; a decoder layer
 * adds the cross-attention's q, k, v, o: 10 (11). Two batched GEMMs an
 * attention (scores, context), four in its backward. */
static void layers_should_have_their_gemms(void)
{
    static const struct {
        const char *model;
        int enc, dec;
    } cases[] = {{"t5-base", 6, 10}, {"t5-v1_1-base", 7, 11}};
    for (size_t i = 0; i < 2; i++) {
        const char *sets[] = {config_set(cases[i].model)};
        xs_scenario s;
        xs_workload wl;
        build_ok(sets, 1, &s, &wl);
        for (int l = 0; l < 12; l += 11) {
            CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_GEMM, XS_PH_FWD, l, "enc."), cases[i].enc);
            CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_GEMM, XS_PH_BWD, l, "enc."), 2 * cases[i].enc);
            CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_GEMM, XS_PH_FWD, l, "dec."), cases[i].dec);
            CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_GEMM, XS_PH_BWD, l, "dec."), 2 * cases[i].dec);
            CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_BGEMM, XS_PH_FWD, l, "enc."), 2);
            CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_BGEMM, XS_PH_FWD, l, "dec."), 4);
            CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_BGEMM, XS_PH_BWD, l, "dec."), 8);
            /* no 1/sqrt(d) scaling: T5's initialization folds it into q */
            CU_ASSERT_PTR_NULL(tu_find_op(&wl, "enc.attn.scale", l));
            CU_ASSERT_PTR_NULL(tu_find_op(&wl, "dec.attn.scale", l));
        }
        CU_ASSERT_EQUAL(count_ops(&wl, XS_OP_GEMM, XS_PH_FWD, -1, "head.lm"), 1);
        xs_wl_free(&wl);
    }
}

/* Every weight multiplies the rows it is applied to three times (forward,
 * dX, dW: 6 FLOPs a weight a row): the encoder's and the cross-attention's
 * k and v over the source tokens, everything else of the decoder and the
 * LM head over the target tokens. The GEMM FLOPs of the step are exactly
 * that sum. */
static void gemm_flops_should_follow_the_rows_each_weight_sees(void)
{
    const char *models[] = {"t5-base", "t5-v1_1-base"};
    for (size_t i = 0; i < 2; i++) {
        const char *sets[] = {config_set(models[i]), "train.target_seq=96"};
        xs_scenario s;
        xs_workload wl;
        build_ok(sets, 2, &s, &wl);
        double gemm = 0;
        for (size_t k = 0; k < wl.n; k++)
            if (wl.ops[k].kind == XS_OP_GEMM)
                gemm += wl.ops[k].flops * (double)wl.ops[k].count;
        const xs_model *m = &s.model;
        double h = (double)m->hidden, f = (double)m->ffn, V = (double)m->vocab;
        double ffn = (m->gated_ffn ? 3 : 2) * h * f;
        double Te = (double)(s.train.batch * s.train.seq);
        double Td = (double)(s.train.batch * s.train.target_seq);
        double L = (double)m->layers, Ld = (double)xs_model_decoder_layers(m);
        double want = 6 * (L * (4 * h * h + ffn) * Te +
                           Ld * ((4 * h * h + 2 * h * h + ffn) * Td + 2 * h * h * Te) +
                           V * h * Td);
        CU_ASSERT_DOUBLE_EQUAL(gemm, want, 1e-9 * want);
        if (fabs(gemm - want) > 1e-9 * want)
            fprintf(stderr, "\n%s: GEMM FLOPs %.6g, expected %.6g\n", models[i], gemm, want);
        xs_wl_free(&wl);
    }
}

/* Cross-attention: q over the target rows, k and v over the encoder's
 * output (source rows), scores target x source, in every decoder layer. */
static void cross_attention_should_read_the_encoder_length(void)
{
    const char *sets[] = {"train.seq=512", "train.target_seq=64", "train.batch=2"};
    xs_scenario s;
    xs_workload wl;
    build_ok(sets, 3, &s, &wl);
    for (int l = 0; l < 12; l++) {
        const xs_op *q = tu_find_op(&wl, "dec.xattn.q", l);
        const xs_op *k = tu_find_op(&wl, "dec.xattn.k", l);
        const xs_op *v = tu_find_op(&wl, "dec.xattn.v", l);
        const xs_op *sc = tu_find_op(&wl, "dec.xattn.scores", l);
        const xs_op *self = tu_find_op(&wl, "dec.attn.scores", l);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
        CU_ASSERT_PTR_NOT_NULL_FATAL(self);
        CU_ASSERT_EQUAL(q->m, 2 * 64);
        CU_ASSERT_EQUAL(k->m, 2 * 512);
        CU_ASSERT_EQUAL(v->m, 2 * 512);
        CU_ASSERT_EQUAL(sc->m, 64);
        CU_ASSERT_EQUAL(sc->n, 512);
        CU_ASSERT_EQUAL(sc->batch, 2 * 12);
        CU_ASSERT_EQUAL(self->m, 64);
        CU_ASSERT_EQUAL(self->n, 64);
    }
    const xs_op *enc = tu_find_op(&wl, "enc.attn.scores", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
    CU_ASSERT_EQUAL(enc->m, 512);
    CU_ASSERT_EQUAL(enc->n, 512);
    xs_wl_free(&wl);
}

/* The relative position bias: computed once a stack, in its first layer
 * (an embedding lookup of buckets x heads for every query-key pair), added
 * to the scores of every self-attention; the cross-attention adds a bias
 * of zeros plus the mask, made once in the first decoder layer. */
static void position_bias_should_be_built_in_layer_zero_only(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, 0, &s, &wl);
    const char *once[] = {"enc.attn.bias.embed", "dec.attn.bias.embed", "dec.xattn.bias.zeros"};
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, once[i], 0));
        for (int l = 1; l < 12; l++)
            CU_ASSERT_PTR_NULL(tu_find_op(&wl, once[i], l));
    }
    const xs_op *lookup = tu_find_op(&wl, "enc.attn.bias.embed", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lookup);
    const char *every[] = {"enc.attn.bias_add", "dec.attn.bias_add", "dec.xattn.bias_add"};
    for (size_t i = 0; i < 3; i++)
        for (int l = 0; l < 12; l++)
            CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, every[i], l));
    /* the tied head scales the decoder output by d_model^-0.5 first */
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.scale", -1));
    xs_wl_free(&wl);
    const char *v11[] = {config_set("t5-v1_1-base")};
    build_ok(v11, 1, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.scale", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "enc.ffn.wi_1", 3));
    xs_wl_free(&wl);
}

/* Every tensor kept is released, every gradient made once, in each
 * precision t5 runs in and for both FFNs. */
static void t5_kept_and_released_should_balance(void)
{
    const char *v11 = config_set("t5-v1_1-base");
    const char *const cases[][2] = {
        {"train.precision=fp32", NULL},
        {"train.precision=amp_fp16", NULL},
        {"train.precision=amp_bf16", "train.grad_accum=2"},
        {"train.precision=tf32", NULL},
        {"train.precision=amp_bf16", v11},
        {"train.precision=fp32", v11},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *sets[2] = {cases[i][0], cases[i][1]};
        xs_scenario s;
        xs_workload wl;
        build_ok(sets, cases[i][1] ? 2 : 1, &s, &wl);
        tu_check_memory_balance(&s, &wl);
        xs_wl_free(&wl);
    }
}

/* Config keys that change the op list and are not modelled are refused by
 * name, with the file; so are options t5 does not model. */
static void t5_configs_should_refuse_what_is_not_modelled(void)
{
    static const struct {
        const char *extra; /* keys added after a t5-small-like config's */
        const char *says;
    } cases[] = {
        {"\"d_kv\":128,", "'d_kv' x num_heads (128 x 8) must equal d_model (512)"},
        {"\"feed_forward_proj\":\"gated-silu\",", "'feed_forward_proj' must be \"relu\""},
        {"\"quantization_config\":{\"bits\":4},", "'quantization_config' is not modelled"},
        {"\"is_encoder_decoder\":false,", "'is_encoder_decoder' must be true"},
        {"\"dense_act_fn\":\"silu\",", "'dense_act_fn' must be \"relu\""},
        {"\"model_type\":\"mt5\",", "'model_type' must be one of"},
    };
    char text[2048], set[1024];
    xs_error err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* a repeated key takes its last value: the extra key goes last */
        snprintf(text, sizeof text,
                 "{\"model_type\":\"t5\",\"d_model\":512,\"d_ff\":2048,\"num_layers\":6,"
                 "\"num_heads\":8,\"vocab_size\":32128,%.*s}",
                 (int)strlen(cases[i].extra) - 1, cases[i].extra);
        char name[32];
        snprintf(name, sizeof name, "t5-bad%zu.json", i);
        snprintf(set, sizeof set, "model.hf_config=%s", tu_write(name, text));
        const char *sets[] = {set};
        xs_scenario s;
        CU_ASSERT_NOT_EQUAL(xs_scn_open(SCN, sets, 1, &s, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, name)); /* names the file */
        if (!strstr(err.msg, cases[i].says))
            fprintf(stderr, "\ncase %zu: %s\n", i, err.msg);
    }
    /* the minimal config loads, with T5Config's defaults */
    snprintf(text, sizeof text,
             "{\"model_type\":\"t5\",\"d_model\":512,\"d_ff\":2048,\"num_layers\":6,"
             "\"num_heads\":8,\"vocab_size\":32128}");
    snprintf(set, sizeof set, "model.hf_config=%s", tu_write("t5-min.json", text));
    const char *sets[] = {set};
    xs_scenario s;
    CU_ASSERT_EQUAL_FATAL(xs_scn_open(SCN, sets, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_model_decoder_layers(&s.model), 6); /* num_decoder_layers: num_layers */
    CU_ASSERT_EQUAL(s.model.relative_buckets, 32);
    CU_ASSERT(s.model.tied);
    CU_ASSERT_EQUAL(s.model.activation, XS_ACT_RELU);
    CU_ASSERT_DOUBLE_EQUAL(s.model.dropout, 0.1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(s.model.attn_dropout, 0.1, 1e-12);
    /* options the family does not model, one line each */
    static const struct {
        const char *set, *says;
    } opts[] = {
        {"train.attention=flash", "does not model train.attention flash"},
        {"train.quant=nf4", "does not model train.quant nf4"},
        {"train.checkpointing=layer", "does not model train.checkpointing layer"},
        {"train.precision=bf16", "does not model train.precision bf16"},
        {"train.kernels=fused", "does not model train.kernels fused"},
        {"train.target_seq=0", "train.target_seq must be at least 1"},
        {"model.head=cls", "needs model.head lm"},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        const char *one[] = {opts[i].set};
        CU_ASSERT_NOT_EQUAL(tu_scn_open_gated(SCN, one, 1, &s, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, opts[i].says));
        if (!strstr(err.msg, opts[i].says))
            fprintf(stderr, "\n%s: %s\n", opts[i].set, err.msg);
    }
    /* and the t5 keys on another family */
    const char *bert[] = {"train.target_seq=128"};
    CU_ASSERT_EQUAL(tu_scn_open_gated("bert-base-squad", bert, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.target_seq needs model.family t5"));
}

/* LoRA with PEFT's default targets for t5 (q and v: every SelfAttention
 * and EncDecAttention of both stacks, 72 linears of t5-base): r (768 +
 * 768) = 12,288 adapter parameters each, 884,736 in all, what PEFT's
 * print_trainable_parameters() prints for them ("trainable params:
 * 884,736 || all params: 248,462,592" for flan-t5-base, the v1.1-base
 * shape: team code index, find_string id 48259133439); the base keeps no
 * weight gradient: only the adapters' GEMMs have a dW. */
static void lora_should_adapt_q_and_v_of_both_stacks(void)
{
    static const struct {
        const char *model;
        double all;
    } cases[] = {{"t5-v1_1-base", 248462592.0}, {"t5-base", 223788288.0}};
    for (size_t i = 0; i < 2; i++) {
        const char *sets[] = {config_set(cases[i].model), "train.lora.rank=8",
                              "train.precision=amp_bf16"};
        xs_scenario s;
        xs_workload wl;
        build_ok(sets, 3, &s, &wl);
        CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, 884736.0, 0.5);
        CU_ASSERT_DOUBLE_EQUAL(wl.params, cases[i].all, 0.5);
        int adapters = 0, base_dw = 0;
        for (size_t k = 0; k < wl.n; k++) {
            const xs_op *op = &wl.ops[k];
            size_t len = strlen(op->name);
            if (op->phase == XS_PH_FWD && strstr(op->name, ".lora_A") &&
                op->kind == XS_OP_GEMM)
                adapters++;
            if (op->kind == XS_OP_GEMM && len > 3 && strcmp(op->name + len - 3, ".dW") == 0 &&
                !strstr(op->name, ".lora_"))
                base_dw++;
        }
        CU_ASSERT_EQUAL(adapters, 72);
        CU_ASSERT_EQUAL(base_dw, 0);
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "dec.xattn.v.lora_B", 11));
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, "enc.attn.k.lora_A", 0));
        tu_check_memory_balance(&s, &wl);
        xs_wl_free(&wl);
    }
    /* all-linear, fp32, and a target the model lacks */
    const char *all[] = {"train.lora.rank=16", "train.lora.targets=all-linear"};
    xs_scenario s;
    xs_workload wl;
    build_ok(all, 2, &s, &wl);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "enc.ffn.wo.lora_A", 5));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.lm.lora_A", -1));
    tu_check_memory_balance(&s, &wl);
    xs_wl_free(&wl);
    const char *gated[] = {config_set("t5-v1_1-base"), "train.lora.rank=8",
                           "train.lora.targets=wi"};
    xs_error err;
    CU_ASSERT_EQUAL(tu_scn_open_gated(SCN, gated, 3, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'wi' names no linear module of this T5 model"));
}

/* predict on the shipped scenario: both lengths in the table and the
 * JSON, the parameter counts, and the tokens counted. */
static void cli_should_predict_the_t5_scenario(void)
{
    tu_result r = tu_run("predict -d a100-sxm4-80gb -s " SCN);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "t5 encoder-decoder, 12 + 12 layers"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "222.9 M parameters"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.out, "source (encoder) seq 1024, target (decoder) seq 128"));
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s " SCN " --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *p = xs_json_path(doc, "scenario.model.params");
    const cJSON *tq = xs_json_path(doc, "scenario.train.target_seq");
    const cJSON *sq = xs_json_path(doc, "scenario.train.seq");
    const cJSON *fam = xs_json_path(doc, "scenario.model.family");
    CU_ASSERT(cJSON_IsNumber(p) && p->valuedouble == 222903552.0);
    CU_ASSERT(cJSON_IsNumber(tq) && tq->valuedouble == 128);
    CU_ASSERT(cJSON_IsNumber(sq) && sq->valuedouble == 1024);
    CU_ASSERT(cJSON_IsString(fam) && strcmp(fam->valuestring, "t5") == 0);
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s " SCN " --set train.attention=flash");
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_free(&r);
}

int tu_add_t5_suite(void)
{
    CU_pSuite s = CU_add_suite("t5", NULL, NULL);
    return !s ||
           !CU_add_test(s, "parameter_counts_should_equal_transformers",
                        parameter_counts_should_equal_transformers) ||
           !CU_add_test(s, "layers_should_have_their_gemms", layers_should_have_their_gemms) ||
           !CU_add_test(s, "gemm_flops_should_follow_the_rows_each_weight_sees",
                        gemm_flops_should_follow_the_rows_each_weight_sees) ||
           !CU_add_test(s, "cross_attention_should_read_the_encoder_length",
                        cross_attention_should_read_the_encoder_length) ||
           !CU_add_test(s, "position_bias_should_be_built_in_layer_zero_only",
                        position_bias_should_be_built_in_layer_zero_only) ||
           !CU_add_test(s, "t5_kept_and_released_should_balance",
                        t5_kept_and_released_should_balance) ||
           !CU_add_test(s, "t5_configs_should_refuse_what_is_not_modelled",
                        t5_configs_should_refuse_what_is_not_modelled) ||
           !CU_add_test(s, "lora_should_adapt_q_and_v_of_both_stacks",
                        lora_should_adapt_q_and_v_of_both_stacks) ||
           !CU_add_test(s, "cli_should_predict_the_t5_scenario", cli_should_predict_the_t5_scenario);
}
