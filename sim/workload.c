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
#include "workload.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "checked.h"
#include "grow.h"
#include "cpu.h"
#include "kernel_op.h"
#include "lora.h"

typedef struct {
    xs_workload *wl;
    const xs_scenario *s;
    int failed; /* out of memory while emitting */
    int layer;
    xs_op *tape; /* backward ops in forward order ... */
    size_t tn, tcap;
    size_t *groups; /* ... and where each forward op's group starts, */
    size_t gn, gcap;
    /* the saved bytes its backward releases and their allocator slack, the
     * weight-gradient elements it creates and theirs */
    double *gfree, *gfree_slack, *ggrad, *ggrad_slack;
    double pending_saved, pending_slack; /* kept by forward ops since the last group */
    double pending_grad_slack; /* of the parameters added since the last group */
    double params_mark;        /* wl->params when the last group started */
    double b, sq, h, a, d, f, V, T;
    xs_dtype mm; /* format of matmul inputs */
    int H;       /* bytes of a matmul-format element */
    int I;       /* bytes of an fp32-island element (LN, softmax, residual) */
    int W;       /* bytes of an optimizer-state (master) element */
    int Wm;      /* bytes of a model weight as the layers read it */
    int amp;     /* torch.autocast: casts and fp32 islands */
    int o2;      /* apex O2: half model, fp32 master copy */
    int fused, flash;
    int replayed; /* after the tape replay, backward ops go straight to the list */
    int broadcast; /* the ops now emitted read a broadcast operand */
    int transposing; /* the ops now emitted are copies that read across the
                        source's rows, one element from each */
    double *psize;   /* elements of each parameter tensor, in model order ... */
    unsigned char *pdecay; /* ... and whether it is in the weight-decay group */
    size_t pn, pcap;
    int last_in_tape; /* the last op emitted went to the tape */
    int64_t modules;  /* nn.Module calls entered whose Python the next forward
                         op carries (xs_op.modules) */
    int x_kept;       /* the next linear's input is a tensor a sibling linear
                         keeps already (q, k, v reading one tensor) */
    int has_tied;      /* the token embedding's backward group is ... */
    size_t tied_group; /* ... this one (an LM head shares its weight) */
    /* LoRA: the base weights are frozen (requires_grad False) */
    int lora;
    int frozen;   /* parameters added now are frozen */
    int nograd;   /* the ops emitted now take no input that requires grad and
                     own no trainable parameter: autograd records nothing,
                     keeps nothing, and they have no backward */
    int dropped;  /* the last op emitted was such a backward op, not kept */
    int input_nograd; /* the layer input does not require grad (LoRA's first
                         layer: the embeddings are frozen) until the layer's
                         first linears have read it */
    int x_unkept; /* the input of the last linear that read a fresh tensor is
                     kept by no one yet (a frozen linear keeps no input) */
    /* activation checkpointing: each layer's forward ops again, to run in
     * the backward before the layer's backward (recomputed), where each
     * layer's run starts in it, and the bytes of each layer's input that
     * the checkpoint keeps */
    int ckpt;
    xs_op *recomp;
    size_t rn, rcap;
    size_t *rstart;
    double *ckpt_in;
    int *glayer; /* the layer of each backward group */
} bld;

static int push(xs_op **arr, size_t *n, size_t *cap, const xs_op *op)
{
    xs_op *grown = xs_grow(*arr, cap, *n, sizeof *grown, 256);
    if (!grown)
        return -1;
    *arr = grown;
    (*arr)[(*n)++] = *op;
    return 0;
}

static xs_op base(bld *c, int phase, int kind, const char *fmt, va_list ap)
{
    char name[sizeof ((xs_op *)0)->name];
    vsnprintf(name, sizeof name, fmt, ap);
    xs_op op = xs_op_make(kind, phase, c->mm, name);
    op.layer = c->layer;
    op.count = phase == XS_PH_FWD || phase == XS_PH_BWD ? c->wl->micro_batches : 1;
    /* forward ops are Python calls; backward nodes run in the C++ engine;
     * the optimizer phase states its own */
    op.issue = phase == XS_PH_BWD ? XS_ISSUE_ENGINE : XS_ISSUE_EAGER;
    return op;
}

static void emit(bld *c, const xs_op *given)
{
    xs_op op = *given;
    if (op.phase == XS_PH_FWD && c->modules > 0) {
        op.modules += c->modules;
        c->modules = 0;
    }
    c->dropped = c->nograd && op.phase == XS_PH_BWD && !c->replayed;
    if (c->dropped)
        return;
    c->last_in_tape = op.phase == XS_PH_BWD && !c->replayed;
    int rc = c->last_in_tape ? push(&c->tape, &c->tn, &c->tcap, &op)
                             : push(&c->wl->ops, &c->wl->n, &c->wl->cap, &op);
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
static void enter_modules(bld *c, int64_t n)
{
    c->modules += n;
}

/* The op just emitted (to the list or the tape) is issued this way. */
static void issued(bld *c, int issue)
{
    if (c->failed || c->dropped)
        return;
    xs_op *last = c->last_in_tape ? (c->tn ? &c->tape[c->tn - 1] : NULL)
                                  : (c->wl->n ? &c->wl->ops[c->wl->n - 1] : NULL);
    if (last)
        last->issue = issue;
}

/* Start the backward group of the forward op just emitted. */
static void bwd_group(bld *c)
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
    c->glayer[c->gn] = c->layer;
    c->pending_saved = c->pending_slack = c->pending_grad_slack = 0;
    c->params_mark = c->wl->trainable_params;
    c->groups[c->gn++] = c->tn;
}

/* The last forward op emitted keeps a new tensor of bytes for its backward
 * (one of autograd's saved tensors). keep_output: the kept tensor is the
 * op's own output, so it is no longer a transient. */
static void keep(bld *c, double bytes)
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
static void kept_from(bld *c, size_t i)
{
    if (!c->failed && i < c->wl->n && c->wl->ops[i].phase == XS_PH_FWD)
        c->wl->ops[i].mem.temp = 0;
}

/* The op just emitted keeps its input, the output of the op before it. */
static void keep_input(bld *c, double bytes)
{
    keep(c, bytes);
    if (c->wl->n >= 2)
        kept_from(c, c->wl->n - 2);
}

static void keep_output(bld *c, double bytes)
{
    keep(c, bytes);
    if (!c->failed && c->wl->n > 0)
        c->wl->ops[c->wl->n - 1].mem.temp = 0;
}

/* The transient output of the op just emitted, where the default (mem_op,
 * gemm) is not it. */
static void transient(bld *c, double bytes)
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
static int elementwise_loop(const bld *c, int phase, int kind)
{
    if (c->fused || phase == XS_PH_OPT)
        return 0;
    return kind == XS_OP_ELTWISE || kind == XS_OP_COPY || kind == XS_OP_CAST;
}

/* PyTorch runs an elementwise op in its vectorized loop only when every
 * operand is contiguous and of one dtype; a broadcast operand, a permuted or
 * strided copy or a dtype conversion takes the generic loop (offsets and
 * casts per element), which moves fewer bytes a cycle. */
static int generic_loop(const bld *c, int phase, int kind)
{
    return elementwise_loop(c, phase, kind) &&
           (c->broadcast || kind == XS_OP_COPY || kind == XS_OP_CAST);
}

/* A memory-bound op over elems elements, moving bpe bytes per element. */
__attribute__((format(printf, 8, 9))) static void mem_op(bld *c, int phase, int kind,
                                                        double elems, double bpe, double fpe,
                                                        int64_t launches, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xs_op op = base(c, phase, kind, fmt, ap);
    va_end(ap);
    op.bytes = elems * bpe;
    op.flops = elems * fpe;
    op.elems = elems;
    op.launches = launches;
    if (generic_loop(c, phase, kind))
        op.hints.bw_scale = c->s->train.generic_loop_efficiency;
    if (elementwise_loop(c, phase, kind))
        op.hints.loop_elems = (double)c->s->train.loop_elems;
    if (c->transposing)
        op.hints.strided_elems = elems;
    /* its output, taken in the format of the fp32 islands (the wider one
     * under autocast); optimizer-phase ops work in place */
    if (phase != XS_PH_OPT)
        op.mem.temp = elems * c->I;
    emit(c, &op);
}

/* C[m x n] = op(A)[m x k] op(B)[k x n], batch times, inputs in bytes ib,
 * output in bytes ob. Traffic counts each operand once (ideal reuse); the
 * GEMM model adds what tiling really costs. */
__attribute__((format(printf, 12, 13))) static void gemm(bld *c, int phase, int kind, double m,
                                                        double n, double k, double batch,
                                                        int ta, int tb, int ib, int ob,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xs_op op = base(c, phase, kind, fmt, ap);
    va_end(ap);
    op.m = (int64_t)m;
    op.n = (int64_t)n;
    op.k = (int64_t)k;
    op.batch = (int64_t)batch;
    op.ta = ta;
    op.tb = tb;
    op.flops = 2 * m * n * k * batch;
    op.bytes = batch * ((m * k + k * n) * ib + m * n * ob);
    op.mem.temp = batch * m * n * ob;
    emit(c, &op);
}

/* One parameter tensor of `count` elements; decay: in the weight-decay
 * group (not a bias or a LayerNorm weight: the no_decay list of NVIDIA's
 * run_squad.py and of the Hugging Face Trainer). Fused optimizers launch
 * once per group, and multi-tensor kernels pack tensors by their sizes. */
static void add_param(bld *c, double count, int decay, int matmul)
{
    c->wl->params += count;
    if (matmul)
        c->wl->params_matmul += count;
    if (c->frozen) /* no gradient, no optimizer state, not in a param group */
        return;
    c->pending_grad_slack += xs_alloc_slack(count * c->Wm); /* its gradient's */
    c->wl->trainable_params += count;
    c->wl->tensors += 1;
    if (c->pn == c->pcap) {
        size_t cap = c->pcap ? 2 * c->pcap : 256;
        double *ps = realloc(c->psize, cap * sizeof *ps);
        if (ps)
            c->psize = ps;
        unsigned char *pd = ps ? realloc(c->pdecay, cap) : NULL;
        if (pd)
            c->pdecay = pd;
        if (!ps || !pd) {
            c->failed = 1;
            return;
        }
        c->pcap = cap;
    }
    c->psize[c->pn] = count;
    c->pdecay[c->pn++] = (unsigned char)decay;
}

static void grad_fanout(bld *c, const char *name, double elems, int es, int consumers);
static void dropout(bld *c, const char *name, double elems, int es, double p);
static void linear(bld *c, const char *name, double rows, double K, double N, int bias,
                   int x_island);

/* The LoRA adapter of a targeted linear, as PEFT's lora.Linear.forward
 * runs it after the base layer (huggingface/peft@003369494699fedd543fe38d16e52df96aeae743,
 * src/peft/tuners/lora/layer.py, Linear.forward and update_layer; the cast
 * is _cast_input_dtype, tuners_utils.py @005fdd53c63ed5a27177fd200295a00f93a57b55):
 * x = x.to(lora_A.weight.dtype) (a cast
 * to fp32 when autocast hands it a half tensor: the adapters are fp32),
 * then result + lora_B(lora_A(dropout(x))) * scaling: the dropout (or
 * nn.Identity, no kernel), two bias-free nn.Linear GEMMs through rank r,
 * one multiply by alpha / r and one add. Autograd sums x's two gradients
 * (base and adapter), one add kernel. dx: x requires grad. */
static void lora_adapter(bld *c, const char *name, double rows, double K, double N,
                         int x_island, int dx)
{
    const xs_train *t = &c->s->train;
    double r = (double)t->lora_rank, p = t->lora_dropout;
    char nm[48];
    int frozen = c->frozen, nograd = c->nograd, x_nograd = c->input_nograd;
    int x_kept = c->x_kept, unkept = c->x_unkept;
    /* the adapter reads a new tensor (a cast or dropout output) rather than
     * x itself, which then its A keeps */
    int fresh = c->amp || p > 0;
    enter_modules(c, p > 0 ? 1 : 2); /* lora.Linear itself; nn.Identity when no dropout */
    c->nograd = nograd || !dx; /* the cast and dropout of an x without grad record nothing */
    if (c->amp && !x_island) {
        mem_op(c, XS_PH_FWD, XS_OP_CAST, rows * K, c->H + 4, 0, 1, "%s.lora_x.cast", name);
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_CAST, rows * K, 4 + c->H, 0, 1, "%s.lora_x.cast.bwd", name);
        x_island = 1;
    }
    snprintf(nm, sizeof nm, "%s.lora_dropout", name);
    dropout(c, nm, rows * K, x_island ? c->I : c->H, p);
    c->nograd = nograd;
    c->frozen = 0;
    c->input_nograd = !dx;
    c->x_kept = fresh ? 0 : 1; /* x itself: kept once, by whoever reads it first */
    snprintf(nm, sizeof nm, "%s.lora_A", name);
    linear(c, nm, rows, K, r, 0, x_island);
    if (fresh)
        c->x_unkept = unkept;
    c->input_nograd = 0;
    c->x_kept = 0;
    snprintf(nm, sizeof nm, "%s.lora_B", name);
    int x_unkept = c->x_unkept;
    linear(c, nm, rows, r, N, 0, 0);
    c->x_unkept = x_unkept;
    c->frozen = frozen;
    c->input_nograd = x_nograd;
    c->x_kept = x_kept;
    /* * scaling (a Python float: nothing kept), then the add, whose
     * gradient passes through unchanged */
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows * N, 2.0 * c->H, 1, 1, "%s.lora_scale", name);
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, rows * N, 2.0 * c->H, 1, 1, "%s.lora_scale.bwd", name);
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows * N, 3.0 * c->H, 1, 1, "%s.lora_add", name);
}

/* Y[rows x N] = X[rows x K] W^T (+ b). x_island: X is an fp32-island tensor,
 * so under AMP autocast casts it to half first (and its gradient back).
 * A frozen weight (LoRA) has no weight or bias gradient, and autograd's
 * matmul then keeps no X (its formula saves X only for the weight's
 * gradient); where X needs no gradient either (c->input_nograd), the
 * linear has no backward at all. A targeted linear gets its adapter. */
static void linear(bld *c, const char *name, double rows, double K, double N, int bias,
                   int x_island)
{
    int cast_x = c->amp && x_island;
    int trained = !c->frozen, dx = !c->input_nograd;
    int adapted = c->lora && xs_lora_targeted(c->s, name, c->layer);
    /* QLoRA: bitsandbytes' Linear4bit holds the frozen weights of the layers */
    int quant = c->frozen && c->layer >= 0 && c->s->train.quant != XS_QUANT_NONE;
    double wn = K * N + (bias ? N : 0);
    if (adapted && dx) /* x feeds the base and the adapter: two gradients to add */
        grad_fanout(c, name, rows * K, x_island ? c->I : c->H, 2);
    enter_modules(c, 1);
    add_param(c, K * N, 1, rows == c->T);
    if (bias)
        add_param(c, N, 0, 0);
    if (quant) {
        c->wl->quant_params += K * N;
        c->wl->quant_bytes += xs_quant_bytes(c->s->train.quant, K, N);
    }
    int nograd = c->nograd;
    c->nograd = nograd || (!trained && !dx);
    /* the ops whose outputs are X and the weight the GEMM reads */
    size_t x_src = c->wl->n ? c->wl->n - 1 : (size_t)-1, w_src = (size_t)-1;
    if (cast_x) {
        mem_op(c, XS_PH_FWD, XS_OP_CAST, rows * K, 4 + c->H, 0, 1, "%s.cast_x", name);
        issued(c, XS_ISSUE_AUTOCAST);
        x_src = c->wl->n - 1;
    }
    /* bitsandbytes' MatMul4Bit dequantizes the packed weight for the forward
     * matmul and again for the backward's dX, and keeps only the packed
     * weight, resident anyway (bitsandbytes/autograd/_functions.py,
     * MatMul4Bit: ctx.tensors = (None, B), grad_A = grad_output @
     * F.dequantize_4bit(B, ctx.state).to(grad_output.dtype).t(); team code
     * index, find_string ids 3710483789, 8479261646). Modelled: one kernel
     * reading the packed bytes and writing the matmul format (a weight
     * loaded in fp32 but computed in half would add a cast) */
    double qb = quant ? xs_quant_bytes(c->s->train.quant, K, N) : 0;
    if (quant) {
        mem_op(c, XS_PH_FWD, XS_OP_CAST, K * N, qb / (K * N) + c->H, 1, 1, "%s.dequant", name);
        transient(c, K * N * c->H);
    } else if (c->amp) { /* autocast casts each weight once per forward (its cache) */
        mem_op(c, XS_PH_FWD, XS_OP_CAST, wn, 4 + c->H, 0, 1 + bias, "%s.cast_w", name);
        issued(c, XS_ISSUE_AUTOCAST);
        w_src = c->wl->n - 1;
    }
    gemm(c, XS_PH_FWD, XS_OP_GEMM, rows, N, K, 1, 0, 1, c->H, c->H, "%s", name);
    /* autograd keeps X for dW (in the matmul format: autocast's cast is
     * what it keeps) and, under autocast, the half copy of the weight for
     * dX: the weight cache holds it through the forward, the saved tensor
     * until the backward has used it */
    if (trained && (!c->x_kept || c->x_unkept)) {
        keep(c, rows * K * c->H);
        kept_from(c, x_src);
        c->x_unkept = 0;
    } else if (!c->x_kept) {
        c->x_unkept = 1;
    }
    if (c->amp && !quant && dx) {
        keep(c, K * N * c->H);
        kept_from(c, w_src);
    }
    bwd_group(c);
    if (dx && quant) {
        mem_op(c, XS_PH_BWD, XS_OP_CAST, K * N, qb / (K * N) + c->H, 1, 1, "%s.dequant.bwd",
               name);
        transient(c, K * N * c->H);
    }
    if (dx)
        gemm(c, XS_PH_BWD, XS_OP_GEMM, rows, K, N, 1, 0, 0, c->H, c->H, "%s.dX", name);
    if (trained)
        gemm(c, XS_PH_BWD, XS_OP_GEMM, N, K, rows, 1, 1, 0, c->H, c->H, "%s.dW", name);
    if (trained && bias)
        mem_op(c, XS_PH_BWD, XS_OP_REDUCE, rows * N, c->H, 1, 1, "%s.db", name);
    if (trained && c->amp)
        mem_op(c, XS_PH_BWD, XS_OP_CAST, wn, c->H + 4, 0, 1 + bias, "%s.dW.cast", name);
    if (cast_x && dx)
        mem_op(c, XS_PH_BWD, XS_OP_CAST, rows * K, c->H + 4, 0, 1, "%s.dX.cast", name);
    c->nograd = nograd;
    if (adapted)
        lora_adapter(c, name, rows, K, N, x_island, dx);
}

/* Dropout writes its output and a 1-byte mask; backward reads the mask. */
static void dropout(bld *c, const char *name, double elems, int es, double p)
{
    if (p <= 0)
        return;
    enter_modules(c, 1);
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * es + 1, 2, 1, "%s", name);
    keep(c, elems); /* native_dropout's bool mask */
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 2.0 * es + 1, 1, 1, "%s.bwd", name);
}

/* LayerNorm over rows of h: forward saves mean and rstd; backward is one
 * kernel for dx and one for dgamma/dbeta, as PyTorch runs it. Both row
 * kernels walk their row twice, first for its statistics, then to write
 * (pytorch/pytorch@0005c538e468a9597b4372816aecacb33733deb6:
 * aten/src/ATen/native/cuda/layer_norm_kernel.cu: the forward's
 * compute_stats, then a second loop over X; layer_norm_grad_input_kernel's
 * sums over X and dY, then a second loop over both; apex's
 * cuComputeGradInput does the same): x, and dy, are read twice. */
static void layernorm(bld *c, const char *name, double rows, int es_in, int es_out)
{
    double h = c->h;
    add_param(c, h, 0, 0);
    add_param(c, h, 0, 0);
    int nograd = c->nograd;
    c->nograd = nograd || (c->frozen && c->input_nograd);
    enter_modules(c, 1);
    mem_op(c, XS_PH_FWD, XS_OP_NORM, rows * h, 2.0 * es_in + es_out + 8.0 / h, 8, 1, "%s",
           name);
    keep_input(c, rows * h * es_in); /* x, and mean and rstd in fp32 */
    keep(c, rows * 4.0);
    keep(c, rows * 4.0);
    bwd_group(c);
    if (c->frozen) /* frozen weight and bias: layer_norm_backward's output mask
                      skips the dgamma/dbeta kernel */
        mem_op(c, XS_PH_BWD, XS_OP_NORM, rows * h, 2.0 * (es_in + es_out) + es_in + 8.0 / h, 12,
               1, "%s.bwd", name);
    else /* dx: x and dy twice, dx once; dgamma/dbeta: x and dy once */
        mem_op(c, XS_PH_BWD, XS_OP_NORM, rows * h,
               2.0 * (es_in + es_out) + es_in + 8.0 / h + es_in + es_out, 12, 2, "%s.bwd", name);
    c->nograd = nograd;
}

/* A tensor read by `consumers` ops gets that many gradients; autograd adds
 * them pairwise, one kernel each. Emitted before the consumers, so that the
 * reversed tape runs it after all of their backward ops. */
static void grad_fanout(bld *c, const char *name, double elems, int es, int consumers)
{
    if (consumers < 2 || c->input_nograd) /* a tensor without grad gets no gradients */
        return;
    bwd_group(c);
    for (int i = 1; i < consumers; i++)
        mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 3.0 * es, 1, 1, "%s.grad_sum%d", name, i);
}

static void residual_add(bld *c, const char *name, double elems, int es_a, int es_b, int es_out)
{
    /* The gradient of a sum passes through unchanged: no backward kernel. */
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, es_a + es_b + es_out, 1, 1, "%s", name);
}

/* Split q, k, v into heads (and merge back): torch.matmul copies permuted
 * views to contiguous memory; a fused kernel does all three in one pass.
 * The key enters transposed (Q K^T, a [d x s] operand a head): its copy
 * writes along the sequence while its source runs along the head
 * dimension, and so does the copy of its gradient back into token rows.
 * PyTorch's copy walks the output's order, so each element it reads lies
 * h elements from the last, in an L2 sector of its own. */
static void transposing_copy(bld *c, int phase, double elems, const char *name,
                             const char *suffix)
{
    c->transposing = 1;
    mem_op(c, phase, XS_OP_COPY, elems, 2.0 * c->H, 0, 1, "%s%s", name, suffix);
    c->transposing = 0;
}

static void head_copies(bld *c, const char *name, double elems, int tensors, int transposed)
{
    int split = transposed && !c->fused; /* a fused kernel reads every head in one pass */
    int plain = tensors - split, launches = c->fused ? 1 : plain;
    mem_op(c, XS_PH_FWD, XS_OP_COPY, elems * plain, 2.0 * c->H, 0, launches, "%s", name);
    if (split)
        transposing_copy(c, XS_PH_FWD, elems, name, ".kT");
    bwd_group(c);
    if (split)
        transposing_copy(c, XS_PH_BWD, elems, name, ".kT.bwd");
    mem_op(c, XS_PH_BWD, XS_OP_COPY, elems * plain, 2.0 * c->H, 0, launches, "%s.bwd", name);
}

/* Shared memory a CUDA thread block gets without opting in: 48 KiB on
 * every compute capability here (CUDA C++ Programming Guide, "Technical
 * Specifications per Compute Capability"). */
#define SMEM_PER_BLOCK_BYTES 49152.0

/* Times PyTorch's softmax forward reads each input element
 * (pytorch/pytorch@000cace5a401cabff792f70ee9768708415ec98d:
 * aten/src/ATen/native/cuda/SoftMax.cu, host_softmax): rows of at most 1024
 * elements and 4 KiB run a warp a row that keeps the row in registers; a
 * longer row gets a block that caches it in shared memory when it fits the
 * block's 48 KiB less a float per warp (at most 32 warps:
 * cunn_SoftMaxForwardSmem, rows of whole 16-byte vectors); any other row
 * is read three times, for its max, for the sum of exponentials and to
 * write the result (cunn_SoftMaxForward). */
static int softmax_reads(double cols, int es)
{
    if (cols <= 1024 && cols * es <= 4096)
        return 1;
    /* the shared-memory kernel also needs whole 16-byte vectors a row */
    if (cols * es < SMEM_PER_BLOCK_BYTES - 32 * 4 && fmod(cols * es, 16) == 0)
        return 1;
    return 3;
}

/* Softmax along rows of cols elements, in and out in es bytes an element;
 * backward reads y and dy and writes dx. is_log: log_softmax (no division:
 * one FLOP fewer). */
static void softmax(bld *c, const char *name, double elems, double cols, int es, int is_log)
{
    mem_op(c, XS_PH_FWD, XS_OP_SOFTMAX, elems, (softmax_reads(cols, es) + 1.0) * es,
           is_log ? 4 : 5, 1, "%s", name);
    keep_output(c, elems * es); /* both backward formulas read y */
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_SOFTMAX, elems, 3.0 * es, 3, 1, "%s.bwd", name);
}

/* softmax(scale * Q K^T + mask) with dropout, scores held in memory. */
static void attention_unfused(bld *c, int causal)
{
    double S2 = c->b * c->a * c->sq * c->sq, ba = c->b * c->a, s = c->sq, d = c->d;
    double p = c->s->model.attn_dropout;
    int H = c->H, sm = c->fused ? H : c->I; /* softmax runs in fp32 under AMP */
    head_copies(c, "attn.heads", c->T * c->h, 3, 1);
    gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.scores");
    keep(c, c->T * c->h * H); /* the head copies of q and k */
    keep(c, c->T * c->h * H);
    bwd_group(c);
    gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.scores.dQ");
    gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.scores.dK");
    if (c->fused) {
        /* one kernel: scale + mask + softmax + dropout, in and out in half */
        double mask = p > 0 ? 1 : 0;
        mem_op(c, XS_PH_FWD, XS_OP_SOFTMAX, S2, 2.0 * H + mask, 8, 1, "attn.softmax");
        keep_output(c, S2 * H); /* the probabilities */
        keep(c, S2 * mask);     /* the dropout mask */
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_SOFTMAX, S2, 3.0 * H + mask, 4, 1, "attn.softmax.bwd");
    } else {
        mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.scale");
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.scale.bwd");
        c->broadcast = 1; /* the [s, s] causal mask, the [b, 1, 1, s] padding mask */
        if (causal) { /* torch.where(causal_mask, w, min) keeps the format */
            mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.causal_mask");
            bwd_group(c);
            mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.causal_mask.bwd");
        }
        if (sm != H) { /* padding-mask add promotes to fp32; causal: autocast's cast */
            mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, H + sm, 1, 1, "%s",
                   causal ? "attn.softmax.cast" : "attn.mask");
            if (causal)
                issued(c, XS_ISSUE_AUTOCAST);
            bwd_group(c);
            mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, sm + H, 0, 1, "%s.bwd",
                   causal ? "attn.softmax.cast" : "attn.mask");
        } else if (!causal) {
            mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.mask");
        }
        c->broadcast = 0;
        softmax(c, "attn.softmax", S2, s, sm, 0);
        /* BERT drops out fp32 probs and autocast casts them for P.V; GPT-2
         * casts back to the value format first, then drops out. */
        if (causal && sm != H) {
            mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.probs.cast");
            issued(c, XS_ISSUE_AUTOCAST);
            bwd_group(c);
            mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.probs.cast.bwd");
        }
        dropout(c, "attn.probs.dropout", S2, causal ? H : sm, p);
        if (!causal && sm != H) {
            mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.probs.cast");
            issued(c, XS_ISSUE_AUTOCAST);
            bwd_group(c);
            mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.probs.cast.bwd");
        }
    }
    gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.context");
    /* P.V keeps v and the probabilities it read: softmax's own output
     * (kept there already) only when no dropout or cast came between */
    int probs_kept = p <= 0 && (c->fused || sm == H);
    keep(c, c->T * c->h * H);
    if (!probs_kept)
        keep(c, S2 * H);
    bwd_group(c);
    gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.context.dP");
    gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.context.dV");
    head_copies(c, "attn.merge", c->T * c->h, 1, 0);
}

/* Flash-style attention: tiles of Q K^T live in on-chip memory, so no s x s
 * traffic; the causal kernel skips the masked half of the tiles; backward
 * recomputes the scores (5 matmuls of s.s.d against forward's 2). */
static void attention_flash(bld *c, int causal)
{
    double ba = c->b * c->a, s = c->sq, d = c->d, frac = causal ? 0.5 : 1.0;
    double qkvo = c->T * c->h * c->H, lse = ba * s * 4;
    xs_op op;
    gemm(c, XS_PH_FWD, XS_OP_ATTENTION, s, s, d, ba, 0, 1, c->H, c->H, "attn.flash");
    if (c->failed)
        return;
    xs_op *f = &c->wl->ops[c->wl->n - 1];
    f->flops = 4 * ba * s * s * d * frac;
    f->bytes = 4 * qkvo + lse;
    op = *f;
    /* it keeps q, k, v, its output and the rows' logsumexp (and only a
     * seed for dropout): no s x s term */
    keep_output(c, qkvo);
    for (int t = 0; t < 3; t++)
        keep(c, qkvo);
    keep(c, lse);
    bwd_group(c);
    op.phase = XS_PH_BWD;
    op.flops = 10 * ba * s * s * d * frac;
    op.bytes = 8 * qkvo + 2 * lse;
    op.mem.temp = 3 * qkvo; /* dq, dk, dv: no s x s tensor, as in the forward */
    op.launches = 3; /* dO.O preprocess, main kernel, dQ conversion */
    snprintf(op.name, sizeof op.name, "attn.flash.bwd");
    emit(c, &op);
}

/* FFN activation; returns 1 if its output is an fp32 island. */
static int activation(bld *c, double elems)
{
    int H = c->H;
    if (c->s->train.ffn_bias == XS_FFN_BIAS_SEPARATE && !c->fused) {
        /* the GEMM wrote y without bias; bias + y broadcasts the bias over
         * the rows (the generic loop). Its backward is the bias reduction
         * the up-projection already has. */
        c->broadcast = 1;
        mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * H, 1, 1, "ffn.bias_add");
        c->broadcast = 0;
    }
    if (c->s->model.activation == XS_ACT_GELU_NEW && !c->fused) {
        /* transformers' NewGELUActivation is Python: pow, mul, add, mul,
         * tanh, add, mul, mul (8 kernels, 10 reads + 8 writes); pow is on
         * autocast's fp32 list, so the chain runs in fp32 under AMP. Its
         * autograd backward is 11 kernels of about 30 element accesses. */
        int es = c->I;
        if (c->amp) {
            mem_op(c, XS_PH_FWD, XS_OP_CAST, elems, H + 4, 0, 1, "ffn.gelu_new.cast");
            issued(c, XS_ISSUE_AUTOCAST);
        }
        mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 18.0 * es, 10, 8, "ffn.gelu_new");
        /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 pow(x, 3)))): autograd
         * keeps x (pow), tanh's result, and both factors of the last mul;
         * the ops by a Python scalar keep nothing */
        for (int t = 0; t < 4; t++)
            keep(c, elems * es);
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 30.0 * es, 16, 11, "ffn.gelu_new.bwd");
        if (c->amp)
            mem_op(c, XS_PH_BWD, XS_OP_CAST, elems, 4 + H, 0, 1, "ffn.gelu_new.cast.bwd");
        return c->amp;
    }
    const char *name = c->s->model.activation == XS_ACT_RELU ? "ffn.relu" : "ffn.gelu";
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * H, 8, 1, "%s", name);
    /* gelu keeps its input, relu its output: one tensor either way */
    if (c->s->model.activation == XS_ACT_RELU)
        keep_output(c, elems * H);
    else
        keep_input(c, elems * H);
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 3.0 * H, 12, 1, "%s.bwd", name);
    return 0;
}

static void attention(bld *c, int causal)
{
    /* past the layer's first linears: their input is behind */
    c->x_unkept = 0;
    c->input_nograd = 0;
    if (c->flash)
        attention_flash(c, causal);
    else
        attention_unfused(c, causal);
}

/* dropout(y) + residual, then LayerNorm (post-LN, BERT); fused: one kernel. */
static void post_ln_block(bld *c, const char *prefix, double p)
{
    double e = c->T * c->h;
    char nm[48];
    if (c->fused) {
        add_param(c, c->h, 0, 0);
        add_param(c, c->h, 0, 0);
        snprintf(nm, sizeof nm, "%s.bias_dropout_residual_ln", prefix);
        enter_modules(c, 1);
        mem_op(c, XS_PH_FWD, XS_OP_NORM, e, 4.0 * c->H + 1, 12, 1, "%s", nm);
        keep(c, e);          /* the dropout mask */
        keep(c, e * c->H);   /* the LayerNorm's input */
        keep(c, c->T * 8.0); /* its mean and rstd */
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_NORM, e, 6.0 * c->H + 1, 16, 2, "%s.bwd", nm);
        return;
    }
    snprintf(nm, sizeof nm, "%s.dropout", prefix);
    dropout(c, nm, e, c->H, p);
    snprintf(nm, sizeof nm, "%s.residual", prefix);
    residual_add(c, nm, e, c->H, c->I, c->I);
    snprintf(nm, sizeof nm, "%s.ln", prefix);
    layernorm(c, nm, c->T, c->I, c->I);
}

/* BertLayer, BertAttention, BertSelfAttention, BertSelfOutput,
 * BertIntermediate, BertOutput: the containers of one layer in Hugging
 * Face's modeling_bert.py and in NVIDIA's BERT modeling.py, its fork. */
#define BERT_LAYER_CONTAINERS 6
/* GPT2Block, GPT2Attention, GPT2MLP (transformers' modeling_gpt2.py). */
#define GPT2_BLOCK_CONTAINERS 3

static void encoder_layer(bld *c)
{
    double T = c->T, h = c->h, p = c->s->model.dropout;
    enter_modules(c, BERT_LAYER_CONTAINERS);
    /* The layer input feeds q, k, v (or one qkv) and the residual. */
    grad_fanout(c, "attn.x", T * h, c->I, c->fused ? 1 : 4);
    if (c->fused) {
        linear(c, "attn.qkv", T, h, 3 * h, 1, 1);
    } else {
        linear(c, "attn.q", T, h, h, 1, 1);
        c->x_kept = !c->amp; /* autocast casts x for each; else one tensor */
        linear(c, "attn.k", T, h, h, 1, 1);
        linear(c, "attn.v", T, h, h, 1, 1);
        c->x_kept = 0;
    }
    attention(c, 0);
    c->x_kept = c->flash; /* the flash output, kept by the attention */
    linear(c, "attn.out", T, h, h, 1, 0);
    c->x_kept = 0;
    post_ln_block(c, "attn", p);
    grad_fanout(c, "ffn.x", T * h, c->I, c->fused ? 1 : 2);
    linear(c, "ffn.up", T, h, c->f, 1, 1);
    int island = activation(c, T * c->f);
    linear(c, "ffn.down", T, c->f, h, 1, island);
    post_ln_block(c, "ffn", p);
}

static void decoder_layer(bld *c)
{
    double T = c->T, h = c->h, e = T * h, p = c->s->model.dropout;
    enter_modules(c, GPT2_BLOCK_CONTAINERS);
    grad_fanout(c, "attn.residual", e, c->I, 2);
    layernorm(c, "ln1", T, c->I, c->I);
    linear(c, "attn.qkv", T, h, 3 * h, 1, 1);
    attention(c, 1);
    c->x_kept = c->flash; /* the flash output, kept by the attention */
    linear(c, "attn.out", T, h, h, 1, 0);
    c->x_kept = 0;
    dropout(c, "attn.dropout_out", e, c->H, p);
    residual_add(c, "attn.residual", e, c->H, c->I, c->I);
    grad_fanout(c, "ffn.residual", e, c->I, 2);
    layernorm(c, "ln2", T, c->I, c->I);
    linear(c, "ffn.up", T, h, c->f, 1, 1);
    int island = activation(c, T * c->f);
    linear(c, "ffn.down", T, c->f, h, 1, island);
    dropout(c, "ffn.dropout", e, c->H, p);
    residual_add(c, "ffn.residual", e, c->H, c->I, c->I);
}

/* Gather rows of a table; backward is PyTorch's embedding_dense_backward:
 * sort the indices, sum rows per index, write a dense zero-filled gradient. */
static void embedding(bld *c, const char *name, double rows, double lookups)
{
    double h = c->h;
    add_param(c, rows * h, 1, 0);
    enter_modules(c, 1);
    /* a frozen table: autograd runs no embedding backward (ids need none) */
    int nograd = c->nograd;
    c->nograd = nograd || c->frozen;
    double table_reads = fmin(rows, lookups) * h * c->Wm;
    mem_op(c, XS_PH_FWD, XS_OP_EMBED, 1, lookups * (h * c->Wm + 8) + table_reads, 0, 1, "%s",
           name);
    transient(c, lookups * h * c->Wm); /* the rows gathered */
    keep(c, lookups * 8.0);            /* the int64 indices */
    bwd_group(c);
    if (!c->has_tied && !c->failed) { /* the first table is the token embedding */
        c->has_tied = 1;
        c->tied_group = c->gn - 1;
    }
    mem_op(c, XS_PH_BWD, XS_OP_EMBED, 1, lookups * (h * c->I + 32) + 2 * rows * h * 4, 0, 6,
           "%s.bwd", name);
    c->nograd = nograd;
}

static void encoder_embeddings(bld *c)
{
    const xs_model *m = &c->s->model;
    double e = c->T * c->h;
    int tables = m->type_vocab > 0 ? 3 : 2;
    c->layer = -1;
    /* the task model (BertForQuestionAnswering, ...), BertModel,
     * BertEmbeddings, and BertEncoder, entered before the first layer */
    enter_modules(c, 4);
    embedding(c, "embed.word", (double)m->vocab, c->T);
    embedding(c, "embed.position", (double)m->max_positions, c->T);
    if (tables == 3)
        embedding(c, "embed.token_type", (double)m->type_vocab, c->T);
    if (c->fused) { /* one kernel sums the gathers (the sum's gradient is free) */
        mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, (tables + 1.0) * c->Wm, tables, 1, "embed.sum");
    } else {
        for (int i = 1; i < tables; i++)
            mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 3.0 * c->Wm, 1, 1, "embed.add%d", i);
    }
    layernorm(c, "embed.ln", c->T, c->Wm, c->I);
    dropout(c, "embed.dropout", e, c->I, m->dropout);
}

static void decoder_embeddings(bld *c)
{
    const xs_model *m = &c->s->model;
    double e = c->T * c->h;
    c->layer = -1;
    enter_modules(c, 2); /* GPT2LMHeadModel (or the task model), GPT2Model */
    embedding(c, "embed.token", (double)m->vocab, c->T);
    embedding(c, "embed.position", (double)m->max_positions, c->T);
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 3.0 * c->Wm, 1, 1, "embed.add");
    dropout(c, "embed.dropout", e, c->I, m->dropout);
}

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
static void cross_entropy(bld *c, double rows, double classes, int ls)
{
    softmax(c, "head.log_softmax", rows * classes, classes, ls, 1);
    mem_op(c, XS_PH_FWD, XS_OP_LOSS, rows, ls + 8, 1, 2, "head.nll");
    if (!c->failed)
        c->wl->ops[c->wl->n - 1].hints.serial_trips = 2 * ceil(rows / NLL_LOSS_THREADS);
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_LOSS, rows * classes, ls, 0, 2, "head.nll.bwd");
}

/* The parameter bookkeeping before a linear, to undo it when the linear's
 * weight is another's (a tied LM head). */
typedef struct {
    double params, trainable;
    int64_t tensors;
    size_t pn;
} param_mark;

static param_mark mark_params(const bld *c)
{
    return (param_mark){c->wl->params, c->wl->trainable_params, c->wl->tensors, c->pn};
}

/* The LM head just built (head.lm, h x V) reads the token embedding's
 * weight: no new parameters; the shared weight's gradient is made by
 * head.lm's backward, the first to run, and the embedding's backward adds
 * into it; still in head.lm's backward group, the two gradients are summed
 * (a frozen weight has none). */
static void tie_to_embedding(bld *c, const param_mark *before, double V)
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
        mem_op(c, XS_PH_BWD, XS_OP_REDUCE, V * h, 3.0 * 4, 1, 1, "head.tied_grad_sum");
}

/* Logits over the vocabulary and the cross-entropy loss; the LM weight is
 * the token embedding (tied), so its two gradients are summed. */
static void lm_head(bld *c, int causal)
{
    double T = c->T, h = c->h, V = (double)c->s->model.vocab;
    double rows = causal ? c->b * (c->sq - 1) : T;
    int H = c->H, ls = c->amp ? 4 : H;
    if (!causal) { /* BERT MLM transform: dense + gelu + LayerNorm */
        linear(c, "head.transform", T, h, h, 1, 1);
        mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, T * h, 2.0 * H, 8, 1, "head.gelu");
        keep(c, T * h * H);
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, T * h, 3.0 * H, 12, 1, "head.gelu.bwd");
        layernorm(c, "head.ln", T, H, c->I);
    }
    /* tied: the weight is the token embedding, so no new weight parameters */
    param_mark before = mark_params(c);
    linear(c, "head.lm", T, h, V, !causal, 1);
    tie_to_embedding(c, &before, V);
    if (!causal)
        add_param(c, V, 0, 0);
    if (causal) { /* logits[..., :-1, :].contiguous() */
        mem_op(c, XS_PH_FWD, XS_OP_COPY, rows * V, 2.0 * H, 0, 1, "head.shift");
        transient(c, rows * V * H);
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_COPY, 1, T * V * H + rows * V * 2.0 * H, 0, 2,
               "head.shift.bwd");
        transient(c, T * V * H); /* the zero-filled gradient of all the logits */
    }
    if (c->amp) {
        mem_op(c, XS_PH_FWD, XS_OP_CAST, rows * V, H + 4, 0, 1, "head.loss.cast");
        issued(c, XS_ISSUE_AUTOCAST);
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_CAST, rows * V, 4 + H, 0, 1, "head.loss.cast.bwd");
    }
    cross_entropy(c, rows, V, ls);
}

/* --- the llama family ----------------------------------------------------
 * transformers' LlamaForCausalLM as it runs in training
 * (huggingface/transformers@5dd4a63548857797727ae73eeb6a6e886ea02a3e:
 * src/transformers/models/llama/modeling_llama.py; Mistral's and Qwen2's
 * modules are copies of it but for Qwen2's q/k/v biases), one op per
 * kernel it launches, with what autograd saves for each: PyTorch saves an
 * operand of a mul only when the other operand needs a gradient. */

/* LlamaDecoderLayer, LlamaAttention, LlamaMLP. */
#define LLAMA_LAYER_CONTAINERS 3

/* LlamaRMSNorm is Python: hidden_states.to(float32), pow(2), mean(-1),
 * + eps, rsqrt, mul, .to(input_dtype), weight * x. The .to() calls are
 * kernels only when the input is not fp32 (pure bf16, apex O2); under
 * autocast the residual stream is fp32 (fp32 weights, an fp32 residual
 * add), pow and rsqrt are on autocast's fp32 list, and the norm runs in
 * fp32 from end to end. Autograd keeps the fp32 input (pow's and mul's
 * operand), rsqrt's result (its own backward and mul's other operand) and
 * the normalized tensor weight multiplies (the weight, a parameter, costs
 * nothing more). Its backward is autograd's formulas: weight's mul (dy w,
 * dy y, a row sum for dweight), mul's (dy r, dy x and its row sum), rsqrt's
 * (-0.5 dy r^3: pow, mul, mul), mean's (expand, divide), pow's (x.pow(1),
 * times 2, times dy), and the sum of x's two gradients. */
static void rmsnorm(bld *c, const char *name, double rows)
{
    double h = c->h, e = rows * h;
    int I = c->I, cast = I != 4;
    add_param(c, h, 0, 0); /* ALL_LAYERNORM_LAYERS: the Trainer's no-decay group */
    enter_modules(c, 1);
    if (cast) {
        mem_op(c, XS_PH_FWD, XS_OP_CAST, e, I + 4.0, 0, 1, "%s.to_fp32", name);
        keep_output(c, e * 4);
    }
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 8, 1, 1, "%s.pow", name);
    if (!cast)
        keep(c, e * 4); /* x itself, the fp32 residual stream */
    transient(c, e * 4);
    mem_op(c, XS_PH_FWD, XS_OP_REDUCE, e, 4 + 4 / h, 1, 1, "%s.mean", name);
    transient(c, rows * 4);
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows, 16, 2, 2, "%s.rsqrt", name); /* + eps, rsqrt */
    keep_output(c, rows * 4);
    c->broadcast = 1; /* the [rows, 1] rsqrt, then the [h] weight */
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 8 + 4 / h, 1, 1, "%s.mul", name);
    if (cast) {
        transient(c, e * 4);
        c->broadcast = 0;
        mem_op(c, XS_PH_FWD, XS_OP_CAST, e, 4.0 + I, 0, 1, "%s.to_input", name);
        c->broadcast = 1;
    }
    keep_output(c, e * I); /* what weight multiplies */
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 2.0 * I, 1, 1, "%s.weight", name);
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 5.0 * I, 2, 2, "%s.weight.bwd", name);
    c->broadcast = 0;
    mem_op(c, XS_PH_BWD, XS_OP_REDUCE, e, I, 1, 1, "%s.weight.dw", name);
    if (cast)
        mem_op(c, XS_PH_BWD, XS_OP_CAST, e, I + 4.0, 0, 1, "%s.to_input.bwd", name);
    c->broadcast = 1;
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 20, 2, 2, "%s.mul.bwd", name);
    c->broadcast = 0;
    mem_op(c, XS_PH_BWD, XS_OP_REDUCE, e, 4 + 4 / h, 1, 1, "%s.mul.bwd.sum", name);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, rows, 28, 3, 3, "%s.rsqrt.bwd", name);
    c->broadcast = 1;
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 4 + 4 / h, 1, 1, "%s.mean.bwd", name);
    c->broadcast = 0;
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 28, 2, 3, "%s.pow.bwd", name);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 12, 1, 1, "%s.x.grad_sum", name);
    if (cast)
        mem_op(c, XS_PH_BWD, XS_OP_CAST, e, 4.0 + I, 0, 1, "%s.to_fp32.bwd", name);
}

/* LlamaRotaryEmbedding.forward, once a forward under no_grad: position
 * ids (arange), inv_freq @ positions, cat((freqs, freqs)), cos, sin, the
 * two attention_scaling multiplies, and .to(x.dtype) (two casts when the
 * embeddings are not fp32). cos and sin, [b, s, head_dim] in the
 * embeddings' format, are kept by every layer's q * cos and k * cos (one
 * tensor each for the whole step). */
static void rotary_tables(bld *c)
{
    double el = c->b * c->sq * c->d, R = c->I;
    int cast = c->I != 4;
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, 2 + 8 + 16 + 16 + (cast ? 2 * (4 + R) : 0), 4,
           7 + 2 * cast, "rope.cos_sin");
    keep_output(c, 2 * el * R);
    bwd_group(c);
}

/* apply_rotary_pos_emb on one of q (heads) or k (kv heads):
 * x * cos + rotate_half(x) * sin, rotate_half = cat(-x2, x1): neg of one
 * half, cat, two broadcast muls, add. x is the projection's output (matmul
 * format), cos and sin are in the embeddings' format, and so is the result
 * (fp32 under autocast: type promotion). Autograd keeps only cos and sin
 * (x needs a gradient, the tables do not). Backward: each mul's dy * cos
 * (sin) and the cast to x's format, the neg of one half, the two halves'
 * slice backward (zeros of the full size, a copy into half), and the sums
 * of x's three gradients. */
static void rotary(bld *c, const char *which, double heads)
{
    double el = c->T * heads * c->d;
    int H = c->H, R = c->I;
    c->broadcast = 1; /* x1, x2: slices of a transposed view; cos, sin broadcast */
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el / 2, 2.0 * H, 1, 1, "attn.rope.%s.neg", which);
    transient(c, el / 2 * H);
    mem_op(c, XS_PH_FWD, XS_OP_COPY, el, 2.0 * H, 0, 1, "attn.rope.%s.cat", which);
    transient(c, el * H);
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, H + R, 1, 1, "attn.rope.%s.mul_cos", which);
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, H + R, 1, 1, "attn.rope.%s.mul_sin", which);
    c->broadcast = 0;
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, el, 3.0 * R, 1, 1, "attn.rope.%s.add", which);
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, el, 4.0 * R + 13.0 * H, 3, 11, "attn.rope.%s.bwd",
           which);
}

/* act_fn(gate) * up: F.silu keeps its input, the mul both operands. */
static void swiglu(bld *c, double elems)
{
    int H = c->H;
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * H, 4, 1, "ffn.silu");
    keep(c, elems * H);
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 3.0 * H, 8, 1, "ffn.silu.bwd");
}

static void gated_mul(bld *c, double elems)
{
    int H = c->H;
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 3.0 * H, 1, 1, "ffn.mul");
    keep(c, 2 * elems * H); /* silu(gate) and up */
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 6.0 * H, 2, 2, "ffn.mul.bwd");
}

/* Under autocast the rotary outputs are fp32 and the attention kernel
 * casts them to the matmul format (autocast's lower-precision list). */
static void attention_input_cast(bld *c, const char *which, double elems)
{
    if (!c->amp)
        return;
    mem_op(c, XS_PH_FWD, XS_OP_CAST, elems, 4.0 + c->H, 0, 1, "attn.%s.cast", which);
    issued(c, XS_ISSUE_AUTOCAST);
    transient(c, elems * c->H);
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_CAST, elems, c->H + 4.0, 0, 1, "attn.%s.cast.bwd", which);
}

/* SDPA's flash kernel as transformers calls it (sdpa_attention_forward,
 * huggingface/transformers@00c238bd242b4c6ddfb2c17d4573174ec2daaec8:
 * src/transformers/integrations/sdpa_attention.py): on PyTorch >= 2.5 with
 * no attention mask (packed or unpadded blocks) it passes enable_gqa=True
 * and no repeat_kv copy, so k and v stay kv_heads wide; it then copies the
 * output back to token rows (transpose(1, 2).contiguous(); the clone's
 * gradient passes through). The kernel's backward for grouped heads
 * (FlashAttention-2's mha_bwd, which PyTorch vendors:
 * pytorch/pytorch@ef3d5c9ebba11dac3e988f00b7aad0f2a147cf26:
 * aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp) writes
 * dk and dv per query head (dk_expanded, dv_expanded) and sums each group
 * (at::sum_out): two more launches and that traffic. */
static void llama_attention_flash(bld *c, double kv)
{
    double ba = c->b * c->a, s = c->sq, d = c->d;
    double qo = c->T * c->h * c->H, kvb = c->T * kv * d * c->H, lse = ba * s * 4;
    int grouped = kv < c->a;
    attention_input_cast(c, "q", c->T * c->h);
    attention_input_cast(c, "k", c->T * kv * d);
    gemm(c, XS_PH_FWD, XS_OP_ATTENTION, s, s, d, ba, 0, 1, c->H, c->H, "attn.flash");
    if (c->failed)
        return;
    xs_op *f = &c->wl->ops[c->wl->n - 1];
    f->flops = 4 * ba * s * s * d * 0.5; /* causal: half of the tiles */
    f->bytes = 2 * qo + 2 * kvb + lse;
    xs_op op = *f;
    keep_output(c, qo); /* the output, q, k, v and the rows' logsumexp */
    keep(c, qo);
    keep(c, 2 * kvb);
    keep(c, lse);
    bwd_group(c);
    op.phase = XS_PH_BWD;
    op.flops = 10 * ba * s * s * d * 0.5;
    /* reads q, o, dO, k, v; writes dq and dk, dv (per query head when grouped,
     * then summed into kv heads) */
    op.bytes = 4 * qo + 2 * lse + (grouped ? 2 * kvb + 2 * qo + 2 * qo + 2 * kvb : 4 * kvb);
    op.launches = 3 + (grouped ? 2 : 0);
    op.mem.temp = qo + 2 * kvb + (grouped ? 2 * qo : 0);
    snprintf(op.name, sizeof op.name, "attn.flash.bwd");
    emit(c, &op);
    mem_op(c, XS_PH_FWD, XS_OP_COPY, c->T * c->h, 2.0 * c->H, 0, 1, "attn.merge");
    transient(c, qo);
}

/* eager_attention_forward (modeling_llama.py): repeat_kv copies k and v to
 * every query head (expand + reshape of an expanded view), then the
 * classic unfused path; the copies' backward sums each group. */
static void llama_attention_unfused(bld *c, double kv)
{
    double full = c->T * c->h, narrow = c->T * kv * c->d;
    int H = c->H, R = c->I;
    if (kv < c->a) {
        mem_op(c, XS_PH_FWD, XS_OP_COPY, full, (double)R + R + H + H, 0, 2, "attn.repeat_kv");
        transient(c, full * (R + H));
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_REDUCE, full, (R + H) * (1 + narrow / full), 1, 2,
               "attn.repeat_kv.bwd");
    }
    attention_input_cast(c, "q", full);
    attention_input_cast(c, "k", full);
    attention_unfused(c, 1);
}

static void llama_layer(bld *c)
{
    const xs_model *m = &c->s->model;
    double T = c->T, h = c->h, e = T * h, f = c->f;
    double kv = (double)xs_model_kv_heads(m), kvw = kv * c->d;
    int qkv_bias = m->attention_bias != XS_ATTN_BIAS_NONE;
    int o_bias = m->attention_bias == XS_ATTN_BIAS_ALL, mb = m->mlp_bias;
    enter_modules(c, LLAMA_LAYER_CONTAINERS);
    grad_fanout(c, "attn.residual", e, c->I, 2);
    rmsnorm(c, "input_norm", T);
    grad_fanout(c, "attn.x", e, c->I, 3); /* q, k and v read the norm's output */
    linear(c, "attn.q", T, h, h, qkv_bias, 1);
    c->x_kept = !c->amp; /* autocast casts x for each; else one tensor */
    linear(c, "attn.k", T, h, kvw, qkv_bias, 1);
    linear(c, "attn.v", T, h, kvw, qkv_bias, 1);
    c->x_kept = 0;
    rotary(c, "q", c->a);
    rotary(c, "k", kv);
    if (c->flash)
        llama_attention_flash(c, kv);
    else
        llama_attention_unfused(c, kv);
    linear(c, "attn.out", T, h, h, o_bias, 0);
    residual_add(c, "attn.residual", e, c->H, c->I, c->I);
    grad_fanout(c, "ffn.residual", e, c->I, 2);
    rmsnorm(c, "post_attn_norm", T);
    grad_fanout(c, "ffn.x", e, c->I, 2); /* gate and up */
    linear(c, "ffn.gate", T, h, f, mb, 1);
    swiglu(c, T * f);
    c->x_kept = !c->amp;
    linear(c, "ffn.up", T, h, f, mb, 1);
    c->x_kept = 0;
    gated_mul(c, T * f);
    linear(c, "ffn.down", T, f, h, mb, 0);
    residual_add(c, "ffn.residual", e, c->H, c->I, c->I);
}

static void llama_embeddings(bld *c)
{
    c->layer = -1;
    /* LlamaForCausalLM (or the task model), LlamaModel, LlamaRotaryEmbedding */
    enter_modules(c, 3);
    embedding(c, "embed.token", (double)c->s->model.vocab, c->T);
    rotary_tables(c);
}

/* lm_head (its own V x h weight, or the token embedding's when tied), then
 * ForCausalLMLoss (huggingface/transformers@0114da07ec0e101b420a923dedeb6032b6ac3a44:
 * src/transformers/loss/loss_utils.py): logits.float(), labels padded and
 * shifted (not the logits: no copy of them), cross-entropy over every
 * row. */
static void llama_lm_head(bld *c)
{
    double T = c->T, h = c->h, V = (double)c->s->model.vocab;
    int tied = c->s->model.tied;
    param_mark before = mark_params(c);
    /* under LoRA an untied head trains only when asked (a tied one is the
     * frozen embedding: xs_lora_check refuses training it) */
    c->frozen = c->lora && (tied || !c->s->train.lora_train_head);
    linear(c, "head.lm", T, h, V, 0, 1);
    if (tied)
        tie_to_embedding(c, &before, V);
    if (c->H != 4) {
        mem_op(c, XS_PH_FWD, XS_OP_CAST, T * V, c->H + 4.0, 0, 1, "head.logits.float");
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_CAST, T * V, 4.0 + c->H, 0, 1, "head.logits.float.bwd");
    }
    cross_entropy(c, T, V, 4);
}

/* SQuAD span head: a linear to 2 logits a token, two cross-entropies over
 * the sequence (start, end), averaged. Small; dominated by launches. */
static void span_head(bld *c)
{
    c->frozen = c->lora && !c->s->train.lora_train_head;
    linear(c, "head.qa", c->T, c->h, 2, 1, 1);
    mem_op(c, XS_PH_FWD, XS_OP_LOSS, c->T * 2, 2.0 * c->H + 12, 5, 8, "head.loss");
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_LOSS, c->T * 2, 2.0 * c->H + 12, 3, 8, "head.loss.bwd");
}

/* Sequence classification into 2 labels: BERT pools the first token
 * (dense + tanh); GPT-2 scores every token and keeps the last. */
static void cls_head(bld *c, int decoder)
{
    double b = c->b, h = c->h;
    int head_frozen = c->lora && !c->s->train.lora_train_head;
    if (decoder) {
        c->frozen = head_frozen;
        linear(c, "head.score", c->T, h, 2, 0, 1);
    } else {
        enter_modules(c, 1); /* BertPooler */
        mem_op(c, XS_PH_FWD, XS_OP_COPY, b * h, 2.0 * c->I, 0, 1, "head.first_token");
        linear(c, "head.pooler", b, h, h, 1, 1);
        mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, b * h, 2.0 * c->H, 4, 1, "head.tanh");
        keep_output(c, b * h * c->H);
        bwd_group(c);
        mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, b * h, 3.0 * c->H, 3, 1, "head.tanh.bwd");
        c->frozen = head_frozen; /* the pooler is BertModel's: frozen under LoRA */
        linear(c, "head.classifier", b, h, 2, 1, 0);
    }
    mem_op(c, XS_PH_FWD, XS_OP_LOSS, b * 2, 2.0 * c->H + 12, 5, 4, "head.loss");
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_LOSS, b * 2, 2.0 * c->H + 12, 3, 4, "head.loss.bwd");
}

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

static int64_t mta_launches(const double *sizes, const unsigned char *decay, int group,
                            size_t n, int depth)
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
        double left = ceil(sizes[t] / MTA_CHUNK);
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
    return sizes ? mta_launches(sizes, NULL, -1, n, depth) : 0;
}

/* over all of the model's parameter tensors (group -1) or one optimizer
 * group (1: weight decay, 0: none) */
static int64_t mta(const bld *c, int depth, int group)
{
    return mta_launches(c->psize, c->pdecay, group, c->pn, depth);
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
static void host_reads_back(bld *c)
{
    if (!c->failed && c->wl->n > 0)
        c->wl->ops[c->wl->n - 1].sync = 1;
}

/* An optimizer-phase op issued `issue`'s way, `count` times a step. */
__attribute__((format(printf, 9, 10))) static void opt_op(bld *c, int kind, double elems,
                                                         double bpe, double fpe,
                                                         int64_t launches, int issue,
                                                         int64_t count, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    xs_op op = base(c, XS_PH_OPT, kind, fmt, ap);
    va_end(ap);
    op.bytes = elems * bpe;
    op.flops = elems * fpe;
    op.elems = elems;
    op.launches = launches;
    op.issue = issue;
    op.count = count;
    emit(c, &op);
}

/* A global gradient L2 norm read back to the host. apex multi_tensor_l2norm
 * (csrc/multi_tensor_l2norm_kernel.cu @ 02085f0): at::zeros of its 320
 * partial sums, the multi-tensor pass, one cleanup kernel; then .item().
 * torch.nn.utils.clip_grad_norm_ (torch/nn/utils/clip_grad.py @ 01a57d8):
 * torch._foreach_norm over the gradients, then torch.stack of the norms and
 * linalg.vector_norm of the stack. */
static void grad_norm(bld *c, const char *name, int64_t count)
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
static void grad_clip(bld *c)
{
    double P = c->wl->trainable_params;
    int torch_impl = c->s->train.grad_clip_impl == XS_CLIP_TORCH;
    int64_t count = torch_impl ? 1 : c->wl->micro_batches;
    grad_norm(c, "grad_clip.norm", count);
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
static void scale_loss(bld *c)
{
    c->layer = -1;
    if (c->o2) {
        mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, 1, 4, 0, 1, "amp.overflow_clear");
        issued(c, XS_ISSUE_LOOP);
    }
    mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, 1, 12, 1, 1, "amp.scale_loss");
    bwd_group(c);
    mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, 1, 12, 1, 1, "amp.scale_loss.bwd");
}

/* Elements of the parameter tensors in one optimizer group (-1: all). */
static double group_params(const bld *c, int group)
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
static void foreach_adam(bld *c, int o)
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
            transient(c, fmax(pd, pn) * c->W);
    }
}

static void optimizer(bld *c)
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
    int64_t adds = c->o2 ? 0 : mb - 1 + zeroed;
    if (adds > 0) {
        mem_op(c, XS_PH_BWD, XS_OP_REDUCE, P, 3.0 * c->W, 1, tensors, "grad.accumulate");
        if (!c->failed)
            c->wl->ops[c->wl->n - 1].count = adds; /* not once per micro-batch */
    }
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
        grad_norm(c, "bertadam.grad_norm", 1);
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
        emit(c, &op);
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

/* The backward, group by group from the last forward op to the first.
 * Each group's first op creates the gradients of the parameters its
 * forward op introduced; its last releases what its forward ops kept. A
 * group without ops hands both to the next op that runs; what was kept
 * after the last group (nothing, as the builders stand) goes at the end. */
static int replay_tape(bld *c)
{
    double cf = 0, cfs = 0, cg = 0, cgs = 0; /* carried: freed, its slack, grads, theirs */
    int cur = -1; /* the checkpointed layer whose backward runs */
    for (size_t g = c->gn; g-- > 0;) {
        size_t end = g + 1 < c->gn ? c->groups[g + 1] : c->tn;
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
                if (push(&c->wl->ops, &c->wl->n, &c->wl->cap, &c->recomp[i]))
                    return -1;
        }
        cf += c->gfree[g];
        cfs += c->gfree_slack[g];
        cg += c->ggrad[g];
        cgs += c->ggrad_slack[g];
        for (size_t i = c->groups[g]; i < end; i++) {
            xs_op op = c->tape[i];
            op.mem.grads += cg;
            op.mem.grad_slack += cgs;
            cg = cgs = 0;
            if (i + 1 == end) {
                op.mem.freed += cf;
                op.mem.freed_slack += cfs;
                cf = cfs = 0;
            }
            if (push(&c->wl->ops, &c->wl->n, &c->wl->cap, &op))
                return -1;
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

static void setup(bld *c, const xs_scenario *s, xs_workload *wl)
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
    static const xs_dtype mm[] = {XS_FP32, XS_TF32, XS_FP16, XS_BF16, XS_BF16};
    c->mm = mm[t->precision];
    c->H = xs_dtype_bytes(c->mm);
    c->W = t->precision == XS_P_BF16 ? 2 : 4;
    c->Wm = t->precision == XS_P_BF16 || c->o2 ? 2 : 4;
    /* fused kernels keep activations in the matmul format: no fp32 islands */
    c->I = c->amp && !c->fused ? 4 : c->H;
    c->lora = t->lora_rank > 0;
    c->frozen = c->lora;
    c->ckpt = t->checkpointing == XS_CKPT_LAYER;
}

static void bld_free(bld *c)
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
    free(c->recomp);
    free(c->rstart);
    free(c->ckpt_in);
}

/* torch.utils.checkpoint around the layer whose forward ops are
 * wl->ops[start..]: run under no_grad, they keep nothing; the checkpoint
 * keeps the layer's input (and the RNG state, a few bytes). Their copies,
 * which keep what the forward would have kept, run again in the backward
 * (recompute, in replay_tape). transformers' gradient_checkpointing_enable
 * passed use_reentrant=True when given no kwargs through the 4.x releases
 * (modeling_utils.py; its copy in LLaMA-Factory, team code index,
 * find_string id 11985995235) and passes False from 5.x (id 70577654386,
 * quoting transformers 5's modeling_utils.py): either way the layer's
 * Python forward runs again (the reentrant checkpoint before the layer's
 * backward, the non-reentrant one at its first saved-tensor unpack, the
 * same place in this list), so the copies are issued as forward ops are. */
static void checkpoint_layer(bld *c, size_t start, int64_t layer)
{
    if (c->failed || start >= c->wl->n)
        return;
    size_t n = c->wl->n - start;
    size_t need = c->rn + n, cap = c->rcap ? c->rcap : 256;
    while (cap < need)
        cap *= 2;
    xs_op *r = cap > c->rcap ? realloc(c->recomp, cap * sizeof *r) : c->recomp;
    if (r) {
        c->recomp = r;
        c->rcap = cap;
    }
    size_t *rs = realloc(c->rstart, (size_t)(layer + 2) * sizeof *rs);
    double *in = realloc(c->ckpt_in, (size_t)(layer + 1) * sizeof *in);
    if (rs)
        c->rstart = rs;
    if (in)
        c->ckpt_in = in;
    if (!r || !rs || !in) {
        c->failed = 1;
        return;
    }
    c->rstart[layer] = c->rn;
    for (size_t i = start; i < c->wl->n; i++) {
        xs_op op = c->wl->ops[i];
        op.hints.fn = xs_cpu_fn_for_op(&op); /* what it is, though it runs in the backward */
        op.phase = XS_PH_BWD;
        op.recompute = 1;
        c->recomp[c->rn++] = op;
        c->wl->ops[i].mem.saved = c->wl->ops[i].mem.slack = 0;
    }
    c->rstart[layer + 1] = c->rn;
    /* the layer's input: the last layer's output (or the embeddings'), in
     * the fp32-island format */
    double x = c->T * c->h * c->I;
    c->ckpt_in[layer] = x;
    c->wl->ops[start].mem.saved += x;
    c->wl->ops[start].mem.slack += xs_alloc_slack(x);
}

int xs_wl_build(const xs_scenario *s, xs_workload *wl, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->arch == XS_DECODER && m->head == XS_HEAD_SPAN)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "scenario %s: model.head 'span' needs model.arch 'encoder'", s->id);
    /* a scenario built in code skips the loader: check its sizes here too */
    char where[96];
    snprintf(where, sizeof where, "scenario %s", s->id);
    int rc = xs_scn_bounds_check(s, where, err);
    if (rc)
        return rc;
    memset(wl, 0, sizeof *wl);
    wl->micro_batches = s->train.grad_accum;
    /* bounds.c has refused what would overflow; checked all the same, so
     * that a later change to the limits cannot make these wrap */
    const int64_t samples[] = {s->train.batch, s->train.grad_accum, s->devices};
    int bad = xs_prod_i64(samples, 3, &wl->samples_per_step) ||
              xs_mul_i64(wl->samples_per_step, s->train.seq, &wl->tokens_per_step);
    if (!bad) {
        int64_t sps = wl->samples_per_step;
        wl->steps_per_epoch = s->samples / sps + (s->samples % sps != 0);
        bad = xs_mul_i64(wl->steps_per_epoch, s->epochs, &wl->steps);
    }
    if (bad)
        return xs_error_set(err, XS_ERANGE, "%s: the step and run counts overflow 64 bits",
                            where);
    bld c;
    setup(&c, s, wl);
    wl->matmul_dtype = c.mm;
    int decoder = m->arch == XS_DECODER, llama = m->family == XS_FAMILY_LLAMA;
    /* LoRA: the embeddings are frozen, so nothing before the first adapter
     * needs a gradient, unless checkpointing is on: the reentrant
     * checkpoint needs an input that requires grad, and PEFT and
     * transformers make the input embeddings' output require it
     * (enable_input_require_grads) */
    int embed_nograd = c.lora && !c.ckpt;
    c.nograd = embed_nograd;
    if (llama)
        llama_embeddings(&c);
    else if (decoder)
        decoder_embeddings(&c);
    else
        encoder_embeddings(&c);
    c.nograd = 0;
    c.input_nograd = embed_nograd;
    for (int64_t l = 0; l < m->layers; l++) {
        c.layer = (int)l;
        size_t start = wl->n;
        if (llama)
            llama_layer(&c);
        else if (decoder)
            decoder_layer(&c);
        else
            encoder_layer(&c);
        if (c.ckpt)
            checkpoint_layer(&c, start, l);
    }
    c.input_nograd = 0;
    c.layer = -1;
    if (llama)
        rmsnorm(&c, "norm", c.T);
    else if (decoder)
        layernorm(&c, "ln_f", c.T, c.I, c.I);
    if (m->head == XS_HEAD_LM && llama)
        llama_lm_head(&c);
    else if (m->head == XS_HEAD_LM)
        lm_head(&c, decoder);
    else if (m->head == XS_HEAD_SPAN)
        span_head(&c);
    else
        cls_head(&c, decoder);
    if (c.o2 || (c.amp && s->train.precision == XS_P_AMP_FP16))
        scale_loss(&c);
    rc = c.failed ? -1 : replay_tape(&c);
    c.replayed = 1;
    if (rc == 0)
        optimizer(&c);
    bld_free(&c);
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
    wl->ops = NULL;
    wl->n = wl->cap = 0;
}

/* The ops of one kernel row come from the builders above, run on a context
 * that holds nothing else: a scenario with only the framework's loop
 * figures, one micro-batch, the formats the row names. Kernels that the
 * step builds inside a larger builder (a bias gradient inside linear(), the
 * gradient-clipping scale inside optimizer()) are taken from that builder's
 * output by name, so no byte count is written twice. */
static void kernel_ctx(bld *c, xs_scenario *s, xs_workload *wl, const xs_kernel_spec *k)
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

/* The ops named pick (NULL: all) of the forward list or, for bwd, of the
 * tape in the order its replay launches them. */
static int take(const bld *c, int bwd, const char *pick, xs_op *ops, int *n, int cap)
{
    const xs_op *list = bwd ? c->tape : c->wl->ops;
    size_t len = bwd ? c->tn : c->wl->n;
    *n = 0;
    for (size_t j = 0; j < len && !c->failed; j++) {
        const xs_op *op = &list[bwd ? len - 1 - j : j];
        if (pick && strcmp(op->name, pick) != 0)
            continue;
        if (*n == cap)
            return -1;
        ops[(*n)++] = *op;
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
    bld c;
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
        softmax(&c, k->log ? "log_softmax" : "softmax", k->rows * k->cols, k->cols, H, k->log);
        break;
    case XS_KOP_LAYERNORM:
        c.h = k->cols;
        layernorm(&c, "layernorm", k->rows, H, xs_dtype_bytes(k->out_dtype));
        break;
    case XS_KOP_DROPOUT:
        dropout(&c, "dropout", k->elems, H, 1); /* its traffic does not depend on p > 0 */
        break;
    case XS_KOP_GELU:
    case XS_KOP_BIAS_GELU:
        activation(&c, k->elems);
        break;
    case XS_KOP_ADD:
        residual_add(&c, "add", k->elems, H, xs_dtype_bytes(k->b_dtype),
                     xs_dtype_bytes(k->out_dtype));
        break;
    case XS_KOP_COPY: /* the step's casts: an fp32 island into a half GEMM, and back */
        bwd = k->dtype != XS_FP32;
        pick = bwd ? "x.dX.cast" : "x.cast_x";
        c.amp = 1;
        c.mm = bwd ? k->dtype : k->out_dtype;
        c.H = xs_dtype_bytes(c.mm);
        linear(&c, "x", k->elems, 1, 1, 0, 1);
        break;
    case XS_KOP_TRANSPOSE:
        if (k->strided)
            transposing_copy(&c, bwd ? XS_PH_BWD : XS_PH_FWD, k->elems, "transpose", "");
        else
            head_copies(&c, "transpose", k->elems, 1, 0);
        break;
    case XS_KOP_REDUCE: /* the bias gradient: a column sum over the rows */
        bwd = 1;
        pick = "x.db";
        linear(&c, "x", k->rows, 1, k->cols, 1, 0);
        break;
    case XS_KOP_EMBEDDING:
    case XS_KOP_EMBEDDING_BWD:
        bwd = k->op == XS_KOP_EMBEDDING_BWD;
        c.h = k->dim;
        embedding(&c, "embedding", k->vocab, k->lookups);
        break;
    case XS_KOP_CROSS_ENTROPY:
        cross_entropy(&c, k->rows, k->cols, H);
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
            add_param(&c, (double)k->params / (double)k->tensors, 1, 0);
        if (k->op == XS_KOP_L2NORM) {
            grad_norm(&c, "multi_tensor_l2norm", 1);
        } else {
            pick = k->op == XS_KOP_SCALE ? "grad_clip.scale"
                   : c.o2                ? "amp.master_grads"
                                         : "amp.unscale_check";
            optimizer(&c);
        }
        break;
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
