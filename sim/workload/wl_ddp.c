/* wl_ddp.c — data parallel over cluster.devices: the gradient buckets the
 * DDP wrapper reduces while the backward still runs, and what ZeRO
 * sharding changes in the optimizer step.
 *
 * PyTorch's DistributedDataParallel (torch/nn/parallel/distributed.py,
 * _ddp_init_helper; team code index find_string id 35049393277) assigns
 * the parameters, in reverse order (the order the backward produces their
 * gradients), to buckets of bucket_cap_mb (25 MiB by default) with a first
 * bucket of dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB: "so that its
 * gradients don't spill into a much larger bucket, adding unnecessary
 * latency after gradient computation finishes"). The reducer's autograd
 * hook copies each gradient into its bucket as it is produced
 * (gradient_as_bucket_view defaults to False), divides a full bucket by the
 * world size and all-reduces it on NCCL's stream; at the end of the
 * backward it waits for every bucket and copies the results back into the
 * gradients. apex.parallel.DistributedDataParallel (NVIDIA/apex
 * apex/parallel/distributed.py: message_size=10000000 elements,
 * delay_allreduce False, allreduce_always_fp32 False; find_string id
 * 24979899055) does the same with buckets of 1e7 elements in the order the
 * gradients became ready, flattening each into a temporary and copying it
 * back. Both reduce the gradients in their own format: fp16 under apex O2
 * (a half model), fp32 under autocast (fp32 parameters).
 *
 * Here a bucket closes after the backward op whose gradients fill it (the
 * ops' weight-gradient terms, xs_op_mem.grads, in the order the backward
 * runs); under gradient accumulation only the last micro-batch reduces
 * (no_sync for the others, as the Hugging Face Trainer and accelerate do). */
#include "wl_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsdp.h"

#define MIB (1024.0 * 1024.0)
#define TORCH_FIRST_BUCKET MIB
#define TORCH_BUCKET (25 * MIB)
#define APEX_BUCKET_ELEMS 1e7

static xs_op ddp_op(const xs_wb *c, int kind, int phase, const char *name, double elems,
                    double bytes)
{
    xs_op op = xs_op_make(kind, phase, c->Wm == 2 ? (c->s->train.precision == XS_P_BF16 ||
                                                     c->s->train.precision == XS_P_AMP_BF16
                                                         ? XS_BF16
                                                         : XS_FP16)
                                                  : XS_FP32,
                          name);
    op.elems = elems;
    op.bytes = bytes;
    op.issue = XS_ISSUE_ENGINE; /* the reducer's hooks run in the autograd engine */
    op.dp_wrapper = kind != XS_OP_COMM;
    return op;
}

/* A full bucket: copied out of the gradients (torch's hook; apex's
 * flatten), divided by the world size, reduced on the comm stream. */
static int emit_bucket(xs_wb *c, xs_op **ops, size_t *n, size_t *cap, double bytes,
                       int64_t tensors, int coll, int64_t index)
{
    double gb = c->Wm, elems = bytes / gb;
    xs_op cp = ddp_op(c, XS_OP_COPY, XS_PH_BWD, "ddp.bucket_copy", elems, 2 * bytes);
    cp.launches = c->s->ddp == XS_DDP_APEX ? 1 : tensors; /* torch: one copy_ a gradient */
    if (c->s->ddp == XS_DDP_APEX) /* the flat temporary lives until it is copied back */
        cp.mem.temp = bytes;
    xs_op dv = ddp_op(c, XS_OP_ELTWISE, XS_PH_BWD, "ddp.bucket_div", elems, 2 * bytes);
    dv.flops = elems;
    xs_op cm = ddp_op(c, XS_OP_COMM, XS_PH_COMM, "", elems, bytes);
    snprintf(cm.name, sizeof cm.name, "ddp.%s.b%lld", xs_coll_name(coll), (long long)index);
    cm.coll = coll;
    cm.launches = 1;
    xs_workload *wl = c->wl;
    wl->buckets++;
    if (wl->buckets == 1)
        wl->first_bucket_bytes = bytes;
    if (bytes > wl->largest_bucket_bytes)
        wl->largest_bucket_bytes = bytes;
    return xs_wb_push(ops, n, cap, &cp) || xs_wb_push(ops, n, cap, &dv) ||
           xs_wb_push(ops, n, cap, &cm);
}

int xs_wb_data_parallel(xs_wb *c)
{
    const xs_scenario *s = c->s;
    xs_workload *wl = c->wl;
    if (s->devices <= 1 || c->failed)
        return 0;
    if (xs_fsdp_on(s))
        return xs_wb_fsdp(c);
    double gb = c->Wm; /* a gradient element: the model's weight format */
    double first = s->ddp == XS_DDP_APEX ? APEX_BUCKET_ELEMS * gb : TORCH_FIRST_BUCKET;
    double rest = s->ddp == XS_DDP_APEX ? APEX_BUCKET_ELEMS * gb : TORCH_BUCKET;
    int coll = s->sharding == XS_SHARD_ZERO2 ? XS_COLL_REDUCE_SCATTER : XS_COLL_ALLREDUCE;
    /* the last op that creates gradients closes the last bucket */
    size_t last = wl->n;
    for (size_t i = 0; i < wl->n; i++)
        if (wl->ops[i].phase == XS_PH_BWD && wl->ops[i].mem.grads > 0)
            last = i;
    if (last == wl->n)
        return 0; /* nothing trains */
    xs_op *ops = NULL;
    size_t n = 0, cap = 0;
    double acc = 0, cap_bytes = first, total = 0;
    int64_t tensors = 0, idx = 0;
    int rc = 0;
    for (size_t i = 0; i < wl->n && !rc; i++) {
        const xs_op *op = &wl->ops[i];
        rc = xs_wb_push(&ops, &n, &cap, op);
        if (rc || op->phase != XS_PH_BWD || !(op->mem.grads > 0))
            continue;
        acc += op->mem.grads * gb;
        tensors++;
        if (acc >= cap_bytes || i == last) {
            rc = emit_bucket(c, &ops, &n, &cap, acc, tensors, coll, idx++);
            total += acc;
            acc = 0;
            tensors = 0;
            cap_bytes = rest;
        }
    }
    /* the end of the backward: every bucket reduced, copied back into the
     * gradients (ZeRO-2: each device keeps its shard only) */
    if (!rc) {
        double back = coll == XS_COLL_REDUCE_SCATTER ? total / (double)s->devices : total;
        xs_op cb = ddp_op(c, XS_OP_COPY, XS_PH_BWD, "ddp.copy_back", back / gb, 2 * back);
        cb.launches = s->ddp == XS_DDP_APEX ? idx : wl->tensors;
        cb.comm_wait = 1;
        rc = xs_wb_push(&ops, &n, &cap, &cb);
    }
    if (rc) {
        free(ops);
        c->failed = 1;
        return -1;
    }
    free(wl->ops);
    wl->ops = ops;
    wl->n = n;
    wl->cap = cap;
    /* torch's buckets are allocated once and kept (one copy of every
     * gradient); ZeRO-2's reduce-scatter frees each after use, so one
     * bucket's worth is held; apex flattens into temporaries */
    if (s->ddp == XS_DDP_TORCH)
        wl->ddp_buffer_bytes = coll == XS_COLL_REDUCE_SCATTER ? wl->largest_bucket_bytes : total;
    return 0;
}

/* ZeRO-1/2: each device updates 1/devices of the parameters (its shard of
 * the optimizer state), then the updated weights are all-gathered before
 * the next forward: the optimizer ops shrink by the device count (their
 * launches stay: each device still walks its tensors' shards). */
int xs_wb_data_parallel_step(xs_wb *c)
{
    const xs_scenario *s = c->s;
    xs_workload *wl = c->wl;
    if (s->devices <= 1 || s->sharding == XS_SHARD_NONE || c->failed)
        return 0;
    if (xs_fsdp_on(s))
        return xs_wb_fsdp_step(c);
    double n = (double)s->devices;
    xs_wb_divide_optimizer(wl, n);
    double bytes = wl->trainable_params * c->Wm;
    xs_op ag = ddp_op(c, XS_OP_COMM, XS_PH_OPT, "zero.all_gather_params", bytes / c->Wm, bytes);
    ag.coll = XS_COLL_ALLGATHER;
    if (xs_wb_push(&wl->ops, &wl->n, &wl->cap, &ag)) {
        c->failed = 1;
        return -1;
    }
    return 0;
}
