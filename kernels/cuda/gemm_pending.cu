/* gemm_pending.cu — TEMPORARY: the lead deletes this file when the GEMM
 * family (gemm_mma.cu, gemm_cublas.cu) is merged. It only lets the library
 * link before then: every GEMM job answers XS_CUDA_UNSUPPORTED. */
#include <stdio.h>

#include "xs_cu.h"

int xs_cu_gemm_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz)
{
    (void)job;
    (void)res;
    snprintf(err, errsz, "GEMM kernels not built yet");
    return XS_CUDA_UNSUPPORTED;
}

int xs_cu_gemm_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz)
{
    (void)job;
    (void)max_err;
    snprintf(err, errsz, "GEMM kernels not built yet");
    return XS_CUDA_UNSUPPORTED;
}

void xs_cu_gemm_release(void) {}
