/* threads_run.h — runs an LSTM inference scenario on the real kernels
 * (kernels/cpu/lstm.c) under the thread plans of xpusim threads, and times
 * each setting: every group at each count of the plan (a sweep), then the
 * three whole-run settings (all cores, the best fixed count, the dynamic
 * plan). The kernel is checked against its reference first. */
#ifndef XS_CAL_THREADS_RUN_H
#define XS_CAL_THREADS_RUN_H

#include <stdio.h>

#include "error.h"
#include "infer.h"
#include "threads.h"

typedef struct {
    double default_s, best_fixed_s, dynamic_s; /* medians of whole runs */
    double default_iqr, best_fixed_iqr, dynamic_iqr; /* their (q3 - q1) / median */
    double *group_s; /* [group * ncounts + count]: each group's seconds in a run at that count */
    double max_abs_err; /* largest |kernel - reference| over the check */
    int reps;           /* timed runs of each whole-run setting */
} xs_thr_measured;

/* The weights and input a run uses: deterministic (a fixed seed), weights
 * uniform in +-1/sqrt(hidden) as torch.nn.LSTM initialises them, inputs in
 * +-1. save_dir (NULL: none) gets weights.bin, input.bin and output.bin
 * (little-endian float32 in lstm.h's layouts) and shape.json, for a client
 * such as tools/torch_lstm_threads.py. log (NULL: quiet) gets progress. */
int xs_thr_run_lstm(const xs_inf_scenario *s, const xs_thr_plan *p, int quick,
                    const char *save_dir, FILE *log, xs_thr_measured *out, xs_error *err);
void xs_thr_measured_free(xs_thr_measured *m);

#endif
