/* gpu.h — the NVIDIA GPU device class: what its model file (gpu.c) and its
 * schema file (gpu_device.c) share, and the facts tests check. */
#ifndef XS_GPU_H
#define XS_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "gpu_params.h"

/* dev's own record, as the GPU model reads it (dev's class is gpu: the
 * loader checked it); const where dev is. */
#define xs_gpu_of(dev) XS_OWN_RECORD(xs_gpu_params, dev)
_Static_assert(sizeof(xs_gpu_params) <= XS_DEV_OWN_BYTES && _Alignof(xs_gpu_params) <= _Alignof(xs_dev_own),
               "the GPU record must fit xs_device.own");

/* The schema of a class-gpu device file and the checks between its
 * fields (which also parse the tile lists). */
const xs_field *xs_gpu_fields(size_t *n);
int xs_gpu_check_fields(xs_device *dev, const char *path, xs_error *err);

/* Matrix-engine peak in FLOP/s for t at the sustained clock, or 0 if the
 * engine lacks the format; fp32 returns the vector-unit peak. */
double xs_gpu_peak_flops(const xs_device *dev, xs_dtype t);

/* The core clock dev runs at: its sustained clock, moved by a power limit
 * (power.h). */
double xs_gpu_clock_mhz(const xs_device *dev);

/* The job's topology for s on dev when s runs several GPUs (the class's
 * topology slot, comm.h's xs_topo_of). */
int xs_gpu_topology(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err);

/* Resident threads per SM of a CUDA compute capability x 10 (70, 72, 75,
 * 80, 86, 87, 89, 90), or 0 when the table does not know it. */
int64_t xs_sm_threads(int64_t sm_version);

#endif
