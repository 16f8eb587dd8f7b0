/* optim_math.h — one parameter's optimizer update, written once for the CPU
 * reference, the fused CPU kernel's scalar tail and the CUDA kernels. The
 * order of operations is the contract: the vector kernels repeat it exactly
 * (no fused multiply-add), so they can agree bit for bit. */
#ifndef XS_OPTIM_MATH_H
#define XS_OPTIM_MATH_H

#include <math.h>

#include "xs_hd.h"

/* Adan (Xie et al. 2022; shared/reference/training-math.md). Constants that
 * depend only on the step are precomputed once per call. */
typedef struct {
    float b1, b2, b3;      /* beta1, beta2, beta3 */
    float one_b1, one_b2, one_b3; /* 1 - beta */
    float inv_sqrt_bc3;    /* 1 / sqrt(1 - beta3^k) */
    float step_m, step_v;  /* lr / (1 - beta1^k), lr * beta2 / (1 - beta2^k) */
    float eps, inv_decay;  /* 1 / (1 + lr * wd) */
} xs_adan_consts;

XS_HD xs_adan_consts xs_adan_setup(float lr, float b1, float b2, float b3, float eps, float wd,
                                   int step)
{
    xs_adan_consts c;
    c.b1 = b1;
    c.b2 = b2;
    c.b3 = b3;
    c.one_b1 = 1.0f - b1;
    c.one_b2 = 1.0f - b2;
    c.one_b3 = 1.0f - b3;
    c.inv_sqrt_bc3 = (float)(1.0 / sqrt(1.0 - pow(b3, step)));
    c.step_m = (float)(lr / (1.0 - pow(b1, step)));
    c.step_v = (float)(lr * b2 / (1.0 - pow(b2, step)));
    c.eps = eps;
    c.inv_decay = (float)(1.0 / (1.0 + (double)lr * wd));
    return c;
}

/* g_prev holds the previous gradient (the caller sets it to g before the
 * first step, so the first diff is zero). */
XS_HD void xs_adan_elem(const xs_adan_consts *c, float *p, float g, float *g_prev, float *m,
                        float *v, float *n)
{
    float diff = g - *g_prev;
    float mm = c->b1 * *m + c->one_b1 * g;
    float vv = c->b2 * *v + c->one_b2 * diff;
    float u = g + c->b2 * diff;
    float nn = c->b3 * *n + c->one_b3 * (u * u);
    float denom = sqrtf(nn) * c->inv_sqrt_bc3 + c->eps;
    float upd = c->step_m * mm / denom + c->step_v * vv / denom;
    *p = (*p - upd) * c->inv_decay;
    *m = mm;
    *v = vv;
    *n = nn;
    *g_prev = g;
}

/* AdamW (Loshchilov & Hutter): decoupled weight decay, then the Adam step. */
typedef struct {
    float b1, b2, one_b1, one_b2;
    float step;          /* lr / (1 - beta1^k) */
    float inv_sqrt_bc2;  /* 1 / sqrt(1 - beta2^k) */
    float eps, decay;    /* 1 - lr * wd */
} xs_adamw_consts;

XS_HD xs_adamw_consts xs_adamw_setup(float lr, float b1, float b2, float eps, float wd, int step)
{
    xs_adamw_consts c;
    c.b1 = b1;
    c.b2 = b2;
    c.one_b1 = 1.0f - b1;
    c.one_b2 = 1.0f - b2;
    c.step = (float)(lr / (1.0 - pow(b1, step)));
    c.inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(b2, step)));
    c.eps = eps;
    c.decay = (float)(1.0 - (double)lr * wd);
    return c;
}

XS_HD void xs_adamw_elem(const xs_adamw_consts *c, float *p, float g, float *m, float *v)
{
    float mm = c->b1 * *m + c->one_b1 * g;
    float vv = c->b2 * *v + c->one_b2 * (g * g);
    float denom = sqrtf(vv) * c->inv_sqrt_bc2 + c->eps;
    *p = *p * c->decay - c->step * mm / denom;
    *m = mm;
    *v = vv;
}

#endif
