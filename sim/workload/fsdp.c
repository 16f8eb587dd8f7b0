/* fsdp.c — see fsdp.h.
 *
 * Sources (PyTorch FSDP1, torch/distributed/fsdp): the strategies'
 * unshard and reshard points are ShardingStrategy's docstring
 * (torch/distributed/fsdp/api.py, https://pytorch.org/docs/stable/
 * _modules/torch/distributed/fsdp/api.html); the root unit is not freed
 * after its forward (_runtime_utils.py, _post_forward_reshard: "Do not free
 * the root's parameters in the post-forward for FULL_SHARD with the
 * intention that they are immediately used for backward computation"; team
 * code index find_string id 5735400598); backward_prefetch defaults to
 * BackwardPrefetch.BACKWARD_PRE (FullyShardedDataParallel.__init__, id
 * 27719792181); forward all-gathers overlap the compute without
 * forward_prefetch, issued from their own stream ("implicit forward
 * prefetching (always enabled)", https://pytorch.org/docs/stable/notes/
 * fsdp.html, FSDP Prefetch Nuances); limit_all_gathers defaults to True
 * (pytorch/pytorch#104900) and then the CPU waits, before an all-gather,
 * for the free event of the unit resharded two before
 * (_limiter_utils.py, _FreeEventQueue: _max_num_inflight_all_gathers = 2,
 * id 116318200); the Trainer's FSDP under --fp16/--bf16 is
 * MixedPrecision(param_dtype=dtype, reduce_dtype=dtype, buffer_dtype=dtype)
 * (transformers trainer.py, id 177585018), and reduce_dtype, unset, takes
 * param_dtype (MixedPrecision's docstring, api.py above). */
#include "fsdp.h"


int xs_fsdp_on(const xs_scenario *s)
{
    return s->devices > 1 &&
           (s->sharding == XS_SHARD_FSDP || s->sharding == XS_SHARD_FSDP_GRAD_OP);
}

static int autocast(const xs_scenario *s)
{
    int p = s->train.precision;
    return (p == XS_P_AMP_FP16 || p == XS_P_AMP_BF16) && s->train.amp_mode == XS_AMP_AUTOCAST;
}

int xs_fsdp_half_params(const xs_scenario *s)
{
    return xs_fsdp_on(s) && autocast(s) && s->fsdp_mixed_precision;
}

void xs_fsdp_formats_of(const xs_scenario *s, xs_fsdp_formats *f)
{
    /* the parameters' own format: fp32 (autocast keeps fp32 parameters),
     * bf16 for a pure bf16 model */
    int own = s->train.precision == XS_P_BF16 ? 2 : 4;
    int half = xs_fsdp_half_params(s);
    f->gather = half ? 2 : own;
    f->reduce = half ? 2 : own;
    f->shard_grad = own;
}

int xs_fsdp_check(const xs_scenario *s, const char *path, xs_error *err)
{
    if (s->sharding != XS_SHARD_FSDP && s->sharding != XS_SHARD_FSDP_GRAD_OP)
        return XS_OK;
    const char *sh = xs_sharding_name(s->sharding);
    const xs_train *t = &s->train;
    int amp = t->precision == XS_P_AMP_FP16 || t->precision == XS_P_AMP_BF16;
    if (amp && t->amp_mode == XS_AMP_O2)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: cluster.sharding %s needs train.amp_mode autocast: apex O2 "
                            "keeps its fp32 master copy outside the module FSDP shards",
                            path, sh);
    if (t->precision == XS_P_FP8)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: cluster.sharding %s with train.precision fp8 is not modelled "
                            "(Transformer Engine's fp8 weights under FSDP); use amp_bf16 or bf16",
                            path, sh);
    if (t->lora_rank > 0 || t->quant != XS_QUANT_NONE)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: cluster.sharding %s with train.lora or train.quant is not "
                            "modelled (frozen parameters in FSDP's flat parameters); use "
                            "cluster.sharding none|zero1|zero2",
                            path, sh);
    /* cluster.ddp names the DDP wrapper a recipe uses when it runs DDP;
     * under FSDP the wrapper is FSDP, whatever it says */
    return XS_OK;
}
