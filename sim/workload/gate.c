/* gate.c — see gate.h. */
#include "gate.h"

#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "fp8.h"
#include "fsdp.h"
#include "lora.h"

/* The llama-only fields left at their defaults, or NULL. */
static const char *llama_field(const xs_model *m)
{
    return !m->tied                     ? "model.tied false"
           : m->attention_bias != 0     ? "model.attention_bias"
           : m->mlp_bias                ? "model.mlp_bias"
           : m->sliding_window != 0     ? "model.sliding_window"
           : m->kv_heads != 0 && m->kv_heads != m->heads ? "model.kv_heads"
           : m->activation == XS_ACT_SILU ? "model.activation silu"
                                          : NULL;
}

/* What the vit builder needs: ViTForImageClassification is an encoder
 * with a classifier on the class token, its sequence the patches and that
 * token, its position table exactly that long (interpolate_pos_encoding,
 * for other image sizes, is not modelled) and no token table. */
static int check_vit(const xs_scenario *s, const char *path, xs_error *err)
{
    const xs_model *m = &s->model;
    const char *other = llama_field(m);
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

/* What the model.family builders need of the other model fields, and the
 * llama-only fields left at their defaults for the classic family. */
/* T5ForConditionalGeneration as modelled (wl_t5.c): what it refuses, each
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

static int check_family(const xs_scenario *s, const char *path, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->family != XS_FAMILY_DISTILBERT && m->head_dropout > 0)
        return xs_error_set(err, XS_EFIELD, "%s: model.head_dropout needs model.family distilbert",
                            path);
    if (m->family == XS_FAMILY_T5)
        return check_t5(s, path, err);
    const char *t5_only = m->arch == XS_ENCODER_DECODER ? "model.arch encoder_decoder"
                          : m->decoder_layers != 0     ? "model.decoder_layers"
                          : m->relative_buckets != 0   ? "model.relative_buckets"
                          : m->gated_ffn               ? "model.gated_ffn"
                          : s->train.target_seq != 0   ? "train.target_seq"
                                                       : NULL;
    if (t5_only)
        return xs_error_set(err, XS_EFIELD, "%s: %s needs model.family t5", path, t5_only);
    if (m->family == XS_FAMILY_DISTILBERT) {
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
    }
    if (m->family != XS_FAMILY_VIT) {
        const char *vit_only = m->image_size != 0  ? "model.image_size"
                               : m->patch_size != 0 ? "model.patch_size"
                               : m->channels != 3   ? "model.channels"
                               : !m->qkv_bias       ? "model.qkv_bias false"
                                                    : NULL;
        if (vit_only)
            return xs_error_set(err, XS_EFIELD, "%s: %s needs model.family vit", path,
                                vit_only);
    }
    if (m->family == XS_FAMILY_VIT)
        return check_vit(s, path, err);
    if (m->labels != 2 && m->head != XS_HEAD_CLS)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.labels (%lld) needs model.head cls (the other heads "
                            "score no classes)",
                            path, (long long)m->labels);
    if (m->family != XS_FAMILY_LLAMA) {
        if (m->kv_heads != 0 && m->kv_heads != m->heads)
            return xs_error_set(err, XS_EFIELD,
                                "%s: model.kv_heads (%lld) needs model.family llama (the classic "
                                "layers have one key/value head a query head)",
                                path, (long long)m->kv_heads);
        const char *llama_only = !m->tied                  ? "model.tied false"
                                 : m->attention_bias != 0  ? "model.attention_bias"
                                 : m->mlp_bias             ? "model.mlp_bias"
                                 : m->sliding_window != 0  ? "model.sliding_window"
                                 : m->activation == XS_ACT_SILU ? "model.activation silu"
                                                                : NULL;
        if (llama_only)
            return xs_error_set(err, XS_EFIELD, "%s: %s needs model.family llama", path,
                                llama_only);
        return XS_OK;
    }
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

/* A data-parallel job's nodes must be whole where the scenario gives
 * them. How devices join (GPUs in nodes of up to 8 over a network, a TPU
 * slice over its torus) is the device class's: xs_topo_of checks the rest
 * against the device. */
static int check_cluster(const xs_scenario *s, const char *path, xs_error *err)
{
    int64_t n = s->devices, g = s->per_node;
    if (g > 0 && n % g != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: cluster.devices (%lld) must be a multiple of cluster.per_node "
                            "(%lld): nodes are whole",
                            path, (long long)n, (long long)g);
    if (s->sharding != XS_SHARD_NONE && n == 1)
        return xs_error_set(err, XS_EFIELD,
                            "%s: cluster.sharding %s splits state over devices: needs "
                            "cluster.devices > 1",
                            path, xs_sharding_name(s->sharding));
    return xs_fsdp_check(s, path, err);
}

/* Relations between fields; then the sizes (bounds.h). */
static int check_relations(const xs_scenario *s, const char *path, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->hidden % m->heads != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.hidden (%lld) must be divisible by model.heads (%lld)",
                            path, (long long)m->hidden, (long long)m->heads);
    /* T5's positions are relative buckets: no table bounds the length;
     * check_vit checks ViT's */
    if (m->family != XS_FAMILY_T5 && m->family != XS_FAMILY_VIT &&
        s->train.seq > m->max_positions)
        return xs_error_set(err, XS_ERANGE,
                            "%s: train.seq (%lld) must not exceed model.max_positions (%lld)",
                            path, (long long)s->train.seq, (long long)m->max_positions);
    const xs_train *t = &s->train;
    int rc = check_family(s, path, err);
    if (rc)
        return rc;
    int impl = t->optimizer_impl, fused_impl = impl == XS_OPT_IMPL_MULTI_TENSOR ||
                                               impl == XS_OPT_IMPL_PER_TENSOR;
    char word[32];
    xs_choice_word(XS_OPT_IMPL_CHOICES, impl, word, sizeof word);
    if (impl != XS_OPT_IMPL_AUTO && fused_impl != (t->fused_optimizer != 0))
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.optimizer_impl '%s' needs train.fused_optimizer %s, "
                            "got %s",
                            path, word, fused_impl ? "true" : "false",
                            t->fused_optimizer ? "true" : "false");
    if (impl == XS_OPT_IMPL_FOREACH && t->optimizer != XS_OPT_ADAM &&
        t->optimizer != XS_OPT_ADAMW)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.optimizer_impl 'foreach' is modelled for train.optimizer "
                            "adam and adamw, got %s",
                            path, xs_optimizer_name(t->optimizer));
    if (impl != XS_OPT_IMPL_AUTO && impl != XS_OPT_IMPL_FOR_LOOP &&
        t->optimizer == XS_OPT_BERTADAM)
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.optimizer_impl '%s': bertadam is a Python loop of "
                            "tensor ops (for_loop or auto), it has no fused or foreach form",
                            path, word);
    rc = xs_lora_check(s, path, err);
    if (!rc)
        rc = xs_fp8_check(s, path, err);
    if (!rc)
        rc = xs_scn_bounds_check(s, path, err);
    return rc ? rc : check_cluster(s, path, err);
}

/* What the builders make of a head: a span head reads an encoder's
 * tokens, DistilBERT's heads are its two task models'. */
static int check_head(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->arch == XS_DECODER && m->head == XS_HEAD_SPAN)
        return xs_error_set(err, XS_EUNSUPPORTED, "%s: model.head 'span' needs model.arch 'encoder'",
                            where);
    if (m->family == XS_FAMILY_DISTILBERT && m->head == XS_HEAD_LM)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: model.family distilbert models model.head cls and span only",
                            where);
    return XS_OK;
}

int xs_wl_gate(const xs_scenario *s, xs_error *err)
{
    char where[sizeof s->source + 16];
    if (s->source[0])
        snprintf(where, sizeof where, "%s", s->source);
    else
        snprintf(where, sizeof where, "scenario %s", s->id);
    int rc = check_relations(s, where, err);
    return rc ? rc : check_head(s, where, err);
}
