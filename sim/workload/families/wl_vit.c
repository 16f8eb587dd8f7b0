/* wl_vit.c — the vit family: transformers' ViTForImageClassification as it
 * runs in training (huggingface/transformers@005db8208dee358fe8fe63ae3cc49dd054aad48d:
 * src/transformers/models/vit/modeling_vit.py): the patch embedding (a
 * convolution with kernel = stride = patch), the class token and the
 * learned positions, pre-LN encoder layers (ViTLayer), the final
 * LayerNorm, a linear classifier on the class token (no pooler:
 * add_pooling_layer=False) and the cross-entropy over model.labels. */
#include "wl_build.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "family_shared.h"
#include "hf_keys.h"
#include "lora.h"

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

static void forward(xs_wb *c)
{
    xs_wb_embeddings(c, vit_embeddings);
    xs_wb_layers(c, c->s->model.layers, vit_layer);
    vit_head(c);
}

/* ---- the family record (family.h) --------------------------------------- */

/* ViTConfig (transformers' models/vit/configuration_vit.py,
 * huggingface/transformers@04ae75715f2cca2d87bbaf07c1d8e9fb2ab20bfd): every
 * key has a default (key_default). num_labels and id2label are read by
 * import_keys. */
static const xs_hf_key HF_VIT[] = {
    {"layers", "num_hidden_layers", XS_HF_NULL_REFUSED},
    {"hidden", "hidden_size", XS_HF_NULL_REFUSED},
    {"heads", "num_attention_heads", XS_HF_NULL_REFUSED},
    {"ffn", "intermediate_size", XS_HF_NULL_REFUSED},
    {"activation", "hidden_act", XS_HF_NULL_REFUSED},
    {"dropout", "hidden_dropout_prob", XS_HF_NULL_REFUSED},
    {"attn_dropout", "attention_probs_dropout_prob", XS_HF_NULL_REFUSED},
    {"image_size", "image_size", XS_HF_NULL_REFUSED},
    {"patch_size", "patch_size", XS_HF_NULL_REFUSED},
    {"channels", "num_channels", XS_HF_NULL_REFUSED},
    {"qkv_bias", "qkv_bias", XS_HF_NULL_REFUSED},
};

/* ViTConfig.__init__'s defaults. */
static cJSON *key_default(const char *canon, const cJSON *hf)
{
    (void)hf;
    static const struct {
        const char *canon;
        double v;
    } num[] = {{"layers", 12},        {"hidden", 768},      {"heads", 12},
               {"ffn", 3072},         {"dropout", 0},       {"attn_dropout", 0},
               {"image_size", 224},   {"patch_size", 16},   {"channels", 3}};
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
        if (strcmp(canon, num[i].canon) == 0)
            return cJSON_CreateNumber(num[i].v);
    if (strcmp(canon, "activation") == 0)
        return cJSON_CreateString("gelu");
    if (strcmp(canon, "qkv_bias") == 0)
        return cJSON_CreateTrue();
    return NULL;
    return NULL;
}

/* A ViTConfig size: an integer, or transformers' [height, width] pair
 * when both are equal (non-square images and patches are not modelled). */
static int vit_size(cJSON *model, const cJSON *hf, const char *key, const char *canon,
                    const char *path, xs_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, key);
    if (!v || cJSON_IsNull(v) || cJSON_IsNumber(v))
        return XS_OK; /* the map copies it; the schema checks it */
    const cJSON *a = cJSON_GetArrayItem(v, 0), *b = cJSON_GetArrayItem(v, 1);
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 && cJSON_IsNumber(a) &&
        cJSON_IsNumber(b) && a->valuedouble == b->valuedouble) {
        if (xs_hf_put_default(model, canon, cJSON_CreateNumber(a->valuedouble)))
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        return XS_OK;
    }
    return xs_error_set(err, XS_EUNSUPPORTED,
                        "%s: field '%s' must be an integer or an [n, n] pair (non-square "
                        "images and patches are not modelled)",
                        path, key);
}

/* ViTForImageClassification as transformers' modeling_vit.py builds it
 * (huggingface/transformers@005db8208dee358fe8fe63ae3cc49dd054aad48d):
 * what the scenario needs besides the plain copies, and the keys that
 * would change the op list in ways not modelled, refused by name.
 * layer_norm_eps and initializer_range change values, not work;
 * encoder_stride sizes only ViTForMaskedImageModeling's decoder, and
 * pooler_output_size / pooler_act only ViTPooler, which the classification
 * model does not build (add_pooling_layer=False): all accepted unread. The
 * classifier's width is num_labels, which PretrainedConfig derives from
 * id2label when the file lists labels. */
static int import_keys(cJSON *model, const cJSON *hf, const char *path, xs_error *err)
{
    const cJSON *v;
    int rc = vit_size(model, hf, "image_size", "image_size", path, err);
    if (!rc)
        rc = vit_size(model, hf, "patch_size", "patch_size", path, err);
    if (rc)
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "quantization_config")) && !cJSON_IsNull(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'quantization_config' is not modelled (it changes the op "
                            "list); remove it to model the plain vit layer",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "problem_type");
    if (v && !cJSON_IsNull(v) &&
        !(cJSON_IsString(v) && strcmp(v->valuestring, "single_label_classification") == 0))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'problem_type' must be \"single_label_classification\" "
                            "or null (cross-entropy; regression and multi-label losses are "
                            "not modelled)",
                            path);
    double labels = 0;
    const cJSON *id2label = cJSON_GetObjectItemCaseSensitive(hf, "id2label");
    const cJSON *num = cJSON_GetObjectItemCaseSensitive(hf, "num_labels");
    if (id2label && !cJSON_IsNull(id2label)) {
        if (!cJSON_IsObject(id2label))
            return xs_error_set(err, XS_EFIELD,
                                "%s: field 'id2label' must be an object of labels", path);
        labels = cJSON_GetArraySize(id2label);
    }
    if (num && !cJSON_IsNull(num)) {
        if (!cJSON_IsNumber(num))
            return xs_error_set(err, XS_EFIELD, "%s: field 'num_labels' must be an integer",
                                path);
        if (labels > 0 && num->valuedouble != labels)
            return xs_error_set(err, XS_EFIELD,
                                "%s: field 'num_labels' (%g) must equal the %g labels of "
                                "'id2label'",
                                path, num->valuedouble, labels);
        labels = num->valuedouble;
    }
    if (labels == 1)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: one label is a regression (MSELoss), not modelled; the "
                            "classifier needs 2 or more labels",
                            path);
    if (xs_hf_put_default(model, "family", cJSON_CreateString("vit")) ||
        xs_hf_put_default(model, "head", cJSON_CreateString("cls")) ||
        (labels > 0 && xs_hf_put_default(model, "labels", cJSON_CreateNumber(labels))))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    return XS_OK;
}

static int import(cJSON *model, const cJSON *hf, const char *type, const char *path,
                  xs_error *err)
{
    (void)type;
    int rc = import_keys(model, hf, path, err);
    if (rc)
        return rc;
    if (!cJSON_GetObjectItemCaseSensitive(model, "arch"))
        cJSON_AddStringToObject(model, "arch", "encoder");
    if (!cJSON_GetObjectItemCaseSensitive(model, "type_vocab"))
        cJSON_AddNumberToObject(model, "type_vocab", 0);
    return xs_hf_copy_keys(model, hf, HF_VIT, sizeof HF_VIT / sizeof HF_VIT[0], key_default,
                           path, err);
}

/* The vit family's sequence is its patches and the class token: train.seq
 * and model.max_positions (ViTEmbeddings' position table, num_patches + 1
 * rows) follow from model.image_size and model.patch_size when absent
 * (the check refuses other values), and model.vocab, which no table of
 * a ViT has, is 1 when absent. */
static int complete(cJSON *root, xs_error *err)
{
    const cJSON *image = xs_scn_doc_value(root, "model.image_size");
    const cJSON *patch = xs_scn_doc_value(root, "model.patch_size");
    if (!image || !patch || patch->valuedouble < 1)
        return XS_OK;
    double side = floor(image->valuedouble / patch->valuedouble), seq = side * side + 1;
    int rc = xs_scn_doc_default(root, "train.seq", seq, err);
    if (!rc)
        rc = xs_scn_doc_default(root, "model.max_positions", seq, err);
    return rc ? rc : xs_scn_doc_default(root, "model.vocab", 1, err);
}

/* What the vit builder needs: ViTForImageClassification is an encoder
 * with a classifier on the class token, its sequence the patches and that
 * token, its position table exactly that long (interpolate_pos_encoding,
 * for other image sizes, is not modelled) and no token table. */
static int check_vit(const xs_scenario *s, const char *path, xs_error *err)
{
    const xs_model *m = &s->model;
    const char *other = xs_fam_llama_key(m);
    if (other)
        return xs_error_set(err, XS_EFIELD, "%s: %s needs model.family llama", path, other);
    if (m->arch != XS_ENCODER || m->head != XS_HEAD_CLS)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.family vit needs model.arch encoder and model.head cls "
                            "(ViTForImageClassification)",
                            path);
    if (m->image_size < 1 || m->patch_size < 1 || m->image_size % m->patch_size != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.family vit needs model.image_size a positive multiple "
                            "of model.patch_size (got %lld and %lld)",
                            path, (long long)m->image_size, (long long)m->patch_size);
    int64_t seq = xs_model_vit_seq(m);
    if (s->train.seq != seq)
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.seq must be %lld for model.family vit ((%lld / %lld)^2 "
                            "patches + the class token), got %lld; leave it out",
                            path, (long long)seq, (long long)m->image_size,
                            (long long)m->patch_size, (long long)s->train.seq);
    if (m->max_positions != seq)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.max_positions must be %lld for model.family vit (its "
                            "position table has a row a patch and one for the class token), "
                            "got %lld; leave it out",
                            path, (long long)seq, (long long)m->max_positions);
    if (m->vocab != 1 || m->type_vocab != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.vocab and model.type_vocab are not read by model.family "
                            "vit (it has no token tables); leave them out",
                            path);
    if (s->train.kernels == XS_K_FUSED)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.kernels fused is modelled for the classic family only "
                            "(LightSeq's kernels); use eager for model.family vit",
                            path);
    return XS_OK;
}

/* The other families' keys left at their defaults, then the ViT's own. */
static int check(const xs_scenario *s, const char *where, xs_error *err)
{
    int rc = xs_fam_no_head_dropout(s, where, err);
    if (!rc)
        rc = xs_fam_no_t5_keys(s, where, err);
    return rc ? rc : check_vit(s, where, err);
}

/* ViTForImageClassification (modeling_vit.py: ViTSelfAttention's query,
 * key, value under ViTAttention.attention, ViTSelfOutput.dense,
 * ViTIntermediate.dense, ViTOutput.dense; the classifier) */
static const xs_lora_module_path VIT_MODULES[] = {
    {"attn.q", "vit.encoder.layer.%d.attention.attention.query"},
    {"attn.k", "vit.encoder.layer.%d.attention.attention.key"},
    {"attn.v", "vit.encoder.layer.%d.attention.attention.value"},
    {"attn.out", "vit.encoder.layer.%d.attention.output.dense"},
    {"ffn.up", "vit.encoder.layer.%d.intermediate.dense"},
    {"ffn.down", "vit.encoder.layer.%d.output.dense"},
    {"head.classifier", "classifier"},
};
static const xs_lora_names VIT_NAMES = {"ViT", "query,value",
    "query, key, value, dense, output.dense, intermediate.dense, all-linear",
    VIT_MODULES, sizeof VIT_MODULES / sizeof VIT_MODULES[0]};

static void describe(xs_strbuf *sb, const xs_scenario *s, double params)
{
    const xs_model *m = &s->model;
    xs_sb_printf(sb,
                 "model     vit encoder, %lld layers, hidden %lld, %lld heads, ffn %lld, "
                 "image %lld x %lld x %lld, patch %lld: seq %lld = %lld patches + class "
                 "token, cls head over %lld labels: %.1f M parameters\n",
                 (long long)m->layers, (long long)m->hidden, (long long)m->heads,
                 (long long)m->ffn, (long long)m->channels, (long long)m->image_size,
                 (long long)m->image_size, (long long)m->patch_size,
                 (long long)xs_model_vit_seq(m), (long long)xs_model_vit_seq(m) - 1,
                 (long long)m->labels, params / 1e6);
}

static void model_json(cJSON *mo, const xs_scenario *s)
{
    const xs_model *m = &s->model;
    cJSON_AddStringToObject(mo, "family", "vit");
    cJSON_AddNumberToObject(mo, "image_size", (double)m->image_size);
    cJSON_AddNumberToObject(mo, "patch_size", (double)m->patch_size);
    cJSON_AddNumberToObject(mo, "channels", (double)m->channels);
    cJSON_AddBoolToObject(mo, "qkv_bias", m->qkv_bias);
    cJSON_AddNumberToObject(mo, "labels", (double)m->labels);
}

static const char *const TYPES[] = {"vit", NULL};

const xs_family xs_family_vit = {
    .name = "vit",
    .model_types = TYPES,
    .import = import,
    .complete = complete,
    .check = check,
    .forward = forward,
    .lora_names = &VIT_NAMES,
    .describe = describe,
    .model_json = model_json,
};
