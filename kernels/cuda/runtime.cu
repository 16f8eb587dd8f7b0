/* runtime.cu — the device every job runs on: probe, the buffer slots kept
 * across jobs, seeded fills, the L2 flush and the one timing loop (CUDA
 * events around each repetition; a sustained mode for power sampling).
 * Everything runs on the legacy default stream, so a job's kernels, the
 * flush and the events are ordered without extra synchronisation. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <chrono>

#include "../common/half_convert.h"
#include "xs_cu.h"

static int g_dev = -1;
static cudaDeviceProp g_props;
static void *g_buf[XS_CU_SLOTS];
static size_t g_cap[XS_CU_SLOTS];
static void *g_flush;
static size_t g_flush_bytes;
static cudaEvent_t g_ev[2 * XS_CUDA_MAX_REPS + 2];
static int g_nev;

/* The first sticky error's message, "" while the context is sound. */
static char g_lost[320];

/* Errors that leave the CUDA context unusable for the rest of the process
 * (CUDA Runtime API, cudaError: "the process must be terminated and
 * relaunched"): a kernel's fault, trap or assert. */
static int sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
        return 1;
    default:
        return 0;
    }
}

const char *xs_cu_lost(void)
{
    return g_lost[0] ? g_lost : NULL;
}

int xs_cu_fail(cudaError_t e, const char *what, char *err, size_t errsz)
{
    char local[320];
    if (!err || !errsz) {
        err = local;
        errsz = sizeof local;
    }
    snprintf(err, errsz, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    if (sticky(e)) {
        /* the call that reports it is often not the kernel that caused it
         * (launches are asynchronous): keep the first report, and say that
         * every later call fails the same way */
        if (!g_lost[0])
            snprintf(g_lost, sizeof g_lost, "%s", err);
        size_t len = strlen(err);
        if (len + 1 < errsz)
            snprintf(err + len, errsz - len,
                     "; the CUDA context is lost: every later job in this process fails");
    }
    (void)cudaGetLastError(); /* clear a non-sticky error for the next job */
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorSystemNotReady:
    case cudaErrorDevicesUnavailable:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
        return XS_CUDA_NO_GPU;
    default:
        return XS_CUDA_FAILED;
    }
}

const cudaDeviceProp *xs_cu_props(void)
{
    return g_dev >= 0 ? &g_props : NULL;
}

int xs_cu_probed(void)
{
    return g_dev >= 0;
}

__global__ void xs_cu_empty_probe_kernel(void) {}

int xs_cu_probe(int index, xs_cuda_info *info, char *err, size_t errsz)
{
    if (g_lost[0]) {
        snprintf(err, errsz, "the CUDA context was lost earlier (%s): restart the process",
                 g_lost);
        return XS_CUDA_FAILED;
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        /* every cudaGetDeviceCount failure means no usable device here */
        xs_cu_fail(e, "cudaGetDeviceCount", err, errsz);
        return XS_CUDA_NO_GPU;
    }
    if (count < 1) {
        snprintf(err, errsz, "cudaGetDeviceCount: no CUDA device");
        return XS_CUDA_NO_GPU;
    }
    if (index < 0 || index >= count) {
        snprintf(err, errsz, "device index %d: expected 0..%d (%d CUDA device%s)", index,
                 count - 1, count, count == 1 ? "" : "s");
        return XS_CUDA_BADJOB;
    }
    if (g_dev >= 0 && g_dev != index) { /* buffers belong to the old device */
        xs_cu_gemm_release();
        xs_cu_runtime_release();
    }
    g_dev = -1;
    XS_CU_TRY(cudaSetDevice(index));
    XS_CU_TRY(cudaGetDeviceProperties(&g_props, index));
    /* a GPU older than every architecture in the fat binary (and beyond
     * its PTX) has no code to run: find out now, not at the first job */
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, xs_cu_empty_probe_kernel);
    if (e != cudaSuccess) {
        char why[160];
        xs_cu_fail(e, "loading the kernels", why, sizeof why);
        snprintf(err, errsz, "%s: this build has no code for compute capability %d.%d (%s)",
                 g_props.name, g_props.major, g_props.minor, why);
        return XS_CUDA_NO_GPU;
    }
    if (info) {
        memset(info, 0, sizeof *info);
        memcpy(info->name, g_props.name, sizeof info->name - 1); /* cut to fit; NUL kept */
        if (cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, index) !=
            cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.0",
                     g_props.pciDomainID, g_props.pciBusID, g_props.pciDeviceID);
        }
        info->cc_major = g_props.major;
        info->cc_minor = g_props.minor;
        info->sm_count = g_props.multiProcessorCount;
        info->mem_gb = (double)g_props.totalGlobalMem / 1e9;
        info->l2_mb = (double)g_props.l2CacheSize / (1 << 20);
        info->smem_per_sm_kb = (double)g_props.sharedMemPerMultiprocessor / 1024;
        info->mem_bus_bits = g_props.memoryBusWidth;
        /* CUDA 13 dropped the clock fields of cudaDeviceProp; the attributes
         * remain (kHz), and a driver may report 0 */
        int khz = 0;
        if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, index) == cudaSuccess)
            info->mem_clock_mhz = khz / 1000.0;
        khz = 0;
        if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index) == cudaSuccess)
            info->sm_clock_mhz = khz / 1000.0;
        (void)cudaGetLastError();
        XS_CU_TRY(cudaDriverGetVersion(&info->driver_version));
        XS_CU_TRY(cudaRuntimeGetVersion(&info->runtime_version));
        info->device_index = index;
    }
    g_dev = index;
    return XS_CUDA_OK;
}

void *xs_cu_buffer(int slot, size_t bytes, char *err, size_t errsz)
{
    if (slot < 0 || slot >= XS_CU_SLOTS) {
        snprintf(err, errsz, "buffer slot %d: expected 0..%d", slot, XS_CU_SLOTS - 1);
        return NULL;
    }
    if (bytes == 0)
        bytes = 1;
    if (g_buf[slot] && g_cap[slot] >= bytes)
        return g_buf[slot];
    if (g_buf[slot]) {
        cudaFree(g_buf[slot]);
        g_buf[slot] = NULL;
        g_cap[slot] = 0;
    }
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "cudaMalloc(%zu bytes) for buffer slot %d", bytes, slot);
        xs_cu_fail(e, what, err, errsz);
        return NULL;
    }
    g_buf[slot] = p;
    g_cap[slot] = bytes;
    return p;
}

size_t xs_cu_held_bytes(void)
{
    size_t s = g_flush_bytes;
    for (int i = 0; i < XS_CU_SLOTS; i++)
        s += g_cap[i];
    return s;
}

void xs_cu_runtime_trim(void)
{
    for (int i = 0; i < XS_CU_SLOTS; i++) {
        if (g_buf[i])
            cudaFree(g_buf[i]);
        g_buf[i] = NULL;
        g_cap[i] = 0;
    }
    if (g_flush)
        cudaFree(g_flush);
    g_flush = NULL;
    g_flush_bytes = 0;
    (void)cudaGetLastError();
}

void xs_cu_runtime_release(void)
{
    xs_cu_runtime_trim();
    for (int i = 0; i < g_nev; i++)
        cudaEventDestroy(g_ev[i]);
    g_nev = 0;
    (void)cudaGetLastError();
}

int xs_cu_fill_grid(const void *kernel, int threads, long long need)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) !=
            cudaSuccess ||
        per_sm < 1) {
        (void)cudaGetLastError();
        per_sm = 1;
    }
    long long sms = g_dev >= 0 ? g_props.multiProcessorCount : 1;
    long long g = sms * per_sm;
    if (need < g)
        g = need;
    return g < 1 ? 1 : (int)g;
}

/* splitmix64 of (seed, index): the same value for the same pair on any
 * grid, so a fill is reproducible. */
__device__ __forceinline__ unsigned long long xs_cu_mix(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ void xs_cu_fill_kernel(float *d, size_t n, unsigned seed, float lo, float span)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned long long h = xs_cu_mix(((unsigned long long)seed << 40) ^ i);
        float u = (float)(h >> 40) * (1.0f / 16777216.0f); /* [0, 1), 24 bits */
        float x = lo + span * u;
        d[i] = x < lo + span ? x : lo; /* rounding must not reach hi */
    }
}

int xs_cu_fill_f32(float *d, size_t n, unsigned seed, float lo, float hi, char *err,
                   size_t errsz)
{
    if (n == 0)
        return XS_CUDA_OK;
    if (!d || !(hi > lo)) {
        snprintf(err, errsz, "xs_cu_fill_f32: need a buffer and lo < hi");
        return XS_CUDA_FAILED;
    }
    int grid = xs_cu_fill_grid((const void *)xs_cu_fill_kernel, 256, (long long)((n + 255) / 256));
    xs_cu_fill_kernel<<<grid, 256>>>(d, n, seed, lo, hi - lo);
    XS_CU_TRY(cudaGetLastError());
    return XS_CUDA_OK;
}

__global__ void xs_cu_fill16_kernel(unsigned short *d, size_t n, unsigned seed, float lo,
                                    float span, int bf16)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned long long h = xs_cu_mix(((unsigned long long)seed << 40) ^ i);
        float x = lo + span * ((float)(h >> 40) * (1.0f / 16777216.0f));
        d[i] = bf16 ? xs_f32_to_bf16_bits(x) : xs_f32_to_f16_bits(x);
    }
}

int xs_cu_fill_16(unsigned short *d, size_t n, unsigned seed, float lo, float hi, int bf16,
                  char *err, size_t errsz)
{
    if (n == 0)
        return XS_CUDA_OK;
    if (!d || !(hi > lo)) {
        snprintf(err, errsz, "xs_cu_fill_16: need a buffer and lo < hi");
        return XS_CUDA_FAILED;
    }
    int grid = xs_cu_fill_grid((const void *)xs_cu_fill16_kernel, 256, (long long)((n + 255) / 256));
    xs_cu_fill16_kernel<<<grid, 256>>>(d, n, seed, lo, hi - lo, bf16);
    XS_CU_TRY(cudaGetLastError());
    return XS_CUDA_OK;
}

/* Events are created once and kept: 2 per repetition, 2 more for the
 * sustained mode. */
static int need_events(int n, char *err, size_t errsz)
{
    if (n > (int)(sizeof g_ev / sizeof g_ev[0])) {
        snprintf(err, errsz, "timing: %d events asked, at most %d", n,
                 (int)(sizeof g_ev / sizeof g_ev[0]));
        return XS_CUDA_BADJOB;
    }
    while (g_nev < n) {
        XS_CU_TRY(cudaEventCreate(&g_ev[g_nev]));
        g_nev++;
    }
    return XS_CUDA_OK;
}

/* Writes 2 x L2 bytes so that what a kernel reads next comes from DRAM, as
 * in a training step where the other layers' work passed through L2. */
static int flush_l2(int rep, char *err, size_t errsz)
{
    size_t bytes = 2 * (size_t)(g_props.l2CacheSize > 0 ? g_props.l2CacheSize : (1 << 20));
    if (g_flush_bytes < bytes) {
        if (g_flush)
            cudaFree(g_flush);
        g_flush = NULL;
        g_flush_bytes = 0;
        XS_CU_TRY(cudaMalloc(&g_flush, bytes));
        g_flush_bytes = bytes;
    }
    XS_CU_TRY(cudaMemsetAsync(g_flush, rep & 0xff, bytes, 0));
    return XS_CUDA_OK;
}

static int sustain(const xs_cuda_job *job, xs_cu_call_fn call, void *ctx, xs_cuda_result *res,
                   char *err, size_t errsz)
{
    int rc = need_events(3, err, errsz);
    if (rc)
        return rc;
    cudaEvent_t start = g_ev[0], done[2] = {g_ev[1], g_ev[2]};
    auto t0 = std::chrono::steady_clock::now();
    XS_CU_TRY(cudaEventRecord(start, 0));
    long long calls = 0, batch = 1;
    int cur = 0, queued = 0;
    for (;;) {
        auto b0 = std::chrono::steady_clock::now();
        for (long long i = 0; i < batch; i++) {
            XS_CU_TRY(call(ctx, 0));
            calls++;
        }
        XS_CU_TRY(cudaEventRecord(done[cur], 0));
        /* one batch stays queued while the host waits for the one before,
         * so the GPU never idles between batches */
        if (queued)
            XS_CU_TRY(cudaEventSynchronize(done[cur ^ 1]));
        queued = 1;
        auto now = std::chrono::steady_clock::now();
        if (std::chrono::duration<double>(now - t0).count() >= job->sustain_s)
            break;
        if (std::chrono::duration<double>(now - b0).count() < 0.05 && batch < 4096)
            batch *= 2; /* batches of about 50 ms keep the host's checks rare */
        cur ^= 1;
    }
    XS_CU_TRY(cudaEventSynchronize(done[cur]));
    float ms = 0;
    XS_CU_TRY(cudaEventElapsedTime(&ms, start, done[cur]));
    res->sustain_calls = calls;
    res->sustain_time_s = ms * 1e-3;
    res->reps = 0;
    return XS_CUDA_OK;
}

int xs_cu_time(const xs_cuda_job *job, xs_cu_call_fn call, void *ctx, xs_cuda_result *res,
               char *err, size_t errsz)
{
    if (g_dev < 0) {
        snprintf(err, errsz, "no CUDA device probed: call probe first");
        return XS_CUDA_FAILED;
    }
    for (int i = 0; i < job->warmup; i++)
        XS_CU_TRY(call(ctx, 0));
    XS_CU_TRY(cudaDeviceSynchronize());
    if (job->sustain_s > 0)
        return sustain(job, call, ctx, res, err, errsz);
    int reps = job->reps;
    if (reps < 1 || reps > XS_CUDA_MAX_REPS) {
        snprintf(err, errsz, "reps %d: expected 1..%d", reps, XS_CUDA_MAX_REPS);
        return XS_CUDA_BADJOB;
    }
    int rc = need_events(2 * reps, err, errsz);
    if (rc)
        return rc;
    for (int r = 0; r < reps; r++) {
        if (job->flush_l2 && (rc = flush_l2(r, err, errsz)) != 0)
            return rc;
        XS_CU_TRY(cudaEventRecord(g_ev[2 * r], 0));
        XS_CU_TRY(call(ctx, 0));
        XS_CU_TRY(cudaEventRecord(g_ev[2 * r + 1], 0));
    }
    XS_CU_TRY(cudaEventSynchronize(g_ev[2 * reps - 1]));
    XS_CU_TRY(cudaGetLastError());
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        XS_CU_TRY(cudaEventElapsedTime(&ms, g_ev[2 * r], g_ev[2 * r + 1]));
        res->time_s[r] = ms * 1e-3;
    }
    res->reps = reps;
    return XS_CUDA_OK;
}
