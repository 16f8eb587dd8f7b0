/* bounds.h — the largest inputs xpusim predicts, and why: beyond them the
 * numbers describe no real run, and the arithmetic that turns them into
 * shapes, byte counts, times and dollars would overflow or lose meaning.
 * Each limit is refused with one line naming the fields involved, instead
 * of a wrapped shape or an inf/NaN in a report. */
#ifndef XS_BOUNDS_H
#define XS_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "scenario.h"
#include "schema.h"

/* Every element count of one tensor, the parameter count and the tokens of
 * one optimizer step stay at or below 2^50 (about 1.1e15). Why 2^50: an op's
 * byte count is elements x up to 8 bytes x a few operands, and its step
 * total that again x layers x micro-batches; below 2^50 elements those stay
 * under 2^63 when computed as int64 and exact to the element as a double
 * (2^53). It is also far past any real run: 2^50 parameters is over 500
 * times the largest model trained so far (~2e12), 2^50 tokens a step over
 * 10^8 times a large pre-training batch (~4e6 tokens). */
#define XS_MAX_COUNT ((int64_t)1 << 50)

/* Check the counts a scenario implies (per-tensor elements, parameters,
 * tokens and samples per step, steps of the run) against XS_MAX_COUNT and
 * int64 range. where names the scenario in the message. XS_ERANGE with a
 * message like "where: train.batch x train.seq x model.ffn = 1.2e+18
 * elements in one tensor exceeds 2^50 = 1.1e+15 ...". */
int xs_scn_bounds_check(const xs_scenario *s, const char *where, xs_error *err);

/* Its first part alone: every count a shape or a step divides by (batch,
 * seq, layers, heads, ...) at least 1. The loader's schema ensures them;
 * a scenario changed in code may not, and the relations divide by them. */
int xs_scn_counts_check(const xs_scenario *s, const char *where, xs_error *err);

#endif
