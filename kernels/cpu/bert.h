/* bert.h — a small BERT-style encoder trained for real on the CPU: token +
 * position embeddings, post-LN layers (multi-head self-attention with
 * dropout, GELU feed-forward), a vocabulary head with cross-entropy; the
 * backward pass op by op; the Adan update. Every kernel call is timed and
 * recorded (kind, shape, FLOPs, bytes), so a model can predict the same
 * calls and be compared with what they took. */
#ifndef XS_KRN_BERT_H
#define XS_KRN_BERT_H

#include <stddef.h>
#include <stdint.h>

#include "optim.h"

typedef struct {
    int layers, hidden, heads, ffn, vocab, seq, batch;
    float dropout;
    int bf16;    /* matmuls in bf16 (fp32 master weights, cast each step) */
    int threads;
} xs_bert_cfg;

/* One recorded kernel call. fn: "gemm", or the kernel's name in the CPU
 * cost model's table ("gelu", "layernorm_bwd", "cast", "adan", ...). For a
 * GEMM, C[m x n] = op(A)[m x k] op(B)[k x n] in dtype "fp32" or "bf16";
 * for the others, elems elements moving bytes. */
typedef struct {
    char name[40];
    const char *fn;
    const char *dtype;
    long long m, n, k;
    int ta, tb;
    double elems, flops, bytes;
    double time_s;
} xs_bert_op;

typedef struct {
    xs_bert_op *ops; /* owned; free with xs_bert_trace_free */
    size_t n, cap;
} xs_bert_trace;

typedef struct xs_bert xs_bert;

/* NULL on a bad configuration or out of memory. */
xs_bert *xs_bert_create(const xs_bert_cfg *cfg, uint64_t seed);
void xs_bert_free(xs_bert *b);
size_t xs_bert_params(const xs_bert *b);

/* One training step on batch x seq tokens: forward, loss, backward, Adan.
 * tokens and targets hold batch x seq ids in [0, vocab).
 * Returns the loss before the update. trace (may be NULL) receives every
 * kernel call of the step. */
double xs_bert_step(xs_bert *b, const int32_t *tokens, const int32_t *targets,
                    const xs_adan_hparams *h, xs_bert_trace *trace);

/* The two halves of a step: forward, loss and backward (gradients left in
 * the gradient vector; returns the loss), then the update. */
double xs_bert_forward_backward(xs_bert *b, const int32_t *tokens, const int32_t *targets,
                                xs_bert_trace *trace);
void xs_bert_update(xs_bert *b, const xs_adan_hparams *h, xs_bert_trace *trace);

/* The flat parameter and gradient vectors (same layout, count floats,
 * including alignment padding whose gradient is always 0). */
float *xs_bert_param_data(xs_bert *b, size_t *count);
const float *xs_bert_grad_data(const xs_bert *b);

void xs_bert_trace_free(xs_bert_trace *t);

#endif
