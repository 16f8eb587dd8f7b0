/* backend.h — a device class (gpu, tpu, cpu) is a const table of functions
 * with one signature, so the core never switches on the class and adding a
 * class is adding one file. */
#ifndef XS_BACKEND_H
#define XS_BACKEND_H

#include "device.h"
#include "error.h"
#include "op.h"
#include "workload.h"

typedef struct {
    const char *name;
    /* Time and bound of one call of op on dev (energy is filled later). */
    int (*estimate)(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err);
    /* 1 when the host only queues kernels and the device runs them later
     * (an accelerator); 0 when the host runs them itself */
    int async;
} xs_backend;

extern const xs_backend xs_gpu_backend;

/* The backend for dev's class, or NULL with an error naming what is missing. */
const xs_backend *xs_backend_for(const xs_device *dev, xs_error *err);

#endif
