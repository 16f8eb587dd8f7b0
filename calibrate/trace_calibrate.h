/* trace_calibrate.h — `xpusim calibrate --backend trace`: one
 * torch.profiler trace of a training step on a GPU turns a device file into
 * a calibrated one. Each kernel class's measured time (sim/studies/trace.h, classes
 * of kernel_class.h) is fitted, step by step, as a multiple of the model's
 * predicted kernel bodies of that class for the same scenario on the same
 * board (GSL, fit.h); the multiples go into model.class_time_factor, the
 * fits with their residuals into the file's "calibration" object.
 *
 * And the development stand-in for a real trace: the model's own kernel
 * timeline of a scenario written as a torch.profiler trace, its kernel
 * bodies scaled so that the step takes a measured step time (and, for
 * tests, each class slowed by a known factor). */
#ifndef XS_CAL_TRACE_CALIBRATE_H
#define XS_CAL_TRACE_CALIBRATE_H

#include "backends.h"
#include "device.h"
#include "error.h"
#include "kernel_class.h"

/* A real PyTorch kernel name for each class (but other), one that
 * xs_kclass_of_kernel puts back into that class. */
const char *xs_trace_sim_kernel_name(int cls);

/* The calibrate slot of the trace backend: o->trace, o->device,
 * o->scenario (+ o->sets) and o->out must be set. */
int xs_trace_calibrate(const xs_cal_run_opts *o, xs_error *err);

typedef struct {
    const char *device, *scenario;
    const char *const *sets;
    int nsets;
    double step_s;        /* > 0: scale every kernel body so the predicted step is this */
    double samples_per_s; /* > 0: the same, step = samples per step / this */
    double factor[XS_KC_COUNT]; /* a known slowdown per class; 0: none (1) */
    int steps;            /* ProfilerStep spans to write (>= 1) */
    const char *out;      /* the trace */
    const char *command;  /* provenance */
    FILE *log;            /* one line of what was written; NULL: silent */
} xs_trace_sim_opts;

/* Write the simulated trace (atomically). The step is laid out as the
 * model runs it: each op's calls and launches back to back, a launch gap
 * before each kernel, the host span the predicted step. */
int xs_trace_simulate(const xs_trace_sim_opts *o, xs_error *err);

#endif
