/* rowop.cuh — what the row kernels (layernorm.cu, softmax.cu) and their
 * jobs (rowop.cu) share: element loads and stores in any of the three
 * storage dtypes with fp32 math, warp and block sums, and the launchers.
 * A row of at most XS_ROW_WARP_MAX elements is one warp's, held in
 * registers; a longer one is one block's, read from memory once per pass
 * (any length: nothing of it is kept on chip). */
#ifndef XS_ROWOP_CUH
#define XS_ROWOP_CUH

#include <math.h>
#include <stdint.h>

#include "../common/half_convert.h"
#include "xs_cu.h"

#define XS_ROW_WARP_MAX 1024
#define XS_ROW_WARPS 4    /* rows per block of the warp kernels */
#define XS_ROW_BLOCK 512  /* threads of the block kernels */
#define XS_LN_EPS 1e-5f   /* torch.nn.LayerNorm's default eps */

template <int DT> __device__ __forceinline__ float xs_row_ld(const void *p, long long i)
{
    if (DT == XS_CD_FP16)
        return xs_f16_bits_to_f32(((const uint16_t *)p)[i]);
    if (DT == XS_CD_BF16)
        return xs_bf16_bits_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

template <int DT> __device__ __forceinline__ void xs_row_st(void *p, long long i, float v)
{
    if (DT == XS_CD_FP16)
        ((uint16_t *)p)[i] = xs_f32_to_f16_bits(v);
    else if (DT == XS_CD_BF16)
        ((uint16_t *)p)[i] = xs_f32_to_bf16_bits(v);
    else
        ((float *)p)[i] = v;
}

__device__ __forceinline__ float xs_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float xs_warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Every thread of the block gets the total; red holds 32 floats. The first
 * barrier keeps a previous call's readers ahead of this call's writers. */
__device__ __forceinline__ float xs_block_reduce(float v, float *red, bool is_max)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = is_max ? xs_warp_max(v) : xs_warp_sum(v);
    __syncthreads();
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    float t = lane < nw ? red[lane] : (is_max ? -INFINITY : 0.0f);
    return is_max ? xs_warp_max(t) : xs_warp_sum(t);
}

/* Elements one thread adds up in sequence before the tree (the check's
 * error bound grows with it). */
static inline long long xs_row_serial(long long n)
{
    return n <= XS_ROW_WARP_MAX ? (n + 31) / 32 : (n + XS_ROW_BLOCK - 1) / XS_ROW_BLOCK;
}

/* y = (x - mean) rstd gamma + beta over m rows of n; mean and rstd (fp32,
 * one per row) kept for the backward pass as PyTorch keeps them. */
cudaError_t xs_cu_layernorm(int dtype, const void *x, const void *gamma, const void *beta, void *y,
                            float *mean, float *rstd, long long m, long long n, cudaStream_t st);
/* y = exp(x - max) / sum over each row */
cudaError_t xs_cu_softmax(int dtype, const void *x, void *y, long long m, long long n,
                          cudaStream_t st);

#endif
