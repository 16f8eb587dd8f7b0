/* family_shared.c — see family_shared.h. */
#include "family_shared.h"

int xs_fam_seq_in_positions(const xs_scenario *s, const char *where, xs_error *err)
{
    if (s->train.seq > s->model.max_positions)
        return xs_error_set(err, XS_ERANGE,
                            "%s: train.seq (%lld) must not exceed model.max_positions (%lld)",
                            where, (long long)s->train.seq, (long long)s->model.max_positions);
    return XS_OK;
}

int xs_fam_no_head_dropout(const xs_scenario *s, const char *where, xs_error *err)
{
    if (s->model.head_dropout > 0)
        return xs_error_set(err, XS_EFIELD, "%s: model.head_dropout needs model.family distilbert",
                            where);
    return XS_OK;
}

int xs_fam_no_t5_keys(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    const char *t5_only = m->arch == XS_ENCODER_DECODER ? "model.arch encoder_decoder"
                          : m->decoder_layers != 0     ? "model.decoder_layers"
                          : m->relative_buckets != 0   ? "model.relative_buckets"
                          : m->gated_ffn               ? "model.gated_ffn"
                          : s->train.target_seq != 0   ? "train.target_seq"
                                                       : NULL;
    if (t5_only)
        return xs_error_set(err, XS_EFIELD, "%s: %s needs model.family t5", where, t5_only);
    return XS_OK;
}

int xs_fam_no_vit_keys(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    const char *vit_only = m->image_size != 0  ? "model.image_size"
                           : m->patch_size != 0 ? "model.patch_size"
                           : m->channels != 3   ? "model.channels"
                           : !m->qkv_bias       ? "model.qkv_bias false"
                                                : NULL;
    if (vit_only)
        return xs_error_set(err, XS_EFIELD, "%s: %s needs model.family vit", where, vit_only);
    return XS_OK;
}

int xs_fam_labels_need_cls(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->labels != 2 && m->head != XS_HEAD_CLS)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.labels (%lld) needs model.head cls (the other heads "
                            "score no classes)",
                            where, (long long)m->labels);
    return XS_OK;
}

int xs_fam_no_llama_keys(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->kv_heads != 0 && m->kv_heads != m->heads)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.kv_heads (%lld) needs model.family llama (the classic "
                            "layers have one key/value head a query head)",
                            where, (long long)m->kv_heads);
    const char *llama_only = !m->tied                      ? "model.tied false"
                             : m->attention_bias != 0      ? "model.attention_bias"
                             : m->mlp_bias                 ? "model.mlp_bias"
                             : m->sliding_window != 0      ? "model.sliding_window"
                             : m->activation == XS_ACT_SILU ? "model.activation silu"
                                                            : NULL;
    if (llama_only)
        return xs_error_set(err, XS_EFIELD, "%s: %s needs model.family llama", where,
                            llama_only);
    return XS_OK;
}

const char *xs_fam_llama_key(const xs_model *m)
{
    return !m->tied                     ? "model.tied false"
           : m->attention_bias != 0     ? "model.attention_bias"
           : m->mlp_bias                ? "model.mlp_bias"
           : m->sliding_window != 0     ? "model.sliding_window"
           : m->kv_heads != 0 && m->kv_heads != m->heads ? "model.kv_heads"
           : m->activation == XS_ACT_SILU ? "model.activation silu"
                                          : NULL;
}

void xs_fam_describe(xs_strbuf *sb, const xs_scenario *s, const char *what, double params)
{
    const xs_model *m = &s->model;
    xs_sb_printf(sb,
                 "model     %s, %lld layers, hidden %lld, %lld heads, ffn %lld, vocab %lld, "
                 "%s head: %.1f M parameters\n",
                 what, (long long)m->layers, (long long)m->hidden, (long long)m->heads,
                 (long long)m->ffn, (long long)m->vocab,
                 m->head == XS_HEAD_SPAN ? "span" : m->head == XS_HEAD_LM ? "lm" : "cls",
                 params / 1e6);
}
