/* wl_build.h — the op-list builder's state and primitives, shared by the
 * files that build a step (workload.c, wl_*.c); not part of the public
 * API. A model family is one xs_wb_forward_* function that emits the whole
 * forward pass, head and loss included, from these primitives. */
#ifndef XS_WL_BUILD_H
#define XS_WL_BUILD_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "lora.h"
#include "workload.h"

/* A compact build's run of identical layers: the template layer (the
 * second of a stack) built once stands for `count` layers, the second to
 * the last but one; the last is built again, so that the ops around the
 * run see the neighbours they would. Its forward ops are wl->ops[f0, f1),
 * its backward groups [g0, g1); the replay puts its backward block (a
 * checkpointed layer's recomputation included) at [b0, b1). */
typedef struct {
    size_t f0, f1, g0, g1, b0, b1;
    int64_t count;
    int layer;
} xs_wb_run;

#define XS_WB_MAX_RUNS 4

/* The launches of the optimizer's multi-tensor kernels, by group (0, 1,
 * all) and list depth, for one parameter list (its tensors' sizes and
 * groups, copied): a step's many optimizer kernels count them once, and a
 * sweep's builds, whose lists are the same unless the model changes, once
 * for all (wl_optimizer.c). */
typedef struct {
    double *psize, *chunks;
    unsigned char *pdecay;
    size_t pn, cap;
    int64_t launches[3][8];
    unsigned char known[3][8];
} xs_wb_mta;

typedef struct xs_wb {
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
    xs_wb_mta mta;    /* multi-tensor launch counts, kept from build to build */
    int mta_ok;       /* mta is of the list as it is now: its first ... */
    size_t mta_ok_pn; /* ... mta_ok_pn tensors, checked this build */
    int last_in_tape; /* the last op emitted went to the tape */
    int64_t modules;  /* nn.Module calls entered whose Python the next forward
                         op carries (xs_op.modules) */
    int x_kept;       /* the next linear's input is a tensor a sibling linear
                         keeps already (q, k, v reading one tensor) */
    int has_tied;      /* the token embedding's backward group is ... */
    size_t tied_group; /* ... this one (an LM head shares its weight) */
    /* LoRA: the base weights are frozen (requires_grad False) */
    int lora;
    const xs_lora_names *lora_names; /* PEFT's names of the model's linears (its family's) */
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
    int *glayer; /* the layer (unit) of each backward group */
    int unit;    /* the layer now emitted, counted over all stacks (-1: none) */
    int units;   /* layers emitted so far */
    /* xs_wl_build_compact: the runs of identical layers kept once; a run
     * that turns out not to repeat exactly (the backward's carried terms)
     * sets not_compact and the step is built flat instead */
    int compact, not_compact;
    int first_layer_differs; /* set before xs_wb_layers by a family whose
                                first layer emits ops the others do not */
    xs_op scratch; /* where an op nobody keeps is built (wl_emit.c) */
    xs_wb_run runs[XS_WB_MAX_RUNS];
    int nruns;
} xs_wb;

/* The parameter bookkeeping before a linear, to undo it when the linear's
 * weight is another's (a tied LM head). */
typedef struct {
    double params, trainable;
    int64_t tensors;
    size_t pn;
} param_mark;

/* wl_emit.c */
/* a and b into dst of size bytes, cut as snprintf("%s%s") cuts them */
void xs_wb_join(char *dst, size_t size, const char *a, const char *b);
int xs_wb_push(xs_op **arr, size_t *n, size_t *cap, const xs_op *op);
void xs_wb_base(xs_wb *c, xs_op *op, int phase, int kind, const char *fmt, va_list ap);
void xs_wb_emit(xs_wb *c, const xs_op *given);
void xs_wb_enter_modules(xs_wb *c, int64_t n);
void xs_wb_issued(xs_wb *c, int issue);
void xs_wb_bwd_group(xs_wb *c);
void xs_wb_keep(xs_wb *c, double bytes);
void xs_wb_kept_from(xs_wb *c, size_t i);
void xs_wb_keep_input(xs_wb *c, double bytes);
void xs_wb_keep_output(xs_wb *c, double bytes);
void xs_wb_transient(xs_wb *c, double bytes);
__attribute__((format(printf, 8, 9))) void xs_wb_mem_op(xs_wb *c, int phase, int kind,
                                                        double elems, double bpe, double fpe,
                                                        int64_t launches, const char *fmt, ...);
__attribute__((format(printf, 12, 13))) void xs_wb_gemm(xs_wb *c, int phase, int kind, double m,
                                                        double n, double k, double batch,
                                                        int ta, int tb, int ib, int ob,
                                                        const char *fmt, ...);
void xs_wb_add_param(xs_wb *c, double count, int decay, int matmul);
/* A trainable tensor's entry in the list the optimizer packs. */
void xs_wb_add_tensor_entry(xs_wb *c, double count, int decay);
/* The n entries from `from` on again, at the list's end (a layer's
 * tensors for a layer not built). */
void xs_wb_repeat_tensor_entries(xs_wb *c, size_t from, size_t n);

/* wl_ops.c */
void xs_wb_linear(xs_wb *c, const char *name, double rows, double K, double N, int bias,
                   int x_island);
void xs_wb_dropout(xs_wb *c, const char *name, double elems, int es, double p);
void xs_wb_layernorm(xs_wb *c, const char *name, double rows, int es_in, int es_out);
void xs_wb_grad_fanout(xs_wb *c, const char *name, double elems, int es, int consumers);
void xs_wb_residual_add(xs_wb *c, const char *name, double elems, int es_a, int es_b, int es_out);
void xs_wb_transposing_copy(xs_wb *c, int phase, double elems, const char *name,
                             const char *suffix);
void xs_wb_head_copies(xs_wb *c, const char *name, double elems, int tensors, int transposed);
void xs_wb_softmax(xs_wb *c, const char *name, double elems, double cols, int es, int is_log);
void xs_wb_attention_unfused(xs_wb *c, int causal);
int xs_wb_activation(xs_wb *c, double elems);
void xs_wb_attention(xs_wb *c, int causal);
void xs_wb_embedding(xs_wb *c, const char *name, double rows, double lookups);
void xs_wb_pre_ln_ffn(xs_wb *c, const char *ln);
void xs_wb_rmsnorm(xs_wb *c, const char *name, double rows);

/* wl_layers.c: the embeddings (frozen under LoRA), then n layers, each
 * numbered and, under train.checkpointing layer, checkpointed */
void xs_wb_embeddings(xs_wb *c, void (*embeddings)(xs_wb *));
void xs_wb_layers(xs_wb *c, int64_t n, void (*layer)(xs_wb *));

/* wl_heads.c */
void xs_wb_cross_entropy(xs_wb *c, double rows, double classes, int ls);
param_mark xs_wb_mark_params(const xs_wb *c);
void xs_wb_tie_to_embedding(xs_wb *c, const param_mark *before, double V);
void xs_wb_span_head(xs_wb *c);
void xs_wb_cls_head(xs_wb *c, int decoder);


/* wl_ddp.c: data parallel, after the backward's replay (the gradient
 * buckets and their collectives) and after the optimizer (ZeRO's shards
 * and weight all-gather); nothing for one device */
int xs_wb_data_parallel(xs_wb *c);
int xs_wb_data_parallel_step(xs_wb *c);

/* wl_fsdp.c: the same two points under FSDP (fsdp.h), called by those:
 * the units' all-gathers and reduce-scatters around the forward and the
 * backward, then the optimizer on each device's shard */
int xs_wb_fsdp(xs_wb *c);
int xs_wb_fsdp_step(xs_wb *c);
/* The optimizer's ops divided over n devices (their launches kept). */
void xs_wb_divide_optimizer(xs_workload *wl, double n);

/* wl_fp8.c: te.Linear under train.precision fp8, the recipe's amax and
 * scale updates (once a forward, once a backward) */
int xs_wb_fp8_linear_here(const xs_wb *c);
void xs_wb_fp8_linear(xs_wb *c, const char *name, double rows, double K, double N, int bias);
void xs_wb_fp8_amax_update(xs_wb *c, int phase);

/* wl_int8.c: bitsandbytes' Linear8bitLt (train.quant int8): the forward
 * from the input to the output, and the input gradient's dequantized
 * weight */
void xs_wb_int8_forward(xs_wb *c, const char *name, double rows, double K, double N, int bias,
                        int dx);
void xs_wb_int8_backward(xs_wb *c, const char *name, double K, double N);

/* wl_optimizer.c */
void xs_wb_grad_norm(xs_wb *c, const char *name, int64_t count);
void xs_wb_scale_loss(xs_wb *c);
void xs_wb_optimizer(xs_wb *c);
/* AccumulateGrad adding each new gradient into an existing .grad, adds
 * times a step (a single launch a tensor each time). */
void xs_wb_accumulate_grads(xs_wb *c, int64_t adds);
/* Under train.timed fwd_bwd the loss is computed between the timed
 * forward and loss.backward(): its last n forward ops, just emitted, run
 * but count 0 times in the step. */
void xs_wb_untimed_loss(xs_wb *c, int n);

#endif
