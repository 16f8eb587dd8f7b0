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

void xs_wb_forward_t5(xs_wb *c)
{
    encoder(c);
    decoder(c);
    lm_head(c);
    c->T = enc_rows(c);
    c->sq = (double)c->s->train.seq;
}
