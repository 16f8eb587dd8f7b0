/* est_memo.c — see est_memo.h. The key is every byte of the device and
 * of the op but its count: an op that differs in any other field, its
 * name included (the CPU model reads it), only misses; it never hits
 * wrongly. An estimate is one call's, whatever the count (the step's sums
 * multiply it): a sweep over grad_accum, which changes only the counts,
 * finds every op (test_memo checks a prediction at another count against
 * a cold one). Per thread (C11
 * _Thread_local), so OpenMP sweeps share nothing and take no lock;
 * fixed-size, so a prediction allocates nothing for it. */
#include "est_memo.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MEMO_DEVICES 2 /* a device and its corner, or two devices in turn */
#define MEMO_SLOTS 512 /* ops per device, a power of two: a compact step has ~150 */
#define MEMO_PROBES 8

/* an entry holds an op of its table while their generations agree: a
 * table given to another device empties at once, without a pass over it */
typedef struct {
    unsigned long gen;
    xs_op op;
    xs_estimate e;
} memo_entry;

typedef struct {
    unsigned long gen; /* 0: unused */
    unsigned long stamp; /* last use, for eviction */
    unsigned live;       /* entries put since gen began */
    xs_device dev;
    memo_entry slots[MEMO_SLOTS];
    /* the slot that held the op at each place of the last list predicted
     * (+1; 0: none): where the next list's op at that place is looked for
     * first, as the next prediction often has the same ops */
    unsigned short at[MEMO_SLOTS];
} memo_device;

static _Thread_local memo_device tables[MEMO_DEVICES];
static _Thread_local unsigned long memo_clock, memo_gens;

void *xs_est_memo_table(const xs_device *dev)
{
    memo_device *oldest = &tables[0];
    for (int i = 0; i < MEMO_DEVICES; i++) {
        memo_device *t = &tables[i];
        if (t->gen && memcmp(&t->dev, dev, sizeof *dev) == 0) {
            t->stamp = ++memo_clock;
            return t;
        }
        if (!t->gen || (oldest->gen && t->stamp < oldest->stamp))
            oldest = t;
    }
    oldest->gen = ++memo_gens;
    oldest->live = 0;
    oldest->stamp = ++memo_clock;
    memcpy(&oldest->dev, dev, sizeof *dev);
    return oldest;
}

/* A few fields that tell most ops apart, mixed (independent multiplies,
 * one mix at the end): where to look first. The whole op is compared. */
static unsigned op_hash(const xs_op *op)
{
    uint64_t bytes, flops, name;
    memcpy(&bytes, &op->bytes, 8);
    memcpy(&flops, &op->flops, 8);
    memcpy(&name, op->name, 8);
    uint64_t shape = (uint64_t)op->m ^ (uint64_t)op->n << 20 ^ (uint64_t)op->k << 40;
    uint64_t h = bytes * 0x9e3779b97f4a7c15ull ^ flops * 0xc2b2ae3d27d4eb4full ^
                 shape * 0x165667b19e3779f9ull ^ name * 0xff51afd7ed558ccdull ^
                 ((uint64_t)(unsigned)op->kind << 8 ^ (uint64_t)(unsigned)op->phase ^
                  (uint64_t)(unsigned)op->layer << 12);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return (unsigned)(h ^ h >> 32);
}

/* a and b in every byte but their counts' (xs_op's last field) */
_Static_assert(offsetof(xs_op, count) + sizeof(int64_t) == sizeof(xs_op),
               "xs_op.count must be the op's last bytes");
static int same_op(const xs_op *a, const xs_op *b)
{
    return memcmp(a, b, offsetof(xs_op, count)) == 0;
}

int xs_est_memo_get(void *table, size_t i, const xs_op *op, xs_estimate *e)
{
    memo_device *t = table;
    unsigned short *at = i < MEMO_SLOTS ? &t->at[i] : NULL;
    if (at && *at) {
        const memo_entry *s = &t->slots[*at - 1];
        if (s->gen == t->gen && same_op(&s->op, op)) {
            memcpy(e, &s->e, sizeof *e);
            return 1;
        }
    }
    unsigned h = op_hash(op);
    for (unsigned p = 0; p < MEMO_PROBES; p++) {
        unsigned k = (h + p) & (MEMO_SLOTS - 1);
        const memo_entry *s = &t->slots[k];
        if (s->gen != t->gen)
            return 0;
        if (same_op(&s->op, op)) {
            memcpy(e, &s->e, sizeof *e);
            if (at)
                *at = (unsigned short)(k + 1);
            return 1;
        }
    }
    return 0;
}

void xs_est_memo_put(void *table, size_t i, const xs_op *op, const xs_estimate *e)
{
    memo_device *t = table;
    /* three quarters full (a sweep's earlier points' ops): start afresh,
     * before long probe chains and evictions within one list set in */
    if (++t->live > MEMO_SLOTS / 4 * 3) {
        t->gen = ++memo_gens;
        t->live = 1;
    }
    unsigned h = op_hash(op);
    unsigned k = h & (MEMO_SLOTS - 1); /* full: the first probe's is replaced */
    for (unsigned p = 0; p < MEMO_PROBES; p++) {
        unsigned q = (h + p) & (MEMO_SLOTS - 1);
        if (t->slots[q].gen != t->gen) {
            k = q;
            break;
        }
    }
    memo_entry *s = &t->slots[k];
    s->gen = t->gen;
    /* as bytes, padding and all: the key is compared as bytes */
    memcpy(&s->op, op, sizeof *op);
    memcpy(&s->e, e, sizeof *e);
    if (i < MEMO_SLOTS)
        t->at[i] = (unsigned short)(k + 1);
}

void xs_est_memo_forget(void)
{
    for (int i = 0; i < MEMO_DEVICES; i++)
        tables[i].gen = 0;
}
