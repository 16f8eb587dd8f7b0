/* test_half_convert.c — the fp16 and bf16 conversions of
 * kernels/common/half_convert.h that the CUDA kernels and their CPU checks
 * share: fp32 -> bf16 against kernels/cpu/bf16.h, fp32 -> fp16 against
 * gcc's _Float16 conversion (IEEE round to nearest even), on every special
 * value, every fp16/bf16 pattern and its neighbours, and millions of random
 * fp32 patterns; the way up exact for all 65536 patterns of each. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "../kernels/common/half_convert.h"
#include "bf16.h"
#include "test_util.h"

static uint32_t rng = 2463534242u;
static uint32_t xorshift(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#ifdef __FLT16_MAX__
/* the compiler's IEEE conversion (gcc 12 on x86-64: libgcc's soft-fp) */
static uint16_t f16_reference(float f)
{
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}
#else
/* no _Float16 here: round in double, where the value and the halfway
 * points are exact, with rint (ties to even in the default mode) */
static uint16_t f16_reference(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    double a = fabs((double)f);
    if (isnan(f))
        return sign | 0x7e00;
    if (a >= 65520.0)
        return sign | 0x7c00;
    int e;
    frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
    e = e - 1 < -14 ? -14 : e - 1;
    double q = rint(ldexp(a, 10 - e)); /* units of the last place at exponent e */
    if (q >= 2048) { /* rounded up into the next binade */
        q /= 2;
        e++;
    }
    if (q < 1024) /* subnormal (e == -14) or zero */
        return sign | (uint16_t)q;
    return sign | (uint16_t)(((e + 15) << 10) | ((int)q - 1024));
}
#endif

/* Both NaN with the same sign, or the same pattern. NaN payloads are
 * compared too where the reference keeps them. */
static int f16_agrees(float f)
{
    uint16_t got = xs_f32_to_f16_bits(f), want = f16_reference(f);
    if (isnan(f))
        return (got & 0x7c00u) == 0x7c00u && (got & 0x3ffu) && (got & 0x8000u) == (want & 0x8000u) &&
               (got & 0x200u); /* quiet */
    return got == want;
}

static int bf16_agrees(float f)
{
    return xs_f32_to_bf16_bits(f) == xs_f32_to_bf16(f);
}

static void f16_and_bf16_should_round_special_values_as_the_references(void)
{
    const uint32_t specials[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
        0x7f800001u, 0x7fbfffffu, 0x7fffffffu, 0x00000001u, 0x007fffffu, 0x00800000u,
        0x7f7fffffu, 0xff7fffffu, 0x477fe000u, /* 65504 */ 0x477fefffu, 0x477ff000u,
        /* 65520: ties to inf */ 0x477ff001u, 0x47800000u, 0x38800000u, /* 2^-14 */
        0x387fffffu, 0x387fe000u, 0x33800000u, /* 2^-24 */ 0x33000000u, /* 2^-25 */
        0x33000001u, 0x32ffffffu, 0x33c00000u, /* 1.5 x 2^-24: ties to 2 */ 0x34200000u,
        0x3f800000u, 0x3f801000u, 0x3f803000u, 0x3f808000u, 0x3f818000u, 0xbf808000u,
        0x3f7fffffu, 0x7f7f8000u, 0x7f7f7fffu};
    int ok16 = 1, okbf = 1;
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        float f = from_bits(specials[i]);
        ok16 &= f16_agrees(f);
        okbf &= bf16_agrees(f);
        okbf &= f16_agrees(-f);
    }
    CU_ASSERT_TRUE(ok16);
    CU_ASSERT_TRUE(okbf);
    /* the hand-checked patterns */
    CU_ASSERT_EQUAL(xs_f32_to_f16_bits(from_bits(0x477ff000u)), 0x7c00);
    CU_ASSERT_EQUAL(xs_f32_to_f16_bits(from_bits(0x477fefffu)), 0x7bff);
    CU_ASSERT_EQUAL(xs_f32_to_f16_bits(from_bits(0x33000000u)), 0x0000);
    CU_ASSERT_EQUAL(xs_f32_to_f16_bits(from_bits(0x33000001u)), 0x0001);
    CU_ASSERT_EQUAL(xs_f32_to_f16_bits(from_bits(0x33c00000u)), 0x0002);
    CU_ASSERT_EQUAL(xs_f32_to_f16_bits(from_bits(0x387fffffu)), 0x0400);
    CU_ASSERT_EQUAL(xs_f32_to_f16_bits(from_bits(0xff800000u)), 0xfc00);
    CU_ASSERT_EQUAL(xs_f32_to_bf16_bits(from_bits(0x3f808000u)), 0x3f80); /* tie to even */
    CU_ASSERT_EQUAL(xs_f32_to_bf16_bits(from_bits(0x3f818000u)), 0x3f82);
    CU_ASSERT_EQUAL(xs_f32_to_bf16_bits(from_bits(0x7f7fffffu)), 0x7f80);
    CU_ASSERT_EQUAL(xs_f32_to_bf16_bits(from_bits(0x7f800001u)) & 0xffc0, 0x7fc0);
}

/* Every fp16 and bf16 pattern, the fp32 values just around it and the
 * midpoints to its neighbour: each rounding boundary of both formats. */
static void f16_and_bf16_should_round_every_boundary_as_the_references(void)
{
    int ok16 = 1, okbf = 1, up16 = 1, upbf = 1;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = xs_f16_bits_to_f32((uint16_t)h);
        /* the way up: exact, so the way down must give the pattern back */
        up16 &= isnan(f) ? ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
                         : xs_f32_to_f16_bits(f) == h && f16_reference(f) == h;
        float b = xs_bf16_bits_to_f32((uint16_t)h), wb = xs_bf16_to_f32((xs_bf16)h);
        upbf &= memcmp(&b, &wb, sizeof b) == 0;
        if (!isnan(f)) {
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            for (int d = -2; d <= 2; d++)
                ok16 &= f16_agrees(from_bits(u + (uint32_t)d));
            if (!isinf(f) && (h & 0x7fffu) != 0x7bffu) { /* the midpoint to the next */
                float nx = xs_f16_bits_to_f32((uint16_t)(h + 1));
                float mid = (float)(((double)f + (double)nx) / 2);
                ok16 &= f16_agrees(mid);
            }
        }
        if (!isnan(b)) {
            uint32_t u = (uint32_t)h << 16;
            for (uint32_t d = 0x7ffeu; d <= 0x8001u; d++) /* around the midpoint */
                okbf &= bf16_agrees(from_bits(u + d));
            okbf &= bf16_agrees(from_bits(u - 1));
        }
    }
    CU_ASSERT_TRUE(up16);
    CU_ASSERT_TRUE(upbf);
    CU_ASSERT_TRUE(ok16);
    CU_ASSERT_TRUE(okbf);
}

static void f16_and_bf16_should_round_random_floats_as_the_references(void)
{
    int ok16 = 1, okbf = 1;
    for (int i = 0; i < 4000000; i++) {
        uint32_t u = xorshift();
        /* half of them in fp16's range, where its rounding happens */
        if (i & 1)
            u = (u & 0x80ffffffu) | ((0x30u + (u >> 24) % 0x18u) << 24);
        float f = from_bits(u);
        ok16 &= f16_agrees(f);
        okbf &= bf16_agrees(f);
    }
    CU_ASSERT_TRUE(ok16);
    CU_ASSERT_TRUE(okbf);
}

int tu_add_half_convert_suite(void)
{
    CU_pSuite s = CU_add_suite("half_convert", NULL, NULL);
    if (!s)
        return -1;
    return (CU_add_test(s, "f16_and_bf16_should_round_special_values_as_the_references",
                        f16_and_bf16_should_round_special_values_as_the_references) &&
            CU_add_test(s, "f16_and_bf16_should_round_every_boundary_as_the_references",
                        f16_and_bf16_should_round_every_boundary_as_the_references) &&
            CU_add_test(s, "f16_and_bf16_should_round_random_floats_as_the_references",
                        f16_and_bf16_should_round_random_floats_as_the_references))
               ? 0
               : -1;
}
