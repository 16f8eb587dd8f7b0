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
#include "grow.h"
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

/* LlamaRMSNorm is Python: hidden_states.to(float32), pow(2), mean(-1),
 * + eps, rsqrt, mul, .to(input_dtype), weight * x. The .to() calls are
 * kernels only when the input is not fp32 (pure bf16, apex O2); under
 * autocast the residual stream is fp32 (fp32 weights, an fp32 residual
 * add), pow and rsqrt are on autocast's fp32 list, and the norm runs in
 * fp32 from end to end. Autograd keeps the fp32 input (pow's and mul's
 * operand), rsqrt's result (its own backward and mul's other operand) and
 * the normalized tensor weight multiplies (the weight, a parameter, costs
 * nothing more). Its backward is autograd's formulas: weight's mul (dy w,
 * dy y, a row sum for dweight), mul's (dy r, dy x and its row sum), rsqrt's
 * (-0.5 dy r^3: pow, mul, mul), mean's (expand, divide), pow's (x.pow(1),
 * times 2, times dy), and the sum of x's two gradients. */
void xs_wb_rmsnorm(xs_wb *c, const char *name, double rows)
{
    double h = c->h, e = rows * h;
    int I = c->I, cast = I != 4;
    xs_wb_add_param(c, h, 0, 0); /* ALL_LAYERNORM_LAYERS: the Trainer's no-decay group */
    xs_wb_enter_modules(c, 1);
    if (cast) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, e, I + 4.0, 0, 1, "%s.to_fp32", name);
        xs_wb_keep_output(c, e * 4);
    }
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 8, 1, 1, "%s.pow", name);
    if (!cast)
        xs_wb_keep(c, e * 4); /* x itself, the fp32 residual stream */
    xs_wb_transient(c, e * 4);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_REDUCE, e, 4 + 4 / h, 1, 1, "%s.mean", name);
    xs_wb_transient(c, rows * 4);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows, 16, 2, 2, "%s.rsqrt", name); /* + eps, rsqrt */
    xs_wb_keep_output(c, rows * 4);
    c->broadcast = 1; /* the [rows, 1] rsqrt, then the [h] weight */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 8 + 4 / h, 1, 1, "%s.mul", name);
    if (cast) {
        xs_wb_transient(c, e * 4);
        c->broadcast = 0;
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, e, 4.0 + I, 0, 1, "%s.to_input", name);
        c->broadcast = 1;
    }
    xs_wb_keep_output(c, e * I); /* what weight multiplies */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 2.0 * I, 1, 1, "%s.weight", name);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 5.0 * I, 2, 2, "%s.weight.bwd", name);
    c->broadcast = 0;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, e, I, 1, 1, "%s.weight.dw", name);
    if (cast)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, e, I + 4.0, 0, 1, "%s.to_input.bwd", name);
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 20, 2, 2, "%s.mul.bwd", name);
    c->broadcast = 0;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, e, 4 + 4 / h, 1, 1, "%s.mul.bwd.sum", name);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, rows, 28, 3, 3, "%s.rsqrt.bwd", name);
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 4 + 4 / h, 1, 1, "%s.mean.bwd", name);
    c->broadcast = 0;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 28, 2, 3, "%s.pow.bwd", name);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 12, 1, 1, "%s.x.grad_sum", name);
    if (cast)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, e, 4.0 + I, 0, 1, "%s.to_fp32.bwd", name);
}

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
void xs_wb_forward_llama(xs_wb *c)
{
    xs_wb_embeddings(c, llama_embeddings);
    xs_wb_layers(c, c->s->model.layers, llama_layer);
    xs_wb_rmsnorm(c, "norm", c->T);
    if (c->s->model.head == XS_HEAD_LM)
        llama_lm_head(c);
    else
        xs_wb_cls_head(c, 1);
}
