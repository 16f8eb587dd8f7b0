/* api.cu — the one symbol libxscuda.so exports (xs_cuda_api_get): the job
 * table. Every job is checked here field by field before any family sees
 * it, and a job that cannot fit in the GPU's memory is refused with the
 * numbers, so the families can trust their inputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../common/multi_tensor.h"
#include "xs_cu.h"

static const char *const KIND_NAMES[XS_CJ_COUNT] = {
    "launch", "copy", "triad", "gemm", "gemm_cublas", "adan_fused",
    "adan_eager", "adamw_fused", "layernorm", "softmax"};
static const char *const DTYPE_NAMES[XS_CD_COUNT] = {"fp32", "tf32", "fp16", "bf16"};

static int is_optimizer(int kind)
{
    return kind == XS_CJ_ADAN_FUSED || kind == XS_CJ_ADAN_EAGER || kind == XS_CJ_ADAMW_FUSED;
}

/* a * b into *r unless it passes 2^62 (room for a few more factors) */
static int mul_ok(long long a, long long b, long long *r)
{
    long long p;
    if (__builtin_mul_overflow(a, b, &p) || p > (1LL << 62))
        return 0;
    *r = p;
    return 1;
}

static int bad(char *err, size_t errsz, const char *fmt, long long v, const char *want)
{
    char f[64];
    snprintf(f, sizeof f, fmt, v);
    snprintf(err, errsz, "job.%s: expected %s", f, want);
    return XS_CUDA_BADJOB;
}

static int positive(const char *name, long long v, char *err, size_t errsz)
{
    char f[48];
    snprintf(f, sizeof f, "%s %%lld", name);
    return v >= 1 ? XS_CUDA_OK : bad(err, errsz, f, v, "at least 1");
}

/* Device bytes a run of the job allocates (the families' buffers), or -1
 * when a product overflows. */
static double job_bytes(const xs_cuda_job *j, long long *tensors)
{
    double s = j->dtype == XS_CD_FP16 || j->dtype == XS_CD_BF16 ? 2 : 4;
    long long mn = 0, mk = 0, kn = 0;
    switch (j->kind) {
    case XS_CJ_LAUNCH:
        return 0;
    case XS_CJ_COPY:
        return 8.0 * j->elems;
    case XS_CJ_TRIAD:
        return 12.0 * j->elems;
    case XS_CJ_GEMM:
    case XS_CJ_GEMM_CUBLAS:
        if (!mul_ok(j->m, j->n, &mn) || !mul_ok(j->m, j->k, &mk) || !mul_ok(j->k, j->n, &kn))
            return -1;
        /* fp16/bf16 operands are drawn in fp32 first (gemm_job.cu's slot 11,
         * as large as the larger of A and B) */
        return s * ((double)mk + (double)kn + (double)mn) +
               (s == 2 ? 4.0 * (double)(mk > kn ? mk : kn) : 0);
    case XS_CJ_LAYERNORM:
    case XS_CJ_SOFTMAX:
        if (!mul_ok(j->m, j->n, &mn))
            return -1;
        return 2 * s * (double)mn + 2 * s * (double)j->n + 8.0 * (double)j->m;
    default: { /* optimizers: the arrays of optim.cu, each tensor padded to 64 */
        double per = j->kind == XS_CJ_ADAMW_FUSED ? 16 : 24; /* p, g (+master), state */
        double pad = 64.0 * (double)*tensors * (j->kind == XS_CJ_ADAMW_FUSED ? 5 : 7) * 4;
        double tmp = j->kind == XS_CJ_ADAN_EAGER ? 4.0 * (j->hidden ? 4.0 * j->hidden * j->hidden
                                                                     : (double)j->elems)
                                                 : 0;
        return per * (double)j->elems + pad + tmp;
    }
    }
}

static int validate(const xs_cuda_job *j, int for_check, long long *tensors, char *err,
                    size_t errsz)
{
    int rc;
    if (!j) {
        snprintf(err, errsz, "job: NULL");
        return XS_CUDA_BADJOB;
    }
    if (j->kind < 0 || j->kind >= XS_CJ_COUNT)
        return bad(err, errsz, "kind %lld", j->kind, "0..9 (xs_cuda_kind)");
    if (j->dtype < 0 || j->dtype >= XS_CD_COUNT)
        return bad(err, errsz, "dtype %lld", j->dtype, "0..3 (fp32, tf32, fp16, bf16)");
    if (j->warmup < 0 || j->warmup > 100000)
        return bad(err, errsz, "warmup %lld", j->warmup, "0..100000 untimed calls");
    if (!(j->sustain_s >= 0 && j->sustain_s <= 86400)) {
        snprintf(err, errsz, "job.sustain_s %g: expected 0 (off) or up to 86400 seconds",
                 j->sustain_s);
        return XS_CUDA_BADJOB;
    }
    if (!for_check && (j->kind == XS_CJ_LAUNCH || j->sustain_s == 0) &&
        (j->reps < 1 || j->reps > XS_CUDA_MAX_REPS))
        return bad(err, errsz, "reps %lld", j->reps,
                   j->kind == XS_CJ_LAUNCH ? "1..512 launches" : "1..512 repetitions");
    const char *kn = KIND_NAMES[j->kind];
    switch (j->kind) {
    case XS_CJ_LAUNCH:
        break;
    case XS_CJ_COPY:
    case XS_CJ_TRIAD:
        if ((rc = positive("elems", j->elems, err, errsz)))
            return rc;
        if (j->dtype != XS_CD_FP32) {
            snprintf(err, errsz, "job.dtype %s: %s runs fp32 elements only (dtype 0)",
                     DTYPE_NAMES[j->dtype], kn);
            return XS_CUDA_BADJOB;
        }
        break;
    case XS_CJ_GEMM:
    case XS_CJ_GEMM_CUBLAS:
        if ((rc = positive("m", j->m, err, errsz)) || (rc = positive("n", j->n, err, errsz)) ||
            (rc = positive("k", j->k, err, errsz)))
            return rc;
        if (j->ta != 0 && j->ta != 1)
            return bad(err, errsz, "ta %lld", j->ta, "0 or 1");
        if (j->tb != 0 && j->tb != 1)
            return bad(err, errsz, "tb %lld", j->tb, "0 or 1");
        break;
    case XS_CJ_LAYERNORM:
    case XS_CJ_SOFTMAX:
        if ((rc = positive("m", j->m, err, errsz)) || (rc = positive("n", j->n, err, errsz)))
            return rc;
        if (j->dtype == XS_CD_TF32) {
            snprintf(err, errsz, "job.dtype tf32: %s takes fp32, fp16 or bf16", kn);
            return XS_CUDA_BADJOB;
        }
        break;
    default: /* optimizers */
        if ((rc = positive("elems", j->elems, err, errsz)))
            return rc;
        if (j->hidden < 0 || j->hidden > (1 << 24))
            return bad(err, errsz, "hidden %lld", j->hidden,
                       "0 (one tensor) or a hidden size up to 16777216");
        if (j->step < 1)
            return bad(err, errsz, "step %lld", j->step, "at least 1 (steps count from 1)");
        if (j->dtype == XS_CD_TF32) {
            snprintf(err, errsz, "job.dtype tf32: %s takes fp32, or fp16/bf16 parameters with "
                     "an fp32 master copy", kn);
            return XS_CUDA_BADJOB;
        }
        /* count the layers first: listing a huge count would take forever */
        *tensors = j->hidden == 0 ? 1
                   : j->elems / (12LL * j->hidden * j->hidden + 13LL * j->hidden) > 62500
                       ? 16 * (j->elems / (12LL * j->hidden * j->hidden + 13LL * j->hidden))
                       : xs_mt_transformer_sizes(j->elems, j->hidden, NULL, 0);
        if (*tensors > 1000000) {
            snprintf(err, errsz,
                     "job.hidden %d: cuts %lld parameters into %lld tensors, at most 1000000",
                     j->hidden, j->elems, *tensors);
            return XS_CUDA_BADJOB;
        }
        break;
    }
    if (job_bytes(j, tensors) < 0) {
        snprintf(err, errsz, "job: %s of m %lld, n %lld, k %lld: the sizes overflow", kn, j->m,
                 j->n, j->k);
        return XS_CUDA_BADJOB;
    }
    return XS_CUDA_OK;
}

/* A run must fit in what is free now plus what the library holds. The
 * buffer slots of other families (and of smaller earlier jobs) stay
 * allocated between jobs, so a job that needs more than is free gets them
 * freed first: every family fills its buffers anew each run, and without
 * this a large job after another family's large job would fail in
 * cudaMalloc although the check here let it through. */
static int fits(const xs_cuda_job *j, long long tensors, char *err, size_t errsz)
{
    size_t free_b = 0, total_b = 0;
    XS_CU_TRY(cudaMemGetInfo(&free_b, &total_b));
    const cudaDeviceProp *p = xs_cu_props();
    double need = job_bytes(j, &tensors) + (j->flush_l2 ? 2.0 * p->l2CacheSize : 0);
    double have = (double)free_b + (double)xs_cu_held_bytes();
    if (need <= have && need > (double)free_b && xs_cu_held_bytes() > 0) {
        xs_cu_runtime_trim();
        XS_CU_TRY(cudaMemGetInfo(&free_b, &total_b));
        have = (double)free_b;
    }
    if (need > have) {
        snprintf(err, errsz,
                 "job: %s needs %.2f GB of device memory; %s has %.2f GB free of %.2f GB "
                 "(shrink elems or m/n/k)",
                 KIND_NAMES[j->kind], need / 1e9, p->name, have / 1e9, total_b / 1e9);
        return XS_CUDA_BADJOB;
    }
    return XS_CUDA_OK;
}

static int api_probe(int index, xs_cuda_info *info, char *err, size_t errsz)
{
    char local[256];
    if (!err || errsz == 0) {
        err = local;
        errsz = sizeof local;
    }
    return xs_cu_probe(index, info, err, errsz);
}

static int api_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz)
{
    char local[256];
    if (!err || errsz == 0) {
        err = local;
        errsz = sizeof local;
    }
    err[0] = 0;
    if (!res) {
        snprintf(err, errsz, "run: result: NULL");
        return XS_CUDA_BADJOB;
    }
    memset(res, 0, sizeof *res);
    long long tensors = 0;
    int rc = validate(job, 0, &tensors, err, errsz);
    if (rc)
        return rc;
    if (!xs_cu_probed()) {
        snprintf(err, errsz, "run: no CUDA device probed: call probe first");
        return XS_CUDA_FAILED;
    }
    if (xs_cu_lost()) { /* name the job that broke it, not this one */
        snprintf(err, errsz, "run: not run: the CUDA context was lost by an earlier job (%s)",
                 xs_cu_lost());
        return XS_CUDA_FAILED;
    }
    if ((rc = fits(job, tensors, err, errsz)))
        return rc;
    switch (job->kind) {
    case XS_CJ_LAUNCH:
    case XS_CJ_COPY:
    case XS_CJ_TRIAD:
        return xs_cu_stream_run(job, res, err, errsz);
    case XS_CJ_GEMM:
    case XS_CJ_GEMM_CUBLAS:
        return xs_cu_gemm_run(job, res, err, errsz);
    case XS_CJ_LAYERNORM:
    case XS_CJ_SOFTMAX:
        return xs_cu_rowop_run(job, res, err, errsz);
    default:
        return xs_cu_optim_run(job, res, err, errsz);
    }
}

static int api_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz)
{
    char local[256];
    if (!err || errsz == 0) {
        err = local;
        errsz = sizeof local;
    }
    err[0] = 0;
    if (!max_err) {
        snprintf(err, errsz, "check: max_err: NULL");
        return XS_CUDA_BADJOB;
    }
    *max_err = NAN;
    long long tensors = 0;
    int rc = validate(job, 1, &tensors, err, errsz);
    if (rc)
        return rc;
    if (!xs_cu_probed()) {
        snprintf(err, errsz, "check: no CUDA device probed: call probe first");
        return XS_CUDA_FAILED;
    }
    if (xs_cu_lost()) { /* name the job that broke it, not this one */
        snprintf(err, errsz, "check: not run: the CUDA context was lost by an earlier job (%s)",
                 xs_cu_lost());
        return XS_CUDA_FAILED;
    }
    switch (job->kind) {
    case XS_CJ_LAUNCH:
    case XS_CJ_COPY:
    case XS_CJ_TRIAD:
        return xs_cu_stream_check(job, max_err, err, errsz);
    case XS_CJ_GEMM:
    case XS_CJ_GEMM_CUBLAS:
        return xs_cu_gemm_check(job, max_err, err, errsz);
    case XS_CJ_LAYERNORM:
    case XS_CJ_SOFTMAX:
        return xs_cu_rowop_check(job, max_err, err, errsz);
    default:
        return is_optimizer(job->kind) ? xs_cu_optim_check(job, max_err, err, errsz)
                                       : XS_CUDA_BADJOB;
    }
}

static void api_release(void)
{
    xs_cu_gemm_release();
    xs_cu_runtime_release();
}

static const xs_cuda_api API = {XS_CUDA_API_VERSION, api_probe, api_run, api_check, api_release};

extern "C" __attribute__((visibility("default"))) const xs_cuda_api *xs_cuda_api_get(int version)
{
    return version == XS_CUDA_API_VERSION ? &API : NULL;
}
