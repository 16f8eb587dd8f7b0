/* gemm_ops.cuh — what the GEMM family's files share: one product's operands
 * on the device, the own kernel's launcher (gemm_mma.cu) and cuBLAS's
 * (gemm_cublas.cu), both called by the job layer (gemm_job.cu). */
#ifndef XS_GEMM_OPS_CUH
#define XS_GEMM_OPS_CUH

#include <cuda_runtime.h>
#include <stddef.h>

/* Row-major C (m x n) = op(A) op(B) as xs_cuda.h defines it; lda, ldb, ldc
 * are row pitches in elements. dtype: xs_cuda_dtype. Pointers are device
 * memory owned by the caller (xs_cu_buffer slots). */
typedef struct {
    int dtype;
    int m, n, k, ta, tb;
    const void *a, *b;
    void *c;
    long long lda, ldb, ldc;
} xs_gemm_operands;

/* Own tensor-core GEMM (fp16, bf16). prepare: checks that this device can
 * run the operands (XS_CUDA_UNSUPPORTED with the reason otherwise), raises
 * the kernel's shared-memory limit and writes what will run into impl
 * (impl_sz bytes); launch: one kernel on `stream`, no sync, the launch's
 * error (cudaGetLastError). Call prepare once before launching. */
int xs_gemm_mma_prepare(const xs_gemm_operands *op, char *impl, size_t impl_sz, char *err, size_t errsz);
cudaError_t xs_gemm_mma_launch(const xs_gemm_operands *op, cudaStream_t stream);

/* cuBLAS reference (every dtype). prepare: the handle and workspace for the
 * current device (created once, kept until xs_gemm_cublas_release), the
 * device's support of the dtype, impl. launch: binds the handle and its
 * workspace to `stream` and calls cublasGemmEx; a cuBLAS failure returns
 * cudaErrorUnknown and leaves its status in *status (CUBLAS_STATUS_SUCCESS
 * otherwise) for xs_gemm_cublas_explain. */
int xs_gemm_cublas_prepare(const xs_gemm_operands *op, char *impl, size_t impl_sz, char *err, size_t errsz);
cudaError_t xs_gemm_cublas_launch(const xs_gemm_operands *op, cudaStream_t stream, int *status);
/* err = "cublasGemmEx(...): NAME: description" for a failed status;
 * returns XS_CUDA_UNSUPPORTED for the not-supported/arch-mismatch statuses,
 * XS_CUDA_FAILED otherwise. */
int xs_gemm_cublas_explain(const xs_gemm_operands *op, int status, char *err, size_t errsz);
void xs_gemm_cublas_release(void);

#endif
