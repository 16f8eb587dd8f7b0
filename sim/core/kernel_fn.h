/* kernel_fn.h — which kernel of kernels/cpu an op runs (layer_ops.h,
 * optim.h, memset and copies): the workload names it where it knows
 * (xs_op_hints.fn), the CPU model costs each with its own fitted figures,
 * the calibration measures each, and device files name them. Part of the
 * contract between the workload and the device models, so it lives with
 * the op. */
#ifndef XS_KERNEL_FN_H
#define XS_KERNEL_FN_H

#include "op.h"

/* The kernels other than GEMM that a Transformer step runs on the CPU (the
 * functions of kernels/cpu/layer_ops.h, optim.h, memset and copies). Each
 * has a fitted cost per element and per call. */
typedef enum {
    XS_FN_ZERO,      /* memset of a gradient buffer */
    XS_FN_ADD,       /* residual add, gradient sum */
    XS_FN_BIAS,      /* bias add, in place */
    XS_FN_BIAS_GRAD, /* column sums of a gradient */
    XS_FN_DROPOUT,
    XS_FN_DROPOUT_BWD,
    XS_FN_GELU,
    XS_FN_GELU_BWD,
    XS_FN_LAYERNORM,
    XS_FN_LAYERNORM_BWD,
    XS_FN_SOFTMAX,
    XS_FN_SOFTMAX_BWD,
    XS_FN_XENT,      /* cross-entropy: softmax, loss and its gradient */
    XS_FN_EMBED,
    XS_FN_EMBED_BWD,
    XS_FN_CAST,      /* fp32 -> bf16 */
    XS_FN_COPY,      /* layout copies (attention heads) */
    XS_FN_ADAN,      /* fused Adan step, per parameter */
    XS_FN_ADAMW,     /* fused AdamW step, per parameter */
    XS_FN_COUNT
} xs_cpu_fn;

/* "gelu", "layernorm_bwd", ...; NULL out of range. */
const char *xs_cpu_fn_name(int fn);
/* Index of name, or -1. */
int xs_cpu_fn_index(const char *name);

/* The kernel an op runs: op->hints.fn when set, else from kind, phase and name;
 * -1 for ops the CPU model has no kernel for (fused attention, comms). */
int xs_cpu_fn_for_op(const xs_op *op);

#endif
