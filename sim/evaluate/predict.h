/* predict.h — evaluates a workload on a device: one estimate per op, then
 * the step, the run, energy, dollars and model FLOPs utilization. */
#ifndef XS_PREDICT_H
#define XS_PREDICT_H

#include "comm.h"
#include "device.h"
#include "error.h"
#include "memory.h"
#include "op.h"
#include "scenario.h"
#include "workload.h"

typedef struct {
    xs_estimate *est; /* one per op, owned; free with xs_prediction_free */
    /* one optimizer step, per device */
    double step_time_s, step_energy_j, step_flops, matmul_flops;
    double device_time_s; /* sum of the kernels' times */
    double matmul_time_s; /* of which GEMM, batched GEMM and fused attention */
    double host_wait_s;   /* device idle, waiting for the host (syncs, launches) */
    xs_host host;         /* the host model the timeline ran with (async devices) */
    xs_host_costs host_costs; /* its prices a launch (what reports show of it) */
    double host_issue_s;  /* host time to issue the step's kernels, all of them */
    double phase_time_s[XS_PHASE_COUNT];
    double bound_time_s[XS_BOUND_COUNT];
    double samples_per_s, tokens_per_s; /* all devices */
    /* The matmuls: the format the workload asks them in, the format and
     * engine they really run in on this device, at what clock; MFU is their
     * FLOP/s over the quoted peak of that engine. */
    xs_dtype matmul_asked, matmul_engine;
    int matmul_tensor;   /* 1: the matrix engine; 0: the fp32 vector units */
    double matmul_clock_mhz;
    double mfu;
    double peak_flops;   /* that peak */
    double avg_power_w;
    /* the power limit in effect (W) and the clock it left, as a factor of
     * the device's clock at its default limit (power.h) */
    double power_limit_w, clock_scale;
    /* the whole run */
    int64_t steps;
    double run_time_s, run_energy_kwh, run_cost_usd;
    int64_t devices;
    /* uncertainty band: the same step on the device's slow and fast
     * corners (xs_dev_corner); filled by xs_predict_band, else 0 */
    double step_time_low_s, step_time_high_s;
    double samples_per_s_low, samples_per_s_high;
    double run_cost_low_usd, run_cost_high_usd;
    double avg_power_low_w, avg_power_high_w; /* the lower and higher of the corners' */
    /* the step's peak device memory and whether it fits (memory.h): a
     * prediction of a step that cannot start still has its time; the
     * caller decides what a run that does not fit is worth */
    xs_memory mem;
    /* data parallel (cluster.devices > 1, comm.h): the topology; per step,
     * every collective's time on the comm stream (comm_s), the part of the
     * backward's collectives that runs after the backward's last kernel
     * (exposed_tail_s) plus the collectives nothing overlaps (ZeRO's weight
     * all-gather, serial_s), how much longer the overlapped compute runs
     * for sharing the GPU with them (contention_s); the algorithm NCCL's
     * tuner picks for the largest bucket; and the same step on one device:
     * its samples/s, the scaling efficiency (job samples/s over devices x
     * that) and its peak memory. All 0 for one device. */
    xs_topo topo;
    double comm_s, exposed_tail_s, serial_s, contention_s;
    int comm_algo;
    double single_samples_per_s, scaling_efficiency, single_mem_total;
    /* what the device class says about the step as a whole (a compiled
     * step's fusions and padding); empty for most classes */
    char note[320];
} xs_prediction;

/* Predict wl (built from s) on dev. A power limit s sets
 * (device.power_limit_w) is checked against dev's range and applied: the
 * step runs at the highest clock whose average power fits it (power.h). */
int xs_predict(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
               xs_prediction *p, xs_error *err);
void xs_prediction_free(xs_prediction *p);

/* The run of a step already predicted (p, from xs_predict on dev) over
 * `steps` steps of s: p's steps, run time, energy and cost as xs_predict
 * works them out from its step, checked as it checks them. For callers
 * that predict one step for many runs (a sweep over data.samples). */
int xs_predict_rerun(const xs_device *dev, const xs_scenario *s, int64_t steps, xs_prediction *p,
                     xs_error *err);
/* The same for the band's run costs (p from xs_predict_band, its steps
 * set). */
void xs_predict_band_rerun(const xs_device *dev, const xs_scenario *s, xs_prediction *p);

/* Fill p's band fields by predicting s on dev's slow and fast corners, at
 * the power limit and clock scale of p (xs_predict's result). */
int xs_predict_band(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                    xs_prediction *p, xs_error *err);

#endif
