/* dtype.c — names and storage sizes of xs_dtype. */
#include "dtype.h"

const char *xs_dtype_name(xs_dtype t)
{
    static const char *names[XS_DTYPE_COUNT] = {"fp32", "tf32", "fp16", "bf16", "int8", "fp8"};
    return (unsigned)t < XS_DTYPE_COUNT ? names[t] : "?";
}

int xs_dtype_bytes(xs_dtype t)
{
    static const int bytes[XS_DTYPE_COUNT] = {4, 4, 2, 2, 1, 1};
    return (unsigned)t < XS_DTYPE_COUNT ? bytes[t] : 0;
}
