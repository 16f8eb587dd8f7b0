/* fp8.h — FP8 training as NVIDIA Transformer Engine runs it
 * (train.precision fp8): its default recipe, which scenarios it models and
 * which devices can run it. The layers' linears become te.Linear (the
 * workload's fp8 linear, wl_ops.c); the rest of the model stays in bf16. */
#ifndef XS_FP8_H
#define XS_FP8_H

#include "error.h"
#include "scenario.h"

/* DelayedScaling, TE's default recipe (NVIDIA/TransformerEngine@
 * 000b637ede9c221d01067e5cdf4f0953da3ab7cd: transformer_engine/common/
 * recipe/__init__.py): fp8_format HYBRID (E4M3 in the forward, E5M2 for
 * gradients: one byte either way), margin 0, amax_compute_algo "max" over
 * an amax history of amax_history_len steps. */
#define XS_FP8_AMAX_HISTORY 1024
/* Scaling-state tensors a te.Linear tracks (TE 1.x FP8FwdTensors and
 * FP8BwdTensors: GEMM1_INPUT, GEMM1_WEIGHT, GEMM1_OUTPUT; GRAD_OUTPUT1,
 * GRAD_INPUT1), each with an amax history and a scale. */
#define XS_FP8_FWD_TENSORS 3
#define XS_FP8_BWD_TENSORS 2

/* Refuse what the fp8 recipe is not modelled with: where names the
 * scenario in messages. OK for any other precision. */
int xs_fp8_check(const xs_scenario *s, const char *where, xs_error *err);

#endif
