/* runs_on.h — whether a device can run what a scenario asks of its
 * kernels, before anything is predicted: the formats its engines lack and
 * the libraries its class cannot run. One error line names the scenario's
 * key and the device's missing figure or class. */
#ifndef XS_RUNS_ON_H
#define XS_RUNS_ON_H

#include "device.h"
#include "error.h"
#include "scenario.h"

/* Refuse train.precision fp8 on a device without fp8 tensor cores (no
 * compute.peak_fp8_tflops: every GPU before Ada, and the CPU). */
int xs_fp8_device_check(const xs_device *dev, const xs_scenario *s, xs_error *err);

/* Refuse train.quant (bitsandbytes' CUDA layers) on a class that runs no
 * CUDA, and int8 on a device without int8 tensor cores (no
 * compute.peak_int8_tops: the V100s). */
int xs_quant_device_check(const xs_device *dev, const xs_scenario *s, xs_error *err);

#endif
