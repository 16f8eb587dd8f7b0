/* xs_cuda.h — the C interface of libxscuda.so, the CUDA kernels of
 * kernels/cuda/ built by nvcc. xpusim never links CUDA: `calibrate
 * --backend cuda` and `validate --backend cuda` dlopen the library and ask
 * it for this one table (xs_cuda_api_get), so the command builds, runs and
 * is tested on hosts with no CUDA toolkit and no GPU. Plain C, no CUDA
 * type crosses it. A test double with the same table (tests/fake_gpu.c)
 * stands in for a GPU in CI.
 *
 * Timing is the library's: CUDA events around each repetition, optionally
 * with L2 flushed (a buffer of twice the L2 written) before it, so a kernel
 * meets the cache state of a training step. Statistics, power and clocks
 * (NVML) are the caller's. */
#ifndef XS_CUDA_H
#define XS_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XS_CUDA_API_VERSION 1

/* The symbol the caller looks up with dlsym. */
#define XS_CUDA_API_SYMBOL "xs_cuda_api_get"

/* Exit status of the CUDA binaries (tests, bench) started without a usable
 * GPU: automake's "skipped". */
#define XS_CUDA_EXIT_NO_GPU 77

typedef enum {
    XS_CUDA_OK = 0,
    XS_CUDA_NO_GPU = 1,      /* no device, no driver, or the driver is too old */
    XS_CUDA_UNSUPPORTED = 2, /* this job on this GPU (bf16 MMA before sm_80, ...) */
    XS_CUDA_FAILED = 3,      /* a CUDA or cuBLAS call failed; err says which */
    XS_CUDA_BADJOB = 4       /* a job field out of range; err names it */
} xs_cuda_status;

typedef struct {
    char name[96];        /* cudaDeviceProp.name, e.g. "NVIDIA H100 80GB HBM3" */
    char pci_bus_id[32];  /* "0000:3B:00.0": how NVML finds the same board */
    int cc_major, cc_minor;
    int sm_count;
    double mem_gb;        /* total global memory, 1e9 bytes */
    double l2_mb;         /* 2^20 bytes */
    double smem_per_sm_kb;
    int mem_bus_bits;
    double mem_clock_mhz; /* as the runtime reports it (may be 0 on new drivers) */
    double sm_clock_mhz;  /* the runtime's clockRate (may be 0 on new drivers) */
    int driver_version, runtime_version; /* 12040 = 12.4 */
    int device_index;
} xs_cuda_info;

typedef enum {
    XS_CJ_LAUNCH,      /* an empty kernel, `reps` launches back to back: launch cost */
    XS_CJ_COPY,        /* b = a over `elems` fp32 elements (bytes 8 per element) */
    XS_CJ_TRIAD,       /* a = b + s c over `elems` fp32 elements (bytes 12 per element) */
    XS_CJ_GEMM,        /* own tensor-core GEMM (fp16/bf16 in, fp32 accumulate) */
    XS_CJ_GEMM_CUBLAS, /* cublasGemmEx with the same operands (every dtype) */
    XS_CJ_ADAN_FUSED,  /* one multi-tensor launch per chunk list (elems params) */
    XS_CJ_ADAN_EAGER,  /* one kernel per elementwise op per tensor */
    XS_CJ_ADAMW_FUSED, /* one multi-tensor launch per chunk list */
    XS_CJ_LAYERNORM,   /* forward, m rows of n, dtype in and out, fp32 statistics */
    XS_CJ_SOFTMAX,     /* forward over the last dim, m rows of n */
    XS_CJ_COUNT
} xs_cuda_kind;

typedef enum { XS_CD_FP32, XS_CD_TF32, XS_CD_FP16, XS_CD_BF16, XS_CD_COUNT } xs_cuda_dtype;

/* One measurement job. Unused fields are 0. */
typedef struct {
    int kind;  /* xs_cuda_kind */
    int dtype; /* xs_cuda_dtype: GEMM inputs; optimizer parameters (fp16/bf16 keep
                  an fp32 master copy; state is fp32); layernorm/softmax in and out */
    /* GEMM, row-major: C (m x n, fp32 for fp32/tf32, else dtype) = op(A) op(B),
     * op(A) m x k, op(B) k x n; ta: A is stored k x m, tb: B is stored n x k.
     * layernorm, softmax: m rows of n elements. */
    long long m, n, k;
    int ta, tb;
    long long elems; /* copy, triad: elements per array; optimizers: parameters */
    int hidden;      /* optimizers: the tensors are a Transformer's, layer by layer, of
                        this hidden size (Q, K, V, O, their biases, the MLP's two
                        matrices and biases, two LayerNorms' weights and biases),
                        until elems parameters; 0: one tensor of elems */
    int reps;        /* timed repetitions, each between its own pair of events
                        (XS_CJ_LAUNCH: launches timed together, 1..XS_CUDA_MAX_REPS) */
    int warmup;      /* untimed calls first */
    int flush_l2;    /* write 2 x L2 bytes before each repetition (untimed) */
    /* > 0: instead of reps, call back to back (no flush) for at least this
     * many seconds and return the count and the events' time: the steady
     * state in which the caller samples power and clocks */
    double sustain_s;
    int step;        /* optimizers: the step number the update uses (>= 1) */
} xs_cuda_job;

#define XS_CUDA_MAX_REPS 512

typedef struct {
    int reps;
    double time_s[XS_CUDA_MAX_REPS]; /* one per repetition (XS_CJ_LAUNCH: one per launch,
                                        the batch's time over its launches) */
    double bytes;    /* DRAM bytes one call moves by the kernel's definition (see the kernel) */
    double flops;    /* useful FLOPs of one call (GEMM 2mnk; others 0) */
    int launches;    /* kernel launches one call makes */
    int tensors;     /* optimizers: tensors the parameters were split into */
    long long sustain_calls; /* sustain mode: calls made */
    double sustain_time_s;   /* sustain mode: their time, by events */
    char impl[64];   /* what ran: the kernel's name and its configuration (tile, vector
                        width, cuBLAS algorithm) */
} xs_cuda_result;

typedef struct {
    int version; /* XS_CUDA_API_VERSION */
    /* Select device `index` and describe it. XS_CUDA_NO_GPU with the runtime's
     * reason in err when there is none. */
    int (*probe)(int index, xs_cuda_info *info, char *err, size_t errsz);
    /* Time one job on the probed device. */
    int (*run)(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz);
    /* Run the job once on small seeded data and compare with the CPU reference
     * (the shared math of kernels/common for optimizers, a double-precision loop
     * otherwise): *max_err is the largest error relative to the tolerance the
     * kernel promises (<= 1 passes; bit-exact kernels promise 0 ulp, so any
     * difference gives a value > 1). */
    int (*check)(const xs_cuda_job *job, double *max_err, char *err, size_t errsz);
    /* Free every buffer the library holds (it keeps them across jobs). */
    void (*release)(void);
} xs_cuda_api;

/* The table for `version`, or NULL when this library does not provide it. */
const xs_cuda_api *xs_cuda_api_get(int version);
typedef const xs_cuda_api *(*xs_cuda_api_get_fn)(int version);

#ifdef __cplusplus
}
#endif

#endif
