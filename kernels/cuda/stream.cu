/* stream.cu — the launch, copy and triad kernels: what a launch costs and
 * what bandwidth the memory gives a plain streaming kernel, the ceilings
 * the optimizer and row kernels are measured against.
 * Bytes per call by definition (each element read once, written once; a
 * full-sector GPU store reads nothing first):
 *   launch 0; copy b = a: 8 per element; triad a = b + s c: 12 per element. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "check.cuh"
#include "xs_cu.h"

#define STREAM_THREADS 256
#define TRIAD_SCALAR 3.0f

__global__ void xs_empty_kernel(void) {}

/* float4 when both pointers are 16-byte aligned, the rest one by one; a
 * grid-stride loop over 64-bit indices. */
__global__ void __launch_bounds__(STREAM_THREADS) xs_copy_kernel(float *b, const float *a, size_t n)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t done = 0;
    if ((((uintptr_t)a | (uintptr_t)b) & 15) == 0) {
        size_t n4 = n / 4;
        const float4 *a4 = reinterpret_cast<const float4 *>(a);
        float4 *b4 = reinterpret_cast<float4 *>(b);
        for (size_t i = tid; i < n4; i += stride)
            b4[i] = a4[i];
        done = n4 * 4;
    }
    for (size_t i = done + tid; i < n; i += stride)
        b[i] = a[i];
}

__global__ void __launch_bounds__(STREAM_THREADS)
    xs_triad_kernel(float *a, const float *b, const float *c, float s, size_t n)
{
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t done = 0;
    if ((((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) & 15) == 0) {
        size_t n4 = n / 4;
        const float4 *b4 = reinterpret_cast<const float4 *>(b);
        const float4 *c4 = reinterpret_cast<const float4 *>(c);
        float4 *a4 = reinterpret_cast<float4 *>(a);
        for (size_t i = tid; i < n4; i += stride) {
            float4 x = b4[i], y = c4[i];
            a4[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
        }
        done = n4 * 4;
    }
    for (size_t i = done + tid; i < n; i += stride)
        a[i] = b[i] + s * c[i];
}

typedef struct {
    int kind, launches, grid;
    float *a, *b, *c;
    size_t n;
} stream_ctx;

static cudaError_t stream_call(void *vctx, cudaStream_t st)
{
    stream_ctx *x = (stream_ctx *)vctx;
    switch (x->kind) {
    case XS_CJ_LAUNCH:
        for (int i = 0; i < x->launches; i++) {
            xs_empty_kernel<<<1, 1, 0, st>>>();
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess)
                return e;
        }
        return cudaSuccess;
    case XS_CJ_COPY:
        xs_copy_kernel<<<x->grid, STREAM_THREADS, 0, st>>>(x->b, x->a, x->n);
        return cudaGetLastError();
    default:
        xs_triad_kernel<<<x->grid, STREAM_THREADS, 0, st>>>(x->a, x->b, x->c, TRIAD_SCALAR, x->n);
        return cudaGetLastError();
    }
}

static int grid_for(int kind, size_t n)
{
    const void *k = kind == XS_CJ_COPY ? (const void *)xs_copy_kernel : (const void *)xs_triad_kernel;
    return xs_cu_fill_grid(k, STREAM_THREADS, (long long)((n / 4 + STREAM_THREADS) / STREAM_THREADS));
}

int xs_cu_stream_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz)
{
    stream_ctx x;
    memset(&x, 0, sizeof x);
    x.kind = job->kind;
    if (job->kind == XS_CJ_LAUNCH) {
        /* one call is the whole batch of `reps` launches, timed together */
        xs_cuda_job once = *job;
        once.reps = 1;
        x.launches = job->reps;
        int rc = xs_cu_time(&once, stream_call, &x, res, err, errsz);
        if (rc)
            return rc;
        if (job->sustain_s == 0) {
            double batch = res->time_s[0];
            for (int i = 0; i < job->reps; i++)
                res->time_s[i] = batch / job->reps;
            res->reps = job->reps;
        }
        res->launches = job->reps;
        snprintf(res->impl, sizeof res->impl, "empty kernel <<<1,1>>> x %d", job->reps);
        return XS_CUDA_OK;
    }
    x.n = (size_t)job->elems;
    size_t bytes = x.n * sizeof(float);
    if (!(x.a = (float *)xs_cu_buffer(0, bytes, err, errsz)) ||
        !(x.b = (float *)xs_cu_buffer(1, bytes, err, errsz)))
        return XS_CUDA_FAILED;
    if (job->kind == XS_CJ_TRIAD && !(x.c = (float *)xs_cu_buffer(2, bytes, err, errsz)))
        return XS_CUDA_FAILED;
    int rc;
    if ((rc = xs_cu_fill_f32(x.a, x.n, 1, -1, 1, err, errsz)) ||
        (rc = xs_cu_fill_f32(x.b, x.n, 2, -1, 1, err, errsz)) ||
        (x.c && (rc = xs_cu_fill_f32(x.c, x.n, 3, -1, 1, err, errsz))))
        return rc;
    x.grid = grid_for(job->kind, x.n);
    if ((rc = xs_cu_time(job, stream_call, &x, res, err, errsz)))
        return rc;
    res->bytes = (job->kind == XS_CJ_COPY ? 8.0 : 12.0) * (double)x.n;
    res->launches = 1;
    snprintf(res->impl, sizeof res->impl, "%s float4 grid-stride %dx%d",
             job->kind == XS_CJ_COPY ? "copy" : "triad", x.grid, STREAM_THREADS);
    return XS_CUDA_OK;
}

/* Copy and triad once on seeded data at the job's size (at most
 * XS_CHECK_MAX_ELEMS), from 16-byte aligned buffers and from buffers one
 * element off (the scalar path), against the same float operations on the
 * CPU: bit for bit. The launch kind checks that the empty kernel launches
 * and completes. */
int xs_cu_stream_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz)
{
    if (job->kind == XS_CJ_LAUNCH) {
        stream_ctx x;
        memset(&x, 0, sizeof x);
        x.kind = XS_CJ_LAUNCH;
        x.launches = job->reps < 1 ? 1 : job->reps > XS_CUDA_MAX_REPS ? XS_CUDA_MAX_REPS : job->reps;
        XS_CU_TRY(stream_call(&x, 0));
        XS_CU_TRY(cudaDeviceSynchronize());
        *max_err = 0;
        return XS_CUDA_OK;
    }
    size_t n = (size_t)(job->elems < XS_CHECK_MAX_ELEMS ? job->elems : XS_CHECK_MAX_ELEMS);
    std::vector<float> a(n + 1), b(n + 1), c(n + 1), out(n + 1);
    xs_rng r = {0x5eedULL + n};
    for (size_t i = 0; i <= n; i++) {
        a[i] = xs_rng_float(&r, -1, 1);
        b[i] = xs_rng_float(&r, -1, 1);
        c[i] = xs_rng_float(&r, -1, 1);
    }
    size_t bytes = (n + 1) * sizeof(float);
    float *d[3];
    for (int i = 0; i < 3; i++)
        if (!(d[i] = (float *)xs_cu_buffer(i, bytes, err, errsz)))
            return XS_CUDA_FAILED;
    double worst = 0;
    for (int off = 0; off <= 1; off++) {
        XS_CU_TRY(cudaMemcpy(d[0], a.data(), bytes, cudaMemcpyHostToDevice));
        XS_CU_TRY(cudaMemcpy(d[1], b.data(), bytes, cudaMemcpyHostToDevice));
        XS_CU_TRY(cudaMemcpy(d[2], c.data(), bytes, cudaMemcpyHostToDevice));
        stream_ctx x;
        memset(&x, 0, sizeof x);
        x.kind = job->kind;
        x.n = n;
        x.a = d[0] + off;
        x.b = d[1] + off;
        x.c = d[2] + off;
        x.grid = grid_for(job->kind, n);
        XS_CU_TRY(stream_call(&x, 0));
        XS_CU_TRY(cudaDeviceSynchronize());
        float *dst = job->kind == XS_CJ_COPY ? d[1] : d[0];
        XS_CU_TRY(cudaMemcpy(out.data(), dst, bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i <= n; i++) {
            int in = i >= (size_t)off && i < n + off;
            float want;
            if (job->kind == XS_CJ_COPY)
                want = in ? a[i] : b[i]; /* outside the range: untouched */
            else
                want = in ? b[i] + TRIAD_SCALAR * c[i] : a[i];
            double e = xs_exact_err(xs_ulps_f32(out[i], want));
            if (e > worst)
                worst = e;
        }
    }
    *max_err = worst;
    return XS_CUDA_OK;
}
