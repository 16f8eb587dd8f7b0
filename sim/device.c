/* device.c — loads devices/<id>.json through the schema table and checks the
 * relations between fields that no single field can (idle < TDP, ...). */
#include "device.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

#define POS(path, req, member, help) \
    {path, XS_F_NUM, req, 0, INFINITY, 1, NULL, offsetof(xs_device, member), 0, help}
#define FRAC(path, member, help) \
    {path, XS_F_NUM, 1, 0, 1, 1, NULL, offsetof(xs_device, member), 0, help}
#define STR(path, req, member, help) \
    {path, XS_F_STR, req, 0, 0, 0, NULL, offsetof(xs_device, member), \
     sizeof(((xs_device *)0)->member), help}
#define NOTE(path, help) {path, XS_F_STR, 1, 0, 0, 0, NULL, XS_NOSTORE, 4096, help}
#define NOTE_OPT(path, help) {path, XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096, help}

static const xs_field DEVICE_FIELDS[] = {
    STR("id", 1, id, "device id, equal to the file name without .json"),
    STR("name", 1, name, "marketing name"),
    {"class", XS_F_ENUM, 1, 0, 0, 0, XS_CLASS_CHOICES, offsetof(xs_device, cls), 0,
     "device class, selects the cost model"},
    {"arch", XS_F_ENUM, 1, 0, 0, 0, XS_ARCH_CHOICES, offsetof(xs_device, arch), 0,
     "micro-architecture"},
    NOTE_OPT("note", "free text"),
    {"compute.sm_version", XS_F_INT, 1, 10, 200, 0, NULL, offsetof(xs_device, sm_version), 0,
     "CUDA compute capability x 10 (sm_86 -> 86)"},
    {"compute.sm_count", XS_F_INT, 1, 1, 100000, 0, NULL, offsetof(xs_device, sm_count), 0,
     "streaming multiprocessors (or cores)"},
    POS("compute.clock_base_mhz", 0, clock_base_mhz, "base clock"),
    POS("compute.clock_boost_mhz", 1, clock_boost_mhz, "boost clock the fp32 peak assumes"),
    POS("compute.clock_tensor_mhz", 1, clock_tensor_mhz, "clock the tensor peaks assume"),
    POS("compute.clock_sustained_mhz", 1, clock_sustained_mhz,
        "clock held under sustained dense load at the power limit"),
    POS("compute.clock_sustained_low_mhz", 1, clock_sustained_low_mhz,
        "slow end of the sustained clock (uncertainty band)"),
    POS("compute.peak_fp32_tflops", 1, peak_tflops[XS_FP32], "dense fp32 vector peak"),
    POS("compute.peak_tf32_tflops", 0, peak_tflops[XS_TF32], "dense tf32 tensor peak"),
    POS("compute.peak_fp16_tflops", 1, peak_tflops[XS_FP16], "dense fp16 tensor peak"),
    POS("compute.peak_bf16_tflops", 0, peak_tflops[XS_BF16], "dense bf16 tensor peak"),
    POS("compute.peak_int8_tops", 0, peak_tflops[XS_INT8], "dense int8 tensor peak"),
    POS("compute.peak_fp8_tflops", 0, peak_tflops[XS_FP8], "dense fp8 tensor peak"),
    STR("compute.tensor_mma_shape", 1, mma_shape, "fp16/bf16 tensor-core MMA instruction shape, e.g. m16n8k16"),
    NOTE("compute.source", "where the compute figures come from"),
    NOTE_OPT("compute.note", "free text"),
    STR("memory.type", 1, mem_type, "HBM2, GDDR6, ..."),
    POS("memory.capacity_gb", 1, mem_capacity_gb, "device memory"),
    POS("memory.bandwidth_gbs", 1, mem_bw_gbs, "peak DRAM bandwidth, 1e9 B/s"),
    POS("memory.l2_mb", 1, l2_mb, "L2 cache"),
    POS("memory.smem_per_sm_kb", 1, smem_per_sm_kb, "max shared memory per SM"),
    POS("memory.l2_bw_gbs", 1, l2_bw_gbs, "L2 to SM aggregate bandwidth"),
    POS("memory.latency_ns", 1, mem_latency_ns, "global-memory load latency"),
    POS("memory.stream_latency_ns", 0, stream_latency_ns,
        "round trip of a streaming kernel's loads at full load (block turnover included); "
        "bounds kernels whose threads hold few elements in flight (absent: not modelled)"),
    NOTE("memory.source", "where the memory figures come from"),
    NOTE_OPT("memory.note", "free text"),
    POS("interconnect.nvlink_gbs_bidir", 0, nvlink_gbs_bidir, "NVLink total bidirectional"),
    STR("interconnect.host_link", 1, host_link, "host link, e.g. PCIe 4.0 x16"),
    POS("interconnect.host_gbs_bidir", 1, host_gbs_bidir, "host link bidirectional"),
    NOTE("interconnect.source", "where the interconnect figures come from"),
    NOTE_OPT("interconnect.note", "free text"),
    POS("power.tdp_w", 1, tdp_w, "board power limit"),
    POS("power.idle_w", 1, idle_w, "idle board power"),
    FRAC("power.memory_frac", power_memory_frac,
         "share of (tdp - idle) drawn by a kernel saturating memory bandwidth"),
    NOTE("power.source", "where the power figures come from"),
    NOTE_OPT("power.note", "free text"),
    POS("price.usd_per_hour", 1, price_usd_per_hour, "on-demand price per device-hour"),
    STR("price.provider", 1, price_provider, "who charges that price"),
    STR("price.as_of", 1, price_as_of, "date of the price, YYYY, YYYY-MM or YYYY-MM-DD"),
    NOTE("price.source", "where the price comes from"),
    NOTE_OPT("price.note", "free text"),
    STR("gemm.tensor_tiles", 1, tensor_tiles_text,
        "matrix-engine GEMM tiles, space-separated MxN/S[cC] (S stages, C cluster)"),
    {"gemm.tensor_k_bytes", XS_F_INT, 1, 1, 4096, 0, NULL, offsetof(xs_device, tensor_k_bytes), 0,
     "bytes of K one pipeline stage holds (matrix engine)"},
    STR("gemm.unaligned_tiles", 1, unaligned_tiles_text,
        "matrix-engine tiles usable when operand rows are not 16-byte aligned"),
    {"gemm.unaligned_k_bytes", XS_F_INT, 1, 1, 4096, 0, NULL,
     offsetof(xs_device, unaligned_k_bytes), 0, "bytes of K one stage holds (unaligned kernels)"},
    FRAC("gemm.unaligned_rate", unaligned_rate,
         "tensor rate of the unaligned kernels as a fraction of the peak"),
    STR("gemm.simt_tiles", 1, simt_tiles_text, "vector-unit GEMM tiles, as tensor_tiles"),
    {"gemm.simt_k_bytes", XS_F_INT, 1, 1, 4096, 0, NULL, offsetof(xs_device, simt_k_bytes), 0,
     "bytes of K one pipeline stage holds (vector units)"},
    {"gemm.split_k_max", XS_F_INT, 1, 1, 256, 0, NULL, offsetof(xs_device, split_k_max), 0,
     "largest split-K factor the library uses (1: none)"},
    NOTE("gemm.source", "where the tile shapes come from"),
    NOTE_OPT("gemm.note", "free text"),
    FRAC("model.gemm_efficiency", gemm_efficiency,
         "fraction of the MMA peak a GEMM mainloop issues when loads and latency do not limit it"),
    FRAC("model.gemm_efficiency_low", gemm_efficiency_low, "slow end of gemm_efficiency"),
    FRAC("model.gemm_efficiency_high", gemm_efficiency_high, "fast end of gemm_efficiency"),
    FRAC("model.mem_bw_efficiency", mem_bw_efficiency,
         "fraction of DRAM bandwidth streaming kernels reach"),
    FRAC("model.mem_bw_efficiency_low", mem_bw_efficiency_low, "slow end of mem_bw_efficiency"),
    FRAC("model.mem_bw_efficiency_high", mem_bw_efficiency_high,
         "fast end of mem_bw_efficiency"),
    POS("model.kernel_launch_us", 1, kernel_launch_us, "GPU-side cost of one kernel launch"),
    NOTE("model.source", "where the model parameters come from"),
    NOTE_OPT("model.note", "free text"),
};

const xs_field *xs_dev_fields(size_t *n)
{
    *n = sizeof DEVICE_FIELDS / sizeof DEVICE_FIELDS[0];
    return DEVICE_FIELDS;
}

static int valid_date(const char *s)
{
    int y, m, d;
    char tail;
    size_t len = strlen(s);
    if (len == 4)
        return sscanf(s, "%4d%c", &y, &tail) == 1 && y >= 2000;
    if (len == 7)
        return sscanf(s, "%4d-%2d%c", &y, &m, &tail) == 2 && y >= 2000 && m >= 1 && m <= 12;
    if (len == 10)
        return sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) == 3 && y >= 2000 && m >= 1 &&
               m <= 12 && d >= 1 && d <= 31;
    return 0;
}

/* Parse "256x128/3 128x128/4c2 ..." into tiles; 0 or a message. */
static int parse_tiles(const char *text, xs_tile *tiles, int *n, const char *path,
                       const char *field, xs_error *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        xs_tile t = {0, 0, 0, 1};
        char tail = 0;
        int got = sscanf(tok, "%dx%d/%dc%d%c", &t.m, &t.n, &t.stages, &t.cluster, &tail);
        int ok = (got == 3 || got == 4) && t.m >= 8 && t.n >= 8 && t.m <= 1024 &&
                 t.n <= 1024 && t.stages >= 1 && t.stages <= 16 && t.cluster >= 1 &&
                 t.cluster <= 16;
        if (!ok || *n == XS_MAX_TILES)
            return xs_error_set(err, XS_EFIELD,
                                "%s: field '%s' must list up to %d tiles like 128x128/4 or "
                                "256x128/4c2, got \"%s\"",
                                path, field, XS_MAX_TILES, tok);
        tiles[(*n)++] = t;
    }
    if (*n == 0)
        return xs_error_set(err, XS_EFIELD, "%s: field '%s' lists no tile", path, field);
    return XS_OK;
}

/* Relations every device file must satisfy: its id names the file, idle
 * power is below the limit, the price has a date. */
static int check_common(const xs_device *d, const char *path, xs_error *err)
{
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strrchr(stem, '.');
    if (dot && strcmp(dot, ".json") == 0)
        *dot = '\0';
    if (strcmp(stem, d->id) != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'id' must equal the file name '%s', got \"%s\"", path,
                            stem, d->id);
    if (d->idle_w >= d->tdp_w)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'power.idle_w' must be below power.tdp_w (%g W), got %g",
                            path, d->tdp_w, d->idle_w);
    if (!valid_date(d->price_as_of))
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'price.as_of' must be a date YYYY, YYYY-MM or "
                            "YYYY-MM-DD, got \"%s\"",
                            path, d->price_as_of);
    return XS_OK;
}

/* Relations between the fields of a GPU file. */
static int check_gpu(xs_device *d, const char *path, xs_error *err)
{
    int rc = check_common(d, path, err);
    if (rc)
        return rc;
    double top = fmax(d->clock_boost_mhz, d->clock_tensor_mhz);
    if (d->clock_sustained_mhz > top)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.clock_sustained_mhz' must not exceed the boost "
                            "or tensor clock (%g MHz), got %g",
                            path, top, d->clock_sustained_mhz);
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
    rc = parse_tiles(d->tensor_tiles_text, d->tensor_tiles, &d->n_tensor_tiles, path,
                     "gemm.tensor_tiles", err);
    if (!rc)
        rc = parse_tiles(d->unaligned_tiles_text, d->unaligned_tiles, &d->n_unaligned_tiles, path,
                         "gemm.unaligned_tiles", err);
    if (!rc)
        rc = parse_tiles(d->simt_tiles_text, d->simt_tiles, &d->n_simt_tiles, path,
                         "gemm.simt_tiles", err);
    return rc;
}

/* Relations between the fields of a CPU file; then the GEMM-model fields. */
static int check_cpu(xs_device *d, const char *path, xs_error *err)
{
    int rc = check_common(d, path, err);
    if (rc)
        return rc;
    if (d->cpu.bw_dram_all > d->cpu.bw_dram_core * (double)d->cpu.cores * 1.5)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'memory.bw_dram_gbs' must not exceed cores x "
                            "memory.bw_dram_gbs_per_core (%g GB/s) by more than half, got %g",
                            path, d->cpu.bw_dram_core * (double)d->cpu.cores,
                            d->cpu.bw_dram_all);
    xs_dev_cpu_derive(d);
    rc = parse_tiles(d->tensor_tiles_text, d->tensor_tiles, &d->n_tensor_tiles, path,
                     "gemm.tiles", err);
    if (rc)
        return rc;
    memcpy(d->unaligned_tiles, d->tensor_tiles, sizeof d->tensor_tiles);
    memcpy(d->simt_tiles, d->tensor_tiles, sizeof d->tensor_tiles);
    d->n_unaligned_tiles = d->n_simt_tiles = d->n_tensor_tiles;
    return XS_OK;
}

int xs_dev_load(const char *path, xs_device *dev, xs_error *err)
{
    cJSON *root = NULL;
    int rc = xs_json_load(path, &root, err);
    if (rc)
        return rc;
    xs_device d;
    memset(&d, 0, sizeof d);
    const cJSON *cls = cJSON_GetObjectItemCaseSensitive(root, "class");
    int cpu = cJSON_IsString(cls) && strcmp(cls->valuestring, "cpu") == 0;
    size_t n;
    const xs_field *fields = cpu ? xs_dev_cpu_fields(&n) : xs_dev_fields(&n);
    rc = xs_schema_apply(fields, n, root, path, &d, err);
    cJSON_Delete(root);
    if (!rc)
        rc = cpu ? check_cpu(&d, path, err) : check_gpu(&d, path, err);
    if (!rc)
        *dev = d;
    return rc;
}

void xs_dev_corner(const xs_device *dev, int which, xs_device *out)
{
    if (dev->cls == XS_CLASS_CPU) {
        xs_cpu_corner(dev, which, out);
        return;
    }
    *out = *dev;
    if (which < 0) {
        out->clock_sustained_mhz = dev->clock_sustained_low_mhz;
        out->gemm_efficiency = dev->gemm_efficiency_low;
        out->mem_bw_efficiency = dev->mem_bw_efficiency_low;
    } else if (which > 0) {
        /* at most the clock the peaks are quoted at */
        out->clock_sustained_mhz = fmax(dev->clock_boost_mhz, dev->clock_tensor_mhz);
        out->gemm_efficiency = dev->gemm_efficiency_high;
        out->mem_bw_efficiency = dev->mem_bw_efficiency_high;
    }
}

const char *xs_dev_arch_name(const xs_device *dev)
{
    static const char *const arches[] = {"volta", "turing", "ampere", "ada", "hopper"};
    if (dev->cls == XS_CLASS_CPU)
        return dev->cpu.isa;
    return dev->arch >= 0 && dev->arch <= XS_ARCH_HOPPER ? arches[dev->arch] : "?";
}

double xs_dev_peak_flops(const xs_device *dev, xs_dtype t)
{
    double tflops = dev->peak_tflops[t];
    if (tflops <= 0)
        return 0;
    /* The vector peak is quoted at the boost clock, tensor peaks at the
     * tensor clock; both scale down to the clock the chip holds under load. */
    double ref = t == XS_FP32 ? dev->clock_boost_mhz : dev->clock_tensor_mhz;
    double ratio = fmin(1.0, dev->clock_sustained_mhz / ref);
    return tflops * 1e12 * ratio;
}

/* CUDA C++ Programming Guide, "Technical Specifications per Compute
 * Capability": maximum number of resident threads per SM. */
int64_t xs_sm_threads(int64_t sm_version)
{
    switch (sm_version) {
    case 70: case 72: case 80: case 90:
        return 2048;
    case 86: case 87: case 89:
        return 1536;
    case 75:
        return 1024;
    default:
        return 0;
    }
}
