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

#include <stdio.h>

#include "device.h"
#include "validate.h"

typedef struct {
    int quick; /* a smaller model, fewer steps and kernels */
    FILE *log; /* progress lines; NULL: silent */
} xs_cpu_check_opts;

/* The BERT configurations the check trains, as text for the report. */
const char *xs_cpu_check_model(int quick);

/* Rows are allocated (caller frees); their file is "cpu-check". */
int xs_cpu_check(const xs_device *dev, const xs_cpu_check_opts *o, xs_vrow **rows, size_t *n,
                 xs_error *err);

#endif
