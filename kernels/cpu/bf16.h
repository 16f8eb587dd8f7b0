/* bf16.h — bfloat16 storage (the top 16 bits of an fp32) and conversions:
 * round to nearest even on the way down, exact on the way up. */
#ifndef XS_BF16_H
#define XS_BF16_H

#include <stdint.h>
#include <string.h>

typedef uint16_t xs_bf16;

static inline float xs_bf16_to_f32(xs_bf16 h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline xs_bf16 xs_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays a (quiet) NaN */
        return (xs_bf16)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1); /* round to nearest, ties to even */
    return (xs_bf16)(u >> 16);
}

#endif
