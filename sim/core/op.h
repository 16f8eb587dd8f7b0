/* op.h — the contract between the workload and the device models: one
 * kernel to cost (xs_op) and what a device model says about it
 * (xs_estimate). The workload builds ops; every device class reads them.
 * An op states the work (shape, FLOPs, bytes, launches) in terms no device
 * owns; what only some device models use is grouped in xs_op_hints. */
#ifndef XS_OP_H
#define XS_OP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

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

/* Who issues an op's kernels on the host, which sets what each costs the
 * CPU (host.h): a Python-level torch call that autograd records (the
 * forward); the C++ autograd engine, no Python (backward nodes,
 * AccumulateGrad); one Python call that launches a multi-tensor kernel in
 * chunks from C++ (apex multi_tensor_applier, torch._foreach_*, fused
 * optimizers); a Python op under no_grad (per-tensor optimizer loops,
 * zero_grad, the loss scaler's scalar ops); or a cast autocast inserts
 * inside the dispatcher, no Python but recorded by autograd. */
typedef enum {
    XS_ISSUE_EAGER,
    XS_ISSUE_ENGINE,
    XS_ISSUE_MULTI,
    XS_ISSUE_LOOP,
    XS_ISSUE_AUTOCAST,
    XS_ISSUE_COUNT
} xs_issue;

/* What the workload knows about how the framework runs a kernel, beyond
 * its work. Each device class reads the hints its model has terms for and
 * ignores the rest; a zero (or -1 for fn) means "not known / not special". */
typedef struct {
    int fn;             /* xs_cpu_fn of the kernel when known, else -1 (the CPU
                           model then infers it from kind, phase and name) */
    double group_bytes; /* bytes this call and its neighbours of the same
                           kernel touch (a loop over attention heads); 0:
                           its own. Whether its data are still cached. */
    double bw_scale;    /* share of the device's streaming DRAM efficiency the
                           kernel reaches (1, or 0 when unset: a vectorized
                           contiguous loop) */
    double loop_elems;  /* elements each thread loads before it waits on memory,
                           for the framework's elementwise loops; 0 for kernels
                           that hold rows or tiles in flight (norms, softmax,
                           reductions, GEMMs, multi-tensor optimizers) */
    double strided_elems; /* elements read one per L2 sector (a transposing
                             copy that walks its output's order); 0 for
                             kernels whose warps read contiguous runs */
    double serial_trips; /* memory round trips one thread makes one after
                            another, each waiting on the last (a kernel
                            launched as one small block that walks its
                            input); 0 for kernels that spread their work
                            over the whole device */
    double issue_cycles; /* SM clock cycles the kernel's own instruction
                            chain costs, summed over its elements, where
                            that chain, not memory, paces it (index_select's
                            integer index arithmetic); spread over every SM;
                            0: not so */
    int out_bytes; /* bytes of a GEMM's output element where they are not its
                      inputs' (fp8 GEMMs write bf16, int8 ones int32); 0:
                      the input format's */
} xs_op_hints;

/* What an op holds in device memory, for the memory model (memory.h): the
 * tensors autograd keeps from a forward op for its backward, those that
 * live only while the op and its consumer run, and when the kept ones and
 * the weight gradients come and go in the backward pass. Bytes for one
 * micro-batch, whatever count says. */
typedef struct {
    double saved;  /* forward: new tensors kept for the backward (a tensor that
                      another op keeps already is counted there, once) */
    double temp;   /* the op's output when nobody keeps it: alive until its
                      consumer has run */
    double freed;  /* backward: the saved bytes released once this op has run
                      (the last op of a forward op's backward group) */
    double grads;  /* backward: weight-gradient elements this op creates (the
                      first op of the group that owns the parameters) */
    /* bytes the caching allocator rounds those tensors up by (xs_alloc_slack):
     * of the kept tensors, of the kept tensors released, of the gradients
     * created (in the model weights' format) */
    double slack, freed_slack, grad_slack;
    /* FSDP (wl_fsdp.c), in bytes: the unsharded parameters an all-gather
     * allocates when it is issued, those freed once this op has run (a
     * unit's reshard), and the unsharded gradients a reduce-scatter's
     * issue frees less the shard it keeps (the unit before's: the one in
     * flight until now) */
    double fsdp_gather, fsdp_free, fsdp_grad_free;
} xs_op_mem;

/* Bytes PyTorch's CUDA caching allocator adds to a tensor of `bytes`: a
 * request of 10 MiB or more gets a segment rounded up to 2 MiB and keeps
 * the remainder when it is 1 MiB or less (pytorch/pytorch@001074d:
 * c10/cuda/CUDACachingAllocator.cpp, kRoundLarge, get_allocation_size,
 * should_split); smaller ones are rounded to 512 bytes (kMinBlockSize,
 * round_size) inside shared 2 MiB or 20 MiB segments. */
static inline double xs_alloc_slack(double bytes)
{
    const double mib = 1048576.0;
    if (!(bytes > 0))
        return 0;
    double unit = bytes >= 10 * mib ? 2 * mib : 512;
    /* ceil(bytes / unit) without a division or a libm call: unit is a
     * power of two, so bytes * (1 / unit) is the quotient's very double,
     * and below 2^62 a whole number converts back exactly */
    double q = bytes * (bytes >= 10 * mib ? 0x1p-21 : 0x1p-9);
    double up = q;
    if (q < 0x1p62) {
        up = (double)(int64_t)q;
        up += up < q;
    } else {
        up = ceil(q);
    }
    return up * unit - bytes;
}

/* One kernel (or a short fixed sequence of them) of a training step. */
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
    double elems;     /* elements a non-GEMM op processes per call (parameters
                         for an optimizer) */
    int64_t launches; /* kernel launches per call */
    int sync;         /* the host reads a result of this op back (.item()) and
                         waits for the device before issuing anything else */
    int issue;        /* xs_issue: how the host issues its launches */
    int64_t modules;  /* nn.Module calls whose Python runs with this forward op
                         (host.h): its own module and the containers the
                         workload attributes to it; 0 in other phases */
    xs_op_hints hints;
    xs_op_mem mem;
    int recompute; /* a forward op that activation checkpointing runs again in
                      the backward: its FLOPs are no model FLOPs (MFU) */
    /* data parallel (comm.h): an XS_OP_COMM op's collective (xs_coll) over
     * `bytes`, run on its own stream beside the compute; comm_wait: this op
     * waits for every collective issued before it (DDP's end of backward) */
    int coll;
    int comm_wait;
    /* FSDP's order between the streams (fsdp.h), as 1 + an index into the
     * op list (0: none): the collective this compute op waits for (its
     * unit's all-gather), the compute op this collective starts after (the
     * backward op that made its gradients; the unit whose reshard lets an
     * all-gather be issued) */
    int32_t comm_dep, dep_op;
    /* an op PyTorch's DDP wrapper adds around the gradients' collectives
     * (its bucket copies, the divide by the world size, the copy back):
     * a compiled step that reduces the gradients in place (XLA's
     * cross-replica sum) has none of them */
    int dp_wrapper;
    /* calls per optimizer step; last, so that the estimate memo, whose key
     * is every byte before it (an estimate is one call's), compares one
     * run of bytes */
    int64_t count;
} xs_op;

/* compute: the math units; memory: DRAM or L2 bandwidth; latency: loads in
 * flight too few to cover memory latency; launch: kernel launch cost. */
typedef enum {
    XS_BOUND_COMPUTE,
    XS_BOUND_MEMORY,
    XS_BOUND_LAUNCH,
    XS_BOUND_LATENCY,
    XS_BOUND_COUNT
} xs_bound;

/* What a device model says about one call of an op. */
typedef struct {
    double time_s;      /* one call */
    double compute_s;   /* at the achievable rate of the engine that runs it */
    double memory_s;    /* at the achievable DRAM bandwidth */
    double overhead_s;  /* kernel launches */
    int bound;          /* xs_bound */
    xs_dtype engine;    /* format the engine actually computes in */
    int tensor;         /* 1: matrix engine (tensor cores), 0: vector units */
    double power_w;     /* average board power during the op */
    double energy_j;    /* one call */
} xs_estimate;

/* An op of the given kind, phase and name with every other field zero,
 * one launch and one call, in dtype; hints.fn = -1. */
xs_op xs_op_make(int kind, int phase, xs_dtype dtype, const char *name);
/* The same into *op (the builder's ops: no copy of the struct). */
void xs_op_init(xs_op *op, int kind, int phase, xs_dtype dtype, const char *name);

/* Copy name into an op's name field (dst, sizeof xs_op.name bytes),
 * cut as snprintf would cut it. */
void xs_op_name_copy(char *dst, const char *name);

/* "gemm", "fwd", "compute", ...; "?" out of range. */
const char *xs_op_kind_name(int kind);
const char *xs_phase_name(int phase);
const char *xs_bound_name(int bound);
const char *xs_issue_name(int issue);
/* 1 for kinds that run on the matrix engine (their FLOPs are model FLOPs). */
int xs_op_is_matmul(int kind);

/* The collectives a data-parallel step runs (an XS_OP_COMM op's coll),
 * as NCCL and XLA name them; their algorithms are the device class's
 * (comm.h). */
typedef enum { XS_COLL_ALLREDUCE, XS_COLL_REDUCE_SCATTER, XS_COLL_ALLGATHER, XS_COLL_COUNT } xs_coll;
const char *xs_coll_name(int coll);

/* One optimizer step as the workload built it and every device model
 * reads it: its ops (in order, or as repeated spans) and the run's
 * counts. Built by workload.h's xs_wl_build. */
typedef struct {
    xs_op *ops; /* owned; free with xs_wl_free */
    size_t n, cap;
    /* A compact list (xs_wl_build_compact): ops holds each repeated
     * layer's ops once, and the step runs them as spans (owned):
     * ops[first, first + len) `repeat` times one after another, the
     * layers of those ops counting up from their own (ops[i].layer + r at
     * repetition r) or, for a backward block (down), down to it (+ repeat
     * - 1 - r); norder ops in all. NULL: the step runs ops in order, once
     * each (xs_wl_build). Use xs_wl_steps; xs_wl_expand gives the flat
     * list. */
    struct xs_wl_span {
        uint32_t first, len, repeat;
        int down;
    } *spans;
    size_t nspans, norder;
    double params;        /* the model's parameters, frozen or not */
    double trainable_params; /* those the optimizer updates (all but under LoRA) */
    double params_matmul; /* weights a token is multiplied by (6PT rule) */
    int64_t tensors;      /* trainable parameter tensors */
    double quant_params;  /* frozen base weights stored quantized (train.quant) ... */
    double quant_bytes;   /* ... and the bytes they take, constants included */
    int64_t fp8_linears;  /* train.precision fp8: the te.Linear modules */
    int64_t micro_batches;   /* grad_accum */
    int64_t samples_per_step; /* all devices */
    int64_t tokens_per_step;
    int64_t steps_per_epoch, steps;
    xs_dtype matmul_dtype; /* format the GEMMs are asked to run in */
    /* data parallel (wl_ddp.c): the bytes of gradient buckets the DDP
     * wrapper keeps allocated across the step, and the buckets' sizes in
     * the order the backward fills them (for tests and reports) */
    double ddp_buffer_bytes;
    int64_t buckets;
    double first_bucket_bytes, largest_bucket_bytes;
    /* FSDP (wl_fsdp.c): its units (the layers and the root) and the bytes
     * the largest layer's, and the root's, parameters take gathered */
    int64_t fsdp_units;
    double fsdp_unit_bytes, fsdp_root_bytes;
} xs_workload;

/* Ops a step runs. */
static inline size_t xs_wl_steps(const xs_workload *wl)
{
    return wl->spans ? wl->norder : wl->n;
}

#endif
