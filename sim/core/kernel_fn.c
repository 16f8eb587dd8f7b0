/* kernel_fn.c — see kernel_fn.h. */
#include "kernel_fn.h"

#include <string.h>

static const char *const FN_NAMES[XS_FN_COUNT] = {
    [XS_FN_ZERO] = "zero",
    [XS_FN_ADD] = "add",
    [XS_FN_BIAS] = "bias",
    [XS_FN_BIAS_GRAD] = "bias_grad",
    [XS_FN_DROPOUT] = "dropout",
    [XS_FN_DROPOUT_BWD] = "dropout_bwd",
    [XS_FN_GELU] = "gelu",
    [XS_FN_GELU_BWD] = "gelu_bwd",
    [XS_FN_LAYERNORM] = "layernorm",
    [XS_FN_LAYERNORM_BWD] = "layernorm_bwd",
    [XS_FN_SOFTMAX] = "softmax",
    [XS_FN_SOFTMAX_BWD] = "softmax_bwd",
    [XS_FN_XENT] = "xent",
    [XS_FN_EMBED] = "embed",
    [XS_FN_EMBED_BWD] = "embed_bwd",
    [XS_FN_CAST] = "cast",
    [XS_FN_COPY] = "copy",
    [XS_FN_ADAN] = "adan",
    [XS_FN_ADAMW] = "adamw",
};

const char *xs_cpu_fn_name(int fn)
{
    return fn >= 0 && fn < XS_FN_COUNT ? FN_NAMES[fn] : NULL;
}

int xs_cpu_fn_index(const char *name)
{
    for (int i = 0; i < XS_FN_COUNT; i++)
        if (strcmp(FN_NAMES[i], name) == 0)
            return i;
    return -1;
}

static int has(const char *name, const char *part)
{
    return strstr(name, part) != NULL;
}

int xs_cpu_fn_for_op(const xs_op *op)
{
    if (op->hints.fn >= 0 && op->hints.fn < XS_FN_COUNT)
        return op->hints.fn;
    int bwd = op->phase == XS_PH_BWD;
    switch (op->kind) {
    case XS_OP_NORM: return bwd ? XS_FN_LAYERNORM_BWD : XS_FN_LAYERNORM;
    case XS_OP_SOFTMAX: return bwd ? XS_FN_SOFTMAX_BWD : XS_FN_SOFTMAX;
    case XS_OP_LOSS: return XS_FN_XENT;
    case XS_OP_EMBED: return bwd ? XS_FN_EMBED_BWD : XS_FN_EMBED;
    case XS_OP_CAST: return XS_FN_CAST;
    case XS_OP_COPY: return XS_FN_COPY;
    case XS_OP_REDUCE: return has(op->name, "accumulate") ? XS_FN_ADD : XS_FN_BIAS_GRAD;
    case XS_OP_OPTIMIZER:
        if (has(op->name, "adan"))
            return XS_FN_ADAN;
        if (has(op->name, "adam"))
            return XS_FN_ADAMW;
        return XS_FN_ADD; /* SGD, unscale, clipping: one streaming pass */
    case XS_OP_ELTWISE:
        if (has(op->name, "gelu"))
            return bwd ? XS_FN_GELU_BWD : XS_FN_GELU;
        if (has(op->name, "dropout"))
            return bwd ? XS_FN_DROPOUT_BWD : XS_FN_DROPOUT;
        if (has(op->name, "bias"))
            return XS_FN_BIAS;
        if (has(op->name, "zero"))
            return XS_FN_ZERO;
        return XS_FN_ADD;
    default: return -1;
    }
}
