/* cuda_lib.c — see cuda_lib.h. */
#include "cuda_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUILT_PATH "build/cuda/libxscuda.so"

/* build/cuda/libxscuda.so in the folder of the running executable, the
 * tree `make` built both in; "" when /proc/self/exe cannot be read. */
static void beside_exe(char *out, size_t size)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = '\0';
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = '\0';
    /* the release binary is ./xpusim, the sanitizer one build/asan/xpusim */
    size_t len = strlen(exe);
    const char *up = len >= 11 && strcmp(exe + len - 11, "/build/asan") == 0 ? "/../.." : "";
    if (strlen(exe) + strlen(up) + sizeof "/" BUILT_PATH > size)
        return; /* a path this long is no build tree of ours */
    snprintf(out, size, "%.3900s%s/" BUILT_PATH, exe, up);
}

static int status_code(int st)
{
    return st == XS_CUDA_UNSUPPORTED ? XS_EUNSUPPORTED : st == XS_CUDA_NO_GPU ? XS_ENOHW : XS_EIO;
}

int xs_cuda_lib_open(xs_cuda_lib *lib, int index, xs_error *err)
{
    memset(lib, 0, sizeof *lib);
    const char *env = getenv("XS_CUDA_LIB");
    char beside[4096];
    beside_exe(beside, sizeof beside);
    if (env && env[0]) {
        snprintf(lib->path, sizeof lib->path, "%s", env);
        if (access(env, F_OK) != 0)
            return xs_error_set(err, XS_ENOHW, "XS_CUDA_LIB=%s: no such file", env);
    } else if (beside[0] && access(beside, F_OK) == 0) {
        snprintf(lib->path, sizeof lib->path, "%s", beside);
    } else {
        snprintf(lib->path, sizeof lib->path, "libxscuda.so");
    }
    dlerror();
    /* RTLD_NODELETE: the CUDA runtime and libstdc++ it pulls in keep
     * process-wide state (atexit handlers, the exception pool) that must
     * outlive a dlclose; unloading them is unsafe and hides that memory
     * from the leak checkers, which then report it as lost. */
    lib->handle = dlopen(lib->path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib->handle) {
        const char *why = dlerror();
        if (!env && strcmp(lib->path, "libxscuda.so") == 0 && why &&
            strstr(why, "libxscuda.so: cannot open"))
            return xs_error_set(err, XS_ENOHW,
                                "xpusim was built without CUDA: %s not found (nvcc was not on "
                                "PATH at build time; set XS_CUDA_LIB to a libxscuda.so)",
                                beside[0] ? beside : BUILT_PATH);
        return xs_error_set(err, XS_ENOHW, "cannot load %s: %s", lib->path,
                            why ? why : "dlopen failed");
    }
    xs_cuda_api_get_fn get = NULL;
    void *sym = dlsym(lib->handle, XS_CUDA_API_SYMBOL);
    memcpy(&get, &sym, sizeof get); /* POSIX: a function pointer fits a void * */
    const xs_cuda_api *api = get ? get(XS_CUDA_API_VERSION) : NULL;
    if (!api || api->version != XS_CUDA_API_VERSION || !api->probe || !api->run ||
        !api->check || !api->release) {
        xs_error_set(err, XS_ENOHW,
                     "%s: %s (xpusim needs the interface version %d of kernels/cuda/xs_cuda.h; "
                     "rebuild with make)",
                     lib->path,
                     !get ? "no symbol " XS_CUDA_API_SYMBOL
                          : !api ? "does not provide the interface version xpusim needs"
                                 : "its interface table is incomplete or of another version",
                     XS_CUDA_API_VERSION);
        dlclose(lib->handle);
        lib->handle = NULL;
        return err ? err->code : XS_ENOHW;
    }
    char why[512] = "";
    int st = api->probe(index, &lib->info, why, sizeof why);
    if (st != XS_CUDA_OK) {
        why[sizeof why - 1] = '\0';
        if (st == XS_CUDA_NO_GPU)
            xs_error_set(err, XS_ENOHW, "no CUDA GPU: %s", why[0] ? why : "the runtime gave no reason");
        else
            xs_error_set(err, XS_ENOHW, "no usable CUDA GPU at index %d: %s", index,
                         why[0] ? why : "probe failed");
        api->release();
        dlclose(lib->handle);
        lib->handle = NULL;
        return err ? err->code : XS_ENOHW;
    }
    lib->info.name[sizeof lib->info.name - 1] = '\0';
    lib->info.pci_bus_id[sizeof lib->info.pci_bus_id - 1] = '\0';
    lib->api = api;
    return XS_OK;
}

void xs_cuda_lib_close(xs_cuda_lib *lib)
{
    if (lib->api)
        lib->api->release();
    if (lib->handle)
        dlclose(lib->handle);
    lib->api = NULL;
    lib->handle = NULL;
}

xs_cuda_job xs_cuda_job_make(int kind, int dtype, int reps)
{
    xs_cuda_job j;
    memset(&j, 0, sizeof j);
    j.kind = kind;
    j.dtype = dtype;
    j.reps = reps;
    j.warmup = 3;
    j.flush_l2 = 1;
    j.step = 1;
    return j;
}

int xs_cuda_lib_run(const xs_cuda_lib *lib, const xs_cuda_job *job, xs_cuda_result *res,
                    const char *what, xs_error *err)
{
    char why[512] = "";
    memset(res, 0, sizeof *res);
    int st = lib->api->run(job, res, why, sizeof why);
    why[sizeof why - 1] = '\0';
    res->impl[sizeof res->impl - 1] = '\0';
    if (st != XS_CUDA_OK)
        return xs_error_set(err, status_code(st), "%s: %s", what, why[0] ? why : "failed");
    if (job->sustain_s <= 0 && (res->reps < 1 || res->reps > XS_CUDA_MAX_REPS))
        return xs_error_set(err, XS_EIO, "%s: the library returned %d repetitions (1..%d)", what,
                            res->reps, XS_CUDA_MAX_REPS);
    for (int i = 0; job->sustain_s <= 0 && i < res->reps; i++)
        if (!(res->time_s[i] > 0 && res->time_s[i] < 1e4))
            return xs_error_set(err, XS_EIO, "%s: repetition %d took %g s (expected > 0)", what,
                                i + 1, res->time_s[i]);
    if (job->sustain_s > 0 && !(res->sustain_calls > 0 && res->sustain_time_s > 0))
        return xs_error_set(err, XS_EIO, "%s: the sustained run made %lld calls in %g s", what,
                            res->sustain_calls, res->sustain_time_s);
    return XS_OK;
}
