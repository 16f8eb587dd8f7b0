/* gemm.h — the GEMM model shared by every matrix engine: GPU tensor cores
 * and vector units, the CPU's AMX and AVX-512 blocks, and a TPU's MXUs
 * through the same description. It knows no device file: each device class
 * describes its engine as an xs_gemm_engine (backend.h), and this model
 * reads only that.
 *
 * For C[m x n] = op(A)[m x k] op(B)[k x n] it tries every kernel tile the
 * engine lists (and split-K factors), as a heuristic library would, and
 * keeps the fastest. A tile's time comes from: tile quantization (partial
 * edge tiles do full work), wave quantization (tiles run in waves of
 * units x CTAs-per-unit, CTAs per unit set by shared memory and registers),
 * the mainloop (each K-slice costs the longest of its MMA time, its L2 ->
 * unit load time, and load latency over the pipeline depth), pipeline fill
 * and drain (which dominate at small K), operand alignment (narrow loads
 * slow the tensor-core mainloop) and DRAM traffic with L2 reuse between
 * concurrent tiles. */
#ifndef XS_GEMM_H
#define XS_GEMM_H

#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "op.h"

/* A GEMM kernel's threadblock tile: m x n outputs, `stages` K-slices in
 * flight, `cluster` CTAs sharing (multicasting) the n-side operand. */
typedef struct {
    int m, n, stages, cluster;
} xs_tile;
#define XS_MAX_TILES 16

/* The kernels of one kind an engine offers, and the bytes of K one
 * pipeline stage (or mainloop step) of them holds. */
typedef struct {
    xs_tile tiles[XS_MAX_TILES];
    int n;
    int64_t k_bytes;
} xs_tile_set;

/* A tile/wave matrix engine as the model sees it: `units` processors (SMs,
 * cores, MXU groups) that each run tiles, fed from a shared L2 and DRAM.
 * Rates are at the clock the engine holds under load. */
typedef struct {
    const char *device_id; /* for messages; not owned */
    int64_t units;
    double clock_mhz;      /* the clock it holds under sustained load */
    /* per format: the quoted (datasheet or measured) dense peak, TFLOP/s,
     * 0 where the engine lacks the format; the peak at clock_mhz, FLOP/s;
     * the share of it a mainloop issues when loads and latency do not
     * limit it; a fixed cost per tile (0: none measured) */
    double peak_tflops[XS_DTYPE_COUNT];
    double peak_flops[XS_DTYPE_COUNT];
    double efficiency[XS_DTYPE_COUNT];
    double tile_overhead_ns[XS_DTYPE_COUNT];
    /* kernels on the matrix engine, those usable when operand rows are not
     * 16-byte aligned, and those on the vector units: views of the device's
     * own lists, as device_id is, valid while the device is */
    const xs_tile_set *matrix, *unaligned, *vector;
    double unaligned_rate;   /* matrix rate of the unaligned kernels, share of peak */
    int packs_operands;      /* operands copied into aligned panels first */
    int64_t max_tiles_per_unit; /* 0: as shared memory and registers allow */
    int64_t split_k_max;     /* 1: no split-K */
    double l2_bw_gbs;        /* L2 -> units aggregate */
    double l2_mb;
    double smem_per_unit_kb;
    double regfile_kb_per_unit; /* registers that hold accumulators; 0: no limit */
    double latency_ns;       /* load latency a pipeline stage must cover */
    double dram_bw_gbs, dram_efficiency; /* peak, and the share streaming reaches */
    double launch_us;        /* per kernel launch */
    /* Not the engine, and last: where the memo keeps this engine's GEMMs,
     * found once for the many GEMMs of a step (xs_gemm_memo_bind), valid
     * for this struct at this address on the binding thread while nothing
     * evicts it (gemm_memo.c checks all three); zero: found each call. An
     * engine changed after binding must be bound again. */
    struct {
        const void *engine, *slot;
        unsigned long gen;
    } memo;
} xs_gemm_engine;

/* Parse "256x128/3 128x128/4c2 ..." (MxN/S[cC]) into tiles; where and
 * field name the file and field in the message of a bad list. */
int xs_gemm_parse_tiles(const char *text, xs_tile *tiles, int *n, const char *where,
                        const char *field, xs_error *err);

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
    double peak_tflops; /* the engine's quoted peak in that format */
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

/* The format a matmul asked in want runs in on e: want where the matrix
 * engine has it, else fp32 on the vector units (tf32 and bf16 on Volta and
 * Turing). Sets *engine and *tensor; returns the achievable rate in FLOP/s
 * (peak at the held clock x mainloop efficiency). */
double xs_gemm_rate(const xs_gemm_engine *e, xs_dtype want, xs_dtype *engine, int *tensor);

/* Predict one GEMM call on e. Returns XS_OK, or XS_ERANGE when no listed
 * tile fits the engine (shared memory), with a message in err. The result
 * is memoized per thread (gemm_memo.c): the same engine and shape give the
 * same bytes without the tile search. */
int xs_gemm_model(const xs_gemm_engine *e, const xs_gemm_shape *g, xs_gemm_result *r,
                  xs_error *err);

/* Find e's place in this thread's memo once, for many xs_gemm_model
 * calls on e (a step's GEMMs): each then skips comparing the engine. */
void xs_gemm_memo_bind(xs_gemm_engine *e);

/* xs_gemm_model without the memo: the tile and split-K search itself. */
int xs_gemm_model_direct(const xs_gemm_engine *e, const xs_gemm_shape *g, xs_gemm_result *r,
                         xs_error *err);

#endif
