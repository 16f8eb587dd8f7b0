/* cpu_params.h — what the CPU cost model knows about one host, all of it
 * measured by `xpusim calibrate --backend cpu` (calibrate/) or read from
 * a device file with class "cpu". Rates are per core; uncertainties (_sd)
 * are one standard deviation from the least-squares fits. */
#ifndef XS_CPU_PARAMS_H
#define XS_CPU_PARAMS_H

#include <stdint.h>

#include "gemm.h"
#include "kernel_fn.h"

typedef struct {
    double ns_per_elem;     /* per element, one core, data not in cache */
    double ns_per_elem_sd;
    double ns_per_elem_hot; /* per element, one core, data in L2 */
    double overhead_us;     /* per call: fork/join and loop set-up */
} xs_cpu_kcost;

/* The thread-count model (threads.h), from the thread sweeps of the
 * calibration: an OpenMP parallel region costs region_us on one thread and
 * region_us_per_thread more for each further thread (fork, join barrier);
 * the LSTM kernel's recurrent step (kernels/cpu/lstm.c) takes lstm_ns_per_mac
 * per multiply-add and lstm_gate_ns per gate element on one core, its
 * weights in L2; its bf16 step lstm_bf16_ns_per_mac and lstm_bf16_gate_ns.
 * All 0 in a file calibrated before the sweeps existed (the bf16 pair: one
 * calibrated before the bf16 kernel). */
typedef struct {
    double region_us, region_us_per_thread;
    double lstm_ns_per_mac, lstm_gate_ns;
    double lstm_bf16_ns_per_mac, lstm_bf16_gate_ns;
} xs_cpu_threads;

typedef struct {
    int64_t cores;
    double clock_mhz;          /* derived: measured FMA peak / (64 FLOP/cycle) */
    char isa[24];              /* amx-bf16 | avx512-bf16 | avx512 | avx2 | neon | portable */
    char cpu_model[96];
    char cpu_signature[80]; /* CPUID vendor, family, model, stepping (or the aarch64
                               MIDR fields); "" in a file written before it was recorded */
    double l2_kb_per_core;     /* private cache whose bandwidth bw_l2 is */
    double llc_mb;             /* effective shared last-level cache (measured) */
    /* STREAM-triad bandwidths, GB/s, per core at each level (DRAM with
     * every core streaming, which saturates below cores x per-core, is the
     * device's mem_bw_gbs; bw_dram_all_sd is its standard deviation) */
    double bw_l2_core, bw_llc_core, bw_dram_core;
    double bw_l2_read_core; /* read-only: what feeds a GEMM's inner loop */
    double bw_l2_core_sd, bw_llc_core_sd, bw_dram_core_sd, bw_dram_all_sd;
    /* GEMM: mainloop efficiency against the in-core peak, fixed cost of a
     * 32 x 32 C block, packing rates (contiguous and transposed rows) */
    double gemm_eff_bf16, gemm_eff_bf16_sd, gemm_eff_fp32, gemm_eff_fp32_sd;
    double block_ns_bf16, block_ns_fp32;
    double gemm_call_us_bf16, gemm_call_us_fp32; /* fixed cost of a GEMM call */
    double pack_gbs_core, pack_transposed_gbs_core;
    /* a GEMM whose data outgrow a quarter of one core's L2 meets them cold:
     * its operands come from beyond L2, its C goes to lines in no cache;
     * those bytes (A + B + C) arrive at this rate per core */
    double cold_gbs_core_bf16, cold_gbs_core_fp32;
    double fork_us; /* one OpenMP parallel region, all cores (reported, not used) */
    /* the GEMM kernels' C block as the file lists it, and the tile sets of
     * the bf16 (AMX) and fp32 kernels: the same blocks, each with the K
     * bytes one mainloop step of that kernel consumes */
    char tiles_text[256];
    xs_tile_set bf16_blocks, fp32_blocks;
    xs_cpu_kcost k[XS_FN_COUNT];
    xs_cpu_threads thr;
} xs_cpu_params;

#endif
