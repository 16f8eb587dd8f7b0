/* batch_fit.c — see batch_fit.h. */
#include "batch_fit.h"

#include <stdlib.h>

#include "workload.h"

/* train.batch's and train.grad_accum's upper limits in the scenario
 * schema (scenario.c) */
#define BATCH_LIMIT 1048576
#define ACCUM_LIMIT 65536

int xs_fit_memory_at(const xs_device *dev, const xs_scenario *s, int64_t batch, xs_memory *m,
                     xs_error *err)
{
    xs_scenario t = *s;
    t.train.batch = batch;
    xs_workload wl;
    int rc = xs_wl_build_compact(&t, &wl, NULL, err);
    if (rc)
        return rc;
    rc = xs_memory_predict(dev, &t, &wl, m, err);
    xs_wl_free(&wl);
    return rc;
}

/* Whether batch fits; a batch whose shapes the scenario limits refuse
 * (bounds.h: products past what a double holds exactly) does not. */
static int fits_at(const xs_device *dev, const xs_scenario *s, int64_t batch, xs_memory *m,
                   int *fits, xs_error *err)
{
    xs_error e;
    int rc = xs_fit_memory_at(dev, s, batch, m, &e);
    if (rc == XS_ERANGE) {
        *fits = 0;
        m->total = 0;
        return XS_OK;
    }
    if (rc) {
        if (err)
            *err = e;
        return rc;
    }
    *fits = m->fits;
    return XS_OK;
}

int xs_fit_max_batch(const xs_device *dev, const xs_scenario *s, int64_t *batch, xs_memory *at,
                     xs_memory *next, xs_error *err)
{
    int fits, rc;
    *batch = 0;
    next->total = 0;
    if ((rc = fits_at(dev, s, 1, at, &fits, err)))
        return rc;
    if (!fits) {
        *next = *at;
        return XS_OK;
    }
    /* double until it does not fit, then bisect: lo fits, hi does not */
    int64_t lo = 1, hi = 2;
    xs_memory m;
    for (;;) {
        if (hi > BATCH_LIMIT) {
            hi = BATCH_LIMIT + 1;
            break;
        }
        if ((rc = fits_at(dev, s, hi, &m, &fits, err)))
            return rc;
        if (!fits)
            break;
        lo = hi;
        *at = m;
        hi *= 2;
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((rc = fits_at(dev, s, mid, &m, &fits, err)))
            return rc;
        if (fits) {
            lo = mid;
            *at = m;
        } else {
            hi = mid;
        }
    }
    *batch = lo;
    if (hi <= BATCH_LIMIT && (rc = fits_at(dev, s, hi, next, &fits, err)))
        return rc;
    return XS_OK;
}

static int by_speed(const void *a, const void *b)
{
    const xs_fit_split *x = a, *y = b;
    if (x->samples_per_s != y->samples_per_s)
        return x->samples_per_s < y->samples_per_s ? 1 : -1;
    return (x->batch < y->batch) - (x->batch > y->batch); /* ties: the larger micro-batch */
}

int xs_fit_splits(const xs_device *dev, const xs_scenario *s, int64_t global, xs_fit_split **out,
                  size_t *n, xs_error *err)
{
    *out = NULL;
    *n = 0;
    /* every split is checked on its own: one micro-batch (no gradients kept
     * across micro-batches) may fit where the same micro-batch accumulating
     * does not, so no bound from another grad_accum applies */
    size_t cap = 0;
    for (int64_t b = 1; b <= BATCH_LIMIT && b <= global; b++)
        cap += global % b == 0 && global / b <= ACCUM_LIMIT;
    if (cap == 0)
        return XS_OK;
    xs_fit_split *v = calloc(cap, sizeof *v);
    if (!v)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    size_t k = 0;
    int rc = XS_OK;
    for (int64_t b = 1; b <= BATCH_LIMIT && b <= global && rc == XS_OK; b++) {
        if (global % b || global / b > ACCUM_LIMIT)
            continue;
        xs_scenario t = *s;
        t.train.batch = b;
        t.train.grad_accum = global / b;
        xs_workload wl;
        xs_error e;
        int built = xs_wl_build_compact(&t, &wl, NULL, &e);
        if (built == XS_ERANGE) /* shapes the scenario limits refuse: it cannot run */
            continue;
        if (built) {
            if (err)
                *err = e;
            rc = built;
            break;
        }
        /* its memory first: no time for a split that cannot run */
        xs_memory m;
        xs_prediction p;
        if (!(rc = xs_memory_predict(dev, &t, &wl, &m, err)) && m.fits &&
            !(rc = xs_predict(dev, &t, &wl, &p, err))) {
            v[k++] = (xs_fit_split){b, t.train.grad_accum, p.samples_per_s, p.step_time_s,
                                    p.run_time_s, p.run_cost_usd, p.mem};
            xs_prediction_free(&p);
        }
        xs_wl_free(&wl);
    }
    if (rc) {
        free(v);
        return rc;
    }
    qsort(v, k, sizeof *v, by_speed);
    *out = v;
    *n = k;
    return XS_OK;
}
