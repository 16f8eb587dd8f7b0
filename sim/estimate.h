/* estimate.h — what a device model says about one op: its time, what bound
 * it, how busy it kept the chip, and the energy it took. */
#ifndef XS_ESTIMATE_H
#define XS_ESTIMATE_H

#include "dtype.h"

/* compute: the math units; memory: DRAM or L2 bandwidth; latency: loads in
 * flight too few to cover memory latency; launch: kernel launch cost. */
typedef enum {
    XS_BOUND_COMPUTE,
    XS_BOUND_MEMORY,
    XS_BOUND_LAUNCH,
    XS_BOUND_LATENCY,
    XS_BOUND_COUNT
} xs_bound;

typedef struct {
    double time_s;      /* one call */
    double compute_s;   /* at the achievable rate of the engine that runs it */
    double memory_s;    /* at the achievable DRAM bandwidth */
    double overhead_s;  /* kernel launches */
    int bound;          /* xs_bound */
    xs_dtype engine;    /* format the engine actually computes in */
    int tensor;         /* 1: matrix engine (tensor cores), 0: vector units */
    double power_w;     /* average board power during the op */
    double energy_j;    /* one call */
} xs_estimate;

const char *xs_bound_name(int bound);

#endif
