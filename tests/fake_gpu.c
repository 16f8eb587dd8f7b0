/* fake_gpu.c — a test double for a GPU, built as a shared object
 * (build/rel/libxs_fake_gpu.so) that exports both libxscuda's table
 * (kernels/cuda/xs_cuda.h) and the NVML functions calibrate/nvml.c uses,
 * so XS_CUDA_LIB and XS_NVML_LIB can both point at it. Jobs are not run:
 * their times come from the known laws below with +-0.5% deterministic
 * noise, and NVML reports the power those laws give while a sustained job
 * "runs" (the shared state below; a sustained job sleeps at most
 * FAKE_SUSTAIN_WALL_S of real time and reports that time, so the sampler
 * sees it). The parameters are what tests/test_cuda_backend.c expects
 * calibrate to recover; they are not any real GPU's figures.
 *
 * GEMMs follow xpusim's own GEMM model (sim/devices/gemm.c through the gpu class,
 * the path calibrate/cuda_calibrate.c's fit compares against) on the base
 * device the fake's name maps to, with the fake's launch cost, bandwidth
 * and loaded clock and a known gemm_efficiency: the fit must recover that
 * efficiency to the noise. The sim/ sources are linked into this object
 * (position-independent, symbols hidden), so it holds its own copy of the
 * model and loads the device file from the data root of the process that
 * loads it (XPUSIM_DATA, else above /proc/self/exe), as xpusim does.
 *
 * Environment: XS_FAKE_GPU=none (probe finds no GPU), XS_FAKE_NVML=initfail
 * (nvmlInit_v2 fails), XS_FAKE_NVML=noenergy (no energy counter: the
 * integrated samples are used). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "device.h"
#include "gemm.h"
#include "gpu.h"
#include "paths.h"
#include "xs_cuda.h"

/* ---- the known parameters ------------------------------------------------------ */
#define FAKE_NAME "NVIDIA H100 80GB HBM3" /* matched to devices/h100-sxm5-80gb.json */
#define FAKE_BASE "h100-sxm5-80gb"        /* the device file whose GEMM model times GEMMs */
#define FAKE_PCI "00000000:1B:00.0"
#define FAKE_SMS 132
#define FAKE_L2_MB 50.0
#define FAKE_DRAM_BW 2847.5e9  /* B/s: 0.85 x the 3350 GB/s datasheet figure */
#define FAKE_L2_BW 7000e9      /* B/s while the arrays fit in L2 */
#define FAKE_LAUNCH_S 2.5e-6   /* per kernel launch */
#define FAKE_GEMM_EFF 0.80     /* FAKE_BASE's gemm_efficiency replaced by this */
#define FAKE_ROWOP_BW_SHARE 0.6 /* layernorm, softmax: share of DRAM bandwidth */
#define FAKE_OPT_BW_SHARE 0.9   /* optimizers */
#define FAKE_IDLE_W 70.0
#define FAKE_PJ_PER_FLOP 0.4
#define FAKE_PJ_PER_BYTE 60.0
#define FAKE_SM_MHZ_LOADED 1650.0
#define FAKE_SM_MHZ_IDLE 345.0
#define FAKE_MEM_MHZ 2619.0
#define FAKE_POWER_LIMIT_MW 700000u
#define FAKE_SUSTAIN_WALL_S 0.12

/* The job's dtype is handed to the model as is (cuda_calibrate.c does the same). */
_Static_assert(XS_CD_FP32 == (int)XS_FP32 && XS_CD_TF32 == (int)XS_TF32 &&
                   XS_CD_FP16 == (int)XS_FP16 && XS_CD_BF16 == (int)XS_BF16,
               "xs_cuda_dtype and xs_dtype must share their order");

/* ---- shared state: what the board is doing now --------------------------------- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double p_now = FAKE_IDLE_W, sm_now = FAKE_SM_MHZ_IDLE, energy_mj = 0, t_last = -1;
static unsigned long long reasons_now = 0x1; /* gpu_idle */
static unsigned noise_state = 12345;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The energy counter integrates the power over real time. Call locked. */
static void advance(void)
{
    double t = now_s();
    if (t_last >= 0)
        energy_mj += p_now * (t - t_last) * 1000.0;
    t_last = t;
}

static void set_state(double p, double sm, unsigned long long reasons)
{
    pthread_mutex_lock(&lock);
    advance();
    p_now = p;
    sm_now = sm;
    reasons_now = reasons;
    pthread_mutex_unlock(&lock);
}

/* 1 +- 0.5%, the same sequence every run */
static double noise(void)
{
    pthread_mutex_lock(&lock);
    noise_state = noise_state * 1103515245u + 12345u;
    unsigned v = (noise_state >> 8) & 0xffff;
    pthread_mutex_unlock(&lock);
    return 1.0 + 0.01 * ((double)v / 65535.0 - 0.5);
}

static int fake_none(void)
{
    const char *e = getenv("XS_FAKE_GPU");
    return e && strcmp(e, "none") == 0;
}

/* ---- the GEMM model: FAKE_BASE as the fit will see it, at FAKE_GEMM_EFF ---------- */
static pthread_once_t model_once = PTHREAD_ONCE_INIT;
static xs_device model_dev;
static xs_error model_err;

/* The fit (xs_cuda_fit) sets the launch cost, the streaming efficiency and
 * the sustained clock from the launch, copy and sustained-GEMM rows before
 * it fits the GEMM efficiency; the fake's own values of those go in here,
 * so a GEMM row differs from the model at FAKE_GEMM_EFF by the noise and
 * by how far those three fits land from the fake's values. */
static void model_load(void)
{
    char path[4096];
    xs_paths_init(NULL);
    int rc = xs_resolve("devices", FAKE_BASE, path, sizeof path, &model_err);
    if (!rc)
        rc = xs_dev_load(path, &model_dev, &model_err);
    if (!rc && strcmp(xs_backend_of(&model_dev)->name, "gpu") != 0)
        rc = xs_error_set(&model_err, XS_EFIELD, "%s is not a gpu device", path);
    if (!rc && !(model_dev.mem_bw_gbs * 1e9 >= FAKE_DRAM_BW))
        rc = xs_error_set(&model_err, XS_ERANGE, "%s: bandwidth %.0f GB/s is under the fake's %.1f",
                          path, model_dev.mem_bw_gbs, FAKE_DRAM_BW * 1e-9);
    if (rc) {
        model_err.code = rc; /* gemm_time tells a failed load by it */
        return;
    }
    xs_gpu_params *g = xs_gpu_of(&model_dev);
    g->gemm_efficiency = FAKE_GEMM_EFF;
    g->kernel_launch_us = FAKE_LAUNCH_S * 1e6;
    g->mem_bw_efficiency = FAKE_DRAM_BW / (model_dev.mem_bw_gbs * 1e9);
    g->clock_sustained_mhz = FAKE_SM_MHZ_LOADED;
    model_err.code = XS_OK;
}

/* One GEMM call's time by the model: the shape as cuda_calibrate.c's
 * predict() builds it (row-major C, batch 1, C in the input format). */
static int gemm_time(const xs_cuda_job *j, double *t, char *err, size_t errsz)
{
    pthread_once(&model_once, model_load);
    if (model_err.code) {
        snprintf(err, errsz, "fake GPU: the GEMM model's device %s: %s", FAKE_BASE, model_err.msg);
        return XS_CUDA_FAILED;
    }
    xs_dtype dt = (xs_dtype)j->dtype;
    xs_gemm_engine e;
    xs_dev_gemm_engine(&model_dev, &e);
    xs_gemm_shape g = {j->m, j->n, j->k, 1, j->ta, j->tb, dt, xs_dtype_bytes(dt)};
    xs_gemm_result res;
    xs_error me;
    if (xs_gemm_model(&e, &g, &res, &me)) {
        snprintf(err, errsz, "fake GPU: %s", me.msg);
        return XS_CUDA_BADJOB;
    }
    if (!(res.time_s > 0 && isfinite(res.time_s))) {
        snprintf(err, errsz, "fake GPU: the model timed GEMM %lldx%lldx%lld at %g s", j->m, j->n,
                 j->k, res.time_s);
        return XS_CUDA_FAILED;
    }
    *t = res.time_s;
    return XS_CUDA_OK;
}

/* ---- xs_cuda_api ----------------------------------------------------------------- */
static int probe(int index, xs_cuda_info *info, char *err, size_t errsz)
{
    if (fake_none() || index != 0) {
        snprintf(err, errsz, "cudaGetDeviceCount: no CUDA-capable device is detected (fake)");
        return XS_CUDA_NO_GPU;
    }
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", FAKE_NAME);
    snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%s", FAKE_PCI);
    info->cc_major = 9;
    info->sm_count = FAKE_SMS;
    info->mem_gb = 85.0;
    info->l2_mb = FAKE_L2_MB;
    info->smem_per_sm_kb = 228;
    info->mem_bus_bits = 5120;
    info->driver_version = 13000;
    info->runtime_version = 13000;
    return XS_CUDA_OK;
}

static int dtype_bytes(int d)
{
    return d >= 2 ? 2 : 4;
}

/* One call's time, bytes, FLOPs and launches by the known laws. */
static int cost(const xs_cuda_job *j, xs_cuda_result *r, double *t, char *err, size_t errsz)
{
    double l2 = FAKE_L2_MB * 1048576.0;
    int dt = j->dtype, st;
    if (dt < 0 || dt >= XS_CD_COUNT) {
        snprintf(err, errsz, "dtype %d out of range", dt);
        return XS_CUDA_BADJOB;
    }
    r->launches = 1;
    switch (j->kind) {
    case XS_CJ_LAUNCH:
        *t = FAKE_LAUNCH_S;
        break;
    case XS_CJ_COPY:
    case XS_CJ_TRIAD:
        if (j->elems < 1) {
            snprintf(err, errsz, "elems must be >= 1");
            return XS_CUDA_BADJOB;
        }
        r->bytes = (j->kind == XS_CJ_COPY ? 8.0 : 12.0) * (double)j->elems;
        *t = FAKE_LAUNCH_S + r->bytes / (r->bytes <= l2 ? FAKE_L2_BW : FAKE_DRAM_BW);
        break;
    case XS_CJ_GEMM:
    case XS_CJ_GEMM_CUBLAS:
        if (j->m < 1 || j->n < 1 || j->k < 1) {
            snprintf(err, errsz, "m, n, k must be >= 1");
            return XS_CUDA_BADJOB;
        }
        if (j->kind == XS_CJ_GEMM && dt < XS_CD_FP16) {
            snprintf(err, errsz, "the own GEMM takes fp16 or bf16");
            return XS_CUDA_UNSUPPORTED;
        }
        if (j->ta < 0 || j->ta > 1 || j->tb < 0 || j->tb > 1) {
            snprintf(err, errsz, "ta and tb must be 0 or 1");
            return XS_CUDA_BADJOB;
        }
        r->flops = 2.0 * (double)j->m * (double)j->n * (double)j->k;
        r->bytes = (double)dtype_bytes(dt) * ((double)j->m * (double)j->k + (double)j->k * (double)j->n) +
                   (dt >= XS_CD_FP16 ? 2.0 : 4.0) * (double)j->m * (double)j->n;
        if ((st = gemm_time(j, t, err, errsz)))
            return st;
        break;
    case XS_CJ_LAYERNORM:
    case XS_CJ_SOFTMAX:
        r->bytes = 2.0 * dtype_bytes(dt) * (double)j->m * (double)j->n;
        *t = FAKE_LAUNCH_S + r->bytes / (FAKE_DRAM_BW * FAKE_ROWOP_BW_SHARE);
        break;
    case XS_CJ_ADAN_FUSED:
    case XS_CJ_ADAN_EAGER:
    case XS_CJ_ADAMW_FUSED: {
        double e = (double)j->elems;
        int tensors = j->hidden > 0 ? (int)fmax(1, e / (12.0 * j->hidden * j->hidden / 16)) : 1;
        r->tensors = tensors;
        /* fp32: Adan reads p g m v n g_prev, writes p m v n g_prev; AdamW reads p g m v, writes p m v */
        double per = j->kind == XS_CJ_ADAMW_FUSED ? 28.0 : 44.0;
        if (j->kind == XS_CJ_ADAN_EAGER) {
            r->launches = tensors * 14;
            r->bytes = e * per * 3.0;
        } else {
            r->launches = (int)fmax(1, ceil(e / 65536.0 / 320.0));
            r->bytes = e * per;
        }
        *t = r->launches * FAKE_LAUNCH_S + r->bytes / (FAKE_DRAM_BW * FAKE_OPT_BW_SHARE);
        break;
    }
    default:
        snprintf(err, errsz, "kind %d out of range", j->kind);
        return XS_CUDA_BADJOB;
    }
    snprintf(r->impl, sizeof r->impl, "fake %d", j->kind);
    return XS_CUDA_OK;
}

static int run(const xs_cuda_job *j, xs_cuda_result *r, char *err, size_t errsz)
{
    memset(r, 0, sizeof *r);
    double t;
    int st = cost(j, r, &t, err, errsz);
    if (st)
        return st;
    if (j->sustain_s > 0) {
        double rate = 1.0 / t;
        double p = FAKE_IDLE_W + (FAKE_PJ_PER_FLOP * r->flops * rate + FAKE_PJ_PER_BYTE * r->bytes * rate) * 1e-12;
        set_state(p, FAKE_SM_MHZ_LOADED, 0x4); /* sw_power_cap */
        double wall = fmin(j->sustain_s, FAKE_SUSTAIN_WALL_S);
        struct timespec ts = {0, (long)(wall * 1e9)};
        nanosleep(&ts, NULL);
        set_state(FAKE_IDLE_W, FAKE_SM_MHZ_IDLE, 0x1);
        r->sustain_calls = (long long)ceil(wall / t);
        r->sustain_time_s = (double)r->sustain_calls * t;
        return XS_CUDA_OK;
    }
    if (j->reps < 1 || j->reps > XS_CUDA_MAX_REPS) {
        snprintf(err, errsz, "reps must be in 1..%d, got %d", XS_CUDA_MAX_REPS, j->reps);
        return XS_CUDA_BADJOB;
    }
    r->reps = j->reps;
    for (int i = 0; i < j->reps; i++)
        r->time_s[i] = t * noise();
    return XS_CUDA_OK;
}

static int check(const xs_cuda_job *j, double *max_err, char *err, size_t errsz)
{
    (void)j;
    (void)err;
    (void)errsz;
    *max_err = 0;
    return XS_CUDA_OK;
}

static void release(void) {}

static const xs_cuda_api API = {XS_CUDA_API_VERSION, probe, run, check, release};

const xs_cuda_api *xs_cuda_api_get(int version)
{
    return version == XS_CUDA_API_VERSION ? &API : NULL;
}

/* ---- NVML (signatures as calibrate/nvml.c declares them) ------------------------ */
typedef void *nvml_dev;
static int board;
#define OK 0
#define NOT_SUPPORTED 3
#define NOT_FOUND 6

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, nvml_dev *d);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvml_dev *d);
int nvmlDeviceGetName(nvml_dev d, char *name, unsigned int len);
int nvmlSystemGetDriverVersion(char *v, unsigned int len);
int nvmlDeviceGetPowerUsage(nvml_dev d, unsigned int *mw);
int nvmlDeviceGetTotalEnergyConsumption(nvml_dev d, unsigned long long *mj);
int nvmlDeviceGetClockInfo(nvml_dev d, int type, unsigned int *mhz);
int nvmlDeviceGetMaxClockInfo(nvml_dev d, int type, unsigned int *mhz);
int nvmlDeviceGetCurrentClocksEventReasons(nvml_dev d, unsigned long long *r);
int nvmlDeviceGetEnforcedPowerLimit(nvml_dev d, unsigned int *mw);
int nvmlDeviceGetTemperature(nvml_dev d, int sensor, unsigned int *c);

static int nvml_mode(const char *m)
{
    const char *e = getenv("XS_FAKE_NVML");
    return e && strcmp(e, m) == 0;
}

int nvmlInit_v2(void)
{
    return nvml_mode("initfail") ? 9 : OK; /* NVML_ERROR_DRIVER_NOT_LOADED */
}
int nvmlShutdown(void)
{
    return OK;
}
const char *nvmlErrorString(int r)
{
    return r == 9 ? "Driver Not Loaded (fake)" : r == NOT_FOUND ? "Not Found" : "Unknown Error";
}
int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, nvml_dev *d)
{
    if (strcmp(pci, FAKE_PCI) != 0)
        return NOT_FOUND;
    *d = &board;
    return OK;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvml_dev *d)
{
    if (i != 0)
        return NOT_FOUND;
    *d = &board;
    return OK;
}
int nvmlDeviceGetName(nvml_dev d, char *name, unsigned int len)
{
    (void)d;
    snprintf(name, len, "%s", FAKE_NAME);
    return OK;
}
int nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
    snprintf(v, len, "580.00-fake");
    return OK;
}
int nvmlDeviceGetPowerUsage(nvml_dev d, unsigned int *mw)
{
    (void)d;
    pthread_mutex_lock(&lock);
    *mw = (unsigned)lround(p_now * 1000.0);
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlDeviceGetTotalEnergyConsumption(nvml_dev d, unsigned long long *mj)
{
    (void)d;
    if (nvml_mode("noenergy"))
        return NOT_SUPPORTED;
    pthread_mutex_lock(&lock);
    advance();
    *mj = (unsigned long long)llround(energy_mj);
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlDeviceGetClockInfo(nvml_dev d, int type, unsigned int *mhz)
{
    (void)d;
    pthread_mutex_lock(&lock);
    *mhz = (unsigned)lround(type == 2 ? FAKE_MEM_MHZ : sm_now);
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlDeviceGetMaxClockInfo(nvml_dev d, int type, unsigned int *mhz)
{
    (void)d;
    *mhz = type == 2 ? (unsigned)FAKE_MEM_MHZ : 1980u;
    return OK;
}
int nvmlDeviceGetCurrentClocksEventReasons(nvml_dev d, unsigned long long *r)
{
    (void)d;
    pthread_mutex_lock(&lock);
    *r = reasons_now;
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlDeviceGetEnforcedPowerLimit(nvml_dev d, unsigned int *mw)
{
    (void)d;
    *mw = FAKE_POWER_LIMIT_MW;
    return OK;
}
int nvmlDeviceGetTemperature(nvml_dev d, int sensor, unsigned int *c)
{
    (void)d;
    (void)sensor;
    *c = 55;
    return OK;
}
