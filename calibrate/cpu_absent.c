/* cpu_absent.c — the CPU calibration backend of a build without the CPU
 * kernels (make CPU_KERNELS=0, the default on architectures the kernels
 * have no tested path for): every entry point says so, before anything
 * is opened or measured. Built instead of cpu_calibrate.c, cpu_check.c and
 * cpu_runners.c. */
#include "cpu_calibrate.h"
#include "cpu_check.h"

static int absent(xs_error *err)
{
    return xs_error_set(err, XS_ENOHW,
                        "--backend cpu: this xpusim was built without the CPU kernels "
                        "(make CPU_KERNELS=0, the default where the compiler targets neither "
                        "x86-64 nor aarch64); rebuild with CPU_KERNELS=1 to run them");
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
