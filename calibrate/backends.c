/* backends.c — the table of calibration backends. */
#include "backends.h"

#include <string.h>

#include "cpu_calibrate.h"
#include "cpu_check.h"

static const xs_cal_backend CPU = {
    .name = "cpu",
    .device_class = "cpu",
    .summary = "this host's CPU cores",
    .default_out = "host-cpu.json",
    .calibrate_doc =
        "Runs real kernels on this host and fits the CPU cost model to them, writing a\n"
        "device file (class cpu) that predict, compare, gemm and validate accept like\n"
        "the datasheet devices. Measured: fork/join cost, in-core AVX-512 FMA and AMX\n"
        "peaks, STREAM-triad bandwidth from inside L2 to past the last-level cache at\n"
        "1..N threads, fp32 and bf16 GEMM sweeps over odd and skinny shapes (all cores\n"
        "and one), and every layer and optimizer kernel of the BERT step inside L2.\n"
        "Fitted by weighted least squares (GSL): per-level bandwidths, GEMM mainloop\n"
        "efficiency, per-block and per-call costs and packing rates, each kernel's time\n"
        "per element and per call; the file records each parameter's standard\n"
        "deviation and each fit's residuals, the host, date, command and kernel\n"
        "versions. The full run takes about 30 s on a 2-core host (--quick: about 8 s),\n"
        "longer with more cores and larger caches; the host should be otherwise idle.\n"
        "Needs x86-64 with AVX-512 (checked by CPUID before anything runs).\n",
    .check_doc =
        "With --backend cpu, DEVICE is a calibrated CPU (xpusim calibrate --backend cpu):\n"
        "a real fine-tuning step of a small BERT encoder runs here (fp32, then bf16\n"
        "matmuls; forward, loss, backward, fused Adan) and every kernel call is timed\n"
        "and predicted: one row per kernel name (metric time_s, its calls in one step\n"
        "summed; scenario bert-cpu-fp32|bf16), one per step (metric step_time_s), and one\n"
        "per single kernel at shapes and sizes the calibration never used (scenario '-').\n"
        "Measured values are medians over steps or repetitions; measured_iqr_pct is\n"
        "their inter-quartile range. --quick: a smaller model and fewer kernels.\n",
    .host_check = xs_cpu_host_check,
    .same_host = xs_cpu_same_host,
    .calibrate = xs_cpu_calibrate,
    .check = xs_cpu_check,
};

static const xs_cal_backend *const BACKENDS[] = {&CPU};
#define NBACKENDS ((int)(sizeof BACKENDS / sizeof BACKENDS[0]))

const xs_cal_backend *xs_cal_backend_at(int i)
{
    return i >= 0 && i < NBACKENDS ? BACKENDS[i] : NULL;
}

const xs_cal_backend *xs_cal_backend_find(const char *name)
{
    for (int i = 0; i < NBACKENDS; i++)
        if (strcmp(BACKENDS[i]->name, name) == 0)
            return BACKENDS[i];
    return NULL;
}
