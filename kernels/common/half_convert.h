/* half_convert.h — fp16 and bf16 storage as raw 16-bit patterns and their
 * conversions to and from fp32, written once with integer operations for
 * the CUDA kernels and the CPU references that check them: round to nearest
 * even on the way down (overflow to infinity, subnormals rounded, NaN kept
 * a quiet NaN with its sign and top payload bits), exact on the way up. */
#ifndef XS_HALF_CONVERT_H
#define XS_HALF_CONVERT_H

#include <stdint.h>
#include <string.h>

#include "xs_hd.h"

XS_HD uint32_t xs_f32_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

XS_HD float xs_bits_f32(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* bf16 is the top half of an fp32: add just under half of the dropped
 * part's unit plus the kept part's last bit (ties to even), then cut. */
XS_HD uint16_t xs_f32_to_bf16_bits(float f)
{
    uint32_t u = xs_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: set the quiet bit, keep the rest */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

XS_HD float xs_bf16_bits_to_f32(uint16_t h)
{
    return xs_bits_f32((uint32_t)h << 16);
}

/* fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; largest finite
 * 65504, smallest normal 2^-14, smallest subnormal 2^-24. */
XS_HD uint16_t xs_f32_to_f16_bits(float f)
{
    uint32_t u = xs_f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: quiet, the top 10 payload bits kept */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* >= 65520 (halfway from 65504 to 2^16) and Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) { /* a normal fp16: rebias the exponent by 127 - 15 */
        uint32_t r = a - 0x38000000u;
        r += 0xfffu + ((r >> 13) & 1u); /* a carry into the exponent is right */
        return (uint16_t)(sign | (r >> 13));
    }
    if (a <= 0x33000000u) /* <= 2^-25, half the smallest subnormal: ties to 0 */
        return (uint16_t)sign;
    /* a subnormal fp16, in units of 2^-24: the significand shifted right */
    uint32_t e = a >> 23; /* 102..112 */
    uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++; /* may reach 0x400, the smallest normal: the right pattern */
    return (uint16_t)(sign | q);
}

XS_HD float xs_f16_bits_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu)
        return xs_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e != 0)
        return xs_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    if (m == 0)
        return xs_bits_f32(sign);
    int ex = 1; /* subnormal: m 2^-24, normalised */
    while (!(m & 0x400u)) {
        m <<= 1;
        ex--;
    }
    return xs_bits_f32(sign | ((uint32_t)(ex + 112) << 23) | ((m & 0x3ffu) << 13));
}

#endif
