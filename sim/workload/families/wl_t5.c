/* wl_t5.c — the t5 family: transformers' T5ForConditionalGeneration as it
 * trains (huggingface/transformers@6b8b757dfcb582379a64f013cdce46c43629f2b0:
 * src/transformers/models/t5/modeling_t5.py), one op per kernel it launches,
 * with what autograd saves for each.
 *
 * What the file follows of modeling_t5.py:
 * - one shared token embedding read by both stacks (and by the LM head when
 *   tied); each stack drops out its embeddings;
 * - T5LayerNorm is Python: x.to(fp32).pow(2).mean, rsqrt, x * r, weight *
 *   (the llama family's RMSNorm ops; the residual stream is fp32 under
 *   autocast, so no cast kernel). apex's FusedRMSNorm, which transformers
 *   substitutes when apex is installed, is not modelled;
 * - T5Attention: q, k, v, o without bias, no 1/sqrt(d) scaling, scores +=
 *   position_bias, softmax(scores.float()).type_as(scores), dropout, P V.
 *   T5PreTrainedModel declares no SDPA or flash support at that commit:
 *   eager attention only (check_t5 refuses train.attention flash);
 * - the position bias: the first layer of each stack computes it
 *   (compute_bias: the buckets of every query-key distance, an
 *   nn.Embedding(buckets, heads) lookup, permute) and adds the mask, a
 *   [batch, heads, q, k] fp32 tensor every layer then adds to its scores;
 *   the cross-attention's first layer makes zeros(1, heads, q, k) + the
 *   encoder mask, without gradient;
 * - T5DenseActDense (wi, act, dropout, .to(wo.weight.dtype), wo) or
 *   T5DenseGatedActDense (act(wi_0 x) * wi_1 x, dropout, .to, wo): under
 *   autocast the weights are fp32, so the half activation is cast to fp32
 *   before wo (and autocast casts it back for the GEMM);
 * - the stacks end in T5LayerNorm and dropout; a tied LM head first scales
 *   the decoder output by d_model^-0.5; CrossEntropyLoss over the target
 *   tokens (no shift: the labels are shifted into decoder_input_ids).
 *
 * Each stack's ops are named enc.* or dec.* (cross-attention dec.xattn.*),
 * so that the report's rows, which sum ops by name, keep them apart. */
#include "wl_build.h"

#include <stdio.h>
#include <string.h>

#include "family.h"
#include "family_shared.h"
#include "hf_keys.h"
#include "lora.h"

/* T5Block, T5LayerSelfAttention, T5Attention, T5LayerFF, T5Dense*ActDense;
 * a decoder block adds T5LayerCrossAttention and its T5Attention. */
#define T5_ENC_CONTAINERS 5
#define T5_DEC_CONTAINERS 7

/* Kernels and bytes an element of T5Attention._relative_position_bucket
 * over the query x key grid, int64 throughout: memory - context; the
 * encoder's (rp > 0).to(long) * n, abs (4), the decoder's -min(rp,
 * zeros_like) (3); then rp < max_exact, rp.float() / max_exact, log, /
 * log(max_distance / max_exact), * (n - max_exact), .to(long), + max_exact,
 * full_like, min, where, += (11). Each reads an 8-byte operand or two and
 * writes one: 16 bytes a kernel, counted once. */
#define BUCKET_KERNELS_ENC 16
#define BUCKET_KERNELS_DEC 15

static double enc_rows(const xs_wb *c)
{
    return c->b * (double)c->s->train.seq;
}

static double dec_rows(const xs_wb *c)
{
    return c->b * (double)c->s->train.target_seq;
}

/* Prefix the names of the ops emitted since f0 (forward list) and t0
 * (tape) with the stack's. */
static void prefix_name(char *name, const char *stack)
{
    char buf[sizeof ((xs_op *)0)->name] = {0}; /* its tail zero, as a new op's name is */
    size_t n = strlen(stack);
    if (strncmp(name, stack, n) == 0 && name[n] == '.') /* named so already (linears) */
        return;
    snprintf(buf, sizeof buf, "%s.%.40s", stack, name);
    memcpy(name, buf, sizeof buf);
}

static void name_stack(xs_wb *c, size_t f0, size_t t0, const char *stack)
{
    for (size_t i = f0; !c->failed && i < c->wl->n; i++)
        prefix_name(c->wl->ops[i].name, stack);
    for (size_t i = t0; !c->failed && i < c->tn; i++)
        prefix_name(c->tape[i].name, stack);
}

/* A T5 linear (no bias), named with its stack from the start: LoRA finds
 * its module path by that name (lora.c). */
static void linear(xs_wb *c, const char *stack, const char *name, double rows, double K,
                   double N, int x_island)
{
    char full[48];
    snprintf(full, sizeof full, "%s.%s", stack, name);
    xs_wb_linear(c, full, rows, K, N, 0, x_island);
}

/* A mask the stack builds under no gradient: `kernels` kernels over elems
 * elements, bpe bytes each in all. */
static void mask_op(xs_wb *c, const char *name, double elems, double bpe, int64_t kernels)
{
    int nograd = c->nograd;
    c->nograd = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, bpe, 1, kernels, "%s", name);
    c->nograd = nograd;
}

/* The self-attention's position bias, built in a stack's first layer:
 * the buckets (integer ops, no gradient), the bias table's lookup (an
 * nn.Embedding of buckets x heads, keeping its indices), and + mask, whose
 * [b, a, q, k] fp32 result every layer's scores add (the permuted view
 * read across heads and the mask broadcast: the generic loop). That sum
 * keeps nothing; its backward sums the gradient over the batch. The
 * tensor is alive through the stack's forward, modelled as the add's
 * transient. Its gradient is the sum of the layers' (one add each but
 * the first), emitted here, before its consumers, as autograd runs it
 * after all of their backward ops. */
static void self_bias(xs_wb *c, double q, double k, int decoder, int64_t layers)
{
    double qk = q * k, S2 = c->b * c->a * qk, a = c->a;
    int nograd = c->nograd;
    c->nograd = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, qk,
                 16.0 * (decoder ? BUCKET_KERNELS_DEC : BUCKET_KERNELS_ENC), 1,
                 decoder ? BUCKET_KERNELS_DEC : BUCKET_KERNELS_ENC, "attn.bias.buckets");
    c->nograd = nograd;
    double h = c->h;
    c->h = a; /* the table's rows are heads wide */
    xs_wb_embedding(c, "attn.bias.embed", (double)c->s->model.relative_buckets, qk);
    c->h = h;
    /* the mask: the encoder's [b, 1, 1, k], the decoder's causal [b, 1, q, k];
     * a frozen table (LoRA) gives a bias without gradient */
    double mask = decoder ? c->b * qk * 4 : c->b * k * 4;
    int frozen = c->frozen;
    c->nograd = nograd || frozen;
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 4 + (a * qk * 4 + mask) / S2, 1, 1,
                 "attn.bias.mask_add");
    c->broadcast = 0;
    xs_wb_transient(c, S2 * 4);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, S2, 4 + 4 / c->b, 1, 1, "attn.bias.mask_add.bwd");
    xs_wb_bwd_group(c);
    for (int64_t l = 1; l < layers; l++)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, S2, 3.0 * 4, 1, 1, "attn.bias.grad_sum");
    c->nograd = nograd;
}

/* The cross-attention's bias, in the first decoder layer: zeros of the
 * scores' format, + the encoder mask [b, 1, 1, k], fp32 by promotion; no
 * gradient. */
static void cross_bias(xs_wb *c, double q, double k)
{
    double S2 = c->b * c->a * q * k, zeros = c->a * q * k;
    int nograd = c->nograd;
    c->nograd = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, zeros, c->H, 0, 1, "xattn.bias.zeros");
    xs_wb_transient(c, zeros * c->H);
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 4 + (zeros * c->H + c->b * k * 4) / S2, 1, 1,
                 "xattn.bias.mask_add");
    c->broadcast = 0;
    xs_wb_transient(c, S2 * 4);
    c->nograd = nograd;
}

/* T5Attention after its projections: q over q_len positions, k and v over
 * k_len (the encoder's for the cross-attention), heads of d. bias: the
 * position bias is trainable (self-attention) and its gradient flows back
 * from every layer. p: T5's dropout_rate on the probabilities. */
static void attention(xs_wb *c, const char *name, double q_len, double k_len, int trainable_bias)
{
    double ba = c->b * c->a, d = c->d, S2 = ba * q_len * k_len;
    double qe = c->b * q_len * c->h, ke = c->b * k_len * c->h;
    double p = c->s->model.attn_dropout;
    int H = c->H, sm = c->I; /* softmax in fp32 under autocast (scores.float()) */
    c->x_unkept = 0;
    c->input_nograd = 0;
    /* matmul of the transposed views: q copied into heads, k^T across rows */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, qe, 2.0 * H, 0, 1, "%s.heads.q", name);
    char nm[48];
    xs_wb_join(nm, sizeof nm, name, ".heads");
    xs_wb_transposing_copy(c, XS_PH_FWD, ke, nm, ".kT");
    xs_wb_bwd_group(c);
    xs_wb_transposing_copy(c, XS_PH_BWD, ke, nm, ".kT.bwd");
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_COPY, qe, 2.0 * H, 0, 1, "%s.heads.q.bwd", name);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, q_len, k_len, d, ba, 0, 1, H, H, "%s.scores", name);
    xs_wb_keep(c, qe * H); /* the head copies of q and k */
    xs_wb_keep(c, ke * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, q_len, d, k_len, ba, 0, 0, H, H, "%s.scores.dQ", name);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, k_len, d, q_len, ba, 1, 0, H, H, "%s.scores.dK", name);
    /* scores += position_bias (fp32): in place, keeps the scores' format;
     * the bias's gradient is the scores' cast to fp32 */
    c->broadcast = H != 4; /* two formats: the generic loop */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H + 4, 1, 1, "%s.bias_add", name);
    c->broadcast = 0;
    if (trainable_bias && H != 4) {
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + 4.0, 0, 1, "%s.bias_add.bwd", name);
    }
    if (sm != H) { /* scores.float() */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, H + 4.0, 0, 1, "%s.scores.float", name);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, 4.0 + H, 0, 1, "%s.scores.float.bwd", name);
    }
    xs_wb_join(nm, sizeof nm, name, ".softmax");
    xs_wb_softmax(c, nm, S2, k_len, sm, 0);
    if (sm != H) { /* .type_as(scores) */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, 4.0 + H, 0, 1, "%s.probs.type_as", name);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + 4.0, 0, 1, "%s.probs.type_as.bwd", name);
    }
    xs_wb_join(nm, sizeof nm, name, ".probs.dropout");
    xs_wb_dropout(c, nm, S2, H, p);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, ke, 2.0 * H, 0, 1, "%s.heads.v", name);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_COPY, ke, 2.0 * H, 0, 1, "%s.heads.v.bwd", name);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, q_len, d, k_len, ba, 0, 0, H, H, "%s.context", name);
    /* P V keeps v's copy and the probabilities it read: softmax's own
     * output (kept there already) only when no dropout or cast came between */
    xs_wb_keep(c, ke * H);
    if (!(p <= 0 && sm == H))
        xs_wb_keep(c, S2 * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, q_len, k_len, d, ba, 0, 1, H, H, "%s.context.dP", name);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, k_len, d, q_len, ba, 1, 0, H, H, "%s.context.dV", name);
    xs_wb_join(nm, sizeof nm, name, ".merge");
    xs_wb_head_copies(c, nm, qe, 1, 0);
}

/* T5LayerFF's DenseReluDense over rows; returns nothing: wo's output is in
 * the matmul format. */
static void ffn(xs_wb *c, const char *stack, double rows)
{
    double h = c->h, f = c->f, e = rows * f, p = c->s->model.dropout;
    int island, H = c->H;
    if (c->s->model.gated_ffn) {
        xs_wb_grad_fanout(c, "ffn.x", rows * h, c->I, 2); /* wi_0 and wi_1 */
        linear(c, stack, "ffn.wi_0", rows, h, f, 1);
        island = xs_wb_activation(c, e);
        c->x_kept = !c->amp; /* autocast casts x for each; else one tensor */
        linear(c, stack, "ffn.wi_1", rows, h, f, 1);
        c->x_kept = 0;
        /* act * linear: type promotion to the activation's format; keeps
         * both operands */
        int es_g = island ? c->I : H;
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, (double)es_g + H + es_g, 1, 1, "ffn.mul");
        xs_wb_keep(c, e * es_g);
        xs_wb_keep(c, e * H);
        xs_wb_bwd_group(c);
        /* reads dy and both operands, writes both gradients */
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 3.0 * es_g + 2.0 * H, 2, 2, "ffn.mul.bwd");
    } else {
        linear(c, stack, "ffn.wi", rows, h, f, 1);
        island = xs_wb_activation(c, e);
    }
    int es = island ? c->I : H;
    xs_wb_dropout(c, "ffn.act_dropout", e, es, p);
    /* .to(wo.weight.dtype): an fp32 weight under autocast */
    if (c->amp && es != 4) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, e, es + 4.0, 0, 1, "ffn.wo.to_fp32");
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, e, 4.0 + es, 0, 1, "ffn.wo.to_fp32.bwd");
    }
    linear(c, stack, "ffn.wo", rows, f, h, c->amp);
}

/* norm -> sublayer -> dropout -> + residual, around the sublayer's output
 * of rows x h in the matmul format. */
static void residual_out(xs_wb *c, const char *name, double rows)
{
    double e = rows * c->h;
    char nm[48];
    xs_wb_join(nm, sizeof nm, name, ".dropout");
    xs_wb_dropout(c, nm, e, c->H, c->s->model.dropout);
    xs_wb_join(nm, sizeof nm, name, ".residual");
    xs_wb_residual_add(c, nm, e, c->H, c->I, c->I);
}

/* q, k, v over the normed x (self-attention), T5Attention, o. */
static void self_attention(xs_wb *c, const char *stack, double rows, double len, int decoder,
                           int64_t layers)
{
    double h = c->h;
    xs_wb_grad_fanout(c, "attn.residual", rows * h, c->I, 2);
    /* a frozen norm of an input without gradient (LoRA's first layer):
     * autograd records nothing */
    int nograd = c->nograd;
    c->nograd = nograd || (c->frozen && c->input_nograd);
    xs_wb_rmsnorm(c, "attn.norm", rows);
    c->nograd = nograd;
    xs_wb_grad_fanout(c, "attn.x", rows * h, c->I, 3);
    linear(c, stack, "attn.q", rows, h, h, 1);
    c->x_kept = !c->amp;
    linear(c, stack, "attn.k", rows, h, h, 1);
    linear(c, stack, "attn.v", rows, h, h, 1);
    c->x_kept = 0;
    if (c->layer == 0)
        self_bias(c, len, len, decoder, layers);
    attention(c, "attn", len, len, !c->frozen);
    linear(c, stack, "attn.o", rows, h, h, 0);
    residual_out(c, "attn", rows);
}

static void ffn_block(xs_wb *c, const char *stack, double rows)
{
    xs_wb_grad_fanout(c, "ffn.residual", rows * c->h, c->I, 2);
    xs_wb_rmsnorm(c, "ffn.norm", rows);
    ffn(c, stack, rows);
    residual_out(c, "ffn", rows);
}

static void encoder_layer(xs_wb *c)
{
    xs_wb_enter_modules(c, T5_ENC_CONTAINERS);
    self_attention(c, "enc", enc_rows(c), (double)c->s->train.seq, 0, c->s->model.layers);
    ffn_block(c, "enc", enc_rows(c));
}

/* The cross-attention reads the encoder's output in every decoder layer:
 * under autocast each k and v casts it anew (autocast caches weights
 * only), else one tensor that the first linear to read it keeps. */
static void decoder_layer(xs_wb *c)
{
    const xs_train *t = &c->s->train;
    double Td = dec_rows(c), Te = enc_rows(c), h = c->h;
    double tq = (double)t->target_seq, s = (double)t->seq;
    xs_wb_enter_modules(c, T5_DEC_CONTAINERS);
    self_attention(c, "dec", Td, tq, 1, xs_model_decoder_layers(&c->s->model));
    xs_wb_grad_fanout(c, "xattn.residual", Td * h, c->I, 2);
    xs_wb_rmsnorm(c, "xattn.norm", Td);
    linear(c, "dec", "xattn.q", Td, h, h, 1);
    /* the linear takes the op before it for its input's producer: keep
     * that op's transient as it was */
    size_t before = c->wl->n - 1;
    double temp = c->failed ? 0 : c->wl->ops[before].mem.temp;
    c->x_kept = !c->amp && c->layer > 0;
    linear(c, "dec", "xattn.k", Te, h, h, 1);
    c->x_kept = !c->amp;
    linear(c, "dec", "xattn.v", Te, h, h, 1);
    c->x_kept = 0;
    if (!c->failed)
        c->wl->ops[before].mem.temp = temp;
    if (c->layer == 0)
        cross_bias(c, tq, s);
    attention(c, "xattn", tq, s, 0);
    linear(c, "dec", "xattn.o", Td, h, h, 0);
    residual_out(c, "xattn", Td);
    ffn_block(c, "dec", Td);
}

/* T5Stack's end: the final norm and dropout. */
static void stack_end(xs_wb *c, double rows)
{
    xs_wb_rmsnorm(c, "final_norm", rows);
    xs_wb_dropout(c, "final_dropout", rows * c->h, c->I, c->s->model.dropout);
}

/* The shared embedding's gradient: each use writes a dense one and
 * AccumulateGrad adds every one but the first into .grad. */
static void shared_grad_sum(xs_wb *c)
{
    double Vh = c->V * c->h;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, Vh, 3.0 * c->Wm, 1, 1, "embed.shared.grad_sum");
}

static void encoder(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    double Te = enc_rows(c);
    size_t f0 = c->wl->n, t0 = c->tn;
    c->T = Te;
    c->sq = (double)c->s->train.seq;
    c->layer = -1;
    /* T5ForConditionalGeneration, the encoder T5Stack */
    xs_wb_enter_modules(c, 2);
    /* attention_mask[:, None, None, :].to(fp32), (1 - m) * min */
    mask_op(c, "mask", Te, 8 + 4 + 4 + 4 + 4 + 4, 3);
    /* LoRA: the frozen embedding's output needs no gradient, nor does the
     * first layer's input until its linears have read it */
    c->nograd = c->lora;
    xs_wb_embedding(c, "embed", (double)m->vocab, Te);
    /* one use of the shared table of three (tied) or two: an add into .grad
     * when its backward, the last to run, writes its gradient */
    if (!c->frozen)
        shared_grad_sum(c);
    xs_wb_dropout(c, "embed.dropout", Te * c->h, c->I, m->dropout);
    c->nograd = 0;
    c->input_nograd = c->lora;
    c->first_layer_differs = 1; /* the relative position bias */
    xs_wb_layers(c, m->layers, encoder_layer);
    stack_end(c, Te);
    name_stack(c, f0, t0, "enc");
}

static void decoder(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    const xs_train *t = &c->s->train;
    double Td = dec_rows(c), Te = enc_rows(c), tq = (double)t->target_seq;
    int64_t Ld = xs_model_decoder_layers(m);
    size_t f0 = c->wl->n, t0 = c->tn;
    size_t enc_out = f0 - 1; /* the encoder's output: its final dropout (or norm) */
    c->T = Td;
    c->sq = tq;
    c->layer = -1;
    xs_wb_enter_modules(c, 1); /* the decoder T5Stack */
    /* _update_causal_mask (eager): full, triu, the cache-position compare
     * and mul, expand and clone, the padding add, == 0, masked_fill over
     * [b, 1, q, q]; invert_attention_mask of the encoder's over [b, s] */
    mask_op(c, "causal_mask", c->b * tq * tq, 8 * 8.0, 8);
    mask_op(c, "xattn.mask", Te, 8 + 4 + 4 + 4 + 4 + 4, 3);
    /* the shared table again: its parameters counted once; the gradient
     * this use writes is the table's first when untied (its backward runs
     * before the encoder's), the head's is when tied */
    param_mark before = xs_wb_mark_params(c);
    c->nograd = c->lora;
    xs_wb_embedding(c, "embed", (double)m->vocab, Td);
    double Vh = c->V * c->h, slack = xs_alloc_slack(Vh * c->Wm);
    c->wl->params = before.params;
    c->wl->trainable_params = before.trainable;
    c->wl->tensors = before.tensors;
    if (c->pn > before.pn)
        c->pn = before.pn;
    if (!c->failed && c->gn > 0 && !c->frozen) {
        size_t g = c->gn - 1;
        c->params_mark = before.trainable;
        c->ggrad[g] = m->tied ? 0 : Vh;
        c->ggrad_slack[g] = m->tied ? 0 : slack;
        if (!m->tied) {
            c->ggrad[c->tied_group] -= Vh;
            c->ggrad_slack[c->tied_group] -= slack;
        }
    }
    xs_wb_dropout(c, "embed.dropout", Td * c->h, c->I, m->dropout);
    c->nograd = 0;
    /* the encoder output's gradients from every cross-attention k and v,
     * summed as they arrive (fp32 under autocast: after each cast back) */
    xs_wb_bwd_group(c);
    for (int64_t i = 1; i < 2 * Ld; i++)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, Te * c->h, 3.0 * c->I, 1, 1,
                     "enc_out.grad_sum");
    c->input_nograd = c->lora;
    c->first_layer_differs = 1; /* the relative position bias */
    xs_wb_layers(c, Ld, decoder_layer);
    if (!c->amp) /* one tensor, kept by the first cross-attention k */
        xs_wb_kept_from(c, enc_out);
    stack_end(c, Td);
    name_stack(c, f0, t0, "dec");
}

/* lm_head over the target tokens (tied: the decoder output scaled by
 * d_model^-0.5 first, then the shared table; v1.1: its own V x h), the
 * logits cast to fp32 for the loss under autocast, CrossEntropyLoss. */
static void lm_head(xs_wb *c)
{
    double Td = dec_rows(c), h = c->h, V = c->V;
    int tied = c->s->model.tied;
    c->layer = -1;
    if (tied) { /* a Python float: nothing kept */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, Td * h, 2.0 * c->I, 1, 1, "head.scale");
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, Td * h, 2.0 * c->I, 1, 1, "head.scale.bwd");
    }
    param_mark before = xs_wb_mark_params(c);
    xs_wb_linear(c, "head.lm", Td, h, V, 0, 1);
    if (tied)
        xs_wb_tie_to_embedding(c, &before, V);
    int ls = c->H;
    if (c->amp) { /* cross_entropy is on autocast's fp32 list */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, Td * V, c->H + 4.0, 0, 1, "head.loss.cast");
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, Td * V, 4.0 + c->H, 0, 1, "head.loss.cast.bwd");
        ls = 4;
    }
    xs_wb_cross_entropy(c, Td, V, ls);
}

static void forward(xs_wb *c)
{
    encoder(c);
    decoder(c);
    lm_head(c);
    c->T = enc_rows(c);
    c->sq = (double)c->s->train.seq;
}

/* ---- the family record (family.h) --------------------------------------- */

/* T5Config (huggingface/transformers@2678947a26f82a3cfed465026a0f5a7798ba84b2:
 * src/transformers/models/t5/configuration_t5.py: its __init__ defaults).
 * n_positions is no T5Config parameter and the model does not use it
 * (relative positions); the original checkpoints' configs carry 512, kept
 * as model.max_positions for the record (absent: 512).
 * relative_attention_max_distance, layer_norm_epsilon and
 * initializer_factor change values, not work, and are not read. */
static const xs_hf_key HF_T5[] = {
    {"layers", "num_layers", XS_HF_NULL_REFUSED},
    {"hidden", "d_model", XS_HF_NULL_REFUSED},
    {"heads", "num_heads", XS_HF_NULL_REFUSED},
    {"ffn", "d_ff", XS_HF_NULL_REFUSED},
    {"vocab", "vocab_size", XS_HF_NULL_REFUSED},
    {"max_positions", "n_positions", XS_HF_NULL_REFUSED},
    {"decoder_layers", "num_decoder_layers", XS_HF_NULL_DEFAULT},
    {"relative_buckets", "relative_attention_num_buckets", XS_HF_NULL_REFUSED},
    {"dropout", "dropout_rate", XS_HF_NULL_REFUSED},
    /* T5Attention drops its probabilities at dropout_rate */
    {"attn_dropout", "dropout_rate", XS_HF_NULL_REFUSED},
    {"tied", "tie_word_embeddings", XS_HF_NULL_REFUSED},
};

/* T5Config.__init__'s defaults. */
static cJSON *key_default(const char *canon, const cJSON *hf)
{
    (void)hf;
    if (strcmp(canon, "max_positions") == 0) /* the original configs' n_positions */
        return cJSON_CreateNumber(512);
    if (strcmp(canon, "decoder_layers") == 0) /* None: num_layers */
        return cJSON_CreateNumber(0);
    if (strcmp(canon, "relative_buckets") == 0)
        return cJSON_CreateNumber(32);
    if (strcmp(canon, "dropout") == 0 || strcmp(canon, "attn_dropout") == 0)
        return cJSON_CreateNumber(0.1);
    if (strcmp(canon, "tied") == 0) /* PretrainedConfig's tie_word_embeddings */
        return cJSON_CreateTrue();
    return NULL;
    return NULL;
}

/* T5's keys that are not plain copies, and those that would change the op
 * list in ways not modelled, refused by name. Read against transformers'
 * configuration_t5.py and modeling_t5.py
 * (huggingface/transformers@6b8b757dfcb582379a64f013cdce46c43629f2b0):
 * feed_forward_proj is "[gated-]act"; "gated-gelu" means gelu_new (newer
 * configuration_t5.py, "for backwards compatibility"; team code index,
 * find_string id 3755908106); the
 * attention projects d_model onto num_heads x d_kv (inner_dim), which is
 * modelled only where it equals d_model (t5-small to t5-large, v1.1 base
 * and large; not t5-3b or t5-11b). */
static int import_keys(cJSON *model, const cJSON *hf, const char *path, xs_error *err)
{
    const cJSON *v;
    double heads = 0, d_model = 0, d_kv = 64; /* T5Config's d_kv default */
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "num_heads")))
        heads = v->valuedouble;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "d_model")))
        d_model = v->valuedouble;
    v = cJSON_GetObjectItemCaseSensitive(hf, "d_kv");
    if (v && !cJSON_IsNull(v)) {
        if (!cJSON_IsNumber(v))
            return xs_error_set(err, XS_EFIELD, "%s: field 'd_kv' must be a positive integer",
                                path);
        d_kv = v->valuedouble;
    }
    if (heads > 0 && d_model > 0 && d_kv * heads != d_model)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'd_kv' x num_heads (%g x %g) must equal d_model (%g) "
                            "(an attention width of its own is not modelled)",
                            path, d_kv, heads, d_model);
    const char *proj = "relu";
    v = cJSON_GetObjectItemCaseSensitive(hf, "feed_forward_proj");
    if (v && !cJSON_IsNull(v)) {
        if (!cJSON_IsString(v))
            return xs_error_set(err, XS_EFIELD, "%s: field 'feed_forward_proj' must be a string",
                                path);
        proj = v->valuestring;
    }
    const char *act = strcmp(proj, "relu") == 0         ? "relu"
                      : strcmp(proj, "gelu") == 0       ? "gelu"
                      : strcmp(proj, "gated-gelu") == 0 ? "gelu_new"
                                                        : NULL;
    if (!act)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'feed_forward_proj' must be \"relu\", \"gelu\" or "
                            "\"gated-gelu\" (the FFNs modelled), got \"%s\"",
                            path, proj);
    int gated = strncmp(proj, "gated-", 6) == 0;
    /* configs saved by newer transformers also hold what T5Config derives */
    v = cJSON_GetObjectItemCaseSensitive(hf, "dense_act_fn");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsString(v) && strcmp(v->valuestring, act) == 0))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'dense_act_fn' must be \"%s\", what feed_forward_proj "
                            "\"%s\" implies (another activation is not modelled)",
                            path, act, proj);
    v = cJSON_GetObjectItemCaseSensitive(hf, "is_gated_act");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsBool(v) && cJSON_IsTrue(v) == gated))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'is_gated_act' must be %s, what feed_forward_proj \"%s\" "
                            "implies",
                            path, gated ? "true" : "false", proj);
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "quantization_config")) && !cJSON_IsNull(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'quantization_config' is not modelled (it changes the op "
                            "list); remove it to model the plain t5 layers",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "is_encoder_decoder");
    if (v && !cJSON_IsNull(v) && !cJSON_IsTrue(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'is_encoder_decoder' must be true (T5ForConditionalGeneration; "
                            "an encoder alone is not modelled)",
                            path);
    if (xs_hf_put_default(model, "family", cJSON_CreateString("t5")) ||
        xs_hf_put_default(model, "arch", cJSON_CreateString("encoder_decoder")) ||
        xs_hf_put_default(model, "type_vocab", cJSON_CreateNumber(0)) ||
        xs_hf_put_default(model, "activation", cJSON_CreateString(act)) ||
        xs_hf_put_default(model, "gated_ffn", cJSON_CreateBool(gated)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    return XS_OK;
}

static int import(cJSON *model, const cJSON *hf, const char *type, const char *path,
                  xs_error *err)
{
    (void)type;
    int rc = import_keys(model, hf, path, err);
    return rc ? rc
              : xs_hf_copy_keys(model, hf, HF_T5, sizeof HF_T5 / sizeof HF_T5[0], key_default,
                                path, err);
}

/* T5's lengths as run_summarization.py's defaults
 * (huggingface/transformers@2520420bd460a1bf5518b21bfe7f4b5ecd981a81:
 * examples/pytorch/summarization/run_summarization.py, DataTrainingArguments):
 * train.seq is max_source_length 1024 (relative positions: n_positions
 * does not cap it), train.target_seq max_target_length 128. */
static int complete(cJSON *root, xs_error *err)
{
    int rc = xs_scn_doc_default(root, "train.seq", 1024, err);
    return rc ? rc : xs_scn_doc_default(root, "train.target_seq", 128, err);
}

/* T5ForConditionalGeneration as modelled (above): what it refuses, each
 * with the reason, in one line. */
static int check_t5(const xs_scenario *s, const char *path, xs_error *err)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    if (m->arch != XS_ENCODER_DECODER)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.family t5 needs model.arch encoder_decoder", path);
    if (m->head != XS_HEAD_LM)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: model.family t5 needs model.head lm (T5ForConditionalGeneration; "
                            "its classification and QA heads are not modelled)",
                            path);
    if (m->activation == XS_ACT_SILU || (m->gated_ffn && m->activation != XS_ACT_GELU_NEW))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: model.family t5 models the FFNs relu, gelu, gelu_new and gated "
                            "gelu_new (\"gated-gelu\"); model.activation does not fit model.gated_ffn",
                            path);
    const char *other = m->kv_heads != 0 && m->kv_heads != m->heads ? "model.kv_heads"
                        : m->attention_bias != 0                    ? "model.attention_bias"
                        : m->mlp_bias                               ? "model.mlp_bias"
                        : m->sliding_window != 0                    ? "model.sliding_window"
                        : m->type_vocab != 0                        ? "model.type_vocab"
                                                                    : NULL;
    if (other)
        return xs_error_set(err, XS_EFIELD, "%s: %s must be left out for model.family t5", path,
                            other);
    if (m->relative_buckets < 1)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.relative_buckets must be at least 1 for model.family t5 "
                            "(relative_attention_num_buckets; T5Config's default is 32)",
                            path);
    if (t->target_seq < 1)
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.target_seq must be at least 1 for model.family t5", path);
    /* each with why it is not modelled */
    const char *refused =
        t->kernels == XS_K_FUSED
            ? "train.kernels fused (LightSeq's kernels are BERT's and GPT-2's; use eager)"
        : t->attention == XS_ATT_FLASH
            ? "train.attention flash (T5PreTrainedModel declares no SDPA or flash-attention "
              "support: the relative position bias is added to materialized scores; use "
              "unfused)"
        : t->ffn_bias == XS_FFN_BIAS_SEPARATE
            ? "train.ffn_bias separate (T5's linears have no bias)"
        : t->quant != XS_QUANT_NONE
            ? "train.quant nf4 (QLoRA on T5; LoRA alone is modelled)"
        : t->checkpointing != XS_CKPT_NONE
            ? "train.checkpointing layer (T5's checkpointed layers pass the position bias "
              "and the encoder output along; not modelled)"
        : t->precision == XS_P_BF16
            ? "train.precision bf16 (T5 keeps wo in fp32, _keep_in_fp32_modules, so a bf16 "
              "model mixes formats; use amp_bf16)"
        : (t->precision == XS_P_AMP_FP16 || t->precision == XS_P_AMP_BF16) &&
                  t->amp_mode == XS_AMP_O2
            ? "train.amp_mode o2 (a half model runs T5Block's fp16 clamps; use autocast)"
            : NULL;
    if (refused)
        return xs_error_set(err, XS_EUNSUPPORTED, "%s: model.family t5 does not model %s", path,
                            refused);
    return XS_OK;
}

/* distilbert's head dropout left out, then the T5's own. */
static int check(const xs_scenario *s, const char *where, xs_error *err)
{
    int rc = xs_fam_no_head_dropout(s, where, err);
    return rc ? rc : check_t5(s, where, err);
}

/* T5ForConditionalGeneration (modeling_t5.py): block.N.layer is
 * [SelfAttention, (EncDecAttention,) FF]; the builder names each linear
 * with its stack */
static const xs_lora_module_path T5_MODULES[] = {
    {"enc.attn.q", "encoder.block.%d.layer.0.SelfAttention.q"},
    {"enc.attn.k", "encoder.block.%d.layer.0.SelfAttention.k"},
    {"enc.attn.v", "encoder.block.%d.layer.0.SelfAttention.v"},
    {"enc.attn.o", "encoder.block.%d.layer.0.SelfAttention.o"},
    {"enc.ffn.wi", "encoder.block.%d.layer.1.DenseReluDense.wi"},
    {"enc.ffn.wi_0", "encoder.block.%d.layer.1.DenseReluDense.wi_0"},
    {"enc.ffn.wi_1", "encoder.block.%d.layer.1.DenseReluDense.wi_1"},
    {"enc.ffn.wo", "encoder.block.%d.layer.1.DenseReluDense.wo"},
    {"dec.attn.q", "decoder.block.%d.layer.0.SelfAttention.q"},
    {"dec.attn.k", "decoder.block.%d.layer.0.SelfAttention.k"},
    {"dec.attn.v", "decoder.block.%d.layer.0.SelfAttention.v"},
    {"dec.attn.o", "decoder.block.%d.layer.0.SelfAttention.o"},
    {"dec.xattn.q", "decoder.block.%d.layer.1.EncDecAttention.q"},
    {"dec.xattn.k", "decoder.block.%d.layer.1.EncDecAttention.k"},
    {"dec.xattn.v", "decoder.block.%d.layer.1.EncDecAttention.v"},
    {"dec.xattn.o", "decoder.block.%d.layer.1.EncDecAttention.o"},
    {"dec.ffn.wi", "decoder.block.%d.layer.2.DenseReluDense.wi"},
    {"dec.ffn.wi_0", "decoder.block.%d.layer.2.DenseReluDense.wi_0"},
    {"dec.ffn.wi_1", "decoder.block.%d.layer.2.DenseReluDense.wi_1"},
    {"dec.ffn.wo", "decoder.block.%d.layer.2.DenseReluDense.wo"},
    {"head.lm", "lm_head"},
};
static const xs_lora_names T5_NAMES = {"T5", "q,v",
    "q, k, v, o, wi (gated: wi_0, wi_1), wo, EncDecAttention.v, all-linear",
    T5_MODULES, sizeof T5_MODULES / sizeof T5_MODULES[0]};

static void describe(xs_strbuf *sb, const xs_scenario *s, double params)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    xs_sb_printf(sb,
                 "model     t5 encoder-decoder, %lld + %lld layers, hidden %lld, %lld heads, "
                 "%s%s ffn %lld, vocab %lld, %lld position buckets, %s lm head: %.1f M "
                 "parameters\n",
                 (long long)m->layers, (long long)xs_model_decoder_layers(m),
                 (long long)m->hidden, (long long)m->heads, m->gated_ffn ? "gated " : "",
                 xs_activation_name(m->activation), (long long)m->ffn, (long long)m->vocab,
                 (long long)m->relative_buckets, m->tied ? "tied" : "untied", params / 1e6);
    xs_sb_printf(sb,
                 "seq2seq   source (encoder) seq %lld, target (decoder) seq %lld; tokens/s "
                 "counts source tokens\n",
                 (long long)t->seq, (long long)t->target_seq);
}

static void model_json(cJSON *mo, const xs_scenario *s)
{
    const xs_model *m = &s->model;
    cJSON_AddStringToObject(mo, "family", "t5");
    cJSON_AddNumberToObject(mo, "decoder_layers", (double)xs_model_decoder_layers(m));
    cJSON_AddNumberToObject(mo, "relative_buckets", (double)m->relative_buckets);
    cJSON_AddBoolToObject(mo, "gated_ffn", m->gated_ffn);
    cJSON_AddBoolToObject(mo, "tied", m->tied);
}

/* seq is the source; tokens_per_s counts it */
static void train_json(cJSON *to, const xs_scenario *s)
{
    cJSON_AddNumberToObject(to, "target_seq", (double)s->train.target_seq);
    cJSON_AddStringToObject(to, "tokens_counted", "source");
}

static const char *const TYPES[] = {"t5", NULL};

const xs_family xs_family_t5 = {
    .name = "t5",
    .model_types = TYPES,
    .import = import,
    .complete = complete,
    .check = check,
    .forward = forward,
    .lora_names = &T5_NAMES,
    .describe = describe,
    .model_json = model_json,
    .train_json = train_json,
};
