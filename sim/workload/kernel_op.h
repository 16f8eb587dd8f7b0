/* kernel_op.h — one kernel of a training step on its own, for the
 * single-kernel rows of `validate` (op=softmax, op=layernorm, ...). The ops
 * come from the workload's own builders (workload.c) run on a context that
 * holds just that kernel, so a kernel row tests exactly the op a step
 * contains: the same bytes, launches and hints. */
#ifndef XS_KERNEL_OP_H
#define XS_KERNEL_OP_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"
#include "op.h"

/* The classes of single-kernel rows besides gemm and optimizer. */
#define XS_KOP_CHOICES                                                                         \
    "softmax|layernorm|dropout|gelu|bias_gelu|add|copy|transpose|reduce|embedding|"            \
    "embedding_bwd|cross_entropy|multi_tensor_l2norm|multi_tensor_scale|multi_tensor_unscale|"  \
    "pointwise|attention|rmsnorm"
typedef enum {
    XS_KOP_SOFTMAX,
    XS_KOP_LAYERNORM,
    XS_KOP_DROPOUT,
    XS_KOP_GELU,
    XS_KOP_BIAS_GELU,
    XS_KOP_ADD,
    XS_KOP_COPY,
    XS_KOP_TRANSPOSE,
    XS_KOP_REDUCE,
    XS_KOP_EMBEDDING,
    XS_KOP_EMBEDDING_BWD,
    XS_KOP_CROSS_ENTROPY,
    XS_KOP_L2NORM,
    XS_KOP_SCALE,
    XS_KOP_UNSCALE,
    XS_KOP_POINTWISE,
    XS_KOP_ATTENTION,
    XS_KOP_RMSNORM,
    XS_KOP_COUNT
} xs_kop;

/* op=pointwise's fn: one ATen elementwise kernel over one or two tensors
 * (the _scalar forms take a Python number: one tensor read). */
#define XS_KOP_POINTWISE_FNS \
    "add|mul|div|pow|add_scalar|mul_scalar|pow_scalar|relu|gelu|tanh"

/* PyTorch's elementwise-loop figures the scenarios cite: 4 elements a
 * thread (thread_work_size, PyTorch up to 2.6) and the generic loop at 0.78
 * of the vectorized one (github.com/pytorch/pytorch/pull/137053: fp32-to-
 * half casts on an H100 PCIe before and after vectorizing, 0.76-0.79). */
/* op=attention's impl: FlashAttention-2 as PyTorch's SDPA vendors it
 * (sdpa: the backend SDPA picks for half inputs from Ampere on, flash),
 * or the eager chain bmm, scale, mask, softmax, dropout, bmm. */
#define XS_KOP_ATTENTION_IMPLS "flash|unfused|sdpa"

#define XS_KOP_LOOP_ELEMS 4
#define XS_KOP_GENERIC_LOOP_EFFICIENCY 0.78

typedef struct {
    int op;              /* xs_kop */
    int bwd;             /* 0: the forward kernel(s), 1: the backward ones,
                            2: both, forward first (a timed fwd + bwd call) */
    double rows, cols;   /* row kernels: softmax, layernorm, reduce, cross_entropy */
    double elems;        /* elementwise kernels */
    xs_dtype dtype;      /* input (or table, gradient) format */
    xs_dtype out_dtype;  /* layernorm's, add's and copy's output format */
    xs_dtype b_dtype;    /* add's second operand */
    int log;             /* softmax: log_softmax */
    int strided;         /* transpose: the copy reads across rows (K^T) */
    int fn;              /* pointwise: its XS_KOP_POINTWISE_FNS index */
    double vocab, dim, lookups; /* embedding */
    double batch, heads, seq, head_dim; /* attention: q, k, v of [batch, heads, seq, head_dim] */
    int causal;          /* attention: the causal mask */
    int unfused;         /* attention: the eager chain instead of the flash kernel */
    double dropout;      /* attention: the probabilities' dropout */
    double params;       /* multi-tensor kernels */
    int64_t tensors;
    int64_t loop_elems;
    double generic_loop_efficiency;
} xs_kernel_spec;

/* Most kernels one spec stands for (unfused attention forward and
 * backward: about 20; HF's Python RMSNorm: 17). */
#define XS_KERNEL_OPS_MAX 40

/* The op(s) of k as the workload builds them, in launch order, into
 * ops[XS_KERNEL_OPS_MAX]; *n their count. XS_ERANGE/XS_EUNSUPPORTED with a
 * reason for a spec the workload has no such kernel for. Defined in
 * workload.c, beside the builders it drives. */
int xs_kernel_ops(const xs_kernel_spec *k, xs_op *ops, int *n, xs_error *err);

/* Parse a kernel row's set ("op=layernorm;rows=..;cols=..;dtype=fp16;dir=fwd")
 * into k: every key checked, unknown keys refused, each failure a reason
 * naming the key. 0 or -1. */
int xs_kernel_spec_parse(const char *set, xs_kernel_spec *k, char *reason, size_t size);

/* Keys every class takes; xs_kernel_keys(op) starts with them, then "|". */
#define XS_KOP_COMMON_KEYS "op|dtype|loop_elems|generic_loop_efficiency|host_us"

/* The keys each class of kernel row takes, for --help and the README. */
const char *xs_kernel_keys(int op);

#endif
