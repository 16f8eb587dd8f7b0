/* cpu_check.h — `xpusim validate --backend cpu -d DEVICE`: the proof of
 * the calibrated CPU model. Runs a real fine-tuning step of a small BERT
 * encoder (forward, loss, backward, Adan; bf16 and fp32 matmuls) and
 * single kernels at shapes and sizes the calibration never used (GEMMs
 * unlike the sweep's, elementwise kernels in the LLC and DRAM instead of
 * L2), predicts every one of them with the device's CPU model and returns
 * validate rows: one per kernel name per step (metric time_s, summed over
 * its calls in a step), one per step (metric step_time_s), one per single
 * kernel (metric time_s), each with the spread of its measurements. */
#ifndef XS_CAL_CPU_CHECK_H
#define XS_CAL_CPU_CHECK_H

#include <stddef.h>

#include "backends.h"
#include "device.h"
#include "validate.h"

int xs_cpu_check(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows, size_t *n,
                 xs_error *err);

#endif
