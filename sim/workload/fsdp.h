/* fsdp.h — PyTorch's FullyShardedDataParallel (torch.distributed.fsdp,
 * FSDP1) as a fine-tune runs it under cluster.sharding fsdp (FULL_SHARD)
 * or fsdp_grad_op (SHARD_GRAD_OP): what it gathers and reduces in which
 * format, which scenarios it is modelled for, and the order FSDP puts
 * between the step's two streams (compute, NCCL), which the op list
 * carries (fsdp_timing.h times them).
 *
 * The op list (wl_fsdp.c) holds one FSDP unit per Transformer layer, as
 * transformer_auto_wrap_policy wraps the layer class (the Trainer's
 * fsdp_transformer_layer_cls_to_wrap), and the root unit with the rest
 * (embeddings, final norm, head). Before a unit's forward its flat
 * parameter is all-gathered; FULL_SHARD frees it after the forward (not
 * the root's: its backward comes next) and gathers it again before the
 * backward; after the unit's backward its gradient is reduce-scattered and
 * the unit resharded. The backward prefetch is BACKWARD_PRE, torch's
 * default: the next unit's all-gather is issued before the current unit's
 * gradients are computed, ahead of its reduce-scatter. forward_prefetch is
 * off (its default); the forward's all-gathers still run ahead of the
 * compute because the host issues them early, as far as limit_all_gathers
 * (default True) lets it: no more than two units' all-gathers in flight,
 * so a unit's all-gather waits for the unit two before it to be freed.
 * Under gradient accumulation the loop runs the micro-batches but the last
 * under no_sync(), as accelerate and the Trainer do: every micro-batch
 * gathers the parameters, only the last reduces, and the unsharded
 * gradients are kept whole meanwhile (the FSDP docs' warning). */
#ifndef XS_FSDP_H
#define XS_FSDP_H

#include "error.h"
#include "op.h"
#include "scenario.h"
#include "workload.h"

/* 1 when s runs FSDP: several devices and cluster.sharding fsdp or
 * fsdp_grad_op. */
int xs_fsdp_on(const xs_scenario *s);

/* Bytes an element takes on the wire and in memory: the parameters FSDP
 * gathers (MixedPrecision's param_dtype, else the parameters' own format),
 * the gradients the backward writes and FSDP reduce-scatters (its
 * reduce_dtype, the param_dtype when unset), and the sharded gradient the
 * optimizer reads (the sharded parameters' format: fp32 under autocast). */
typedef struct {
    int gather, reduce, shard_grad;
} xs_fsdp_formats;
void xs_fsdp_formats_of(const xs_scenario *s, xs_fsdp_formats *f);

/* 1 when FSDP's MixedPrecision hands autocast parameters already in its
 * half format, so that no weight cast runs in the forward and no weight
 * gradient is cast back in the backward. */
int xs_fsdp_half_params(const xs_scenario *s);

/* What the workload's gate checks: FSDP is modelled for torch's autocast,
 * fp32, tf32 and pure bf16, a full fine-tune (cluster.ddp, the DDP
 * wrapper, does not apply). An error names the key otherwise. XS_OK when
 * s is not FSDP. */
int xs_fsdp_check(const xs_scenario *s, const char *path, xs_error *err);

#endif
