/* cpu_host_state.c — see cpu_host_state.h. */
#include "cpu_host_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu_runners.h"
#include "harness.h"
#include "peak.h"

double xs_cpu_dram_set_bytes(void)
{
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double mem = pages > 0 && page > 0 ? (double)pages * (double)page : 4e9;
    double ws = fmax(256.0 * 1048576, 4 * fmax((double)(l3 > 0 ? l3 : 0), 64.0 * 1048576));
    return fmin(ws, fmin(2048.0 * 1048576, mem / 6)) * 1.001;
}

typedef struct {
    long iters;
    int threads;
    double flops;
} fma_ctx;

static void run_fma(void *p)
{
    fma_ctx *c = p;
    c->flops = xs_krn_peak_fma_f32(c->iters, c->threads);
}

static void measure_fma(int cores, int quick, const xs_cal_opts *h, xs_cpu_host_state *s)
{
    fma_ctx c = {quick ? 500000 : 2000000, cores, 0};
    run_fma(&c);
    xs_cal_kernel k = {"fma", 0, c.flops, run_fma, &c, NULL};
    xs_cal_result r;
    xs_cal_measure(&k, h, &r);
    s->fma_gflops_core = c.flops / r.median_s / cores / 1e9;
    s->fma_rel_iqr = r.rel_iqr;
}

/* calibrate's largest triad: 16 bytes an element (the write-allocate
 * read of a counted, as calibrate counts it) */
static int measure_dram(int cores, const xs_cal_opts *h, xs_cpu_host_state *s, xs_error *err)
{
    double ws = xs_cpu_dram_set_bytes();
    size_t n = (size_t)(ws / 12) / 16 * 16;
    xs_triad t = {aligned_alloc(64, n * 4), aligned_alloc(64, n * 4), aligned_alloc(64, n * 4),
                  n, cores};
    int rc = XS_OK;
    if (!t.a || !t.b || !t.c) {
        rc = xs_error_set(err, XS_ENOMEM,
                          "validate: cannot allocate %.0f MB for the DRAM bandwidth check",
                          ws / 1048576);
    } else {
        for (size_t i = 0; i < n; i++)
            t.a[i] = t.b[i] = t.c[i] = 1.0f + (float)(i % 7);
        xs_cal_kernel k = {"triad", 16.0 * (double)n, 2.0 * (double)n, xs_triad_run, &t, NULL};
        xs_cal_result r;
        xs_cal_measure(&k, h, &r);
        s->dram_gbs = k.bytes / r.median_s / 1e9;
        s->dram_rel_iqr = r.rel_iqr;
    }
    free(t.a);
    free(t.b);
    free(t.c);
    return rc;
}

int xs_cpu_host_state_measure(const xs_device *dev, int quick, xs_cpu_host_state *s,
                              xs_error *err)
{
    int cores = (int)dev->cpu.cores;
    s->cores = cores;
    s->file_fma_gflops_core = dev->peak_tflops[XS_FP32] * 1e3 / cores;
    s->file_dram_gbs = dev->mem_bw_gbs;
    xs_cal_opts h = xs_cal_default_opts();
    h.time_cap_s = quick ? 0.15 : 0.5;
    measure_fma(cores, quick, &h, s);
    return measure_dram(cores, &h, s, err);
}

static double change(double now, double file)
{
    return file > 0 ? now / file - 1 : 0;
}

void xs_cpu_host_state_text(const xs_cpu_host_state *s, char *buf, size_t size)
{
    snprintf(buf, size,
             "fp32 FMA peak %.0f GFLOP/s a core (device file %.0f, %+.0f%%; IQR %.0f%%), "
             "DRAM triad on %d cores %.1f GB/s (device file %.1f, %+.0f%%; IQR %.0f%%)",
             s->fma_gflops_core, s->file_fma_gflops_core,
             100 * change(s->fma_gflops_core, s->file_fma_gflops_core), 100 * s->fma_rel_iqr,
             s->cores, s->dram_gbs, s->file_dram_gbs, 100 * change(s->dram_gbs, s->file_dram_gbs),
             100 * s->dram_rel_iqr);
}

int xs_cpu_host_state_drift(const char *device_id, const xs_cpu_host_state *s, char *buf,
                            size_t size)
{
    double f = change(s->fma_gflops_core, s->file_fma_gflops_core);
    double d = change(s->dram_gbs, s->file_dram_gbs);
    int moved_f = fabs(f) > XS_CPU_HOST_DRIFT, moved_d = fabs(d) > XS_CPU_HOST_DRIFT;
    buf[0] = '\0';
    if (!moved_f && !moved_d)
        return 0;
    char what[96];
    if (moved_f && moved_d)
        snprintf(what, sizeof what, "its FMA peak by %+.0f%% and its DRAM bandwidth by %+.0f%%",
                 100 * f, 100 * d);
    else if (moved_f)
        snprintf(what, sizeof what, "its FMA peak by %+.0f%%", 100 * f);
    else
        snprintf(what, sizeof what, "its DRAM bandwidth by %+.0f%%", 100 * d);
    snprintf(buf, size,
             "this host is not in the state %s was calibrated in (%s, measured before the "
             "check): the errors measure that change as well as the model; calibrate this "
             "host again for the model's own error",
             device_id, what);
    return 1;
}
