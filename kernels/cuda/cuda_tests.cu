/* cuda_tests.cu — build/cuda/xs_cuda_tests (`make test-cuda`): every
 * kernel's check (xs_cuda.h) on the GPU, for every kind, dtype and a set
 * of shapes with odd sizes, one line each. A check the library answers
 * UNSUPPORTED is a skip with its reason, never a pass. Without a usable
 * GPU: one line and exit 77. Two modes need no GPU: --jobs provokes every
 * job-validation error of the table (jobs are checked before the device);
 * --emulate runs the optimizer checks with their launchers executing each
 * block's code on the host (optim_cu.cuh), which tests the launch plan, the
 * kernel arguments, the alignment choices and the vector and tail paths
 * against the shared math before any GPU does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_plan.h"
#include "optim_cu.cuh"
#include "xs_cu.h"
#include "xs_cuda.h"

static const char *const KIND[XS_CJ_COUNT] = {"launch", "copy", "triad", "gemm", "gemm_cublas",
                                              "adan_fused", "adan_eager", "adamw_fused",
                                              "layernorm", "softmax"};
static const char *const DTYPE[XS_CD_COUNT] = {"fp32", "tf32", "fp16", "bf16"};

static const xs_cuda_api *api;
static int passed, failed, skipped, emulated;

static void check(xs_cuda_job job)
{
    char shape[128], err[512] = "";
    switch (job.kind) {
    case XS_CJ_LAUNCH:
        snprintf(shape, sizeof shape, "launches=%d", job.reps);
        break;
    case XS_CJ_COPY:
    case XS_CJ_TRIAD:
        snprintf(shape, sizeof shape, "elems=%lld", job.elems);
        break;
    case XS_CJ_GEMM:
    case XS_CJ_GEMM_CUBLAS:
        snprintf(shape, sizeof shape, "m=%lld n=%lld k=%lld ta=%d tb=%d", job.m, job.n, job.k,
                 job.ta, job.tb);
        break;
    case XS_CJ_LAYERNORM:
    case XS_CJ_SOFTMAX:
        snprintf(shape, sizeof shape, "m=%lld n=%lld", job.m, job.n);
        break;
    default:
        snprintf(shape, sizeof shape, "elems=%lld hidden=%d step=%d", job.elems, job.hidden,
                 job.step);
    }
    double max_err = 0;
    int rc = emulated ? xs_cu_optim_check(&job, &max_err, err, sizeof err)
                      : api->check(&job, &max_err, err, sizeof err);
    const char *name = KIND[job.kind], *dt = DTYPE[job.dtype];
    if (rc == XS_CUDA_UNSUPPORTED) {
        skipped++;
        printf("SKIP  %-12s %-5s %-40s %s\n", name, dt, shape, err);
    } else if (rc != XS_CUDA_OK) {
        failed++;
        printf("FAIL  %-12s %-5s %-40s error %d: %s\n", name, dt, shape, rc, err);
    } else if (!(max_err <= 1)) { /* NaN fails too */
        failed++;
        printf("FAIL  %-12s %-5s %-40s max_err=%.3g (> 1: past the kernel's tolerance)\n", name, dt,
               shape, max_err);
    } else {
        passed++;
        printf("PASS  %-12s %-5s %-40s max_err=%.3g\n", name, dt, shape, max_err);
    }
    fflush(stdout);
}

static xs_cuda_job job_of(int kind, int dtype);

/* The GPU run's GEMM shapes (m, n, k), checked at compile time against
 * the check's limit: a shape past it would be refused, a FAIL on the GPU. */
static constexpr long long gemms[][3] = {{1, 1, 1},       {3, 5, 7},        {127, 255, 33},
                                         {128, 128, 128}, {513, 257, 1000}, {256, 384, 3072}};
static constexpr bool gemms_checkable()
{
    for (const auto &g : gemms)
        if (g[0] * g[1] * g[2] > XS_GEMM_CHECK_MAX_MNK)
            return false;
    return true;
}
static_assert(gemms_checkable(), "a GEMM test shape passes XS_GEMM_CHECK_MAX_MNK");

/* One bad job: the status and a message naming the field. */
static int expect(const char *what, xs_cuda_job j, int want_rc, const char *want_text)
{
    static xs_cuda_result res;
    char err[512] = "";
    int rc = api->run(&j, &res, err, sizeof err);
    int ok = rc == want_rc && strstr(err, want_text) != NULL;
    printf("%s  %-44s -> %d: %s\n", ok ? "PASS" : "FAIL", what, rc, err);
    return ok;
}

static int job_validation(void)
{
    int ok = 1;
    xs_cuda_job j = job_of(XS_CJ_COPY, XS_CD_FP32);
    j.elems = 1000;
    j.kind = -1;
    ok &= expect("kind -1", j, XS_CUDA_BADJOB, "job.kind -1");
    j.kind = XS_CJ_COUNT;
    ok &= expect("kind past the last", j, XS_CUDA_BADJOB, "job.kind");
    j = job_of(XS_CJ_COPY, 9);
    j.elems = 1000;
    ok &= expect("dtype 9", j, XS_CUDA_BADJOB, "job.dtype 9");
    j = job_of(XS_CJ_COPY, XS_CD_FP32);
    ok &= expect("copy of 0 elements", j, XS_CUDA_BADJOB, "job.elems 0: expected at least 1");
    j.elems = 1000;
    j.dtype = XS_CD_FP16;
    ok &= expect("copy in fp16", j, XS_CUDA_BADJOB, "fp32 elements only");
    j.dtype = XS_CD_FP32;
    j.reps = 0;
    ok &= expect("reps 0", j, XS_CUDA_BADJOB, "job.reps 0");
    j.reps = XS_CUDA_MAX_REPS + 1;
    ok &= expect("reps 513", j, XS_CUDA_BADJOB, "job.reps 513");
    j.reps = 1;
    j.warmup = -1;
    ok &= expect("warmup -1", j, XS_CUDA_BADJOB, "job.warmup -1");
    j.warmup = 0;
    j.sustain_s = NAN;
    ok &= expect("sustain_s NaN", j, XS_CUDA_BADJOB, "job.sustain_s");
    j = job_of(XS_CJ_GEMM_CUBLAS, XS_CD_FP16);
    j.m = 64, j.n = 0, j.k = 64;
    ok &= expect("gemm n 0", j, XS_CUDA_BADJOB, "job.n 0");
    j.n = 64;
    j.ta = 2;
    ok &= expect("gemm ta 2", j, XS_CUDA_BADJOB, "job.ta 2: expected 0 or 1");
    j.ta = 0;
    j.m = j.n = j.k = 1LL << 40;
    ok &= expect("gemm sizes that overflow", j, XS_CUDA_BADJOB, "overflow");
    j = job_of(XS_CJ_ADAN_FUSED, XS_CD_FP32);
    j.elems = 1000;
    j.step = 0;
    ok &= expect("adan step 0", j, XS_CUDA_BADJOB, "job.step 0");
    j.step = 1;
    j.hidden = -1;
    ok &= expect("adan hidden -1", j, XS_CUDA_BADJOB, "job.hidden -1");
    j.hidden = 1;
    j.elems = 1000000000000LL;
    ok &= expect("adan list of too many tensors", j, XS_CUDA_BADJOB, "tensors, at most 1000000");
    j = job_of(XS_CJ_ADAMW_FUSED, XS_CD_TF32);
    j.elems = 1000;
    ok &= expect("adamw in tf32", j, XS_CUDA_BADJOB, "job.dtype tf32");
    j = job_of(XS_CJ_LAYERNORM, XS_CD_BF16);
    j.m = 4;
    ok &= expect("layernorm n 0", j, XS_CUDA_BADJOB, "job.n 0");
    j = job_of(XS_CJ_SOFTMAX, XS_CD_FP16);
    j.m = 1LL << 40, j.n = 1LL << 40;
    ok &= expect("softmax sizes that overflow", j, XS_CUDA_BADJOB, "overflow");
    j = job_of(XS_CJ_COPY, XS_CD_FP32);
    j.elems = 1000;
    ok &= expect("a good job before any probe", j, XS_CUDA_FAILED, "call probe first");
    char err[256] = "";
    int rc = api->run(&j, NULL, err, sizeof err);
    ok &= rc == XS_CUDA_BADJOB && strstr(err, "result: NULL");
    rc = api->check(&j, NULL, err, sizeof err);
    ok &= rc == XS_CUDA_BADJOB && strstr(err, "max_err: NULL");
    rc = api->run(NULL, NULL, NULL, 0); /* no buffer for the message: no crash */
    ok &= rc == XS_CUDA_BADJOB;
    ok &= xs_cuda_api_get(XS_CUDA_API_VERSION + 1) == NULL;
    /* last (it poisons the library's state): a sticky error is kept as the
     * cause, later ones do not replace it, and the library refuses to go on */
    char e1[512] = "", e2[512] = "";
    rc = xs_cu_fail(cudaErrorNotReady, "a non-sticky error", e1, sizeof e1);
    int sticky_ok = rc == XS_CUDA_FAILED && xs_cu_lost() == NULL && !strstr(e1, "context is lost");
    xs_cu_fail(cudaErrorIllegalAddress, "first kernel", e1, sizeof e1);
    xs_cu_fail(cudaErrorLaunchFailure, "cudaMemcpy after it", e2, sizeof e2);
    sticky_ok &= strstr(e1, "first kernel") && strstr(e1, "context is lost") &&
                 strstr(e2, "context is lost") && xs_cu_lost() && strstr(xs_cu_lost(), "first kernel");
    xs_cuda_info info;
    rc = api->probe(0, &info, e2, sizeof e2);
    sticky_ok &= rc == XS_CUDA_FAILED && strstr(e2, "lost earlier") && strstr(e2, "first kernel");
    printf("%s  %-44s -> %d: %s\n", sticky_ok ? "PASS" : "FAIL", "sticky error kept as the cause", rc, e2);
    ok &= sticky_ok;
    printf("xs_cuda_tests --jobs: %s\n", ok ? "every bad job refused with its field" : "FAILED");
    return ok ? 0 : 1;
}

static xs_cuda_job job_of(int kind, int dtype)
{
    xs_cuda_job j;
    memset(&j, 0, sizeof j);
    j.kind = kind;
    j.dtype = dtype;
    j.reps = 1;
    j.step = 1;
    return j;
}

int main(int argc, char **argv)
{
    int device = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            device = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--emulate")) {
            emulated = xs_cu_emulate = 1;
            const long long sizes[][2] = {{1, 0}, {3, 0}, {1000003, 0}, {300001, 64}};
            const int kinds[] = {XS_CJ_ADAN_FUSED, XS_CJ_ADAN_EAGER, XS_CJ_ADAMW_FUSED};
            for (int k = 0; k < 3; k++)
                for (int dt = 0; dt < XS_CD_COUNT; dt++)
                    for (int l = 0; l < 4 && dt != XS_CD_TF32; l++) {
                        xs_cuda_job j = job_of(kinds[k], dt);
                        j.elems = sizes[l][0];
                        j.hidden = (int)sizes[l][1];
                        j.step = l == 2 ? 1000 : 1 + l;
                        check(j);
                    }
            printf("xs_cuda_tests --emulate: %d passed, %d failed, %d skipped (optimizer kernels "
                   "run on the host)\n",
                   passed, failed, skipped);
            return failed ? 1 : 0;
        } else if (!strcmp(argv[i], "--jobs")) {
            api = xs_cuda_api_get(XS_CUDA_API_VERSION);
            return api ? job_validation() : 1;
        } else {
            printf("usage: xs_cuda_tests [--device N | --jobs | --emulate]\n"
                   "Runs every CUDA kernel's check against its CPU reference on GPU N (0).\n"
                   "Exit 0 all passed, 1 a check failed, 77 no usable GPU. Needing no GPU:\n"
                   "--jobs, the job table's refusals of bad jobs; --emulate, the optimizer\n"
                   "checks with each kernel block's code run on the host.\n"
                   "Examples:\n  build/cuda/xs_cuda_tests\n  build/cuda/xs_cuda_tests --device 1\n"
                   "  build/cuda/xs_cuda_tests --jobs\n  build/cuda/xs_cuda_tests --emulate\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    api = xs_cuda_api_get(XS_CUDA_API_VERSION);
    if (!api) {
        printf("xs_cuda_tests: the library does not provide API version %d\n", XS_CUDA_API_VERSION);
        return 1;
    }
    xs_cuda_info info;
    char err[512] = "";
    int rc = api->probe(device, &info, err, sizeof err);
    if (rc == XS_CUDA_NO_GPU) {
        printf("xs_cuda_tests: skipped: no CUDA GPU: %s\n", err);
        return XS_CUDA_EXIT_NO_GPU;
    }
    if (rc != XS_CUDA_OK) {
        printf("xs_cuda_tests: probe of device %d failed: %s\n", device, err);
        return 1;
    }
    printf("device %d: %s (cc %d.%d, %d SMs, %.1f GB, L2 %.1f MB), driver %d, runtime %d\n",
           device, info.name, info.cc_major, info.cc_minor, info.sm_count, info.mem_gb, info.l2_mb,
           info.driver_version, info.runtime_version);

    xs_cuda_job j = job_of(XS_CJ_LAUNCH, XS_CD_FP32);
    j.reps = 16;
    check(j);
    const long long stream_sizes[] = {1, 3, 5, 1000003, 1LL << 22};
    for (int kind = XS_CJ_COPY; kind <= XS_CJ_TRIAD; kind++)
        for (size_t s = 0; s < sizeof stream_sizes / sizeof stream_sizes[0]; s++) {
            j = job_of(kind, XS_CD_FP32);
            j.elems = stream_sizes[s];
            check(j);
        }

    /* optimizers: one tensor of 1, 3, 1000003; Transformer lists of
     * hidden 64 and 96 (many tensors, several launches, a cut last tensor);
     * each check also runs its list of awkward sizes (optim.cu) */
    const struct {
        long long elems;
        int hidden;
    } lists[] = {{1, 0}, {3, 0}, {1000003, 0}, {2000001, 64}, {3333333, 96}};
    const int opt_kinds[] = {XS_CJ_ADAN_FUSED, XS_CJ_ADAN_EAGER, XS_CJ_ADAMW_FUSED};
    const int row_dtypes[] = {XS_CD_FP32, XS_CD_FP16, XS_CD_BF16};
    for (size_t k = 0; k < 3; k++)
        for (size_t d = 0; d < 3; d++)
            for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
                j = job_of(opt_kinds[k], row_dtypes[d]);
                j.elems = lists[l].elems;
                j.hidden = lists[l].hidden;
                j.step = l == 2 ? 1000 : 1 + (int)l; /* late steps too: small bias corrections */
                check(j);
            }

    /* rows: one element, short odd rows either side of a warp's width (31,
     * 33; warp kernels of each register width), BERT's 768 and 1024, just
     * past one warp's reach (block kernels: 1025, 4097), and rows longer
     * than any on-chip buffer */
    const long long rows[][2] = {{1, 1},     {3, 7},     {9, 31},     {9, 33},       {1000, 100},
                                 {517, 200}, {64, 500},  {128, 768},  {64, 1024},    {7, 1025},
                                 {3, 4097},  {3, 4099},  {2, 50000},  {5, 100000},   {1, 1000003},
                                 {1, (1LL << 22) + 3}};
    for (int kind = XS_CJ_LAYERNORM; kind <= XS_CJ_SOFTMAX; kind++)
        for (size_t d = 0; d < 3; d++)
            for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
                j = job_of(kind, row_dtypes[d]);
                j.m = rows[r][0];
                j.n = rows[r][1];
                check(j);
            }

    /* GEMM: own (fp16, bf16) and cuBLAS (every dtype), tiny, odd and
     * tile-sized shapes (gemms, above), every transposition; the last a
     * BERT-base MLP-like 384 x 3072 with a deep k (96 pipeline stages) */
    for (int kind = XS_CJ_GEMM; kind <= XS_CJ_GEMM_CUBLAS; kind++)
        for (int dt = 0; dt < XS_CD_COUNT; dt++) {
            if (kind == XS_CJ_GEMM && dt != XS_CD_FP16 && dt != XS_CD_BF16)
                continue;
            for (size_t s = 0; s < sizeof gemms / sizeof gemms[0]; s++)
                for (int t = 0; t < 4; t++) {
                    j = job_of(kind, dt);
                    j.m = gemms[s][0];
                    j.n = gemms[s][1];
                    j.k = gemms[s][2];
                    j.ta = t & 1;
                    j.tb = t >> 1;
                    check(j);
                }
        }

    api->release();
    printf("xs_cuda_tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
