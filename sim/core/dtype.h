/* dtype.h — numeric formats a matrix engine or a kernel runs in. */
#ifndef XS_DTYPE_H
#define XS_DTYPE_H

typedef enum { XS_FP32, XS_TF32, XS_FP16, XS_BF16, XS_INT8, XS_FP8, XS_DTYPE_COUNT } xs_dtype;

/* "fp32", "tf32", ... */
const char *xs_dtype_name(xs_dtype t);
/* Bytes one element occupies in memory (tf32 is stored as fp32). */
int xs_dtype_bytes(xs_dtype t);

#endif
