/* cuda_check.h — `xpusim validate --backend cuda -d DEVICE`: kernels the
 * calibration never timed (GEMM shapes outside its sweep, copy and triad
 * at other sizes, layernorm and softmax at other shapes, optimizers over
 * another model's tensors) run on this GPU through libxscuda.so and are
 * predicted with DEVICE's GPU model, one validate row each (metric time_s,
 * with the repetitions' spread); and a sustained GEMM's energy measured
 * through NVML against the energy model (metric energy_j). DEVICE may be a
 * calibrated file or a datasheet one (to compare the two). */
#ifndef XS_CAL_CUDA_CHECK_H
#define XS_CAL_CUDA_CHECK_H

#include <stddef.h>

#include "backends.h"
#include "device.h"
#include "validate.h"

int xs_cuda_check(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows, size_t *n,
                  xs_error *err);

#endif
