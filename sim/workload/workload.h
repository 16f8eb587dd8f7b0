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


/* The optimizer kernel(s) alone: params parameters in `tensors` tensors,
 * state elements of state_bytes. XS_ERANGE on a bad argument. */
int xs_wl_optimizer_op(int optimizer, int fused, double params, int64_t tensors,
                       int state_bytes, xs_op *op);

/* Kernel launches of one multi_tensor_apply over tensors of these element
 * counts with `depth` tensor lists (apex and PyTorch: 65536-element
 * chunks, 320 blocks and 110/64/48/36/30/26/22/20 tensors a launch). */
int64_t xs_wl_mta_launches(const double *sizes, size_t n, int depth);


#endif
