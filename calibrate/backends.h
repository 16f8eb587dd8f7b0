/* backends.h — the calibration backends, one const table: each runs real
 * kernels on some hardware, fits a device class's cost model to them and
 * writes a device file of that class (`xpusim calibrate --backend NAME`),
 * and checks such a file against fresh runs of a training step and of
 * kernels the fit never saw (`xpusim validate --backend NAME -d DEVICE`).
 * Adding a backend (cuda next) adds a slot here, not a branch in the CLI. */
#ifndef XS_CAL_BACKENDS_H
#define XS_CAL_BACKENDS_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "device.h"
#include "error.h"
#include "validate.h"

typedef struct {
    int quick;                /* fewer sizes and shapes, shorter timing caps */
    int threads;              /* cores (or devices) to calibrate for; 0: all */
    const char *out;          /* device file to write */
    const char *measurements; /* CSV of every measurement (xs_cal_measurements_path) */
    const char *command;      /* the command line, kept as provenance */
    FILE *log;                /* progress lines; NULL: silent */
    /* what a backend that reads a recorded run (trace) calibrates from: the
     * recording, the device file it refines, the scenario that ran */
    const char *trace, *device, *scenario;
    const char *const *sets;
    int nsets;
    /* cuda: the device file the fit starts from (NULL: matched from the
     * probed GPU's name), a measurement file to fit from instead of a GPU,
     * and the GPU to measure */
    const char *base, *from_measurements;
    int device_index;
} xs_cal_run_opts;

typedef struct {
    int quick; /* a smaller model, fewer steps and kernels */
    FILE *log; /* progress lines; NULL: silent */
    /* what the report should say beside its rows (xs_report_validate_extra:
     * the host's state, notes); may be NULL */
    cJSON *extra;
    /* the device file is another machine's (--allow-other-host): its
     * ceilings differ from this host's by design, which is not news */
    int other_host;
} xs_cal_check_opts;

typedef struct {
    const char *name;         /* --backend NAME */
    const char *device_class; /* the class of the device files it writes and checks */
    const char *summary;      /* what it calibrates, a few words for --help */
    const char *default_out;  /* the device file calibrate writes without -o */
    const char *calibrate_doc; /* what `calibrate` measures and fits, for --help */
    const char *check_doc;     /* what `validate --backend` runs, for --help */
    /* XS_OK when this host can run the backend's kernels (CPUID and the
     * like; it opens, measures and writes nothing), else why not. */
    int (*host_check)(xs_error *err);
    /* 1 when dev was calibrated on a machine like this one; else 0 with
     * both machines named in why. */
    int (*same_host)(const xs_device *dev, char *why, size_t size);
    int (*calibrate)(const xs_cal_run_opts *o, xs_error *err);
    /* Rows are allocated (caller frees), one per kernel name per step, per
     * step and per single kernel, each with its measurement's spread. */
    int (*check)(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows, size_t *n,
                 xs_error *err);
} xs_cal_backend;

/* The backend called name, or NULL. */
const xs_cal_backend *xs_cal_backend_find(const char *name);

/* The i-th backend, or NULL past the end. */
const xs_cal_backend *xs_cal_backend_at(int i);

#endif
