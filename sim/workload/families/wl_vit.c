/* wl_vit.c — the vit family: transformers' ViTForImageClassification as it
 * runs in training (huggingface/transformers@005db8208dee358fe8fe63ae3cc49dd054aad48d:
 * src/transformers/models/vit/modeling_vit.py): the patch embedding (a
 * convolution with kernel = stride = patch), the class token and the
 * learned positions, pre-LN encoder layers (ViTLayer), the final
 * LayerNorm, a linear classifier on the class token (no pooler:
 * add_pooling_layer=False) and the cross-entropy over model.labels. */
#include "wl_build.h"

#include <stdio.h>

/* ViTLayer, ViTAttention, ViTSelfAttention, ViTSelfOutput,
 * ViTIntermediate, ViTOutput. */
#define VIT_LAYER_CONTAINERS 6

/* ViTForImageClassification, ViTModel, ViTEmbeddings, ViTPatchEmbeddings
 * and ViTEncoder, entered before the first layer. */
#define VIT_EMBED_CONTAINERS 5

/* ViTPatchEmbeddings.projection, nn.Conv2d(C, h, kernel_size=p, stride=p)
 * over the batch's pixel_values (fp32, b x C x H x W, as the image
 * processor and the default collator hand them over), then
 * flatten(2).transpose(1, 2): a view.
 *
 * Modelled as the GEMM the strided convolution is: every patch is one row
 * of C p^2 pixels, [b np, C p^2] x [C p^2, h], plus the layout pass that
 * puts the NCHW image into that patch-major order (cuDNN's implicit-GEMM
 * kernels read the input in their own layout and convert an NCHW tensor
 * first; its weight-gradient pass reads the saved NCHW input again, so the
 * pass is paid once a direction). The bias is added by a separate
 * broadcast kernel: PyTorch's cuDNN path runs cudnn_convolution and then
 * output.add_(reshape_bias(...)) (aten/src/ATen/native/Convolution.cpp,
 * _convolution), and its gradient is a reduction of the output gradient.
 * The pixels need no gradient: there is no dX.
 *
 * The fp32 pixel batch itself stays alive through the step (the training
 * loop holds the batch); it is counted as kept by the first op and
 * released with the last backward op, under LoRA too. */
static void patch_embedding(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    double C = (double)m->channels, p = (double)m->patch_size, h = c->h;
    double np = c->sq - 1, rows = c->b * np, K = C * p * p;
    double pixels = c->b * C * (double)m->image_size * (double)m->image_size;
    int H = c->H, trained = !c->frozen, nograd = c->nograd;
    c->nograd = nograd || !trained; /* frozen weights and pixels: no backward */
    xs_wb_enter_modules(c, 1); /* the Conv2d */
    xs_wb_add_param(c, K * h, 1, 1);
    xs_wb_add_param(c, h, 0, 0);
    size_t x_src = (size_t)-1, w_src = (size_t)-1;
    /* autocast casts the pixels for the convolution; a half model (bf16,
     * apex O2) gets them cast by ViTModel.forward's
     * pixel_values.to(projection.weight.dtype) */
    int cast_x = H != 4;
    if (cast_x) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, pixels, 4.0 + H, 0, 1, "embed.patch.cast_x");
        if (c->amp)
            xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        x_src = c->wl->n - 1;
    }
    xs_wb_transposing_copy(c, XS_PH_FWD, pixels, "embed.patch.layout", "");
    xs_wb_transient(c, pixels * H);
    c->nograd = 0;
    xs_wb_keep(c, pixels * 4); /* the fp32 batch */
    c->nograd = nograd || !trained;
    if (c->amp) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, K * h + h, 4.0 + H, 0, 2, "embed.patch.cast_w");
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        w_src = c->wl->n - 1;
    }
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_GEMM, rows, h, K, 1, 0, 1, H, H, "embed.patch");
    /* ConvolutionBackward keeps its input and weight: the batch and the
     * parameter themselves, or the copies the casts made */
    if (cast_x) {
        xs_wb_keep(c, pixels * H);
        xs_wb_kept_from(c, x_src);
    }
    if (c->amp) {
        xs_wb_keep(c, K * h * H);
        xs_wb_kept_from(c, w_src);
    }
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows * h, 2.0 * H, 1, 1, "embed.patch.bias_add");
    c->broadcast = 0;
    xs_wb_bwd_group(c);
    xs_wb_transposing_copy(c, XS_PH_BWD, pixels, "embed.patch.layout", ".bwd");
    xs_wb_transient(c, pixels * H);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_GEMM, h, K, rows, 1, 1, 0, H, H, "embed.patch.dW");
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, rows * h, H, 1, 1, "embed.patch.db");
    if (c->amp)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, K * h + h, H + 4.0, 0, 2, "embed.patch.dW.cast");
    c->nograd = nograd;
}

/* ViTEmbeddings.forward: the patches, torch.cat((cls_token.expand(b, -1,
 * -1), patches), dim=1), + position_embeddings, dropout. cat is on
 * autocast's promote list: with the fp32 class token it writes fp32, so
 * the stream is fp32 from here (the fp32-island format). The cat reads
 * the convolution's [b, h, np] output across its rows (the transpose
 * view). Backward: the slice of the gradient that belongs to the patches
 * goes back to the convolution's layout and format (a copy), the class
 * token's gradient is summed over the batch (expand), the positions' over
 * the batch (broadcast add). */
static void vit_embeddings(xs_wb *c)
{
    const xs_model *m = &c->s->model;
    double h = c->h, T = c->T, np = c->sq - 1;
    int H = c->H, I = c->I;
    c->layer = -1;
    xs_wb_enter_modules(c, VIT_EMBED_CONTAINERS);
    patch_embedding(c);
    /* under LoRA with checkpointing, transformers' enable_input_require_grads
     * makes the patch embeddings' output require grad: the cat's backward
     * then runs, the frozen parameters get no gradient */
    xs_wb_add_param(c, h, 1, 0); /* cls_token */
    c->transposing = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, T * h, (double)H + I, 0, 1, "embed.cat");
    c->transposing = 0;
    xs_wb_bwd_group(c);
    c->transposing = 1;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_COPY, c->b * np * h, (double)I + H, 0, 1, "embed.cat.bwd");
    c->transposing = 0;
    if (!c->frozen)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, c->b * h, I, 1, 1, "embed.cls_token.bwd");
    xs_wb_add_param(c, c->sq * h, 1, 0); /* position_embeddings */
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, T * h, 3.0 * I, 1, 1, "embed.position");
    c->broadcast = 0;
    xs_wb_bwd_group(c);
    if (!c->frozen)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, T * h, I, 1, 1, "embed.position.bwd");
    xs_wb_dropout(c, "embed.dropout", T * h, I, m->dropout);
}

/* eager_attention_forward: q K^T, * scaling, softmax(dim=-1,
 * dtype=float32), .to(query.dtype), dropout, P V, then
 * transpose(1, 2).contiguous(). No mask. Under autocast softmax is on the
 * fp32 list, so its input is cast to fp32 first; the explicit .to() casts
 * the probabilities back before the dropout and P V. */
static void vit_attention_unfused(xs_wb *c)
{
    double S2 = c->b * c->a * c->sq * c->sq, ba = c->b * c->a, s = c->sq, d = c->d;
    double p = c->s->model.attn_dropout;
    int H = c->H, sm = c->I;
    xs_wb_head_copies(c, "attn.heads", c->T * c->h, 3, 1);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.scores");
    xs_wb_keep(c, c->T * c->h * H); /* the head copies of q and k */
    xs_wb_keep(c, c->T * c->h * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.scores.dQ");
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.scores.dK");
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.scale");
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.scale.bwd");
    if (sm != H) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.softmax.cast");
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.softmax.cast.bwd");
    }
    xs_wb_softmax(c, "attn.softmax", S2, s, sm, 0);
    if (sm != H) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.probs.cast");
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.probs.cast.bwd");
    }
    xs_wb_dropout(c, "attn.probs.dropout", S2, H, p);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.context");
    /* P V keeps v and the probabilities it read: softmax's own output
     * (kept there already) only when no cast or dropout came between */
    xs_wb_keep(c, c->T * c->h * H);
    if (!(p <= 0 && sm == H))
        xs_wb_keep(c, S2 * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.context.dP");
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.context.dV");
    xs_wb_head_copies(c, "attn.merge", c->T * c->h, 1, 0);
}

/* ViTLayer: x + dropout(dense(attention(layernorm_before(x)))), then
 * h + dropout(dense(act(dense(layernorm_after(h))))). The attention is
 * SDPA's fused kernel (train.attention flash: with no mask, flash or
 * memory-efficient attention; ViTSdpaSelfAttention under transformers
 * 4.41-4.47, sdpa_attention_forward after) or the eager path above. */
static void vit_layer(xs_wb *c)
{
    double T = c->T, h = c->h, e = T * h, p = c->s->model.dropout;
    int qkv_bias = c->s->model.qkv_bias;
    xs_wb_enter_modules(c, VIT_LAYER_CONTAINERS);
    xs_wb_grad_fanout(c, "attn.residual", e, c->I, 2);
    xs_wb_layernorm(c, "ln_before", T, c->I, c->I);
    xs_wb_grad_fanout(c, "attn.x", e, c->I, 3); /* query, key and value read it */
    xs_wb_linear(c, "attn.q", T, h, h, qkv_bias, 1);
    c->x_kept = !c->amp; /* autocast casts x for each; else one tensor */
    xs_wb_linear(c, "attn.k", T, h, h, qkv_bias, 1);
    xs_wb_linear(c, "attn.v", T, h, h, qkv_bias, 1);
    c->x_kept = 0;
    if (c->flash) {
        /* SDPA's output, [b, heads, s, d], goes back to token rows:
         * permute(0, 2, 1, 3).contiguous(), a copy whose gradient passes
         * through; attn.out keeps that copy */
        xs_wb_attention(c, 0);
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, e, 2.0 * c->H, 0, 1, "attn.merge");
        xs_wb_transient(c, e * c->H);
    } else { /* as xs_wb_attention: past the layer's first linears */
        c->x_unkept = 0;
        c->input_nograd = 0;
        vit_attention_unfused(c);
    }
    xs_wb_linear(c, "attn.out", T, h, h, 1, 0);
    xs_wb_dropout(c, "attn.dropout", e, c->H, p);
    xs_wb_residual_add(c, "attn.residual", e, c->H, c->I, c->I);
    xs_wb_pre_ln_ffn(c, "ln_after");
}

/* ViTModel.layernorm over every token, then the classifier on
 * sequence_output[:, 0, :], a strided view: under autocast its cast makes
 * it contiguous, in fp32 the GEMM reads it in place. The view's backward
 * is a zero-filled gradient of the whole sequence with the class token's
 * rows copied in (two kernels). The loss is CrossEntropyLoss over
 * model.labels, in fp32 (autocast's fp32 list). Under LoRA the classifier
 * trains whole when train.lora.train_head (PEFT's modules_to_save). */
static void vit_head(xs_wb *c)
{
    double b = c->b, h = c->h, L = (double)c->s->model.labels;
    c->layer = -1;
    xs_wb_layernorm(c, "layernorm", c->T, c->I, c->I);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, c->T * h, c->I, 0, 2, "head.first_token.bwd");
    c->frozen = c->lora && !c->s->train.lora_train_head;
    /* in fp32 the view the classifier keeps for its weight gradient holds
     * the whole LayerNorm output, not only its b rows */
    if (!c->amp && !c->frozen)
        xs_wb_keep(c, (c->T - b) * h * c->I);
    xs_wb_linear(c, "head.classifier", b, h, L, 1, 1);
    if (c->amp) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, b * L, c->H + 4.0, 0, 1, "head.logits.cast");
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, b * L, 4.0 + c->H, 0, 1, "head.logits.cast.bwd");
    }
    xs_wb_cross_entropy(c, b, L, c->amp ? 4 : c->H);
}

void xs_wb_forward_vit(xs_wb *c)
{
    xs_wb_embeddings(c, vit_embeddings);
    xs_wb_layers(c, c->s->model.layers, vit_layer);
    vit_head(c);
}
