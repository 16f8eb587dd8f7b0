/* cuda_bench.cu — build/cuda/xs_cuda_bench (`make bench-cuda`): the
 * issue-19 figures of merit, each a `bench: NAME VALUE` line with its
 * context (sizes, GB/s or TFLOP/s, what ran):
 *   adan_cuda_fused_vs_copy  fused Adan's bandwidth at its 44 B/param
 *                            definition over the measured copy bandwidth,
 *                            both far past L2 (target >= 0.9 on HBM GPUs)
 *   adan_cuda_fused_vs_eager eager time / fused time, same tensors (>= 3)
 *   gemm_cuda_vs_cublas      median over Transformer shapes of own TFLOP/s
 *                            over cuBLAS TFLOP/s, fp16 and bf16 (>= 0.7)
 * Medians of repeated timed runs (CUDA events). Without a usable GPU: one
 * line and exit 77. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include <cuda_runtime.h>

#include "xs_cuda.h"

static const xs_cuda_api *api;

static double median(const double *v, int n)
{
    std::vector<double> s(v, v + n);
    std::sort(s.begin(), s.end());
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Runs the job; 0 and the median seconds per call in *t, else prints why. */
static int timed(const xs_cuda_job *j, xs_cuda_result *res, double *t, const char *what)
{
    char err[512] = "";
    int rc = api->run(j, res, err, sizeof err);
    if (rc != XS_CUDA_OK) {
        printf("  %s: not measured (%s): %s\n", what,
               rc == XS_CUDA_UNSUPPORTED ? "unsupported" : "error", err);
        return rc;
    }
    *t = median(res->time_s, res->reps);
    return 0;
}

static double free_bytes(void)
{
    size_t f = 0, total = 0;
    if (cudaMemGetInfo(&f, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return (double)f;
}

static void usage(FILE *o)
{
    fprintf(o,
            "usage: xs_cuda_bench [--adan-params N] [--quick] [--device N] [--probe]\n"
            "Times copy, fused and eager Adan, and own vs cuBLAS GEMM on GPU N (0); prints\n"
            "`bench: NAME VALUE` lines with context. --adan-params: parameters of the\n"
            "Adan step (default 1.3e9, a GPT-3 XL's count, capped so every array fits in\n"
            "60%% of free memory); --quick: fewer repetitions, 2e8 parameters by default,\n"
            "fewer GEMM shapes; --probe: only say whether a GPU is usable (exit 0 or 77).\n"
            "Examples:\n"
            "  build/cuda/xs_cuda_bench\n"
            "  build/cuda/xs_cuda_bench --quick\n"
            "  build/cuda/xs_cuda_bench --adan-params 3.5e8 --device 1\n");
}

int main(int argc, char **argv)
{
    double adan_params = 0;
    int quick = 0, device = 0, probe_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--adan-params") && i + 1 < argc) {
            char *end;
            adan_params = strtod(argv[++i], &end);
            if (*end || !(adan_params >= 1 && adan_params <= 1e12)) {
                fprintf(stderr, "xs_cuda_bench: --adan-params %s: expected a count from 1 to 1e12\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--probe")) {
            probe_only = 1;
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            device = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "xs_cuda_bench: unknown argument %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    api = xs_cuda_api_get(XS_CUDA_API_VERSION);
    xs_cuda_info info;
    char err[512] = "";
    int rc = api ? api->probe(device, &info, err, sizeof err) : XS_CUDA_FAILED;
    if (rc == XS_CUDA_NO_GPU) {
        printf("xs_cuda_bench: skipped: no CUDA GPU: %s\n", err);
        return XS_CUDA_EXIT_NO_GPU;
    }
    if (rc != XS_CUDA_OK) {
        printf("xs_cuda_bench: probe of device %d failed: %s\n", device, err);
        return 1;
    }
    if (probe_only) {
        printf("xs_cuda_bench: device %d: %s\n", device, info.name);
        return 0;
    }
    printf("device %d: %s (cc %d.%d, %d SMs, %.1f GB, L2 %.1f MB, bus %d bits), driver %d\n",
           device, info.name, info.cc_major, info.cc_minor, info.sm_count, info.mem_gb, info.l2_mb,
           info.mem_bus_bits, info.driver_version);
    static xs_cuda_result res; /* 4 KB of times: not on the stack */
    xs_cuda_job j;

    /* copy: two arrays of 1 GiB (256 MiB with --quick), at least 16 x L2,
     * within 40% of free memory */
    api->release();
    double l2 = info.l2_mb * (1 << 20);
    double copy_elems = quick ? 64.0 * (1 << 20) : 256.0 * (1 << 20);
    copy_elems = fmax(copy_elems, 16 * l2 / 4);
    copy_elems = fmin(copy_elems, 0.4 * free_bytes() / 8);
    memset(&j, 0, sizeof j);
    j.kind = XS_CJ_COPY;
    j.elems = (long long)copy_elems;
    j.reps = quick ? 5 : 20;
    j.warmup = 2;
    double t_copy = 0, copy_gbs = 0;
    if (timed(&j, &res, &t_copy, "copy") == 0) {
        copy_gbs = res.bytes / t_copy / 1e9;
        printf("  copy: %lld floats (%.2f GB an array, %.0fx L2), %.3f ms, %.1f GB/s (8 B/elem), "
               "%s\n",
               j.elems, j.elems * 4 / 1e9, j.elems * 4 / l2, t_copy * 1e3, copy_gbs, res.impl);
    }

    /* Adan: a Transformer of hidden 2048 (GPT-3 XL, 1.3B parameters: Brown
     * et al. 2020, Table 2.1), fp32; fused needs 6 arrays (24 B/param),
     * eager the same plus one tensor's temporary */
    api->release();
    const int hidden = 2048;
    double want = adan_params > 0 ? adan_params : quick ? 2e8 : 1.3e9;
    double cap = (0.6 * free_bytes() - 4.0 * 4 * hidden * hidden) / 24;
    double params = fmin(want, cap);
    if (params < want)
        printf("  adan: %.3g parameters asked; capped to %.3g so all arrays fit in 60%% of the "
               "%.1f GB free\n",
               want, params, free_bytes() / 1e9);
    memset(&j, 0, sizeof j);
    j.kind = XS_CJ_ADAN_FUSED;
    j.dtype = XS_CD_FP32;
    j.elems = (long long)params;
    j.hidden = hidden;
    j.step = 10;
    j.warmup = 1;
    j.reps = quick ? 3 : 10;
    double t_fused = 0, t_eager = 0;
    if (params >= 1 && timed(&j, &res, &t_fused, "adan fused") == 0) {
        double gbs = res.bytes / t_fused / 1e9;
        printf("  adan fused: %lld params in %d tensors, %d launches, %.3f ms, %.1f GB/s at 44 "
               "B/param, %s\n",
               j.elems, res.tensors, res.launches, t_fused * 1e3, gbs, res.impl);
        if (copy_gbs > 0)
            printf("bench: adan_cuda_fused_vs_copy %.3f\n", gbs / copy_gbs);
        j.kind = XS_CJ_ADAN_EAGER;
        j.reps = quick ? 2 : 5;
        if (timed(&j, &res, &t_eager, "adan eager") == 0) {
            printf("  adan eager: %d launches, %.3f ms, %.1f GB/s at 172 B/param, %s\n",
                   res.launches, t_eager * 1e3, res.bytes / t_eager / 1e9, res.impl);
            printf("bench: adan_cuda_fused_vs_eager %.3f\n", t_eager / t_fused);
        }
    }

    /* GEMM: BERT-large / GPT Transformer shapes (m = tokens), own vs
     * cuBLAS, L2 flushed before each repetition */
    api->release();
    const long long shapes[][3] = {{4096, 1024, 1024}, {4096, 4096, 1024}, {4096, 1024, 4096},
                                   {8192, 2048, 2048}, {8192, 8192, 2048}, {8192, 2048, 8192}};
    int nshapes = quick ? 4 : 6;
    std::vector<double> ratios;
    const char *gemm_missing = NULL;
    for (int dt = XS_CD_FP16; dt <= XS_CD_BF16 && !gemm_missing; dt++)
        for (int s = 0; s < nshapes; s++) {
            memset(&j, 0, sizeof j);
            j.dtype = dt;
            j.m = shapes[s][0];
            j.n = shapes[s][1];
            j.k = shapes[s][2];
            j.reps = quick ? 5 : 15;
            j.warmup = 2;
            j.flush_l2 = 1;
            double t_own = 0, t_ref = 0;
            char own_impl[64] = "", what[96];
            snprintf(what, sizeof what, "gemm %s %lldx%lldx%lld", dt == XS_CD_FP16 ? "fp16" : "bf16",
                     j.m, j.n, j.k);
            j.kind = XS_CJ_GEMM;
            int r1 = timed(&j, &res, &t_own, what);
            if (r1 == XS_CUDA_UNSUPPORTED) {
                gemm_missing = "own GEMM unsupported here";
                break;
            }
            if (r1)
                continue;
            snprintf(own_impl, sizeof own_impl, "%s", res.impl);
            j.kind = XS_CJ_GEMM_CUBLAS;
            if (timed(&j, &res, &t_ref, what))
                continue;
            double fl = 2.0 * j.m * j.n * j.k;
            printf("  %s: own %.1f TFLOP/s (%s), cuBLAS %.1f TFLOP/s (%s), ratio %.3f\n", what,
                   fl / t_own / 1e12, own_impl, fl / t_ref / 1e12, res.impl, t_ref / t_own);
            ratios.push_back(t_ref / t_own);
        }
    if (!ratios.empty())
        printf("bench: gemm_cuda_vs_cublas %.3f\n", median(ratios.data(), (int)ratios.size()));
    else
        printf("  gemm_cuda_vs_cublas: not measured (%s)\n",
               gemm_missing ? gemm_missing : "no shape ran");
    api->release();
    return 0;
}
