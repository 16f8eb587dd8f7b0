/* measure.h — the measurements a calibration takes, one row per kernel
 * configuration: what ran (bench, name, threads, shape), what one call
 * moves and computes, and the harness's timing (median, quartiles). They
 * are kept for the fits and written as CSV, so a fit can be checked or
 * redone from the file. */
#ifndef XS_CAL_MEASURE_H
#define XS_CAL_MEASURE_H

#include <stddef.h>

#include "error.h"
#include "harness.h"

typedef struct {
    char bench[16]; /* fork, peak, triad, gemm, kernel */
    char name[32];  /* peak: amx|fma; triad: -; gemm: bf16|fp32; kernel: the model's name */
    int threads;
    long long m, n, k; /* gemm: the shape; kernel: rows (m) x width (n) */
    int ta, tb;
    double elems, bytes, flops; /* per call */
    xs_cal_result r;
} xs_meas;

typedef struct {
    xs_meas *v;
    size_t n, cap;
} xs_meas_list;

/* Append a copy of m; XS_ENOMEM when it cannot grow. */
int xs_meas_add(xs_meas_list *l, const xs_meas *m);
void xs_meas_free(xs_meas_list *l);

/* The CSV's first line: how a file written by calibrate is recognised. */
#define XS_MEAS_CSV_HEADER                                                                \
    "bench,name,threads,m,n,k,ta,tb,elems,bytes,flops,median_s,q1_s,q3_s,rel_iqr,reps,gbs," \
    "gflops"

/* All rows as CSV, written atomically to path. */
int xs_meas_write_csv(const xs_meas_list *l, const char *path, xs_error *err);

#endif
