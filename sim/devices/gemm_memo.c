/* gemm_memo.c — xs_gemm_model remembers its results. A training step runs
 * the same few GEMM shapes once per layer (BERT-large: 24 times each), and
 * compare, fit, advise and sweep predict the same step again and again;
 * the tile and split-K search is most of a prediction's time (callgrind:
 * 70% of xs_predict on bert-large-squad, a100-sxm4-80gb).
 *
 * The key is everything the search reads: the engine's bytes (but its
 * memo binding), the contents of its three tile lists, and the shape. The engine structs the backends
 * build are zeroed first, so equal engines compare equal; one that is not
 * only misses, it never hits wrongly. Per thread (C11 _Thread_local), so
 * OpenMP sweeps share nothing and take no lock; fixed-size, so the inner
 * loop allocates nothing. */
#include "gemm.h"

#include <stddef.h>
#include <string.h>

#define MEMO_ENGINES 4  /* engines remembered (devices, or a device's corners) */
#define MEMO_SLOTS 256  /* shapes per engine, a power of two */
#define MEMO_PROBES 8

typedef struct {
    int used;
    xs_gemm_shape g;
    xs_gemm_result r;
} memo_entry;

typedef struct {
    int used;
    unsigned long stamp; /* last use, for eviction */
    unsigned long gen;   /* which engine the slot holds: new at each (re)use */
    xs_gemm_engine e;
    xs_tile_set sets[3]; /* matrix, unaligned, vector */
    int has[3];
    memo_entry slots[MEMO_SLOTS];
} memo_engine;

static _Thread_local memo_engine memo[MEMO_ENGINES];
static _Thread_local unsigned long memo_clock, memo_gens;

static const xs_tile_set *engine_set(const xs_gemm_engine *e, int i)
{
    return i == 0 ? e->matrix : i == 1 ? e->unaligned : e->vector;
}

static int same_engine(const memo_engine *m, const xs_gemm_engine *e)
{
    if (!m->used || memcmp(&m->e, e, offsetof(xs_gemm_engine, memo)) != 0)
        return 0;
    for (int i = 0; i < 3; i++) {
        const xs_tile_set *s = engine_set(e, i);
        if (m->has[i] != (s != NULL) || (s && memcmp(&m->sets[i], s, sizeof *s) != 0))
            return 0;
    }
    return 1;
}

static memo_engine *engine_slot(const xs_gemm_engine *e)
{
    memo_engine *oldest = &memo[0];
    for (int i = 0; i < MEMO_ENGINES; i++) {
        if (same_engine(&memo[i], e))
            return &memo[i];
        if (!memo[i].used || (oldest->used && memo[i].stamp < oldest->stamp))
            oldest = &memo[i];
    }
    memset(oldest, 0, sizeof *oldest);
    oldest->used = 1;
    oldest->gen = ++memo_gens;
    oldest->e = *e;
    for (int i = 0; i < 3; i++) {
        const xs_tile_set *s = engine_set(e, i);
        oldest->has[i] = s != NULL;
        if (s)
            oldest->sets[i] = *s;
    }
    return oldest;
}

static int same_shape(const xs_gemm_shape *a, const xs_gemm_shape *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->batch == b->batch &&
           a->ta == b->ta && a->tb == b->tb && a->dtype == b->dtype &&
           a->out_bytes == b->out_bytes;
}

static unsigned shape_hash(const xs_gemm_shape *g)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the fields */
    const int64_t f[] = {g->m, g->n, g->k, g->batch, g->ta, g->tb, g->dtype, g->out_bytes};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        h ^= (uint64_t)f[i];
        h *= 1099511628211ull;
    }
    return (unsigned)(h ^ (h >> 32));
}

/* e's slot: the one bound to it where the binding holds (this engine, on
 * this thread, its slot not reused since), else found by comparing */
static memo_engine *slot_of(const xs_gemm_engine *e)
{
    const memo_engine *b = e->memo.slot;
    if (e->memo.engine == e && b >= &memo[0] && b < &memo[MEMO_ENGINES] && b->used &&
        b->gen == e->memo.gen)
        return &memo[b - &memo[0]];
    return engine_slot(e);
}

void xs_gemm_memo_bind(xs_gemm_engine *e)
{
    memset(&e->memo, 0, sizeof e->memo);
    if (!e->matrix || !e->vector || !e->unaligned) /* not a tile/wave engine */
        return;
    memo_engine *m = engine_slot(e);
    e->memo.engine = e;
    e->memo.slot = m;
    e->memo.gen = m->gen;
}

int xs_gemm_model(const xs_gemm_engine *e, const xs_gemm_shape *g, xs_gemm_result *r,
                  xs_error *err)
{
    if (!e->matrix || !e->vector || !e->unaligned) /* not a tile/wave engine (a TPU's MXUs) */
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "device %s: the tile/wave GEMM model covers GPUs and CPUs; a TPU's "
                            "matmuls go through its MXU model (xpusim predict)",
                            e->device_id ? e->device_id : "?");
    memo_engine *m = slot_of(e);
    m->stamp = ++memo_clock;
    unsigned h = shape_hash(g);
    memo_entry *free_slot = NULL;
    for (unsigned p = 0; p < MEMO_PROBES; p++) {
        memo_entry *s = &m->slots[(h + p) & (MEMO_SLOTS - 1)];
        if (s->used && same_shape(&s->g, g)) {
            *r = s->r;
            return XS_OK;
        }
        if (!s->used && !free_slot)
            free_slot = s;
    }
    int rc = xs_gemm_model_direct(e, g, r, err);
    if (rc == XS_OK) {
        memo_entry *s = free_slot ? free_slot : &m->slots[h & (MEMO_SLOTS - 1)];
        s->used = 1;
        s->g = *g;
        s->r = *r;
    }
    return rc;
}
