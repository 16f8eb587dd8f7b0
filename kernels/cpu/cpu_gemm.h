/* cpu_gemm.h — matrix multiplication on the CPU, in a plain reference and the
 * timed versions:
 *   bf16 x bf16 -> fp32: AMX tiles where the CPU and OS allow them, else
 *   AVX512-BF16 (VDPBF16PS), else a portable loop; fp32 accumulation.
 *   fp32 x fp32 -> fp32: AVX-512 FMA, else a portable loop.
 * C[m x n] = op(A)[m x k] op(B)[k x n] (+ C when accumulate), row-major and
 * contiguous; ta: A is stored k x m; tb: B is stored n x k. Correct for any
 * shape (edges are zero-padded when packing); multi-threaded with OpenMP. */
#ifndef XS_KRN_GEMM_H
#define XS_KRN_GEMM_H

#include <stddef.h>

#include "bf16.h"

void xs_krn_gemm_bf16(int ta, int tb, size_t m, size_t n, size_t k, const xs_bf16 *A,
                      const xs_bf16 *B, float *C, int accumulate, int threads);
void xs_krn_gemm_bf16_ref(int ta, int tb, size_t m, size_t n, size_t k, const xs_bf16 *A,
                          const xs_bf16 *B, float *C, int accumulate);

void xs_krn_gemm_f32(int ta, int tb, size_t m, size_t n, size_t k, const float *A,
                     const float *B, float *C, int accumulate, int threads);
void xs_krn_gemm_f32_ref(int ta, int tb, size_t m, size_t n, size_t k, const float *A,
                         const float *B, float *C, int accumulate);

/* Where op(A)[i][p] and op(B)[p][j] are stored, under the layouts above. */
static inline size_t xs_krn_a_index(int ta, size_t m, size_t k, size_t i, size_t p)
{
    return ta ? p * m + i : i * k + p;
}

static inline size_t xs_krn_b_index(int tb, size_t n, size_t k, size_t p, size_t j)
{
    return tb ? j * k + p : p * n + j;
}

/* The path xs_krn_gemm_bf16 takes on this CPU: "amx", "avx512bf16", "portable". */
const char *xs_krn_gemm_bf16_path(void);

#endif
