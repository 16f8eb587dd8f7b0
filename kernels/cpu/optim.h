/* optim.h — optimizer steps on fp32 arrays, each in a plain reference
 * version and the versions that are timed:
 *   Adan  — reference; fused (one pass: p, g, g_prev, m, v, n read once,
 *           p, m, v, n, g_prev written once; AVX-512, OpenMP); eager (one
 *           pass per tensor operation, the 17 kernels of PyTorch's
 *           single-tensor Adan, training-math.md).
 *   AdamW — reference; fused.
 * The fused kernels repeat the reference's operations in the same order,
 * so they agree with it bit for bit; the eager one rounds differently. */
#ifndef XS_KRN_OPTIM_H
#define XS_KRN_OPTIM_H

#include <stddef.h>

typedef struct {
    float lr, beta1, beta2, beta3, eps, weight_decay;
} xs_adan_hparams;

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
} xs_adamw_hparams;

/* Defaults of the Adan paper / sail-sg reference: betas 0.98, 0.92, 0.99,
 * eps 1e-8. */
xs_adan_hparams xs_adan_defaults(float lr, float weight_decay);

/* step counts from 1. g_prev must hold g before the first step. */
void xs_krn_adan_ref(const xs_adan_hparams *h, int step, float *p, const float *g,
                     float *g_prev, float *m, float *v, float *n, size_t count);
void xs_krn_adan_fused(const xs_adan_hparams *h, int step, float *p, const float *g,
                       float *g_prev, float *m, float *v, float *n, size_t count, int threads);
/* The eager sequence keeps -g_prev (PyTorch's `neg_pre_grad`) in neg_g_prev
 * (initialise it to -g) and needs one temporary array of count floats. */
void xs_krn_adan_eager(const xs_adan_hparams *h, int step, float *p, const float *g,
                       float *neg_g_prev, float *m, float *v, float *n, float *tmp,
                       size_t count, int threads);

/* Bytes the kernels move per parameter (fp32): fused 44, eager 176. */
#define XS_ADAN_FUSED_BYTES 44
#define XS_ADAN_EAGER_BYTES 176
#define XS_ADAMW_FUSED_BYTES 28

void xs_krn_adamw_ref(const xs_adamw_hparams *h, int step, float *p, const float *g, float *m,
                      float *v, size_t count);
void xs_krn_adamw_fused(const xs_adamw_hparams *h, int step, float *p, const float *g, float *m,
                        float *v, size_t count, int threads);

#endif
