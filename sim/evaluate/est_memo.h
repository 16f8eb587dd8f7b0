/* est_memo.h — op estimates remembered per thread, by device and op: a
 * sweep's points, compare's devices and steps' recipes predict the same
 * ops (every op of a step that a varied key does not touch) again and
 * again, and a device model's estimate is a function of the device and
 * the op alone (backend.h). Not part of the public API. */
#ifndef XS_EST_MEMO_H
#define XS_EST_MEMO_H

#include <stddef.h>

#include "device.h"
#include "op.h"

/* This thread's table for dev as it is now (all its bytes: clock scale,
 * power limit and corners included), found or made; NULL where none can
 * be had. Valid on this thread until the next xs_est_memo_table call. */
void *xs_est_memo_table(const xs_device *dev);

/* 1 and *e as estimated before where op (all its bytes but its count:
 * an estimate is one call's) is in the table,
 * else 0. i: op's place in its list (where the table looks first: the
 * op that was at i in the last list predicted). */
int xs_est_memo_get(void *table, size_t i, const xs_op *op, xs_estimate *e);

/* Remember e, the device model's estimate of op, the i-th of its list. */
void xs_est_memo_put(void *table, size_t i, const xs_op *op, const xs_estimate *e);

/* Forget all this thread remembers (tests: a prediction from nothing). */
void xs_est_memo_forget(void);

#endif
