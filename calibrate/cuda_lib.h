/* cuda_lib.h — libxscuda.so (kernels/cuda/xs_cuda.h) found, opened with
 * dlopen and its device probed, so xpusim itself never links CUDA and runs
 * on hosts without it. Where the library comes from: $XS_CUDA_LIB, else
 * build/cuda/libxscuda.so beside the running executable (the tree it was
 * built in), else the dynamic loader's search for libxscuda.so. */
#ifndef XS_CAL_CUDA_LIB_H
#define XS_CAL_CUDA_LIB_H

#include "error.h"
#include "xs_cuda.h"

typedef struct {
    void *handle;
    const xs_cuda_api *api;
    xs_cuda_info info;
    char path[4096]; /* the library opened */
} xs_cuda_lib;

/* Open the library and probe device `index`. Each failure is one line in
 * err with code XS_ENOHW: xpusim built without CUDA (no library found),
 * a CUDA library it needs missing (dlerror's text), an API version other
 * than XS_CUDA_API_VERSION, or no CUDA GPU (the runtime's reason). A job
 * error is XS_EIO. On failure nothing stays open. */
int xs_cuda_lib_open(xs_cuda_lib *lib, int index, xs_error *err);

/* Release the library's buffers and close it (no-op when not open). */
void xs_cuda_lib_close(xs_cuda_lib *lib);

/* Run one job: XS_OK, XS_EUNSUPPORTED (this job on this GPU), or XS_EIO
 * with the library's reason; what names the job in the message. */
/* A job as calibrate and validate time kernels: 3 warm-up calls, L2 flushed
 * before each of `reps` repetitions, optimizer step 1; the rest 0. */
xs_cuda_job xs_cuda_job_make(int kind, int dtype, int reps);

int xs_cuda_lib_run(const xs_cuda_lib *lib, const xs_cuda_job *job, xs_cuda_result *res,
                    const char *what, xs_error *err);

#endif
