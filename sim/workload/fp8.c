/* fp8.c — see fp8.h. */
#include "fp8.h"

#include <stdint.h>

int xs_fp8_check(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_train *t = &s->train;
    const xs_model *m = &s->model;
    if (t->precision != XS_P_FP8)
        return XS_OK;
    /* PEFT's LoRA wraps nn.Linear, not te.Linear, and bitsandbytes' layers
     * are not Transformer Engine's */
    if (t->lora_rank > 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.precision fp8 with train.lora.rank > 0 is not modelled "
                            "(PEFT adapts nn.Linear, not Transformer Engine's te.Linear); use "
                            "bf16 or a full fine-tune",
                            where);
    if (t->kernels != XS_K_EAGER)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.precision fp8 needs train.kernels eager (Transformer "
                            "Engine replaces the model's nn.Linear, not LightSeq's fused layers)",
                            where);
    /* accelerate's convert_model swaps nn.Linear (and nn.LayerNorm) for
     * TE's modules: GPT-2's projections are transformers' Conv1D and the
     * FFN of NVIDIA's BERT recipe is its own LinearActivation, neither an
     * nn.Linear, so they would stay bf16 */
    if (s->model.family == XS_FAMILY_CLASSIC && s->model.arch == XS_DECODER)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.precision fp8 is not modelled for GPT-2 (its Conv1D "
                            "projections are not nn.Linear, which Transformer Engine replaces); "
                            "use a llama-family or BERT model",
                            where);
    if (t->ffn_bias == XS_FFN_BIAS_SEPARATE)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.precision fp8 needs train.ffn_bias gemm (NVIDIA's "
                            "LinearActivation, train.ffn_bias separate, is not the nn.Linear "
                            "Transformer Engine replaces)",
                            where);
    /* te.Linear asserts both GEMM operands' shapes (TE 1.x utils.py
     * assert_dim_for_fp8_exec: rows a multiple of 8, columns of 16, what
     * cuBLASLt's fp8 GEMMs need) */
    int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
    int64_t kvw = m->heads > 0 ? kv * (m->hidden / m->heads) : 0;
    int64_t rows = t->batch * t->seq;
    const struct {
        const char *what;
        int64_t v, by;
    } dims[] = {{"model.hidden", m->hidden, 16},
                {"model.ffn", m->ffn, 16},
                {"the key/value width (model.kv_heads x head size)", kvw, 16},
                {"train.batch x train.seq", rows, 8}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].v % dims[i].by)
            return xs_error_set(err, XS_EFIELD,
                                "%s: train.precision fp8 needs %s to be a multiple of %lld "
                                "(Transformer Engine's fp8 GEMM shapes), got %lld",
                                where, dims[i].what, (long long)dims[i].by,
                                (long long)dims[i].v);
    return XS_OK;
}
