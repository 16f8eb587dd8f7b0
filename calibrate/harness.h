/* harness.h — timing real kernels on a noisy host (30-50% run-to-run noise
 * seen on these machines): warm up, repeat until the spread is small or a
 * time cap is hit, report the median and inter-quartile range — never the
 * best run alone. Two variants are compared by interleaving their runs, so
 * a slow phase of the host hits both. A kernel declares the bytes and FLOPs
 * one call moves, so results read as GB/s, GFLOP/s and fraction of peak. */
#ifndef XS_CAL_HARNESS_H
#define XS_CAL_HARNESS_H

typedef struct {
    const char *name;
    double bytes; /* DRAM (or cache) bytes one call moves, by the kernel's definition */
    double flops; /* useful FLOPs of one call */
    void (*run)(void *ctx);
    void *ctx;
    /* optional, untimed, before every call: puts caches in the state the
     * kernel meets in real use (xs_cal_measure only) */
    void (*prepare)(void *ctx);
} xs_cal_kernel;

typedef struct {
    int warmup;            /* untimed calls first */
    int min_reps, max_reps;
    double target_rel_iqr; /* stop once IQR / median is below this */
    double time_cap_s;     /* stop once this much time was spent timing */
} xs_cal_opts;

typedef struct {
    double median_s, q1_s, q3_s, min_s;
    double rel_iqr; /* (q3 - q1) / median */
    int reps;
    double gbs, gflops; /* at the median */
} xs_cal_result;

/* warmup 2, 5..200 repetitions, IQR/median 5%, 1 s per kernel. */
xs_cal_opts xs_cal_default_opts(void);

/* Seconds on a monotonic clock. */
double xs_cal_now(void);

void xs_cal_measure(const xs_cal_kernel *k, const xs_cal_opts *o, xs_cal_result *r);

/* Run a and b alternately (a b a b ...); fill both results and return the
 * median over pairs of time(b) / time(a). */
double xs_cal_compare(const xs_cal_kernel *a, const xs_cal_kernel *b, const xs_cal_opts *o,
                      xs_cal_result *ra, xs_cal_result *rb);

#endif
