/* wl_distilbert.c — the distilbert family: transformers' DistilBERT as
 * DistilBertForSequenceClassification and DistilBertForQuestionAnswering
 * run it. BERT's post-LN encoder, op for op where it is the same; where it
 * differs, as modeling_distilbert.py does it
 * (huggingface/transformers@e368c1a8819d54720956961ea7cd47d99239bd39; the
 * layer order is unchanged in transformers 5's modular_distilbert.py
 * @c27dd37e008f45528388f6cac5df486f3d5d176e):
 *   - Embeddings: word + learned position, one add, LayerNorm, dropout (no
 *     token types);
 *   - TransformerBlock: sa_layer_norm(out_lin(attention) + x), with no
 *     dropout on the attention's output; FFN lin1, activation, lin2,
 *     dropout; output_layer_norm(ffn + sa_output);
 *   - eager attention (MultiHeadSelfAttention): q / sqrt(d) on q, not on
 *     the scores; masked_fill of a bool mask, not an additive float mask;
 *     SDPA (DistilBertSdpaAttention) is the shared fused kernel;
 *   - heads: pre_classifier, ReLU, dropout(seq_classif_dropout),
 *     classifier on the first token (no pooler); or dropout(qa_dropout)
 *     and qa_outputs over every token. */
#include "wl_build.h"

#include <stdio.h>
#include <string.h>

#include "family.h"
#include "family_shared.h"
#include "hf_keys.h"
#include "lora.h"

/* TransformerBlock, MultiHeadSelfAttention, FFN: the containers of one
 * layer (leaf modules are counted by the builders that emit them). */
#define DISTILBERT_BLOCK_CONTAINERS 3

/* MultiHeadSelfAttention.forward with scores in memory:
 * q = q / sqrt(d) over q's T x h elements (a Python float: nothing kept,
 * its gradient one more pass); the heads split as BERT's; the scores;
 * (mask == 0) on the [b, s] mask, each layer, no gradient;
 * scores.masked_fill(mask, min) in the scores' format (its backward fills
 * the gradient the same way and keeps the bool mask); softmax, on
 * autocast's fp32 list, so under AMP a cast first; dropout of the fp32
 * probabilities, autocast's cast for P.V, and the context as BERT's. */
static void attention_unfused(xs_wb *c)
{
    double S2 = c->b * c->a * c->sq * c->sq, ba = c->b * c->a, s = c->sq, d = c->d;
    double e = c->T * c->h, bs = c->b * c->sq, p = c->s->model.attn_dropout;
    int H = c->H, sm = c->I; /* softmax runs in fp32 under AMP */
    c->x_unkept = 0;         /* past the layer's first linears: their input is behind */
    c->input_nograd = 0;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 2.0 * H, 1, 1, "attn.q_scale");
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 2.0 * H, 1, 1, "attn.q_scale.bwd");
    xs_wb_head_copies(c, "attn.heads", e, 3, 1);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.scores");
    xs_wb_keep(c, e * H); /* the head copies of q and k */
    xs_wb_keep(c, e * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.scores.dQ");
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.scores.dK");
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, bs, 8.0 + 1, 1, 1, "attn.mask_eq");
    xs_wb_transient(c, bs); /* int64 mask in, bool out */
    c->broadcast = 1;       /* the [b, 1, 1, s] mask expanded over the scores */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.masked_fill");
    xs_wb_keep(c, bs);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.masked_fill.bwd");
    c->broadcast = 0;
    if (sm != H) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.softmax.cast");
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.softmax.cast.bwd");
    }
    xs_wb_softmax(c, "attn.softmax", S2, s, sm, 0);
    xs_wb_dropout(c, "attn.probs.dropout", S2, sm, p);
    if (sm != H) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.probs.cast");
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.probs.cast.bwd");
    }
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.context");
    /* P.V keeps v and the probabilities it read: softmax's own output
     * (kept there already) only when no dropout or cast came between */
    xs_wb_keep(c, e * H);
    if (!(p <= 0 && sm == H))
        xs_wb_keep(c, S2 * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.context.dP");
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.context.dV");
    xs_wb_head_copies(c, "attn.merge", e, 1, 0);
}

static void layer(xs_wb *c)
{
    double T = c->T, h = c->h, e = T * h, p = c->s->model.dropout;
    xs_wb_enter_modules(c, DISTILBERT_BLOCK_CONTAINERS);
    /* x feeds q_lin, k_lin, v_lin and the residual */
    xs_wb_grad_fanout(c, "attn.x", e, c->I, 4);
    xs_wb_linear(c, "attn.q", T, h, h, 1, 1);
    c->x_kept = !c->amp; /* autocast casts x for each; else one tensor */
    xs_wb_linear(c, "attn.k", T, h, h, 1, 1);
    xs_wb_linear(c, "attn.v", T, h, h, 1, 1);
    c->x_kept = 0;
    if (c->flash)
        xs_wb_attention(c, 0);
    else
        attention_unfused(c);
    c->x_kept = c->flash; /* the flash output, kept by the attention */
    xs_wb_linear(c, "attn.out", T, h, h, 1, 0);
    c->x_kept = 0;
    xs_wb_residual_add(c, "attn.residual", e, c->H, c->I, c->I);
    xs_wb_layernorm(c, "attn.ln", T, c->I, c->I);
    xs_wb_grad_fanout(c, "ffn.x", e, c->I, 2);
    xs_wb_linear(c, "ffn.up", T, h, c->f, 1, 1);
    int island = xs_wb_activation(c, T * c->f);
    xs_wb_linear(c, "ffn.down", T, c->f, h, 1, island);
    xs_wb_dropout(c, "ffn.dropout", e, c->H, p);
    xs_wb_residual_add(c, "ffn.residual", e, c->H, c->I, c->I);
    xs_wb_layernorm(c, "ffn.ln", T, c->I, c->I);
}

static void embeddings(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    double e = c->T * c->h;
    c->layer = -1;
    /* the task model, DistilBertModel, Embeddings and Transformer, entered
     * before the first layer */
    xs_wb_enter_modules(c, 4);
    xs_wb_embedding(c, "embed.word", (double)m->vocab, c->T);
    xs_wb_embedding(c, "embed.position", (double)m->max_positions, c->T);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 3.0 * c->Wm, 1, 1, "embed.add");
    xs_wb_layernorm(c, "embed.ln", c->T, c->Wm, c->I);
    xs_wb_dropout(c, "embed.dropout", e, c->I, m->dropout);
}

/* hidden_state[:, 0] (taken as a copy, as the BERT head is), pre_classifier,
 * nn.ReLU (keeps its output), dropout, classifier into model.labels
 * classes, then the loss as BERT's. Under LoRA both linears are PEFT's modules_to_save
 * (lora.c): trained whole with train.lora.train_head. */
static void cls_head(xs_wb *c)
{
    double b = c->b, h = c->h, L = (double)c->s->model.labels;
    c->frozen = c->lora && !c->s->train.lora_train_head;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, b * h, 2.0 * c->I, 0, 1, "head.first_token");
    xs_wb_linear(c, "head.pre_classifier", b, h, h, 1, 1);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, b * h, 2.0 * c->H, 1, 1, "head.relu");
    xs_wb_keep_output(c, b * h * c->H);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, b * h, 3.0 * c->H, 1, 1, "head.relu.bwd");
    xs_wb_dropout(c, "head.dropout", b * h, c->H, c->s->model.head_dropout);
    xs_wb_linear(c, "head.classifier", b, h, L, 1, 0);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_LOSS, b * L, 2.0 * c->H + 12, 5, 4, "head.loss");
    xs_wb_untimed_loss(c, 1);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_LOSS, b * L, 2.0 * c->H + 12, 3, 4, "head.loss.bwd");
}

static void forward(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    xs_wb_embeddings(c, embeddings);
    xs_wb_layers(c, m->layers, layer);
    if (m->head == XS_HEAD_SPAN) {
        /* dropout(qa_dropout) over the encoder's output, then BERT's span
         * head: qa_outputs and the start/end losses */
        xs_wb_dropout(c, "head.dropout", c->T * c->h, c->I, m->head_dropout);
        xs_wb_span_head(c);
    } else {
        cls_head(c);
    }
}

/* ---- the family record (family.h) --------------------------------------- */

/* DistilBertConfig (transformers' models/distilbert/configuration_distilbert.py,
 * huggingface/transformers@e04dc16368f2d155dab81a0914c2277c5bf02a26): its
 * own key names, and its defaults for the optional ones. */
static const xs_hf_key HF_DISTILBERT[] = {
    {"layers", "n_layers", XS_HF_NULL_REFUSED},
    {"hidden", "dim", XS_HF_NULL_REFUSED},
    {"heads", "n_heads", XS_HF_NULL_REFUSED},
    {"ffn", "hidden_dim", XS_HF_NULL_REFUSED},
    {"vocab", "vocab_size", XS_HF_NULL_REFUSED},
    {"max_positions", "max_position_embeddings", XS_HF_NULL_REFUSED},
    {"activation", "activation", XS_HF_NULL_REFUSED},
    {"dropout", "dropout", XS_HF_NULL_REFUSED},
    {"attn_dropout", "attention_dropout", XS_HF_NULL_REFUSED},
};

static cJSON *key_default(const char *canon, const cJSON *hf)
{
    (void)hf;
    if (strcmp(canon, "activation") == 0)
        return cJSON_CreateString("gelu");
    if (strcmp(canon, "dropout") == 0 || strcmp(canon, "attn_dropout") == 0)
        return cJSON_CreateNumber(0.1);
    return NULL;
}

/* A DistilBERT config.json, read as transformers' modeling_distilbert.py
 * builds the model (huggingface/transformers@e368c1a8819d54720956961ea7cd47d99239bd39
 * and, for transformers 5, modular_distilbert.py @c27dd37e008f45528388f6cac5df486f3d5d176e):
 * word and learned position embeddings, no token types. The task head's
 * dropout is seq_classif_dropout (DistilBertForSequenceClassification,
 * default 0.2) or qa_dropout (DistilBertForQuestionAnswering, default 0.1),
 * by model.head. sinusoidal_pos_embds true fills the position table with
 * fixed values that transformers' versions disagree on freezing, and
 * chunk_size_feed_forward splits the FFN into chunks: both refused by
 * name. tie_weights_ and initializer_range change values, not work. */
static int import(cJSON *model, const cJSON *hf, const char *type, const char *path,
                  xs_error *err)
{
    (void)type;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, "sinusoidal_pos_embds");
    if (v && !cJSON_IsNull(v) && !cJSON_IsBool(v))
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'sinusoidal_pos_embds' must be true or false", path);
    if (cJSON_IsTrue(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'sinusoidal_pos_embds' true is not modelled (a fixed "
                            "sinusoidal position table); set it false (learned positions)",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "chunk_size_feed_forward");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'chunk_size_feed_forward' must be 0 (an FFN run in "
                            "chunks is not modelled)",
                            path);
    const cJSON *head = cJSON_GetObjectItemCaseSensitive(model, "head");
    const char *h = cJSON_IsString(head) ? head->valuestring : "";
    const char *drop_key = strcmp(h, "cls") == 0 ? "seq_classif_dropout"
                           : strcmp(h, "span") == 0 ? "qa_dropout"
                                                    : NULL;
    if (drop_key && !cJSON_GetObjectItemCaseSensitive(model, "head_dropout")) {
        v = cJSON_GetObjectItemCaseSensitive(hf, drop_key);
        if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble >= 0 &&
                                       v->valuedouble <= 0.99))
            return xs_error_set(err, XS_EFIELD,
                                "%s: field '%s' must be a number from 0 to 0.99", path,
                                drop_key);
        double p = v && !cJSON_IsNull(v) ? v->valuedouble : strcmp(h, "cls") == 0 ? 0.2 : 0.1;
        cJSON_AddNumberToObject(model, "head_dropout", p);
    }
    if (xs_hf_put_default(model, "family", cJSON_CreateString("distilbert")) ||
        xs_hf_put_default(model, "arch", cJSON_CreateString("encoder")) ||
        xs_hf_put_default(model, "type_vocab", cJSON_CreateNumber(0)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    return xs_hf_copy_keys(model, hf, HF_DISTILBERT, sizeof HF_DISTILBERT / sizeof HF_DISTILBERT[0],
                           key_default, path, err);
}

/* The sequence within the position table, the other families' keys left
 * at their defaults, and what the DistilBERT builder needs. */
static int check(const xs_scenario *s, const char *where, xs_error *err)
{
    int rc = xs_fam_seq_in_positions(s, where, err);
    if (!rc)
        rc = xs_fam_no_t5_keys(s, where, err);
    if (rc)
        return rc;
    const xs_model *m = &s->model;
    const char *path = where;
    const char *bad = m->arch != XS_ENCODER     ? "needs model.arch encoder"
                      : m->type_vocab != 0      ? "needs model.type_vocab 0 (DistilBERT has "
                                                  "no token-type embeddings)"
                      : m->head == XS_HEAD_LM   ? "models model.head cls and span only "
                                                  "(DistilBertForMaskedLM is not modelled)"
                      : s->train.kernels == XS_K_FUSED ? "needs train.kernels eager "
                                                  "(LightSeq's fused layers are BERT's)"
                                                       : NULL;
    if (bad)
        return xs_error_set(err, XS_EUNSUPPORTED, "%s: model.family distilbert %s", path,
                            bad);
    rc = xs_fam_no_vit_keys(s, where, err);
    if (!rc)
        rc = xs_fam_labels_need_cls(s, where, err);
    return rc ? rc : xs_fam_no_llama_keys(s, where, err);
}

/* DistilBertForSequenceClassification / DistilBertForQuestionAnswering
 * (modeling_distilbert.py: MultiHeadSelfAttention q_lin, k_lin, v_lin,
 * out_lin; FFN lin1, lin2; the heads' pre_classifier, classifier,
 * qa_outputs) */
static const xs_lora_module_path DISTILBERT_MODULES[] = {
    {"attn.q", "distilbert.transformer.layer.%d.attention.q_lin"},
    {"attn.k", "distilbert.transformer.layer.%d.attention.k_lin"},
    {"attn.v", "distilbert.transformer.layer.%d.attention.v_lin"},
    {"attn.out", "distilbert.transformer.layer.%d.attention.out_lin"},
    {"ffn.up", "distilbert.transformer.layer.%d.ffn.lin1"},
    {"ffn.down", "distilbert.transformer.layer.%d.ffn.lin2"},
    {"head.pre_classifier", "pre_classifier"},
    {"head.classifier", "classifier"},
    {"head.qa", "qa_outputs"},
};
static const xs_lora_names DISTILBERT_NAMES = {"DistilBERT", NULL,
    "q_lin, k_lin, v_lin, out_lin, lin1, lin2, all-linear",
    DISTILBERT_MODULES, sizeof DISTILBERT_MODULES / sizeof DISTILBERT_MODULES[0]};

static void describe(xs_strbuf *sb, const xs_scenario *s, double params)
{
    xs_fam_describe(sb, s, "distilbert encoder", params);
}

static void model_json(cJSON *mo, const xs_scenario *s)
{
    cJSON_AddStringToObject(mo, "family", "distilbert");
    cJSON_AddNumberToObject(mo, "head_dropout", s->model.head_dropout);
}

static const char *const TYPES[] = {"distilbert", NULL};

const xs_family xs_family_distilbert = {
    .name = "distilbert",
    .model_types = TYPES,
    .import = import,
    .check = check,
    .forward = forward,
    .lora_names = &DISTILBERT_NAMES,
    .describe = describe,
    .model_json = model_json,
};
