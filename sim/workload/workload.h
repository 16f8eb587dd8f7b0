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
#include "op.h"
#include "scenario.h"


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

/* The builder's working arrays (the backward tape, its groups, the
 * parameter list), kept between the builds of a caller that builds many
 * (a sweep's thread): they stop being allocated once grown. NULL where a
 * build takes one: it allocates its own. One per thread. */
typedef struct xs_wl_scratch xs_wl_scratch;
xs_wl_scratch *xs_wl_scratch_new(void);
void xs_wl_scratch_free(xs_wl_scratch *scratch);

/* Build the op list for one optimizer step of s, every op in order. */
int xs_wl_build(const xs_scenario *s, xs_workload *wl, xs_error *err);
/* The same step, each run of identical layers built and kept once (a
 * layer whose ops, and the builder's state it starts from, equal the
 * layer before's); what a step predicts from it is the same, bit for bit,
 * as from xs_wl_build's list. Where no run can be proven identical (a
 * LoRA target that names a layer, data parallel's buckets that cut across
 * layers) the list is xs_wl_build's. */
int xs_wl_build_compact(const xs_scenario *s, xs_workload *wl, xs_wl_scratch *scratch,
                        xs_error *err);
/* The list xs_wl_build would have built, from a compact one (a flat one is
 * copied). */
int xs_wl_expand(const xs_workload *in, xs_workload *out, xs_error *err);
void xs_wl_free(xs_workload *wl);

/* The steps of an epoch and of the run of s, samples_per_step a step
 * (its data.samples and data.epochs); -1 where they overflow. */
int xs_wl_run_steps(const xs_scenario *s, int64_t samples_per_step, int64_t *per_epoch,
                    int64_t *steps);

/* Ops a step runs. */
static inline size_t xs_wl_steps(const xs_workload *wl)
{
    return wl->spans ? wl->norder : wl->n;
}

/* The optimizer kernel(s) alone: params parameters in `tensors` tensors,
 * state elements of state_bytes. XS_ERANGE on a bad argument. */
int xs_wl_optimizer_op(int optimizer, int fused, double params, int64_t tensors,
                       int state_bytes, xs_op *op);

/* Kernel launches of one multi_tensor_apply over tensors of these element
 * counts with `depth` tensor lists (apex and PyTorch: 65536-element
 * chunks, 320 blocks and 110/64/48/36/30/26/22/20 tensors a launch). */
int64_t xs_wl_mta_launches(const double *sizes, size_t n, int depth);


#endif
