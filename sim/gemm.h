/* gemm.h — the GEMM model shared by every matrix engine (GPU tensor cores
 * and vector units now; the TPU MXU and CPU AMX tiles through the same
 * device parameters later).
 *
 * For C[m x n] = op(A)[m x k] op(B)[k x n] it tries every kernel tile the
 * device lists (and split-K factors), as a heuristic library would, and
 * keeps the fastest. A tile's time comes from: tile quantization (partial
 * edge tiles do full work), wave quantization (tiles run in waves of
 * SMs x CTAs-per-SM, CTAs per SM set by shared memory and registers), the
 * mainloop (each K-slice costs the longest of its MMA time, its L2 -> SM
 * load time, and load latency over the pipeline depth), pipeline fill and
 * drain (which dominate at small K), operand alignment (narrow loads slow the
 * tensor-core mainloop) and DRAM traffic with L2 reuse between concurrent
 * tiles. */
#ifndef XS_GEMM_H
#define XS_GEMM_H

#include <stdint.h>

#include "device.h"
#include "op.h"

typedef struct {
    int64_t m, n, k, batch;
    int ta, tb;      /* A (B) is stored transposed: its leading dimension is m (k) */
    xs_dtype dtype;  /* requested input format */
    int out_bytes;   /* bytes of one C element */
} xs_gemm_shape;

typedef struct {
    double time_s;     /* kernel(s), launches included */
    double compute_s;  /* SM timeline: waves x tile time */
    double memory_s;   /* DRAM traffic at achievable bandwidth */
    double overhead_s; /* launches */
    int bound;         /* compute, memory (L2 or DRAM) or latency */
    xs_dtype engine;
    int tensor;
    int tile_m, tile_n, tile_k, stages, cluster, split_k;
    int ctas_per_sm;
    int64_t tiles, waves;
    double wave_eff;     /* tiles / (waves x SMs x CTAs per SM) */
    double tile_eff;     /* m.n / (padded m . padded n) */
    double mainloop_eff; /* MMA share of the mainloop iteration */
    int align_bytes;     /* load width the operands' leading dimensions allow */
    double dram_bytes;
    double flops;
} xs_gemm_result;

/* The engine that runs a matmul in format want on dev: the tensor cores if
 * they support it, else the fp32 vector units (tf32 and bf16 on Volta and
 * Turing). Sets *engine and *tensor; returns the achievable peak in FLOP/s
 * at the sustained clock times model.gemm_efficiency. */
double xs_gemm_rate(const xs_device *dev, xs_dtype want, xs_dtype *engine, int *tensor);

/* Predict one GEMM call on dev. Returns XS_OK, or XS_ERANGE when no listed
 * tile fits the device (shared memory), with a message in err. */
int xs_gemm_model(const xs_device *dev, const xs_gemm_shape *g, xs_gemm_result *r,
                  xs_error *err);

#endif
