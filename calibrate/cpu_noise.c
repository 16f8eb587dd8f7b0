/* cpu_noise.c — see cpu_noise.h. */
#include "cpu_noise.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "peak.h"

/* About 2 ms a call on a 2-core host: a few of the scheduler's slices, so
 * a call that shares its core shows in the spread. */
#define REF_ITERS 400000

typedef struct {
    int threads;
    double flops;
} ref_ctx;

static void run_ref(void *p)
{
    ref_ctx *c = p;
    c->flops = xs_krn_peak_fma_f32(REF_ITERS, c->threads);
}

static double seconds(clockid_t id)
{
    struct timespec t;
    if (clock_gettime(id, &t))
        return -1;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs the reference for about SHARE_WINDOW_S of wall time: the share of
 * it its threads were on a core (the process's CPU time, which holds only
 * those threads while they run). -1 where the clocks cannot tell. */
#define SHARE_WINDOW_S 0.05
static double core_share(ref_ctx *c)
{
    double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID), w = w0;
    if (w0 < 0 || c0 < 0)
        return -1;
    while (w - w0 < SHARE_WINDOW_S) {
        run_ref(c);
        w = seconds(CLOCK_MONOTONIC);
    }
    double cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
    return w > w0 && cpu >= 0 ? fmin(1.0, cpu / ((w - w0) * c->threads)) : -1;
}

static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return -1;
    double l = -1;
    if (fscanf(f, "%lf", &l) != 1)
        l = -1;
    fclose(f);
    return l;
}

void xs_cpu_noise_probe(int threads, xs_cpu_noise *out)
{
    ref_ctx all = {threads, 0}, one = {1, 0};
    run_ref(&all);
    run_ref(&one);
    xs_cal_kernel ka = {"fma-ref", 0, all.flops, run_ref, &all, NULL};
    xs_cal_kernel k1 = {"fma-ref1", 0, one.flops, run_ref, &one, NULL};
    xs_cal_opts h = xs_cal_default_opts();
    h.min_reps = 21;
    h.max_reps = 60;
    h.target_rel_iqr = 0; /* a fixed sample: the spread is the figure */
    h.time_cap_s = 0.4;
    xs_cal_result ra, r1;
    memset(out, 0, sizeof *out);
    out->threads = threads;
    if (threads > 1) {
        double ratio = xs_cal_compare(&k1, &ka, &h, &r1, &ra); /* time(all) / time(one) */
        out->scaling = ratio > 0 ? 1 / ratio : 0;
    } else {
        xs_cal_measure(&ka, &h, &ra);
        out->scaling = 1;
    }
    out->gflops_thread = ra.median_s > 0 ? all.flops / ra.median_s / threads / 1e9 : 0;
    out->spread = ra.rel_iqr;
    out->share = core_share(&all);
    out->load1 = load_average();
}

int xs_cpu_noise_quiet(const xs_cpu_noise *n, char *why, size_t size)
{
    why[0] = '\0';
    int spread = !(n->spread <= XS_CPU_NOISE_SPREAD);
    int scaling = !(n->scaling >= XS_CPU_NOISE_SCALING);
    int shared = n->share >= 0 && n->share < XS_CPU_NOISE_SHARE;
    if (!spread && !scaling && !shared)
        return 1;
    char load[48] = "";
    if (n->load1 >= 0)
        snprintf(load, sizeof load, "; load average %.2f", n->load1);
    if (shared && !spread && !scaling) {
        snprintf(why, size,
                 "the reference kernel's %d thread%s ran on a core %.0f%% of the time they took "
                 "(bound %.0f%%: other work shares every core, so the spread and the scaling "
                 "cannot show it)%s",
                 n->threads, n->threads > 1 ? "s" : "", 100 * n->share,
                 100 * XS_CPU_NOISE_SHARE, load);
        return 0;
    }
    if (spread && scaling)
        snprintf(why, size,
                 "the reference kernel's repetitions spread %.0f%% (bound %.0f%%) and %d threads "
                 "ran it %.2f times as fast as one would on its own core (bound %.2f)%s",
                 100 * n->spread, 100 * XS_CPU_NOISE_SPREAD, n->threads, n->scaling,
                 XS_CPU_NOISE_SCALING, load);
    else if (spread)
        snprintf(why, size, "the reference kernel's repetitions spread %.0f%% (bound %.0f%%)%s",
                 100 * n->spread, 100 * XS_CPU_NOISE_SPREAD, load);
    else
        snprintf(why, size,
                 "%d threads ran the reference kernel %.2f times as fast as one would on its "
                 "own core (bound %.2f: a thread has lost its core)%s",
                 n->threads, n->scaling, XS_CPU_NOISE_SCALING, load);
    return 0;
}

int xs_cpu_noise_steady(const xs_cpu_noise *before, const xs_cpu_noise *after,
                        double run_spread, char *why, size_t size)
{
    char what[512];
    if (!xs_cpu_noise_quiet(after, what, sizeof what)) {
        snprintf(why, size, "after the run %s", what);
        return 0;
    }
    double drift = before->gflops_thread > 0 ? after->gflops_thread / before->gflops_thread - 1 : 0;
    if (!(fabs(drift) <= XS_CPU_NOISE_DRIFT)) {
        snprintf(why, size,
                 "the reference kernel ran %+.0f%% faster after the run than before it "
                 "(%.1f against %.1f GFLOP/s a thread; bound %.0f%%)",
                 100 * drift, after->gflops_thread, before->gflops_thread,
                 100 * XS_CPU_NOISE_DRIFT);
        return 0;
    }
    if (run_spread > XS_CPU_NOISE_SPREAD) {
        snprintf(why, size,
                 "the run's measurements spread %.0f%% in the median (IQR / median; bound %.0f%%)",
                 100 * run_spread, 100 * XS_CPU_NOISE_SPREAD);
        return 0;
    }
    why[0] = '\0';
    return 1;
}

static void pause_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&t, NULL);
}

int xs_cpu_noise_refuse(const char *what, int threads, const char *why, const char *outcome,
                        xs_error *err)
{
    return xs_error_set(err, XS_ENOHW,
                        "%s: this host is too noisy to time kernels on: %s; %s. Run it on a "
                        "quieter machine, stop what else runs here%s",
                        what, why, outcome,
                        threads <= 1                     ? ""
                        : strcmp(what, "calibrate") == 0 ? ", or try --threads 1 (one core is "
                                                           "easier to keep)"
                                                         : ", or check a one-core device "
                                                           "(calibrate --backend cpu --threads "
                                                           "1)");
}

int xs_cpu_noise_wait(int threads, const char *what, const char *outcome, FILE *log,
                      xs_cpu_noise *out, xs_error *err)
{
    char why[512] = "";
    for (int i = 0; i < XS_CPU_NOISE_TRIES; i++) {
        if (i)
            pause_s(1.0 * i); /* 1 s, then 2 s: a burst of other work may pass */
        xs_cpu_noise_probe(threads, out);
        if (xs_cpu_noise_quiet(out, why, sizeof why)) {
            if (log)
                fprintf(log,
                        "%s: host quiet: reference %.1f GFLOP/s a thread, spread %.1f%%, "
                        "scaling %.2f, on a core %.0f%% of the time, on %d threads\n",
                        what, out->gflops_thread, 100 * out->spread, out->scaling,
                        100 * out->share, threads);
            return XS_OK;
        }
        if (log)
            fprintf(log, "%s: host noisy (probe %d of %d): %s\n", what, i + 1,
                    XS_CPU_NOISE_TRIES, why);
    }
    return xs_cpu_noise_refuse(what, threads, why, outcome, err);
}
