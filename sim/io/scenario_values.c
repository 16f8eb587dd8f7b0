/* scenario_values.c — what the scenario record's fields mean where one
 * stands for another (a count left 0, an optimizer chosen for fp32) and
 * the names its choices print as. */
#include "scenario.h"

int64_t xs_model_vit_seq(const xs_model *m)
{
    if (m->image_size < 1 || m->patch_size < 1)
        return 0;
    int64_t side = m->image_size / m->patch_size;
    return side * side + 1;
}

int64_t xs_model_kv_heads(const xs_model *m)
{
    return m->kv_heads > 0 ? m->kv_heads : m->heads;
}

int64_t xs_model_decoder_layers(const xs_model *m)
{
    return m->decoder_layers > 0 ? m->decoder_layers : m->layers;
}

const char *xs_precision_name(int p)
{
    static const char *names[] = {"fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp8"};
    return p >= 0 && p < 6 ? names[p] : "?";
}

int xs_train_optimizer(const xs_train *t, int *fused)
{
    int o = t->optimizer;
    if ((t->precision == XS_P_FP32 || t->precision == XS_P_TF32) && t->fp32_optimizer > 0)
        o = t->fp32_optimizer - 1;
    *fused = o == XS_OPT_BERTADAM ? 0 : t->fused_optimizer;
    return o;
}

void xs_scn_host(const xs_scenario *s, xs_host *h)
{
    xs_host given = s->host;
    given.flat_us = s->train.host_op_us;
    xs_host_resolve(&given, h);
}

int xs_train_optimizer_impl(const xs_train *t)
{
    int fused;
    int o = xs_train_optimizer(t, &fused);
    if (o == XS_OPT_BERTADAM)
        return XS_OPT_IMPL_FOR_LOOP;
    if (t->optimizer_impl != XS_OPT_IMPL_AUTO)
        return t->optimizer_impl;
    return fused ? XS_OPT_IMPL_MULTI_TENSOR : XS_OPT_IMPL_FOR_LOOP;
}

const char *xs_optimizer_name(int o)
{
    static const char *names[] = {"sgd", "adam", "adamw", "adan", "bertadam"};
    return o >= 0 && o <= XS_OPT_BERTADAM ? names[o] : "?";
}

const char *xs_sharding_name(int sharding)
{
    static const char *names[] = {"none", "zero1", "zero2", "fsdp", "fsdp_grad_op"};
    return sharding >= 0 && sharding <= XS_SHARD_FSDP_GRAD_OP ? names[sharding] : "?";
}

const char *xs_activation_name(int a)
{
    static const char *names[] = {"gelu", "gelu_new", "relu", "silu"};
    return a >= 0 && a < 4 ? names[a] : "?";
}
