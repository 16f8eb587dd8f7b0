/* fsdp_timing.h — an FSDP step (fsdp.h) on its two streams, timed: the
 * compute and NCCL's collectives with the order the op list gives them. */
#ifndef XS_FSDP_TIMING_H
#define XS_FSDP_TIMING_H

#include "comm.h"
#include "op.h"

/* The step on two streams: the compute in op-list order, each op waiting
 * for the collective it depends on (comm_dep); the collectives one after
 * another on NCCL's stream in issue order, each after the compute op it
 * depends on (dep_op). est holds each op's one-call estimate; an op runs
 * count calls. While a collective overlaps the compute it slows it by its
 * share of the GPU (xs_comm_contention), added after the schedule (not
 * fed back into it, as for DDP). */
typedef struct {
    double compute_s;    /* the compute ops alone, back to back */
    double comm_s;       /* every collective, back to back */
    double stall_s;      /* the compute waiting for all-gathers */
    double tail_s;       /* ... and for the last reduce-scatters (the optimizer) */
    double contention_s; /* the compute slowed by the collectives beside it */
    int algo_largest;    /* NCCL's algorithm for the largest collective */
} xs_fsdp_timing;
void xs_fsdp_overlap(const xs_topo *t, const xs_workload *wl, const xs_estimate *est,
                     xs_fsdp_timing *out);

#endif
