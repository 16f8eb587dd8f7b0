/* gemm_job.cu — the GEMM family's jobs (XS_CJ_GEMM, XS_CJ_GEMM_CUBLAS):
 * operands in xs_cu_buffer slots 8..11, the check's unaligned copies in
 * 12..14 (runtime.cu's other families use 0..7), seeded data converted on the GPU to the input type, timing through
 * xs_cu_time, and the check against a double-precision product of the very
 * inputs the GPU used (copied back). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ops.cuh"
#include "gemm_plan.h"
#include "xs_cu.h"

namespace {

/* Slots: A, B, C, and the fp32 values the fp16/bf16 operands are made from. */
enum { XS_SLOT_A = 8, XS_SLOT_B = 9, XS_SLOT_C = 10, XS_SLOT_F32 = 11 };

/* Values in [-1, 1): products stay well inside fp16's range at any k the
 * check allows, and random signs make cancellation (and wrong indexing)
 * show. */
const float XS_LO = -1.0f, XS_HI = 1.0f;


int xs_in_bytes(int dtype) { return dtype == XS_CD_FP16 || dtype == XS_CD_BF16 ? 2 : 4; }

template <typename T> __device__ T xs_from_f32(float x);
template <> __device__ __half xs_from_f32<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __nv_bfloat16 xs_from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <typename T> __global__ void xs_convert_kernel(T *dst, const float *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = xs_from_f32<T>(src[i]);
}

/* A job's operands, validated; lda/ldb/ldc tight (the rows as stored). */
int xs_operands_of(const xs_cuda_job *job, xs_gemm_operands *op, char *err, size_t errsz)
{
    const long long lim = INT_MAX;
    if (job->kind != XS_CJ_GEMM && job->kind != XS_CJ_GEMM_CUBLAS) {
        snprintf(err, errsz, "GEMM job: kind %d: XS_CJ_GEMM or XS_CJ_GEMM_CUBLAS expected", job->kind);
        return XS_CUDA_BADJOB;
    }
    if (job->dtype < 0 || job->dtype >= XS_CD_COUNT) {
        snprintf(err, errsz, "GEMM job: dtype %d: 0..%d expected", job->dtype, XS_CD_COUNT - 1);
        return XS_CUDA_BADJOB;
    }
    const char *names[3] = {"m", "n", "k"};
    long long v[3] = {job->m, job->n, job->k};
    for (int i = 0; i < 3; i++)
        if (v[i] < 1 || v[i] > lim) {
            snprintf(err, errsz, "GEMM job: %s %lld: 1..%lld expected", names[i], v[i], lim);
            return XS_CUDA_BADJOB;
        }
    if ((job->ta != 0 && job->ta != 1) || (job->tb != 0 && job->tb != 1)) {
        snprintf(err, errsz, "GEMM job: ta %d, tb %d: 0 or 1 expected", job->ta, job->tb);
        return XS_CUDA_BADJOB;
    }
    memset(op, 0, sizeof *op);
    op->dtype = job->dtype;
    op->m = (int)job->m;
    op->n = (int)job->n;
    op->k = (int)job->k;
    op->ta = job->ta;
    op->tb = job->tb;
    xs_gemm_row_lds(op->m, op->n, op->k, op->ta, op->tb, &op->lda, &op->ldb, &op->ldc);
    return XS_CUDA_OK;
}

/* n elements of `dtype` from the seeded sequence into `dst`. */
int xs_fill(void *dst, size_t n, int dtype, unsigned seed, char *err, size_t errsz)
{
    /* xs_cu_fill_f32 promises the values, not the stream they are written
     * on: wait for them before the conversion or the timed calls read them */
    if (dtype == XS_CD_FP32 || dtype == XS_CD_TF32) {
        int rc = xs_cu_fill_f32(static_cast<float *>(dst), n, seed, XS_LO, XS_HI, err, errsz);
        if (rc == XS_CUDA_OK)
            XS_CU_TRY(cudaDeviceSynchronize());
        return rc;
    }
    float *f = static_cast<float *>(xs_cu_buffer(XS_SLOT_F32, n * sizeof(float), err, errsz));
    if (!f)
        return XS_CUDA_FAILED;
    int rc = xs_cu_fill_f32(f, n, seed, XS_LO, XS_HI, err, errsz);
    if (rc != XS_CUDA_OK)
        return rc;
    XS_CU_TRY(cudaDeviceSynchronize());
    size_t blocks = (n + 255) / 256;
    unsigned grid = (unsigned)(blocks < 65535 ? blocks : 65535);
    if (dtype == XS_CD_FP16)
        xs_convert_kernel<__half><<<grid, 256>>>(static_cast<__half *>(dst), f, n);
    else
        xs_convert_kernel<__nv_bfloat16><<<grid, 256>>>(static_cast<__nv_bfloat16 *>(dst), f, n);
    XS_CU_TRY(cudaGetLastError());
    XS_CU_TRY(cudaDeviceSynchronize());
    return XS_CUDA_OK;
}

/* Buffers for the operands and seeded A, B (C left as it is). */
int xs_setup(xs_gemm_operands *op, unsigned seed, char *err, size_t errsz)
{
    size_t in = (size_t)xs_in_bytes(op->dtype);
    size_t na = (size_t)op->m * op->k, nb = (size_t)op->k * op->n, nc = (size_t)op->m * op->n;
    void *a = xs_cu_buffer(XS_SLOT_A, na * in, err, errsz);
    void *b = a ? xs_cu_buffer(XS_SLOT_B, nb * in, err, errsz) : nullptr;
    void *c = b ? xs_cu_buffer(XS_SLOT_C, nc * in, err, errsz) : nullptr;
    if (!c)
        return XS_CUDA_FAILED;
    op->a = a;
    op->b = b;
    op->c = c;
    int rc = xs_fill(a, na, op->dtype, seed, err, errsz);
    if (rc == XS_CUDA_OK)
        rc = xs_fill(b, nb, op->dtype, seed + 1, err, errsz);
    return rc;
}

struct xs_call_ctx {
    xs_gemm_operands op;
    int cublas;
    int blas_status;
};

cudaError_t xs_gemm_call(void *vctx, cudaStream_t stream)
{
    xs_call_ctx *ctx = static_cast<xs_call_ctx *>(vctx);
    if (ctx->cublas)
        return xs_gemm_cublas_launch(&ctx->op, stream, &ctx->blas_status);
    return xs_gemm_mma_launch(&ctx->op, stream);
}

int xs_prepare(xs_call_ctx *ctx, char *impl, size_t impl_sz, char *err, size_t errsz)
{
    return ctx->cublas ? xs_gemm_cublas_prepare(&ctx->op, impl, impl_sz, err, errsz)
                       : xs_gemm_mma_prepare(&ctx->op, impl, impl_sz, err, errsz);
}

/* A cuBLAS failure inside a call reads better in cuBLAS's words. */
int xs_call_failed(const xs_call_ctx *ctx, int rc, char *err, size_t errsz)
{
    if (ctx->cublas && ctx->blas_status != 0)
        return xs_gemm_cublas_explain(&ctx->op, ctx->blas_status, err, errsz);
    return rc;
}

double xs_to_double(const unsigned char *p, size_t i, int dtype)
{
    if (dtype == XS_CD_FP16) {
        __half h;
        memcpy(&h, p + 2 * i, 2);
        return (double)__half2float(h);
    }
    if (dtype == XS_CD_BF16) {
        __nv_bfloat16 h;
        memcpy(&h, p + 2 * i, 2);
        return (double)__bfloat162float(h);
    }
    float f;
    memcpy(&f, p + 4 * i, 4);
    return (double)f;
}

/* A device array of n elements as doubles (malloc'd; NULL on failure). */
double *xs_fetch(const void *d, size_t n, int dtype, char *err, size_t errsz, int *rc)
{
    size_t bytes = n * (size_t)xs_in_bytes(dtype);
    unsigned char *raw = static_cast<unsigned char *>(malloc(bytes));
    double *out = static_cast<double *>(malloc(n * sizeof(double)));
    if (!raw || !out) {
        free(raw);
        free(out);
        snprintf(err, errsz, "GEMM check: out of host memory for %zu elements", n);
        *rc = XS_CUDA_FAILED;
        return nullptr;
    }
    cudaError_t e = cudaMemcpy(raw, d, bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        free(raw);
        free(out);
        *rc = xs_cu_fail(e, "cudaMemcpy(GEMM operand to host)", err, errsz);
        return nullptr;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = xs_to_double(raw, i, dtype);
    free(raw);
    *rc = XS_CUDA_OK;
    return out;
}

} /* namespace */

int xs_cu_gemm_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz)
{
    xs_call_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    int rc = xs_operands_of(job, &ctx.op, err, errsz);
    if (rc != XS_CUDA_OK)
        return rc;
    ctx.cublas = job->kind == XS_CJ_GEMM_CUBLAS;
    char impl[sizeof res->impl];
    /* refuse an unsupported job before touching memory */
    if ((rc = xs_prepare(&ctx, impl, sizeof impl, err, errsz)) != XS_CUDA_OK)
        return rc;
    if ((rc = xs_setup(&ctx.op, 1234u, err, errsz)) != XS_CUDA_OK)
        return rc;
    /* prepare again: the kernel's shared-memory attribute and the handle
     * are set; the operands' alignment (impl's "scalar-loads") is known
     * only now */
    if ((rc = xs_prepare(&ctx, impl, sizeof impl, err, errsz)) != XS_CUDA_OK)
        return rc;
    rc = xs_cu_time(job, xs_gemm_call, &ctx, res, err, errsz);
    if (rc != XS_CUDA_OK)
        return xs_call_failed(&ctx, rc, err, errsz);
    double in = xs_in_bytes(ctx.op.dtype), m = ctx.op.m, n = ctx.op.n, k = ctx.op.k;
    res->flops = 2.0 * m * n * k;
    /* compulsory traffic: A and B read once, C written once (C has the
     * input's type: 2 bytes for fp16/bf16, 4 for fp32/tf32) */
    res->bytes = (m * k + k * n) * in + m * n * in;
    /* the own kernel is one launch; cuBLAS's default algorithm is one
     * kernel at these shapes unless it picks split-K with a separate
     * reduction, which the library does not report */
    res->launches = 1;
    snprintf(res->impl, sizeof res->impl, "%s", impl);
    return XS_CUDA_OK;
}

namespace {

/* One call with C poisoned first: all-ones bits are NaN in fp16, bf16 and
 * fp32, so an element the kernel did not write fails the comparison. */
int xs_run_poisoned(xs_call_ctx *ctx, char *err, size_t errsz)
{
    size_t nc = (size_t)ctx->op.m * ctx->op.n, in = (size_t)xs_in_bytes(ctx->op.dtype);
    XS_CU_TRY(cudaMemset(ctx->op.c, 0xff, nc * in));
    XS_CU_TRY(cudaDeviceSynchronize());
    cudaError_t e = xs_gemm_call(ctx, 0);
    if (e != cudaSuccess)
        return xs_call_failed(ctx, xs_cu_fail(e, "GEMM check: launch", err, errsz), err, errsz);
    XS_CU_TRY(cudaDeviceSynchronize());
    return XS_CUDA_OK;
}

/* max over C of |gpu - ref| / tol (gemm_plan.h states tol); NaN or an
 * infinity anywhere gives +inf. */
int xs_compare(const xs_call_ctx *ctx, const double *ref, const double *sabs, double *worst, char *err, size_t errsz)
{
    size_t nc = (size_t)ctx->op.m * ctx->op.n;
    int rc;
    double *c = xs_fetch(ctx->op.c, nc, ctx->op.dtype, err, errsz, &rc);
    if (!c)
        return rc;
    for (size_t i = 0; i < nc; i++) {
        double d = fabs(c[i] - ref[i]) / xs_gemm_tolerance(ctx->op.dtype, ctx->op.k, ref[i], sabs[i]);
        if (!(d <= *worst))
            *worst = isnan(d) ? INFINITY : d;
    }
    free(c);
    return XS_CUDA_OK;
}

/* The own kernel once more on the same values with A, B and C one element
 * past a 16-byte boundary (slots 12..14): every chunk takes the element
 * path and every store the single one, which the aligned shapes of the
 * first pass never reach. */
int xs_check_unaligned(const xs_call_ctx *ctx, const double *ref, const double *sabs, double *worst, char *err,
                       size_t errsz)
{
    xs_call_ctx u = *ctx;
    size_t in = (size_t)xs_in_bytes(ctx->op.dtype);
    size_t bytes[3] = {(size_t)ctx->op.m * ctx->op.k * in, (size_t)ctx->op.k * ctx->op.n * in,
                       (size_t)ctx->op.m * ctx->op.n * in};
    unsigned char *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = static_cast<unsigned char *>(xs_cu_buffer(12 + i, bytes[i] + 16, err, errsz));
        if (!p[i])
            return XS_CUDA_FAILED;
        p[i] += in;
    }
    XS_CU_TRY(cudaMemcpy(p[0], ctx->op.a, bytes[0], cudaMemcpyDeviceToDevice));
    XS_CU_TRY(cudaMemcpy(p[1], ctx->op.b, bytes[1], cudaMemcpyDeviceToDevice));
    u.op.a = p[0];
    u.op.b = p[1];
    u.op.c = p[2];
    char impl[64];
    int rc = xs_prepare(&u, impl, sizeof impl, err, errsz);
    if (rc == XS_CUDA_OK)
        rc = xs_run_poisoned(&u, err, errsz);
    if (rc == XS_CUDA_OK)
        rc = xs_compare(&u, ref, sabs, worst, err, errsz);
    return rc;
}

} /* namespace */

int xs_cu_gemm_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz)
{
    xs_call_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    *max_err = INFINITY;
    int rc = xs_operands_of(job, &ctx.op, err, errsz);
    if (rc != XS_CUDA_OK)
        return rc;
    double mnk = (double)job->m * (double)job->n * (double)job->k;
    if (mnk > (double)XS_GEMM_CHECK_MAX_MNK) {
        snprintf(err, errsz, "GEMM check: m n k = %.0f: at most 2^30 expected (the reference runs on the CPU)", mnk);
        return XS_CUDA_BADJOB;
    }
    ctx.cublas = job->kind == XS_CJ_GEMM_CUBLAS;
    char impl[64];
    if ((rc = xs_prepare(&ctx, impl, sizeof impl, err, errsz)) != XS_CUDA_OK)
        return rc;
    /* fresh inputs for each shape; a seed of its own, not the timed one's */
    unsigned seed = 977u + (unsigned)(job->m * 31 + job->n * 17 + job->k * 7 + job->ta * 3 + job->tb);
    if ((rc = xs_setup(&ctx.op, seed, err, errsz)) != XS_CUDA_OK)
        return rc;
    if ((rc = xs_prepare(&ctx, impl, sizeof impl, err, errsz)) != XS_CUDA_OK)
        return rc;
    if ((rc = xs_run_poisoned(&ctx, err, errsz)) != XS_CUDA_OK)
        return rc;

    size_t nc = (size_t)ctx.op.m * ctx.op.n;
    double *a = xs_fetch(ctx.op.a, (size_t)ctx.op.m * ctx.op.k, ctx.op.dtype, err, errsz, &rc);
    double *b = a ? xs_fetch(ctx.op.b, (size_t)ctx.op.k * ctx.op.n, ctx.op.dtype, err, errsz, &rc) : nullptr;
    double *ref = b ? static_cast<double *>(malloc(nc * sizeof(double))) : nullptr;
    double *sabs = ref ? static_cast<double *>(malloc(nc * sizeof(double))) : nullptr;
    if (!sabs) {
        if (b) {
            snprintf(err, errsz, "GEMM check: out of host memory for %zu elements", nc);
            rc = XS_CUDA_FAILED;
        }
        free(a), free(b), free(ref);
        return rc;
    }
    xs_gemm_ref_rowmajor(ctx.op.m, ctx.op.n, ctx.op.k, ctx.op.ta, ctx.op.tb, a, ctx.op.lda, b, ctx.op.ldb, ref, sabs,
                         ctx.op.ldc);
    double worst = 0;
    rc = xs_compare(&ctx, ref, sabs, &worst, err, errsz);
    if (rc == XS_CUDA_OK && !ctx.cublas)
        rc = xs_check_unaligned(&ctx, ref, sabs, &worst, err, errsz);
    if (rc == XS_CUDA_OK)
        *max_err = worst;
    free(a), free(b), free(ref), free(sabs);
    return rc;
}

void xs_cu_gemm_release(void) { xs_gemm_cublas_release(); }
