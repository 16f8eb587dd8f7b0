/* gpu.c — NVIDIA GPU cost of one op. GEMMs go through the tile/wave model
 * (gemm.c). Any other kernel runs its math and its DRAM traffic
 * concurrently (the SMs overlap loads with math), so its body takes the
 * longer of the two; each launch adds a fixed cost that the body cannot
 * hide, because kernels on one stream run back to back.
 *
 * In the estimate, compute_s and memory_s are the time the math units and
 * DRAM are busy (work over achievable rate); time_s can exceed both when
 * latency, quantization or launches bound the op. */
#include <math.h>

#include "backend.h"
#include "gemm.h"

static int gemm_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err)
{
    xs_gemm_shape g = {op->m, op->n, op->k, op->batch > 0 ? op->batch : 1, op->ta, op->tb,
                       op->dtype, xs_dtype_bytes(op->dtype)};
    xs_gemm_result r;
    int rc = xs_gemm_model(dev, &g, &r, err);
    if (rc)
        return rc;
    double rate = xs_gemm_rate(dev, op->dtype, &est->engine, &est->tensor);
    est->compute_s = op->flops / rate;
    est->memory_s = r.memory_s;
    est->overhead_s = r.overhead_s;
    est->time_s = r.time_s;
    est->bound = r.bound;
    if (r.overhead_s > fmax(r.compute_s, r.memory_s))
        est->bound = XS_BOUND_LAUNCH;
    return XS_OK;
}

/* Little's law: every resident thread loads its loop_elems elements, then
 * waits one loaded round trip, so the device finishes at most
 * sms x threads x loop_elems elements a round trip, however much bandwidth
 * is left. Narrow (16-bit) elements reach fewer bytes a trip than fp32
 * ones: the bound bites where bandwidth x latency outgrows the SMs. */
static double in_flight_time(const xs_device *dev, const xs_op *op)
{
    int64_t threads = xs_sm_threads(dev->sm_version);
    if (op->hints.loop_elems <= 0 || dev->stream_latency_ns <= 0 || threads <= 0)
        return 0;
    double per_trip = (double)dev->sm_count * (double)threads * op->hints.loop_elems;
    return op->elems / per_trip * dev->stream_latency_ns * 1e-9;
}

/* A warp that reads 32 elements lying rows apart pulls 32 L2 sectors of
 * 32 bytes to use 2 or 4 bytes of each; the neighbours in those sectors
 * belong to other thread blocks, on other SMs, so L1 does not keep them.
 * The kernel then moves a sector through L2 for every such element. */
#define L2_SECTOR_BYTES 32.0

static double sector_time(const xs_device *dev, const xs_op *op)
{
    if (op->hints.strided_elems <= 0 || dev->l2_bw_gbs <= 0)
        return 0;
    return op->hints.strided_elems * L2_SECTOR_BYTES / (dev->l2_bw_gbs * 1e9);
}

static int gpu_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err)
{
    if (op->kind == XS_OP_GEMM || op->kind == XS_OP_BGEMM)
        return gemm_estimate(dev, op, est, err);
    if (op->kind == XS_OP_ATTENTION) {
        /* fused attention: matrix-engine math against its own DRAM traffic */
        est->compute_s = op->flops / xs_gemm_rate(dev, op->dtype, &est->engine, &est->tensor);
    } else {
        /* pointwise math runs on the fp32 vector units */
        est->engine = XS_FP32;
        est->tensor = 0;
        est->compute_s = op->flops / xs_dev_peak_flops(dev, XS_FP32);
    }
    /* a kernel outside the vectorized loop reaches a share of the streaming rate */
    double share = op->hints.bw_scale > 0 ? op->hints.bw_scale : 1.0;
    est->memory_s = op->bytes / (dev->mem_bw_gbs * 1e9 * dev->mem_bw_efficiency * share);
    est->overhead_s = (double)op->launches * dev->kernel_launch_us * 1e-6;
    double stream = fmax(fmax(est->compute_s, est->memory_s), sector_time(dev, op));
    double wait = in_flight_time(dev, op);
    double body = fmax(stream, wait);
    est->time_s = body + est->overhead_s;
    if (est->overhead_s > body)
        est->bound = XS_BOUND_LAUNCH;
    else if (wait > stream)
        est->bound = XS_BOUND_LATENCY;
    else
        est->bound = est->compute_s >= est->memory_s ? XS_BOUND_COMPUTE : XS_BOUND_MEMORY;
    return XS_OK;
}

const xs_backend xs_gpu_backend = {"gpu", gpu_estimate, 1};
