/* wl_fsdp.c — FSDP's collectives in the op list (cluster.sharding fsdp or
 * fsdp_grad_op; what FSDP does and the sources: fsdp.h, fsdp.c).
 *
 * A unit is a Transformer layer: in the forward a layer's ops form one run
 * of ops with its layer number (T5's encoder and decoder layers are
 * numbered from 0 each, so a unit is a run, not a number), and the
 * backward holds the same runs in reverse; the ops outside them are the
 * root unit's. A unit's parameters are the weight-gradient elements its
 * backward creates (a full fine-tune: fsdp.c refuses frozen parameters).
 *
 * Emitted, around the ops of the step (after the backward's replay):
 *   forward:  all_gather(root); per unit, all_gather(u) before its first
 *             op, which waits for it; FULL_SHARD reshards u after its last
 *             op;
 *   backward: FULL_SHARD, at each unit's first op, all_gather(u) if not
 *             prefetched and the prefetch of all_gather(u-1) (BACKWARD_PRE);
 *             at its last op the reshard and reduce_scatter(u), which
 *             starts after that op; the root's reduce_scatter after the
 *             backward's last op.
 * Every all-gather waits, as limit_all_gathers makes the host wait, for
 * the reshard two before it (the forward's unit u-2; at the backward's
 * start the forward's last but one). The optimizer's first op waits for
 * the last reduce-scatter (xs_wb_fsdp_step). */
#include "wl_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsdp.h"

typedef struct {
    size_t first, last; /* a unit's ops in a region: [first, last] */
} unit_run;

/* The runs of ops with one layer number (>= 0) in ops[from, to). */
static size_t runs_of(const xs_op *ops, size_t from, size_t to, unit_run *out)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++) {
        if (ops[i].layer < 0)
            continue;
        if (n > 0 && out[n - 1].last == i - 1 && ops[i - 1].layer == ops[i].layer)
            out[n - 1].last = i;
        else
            out[n++] = (unit_run){i, i};
    }
    return n;
}

/* limit_all_gathers: the reshards' free events in order, the ops after
 * which they are recorded (indices into the new list); before issuing an
 * all-gather the host waits for the oldest once two are pending
 * (_FreeEventQueue.dequeue_if_needed, _max_num_inflight_all_gathers 2). */
typedef struct {
    size_t *at;
    size_t head, tail;
} free_queue;

/* The compute op (1-based) an all-gather issued now must wait for. */
static int32_t limit(free_queue *q)
{
    if (q->tail - q->head < 2)
        return 0;
    return (int32_t)q->at[q->head++] + 1;
}

typedef struct {
    xs_wb *c;
    xs_op *ops; /* the new list */
    size_t n, cap;
    xs_fsdp_formats f;
    int failed;
} emitter;

static size_t push(emitter *e, const xs_op *op)
{
    if (xs_wb_push(&e->ops, &e->n, &e->cap, op))
        e->failed = 1;
    return e->n - 1;
}

/* A collective of a unit (unit -1: the root) over `elems` elements of
 * `bytes_each`, after the compute op dep (1-based, 0: none). */
static size_t collective(emitter *e, int coll, int unit, int layer, const char *when, double elems,
                         int bytes_each, int64_t count, int32_t dep)
{
    const xs_scenario *s = e->c->s;
    int bf16 = s->train.precision == XS_P_BF16 || s->train.precision == XS_P_AMP_BF16;
    xs_dtype dt = bytes_each == 4 ? XS_FP32 : bf16 ? XS_BF16 : XS_FP16;
    char name[48], who[16];
    if (unit < 0)
        snprintf(who, sizeof who, "root");
    else
        snprintf(who, sizeof who, "u%d", unit);
    snprintf(name, sizeof name, "fsdp.%s.%s%s", xs_coll_name(coll), who, when);
    xs_op op = xs_op_make(XS_OP_COMM, XS_PH_COMM, dt, name);
    op.layer = layer;
    op.coll = coll;
    op.elems = elems;
    op.bytes = elems * bytes_each; /* nccl-tests' S: the gathered, or the reduced, buffer */
    op.count = count;
    op.launches = 1;
    op.issue = XS_ISSUE_EAGER; /* FSDP's hooks are Python */
    op.dep_op = dep;
    if (coll == XS_COLL_ALLGATHER)
        op.mem.fsdp_gather = op.bytes;
    return push(e, &op);
}

int xs_wb_fsdp(xs_wb *c)
{
    const xs_scenario *s = c->s;
    xs_workload *wl = c->wl;
    size_t n = wl->n, bwd0 = n;
    for (size_t i = 0; i < n && bwd0 == n; i++)
        if (wl->ops[i].phase == XS_PH_BWD)
            bwd0 = i;
    unit_run *fr = malloc((n ? n : 1) * sizeof *fr), *br = malloc((n ? n : 1) * sizeof *br);
    double *elems = calloc(n ? n : 1, sizeof *elems);
    size_t *ag = malloc((n ? n : 1) * sizeof *ag);
    free_queue q = {malloc((2 * n + 2) * sizeof *q.at), 0, 0};
    emitter e = {.c = c};
    xs_fsdp_formats_of(s, &e.f);
    int rc = !fr || !br || !elems || !ag || !q.at;
    size_t U = rc ? 0 : runs_of(wl->ops, 0, bwd0, fr);
    size_t B = rc ? 0 : runs_of(wl->ops, bwd0, n, br);
    if (!rc && U != B) /* every layer's forward has its backward: not so, not FSDP's units */
        rc = 1;
    /* each unit's parameters, from its backward (run j is unit U-1-j) */
    double total = 0;
    for (size_t j = 0; j < B && !rc; j++) {
        size_t u = U - 1 - j;
        for (size_t i = br[j].first; i <= br[j].last; i++)
            elems[u] += wl->ops[i].mem.grads;
        total += elems[u];
    }
    double root = wl->trainable_params - total;
    if (root < 0)
        root = 0;
    int full = s->sharding == XS_SHARD_FSDP;
    double N = (double)s->devices;
    int64_t ga = s->train.grad_accum;
    /* the unsharded gradient a reduce-scatter frees, less the shard kept:
     * freed when the next one is issued (it is in flight until then) */
    double pending = 0;
#define GRAD_FREE(x) ((x) * (e.f.reduce - e.f.shard_grad / N))
    if (!rc) {
        size_t a = collective(&e, XS_COLL_ALLGATHER, -1, -1, ".fwd", root, e.f.gather, ga, 0);
        size_t k = 0;
        for (size_t i = 0; i < bwd0 && !e.failed; i++) {
            xs_op op = wl->ops[i];
            if (i == 0)
                op.comm_dep = (int32_t)a + 1;
            if (k < U && i == fr[k].first) {
                ag[k] = collective(&e, XS_COLL_ALLGATHER, (int)k, op.layer, ".fwd", elems[k],
                                   e.f.gather, ga, limit(&q));
                op.comm_dep = (int32_t)ag[k] + 1;
            }
            int ends_unit = k < U && i == fr[k].last;
            if (ends_unit && full)
                op.mem.fsdp_free += elems[k] * e.f.gather;
            size_t at = push(&e, &op);
            if (ends_unit && full)
                q.at[q.tail++] = at;
            k += ends_unit;
        }
        /* the backward: unit u's run is br[U-1-u] */
        unsigned char *gathered = calloc(U ? U : 1, 1);
        size_t last_compute = 0;
        if (!gathered)
            e.failed = 1;
        size_t j = 0;
        for (size_t i = bwd0; i < n && !e.failed; i++) {
            xs_op op = wl->ops[i];
            size_t u = j < B ? U - 1 - j : 0;
            if (j < B && i == br[j].first && full) {
                if (!gathered[u])
                    ag[u] = collective(&e, XS_COLL_ALLGATHER, (int)u, op.layer, ".bwd", elems[u],
                                       e.f.gather, ga, limit(&q));
                gathered[u] = 1;
                if (u >= 1 && !gathered[u - 1]) { /* BACKWARD_PRE: the next unit's, now */
                    ag[u - 1] = collective(&e, XS_COLL_ALLGATHER, (int)u - 1,
                                           wl->ops[br[j + 1].first].layer, ".bwd", elems[u - 1],
                                           e.f.gather, ga, limit(&q));
                    gathered[u - 1] = 1;
                }
                op.comm_dep = (int32_t)ag[u] + 1;
            }
            int ends_unit = j < B && i == br[j].last;
            if (ends_unit) /* resharded after its backward, whatever the strategy */
                op.mem.fsdp_free += elems[u] * e.f.gather;
            if (i == n - 1) /* the root's backward ends the step's */
                op.mem.fsdp_free += root * e.f.gather;
            last_compute = push(&e, &op);
            if (ends_unit)
                q.at[q.tail++] = last_compute;
            if (ends_unit) {
                size_t r = collective(&e, XS_COLL_REDUCE_SCATTER, (int)u, op.layer, "", elems[u],
                                      e.f.reduce, 1, (int32_t)last_compute + 1);
                e.ops[r].mem.fsdp_grad_free = pending;
                pending = GRAD_FREE(elems[u]);
                j++;
            }
        }
        free(gathered);
        if (!e.failed) {
            size_t r = collective(&e, XS_COLL_REDUCE_SCATTER, -1, -1, "", root, e.f.reduce, 1,
                                  (int32_t)last_compute + 1);
            e.ops[r].mem.fsdp_grad_free = pending + GRAD_FREE(root);
        }
    }
#undef GRAD_FREE
    double largest = 0;
    for (size_t u = 0; u < U; u++)
        if (elems[u] > largest)
            largest = elems[u];
    free(fr), free(br), free(elems), free(ag), free(q.at);
    if (rc || e.failed) {
        free(e.ops);
        c->failed = 1;
        return -1;
    }
    free(wl->ops);
    wl->ops = e.ops;
    wl->n = e.n;
    wl->cap = e.cap;
    wl->fsdp_units = (int64_t)U + 1;
    wl->fsdp_unit_bytes = largest * e.f.gather;
    wl->fsdp_root_bytes = root * e.f.gather;
    return 0;
}

/* After the optimizer's ops: each device steps its shard (the optimizer's
 * work divided by the devices, its launches kept), and the first of them
 * waits for the last reduce-scatter. No all-gather follows: the next
 * forward's gather the updated shards. */
int xs_wb_fsdp_step(xs_wb *c)
{
    xs_workload *wl = c->wl;
    double n = (double)c->s->devices;
    size_t last_comm = wl->n;
    for (size_t i = 0; i < wl->n; i++)
        if (wl->ops[i].kind == XS_OP_COMM)
            last_comm = i;
    xs_wb_divide_optimizer(wl, n);
    for (size_t i = last_comm + 1; i < wl->n; i++)
        if (wl->ops[i].phase == XS_PH_OPT) {
            wl->ops[i].comm_dep = (int32_t)last_comm + 1;
            break;
        }
    return 0;
}
