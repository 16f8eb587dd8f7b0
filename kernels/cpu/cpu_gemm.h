/* cpu_gemm.h — matrix multiplication on the CPU, in a plain reference and the
 * timed versions, by kernel set (cpu_features.h):
 *   bf16 x bf16 -> fp32: AMX tiles where the CPU and OS allow them, else
 *   AVX512-BF16 (VDPBF16PS); fp32 accumulation. Sets without a bf16 unit
 *   convert the operands to fp32 while packing them (exact) and run the
 *   fp32 kernel: bf16 emulated on the fp32 FMA units.
 *   fp32 x fp32 -> fp32: AVX-512 FMA, AVX2 + FMA, NEON, else a portable loop.
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

/* The bf16 GEMM of a set without a bf16 unit: xs_krn_gemm_bf16 calls it
 * there; callable everywhere (the tests run it on every set). */
void xs_krn_gemm_bf16_on_f32(int ta, int tb, size_t m, size_t n, size_t k, const xs_bf16 *A,
                             const xs_bf16 *B, float *C, int accumulate, int threads);

/* Where op(A)[i][p] and op(B)[p][j] are stored, under the layouts above. */
static inline size_t xs_krn_a_index(int ta, size_t m, size_t k, size_t i, size_t p)
{
    return ta ? p * m + i : i * k + p;
}

static inline size_t xs_krn_b_index(int tb, size_t n, size_t k, size_t p, size_t j)
{
    return tb ? j * k + p : p * n + j;
}

/* The path xs_krn_gemm_bf16 takes on this CPU: "amx", "avx512bf16", or
 * "fp32-SET" (emulated on SET's fp32 kernel). */
const char *xs_krn_gemm_bf16_path(void);

/* The fp32 micro-kernel in force: "avx512 fma 8x32", "avx2 fma 6x16",
 * "neon fma 8x8" or "portable". */
const char *xs_krn_gemm_f32_path(void);

#endif
