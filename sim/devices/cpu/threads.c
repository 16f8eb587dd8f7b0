/* threads.c — see threads.h. */
#include "threads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu.h"
#include "grow.h"

int xs_thr_device_ok(const xs_device *dev, xs_error *err)
{
    if (strcmp(xs_backend_of(dev)->name, "cpu") != 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "device %s is a %s: the thread model is the CPU's (give a CPU "
                            "device: -d host, or a file written by xpusim calibrate --backend "
                            "cpu)",
                            dev->id, xs_backend_of(dev)->name);
    if (!(xs_cpu_of(dev)->thr.region_us > 0))
        return xs_error_set(err, XS_EFIELD,
                            "device %s has no 'threads' section (parallel-region cost by thread "
                            "count, the LSTM kernel's rates): it was calibrated before the "
                            "thread sweeps; run `xpusim threads --calibrate -d FILE` on that "
                            "host, or calibrate it again",
                            dev->id);
    return XS_OK;
}

double xs_thr_region_s(const xs_device *dev, int threads)
{
    const xs_cpu_threads *t = &xs_cpu_of(dev)->thr;
    return (t->region_us + t->region_us_per_thread * (threads - 1)) * 1e-6;
}

int xs_thr_gemm_regions(const xs_device *dev)
{
    const char *isa = xs_cpu_of(dev)->isa;
    return strncmp(isa, "avx512", 6) == 0 || strcmp(isa, "amx-bf16") == 0 ? 3 : 2;
}

/* The recurrent step of kernels/cpu/lstm.c: work items of 8 hidden units,
 * a static schedule (the slowest thread has ceil(items / threads) of
 * them), each item B x 32 x H multiply-adds and B x 8 gate updates at the
 * fitted one-core rates (weights in L2). A thread's slice of the weights
 * stays in its L2 from step to step when it fits in half of it (the other
 * half: the hidden state, gates and what else passes); else the weights
 * stream from the level that holds them every step, and that time adds to
 * the arithmetic: the loop waits on each panel row it multiplies (the
 * calibration's check: at 1 thread, hidden 512, batch 8, the stream is
 * 4 MB an 0.8 ms step, and the overlapped max() fell 30% short). The bf16
 * step has its own fitted rates (the widening of each weight row, the
 * rounding of h) and weights of half the bytes. */
static void lstm_step(const xs_device *dev, const xs_thr_item *it, int threads, xs_estimate *est)
{
    const xs_cpu_params *c = xs_cpu_of(dev);
    int bf16 = it->op.dtype == XS_BF16;
    double B = (double)it->batch, H = (double)it->hidden, wb = bf16 ? 2 : 4;
    double items = ceil(H / 8), used = fmin(threads, items), per = ceil(items / used);
    double mac_ns = bf16 ? c->thr.lstm_bf16_ns_per_mac : c->thr.lstm_ns_per_mac;
    double gate_ns = bf16 ? c->thr.lstm_bf16_gate_ns : c->thr.lstm_gate_ns;
    double item_s = (B * 32 * H * mac_ns + B * 8 * gate_ns) * 1e-9;
    double weights = items * H * 32 * wb, slice = per * H * 32 * wb;
    est->compute_s = per * item_s;
    est->memory_s = slice <= c->l2_kb_per_core * 1024 / 2
                        ? 0
                        : weights / xs_cpu_level_bw(dev, weights, (int)used);
    est->overhead_s = xs_thr_region_s(dev, threads);
    est->engine = XS_FP32; /* bf16 weights are widened and multiplied in fp32 */
    est->tensor = 0;
    est->bound = est->compute_s >= est->memory_s ? XS_BOUND_COMPUTE : XS_BOUND_MEMORY;
    est->time_s = est->overhead_s + est->compute_s + est->memory_s;
}

int xs_thr_item_time(const xs_device *dev, const xs_thr_item *it, int threads, xs_estimate *est,
                     xs_error *err)
{
    int cores = (int)xs_cpu_of(dev)->cores;
    if (threads < 1 || threads > cores)
        return xs_error_set(err, XS_ERANGE, "device %s: threads must be in 1..%d, got %d",
                            dev->id, cores, threads);
    memset(est, 0, sizeof *est);
    if (it->kind == XS_THR_LSTM_STEP && it->op.dtype == XS_BF16 &&
        !(xs_cpu_of(dev)->thr.lstm_bf16_ns_per_mac > 0))
        return xs_error_set(err, XS_EFIELD,
                            "device %s has no bf16 LSTM rates (threads.lstm_bf16_ns_per_mac): "
                            "its thread sweep predates the bf16 kernel; run `xpusim threads "
                            "--calibrate -d FILE --force` on that host",
                            dev->id);
    if (it->kind == XS_THR_LSTM_STEP) {
        lstm_step(dev, it, threads, est);
        return XS_OK;
    }
    int used = it->par > 0 && it->par < threads ? (int)it->par : threads;
    int rc = xs_cpu_estimate(dev, &it->op, used, est, err);
    if (rc)
        return rc;
    /* the fitted per-call cost holds its regions at all cores: swap them
     * for regions at this count (the idle threads fork and join too). Where
     * the two separate fits leave less than those regions (the kernel's
     * fit below the empty-region sweep), the whole cost is taken as region
     * cost and scales as a region does: at all cores it stays the fitted. */
    int gemm = it->op.kind == XS_OP_GEMM || it->op.kind == XS_OP_BGEMM;
    double regions = (gemm ? xs_thr_gemm_regions(dev) : it->regions) *
                     (it->op.kind == XS_OP_BGEMM && it->op.batch > 0 ? (double)it->op.batch : 1);
    double fitted = est->overhead_s, at_all = regions * xs_thr_region_s(dev, cores);
    double own = fmax(fitted - at_all, 0);
    est->overhead_s = own + (fitted - own) * xs_thr_region_s(dev, threads) /
                                xs_thr_region_s(dev, cores);
    est->time_s += est->overhead_s - fitted;
    return XS_OK;
}

int xs_thr_counts(int cores, int *out, int max)
{
    int n = 0;
    for (int t = 1; t <= cores && n < max; t++)
        if (t <= 16 || (t <= 64 && t % 4 == 0) || t % 8 == 0 || t == cores)
            out[n++] = t;
    if (n == max && out[n - 1] != cores) /* cores always last */
        out[n - 1] = cores;
    return n;
}

int xs_thr_plan_make(const xs_device *dev, const xs_thr_work *w, xs_thr_plan *p, xs_error *err)
{
    memset(p, 0, sizeof *p);
    int rc = xs_thr_device_ok(dev, err);
    if (rc)
        return rc;
    int cores = (int)xs_cpu_of(dev)->cores;
    p->ncounts = xs_thr_counts(cores, p->counts, XS_THR_MAX_COUNTS);
    p->ngroups = w->ngroups;
    p->default_threads = cores;
    p->time = calloc((size_t)(p->ngroups * p->ncounts) + 1, sizeof *p->time);
    if (!p->time)
        return xs_error_set(err, XS_ENOMEM, "out of memory planning %s", w->id);
    for (size_t i = 0; i < w->n; i++) {
        const xs_thr_item *it = &w->items[i];
        for (int c = 0; c < p->ncounts; c++) {
            xs_estimate e;
            if ((rc = xs_thr_item_time(dev, it, p->counts[c], &e, err))) {
                xs_thr_plan_free(p);
                return rc;
            }
            p->time[it->group * p->ncounts + c] += it->calls * e.time_s;
        }
    }
    double best_total = INFINITY;
    for (int c = 0; c < p->ncounts; c++) {
        double total = 0;
        for (int g = 0; g < p->ngroups; g++)
            total += p->time[g * p->ncounts + c];
        if (total < best_total) { /* ascending counts: a tie keeps fewer threads */
            best_total = total;
            p->best_fixed = c;
        }
        if (c == p->ncounts - 1)
            p->default_s = total;
    }
    p->best_fixed_s = best_total;
    for (int g = 0; g < p->ngroups; g++) {
        const double *row = p->time + g * p->ncounts;
        int b = 0;
        for (int c = 1; c < p->ncounts; c++)
            if (row[c] < row[b])
                b = c;
        p->best[g] = b;
        p->dynamic_s += row[b];
    }
    return XS_OK;
}

void xs_thr_plan_free(xs_thr_plan *p)
{
    free(p->time);
    p->time = NULL;
}
