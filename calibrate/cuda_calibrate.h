/* cuda_calibrate.h — `xpusim calibrate --backend cuda`: the GPU's
 * microbenchmarks through libxscuda.so (cuda_lib.h) with board power and
 * clocks from NVML (nvml.h), kept as a measurement CSV (cuda_meas.h); the
 * fit of a class-gpu device file to those rows alone (so a recorded file
 * fits the same way with no GPU, --from-measurements); and the pieces the
 * check (cuda_check.c) shares. */
#ifndef XS_CAL_CUDA_CALIBRATE_H
#define XS_CAL_CUDA_CALIBRATE_H

#include <stddef.h>

#include "backends.h"
#include "cuda_lib.h"
#include "cuda_meas.h"
#include "device.h"
#include "error.h"
#include "fit.h"
#include "kernel_class.h"

int xs_cuda_calibrate(const xs_cal_run_opts *o, xs_error *err);
/* libxscuda.so loads and a CUDA GPU answers the probe (XS_ENOHW if not). */
int xs_cuda_host_check(xs_error *err);
/* The probed GPU's name equals the file's calibration.gpu.name, or, for a
 * datasheet file, the name table (xs_cuda_base_for_name) gives its id; 1
 * when no GPU answers (there is nothing to compare: host_check reports it). */
int xs_cuda_same_host(const xs_device *dev, char *why, size_t size);

/* The shipped device id for a CUDA device name ("NVIDIA H100 80GB HBM3" ->
 * h100-sxm5-80gb), or NULL when the table holds none or the name is
 * ambiguous. */
const char *xs_cuda_base_for_name(const char *cuda_name);

/* The GEMM shapes the calibration sweeps on base (Transformer shapes and
 * shapes around its tile and wave boundaries), row-major m x n x k. */
typedef struct {
    long long m, n, k;
} xs_cuda_shape;
#define XS_CUDA_MAX_SHAPES 48
int xs_cuda_gemm_sweep(const xs_device *base, int quick, xs_cuda_shape *s);
/* 1 when (m, n, k) is one of the sweep's shapes (full run) on base. */
int xs_cuda_gemm_shape_used(const xs_device *base, long long m, long long n, long long k);

/* Median and quartiles of a job's repetitions into row. */
void xs_cuda_row_stats(const xs_cuda_result *res, xs_cmeas *row);

/* The model's time of a measured row on dev (its GEMM model, or the op(s)
 * the workload builds for that kernel): XS_OK, or an error. */
int xs_cuda_predict_row(const xs_device *dev, const xs_cmeas *row, double *time_s,
                        xs_error *err);

/* What the fit found. */
typedef struct {
    double launch_us, launch_sd;
    int launch_n;
    double mem_eff, mem_eff_sd, mem_eff_lo, mem_eff_hi;
    xs_fit mem_fit;
    double clock_mhz;
    int clock_n;
    double gemm_eff, gemm_eff_lo, gemm_eff_hi, gemm_dtype_eff[4];
    xs_fit gemm_fit, gemm_dtype_fit[4];
    double class_factor[XS_KC_COUNT];
    xs_fit class_fit[XS_KC_COUNT];
    double idle_w, memory_frac, compute_frac, dense_power_w, copy_power_w;
    double pj_per_flop, pj_per_byte;
    int energy_from_counter;
} xs_cuda_fit_result;

/* Fit base's model to the rows: dev becomes base with the fitted
 * parameters (id unchanged). Errors name the missing or out-of-range
 * measurement. */
int xs_cuda_fit(const xs_cmeas_list *l, const xs_device *base, xs_device *dev,
                xs_cuda_fit_result *f, xs_error *err);

#endif
