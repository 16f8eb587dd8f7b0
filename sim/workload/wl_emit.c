/* wl_emit.c — how the builder records an op: the forward list, the
 * backward tape and its groups, what each op keeps for its backward
 * (memory terms), and the parameters it adds. */
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

int xs_wb_push(xs_op **arr, size_t *n, size_t *cap, const xs_op *op)
{
    xs_op *grown = xs_grow(*arr, cap, *n, sizeof *grown, 256);
    if (!grown)
        return -1;
    *arr = grown;
    (*arr)[(*n)++] = *op;
    return 0;
}

void xs_wb_join(char *dst, size_t size, const char *a, const char *b)
{
    size_t na = strnlen(a, size - 1);
    size_t nb = strnlen(b, size - 1 - na);
    memcpy(dst, a, na);
    memcpy(dst + na, b, nb);
    dst[na + nb] = '\0';
}

/* Whether fmt converts only strings and ints (%s, %d; %% too): the names
 * the builders give, which name_format writes. */
static int plain_format(const char *fmt)
{
    for (const char *p = strchr(fmt, '%'); p; p = strchr(p + 2, '%'))
        if (p[1] != 's' && p[1] != 'd' && p[1] != '%')
            return 0;
    return 1;
}

/* vsnprintf(dst, size, fmt, ap) for a plain_format fmt, without stdio's
 * machinery (the builder names every op of every step it builds). */
static void name_format(char *dst, size_t size, const char *fmt, va_list ap)
{
    size_t n = 0;
    for (const char *p = fmt; *p; p++) {
        char num[16];
        const char *piece = num;
        size_t len;
        if (*p != '%') {
            piece = p;
            len = 1;
        } else if (*++p == 's') {
            piece = va_arg(ap, const char *);
            len = strlen(piece);
        } else if (*p == 'd') {
            int v = va_arg(ap, int);
            unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
            char *q = num + sizeof num;
            do
                *--q = (char)('0' + u % 10);
            while (u /= 10);
            if (v < 0)
                *--q = '-';
            piece = q;
            len = (size_t)(num + sizeof num - q);
        } else {
            piece = p; /* %% */
            len = 1;
        }
        size_t room = size - 1 - n;
        len = len < room ? len : room;
        memcpy(dst + n, piece, len);
        n += len;
    }
    dst[n] = '\0';
}

void xs_wb_base(xs_wb *c, xs_op *op, int phase, int kind, const char *fmt, va_list ap)
{
    xs_op_init(op, kind, phase, c->mm, "");
    /* most names are one string given as "%s" or a constant: copied, not
     * formatted */
    if (fmt[0] == '%' && fmt[1] == 's' && !strchr(fmt + 2, '%'))
        xs_wb_join(op->name, sizeof op->name, va_arg(ap, const char *), fmt + 2);
    else if (!strchr(fmt, '%'))
        xs_op_name_copy(op->name, fmt);
    else if (plain_format(fmt))
        name_format(op->name, sizeof op->name, fmt, ap);
    else
        vsnprintf(op->name, sizeof op->name, fmt, ap);
    op->layer = c->layer;
    op->count = phase == XS_PH_FWD || phase == XS_PH_BWD ? c->wl->micro_batches : 1;
    /* forward ops are Python calls; backward nodes run in the C++ engine;
     * the optimizer phase states its own */
    op->issue = phase == XS_PH_BWD ? XS_ISSUE_ENGINE : XS_ISSUE_EAGER;
}

/* Where the next op of phase goes, built in place: the tape's or the
 * list's next slot, or, for a backward op nobody records or out of
 * memory, the scratch op; emit_commit counts it. */
static xs_op *emit_slot(xs_wb *c, int phase)
{
    c->dropped = c->nograd && phase == XS_PH_BWD && !c->replayed;
    if (c->dropped)
        return &c->scratch;
    c->last_in_tape = phase == XS_PH_BWD && !c->replayed;
    xs_op **arr = c->last_in_tape ? &c->tape : &c->wl->ops;
    size_t n = c->last_in_tape ? c->tn : c->wl->n;
    xs_op *grown = xs_grow(*arr, c->last_in_tape ? &c->tcap : &c->wl->cap, n, sizeof *grown, 256);
    if (!grown) {
        c->failed = 1;
        return &c->scratch;
    }
    *arr = grown;
    return &grown[n];
}

static void emit_commit(xs_wb *c, xs_op *op)
{
    if (op->phase == XS_PH_FWD && c->modules > 0) {
        op->modules += c->modules;
        c->modules = 0;
    }
    if (op != &c->scratch)
        ++*(c->last_in_tape ? &c->tn : &c->wl->n);
}

void xs_wb_emit(xs_wb *c, const xs_op *given)
{
    int64_t modules = 0;
    if (given->phase == XS_PH_FWD && c->modules > 0) {
        modules = c->modules;
        c->modules = 0;
    }
    c->dropped = c->nograd && given->phase == XS_PH_BWD && !c->replayed;
    if (c->dropped)
        return;
    c->last_in_tape = given->phase == XS_PH_BWD && !c->replayed;
    int rc = c->last_in_tape ? xs_wb_push(&c->tape, &c->tn, &c->tcap, given)
                             : xs_wb_push(&c->wl->ops, &c->wl->n, &c->wl->cap, given);
    if (!rc && modules) {
        xs_op *op = c->last_in_tape ? &c->tape[c->tn - 1] : &c->wl->ops[c->wl->n - 1];
        op->modules += modules;
    }
    if (rc)
        c->failed = 1;
}

/* The recipe's code enters n nn.Module calls (__call__, then forward) that
 * the next forward op's host time carries: each leaf module the builders
 * below emit (nn.Linear or GPT-2's Conv1D, nn.LayerNorm, nn.Dropout,
 * nn.Embedding) is one, and so is each container module around them
 * (encoder_layer, decoder_layer, the embeddings). Not counted: activation
 * modules (NVIDIA's BERT calls its activation as a function; whether
 * transformers' ACT2FN hands back a module depends on its version), loss
 * modules, and the containers of the MLM and classification heads but for
 * BertPooler. */
void xs_wb_enter_modules(xs_wb *c, int64_t n)
{
    c->modules += n;
}

/* The op just emitted (to the list or the tape) is issued this way. */
void xs_wb_issued(xs_wb *c, int issue)
{
    if (c->failed || c->dropped)
        return;
    xs_op *last = c->last_in_tape ? (c->tn ? &c->tape[c->tn - 1] : NULL)
                                  : (c->wl->n ? &c->wl->ops[c->wl->n - 1] : NULL);
    if (last)
        last->issue = issue;
}

/* Start the backward group of the forward op just emitted. */
void xs_wb_bwd_group(xs_wb *c)
{
    if (c->gn == c->gcap) { /* the group arrays grow together */
        size_t cap = c->gcap;
        size_t *grown = xs_grow(c->groups, &cap, c->gn, sizeof *grown, 256);
        if (grown)
            c->groups = grown;
        double **arrays[] = {&c->gfree, &c->gfree_slack, &c->ggrad, &c->ggrad_slack};
        for (size_t i = 0; grown && i < sizeof arrays / sizeof arrays[0]; i++) {
            double *a = realloc(*arrays[i], cap * sizeof *a);
            if (a)
                *arrays[i] = a;
            else
                grown = NULL;
        }
        int *gl = grown ? realloc(c->glayer, cap * sizeof *gl) : NULL;
        if (gl)
            c->glayer = gl;
        else
            grown = NULL;
        if (!grown) {
            c->failed = 1;
            return;
        }
        c->gcap = cap;
    }
    /* what the forward ops since the last group keep, and the parameters
     * they introduced, belong to this group's backward */
    c->gfree[c->gn] = c->pending_saved;
    c->gfree_slack[c->gn] = c->pending_slack;
    c->ggrad[c->gn] = c->wl->trainable_params - c->params_mark;
    c->ggrad_slack[c->gn] = c->pending_grad_slack;
    c->glayer[c->gn] = c->unit;
    c->pending_saved = c->pending_slack = c->pending_grad_slack = 0;
    c->params_mark = c->wl->trainable_params;
    c->groups[c->gn++] = c->tn;
}

/* The last forward op emitted keeps a new tensor of bytes for its backward
 * (one of autograd's saved tensors). keep_output: the kept tensor is the
 * op's own output, so it is no longer a transient. */
void xs_wb_keep(xs_wb *c, double bytes)
{
    if (c->failed || c->nograd || c->wl->n == 0 || !(bytes > 0))
        return;
    xs_op_mem *m = &c->wl->ops[c->wl->n - 1].mem;
    double slack = xs_alloc_slack(bytes);
    m->saved += bytes;
    m->slack += slack;
    c->pending_saved += bytes;
    c->pending_slack += slack;
}

/* The output of op i (a forward op in the list) is now kept by a later op:
 * a saved tensor, no longer a transient that dies with its consumer. */
void xs_wb_kept_from(xs_wb *c, size_t i)
{
    if (!c->failed && i < c->wl->n && c->wl->ops[i].phase == XS_PH_FWD)
        c->wl->ops[i].mem.temp = 0;
}

/* The op just emitted keeps its input, the output of the op before it. */
void xs_wb_keep_input(xs_wb *c, double bytes)
{
    xs_wb_keep(c, bytes);
    if (c->wl->n >= 2)
        xs_wb_kept_from(c, c->wl->n - 2);
}

void xs_wb_keep_output(xs_wb *c, double bytes)
{
    xs_wb_keep(c, bytes);
    if (!c->failed && c->wl->n > 0)
        c->wl->ops[c->wl->n - 1].mem.temp = 0;
}

/* The transient output of the op just emitted, where the default (mem_op,
 * gemm) is not it. */
void xs_wb_transient(xs_wb *c, double bytes)
{
    if (c->failed || c->dropped)
        return;
    xs_op *last = c->last_in_tape ? (c->tn ? &c->tape[c->tn - 1] : NULL)
                                  : (c->wl->n ? &c->wl->ops[c->wl->n - 1] : NULL);
    if (last)
        last->mem.temp = bytes;
}

/* PyTorch's elementwise loops (and its dropout kernel) give each thread a
 * fixed number of elements to load, then wait; row kernels (norms,
 * softmax, reductions), fused layer kernels and the optimizer's
 * multi-tensor kernels are not TensorIterator loops and keep more in
 * flight. */
static int elementwise_loop(const xs_wb *c, int phase, int kind)
{
    if (c->fused || phase == XS_PH_OPT)
        return 0;
    return kind == XS_OP_ELTWISE || kind == XS_OP_COPY || kind == XS_OP_CAST;
}

/* PyTorch runs an elementwise op in its vectorized loop only when every
 * operand is contiguous and of one dtype; a broadcast operand, a permuted or
 * strided copy or a dtype conversion takes the generic loop (offsets and
 * casts per element), which moves fewer bytes a cycle. */
static int generic_loop(const xs_wb *c, int phase, int kind)
{
    return elementwise_loop(c, phase, kind) &&
           (c->broadcast || kind == XS_OP_COPY || kind == XS_OP_CAST);
}

/* A memory-bound op over elems elements, moving bpe bytes per element. */
__attribute__((format(printf, 8, 9))) void xs_wb_mem_op(xs_wb *c, int phase, int kind,
                                                        double elems, double bpe, double fpe,
                                                        int64_t launches, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xs_op *op = emit_slot(c, phase);
    xs_wb_base(c, op, phase, kind, fmt, ap);
    va_end(ap);
    op->bytes = elems * bpe;
    op->flops = elems * fpe;
    op->elems = elems;
    op->launches = launches;
    if (generic_loop(c, phase, kind))
        op->hints.bw_scale = c->s->train.generic_loop_efficiency;
    if (elementwise_loop(c, phase, kind))
        op->hints.loop_elems = (double)c->s->train.loop_elems;
    if (c->transposing)
        op->hints.strided_elems = elems;
    /* its output, taken in the format of the fp32 islands (the wider one
     * under autocast); optimizer-phase ops work in place */
    if (phase != XS_PH_OPT)
        op->mem.temp = elems * c->I;
    emit_commit(c, op);
}

/* C[m x n] = op(A)[m x k] op(B)[k x n], batch times, inputs in bytes ib,
 * output in bytes ob. Traffic counts each operand once (ideal reuse); the
 * GEMM model adds what tiling really costs. */
__attribute__((format(printf, 12, 13))) void xs_wb_gemm(xs_wb *c, int phase, int kind, double m,
                                                        double n, double k, double batch,
                                                        int ta, int tb, int ib, int ob,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xs_op *op = emit_slot(c, phase);
    xs_wb_base(c, op, phase, kind, fmt, ap);
    va_end(ap);
    op->m = (int64_t)m;
    op->n = (int64_t)n;
    op->k = (int64_t)k;
    op->batch = (int64_t)batch;
    op->ta = ta;
    op->tb = tb;
    op->flops = 2 * m * n * k * batch;
    op->bytes = batch * ((m * k + k * n) * ib + m * n * ob);
    op->mem.temp = batch * m * n * ob;
    emit_commit(c, op);
}

/* One parameter tensor of `count` elements; decay: in the weight-decay
 * group (not a bias or a LayerNorm weight: the no_decay list of NVIDIA's
 * run_squad.py and of the Hugging Face Trainer). Fused optimizers launch
 * once per group, and multi-tensor kernels pack tensors by their sizes. */
void xs_wb_add_param(xs_wb *c, double count, int decay, int matmul)
{
    c->wl->params += count;
    if (matmul)
        c->wl->params_matmul += count;
    if (c->frozen) /* no gradient, no optimizer state, not in a param group */
        return;
    c->pending_grad_slack += xs_alloc_slack(count * c->Wm); /* its gradient's */
    c->wl->trainable_params += count;
    c->wl->tensors += 1;
    xs_wb_add_tensor_entry(c, count, decay);
}

/* Room for n more entries in the parameter list; 0 where out of memory. */
static int reserve_params(xs_wb *c, size_t n)
{
    if (c->pn + n <= c->pcap)
        return 1;
    size_t cap = c->pcap ? 2 * c->pcap : 256;
    while (cap < c->pn + n)
        cap *= 2;
    double *ps = realloc(c->psize, cap * sizeof *ps);
    if (ps)
        c->psize = ps;
    unsigned char *pd = ps ? realloc(c->pdecay, cap) : NULL;
    if (pd)
        c->pdecay = pd;
    if (!ps || !pd) {
        c->failed = 1;
        return 0;
    }
    c->pcap = cap;
    return 1;
}

void xs_wb_add_tensor_entry(xs_wb *c, double count, int decay)
{
    if (!reserve_params(c, 1))
        return;
    c->psize[c->pn] = count;
    c->pdecay[c->pn++] = (unsigned char)decay;
}

void xs_wb_repeat_tensor_entries(xs_wb *c, size_t from, size_t n)
{
    if (!reserve_params(c, n))
        return;
    memcpy(c->psize + c->pn, c->psize + from, n * sizeof *c->psize);
    memcpy(c->pdecay + c->pn, c->pdecay + from, n);
    c->pn += n;
}
