/* onednn.h — oneDNN's matmul as the vendor reference our own GEMMs are
 * measured against (Debian libdnnl-dev). Built only where the header
 * exists; xs_dnnl_available() says whether it is in this binary. */
#ifndef XS_KRN_ONEDNN_H
#define XS_KRN_ONEDNN_H

#include <stddef.h>

#include "cpu_features.h"

typedef struct xs_dnnl_matmul xs_dnnl_matmul;

int xs_dnnl_available(void);

/* Prepare C[m x n] (fp32) = A[m x k] B[k x n], row-major, inputs in bf16
 * (bf16 != 0) or fp32. The buffers must stay alive until free. NULL when
 * oneDNN is not built in or refuses the shape. */
xs_dnnl_matmul *xs_dnnl_matmul_create(int bf16, size_t m, size_t n, size_t k, const void *A,
                                      const void *B, float *C);
/* Run it once and wait; 0 on success. */
int xs_dnnl_matmul_run(xs_dnnl_matmul *mm);
void xs_dnnl_matmul_free(xs_dnnl_matmul *mm);
/* The implementation oneDNN chose for it ("brg:avx512_core", "ref:any"). */
const char *xs_dnnl_matmul_impl(const xs_dnnl_matmul *mm);

/* Hold oneDNN to the instruction set of kernel set isa, so that the two
 * are compared on the same vector units (XS_CPU_ISA=avx2: oneDNN's AVX2
 * kernels). Must come before the first matmul is created. The name of
 * oneDNN's level, or NULL when oneDNN is not built in or refuses. */
const char *xs_dnnl_limit_isa(xs_cpu_isa isa);

#endif
