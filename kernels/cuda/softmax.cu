/* softmax.cu — softmax forward over the last dimension, fp32 math (the
 * row's max subtracted before exp, so no row overflows), dtype in and out.
 * Bytes per call by definition: x read and y written once, 2 s m n. The
 * block kernel of long rows reads x three times (max, sum, write). */
#include "rowop.cuh"

template <int DT, int VPT>
__global__ void __launch_bounds__(XS_ROW_WARPS * 32)
    xs_softmax_warp(const void *x, void *y, long long m, int n)
{
    const int lane = threadIdx.x & 31;
    const long long stride = (long long)gridDim.x * XS_ROW_WARPS;
    for (long long row = (long long)blockIdx.x * XS_ROW_WARPS + (threadIdx.x >> 5); row < m;
         row += stride) {
        const long long base = row * n;
        float v[VPT], mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            int c = lane + 32 * j;
            v[j] = c < n ? xs_row_ld<DT>(x, base + c) : -INFINITY;
            mx = fmaxf(mx, v[j]);
        }
        mx = xs_warp_max(mx);
        float s = 0;
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            v[j] = lane + 32 * j < n ? expf(v[j] - mx) : 0.0f;
            s += v[j];
        }
        s = xs_warp_sum(s);
#pragma unroll
        for (int j = 0; j < VPT; j++) {
            int c = lane + 32 * j;
            if (c < n)
                xs_row_st<DT>(y, base + c, v[j] / s);
        }
    }
}

template <int DT>
__global__ void __launch_bounds__(XS_ROW_BLOCK)
    xs_softmax_block(const void *x, void *y, long long m, long long n)
{
    __shared__ float red[32];
    for (long long row = blockIdx.x; row < m; row += gridDim.x) {
        const long long base = row * n;
        float mx = -INFINITY;
        for (long long c = threadIdx.x; c < n; c += blockDim.x)
            mx = fmaxf(mx, xs_row_ld<DT>(x, base + c));
        mx = xs_block_reduce(mx, red, true);
        float s = 0;
        for (long long c = threadIdx.x; c < n; c += blockDim.x)
            s += expf(xs_row_ld<DT>(x, base + c) - mx);
        s = xs_block_reduce(s, red, false);
        for (long long c = threadIdx.x; c < n; c += blockDim.x)
            xs_row_st<DT>(y, base + c, expf(xs_row_ld<DT>(x, base + c) - mx) / s);
    }
}

template <int DT, int VPT>
static cudaError_t warp_launch(const void *x, void *y, long long m, long long n, cudaStream_t st)
{
    int grid = xs_cu_fill_grid((const void *)xs_softmax_warp<DT, VPT>, XS_ROW_WARPS * 32,
                               (m + XS_ROW_WARPS - 1) / XS_ROW_WARPS);
    xs_softmax_warp<DT, VPT><<<grid, XS_ROW_WARPS * 32, 0, st>>>(x, y, m, (int)n);
    return cudaGetLastError();
}

template <int DT>
static cudaError_t launch(const void *x, void *y, long long m, long long n, cudaStream_t st)
{
    if (n <= 128)
        return warp_launch<DT, 4>(x, y, m, n, st);
    if (n <= 256)
        return warp_launch<DT, 8>(x, y, m, n, st);
    if (n <= 512)
        return warp_launch<DT, 16>(x, y, m, n, st);
    if (n <= XS_ROW_WARP_MAX)
        return warp_launch<DT, 32>(x, y, m, n, st);
    int grid = xs_cu_fill_grid((const void *)xs_softmax_block<DT>, XS_ROW_BLOCK, m);
    xs_softmax_block<DT><<<grid, XS_ROW_BLOCK, 0, st>>>(x, y, m, n);
    return cudaGetLastError();
}

cudaError_t xs_cu_softmax(int dtype, const void *x, void *y, long long m, long long n,
                          cudaStream_t st)
{
    if (m < 1 || n < 1)
        return cudaErrorInvalidValue;
    switch (dtype) {
    case XS_CD_FP32: return launch<XS_CD_FP32>(x, y, m, n, st);
    case XS_CD_FP16: return launch<XS_CD_FP16>(x, y, m, n, st);
    case XS_CD_BF16: return launch<XS_CD_BF16>(x, y, m, n, st);
    default: return cudaErrorInvalidValue;
    }
}
