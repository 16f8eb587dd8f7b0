/* workload.c — turns a scenario into the kernels of one optimizer step.
 *
 * Forward ops are emitted in order. Each forward op also records the
 * backward ops it implies on a tape (its own group); the tape is replayed in
 * reverse after the forward pass, so the backward is derived op by op, as
 * autograd runs it. The framework behaviour modelled is PyTorch eager with
 * torch.autocast (AMP): matmuls run in half precision; layer_norm, softmax
 * and the loss run in fp32 ("fp32 islands", autocast's fp32 op list), with a
 * cast kernel wherever a half op meets an fp32 tensor. Fused kernels
 * (train.kernels=fused) follow LightSeq: fewer passes and launches, the same
 * GEMMs, activations kept in the matmul format. */
/* The builder is split by concept: wl_build.h (the builder state and its
 * primitives), wl_emit.c (recording ops, the tape and memory terms),
 * wl_ops.c (layers' building blocks), wl_heads.c (task heads and the
 * loss), wl_optimizer.c, and one file per model family (wl_classic.c,
 * wl_llama.c). This file runs a scenario through them. */
#include "wl_build.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bounds.h"
#include "checked.h"
#include "grow.h"
#include "kernel_fn.h"
#include "family.h"
#include "fp8.h"
#include "gate.h"
#include "kernel_op.h"
#include "lora.h"

/* The backward, group by group from the last forward op to the first.
 * Each group's first op creates the gradients of the parameters its
 * forward op introduced; its last releases what its forward ops kept. A
 * group without ops hands both to the next op that runs; what was kept
 * after the last group (nothing, as the builders stand) goes at the end. */
static int replay_tape(xs_wb *c)
{
    double cf = 0, cfs = 0, cg = 0, cgs = 0; /* carried: freed, its slack, grads, theirs */
    double carried_in[4] = {0};
    int cur = -1; /* the checkpointed layer whose backward runs */
    int run = c->nruns - 1; /* the backward meets the last run first */
    for (size_t g = c->gn; g-- > 0;) {
        size_t end = g + 1 < c->gn ? c->groups[g + 1] : c->tn;
        int run_starts = run >= 0 && g + 1 == c->runs[run].g1;
        if (run_starts) {
            c->runs[run].b0 = c->wl->n;
            memcpy(carried_in, (double[]){cf, cfs, cg, cgs}, sizeof carried_in);
        }
        if (c->ckpt && c->glayer[g] != cur) {
            /* a checkpointed layer's backward is over: its input goes; the
             * next one's forward runs again first */
            if (cur >= 0 && c->wl->n > 0) {
                xs_op_mem *m = &c->wl->ops[c->wl->n - 1].mem;
                m->freed += c->ckpt_in[cur];
                m->freed_slack += xs_alloc_slack(c->ckpt_in[cur]);
            }
            cur = c->glayer[g];
            for (size_t i = cur >= 0 ? c->rstart[cur] : 0; cur >= 0 && i < c->rstart[cur + 1];
                 i++)
                if (xs_wb_push(&c->wl->ops, &c->wl->n, &c->wl->cap, &c->recomp[i]))
                    return -1;
        }
        cf += c->gfree[g];
        cfs += c->gfree_slack[g];
        cg += c->ggrad[g];
        cgs += c->ggrad_slack[g];
        for (size_t i = c->groups[g]; i < end; i++) {
            if (xs_wb_push(&c->wl->ops, &c->wl->n, &c->wl->cap, &c->tape[i]))
                return -1;
            xs_op *op = &c->wl->ops[c->wl->n - 1];
            op->mem.grads += cg;
            op->mem.grad_slack += cgs;
            cg = cgs = 0;
            if (i + 1 == end) {
                op->mem.freed += cf;
                op->mem.freed_slack += cfs;
                cf = cfs = 0;
            }
        }
        if (run >= 0 && g == c->runs[run].g0) {
            /* the run's block repeats only if it hands the next layer what
             * it was handed (the terms of groups without ops) */
            const double out[4] = {cf, cfs, cg, cgs};
            if (memcmp(out, carried_in, sizeof out) != 0)
                c->not_compact = 1;
            c->runs[run--].b1 = c->wl->n;
        }
    }
    if (c->wl->n > 0) {
        xs_op_mem *m = &c->wl->ops[c->wl->n - 1].mem;
        m->freed += cf + c->pending_saved;
        m->freed_slack += cfs + c->pending_slack;
        m->grads += cg;
        m->grad_slack += cgs;
        if (cur >= 0) {
            m->freed += c->ckpt_in[cur];
            m->freed_slack += xs_alloc_slack(c->ckpt_in[cur]);
        }
    }
    return 0;
}

static void setup(xs_wb *c, const xs_scenario *s, xs_workload *wl)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    memset(c, 0, sizeof *c);
    c->wl = wl;
    c->s = s;
    c->b = (double)t->batch;
    c->sq = (double)t->seq;
    c->h = (double)m->hidden;
    c->a = (double)m->heads;
    c->d = c->h / c->a;
    c->f = (double)m->ffn;
    c->V = (double)m->vocab;
    c->T = c->b * c->sq;
    int mixed = t->precision == XS_P_AMP_FP16 || t->precision == XS_P_AMP_BF16;
    c->amp = mixed && t->amp_mode == XS_AMP_AUTOCAST;
    c->o2 = mixed && t->amp_mode == XS_AMP_O2;
    c->fused = t->kernels == XS_K_FUSED;
    c->flash = t->attention == XS_ATT_FLASH;
    /* fp8: a bf16 model whose layers' linears alone run fp8 (wl_fp8.c) */
    static const xs_dtype mm[] = {XS_FP32, XS_TF32, XS_FP16, XS_BF16, XS_BF16, XS_BF16};
    int bf16 = t->precision == XS_P_BF16 || t->precision == XS_P_FP8;
    c->mm = mm[t->precision];
    c->H = xs_dtype_bytes(c->mm);
    c->W = bf16 ? 2 : 4;
    c->Wm = bf16 || c->o2 ? 2 : 4;
    /* fused kernels keep activations in the matmul format: no fp32 islands */
    c->I = c->amp && !c->fused ? 4 : c->H;
    c->lora = t->lora_rank > 0;
    c->lora_names = xs_family_lora(xs_family_of(m->family), s);
    c->frozen = c->lora;
    c->ckpt = t->checkpointing == XS_CKPT_LAYER;
    c->unit = -1;
}

struct xs_wl_scratch {
    xs_wb kept; /* only its arrays and their capacities */
};

xs_wl_scratch *xs_wl_scratch_new(void)
{
    return calloc(1, sizeof(xs_wl_scratch));
}

/* Move the working arrays (and their capacities) from one builder state to
 * another; from is left without them. */
static void move_arrays(xs_wb *to, xs_wb *from)
{
    to->tape = from->tape;
    to->tcap = from->tcap;
    to->groups = from->groups;
    to->gcap = from->gcap;
    to->gfree = from->gfree;
    to->gfree_slack = from->gfree_slack;
    to->ggrad = from->ggrad;
    to->ggrad_slack = from->ggrad_slack;
    to->glayer = from->glayer;
    to->psize = from->psize;
    to->pdecay = from->pdecay;
    to->pcap = from->pcap;
    to->mta = from->mta;
    to->recomp = from->recomp;
    to->rcap = from->rcap;
    to->rstart = from->rstart;
    to->ckpt_in = from->ckpt_in;
    from->tape = NULL;
    from->groups = NULL;
    from->gfree = from->gfree_slack = from->ggrad = from->ggrad_slack = NULL;
    from->glayer = NULL;
    from->psize = NULL;
    from->pdecay = NULL;
    memset(&from->mta, 0, sizeof from->mta);
    from->recomp = NULL;
    from->rstart = NULL;
    from->ckpt_in = NULL;
    from->tcap = from->gcap = from->pcap = from->rcap = 0;
}

static void bld_free(xs_wb *c);

void xs_wl_scratch_free(xs_wl_scratch *scratch)
{
    if (!scratch)
        return;
    bld_free(&scratch->kept);
    free(scratch);
}

static void bld_free(xs_wb *c)
{
    free(c->tape);
    free(c->groups);
    free(c->gfree);
    free(c->gfree_slack);
    free(c->ggrad);
    free(c->ggrad_slack);
    free(c->glayer);
    free(c->psize);
    free(c->pdecay);
    free(c->mta.psize);
    free(c->mta.chunks);
    free(c->mta.pdecay);
    free(c->recomp);
    free(c->rstart);
    free(c->ckpt_in);
}

/* The step's order over the compact list, as spans: each run's forward
 * block count times (layers counting up), its backward block count times
 * (down), the ops between once. */
static int order_runs(const xs_wb *c, xs_workload *wl)
{
    size_t total = wl->n;
    for (int r = 0; r < c->nruns; r++) {
        const xs_wb_run *u = &c->runs[r];
        total += (size_t)(u->count - 1) * (u->f1 - u->f0 + u->b1 - u->b0);
    }
    if (total > UINT32_MAX)
        return -1;
    /* at most a single span before each run's blocks, the blocks, and one after */
    wl->spans = malloc((size_t)(4 * c->nruns + 1) * sizeof *wl->spans);
    if (!wl->spans)
        return -1;
    for (size_t i = 0; i < wl->n;) {
        const xs_wb_run *u = NULL;
        int down = 0;
        for (int r = 0; r < c->nruns && !u; r++) {
            if (c->runs[r].f0 == i && c->runs[r].f1 > i)
                u = &c->runs[r];
            else if (c->runs[r].b0 == i && c->runs[r].b1 > i)
                u = &c->runs[r], down = 1;
        }
        if (!u) {
            struct xs_wl_span *sp = wl->nspans ? &wl->spans[wl->nspans - 1] : NULL;
            if (sp && sp->repeat == 1 && sp->first + sp->len == i)
                sp->len++;
            else
                wl->spans[wl->nspans++] = (struct xs_wl_span){(uint32_t)i, 1, 1, 0};
            i++;
            continue;
        }
        size_t first = down ? u->b0 : u->f0, last = down ? u->b1 : u->f1;
        wl->spans[wl->nspans++] = (struct xs_wl_span){(uint32_t)first, (uint32_t)(last - first),
                                                      (uint32_t)u->count, down};
        i = last;
    }
    wl->norder = total;
    return 0;
}

static int build(const xs_scenario *s, xs_workload *wl, int compact, xs_wl_scratch *scratch,
                 xs_error *err);

int xs_wl_run_steps(const xs_scenario *s, int64_t samples_per_step, int64_t *per_epoch,
                    int64_t *steps)
{
    int64_t sps = samples_per_step;
    if (sps < 1)
        return -1;
    *per_epoch = s->samples / sps + (s->samples % sps != 0);
    return xs_mul_i64(*per_epoch, s->epochs, steps) ? -1 : 0;
}

int xs_wl_build(const xs_scenario *s, xs_workload *wl, xs_error *err)
{
    return build(s, wl, 0, NULL, err);
}

int xs_wl_build_compact(const xs_scenario *s, xs_workload *wl, xs_wl_scratch *scratch,
                        xs_error *err)
{
    /* data parallel's buckets cut across layers (wl_ddp.c) */
    return build(s, wl, s->devices == 1, scratch, err);
}

int xs_wl_expand(const xs_workload *in, xs_workload *out, xs_error *err)
{
    *out = *in;
    size_t n = xs_wl_steps(in);
    out->spans = NULL;
    out->norder = out->nspans = 0;
    out->n = out->cap = n;
    out->ops = malloc((n ? n : 1) * sizeof *out->ops);
    if (!out->ops) {
        memset(out, 0, sizeof *out);
        return xs_error_set(err, XS_ENOMEM, "out of memory expanding the op list");
    }
    if (!in->spans) {
        memcpy(out->ops, in->ops, n * sizeof *out->ops);
        return XS_OK;
    }
    size_t k = 0;
    for (size_t j = 0; j < in->nspans; j++) {
        const struct xs_wl_span *sp = &in->spans[j];
        for (uint32_t r = 0; r < sp->repeat; r++) {
            int shift = (int)(sp->down ? sp->repeat - 1 - r : r);
            for (uint32_t i = sp->first; i < sp->first + sp->len; i++) {
                xs_op *op = &out->ops[k++];
                memcpy(op, &in->ops[i], sizeof *op); /* its padding too: lists compare as bytes */
                if (op->layer >= 0)
                    op->layer += shift;
            }
        }
    }
    return XS_OK;
}

static int build(const xs_scenario *s, xs_workload *wl, int compact, xs_wl_scratch *scratch,
                 xs_error *err)
{
    const xs_model *m = &s->model;
    int rc = xs_wl_gate(s, err);
    if (rc)
        return rc;
    char where[96];
    snprintf(where, sizeof where, "scenario %s", s->id);
    memset(wl, 0, sizeof *wl);
    wl->micro_batches = s->train.grad_accum;
    /* bounds.c has refused what would overflow; checked all the same, so
     * that a later change to the limits cannot make these wrap */
    const int64_t samples[] = {s->train.batch, s->train.grad_accum, s->devices};
    int bad = xs_prod_i64(samples, 3, &wl->samples_per_step) ||
              xs_mul_i64(wl->samples_per_step, s->train.seq, &wl->tokens_per_step) ||
              xs_wl_run_steps(s, wl->samples_per_step, &wl->steps_per_epoch, &wl->steps);
    if (bad)
        return xs_error_set(err, XS_ERANGE, "%s: the step and run counts overflow 64 bits",
                            where);
    xs_wb c;
    setup(&c, s, wl);
    if (scratch)
        move_arrays(&c, &scratch->kept);
    c.compact = compact;
    int fp8 = s->train.precision == XS_P_FP8;
    wl->matmul_dtype = fp8 ? XS_FP8 : c.mm;
    xs_family_of(m->family)->forward(&c);
    if (fp8) /* at fp8_autocast's exit, around the model's forward and loss */
        xs_wb_fp8_amax_update(&c, XS_PH_FWD);
    if (c.o2 || (c.amp && s->train.precision == XS_P_AMP_FP16))
        xs_wb_scale_loss(&c);
    rc = c.failed ? -1 : replay_tape(&c);
    c.replayed = 1;
    if (rc == 0 && fp8)
        xs_wb_fp8_amax_update(&c, XS_PH_BWD);
    if (rc == 0)
        rc = xs_wb_data_parallel(&c);
    if (rc == 0 && s->train.timed == XS_TIMED_FWD_BWD) /* apex O2: None before each backward */
        xs_wb_accumulate_grads(&c, c.o2 ? 0 : c.wl->micro_batches);
    else if (rc == 0)
        xs_wb_optimizer(&c);
    if (rc == 0 && s->train.timed == XS_TIMED_STEP)
        rc = xs_wb_data_parallel_step(&c);
    if (rc == 0 && !c.failed && c.nruns > 0 && !c.not_compact)
        rc = order_runs(&c, wl);
    if (scratch)
        move_arrays(&scratch->kept, &c);
    else
        bld_free(&c);
    if (rc == 0 && !c.failed && c.not_compact) { /* no run proven: the whole list */
        xs_wl_free(wl);
        return build(s, wl, 0, scratch, err);
    }
    if (rc || c.failed) {
        xs_wl_free(wl);
        return xs_error_set(err, XS_ENOMEM, "scenario %s: out of memory building the op list",
                            s->id);
    }
    return XS_OK;
}

void xs_wl_free(xs_workload *wl)
{
    free(wl->ops);
    free(wl->spans);
    wl->ops = NULL;
    wl->spans = NULL;
    wl->n = wl->cap = wl->norder = wl->nspans = 0;
}

/* The ops of one kernel row come from the builders above, run on a context
 * that holds nothing else: a scenario with only the framework's loop
 * figures, one micro-batch, the formats the row names. Kernels that the
 * step builds inside a larger builder (a bias gradient inside linear(), the
 * gradient-clipping scale inside optimizer()) are taken from that builder's
 * output by name, so no byte count is written twice. */
static void kernel_ctx(xs_wb *c, xs_scenario *s, xs_workload *wl, const xs_kernel_spec *k)
{
    s->train.batch = s->train.seq = s->train.grad_accum = 1;
    s->train.generic_loop_efficiency = k->generic_loop_efficiency;
    s->train.loop_elems = k->loop_elems;
    s->model.hidden = s->model.heads = 1;
    wl->micro_batches = 1;
    setup(c, s, wl);
    c->layer = -1;
    c->mm = k->dtype;
    c->H = c->I = c->W = c->Wm = xs_dtype_bytes(k->dtype);
}

static int take_one(const xs_op *op, const char *pick, xs_op *ops, int *n, int cap)
{
    if (pick && strcmp(op->name, pick) != 0)
        return 0;
    if (*n == cap)
        return -1;
    ops[(*n)++] = *op;
    return 0;
}

/* The ops named pick (NULL: all) of the forward list or, for bwd, of the
 * tape in the order its replay launches them (replay_tape: the groups last
 * first, each group's ops as emitted). */
static int take(const xs_wb *c, int bwd, const char *pick, xs_op *ops, int *n, int cap)
{
    *n = 0;
    if (c->failed)
        return -1;
    if (!bwd) {
        for (size_t j = 0; j < c->wl->n; j++)
            if (take_one(&c->wl->ops[j], pick, ops, n, cap))
                return -1;
    } else {
        for (size_t g = c->gn; g-- > 0;) {
            size_t end = g + 1 < c->gn ? c->groups[g + 1] : c->tn;
            for (size_t i = c->groups[g]; i < end; i++)
                if (take_one(&c->tape[i], pick, ops, n, cap))
                    return -1;
        }
        /* a kernel's builder may emit its backward op with no group of
         * its own (transpose's): the whole tape is that op's */
        for (size_t i = 0; i < (c->gn ? c->groups[0] : c->tn); i++)
            if (take_one(&c->tape[i], pick, ops, n, cap))
                return -1;
    }
    return *n > 0 ? 0 : -1;
}

int xs_kernel_ops(const xs_kernel_spec *k, xs_op *ops, int *n, xs_error *err)
{
    *n = 0;
    if (k->op < 0 || k->op >= XS_KOP_COUNT || k->loop_elems < 1 ||
        !(k->generic_loop_efficiency > 0) || k->generic_loop_efficiency > 1)
        return xs_error_set(err, XS_ERANGE, "kernel: op %d, loop_elems %lld or "
                            "generic_loop_efficiency %g out of range",
                            k->op, (long long)k->loop_elems, k->generic_loop_efficiency);
    xs_scenario s;
    xs_workload wl;
    xs_wb c;
    memset(&s, 0, sizeof s);
    memset(&wl, 0, sizeof wl);
    snprintf(s.id, sizeof s.id, "kernel");
    const char *pick = NULL;
    int bwd = k->bwd, H = xs_dtype_bytes(k->dtype);
    if (k->op == XS_KOP_BIAS_GELU)
        s.train.ffn_bias = XS_FFN_BIAS_SEPARATE;
    if (k->op == XS_KOP_SCALE)
        s.train.grad_clip = 1;
    if (k->op == XS_KOP_UNSCALE) { /* fp32 gradients: GradScaler; fp16: apex O2 */
        s.train.precision = XS_P_AMP_FP16;
        s.train.amp_mode = k->dtype == XS_FP32 ? XS_AMP_AUTOCAST : XS_AMP_O2;
    }
    kernel_ctx(&c, &s, &wl, k);
    switch (k->op) {
    case XS_KOP_SOFTMAX:
        xs_wb_softmax(&c, k->log ? "log_softmax" : "softmax", k->rows * k->cols, k->cols, H, k->log);
        break;
    case XS_KOP_LAYERNORM:
        c.h = k->cols;
        xs_wb_layernorm(&c, "layernorm", k->rows, H, xs_dtype_bytes(k->out_dtype));
        break;
    case XS_KOP_DROPOUT:
        xs_wb_dropout(&c, "dropout", k->elems, H, 1); /* its traffic does not depend on p > 0 */
        break;
    case XS_KOP_GELU:
    case XS_KOP_BIAS_GELU:
        xs_wb_activation(&c, k->elems);
        break;
    case XS_KOP_ADD:
        xs_wb_residual_add(&c, "add", k->elems, H, xs_dtype_bytes(k->b_dtype),
                     xs_dtype_bytes(k->out_dtype));
        break;
    case XS_KOP_COPY: /* the step's casts: an fp32 island into a half GEMM, and back */
        bwd = k->dtype != XS_FP32;
        pick = bwd ? "x.dX.cast" : "x.cast_x";
        c.amp = 1;
        c.mm = bwd ? k->dtype : k->out_dtype;
        c.H = xs_dtype_bytes(c.mm);
        xs_wb_linear(&c, "x", k->elems, 1, 1, 0, 1);
        break;
    case XS_KOP_TRANSPOSE:
        if (k->strided)
            xs_wb_transposing_copy(&c, bwd ? XS_PH_BWD : XS_PH_FWD, k->elems, "transpose", "");
        else
            xs_wb_head_copies(&c, "transpose", k->elems, 1, 0);
        break;
    case XS_KOP_REDUCE: /* the bias gradient: a column sum over the rows */
        bwd = 1;
        pick = "x.db";
        xs_wb_linear(&c, "x", k->rows, 1, k->cols, 1, 0);
        break;
    case XS_KOP_EMBEDDING:
    case XS_KOP_EMBEDDING_BWD:
        if (k->op == XS_KOP_EMBEDDING_BWD)
            bwd = 1;
        c.h = k->dim;
        xs_wb_embedding(&c, "embedding", k->vocab, k->lookups);
        break;
    case XS_KOP_CROSS_ENTROPY:
        xs_wb_cross_entropy(&c, k->rows, k->cols, H);
        break;
    case XS_KOP_RMSNORM:
        c.h = k->cols;
        xs_wb_rmsnorm(&c, "rmsnorm", k->rows);
        break;
    case XS_KOP_ATTENTION:
        /* q, k and v as the layer's projections hand them over ([b, s, a
         * d]): the eager chain runs its head copies, the flash kernel reads
         * them as they are */
        c.b = k->batch;
        c.a = k->heads;
        c.sq = k->seq;
        c.d = k->head_dim;
        c.h = k->heads * k->head_dim;
        c.T = k->batch * k->seq;
        c.flash = !k->unfused;
        s.model.attn_dropout = k->dropout;
        xs_wb_attention(&c, k->causal);
        break;
    case XS_KOP_L2NORM:
    case XS_KOP_SCALE:
    case XS_KOP_UNSCALE:
        bwd = 0;
        c.replayed = 1;
        /* a kernel row gives totals only: its parameters split evenly over
         * its tensors, all in the weight-decay group, is what multi-tensor
         * launches are counted from (the step's own tensors are uneven) */
        for (int64_t t = 0; t < k->tensors && !c.failed; t++)
            xs_wb_add_param(&c, (double)k->params / (double)k->tensors, 1, 0);
        if (k->op == XS_KOP_L2NORM) {
            xs_wb_grad_norm(&c, "multi_tensor_l2norm", 1);
        } else {
            pick = k->op == XS_KOP_SCALE ? "grad_clip.scale"
                   : c.o2                ? "amp.master_grads"
                                         : "amp.unscale_check";
            xs_wb_optimizer(&c);
        }
        break;
    case XS_KOP_POINTWISE: {
        /* add, mul, div, pow read two tensors, the rest one; the math
         * counts as the step's own activations do (1 FLOP an arithmetic
         * op, 8 a transcendental one): it never binds beside the traffic */
        int two = k->fn <= 3;
        int transcendental = k->fn == 3 || k->fn == 6 || k->fn >= 8;
        bwd = 0;
        xs_wb_mem_op(&c, XS_PH_FWD, XS_OP_ELTWISE, k->elems, (two ? 3.0 : 2.0) * H,
                     transcendental ? 8 : 1, 1, "pointwise");
        break;
    }
    default:
        break;
    }
    int rc, nb = 0;
    if (bwd == 2) { /* forward, then backward: what a timed fwd + bwd call runs */
        rc = take(&c, 0, pick, ops, n, XS_KERNEL_OPS_MAX);
        if (!rc)
            rc = take(&c, 1, pick, ops + *n, &nb, XS_KERNEL_OPS_MAX - *n);
        *n += nb;
    } else {
        rc = take(&c, bwd, pick, ops, n, XS_KERNEL_OPS_MAX);
    }
    for (int i = 0; i < *n; i++)
        ops[i].layer = -1;
    int failed = c.failed;
    bld_free(&c);
    xs_wl_free(&wl);
    if (failed)
        return xs_error_set(err, XS_ENOMEM, "kernel: out of memory");
    if (rc)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "kernel: a training step has no %s kernel of that kind%s",
                            bwd == 2 ? "forward and backward" : bwd ? "backward" : "forward",
                            pick ? "" : " (its builder emitted none)");
    return XS_OK;
}
