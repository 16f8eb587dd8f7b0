/* wl_classic.c — the classic family: BERT's post-LN encoder and GPT-2's
 * pre-LN decoder, their embeddings and the tied LM head. */
#include "wl_build.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "checked.h"
#include "family.h"
#include "family_shared.h"
#include "grow.h"
#include "hf_keys.h"
#include "kernel_fn.h"
#include "kernel_op.h"
#include "lora.h"

/* dropout(y) + residual, then LayerNorm (post-LN, BERT); fused: one kernel. */
static void post_ln_block(xs_wb *c, const char *prefix, double p)
{
    double e = c->T * c->h;
    char nm[48];
    if (c->fused) {
        xs_wb_add_param(c, c->h, 0, 0);
        xs_wb_add_param(c, c->h, 0, 0);
        xs_wb_join(nm, sizeof nm, prefix, ".bias_dropout_residual_ln");
        xs_wb_enter_modules(c, 1);
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_NORM, e, 4.0 * c->H + 1, 12, 1, "%s", nm);
        xs_wb_keep(c, e);          /* the dropout mask */
        xs_wb_keep(c, e * c->H);   /* the LayerNorm's input */
        xs_wb_keep(c, c->T * 8.0); /* its mean and rstd */
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_NORM, e, 6.0 * c->H + 1, 16, 2, "%s.bwd", nm);
        return;
    }
    xs_wb_join(nm, sizeof nm, prefix, ".dropout");
    xs_wb_dropout(c, nm, e, c->H, p);
    xs_wb_join(nm, sizeof nm, prefix, ".residual");
    xs_wb_residual_add(c, nm, e, c->H, c->I, c->I);
    xs_wb_join(nm, sizeof nm, prefix, ".ln");
    xs_wb_layernorm(c, nm, c->T, c->I, c->I);
}

/* BertLayer, BertAttention, BertSelfAttention, BertSelfOutput,
 * BertIntermediate, BertOutput: the containers of one layer in Hugging
 * Face's modeling_bert.py and in NVIDIA's BERT modeling.py, its fork. */
#define BERT_LAYER_CONTAINERS 6

/* GPT2Block, GPT2Attention, GPT2MLP (transformers' modeling_gpt2.py). */
#define GPT2_BLOCK_CONTAINERS 3

static void encoder_layer(xs_wb *c)
{
    double T = c->T, h = c->h, p = c->s->model.dropout;
    xs_wb_enter_modules(c, BERT_LAYER_CONTAINERS);
    /* The layer input feeds q, k, v (or one qkv) and the residual. */
    xs_wb_grad_fanout(c, "attn.x", T * h, c->I, c->fused ? 1 : 4);
    if (c->fused) {
        xs_wb_linear(c, "attn.qkv", T, h, 3 * h, 1, 1);
    } else {
        xs_wb_linear(c, "attn.q", T, h, h, 1, 1);
        c->x_kept = !c->amp; /* autocast casts x for each; else one tensor */
        xs_wb_linear(c, "attn.k", T, h, h, 1, 1);
        xs_wb_linear(c, "attn.v", T, h, h, 1, 1);
        c->x_kept = 0;
    }
    xs_wb_attention(c, 0);
    c->x_kept = c->flash; /* the flash output, kept by the attention */
    xs_wb_linear(c, "attn.out", T, h, h, 1, 0);
    c->x_kept = 0;
    post_ln_block(c, "attn", p);
    xs_wb_grad_fanout(c, "ffn.x", T * h, c->I, c->fused ? 1 : 2);
    xs_wb_linear(c, "ffn.up", T, h, c->f, 1, 1);
    int island = xs_wb_activation(c, T * c->f);
    xs_wb_linear(c, "ffn.down", T, c->f, h, 1, island);
    post_ln_block(c, "ffn", p);
}

static void decoder_layer(xs_wb *c)
{
    double T = c->T, h = c->h, e = T * h, p = c->s->model.dropout;
    xs_wb_enter_modules(c, GPT2_BLOCK_CONTAINERS);
    xs_wb_grad_fanout(c, "attn.residual", e, c->I, 2);
    xs_wb_layernorm(c, "ln1", T, c->I, c->I);
    xs_wb_linear(c, "attn.qkv", T, h, 3 * h, 1, 1);
    xs_wb_attention(c, 1);
    c->x_kept = c->flash; /* the flash output, kept by the attention */
    xs_wb_linear(c, "attn.out", T, h, h, 1, 0);
    c->x_kept = 0;
    xs_wb_dropout(c, "attn.dropout_out", e, c->H, p);
    xs_wb_residual_add(c, "attn.residual", e, c->H, c->I, c->I);
    xs_wb_pre_ln_ffn(c, "ln2");
}

static void encoder_embeddings(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    double e = c->T * c->h;
    int tables = m->type_vocab > 0 ? 3 : 2;
    c->layer = -1;
    /* the task model (BertForQuestionAnswering, ...), BertModel,
     * BertEmbeddings, and BertEncoder, entered before the first layer */
    xs_wb_enter_modules(c, 4);
    xs_wb_embedding(c, "embed.word", (double)m->vocab, c->T);
    xs_wb_embedding(c, "embed.position", (double)m->max_positions, c->T);
    if (tables == 3)
        xs_wb_embedding(c, "embed.token_type", (double)m->type_vocab, c->T);
    if (c->fused) { /* one kernel sums the gathers (the sum's gradient is free) */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, (tables + 1.0) * c->Wm, tables, 1, "embed.sum");
    } else {
        for (int i = 1; i < tables; i++)
            xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 3.0 * c->Wm, 1, 1, "embed.add%d", i);
    }
    xs_wb_layernorm(c, "embed.ln", c->T, c->Wm, c->I);
    xs_wb_dropout(c, "embed.dropout", e, c->I, m->dropout);
}

static void decoder_embeddings(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    double e = c->T * c->h;
    c->layer = -1;
    xs_wb_enter_modules(c, 2); /* GPT2LMHeadModel (or the task model), GPT2Model */
    xs_wb_embedding(c, "embed.token", (double)m->vocab, c->T);
    xs_wb_embedding(c, "embed.position", (double)m->max_positions, c->T);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 3.0 * c->Wm, 1, 1, "embed.add");
    xs_wb_dropout(c, "embed.dropout", e, c->I, m->dropout);
}

/* Logits over the vocabulary and the cross-entropy loss; the LM weight is
 * the token embedding (tied), so its two gradients are summed. */
static void lm_head(xs_wb *c, int causal)
{
    double T = c->T, h = c->h, V = (double)c->s->model.vocab;
    double rows = causal ? c->b * (c->sq - 1) : T;
    int H = c->H, ls = c->amp ? 4 : H;
    if (!causal) { /* BERT MLM transform: dense + gelu + LayerNorm */
        xs_wb_linear(c, "head.transform", T, h, h, 1, 1);
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, T * h, 2.0 * H, 8, 1, "head.gelu");
        xs_wb_keep(c, T * h * H);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, T * h, 3.0 * H, 12, 1, "head.gelu.bwd");
        xs_wb_layernorm(c, "head.ln", T, H, c->I);
    }
    /* tied: the weight is the token embedding, so no new weight parameters */
    param_mark before = xs_wb_mark_params(c);
    xs_wb_linear(c, "head.lm", T, h, V, !causal, 1);
    xs_wb_tie_to_embedding(c, &before, V);
    if (!causal)
        xs_wb_add_param(c, V, 0, 0);
    if (causal) { /* logits[..., :-1, :].contiguous() */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, rows * V, 2.0 * H, 0, 1, "head.shift");
        xs_wb_transient(c, rows * V * H);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_COPY, 1, T * V * H + rows * V * 2.0 * H, 0, 2,
               "head.shift.bwd");
        xs_wb_transient(c, T * V * H); /* the zero-filled gradient of all the logits */
    }
    if (c->amp) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, rows * V, H + 4, 0, 1, "head.loss.cast");
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, rows * V, 4 + H, 0, 1, "head.loss.cast.bwd");
    }
    xs_wb_cross_entropy(c, rows, V, ls);
}

/* BERT's encoder (model.arch encoder) or GPT-2's decoder, with the head
 * model.head names. */
static void forward(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    int decoder = m->arch == XS_DECODER;
    xs_wb_embeddings(c, decoder ? decoder_embeddings : encoder_embeddings);
    xs_wb_layers(c, m->layers, decoder ? decoder_layer : encoder_layer);
    if (decoder)
        xs_wb_layernorm(c, "ln_f", c->T, c->I, c->I);
    if (m->head == XS_HEAD_LM)
        lm_head(c, decoder);
    else if (m->head == XS_HEAD_SPAN)
        xs_wb_span_head(c);
    else
        xs_wb_cls_head(c, decoder);
}

/* ---- the family record (family.h) --------------------------------------- */

static const xs_hf_key HF_BERT[] = {
    {"layers", "num_hidden_layers", XS_HF_NULL_REFUSED},
    {"hidden", "hidden_size", XS_HF_NULL_REFUSED},
    {"heads", "num_attention_heads", XS_HF_NULL_REFUSED},
    {"ffn", "intermediate_size", XS_HF_NULL_REFUSED},
    {"vocab", "vocab_size", XS_HF_NULL_REFUSED},
    {"max_positions", "max_position_embeddings", XS_HF_NULL_REFUSED},
    {"type_vocab", "type_vocab_size", XS_HF_NULL_REFUSED},
    {"activation", "hidden_act", XS_HF_NULL_REFUSED},
    {"dropout", "hidden_dropout_prob", XS_HF_NULL_REFUSED},
    {"attn_dropout", "attention_probs_dropout_prob", XS_HF_NULL_REFUSED},
};
static const xs_hf_key HF_GPT2[] = {
    {"layers", "n_layer", XS_HF_NULL_REFUSED},
    {"hidden", "n_embd", XS_HF_NULL_REFUSED},
    {"heads", "n_head", XS_HF_NULL_REFUSED},
    {"ffn", "n_inner", XS_HF_NULL_DEFAULT},
    {"vocab", "vocab_size", XS_HF_NULL_REFUSED},
    {"max_positions", "n_positions", XS_HF_NULL_REFUSED},
    {"activation", "activation_function", XS_HF_NULL_REFUSED},
    {"dropout", "resid_pdrop", XS_HF_NULL_REFUSED},
    {"attn_dropout", "attn_pdrop", XS_HF_NULL_REFUSED},
};

/* Defaults of transformers' BertConfig and GPT2Config for keys a
 * config.json may omit, so that an imported config means what it means to
 * transformers. */
static cJSON *classic_default(const char *canon, const cJSON *hf, int gpt2)
{
    if (strcmp(canon, "ffn") == 0) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(hf, "n_embd");
        return cJSON_IsNumber(h) ? cJSON_CreateNumber(4 * h->valuedouble) : NULL;
    }
    if (strcmp(canon, "activation") == 0)
        return cJSON_CreateString(gpt2 ? "gelu_new" : "gelu");
    if (strcmp(canon, "dropout") == 0 || strcmp(canon, "attn_dropout") == 0)
        return cJSON_CreateNumber(0.1);
    if (strcmp(canon, "type_vocab") == 0)
        return cJSON_CreateNumber(2);
    return NULL;
}

static cJSON *bert_default(const char *canon, const cJSON *hf)
{
    return classic_default(canon, hf, 0);
}

static cJSON *gpt2_default(const char *canon, const cJSON *hf)
{
    return classic_default(canon, hf, 1);
}

static int import(cJSON *model, const cJSON *hf, const char *type, const char *path,
                  xs_error *err)
{
    int gpt2 = strcmp(type, "gpt2") == 0;
    if (!cJSON_GetObjectItemCaseSensitive(model, "arch"))
        cJSON_AddStringToObject(model, "arch", gpt2 ? "decoder" : "encoder");
    if (gpt2 && !cJSON_GetObjectItemCaseSensitive(model, "type_vocab"))
        cJSON_AddNumberToObject(model, "type_vocab", 0);
    if (gpt2)
        return xs_hf_copy_keys(model, hf, HF_GPT2, sizeof HF_GPT2 / sizeof HF_GPT2[0],
                               gpt2_default, path, err);
    return xs_hf_copy_keys(model, hf, HF_BERT, sizeof HF_BERT / sizeof HF_BERT[0], bert_default,
                           path, err);
}

/* The sequence within the position table, the other families' keys left
 * at their defaults. */
static int check(const xs_scenario *s, const char *where, xs_error *err)
{
    int rc = xs_fam_seq_in_positions(s, where, err);
    if (!rc)
        rc = xs_fam_no_head_dropout(s, where, err);
    if (!rc)
        rc = xs_fam_no_t5_keys(s, where, err);
    if (!rc)
        rc = xs_fam_no_vit_keys(s, where, err);
    if (!rc)
        rc = xs_fam_labels_need_cls(s, where, err);
    return rc ? rc : xs_fam_no_llama_keys(s, where, err);
}

/* BertForSequenceClassification / BertForQuestionAnswering /
 * BertForMaskedLM (modeling_bert.py) as transformers names their modules.
 * %d: the layer. */
static const xs_lora_module_path BERT_MODULES[] = {
    {"attn.q", "bert.encoder.layer.%d.attention.self.query"},
    {"attn.k", "bert.encoder.layer.%d.attention.self.key"},
    {"attn.v", "bert.encoder.layer.%d.attention.self.value"},
    {"attn.out", "bert.encoder.layer.%d.attention.output.dense"},
    {"ffn.up", "bert.encoder.layer.%d.intermediate.dense"},
    {"ffn.down", "bert.encoder.layer.%d.output.dense"},
    {"head.pooler", "bert.pooler.dense"},
    {"head.classifier", "classifier"},
    {"head.qa", "qa_outputs"},
    {"head.transform", "cls.predictions.transform.dense"},
    {"head.lm", "cls.predictions.decoder"},
};
static const xs_lora_names BERT_NAMES = {"BERT", "query,value",
    "query, key, value, dense, output.dense, intermediate.dense, all-linear",
    BERT_MODULES, sizeof BERT_MODULES / sizeof BERT_MODULES[0]};

/* The GPT2 task models (modeling_gpt2.py: Conv1D c_attn, c_proj, c_fc,
 * c_proj). */
static const xs_lora_module_path GPT2_MODULES[] = {
    {"attn.qkv", "transformer.h.%d.attn.c_attn"},
    {"attn.out", "transformer.h.%d.attn.c_proj"},
    {"ffn.up", "transformer.h.%d.mlp.c_fc"},
    {"ffn.down", "transformer.h.%d.mlp.c_proj"},
    {"head.score", "score"},
    {"head.lm", "lm_head"},
};
static const xs_lora_names GPT2_NAMES = {"GPT-2", "c_attn",
    "c_attn, c_proj, c_fc, all-linear",
    GPT2_MODULES, sizeof GPT2_MODULES / sizeof GPT2_MODULES[0]};

static const xs_lora_names *lora(const xs_scenario *s)
{
    return s->model.arch == XS_DECODER ? &GPT2_NAMES : &BERT_NAMES;
}

static void describe(xs_strbuf *sb, const xs_scenario *s, double params)
{
    xs_fam_describe(sb, s, s->model.arch == XS_DECODER ? "decoder" : "encoder", params);
}

static const char *const TYPES[] = {"bert", "roberta", "gpt2", NULL};

const xs_family xs_family_classic = {
    .name = "classic",
    .model_types = TYPES,
    .import = import,
    .check = check,
    .forward = forward,
    .lora = lora,
    .describe = describe,
};
