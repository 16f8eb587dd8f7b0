/* cpu_threads_run.c — see threads_run.h. */
#include "threads_run.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "harness.h"
#include "lstm.h"
#include "scratch.h"

/* splitmix64: a fixed, portable sequence (the numbers are the generator's
 * published constants, Steele, Lea and Flood 2014) */
static double uniform(uint64_t *state, double lo, double hi)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

typedef struct {
    xs_krn_lstm *k;
    const float *x;
    float *y;
    const int *threads;
} run_ctx;

static void run_once(void *p)
{
    run_ctx *c = p;
    xs_krn_lstm_run(c->k, c->x, c->y, c->threads, NULL);
}

static int save(const char *dir, const char *name, const void *data, size_t bytes, xs_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return xs_write_atomic(path, data, bytes, err);
}

static int save_all(const char *dir, const xs_krn_lstm_shape *sh, const float *w, size_t nw,
                    const float *x, const float *y, xs_error *err)
{
    size_t nx = sh->seq * sh->batch * sh->input, ny = sh->seq * sh->batch * sh->hidden;
    char json[512];
    int len = snprintf(json, sizeof json,
                       "{\"layers\": %zu, \"input_size\": %zu, \"hidden\": %zu, \"seq\": %zu, "
                       "\"batch\": %zu, \"precision\": \"%s\", \"dtype\": \"float32\", "
                       "\"byte_order\": \"little\", \"weights\": \"weights.bin\", "
                       "\"input\": \"input.bin\", \"output\": \"output.bin\"}\n",
                       sh->layers, sh->input, sh->hidden, sh->seq, sh->batch,
                       sh->bf16 ? "bf16" : "fp32");
    int rc = save(dir, "weights.bin", w, nw * sizeof *w, err);
    if (!rc)
        rc = save(dir, "input.bin", x, nx * sizeof *x, err);
    if (!rc)
        rc = save(dir, "output.bin", y, ny * sizeof *y, err);
    if (!rc)
        rc = save(dir, "shape.json", json, (size_t)len, err);
    return rc;
}

/* The kernel against its reference over the scenario's layers, hidden
 * size and batch, 4 time steps: the largest difference. */
static double check(const xs_krn_lstm_shape *full, const float *w, const float *x, int threads)
{
    xs_krn_lstm_shape s = *full;
    s.seq = s.seq < 4 ? s.seq : 4;
    size_t ny = s.seq * s.batch * s.hidden;
    float *y = malloc(ny * sizeof *y), *r = malloc(ny * sizeof *r);
    xs_krn_lstm *k = xs_krn_lstm_alloc(&s, w);
    int *t = malloc(2 * s.layers * sizeof *t);
    double worst = INFINITY;
    if (y && r && k && t) {
        for (size_t i = 0; i < 2 * s.layers; i++)
            t[i] = threads;
        xs_krn_lstm_run(k, x, y, t, NULL);
        xs_krn_lstm_ref(&s, w, x, r);
        worst = 0;
        for (size_t i = 0; i < ny; i++)
            worst = fmax(worst, fabs((double)y[i] - r[i]));
    }
    free(y), free(r), free(t);
    xs_krn_lstm_free(k);
    return worst;
}

static void fill(int *t, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        t[i] = v;
}

int xs_thr_run_lstm(const xs_inf_scenario *s, const xs_thr_plan *p, int quick,
                    const char *save_dir, FILE *log, xs_thr_measured *out, xs_error *err)
{
    memset(out, 0, sizeof *out);
    if (s->family != XS_INF_LSTM)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: --run executes the LSTM kernel (kernels/cpu/lstm.c); a "
                            "Transformer encoder is predicted only",
                            s->id);
    xs_krn_lstm_shape sh = {(size_t)s->layers, (size_t)s->input_size, (size_t)s->hidden,
                            (size_t)s->seq, (size_t)s->batch, s->precision == XS_INF_BF16};
    size_t nw = xs_krn_lstm_weights_len(&sh), nx = sh.seq * sh.batch * sh.input;
    size_t ny = sh.seq * sh.batch * sh.hidden, ng = 2 * sh.layers;
    float *w = malloc(nw * sizeof *w), *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    int *t = malloc(ng * sizeof *t);
    out->group_s = calloc((size_t)(p->ngroups * p->ncounts) + 1, sizeof *out->group_s);
    xs_krn_lstm *k = NULL;
    int rc = XS_OK;
    if (!w || !x || !y || !t || !out->group_s || (size_t)p->ngroups != ng) {
        rc = xs_error_set(err, XS_ENOMEM, "%s: out of memory for the LSTM's %.0f MB", s->id,
                          4.0 * (double)(nw + nx + ny) / 1e6);
        goto done;
    }
    uint64_t seed = 20241121;
    double bound = 1 / sqrt((double)sh.hidden);
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)uniform(&seed, -bound, bound);
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)uniform(&seed, -1, 1);
    out->max_abs_err = check(&sh, w, x, p->default_threads);
    /* float sums of up to input + hidden products of terms below 1, then
     * saturating gates: 1e-4 is ~1000 float roundings of a value near 1.
     * bf16: the reference rounds as the kernel does, but a sum near a
     * rounding boundary may round the other way, one bf16 ulp of h (2^-8
     * near 1), carried on by the next steps: 2e-2 is a few such ulps. */
    double allowed = sh.bf16 ? 2e-2 : 1e-4;
    if (!(out->max_abs_err <= allowed)) {
        rc = xs_error_set(err, XS_ERANGE,
                          "%s: the %s LSTM kernel differs from its reference by %.3g (allowed "
                          "%g): not timed",
                          s->id, sh.bf16 ? "bf16" : "fp32", out->max_abs_err, allowed);
        goto done;
    }
    if (!(k = xs_krn_lstm_alloc(&sh, w))) {
        rc = xs_error_set(err, XS_ENOMEM, "%s: out of memory packing the LSTM", s->id);
        goto done;
    }
    /* every group at every count: the median of reps runs' group times */
    int sweep_reps = quick ? 1 : 3;
    double *one = malloc(ng * sizeof *one), *runs = malloc(ng * 3 * sizeof *runs);
    if (!one || !runs) {
        free(one), free(runs);
        rc = xs_error_set(err, XS_ENOMEM, "out of memory timing %s", s->id);
        goto done;
    }
    for (int c = 0; c < p->ncounts; c++) {
        fill(t, ng, p->counts[c]);
        xs_krn_lstm_run(k, x, y, t, NULL); /* warm-up */
        for (int r = 0; r < sweep_reps; r++) {
            memset(one, 0, ng * sizeof *one);
            xs_krn_lstm_run(k, x, y, t, one);
            for (size_t g = 0; g < ng; g++)
                runs[g * 3 + r] = one[g];
        }
        for (size_t g = 0; g < ng; g++) { /* the median of 1 or 3 */
            double *v = runs + g * 3, m = v[0];
            if (sweep_reps == 3)
                m = fmax(fmin(v[0], v[1]), fmin(fmax(v[0], v[1]), v[2]));
            out->group_s[g * (size_t)p->ncounts + (size_t)c] = m;
        }
        if (log)
            fprintf(log, "threads: swept %d thread%s\n", p->counts[c], p->counts[c] > 1 ? "s" : "");
    }
    free(one), free(runs);
    /* the three settings, with the harness's median and spread */
    xs_cal_opts o = xs_cal_default_opts();
    o.warmup = 1;
    o.min_reps = quick ? 2 : 3;
    o.max_reps = quick ? 5 : 20;
    o.time_cap_s = quick ? 1.0 : 3.0;
    run_ctx ctx = {k, x, y, t};
    xs_cal_kernel kern = {"lstm", 0, 0, run_once, &ctx, NULL};
    xs_cal_result r;
    fill(t, ng, p->default_threads);
    xs_cal_measure(&kern, &o, &r);
    out->default_s = r.median_s, out->default_iqr = r.rel_iqr, out->reps = r.reps;
    fill(t, ng, p->counts[p->best_fixed]);
    xs_cal_measure(&kern, &o, &r);
    out->best_fixed_s = r.median_s, out->best_fixed_iqr = r.rel_iqr;
    for (size_t g = 0; g < ng; g++)
        t[g] = p->counts[p->best[g]];
    xs_cal_measure(&kern, &o, &r);
    out->dynamic_s = r.median_s, out->dynamic_iqr = r.rel_iqr;
    if (save_dir) { /* the output of the default setting, for a client to compare */
        fill(t, ng, p->default_threads);
        xs_krn_lstm_run(k, x, y, t, NULL);
        rc = save_all(save_dir, &sh, w, nw, x, y, err);
    }
done:
    xs_krn_lstm_free(k);
    xs_krn_scratch_free();
    free(w), free(x), free(y), free(t);
    if (rc)
        xs_thr_measured_free(out);
    return rc;
}

void xs_thr_measured_free(xs_thr_measured *m)
{
    free(m->group_s);
    m->group_s = NULL;
}
