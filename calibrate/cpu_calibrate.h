/* cpu_calibrate.h — `xpusim calibrate --backend cpu`: run the CPU
 * microbenchmarks (fork/join, in-core peaks, triad bandwidth through the
 * cache levels at 1..N threads, fp32 and bf16 GEMM sweeps, every layer and
 * optimizer kernel), fit the CPU model's parameters by least squares (GSL)
 * and write a device file of class "cpu" with the fits' residuals and
 * parameter uncertainties, plus the raw measurements as CSV. Both files are
 * written to a temporary name and renamed. */
#ifndef XS_CAL_CPU_CALIBRATE_H
#define XS_CAL_CPU_CALIBRATE_H

#include "backends.h"
#include "error.h"

int xs_cpu_calibrate(const xs_cal_run_opts *o, xs_error *err);

/* The CPU backend's host checks (backends.h): AVX-512 by CPUID; the same
 * CPU model (brand string) as the one dev was calibrated on. */
int xs_cpu_host_check(xs_error *err);

/* The kernel set the CPU kernels run here ("avx2", ...; cpu_features.h),
 * NULL in a build without them. */
const char *xs_cpu_kernel_set(void);
int xs_cpu_same_host(const xs_device *dev, char *why, size_t size);

/* 1 when (m, n, k) is one of the GEMM shapes the fits use, so the check
 * can show that its shapes are new to the model. */
int xs_cpu_cal_gemm_shape_used(long long m, long long n, long long k);

#endif
