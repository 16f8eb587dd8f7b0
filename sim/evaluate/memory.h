/* memory.h — will it fit? The peak device memory of one training step, by
 * part, against what the device offers.
 *
 * The workload states what each op holds (xs_op_mem: the tensors autograd
 * keeps for the backward, transient outputs, when kept tensors and weight
 * gradients come and go); this module adds what lives across the step
 * (weights, master copies, optimizer state, gradients that persist) and
 * what the framework and the driver take besides (a CUDA context, the
 * cuBLAS workspace, the caching allocator's slack), walks the step op by op
 * and reports the parts at the moment of the peak. */
#ifndef XS_MEMORY_H
#define XS_MEMORY_H

#include "device.h"
#include "error.h"
#include "scenario.h"
#include "workload.h"

/* All in bytes. */
typedef struct {
    /* the parts at the peak */
    double weights;       /* the model's parameters as the layers read them, and
                             fp32 master copies (apex O2) */
    double grads;         /* weight gradients alive at the peak (master gradients too) */
    double optimizer;     /* optimizer state */
    double activations;   /* tensors kept for the backward, alive at the peak */
    double transient;     /* outputs alive only while their consumer runs */
    double fragmentation; /* the caching allocator's reserved but unused bytes */
    double workspace;     /* outside the tensors: the framework's CUDA context,
                             the cuBLAS workspace */
    double context;       /* of which the CUDA context: outside PyTorch's
                             allocator, so not in torch.cuda.max_memory_allocated */
    double total;         /* the sum: the device memory the step needs */
    double capacity;      /* what the device offers to it */
    int fits;             /* total <= capacity */
    /* where the peak is: the op (its name and phase) while it runs */
    char peak_op[48];
    int peak_phase;
    /* the largest of each part over the whole step, for the curious */
    double activations_max;
} xs_memory;

/* The peak of one step of wl (built from s) on dev. */
int xs_memory_predict(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                      xs_memory *m, xs_error *err);

/* 2^30: every memory figure xpusim prints is in GiB ("GB" in the output,
 * as nvidia-smi's MiB and torch's byte counts divided by 2^30 are). */
#define XS_GIB 1073741824.0

#endif
