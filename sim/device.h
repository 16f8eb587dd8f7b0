/* device.h — one accelerator's datasheet facts and model parameters, loaded
 * from devices/<id>.json. Immutable once loaded; every number has a source
 * note in the file. */
#ifndef XS_DEVICE_H
#define XS_DEVICE_H

#include <stdint.h>

#include "cpu_params.h"
#include "dtype.h"
#include "error.h"
#include "schema.h"

typedef enum { XS_CLASS_GPU, XS_CLASS_TPU, XS_CLASS_CPU } xs_dev_class;
#define XS_CLASS_CHOICES "gpu|tpu|cpu"
#define XS_ARCH_CHOICES "volta|turing|ampere|ada|hopper"
typedef enum { XS_ARCH_VOLTA, XS_ARCH_TURING, XS_ARCH_AMPERE, XS_ARCH_ADA, XS_ARCH_HOPPER } xs_arch;

/* A GEMM kernel's threadblock tile: m x n outputs, `stages` K-slices in
 * flight, `cluster` CTAs sharing (multicasting) the n-side operand. */
typedef struct {
    int m, n, stages, cluster;
} xs_tile;
#define XS_MAX_TILES 16

typedef struct {
    char id[64];
    char name[96];
    int cls;  /* xs_dev_class */
    int arch; /* xs_arch */

    int64_t sm_version; /* CUDA compute capability x 10: 70, 75, 80, 86, 89, 90 */
    int64_t sm_count;
    double clock_base_mhz;      /* 0 if the datasheet gives none */
    double clock_boost_mhz;     /* the clock the fp32 vector peak assumes */
    double clock_tensor_mhz;    /* the clock the tensor-core peaks assume */
    double clock_sustained_mhz; /* held under sustained dense load at the power limit */
    double clock_sustained_low_mhz; /* the uncertainty band's slow corner */
    /* Dense peaks in TFLOP/s (TOPS for int8). fp32 is the vector (CUDA core)
     * peak; the others are matrix-engine peaks, 0 where the engine lacks the
     * format (no tf32/bf16 on Volta and Turing). */
    double peak_tflops[XS_DTYPE_COUNT];
    char mma_shape[24];
    int mma_m, mma_n, mma_k;

    char mem_type[24];
    double mem_capacity_gb, mem_bw_gbs, l2_mb, smem_per_sm_kb;
    double l2_bw_gbs;      /* L2 -> SM aggregate bandwidth */
    double mem_latency_ns; /* global-memory load latency */
    /* Round trip of a streaming kernel's loads at full load, block turnover
     * included: a thread that holds few elements in flight waits this long
     * for each batch of them. 0: not modelled (the file gives none). */
    double stream_latency_ns;

    /* GEMM kernels available on the matrix engine (tensor) and the vector
     * units (simt); k_bytes is the K-slice one pipeline stage holds. */
    char tensor_tiles_text[256], unaligned_tiles_text[256], simt_tiles_text[256];
    xs_tile tensor_tiles[XS_MAX_TILES], unaligned_tiles[XS_MAX_TILES], simt_tiles[XS_MAX_TILES];
    int n_tensor_tiles, n_unaligned_tiles, n_simt_tiles;
    int64_t tensor_k_bytes, unaligned_k_bytes, simt_k_bytes, split_k_max;
    /* matrix-engine rate of the kernels for operands whose rows are not
     * 16-byte aligned, as a fraction of the tensor peak */
    double unaligned_rate;

    double nvlink_gbs_bidir; /* 0 if the board has no NVLink */
    double host_gbs_bidir;
    char host_link[48];

    double tdp_w, idle_w;
    double power_memory_frac; /* share of (tdp - idle) drawn at full memory bandwidth */

    double price_usd_per_hour;
    char price_provider[128];
    char price_as_of[16];

    double gemm_efficiency;   /* fraction of peak large well-shaped GEMMs reach */
    double mem_bw_efficiency; /* fraction of DRAM bandwidth streaming kernels reach */
    double gemm_efficiency_low, gemm_efficiency_high; /* the uncertainty band */
    double mem_bw_efficiency_low, mem_bw_efficiency_high;
    double kernel_launch_us;  /* GPU-side cost of one kernel launch */

    /* Refinements of the GEMM model that a CPU device sets (0 on GPUs):
     * mainloop efficiency per engine format (else gemm_efficiency), a fixed
     * cost per tile, at most this many tiles resident per core, and operands
     * packed into aligned panels (so row alignment does not matter). */
    double gemm_eff_dtype[XS_DTYPE_COUNT];
    double tile_overhead_ns[XS_DTYPE_COUNT];
    int64_t max_tiles_per_sm;
    int packs_operands;

    xs_cpu_params cpu; /* class cpu only */
} xs_device;

/* The band's corners: dev with every uncertain parameter at its slow (-1)
 * or fast (+1) end: sustained clock, GEMM and bandwidth efficiencies. */
void xs_dev_corner(const xs_device *dev, int which, xs_device *out);

/* Load and validate path into dev. The file's stem must equal its "id".
 * The "class" field selects the schema: gpu (and tpu) files describe the
 * chip by its datasheet; cpu files hold calibrated host parameters. */
int xs_dev_load(const char *path, xs_device *dev, xs_error *err);

/* The schema tables, for documentation (`xpusim devices --help`). */
const xs_field *xs_dev_fields(size_t *n);
const xs_field *xs_dev_cpu_fields(size_t *n);

/* "ampere", ... for GPUs; the instruction set (amx-bf16, ...) for CPUs. */
const char *xs_dev_arch_name(const xs_device *dev);

/* Fill the GEMM-model fields of a cpu device from dev->cpu (tiles, cores,
 * peaks, per-format efficiency); done by the loader and after edits. */
void xs_dev_cpu_derive(xs_device *dev);

/* Matrix-engine peak in FLOP/s for t at the sustained clock, or 0 if the
 * engine lacks the format; fp32 returns the vector-unit peak. */
double xs_dev_peak_flops(const xs_device *dev, xs_dtype t);

/* Resident threads per SM of a CUDA compute capability x 10 (70, 72, 75,
 * 80, 86, 87, 89, 90), or 0 when the table does not know it. */
int64_t xs_sm_threads(int64_t sm_version);

#endif
