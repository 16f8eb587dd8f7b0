/* cpu_host_state.c — see cpu_host_state.h. */
#include "cpu_host_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu.h"
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

/* 16 bytes an element: the write-allocate read of a counted, as calibrate
 * counts it. A host short of memory for it still gets the FMA check. */
static void measure_dram(int cores, const xs_cal_opts *h, xs_cpu_host_state *s)
{
    double ws = xs_cpu_dram_set_bytes();
    size_t n = (size_t)(ws / 12) / 16 * 16;
    xs_triad t = {aligned_alloc(64, n * 4), aligned_alloc(64, n * 4), aligned_alloc(64, n * 4),
                  n, cores};
    s->dram_set_mb = 12.0 * (double)n / 1048576;
    if (t.a && t.b && t.c) {
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
}

void xs_cpu_host_state_measure(const xs_device *dev, int quick, xs_cpu_host_state *s)
{
    int cores = (int)xs_cpu_of(dev)->cores;
    *s = (xs_cpu_host_state){.cores = cores,
                             .file_fma_gflops_core = dev->peak_tflops[XS_FP32] * 1e3 / cores,
                             .file_dram_gbs = dev->mem_bw_gbs};
    xs_cal_opts h = xs_cal_default_opts();
    h.time_cap_s = quick ? 0.15 : 0.5;
    measure_fma(cores, quick, &h, s);
    measure_dram(cores, &h, s);
}

/* The change in whole percent, never "-0" */
static double change_pct(double now, double file)
{
    double p = file > 0 && now > 0 ? round(100 * (now / file - 1)) : 0;
    return p == 0 ? 0 : p;
}

void xs_cpu_host_state_text(const xs_cpu_host_state *s, char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     "fp32 FMA peak %.0f GFLOP/s a core (device file %.0f, %+.0f%%; IQR %.0f%%), ",
                     s->fma_gflops_core, s->file_fma_gflops_core,
                     change_pct(s->fma_gflops_core, s->file_fma_gflops_core),
                     100 * s->fma_rel_iqr);
    if (n < 0 || (size_t)n >= size)
        return;
    if (s->dram_gbs > 0)
        snprintf(buf + n, size - (size_t)n,
                 "DRAM triad on %d cores %.1f GB/s (device file %.1f, %+.0f%%; IQR %.0f%%)",
                 s->cores, s->dram_gbs, s->file_dram_gbs,
                 change_pct(s->dram_gbs, s->file_dram_gbs), 100 * s->dram_rel_iqr);
    else
        snprintf(buf + n, size - (size_t)n,
                 "DRAM triad not measured (no memory for its %.0f MB)", s->dram_set_mb);
}

int xs_cpu_host_state_moved(const xs_cpu_host_state *s, char *buf, size_t size)
{
    double f = change_pct(s->fma_gflops_core, s->file_fma_gflops_core);
    double d = change_pct(s->dram_gbs, s->file_dram_gbs);
    int moved_f = fabs(f) > 100 * XS_CPU_HOST_DRIFT, moved_d = fabs(d) > 100 * XS_CPU_HOST_DRIFT;
    if (moved_f && moved_d)
        snprintf(buf, size, "FMA peak %+.0f%% and DRAM bandwidth %+.0f%%", f, d);
    else if (moved_f)
        snprintf(buf, size, "FMA peak %+.0f%%", f);
    else if (moved_d)
        snprintf(buf, size, "DRAM bandwidth %+.0f%%", d);
    else if (size)
        buf[0] = '\0';
    return moved_f || moved_d;
}

int xs_cpu_host_state_drift(const char *device_id, const xs_cpu_host_state *s, char *buf,
                            size_t size)
{
    char what[96];
    if (!xs_cpu_host_state_moved(s, what, sizeof what)) {
        if (size)
            buf[0] = '\0';
        return 0;
    }
    snprintf(buf, size,
             "just before the check this host measured %s against %s's figures: the errors "
             "measure that change as well as the model; run validate again, and if the change "
             "stays, calibrate this host again",
             what, device_id);
    return 1;
}

cJSON *xs_cpu_host_state_json(const xs_cpu_host_state *s)
{
    cJSON *o = cJSON_CreateObject();
    char what[96];
    int measured = s->dram_gbs > 0;
    /* dram_gbs null, and no change or spread, when the triad found no memory */
    int ok = o && cJSON_AddNumberToObject(o, "cores", s->cores) &&
             cJSON_AddNumberToObject(o, "fma_gflops_core", s->fma_gflops_core) &&
             cJSON_AddNumberToObject(o, "device_fma_gflops_core", s->file_fma_gflops_core) &&
             cJSON_AddNumberToObject(o, "fma_change_pct",
                                     change_pct(s->fma_gflops_core, s->file_fma_gflops_core)) &&
             cJSON_AddNumberToObject(o, "fma_rel_iqr_pct", 100 * s->fma_rel_iqr) &&
             cJSON_AddNumberToObject(o, "dram_working_set_mb", s->dram_set_mb) &&
             (measured ? cJSON_AddNumberToObject(o, "dram_gbs", s->dram_gbs) != NULL
                       : cJSON_AddNullToObject(o, "dram_gbs") != NULL) &&
             cJSON_AddNumberToObject(o, "device_dram_gbs", s->file_dram_gbs) &&
             (!measured || (cJSON_AddNumberToObject(o, "dram_change_pct",
                                                    change_pct(s->dram_gbs, s->file_dram_gbs)) &&
                            cJSON_AddNumberToObject(o, "dram_rel_iqr_pct",
                                                    100 * s->dram_rel_iqr))) &&
             cJSON_AddNumberToObject(o, "threshold_pct", 100 * XS_CPU_HOST_DRIFT) &&
             cJSON_AddBoolToObject(o, "moved", xs_cpu_host_state_moved(s, what, sizeof what));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
