/* test_numfmt.c — xs_fmt_g writes what snprintf's "%.<prec>g" writes,
 * byte for byte: at random magnitudes, at halves (ties and near-ties),
 * at powers of ten and where rounding carries into one, at the switch
 * between fixed and exponent notation, and at values it leaves to
 * snprintf. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "numfmt.h"
#include "test_util.h"

static int mismatches;

static void expect_as_printf(double v, int prec)
{
    char want[64], got[XS_FMT_G_MAX];
    int nw = snprintf(want, sizeof want, "%.*g", prec, v);
    int ng = xs_fmt_g(got, v, prec);
    if (ng != nw || strcmp(want, got) != 0) {
        if (mismatches++ < 10)
            fprintf(stderr, "\n  %%.%dg of %.17g: printf '%s', xs_fmt_g '%s'\n", prec, v, want,
                    got);
    }
}

static uint64_t next(uint64_t *x) /* xorshift64*: deterministic */
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ull;
}

static void fmt_g_should_write_what_printf_writes(void)
{
    mismatches = 0;
    const int precs[] = {1, 3, 6, 9, 12, 15, 16, 17};
    uint64_t seed = 88172645463325252ull;
    for (size_t p = 0; p < sizeof precs / sizeof precs[0]; p++) {
        int prec = precs[p];
        /* any bit pattern that is a finite double, and log-uniform values */
        for (int i = 0; i < 20000; i++) {
            uint64_t bits = next(&seed);
            double v;
            memcpy(&v, &bits, sizeof v);
            expect_as_printf(v, prec);
            double u = (double)(next(&seed) >> 11) / 9007199254740992.0;
            expect_as_printf(pow(10, -30 + 60 * u), prec);
            expect_as_printf(-pow(10, -6 + 14 * u), prec);
        }
        /* halves: d.5 x 10^k exactly, and a step either side of it */
        for (int i = 0; i < 5000; i++) {
            double d = (double)(next(&seed) % 2000000000ull) + 0.5;
            for (int k = -12; k <= 12; k += 3) {
                double v = d * pow(10, k);
                expect_as_printf(v, prec);
                expect_as_printf(nextafter(v, 0), prec);
                expect_as_printf(nextafter(v, INFINITY), prec);
            }
        }
        /* powers of ten, the carry into one, the notation switch */
        for (int k = -40; k <= 40; k++) {
            double t = pow(10, k);
            const double around[] = {t, nextafter(t, 0), nextafter(t, INFINITY), 9.5 * t,
                                     9.9999999995 * t, 0.99999999999999989 * t, 1.5 * t};
            for (size_t a = 0; a < sizeof around / sizeof around[0]; a++)
                expect_as_printf(around[a], prec);
        }
        const double special[] = {0.0,    -0.0,     INFINITY, -INFINITY, NAN,   1e-4,  1e-5,
                                  0.0001, 0.00001, 123456789, 1e300,    5e-324, 2.5,   0.5,
                                  1.0,    100000,   1e15,      1e16,      1e17,  1e-300};
        for (size_t a = 0; a < sizeof special / sizeof special[0]; a++)
            expect_as_printf(special[a], prec);
    }
    CU_ASSERT_EQUAL(mismatches, 0);
}

int tu_add_numfmt_suite(void)
{
    CU_pSuite s = CU_add_suite("numfmt", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, fmt_g_should_write_what_printf_writes);
    return 0;
}
