/* op.c — see op.h. */
#include "op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void xs_op_name_copy(char *dst, const char *name)
{
    size_t n = strnlen(name, sizeof ((xs_op *)0)->name - 1);
    memcpy(dst, name, n);
    dst[n] = '\0';
}

void xs_op_init(xs_op *op, int kind, int phase, xs_dtype dtype, const char *name)
{
    memset(op, 0, sizeof *op);
    if (name[0]) /* the builder names its ops after this: "" is the memset's */
        xs_op_name_copy(op->name, name);
    op->layer = -1;
    op->phase = phase;
    op->kind = kind;
    op->dtype = dtype;
    op->launches = 1;
    op->count = 1;
    op->hints.fn = -1;
}

xs_op xs_op_make(int kind, int phase, xs_dtype dtype, const char *name)
{
    xs_op op;
    xs_op_init(&op, kind, phase, dtype, name);
    return op;
}

const char *xs_op_kind_name(int kind)
{
    static const char *names[XS_OP_KIND_COUNT] = {
        "gemm", "bgemm", "attention", "eltwise", "norm",      "softmax", "reduce",
        "embed", "cast", "copy",      "loss",    "optimizer", "comm"};
    return kind >= 0 && kind < XS_OP_KIND_COUNT ? names[kind] : "?";
}

const char *xs_issue_name(int issue)
{
    static const char *names[XS_ISSUE_COUNT] = {"eager", "engine", "multi_tensor", "loop",
                                                     "autocast"};
    return issue >= 0 && issue < XS_ISSUE_COUNT ? names[issue] : "?";
}

const char *xs_phase_name(int phase)
{
    static const char *names[XS_PHASE_COUNT] = {"fwd", "bwd", "opt", "comm"};
    return phase >= 0 && phase < XS_PHASE_COUNT ? names[phase] : "?";
}

const char *xs_bound_name(int bound)
{
    static const char *names[XS_BOUND_COUNT] = {"compute", "memory", "launch", "latency"};
    return bound >= 0 && bound < XS_BOUND_COUNT ? names[bound] : "?";
}

int xs_op_is_matmul(int kind)
{
    return kind == XS_OP_GEMM || kind == XS_OP_BGEMM || kind == XS_OP_ATTENTION;
}

const char *xs_coll_name(int coll)
{
    static const char *names[] = {"all_reduce", "reduce_scatter", "all_gather"};
    return coll >= 0 && coll < XS_COLL_COUNT ? names[coll] : "?";
}
