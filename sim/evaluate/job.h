/* job.h — one prediction the way every command and `validate` makes it: a
 * device, a scenario (by id or path, with --set overrides), the workload
 * built from it, and the prediction with its uncertainty band. The one
 * load -> build -> predict path; each step's error names its file.
 *
 * Threads: jobs on separate xs_job structs may run in parallel (the library
 * keeps no mutable state of its own besides the executable's folder, set
 * once by xs_paths_init before any thread starts, and standard input,
 * read once under a lock). Not for parallel use: calibrate/ and kernels/
 * (scratch buffers, the GSL error handler, feature detection), which run
 * real kernels one calibration at a time. */
#ifndef XS_JOB_H
#define XS_JOB_H

#include "device.h"
#include "error.h"
#include "predict.h"
#include "scenario.h"
#include "workload.h"

typedef struct {
    xs_device dev;     /* set by the caller (xs_dev_open) before predicting */
    xs_scenario s;
    xs_workload wl;    /* owned */
    xs_prediction p;   /* owned */
} xs_job;

/* An empty job (nothing owned yet). */
void xs_job_init(xs_job *j);

/* Load the scenario (xs_scn_open) with its overrides and build its
 * workload. */
int xs_job_scenario(xs_job *j, const char *scenario, const char *const *sets, int nsets,
                    xs_error *err);

/* The same with the workload compact (xs_wl_build_compact): for callers
 * that read a prediction's figures, not its per-op estimates. */
int xs_job_scenario_compact(xs_job *j, const char *scenario, const char *const *sets,
                            int nsets, xs_error *err);

/* Predict the workload on j->dev; with band, also on the device's slow and
 * fast corners. */
int xs_job_predict(xs_job *j, int band, xs_error *err);

/* Free what the job owns; it is empty again. */
void xs_job_free(xs_job *j);

#endif
