/* gpu_flash.h — the time of FlashAttention-2's kernels (the fused
 * attention op, XS_OP_ATTENTION) on an NVIDIA GPU, from what each score
 * element costs the SM's pipes. */
#ifndef XS_GPU_FLASH_H
#define XS_GPU_FLASH_H

#include "op.h"

/* Matmul FLOPs FlashAttention-2 spends on one score element per head
 * dimension: forward Q K^T and P V (2 x 2); backward recomputes S and
 * forms dP, dV, dK and dQ (5 x 2). */
#define XS_FLASH_FWD_MM_PER_SCORE_D 4.0
#define XS_FLASH_BWD_MM_PER_SCORE_D 10.0

/* The SM pipes a score passes through, for a whole device, at the clock
 * the tensor load leaves. */
#define XS_FLASH_MUFU_PER_SM_CLOCK 16.0 /* exp2 results an SM a clock */
typedef struct {
    double mm_flops; /* matmul FLOP/s mma.sync reaches */
    double mufu;     /* special-function results a second */
    double fp32_ops; /* FP32-unit operations a second */
} xs_flash_rates;

/* Seconds op's math takes at rates r: its matmuls, then, one after the
 * other in each warp, the exponentials and the softmax arithmetic. */
double xs_flash_compute_s(const xs_op *op, const xs_flash_rates *r);

#endif
