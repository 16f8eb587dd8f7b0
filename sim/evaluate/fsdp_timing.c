/* fsdp_timing.c — see fsdp_timing.h; what FSDP orders and why: fsdp.c. */
#include "fsdp_timing.h"

#include <math.h>
#include <stdlib.h>

/* Seconds of [a0, a1) that fall inside the busy intervals [b0[k], b1[k])
 * (sorted, disjoint), from *k on; *k moves past those that end before a1
 * (the collectives come in time order too). */
static double busy_within(const double *b0, const double *b1, size_t nb, size_t *k, double a0,
                          double a1)
{
    double s = 0;
    while (*k < nb && b1[*k] <= a0)
        (*k)++;
    for (size_t j = *k; j < nb && b0[j] < a1; j++)
        s += fmin(a1, b1[j]) - fmax(a0, b0[j]);
    return s;
}

void xs_fsdp_overlap(const xs_topo *t, const xs_workload *wl, const xs_estimate *est,
                     xs_fsdp_timing *out)
{
    *out = (xs_fsdp_timing){0};
    size_t n = wl->n;
    double *end = malloc((n ? n : 1) * sizeof *end);   /* each op's end */
    double *c0 = malloc((n ? n : 1) * sizeof *c0);    /* the compute's busy intervals */
    double *c1 = malloc((n ? n : 1) * sizeof *c1);
    double *q0 = malloc((n ? n : 1) * sizeof *q0);    /* the collectives' */
    double *q1 = malloc((n ? n : 1) * sizeof *q1);
    size_t *qi = malloc((n ? n : 1) * sizeof *qi);
    if (!end || !c0 || !c1 || !q0 || !q1 || !qi) {
        free(end), free(c0), free(c1), free(q0), free(q1), free(qi);
        return; /* only the overlap figures are lost; the step's sums stand */
    }
    double tc = 0, tq = 0, largest = -1;
    size_t nc = 0, nq = 0, last_comm = n;
    for (size_t i = 0; i < n; i++) {
        const xs_op *op = &wl->ops[i];
        double d = est[i].time_s * (double)op->count;
        if (op->kind == XS_OP_COMM) {
            double start = op->dep_op > 0 ? fmax(tq, end[op->dep_op - 1]) : tq;
            end[i] = tq = start + d;
            q0[nq] = start, q1[nq] = end[i], qi[nq++] = i;
            out->comm_s += d;
            last_comm = i;
            if (op->bytes > largest) {
                largest = op->bytes;
                xs_comm_best(t, op->coll, op->bytes, &out->algo_largest);
            }
            continue;
        }
        double start = tc;
        if (op->comm_dep > 0 && end[op->comm_dep - 1] > start) {
            /* the optimizer waits for the last reduce-scatters; the rest
             * for their unit's all-gather */
            double wait = end[op->comm_dep - 1] - start;
            if (op->phase == XS_PH_OPT)
                out->tail_s += wait;
            else
                out->stall_s += wait;
            start += wait;
        }
        end[i] = tc = start + d;
        out->compute_s += d;
        if (d > 0)
            c0[nc] = start, c1[nc++] = end[i];
    }
    /* a collective after the last compute op would lengthen the step too */
    if (last_comm < n && end[last_comm] > tc)
        out->tail_s += end[last_comm] - tc;
    size_t k = 0;
    for (size_t j = 0; j < nq; j++) {
        const xs_op *op = &wl->ops[qi[j]];
        double len = q1[j] - q0[j];
        if (!(len > 0))
            continue;
        double share = xs_comm_contention(
            t, xs_comm_busbw(op->coll, t->n, op->bytes, len / (double)op->count));
        out->contention_s += busy_within(c0, c1, nc, &k, q0[j], q1[j]) * share / (1 - share);
    }
    free(end), free(c0), free(c1), free(q0), free(q1), free(qi);
}
