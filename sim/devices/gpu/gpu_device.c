/* gpu_device.c — the schema of a class-gpu device file (an NVIDIA board
 * described by its datasheet and the sourced parameters of the GPU model)
 * and the relations between its fields that no single field can check. */
#include <stdio.h>

#include "device_fields.h"
#include "gpu.h"
#include "kernel_class.h"

/* rows that store into the xs_gpu_params record (device_fields.h) */
#define G(m) XS_OWN(xs_gpu_params, m)
#define G_STR(m) XS_OWN_STR(xs_gpu_params, m)

/* A class's time factor, written by `xpusim calibrate --backend trace`.
 * Outside [0.1, 10] the trace and the model are not the same run (another
 * batch, a kernel the model does not have), which no efficiency explains. */
#define CLASS_FACTOR(name, cls)                                                          \
    {"model.class_time_factor." name, XS_F_NUM, 0, 0.1, 10, 0, NULL,                    \
     G(class_time_factor[cls]), 0,                                                 \
     "measured / predicted time of the " name " kernels' bodies on this board (absent: 1)", NULL}

static const xs_field GPU_FIELDS[] = {
    ID_ROW,
    STR("name", 1, D_STR(name), "marketing name"),
    CLASS_ROW,
    {"arch", XS_F_ENUM, 1, 0, 0, 0, XS_ARCH_CHOICES, G(arch), 0, "micro-architecture", NULL},
    NOTE_OPT("note", "free text"),
    INT("compute.sm_version", 10, 200, G(sm_version), "CUDA compute capability x 10 (sm_86 -> 86)"),
    INT("compute.sm_count", 1, 100000, G(sm_count), "streaming multiprocessors (or cores)"),
    POS("compute.clock_base_mhz", 0, G(clock_base_mhz), "base clock"),
    POS("compute.clock_boost_mhz", 1, G(clock_boost_mhz), "boost clock the fp32 peak assumes"),
    POS("compute.clock_tensor_mhz", 1, G(clock_tensor_mhz), "clock the tensor peaks assume"),
    POS("compute.clock_sustained_mhz", 1, G(clock_sustained_mhz),
        "clock held under sustained dense load at the power limit"),
    POS("compute.clock_sustained_low_mhz", 1, G(clock_sustained_low_mhz),
        "slow end of the sustained clock (uncertainty band)"),
    POS("compute.clock_fp32_mhz", 0, G(clock_fp32_mhz),
        "clock FP32-unit (SIMT) work holds at the default limit; absent: the sustained clock"),
    POS("compute.peak_fp32_tflops", 1, D(peak_tflops[XS_FP32]), "dense fp32 vector peak"),
    POS("compute.peak_tf32_tflops", 0, D(peak_tflops[XS_TF32]), "dense tf32 tensor peak"),
    POS("compute.peak_fp16_tflops", 1, D(peak_tflops[XS_FP16]), "dense fp16 tensor peak"),
    POS("compute.peak_bf16_tflops", 0, D(peak_tflops[XS_BF16]), "dense bf16 tensor peak"),
    POS("compute.peak_int8_tops", 0, D(peak_tflops[XS_INT8]), "dense int8 tensor peak"),
    POS("compute.peak_fp8_tflops", 0, D(peak_tflops[XS_FP8]), "dense fp8 tensor peak"),
    STR("compute.tensor_mma_shape", 1, G_STR(mma_shape), "fp16/bf16 tensor-core MMA instruction shape, e.g. m16n8k16"),
    POS("compute.mma_sync_share", 0, G(mma_sync_share),
        "share of the dense tensor peak the warp-level mma.sync m16n8k16 reaches (kernels "
        "written for Ampere, FlashAttention-2 among them); absent: 1, where it is the native "
        "instruction"),
    NOTE("compute.source", "where the compute figures come from"),
    NOTE_OPT("compute.note", "free text"),
    STR("memory.type", 1, G_STR(mem_type), "HBM2, GDDR6, ..."),
    POS("memory.capacity_gb", 1, D(mem_capacity_gb), "device memory"),
    POS("memory.usable_mib", 0, D(mem_usable_mib),
        "the total CUDA and nvidia-smi report, in MiB: the capacity less ECC (on GDDR "
        "boards) and the driver's reservation; what a training step may fill (absent: "
        "capacity_gb x 1024)"),
    POS("memory.bandwidth_gbs", 1, D(mem_bw_gbs), "peak DRAM bandwidth, 1e9 B/s"),
    POS("memory.l2_mb", 1, G(l2_mb), "L2 cache"),
    POS("memory.smem_per_sm_kb", 1, G(smem_per_sm_kb), "max shared memory per SM"),
    POS("memory.l2_bw_gbs", 1, G(l2_bw_gbs), "L2 to SM aggregate bandwidth"),
    POS("memory.latency_ns", 1, G(mem_latency_ns), "global-memory load latency"),
    POS("memory.stream_latency_ns", 0, G(stream_latency_ns),
        "round trip of a streaming kernel's loads at full load (block turnover included); "
        "bounds kernels whose threads hold few elements in flight (absent: not modelled)"),
    NOTE("memory.source", "where the memory figures come from"),
    NOTE_OPT("memory.note", "free text"),
    {"interconnect.nvlink", XS_F_ENUM, 1, 0, 0, 0, XS_NVLINK_CHOICES, G(nvlink), 0,
     "how NVLink joins the node's GPUs: none, bridge (PCIe cards, a bridge between "
     "interconnect.nvlink_gpus of them), mesh (the V100 SXM2 hybrid cube-mesh) or switch "
     "(NVSwitch: every GPU of the baseboard at full bandwidth)", NULL},
    {"interconnect.nvlink_generation", XS_F_INT, 0, 1, 5, 0, NULL, G(nvlink_generation), 0,
     "NVLink generation (2: Volta and Turing, 3: Ampere, 4: Hopper); with NVLink only", NULL},
    {"interconnect.nvlink_gpus", XS_F_INT, 0, 2, 576, 0, NULL, G(nvlink_gpus), 0,
     "GPUs one NVLink fabric joins (8 on an HGX/DGX baseboard, 2 for a bridged pair); with "
     "NVLink only", NULL},
    POS("interconnect.nvlink_gbs_bidir", 0, D(nvlink_gbs_bidir),
        "NVLink total bidirectional a GPU (GB/s); with NVLink only"),
    STR("interconnect.host_link", 1, D_STR(host_link), "host link, e.g. PCIe 4.0 x16"),
    POS("interconnect.host_gbs_bidir", 1, D(host_gbs_bidir), "host link bidirectional"),
    INT("interconnect.pcie_generation", 1, 6, G(pcie_generation),
        "the host link's PCIe generation (its bandwidth must match host_gbs_bidir)"),
    INT("interconnect.pcie_lanes", 1, 32, G(pcie_lanes), "the host link's PCIe lanes (x16: 16)"),
    INT("interconnect.gpus_per_node", 1, 64, G(gpus_per_node),
        "GPUs in one node of the usual server or cloud instance for this board: the default "
        "cluster.per_node"),
    NOTE("interconnect.source", "where the interconnect figures come from"),
    NOTE_OPT("interconnect.note", "free text"),
    POWER_ROWS("board power limit", "idle board power"),
    {"power.v_floor", XS_F_NUM, 0, 0, 1, 1, NULL, D(power_v_floor), 0,
     "core voltage at the lowest clocks over the core voltage at the top clock "
     "(the boost or tensor clock); with power.vf_knee_mhz (absent: the voltage in "
     "proportion to the clock, dynamic power ~ f^3)", NULL},
    POS("power.vf_knee_mhz", 0, D(power_vf_knee_mhz),
        "the clock below which the core voltage stops falling (sits at power.v_floor)"),
    {"power.leak_frac", XS_F_NUM, 0, 0, 1, 0, NULL, D(power_leak_frac), 0,
     "share of a dense kernel's core power (tdp - idle) that is leakage of the active SMs, "
     "following the voltage rather than the clock (absent: 0)", NULL},
    PRICE_ROWS("device-hour"),
    STR("gemm.tensor_tiles", 1, G_STR(tensor_tiles_text),
        "matrix-engine GEMM tiles, space-separated MxN/S[cC] (S stages, C cluster)"),
    INT("gemm.tensor_k_bytes", 1, 4096, G(tensor_tiles.k_bytes),
        "bytes of K one pipeline stage holds (matrix engine)"),
    STR("gemm.unaligned_tiles", 1, G_STR(unaligned_tiles_text),
        "matrix-engine tiles usable when operand rows are not 16-byte aligned"),
    INT("gemm.unaligned_k_bytes", 1, 4096, G(unaligned_tiles.k_bytes),
        "bytes of K one stage holds (unaligned kernels)"),
    FRAC("gemm.unaligned_rate", G(unaligned_rate),
         "tensor rate of the unaligned kernels as a fraction of the peak"),
    STR("gemm.simt_tiles", 1, G_STR(simt_tiles_text), "vector-unit GEMM tiles, as tensor_tiles"),
    INT("gemm.simt_k_bytes", 1, 4096, G(simt_tiles.k_bytes),
        "bytes of K one pipeline stage holds (vector units)"),
    INT("gemm.split_k_max", 1, 256, G(split_k_max),
        "largest split-K factor the library uses (1: none)"),
    NOTE("gemm.source", "where the tile shapes come from"),
    NOTE_OPT("gemm.note", "free text"),
    FRAC("model.gemm_efficiency", G(gemm_efficiency),
         "fraction of the MMA peak a GEMM mainloop issues when loads and latency do not limit it"),
    FRAC("model.gemm_efficiency_low", G(gemm_efficiency_low), "slow end of gemm_efficiency"),
    FRAC("model.gemm_efficiency_high", G(gemm_efficiency_high), "fast end of gemm_efficiency"),
    FRAC("model.mem_bw_efficiency", G(mem_bw_efficiency),
         "fraction of DRAM bandwidth streaming kernels reach"),
    FRAC("model.mem_bw_efficiency_low", G(mem_bw_efficiency_low), "slow end of mem_bw_efficiency"),
    FRAC("model.mem_bw_efficiency_high", G(mem_bw_efficiency_high),
         "fast end of mem_bw_efficiency"),
    POS("model.kernel_launch_us", 1, G(kernel_launch_us), "GPU-side cost of one kernel launch"),
    NOTE("model.source", "where the model parameters come from"),
    NOTE_OPT("model.note", "free text"),
    CLASS_FACTOR("gemm", XS_KC_GEMM),
    CLASS_FACTOR("attention", XS_KC_ATTENTION),
    CLASS_FACTOR("softmax", XS_KC_SOFTMAX),
    CLASS_FACTOR("norm", XS_KC_NORM),
    CLASS_FACTOR("elementwise", XS_KC_ELEMENTWISE),
    CLASS_FACTOR("copy", XS_KC_COPY),
    CLASS_FACTOR("reduce", XS_KC_REDUCE),
    CLASS_FACTOR("embed", XS_KC_EMBED),
    CLASS_FACTOR("loss", XS_KC_LOSS),
    CLASS_FACTOR("optimizer", XS_KC_OPTIMIZER),
    CLASS_FACTOR("comm", XS_KC_COMM),
    {"calibration", XS_F_OBJ, 0, 0, 0, 0, NULL, XS_NOSTORE, 0,
     "provenance of a calibrated file: the trace, scenario, date, command, and each class "
     "factor's fit with its residuals", NULL},
};

const xs_field *xs_gpu_fields(size_t *n)
{
    *n = sizeof GPU_FIELDS / sizeof GPU_FIELDS[0];
    return GPU_FIELDS;
}

/* One PCIe lane's bandwidth each way by generation, GB/s: the signalling
 * rate less the line code (PCI-SIG: 2.5 and 5 GT/s with 8b/10b, 8, 16 and
 * 32 GT/s with 128b/130b, 64 GT/s PAM4 with FLIT mode's 242/256). */
static double pcie_lane_gbs(int64_t gen)
{
    static const double gbs[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
    return gen >= 1 && gen <= 6 ? gbs[gen] : 0;
}

/* The interconnect's fields agree: NVLink's three figures come with a
 * topology other than none and only then; the host link's bandwidth is
 * its PCIe generation and lanes' (within 10%: the datasheets round). */
static int check_links(const xs_device *dev, const char *path, xs_error *err)
{
    const xs_gpu_params *d = xs_gpu_of(dev);
    int has = d->nvlink != XS_NVLINK_NONE;
    const char *missing = !(dev->nvlink_gbs_bidir > 0) ? "interconnect.nvlink_gbs_bidir"
                          : d->nvlink_generation == 0  ? "interconnect.nvlink_generation"
                          : d->nvlink_gpus == 0        ? "interconnect.nvlink_gpus"
                                                       : NULL;
    const char *extra = dev->nvlink_gbs_bidir > 0   ? "interconnect.nvlink_gbs_bidir"
                        : d->nvlink_generation != 0 ? "interconnect.nvlink_generation"
                        : d->nvlink_gpus != 0       ? "interconnect.nvlink_gpus"
                                                    : NULL;
    if (has && missing)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field '%s' is required when interconnect.nvlink is not none",
                            path, missing);
    if (!has && extra)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field '%s' needs interconnect.nvlink other than none (the board "
                            "has no NVLink), got it with none",
                            path, extra);
    int64_t lanes = d->pcie_lanes;
    if (lanes & (lanes - 1))
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'interconnect.pcie_lanes' must be 1, 2, 4, 8, 16 or 32, "
                            "got %lld",
                            path, (long long)lanes);
    double nominal = 2 * pcie_lane_gbs(d->pcie_generation) * (double)lanes;
    if (fabs(dev->host_gbs_bidir - nominal) > 0.1 * nominal)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'interconnect.host_gbs_bidir' must be PCIe %lld x%lld's "
                            "bandwidth (%.1f GB/s both ways, within 10%%), got %g",
                            path, (long long)d->pcie_generation, (long long)lanes, nominal,
                            dev->host_gbs_bidir);
    return XS_OK;
}

/* Relations between the fields of a GPU file. */
int xs_gpu_check_fields(xs_device *dev, const char *path, xs_error *err)
{
    xs_gpu_params *d = xs_gpu_of(dev);
    int rc = check_links(dev, path, err);
    if (rc)
        return rc;
    double top = fmax(d->clock_boost_mhz, d->clock_tensor_mhz);
    if (dev->mem_usable_mib > dev->mem_capacity_gb * 1024)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'memory.usable_mib' must not exceed memory.capacity_gb "
                            "x 1024 (%g MiB), got %g",
                            path, dev->mem_capacity_gb * 1024, dev->mem_usable_mib);
    if (d->clock_sustained_mhz > top)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.clock_sustained_mhz' must not exceed the boost "
                            "or tensor clock (%g MHz), got %g",
                            path, top, d->clock_sustained_mhz);
    if (d->mma_sync_share > 1)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.mma_sync_share' must be a share in (0, 1], "
                            "got %g", path, d->mma_sync_share);
    if (d->clock_fp32_mhz > d->clock_boost_mhz)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.clock_fp32_mhz' must not exceed "
                            "compute.clock_boost_mhz (%g), got %g",
                            path, d->clock_boost_mhz, d->clock_fp32_mhz);
    if (d->clock_sustained_low_mhz > d->clock_sustained_mhz)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.clock_sustained_low_mhz' must not exceed "
                            "compute.clock_sustained_mhz (%g), got %g",
                            path, d->clock_sustained_mhz, d->clock_sustained_low_mhz);
    if (!(d->gemm_efficiency_low <= d->gemm_efficiency &&
          d->gemm_efficiency <= d->gemm_efficiency_high))
        return xs_error_set(err, XS_ERANGE,
                            "%s: fields 'model.gemm_efficiency_low' <= 'model.gemm_efficiency' "
                            "<= 'model.gemm_efficiency_high' must hold, got %g, %g, %g",
                            path, d->gemm_efficiency_low, d->gemm_efficiency,
                            d->gemm_efficiency_high);
    if (!(d->mem_bw_efficiency_low <= d->mem_bw_efficiency &&
          d->mem_bw_efficiency <= d->mem_bw_efficiency_high))
        return xs_error_set(err, XS_ERANGE,
                            "%s: fields 'model.mem_bw_efficiency_low' <= "
                            "'model.mem_bw_efficiency' <= 'model.mem_bw_efficiency_high' must "
                            "hold, got %g, %g, %g",
                            path, d->mem_bw_efficiency_low, d->mem_bw_efficiency,
                            d->mem_bw_efficiency_high);
    if (d->clock_base_mhz > 0 && d->clock_base_mhz > d->clock_boost_mhz)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.clock_base_mhz' must not exceed "
                            "compute.clock_boost_mhz (%g), got %g",
                            path, d->clock_boost_mhz, d->clock_base_mhz);
    if ((dev->power_v_floor > 0) != (dev->power_vf_knee_mhz > 0))
        return xs_error_set(err, XS_EFIELD,
                            "%s: fields 'power.v_floor' and 'power.vf_knee_mhz' come together "
                            "(the voltage floor and the clock where it starts), got only '%s'",
                            path, dev->power_v_floor > 0 ? "power.v_floor" : "power.vf_knee_mhz");
    if (dev->power_vf_knee_mhz > 0 && !(dev->power_vf_knee_mhz < top))
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'power.vf_knee_mhz' must be below the top clock "
                            "(compute.clock_boost_mhz / clock_tensor_mhz, %g MHz), got %g",
                            path, top, dev->power_vf_knee_mhz);
    if (dev->power_v_floor >= 1)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'power.v_floor' must be below 1 (a voltage below that "
                            "at the top clock), got %g",
                            path, dev->power_v_floor);
    if (d->stream_latency_ns > 0 && xs_sm_threads(d->sm_version) == 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'memory.stream_latency_ns' needs resident threads per SM, "
                            "unknown for compute.sm_version %lld (known: 70, 72, 75, 80, 86, 87, "
                            "89, 90)",
                            path, (long long)d->sm_version);
    char tail;
    if (sscanf(d->mma_shape, "m%dn%dk%d%c", &d->mma_m, &d->mma_n, &d->mma_k, &tail) != 3 ||
        d->mma_m <= 0 || d->mma_n <= 0 || d->mma_k <= 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'compute.tensor_mma_shape' must look like m16n8k16, "
                            "got \"%s\"",
                            path, d->mma_shape);
    rc = xs_gemm_parse_tiles(d->tensor_tiles_text, d->tensor_tiles.tiles, &d->tensor_tiles.n,
                             path, "gemm.tensor_tiles", err);
    if (!rc)
        rc = xs_gemm_parse_tiles(d->unaligned_tiles_text, d->unaligned_tiles.tiles,
                                 &d->unaligned_tiles.n, path, "gemm.unaligned_tiles", err);
    if (!rc)
        rc = xs_gemm_parse_tiles(d->simt_tiles_text, d->simt_tiles.tiles, &d->simt_tiles.n, path,
                                 "gemm.simt_tiles", err);
    return rc;
}
