/* threads.h — an op's time on a CPU as a function of the threads it runs
 * on, and the best thread count per group of ops (xpusim threads).
 *
 * The pieces, each from the device file (cpu.h, cpu_params.h):
 *   - per-thread compute and bandwidth: the CPU model's per-core rates
 *     (xs_cpu_estimate) on the threads that have work;
 *   - shared memory bandwidth that saturates: the DRAM level is
 *     min(threads x per-core, all-core) (xs_cpu_level_bw);
 *   - parallel work available: an op splits into `par` independent units
 *     (rows, work items of hidden units; a GEMM's 32 x 32 blocks through
 *     the tile/wave model), so threads beyond it only add overhead;
 *   - fork/join and the join barrier: every parallel region costs
 *     region_us + region_us_per_thread x (threads - 1), fitted over the
 *     calibration's thread sweep. The per-call costs the CPU model fitted
 *     at all cores hold `regions` such regions at all cores; here those are
 *     replaced by regions at the op's own count (a per-call cost fitted
 *     below its regions' is all region cost, scaled as a region is), so
 *     at all cores the time is exactly the CPU model's.
 * The model has no term for waking threads that slept between regions
 * (libgomp's spin-then-sleep wait) or for hyper-threads sharing a core. */
#ifndef XS_THREADS_H
#define XS_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "error.h"
#include "op.h"
#include "thr_work.h"

/* Parallel regions of one GEMM call by the kernels of the device's set
 * (kernels/cpu/gemm_f32.c, gemm_bf16.c): pack A, pack B and the blocks on
 * the AVX-512 sets; 2 on avx2, neon and portable, whose threads pack A
 * inside the blocks' region. */
int xs_thr_gemm_regions(const xs_device *dev);

/* 1 when dev is a CPU whose file has the thread model (its 'threads'
 * section); else 0 with err saying what to run. */
int xs_thr_device_ok(const xs_device *dev, xs_error *err);

/* Seconds one parallel region takes on threads threads. */
double xs_thr_region_s(const xs_device *dev, int threads);

/* One call of it on threads threads (1..cores): the time, and in est the
 * compute, memory and overhead parts. */
int xs_thr_item_time(const xs_device *dev, const xs_thr_item *it, int threads, xs_estimate *est,
                     xs_error *err);

#define XS_THR_MAX_COUNTS 64

/* The thread counts a plan evaluates on cores cores, ascending: every
 * count up to 16, then every 4th to 64, every 8th beyond, and cores. */
int xs_thr_counts(int cores, int *out, int max);

/* The predicted times of a run at each count and the three settings:
 * default (every group on all cores, as OpenMP and PyTorch start), the
 * best fixed count, and the dynamic plan (each group its own best). Ties
 * go to fewer threads. Owns time: xs_thr_plan_free. */
typedef struct {
    int ncounts, counts[XS_THR_MAX_COUNTS];
    int ngroups;
    double *time;   /* [group * ncounts + count]: the group's seconds in one run */
    int best[XS_THR_MAX_GROUPS]; /* index into counts */
    double default_s, best_fixed_s, dynamic_s;
    int best_fixed; /* index into counts */
    int default_threads;
} xs_thr_plan;

int xs_thr_plan_make(const xs_device *dev, const xs_thr_work *w, xs_thr_plan *p, xs_error *err);
void xs_thr_plan_free(xs_thr_plan *p);

#endif
