/* check.cuh — what every family's check shares on the host: a seeded
 * random source, ulp distances and the error scale of xs_cuda.h (<= 1
 * passes; a bit-exact kernel that differs by any ulp gives > 1). */
#ifndef XS_CHECK_CUH
#define XS_CHECK_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The largest size a check runs a job at: big enough for several waves
 * of blocks and every tail case, small enough for the CPU reference. */
#define XS_CHECK_MAX_ELEMS (1LL << 22)

typedef struct {
    uint64_t s;
} xs_rng;

static inline uint64_t xs_rng_next(xs_rng *r)
{
    uint64_t x = (r->s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* uniform in [lo, hi) */
static inline float xs_rng_float(xs_rng *r, float lo, float hi)
{
    float u = (float)(xs_rng_next(r) >> 40) * (1.0f / 16777216.0f);
    float x = lo + (hi - lo) * u;
    return x < hi ? x : lo;
}

/* Distance in representable values between two floats (0 when both are
 * the same NaN class); a NaN against a number counts as infinitely far. */
static inline double xs_ulps_f32(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0 : HUGE_VAL;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    long long oa = ia < 0 ? (long long)INT32_MIN - ia : ia; /* sign-magnitude to ordered */
    long long ob = ib < 0 ? (long long)INT32_MIN - ib : ib;
    return (double)(oa > ob ? oa - ob : ob - oa);
}

/* The same for 16-bit patterns of a format with 0x7c00 / 0x7f80 as its
 * exponent mask (fp16 / bf16). */
static inline double xs_ulps_16(uint16_t a, uint16_t b, uint16_t exp_mask)
{
    int na = (a & exp_mask) == exp_mask && (a & (uint16_t)~(exp_mask | 0x8000u));
    int nb = (b & exp_mask) == exp_mask && (b & (uint16_t)~(exp_mask | 0x8000u));
    if (na || nb)
        return na && nb ? 0 : HUGE_VAL;
    long oa = (a & 0x8000u) ? -(long)(a & 0x7fffu) : (long)a;
    long ob = (b & 0x8000u) ? -(long)(b & 0x7fffu) : (long)b;
    return (double)(oa > ob ? oa - ob : ob - oa);
}

/* A bit-exact kernel's error on the xs_cuda.h scale. */
static inline double xs_exact_err(double ulps)
{
    return ulps == 0 ? 0 : 1 + ulps;
}

/* The spacing of representable values at |x| in a format with `mant`
 * mantissa bits and smallest normal exponent `emin` (fp32 23/-126, fp16
 * 10/-14, bf16 7/-126): what rounding to that format may cost. */
static inline double xs_ulp_at(double x, int mant, int emin)
{
    int e;
    frexp(fabs(x), &e); /* |x| = f 2^e, f in [0.5, 1) */
    e -= 1;
    if (e < emin || x == 0)
        e = emin;
    return ldexp(1.0, e - mant);
}

#endif
