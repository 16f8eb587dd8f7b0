/* thr_work.h — what an inference run does, as the thread planner
 * (threads.h) reads it: groups of items (one thread count per group), each
 * an op or a recurrent step with the parallel work it holds. Built by the
 * inference workload (infer.h), costed by the CPU model: the contract
 * between the two, as op.h is between the training workload and the
 * device models. */
#ifndef XS_THR_WORK_H
#define XS_THR_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "op.h"

typedef enum {
    XS_THR_OP,        /* an op the CPU model costs (GEMM, norm, softmax, ...) */
    XS_THR_LSTM_STEP, /* one recurrent step of kernels/cpu/lstm.c */
} xs_thr_kind;

/* One op of a run: which group it belongs to, how often it runs, how much
 * parallel work it holds. */
typedef struct {
    int group;
    int kind;        /* xs_thr_kind */
    xs_op op;        /* XS_THR_OP: the op; its name names the item */
    int64_t batch, hidden; /* XS_THR_LSTM_STEP: samples and hidden units;
                              op.dtype XS_BF16: the bf16 step */
    double calls;    /* calls in one run */
    int64_t par;     /* independent units of work a call splits into; 0: as many as
                        threads (a GEMM: its blocks, in the tile/wave model) */
    int regions;     /* parallel regions one call opens (a batched GEMM: per matrix);
                        GEMMs: set from the device's kernel set (xs_thr_gemm_regions) */
} xs_thr_item;

#define XS_THR_MAX_GROUPS 64

/* What a run does, as groups of items (one thread count per group). Owns
 * items: xs_thr_work_free. */
typedef struct {
    char id[64];
    char groups[XS_THR_MAX_GROUPS][48];
    int ngroups;
    xs_thr_item *items;
    size_t n, cap;
} xs_thr_work;

/* Append group name (its index, or a negative XS_E code); append an item
 * (copied). */
int xs_thr_add_group(xs_thr_work *w, const char *name, xs_error *err);
int xs_thr_add_item(xs_thr_work *w, const xs_thr_item *it, xs_error *err);
void xs_thr_work_free(xs_thr_work *w);

#endif
