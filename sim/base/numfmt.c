/* numfmt.c — see numfmt.h.
 *
 * The digits, exactly: v is m x 2^e2 (m a 53-bit whole number), and
 * v x 10^k for the k that puts it in [10^(prec-1), 10^prec) is m x 5^k x
 * 2^(e2+k), or m x 2^(e2-j) / 5^j for k = -j: whole numbers of at most
 * 128 bits for |k| <= 27, shifted or divided with the remainder kept, so
 * the rounding to prec digits is the exact value's, ties to even, as
 * glibc rounds (in the default rounding mode). No floating-point
 * arithmetic decides a digit, so it holds wherever doubles are IEEE
 * binary64, under valgrind too. 0, inf, NaN and exponents past the table
 * go to snprintf. */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 u128;

#define POW5_MAX 27 /* 5^27 < 2^63 */

static uint64_t pow5(int k)
{
    uint64_t p = 1;
    while (k-- > 0)
        p *= 5;
    return p;
}

static uint64_t pow10u(int k)
{
    uint64_t p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/* n / d: the whole part, and whether rounding to nearest (ties to even)
 * takes the next one */
static u128 div_round(u128 n, u128 d, int *up)
{
    u128 q = n / d, r = n % d;
    *up = 2 * r > d || (2 * r == d && (q & 1));
    return q;
}

/* m x 2^e2 x 10^k: its whole part, and whether it rounds up; 0 where it
 * does not fit the arithmetic (far from the range asked for) */
static u128 scaled(uint64_t m, int e2, int k, int *up)
{
    *up = 0;
    if (k >= 0) {
        u128 x = (u128)m * pow5(k); /* < 2^116 */
        int s = e2 + k;
        if (s >= 0)
            return s < 64 && (x >> (127 - s)) == 0 ? x << s : 0;
        return -s < 127 ? div_round(x, (u128)1 << -s, up) : 0;
    }
    u128 d = pow5(-k);
    int s = e2 + k;
    if (s >= 0)
        return s <= 70 ? div_round((u128)m << s, d, up) : 0;
    return -s <= 60 ? div_round(m, d << -s, up) : 0;
}

/* The prec significant digits of a > 0 (a whole number in [10^(prec-1),
 * 10^prec)) and the exponent of the first; 0 where snprintf must say. */
static int digits_of(double a, int prec, uint64_t *digits, int *exp10)
{
    int ex;
    double f = frexp(a, &ex); /* a = f 2^ex, f in [0.5, 1): exact */
    uint64_t m = (uint64_t)ldexp(f, 53);
    int e2 = ex - 53;
    int e = (int)floor(log10(a));
    uint64_t lo = pow10u(prec - 1), hi = pow10u(prec);
    for (int tries = 0; tries < 3; tries++) {
        int k = prec - 1 - e;
        if (k > POW5_MAX || -k > POW5_MAX)
            return 0;
        int up;
        u128 d = scaled(m, e2, k, &up);
        if (d < lo) { /* log10 rounded up across a power of ten (or 0: too far) */
            if (d == 0)
                return 0;
            e--;
            continue;
        }
        if (d >= hi) {
            e++;
            continue;
        }
        d += up;
        if (d == hi) { /* rounding carried into the next power: 9.99..95 */
            *digits = lo;
            *exp10 = e + 1;
            return 1;
        }
        *digits = (uint64_t)d;
        *exp10 = e;
        return 1;
    }
    return 0;
}

/* %g's text of the digits d (prec of them) times 10^(x - prec + 1):
 * fixed where -4 <= x < prec, else d.ddde+XX; trailing zeros dropped */
static int write_g(char *dst, int neg, uint64_t d, int prec, int x)
{
    char dig[20];
    for (int i = prec - 1; i >= 0; i--, d /= 10)
        dig[i] = (char)('0' + d % 10);
    int last = prec - 1; /* the last digit written: no trailing zeros */
    while (last > 0 && dig[last] == '0')
        last--;
    char *p = dst;
    if (neg)
        *p++ = '-';
    if (x >= -4 && x < prec) {
        if (x < 0) {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -x - 1; i++)
                *p++ = '0';
            memcpy(p, dig, (size_t)last + 1);
            p += last + 1;
        } else {
            memcpy(p, dig, (size_t)x + 1);
            p += x + 1;
            if (last > x) {
                *p++ = '.';
                memcpy(p, dig + x + 1, (size_t)(last - x));
                p += last - x;
            }
        }
    } else {
        *p++ = dig[0];
        if (last > 0) {
            *p++ = '.';
            memcpy(p, dig + 1, (size_t)last);
            p += last;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100)
            *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
    }
    *p = '\0';
    return (int)(p - dst);
}
#endif

int xs_fmt_g(char *dst, double v, int prec)
{
#if defined(__SIZEOF_INT128__)
    uint64_t d;
    int x;
    if (prec >= 1 && prec <= 17 && isfinite(v) && v != 0 && digits_of(fabs(v), prec, &d, &x))
        return write_g(dst, signbit(v) != 0, d, prec, x);
#endif
    return snprintf(dst, XS_FMT_G_MAX, "%.*g", prec, v);
}
