/* rank.h — turning a set of predicted runs into a decision: a weighted
 * score over normalised metrics, the Pareto-optimal runs on (run time,
 * cost), and the budget / deadline filters. Pure arithmetic on numbers it
 * is handed, so `compare` and any caller rank the same way. */
#ifndef XS_RANK_H
#define XS_RANK_H

#include <stddef.h>

#include "error.h"

/* How much each metric counts in the score; any non-negative numbers (only
 * their ratios matter), not all zero. */
typedef struct {
    double time;   /* the run's wall-clock time (lower is better) */
    double energy; /* the run's kWh (lower is better) */
    double cost;   /* the run's dollars (lower is better) */
    double util;   /* MFU (higher is better) */
} xs_weights;

/* time=1, cost=1: what compare is asked is which device finishes the run
 * soonest for the least money. Energy is already in a rented device's
 * hourly price, and MFU is a means (a slow device can be well used), so
 * both count only when asked. */
#define XS_WEIGHTS_DEFAULT ((xs_weights){1, 0, 1, 0})

/* Parse "time=W,energy=W,cost=W,util=W" (any subset, any order; a metric
 * not named weighs 0; each W a finite number in [0, 1e6]; at least one
 * above 0). Errors name the option, the part and what is expected. */
int xs_weights_parse(const char *text, xs_weights *w, xs_error *err);

/* One run to rank. The caller fills the metrics and candidate (1: the run
 * can start and passed the filters; the others get score 0 and pareto 0). */
typedef struct {
    double run_time_s, energy_kwh, cost_usd, mfu;
    int candidate;
    double score; /* out: in [0, 1], 1 = best on every weighted metric */
    int pareto;   /* out: 1 if no candidate is at least as fast and as cheap
                     and strictly better on one of the two */
} xs_rank_item;

/* Score the candidates: each metric normalised against the best candidate
 * (best/value where lower is better, value/best for MFU, so 1 is the best
 * and the others fall towards 0 in proportion), then the weighted mean of
 * the four. A metric every candidate has at 0 normalises to 1 for all. */
void xs_rank_score(xs_rank_item *items, size_t n, const xs_weights *w);

/* Mark the Pareto-optimal candidates on (run time, cost). Rows equal on
 * both are all kept. O(n log n); 0, or XS_ENOMEM. */
int xs_rank_pareto(xs_rank_item *items, size_t n, xs_error *err);

/* The filters: 1 if the run is within budget_usd and deadline_h (each
 * <= 0: no limit). */
int xs_rank_within(const xs_rank_item *it, double budget_usd, double deadline_h);

/* Put order (n indices into items) in the order compare lists the runs:
 * the candidates by score (ties: cheaper, then faster, then index), then
 * the runs predicted but not candidates (predicted[i] != 0), then those
 * that could not run, each group by index. 0, or -1 out of memory. */
int xs_rank_order(size_t *order, size_t n, const xs_rank_item *items,
                  const unsigned char *predicted);

/* What xs_rank_decide made of the runs: order[0, shown) the runs to list,
 * in compare's order; dropped of the fitting runs were outside the
 * limits. none_within: every run that fits is outside them (nothing is
 * ranked; the caller says so, with the cheapest run's dollars and the
 * fastest run's seconds). */
typedef struct {
    size_t shown, fitting, dropped;
    int none_within;
    double cheapest_usd, fastest_s;
} xs_rank_outcome;

/* The decision `xpusim compare` and xs_compare make over n runs (items:
 * metrics and candidate filled; predicted[i]: the run could be predicted):
 * the candidates outside budget_usd and deadline_h left out (and out of
 * the field the others are scored against), the rest scored (w) and
 * marked Pareto-optimal, and their order (order: n slots). 0, or XS_ENOMEM. */
int xs_rank_decide(xs_rank_item *items, size_t n, const unsigned char *predicted,
                   const xs_weights *w, double budget_usd, double deadline_h, size_t *order,
                   xs_rank_outcome *out, xs_error *err);

#endif
