/* advise.h — the advisor: changes that make one training step faster on a
 * device, each predicted through the full step model and ranked by
 * throughput (samples/s). A fine-tune of a pretrained checkpoint (the
 * scenario's model comes from model.hf_config) can change only how it
 * trains — micro-batch and accumulation, precision, attention kernel, fused
 * layer kernels, fused optimizer, vocabulary padding — so only those are
 * proposed unless architecture changes are asked for; for an inline model
 * (a from-scratch architecture) the nearby shapes that follow the
 * hardware-friendly rules of Anthony et al. (arXiv 2401.14489,
 * training-math.md) come too. */
#ifndef XS_ADVISE_H
#define XS_ADVISE_H

#include <stddef.h>

#include "device.h"
#include "error.h"

/* A suggestion must beat the scenario as given by this much to be called
 * one (and to join the combined row); smaller differences are within the
 * model's resolution. */
#define XS_ADVICE_MIN_SPEEDUP 1.01
/* --set overrides one suggestion may carry (the combined row: one or two
 * a change, for every kind of change) */
#define XS_ADVICE_MAX_SETS 12

/* fine-tune: a change a fine-tune of the pretrained checkpoint can apply;
 * architecture: a different model shape (hidden, heads, FFN), which needs
 * training from scratch */
#define XS_ADVICE_KIND_CHOICES "fine-tune|architecture"
typedef enum { XS_ADVICE_FINETUNE, XS_ADVICE_ARCHITECTURE } xs_advice_kind;

typedef struct {
    char change[192]; /* "vocab 50257 -> 50304" */
    char rule[192];   /* why it helps and how to apply it */
    char sets[XS_ADVICE_MAX_SETS][64]; /* the --set overrides that make the change */
    int nsets;
    int kind;                /* xs_advice_kind */
    int changes_global_batch; /* the optimisation's hyper-parameters (learning
                                 rate, warm-up) were tuned for the old one */
    double params, params_delta_pct;
    double samples_per_s, speedup; /* against the scenario as given */
    int fits; /* the step fits the device's memory (a proposal always does) */
} xs_advice;

typedef struct {
    double tol_pct;   /* keep candidates within this percent of the parameter count */
    int architecture; /* propose model shapes for a pretrained checkpoint too */
} xs_advise_opts;

/* "fine-tune" or "architecture". */
const char *xs_advice_kind_name(int kind);

/* Evaluate candidates for the scenario at scn_path (with the user's sets)
 * on dev: the changes a fine-tune can apply, model shapes too where the
 * model is inline or opt->architecture asks, and one row that combines the
 * fine-tune changes that add up. Keeps those whose parameter count is
 * within opt->tol_pct percent of the original, sorted by predicted
 * samples/s (fastest first). *base receives the original's figures
 * (change "as given"). The caller frees *out. */
int xs_advise(const xs_device *dev, const char *scn_path, const char *const *sets, int nsets,
              const xs_advise_opts *opt, xs_advice *base, xs_advice **out, size_t *n,
              xs_error *err);

#endif
