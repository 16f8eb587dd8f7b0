/* trace.h — compares a measured PyTorch profiler trace (the Chrome trace
 * JSON that torch.profiler's export_chrome_trace writes) with the predicted
 * op list of the same scenario on the same device. The trace is split into
 * its training steps (the "ProfilerStep#N" spans that prof.step() opens,
 * as the documented schedule(wait, warmup, active) idiom records them);
 * each GPU kernel, copy and fill is given to the step that launched it and
 * classified by name (kernel_class.h); the measured figures are medians
 * over the steps, compared class by class with one predicted step. */
#ifndef XS_TRACE_H
#define XS_TRACE_H

#include <stddef.h>

#include "device.h"
#include "error.h"
#include "kernel_class.h"
#include "predict.h"
#include "validate.h"
#include "workload.h"

/* How a GPU event was given to its step. */
typedef enum {
    XS_TA_LAUNCH,   /* its correlation id names the runtime call (cudaLaunchKernel,
                       cudaMemcpyAsync, ...) that launched it inside the step's
                       host span */
    XS_TA_GPU_SPAN, /* it ran inside the step's GPU-side span (gpu_user_annotation) */
    XS_TA_TIME,     /* no launch found: the last step whose host span began
                       before it started */
    XS_TA_WHOLE,    /* the trace has no ProfilerStep spans: one step */
    XS_TA_COUNT
} xs_trace_assign;

/* One training step of a trace. */
typedef struct {
    int number;                    /* N of ProfilerStep#N; -1 without steps */
    double host_us;                /* its host span's length; < 0: none recorded */
    double first_us, last_end_us;  /* its GPU activity: first start, last end */
    size_t events[XS_KC_COUNT];    /* GPU events per class */
    double time_s[XS_KC_COUNT];    /* their summed durations */
} xs_trace_step;

/* A kernel name no rule of kernel_class.c knows, with its time. */
typedef struct {
    char name[120]; /* cut to fit, with "..." */
    size_t events;
    double time_s;  /* over every step */
} xs_trace_unknown;

/* One GEMM shape of the trace: the GEMM-class kernels launched inside an
 * aten::mm / addmm / bmm / baddbmm op whose "Input Dims" the profiler
 * recorded (record_shapes=True). C[m x n] = A[m x k] B[k x n], batch
 * of them; m <= n (a GEMM and its transpose are the same work, and cuBLAS
 * runs either as the other). */
typedef struct {
    int64_t m, n, k, batch;
    size_t events;  /* kernels, over every step */
    double time_s;  /* their summed durations, over every step */
} xs_trace_shape;

typedef struct {
    xs_trace_step *steps;  /* owned (xs_trace_free): the steps with GPU activity */
    size_t nsteps;
    int has_steps;         /* the trace holds ProfilerStep spans */
    size_t empty_steps;    /* ProfilerStep spans without GPU activity (left out) */
    size_t assigned[XS_TA_COUNT]; /* GPU events by how their step was found */
    size_t outside;        /* GPU events no step claims (before the first step,
                              launched between steps): left out */
    double outside_s;
    size_t total;          /* GPU events read (kernels, copies, fills) */
    /* Per step: the median over the steps (a class a step lacks counts 0
     * there), and 100 x inter-quartile range / median (< 0 below 2 steps). */
    double measured_s[XS_KC_COUNT];
    double events[XS_KC_COUNT];
    double spread_pct[XS_KC_COUNT];
    size_t seen[XS_KC_COUNT];      /* GPU events of the class in all steps */
    double step_s, step_spread_pct;
    int step_is_host;      /* step_s is the host span (1) or the GPU activity's span (0) */
    double gpu_s;          /* median per step of all GPU events' durations */
    double events_per_step;
    xs_trace_unknown unknown[3]; /* the largest XS_KC_OTHER names */
    size_t nunknown;
    char gpu_name[96];     /* deviceProperties name of the GPU the kernels ran
                              on; "" when the trace does not say */
    xs_trace_shape *shapes; /* owned: the GEMM shapes of the steps' kernels */
    size_t nshapes;
    /* GEMM-class kernels of the steps without a recorded shape (no GEMM op
     * with Input Dims around their launch), over every step */
    size_t gemm_unshaped;
    double gemm_unshaped_s;
} xs_trace;

/* Read path's GPU activity ("ph": "X" events of cat kernel, gpu_memcpy,
 * gpu_memset), its ProfilerStep spans (cat user_annotation / cpu_op on the
 * host, gpu_user_annotation on the GPU), the runtime calls that launched
 * them (cat cuda_runtime / cuda_driver, args.correlation), the GEMM ops
 * that hold the launches of GEMM kernels (cat cpu_op, aten::mm, addmm,
 * bmm, baddbmm with args "Input Dims"; their shapes in shapes[]) and the
 * GPU's name (deviceProperties[].name). Fills *t; on error nothing is left to
 * free. Free with xs_trace_free. */
int xs_trace_load(const char *path, xs_trace *t, xs_error *err);
void xs_trace_free(xs_trace *t);

/* 1 when a CUDA device name (a trace's deviceProperties) and a device
 * file's "name" name the same board: spacing, dashes, case and the vendor
 * words do not matter, the model number does; form factor (SXM, PCIe,
 * NVL) and memory size count when both names state them, a CUDA name
 * without a form factor being the SXM board ("NVIDIA H100 80GB HBM3",
 * "NVIDIA H200"). */
int xs_gpu_name_matches(const char *cuda_name, const char *device_name);

/* One xs_vrow per class (but other) present in the trace or in the
 * prediction (metric "kernel_time_s:<class>": median over the steps of
 * the class's summed GPU time) plus the step ("step_time_s": the median
 * host span of the steps, or the GPU activity's span when the trace
 * records none); trace_steps, trace_events and trace_launches set. device
 * and scenario name the prediction. The caller frees *rows. */
int xs_trace_rows(const xs_trace *t, const char *trace_path, const xs_device *dev,
                  const char *scenario, const char *set, const xs_workload *wl,
                  const xs_prediction *p, xs_vrow **rows, size_t *n, xs_error *err);

#endif
