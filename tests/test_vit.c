/* test_vit.c — the vit family (ViTForImageClassification config.json
 * files): parameter counts equal to transformers' and PEFT's, the sequence
 * the patches make, the patch embedding's GEMM, the layer's ops, the
 * memory bookkeeping in every precision and recipe, and the config keys
 * and scenario values refused. */
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
#include "validate.h"
#include "workload.h"

#define SCN "vit-base-finetune"

static int build(const char *const *sets, int n, xs_scenario *s, xs_workload *wl, xs_error *err)
{
    return tu_build_err(SCN, sets, n, s, wl, err);
}

static void build_ok(const char *const *sets, int n, xs_scenario *s, xs_workload *wl)
{
    CU_ASSERT_EQUAL_FATAL(tu_build(SCN, sets, n, s, wl), XS_OK);
}

/* ViT-B/16 at 224 with its 1000-label ImageNet classifier: 86,567,656
 * parameters (torchvision's ViT_B_16_Weights.IMAGENET1K_V1 num_params, the
 * same modules: a 3 x 16 x 16 convolution to 768, the class token, 197
 * positions, 12 layers of q, k, v, o with biases, two LayerNorms and the
 * 3072 MLP, the final LayerNorm, the classifier; team code index,
 * find_string "86567656"). With a new 101-label classifier (the shipped
 * scenario) PEFT's image-classification guide prints "trainable params:
 * 85876325 || all params: 85876325" before wrapping, and with LoRA r 16 on
 * query and value and the classifier in modules_to_save "trainable params:
 * 667493 || all params: 86466149" (find_string "trainable params: 667493",
 * ids 16620563774 and 32129396714): 12 x 2 x 16 x (768 + 768) adapter
 * weights and the 77,669 of the classifier trained, the base plus the
 * adapters in all. */
static void parameter_counts_should_equal_transformers_and_peft(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *imagenet[] = {"model.labels=1000"};
    build_ok(imagenet, 1, &s, &wl);
    CU_ASSERT_EQUAL(s.model.family, XS_FAMILY_VIT);
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 86567656.0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, 86567656.0, 0.5);
    CU_ASSERT_EQUAL(wl.tensors, 200);
    xs_wl_free(&wl);
    build_ok(NULL, 0, &s, &wl);
    CU_ASSERT_EQUAL(s.model.labels, 101);
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 85876325.0, 0.5);
    xs_wl_free(&wl);
    const char *lora[] = {"train.lora.rank=16", "train.lora.alpha=16", "train.lora.dropout=0.1"};
    build_ok(lora, 3, &s, &wl);
    CU_ASSERT_TRUE(s.train.lora_train_head);
    CU_ASSERT_DOUBLE_EQUAL(wl.trainable_params, 667493.0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 86466149.0, 0.5);
    /* PEFT's default targets for vit: query and value, no other linear */
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.q.lora_A", 5));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.v.lora_B", 5));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.k.lora_A", 5));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "ffn.up.lora_A", 5));
    /* the frozen patch embedding has no backward at all */
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "embed.patch.dW", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "embed.cat.bwd", -1));
    xs_wl_free(&wl);
}

/* The sequence is (image / patch)^2 patches and the class token: 197 at
 * 224 / 16, 577 at 384 / 16, 50 at 224 / 32; train.seq and the position
 * table follow, and the scores are seq x seq. */
static void seq_should_follow_the_patches(void)
{
    static const struct {
        const char *sets[2];
        int64_t seq;
    } cases[] = {
        {{NULL}, 197},
        {{"model.image_size=384", NULL}, 577},
        {{"model.patch_size=32", NULL}, 50},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = cases[i].sets[0] ? 1 : 0;
        xs_scenario s;
        xs_workload wl;
        build_ok(cases[i].sets, n, &s, &wl);
        CU_ASSERT_EQUAL(s.train.seq, cases[i].seq);
        CU_ASSERT_EQUAL(s.model.max_positions, cases[i].seq);
        CU_ASSERT_EQUAL(xs_model_vit_seq(&s.model), cases[i].seq);
        CU_ASSERT_EQUAL(wl.tokens_per_step, s.train.batch * s.train.grad_accum * cases[i].seq);
        const xs_op *f = tu_find_op(&wl, "attn.flash", 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(f->m, cases[i].seq);
        CU_ASSERT_EQUAL(f->n, cases[i].seq);
        xs_wl_free(&wl);
    }
}

/* The patch embedding is the GEMM over patches, [b np, C p^2] x [C p^2,
 * h], with its layout pass over every pixel, the separate bias add, a
 * weight gradient over the same rows and no input gradient. Under
 * autocast the fp32 pixels are cast first. */
static void patch_embedding_should_be_a_gemm_over_patches(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, 0, &s, &wl);
    double b = (double)s.train.batch, pixels = b * 3 * 224 * 224;
    const xs_op *g = tu_find_op(&wl, "embed.patch", -1);
    const xs_op *dw = tu_find_op(&wl, "embed.patch.dW", -1);
    const xs_op *lay = tu_find_op(&wl, "embed.patch.layout", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lay);
    CU_ASSERT_EQUAL(g->kind, XS_OP_GEMM);
    CU_ASSERT_EQUAL(g->m, (int64_t)(b * 196));
    CU_ASSERT_EQUAL(g->n, 768);
    CU_ASSERT_EQUAL(g->k, 3 * 16 * 16);
    CU_ASSERT_DOUBLE_EQUAL(g->flops, 2 * b * 196 * 768 * 768, 1);
    CU_ASSERT_EQUAL(dw->m, 768);
    CU_ASSERT_EQUAL(dw->n, 768);
    CU_ASSERT_EQUAL(dw->k, (int64_t)(b * 196));
    CU_ASSERT_DOUBLE_EQUAL(lay->elems, pixels, 0.5);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "embed.patch.dX", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "embed.patch.cast_x", -1)); /* fp32 */
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "embed.patch.bias_add", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "embed.patch.db", -1));
    /* the fp32 pixel batch is counted: the first op keeps it */
    CU_ASSERT(lay->mem.saved >= pixels * 4);
    xs_wl_free(&wl);
    const char *amp[] = {"train.precision=amp_fp16"};
    build_ok(amp, 1, &s, &wl);
    const xs_op *cx = tu_find_op(&wl, "embed.patch.cast_x", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cx);
    CU_ASSERT_DOUBLE_EQUAL(cx->elems, pixels, 0.5);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "embed.patch", -1)->dtype, XS_FP16);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.logits.cast", -1));
    xs_wl_free(&wl);
}

/* Every layer is pre-LN: layernorm_before, q, k, v (with biases: qkv_bias),
 * the attention, the output dense, the residual, layernorm_after, the
 * MLP; the eager path has no mask op; the classifier reads b rows and
 * scores model.labels classes. GEMM FLOPs are 6 P T over the layers'
 * weights to within the patch and class-token rows. */
static void layers_and_head_should_be_as_transformers_runs_them(void)
{
    static const char *const per_layer[] = {
        "ln_before", "attn.q", "attn.k", "attn.v", "attn.flash", "attn.merge", "attn.out",
        "attn.residual", "ln_after", "ffn.up", "ffn.gelu", "ffn.down", "ffn.residual",
        "attn.q.db", "attn.k.db", "attn.v.db", "attn.flash.bwd", "ln_before.bwd",
    };
    xs_scenario s;
    xs_workload wl;
    build_ok(NULL, 0, &s, &wl);
    for (int l = 0; l < 12; l++)
        for (size_t i = 0; i < sizeof per_layer / sizeof per_layer[0]; i++) {
            CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, per_layer[i], l));
            if (!tu_find_op(&wl, per_layer[i], l))
                fprintf(stderr, "\nlayer %d: no %s\n", l, per_layer[i]);
        }
    const xs_op *cls = tu_find_op(&wl, "head.classifier", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cls);
    CU_ASSERT_EQUAL(cls->m, s.train.batch);
    CU_ASSERT_EQUAL(cls->n, 101);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "layernorm", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "head.first_token.bwd", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "head.pooler", -1)); /* no pooler */
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "embed.word", -1));  /* no token table */
    double gemm = 0;
    for (size_t k = 0; k < wl.n; k++)
        if (wl.ops[k].kind == XS_OP_GEMM && wl.ops[k].layer >= 0)
            gemm += wl.ops[k].flops * (double)wl.ops[k].count;
    double T = (double)(s.train.batch * s.train.seq * s.train.grad_accum);
    double P = 12 * (4 * 768.0 * 768 + 2 * 768.0 * 3072);
    CU_ASSERT_DOUBLE_EQUAL(gemm / (6 * P * T), 1, 1e-9);
    xs_wl_free(&wl);
    /* the eager attention: scale, softmax, no mask; under autocast the
     * softmax input is cast to fp32 and the probabilities back */
    const char *eager[] = {"train.attention=unfused", "train.precision=amp_bf16",
                           "model.qkv_bias=false"};
    build_ok(eager, 3, &s, &wl);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.scale", 3));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.softmax.cast", 3));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.probs.cast", 3));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.merge", 3));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.mask", 3));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.causal_mask", 3));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.db", 3)); /* qkv_bias false */
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.out.db", 3));
    const xs_op *sc = tu_find_op(&wl, "attn.scores", 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    CU_ASSERT_EQUAL(sc->m, 197);
    CU_ASSERT_EQUAL(sc->batch, s.train.batch * 12);
    xs_wl_free(&wl);
}

/* What the forward keeps the backward releases, every trainable parameter
 * gets one gradient, in each precision, attention path and recipe. */
static void vit_kept_and_released_should_balance(void)
{
    static const char *const cases[][4] = {
        {NULL},
        {"train.precision=amp_fp16", NULL},
        {"train.precision=amp_bf16", "train.attention=unfused", NULL},
        {"train.attention=unfused", "model.dropout=0.1", "model.attn_dropout=0.1", NULL},
        {"train.precision=bf16", "train.grad_accum=3", NULL},
        {"train.precision=amp_fp16", "train.amp_mode=o2", NULL},
        {"train.checkpointing=layer", "train.precision=amp_bf16", NULL},
        {"train.lora.rank=16", NULL},
        {"train.lora.rank=8", "train.checkpointing=layer", "train.precision=amp_fp16", NULL},
        {"train.lora.rank=8", "train.lora.targets=all-linear", "train.lora.train_head=false",
         NULL},
    };
    tu_check_balance_recipes(SCN, cases, sizeof cases / sizeof cases[0]);
}

/* Checkpointing reruns each layer's forward in the backward, exactly
 * once: twelve more copies of a layer's GEMMs, no more. */
static void checkpointing_should_rerun_each_layer_once(void)
{
    xs_scenario s;
    xs_workload plain, ck;
    build_ok(NULL, 0, &s, &plain);
    const char *sets[] = {"train.checkpointing=layer"};
    build_ok(sets, 1, &s, &ck);
    double fp = 0, fc = 0, rc = 0;
    for (size_t k = 0; k < plain.n; k++)
        if (plain.ops[k].phase == XS_PH_FWD && plain.ops[k].layer >= 0)
            fp += plain.ops[k].flops * (double)plain.ops[k].count;
    for (size_t k = 0; k < ck.n; k++) {
        double f = ck.ops[k].flops * (double)ck.ops[k].count;
        if (ck.ops[k].recompute)
            rc += f;
        else if (ck.ops[k].phase == XS_PH_FWD && ck.ops[k].layer >= 0)
            fc += f;
    }
    CU_ASSERT_DOUBLE_EQUAL(fc, fp, 1e-9 * fp);
    CU_ASSERT_DOUBLE_EQUAL(rc, fp, 1e-9 * fp);
    xs_wl_free(&plain);
    xs_wl_free(&ck);
}

/* Config keys that change the op list and are not modelled are refused by
 * name, with the file; so are a train.seq the patches do not make, an
 * image that is not whole patches, and the vit keys on another family. */
static void vit_configs_and_scenarios_should_refuse_what_is_not_modelled(void)
{
    static const struct {
        const char *extra; /* keys put first in a ViT config */
        const char *says;
    } cases[] = {
        {"\"problem_type\":\"regression\",", "'problem_type' must be"},
        {"\"num_labels\":1,", "one label is a regression"},
        {"\"num_labels\":3,\"id2label\":{\"0\":\"a\",\"1\":\"b\"},",
         "'num_labels' (3) must equal the 2 labels of 'id2label'"},
        {"\"image_size\":[224,160],", "'image_size' must be an integer or an [n, n] pair"},
        {"\"quantization_config\":{\"bits\":4},", "'quantization_config' is not modelled"},
        {"\"image_size\":225,", "model.image_size a positive multiple of model.patch_size"},
        {"\"hidden_act\":\"silu\",", "model.activation silu needs model.family llama"},
    };
    char text[2048], set[1024];
    xs_error err;
    xs_scenario s;
    xs_workload wl;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text,
                 "{%s\"model_type\":\"vit\",\"hidden_size\":192,\"intermediate_size\":768,"
                 "\"num_hidden_layers\":2,\"num_attention_heads\":3}",
                 cases[i].extra);
        char name[32];
        snprintf(name, sizeof name, "vit-bad%zu.json", i);
        snprintf(set, sizeof set, "model.hf_config=%s", tu_write(name, text));
        const char *sets[] = {set};
        CU_ASSERT_NOT_EQUAL(build(sets, 1, &s, &wl, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
        if (!strstr(err.msg, cases[i].says))
            fprintf(stderr, "\ncase %zu: %s\n", i, err.msg);
    }
    /* the minimal config loads with ViTConfig's defaults, in a scenario
     * that states nothing of the model: the head is the classifier, its
     * labels id2label's, [n, n] sizes n, the sequence the patches' */
    tu_write("vit-min.json", "{\"model_type\":\"vit\",\"image_size\":[96,96],"
                             "\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}}");
    const char *min = tu_write("vitmin.json", "{\"id\":\"vitmin\",\"model\":{\"hf_config\":"
                                              "\"vit-min.json\"},\"data\":{\"samples\":100}}");
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(min, NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &wl, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.labels, 3);
    CU_ASSERT_EQUAL(s.model.head, XS_HEAD_CLS);
    CU_ASSERT_EQUAL(s.model.hidden, 768);
    CU_ASSERT_EQUAL(s.model.patch_size, 16);
    CU_ASSERT_EQUAL(s.model.image_size, 96);
    CU_ASSERT_EQUAL(s.train.seq, 37);
    CU_ASSERT_TRUE(s.model.qkv_bias);
    CU_ASSERT_EQUAL(s.model.dropout, 0);
    xs_wl_free(&wl);
    /* scenario values */
    static const struct {
        const char *set;
        const char *says;
    } bad[] = {
        {"train.seq=128", "train.seq must be 197 for model.family vit"},
        {"model.max_positions=512", "model.max_positions must be 197"},
        {"model.vocab=30522", "not read by model.family vit"},
        {"model.head=span", "model.family vit needs model.arch encoder and model.head cls"},
        {"train.kernels=fused", "train.kernels fused is modelled for the classic family only"},
        {"train.lora.targets=projection", "'projection' names no linear module of this ViT"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *one[] = {bad[i].set, "train.lora.rank=8"};
        int n = strncmp(bad[i].set, "train.lora", 10) == 0 ? 2 : 1;
        CU_ASSERT_NOT_EQUAL(build(one, n, &s, &wl, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].says));
        if (!strstr(err.msg, bad[i].says))
            fprintf(stderr, "\n%s: %s\n", bad[i].set, err.msg);
    }
    /* the vit keys on a BERT scenario */
    char path[512];
    CU_ASSERT_EQUAL_FATAL(xs_resolve("scenarios", "bert-base-squad", path, sizeof path, &err),
                          XS_OK);
    const char *classic[] = {"model.image_size=224"};
    CU_ASSERT_EQUAL(tu_scn_load_gated(path, classic, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.image_size needs model.family vit"));
}

/* The CLI: predict says how the sequence is made and fits on an A100;
 * its JSON carries the vit keys and the parameter counts. */
static void cli_should_report_the_patches(void)
{
    tu_result r = tu_run("predict -d a100-sxm4-80gb -s " SCN);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "seq 197 = 196 patches + class token"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "cls head over 101 labels"));
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s " SCN " --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *p = xs_json_path(doc, "scenario.model.params");
    const cJSON *fam = xs_json_path(doc, "scenario.model.family");
    const cJSON *img = xs_json_path(doc, "scenario.model.image_size");
    CU_ASSERT(cJSON_IsNumber(p) && p->valuedouble == 85876325.0);
    CU_ASSERT(cJSON_IsString(fam) && strcmp(fam->valuestring, "vit") == 0);
    CU_ASSERT(cJSON_IsNumber(img) && img->valuedouble == 224);
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("predict -d a100-sxm4-80gb -s " SCN " --set train.seq=256");
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "train.seq must be 197"));
    tu_run_free(&r);
}

/* model.labels widens the classic cls heads too (BERT's classifier,
 * GPT-2's score): 3 more labels, 3 more rows of h weights and a bias each
 * (GPT-2's score has none); other heads refuse it. */
static void classic_cls_heads_should_score_model_labels(void)
{
    xs_scenario s;
    xs_workload two, five;
    const char *base[] = {NULL}, *wide[] = {"model.labels=5"};
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-lora-sst2", base, 0, &s, &two), XS_OK);
    CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-lora-sst2", wide, 1, &s, &five), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(five.params - two.params, 3 * (768 + 1), 0.5);
    const xs_op *cls = tu_find_op(&five, "head.classifier", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cls);
    CU_ASSERT_EQUAL(cls->n, 5);
    xs_wl_free(&two);
    xs_wl_free(&five);
    const char *gpt2[] = {"model.head=cls", "model.labels=5"};
    CU_ASSERT_EQUAL_FATAL(tu_build("gpt2-medium-finetune", gpt2, 2, &s, &five), XS_OK);
    CU_ASSERT_EQUAL(tu_find_op(&five, "head.score", -1)->n, 5);
    xs_wl_free(&five);
    xs_error err;
    char path[512];
    CU_ASSERT_EQUAL_FATAL(xs_resolve("scenarios", "bert-base-squad", path, sizeof path, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(tu_scn_load_gated(path, wide, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.labels (5) needs model.head cls"));
}

/* data/published/vit-timm-rtx3090.csv: timm's ViT-B/16 training
 * benchmark on an RTX 3090, both rows predicted through the shipped
 * scenario (their accuracy is `make validate`'s to report), and the two
 * rows one run: batch / step time is the throughput within 0.2%. */
static void published_timm_rows_should_be_predicted(void)
{
    const char *files[] = {"data/published/vit-timm-rtx3090.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_TRUE(rows[i].ok);
        if (!rows[i].ok)
            fprintf(stderr, "\n%s:%d: %s\n", rows[i].file, rows[i].line, xs_vrow_reason(&rows[i]));
        CU_ASSERT(rows[i].predicted > 0);
    }
    CU_ASSERT_STRING_EQUAL(rows[0].metric, "samples_per_s");
    CU_ASSERT_STRING_EQUAL(rows[1].metric, "step_time_s");
    CU_ASSERT_DOUBLE_EQUAL(192 / rows[1].measured, rows[0].measured, 0.002 * rows[0].measured);
    CU_ASSERT_DOUBLE_EQUAL(192 / rows[1].predicted, rows[0].predicted,
                           1e-9 * rows[0].predicted);
    xs_vrows_free(rows, n);
}

int tu_add_vit_suite(void)
{
    CU_pSuite s = CU_add_suite("vit", NULL, NULL);
    return !s ||
           !CU_add_test(s, "parameter_counts_should_equal_transformers_and_peft",
                        parameter_counts_should_equal_transformers_and_peft) ||
           !CU_add_test(s, "seq_should_follow_the_patches", seq_should_follow_the_patches) ||
           !CU_add_test(s, "patch_embedding_should_be_a_gemm_over_patches",
                        patch_embedding_should_be_a_gemm_over_patches) ||
           !CU_add_test(s, "layers_and_head_should_be_as_transformers_runs_them",
                        layers_and_head_should_be_as_transformers_runs_them) ||
           !CU_add_test(s, "vit_kept_and_released_should_balance",
                        vit_kept_and_released_should_balance) ||
           !CU_add_test(s, "checkpointing_should_rerun_each_layer_once",
                        checkpointing_should_rerun_each_layer_once) ||
           !CU_add_test(s, "vit_configs_and_scenarios_should_refuse_what_is_not_modelled",
                        vit_configs_and_scenarios_should_refuse_what_is_not_modelled) ||
           !CU_add_test(s, "cli_should_report_the_patches", cli_should_report_the_patches) ||
           !CU_add_test(s, "classic_cls_heads_should_score_model_labels",
                        classic_cls_heads_should_score_model_labels) ||
           !CU_add_test(s, "published_timm_rows_should_be_predicted",
                        published_timm_rows_should_be_predicted);
}
