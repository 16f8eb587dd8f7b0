/* threads_cal.h — the thread sweeps of the CPU calibration: an empty
 * OpenMP parallel region at each thread count (fitted: region_us +
 * region_us_per_thread x (threads - 1)), the LSTM kernel's recurrent step
 * on one core with its weights in L2 (fitted: per multiply-add and per
 * gate update), then a check of the whole thread model (threads.h) against
 * LSTM steps and input-projection GEMMs at every count. Each fit is GSL
 * weighted least squares (fit.h) and its residuals go into the device
 * file's calibration.fits. */
#ifndef XS_CAL_THREADS_CAL_H
#define XS_CAL_THREADS_CAL_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "device.h"
#include "fit.h"
#include "measure.h"

typedef struct {
    xs_fit region, lstm, lstm_bf16;
    /* the model against measurements it was not fitted to: relative
     * residuals in percent over points rows */
    int step_points, gemm_points;
    double step_rms_pct, step_max_pct, gemm_rms_pct, gemm_max_pct;
} xs_thr_cal;

/* Measure on xs_cpu_of(dev)->cores threads at most, append the rows to ms, and
 * fill xs_cpu_of(dev)->thr (the rest of dev must be the host's fitted model: the
 * check uses it). log (NULL: quiet) gets one line a sweep. */
int xs_thr_calibrate(xs_device *dev, int quick, xs_meas_list *ms, FILE *log, xs_thr_cal *out,
                     xs_error *err);

/* Put threads.source and the fits into a device file's notes (the
 * document xs_dev_write takes), replacing earlier ones. */
int xs_thr_cal_notes(cJSON *notes, const xs_thr_cal *r);

/* `xpusim threads --calibrate -d PATH`: load the device file at path (a
 * CPU file of this host), run the sweeps, write it back with its threads
 * section new and everything else as it was (calibration.threads_sweep
 * says when and how); the rows go to measurements, or when NULL to
 * <stem>.threads.csv beside it. Like calibrate, it replaces no file the
 * repository ships (devices/, calibrate/runs/) unless force. */
int xs_thr_calibrate_file(const char *path, const char *measurements, int quick, int force,
                          FILE *log, xs_error *err);

#endif
