/* gpu_flash.h — the time of FlashAttention-2's kernels (the fused
 * attention op, XS_OP_ATTENTION) on an NVIDIA GPU, from what each score
 * element costs the SM's pipes. */
#ifndef XS_GPU_FLASH_H
#define XS_GPU_FLASH_H

#include "device.h"
#include "op.h"

/* Matmul FLOPs FlashAttention-2 spends on one score element per head
 * dimension: forward Q K^T and P V (2 x 2); backward recomputes S and
 * forms dP, dV, dK and dQ (5 x 2). */
#define XS_FLASH_FWD_MM_PER_SCORE_D 4.0
#define XS_FLASH_BWD_MM_PER_SCORE_D 10.0

/* Seconds op's math takes on dev: its matmuls at the rate mma.sync
 * reaches, then, one after the other in each warp, the exponentials on
 * the special-function units and the softmax arithmetic on the FP32 units.
 * *engine and *tensor as xs_gemm_rate sets them. */
double xs_flash_compute_s(const xs_device *dev, const xs_op *op, xs_dtype *engine, int *tensor);

#endif
