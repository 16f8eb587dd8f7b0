/* layernorm.cu — LayerNorm forward, fp32 statistics (two passes: the mean,
 * then the mean square about it), dtype in and out.
 * Bytes per call by definition: x read and y written once (2 s m n),
 * gamma and beta read once (2 s n), mean and rstd written (8 m), s the
 * dtype's size. The block kernel of long rows reads x three times; past
 * L2 that is more DRAM traffic than the definition counts. */
#include "rowop.cuh"

template <int DT, int VPT>
__global__ void __launch_bounds__(XS_ROW_WARPS * 32)
    xs_ln_warp(const void *x, const void *gamma, const void *beta, void *y, float *mean,
               float *rstd, long long m, int n)
{
    const int lane = threadIdx.x & 31;
    const long long stride = (long long)gridDim.x * XS_ROW_WARPS;
    for (long long row = (long long)blockIdx.x * XS_ROW_WARPS + (threadIdx.x >> 5); row < m;
         row += stride) {
        const long long base = row * n;
        float v[VPT], s = 0;
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            int c = lane + 32 * j;
            v[j] = c < n ? xs_row_ld<DT>(x, base + c) : 0.0f;
            s += v[j];
        }
        const float mu = xs_warp_sum(s) / (float)n;
        float q = 0;
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            float d = lane + 32 * j < n ? v[j] - mu : 0.0f;
            q += d * d;
        }
        const float rs = 1.0f / sqrtf(xs_warp_sum(q) / (float)n + XS_LN_EPS);
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            int c = lane + 32 * j;
            if (c < n)
                xs_row_st<DT>(y, base + c,
                              (v[j] - mu) * rs * xs_row_ld<DT>(gamma, c) + xs_row_ld<DT>(beta, c));
        }
        if (lane == 0) {
            mean[row] = mu;
            rstd[row] = rs;
        }
    }
}

template <int DT>
__global__ void __launch_bounds__(XS_ROW_BLOCK)
    xs_ln_block(const void *x, const void *gamma, const void *beta, void *y, float *mean,
                float *rstd, long long m, long long n)
{
    __shared__ float red[32];
    for (long long row = blockIdx.x; row < m; row += gridDim.x) {
        const long long base = row * n;
        float s = 0;
        for (long long c = threadIdx.x; c < n; c += blockDim.x)
            s += xs_row_ld<DT>(x, base + c);
        const float mu = xs_block_reduce(s, red, false) / (float)n;
        float q = 0;
        for (long long c = threadIdx.x; c < n; c += blockDim.x) {
            float d = xs_row_ld<DT>(x, base + c) - mu;
            q += d * d;
        }
        const float rs = 1.0f / sqrtf(xs_block_reduce(q, red, false) / (float)n + XS_LN_EPS);
        for (long long c = threadIdx.x; c < n; c += blockDim.x)
            xs_row_st<DT>(y, base + c,
                          (xs_row_ld<DT>(x, base + c) - mu) * rs * xs_row_ld<DT>(gamma, c) +
                              xs_row_ld<DT>(beta, c));
        if (threadIdx.x == 0) {
            mean[row] = mu;
            rstd[row] = rs;
        }
    }
}

template <int DT, int VPT>
static cudaError_t warp_launch(const void *x, const void *g, const void *b, void *y, float *mean,
                               float *rstd, long long m, long long n, cudaStream_t st)
{
    int grid = xs_cu_fill_grid((const void *)xs_ln_warp<DT, VPT>, XS_ROW_WARPS * 32,
                               (m + XS_ROW_WARPS - 1) / XS_ROW_WARPS);
    xs_ln_warp<DT, VPT><<<grid, XS_ROW_WARPS * 32, 0, st>>>(x, g, b, y, mean, rstd, m, (int)n);
    return cudaGetLastError();
}

template <int DT>
static cudaError_t launch(const void *x, const void *g, const void *b, void *y, float *mean,
                          float *rstd, long long m, long long n, cudaStream_t st)
{
    if (n <= 128)
        return warp_launch<DT, 4>(x, g, b, y, mean, rstd, m, n, st);
    if (n <= 256)
        return warp_launch<DT, 8>(x, g, b, y, mean, rstd, m, n, st);
    if (n <= 512)
        return warp_launch<DT, 16>(x, g, b, y, mean, rstd, m, n, st);
    if (n <= XS_ROW_WARP_MAX)
        return warp_launch<DT, 32>(x, g, b, y, mean, rstd, m, n, st);
    int grid = xs_cu_fill_grid((const void *)xs_ln_block<DT>, XS_ROW_BLOCK, m);
    xs_ln_block<DT><<<grid, XS_ROW_BLOCK, 0, st>>>(x, g, b, y, mean, rstd, m, n);
    return cudaGetLastError();
}

cudaError_t xs_cu_layernorm(int dtype, const void *x, const void *gamma, const void *beta, void *y,
                            float *mean, float *rstd, long long m, long long n, cudaStream_t st)
{
    if (m < 1 || n < 1)
        return cudaErrorInvalidValue;
    switch (dtype) {
    case XS_CD_FP32: return launch<XS_CD_FP32>(x, gamma, beta, y, mean, rstd, m, n, st);
    case XS_CD_FP16: return launch<XS_CD_FP16>(x, gamma, beta, y, mean, rstd, m, n, st);
    case XS_CD_BF16: return launch<XS_CD_BF16>(x, gamma, beta, y, mean, rstd, m, n, st);
    default: return cudaErrorInvalidValue;
    }
}
