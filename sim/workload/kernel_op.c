/* kernel_op.c — the keys of a single-kernel row (see kernel_op.h); the ops
 * themselves are built in workload.c. */
#include "kernel_op.h"

#include <stdio.h>
#include <string.h>

#include "kvset.h"
#include "schema.h"

#define COMMON XS_KOP_COMMON_KEYS
#define DTYPES "fp32|fp16|bf16"
static const xs_dtype DTYPE_OF[] = {XS_FP32, XS_FP16, XS_BF16};

/* Every key a class takes (COMMON first, its own, then dir where it has
 * one), and dir: 1 the class has a forward and a backward kernel
 * (dir=fwd|bwd|both required; both: forward then backward, as a benchmark
 * that times y = f(x); y.backward(dy) runs them), 2 a forward one only
 * (dir=fwd allowed), 3 both kernels with dir=fwd when absent (op=embedding,
 * whose rows named only the forward before dir existed). */
#define KEYS(own) {COMMON "|" own, 0}
#define KEYS_DIR(own, dir) {COMMON "|" own "|dir", dir}
static const struct {
    const char *keys;
    int dir;
} KOPS[XS_KOP_COUNT] = {
    [XS_KOP_SOFTMAX] = KEYS_DIR("rows|cols|log", 1),
    [XS_KOP_LAYERNORM] = KEYS_DIR("rows|cols|out_dtype", 1),
    [XS_KOP_DROPOUT] = KEYS_DIR("elems", 1),
    [XS_KOP_GELU] = KEYS_DIR("elems", 1),
    [XS_KOP_BIAS_GELU] = KEYS_DIR("elems", 1),
    [XS_KOP_ADD] = KEYS_DIR("elems|b_dtype|out_dtype", 2),
    [XS_KOP_COPY] = KEYS("elems|out_dtype"),
    [XS_KOP_TRANSPOSE] = KEYS_DIR("elems|inner", 1),
    [XS_KOP_REDUCE] = KEYS("rows|cols"),
    [XS_KOP_EMBEDDING] = KEYS_DIR("vocab|dim|lookups", 3),
    [XS_KOP_EMBEDDING_BWD] = KEYS("vocab|dim|lookups"),
    [XS_KOP_CROSS_ENTROPY] = KEYS_DIR("rows|classes", 1),
    [XS_KOP_L2NORM] = KEYS("params|tensors"),
    [XS_KOP_SCALE] = KEYS("params|tensors"),
    [XS_KOP_UNSCALE] = KEYS("params|tensors"),
    [XS_KOP_POINTWISE] = KEYS("fn|elems"),
    [XS_KOP_ATTENTION] = KEYS_DIR("impl|batch|heads|seq|head_dim|causal|dropout", 1),
    [XS_KOP_RMSNORM] = KEYS_DIR("rows|cols", 1),
};

const char *xs_kernel_keys(int op)
{
    return op >= 0 && op < XS_KOP_COUNT ? KOPS[op].keys : "";
}

#define SIZE_MAX_KEY ((long long)1 << 40)

static int size_key(const char *set, const char *key, double *out, char *reason, size_t size)
{
    long long v;
    if (xs_kv_int(set, key, 1, SIZE_MAX_KEY, -1, &v, reason, size))
        return -1;
    *out = (double)v;
    return 0;
}

static int dtype_key(const char *set, const char *key, int dflt, xs_dtype *out, char *reason,
                     size_t size)
{
    int i;
    if (xs_kv_choice(set, key, DTYPES, dflt, &i, reason, size))
        return -1;
    *out = DTYPE_OF[i];
    return 0;
}

static int attention_keys(const char *set, xs_kernel_spec *k, char *reason, size_t size)
{
    int impl;
    long long causal, hd;
    if (xs_kv_choice(set, "impl", XS_KOP_ATTENTION_IMPLS, -1, &impl, reason, size) ||
        size_key(set, "batch", &k->batch, reason, size) ||
        size_key(set, "heads", &k->heads, reason, size) ||
        size_key(set, "seq", &k->seq, reason, size) ||
        xs_kv_int(set, "head_dim", 1, 1024, -1, &hd, reason, size) ||
        xs_kv_int(set, "causal", 0, 1, -1, &causal, reason, size) ||
        xs_kv_num(set, "dropout", -1, 1, 0, &k->dropout, reason, size))
        return -1;
    if (!(k->dropout >= 0 && k->dropout < 1)) {
        snprintf(reason, size, "set: key 'dropout' must be a probability in [0, 1), got %g",
                 k->dropout);
        return -1;
    }
    k->head_dim = (double)hd;
    k->unfused = impl == 1;
    k->causal = (int)causal;
    if (k->dtype == XS_FP32 && !k->unfused) {
        snprintf(reason, size, "set: op=attention impl=%s takes dtype fp16 or bf16 (the flash "
                               "kernel has no fp32 form); fp32 attention is impl=unfused",
                 impl == 0 ? "flash" : "sdpa");
        return -1;
    }
    if (k->batch * k->heads * k->seq * k->head_dim > (double)SIZE_MAX_KEY) {
        snprintf(reason, size, "set: op=attention: batch x heads x seq x head_dim is %.3g "
                               "elements, past the %lld a tensor may hold here",
                 k->batch * k->heads * k->seq * k->head_dim, SIZE_MAX_KEY);
        return -1;
    }
    if (k->unfused && k->batch * k->heads * k->seq * k->seq > (double)SIZE_MAX_KEY) {
        snprintf(reason, size, "set: op=attention impl=unfused: its scores, batch x heads x "
                               "seq x seq, are %.3g elements, past the %lld a tensor may hold "
                               "here",
                 k->batch * k->heads * k->seq * k->seq, SIZE_MAX_KEY);
        return -1;
    }
    return 0;
}

int xs_kernel_spec_parse(const char *set, xs_kernel_spec *k, char *reason, size_t size)
{
    memset(k, 0, sizeof *k);
    int op;
    if (xs_kv_choice(set, "op", XS_KOP_CHOICES, -1, &op, reason, size))
        return -1;
    k->op = op;
    const char *keys = xs_kernel_keys(op);
    if (xs_kv_known(set, keys, reason, size) || dtype_key(set, "dtype", -1, &k->dtype, reason, size))
        return -1;
    long long le;
    if (xs_kv_int(set, "loop_elems", 1, 64, XS_KOP_LOOP_ELEMS, &le, reason, size))
        return -1;
    k->loop_elems = le;
    if (xs_kv_num(set, "generic_loop_efficiency", 0, 1,
                  XS_KOP_GENERIC_LOOP_EFFICIENCY, &k->generic_loop_efficiency, reason, size))
        return -1;
    if (KOPS[op].dir == 2) {
        int d;
        if (xs_kv_choice(set, "dir", "fwd|bwd", 0, &d, reason, size))
            return -1;
        if (d) {
            snprintf(reason, size, "set: op=%s has no backward kernel (the gradient of a sum "
                                   "passes through unchanged): dir must be fwd", "add");
            return -1;
        }
    } else if (KOPS[op].dir) {
        int d;
        if (xs_kv_choice(set, "dir", "fwd|bwd|both", KOPS[op].dir == 3 ? 0 : -1, &d, reason, size))
            return -1;
        k->bwd = d;
    }
    int di = k->dtype == XS_FP32 ? 0 : k->dtype == XS_FP16 ? 1 : 2;
    switch (op) {
    case XS_KOP_SOFTMAX:
    case XS_KOP_LAYERNORM:
    case XS_KOP_RMSNORM:
    case XS_KOP_REDUCE:
        if (size_key(set, "rows", &k->rows, reason, size) ||
            size_key(set, "cols", &k->cols, reason, size))
            return -1;
        if (op == XS_KOP_SOFTMAX) {
            long long lg;
            if (xs_kv_int(set, "log", 0, 1, 0, &lg, reason, size))
                return -1;
            k->log = (int)lg;
        }
        if (op == XS_KOP_LAYERNORM &&
            dtype_key(set, "out_dtype", di, &k->out_dtype, reason, size))
            return -1;
        break;
    case XS_KOP_CROSS_ENTROPY:
        if (size_key(set, "rows", &k->rows, reason, size) ||
            size_key(set, "classes", &k->cols, reason, size))
            return -1;
        break;
    case XS_KOP_ADD:
        if (size_key(set, "elems", &k->elems, reason, size) ||
            dtype_key(set, "b_dtype", di, &k->b_dtype, reason, size) ||
            dtype_key(set, "out_dtype", di, &k->out_dtype, reason, size))
            return -1;
        break;
    case XS_KOP_COPY:
        if (size_key(set, "elems", &k->elems, reason, size) ||
            dtype_key(set, "out_dtype", -1, &k->out_dtype, reason, size))
            return -1;
        if ((k->dtype == XS_FP32) == (k->out_dtype == XS_FP32)) {
            snprintf(reason, size,
                     "set: op=copy is a format conversion between fp32 and fp16 or bf16 (the "
                     "step's AMP casts); a same-format copy in a step is a permute: op=transpose");
            return -1;
        }
        break;
    case XS_KOP_TRANSPOSE: {
        int inner;
        if (size_key(set, "elems", &k->elems, reason, size) ||
            xs_kv_choice(set, "inner", "contiguous|strided", 0, &inner, reason, size))
            return -1;
        k->strided = inner;
        break;
    }
    case XS_KOP_EMBEDDING:
    case XS_KOP_EMBEDDING_BWD:
        if (size_key(set, "vocab", &k->vocab, reason, size) ||
            size_key(set, "dim", &k->dim, reason, size) ||
            size_key(set, "lookups", &k->lookups, reason, size))
            return -1;
        break;
    case XS_KOP_L2NORM:
    case XS_KOP_SCALE:
    case XS_KOP_UNSCALE: {
        long long p, t;
        if (xs_kv_int(set, "params", 1, (long long)1 << 45, -1, &p, reason, size) ||
            xs_kv_int(set, "tensors", 1, 1 << 24, 1, &t, reason, size))
            return -1;
        k->params = (double)p;
        k->tensors = t;
        if (op == XS_KOP_UNSCALE && k->dtype == XS_BF16) {
            snprintf(reason, size, "set: op=multi_tensor_unscale takes dtype fp32 (GradScaler "
                                   "unscales fp32 gradients in place) or fp16 (apex O2: fp16 "
                                   "gradients into fp32 master gradients), got bf16");
            return -1;
        }
        break;
    }
    case XS_KOP_ATTENTION:
        return attention_keys(set, k, reason, size);
    case XS_KOP_POINTWISE:
        if (xs_kv_choice(set, "fn", XS_KOP_POINTWISE_FNS, -1, &k->fn, reason, size) ||
            size_key(set, "elems", &k->elems, reason, size))
            return -1;
        break;
    default: /* dropout, gelu, bias_gelu */
        if (size_key(set, "elems", &k->elems, reason, size))
            return -1;
        break;
    }
    return 0;
}
