/* advise.c — see advise.h. Each candidate is the user's scenario plus one or
 * two --set overrides, run through the same load -> workload -> predict path
 * as `xpusim predict`, so the advice and the prediction cannot disagree. */
#include "advise.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "scenario.h"

#define MAX_CANDIDATES 48
/* "b.s a multiple of a large power of two" (training-math.md); 128 rows is
 * the M of the common 128-wide tiles, so such token counts quantize cleanly. */
#define LARGE_POW2 128
#define MAX_SETS 64

typedef struct {
    const xs_device *dev;
    const char *path;
    const char *const *sets;
    int nsets;
} query;

/* Predict the scenario with extra overrides; samples/s and parameters. */
static int evaluate(const query *j, const char (*extra)[64], int nextra, double *sps,
                    double *params, xs_error *err)
{
    const char *all[MAX_SETS + 2];
    if (j->nsets > MAX_SETS)
        return xs_error_set(err, XS_EARG, "too many --set options");
    for (int i = 0; i < j->nsets; i++)
        all[i] = j->sets[i];
    for (int i = 0; i < nextra; i++)
        all[j->nsets + i] = extra[i];
    xs_job one;
    xs_job_init(&one);
    one.dev = *j->dev;
    int rc = xs_job_scenario(&one, j->path, all, j->nsets + nextra, err);
    if (!rc)
        rc = xs_job_predict(&one, 0, err);
    if (!rc) {
        *sps = one.p.samples_per_s;
        *params = one.wl.params;
    }
    xs_job_free(&one);
    return rc;
}

typedef struct {
    xs_advice *a;
    size_t n;
} list;

__attribute__((format(printf, 4, 5))) static void add(list *l, const char *set1, const char *set2, const char *rulefmt, ...)
{
    if (l->n == MAX_CANDIDATES)
        return;
    xs_advice *a = &l->a[l->n];
    memset(a, 0, sizeof *a);
    va_list ap;
    va_start(ap, rulefmt);
    vsnprintf(a->rule, sizeof a->rule, rulefmt, ap);
    va_end(ap);
    snprintf(a->sets[a->nsets++], sizeof a->sets[0], "%s", set1);
    if (set2)
        snprintf(a->sets[a->nsets++], sizeof a->sets[0], "%s", set2);
    /* the same override twice is one candidate */
    for (size_t i = 0; i < l->n; i++)
        if (l->a[i].nsets == a->nsets && strcmp(l->a[i].sets[0], a->sets[0]) == 0 &&
            (a->nsets == 1 || strcmp(l->a[i].sets[1], a->sets[1]) == 0))
            return;
    l->n++;
}

static int64_t round_to(int64_t x, int64_t mult, int up)
{
    return up ? (x + mult - 1) / mult * mult : x / mult * mult;
}

static int64_t pow2_factor(int64_t x)
{
    return x & -x;
}

/* Candidate shapes next to m / t, by the rules of training-math.md. */
static void candidates(const xs_scenario *s, list *l)
{
    const xs_model *m = &s->model;
    char a[64], b[64];
    int64_t h = m->hidden, heads = m->heads, f = m->ffn, V = m->vocab;
    int64_t bt = s->train.batch, sq = s->train.seq;
    for (int64_t mult = 64; mult <= 128; mult *= 2) {
        int64_t v = round_to(V, mult, 1);
        if (v != V) {
            snprintf(a, sizeof a, "model.vocab=%lld", (long long)v);
            add(l, a, NULL, "vocab divisible by %lld", (long long)mult);
        }
    }
    for (int up = 0; up <= 1; up++) {
        int64_t hh = round_to(h, 64, up);
        if (hh == h || hh < 64)
            continue;
        snprintf(a, sizeof a, "model.hidden=%lld", (long long)hh);
        if (hh % heads == 0)
            add(l, a, NULL, "hidden divisible by 64");
        snprintf(b, sizeof b, "model.heads=%lld", (long long)(hh / 64));
        add(l, a, b, "hidden divisible by 64, head size 64");
    }
    for (int64_t d = 64; d <= 128; d *= 2)
        if (h % d == 0 && h / d != heads) {
            snprintf(a, sizeof a, "model.heads=%lld", (long long)(h / d));
            add(l, a, NULL, "head size h/a = %lld, a multiple of 64", (long long)d);
        }
    for (int64_t mult = 64; mult <= 256; mult *= 2)
        for (int up = 0; up <= 1; up++) {
            int64_t ff = round_to(f, mult, up);
            if (ff != f && ff >= mult) {
                snprintf(a, sizeof a, "model.ffn=%lld", (long long)ff);
                add(l, a, NULL, "FFN size divisible by %lld", (long long)mult);
            }
        }
    /* micro-batches whose b.s becomes a multiple of a large power of two,
     * offered only where b.s is not one already; within [b/2, 2b] */
    if (pow2_factor(bt * sq) < LARGE_POW2) {
        int64_t lo = 0, hi = 0;
        for (int64_t nb = bt - 1; nb >= (bt + 1) / 2 && nb >= 1 && !lo; nb--)
            if (pow2_factor(nb * sq) >= LARGE_POW2)
                lo = nb;
        for (int64_t nb = bt + 1; nb <= 2 * bt && !hi; nb++)
            if (pow2_factor(nb * sq) >= LARGE_POW2)
                hi = nb;
        int64_t tries[] = {lo, hi};
        for (int i = 0; i < 2; i++)
            if (tries[i]) {
                snprintf(a, sizeof a, "train.batch=%lld", (long long)tries[i]);
                add(l, a, NULL, "b x s = %lld, a multiple of %lld",
                    (long long)(tries[i] * sq), (long long)pow2_factor(tries[i] * sq));
            }
    }
}

static void describe(const xs_scenario *s, xs_advice *a)
{
    const xs_model *m = &s->model;
    size_t used = 0;
    for (int i = 0; i < a->nsets; i++) {
        const char *kv = a->sets[i];
        const char *key = kv + strcspn(kv, ".") + 1, *val = strchr(kv, '=') + 1;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(strchr(kv, '=') - key), key);
        long long old = strcmp(name, "vocab") == 0    ? (long long)m->vocab
                        : strcmp(name, "hidden") == 0 ? (long long)m->hidden
                        : strcmp(name, "heads") == 0  ? (long long)m->heads
                        : strcmp(name, "ffn") == 0    ? (long long)m->ffn
                                                      : (long long)s->train.batch;
        used += (size_t)snprintf(a->change + used, sizeof a->change - used, "%s%s %lld -> %s",
                                 i ? ", " : "", name, old, val);
        if (used >= sizeof a->change)
            break;
    }
}

static int by_speedup(const void *x, const void *y)
{
    double a = ((const xs_advice *)x)->speedup, b = ((const xs_advice *)y)->speedup;
    return (a < b) - (a > b);
}

int xs_advise(const xs_device *dev, const char *scn_path, const char *const *sets, int nsets,
              double tol_pct, xs_advice *base, xs_advice **out, size_t *n, xs_error *err)
{
    query j = {dev, scn_path, sets, nsets};
    xs_scenario s;
    int rc = xs_scn_load(scn_path, sets, nsets, &s, err);
    if (rc)
        return rc;
    memset(base, 0, sizeof *base);
    snprintf(base->change, sizeof base->change, "as given");
    rc = evaluate(&j, NULL, 0, &base->samples_per_s, &base->params, err);
    if (rc)
        return rc;
    base->speedup = 1;
    if (!(base->samples_per_s > 0)) /* every speed-up divides by it */
        return xs_error_set(err, XS_ERANGE, "%s: the scenario as given predicts %g samples/s, "
                            "nothing to compare candidates with", scn_path, base->samples_per_s);
    list l = {calloc(MAX_CANDIDATES, sizeof(xs_advice)), 0};
    if (!l.a)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    candidates(&s, &l);
    size_t kept = 0;
    for (size_t i = 0; i < l.n; i++) {
        xs_advice *a = &l.a[i];
        xs_error cand_err;
        /* a candidate the scenario rejects (e.g. heads not dividing hidden) is skipped */
        if (evaluate(&j, (const char(*)[64])a->sets, a->nsets, &a->samples_per_s, &a->params,
                     &cand_err) != XS_OK)
            continue;
        a->params_delta_pct = 100 * (a->params - base->params) / base->params;
        if (fabs(a->params_delta_pct) > tol_pct)
            continue;
        a->speedup = a->samples_per_s / base->samples_per_s;
        describe(&s, a);
        l.a[kept++] = *a;
    }
    qsort(l.a, kept, sizeof *l.a, by_speedup);
    *out = l.a;
    *n = kept;
    return XS_OK;
}
