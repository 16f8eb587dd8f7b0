/* memory.c — see memory.h. */
#include "memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "fsdp.h"

/* Bytes a parameter takes in each role, by precision and AMP mode: the
 * model's own weights, a master copy, the gradients autograd writes, the
 * master gradients, one element of optimizer state. */
typedef struct {
    int weight, master, grad, master_grad, state;
} elem_bytes;

static elem_bytes bytes_of(const xs_train *t)
{
    int mixed = t->precision == XS_P_AMP_FP16 || t->precision == XS_P_AMP_BF16;
    if (mixed && t->amp_mode == XS_AMP_O2) /* half model, fp32 master copy and gradients */
        return (elem_bytes){2, 4, 2, 4, 4};
    /* pure bf16 (and Transformer Engine's fp8, whose model is bf16): states
     * in the parameters' format */
    if (t->precision == XS_P_BF16 || t->precision == XS_P_FP8)
        return (elem_bytes){2, 0, 2, 0, 2};
    return (elem_bytes){4, 0, 4, 0, 4}; /* fp32, tf32, autocast (fp32 parameters) */
}

/* Elements of optimizer state a parameter: SGD's momentum buffer; Adam's
 * exp_avg and exp_avg_sq (BertAdam's next_m, next_v); Adan's m, v, n and
 * the previous gradient (training-math.md). Created at the first step and
 * kept. */
static int state_elems(int optimizer)
{
    switch (optimizer) {
    case XS_OPT_SGD: return 1;
    case XS_OPT_ADAN: return 4;
    default: return 2;
    }
}

/* Gradients persist across the forward when a micro-batch adds into the
 * last one's (grad_accum > 1) or zero_grad zero-fills instead of freeing
 * (train.zero_grad zero); with set_to_none and one micro-batch each
 * gradient is created in the backward, as its op runs. apex O2 sets the
 * half gradients to None before every backward whatever zero_grad does.
 * A forward + backward benchmark (train.timed fwd_bwd) never zeroes them:
 * each call adds into the last one's. */
static int grads_persist(const xs_train *t, int o2)
{
    if (o2)
        return 0;
    return t->grad_accum > 1 || t->zero_grad == XS_ZERO_GRAD_ZERO ||
           t->timed == XS_TIMED_FWD_BWD;
}

/* The CUDA context of a PyTorch process before its first tensor (driver
 * state and the module images of the kernels loaded), outside the caching
 * allocator, by era (MiB): every kernel loaded at start before CUDA 11.7
 * (nvidia-smi after torch.ones((1,1)).to("cuda") on a V100, CUDA 11.2:
 * 1343 MiB, huggingface/transformers@249ef81 docs/source/en/
 * model_memory_anatomy.md); PyTorch 1.13's own eager loading (cudaMemGetInfo
 * after a small tensor, CUDA_MODULE_LOADING=DEFAULT: 666,632,192 bytes,
 * pytorch/pytorch#86509, the PR that made LAZY the default from 1.13.0);
 * lazy loading, kernels loaded as they are first used: "around 400MB"
 * (pytorch/pytorch#109888, a maintainer; 274 MiB before any kernel ran,
 * #86509). The NGC 22.09 container of the pytorch-1.13 scenarios predates
 * that default. */
static double context_mib(const xs_scenario *s)
{
    if (s->cuda_context_mib > 0)
        return s->cuda_context_mib;
    switch (s->host.framework) {
    case XS_FW_PT18: return 1343;
    case XS_FW_PT113: return 666632192.0 / 1048576;
    default: return 400;
    }
}

/* What the walk reads of an op, worked out once per op of the list (a
 * compact list runs each many times): its terms, the allocator's rounding
 * of its transient, its gradients in bytes, and the master gradients
 * alive while it runs (extra). */
typedef struct {
    double saved, slack, grads, grad_slack, temp, temp_slack, freed, freed_slack, extra;
    double gather, unsharded_freed, grads_freed; /* FSDP's (op.h) */
    int phase, comm;
} walk_op;

/* The walk's running sums, the op before's transient, and the largest
 * activations seen. */
typedef struct {
    double saved, slack, grads, grad_slack, prev_temp, prev_temp_slack, activations_max;
    double unsharded; /* FSDP's units gathered now */
    int prev_phase;
} walk_state;

/* The peak so far: the live bytes, their parts and the op. */
typedef struct {
    double live, activations, grads, transient, fragmentation, unsharded;
    size_t at;
} walk_peak;

/* What a span's repetition saw: its peak, its largest activations, and
 * the least any backward op left before the clamp at 0 (infinite: none). */
typedef struct {
    walk_peak peak;
    double activations_max, left_saved, left_slack;
} walk_rep;

/* One op of the step: kept tensors pile up in the forward and go in the
 * backward; gradients appear as their ops run (or persist); an op's output
 * and its input (the op before's output) are alive while it runs. The
 * slack is what the allocator rounds those tensors up by; the caching
 * allocator is CUDA's (cuda), a CPU tensor is a malloc. */
static inline void walk_step(walk_state *st, const walk_op *op, size_t at, int persist, int cuda,
                             walk_peak *pk, walk_rep *rep)
{
    if (op->comm) { /* in place in the buckets; FSDP's gathered units */
        st->unsharded += op->gather;
        st->grads -= op->grads_freed;
        return;
    }
    /* forward ops, and a checkpointed layer's forward run again in the
     * backward */
    st->saved += op->saved;
    st->slack += op->slack;
    if (!persist) {
        st->grads += op->grads;
        st->grad_slack += op->grad_slack;
    }
    int same = op->phase == st->prev_phase;
    double tr = op->temp + (same ? st->prev_temp : 0);
    double frag =
        cuda ? st->slack + st->grad_slack + op->temp_slack + (same ? st->prev_temp_slack : 0) : 0;
    double live = st->saved + st->grads + op->extra + tr + frag + st->unsharded;
    if (live > pk->live)
        *pk = (walk_peak){live, st->saved, st->grads + op->extra, tr, frag, st->unsharded, at};
    if (st->saved > st->activations_max)
        st->activations_max = st->saved;
    if (op->phase == XS_PH_BWD) {
        double left = st->saved - op->freed, left_slack = st->slack - op->freed_slack;
        if (rep) {
            rep->left_saved = left < rep->left_saved ? left : rep->left_saved;
            rep->left_slack = left_slack < rep->left_slack ? left_slack : rep->left_slack;
        }
        st->saved = left > 0 ? left : 0; /* fmax(0, x), inlined */
        st->slack = left_slack > 0 ? left_slack : 0;
    }
    st->unsharded -= op->unsharded_freed;
    st->prev_temp = op->temp;
    st->prev_temp_slack = op->temp_slack;
    st->prev_phase = op->phase;
}

/* A whole number of bytes, from 0 to 2^52 (adding 2^52 rounds a double
 * in that range to a whole number: it is one if that changes nothing). */
static inline int whole(double x)
{
    /* & not &&: no branches in the span's test of every term */
    return (x >= 0) & (x < 0x1p52) & ((x + 0x1p52) - 0x1p52 == x);
}

/* Whether the walk's sums through a span run `reps` times from st are
 * exact: the sums it starts from and every term of its ops are whole
 * numbers of bytes, and all of them together (a bound on any sum the walk
 * makes there) stay below 2^52, where doubles hold every whole number. */
static int span_exact(const walk_state *st, const walk_op *w, const struct xs_wl_span *sp)
{
    const double start[] = {st->saved, st->slack, st->grads, st->grad_slack, st->prev_temp,
                            st->prev_temp_slack};
    int ok = 1;
    double total = 0, span = 0;
    for (size_t x = 0; x < sizeof start / sizeof start[0]; x++) {
        ok &= whole(start[x]);
        total += start[x];
    }
    ok &= st->unsharded == 0; /* FSDP's lists are flat: its terms walked op by op */
    for (size_t i = sp->first; i < sp->first + sp->len; i++) {
        const walk_op *op = &w[i];
        ok &= whole(op->saved) & whole(op->slack) & whole(op->grads) & whole(op->grad_slack) &
              whole(op->temp) & whole(op->temp_slack) & whole(op->freed) &
              whole(op->freed_slack) & whole(op->extra) & (op->gather == 0) &
              (op->unsharded_freed == 0) & (op->grads_freed == 0);
        span += op->saved + op->slack + op->grads + op->grad_slack + op->temp + op->temp_slack +
                op->freed + op->freed_slack + op->extra;
    }
    return ok && total + span * (double)sp->repeat < 0x1p52;
}

/* A span of a compact list run `repeat` times, where every term is a whole
 * number of bytes and no sum can reach 2^53 (exact): every addition is
 * exact, so from the second repetition on each adds the same bytes to the
 * sums, and a third one onwards is the second's shifted by what one adds
 * (delta), as long as no backward op would go below 0 (the clamp). Then
 * each op's live bytes move by the same step from repetition to
 * repetition, and the walk's peak over them is the second's, or its
 * first-largest op in the last repetition when they grow: what the walk
 * op by op finds, the same bits. Otherwise the span is walked op by op. */
static void walk_span(walk_state *st, const walk_op *w, const struct xs_wl_span *sp, int persist,
                      int cuda, walk_peak *pk)
{
    uint32_t reps = sp->repeat;
    size_t e = sp->first + sp->len;
    if (reps < 3 || !span_exact(st, w, sp)) {
        for (uint32_t r = 0; r < reps; r++)
            for (size_t i = sp->first; i < e; i++)
                walk_step(st, &w[i], i, persist, cuda, pk, NULL);
        return;
    }
    for (size_t i = sp->first; i < e; i++)
        walk_step(st, &w[i], i, persist, cuda, pk, NULL);
    walk_state before = *st;
    walk_rep rep = {{-1, 0, 0, 0, 0, 0, 0}, 0, INFINITY, INFINITY};
    st->activations_max = 0; /* the second repetition's own, restored below */
    for (size_t i = sp->first; i < e; i++)
        walk_step(st, &w[i], i, persist, cuda, &rep.peak, &rep);
    rep.activations_max = st->activations_max;
    st->activations_max = before.activations_max;
    double n = (double)(reps - 2);
    double d_saved = st->saved - before.saved, d_slack = st->slack - before.slack;
    double d_grads = st->grads - before.grads, d_grad_slack = st->grad_slack - before.grad_slack;
    int linear = rep.left_saved >= 0 && rep.left_saved + n * d_saved >= 0 &&
                 rep.left_slack >= 0 && rep.left_slack + n * d_slack >= 0;
    if (!linear) { /* the second repetition stands as walked; the rest op by op */
        if (rep.peak.live > pk->live)
            *pk = rep.peak;
        if (rep.activations_max > st->activations_max)
            st->activations_max = rep.activations_max;
        for (uint32_t r = 2; r < reps; r++)
            for (size_t i = sp->first; i < e; i++)
                walk_step(st, &w[i], i, persist, cuda, pk, NULL);
        return;
    }
    double d_frag = cuda ? d_slack + d_grad_slack : 0;
    double d_live = d_saved + d_grads + d_frag;
    walk_peak top = rep.peak; /* the span's largest: the second repetition's ... */
    if (d_live > 0) {         /* ... or the last's, the same op */
        top.live += n * d_live;
        top.activations += n * d_saved;
        top.grads += n * d_grads;
        top.fragmentation += n * d_frag;
    }
    if (top.live > pk->live)
        *pk = top;
    double act = rep.activations_max + (d_saved > 0 ? n * d_saved : 0);
    if (act > st->activations_max)
        st->activations_max = act;
    st->saved += n * d_saved;
    st->slack += n * d_slack;
    st->grads += n * d_grads;
    st->grad_slack += n * d_grad_slack;
}

int xs_memory_predict(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                      xs_memory *m, xs_error *err)
{
    memset(m, 0, sizeof *m);
    const xs_train *t = &s->train;
    int mixed = t->precision == XS_P_AMP_FP16 || t->precision == XS_P_AMP_BF16;
    int o2 = mixed && t->amp_mode == XS_AMP_O2;
    elem_bytes eb = bytes_of(t);
    int fused;
    int o = xs_train_optimizer(t, &fused);
    /* P: what the optimizer trains (gradients, master copies, state); the
     * frozen rest (LoRA's base) holds its weights alone, those stored
     * quantized (QLoRA) in their packed bytes */
    double P = wl->trainable_params;
    /* ZeRO-1 splits the optimizer state and the fp32 master copy over the
     * devices, ZeRO-2 the gradients too (Rajbhandari et al., SC'20, "ZeRO",
     * sec. 5: P_os, P_os+g); what DDP keeps whole is 1/1 */
    double shard = s->devices > 1 && s->sharding != XS_SHARD_NONE ? 1.0 / (double)s->devices : 1;
    double gshard = s->devices > 1 && s->sharding == XS_SHARD_ZERO2 ? shard : 1;
    /* FSDP shards the parameters too; the walk adds the units gathered at
     * the peak. Its gradients are written unsharded, in its reduce format,
     * and each unit's reduce-scatter leaves its shard (wl_fsdp.c); they
     * persist across micro-batches only under no_sync (fsdp.h). */
    int fsdp = xs_fsdp_on(s);
    xs_fsdp_formats ff;
    xs_fsdp_formats_of(s, &ff);
    double gbytes = fsdp ? ff.reduce : eb.grad;
    m->weights = (wl->params - wl->quant_params) * eb.weight * (fsdp ? shard : 1) +
                 wl->quant_bytes + P * eb.master * shard;
    /* the optimizer makes its state at its first step(), which a forward
     * + backward benchmark never calls */
    m->optimizer = t->timed == XS_TIMED_FWD_BWD ? 0 : P * state_elems(o) * eb.state * shard;
    int persist = fsdp ? t->grad_accum > 1 : grads_persist(t, o2);
    /* apex O2's fp32 master gradients exist from its unscale after the
     * backward to the end of the step (apex/amp/_process_optimizer.py @
     * f17401f: post_backward_with_master_weights makes them, new_step sets
     * them to None), so through the later micro-batches too when they
     * accumulate there */
    double master_grads = P * eb.master_grad * shard;
    int master_all_step = t->grad_accum > 1;

    /* DDP's buckets (wl_ddp.c) are allocated once and live all step; XLA
     * (a TPU) sums the gradients in place and has none (tpu_dp.c) */
    const xs_backend *be = xs_backend_of(dev);
    int cuda = be->cuda;
    walk_state st = {0};
    st.grads = (persist ? P * gbytes * gshard : 0) + (cuda ? wl->ddp_buffer_bytes : 0);
    st.prev_phase = -1;
    walk_peak pk = {-1, 0, 0, 0, 0, 0, 0};
    walk_op local[128];
    walk_op *w = wl->n <= 128 ? local : malloc(wl->n * sizeof *w);
    if (!w)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        w[i] = (walk_op){op->mem.saved,
                         op->mem.slack,
                         op->mem.grads * gbytes * gshard,
                         op->mem.grad_slack,
                         op->mem.temp,
                         xs_alloc_slack(op->mem.temp),
                         op->mem.freed,
                         op->mem.freed_slack,
                         op->phase == XS_PH_OPT || master_all_step ? master_grads : 0,
                         op->mem.fsdp_gather,
                         op->mem.fsdp_free,
                         op->mem.fsdp_grad_free,
                         op->phase,
                         op->kind == XS_OP_COMM};
    }
    if (wl->spans) {
        for (size_t j = 0; j < wl->nspans; j++)
            walk_span(&st, w, &wl->spans[j], persist, cuda, &pk);
    } else {
        for (size_t i = 0; i < wl->n; i++)
            walk_step(&st, &w[i], i, persist, cuda, &pk, NULL);
    }
    if (w != local)
        free(w);
    m->activations_max = st.activations_max;
    if (pk.live >= 0) {
        m->weights += pk.unsharded;
        m->activations = pk.activations;
        m->grads = pk.grads;
        m->transient = pk.transient;
        m->fragmentation = pk.fragmentation;
        snprintf(m->peak_op, sizeof m->peak_op, "%s", wl->ops[pk.at].name);
        m->peak_phase = wl->ops[pk.at].phase;
    }
    if (cuda) {
        m->context = context_mib(s) * 1048576.0;
        m->workspace = (be->workspace_bytes ? be->workspace_bytes(dev) : 0) + m->context;
    }
    m->total = m->weights + m->grads + m->optimizer + m->activations + m->transient +
               m->fragmentation + m->workspace;
    m->capacity = dev->mem_usable_mib > 0 ? dev->mem_usable_mib * 1048576.0
                                          : dev->mem_capacity_gb * XS_GIB;
    m->fits = m->total <= m->capacity;
    return XS_OK;
}
