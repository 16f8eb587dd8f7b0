/* cpu_noise.h — is this host quiet enough to time kernels on? A 2-core
 * host shared with other work runs a calibration's parallel kernels at
 * the pace of whichever thread lost its core, and the fits turn that into
 * a device file that predicts nonsense. Before a calibration (and
 * validate --backend cpu) a reference kernel, the in-core FMA peak of
 * calibrate, is timed on all the run's threads and on one, alternately:
 *   spread   its repetitions' inter-quartile range over their median;
 *   scaling  time on one thread / time on all (each thread does the same
 *            work, so 1 when every thread has a core; a competing
 *            process on one of two cores makes it about 0.5);
 *   share    the CPU time its threads got over the wall time they took
 *            (1 when each has its core; busy work on every core slows
 *            one thread and all alike, which spread and scaling miss,
 *            and halves this);
 * and again after the run, which also must not have moved (drift), while
 * the run's own measurements must repeat (their median spread). */
#ifndef XS_CAL_CPU_NOISE_H
#define XS_CAL_CPU_NOISE_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

typedef struct {
    int threads;
    double gflops_thread; /* the reference on all threads, GFLOP/s a thread */
    double spread;        /* IQR / median of its repetitions on all threads */
    double scaling;       /* 1 when threads == 1 */
    double share;         /* CPU time / (wall time x threads) of the reference */
    double load1;         /* the 1-minute load average (Linux), -1 unknown */
} xs_cpu_noise;

/* The bounds. A quiet host repeats the reference within 1-3% and scales
 * it to 0.95-1.0 (all-core turbo a little below one core's); a busy one
 * spreads it past 10% or scales it below 0.8. Thresholds for refusing a
 * measurement, not model parameters. */
#define XS_CPU_NOISE_SPREAD 0.10  /* the reference's, and the run's median */
#define XS_CPU_NOISE_SCALING 0.80
#define XS_CPU_NOISE_SHARE 0.85
#define XS_CPU_NOISE_DRIFT 0.10   /* the reference after the run against before */
#define XS_CPU_NOISE_TRIES 3      /* probes before a run, a pause between */

/* Time the reference on threads threads (and on one). */
void xs_cpu_noise_probe(int threads, xs_cpu_noise *out);

/* 1 when n is within the bounds; else 0 and what is past them in why
 * ("the reference kernel's repetitions spread 23% (bound 10%)"). */
int xs_cpu_noise_quiet(const xs_cpu_noise *n, char *why, size_t size);

/* 1 when the reference after a run is within XS_CPU_NOISE_DRIFT of before
 * it and both are quiet, and run_spread (the run's measurements' median
 * IQR / median; < 0: not known) is within XS_CPU_NOISE_SPREAD; else 0
 * and why. */
int xs_cpu_noise_steady(const xs_cpu_noise *before, const xs_cpu_noise *after,
                        double run_spread, char *why, size_t size);

/* Probe until the host is quiet, XS_CPU_NOISE_TRIES times at most with a
 * pause between (each said on log); XS_OK with the quiet probe in out,
 * or XS_ENOHW with one line: what (e.g. "calibrate"), how noisy, the
 * outcome ("no device file was written") and what to do. */
int xs_cpu_noise_wait(int threads, const char *what, const char *outcome, FILE *log,
                      xs_cpu_noise *out, xs_error *err);

/* The error a run that stayed noisy ends with (why: from
 * xs_cpu_noise_steady); XS_ENOHW. */
int xs_cpu_noise_refuse(const char *what, int threads, const char *why, const char *outcome,
                        xs_error *err);

#endif
