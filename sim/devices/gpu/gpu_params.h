/* gpu_params.h — what the GPU cost model knows about one NVIDIA board,
 * read from a device file of class "gpu" (its schema: gpu_device.c). The
 * board's common facts (memory size and bandwidth, peaks, power, price,
 * links) live in xs_device; these are the rest. */
#ifndef XS_GPU_PARAMS_H
#define XS_GPU_PARAMS_H

#include <stdint.h>

#include "gemm.h"
#include "kernel_class.h"

#define XS_ARCH_CHOICES "volta|turing|ampere|ada|hopper"
typedef enum { XS_ARCH_VOLTA, XS_ARCH_TURING, XS_ARCH_AMPERE, XS_ARCH_ADA, XS_ARCH_HOPPER } xs_arch;

/* How a board's NVLink joins the GPUs of a node: none; a bridge between
 * PCIe cards (interconnect.nvlink_gpus of them); the V100 SXM2 baseboard's
 * hybrid cube-mesh, over which NCCL builds its rings; NVSwitch, every GPU
 * of the baseboard at its full NVLink bandwidth. */
#define XS_NVLINK_CHOICES "none|bridge|mesh|switch"
typedef enum { XS_NVLINK_NONE, XS_NVLINK_BRIDGE, XS_NVLINK_MESH, XS_NVLINK_SWITCH } xs_nvlink;

typedef struct {
    int arch;           /* xs_arch */
    int64_t sm_version; /* CUDA compute capability x 10: 70, 75, 80, 86, 89, 90 */
    int64_t sm_count;
    double clock_base_mhz;      /* 0 if the datasheet gives none */
    double clock_boost_mhz;     /* the clock the fp32 vector peak assumes */
    double clock_tensor_mhz;    /* the clock the tensor-core peaks assume */
    double clock_sustained_mhz; /* held under sustained dense load at the power limit */
    double clock_sustained_low_mhz; /* the uncertainty band's slow corner */
    /* The clock FP32-unit (SIMT) work holds at the default limit. Not the
     * sustained clock: that is what dense tensor-core work leaves under the
     * power limit, and the FP32 units draw far less at the same clock. The
     * A100 PCIe's SGEMMs reach 18.1 TFLOP/s (NeuSight's dev rows), which
     * needs at least 18.1 / 19.5 x 1410 = 1309 MHz, above its 1115 MHz
     * tensor-load clock. 0 (absent from a file): the sustained clock (no
     * evidence that the board holds more: the 70-72 W T4 and L4 do not). */
    double clock_fp32_mhz;
    /* Share of the dense tensor peak that Ampere-style warp-level mma.sync
     * reaches: Hopper's full rate needs the asynchronous warpgroup wgmma,
     * which kernels written for Ampere (FlashAttention-2) do not issue.
     * 0 (absent): 1. */
    double mma_sync_share;
    char mma_shape[24];
    int mma_m, mma_n, mma_k;

    char mem_type[24];
    double l2_mb, smem_per_sm_kb;
    double l2_bw_gbs;      /* L2 -> SM aggregate bandwidth */
    double mem_latency_ns; /* global-memory load latency */
    /* Round trip of a streaming kernel's loads at full load, block turnover
     * included: a thread that holds few elements in flight waits this long
     * for each batch of them. 0: not modelled (the file gives none). */
    double stream_latency_ns;

    /* GEMM kernels available on the matrix engine (tensor) and the vector
     * units (simt), each with the K bytes one pipeline stage holds */
    char tensor_tiles_text[256], unaligned_tiles_text[256], simt_tiles_text[256];
    xs_tile_set tensor_tiles, unaligned_tiles, simt_tiles;
    int64_t split_k_max;
    /* matrix-engine rate of the kernels for operands whose rows are not
     * 16-byte aligned, as a fraction of the tensor peak */
    double unaligned_rate;

    double gemm_efficiency;   /* fraction of peak large well-shaped GEMMs reach */
    double mem_bw_efficiency; /* fraction of DRAM bandwidth streaming kernels reach */
    double gemm_efficiency_low, gemm_efficiency_high; /* the uncertainty band */
    double mem_bw_efficiency_low, mem_bw_efficiency_high;
    double kernel_launch_us;  /* GPU-side cost of one kernel launch */
    /* Per kernel class (xs_kclass), what a profiler trace of this board
     * measured over what the model predicted for the kernels' bodies
     * (`xpusim calibrate --backend trace`); 0: absent, which is 1. */
    double class_time_factor[XS_KC_COUNT];

    /* The node the board sits in (comm.h): its NVLink (xs_nvlink), that
     * link's generation and the GPUs one NVLink fabric joins (0 without
     * NVLink); the host link's PCIe generation and lanes; the GPUs in one
     * node of the usual server or instance for this board, the default
     * cluster.per_node. */
    int nvlink;
    int64_t nvlink_generation, nvlink_gpus;
    int64_t pcie_generation, pcie_lanes;
    int64_t gpus_per_node;
} xs_gpu_params;

#endif
