/* wl_heads.c — task heads (SQuAD span, classification) and the loss, and
 * the tying of an output weight to the token embedding. */
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

/* PyTorch's nll_loss with a mean or sum runs one block of this many
 * threads over all rows (pytorch/pytorch@00e3254d33da268c08133d662510079a77804b29:
 * aten/src/ATen/native/cuda/Loss.cu, NLL_LOSS_THREADS and
 * nll_loss_forward_reduce_cuda_kernel_2d<<<1, NLL_LOSS_THREADS>>>). */
#define NLL_LOSS_THREADS 32.0

/* Cross-entropy over rows of `classes` logits in ls bytes, as
 * F.cross_entropy runs it: log_softmax, then nll_loss (a gather and a
 * mean: two kernels); backward scatters -1/rows into a zeroed gradient
 * (two kernels), then log_softmax's backward. The nll_loss forward is one
 * block of 32 threads: each thread loads a row's target, then the logit it
 * names, one row after another, so the rows cost two memory round trips
 * for every 32 of them, however fast the memory streams. */
void xs_wb_untimed_loss(xs_wb *c, int n)
{
    if (c->failed || c->s->train.timed != XS_TIMED_FWD_BWD || c->wl->n < (size_t)n)
        return;
    for (int i = 1; i <= n; i++)
        c->wl->ops[c->wl->n - i].count = 0;
}

void xs_wb_cross_entropy(xs_wb *c, double rows, double classes, int ls)
{
    xs_wb_softmax(c, "head.log_softmax", rows * classes, classes, ls, 1);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_LOSS, rows, ls + 8, 1, 2, "head.nll");
    if (!c->failed)
        c->wl->ops[c->wl->n - 1].hints.serial_trips = 2 * ceil(rows / NLL_LOSS_THREADS);
    xs_wb_untimed_loss(c, 2);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_LOSS, rows * classes, ls, 0, 2, "head.nll.bwd");
}

param_mark xs_wb_mark_params(const xs_wb *c)
{
    return (param_mark){c->wl->params, c->wl->trainable_params, c->wl->tensors, c->pn};
}

/* The LM head just built (head.lm, h x V) reads the token embedding's
 * weight: no new parameters; the shared weight's gradient is made by
 * head.lm's backward, the first to run, and the embedding's backward adds
 * into it; still in head.lm's backward group, the two gradients are summed
 * (a frozen weight has none). */
void xs_wb_tie_to_embedding(xs_wb *c, const param_mark *before, double V)
{
    double h = c->h;
    c->wl->params = before->params;
    c->wl->trainable_params = before->trainable;
    c->wl->tensors = before->tensors;
    if (c->pn > before->pn)
        c->pn = before->pn;
    if (!c->failed && c->gn > 0 && c->has_tied && !c->frozen) {
        double w = V * h, slack = xs_alloc_slack(V * h * c->Wm);
        size_t hg = c->gn - 1;
        c->ggrad[hg] = w;
        c->ggrad_slack[hg] = slack;
        c->ggrad[c->tied_group] -= w;
        c->ggrad_slack[c->tied_group] -= slack;
        c->params_mark = before->trainable;
    }
    if (!c->frozen)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, V * h, 3.0 * 4, 1, 1, "head.tied_grad_sum");
}

/* SQuAD span head: a linear to 2 logits a token, two cross-entropies over
 * the sequence (start, end), averaged. Small; dominated by launches. */
void xs_wb_span_head(xs_wb *c)
{
    c->frozen = c->lora && !c->s->train.lora_train_head;
    xs_wb_linear(c, "head.qa", c->T, c->h, 2, 1, 1);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_LOSS, c->T * 2, 2.0 * c->H + 12, 5, 8, "head.loss");
    xs_wb_untimed_loss(c, 1);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_LOSS, c->T * 2, 2.0 * c->H + 12, 3, 8, "head.loss.bwd");
}

/* Sequence classification into model.labels classes (2 by default):
 * BERT pools the first token (dense + tanh); GPT-2 scores every token and
 * keeps the last. */
void xs_wb_cls_head(xs_wb *c, int decoder)
{
    double b = c->b, h = c->h, L = (double)c->s->model.labels;
    int head_frozen = c->lora && !c->s->train.lora_train_head;
    if (decoder) {
        c->frozen = head_frozen;
        xs_wb_linear(c, "head.score", c->T, h, L, 0, 1);
    } else {
        xs_wb_enter_modules(c, 1); /* BertPooler */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, b * h, 2.0 * c->I, 0, 1, "head.first_token");
        xs_wb_linear(c, "head.pooler", b, h, h, 1, 1);
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, b * h, 2.0 * c->H, 4, 1, "head.tanh");
        xs_wb_keep_output(c, b * h * c->H);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, b * h, 3.0 * c->H, 3, 1, "head.tanh.bwd");
        c->frozen = head_frozen; /* the pooler is BertModel's: frozen under LoRA */
        xs_wb_linear(c, "head.classifier", b, h, L, 1, 0);
    }
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_LOSS, b * L, 2.0 * c->H + 12, 5, 4, "head.loss");
    xs_wb_untimed_loss(c, 1);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_LOSS, b * L, 2.0 * c->H + 12, 3, 4, "head.loss.bwd");
}
