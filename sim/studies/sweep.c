/* sweep.c — see sweep.h. */
#include "sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "job.h"
#include "memory.h"
#include "predict.h"
#include "schema.h"

#ifdef _OPENMP
#include <omp.h>
#define XS_OMP(text) _Pragma(text)
#else
#define XS_OMP(text)
#endif

void xs_sweep_init(xs_sweep_grid *g)
{
    memset(g, 0, sizeof *g);
    g->points = 1;
}

static void axis_free(xs_sweep_axis *a)
{
    for (size_t i = 0; i < a->nitems; i++)
        free(a->items[i].text);
    free(a->items);
    free(a->spec);
    memset(a, 0, sizeof *a);
}

void xs_sweep_free(xs_sweep_grid *g)
{
    for (size_t i = 0; i < g->naxes; i++)
        axis_free(&g->axes[i]);
    xs_sweep_init(g);
}

static const xs_field *scenario_field(const char *key)
{
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].path, key) == 0)
            return &f[i];
    return NULL;
}

/* --set's message about "KEY=VALUE", as the user wrote it: with --vary. */
static int check_value(const xs_sweep_axis *a, const char *value, xs_error *err)
{
    char kv[sizeof a->key + XS_SWEEP_VALUE_MAX + 2];
    snprintf(kv, sizeof kv, "%s=%s", a->key, value);
    int rc = xs_scn_check_set(kv, err);
    if (rc && strncmp(err->msg, "--set ", 6) == 0) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "--vary %s", err->msg + 6);
        memcpy(err->msg, msg, sizeof msg);
    }
    return rc;
}

/* An integer written in decimal digits, whole. */
static int parse_int(const char *text, size_t len, int64_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    for (size_t i = buf[0] == '-'; i < len; i++)
        if (buf[i] < '0' || buf[i] > '9')
            return -1;
    if (len == (size_t)(buf[0] == '-'))
        return -1;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno)
        return -1;
    *out = v;
    return 0;
}

/* "A:B" or "A:B:STEP" (len bytes at text) into it; its ends checked. */
static int parse_range(const xs_sweep_axis *a, const char *text, size_t len, xs_sweep_item *it,
                       xs_error *err)
{
    const char *c1 = memchr(text, ':', len);
    const char *c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - text));
    const char *end = text + len;
    int64_t lo, hi, step = 1;
    if (parse_int(text, (size_t)(c1 - text), &lo) ||
        parse_int(c1 + 1, (size_t)((c2 ? c2 : end) - c1 - 1), &hi) ||
        (c2 && parse_int(c2 + 1, (size_t)(end - c2 - 1), &step)))
        return xs_error_set(err, XS_EARG,
                            "--vary %s: '%.*s' is not a range A:B[:STEP] of integers (e.g. "
                            "8:64:8)",
                            a->spec, (int)len, text);
    if (hi < lo || step < 1)
        return xs_error_set(err, XS_EARG,
                            "--vary %s: range '%.*s' is empty or goes backwards (A:B[:STEP] "
                            "needs A <= B and STEP >= 1)",
                            a->spec, (int)len, text);
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)lo);
    if (check_value(a, v, err))
        return err->code;
    snprintf(v, sizeof v, "%lld", (long long)hi);
    if (check_value(a, v, err))
        return err->code;
    /* both ends passed the field's range, so hi - lo cannot overflow for
     * any shipped key; refuse rather than wrap if one ever could */
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if ((hi >= 0) != (lo >= 0) && span > (uint64_t)INT64_MAX)
        return xs_error_set(err, XS_EARG, "--vary %s: range '%.*s' is too wide", a->spec,
                            (int)len, text);
    it->text = NULL;
    it->lo = lo;
    it->step = step;
    uint64_t count = span / (uint64_t)step + 1;
    it->count = count > XS_SWEEP_MAX_ROWS ? XS_SWEEP_MAX_ROWS + 1 : (size_t)count;
    return XS_OK;
}

static int too_many(const char *spec, xs_error *err)
{
    return xs_error_set(err, XS_EARG,
                        "--vary %s: the grid would have more than %d points (a sweep makes at "
                        "most %d rows, points x devices); vary fewer values",
                        spec, XS_SWEEP_MAX_ROWS, XS_SWEEP_MAX_ROWS);
}

/* Parse spec into a (zeroed by the caller); on error the caller frees it. */
static int parse_axis(const xs_sweep_grid *g, const char *spec, xs_sweep_axis *a,
                      xs_error *err)
{
    if (!(a->spec = strdup(spec)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof a->key)
        return xs_error_set(err, XS_EARG,
                            "--vary %s: expected KEY=V1,V2,... or KEY=A:B[:STEP] (e.g. --vary "
                            "train.batch=8,16,32)",
                            spec);
    snprintf(a->key, sizeof a->key, "%.*s", (int)(eq - spec), spec);
    for (size_t i = 0; i < g->naxes; i++)
        if (strcmp(g->axes[i].key, a->key) == 0)
            return xs_error_set(err, XS_EARG,
                                "--vary %s: '%s' is varied twice; list all its values in one "
                                "--vary",
                                spec, a->key);
    const xs_field *f = scenario_field(a->key);
    const char *list = eq + 1;
    size_t cap = 1;
    for (const char *c = list; *c; c++)
        cap += *c == ',';
    if (!(a->items = calloc(cap, sizeof *a->items)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        xs_sweep_item *it = &a->items[a->nitems];
        if (len == 0)
            return xs_error_set(err, XS_EARG,
                                "--vary %s: an empty value (give values separated by commas)",
                                spec);
        if (len > XS_SWEEP_VALUE_MAX)
            return xs_error_set(err, XS_EARG, "--vary %s: a value longer than %d bytes", spec,
                                XS_SWEEP_VALUE_MAX);
        /* a colon is a range for an integer key only: elsewhere (a path)
         * it is part of the value */
        int range = f && f->type == XS_F_INT && memchr(p, ':', len);
        if (range) {
            if (parse_range(a, p, len, it, err))
                return err->code;
            a->nitems++;
        } else {
            if (!(it->text = strndup(p, len)))
                return xs_error_set(err, XS_ENOMEM, "out of memory");
            a->nitems++; /* owned by the axis from here, freed with it */
            it->count = 1;
            if (check_value(a, it->text, err))
                return err->code;
        }
        a->n += it->count;
        if (a->n > XS_SWEEP_MAX_ROWS || g->points * a->n > XS_SWEEP_MAX_ROWS)
            return too_many(spec, err);
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return XS_OK;
}

int xs_sweep_add(xs_sweep_grid *g, const char *spec, xs_error *err)
{
    if (g->naxes == XS_SWEEP_MAX_AXES)
        return xs_error_set(err, XS_EARG, "--vary %s: at most %d keys can be varied at once",
                            spec, XS_SWEEP_MAX_AXES);
    xs_sweep_axis a;
    memset(&a, 0, sizeof a);
    int rc = parse_axis(g, spec, &a, err);
    if (rc) {
        axis_free(&a);
        return rc;
    }
    g->axes[g->naxes++] = a;
    g->points *= a.n;
    return XS_OK;
}

int xs_sweep_check(const xs_sweep_grid *g, size_t ndev, const char *const *sets, int n,
                   xs_error *err)
{
    if (ndev && g->points > XS_SWEEP_MAX_ROWS / ndev)
        return xs_error_set(err, XS_EARG,
                            "the grid has %zu points x %zu devices, more than the %d rows a "
                            "sweep makes; vary fewer values or give fewer devices",
                            g->points, ndev, XS_SWEEP_MAX_ROWS);
    for (size_t a = 0; a < g->naxes; a++)
        for (int i = 0; i < n; i++) {
            size_t len = strlen(g->axes[a].key);
            if (strncmp(sets[i], g->axes[a].key, len) == 0 && sets[i][len] == '=')
                return xs_error_set(err, XS_EARG,
                                    "--set %s and --vary %s: the key is both fixed and "
                                    "varied; give it once",
                                    sets[i], g->axes[a].spec);
        }
    return XS_OK;
}

const char *xs_sweep_value(const xs_sweep_grid *g, size_t p, size_t a, char *buf, size_t size)
{
    size_t stride = 1;
    for (size_t i = a + 1; i < g->naxes; i++)
        stride *= g->axes[i].n;
    size_t k = p / stride % g->axes[a].n;
    const xs_sweep_axis *ax = &g->axes[a];
    for (size_t i = 0; i < ax->nitems; i++) {
        const xs_sweep_item *it = &ax->items[i];
        if (k < it->count) {
            if (it->text)
                snprintf(buf, size, "%s", it->text);
            else
                snprintf(buf, size, "%lld", (long long)(it->lo + (int64_t)k * it->step));
            return buf;
        }
        k -= it->count;
    }
    snprintf(buf, size, "?"); /* p beyond the grid: a caller's bug */
    return buf;
}

/* A row's reason, owned; NULL when out of memory (the caller reports).
 * The scenario loader names the overrides an error is about ("--set
 * train.seq=1024: ..."); those the grid set are said as the user gave them. */
static char *reason_dup(const char *msg, const char *const *varied, size_t n)
{
    char out[1200];
    size_t used = 0;
    for (const char *p = msg; *p && used + 1 < sizeof out;) {
        size_t skip = 0;
        for (size_t a = 0; a < n && !skip; a++) {
            size_t len = strlen(varied[a]);
            if (strncmp(p, "--set ", 6) == 0 && strncmp(p + 6, varied[a], len) == 0 &&
                p[6 + len] == ':')
                skip = 6;
        }
        if (skip) {
            used += (size_t)snprintf(out + used, sizeof out - used, "--vary ");
            p += skip;
        } else {
            out[used++] = *p++;
        }
    }
    out[used < sizeof out ? used : sizeof out - 1] = '\0';
    return strdup(out);
}

/* A row from p, the prediction on device d of a step of samples_per_step
 * samples run `steps` times (p's run fields are of that run). */
static int row_of(const xs_prediction *p, int64_t steps, int64_t samples_per_step,
                  xs_sweep_row *r)
{
    r->steps = steps;
    r->samples_per_step = samples_per_step;
    r->predicted = 1;
    r->fits = p->mem.fits;
    r->matmul_engine = p->matmul_engine;
    r->step_time_s = p->step_time_s;
    r->samples_per_s = p->samples_per_s;
    r->tokens_per_s = p->tokens_per_s;
    r->mfu = p->mfu;
    r->avg_power_w = p->avg_power_w;
    r->memory_gb = p->mem.total / XS_GIB;
    r->capacity_gb = p->mem.capacity / XS_GIB;
    r->samples_per_s_low = p->samples_per_s_low;
    r->samples_per_s_high = p->samples_per_s_high;
    if (!p->mem.fits) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "does not fit: the step needs %.2f GB, the device has %.2f GB", r->memory_gb,
                 r->capacity_gb);
        return (r->reason = strdup(msg)) ? 0 : -1;
    }
    /* a run that cannot start has no run to price (as compare has it) */
    r->run_time_s = p->run_time_s;
    r->run_energy_kwh = p->run_energy_kwh;
    r->run_cost_usd = p->run_cost_usd;
    r->run_cost_low_usd = p->run_cost_low_usd;
    r->run_cost_high_usd = p->run_cost_high_usd;
    return 0;
}

/* The point's row on device d; keeps the prediction in *kept (its
 * estimates freed) where it was made. 1: kept, 0: a reason row, -1: out
 * of memory. */
static int fill_row(const xs_sweep_spec *sp, const xs_job *j, size_t d, xs_sweep_row *r,
                    xs_prediction *kept)
{
    xs_error err;
    xs_prediction p;
    memset(&p, 0, sizeof p);
    const xs_device *dev = &sp->devs[d];
    r->steps = j->wl.steps;
    r->samples_per_step = j->wl.samples_per_step;
    if (xs_predict(dev, &j->s, &j->wl, &p, &err) ||
        (sp->band && xs_predict_band(dev, &j->s, &j->wl, &p, &err))) {
        xs_prediction_free(&p);
        return (r->reason = strdup(err.msg)) ? 0 : -1;
    }
    xs_prediction_free(&p); /* the totals are all a row needs */
    *kept = p;
    return row_of(&p, j->wl.steps, j->wl.samples_per_step, r) ? -1 : 1;
}

/* One grid point on every device: its rows (ndev of them). -1: out of
 * memory. */
/* A point's scenario: the base with the point's values where every key
 * varied is plain (xs_scn_variant), else loaded whole with every
 * override, as the loader says it. */
static int point_scenario(const xs_sweep_spec *sp, const xs_scn_base *base,
                          xs_wl_scratch *scratch, const char *const *sets, int n,
                          const char *const *varied, int nvaried, xs_job *j, xs_error *err)
{
    int rc = base && xs_scn_variant(base, varied, nvaried, &j->s, err) == XS_OK
                 ? XS_OK
                 : xs_scn_open(sp->scenario, sets, n, &j->s, err);
    if (!rc && (rc = xs_wl_build_compact(&j->s, &j->wl, scratch, err)) != XS_OK)
        xs_scn_name_sets(sets, n, err);
    return rc;
}

/* A thread's last point whose step every device predicted: its step's
 * key (the values of the axes that are not the run's length) and the
 * predictions. A point with the same key is the same step on every device
 * (the devices, the fixed overrides and the step's keys are all the
 * same): only its run differs, xs_predict_rerun's to work out. */
typedef struct {
    int valid;
    char key[XS_SWEEP_MAX_AXES * (XS_SWEEP_VALUE_MAX + 2)];
    int64_t samples_per_step;
    xs_prediction *pred; /* ndev of them, estimates freed */
} last_step;

/* data.samples and data.epochs set only how many steps the run takes */
static int run_key(const char *key)
{
    return strcmp(key, "data.samples") == 0 || strcmp(key, "data.epochs") == 0;
}

static void step_key(const xs_sweep_grid *g, const char (*values)[XS_SWEEP_VALUE_MAX + 1],
                     char *key, size_t size)
{
    size_t used = 0;
    key[0] = '\0';
    for (size_t a = 0; a < g->naxes; a++)
        if (!run_key(g->axes[a].key))
            used += (size_t)snprintf(key + used, used < size ? size - used : 0, "%s\n",
                                     values[a]);
}

/* The rows of a point whose step is last's: each device's prediction with
 * this point's run. 0: done; 1: not this way (the caller predicts). */
static int rerun_point(const xs_sweep_spec *sp, const last_step *last, const xs_scenario *s,
                       xs_sweep_row *rows)
{
    int64_t per_epoch, steps;
    xs_error err;
    char where[96];
    snprintf(where, sizeof where, "scenario %s", s->id);
    if (xs_scn_bounds_check(s, where, &err) ||
        xs_wl_run_steps(s, last->samples_per_step, &per_epoch, &steps))
        return 1; /* the build's own message */
    for (size_t d = 0; d < sp->ndev; d++) {
        xs_prediction p = last->pred[d];
        if (xs_predict_rerun(&sp->devs[d], s, steps, &p, &err))
            return 1;
        if (sp->band)
            xs_predict_band_rerun(&sp->devs[d], s, &p);
        if (row_of(&p, steps, last->samples_per_step, &rows[d]))
            return -1;
    }
    return 0;
}

static int eval_point(const xs_sweep_spec *sp, const xs_scn_base *base, xs_wl_scratch *scratch,
                      last_step *last, size_t point, xs_sweep_row *rows)
{
    const xs_sweep_grid *g = sp->grid;
    char kv[XS_SWEEP_MAX_AXES][sizeof g->axes[0].key + XS_SWEEP_VALUE_MAX + 2];
    char values[XS_SWEEP_MAX_AXES][XS_SWEEP_VALUE_MAX + 1];
    const char *sets[64 + XS_SWEEP_MAX_AXES], *varied[XS_SWEEP_MAX_AXES];
    int n = 0;
    for (int i = 0; i < sp->nsets && n < 64; i++)
        sets[n++] = sp->sets[i];
    for (size_t a = 0; a < g->naxes; a++) {
        snprintf(kv[a], sizeof kv[a], "%s=%s", g->axes[a].key,
                 xs_sweep_value(g, point, a, values[a], sizeof values[a]));
        sets[n++] = varied[a] = kv[a];
    }
    for (size_t d = 0; d < sp->ndev; d++) {
        memset(&rows[d], 0, sizeof rows[d]);
        rows[d].point = point;
        rows[d].dev = d;
    }
    char key[sizeof last->key];
    step_key(g, values, key, sizeof key);
    xs_job j;
    xs_error err;
    xs_job_init(&j);
    /* the same step as the last point's: its run alone */
    if (last && last->valid && strcmp(key, last->key) == 0 && base &&
        xs_scn_variant(base, varied, (int)g->naxes, &j.s, &err) == XS_OK) {
        int rc = rerun_point(sp, last, &j.s, rows);
        if (rc <= 0) {
            xs_job_free(&j);
            return rc;
        }
        xs_sweep_rows_free(rows, sp->ndev); /* a partial row set: all again */
        for (size_t d = 0; d < sp->ndev; d++) {
            memset(&rows[d], 0, sizeof rows[d]);
            rows[d].point = point;
            rows[d].dev = d;
        }
    }
    int built =
        point_scenario(sp, base, scratch, sets, n, varied, (int)g->naxes, &j, &err) == XS_OK;
    int rc = 0, all = built;
    if (last)
        last->valid = 0;
    for (size_t d = 0; d < sp->ndev; d++) {
        xs_sweep_row *r = &rows[d];
        if (!built) {
            rc |= (r->reason = reason_dup(err.msg, varied, g->naxes)) ? 0 : -1;
            continue;
        }
        xs_prediction kept;
        int got = fill_row(sp, &j, d, r, &kept);
        rc |= got < 0 ? -1 : 0;
        all &= got == 1;
        if (got == 1 && last)
            last->pred[d] = kept;
    }
    if (last && all && !rc) {
        last->valid = 1;
        last->samples_per_step = j.wl.samples_per_step;
        memcpy(last->key, key, sizeof key);
    }
    xs_job_free(&j);
    return rc;
}

int xs_sweep_eval(const xs_sweep_spec *sp, size_t first, size_t count, xs_sweep_row *rows,
                  xs_error *err)
{
    size_t done = 0;
    int failed = 0;
    /* the scenario loaded once, its fixed overrides applied (each point's
     * load from the file took most of a point's time); a base that does
     * not load leaves each point to say why */
    xs_scn_base *base = malloc(sizeof *base);
    xs_error ignored;
    if (base && xs_scn_base_open(sp->scenario, sp->sets, sp->nsets, base, &ignored) != XS_OK) {
        free(base);
        base = NULL;
    }
    /* each thread's builder arrays, kept from point to point (NULL where
     * out of memory: each build then allocates its own) */
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    /* and each thread's last step, for the points that differ only in
     * their run (NULL where out of memory: each point predicted whole) */
    last_step *last = calloc((size_t)threads, sizeof *last);
    for (int t = 0; last && t < threads; t++)
        if (!(last[t].pred = calloc(sp->ndev ? sp->ndev : 1, sizeof *last[t].pred))) {
            for (int u = 0; u < t; u++)
                free(last[u].pred);
            free(last);
            last = NULL;
        }
    xs_wl_scratch **scratch = calloc((size_t)threads, sizeof *scratch);
    for (int t = 0; scratch && t < threads; t++)
        if (!(scratch[t] = xs_wl_scratch_new())) {
            for (int u = 0; u < t; u++)
                xs_wl_scratch_free(scratch[u]);
            free(scratch);
            scratch = NULL;
        }
    /* dynamic: points differ in cost (a larger batch, a device that cannot
     * run them); each writes only its own rows, so the order is the grid's.
     * Runs of 8 neighbours a thread: points next to each other in the grid
     * differ in the last axis alone, often the run's length only */
    XS_OMP("omp parallel for schedule(dynamic, 8)")
    for (size_t k = 0; k < count; k++) {
#ifdef _OPENMP
        int me = omp_get_thread_num();
#else
        int me = 0;
#endif
        xs_wl_scratch *mine = scratch ? scratch[me] : NULL;
        int bad = eval_point(sp, base, mine, last ? &last[me] : NULL, first + k,
                             rows + k * sp->ndev);
        size_t now;
        XS_OMP("omp atomic capture")
        now = ++done;
        if (bad) {
            XS_OMP("omp atomic write")
            failed = 1;
        }
#ifdef _OPENMP
        if (omp_get_thread_num() == 0 && sp->progress)
            sp->progress(now, sp->ctx);
#else
        if (sp->progress)
            sp->progress(now, sp->ctx);
#endif
    }
    xs_scn_base_free(base);
    free(base);
    for (int t = 0; last && t < threads; t++)
        free(last[t].pred);
    free(last);
    for (int t = 0; scratch && t < threads; t++)
        xs_wl_scratch_free(scratch[t]);
    free(scratch);
    if (failed) {
        xs_sweep_rows_free(rows, count * sp->ndev);
        return xs_error_set(err, XS_ENOMEM, "out of memory while sweeping");
    }
    return XS_OK;
}

void xs_sweep_rows_free(xs_sweep_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].reason);
        rows[i].reason = NULL;
    }
}
