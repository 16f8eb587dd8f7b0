/* cpu_absent.c — the CPU calibration backend of a build without the CPU
 * kernels (make CPU_KERNELS=0, the default on architectures the kernels
 * have no tested path for): every entry point says so, before anything
 * is opened or measured. Built instead of cpu_calibrate.c, cpu_check.c,
 * cpu_runners.c and the thread sweeps and runs of `xpusim threads`
 * (cpu_threads_cal.c, cpu_threads_run.c). */
#include "cpu_calibrate.h"
#include "cpu_check.h"
#include "cpu_features.h"
#include "threads_cal.h"
#include "threads_run.h"

static int absent(xs_error *err)
{
    return xs_error_set(err, XS_ENOHW,
                        "--backend cpu: this xpusim was built without the CPU kernels "
                        "(make CPU_KERNELS=0, the default where the compiler targets neither "
                        "x86-64 nor aarch64); rebuild with CPU_KERNELS=1 to run them");
}

/* The host as a build without the kernels sees it: no CPUID read (what
 * `xpusim threads -d host` compares a device file's CPU with) */
const xs_cpu_features *xs_cpu_features_get(void)
{
    static const xs_cpu_features none = {.isa = XS_ISA_PORTABLE,
                                         .cores = 1,
                                         .model = "unknown (built without the CPU kernels)"};
    return &none;
}

int xs_cpu_host_check(xs_error *err)
{
    return absent(err);
}

const char *xs_cpu_kernel_set(void)
{
    return NULL;
}

int xs_cpu_same_host(const xs_device *dev, char *why, size_t size)
{
    (void)dev;
    (void)why;
    (void)size;
    return 1; /* nothing to compare: host_check says why nothing runs */
}

int xs_cpu_calibrate(const xs_cal_run_opts *o, xs_error *err)
{
    (void)o;
    return absent(err);
}

int xs_cpu_check(const xs_device *dev, const xs_cal_check_opts *o, xs_vrow **rows, size_t *n,
                 xs_error *err)
{
    (void)dev;
    (void)o;
    *rows = NULL;
    *n = 0;
    return absent(err);
}

int xs_cpu_cal_gemm_shape_used(long long m, long long n, long long k)
{
    (void)m;
    (void)n;
    (void)k;
    return 0;
}

int xs_thr_calibrate(xs_device *dev, int quick, xs_meas_list *ms, FILE *log, xs_thr_cal *out,
                     xs_error *err)
{
    (void)dev;
    (void)quick;
    (void)ms;
    (void)log;
    (void)out;
    return absent(err);
}

int xs_thr_cal_notes(cJSON *notes, const xs_thr_cal *r)
{
    (void)notes;
    (void)r;
    return -1;
}

int xs_thr_calibrate_file(const char *path, const char *measurements, int quick, int force,
                          FILE *log, xs_error *err)
{
    (void)path;
    (void)measurements;
    (void)quick;
    (void)force;
    (void)log;
    return absent(err);
}

int xs_thr_run_lstm(const xs_inf_scenario *s, const xs_thr_plan *p, int quick,
                    const char *save_dir, FILE *log, xs_thr_measured *out, xs_error *err)
{
    (void)s;
    (void)p;
    (void)quick;
    (void)save_dir;
    (void)log;
    (void)out;
    return absent(err);
}

void xs_thr_measured_free(xs_thr_measured *m)
{
    (void)m;
}
