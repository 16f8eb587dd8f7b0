/* gpu.c — NVIDIA GPU cost of one op. A kernel runs its compute and its DRAM
 * traffic concurrently (the SMs overlap loads with math), so its body takes
 * the longer of the two; each launch adds a fixed cost that the body cannot
 * hide, because kernels on one stream run back to back. */
#include <math.h>

#include "backend.h"
#include "gemm.h"

static int gpu_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err)
{
    (void)err;
    if (xs_op_is_matmul(op->kind)) {
        xs_gemm_time(dev, op, est);
    } else {
        /* pointwise math runs on the fp32 vector units */
        est->engine = XS_FP32;
        est->tensor = 0;
        est->compute_s = op->flops / xs_dev_peak_flops(dev, XS_FP32);
        est->memory_s = op->bytes / (dev->mem_bw_gbs * 1e9 * dev->mem_bw_efficiency);
    }
    est->overhead_s = (double)op->launches * dev->kernel_launch_us * 1e-6;
    double body = fmax(est->compute_s, est->memory_s);
    est->time_s = body + est->overhead_s;
    if (est->overhead_s > body)
        est->bound = XS_BOUND_LAUNCH;
    else
        est->bound = est->compute_s >= est->memory_s ? XS_BOUND_COMPUTE : XS_BOUND_MEMORY;
    return XS_OK;
}

const xs_backend xs_gpu_backend = {"gpu", gpu_estimate};

const char *xs_bound_name(int bound)
{
    static const char *names[XS_BOUND_COUNT] = {"compute", "memory", "launch"};
    return bound >= 0 && bound < XS_BOUND_COUNT ? names[bound] : "?";
}
