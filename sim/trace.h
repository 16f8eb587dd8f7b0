/* trace.h — compares a measured PyTorch profiler trace (Chrome trace JSON,
 * as torch.profiler's export_chrome_trace writes it) of one training step
 * with the predicted op list of the same scenario on the same device: GPU
 * kernels are classified by name into kernel classes, matched to the
 * predicted launches of each class in order, and summed per class. */
#ifndef XS_TRACE_H
#define XS_TRACE_H

#include <stddef.h>

#include "device.h"
#include "error.h"
#include "predict.h"
#include "validate.h"
#include "workload.h"

typedef enum {
    XS_KC_GEMM,
    XS_KC_ATTENTION,
    XS_KC_SOFTMAX,
    XS_KC_NORM,
    XS_KC_ELEMENTWISE,
    XS_KC_COPY, /* layout copies and dtype casts: both are copy kernels in PyTorch */
    XS_KC_REDUCE,
    XS_KC_EMBED,
    XS_KC_LOSS,
    XS_KC_OPTIMIZER,
    XS_KC_COUNT
} xs_kclass;

const char *xs_kclass_name(int c);
/* The class of a CUDA kernel, from its name. */
int xs_kclass_of_kernel(const char *name);
/* The class of a predicted op. */
int xs_kclass_of_op(int op_kind);

typedef struct {
    size_t kernels[XS_KC_COUNT];   /* measured kernels per class */
    double measured_s[XS_KC_COUNT];
    double first_ts_us, last_end_us; /* span of the kernels in the trace */
    size_t total;
} xs_trace;

/* Read the GPU kernel events ("ph": "X", "cat": "kernel") of path. */
int xs_trace_load(const char *path, xs_trace *t, xs_error *err);

/* One xs_vrow per class present in the trace or the prediction (metric
 * "kernel_time_s:<class>") plus the whole step ("step_time_s": the kernels'
 * span); device and scenario name the prediction. The caller frees *rows. */
int xs_trace_rows(const xs_trace *t, const char *trace_path, const xs_device *dev,
                  const char *scenario, const char *set, const xs_workload *wl,
                  const xs_prediction *p, xs_vrow **rows, size_t *n, xs_error *err);

#endif
