/* cpu_device.c — the schema of a calibrated CPU device file, the checks
 * between its fields, and the translation of its parameters into the
 * fields the shared GEMM model reads (cores as SMs, the kernel's 32 x 32 C
 * block of 2 x 2 AMX tiles as the tile, one block per core at a time). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "device.h"

static const char *const FN_NAMES[XS_FN_COUNT] = {
    [XS_FN_ZERO] = "zero",
    [XS_FN_ADD] = "add",
    [XS_FN_BIAS] = "bias",
    [XS_FN_BIAS_GRAD] = "bias_grad",
    [XS_FN_DROPOUT] = "dropout",
    [XS_FN_DROPOUT_BWD] = "dropout_bwd",
    [XS_FN_GELU] = "gelu",
    [XS_FN_GELU_BWD] = "gelu_bwd",
    [XS_FN_LAYERNORM] = "layernorm",
    [XS_FN_LAYERNORM_BWD] = "layernorm_bwd",
    [XS_FN_SOFTMAX] = "softmax",
    [XS_FN_SOFTMAX_BWD] = "softmax_bwd",
    [XS_FN_XENT] = "xent",
    [XS_FN_EMBED] = "embed",
    [XS_FN_EMBED_BWD] = "embed_bwd",
    [XS_FN_CAST] = "cast",
    [XS_FN_COPY] = "copy",
    [XS_FN_ADAN] = "adan",
    [XS_FN_ADAMW] = "adamw",
};

const char *xs_cpu_fn_name(int fn)
{
    return fn >= 0 && fn < XS_FN_COUNT ? FN_NAMES[fn] : NULL;
}

int xs_cpu_fn_index(const char *name)
{
    for (int i = 0; i < XS_FN_COUNT; i++)
        if (strcmp(FN_NAMES[i], name) == 0)
            return i;
    return -1;
}

#define OFF(member) offsetof(xs_device, member)
#define NUM(path, req, lo, open, member, help) \
    {path, XS_F_NUM, req, lo, INFINITY, open, NULL, OFF(member), 0, help}
#define POS(path, member, help) NUM(path, 1, 0, 1, member, help)
#define NONNEG(path, member, help) NUM(path, 1, 0, 0, member, help)
#define FRAC(path, member, help) {path, XS_F_NUM, 1, 0, 1, 1, NULL, OFF(member), 0, help}
#define STR(path, req, member, help) \
    {path, XS_F_STR, req, 0, 0, 0, NULL, OFF(member), sizeof(((xs_device *)0)->member), help}
#define NOTE(path, help) {path, XS_F_STR, 1, 0, 0, 0, NULL, XS_NOSTORE, 4096, help}
#define NOTE_OPT(path, help) {path, XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096, help}
#define KERNEL(fn, name)                                                                      \
    POS("kernels." name ".ns_per_elem", cpu.k[fn].ns_per_elem,                               \
        "time per element on one core, data beyond L2 (fitted)"),                             \
        NONNEG("kernels." name ".ns_per_elem_sd", cpu.k[fn].ns_per_elem_sd,                   \
               "its standard deviation from the fit"),                                        \
        POS("kernels." name ".ns_per_elem_hot", cpu.k[fn].ns_per_elem_hot,                    \
            "time per element on one core, data in L2 (fitted)"),                             \
        NONNEG("kernels." name ".overhead_us", cpu.k[fn].overhead_us,                         \
               "fixed time per call: fork/join and set-up (fitted intercept)")

static const xs_field CPU_FIELDS[] = {
    STR("id", 1, id, "device id, equal to the file name without .json"),
    STR("name", 1, name, "what the host is"),
    {"class", XS_F_ENUM, 1, 0, 0, 0, XS_CLASS_CHOICES, OFF(cls), 0,
     "device class, selects the cost model"},
    NOTE_OPT("note", "free text"),
    {"compute.cores", XS_F_INT, 1, 1, 4096, 0, NULL, OFF(cpu.cores), 0,
     "cores the kernels run on (one thread each)"},
    POS("compute.clock_mhz", cpu.clock_mhz, "core clock under vector load"),
    POS("compute.peak_fp32_tflops", peak_tflops[XS_FP32],
        "in-core FP32 FMA peak of all cores (measured)"),
    NUM("compute.peak_bf16_tflops", 1, 0, 0, peak_tflops[XS_BF16],
        "in-core bf16 matrix-engine peak of all cores (AMX; 0: none)"),
    STR("compute.isa", 1, cpu.isa, "amx-bf16, avx512-bf16, avx512 or portable"),
    STR("compute.cpu_model", 1, cpu.cpu_model, "the processor's model string"),
    NOTE("compute.source", "where the compute figures come from"),
    NOTE_OPT("compute.note", "free text"),
    POS("memory.capacity_gb", mem_capacity_gb, "host memory"),
    POS("memory.l2_kb_per_core", cpu.l2_kb_per_core, "private L2 per core"),
    POS("memory.llc_mb", cpu.llc_mb, "effective shared last-level cache (measured)"),
    POS("memory.bw_l2_gbs_per_core", cpu.bw_l2_core, "triad bandwidth, one core, data in L2"),
    NONNEG("memory.bw_l2_gbs_per_core_sd", cpu.bw_l2_core_sd, "its standard deviation"),
    POS("memory.bw_l2_read_gbs_per_core", cpu.bw_l2_read_core,
        "read-only bandwidth, one core, data in L2 (feeds the GEMM mainloop)"),
    POS("memory.bw_llc_gbs_per_core", cpu.bw_llc_core, "triad bandwidth, one core, data in LLC"),
    NONNEG("memory.bw_llc_gbs_per_core_sd", cpu.bw_llc_core_sd, "its standard deviation"),
    POS("memory.bw_dram_gbs_per_core", cpu.bw_dram_core, "triad bandwidth, one core, DRAM"),
    NONNEG("memory.bw_dram_gbs_per_core_sd", cpu.bw_dram_core_sd, "its standard deviation"),
    POS("memory.bw_dram_gbs", cpu.bw_dram_all, "triad bandwidth, all cores, DRAM"),
    NONNEG("memory.bw_dram_gbs_sd", cpu.bw_dram_all_sd, "its standard deviation"),
    NOTE("memory.source", "where the memory figures come from"),
    NOTE_OPT("memory.note", "free text"),
    POS("power.tdp_w", tdp_w, "power limit of the cores used"),
    POS("power.idle_w", idle_w, "idle power of the cores used"),
    FRAC("power.memory_frac", power_memory_frac,
         "share of (tdp - idle) drawn by a kernel saturating memory bandwidth"),
    NOTE("power.source", "where the power figures come from"),
    NOTE_OPT("power.note", "free text"),
    POS("price.usd_per_hour", price_usd_per_hour, "on-demand price per host-hour"),
    STR("price.provider", 1, price_provider, "who charges that price"),
    STR("price.as_of", 1, price_as_of, "date of the price, YYYY, YYYY-MM or YYYY-MM-DD"),
    NOTE("price.source", "where the price comes from"),
    NOTE_OPT("price.note", "free text"),
    STR("gemm.tiles", 1, tensor_tiles_text,
        "C block of the GEMM kernels, MxN/S (S, pipeline stages, is not used on CPUs: load latency is in the fitted per-block cost)"),
    {"gemm.k_bytes_bf16", XS_F_INT, 1, 1, 4096, 0, NULL, OFF(tensor_k_bytes), 0,
     "bytes of K one mainloop step of the bf16 kernel consumes"},
    {"gemm.k_bytes_fp32", XS_F_INT, 1, 1, 4096, 0, NULL, OFF(simt_k_bytes), 0,
     "bytes of K one mainloop step of the fp32 kernel consumes"},
    NOTE("gemm.source", "where the blocking comes from"),
    NOTE_OPT("gemm.note", "free text"),
    FRAC("model.gemm_efficiency_bf16", cpu.gemm_eff_bf16,
         "bf16 mainloop rate as a fraction of the bf16 peak (fitted)"),
    NONNEG("model.gemm_efficiency_bf16_sd", cpu.gemm_eff_bf16_sd, "its standard deviation"),
    FRAC("model.gemm_efficiency_fp32", cpu.gemm_eff_fp32,
         "fp32 mainloop rate as a fraction of the fp32 peak (fitted)"),
    NONNEG("model.gemm_efficiency_fp32_sd", cpu.gemm_eff_fp32_sd, "its standard deviation"),
    NONNEG("model.block_ns_bf16", cpu.block_ns_bf16, "fixed cost of one bf16 C block (fitted)"),
    NONNEG("model.block_ns_fp32", cpu.block_ns_fp32, "fixed cost of one fp32 C block (fitted)"),
    NONNEG("model.gemm_call_us_bf16", cpu.gemm_call_us_bf16,
           "fixed cost of one bf16 GEMM call: parallel regions, set-up (fitted)"),
    NONNEG("model.gemm_call_us_fp32", cpu.gemm_call_us_fp32,
           "fixed cost of one fp32 GEMM call (fitted)"),
    POS("model.pack_gbs_per_core", cpu.pack_gbs_core,
        "operand packing, contiguous rows, bytes read + written per second per core (fitted)"),
    POS("model.pack_transposed_gbs_per_core", cpu.pack_transposed_gbs_core,
        "operand packing that transposes (32 x 32 squares), per core (fitted)"),
    POS("model.cold_gbs_per_core_bf16", cpu.cold_gbs_core_bf16,
        "a bf16 GEMM's A, B and C bytes when they are not in cache, per core (fitted)"),
    POS("model.cold_gbs_per_core_fp32", cpu.cold_gbs_core_fp32,
        "an fp32 GEMM's A, B and C bytes when they are not in cache, per core (fitted)"),
    NONNEG("model.fork_us", cpu.fork_us, "one OpenMP parallel region on all cores (measured)"),
    NOTE("model.source", "where the model parameters come from"),
    NOTE_OPT("model.note", "free text"),
    KERNEL(XS_FN_ZERO, "zero"),
    KERNEL(XS_FN_ADD, "add"),
    KERNEL(XS_FN_BIAS, "bias"),
    KERNEL(XS_FN_BIAS_GRAD, "bias_grad"),
    KERNEL(XS_FN_DROPOUT, "dropout"),
    KERNEL(XS_FN_DROPOUT_BWD, "dropout_bwd"),
    KERNEL(XS_FN_GELU, "gelu"),
    KERNEL(XS_FN_GELU_BWD, "gelu_bwd"),
    KERNEL(XS_FN_LAYERNORM, "layernorm"),
    KERNEL(XS_FN_LAYERNORM_BWD, "layernorm_bwd"),
    KERNEL(XS_FN_SOFTMAX, "softmax"),
    KERNEL(XS_FN_SOFTMAX_BWD, "softmax_bwd"),
    KERNEL(XS_FN_XENT, "xent"),
    KERNEL(XS_FN_EMBED, "embed"),
    KERNEL(XS_FN_EMBED_BWD, "embed_bwd"),
    KERNEL(XS_FN_CAST, "cast"),
    KERNEL(XS_FN_COPY, "copy"),
    KERNEL(XS_FN_ADAN, "adan"),
    KERNEL(XS_FN_ADAMW, "adamw"),
    NOTE("kernels.source", "where the kernel costs come from"),
    {"calibration", XS_F_OBJ, 0, 0, 0, 0, NULL, XS_NOSTORE, 0,
     "provenance of a calibrated file: host, date, command, kernel versions, fit residuals"},
};

const xs_field *xs_dev_cpu_fields(size_t *n)
{
    *n = sizeof CPU_FIELDS / sizeof CPU_FIELDS[0];
    return CPU_FIELDS;
}

void xs_dev_cpu_derive(xs_device *d)
{
    const xs_cpu_params *c = &d->cpu;
    d->arch = -1;
    d->sm_count = c->cores;
    /* the peaks were measured at the clock the cores hold: no scaling */
    d->clock_boost_mhz = d->clock_tensor_mhz = c->clock_mhz;
    d->clock_sustained_mhz = d->clock_sustained_low_mhz = c->clock_mhz;
    /* no tensor-core-only formats: fp16 and tf32 matmuls run in fp32 */
    snprintf(d->mma_shape, sizeof d->mma_shape, "m16n16k32");
    d->mma_m = d->mma_n = 16;
    d->mma_k = 32;
    snprintf(d->mem_type, sizeof d->mem_type, "host");
    d->mem_bw_gbs = c->bw_dram_all;
    d->mem_bw_efficiency = d->mem_bw_efficiency_low = d->mem_bw_efficiency_high = 1;
    d->l2_mb = c->llc_mb;
    d->l2_bw_gbs = c->bw_l2_read_core * (double)c->cores;
    d->mem_latency_ns = 0; /* folded into the fitted per-block cost */
    d->smem_per_sm_kb = 1e6;
    /* the same kernels whatever the alignment: operands are packed */
    snprintf(d->unaligned_tiles_text, sizeof d->unaligned_tiles_text, "%s", d->tensor_tiles_text);
    snprintf(d->simt_tiles_text, sizeof d->simt_tiles_text, "%s", d->tensor_tiles_text);
    d->unaligned_k_bytes = d->tensor_k_bytes;
    d->unaligned_rate = 1;
    d->split_k_max = 1;
    d->kernel_launch_us = 0; /* parallel regions are costed by the CPU model */
    d->gemm_efficiency = c->gemm_eff_fp32;
    d->gemm_efficiency_low = d->gemm_efficiency_high = c->gemm_eff_fp32;
    for (int t = 0; t < XS_DTYPE_COUNT; t++) {
        d->gemm_eff_dtype[t] = 0;
        d->tile_overhead_ns[t] = 0;
    }
    d->gemm_eff_dtype[XS_FP32] = c->gemm_eff_fp32;
    d->gemm_eff_dtype[XS_BF16] = c->gemm_eff_bf16;
    d->tile_overhead_ns[XS_FP32] = c->block_ns_fp32;
    d->tile_overhead_ns[XS_BF16] = c->block_ns_bf16;
    d->max_tiles_per_sm = 1;
    d->packs_operands = 1;
    d->nvlink_gbs_bidir = 0;
    d->host_gbs_bidir = 0;
    snprintf(d->host_link, sizeof d->host_link, "none");
}
