/* wl_llama.c — the llama family (transformers' LlamaDecoderLayer, also
 * Mistral's and Qwen2's): RMSNorm, rotary positions, grouped-query
 * attention, the gated SiLU MLP, the untied LM head. */
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

/* --- the llama family ----------------------------------------------------
 * transformers' LlamaForCausalLM as it runs in training
 * (huggingface/transformers@5dd4a63548857797727ae73eeb6a6e886ea02a3e:
 * src/transformers/models/llama/modeling_llama.py; Mistral's and Qwen2's
 * modules are copies of it but for Qwen2's q/k/v biases), one op per
 * kernel it launches, with what autograd saves for each: PyTorch saves an
 * operand of a mul only when the other operand needs a gradient. */

/* LlamaDecoderLayer, LlamaAttention, LlamaMLP. */
#define LLAMA_LAYER_CONTAINERS 3


/* LlamaRotaryEmbedding.forward, once a forward under no_grad: position
 * ids (arange), inv_freq @ positions, cat((freqs, freqs)), cos, sin, the
 * two attention_scaling multiplies, and .to(x.dtype) (two casts when the
 * embeddings are not fp32). cos and sin, [b, s, head_dim] in the
 * embeddings' format, are kept by every layer's q * cos and k * cos (one
 * tensor each for the whole step). */
static void rotary_tables(xs_wb *c)
{
    double el = c->b * c->sq * c->d, R = c->I;
    int cast = c->I != 4;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, 2 + 8 + 16 + 16 + (cast ? 2 * (4 + R) : 0), 4,
           7 + 2 * cast, "rope.cos_sin");
    xs_wb_keep_output(c, 2 * el * R);
    xs_wb_bwd_group(c);
}

/* apply_rotary_pos_emb on one of q (heads) or k (kv heads):
 * x * cos + rotate_half(x) * sin, rotate_half = cat(-x2, x1): neg of one
 * half, cat, two broadcast muls, add. x is the projection's output (matmul
 * format), cos and sin are in the embeddings' format, and so is the result
 * (fp32 under autocast: type promotion). Autograd keeps only cos and sin
 * (x needs a gradient, the tables do not). Backward: each mul's dy * cos
 * (sin) and the cast to x's format, the neg of one half, the two halves'
 * slice backward (zeros of the full size, a copy into half), and the sums
 * of x's three gradients. */
static void rotary(xs_wb *c, const char *which, double heads)
{
    double el = c->T * heads * c->d;
    int H = c->H, R = c->I;
    c->broadcast = 1; /* x1, x2: slices of a transposed view; cos, sin broadcast */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el / 2, 2.0 * H, 1, 1, "attn.rope.%s.neg", which);
    xs_wb_transient(c, el / 2 * H);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, el, 2.0 * H, 0, 1, "attn.rope.%s.cat", which);
    xs_wb_transient(c, el * H);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, H + R, 1, 1, "attn.rope.%s.mul_cos", which);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, H + R, 1, 1, "attn.rope.%s.mul_sin", which);
    c->broadcast = 0;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, 3.0 * R, 1, 1, "attn.rope.%s.add", which);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, el, 4.0 * R + 13.0 * H, 3, 11, "attn.rope.%s.bwd",
           which);
}

/* act_fn(gate) * up: F.silu keeps its input, the mul both operands. */
static void swiglu(xs_wb *c, double elems)
{
    int H = c->H;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * H, 4, 1, "ffn.silu");
    xs_wb_keep(c, elems * H);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 3.0 * H, 8, 1, "ffn.silu.bwd");
}

static void gated_mul(xs_wb *c, double elems)
{
    int H = c->H;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 3.0 * H, 1, 1, "ffn.mul");
    xs_wb_keep(c, 2 * elems * H); /* silu(gate) and up */
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 6.0 * H, 2, 2, "ffn.mul.bwd");
}

/* Under autocast the rotary outputs are fp32 and the attention kernel
 * casts them to the matmul format (autocast's lower-precision list). */
static void attention_input_cast(xs_wb *c, const char *which, double elems)
{
    if (!c->amp)
        return;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, elems, 4.0 + c->H, 0, 1, "attn.%s.cast", which);
    xs_wb_issued(c, XS_ISSUE_AUTOCAST);
    xs_wb_transient(c, elems * c->H);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, elems, c->H + 4.0, 0, 1, "attn.%s.cast.bwd", which);
}

/* SDPA's flash kernel as transformers calls it (sdpa_attention_forward,
 * huggingface/transformers@00c238bd242b4c6ddfb2c17d4573174ec2daaec8:
 * src/transformers/integrations/sdpa_attention.py): on PyTorch >= 2.5 with
 * no attention mask (packed or unpadded blocks) it passes enable_gqa=True
 * and no repeat_kv copy, so k and v stay kv_heads wide; it then copies the
 * output back to token rows (transpose(1, 2).contiguous(); the clone's
 * gradient passes through). The kernel's backward for grouped heads
 * (FlashAttention-2's mha_bwd, which PyTorch vendors:
 * pytorch/pytorch@ef3d5c9ebba11dac3e988f00b7aad0f2a147cf26:
 * aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp) writes
 * dk and dv per query head (dk_expanded, dv_expanded) and sums each group
 * (at::sum_out): two more launches and that traffic. */
static void llama_attention_flash(xs_wb *c, double kv)
{
    double ba = c->b * c->a, s = c->sq, d = c->d;
    double qo = c->T * c->h * c->H, kvb = c->T * kv * d * c->H, lse = ba * s * 4;
    int grouped = kv < c->a;
    attention_input_cast(c, "q", c->T * c->h);
    attention_input_cast(c, "k", c->T * kv * d);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_ATTENTION, s, s, d, ba, 0, 1, c->H, c->H, "attn.flash");
    if (c->failed)
        return;
    xs_op *f = &c->wl->ops[c->wl->n - 1];
    f->flops = 4 * ba * s * s * d * 0.5; /* causal: half of the tiles */
    f->bytes = 2 * qo + 2 * kvb + lse;
    xs_op op = *f;
    xs_wb_keep_output(c, qo); /* the output, q, k, v and the rows' logsumexp */
    xs_wb_keep(c, qo);
    xs_wb_keep(c, 2 * kvb);
    xs_wb_keep(c, lse);
    xs_wb_bwd_group(c);
    op.phase = XS_PH_BWD;
    op.flops = 10 * ba * s * s * d * 0.5;
    /* reads q, o, dO, k, v; writes dq and dk, dv (per query head when grouped,
     * then summed into kv heads) */
    op.bytes = 4 * qo + 2 * lse + (grouped ? 2 * kvb + 2 * qo + 2 * qo + 2 * kvb : 4 * kvb);
    op.launches = 3 + (grouped ? 2 : 0);
    op.mem.temp = qo + 2 * kvb + (grouped ? 2 * qo : 0);
    snprintf(op.name, sizeof op.name, "attn.flash.bwd");
    xs_wb_emit(c, &op);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, c->T * c->h, 2.0 * c->H, 0, 1, "attn.merge");
    xs_wb_transient(c, qo);
}

/* eager_attention_forward (modeling_llama.py): repeat_kv copies k and v to
 * every query head (expand + reshape of an expanded view), then the
 * classic unfused path; the copies' backward sums each group. */
static void llama_attention_unfused(xs_wb *c, double kv)
{
    double full = c->T * c->h, narrow = c->T * kv * c->d;
    int H = c->H, R = c->I;
    if (kv < c->a) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, full, (double)R + R + H + H, 0, 2, "attn.repeat_kv");
        xs_wb_transient(c, full * (R + H));
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, full, (R + H) * (1 + narrow / full), 1, 2,
               "attn.repeat_kv.bwd");
    }
    attention_input_cast(c, "q", full);
    attention_input_cast(c, "k", full);
    xs_wb_attention_unfused(c, 1);
}

static void llama_layer(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    double T = c->T, h = c->h, e = T * h, f = c->f;
    double kv = (double)xs_model_kv_heads(m), kvw = kv * c->d;
    int qkv_bias = m->attention_bias != XS_ATTN_BIAS_NONE;
    int o_bias = m->attention_bias == XS_ATTN_BIAS_ALL, mb = m->mlp_bias;
    xs_wb_enter_modules(c, LLAMA_LAYER_CONTAINERS);
    xs_wb_grad_fanout(c, "attn.residual", e, c->I, 2);
    xs_wb_rmsnorm(c, "input_norm", T);
    xs_wb_grad_fanout(c, "attn.x", e, c->I, 3); /* q, k and v read the norm's output */
    xs_wb_linear(c, "attn.q", T, h, h, qkv_bias, 1);
    c->x_kept = !c->amp; /* autocast casts x for each; else one tensor */
    xs_wb_linear(c, "attn.k", T, h, kvw, qkv_bias, 1);
    xs_wb_linear(c, "attn.v", T, h, kvw, qkv_bias, 1);
    c->x_kept = 0;
    c->input_nograd = 0; /* past the layer's first linears: their input is behind */
    rotary(c, "q", c->a);
    rotary(c, "k", kv);
    if (c->flash)
        llama_attention_flash(c, kv);
    else
        llama_attention_unfused(c, kv);
    xs_wb_linear(c, "attn.out", T, h, h, o_bias, 0);
    xs_wb_residual_add(c, "attn.residual", e, c->H, c->I, c->I);
    xs_wb_grad_fanout(c, "ffn.residual", e, c->I, 2);
    xs_wb_rmsnorm(c, "post_attn_norm", T);
    xs_wb_grad_fanout(c, "ffn.x", e, c->I, 2); /* gate and up */
    xs_wb_linear(c, "ffn.gate", T, h, f, mb, 1);
    swiglu(c, T * f);
    c->x_kept = !c->amp;
    xs_wb_linear(c, "ffn.up", T, h, f, mb, 1);
    c->x_kept = 0;
    gated_mul(c, T * f);
    xs_wb_linear(c, "ffn.down", T, f, h, mb, 0);
    xs_wb_residual_add(c, "ffn.residual", e, c->H, c->I, c->I);
}

static void llama_embeddings(xs_wb *c)
{
    c->layer = -1;
    /* LlamaForCausalLM (or the task model), LlamaModel, LlamaRotaryEmbedding */
    xs_wb_enter_modules(c, 3);
    xs_wb_embedding(c, "embed.token", (double)c->s->model.vocab, c->T);
    rotary_tables(c);
}

/* lm_head (its own V x h weight, or the token embedding's when tied), then
 * ForCausalLMLoss (huggingface/transformers@0114da07ec0e101b420a923dedeb6032b6ac3a44:
 * src/transformers/loss/loss_utils.py): logits.float(), labels padded and
 * shifted (not the logits: no copy of them), cross-entropy over every
 * row. */
static void llama_lm_head(xs_wb *c)
{
    double T = c->T, h = c->h, V = (double)c->s->model.vocab;
    int tied = c->s->model.tied;
    param_mark before = xs_wb_mark_params(c);
    /* under LoRA an untied head trains only when asked (a tied one is the
     * frozen embedding: xs_lora_check refuses training it) */
    c->frozen = c->lora && (tied || !c->s->train.lora_train_head);
    xs_wb_linear(c, "head.lm", T, h, V, 0, 1);
    if (tied)
        xs_wb_tie_to_embedding(c, &before, V);
    if (c->H != 4) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, T * V, c->H + 4.0, 0, 1, "head.logits.float");
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, T * V, 4.0 + c->H, 0, 1, "head.logits.float.bwd");
    }
    xs_wb_cross_entropy(c, T, V, 4);
}

/* LlamaForCausalLM (model.head lm) or LlamaForSequenceClassification. */
static void forward(xs_wb *c)
{
    xs_wb_embeddings(c, llama_embeddings);
    xs_wb_layers(c, c->s->model.layers, llama_layer);
    xs_wb_rmsnorm(c, "norm", c->T);
    if (c->s->model.head == XS_HEAD_LM)
        llama_lm_head(c);
    else
        xs_wb_cls_head(c, 1);
}

/* ---- the family record (family.h) --------------------------------------- */

/* LlamaConfig, MistralConfig and Qwen2Config (transformers'
 * models/{llama,mistral,qwen2}/configuration_*.py): the same shape keys.
 * rms_norm_eps, rope_theta and rope_scaling change values, not work, and
 * are not read. */
static const xs_hf_key HF_LLAMA[] = {
    {"layers", "num_hidden_layers", XS_HF_NULL_REFUSED},
    {"hidden", "hidden_size", XS_HF_NULL_REFUSED},
    {"heads", "num_attention_heads", XS_HF_NULL_REFUSED},
    {"ffn", "intermediate_size", XS_HF_NULL_REFUSED},
    {"vocab", "vocab_size", XS_HF_NULL_REFUSED},
    {"max_positions", "max_position_embeddings", XS_HF_NULL_REFUSED},
    {"kv_heads", "num_key_value_heads", XS_HF_NULL_DEFAULT},
    {"activation", "hidden_act", XS_HF_NULL_REFUSED},
    {"attn_dropout", "attention_dropout", XS_HF_NULL_REFUSED},
    {"tied", "tie_word_embeddings", XS_HF_NULL_REFUSED},
    {"mlp_bias", "mlp_bias", XS_HF_NULL_REFUSED},
};

/* LlamaConfig.__init__'s defaults (Qwen2's and Mistral's agree). */
static cJSON *key_default(const char *canon, const cJSON *hf)
{
    (void)hf;
    if (strcmp(canon, "kv_heads") == 0) /* None: num_attention_heads */
        return cJSON_CreateNumber(0);
    if (strcmp(canon, "activation") == 0)
        return cJSON_CreateString("silu");
    if (strcmp(canon, "attn_dropout") == 0)
        return cJSON_CreateNumber(0);
    if (strcmp(canon, "tied") == 0 || strcmp(canon, "mlp_bias") == 0)
        return cJSON_CreateFalse();
    return NULL;
}

/* The llama family's keys that are not plain copies, and those that would
 * change the op list in ways not modelled, refused by name (a config.json
 * is never half-read). Read against transformers' modeling_llama.py,
 * modeling_mistral.py and modeling_qwen2.py
 * (huggingface/transformers@5dd4a63548857797727ae73eeb6a6e886ea02a3e):
 * Qwen2Attention builds q_proj, k_proj and v_proj with bias=True and o_proj
 * without, whatever the config says; Llama's attention_bias puts a bias on
 * all four; Mistral has none. */
static int import_keys(cJSON *model, const cJSON *hf, const char *type, const char *path,
                       xs_error *err)
{
    const cJSON *v;
    double heads = 0, hidden = 0;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "num_attention_heads")))
        heads = v->valuedouble;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "hidden_size")))
        hidden = v->valuedouble;
    v = cJSON_GetObjectItemCaseSensitive(hf, "head_dim");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && heads > 0 && v->valuedouble * heads == hidden))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'head_dim' must equal hidden_size / num_attention_heads "
                            "(a head size of its own is not modelled)",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "pretraining_tp");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble == 1))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'pretraining_tp' must be 1 (the sliced projections "
                            "of pretraining_tp > 1 are not modelled)",
                            path);
    /* newer configs list each layer's attention; all full is the plain layer */
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "layer_types")) && !cJSON_IsNull(v)) {
        int plain = cJSON_IsArray(v);
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        plain = plain && cJSON_IsString(e) && strcmp(e->valuestring, "full_attention") == 0;
        if (!plain)
            return xs_error_set(err, XS_EUNSUPPORTED,
                                "%s: field 'layer_types' must list only \"full_attention\" "
                                "(per-layer sliding windows are not modelled)",
                                path);
    }
    static const char *const refused[] = {"quantization_config", "num_local_experts",
                                          "num_experts"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if ((v = cJSON_GetObjectItemCaseSensitive(hf, refused[i])) && !cJSON_IsNull(v))
            return xs_error_set(err, XS_EUNSUPPORTED,
                                "%s: field '%s' is not modelled (it changes the op list); "
                                "remove it to model the plain %s layer",
                                path, refused[i], type);
    const char *hidden_act = "silu";
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "hidden_act")) && cJSON_IsString(v))
        hidden_act = v->valuestring;
    if (strcmp(hidden_act, "silu") != 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'hidden_act' must be \"silu\" (the gated MLP is "
                            "modelled with SiLU), got \"%s\"",
                            path, hidden_act);
    const char *bias = "none";
    if (strcmp(type, "qwen2") == 0) {
        bias = "qkv";
    } else if (strcmp(type, "llama") == 0) {
        v = cJSON_GetObjectItemCaseSensitive(hf, "attention_bias");
        if (v && !cJSON_IsNull(v) && !cJSON_IsBool(v))
            return xs_error_set(err, XS_EFIELD, "%s: field 'attention_bias' must be true or false",
                                path);
        bias = cJSON_IsTrue(v) ? "all" : "none";
    }
    /* Mistral's sliding_window bounds every layer's attention; Qwen2's
     * only where use_sliding_window is true, from max_window_layers on */
    double window = 0;
    v = cJSON_GetObjectItemCaseSensitive(hf, "use_sliding_window");
    if (strcmp(type, "qwen2") == 0 && cJSON_IsTrue(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'use_sliding_window' true is not modelled (Qwen2's "
                            "per-layer windows); set it false",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "sliding_window");
    if (strcmp(type, "mistral") == 0 && v && !cJSON_IsNull(v)) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 1)
            return xs_error_set(err, XS_EFIELD,
                                "%s: field 'sliding_window' must be a positive integer or null",
                                path);
        window = v->valuedouble;
    }
    if (xs_hf_put_default(model, "family", cJSON_CreateString("llama")) ||
        xs_hf_put_default(model, "attention_bias", cJSON_CreateString(bias)) ||
        xs_hf_put_default(model, "sliding_window", cJSON_CreateNumber(window)) ||
        xs_hf_put_default(model, "dropout", cJSON_CreateNumber(0)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    return XS_OK;
}

static int import(cJSON *model, const cJSON *hf, const char *type, const char *path,
                  xs_error *err)
{
    int rc = import_keys(model, hf, type, path, err);
    if (rc)
        return rc;
    if (!cJSON_GetObjectItemCaseSensitive(model, "arch"))
        cJSON_AddStringToObject(model, "arch", "decoder");
    if (!cJSON_GetObjectItemCaseSensitive(model, "type_vocab"))
        cJSON_AddNumberToObject(model, "type_vocab", 0);
    return xs_hf_copy_keys(model, hf, HF_LLAMA, sizeof HF_LLAMA / sizeof HF_LLAMA[0],
                           key_default, path, err);
}

/* The sequence within the position table, the other families' keys left
 * at their defaults, then what the llama builder needs. */
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
    if (rc)
        return rc;
    const xs_model *m = &s->model;
    const char *path = where;
    int64_t kv = xs_model_kv_heads(m);
    if (m->arch != XS_DECODER)
        return xs_error_set(err, XS_EFIELD, "%s: model.family llama needs model.arch decoder",
                            path);
    if (m->activation != XS_ACT_SILU)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: model.family llama needs model.activation silu (its gated MLP "
                            "is modelled with SiLU)",
                            path);
    if (m->dropout > 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.dropout must be 0 for model.family llama (its layers "
                            "have no hidden dropout; model.attn_dropout is the attention's)",
                            path);
    if (kv > m->heads || m->heads % kv != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.kv_heads (%lld) must divide model.heads (%lld)", path,
                            (long long)kv, (long long)m->heads);
    if (m->hidden % m->heads == 0 && (m->hidden / m->heads) % 2 != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.hidden / model.heads must be even for rotary embeddings "
                            "(rotate_half splits the head in two)",
                            path);
    if (s->train.kernels == XS_K_FUSED)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.kernels fused is modelled for the classic family only "
                            "(LightSeq's kernels); use eager for model.family llama",
                            path);
    if (m->sliding_window > 0 && s->train.seq > m->sliding_window)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.seq (%lld) over model.sliding_window (%lld) is not "
                            "modelled (the window then bounds each query's work); use a "
                            "train.seq of at most the window",
                            path, (long long)s->train.seq, (long long)m->sliding_window);
    return XS_OK;
}

/* LlamaForCausalLM and LlamaForSequenceClassification (modeling_llama.py). */
static const xs_lora_module_path LLAMA_MODULES[] = {
    {"attn.q", "model.layers.%d.self_attn.q_proj"},
    {"attn.k", "model.layers.%d.self_attn.k_proj"},
    {"attn.v", "model.layers.%d.self_attn.v_proj"},
    {"attn.out", "model.layers.%d.self_attn.o_proj"},
    {"ffn.gate", "model.layers.%d.mlp.gate_proj"},
    {"ffn.up", "model.layers.%d.mlp.up_proj"},
    {"ffn.down", "model.layers.%d.mlp.down_proj"},
    {"head.score", "score"},
    {"head.lm", "lm_head"},
};
static const xs_lora_names LLAMA_NAMES = {"Llama-family", "q_proj,v_proj",
    "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, all-linear",
    LLAMA_MODULES, sizeof LLAMA_MODULES / sizeof LLAMA_MODULES[0]};

static void describe(xs_strbuf *sb, const xs_scenario *s, double params)
{
    const xs_model *m = &s->model;
    xs_sb_printf(sb,
                 "model     llama decoder, %lld layers, hidden %lld, %lld heads (%lld kv), "
                 "gated silu ffn %lld, vocab %lld, %s %s head: %.1f M parameters\n",
                 (long long)m->layers, (long long)m->hidden, (long long)m->heads,
                 (long long)xs_model_kv_heads(m), (long long)m->ffn, (long long)m->vocab,
                 m->tied ? "tied" : "untied", m->head == XS_HEAD_LM ? "lm" : "cls",
                 params / 1e6);
}

static void model_json(cJSON *mo, const xs_scenario *s)
{
    const xs_model *m = &s->model;
    static const char *bias[] = {"none", "qkv", "all"};
    cJSON_AddStringToObject(mo, "family", "llama");
    cJSON_AddNumberToObject(mo, "kv_heads", (double)xs_model_kv_heads(m));
    cJSON_AddBoolToObject(mo, "tied", m->tied);
    cJSON_AddStringToObject(mo, "attention_bias", bias[m->attention_bias]);
    cJSON_AddBoolToObject(mo, "mlp_bias", m->mlp_bias);
    cJSON_AddNumberToObject(mo, "sliding_window", (double)m->sliding_window);
}

static const char *const TYPES[] = {"llama", "mistral", "qwen2", NULL};

const xs_family xs_family_llama = {
    .name = "llama",
    .model_types = TYPES,
    .import = import,
    .check = check,
    .forward = forward,
    .lora_names = &LLAMA_NAMES,
    .describe = describe,
    .model_json = model_json,
};
