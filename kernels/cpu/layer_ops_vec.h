/* layer_ops_vec.h — the timed layer kernels as one table per vector ISA:
 * kernels/cpu/layer_ops_vec.c is compiled once for the base ISA and, on
 * x86-64, again with -mavx2 -mfma and with -mavx512f (Makefile), each
 * object defining its own table; layer_ops.c calls the table of the
 * kernel set in force. Plain loops the compiler vectorizes, so every table
 * computes what the references compute (same operations, same order).
 * Private to kernels/cpu. */
#ifndef XS_KRN_LAYER_OPS_VEC_H
#define XS_KRN_LAYER_OPS_VEC_H

#include <stddef.h>
#include <stdint.h>

#include "bf16.h"

typedef struct {
    const char *isa; /* "base", "avx2", "avx512" */
    void (*layernorm_fwd)(const float *x, const float *gamma, const float *beta, float *y,
                          float *mean, float *rstd, size_t rows, size_t width, int threads);
    void (*layernorm_bwd)(const float *dy, const float *x, const float *gamma, const float *mean,
                          const float *rstd, float *dx, float *dgamma, float *dbeta, size_t rows,
                          size_t width, int threads);
    void (*softmax_fwd)(const float *x, float *y, float scale, size_t rows, size_t width,
                        int threads);
    void (*softmax_bwd)(const float *dy, const float *y, float *dx, float scale, size_t rows,
                        size_t width, int threads);
    void (*gelu_fwd)(const float *x, float *y, size_t count, int threads);
    void (*gelu_bwd)(const float *dy, const float *x, float *dx, size_t count, int threads);
    void (*bias_add)(float *y, const float *b, size_t rows, size_t width, int threads);
    void (*bias_grad)(const float *dy, float *db, size_t rows, size_t width, int threads);
    void (*add)(const float *a, const float *b, float *y, size_t count, int threads);
    void (*dropout_fwd)(const float *x, float *y, uint8_t *keep, float p, uint64_t seed,
                        size_t count, int threads);
    void (*dropout_bwd)(const float *dy, const uint8_t *keep, float *dx, float p, size_t count,
                        int threads);
    void (*cast_bf16)(const float *x, xs_bf16 *y, size_t count, int threads);
} xs_krn_lops_table;

extern const xs_krn_lops_table xs_krn_lops_base;
#if defined(__x86_64__)
extern const xs_krn_lops_table xs_krn_lops_avx2, xs_krn_lops_avx512;
#endif

#endif
