/* rank.c — see rank.h. */
#include "rank.h"
#include "numparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int xs_weights_parse(const char *text, xs_weights *w, xs_error *err)
{
    static const char *const names[] = {"time", "energy", "cost", "util"};
    double v[4] = {0, 0, 0, 0};
    int seen[4] = {0, 0, 0, 0};
    if (!*text)
        return xs_error_set(err, XS_EARG, "--weights is empty: expected "
                                          "time=W,energy=W,cost=W,util=W (e.g. time=1,cost=2)");
    for (const char *p = text;;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        size_t klen = eq ? (size_t)(eq - p) : len;
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (strlen(names[i]) == klen && strncmp(p, names[i], klen) == 0)
                k = i;
        if (k < 0)
            return xs_error_set(err, XS_EARG,
                                "--weights %s: unknown metric '%.*s' (expected time, energy, "
                                "cost or util, as time=1,cost=2)",
                                text, (int)klen, p);
        if (seen[k])
            return xs_error_set(err, XS_EARG, "--weights %s: '%s' given twice", text, names[k]);
        char num[64] = "";
        size_t vlen = eq ? len - klen - 1 : 0;
        if (eq && vlen < sizeof num)
            memcpy(num, eq + 1, vlen), num[vlen] = '\0';
        double x = NAN;
        if (!eq || vlen >= sizeof num || xs_parse_double(num, &x) || !(x >= 0 && x <= 1e6))
            return xs_error_set(err, XS_EARG,
                                "--weights %s: '%.*s' must be %s=W with W a number in [0, 1e6]",
                                text, (int)len, p, names[k]);
        v[k] = x;
        seen[k] = 1;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    if (v[0] + v[1] + v[2] + v[3] <= 0)
        return xs_error_set(err, XS_EARG, "--weights %s: every weight is 0; give at least one "
                                          "above 0",
                            text);
    *w = (xs_weights){v[0], v[1], v[2], v[3]};
    return XS_OK;
}

/* best/value (lower is better) or value/best; 1 where both are 0. */
static double ratio(double num, double den)
{
    if (den <= 0)
        return num <= 0 ? 1 : 0;
    return num / den;
}

void xs_rank_score(xs_rank_item *items, size_t n, const xs_weights *w)
{
    double t = INFINITY, e = INFINITY, c = INFINITY, u = 0;
    for (size_t i = 0; i < n; i++) {
        if (!items[i].candidate)
            continue;
        t = fmin(t, items[i].run_time_s);
        e = fmin(e, items[i].energy_kwh);
        c = fmin(c, items[i].cost_usd);
        u = fmax(u, items[i].mfu);
    }
    double sum = w->time + w->energy + w->cost + w->util;
    for (size_t i = 0; i < n; i++) {
        xs_rank_item *it = &items[i];
        it->score = 0;
        if (!it->candidate || sum <= 0)
            continue;
        double s = w->time * ratio(t, it->run_time_s) + w->energy * ratio(e, it->energy_kwh) +
                   w->cost * ratio(c, it->cost_usd) +
                   w->util * (u > 0 ? it->mfu / u : 1);
        it->score = s / sum;
    }
}

typedef struct {
    double t, c;
    size_t i;
} tc;

static int by_time_then_cost(const void *a, const void *b)
{
    const tc *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

int xs_rank_pareto(xs_rank_item *items, size_t n, xs_error *err)
{
    /* copies, not indices: qsort has no context argument, and the library
     * keeps no mutable state of its own (job.h) */
    tc *v = malloc((n ? n : 1) * sizeof *v);
    size_t m = 0;
    if (!v)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        items[i].pareto = 0;
        if (items[i].candidate)
            v[m++] = (tc){items[i].run_time_s, items[i].cost_usd, i};
    }
    qsort(v, m, sizeof *v, by_time_then_cost);
    /* A run is dominated by one strictly faster and no dearer, or one as
     * fast and strictly cheaper. Within a group of equal times the cheapest
     * (ties all) survive if strictly cheaper than everything faster. */
    double cheapest_faster = INFINITY;
    for (size_t g = 0; g < m;) {
        size_t end = g;
        double c = v[g].c; /* sorted: the group's least */
        while (end < m && v[end].t == v[g].t)
            end++;
        for (size_t k = g; k < end; k++)
            items[v[k].i].pareto = v[k].c == c && c < cheapest_faster;
        cheapest_faster = fmin(cheapest_faster, c);
        g = end;
    }
    free(v);
    return XS_OK;
}

int xs_rank_within(const xs_rank_item *it, double budget_usd, double deadline_h)
{
    return (budget_usd <= 0 || it->cost_usd <= budget_usd) &&
           (deadline_h <= 0 || it->run_time_s <= deadline_h * 3600);
}

/* The keys are copied beside the index: qsort has no context argument,
 * and the index last makes the order total, so the same whatever qsort
 * does. */
typedef struct {
    int group;
    double score, cost, time;
    size_t i;
} sort_key;

static int by_rank(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;
    if (x->group != y->group)
        return x->group - y->group;
    if (x->group == 0) {
        if (x->score != y->score)
            return x->score > y->score ? -1 : 1;
        if (x->cost != y->cost)
            return x->cost < y->cost ? -1 : 1;
        if (x->time != y->time)
            return x->time < y->time ? -1 : 1;
    }
    return (x->i > y->i) - (x->i < y->i);
}

int xs_rank_order(size_t *order, size_t n, const xs_rank_item *items,
                  const unsigned char *predicted)
{
    sort_key *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t j = 0; j < n; j++) {
        size_t i = order[j];
        v[j] = (sort_key){items[i].candidate ? 0 : predicted[i] ? 1 : 2, items[i].score,
                          items[i].cost_usd, items[i].run_time_s, i};
    }
    qsort(v, n, sizeof *v, by_rank);
    for (size_t j = 0; j < n; j++)
        order[j] = v[j].i;
    free(v);
    return 0;
}

int xs_rank_decide(xs_rank_item *items, size_t n, const unsigned char *predicted,
                   const xs_weights *w, double budget_usd, double deadline_h, size_t *order,
                   xs_rank_outcome *out, xs_error *err)
{
    memset(out, 0, sizeof *out);
    out->cheapest_usd = out->fastest_s = -1;
    for (size_t i = 0; i < n; i++) {
        xs_rank_item *k = &items[i];
        if (k->candidate) {
            out->fitting++;
            if (out->cheapest_usd < 0 || k->cost_usd < out->cheapest_usd)
                out->cheapest_usd = k->cost_usd;
            if (out->fastest_s < 0 || k->run_time_s < out->fastest_s)
                out->fastest_s = k->run_time_s;
        }
        if (k->candidate && !xs_rank_within(k, budget_usd, deadline_h)) {
            out->dropped++;
            k->candidate = 0; /* not in the field the others are scored against */
            continue;
        }
        order[out->shown++] = i;
    }
    if (out->fitting && out->dropped == out->fitting) {
        out->none_within = 1;
        return XS_OK;
    }
    xs_rank_score(items, n, w);
    int rc = xs_rank_pareto(items, n, err);
    if (!rc && xs_rank_order(order, out->shown, items, predicted))
        rc = xs_error_set(err, XS_ENOMEM, "out of memory");
    return rc;
}
