/* checked.h — integer arithmetic that says when it overflows instead of
 * wrapping (signed overflow is undefined behaviour in C, and a wrapped shape
 * would be predicted as if it were real). Counts built from user input —
 * shapes, tiles, tokens, steps — go through these, and an overflow becomes
 * an error that names the input. Built on GCC/Clang's __builtin_*_overflow,
 * which compute the exact result and report whether it fits. */
#ifndef XS_CHECKED_H
#define XS_CHECKED_H

#include <math.h>
#include <stdint.h>

/* *out = a * b. Returns 0, or -1 when the product does not fit an int64_t
 * (then *out is unspecified). */
static inline int xs_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* *out = a + b. Returns 0, or -1 on overflow. */
static inline int xs_add_i64(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

/* *out = a x b x ... for n factors. Returns 0, or -1 on overflow. */
static inline int xs_prod_i64(const int64_t *f, int n, int64_t *out)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        if (xs_mul_i64(p, f[i], &p))
            return -1;
    *out = p;
    return 0;
}

/* x as an int clamped to [lo, hi]; NaN gives lo. Converting a double that
 * an int cannot hold is undefined behaviour, so clamp in double first. */
static inline int xs_clamp_int(double x, int lo, int hi)
{
    if (!(x >= lo))
        return lo;
    return x > hi ? hi : (int)x;
}

#endif
