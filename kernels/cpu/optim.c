/* optim.c — see optim.h. Work is split in static per-thread ranges that
 * start on 64-byte boundaries; each range runs 16 lanes at a time with
 * AVX-512, 8 with AVX2, 4 with NEON, as the kernel set allows, and the
 * shared scalar code for the rest. Every vector version repeats the scalar
 * operations one by one (no FMA; IEEE square root and division in every
 * set), so all agree with the reference bit for bit. */
#include "optim.h"

#include <math.h>

#include "../common/optim_math.h"
#include "cpu_features.h"
#include "share.h"
#include "simd.h"


xs_adan_hparams xs_adan_defaults(float lr, float weight_decay)
{
    xs_adan_hparams h = {lr, 0.98f, 0.92f, 0.99f, 1e-8f, weight_decay};
    return h;
}

static xs_adan_consts adan_consts(const xs_adan_hparams *h, int step)
{
    return xs_adan_setup(h->lr, h->beta1, h->beta2, h->beta3, h->eps, h->weight_decay, step);
}

void xs_krn_adan_ref(const xs_adan_hparams *h, int step, float *p, const float *g,
                     float *g_prev, float *m, float *v, float *n, size_t count)
{
    xs_adan_consts c = adan_consts(h, step);
    for (size_t i = 0; i < count; i++)
        xs_adan_elem(&c, &p[i], g[i], &g_prev[i], &m[i], &v[i], &n[i]);
}

#ifdef XS_X86
__attribute__((target("avx512f"))) static void adan_avx512(const xs_adan_consts *c, float *p,
                                                           const float *g, float *gp, float *m,
                                                           float *v, float *n, size_t lo,
                                                           size_t hi)
{
    const __m512 b1 = _mm512_set1_ps(c->b1), b2 = _mm512_set1_ps(c->b2),
                 b3 = _mm512_set1_ps(c->b3), ob1 = _mm512_set1_ps(c->one_b1),
                 ob2 = _mm512_set1_ps(c->one_b2), ob3 = _mm512_set1_ps(c->one_b3),
                 isb = _mm512_set1_ps(c->inv_sqrt_bc3), sm = _mm512_set1_ps(c->step_m),
                 sv = _mm512_set1_ps(c->step_v), eps = _mm512_set1_ps(c->eps),
                 idc = _mm512_set1_ps(c->inv_decay);
    size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
        __m512 G = _mm512_loadu_ps(g + i), GP = _mm512_loadu_ps(gp + i);
        __m512 M = _mm512_loadu_ps(m + i), V = _mm512_loadu_ps(v + i);
        __m512 N = _mm512_loadu_ps(n + i), P = _mm512_loadu_ps(p + i);
        /* the order of xs_adan_elem, operation by operation (no FMA) */
        __m512 diff = _mm512_sub_ps(G, GP);
        __m512 mm = _mm512_add_ps(_mm512_mul_ps(b1, M), _mm512_mul_ps(ob1, G));
        __m512 vv = _mm512_add_ps(_mm512_mul_ps(b2, V), _mm512_mul_ps(ob2, diff));
        __m512 u = _mm512_add_ps(G, _mm512_mul_ps(b2, diff));
        __m512 nn = _mm512_add_ps(_mm512_mul_ps(b3, N), _mm512_mul_ps(ob3, _mm512_mul_ps(u, u)));
        __m512 denom = _mm512_add_ps(_mm512_mul_ps(_mm512_sqrt_ps(nn), isb), eps);
        __m512 upd = _mm512_add_ps(_mm512_div_ps(_mm512_mul_ps(sm, mm), denom),
                                   _mm512_div_ps(_mm512_mul_ps(sv, vv), denom));
        _mm512_storeu_ps(p + i, _mm512_mul_ps(_mm512_sub_ps(P, upd), idc));
        _mm512_storeu_ps(m + i, mm);
        _mm512_storeu_ps(v + i, vv);
        _mm512_storeu_ps(n + i, nn);
        _mm512_storeu_ps(gp + i, G);
    }
    for (; i < hi; i++)
        xs_adan_elem(c, &p[i], g[i], &gp[i], &m[i], &v[i], &n[i]);
}

__attribute__((target("avx2"))) static void adan_avx2(const xs_adan_consts *c, float *p,
                                                      const float *g, float *gp, float *m,
                                                      float *v, float *n, size_t lo, size_t hi)
{
    const __m256 b1 = _mm256_set1_ps(c->b1), b2 = _mm256_set1_ps(c->b2),
                 b3 = _mm256_set1_ps(c->b3), ob1 = _mm256_set1_ps(c->one_b1),
                 ob2 = _mm256_set1_ps(c->one_b2), ob3 = _mm256_set1_ps(c->one_b3),
                 isb = _mm256_set1_ps(c->inv_sqrt_bc3), sm = _mm256_set1_ps(c->step_m),
                 sv = _mm256_set1_ps(c->step_v), eps = _mm256_set1_ps(c->eps),
                 idc = _mm256_set1_ps(c->inv_decay);
    size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        __m256 G = _mm256_loadu_ps(g + i), GP = _mm256_loadu_ps(gp + i);
        __m256 M = _mm256_loadu_ps(m + i), V = _mm256_loadu_ps(v + i);
        __m256 N = _mm256_loadu_ps(n + i), P = _mm256_loadu_ps(p + i);
        /* the order of xs_adan_elem, operation by operation (no FMA) */
        __m256 diff = _mm256_sub_ps(G, GP);
        __m256 mm = _mm256_add_ps(_mm256_mul_ps(b1, M), _mm256_mul_ps(ob1, G));
        __m256 vv = _mm256_add_ps(_mm256_mul_ps(b2, V), _mm256_mul_ps(ob2, diff));
        __m256 u = _mm256_add_ps(G, _mm256_mul_ps(b2, diff));
        __m256 nn = _mm256_add_ps(_mm256_mul_ps(b3, N), _mm256_mul_ps(ob3, _mm256_mul_ps(u, u)));
        __m256 denom = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(nn), isb), eps);
        __m256 upd = _mm256_add_ps(_mm256_div_ps(_mm256_mul_ps(sm, mm), denom),
                                   _mm256_div_ps(_mm256_mul_ps(sv, vv), denom));
        _mm256_storeu_ps(p + i, _mm256_mul_ps(_mm256_sub_ps(P, upd), idc));
        _mm256_storeu_ps(m + i, mm);
        _mm256_storeu_ps(v + i, vv);
        _mm256_storeu_ps(n + i, nn);
        _mm256_storeu_ps(gp + i, G);
    }
    for (; i < hi; i++)
        xs_adan_elem(c, &p[i], g[i], &gp[i], &m[i], &v[i], &n[i]);
}
#endif

#ifdef XS_NEON
static void adan_neon(const xs_adan_consts *c, float *p, const float *g, float *gp, float *m,
                      float *v, float *n, size_t lo, size_t hi)
{
    const float32x4_t b1 = vdupq_n_f32(c->b1), b2 = vdupq_n_f32(c->b2), b3 = vdupq_n_f32(c->b3),
                      ob1 = vdupq_n_f32(c->one_b1), ob2 = vdupq_n_f32(c->one_b2),
                      ob3 = vdupq_n_f32(c->one_b3), isb = vdupq_n_f32(c->inv_sqrt_bc3),
                      sm = vdupq_n_f32(c->step_m), sv = vdupq_n_f32(c->step_v),
                      eps = vdupq_n_f32(c->eps), idc = vdupq_n_f32(c->inv_decay);
    size_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        float32x4_t G = vld1q_f32(g + i), GP = vld1q_f32(gp + i), M = vld1q_f32(m + i);
        float32x4_t V = vld1q_f32(v + i), N = vld1q_f32(n + i), P = vld1q_f32(p + i);
        /* the order of xs_adan_elem, operation by operation (vmul + vadd, no FMA) */
        float32x4_t diff = vsubq_f32(G, GP);
        float32x4_t mm = vaddq_f32(vmulq_f32(b1, M), vmulq_f32(ob1, G));
        float32x4_t vv = vaddq_f32(vmulq_f32(b2, V), vmulq_f32(ob2, diff));
        float32x4_t u = vaddq_f32(G, vmulq_f32(b2, diff));
        float32x4_t nn = vaddq_f32(vmulq_f32(b3, N), vmulq_f32(ob3, vmulq_f32(u, u)));
        float32x4_t denom = vaddq_f32(vmulq_f32(vsqrtq_f32(nn), isb), eps);
        float32x4_t upd = vaddq_f32(vdivq_f32(vmulq_f32(sm, mm), denom),
                                    vdivq_f32(vmulq_f32(sv, vv), denom));
        vst1q_f32(p + i, vmulq_f32(vsubq_f32(P, upd), idc));
        vst1q_f32(m + i, mm);
        vst1q_f32(v + i, vv);
        vst1q_f32(n + i, nn);
        vst1q_f32(gp + i, G);
    }
    for (; i < hi; i++)
        xs_adan_elem(c, &p[i], g[i], &gp[i], &m[i], &v[i], &n[i]);
}
#endif

void xs_krn_adan_fused(const xs_adan_hparams *h, int step, float *p, const float *g,
                       float *g_prev, float *m, float *v, float *n, size_t count, int threads)
{
    xs_adan_consts c = adan_consts(h, step);
    const xs_cpu_features *f = xs_cpu_features_get();
    (void)f;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        size_t lo, hi;
        xs_krn_share(count, 16, &lo, &hi);
#ifdef XS_X86
        if (f->avx512)
            adan_avx512(&c, p, g, g_prev, m, v, n, lo, hi);
        else if (f->avx2)
            adan_avx2(&c, p, g, g_prev, m, v, n, lo, hi);
        else
#endif
#ifdef XS_NEON
        if (f->neon)
            adan_neon(&c, p, g, g_prev, m, v, n, lo, hi);
        else
#endif
            for (size_t i = lo; i < hi; i++)
                xs_adan_elem(&c, &p[i], g[i], &g_prev[i], &m[i], &v[i], &n[i]);
    }
}

/* One eager "kernel": a full pass over count elements, as a framework
 * launches one per tensor operation. Uses `nt` and `count` of the caller. */
#define PASS(body)                                                                            \
    do {                                                                                      \
        _Pragma("omp parallel for num_threads(nt) schedule(static)")                          \
        for (size_t i = 0; i < count; i++) {                                                  \
            body;                                                                             \
        }                                                                                     \
    } while (0)

void xs_krn_adan_eager(const xs_adan_hparams *h, int step, float *p, const float *g,
                       float *d, float *m, float *v, float *n, float *t, size_t count,
                       int threads)
{
    xs_adan_consts c = adan_consts(h, step);
    int nt = threads > 0 ? threads : 1;
    float sqrt_bc3 = 1.0f / c.inv_sqrt_bc3;
    PASS(d[i] += g[i]);                      /* 1  diff = g - g_prev */
    PASS(m[i] *= c.b1);                      /* 2  m.mul_(b1) */
    PASS(m[i] += c.one_b1 * g[i]);           /* 3  m.add_(g, 1-b1) */
    PASS(v[i] *= c.b2);                      /* 4  v.mul_(b2) */
    PASS(v[i] += c.one_b2 * d[i]);           /* 5  v.add_(diff, 1-b2) */
    PASS(d[i] *= c.b2);                      /* 6  diff.mul_(b2) */
    PASS(d[i] += g[i]);                      /* 7  diff.add_(g): u */
    PASS(n[i] *= c.b3);                      /* 8  n.mul_(b3) */
    PASS(n[i] += c.one_b3 * (d[i] * d[i]));  /* 9  n.addcmul_(u, u, 1-b3) */
    PASS(t[i] = sqrtf(n[i]));                /* 10 denom = n.sqrt() */
    PASS(t[i] /= sqrt_bc3);                  /* 11 .div_(sqrt(bc3)) */
    PASS(t[i] += c.eps);                     /* 12 .add_(eps) */
    PASS(p[i] += -c.step_m * (m[i] / t[i])); /* 13 p.addcdiv_(m, denom, -step_m) */
    PASS(p[i] += -c.step_v * (v[i] / t[i])); /* 14 p.addcdiv_(v, denom, -step_v) */
    PASS(p[i] *= c.inv_decay);               /* 15 p.div_(1 + lr wd) */
    PASS(d[i] = 0.0f);                       /* 16 neg_pre_grad.zero_() */
    PASS(d[i] -= g[i]);                      /* 17 .add_(g, alpha=-1) */
}

void xs_krn_adamw_ref(const xs_adamw_hparams *h, int step, float *p, const float *g, float *m,
                      float *v, size_t count)
{
    xs_adamw_consts c = xs_adamw_setup(h->lr, h->beta1, h->beta2, h->eps, h->weight_decay, step);
    for (size_t i = 0; i < count; i++)
        xs_adamw_elem(&c, &p[i], g[i], &m[i], &v[i]);
}

#ifdef XS_X86
__attribute__((target("avx512f"))) static void adamw_avx512(const xs_adamw_consts *c, float *p,
                                                            const float *g, float *m, float *v,
                                                            size_t lo, size_t hi)
{
    const __m512 b1 = _mm512_set1_ps(c->b1), b2 = _mm512_set1_ps(c->b2),
                 ob1 = _mm512_set1_ps(c->one_b1), ob2 = _mm512_set1_ps(c->one_b2),
                 st = _mm512_set1_ps(c->step), isb = _mm512_set1_ps(c->inv_sqrt_bc2),
                 eps = _mm512_set1_ps(c->eps), dc = _mm512_set1_ps(c->decay);
    size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
        __m512 G = _mm512_loadu_ps(g + i), M = _mm512_loadu_ps(m + i);
        __m512 V = _mm512_loadu_ps(v + i), P = _mm512_loadu_ps(p + i);
        __m512 mm = _mm512_add_ps(_mm512_mul_ps(b1, M), _mm512_mul_ps(ob1, G));
        __m512 vv = _mm512_add_ps(_mm512_mul_ps(b2, V), _mm512_mul_ps(ob2, _mm512_mul_ps(G, G)));
        __m512 denom = _mm512_add_ps(_mm512_mul_ps(_mm512_sqrt_ps(vv), isb), eps);
        __m512 np = _mm512_sub_ps(_mm512_mul_ps(P, dc), _mm512_div_ps(_mm512_mul_ps(st, mm), denom));
        _mm512_storeu_ps(p + i, np);
        _mm512_storeu_ps(m + i, mm);
        _mm512_storeu_ps(v + i, vv);
    }
    for (; i < hi; i++)
        xs_adamw_elem(c, &p[i], g[i], &m[i], &v[i]);
}

__attribute__((target("avx2"))) static void adamw_avx2(const xs_adamw_consts *c, float *p,
                                                       const float *g, float *m, float *v,
                                                       size_t lo, size_t hi)
{
    const __m256 b1 = _mm256_set1_ps(c->b1), b2 = _mm256_set1_ps(c->b2),
                 ob1 = _mm256_set1_ps(c->one_b1), ob2 = _mm256_set1_ps(c->one_b2),
                 st = _mm256_set1_ps(c->step), isb = _mm256_set1_ps(c->inv_sqrt_bc2),
                 eps = _mm256_set1_ps(c->eps), dc = _mm256_set1_ps(c->decay);
    size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        __m256 G = _mm256_loadu_ps(g + i), M = _mm256_loadu_ps(m + i);
        __m256 V = _mm256_loadu_ps(v + i), P = _mm256_loadu_ps(p + i);
        __m256 mm = _mm256_add_ps(_mm256_mul_ps(b1, M), _mm256_mul_ps(ob1, G));
        __m256 vv = _mm256_add_ps(_mm256_mul_ps(b2, V), _mm256_mul_ps(ob2, _mm256_mul_ps(G, G)));
        __m256 denom = _mm256_add_ps(_mm256_mul_ps(_mm256_sqrt_ps(vv), isb), eps);
        __m256 np = _mm256_sub_ps(_mm256_mul_ps(P, dc), _mm256_div_ps(_mm256_mul_ps(st, mm), denom));
        _mm256_storeu_ps(p + i, np);
        _mm256_storeu_ps(m + i, mm);
        _mm256_storeu_ps(v + i, vv);
    }
    for (; i < hi; i++)
        xs_adamw_elem(c, &p[i], g[i], &m[i], &v[i]);
}
#endif

#ifdef XS_NEON
static void adamw_neon(const xs_adamw_consts *c, float *p, const float *g, float *m, float *v,
                       size_t lo, size_t hi)
{
    const float32x4_t b1 = vdupq_n_f32(c->b1), b2 = vdupq_n_f32(c->b2),
                      ob1 = vdupq_n_f32(c->one_b1), ob2 = vdupq_n_f32(c->one_b2),
                      st = vdupq_n_f32(c->step), isb = vdupq_n_f32(c->inv_sqrt_bc2),
                      eps = vdupq_n_f32(c->eps), dc = vdupq_n_f32(c->decay);
    size_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        float32x4_t G = vld1q_f32(g + i), M = vld1q_f32(m + i);
        float32x4_t V = vld1q_f32(v + i), P = vld1q_f32(p + i);
        float32x4_t mm = vaddq_f32(vmulq_f32(b1, M), vmulq_f32(ob1, G));
        float32x4_t vv = vaddq_f32(vmulq_f32(b2, V), vmulq_f32(ob2, vmulq_f32(G, G)));
        float32x4_t denom = vaddq_f32(vmulq_f32(vsqrtq_f32(vv), isb), eps);
        float32x4_t np = vsubq_f32(vmulq_f32(P, dc), vdivq_f32(vmulq_f32(st, mm), denom));
        vst1q_f32(p + i, np);
        vst1q_f32(m + i, mm);
        vst1q_f32(v + i, vv);
    }
    for (; i < hi; i++)
        xs_adamw_elem(c, &p[i], g[i], &m[i], &v[i]);
}
#endif

void xs_krn_adamw_fused(const xs_adamw_hparams *h, int step, float *p, const float *g, float *m,
                        float *v, size_t count, int threads)
{
    xs_adamw_consts c = xs_adamw_setup(h->lr, h->beta1, h->beta2, h->eps, h->weight_decay, step);
    const xs_cpu_features *f = xs_cpu_features_get();
    (void)f;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        size_t lo, hi;
        xs_krn_share(count, 16, &lo, &hi);
#ifdef XS_X86
        if (f->avx512)
            adamw_avx512(&c, p, g, m, v, lo, hi);
        else if (f->avx2)
            adamw_avx2(&c, p, g, m, v, lo, hi);
        else
#endif
#ifdef XS_NEON
        if (f->neon)
            adamw_neon(&c, p, g, m, v, lo, hi);
        else
#endif
            for (size_t i = lo; i < hi; i++)
                xs_adamw_elem(&c, &p[i], g[i], &m[i], &v[i]);
    }
}
