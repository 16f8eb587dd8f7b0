/* gemm.c — see gemm.h. */
#include "gemm.h"

double xs_gemm_rate(const xs_device *dev, xs_dtype want, xs_dtype *engine, int *tensor)
{
    xs_dtype use = want;
    if (want != XS_FP32 && dev->peak_tflops[want] <= 0)
        use = XS_FP32; /* no tensor-core path: cuBLAS computes in fp32 */
    *engine = use;
    *tensor = use != XS_FP32;
    return xs_dev_peak_flops(dev, use) * dev->gemm_efficiency;
}

void xs_gemm_time(const xs_device *dev, const xs_op *op, xs_estimate *est)
{
    double rate = xs_gemm_rate(dev, op->dtype, &est->engine, &est->tensor);
    est->compute_s = op->flops / rate;
    est->memory_s = op->bytes / (dev->mem_bw_gbs * 1e9 * dev->mem_bw_efficiency);
}
