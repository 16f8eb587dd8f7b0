/* gpu.c — the NVIDIA GPU device class (its file schema: gpu_device.c): the
 * tensor cores and SIMT units as a tile/wave engine for gemm.c, the cost of
 * one op, the band's corners, and the class's slot for backend.c.
 *
 * GEMMs go through the tile/wave model (gemm.c). Any other kernel runs its math and its DRAM traffic
 * concurrently (the SMs overlap loads with math), so its body takes the
 * longer of the two; each launch adds a fixed cost that the body cannot
 * hide, because kernels on one stream run back to back.
 *
 * In the estimate, compute_s and memory_s are the time the math units and
 * DRAM are busy (work over achievable rate); time_s can exceed both when
 * latency, quantization or launches bound the op. */
#include "gpu.h"
#include "gpu_flash.h"

#include <math.h>
#include <string.h>

#include "gemm.h"
#include "power.h"

double xs_gpu_peak_flops(const xs_device *dev, xs_dtype t)
{
    double tflops = dev->peak_tflops[t];
    if (tflops <= 0)
        return 0;
    /* The vector peak is quoted at the boost clock, tensor peaks at the
     * tensor clock; both scale down to the clock the chip holds under load. */
    const xs_gpu_params *g = xs_gpu_of(dev);
    if (t == XS_FP32) { /* the FP32 units hold their own clock where the file gives one */
        double f = g->clock_fp32_mhz > 0 ? g->clock_fp32_mhz : g->clock_sustained_mhz;
        return tflops * 1e12 * fmin(1.0, f * xs_dev_clock_scale(dev) / g->clock_boost_mhz);
    }
    return tflops * 1e12 * fmin(1.0, xs_gpu_clock_mhz(dev) / g->clock_tensor_mhz);
}

double xs_gpu_clock_mhz(const xs_device *dev)
{
    /* a power limit moves the clock by the scale xs_predict fitted (power.h) */
    return xs_gpu_of(dev)->clock_sustained_mhz * xs_dev_clock_scale(dev);
}

/* Every NVIDIA SM here has 64K 32-bit registers (datasheets.md 1b [N15]). */
#define REGFILE_KB_PER_SM 256.0

static void gpu_engine(const xs_device *dev, xs_gemm_engine *e)
{
    const xs_gpu_params *g = xs_gpu_of(dev);
    memset(e, 0, sizeof *e);
    e->device_id = dev->id;
    e->units = g->sm_count;
    e->clock_mhz = fmin(xs_gpu_clock_mhz(dev), fmax(g->clock_boost_mhz, g->clock_tensor_mhz));
    for (int t = 0; t < XS_DTYPE_COUNT; t++) {
        e->peak_tflops[t] = dev->peak_tflops[t];
        e->peak_flops[t] = xs_gpu_peak_flops(dev, (xs_dtype)t);
        e->efficiency[t] = g->gemm_efficiency;
    }
    e->matrix = &g->tensor_tiles;
    e->unaligned = &g->unaligned_tiles;
    e->vector = &g->simt_tiles;
    e->unaligned_rate = g->unaligned_rate;
    e->split_k_max = g->split_k_max;
    e->l2_bw_gbs = g->l2_bw_gbs;
    e->l2_mb = g->l2_mb;
    e->smem_per_unit_kb = g->smem_per_sm_kb;
    e->regfile_kb_per_unit = REGFILE_KB_PER_SM;
    e->latency_ns = g->mem_latency_ns;
    e->dram_bw_gbs = dev->mem_bw_gbs;
    e->dram_efficiency = g->mem_bw_efficiency;
    e->launch_us = g->kernel_launch_us;
}

static int gemm_estimate(const xs_gemm_engine *e, const xs_op *op, xs_estimate *est,
                         xs_error *err)
{
    int ob = op->hints.out_bytes > 0 ? op->hints.out_bytes : xs_dtype_bytes(op->dtype);
    xs_gemm_shape g = {op->m, op->n, op->k, op->batch > 0 ? op->batch : 1, op->ta, op->tb,
                       op->dtype, ob};
    xs_gemm_result r;
    int rc = xs_gemm_model(e, &g, &r, err);
    if (rc)
        return rc;
    double rate = xs_gemm_rate(e, op->dtype, &est->engine, &est->tensor);
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
    const xs_gpu_params *g = xs_gpu_of(dev);
    int64_t threads = xs_sm_threads(g->sm_version);
    if (op->hints.loop_elems <= 0 || g->stream_latency_ns <= 0 || threads <= 0)
        return 0;
    double per_trip = (double)g->sm_count * (double)threads * op->hints.loop_elems;
    return op->elems / per_trip * g->stream_latency_ns * 1e-9;
}

/* A warp that reads 32 elements lying rows apart pulls 32 L2 sectors of
 * 32 bytes to use 2 or 4 bytes of each; the neighbours in those sectors
 * belong to other thread blocks, on other SMs, so L1 does not keep them.
 * The kernel then moves a sector through L2 for every such element. */
#define L2_SECTOR_BYTES 32.0

static double sector_time(const xs_device *dev, const xs_op *op)
{
    if (op->hints.strided_elems <= 0 || xs_gpu_of(dev)->l2_bw_gbs <= 0)
        return 0;
    return op->hints.strided_elems * L2_SECTOR_BYTES / (xs_gpu_of(dev)->l2_bw_gbs * 1e9);
}

/* A kernel that runs as one small block cannot spread its loads over the
 * device: each thread waits out every round trip of its chain in turn, at
 * the unloaded latency (nothing else loads the memory system). */
static double chain_time(const xs_device *dev, const xs_op *op)
{
    return op->hints.serial_trips * xs_gpu_of(dev)->mem_latency_ns * 1e-9;
}

/* FlashAttention-2's pipes on dev (gpu_flash.c): mma.sync's share of the
 * tensor peak, the special-function units and the FP32 units, all at the
 * clock the tensor load leaves. */
static double flash_compute_s(const xs_device *dev, const xs_op *op, xs_dtype *engine,
                              int *tensor)
{
    const xs_gpu_params *g = xs_gpu_of(dev);
    xs_dtype use = dev->peak_tflops[op->dtype] > 0 ? op->dtype : XS_FP32;
    *engine = use;
    *tensor = use != XS_FP32;
    double share = *tensor && g->mma_sync_share > 0 ? g->mma_sync_share : 1.0;
    double hz = xs_gpu_clock_mhz(dev) * 1e6, sms = (double)g->sm_count;
    double fp32_lanes = dev->peak_tflops[XS_FP32] * 1e12 / (2.0 * sms * g->clock_boost_mhz * 1e6);
    xs_flash_rates r = {xs_gpu_peak_flops(dev, use) * share,
                        XS_FLASH_MUFU_PER_SM_CLOCK * sms * hz, fp32_lanes * sms * hz};
    return xs_flash_compute_s(op, &r);
}

/* A loop its own instruction chain paces (scalar integer index math, one
 * element a thread at a time) draws little power, so the SMs hold the
 * boost clock through it. */
static double issue_time(const xs_device *dev, const xs_op *op)
{
    const xs_gpu_params *g = xs_gpu_of(dev);
    if (op->hints.issue_cycles <= 0 || g->sm_count <= 0 || g->clock_boost_mhz <= 0)
        return 0;
    return op->hints.issue_cycles / ((double)g->sm_count * g->clock_boost_mhz * 1e6);
}

/* eng: dev's engine (gpu_engine), or NULL to work it out */
static int gpu_estimate_model(const xs_device *dev, const xs_gemm_engine *eng, const xs_op *op,
                              xs_estimate *est, xs_error *err)
{
    xs_gemm_engine own;
    if (!eng && (op->kind == XS_OP_GEMM || op->kind == XS_OP_BGEMM)) {
        gpu_engine(dev, &own);
        eng = &own;
    }
    if (op->kind == XS_OP_GEMM || op->kind == XS_OP_BGEMM)
        return gemm_estimate(eng, op, est, err);
    if (op->kind == XS_OP_ATTENTION) {
        /* fused attention: FA2's pipes in turn against its own DRAM traffic */
        est->compute_s = flash_compute_s(dev, op, &est->engine, &est->tensor);
    } else {
        /* pointwise math runs on the fp32 vector units */
        est->engine = XS_FP32;
        est->tensor = 0;
        est->compute_s = fmax(op->flops / xs_gpu_peak_flops(dev, XS_FP32), issue_time(dev, op));
    }
    /* a kernel outside the vectorized loop reaches a share of the streaming rate */
    double share = op->hints.bw_scale > 0 ? op->hints.bw_scale : 1.0;
    est->memory_s = op->bytes / (dev->mem_bw_gbs * 1e9 * xs_gpu_of(dev)->mem_bw_efficiency * share);
    est->overhead_s = (double)op->launches * xs_gpu_of(dev)->kernel_launch_us * 1e-6;
    double stream = fmax(fmax(est->compute_s, est->memory_s), sector_time(dev, op));
    double wait = fmax(in_flight_time(dev, op), chain_time(dev, op));
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

/* A calibrated board (class_time_factor, from a trace of it) runs its kernel
 * bodies of a class that many times the model's time. A trace times kernel
 * bodies, not the launch gaps between them, so the launch cost stays. */
static void apply_class_time_factor(const xs_device *dev, const xs_op *op, xs_estimate *est)
{
    double f = xs_gpu_of(dev)->class_time_factor[xs_kclass_of_op(op->kind)];
    if (f > 0 && f != 1)
        est->time_s = (est->time_s - est->overhead_s) * f + est->overhead_s;
}

static int gpu_estimate_on(const xs_device *dev, const xs_gemm_engine *eng, const xs_op *op,
                           xs_estimate *est, xs_error *err)
{
    int rc = gpu_estimate_model(dev, eng, op, est, err);
    if (!rc)
        apply_class_time_factor(dev, op, est);
    return rc;
}

static int gpu_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err)
{
    return gpu_estimate_on(dev, NULL, op, est, err);
}

static void gpu_corner(const xs_device *dev, int which, xs_device *out)
{
    *out = *dev;
    const xs_gpu_params *g = xs_gpu_of(dev);
    xs_gpu_params *o = xs_gpu_of(out);
    if (which < 0) {
        o->clock_sustained_mhz = g->clock_sustained_low_mhz;
        /* the slow corner slows the FP32 units by the same share */
        if (g->clock_fp32_mhz > 0 && g->clock_sustained_mhz > 0)
            o->clock_fp32_mhz = g->clock_fp32_mhz * g->clock_sustained_low_mhz / g->clock_sustained_mhz;
        o->gemm_efficiency = g->gemm_efficiency_low;
        o->mem_bw_efficiency = g->mem_bw_efficiency_low;
    } else if (which > 0) {
        /* at most the clock the peaks are quoted at */
        o->clock_sustained_mhz = fmax(g->clock_boost_mhz, g->clock_tensor_mhz);
        o->clock_fp32_mhz = g->clock_boost_mhz;
        o->gemm_efficiency = g->gemm_efficiency_high;
        o->mem_bw_efficiency = g->mem_bw_efficiency_high;
    }
}

static void gpu_clock_mhz(const xs_device *dev, double *sustained, double *top)
{
    const xs_gpu_params *g = xs_gpu_of(dev);
    *sustained = g->clock_sustained_mhz;
    *top = fmax(g->clock_boost_mhz, g->clock_tensor_mhz);
}

/* The cuBLAS workspace PyTorch gives a handle on a stream, through its
 * allocator (aten/src/ATen/cuda/CublasHandlePool.cpp @ 26a3905: 4096 KiB x
 * 2 + 16 KiB x 8 by default, 4096 KiB x 8 on sm_90), and cuBLASLt's (1024
 * KiB, CUBLASLT_WORKSPACE_SIZE's default): one pair for the thread that
 * runs the forward and one for the autograd engine's device thread, which
 * gets its own handle from the per-thread pool. */
static double gpu_blas_workspace(const xs_device *dev)
{
    double cublas =
        xs_gpu_of(dev)->sm_version >= 90 ? 4096.0 * 8 * 1024 : (4096.0 * 2 + 16 * 8) * 1024;
    return 2 * (cublas + 1024.0 * 1024);
}

static const char *gpu_arch_name(const xs_device *dev)
{
    static const char *const arches[] = {"volta", "turing", "ampere", "ada", "hopper"};
    return xs_gpu_of(dev)->arch >= 0 && xs_gpu_of(dev)->arch <= XS_ARCH_HOPPER ? arches[xs_gpu_of(dev)->arch] : "?";
}

const xs_backend xs_gpu_backend = {
    .name = "gpu",
    .doc = "an NVIDIA GPU, described by its datasheet and the GPU model's\n"
           "sourced parameters",
    .fields = xs_gpu_fields,
    .check = xs_gpu_check_fields,
    .arch_name = gpu_arch_name,
    .gemm_engine = gpu_engine,
    .estimate = gpu_estimate,
    .estimate_on = gpu_estimate_on,
    .corner = gpu_corner,
    .async = 1,
    .clock_mhz = gpu_clock_mhz,
    .cuda = 1,
    .workspace_bytes = gpu_blas_workspace,
    .topology = xs_gpu_topology,
};
