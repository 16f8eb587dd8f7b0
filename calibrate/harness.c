/* harness.c — see harness.h. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SAMPLES 1000

xs_cal_opts xs_cal_default_opts(void)
{
    xs_cal_opts o = {2, 5, 200, 0.05, 1.0};
    return o;
}

double xs_cal_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted s[0..n) by linear interpolation. */
static double quantile(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    double f = pos - i;
    return i + 1 < n ? s[i] * (1 - f) + s[i + 1] * f : s[n - 1];
}

static void summarize(const double *t, int n, const xs_cal_kernel *k, xs_cal_result *r)
{
    double s[MAX_SAMPLES];
    memcpy(s, t, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, by_value);
    r->reps = n;
    r->min_s = s[0];
    r->q1_s = quantile(s, n, 0.25);
    r->median_s = quantile(s, n, 0.5);
    r->q3_s = quantile(s, n, 0.75);
    r->rel_iqr = (r->q3_s - r->q1_s) / r->median_s;
    r->gbs = k->bytes / r->median_s / 1e9;
    r->gflops = k->flops / r->median_s / 1e9;
}

static int done(const double *t, int n, const xs_cal_kernel *k, const xs_cal_opts *o,
                double spent)
{
    if (n >= o->max_reps || n >= MAX_SAMPLES)
        return 1;
    if (n < o->min_reps)
        return 0;
    if (spent >= o->time_cap_s)
        return 1;
    xs_cal_result r;
    summarize(t, n, k, &r);
    return r.rel_iqr < o->target_rel_iqr;
}

void xs_cal_measure(const xs_cal_kernel *k, const xs_cal_opts *o, xs_cal_result *r)
{
    for (int i = 0; i < o->warmup; i++) {
        if (k->prepare)
            k->prepare(k->ctx);
        k->run(k->ctx);
    }
    double t[MAX_SAMPLES], spent = 0;
    int n = 0;
    do {
        if (k->prepare)
            k->prepare(k->ctx);
        double t0 = xs_cal_now();
        k->run(k->ctx);
        t[n] = xs_cal_now() - t0;
        spent += t[n++];
    } while (!done(t, n, k, o, spent));
    summarize(t, n, k, r);
}

double xs_cal_compare(const xs_cal_kernel *a, const xs_cal_kernel *b, const xs_cal_opts *o,
                      xs_cal_result *ra, xs_cal_result *rb)
{
    for (int i = 0; i < o->warmup; i++) {
        a->run(a->ctx);
        b->run(b->ctx);
    }
    double ta[MAX_SAMPLES], tb[MAX_SAMPLES], ratio[MAX_SAMPLES], spent = 0;
    int n = 0;
    do {
        double t0 = xs_cal_now();
        a->run(a->ctx);
        double t1 = xs_cal_now();
        b->run(b->ctx);
        double t2 = xs_cal_now();
        ta[n] = t1 - t0;
        tb[n] = t2 - t1;
        ratio[n] = tb[n] / ta[n];
        spent += t2 - t0;
        n++;
    } while (!(done(ta, n, a, o, spent) && done(tb, n, b, o, spent)) && n < o->max_reps &&
             n < MAX_SAMPLES && !(n >= o->min_reps && spent >= o->time_cap_s));
    summarize(ta, n, a, ra);
    summarize(tb, n, b, rb);
    qsort(ratio, (size_t)n, sizeof *ratio, by_value);
    return quantile(ratio, n, 0.5);
}
