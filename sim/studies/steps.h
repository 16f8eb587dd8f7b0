/* steps.h — the optimisation waterfall (`xpusim steps`): a scenario with
 * every optimisation off, then AMP, the fused optimizer, fused kernels,
 * flash attention and a larger batch switched on one after another, each
 * step predicted. No physics of its own: every step is a plain prediction
 * of the scenario with the cumulative --set overrides the step lists, so
 * `xpusim predict` with those overrides gives the same numbers. */
#ifndef XS_STEPS_H
#define XS_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "dtype.h"
#include "error.h"

typedef enum {
    XS_STEP_AMP,
    XS_STEP_FUSED_OPTIMIZER,
    XS_STEP_FUSED_KERNELS,
    XS_STEP_FLASH,
    XS_STEP_BATCH,
    XS_STEP_COUNT
} xs_step_kind;
#define XS_STEP_CHOICES "amp|fused_optimizer|fused_kernels|flash|batch"
#define XS_STEP_ORDER_DEFAULT "amp,fused_optimizer,fused_kernels,flash,batch"

/* "amp", ...; "start" for -1. */
const char *xs_step_name(int kind);

/* Parse --order: step names separated by commas, each at most once, at
 * least one; the steps not named stay off. order holds XS_STEP_COUNT. */
int xs_steps_parse_order(const char *text, int *order, int *n, xs_error *err);

/* The overrides a waterfall owns: a --set of one of these is refused (the
 * start turns them off; drop a step from --order to keep it off). */
int xs_steps_owns_key(const char *kv);

#define XS_STEPS_SET_MAX 160   /* bytes of one override, NUL included */
#define XS_STEPS_MAX_SETS 80   /* the user's 64 + the start's + the steps' */

typedef struct {
    int kind;    /* xs_step_kind; -1 for the start */
    int applied; /* 1: switched on (the start: predicted); 0: skipped */
    char setting[XS_STEPS_SET_MAX]; /* what it adds, "train.precision=amp_bf16"; "" if skipped */
    char why[1024]; /* applied: why this choice (may be ""); skipped: why not */
    int nsets; /* the first nsets overrides of xs_steps.sets predict this
                  step (a skipped step: those of the last applied one) */
    /* the prediction: a skipped step's are the last applied step's */
    int64_t batch;
    double step_time_s, samples_per_s, tokens_per_s, run_time_s, energy_kwh, cost_usd, mfu;
    double memory_gb, capacity_gb; /* GB of 2^30 bytes */
    int fits;
    xs_dtype matmul_engine;
} xs_step;

typedef struct {
    char device[64], scenario[64];
    xs_step step[XS_STEP_COUNT + 1]; /* the start, then one per step of the order */
    size_t n;
    char sets[XS_STEPS_MAX_SETS][XS_STEPS_SET_MAX];
    int nsets;
} xs_steps;

typedef struct {
    const xs_device *dev;
    const char *scenario; /* id or path */
    const char *const *sets; /* the user's --set overrides, applied first */
    int nsets;
    const int *order; /* xs_step_kind values, norder of them */
    int norder;
    int64_t batch; /* the batch step's micro-batch; 0: the largest that fits */
} xs_steps_spec;

/* Predict the start and every step of sp's order into *out. A step that
 * cannot apply (no fp16/bf16 matrix engine, a family without fused
 * kernels, a batch that does not fit, an override the scenario refuses) is
 * kept with applied 0 and its reason. Errors: the scenario or the start
 * cannot be loaded or predicted, a --set of a key the waterfall owns, an
 * override longer than XS_STEPS_SET_MAX. */
int xs_steps_run(const xs_steps_spec *sp, xs_steps *out, xs_error *err);

#endif
