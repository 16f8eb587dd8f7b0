/* onednn.h — oneDNN's matmul as the vendor reference our own GEMMs are
 * measured against (Debian libdnnl-dev). Built only where the header
 * exists; xs_dnnl_available() says whether it is in this binary. */
#ifndef XS_KRN_ONEDNN_H
#define XS_KRN_ONEDNN_H

#include <stddef.h>

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

#endif
