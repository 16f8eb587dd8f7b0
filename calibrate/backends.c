/* backends.c — the table of calibration backends. */
#include "backends.h"

#include <string.h>

#include "cpu_calibrate.h"
#include "cpu_check.h"
#include "cuda_calibrate.h"
#include "cuda_check.h"
#include "trace_calibrate.h"

static const xs_cal_backend CPU = {
    .name = "cpu",
    .device_class = "cpu",
    .summary = "this host's CPU cores",
    .default_out = "host-cpu.json",
    .calibrate_doc =
        "Runs real kernels on this host and fits the CPU cost model to them, writing a\n"
        "device file (class cpu) that predict, compare, gemm and validate accept like\n"
        "the datasheet devices. Measured: fork/join cost, in-core FMA peak (and AMX's),\n"
        "STREAM-triad bandwidth from inside L2 to past the last-level cache at\n"
        "1..N threads, fp32 and bf16 GEMM sweeps over odd and skinny shapes (all cores\n"
        "and one), and every layer and optimizer kernel of the BERT step inside L2.\n"
        "Fitted by weighted least squares (GSL): per-level bandwidths, GEMM mainloop\n"
        "efficiency, per-block and per-call costs and packing rates, each kernel's time\n"
        "per element and per call; the file records each parameter's standard\n"
        "deviation and each fit's residuals, the host, date, command and kernel\n"
        "versions. The full run takes about 30 s on a 2-core host (--quick: about 8 s),\n"
        "longer with more cores and larger caches; the host should be otherwise idle.\n"
        "It checks that it is: a reference kernel (the FMA peak) is timed on all\n"
        "threads and on one before the run and after it; spread past 10%, all threads\n"
        "below 0.8 of one's pace (a thread lost its core), a change past 10% across\n"
        "the run, or the run's measurements spreading past 10% in the median mean\n"
        "other work shares the cores. It probes three times (1 s, 2 s apart), runs a\n"
        "disturbed calibration once more, and otherwise refuses (exit 3) with how noisy\n"
        "and what to do, writing no device file; --threads 1 often passes where all\n"
        "cores do not. The figures go in the file (calibration.host_noise).\n"
        "Runs the best kernel set this CPU has (x86-64: amx-bf16, avx512-bf16, avx512,\n"
        "avx2, portable; aarch64: neon, portable), or the one XS_CPU_ISA=SET caps it\n"
        "at, and records it (compute.isa); without a bf16 unit, bf16 GEMMs run on the\n"
        "fp32 kernel and are modelled so. validate refuses a file of another kernel set.\n",
    .check_doc =
        "With --backend cpu, DEVICE is a calibrated CPU (xpusim calibrate --backend cpu):\n"
        "a real fine-tuning step of a small BERT encoder runs here (fp32, then bf16\n"
        "matmuls; forward, loss, backward, fused Adan) and every kernel call is timed\n"
        "and predicted: one row per kernel name (metric time_s, its calls in one step\n"
        "summed; scenario bert-cpu-fp32|bf16), one per step (metric step_time_s), and one\n"
        "per single kernel at shapes and sizes the calibration never used (scenario '-').\n"
        "Measured values are medians over steps or repetitions; measured_iqr_pct is\n"
        "their inter-quartile range. --quick: a smaller model and fewer kernels.\n"
        "Before anything runs, the fp32 FMA peak and the DRAM triad bandwidth of the\n"
        "device's cores are measured again and printed next to the file's (stderr,\n"
        "'this host now:'; JSON host_state); when either moved by more than 15% (a VM\n"
        "moved or sharing its cores), the report ends with a note saying so: its errors\n"
        "then hold that change as well as the model's (under --allow-other-host a change\n"
        "is expected: no note). A file that records a CPU signature (CPUID\n"
        "vendor, family, model, stepping) is refused on a CPU of another one.\n"
        "A busy host is refused as calibrate refuses it (exit 3, no report; the\n"
        "reference kernel's figures in JSON host_noise), a disturbed check run once more.\n",
    .host_check = xs_cpu_host_check,
    .same_host = xs_cpu_same_host,
    .calibrate = xs_cpu_calibrate,
    .check = xs_cpu_check,
};

/* A trace is read, not run: any host can calibrate from one. */
static int trace_host_check(xs_error *err)
{
    (void)err;
    return XS_OK;
}

static int trace_same_host(const xs_device *dev, char *why, size_t size)
{
    (void)dev;
    (void)why;
    (void)size;
    return 1;
}

/* A trace calibration has no kernel to run here; it is judged on runs of
 * the same board the trace did not record. */
static int trace_check(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows,
                       size_t *n, xs_error *err)
{
    (void)o;
    *rows = NULL;
    *n = 0;
    return xs_error_set(err, XS_EARG,
                        "validate --backend trace: a trace calibration runs no kernel here; "
                        "check %s on other runs of that board: xpusim validate --measured "
                        "RUNS.csv (device column: the file's path) or validate --trace "
                        "OTHER.json -d FILE -s SCENARIO",
                        dev->id);
}

static const xs_cal_backend TRACE = {
    .name = "trace",
    .device_class = "gpu",
    .summary = "a GPU, from a torch.profiler trace of one run",
    .default_out = "DEVICE-cal.json",
    .calibrate_doc =
        "Reads a PyTorch profiler trace (--trace T.json, export_chrome_trace) of SCENARIO\n"
        "(-s, --set) training on the GPU of device file DEVICE (-d), and writes DEVICE's\n"
        "file with per-class time factors (model.class_time_factor.CLASS): for each kernel\n"
        "class (gemm, softmax, norm, elementwise, copy, reduce, embed, loss, optimizer,\n"
        "attention, comm), one least-squares multiplier (GSL) of the class's kernel time\n"
        "in each traced step over the model's predicted kernel bodies (launch cost left\n"
        "out: a trace times bodies). The file's \"calibration\" object records each fit\n"
        "with its sd, n, residuals, the traced and predicted time and kernel count and\n"
        "the FLOP/s and bytes/s the traced kernels reached on the model's work. Where\n"
        "the trace recorded shapes (record_shapes=True: aten::mm/addmm/bmm Input Dims),\n"
        "the GEMMs are also fitted shape by shape (calibration.classes.gemm.per_shape,\n"
        "reported with each shape's residual, not applied). A trace\n"
        "of another GPU (deviceProperties), with no GPU kernel the model costs, whose\n"
        "class times are outside 0.1..10x the prediction, or whose recorded GEMM shapes\n"
        "are none of the scenario's (another batch, sequence length or model) is\n"
        "refused; a trace without shapes of another batch can pass: give the --set it\n"
        "ran with. Default -o: <DEVICE id>-cal.json.\n"
        "--simulate-trace T.json writes, instead, the model's own kernel timeline of\n"
        "SCENARIO on DEVICE as such a trace: kernel bodies scaled so that the step takes\n"
        "--step-s S (or batch / --samples-per-s R, a measured rate), each class slowed by\n"
        "--class-factor CLASS=X (for tests), --steps N steps; see calibrate/README.md\n"
        "for what a simulated trace can and cannot show.\n",
    .check_doc =
        "With --backend trace: nothing runs here; a trace-calibrated file is checked\n"
        "with --measured (runs of the same board at other batch sizes and precisions,\n"
        "its path in the device column) or --trace with another trace.\n",
    .host_check = trace_host_check,
    .same_host = trace_same_host,
    .calibrate = xs_trace_calibrate,
    .check = trace_check,
};

static const xs_cal_backend CUDA = {
    .name = "cuda",
    .device_class = "gpu",
    .summary = "an NVIDIA GPU, through libxscuda.so and NVML",
    .default_out = "host-gpu.json",
    .calibrate_doc =
        "Runs the GPU microbenchmarks of libxscuda.so (build/cuda/, built by make where nvcc\n"
        "is found; XS_CUDA_LIB overrides) on GPU --device-index N (default 0): the launch\n"
        "cost, copy and triad from a quarter of L2 to 8x past it, a cuBLAS GEMM sweep in\n"
        "fp32, tf32, fp16 and bf16 over BERT shapes and shapes around the base file's tile\n"
        "and wave boundaries (and skinny n), the own tensor-core GEMM, layernorm and softmax\n"
        "at BERT widths, fused and eager Adan and fused AdamW; then, with NVML sampling\n"
        "power, clocks, temperature and throttle reasons every 15 ms (libnvidia-ml.so.1;\n"
        "XS_NVML_LIB overrides), the board idle, a sustained copy and a sustained dense\n"
        "GEMM. CUDA events time each repetition, L2 flushed before each (arrays inside L2\n"
        "left warm). Fitted from the rows alone, starting from --base DEVICE (default:\n"
        "the shipped file the GPU's name maps to): model.kernel_launch_us,\n"
        "model.mem_bw_efficiency (and its band), model.gemm_efficiency (the GEMM model\n"
        "reproducing the sweep; the band spans the per-dtype fits),\n"
        "compute.clock_sustained_mhz (NVML, under the GEMM), power.idle_w and\n"
        "power.memory_frac, and model.class_time_factor for norm, softmax and optimizer;\n"
        "the calibration object holds each fit's sd, n and residuals, pJ per FLOP and per\n"
        "byte, and the provenance (GPU, PCI id, driver, runtime, clocks, throttle reasons,\n"
        "power limit, date, command). --from-measurements FILE.csv fits a recorded run\n"
        "instead, with no GPU and no library loaded. About 2 minutes (--quick: 1).\n",
    .check_doc =
        "With --backend cuda, DEVICE is a gpu device file (calibrated or a datasheet one):\n"
        "cuBLAS GEMMs at shapes outside the calibration's sweep (the set says\n"
        "shape_not_in_sweep), copy and triad at 3, 6 and 12 x L2, layernorm and softmax at\n"
        "other widths and fused/eager Adan and fused AdamW over 50M parameters run on this\n"
        "GPU, each predicted with DEVICE's model (metric time_s, with measured_iqr_pct);\n"
        "and a sustained bf16 GEMM's energy from NVML against the energy model (metric\n"
        "energy_j). No GPU, no libxscuda.so or no NVML: one line, exit 3.\n",
    .host_check = xs_cuda_host_check,
    .same_host = xs_cuda_same_host,
    .calibrate = xs_cuda_calibrate,
    .check = xs_cuda_check,
};

static const xs_cal_backend *const BACKENDS[] = {&CPU, &TRACE, &CUDA};
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
