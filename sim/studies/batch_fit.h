/* batch_fit.h — "what batch should I use?": the largest micro-batch whose
 * step fits the device's memory, and the micro-batch x grad_accum splits
 * of a global batch, fastest first. Memory grows with the micro-batch
 * (every activation and transient is a multiple of it), so the largest
 * that fits is found by bisection. */
#ifndef XS_BATCH_FIT_H
#define XS_BATCH_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "error.h"
#include "memory.h"
#include "predict.h"
#include "scenario.h"

/* The memory of s on dev with its micro-batch set to batch (s's other
 * keys as they are). */
int xs_fit_memory_at(const xs_device *dev, const xs_scenario *s, int64_t batch, xs_memory *m,
                     xs_error *err);

/* The largest micro-batch of s that fits dev, searched up to the
 * scenario schema's limit on train.batch; 0 when not even 1 fits. *at is
 * the memory at that batch (at 1 when none fits), *next at one more
 * (next->total 0 at the limit). */
int xs_fit_max_batch(const xs_device *dev, const xs_scenario *s, int64_t *batch, xs_memory *at,
                     xs_memory *next, xs_error *err);

/* One way to make a global batch: micro-batch x grad_accum, predicted. */
typedef struct {
    int64_t batch, grad_accum;
    double samples_per_s, step_time_s, run_time_s, run_cost_usd;
    xs_memory mem;
} xs_fit_split;

/* Every split of global (a micro-batch dividing it, train.grad_accum the
 * quotient, both within the scenario schema's limits) whose step fits dev,
 * each predicted, fastest first. The caller frees *out. */
int xs_fit_splits(const xs_device *dev, const xs_scenario *s, int64_t global, xs_fit_split **out,
                  size_t *n, xs_error *err);

#endif
