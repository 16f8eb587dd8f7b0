/* advise.h — the shape co-design advisor: nearby model shapes (hidden size,
 * heads, FFN size, vocabulary, micro-batch) that follow the hardware-friendly
 * rules of Anthony et al. (arXiv 2401.14489, training-math.md), each
 * predicted on the device through the full step model and ranked by
 * throughput. */
#ifndef XS_ADVISE_H
#define XS_ADVISE_H

#include <stddef.h>

#include "device.h"
#include "error.h"

typedef struct {
    char change[96];  /* "vocab 50257 -> 50304" */
    char rule[96];    /* "divisible by 64" */
    char sets[2][64]; /* the --set overrides that make the change */
    int nsets;
    double params, params_delta_pct;
    double samples_per_s, speedup; /* against the scenario as given */
} xs_advice;

/* Evaluate candidates for the scenario at scn_path (with the user's sets)
 * on dev; keep those whose parameter count is within tol_pct percent of the
 * original, sorted by predicted speed-up (fastest first). *base receives the
 * original's figures (change "as given"). The caller frees *out. */
int xs_advise(const xs_device *dev, const char *scn_path, const char *const *sets, int nsets,
              double tol_pct, xs_advice *base, xs_advice **out, size_t *n, xs_error *err);

#endif
