/* xs_cu.h — what the CUDA kernel files share inside libxscuda.so (CUDA
 * types allowed; the public C face is xs_cuda.h). runtime.cu holds the
 * device, the buffers, the L2 flush and the one timing loop every job uses;
 * each kernel family has a run and a check behind the job table (api.cu). */
#ifndef XS_CU_H
#define XS_CU_H

#include <cuda_runtime.h>
#include <stddef.h>

#include "xs_cuda.h"

/* Format "what: cudaGetErrorString(e)" into err; XS_CUDA_FAILED (or
 * XS_CUDA_NO_GPU for the no-device/no-driver errors). */
int xs_cu_fail(cudaError_t e, const char *what, char *err, size_t errsz);

/* Evaluate a CUDA call; on error return from the enclosing function with
 * xs_cu_fail's status. Needs `err` and `errsz` in scope. */
#define XS_CU_TRY(call)                                     \
    do {                                                    \
        cudaError_t xs_e_ = (call);                         \
        if (xs_e_ != cudaSuccess)                           \
            return xs_cu_fail(xs_e_, #call, err, errsz);    \
    } while (0)

/* The message of the first sticky error (a kernel's fault or trap), after
 * which the context is unusable until the process ends; NULL while none
 * happened. run and check refuse every job once it is set. */
const char *xs_cu_lost(void);

/* The probed device's properties (valid after a successful probe). */
const cudaDeviceProp *xs_cu_props(void);

/* A device buffer of at least `bytes` kept in slot `slot` (0..XS_CU_SLOTS-1)
 * across jobs (regrown when too small, freed by xs_cuda_api.release), or
 * NULL with err set. Contents are unspecified. */
#define XS_CU_SLOTS 16
void *xs_cu_buffer(int slot, size_t bytes, char *err, size_t errsz);

/* Fill n floats (device) with a seeded pseudo-random sequence in [lo, hi)
 * (the same sequence for the same seed), on the GPU. */
int xs_cu_fill_f32(float *d, size_t n, unsigned seed, float lo, float hi, char *err,
                   size_t errsz);

/* One call of a job: launches its kernel(s) on `stream` (no sync). */
typedef cudaError_t (*xs_cu_call_fn)(void *ctx, cudaStream_t stream);

/* The timing loop of every job: job->warmup untimed calls; then, if
 * job->sustain_s > 0, calls back to back until that many seconds have passed
 * (res->sustain_calls, res->sustain_time_s by events); else job->reps
 * repetitions each between its own events, with L2 flushed before each when
 * job->flush_l2 (outside the events). Fills res->reps and res->time_s; the
 * caller fills bytes, flops, launches, impl. */
int xs_cu_time(const xs_cuda_job *job, xs_cu_call_fn call, void *ctx, xs_cuda_result *res,
               char *err, size_t errsz);

/* Kernel families: each runs (times) and checks its kinds. */
int xs_cu_stream_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz);
int xs_cu_stream_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz);
int xs_cu_optim_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz);
int xs_cu_optim_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz);
int xs_cu_rowop_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz);
int xs_cu_rowop_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz);
/* XS_CJ_GEMM and XS_CJ_GEMM_CUBLAS (gemm_mma.cu, gemm_cublas.cu). */
int xs_cu_gemm_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz);
int xs_cu_gemm_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz);
/* Frees the GEMM family's own state (cuBLAS handles, workspace). */
void xs_cu_gemm_release(void);

/* Added with runtime.cu (the public table's probe and release are these). */
/* Select device `index`, fill info; XS_CUDA_NO_GPU with the runtime's words
 * when there is no usable one (also a GPU this build has no code for). */
int xs_cu_probe(int index, xs_cuda_info *info, char *err, size_t errsz);
/* 1 once a probe succeeded. */
int xs_cu_probed(void);
/* Bytes the buffer slots and the L2 flush buffer hold now. */
size_t xs_cu_held_bytes(void);
/* Free the slots, the flush buffer and the timing events. */
void xs_cu_runtime_release(void);
/* Free the slots and the flush buffer only (their contents are never
 * carried from one job to the next). */
void xs_cu_runtime_trim(void);
/* The same for n 16-bit floats (bf16 != 0: bf16, else fp16), rounded to
 * nearest even from the fp32 draw. */
int xs_cu_fill_16(unsigned short *d, size_t n, unsigned seed, float lo, float hi, int bf16,
                  char *err, size_t errsz);
/* Blocks of `threads` that fill the probed GPU for `kernel` (occupancy x
 * SMs), at most `need` and at least 1: a grid-stride kernel's grid. */
int xs_cu_fill_grid(const void *kernel, int threads, long long need);

#endif
