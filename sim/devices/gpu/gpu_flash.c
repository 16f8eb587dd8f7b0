/* gpu_flash.c — FlashAttention-2's math, score element by score element.
 *
 * FA2 (github.com/Dao-AILab/flash-attention, csrc/flash_attn/src) issues
 * the warp-level mma.sync m16n8k16 with fp32 accumulation on every
 * architecture, Hopper included (kernel_traits.h: SM80_16x8x16_F32...),
 * and "adheres to a simplified synchronous model and makes no explicit use
 * of asynchrony" (FlashAttention-3, arXiv 2407.08608, section 1): a warp's
 * softmax waits on its Q K^T and its P V on the softmax, so the three pipes
 * a score element passes through take their turns:
 *   the tensor cores: 4 d matmul FLOPs forward, 10 d backward;
 *   the special-function units: one exp2 a score (forward, and the
 *     backward's recompute of P), 16 results an SM a clock on every
 *     compute capability here (CUDA C++ Programming Guide, arithmetic
 *     instruction throughput; the FA3 paper's footnote 5 for Hopper);
 *   the FP32 units: forward the row max, the scale-and-subtract FFMA, the
 *     row sum and half a packed conversion of P (softmax.h: 3.5 a score);
 *     backward the FFMA of P's recompute, dP - D, times P, and the packed
 *     conversions of P and dS (4 a score).
 * The sum is the kernel's math time; DRAM traffic is the caller's. The
 * matmuls take no gemm_efficiency: that share stands for what cuBLAS loses
 * to its tiles and waves, and here the losses are the terms named (on
 * Hopper, mma_sync_share is itself a measured ceiling). What
 * this leaves out: warps of other CTAs on the SM that overlap one warp's
 * softmax with another's matmul (it makes the model slow where several
 * CTAs fit an SM), the backward's fp32 atomicAdd of dQ into L2 (one a
 * score at head dim 128), and partial waves of CTAs on short sequences. */
#include "gpu_flash.h"

#define FP32_OPS_PER_SCORE_FWD 3.5
#define FP32_OPS_PER_SCORE_BWD 4.0

double xs_flash_compute_s(const xs_op *op, const xs_flash_rates *r)
{
    int bwd = op->phase == XS_PH_BWD;
    double mm_per_d = bwd ? XS_FLASH_BWD_MM_PER_SCORE_D : XS_FLASH_FWD_MM_PER_SCORE_D;
    double d = op->k > 0 ? (double)op->k : 1;
    double scores = op->flops / (mm_per_d * d);
    double fp32_ops = bwd ? FP32_OPS_PER_SCORE_BWD : FP32_OPS_PER_SCORE_FWD;
    return op->flops / r->mm_flops + scores / r->mufu + scores * fp32_ops / r->fp32_ops;
}
