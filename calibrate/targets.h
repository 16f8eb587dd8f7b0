/* targets.h — the files a calibration writes, checked before it measures
 * anything: calibrate replaces only files it made itself, never a device or
 * measurement file shipped with xpusim, never a file of another kind. */
#ifndef XS_CAL_TARGETS_H
#define XS_CAL_TARGETS_H

#include <stddef.h>

#include "error.h"

/* The id of the device file out: its name without the folder and .json;
 * XS_EARG when it is longer than a device id may be. */
int xs_cal_device_id(const char *out, char *id, size_t size, xs_error *err);

/* The measurements CSV beside a device file: <out without .json>.measurements.csv. */
void xs_cal_measurements_path(const char *out, char *dst, size_t size);

/* XS_OK when out (a device file) and measurements (its CSV) may be written:
 * each is absent, or was written by `xpusim calibrate` and lies outside the
 * data root's devices/ and calibrate/runs/ (what the repository ships), or
 * force is set; measurements NULL: a backend that writes none. Otherwise an
 * error naming the file, why, and what to do. */
int xs_cal_targets_check(const char *out, const char *measurements, int force, xs_error *err);

#endif
