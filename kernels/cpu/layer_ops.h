/* layer_ops.h — the non-GEMM kernels of a Transformer layer's training
 * step, fp32, rows of `width` elements: LayerNorm, softmax, GELU, bias,
 * residual add, dropout, embedding lookup, cross-entropy. Each has a plain
 * serial reference (_ref) and the timed version (OpenMP over rows, built
 * for AVX-512, AVX2 + FMA and the base ISA; the kernel set in force,
 * cpu_features.h, chooses at run time). Forward and
 * backward; backward kernels accumulate parameter gradients (+=). */
#ifndef XS_KRN_LAYER_OPS_H
#define XS_KRN_LAYER_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "bf16.h"

/* Bytes one element of each kernel moves between the core and memory, by
 * the kernel's own accounting: fp32 reads, writes, and the read of each
 * written line that was not read first (write-allocate: a store to a line
 * not in cache fetches it); 1-byte dropout masks; per-row and per-column
 * vectors left out. The bert trace and the calibration both use them. */
#define XS_KRN_B_ZERO 8.0           /* write + allocate */
#define XS_KRN_B_ADD 16.0           /* a, b; y written + allocated */
#define XS_KRN_B_BIAS 8.0           /* y read and written in place */
#define XS_KRN_B_BIAS_GRAD 4.0
#define XS_KRN_B_DROPOUT 14.0       /* x; y and the mask written + allocated */
#define XS_KRN_B_DROPOUT_BWD 13.0   /* dy, mask; dx written + allocated */
#define XS_KRN_B_GELU 12.0
#define XS_KRN_B_GELU_BWD 16.0
#define XS_KRN_B_LAYERNORM 12.0
#define XS_KRN_B_LAYERNORM_BWD 24.0 /* dx pass (dy, x; dx) and parameter pass (dy, x) */
#define XS_KRN_B_SOFTMAX 12.0
#define XS_KRN_B_SOFTMAX_BWD 16.0
#define XS_KRN_B_XENT 12.0
#define XS_KRN_B_EMBED 16.0         /* two table rows; out written + allocated */
#define XS_KRN_B_EMBED_BWD 20.0     /* dout; two rows read and written */
#define XS_KRN_B_CAST 8.0           /* fp32 in; bf16 out written + allocated */
#define XS_KRN_B_COPY 12.0

/* The build the timed kernels run: "avx512", "avx2" or "base". */
const char *xs_krn_layer_ops_path(void);

/* y = (x - mean) * rstd * gamma + beta per row; saves mean and rstd. */
void xs_krn_layernorm_fwd(const float *x, const float *gamma, const float *beta, float *y,
                          float *mean, float *rstd, size_t rows, size_t width, int threads);
void xs_krn_layernorm_fwd_ref(const float *x, const float *gamma, const float *beta, float *y,
                              float *mean, float *rstd, size_t rows, size_t width);
/* dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy gamma; dgamma += dy
 * xhat, dbeta += dy (summed over rows). */
void xs_krn_layernorm_bwd(const float *dy, const float *x, const float *gamma, const float *mean,
                          const float *rstd, float *dx, float *dgamma, float *dbeta, size_t rows,
                          size_t width, int threads);
void xs_krn_layernorm_bwd_ref(const float *dy, const float *x, const float *gamma,
                              const float *mean, const float *rstd, float *dx, float *dgamma,
                              float *dbeta, size_t rows, size_t width);

/* y = softmax(scale x) along each row. */
void xs_krn_softmax_fwd(const float *x, float *y, float scale, size_t rows, size_t width,
                        int threads);
void xs_krn_softmax_fwd_ref(const float *x, float *y, float scale, size_t rows, size_t width);
/* dx = scale y (dy - sum(dy y)) per row. */
void xs_krn_softmax_bwd(const float *dy, const float *y, float *dx, float scale, size_t rows,
                        size_t width, int threads);
void xs_krn_softmax_bwd_ref(const float *dy, const float *y, float *dx, float scale, size_t rows,
                            size_t width);

/* GELU, erf form (BERT): y = x Phi(x); dx = dy (Phi(x) + x phi(x)). */
void xs_krn_gelu_fwd(const float *x, float *y, size_t count, int threads);
void xs_krn_gelu_fwd_ref(const float *x, float *y, size_t count);
void xs_krn_gelu_bwd(const float *dy, const float *x, float *dx, size_t count, int threads);
void xs_krn_gelu_bwd_ref(const float *dy, const float *x, float *dx, size_t count);

/* y[r] += b (in place); db += sum over rows of dy. */
void xs_krn_bias_add(float *y, const float *b, size_t rows, size_t width, int threads);
void xs_krn_bias_grad(const float *dy, float *db, size_t rows, size_t width, int threads);
void xs_krn_bias_grad_ref(const float *dy, float *db, size_t rows, size_t width);

/* y = a + b */
void xs_krn_add(const float *a, const float *b, float *y, size_t count, int threads);

/* x = 0 (gradient buffers before a step), split over the threads. */
void xs_krn_zero(float *x, size_t count, int threads);

/* Attention head layouts. Rows [T x h] with T = B s tokens and h = a d;
 * heads [B a s d]. split: the fused QKV projection [T x 3h] into q, k, v
 * heads; merge: the inverse for their gradients; heads_to_rows and
 * rows_to_heads: one [T x h] tensor either way. */
void xs_krn_heads_split(const float *qkv, float *q, float *k, float *v, size_t B, size_t s,
                        size_t a, size_t d, int threads);
void xs_krn_heads_merge(const float *dq, const float *dk, const float *dv, float *dqkv,
                        size_t B, size_t s, size_t a, size_t d, int threads);
void xs_krn_heads_to_rows(const float *xh, float *x, size_t B, size_t s, size_t a, size_t d,
                          int threads);
void xs_krn_rows_to_heads(const float *x, float *xh, size_t B, size_t s, size_t a, size_t d,
                          int threads);

/* fp32 -> bf16, round to nearest even (xs_f32_to_bf16); the AVX-512 path
 * gives the reference's bits for every input. */
void xs_krn_cast_bf16(const float *x, xs_bf16 *y, size_t count, int threads);
void xs_krn_cast_bf16_ref(const float *x, xs_bf16 *y, size_t count);

/* Inverted dropout with a counter-based hash, so every implementation draws
 * the same mask: keep[i] = hash(seed, i) >= p; y = x keep / (1 - p). The
 * mask is stored as bytes for the backward pass. */
void xs_krn_dropout_fwd(const float *x, float *y, uint8_t *keep, float p, uint64_t seed,
                        size_t count, int threads);
void xs_krn_dropout_fwd_ref(const float *x, float *y, uint8_t *keep, float p, uint64_t seed,
                            size_t count);
void xs_krn_dropout_bwd(const float *dy, const uint8_t *keep, float *dx, float p, size_t count,
                        int threads);

/* out[t] = wte[tok[t]] + wpe[t % seq]; backward scatter-adds into both. */
void xs_krn_embedding_fwd(const int32_t *tok, const float *wte, const float *wpe, float *out,
                          size_t tokens, size_t seq, size_t width, int threads);
void xs_krn_embedding_bwd(const int32_t *tok, const float *dout, float *dwte, float *dwpe,
                          size_t tokens, size_t seq, size_t width, int threads);
void xs_krn_embedding_bwd_ref(const int32_t *tok, const float *dout, float *dwte, float *dwpe,
                              size_t tokens, size_t seq, size_t width);

/* Mean cross-entropy of logits[t][V] against targets; dlogits = (softmax -
 * onehot) / tokens. Returns the loss. */
double xs_krn_cross_entropy(const float *logits, const int32_t *target, float *dlogits,
                            size_t tokens, size_t vocab, int threads);

#endif
