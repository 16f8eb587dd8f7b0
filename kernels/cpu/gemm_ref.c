/* gemm_ref.c — the plain GEMMs the timed kernels (gemm_f32.c, gemm_bf16.c)
 * are checked against, and answer with when their packing buffers cannot
 * be had: one dot product per element of C, in K order, fp32 sums. */
#include "cpu_gemm.h"

void xs_krn_gemm_f32_ref(int ta, int tb, size_t m, size_t n, size_t k, const float *A,
                         const float *B, float *C, int accumulate)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float s = 0;
            for (size_t p = 0; p < k; p++)
                s += A[xs_krn_a_index(ta, m, k, i, p)] * B[xs_krn_b_index(tb, n, k, p, j)];
            C[i * n + j] = accumulate ? C[i * n + j] + s : s;
        }
}

void xs_krn_gemm_bf16_ref(int ta, int tb, size_t m, size_t n, size_t k, const xs_bf16 *A,
                          const xs_bf16 *B, float *C, int accumulate)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float s = 0;
            for (size_t p = 0; p < k; p++)
                s += xs_bf16_to_f32(A[xs_krn_a_index(ta, m, k, i, p)]) *
                     xs_bf16_to_f32(B[xs_krn_b_index(tb, n, k, p, j)]);
            C[i * n + j] = accumulate ? C[i * n + j] + s : s;
        }
}
