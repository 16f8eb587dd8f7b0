/* gemm_cublas.cu — the reference GEMM (XS_CJ_GEMM_CUBLAS): cublasGemmEx on
 * the same row-major operands as the own kernel, fp16/bf16 (fp32 compute,
 * C in the input type), tf32 (fp32 data, CUBLAS_COMPUTE_32F_FAST_TF32) and
 * fp32 (CUBLAS_COMPUTE_32F), alpha 1, beta 0, the default algorithm with
 * tensor ops (CUBLAS_GEMM_DEFAULT_TENSOR_OP). The row-major -> column-major
 * mapping is xs_gemm_to_colmajor (kernels/common/gemm_plan.h), proven on
 * the CPU by tests/test_gemm_plan.c.
 *
 * The workspace is set explicitly, the size PyTorch gives its handles:
 * 32 MiB on compute capability 9.x and newer, else 4096 x 2 + 16 x 8 KiB
 * (":4096:2:16:8"; pytorch/pytorch aten/src/ATen/cuda/CublasHandlePool.cpp,
 * getDefaultWorkspaceSize; cuBLAS docs, cublasSetWorkspace, recommend
 * 32 MiB on Hopper: https://docs.nvidia.com/cuda/cublas/#cublassetworkspace),
 * so cuBLAS runs as it does under a training step. cublasSetStream resets
 * the workspace to cuBLAS's default pool (cuBLAS docs, cublasSetStream), so
 * the workspace is set again each time the handle is bound to a stream. */
#include <cublas_v2.h>
#include <stdio.h>

#include "gemm_ops.cuh"
#include "gemm_plan.h"
#include "xs_cu.h"

namespace {

struct xs_cublas_state {
    cublasHandle_t handle;
    int device;           /* the device the handle and workspace belong to */
    void *workspace;
    size_t workspace_bytes;
    cudaStream_t bound;   /* the stream the handle was last bound to */
    int is_bound;
};
xs_cublas_state g_blas = {nullptr, -1, nullptr, 0, nullptr, 0};

size_t xs_workspace_bytes(int cc_major)
{
    return cc_major >= 9 ? (size_t)32 << 20 : (size_t)(4096 * 2 + 16 * 8) << 10;
}

const char *xs_dtype_name(int dtype)
{
    static const char *names[] = {"fp32", "tf32", "fp16", "bf16"};
    return dtype >= 0 && dtype < XS_CD_COUNT ? names[dtype] : "?";
}

/* Data type, compute type of one dtype. */
void xs_types(int dtype, cudaDataType_t *data, cublasComputeType_t *compute)
{
    *data = dtype == XS_CD_FP16 ? CUDA_R_16F : dtype == XS_CD_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    *compute = dtype == XS_CD_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

int xs_blas_fail(cublasStatus_t s, const char *what, char *err, size_t errsz)
{
    snprintf(err, errsz, "%s: %s: %s", what, cublasGetStatusName(s), cublasGetStatusString(s));
    return s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH ? XS_CUDA_UNSUPPORTED
                                                                                : XS_CUDA_FAILED;
}

#define XS_BLAS_TRY(call)                                    \
    do {                                                     \
        cublasStatus_t xs_s_ = (call);                       \
        if (xs_s_ != CUBLAS_STATUS_SUCCESS)                  \
            return xs_blas_fail(xs_s_, #call, err, errsz);   \
    } while (0)

} /* namespace */

void xs_gemm_cublas_release(void)
{
    /* cuBLAS must not be destroyed after the context is: the caller
     * releases before it resets or exits */
    if (g_blas.handle)
        cublasDestroy(g_blas.handle);
    if (g_blas.workspace)
        cudaFree(g_blas.workspace);
    g_blas = xs_cublas_state{nullptr, -1, nullptr, 0, nullptr, 0};
}

int xs_gemm_cublas_prepare(const xs_gemm_operands *op, char *impl, size_t impl_sz, char *err, size_t errsz)
{
    const cudaDeviceProp *pr = xs_cu_props();
    if (op->dtype < 0 || op->dtype >= XS_CD_COUNT) {
        snprintf(err, errsz, "cuBLAS GEMM: dtype %d: 0..%d expected", op->dtype, XS_CD_COUNT - 1);
        return XS_CUDA_BADJOB;
    }
    /* Turing has no tf32 or bf16 tensor cores: cuBLAS would run something
     * else (fp32 for tf32) and the figure would not be what it is called. */
    if ((op->dtype == XS_CD_TF32 || op->dtype == XS_CD_BF16) && pr->major < 8) {
        snprintf(err, errsz, "cuBLAS GEMM: %s on compute capability %d.%d: its tensor cores need 8.0 or newer",
                 xs_dtype_name(op->dtype), pr->major, pr->minor);
        return XS_CUDA_UNSUPPORTED;
    }
    int dev;
    XS_CU_TRY(cudaGetDevice(&dev));
    if (g_blas.handle && g_blas.device != dev)
        xs_gemm_cublas_release();
    if (!g_blas.handle) {
        size_t ws = xs_workspace_bytes(pr->major);
        void *w = nullptr;
        XS_CU_TRY(cudaMalloc(&w, ws));
        g_blas.workspace = w;
        g_blas.workspace_bytes = ws;
        cublasStatus_t s = cublasCreate(&g_blas.handle);
        if (s != CUBLAS_STATUS_SUCCESS) {
            g_blas.handle = nullptr;
            xs_gemm_cublas_release();
            return xs_blas_fail(s, "cublasCreate", err, errsz);
        }
        g_blas.device = dev;
        g_blas.is_bound = 0;
        /* the compute type alone decides tf32: no math-mode override */
        XS_BLAS_TRY(cublasSetMathMode(g_blas.handle, CUBLAS_DEFAULT_MATH));
        XS_BLAS_TRY(cublasSetPointerMode(g_blas.handle, CUBLAS_POINTER_MODE_HOST));
    }
    snprintf(impl, impl_sz, "cublasGemmEx %s algo default-tensor-op ws %zuKiB", xs_dtype_name(op->dtype),
             g_blas.workspace_bytes >> 10);
    return XS_CUDA_OK;
}

cudaError_t xs_gemm_cublas_launch(const xs_gemm_operands *op, cudaStream_t stream, int *status)
{
    *status = CUBLAS_STATUS_SUCCESS;
    if (!g_blas.handle) {
        *status = CUBLAS_STATUS_NOT_INITIALIZED;
        return cudaErrorUnknown;
    }
    cublasStatus_t s;
    if (!g_blas.is_bound || g_blas.bound != stream) {
        s = cublasSetStream(g_blas.handle, stream);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasSetWorkspace(g_blas.handle, g_blas.workspace, g_blas.workspace_bytes);
        if (s != CUBLAS_STATUS_SUCCESS) {
            *status = (int)s;
            return cudaErrorUnknown;
        }
        g_blas.bound = stream;
        g_blas.is_bound = 1;
    }
    xs_gemm_colmajor c =
        xs_gemm_to_colmajor(op->m, op->n, op->k, op->ta, op->tb, op->lda, op->ldb, op->ldc);
    cudaDataType_t data;
    cublasComputeType_t compute;
    xs_types(op->dtype, &data, &compute);
    /* C keeps the input type for fp16/bf16; fp32 for fp32 and tf32 */
    const float alpha = 1.0f, beta = 0.0f;
    s = cublasGemmEx(g_blas.handle, c.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N,
                     c.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N, (int)c.m, (int)c.n, (int)c.k, &alpha, op->b, data,
                     (int)c.ld_first, op->a, data, (int)c.ld_second, &beta, op->c, data, (int)c.ldc, compute,
                     CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    if (s != CUBLAS_STATUS_SUCCESS) {
        *status = (int)s;
        return cudaErrorUnknown;
    }
    return cudaGetLastError();
}

int xs_gemm_cublas_explain(const xs_gemm_operands *op, int status, char *err, size_t errsz)
{
    char what[160];
    snprintf(what, sizeof what, "cublasGemmEx(%s, m %d, n %d, k %d, ta %d, tb %d)", xs_dtype_name(op->dtype), op->m,
             op->n, op->k, op->ta, op->tb);
    return xs_blas_fail((cublasStatus_t)status, what, err, errsz);
}
