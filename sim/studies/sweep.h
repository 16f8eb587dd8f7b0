/* sweep.h — a grid of scenario variants evaluated on several devices: the
 * cartesian product of --vary axes (KEY=V1,V2,... with integer ranges
 * A:B[:STEP]) x devices, one row a (point, device) in grid order, computed
 * on all cores. A point a device cannot run is a row with its reason, never
 * an abort: a sweep is a search, and its holes are answers too. */
#ifndef XS_SWEEP_H
#define XS_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "dtype.h"
#include "error.h"

/* The most rows (points x devices) one sweep makes: the CSV of a sweep is
 * held in memory until it is written atomically, ~150 bytes a row, so the
 * limit keeps it near 1.5 GB. */
#define XS_SWEEP_MAX_ROWS 10000000
#define XS_SWEEP_MAX_AXES 16
#define XS_SWEEP_VALUE_MAX 1024 /* bytes of one value */

/* One entry of an axis' list: a value as written, or an integer range. */
typedef struct {
    char *text; /* owned; NULL for a range */
    int64_t lo, step;
    size_t count; /* values it stands for: 1 for a text */
} xs_sweep_item;

typedef struct {
    char key[128];     /* a scenario key, as --set takes it */
    char *spec;        /* the --vary argument as given (owned), for messages */
    xs_sweep_item *items; /* owned */
    size_t nitems;
    size_t n;          /* values on this axis */
} xs_sweep_axis;

typedef struct {
    xs_sweep_axis axes[XS_SWEEP_MAX_AXES];
    size_t naxes;
    size_t points; /* the product of the axes' sizes; 1 with no axis */
} xs_sweep_grid;

/* An empty grid (one point: the scenario as given). */
void xs_sweep_init(xs_sweep_grid *g);
/* Add the axis spec "KEY=V1,V2,A:B[:STEP],..." (ranges only for integer
 * keys; step 1 by default). Every value is checked as --set would check it
 * (a range by its two ends: an integer field's range is an interval), with
 * --set's message; a key varied twice, an empty value, a bad or empty
 * range and a grid over XS_SWEEP_MAX_ROWS points are refused by name. On
 * error g is unchanged. */
int xs_sweep_add(xs_sweep_grid *g, const char *spec, xs_error *err);
/* Refuse a grid of more than XS_SWEEP_MAX_ROWS rows on ndev devices, or
 * one that varies a key also in sets (the n --set overrides). */
int xs_sweep_check(const xs_sweep_grid *g, size_t ndev, const char *const *sets, int n,
                   xs_error *err);
void xs_sweep_free(xs_sweep_grid *g);

/* The value of axis a at grid point p (the last axis varies fastest) into
 * buf (size XS_SWEEP_VALUE_MAX + 1 is always enough); returns buf. */
const char *xs_sweep_value(const xs_sweep_grid *g, size_t p, size_t a, char *buf, size_t size);

/* One (point, device). */
typedef struct {
    size_t point, dev;
    int predicted;  /* 1: a prediction was made (it fits or not) */
    int fits;       /* the step fits the device's memory */
    char *reason;   /* owned; NULL when the run fits: why it cannot run */
    xs_dtype matmul_engine;
    double step_time_s, samples_per_s, tokens_per_s, mfu, avg_power_w;
    double run_time_s, run_energy_kwh, run_cost_usd; /* 0 unless it fits */
    double run_cost_low_usd, run_cost_high_usd;      /* the band, when asked */
    double samples_per_s_low, samples_per_s_high;
    double memory_gb, capacity_gb;                   /* GB of 2^30 bytes */
    int64_t steps, samples_per_step;
} xs_sweep_row;

/* What to evaluate. */
typedef struct {
    const char *scenario;    /* id or path */
    const char *const *sets; /* the --set overrides, applied before the point's */
    int nsets;
    const xs_sweep_grid *grid;
    const xs_device *devs;
    size_t ndev;
    int band; /* 1: also the slow and fast corners (3 predictions a row) */
    /* called now and then from one thread with the points done so far in
     * this call; may be NULL */
    void (*progress)(size_t done, void *ctx);
    void *ctx;
} xs_sweep_spec;

/* Evaluate grid points [first, first + count) on every device into rows
 * (count * ndev of them, point-major, devices in order), on all cores
 * (OpenMP); the rows are the same whatever the thread count. A point's
 * failure is its rows' reason; only running out of memory fails the call.
 * Free the rows' reasons with xs_sweep_rows_free. */
int xs_sweep_eval(const xs_sweep_spec *sp, size_t first, size_t count, xs_sweep_row *rows,
                  xs_error *err);
void xs_sweep_rows_free(xs_sweep_row *rows, size_t n);

#endif
