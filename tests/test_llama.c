/* test_llama.c — the llama family (Llama, Mistral, Qwen2 config.json files):
 * parameter counts equal to transformers', GEMM FLOPs against 6 P T, the
 * grouped-query shapes, RMSNorm and rotary ops in every layer, tied and
 * untied heads, the memory bookkeeping, and the config keys refused. */
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

#define SCN "tinyllama-1.1b-finetune"

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

static int build(const char *model, const char *const *more, int n, xs_scenario *s,
                 xs_workload *wl, xs_error *err)
{
    const char *sets[8];
    int k = 0;
    if (model)
        sets[k++] = config_set(model);
    for (int i = 0; i < n && k < 8; i++)
        sets[k++] = more[i];
    char path[512];
    int rc = xs_resolve("scenarios", SCN, path, sizeof path, err);
    if (!rc)
        rc = xs_scn_load(path, sets, k, s, err);
    if (!rc)
        rc = xs_wl_build(s, wl, err);
    return rc;
}

static void build_ok(const char *model, const char *const *more, int n, xs_scenario *s,
                     xs_workload *wl)
{
    xs_error err;
    int rc = build(model, more, n, s, wl, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
}

/* sum(p.numel() for p in model.parameters()) of LlamaForCausalLM /
 * MistralForCausalLM / Qwen2ForCausalLM, computed from each shipped
 * config.json and the modules of transformers' modeling_llama.py,
 * modeling_mistral.py and modeling_qwen2.py (scenarios/models/README.md
 * has the sums): L (q + k + v + o + gate + up + down + 2 norms) + the
 * embedding + the untied head + the final norm. */
static void parameter_counts_should_equal_transformers(void)
{
    static const struct {
        const char *model;
        double params;
    } cases[] = {
        {"llama-2-7b", 6738415616.0},
        {"mistral-7b-v0.1", 7241732096.0},
        {"qwen2-0.5b", 494032768.0}, /* tied: the embedding counted once */
        {"tinyllama-1.1b", 1100048384.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xs_scenario s;
        xs_workload wl;
        build_ok(cases[i].model, NULL, 0, &s, &wl);
        CU_ASSERT_EQUAL(s.model.family, XS_FAMILY_LLAMA);
        CU_ASSERT_DOUBLE_EQUAL(wl.params, cases[i].params, 0.5);
        CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, wl.params, 0.5);
        if (fabs(wl.params - cases[i].params) > 0.5)
            fprintf(stderr, "\n%s: %.0f parameters, transformers %.0f\n", cases[i].model,
                    wl.params, cases[i].params);
        xs_wl_free(&wl);
    }
}

/* A full fine-tune's projection GEMMs cost 6 FLOPs a weight a token
 * (forward, dX, dW): over the step they come within 2% of 6 P T with P
 * the parameters less the token embedding (a gather) and the norms and
 * biases (elementwise); the attention kernels are apart. */
static void gemm_flops_should_be_six_p_per_token(void)
{
    const char *models[] = {"tinyllama-1.1b", "llama-2-7b", "qwen2-0.5b"};
    for (size_t i = 0; i < 3; i++) {
        xs_scenario s;
        xs_workload wl;
        build_ok(models[i], NULL, 0, &s, &wl);
        double gemm = 0;
        for (size_t k = 0; k < wl.n; k++)
            if (wl.ops[k].kind == XS_OP_GEMM)
                gemm += wl.ops[k].flops * (double)wl.ops[k].count;
        double tokens = (double)(s.train.batch * s.train.seq * s.train.grad_accum);
        double V = (double)s.model.vocab, h = (double)s.model.hidden;
        /* the tied head multiplies every token by the embedding's weight */
        double P = wl.params - (s.model.tied ? 0 : V * h);
        double ratio = gemm / (6 * P * tokens);
        CU_ASSERT(fabs(ratio - 1) < 0.02);
        if (fabs(ratio - 1) >= 0.02)
            fprintf(stderr, "\n%s: GEMM FLOPs %.4g of 6 P T\n", models[i], ratio);
        xs_wl_free(&wl);
    }
}

/* TinyLlama: 32 query heads, 4 key/value heads of 64: k and v project
 * 2048 onto 256, and their weight gradients are 256 x 2048. */
static void gqa_projections_should_have_kv_shapes(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, NULL, 0, &s, &wl);
    double T = (double)(s.train.batch * s.train.seq);
    for (int l = 0; l < (int)s.model.layers; l++) {
        const xs_op *q = tu_find_op(&wl, "attn.q", l), *k = tu_find_op(&wl, "attn.k", l);
        const xs_op *v = tu_find_op(&wl, "attn.v", l), *kdw = tu_find_op(&wl, "attn.k.dW", l);
        CU_ASSERT_PTR_NOT_NULL_FATAL(q);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT_PTR_NOT_NULL_FATAL(kdw);
        CU_ASSERT_EQUAL(q->m, (int64_t)T);
        CU_ASSERT_EQUAL(q->n, 2048);
        CU_ASSERT_EQUAL(k->n, 256);
        CU_ASSERT_EQUAL(k->k, 2048);
        CU_ASSERT_EQUAL(v->n, 256);
        CU_ASSERT_EQUAL(kdw->m, 256);
        CU_ASSERT_EQUAL(kdw->n, 2048);
        /* no bias (Llama's attention_bias false): no bias gradient */
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.k.db", l));
        /* the gated MLP: gate, up (h x f) and down (f x h) */
        const xs_op *g = tu_find_op(&wl, "ffn.gate", l), *d = tu_find_op(&wl, "ffn.down", l);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        CU_ASSERT_EQUAL(g->n, 5632);
        CU_ASSERT_EQUAL(d->k, 5632);
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "ffn.up", l));
    }
    /* the grouped flash backward sums dk and dv over each group: 2 more
     * launches; with one kv head a query head (Llama-2-7B) it does not */
    const xs_op *fb = tu_find_op(&wl, "attn.flash.bwd", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fb);
    CU_ASSERT_EQUAL(fb->launches, 5);
    xs_wl_free(&wl);
    build_ok("llama-2-7b", NULL, 0, &s, &wl);
    fb = tu_find_op(&wl, "attn.flash.bwd", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fb);
    CU_ASSERT_EQUAL(fb->launches, 3);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "attn.k", 0)->n, 4096);
    xs_wl_free(&wl);
}

/* Every layer runs two RMSNorms and rotary on q and k; no LayerNorm, no
 * learned positions, no dropout anywhere. */
static void every_layer_should_have_rmsnorm_and_rotary(void)
{
    static const char *const per_layer[] = {
        "input_norm.pow",       "input_norm.rsqrt",    "input_norm.weight",
        "post_attn_norm.pow",   "post_attn_norm.mean", "attn.rope.q.neg",
        "attn.rope.q.cat",      "attn.rope.q.mul_cos", "attn.rope.q.mul_sin",
        "attn.rope.q.add",      "attn.rope.k.mul_cos", "attn.rope.q.bwd",
        "attn.rope.k.bwd",      "ffn.silu",            "ffn.mul",
        "input_norm.pow.bwd",   "attn.q.cast",         "attn.k.cast",
    };
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, NULL, 0, &s, &wl);
    for (int l = 0; l < (int)s.model.layers; l++)
        for (size_t i = 0; i < sizeof per_layer / sizeof per_layer[0]; i++) {
            CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, per_layer[i], l));
            if (!tu_find_op(&wl, per_layer[i], l))
                fprintf(stderr, "\nlayer %d: no %s\n", l, per_layer[i]);
        }
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "norm.pow", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "rope.cos_sin", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "embed.position", -1));
    for (size_t k = 0; k < wl.n; k++) {
        CU_ASSERT(wl.ops[k].kind != XS_OP_NORM); /* LayerNorm's kind */
        CU_ASSERT(strstr(wl.ops[k].name, "dropout") == NULL);
        CU_ASSERT(strstr(wl.ops[k].name, "repeat_kv") == NULL); /* SDPA's enable_gqa */
    }
    /* the rotary elements: q's are heads / kv_heads times k's */
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&wl, "attn.rope.q.add", 0)->elems,
                           8 * tu_find_op(&wl, "attn.rope.k.add", 0)->elems, 1);
    /* under autocast the norm runs in fp32 from an fp32 stream: no casts
     * inside it; in pure bf16 it casts to fp32 and back */
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "input_norm.to_fp32", 0));
    xs_wl_free(&wl);
    const char *bf16[] = {"train.precision=bf16"};
    build_ok(NULL, bf16, 1, &s, &wl);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "input_norm.to_fp32", 0));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "input_norm.to_input", 0));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.cast", 0)); /* rotary stays in bf16 */
    xs_wl_free(&wl);
}

/* Eager attention copies k and v to every query head (repeat_kv) and
 * sums their gradients back; with kv_heads = heads it copies nothing. */
static void eager_attention_should_repeat_kv(void)
{
    const char *unfused[] = {"train.attention=unfused"};
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, unfused, 1, &s, &wl);
    const xs_op *r = tu_find_op(&wl, "attn.repeat_kv", 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_DOUBLE_EQUAL(r->elems, (double)(s.train.batch * s.train.seq * s.model.hidden), 1);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.repeat_kv.bwd", 3));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.softmax", 3));
    xs_wl_free(&wl);
    build_ok("llama-2-7b", unfused, 1, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.repeat_kv", 3));
    xs_wl_free(&wl);
}

/* Qwen2: q, k and v have biases and o has none; its head is the
 * embedding (tied): no V x h weight of its own, the two gradients summed. */
static void qwen2_should_have_qkv_biases_and_a_tied_head(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok("qwen2-0.5b", NULL, 0, &s, &wl);
    CU_ASSERT_EQUAL(s.model.attention_bias, XS_ATTN_BIAS_QKV);
    CU_ASSERT_TRUE(s.model.tied);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.q.db", 0));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.v.db", 0));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.out.db", 0));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.tied_grad_sum", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.logits.float", -1));
    xs_wl_free(&wl);
    build_ok(NULL, NULL, 0, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.tied_grad_sum", -1));
    xs_wl_free(&wl);
    /* untying Qwen2 adds exactly the head's V x h weight */
    const char *untied[] = {"model.tied=false"};
    build_ok("qwen2-0.5b", untied, 1, &s, &wl);
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 494032768.0 + 151936.0 * 896, 0.5);
    xs_wl_free(&wl);
}

/* What the forward keeps the backward releases, and every parameter gets
 * one gradient, in each precision and attention path. */
static void llama_kept_and_released_should_balance(void)
{
    static const struct {
        const char *model;
        const char *sets[3];
    } cases[] = {
        {NULL, {NULL}},
        {NULL, {"train.attention=unfused", NULL}},
        {NULL, {"train.precision=fp32", NULL}},
        {NULL, {"train.precision=bf16", "train.grad_accum=3", NULL}},
        {NULL, {"train.precision=amp_fp16", "train.amp_mode=o2", NULL}},
        {NULL, {"model.head=cls", NULL}},
        {"qwen2-0.5b", {NULL}},
        {"qwen2-0.5b", {"train.attention=unfused", "train.precision=fp32", NULL}},
        {"mistral-7b-v0.1", {NULL}},
        {"llama-2-7b", {"model.attention_bias=all", "model.mlp_bias=true", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = 0;
        while (n < 3 && cases[i].sets[n])
            n++;
        xs_scenario s;
        xs_workload wl;
        build_ok(cases[i].model, cases[i].sets, n, &s, &wl);
        tu_check_memory_balance(&s, &wl);
        xs_wl_free(&wl);
    }
}

/* Under the autocast recipe a layer keeps, per token: the two norms' fp32
 * input, rsqrt and normalized output (2 x (4h + 4 + 4h)), the bf16 casts
 * of x that q, k, v, gate and up each read (5 x 2h), the flash kernel's q, k, v, output
 * and logsumexp (2h + 2 x 2 kv d + 2h + 4a), o_proj's input (2h), silu's
 * input, the mul's two operands and down's input (4 x 2f), and the four
 * weight casts autocast keeps (per layer, not per token). */
static void layer_should_keep_what_autograd_saves(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, NULL, 0, &s, &wl);
    double T = (double)(s.train.batch * s.train.seq), h = 2048, f = 5632, kvd = 256, a = 32;
    double per_token = 2 * (4 * h + 4 + 4 * h) + 5 * 2 * h +
                       (2 * h + 2 * 2 * kvd + 2 * h + 4 * a) + 2 * h + 4 * 2 * f;
    double weights = 2 * (2 * h * h + 2 * h * kvd + 3 * h * f);
    double saved = 0;
    for (size_t k = 0; k < wl.n; k++)
        if (wl.ops[k].layer == 0 && wl.ops[k].phase == XS_PH_FWD)
            saved += wl.ops[k].mem.saved;
    double want = T * per_token + weights;
    CU_ASSERT_DOUBLE_EQUAL(saved, want, 1e-9 * want);
    if (fabs(saved - want) > 1e-9 * want)
        fprintf(stderr, "\nlayer 0 keeps %.6g bytes, expected %.6g\n", saved, want);
    xs_wl_free(&wl);
}

/* Config keys that would change the op list and are not modelled are
 * refused by name; so is an unknown model_type, with the list. */
static void llama_configs_should_refuse_what_is_not_modelled(void)
{
    static const struct {
        const char *extra; /* keys added to a Llama config */
        const char *says;
    } cases[] = {
        {"\"head_dim\":128,", "'head_dim' must equal hidden_size / num_attention_heads"},
        {"\"pretraining_tp\":2,", "'pretraining_tp' must be 1"},
        {"\"hidden_act\":\"gelu\",", "'hidden_act' must be \"silu\""},
        {"\"quantization_config\":{\"bits\":4},", "'quantization_config' is not modelled"},
        {"\"layer_types\":[\"sliding_attention\"],", "'layer_types' must list only"},
        {"\"model_type\":\"bart\",",
         "'model_type' must be one of bert|roberta|gpt2|llama|mistral|qwen2|distilbert|vit|t5"},
    };
    char root[512], text[2048], set[1024];
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_data_root(root, sizeof root, &err), XS_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* a repeated key takes its last value: the extra key goes last */
        snprintf(text, sizeof text,
                 "{\"model_type\":\"llama\",\"hidden_size\":256,\"intermediate_size\":512,"
                 "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":1000,"
                 "\"max_position_embeddings\":2048,%.*s}",
                 (int)strlen(cases[i].extra) - 1, cases[i].extra);
        char name[32];
        snprintf(name, sizeof name, "llama-bad%zu.json", i);
        snprintf(set, sizeof set, "model.hf_config=%s", tu_write(name, text));
        const char *sets[] = {set};
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_NOT_EQUAL(build(NULL, sets, 1, &s, &wl, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, name)); /* names the file */
        if (!strstr(err.msg, cases[i].says))
            fprintf(stderr, "\ncase %zu: %s\n", i, err.msg);
    }
    /* the same minimal config loads: defaults as LlamaConfig's */
    snprintf(text, sizeof text,
             "{\"model_type\":\"llama\",\"hidden_size\":256,\"intermediate_size\":512,"
             "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":1000,"
             "\"max_position_embeddings\":2048}");
    snprintf(set, sizeof set, "model.hf_config=%s", tu_write("llama-min.json", text));
    const char *sets[] = {set};
    xs_scenario s;
    xs_workload wl;
    CU_ASSERT_EQUAL_FATAL(build(NULL, sets, 1, &s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_model_kv_heads(&s.model), 4); /* num_key_value_heads absent */
    CU_ASSERT_FALSE(s.model.tied);                   /* LlamaConfig: tie_word_embeddings False */
    CU_ASSERT_EQUAL(s.model.activation, XS_ACT_SILU);
    xs_wl_free(&wl);
    /* Mistral's window: a longer sequence than it is refused, not mis-modelled */
    const char *longer[] = {config_set("mistral-7b-v0.1"), "train.seq=8192"};
    CU_ASSERT_EQUAL(build(NULL, longer, 2, &s, &wl, &err), XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.sliding_window (4096)"));
    /* the llama-only keys are refused on a classic model */
    const char *classic[] = {"model.kv_heads=2"};
    char path[512];
    CU_ASSERT_EQUAL_FATAL(xs_resolve("scenarios", "gpt2-medium-finetune", path, sizeof path, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(tu_scn_load_gated(path, classic, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs model.family llama"));
}

/* The CLI: predict's JSON carries the parameter counts and the llama
 * keys; a config of an unknown model_type is one line and a non-zero exit. */
static void cli_should_report_params_and_refuse_unknown_types(void)
{
    tu_result r = tu_run("predict -d a100-sxm4-80gb -s " SCN " --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *p = xs_json_path(doc, "scenario.model.params");
    const cJSON *t = xs_json_path(doc, "scenario.model.trainable_params");
    const cJSON *kv = xs_json_path(doc, "scenario.model.kv_heads");
    CU_ASSERT(cJSON_IsNumber(p) && p->valuedouble == 1100048384.0);
    CU_ASSERT(cJSON_IsNumber(t) && t->valuedouble == 1100048384.0);
    CU_ASSERT(cJSON_IsNumber(kv) && kv->valuedouble == 4);
    cJSON_Delete(doc);
    tu_run_free(&r);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "predict -s " SCN " --set model.hf_config=%s",
             tu_write("bart-config.json", "{\"model_type\":\"bart\",\"d_model\":512}"));
    r = tu_run(cmd);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "bart-config.json: field 'model_type' must be one of"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "llama|mistral|qwen2|distilbert|vit|t5, got \"bart\""));
    tu_run_free(&r);
}

int tu_add_llama_suite(void)
{
    CU_pSuite s = CU_add_suite("llama", NULL, NULL);
    return !s ||
           !CU_add_test(s, "parameter_counts_should_equal_transformers",
                        parameter_counts_should_equal_transformers) ||
           !CU_add_test(s, "gemm_flops_should_be_six_p_per_token",
                        gemm_flops_should_be_six_p_per_token) ||
           !CU_add_test(s, "gqa_projections_should_have_kv_shapes",
                        gqa_projections_should_have_kv_shapes) ||
           !CU_add_test(s, "every_layer_should_have_rmsnorm_and_rotary",
                        every_layer_should_have_rmsnorm_and_rotary) ||
           !CU_add_test(s, "eager_attention_should_repeat_kv", eager_attention_should_repeat_kv) ||
           !CU_add_test(s, "qwen2_should_have_qkv_biases_and_a_tied_head",
                        qwen2_should_have_qkv_biases_and_a_tied_head) ||
           !CU_add_test(s, "llama_kept_and_released_should_balance",
                        llama_kept_and_released_should_balance) ||
           !CU_add_test(s, "layer_should_keep_what_autograd_saves",
                        layer_should_keep_what_autograd_saves) ||
           !CU_add_test(s, "llama_configs_should_refuse_what_is_not_modelled",
                        llama_configs_should_refuse_what_is_not_modelled) ||
           !CU_add_test(s, "cli_should_report_params_and_refuse_unknown_types",
                        cli_should_report_params_and_refuse_unknown_types);
}
