/* est_memo.c — see est_memo.h. The key is every byte of the device and
 * of the op: an op that differs in any field, its name included (the CPU
 * model reads it), only misses; it never hits wrongly. Per thread (C11
 * _Thread_local), so OpenMP sweeps share nothing and take no lock;
 * fixed-size, so a prediction allocates nothing for it. */
#include "est_memo.h"

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
    xs_device dev;
    memo_entry slots[MEMO_SLOTS];
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
    oldest->stamp = ++memo_clock;
    oldest->dev = *dev;
    return oldest;
}

/* A few fields that tell most ops apart, mixed: where to look first. The
 * whole op is compared. */
static unsigned op_hash(const xs_op *op)
{
    uint64_t w[6], h = 0x9e3779b97f4a7c15ull;
    memcpy(&w[0], &op->bytes, 8);
    memcpy(&w[1], &op->flops, 8);
    memcpy(&w[2], &op->elems, 8);
    w[3] = (uint64_t)op->m ^ (uint64_t)op->n << 21 ^ (uint64_t)op->k << 42;
    w[4] = (uint64_t)op->kind << 8 ^ (uint64_t)op->phase ^ (uint64_t)op->layer << 16;
    memcpy(&w[5], op->name, 8);
    for (int i = 0; i < 6; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return (unsigned)h;
}

int xs_est_memo_get(void *table, const xs_op *op, xs_estimate *e)
{
    memo_device *t = table;
    unsigned h = op_hash(op);
    for (unsigned p = 0; p < MEMO_PROBES; p++) {
        const memo_entry *s = &t->slots[(h + p) & (MEMO_SLOTS - 1)];
        if (s->gen != t->gen)
            return 0;
        if (memcmp(&s->op, op, sizeof *op) == 0) {
            *e = s->e;
            return 1;
        }
    }
    return 0;
}

void xs_est_memo_put(void *table, const xs_op *op, const xs_estimate *e)
{
    memo_device *t = table;
    unsigned h = op_hash(op);
    memo_entry *s = &t->slots[h & (MEMO_SLOTS - 1)]; /* full: the first probe's is replaced */
    for (unsigned p = 0; p < MEMO_PROBES; p++) {
        memo_entry *q = &t->slots[(h + p) & (MEMO_SLOTS - 1)];
        if (q->gen != t->gen) {
            s = q;
            break;
        }
    }
    s->gen = t->gen;
    s->op = *op;
    s->e = *e;
}

void xs_est_memo_forget(void)
{
    for (int i = 0; i < MEMO_DEVICES; i++)
        tables[i].gen = 0;
}
