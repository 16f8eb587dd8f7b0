/* optim_cu.cuh — what the optimizer files share: the arrays of one
 * optimizer step (tensors packed at offsets into one buffer per list, as a
 * flattened model keeps them) and the launchers of the fused multi-tensor
 * kernels (optim_fused.cu) and of eager Adan (adan_eager.cu). */
#ifndef XS_OPTIM_CU_CUH
#define XS_OPTIM_CU_CUH

#include <cuda_runtime.h>
#include <stddef.h>

#include "../common/optim_math.h"
#include "xs_cu.h"

typedef struct {
    int dtype;               /* XS_CD_FP32, XS_CD_FP16 or XS_CD_BF16: p and g */
    size_t n;                /* tensors */
    const long long *size;   /* elements of tensor t */
    const long long *offset; /* its first element in every array below */
    void *p, *g;             /* parameters and gradients, dtype (fp16/bf16 as raw bits) */
    float *master;           /* fp16/bf16 parameters: the fp32 copy the update runs on */
    float *s[4];             /* fp32 state: Adan g_prev (eager: -g_prev), m, v, n; AdamW m, v */
    float *tmp;              /* eager Adan: a temporary of the largest tensor */
} xs_optim_arrays;

/* 1: the optimizer launchers run each block's code on the host, thread
 * after thread, over host memory (the threads of these kernels never talk
 * to each other, so this is the kernel's result): xs_cuda_tests --emulate
 * checks the launch plan, the kernel arguments, the alignment choices and
 * the vector and tail paths without a GPU. */
extern int xs_cu_emulate;

/* One optimizer step over every tensor on `st` (no sync); *launches gets
 * the kernel launches it made. cudaErrorInvalidValue for a list the
 * multi-tensor plan refuses. */
cudaError_t xs_cu_adan_fused(const xs_optim_arrays *a, const xs_adan_consts *c,
                             cudaStream_t st, int *launches);
cudaError_t xs_cu_adamw_fused(const xs_optim_arrays *a, const xs_adamw_consts *c,
                              cudaStream_t st, int *launches);
/* fp32 only: the 17 kernels of PyTorch's single-tensor Adan per tensor. */
cudaError_t xs_cu_adan_eager(const xs_optim_arrays *a, const xs_adan_consts *c,
                             cudaStream_t st, int *launches);

/* Threads of a multi-tensor block, 4 elements each per step. apex uses
 * 512 (BLOCK_SIZE, ILP 4: csrc/multi_tensor_adam.cu @ 004da4e); 256 with
 * at most 64 registers lets 4 blocks share an SM, so a launch's 320 blocks
 * are all resident at once on a GPU of 80 or more SMs (A100 108, H100 132)
 * instead of running a second, partial wave at the end of every launch. */
#define XS_MT_THREADS 256
#define XS_MT_BLOCKS_PER_SM 4

#endif
