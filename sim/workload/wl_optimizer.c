/* wl_optimizer.c — the optimizer step: gradient unscaling and clipping,
 * the update kernels (fused, multi-tensor or one per tensor op), and the
 * launches of multi-tensor kernels. */
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
#include "kernel_op.h"
#include "lora.h"

/* Arrays an optimizer touches per parameter (training-math.md): fused reads
 * and writes each state once; eager runs one kernel per tensor operation. */
static const struct {
    int fused_arrays, eager_arrays, eager_kernels, lists;
    double flops;
} OPTIMIZERS[] = {
    [XS_OPT_SGD] = {5, 8, 3, 3, 3},    /* buf.mul_.add_, p.add_ */
    [XS_OPT_ADAM] = {7, 18, 7, 4, 12}, /* lerp, mul, addcmul, sqrt, div, add, addcdiv */
    [XS_OPT_ADAMW] = {7, 20, 8, 4, 14}, /* + p.mul_(1 - lr wd) */
    [XS_OPT_ADAN] = {11, 44, 17, 6, 24},
    /* m.mul_, m.add_, v.mul_, v.addcmul_, sqrt, +eps, div, wd*p, update+=,
     * lr*update, neg, p.add_: 120 fp32 bytes a parameter */
    [XS_OPT_BERTADAM] = {30, 30, 12, 4, 13},
};

/* Launches of a multi-tensor kernel when only totals are known: at most
 * 110/64/48/36/30 tensors for 1..5+ lists and 320 blocks of 65536 elements
 * per launch (xs_wl_mta_launches has the exact count from tensor sizes). */
static int64_t multi_tensor_launches(double params, int64_t tensors, int lists)
{
    static const int max_tensors[] = {110, 64, 48, 36, 30};
    int mt = max_tensors[lists < 1 ? 0 : lists > 5 ? 4 : lists - 1];
    double by_tensors = ceil((double)tensors / mt), by_blocks = ceil(params / (320.0 * 65536));
    return (int64_t)fmax(1, fmax(by_tensors, by_blocks));
}

/* multi_tensor_apply as apex (csrc/multi_tensor_apply.cuh @ 123854c) and
 * PyTorch (aten/src/ATen/native/cuda/MultiTensorApply.cuh) run it: tensors
 * are cut into chunks of 65536 elements, one block a chunk; a launch goes
 * out when its 320 blocks are full, when depth_to_max_tensors tensors have
 * all their chunks in it, or at the last chunk; a tensor cut by a launch
 * starts the next one. sel: NULL, or 1 for the tensors to take. */
static const int MTA_MAX_TENSORS[8] = {110, 64, 48, 36, 30, 26, 22, 20};

#define MTA_MAX_BLOCKS 320.0

#define MTA_CHUNK 65536.0

static int64_t mta_launches(const double *sizes, const double *chunks,
                            const unsigned char *decay, int group, size_t n, int depth)
{
    int max_t = MTA_MAX_TENSORS[depth < 1 ? 0 : depth > 8 ? 7 : depth - 1];
    /* an empty tensor has no chunk, so it never reaches the launch test of
     * the chunk loop: PyTorch's MultiTensorApply.cuh skips it outright, and
     * the last tensor that can close a launch is the last non-empty one */
    size_t last = n;
    for (size_t t = 0; t < n; t++)
        if ((group < 0 || decay[t] == group) && sizes[t] > 0)
            last = t;
    if (last == n)
        return 0;
    double launches = 0, blocks = 0;
    int tensors = 0;
    for (size_t t = 0; t <= last; t++) {
        if ((group >= 0 && decay[t] != group) || !(sizes[t] > 0))
            continue;
        tensors++;
        double left = chunks ? chunks[t] : ceil(sizes[t] / MTA_CHUNK);
        if (blocks + left > MTA_MAX_BLOCKS) { /* full before this tensor's last chunk */
            left -= MTA_MAX_BLOCKS - blocks;
            launches += 1;
            tensors = 1;
            double k = floor((left - 1) / MTA_MAX_BLOCKS);
            launches += k;
            left -= k * MTA_MAX_BLOCKS;
            blocks = 0;
        }
        blocks += left;
        if (tensors == max_t || blocks == MTA_MAX_BLOCKS || t == last) {
            launches += 1;
            blocks = 0;
            tensors = 0;
        }
    }
    return (int64_t)launches;
}

int64_t xs_wl_mta_launches(const double *sizes, size_t n, int depth)
{
    return sizes ? mta_launches(sizes, NULL, NULL, -1, n, depth) : 0;
}

/* Make c->mta the memo of the list as it is now: kept when it holds the
 * same tensors (a build of the same model), else a copy of the list with
 * its chunks and nothing counted. 0: out of memory. */
static int mta_list(xs_wb *c)
{
    xs_wb_mta *m = &c->mta;
    if (c->mta_ok && c->mta_ok_pn == c->pn)
        return 1;
    size_t n = c->pn;
    int same = m->pn == n && (n == 0 || (memcmp(m->psize, c->psize, n * sizeof *m->psize) == 0 &&
                                         memcmp(m->pdecay, c->pdecay, n) == 0));
    if (!same) {
        if (n > m->cap) {
            double *ps = realloc(m->psize, n * sizeof *ps);
            if (ps)
                m->psize = ps;
            double *ch = realloc(m->chunks, n * sizeof *ch);
            if (ch)
                m->chunks = ch;
            unsigned char *pd = realloc(m->pdecay, n);
            if (pd)
                m->pdecay = pd;
            if (!ps || !ch || !pd) {
                m->pn = 0; /* nothing known of any list */
                return 0;
            }
            m->cap = n;
        }
        if (n) {
            memcpy(m->psize, c->psize, n * sizeof *m->psize);
            memcpy(m->pdecay, c->pdecay, n);
        }
        for (size_t t = 0; t < n; t++)
            m->chunks[t] = ceil(c->psize[t] / MTA_CHUNK);
        m->pn = n;
        memset(m->known, 0, sizeof m->known);
    }
    c->mta_ok = 1;
    c->mta_ok_pn = n;
    return 1;
}

/* over all of the model's parameter tensors (group -1) or one optimizer
 * group (1: weight decay, 0: none); each list's count made once */
static int64_t mta(xs_wb *c, int depth, int group)
{
    int d = depth < 1 ? 0 : depth > 8 ? 7 : depth - 1, g = group < 0 ? 2 : group != 0;
    if (!mta_list(c))
        return mta_launches(c->psize, NULL, c->pdecay, group, c->pn, depth);
    xs_wb_mta *m = &c->mta;
    if (!m->known[g][d]) {
        m->launches[g][d] = mta_launches(m->psize, m->chunks, m->pdecay, group, m->pn, depth);
        m->known[g][d] = 1;
    }
    return m->launches[g][d];
}

int xs_wl_optimizer_op(int optimizer, int fused, double params, int64_t tensors,
                       int state_bytes, xs_op *op)
{
    if (optimizer < 0 || optimizer > XS_OPT_BERTADAM || params <= 0 || tensors < 1 ||
        state_bytes < 1)
        return XS_ERANGE;
    char name[sizeof op->name];
    snprintf(name, sizeof name, "optimizer.%s%s", xs_optimizer_name(optimizer),
             fused ? "" : ".eager");
    *op = xs_op_make(XS_OP_OPTIMIZER, XS_PH_OPT, XS_FP32, name);
    int arrays = fused ? OPTIMIZERS[optimizer].fused_arrays : OPTIMIZERS[optimizer].eager_arrays;
    op->bytes = params * arrays * state_bytes;
    op->flops = params * OPTIMIZERS[optimizer].flops;
    op->launches = fused ? multi_tensor_launches(params, tensors, OPTIMIZERS[optimizer].lists)
                         : OPTIMIZERS[optimizer].eager_kernels * tensors;
    op->elems = params;
    op->issue = fused ? XS_ISSUE_MULTI : XS_ISSUE_LOOP;
    return XS_OK;
}

/* The op just emitted ends with the host reading a value back. */
static void host_reads_back(xs_wb *c)
{
    if (!c->failed && c->wl->n > 0)
        c->wl->ops[c->wl->n - 1].sync = 1;
}

/* An optimizer-phase op issued `issue`'s way, `count` times a step. */
__attribute__((format(printf, 9, 10))) static void opt_op(xs_wb *c, int kind, double elems,
                                                         double bpe, double fpe,
                                                         int64_t launches, int issue,
                                                         int64_t count, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xs_op op;
    xs_wb_base(c, &op, XS_PH_OPT, kind, fmt, ap);
    va_end(ap);
    op.bytes = elems * bpe;
    op.flops = elems * fpe;
    op.elems = elems;
    op.launches = launches;
    op.issue = issue;
    op.count = count;
    xs_wb_emit(c, &op);
}

/* A global gradient L2 norm read back to the host. apex multi_tensor_l2norm
 * (csrc/multi_tensor_l2norm_kernel.cu @ 02085f0): at::zeros of its 320
 * partial sums, the multi-tensor pass, one cleanup kernel; then .item().
 * torch.nn.utils.clip_grad_norm_ (torch/nn/utils/clip_grad.py @ 01a57d8):
 * torch._foreach_norm over the gradients, then torch.stack of the norms and
 * linalg.vector_norm of the stack. */
void xs_wb_grad_norm(xs_wb *c, const char *name, int64_t count)
{
    double P = c->wl->trainable_params;
    opt_op(c, XS_OP_OPTIMIZER, P, c->W, 2, mta(c, 1, -1) + 2, XS_ISSUE_MULTI, count, "%s",
           name);
    host_reads_back(c);
}

/* Clip the global gradient norm to max_norm. NVIDIA's run_squad.py
 * (DeepLearningExamples @ f8b3a63, GradientClipper) calls it after every
 * backward: the apex norm, .item(), and when the norm is over max_norm
 * multi_tensor_scale over [grads, grads] (counted every time: the norm of
 * a fine-tune's early steps is over 1, later ones need not be). PyTorch's
 * clip_grad_norm_ (the Hugging Face Trainer's, once a step): the foreach
 * norm; clip_coef = max_norm / (norm + 1e-6) and its clamp to 1 (3 scalar
 * kernels); torch._foreach_mul_ of every gradient, always (no branch, so
 * no sync inside it). */
static void grad_clip(xs_wb *c)
{
    double P = c->wl->trainable_params;
    int torch_impl = c->s->train.grad_clip_impl == XS_CLIP_TORCH;
    int64_t count = torch_impl ? 1 : c->wl->micro_batches;
    xs_wb_grad_norm(c, "grad_clip.norm", count);
    if (torch_impl) {
        opt_op(c, XS_OP_ELTWISE, 1, 3 * 4.0, 1, 3, XS_ISSUE_LOOP, 1, "grad_clip.coef");
        opt_op(c, XS_OP_OPTIMIZER, P, 2.0 * c->W, 1, mta(c, 1, -1), XS_ISSUE_MULTI, 1,
               "grad_clip.scale");
    } else {
        opt_op(c, XS_OP_OPTIMIZER, P, 2.0 * c->W, 1, mta(c, 2, -1), XS_ISSUE_MULTI, count,
               "grad_clip.scale");
    }
}

/* Loss scaling, per micro-batch, before the backward. apex amp's
 * scale_loss (apex/amp/handle.py, scaler.py @ b82c6bd) clears the overflow
 * flag (_overflow_buf.zero_()) and multiplies the loss by the scale;
 * torch's GradScaler.scale (torch/cuda/amp/grad_scaler.py @ 02f1c1a) only
 * multiplies. The multiplication's gradient is one more kernel, the first
 * of the backward. */
void xs_wb_scale_loss(xs_wb *c)
{
    c->layer = -1;
    if (c->o2) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, 1, 4, 0, 1, "amp.overflow_clear");
        xs_wb_issued(c, XS_ISSUE_LOOP);
    }
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, 1, 12, 1, 1, "amp.scale_loss");
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, 1, 12, 1, 1, "amp.scale_loss.bwd");
}

/* Elements of the parameter tensors in one optimizer group (-1: all). */
static double group_params(const xs_wb *c, int group)
{
    double n = 0;
    for (size_t i = 0; i < c->pn; i++)
        if (group < 0 || c->pdecay[i] == group)
            n += c->psize[i];
    return n;
}

/* torch.optim.Adam/AdamW with foreach (the default on CUDA since PyTorch
 * 2.0), state steps on the CPU (capturable=False): per param group,
 * torch/optim/adamw.py @ 002d2f0 _multi_tensor_adamw runs these _foreach_
 * ops, each one multi-tensor launch series over the group's tensors. The
 * weight-decay multiply is skipped where weight_decay is 0 (the no-decay
 * group) and Adam has none (its L2 decay, when set, is not modelled). */
static void foreach_adam(xs_wb *c, int o)
{
    static const struct {
        const char *name;
        int depth;    /* tensor lists */
        double bpe;   /* fp32 bytes a parameter: loads + stores */
        double fpe;
        int decay_only;
    } OPS[] = {
        {"mul", 1, 8, 1, 1},     /* params *= 1 - lr wd */
        {"lerp", 2, 12, 2, 0},   /* exp_avg += (1 - b1) (grad - exp_avg) */
        {"mul_sq", 1, 8, 1, 0},  /* exp_avg_sq *= b2 */
        {"addcmul", 3, 16, 2, 0}, /* exp_avg_sq += (1 - b2) grad grad: 3 lists read */
        {"sqrt", 2, 8, 1, 0},    /* denom = sqrt(exp_avg_sq), a new list */
        {"div", 1, 8, 1, 0},     /* denom /= sqrt(bias_correction2) */
        {"add", 1, 8, 1, 0},     /* denom += eps */
        {"addcdiv", 3, 16, 2, 0}, /* params += step_size exp_avg / denom */
    };
    double pd = group_params(c, 1), pn = group_params(c, 0);
    for (size_t k = 0; k < sizeof OPS / sizeof OPS[0]; k++) {
        if (OPS[k].decay_only && o != XS_OPT_ADAMW)
            continue;
        double elems = OPS[k].decay_only ? pd : pd + pn;
        int64_t launches = mta(c, OPS[k].depth, 1) + (OPS[k].decay_only ? 0
                                                                         : mta(c, OPS[k].depth, 0));
        if (elems <= 0 || launches <= 0)
            continue;
        opt_op(c, XS_OP_OPTIMIZER, elems, OPS[k].bpe, OPS[k].fpe, launches, XS_ISSUE_MULTI, 1,
               "optimizer.%s.foreach.%s", xs_optimizer_name(o), OPS[k].name);
        /* sqrt returns a new list, one group's at a time; the rest work in place */
        if (OPS[k].depth == 2 && strcmp(OPS[k].name, "sqrt") == 0)
            xs_wb_transient(c, fmax(pd, pn) * c->W);
    }
}

void xs_wb_accumulate_grads(xs_wb *c, int64_t adds)
{
    if (adds <= 0)
        return;
    c->layer = -1;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, c->wl->trainable_params, 3.0 * c->W, 1,
                 c->wl->tensors, "grad.accumulate");
    if (!c->failed)
        c->wl->ops[c->wl->n - 1].count = adds; /* not once per micro-batch */
}

void xs_wb_optimizer(xs_wb *c)
{
    const xs_train *t = &c->s->train;
    int fused;
    int o = xs_train_optimizer(t, &fused);
    double P = c->wl->trainable_params;
    int64_t tensors = c->wl->tensors, mb = c->wl->micro_batches;
    int scaler = !c->o2 && t->precision == XS_P_AMP_FP16; /* torch GradScaler */
    c->layer = -1;
    /* AccumulateGrad adds each new gradient into the tensor's .grad wherever
     * one exists: after the first micro-batch, and in every micro-batch when
     * zero_grad zero-filled them. apex O2 sets the half gradients to None
     * before each backward (prepare_backward_with_master_weights), so there
     * its zero fill is wasted and later micro-batches accumulate in apex's
     * unscale (below), not in autograd. */
    int zeroed = t->zero_grad == XS_ZERO_GRAD_ZERO;
    xs_wb_accumulate_grads(c, c->o2 ? 0 : mb - 1 + zeroed);
    /* apex O2 (apex/amp/_process_optimizer.py @ f17401f,
     * post_backward_with_master_weights): after each backward the half
     * gradients are unscaled into the fp32 master gradients,
     * multi_tensor_scale over [half grads, master grads] the first time and
     * multi_tensor_axpby over [half, stashed master, master] after that;
     * update_scale then reads the overflow flag back (.item()). */
    if (c->o2) {
        opt_op(c, XS_OP_OPTIMIZER, P, 2.0 + 4, 2, mta(c, 2, -1), XS_ISSUE_MULTI, 1,
               "amp.master_grads");
        host_reads_back(c);
        if (mb > 1) {
            opt_op(c, XS_OP_OPTIMIZER, P, 2.0 + 4 + 4, 3, mta(c, 3, -1), XS_ISSUE_MULTI, mb - 1,
                   "amp.master_grads.accumulate");
            host_reads_back(c);
        }
    } else if (scaler) {
        /* GradScaler.unscale_: inv_scale = scale.double().reciprocal().float()
         * (3 kernels), found_inf = torch.full(...) (1), then
         * _amp_foreach_non_finite_check_and_unscale_ over the fp32
         * gradients */
        opt_op(c, XS_OP_ELTWISE, 1, 8 + 8 + 8 + 4, 1, 3, XS_ISSUE_LOOP, 1, "amp.inv_scale");
        opt_op(c, XS_OP_ELTWISE, 1, 4, 0, 1, XS_ISSUE_LOOP, 1, "amp.found_inf");
        opt_op(c, XS_OP_OPTIMIZER, P, 2.0 * 4, 2, mta(c, 1, -1), XS_ISSUE_MULTI, 1,
               "amp.unscale_check");
    }
    if (t->grad_clip)
        grad_clip(c);
    /* GradScaler.step reads found_inf back (.item()) just before
     * optimizer.step(): after whatever the loop did between unscale_ and
     * step, such as clipping */
    if (scaler)
        host_reads_back(c);
    if (o == XS_OPT_BERTADAM) /* its own global norm (apex l2norm), before its loop */
        xs_wb_grad_norm(c, "bertadam.grad_norm", 1);
    int impl = xs_train_optimizer_impl(t);
    xs_op op;
    if (impl == XS_OPT_IMPL_FOREACH) {
        foreach_adam(c, o);
    } else if (xs_wl_optimizer_op(o, fused, P, tensors, c->W, &op) == XS_OK) {
        if (impl == XS_OPT_IMPL_MULTI_TENSOR) {
            /* one launch series a param group (apex FusedAdam.step,
             * apex/optimizers/fused_adam.py @ f7fa414: a multi_tensor_applier
             * over [g, p, m, v] for each group's fp32 tensors) */
            op.launches = mta(c, OPTIMIZERS[o].lists, 1) + mta(c, OPTIMIZERS[o].lists, 0);
        } else if (impl == XS_OPT_IMPL_FOR_LOOP) {
            /* eager ops a tensor: out-of-place results (sqrt + eps, the
             * update) of the largest tensor are the most alive at once */
            double largest = 0;
            for (size_t i = 0; i < c->pn; i++)
                largest = fmax(largest, c->psize[i]);
            op.mem.temp = 2 * largest * c->W;
        } else if (impl == XS_OPT_IMPL_PER_TENSOR) {
            /* the older apex FusedAdam (DeepLearningExamples @ 0053b4b,
             * PyTorch/LanguageModeling/BERT/fused_adam_local.py): a Python loop
             * calling fused_adam_cuda.adam once a tensor, same traffic */
            op.launches = tensors;
            op.issue = XS_ISSUE_LOOP;
            snprintf(op.name, sizeof op.name, "optimizer.%s.per_tensor", xs_optimizer_name(o));
        }
        xs_wb_emit(c, &op);
    } else {
        c->failed = 1;
    }
    if (c->o2) /* the updated fp32 master weights copied into the half model */
        opt_op(c, XS_OP_CAST, P, 4.0 + 2, 0, mta(c, 2, -1), XS_ISSUE_MULTI, 1,
               "amp.master_to_model");
    if (scaler) /* GradScaler.update: torch._amp_update_scale_ */
        opt_op(c, XS_OP_ELTWISE, 1, 4 + 4 + 4 + 4, 2, 1, XS_ISSUE_LOOP, 1, "amp.update_scale");
    if (zeroed) /* optimizer.zero_grad(): grad.zero_() tensor by tensor */
        opt_op(c, XS_OP_ELTWISE, P, c->Wm, 0, tensors, XS_ISSUE_LOOP, 1, "grad.zero");
}

/* Each device steps its shard: the optimizer's work divided by the
 * devices, its launches kept. */
void xs_wb_divide_optimizer(xs_workload *wl, double n)
{
    for (size_t i = 0; i < wl->n; i++) {
        xs_op *op = &wl->ops[i];
        if (op->phase != XS_PH_OPT)
            continue;
        op->bytes /= n;
        op->flops /= n;
        op->elems /= n;
    }
}
