/* workload.h — one optimizer step of a Transformer fine-tune as a list of
 * kernels (ops): forward op by op, backward derived from each forward op in
 * reverse, the optimizer, AMP casts and the loss-scale check. Knows nothing
 * of devices: an op carries shapes, FLOPs and DRAM bytes, not times. */
#ifndef XS_WORKLOAD_H
#define XS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "scenario.h"

typedef enum {
    XS_OP_GEMM,      /* C = op(A) op(B) on the matrix engine */
    XS_OP_BGEMM,     /* batched GEMM (attention scores, context) */
    XS_OP_ATTENTION, /* fused flash-style attention */
    XS_OP_ELTWISE,   /* pointwise: add, scale, dropout, activation */
    XS_OP_NORM,      /* LayerNorm */
    XS_OP_SOFTMAX,
    XS_OP_REDUCE,    /* bias gradients, gradient accumulation */
    XS_OP_EMBED,     /* gather / scatter-add of embedding rows */
    XS_OP_CAST,      /* dtype conversion (AMP) */
    XS_OP_COPY,      /* layout change (head split / merge) */
    XS_OP_LOSS,
    XS_OP_OPTIMIZER,
    XS_OP_COMM,
    XS_OP_KIND_COUNT
} xs_op_kind;

typedef enum { XS_PH_FWD, XS_PH_BWD, XS_PH_OPT, XS_PH_COMM, XS_PHASE_COUNT } xs_phase;

typedef struct {
    char name[48];
    int layer;      /* Transformer layer index, -1 outside the layers */
    int phase;      /* xs_phase */
    int kind;       /* xs_op_kind */
    xs_dtype dtype; /* format the op computes in (GEMM: input format) */
    /* GEMM shape: C[m x n] = op(A)[m x k] . op(B)[k x n], batch times; ta/tb
     * say A or B is read transposed. Zero for other kinds. */
    int64_t m, n, k, batch;
    int ta, tb;
    double flops;     /* per call */
    double bytes;     /* DRAM bytes read + written per call */
    int64_t launches; /* kernel launches per call */
    int64_t count;    /* calls per optimizer step */
    double elems;     /* elements a non-GEMM op processes per call (parameters
                         for an optimizer) */
    int fn;           /* xs_cpu_fn of the kernel when known, else -1 (the CPU
                         model then infers it from kind, phase and name) */
    double group_bytes; /* bytes this call and its neighbours of the same
                           kernel touch (a loop over attention heads); 0:
                           its own. Whether its data are still cached. */
    int sync;         /* the host reads a result of this op back (.item()) and
                         waits for the device before issuing anything else */
    double bw_scale;  /* share of the device's streaming DRAM efficiency the
                         kernel reaches (1, or 0 when unset: a vectorized
                         contiguous loop) */
    double loop_elems; /* elements each thread loads before it waits on memory,
                          for the framework's elementwise loops; 0 for kernels
                          that hold rows or tiles in flight (norms, softmax,
                          reductions, GEMMs, multi-tensor optimizers) */
    double strided_elems; /* elements read one per L2 sector (a transposing
                             copy that walks its output's order); 0 for
                             kernels whose warps read contiguous runs */
} xs_op;

typedef struct {
    xs_op *ops; /* owned; free with xs_wl_free */
    size_t n, cap;
    double params;        /* trainable parameters */
    double params_matmul; /* weights a token is multiplied by (6PT rule) */
    int64_t tensors;      /* parameter tensors */
    int64_t micro_batches;   /* grad_accum */
    int64_t samples_per_step; /* all devices */
    int64_t tokens_per_step;
    int64_t steps_per_epoch, steps;
    xs_dtype matmul_dtype; /* format the GEMMs are asked to run in */
} xs_workload;

/* Build the op list for one optimizer step of s. */
int xs_wl_build(const xs_scenario *s, xs_workload *wl, xs_error *err);
void xs_wl_free(xs_workload *wl);

/* The optimizer kernel(s) alone: params parameters in `tensors` tensors,
 * state elements of state_bytes. XS_ERANGE on a bad argument. */
int xs_wl_optimizer_op(int optimizer, int fused, double params, int64_t tensors,
                       int state_bytes, xs_op *op);

const char *xs_op_kind_name(int kind);
const char *xs_phase_name(int phase);
/* 1 for kinds that run on the matrix engine (their FLOPs are model FLOPs). */
int xs_op_is_matmul(int kind);

#endif
