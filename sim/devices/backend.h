/* backend.h — a device class (gpu, cpu, tpu) is whole behind one
 * const table: the schema of its device files and the checks between their
 * fields, the description of its matrix engine for the class-neutral GEMM
 * model, its op estimate, its slow/fast corners, its architecture name, and
 * whether it runs asynchronously to the host, and what it offers beyond
 * (topology, power, the CUDA runtime). Nothing outside the class's own
 * folder (devices/gpu, cpu, tpu) switches on the class: it asks the record.
 * Adding a class is its folder (model, schema, its own record's type, which
 * xs_device.own holds) and one slot in backend.c's table. */
#ifndef XS_BACKEND_H
#define XS_BACKEND_H

#include <stddef.h>

#include "comm.h"
#include "device.h"
#include "error.h"
#include "gemm.h"
#include "op.h"
#include "scenario.h"
#include "schema.h"

/* The names of the classes, in the order of backend.c's table (a device's
 * cls indexes it); the "class" field of a device file is one of them. */
#define XS_CLASS_CHOICES "gpu|cpu|tpu"

typedef struct xs_backend {
    const char *name; /* the device files' "class" */
    /* What a file of this class is, for `xpusim devices --help`. */
    const char *doc;
    /* The schema rows of its device files, in the order files list them. */
    const xs_field *(*fields)(size_t *n);
    /* 1 for rows `--help` lists (NULL: all); repeated groups show once. */
    int (*documents)(const xs_field *f);
    /* Relations between the fields of a loaded file (after the common
     * ones), and whatever the class derives from them (tile lists). */
    int (*check)(xs_device *dev, const char *path, xs_error *err);
    /* "ampere", "amx-bf16": what reports call the device's architecture. */
    const char *(*arch_name)(const xs_device *dev);
    /* The matrix engine at full occupancy, as gemm.c reads it. */
    void (*gemm_engine)(const xs_device *dev, xs_gemm_engine *e);
    /* Time and bound of one call of op on dev (energy is filled later). */
    int (*estimate)(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err);
    /* The same given the engine gemm_engine described for dev (what a
     * prediction computes once for its many ops); NULL: estimate alone. */
    int (*estimate_on)(const xs_device *dev, const xs_gemm_engine *eng, const xs_op *op,
                       xs_estimate *est, xs_error *err);
    /* dev with its uncertain parameters at the slow (which < 0) or fast
     * (which > 0) end of their range; which == 0 copies. */
    void (*corner)(const xs_device *dev, int which, xs_device *out);
    /* 1 when the host only queues kernels and the device runs them later
     * (an accelerator); 0 when the host runs them itself */
    int async;
    /* what reports call the matrix engine ("MXUs"); NULL: "tensor cores" */
    const char *matrix_unit;
    /* Non-NULL when the class's clock follows the board's power limit
     * (power.h): the core clock (MHz) it holds under sustained dense load
     * at the default limit and the highest it reaches (the clock its peaks
     * are quoted at); its estimates run at the device's clock_scale and its
     * energy scales with it. NULL: a power limit is refused for its
     * devices. */
    void (*clock_mhz)(const xs_device *dev, double *sustained, double *top);
    /* 1 where PyTorch runs the class's kernels through CUDA: the caching
     * allocator (whose rounding is the fragmentation memory.c adds), DDP's
     * gradient buckets, a CUDA context outside the tensors, and the
     * libraries written for CUDA alone (bitsandbytes' quantized layers). */
    int cuda;
    /* Bytes the class's math library holds outside the tensors (cuBLAS's
     * workspaces as PyTorch allocates them); NULL: none. */
    double (*workspace_bytes)(const xs_device *dev);
    /* Non-NULL for a class whose compiler builds the whole step into one
     * program (XLA on TPUs): run by xs_predict after every op's estimate,
     * it rewrites the estimates for what the compiler does across ops (an
     * op fused into its producer loses its own memory pass), writes one
     * line about it to note, and returns the step's time outside the ops
     * (infeed), which replaces the host timeline of eager frameworks. */
    double (*whole_step)(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                         xs_estimate *est, char *note, size_t cap);
    /* Non-NULL where the format a matmul runs in is not xs_gemm_rate's
     * answer (a TPU's MXU runs fp16 and fp32 matmuls as bf16 passes). */
    void (*matmul_format)(const xs_device *dev, xs_dtype asked, xs_dtype *engine, int *tensor);
    /* How the class's devices join for a data-parallel job: the job's
     * topology for s's cluster (xs_topo_of asks it for several devices:
     * GPUs in nodes over NVLink or PCIe and a network, with NCCL's
     * algorithms; a TPU slice's ICI torus under XLA), or one error line
     * naming the key it cannot model. NULL: several devices refused (the
     * host CPU). */
    int (*topology)(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err);
} xs_backend;

extern const xs_backend xs_gpu_backend;
extern const xs_backend xs_cpu_backend;
extern const xs_backend xs_tpu_backend;

/* The class of dev: the record its loader set (one of the table's). */
static inline const xs_backend *xs_backend_of(const xs_device *dev)
{
    return dev->backend;
}

/* The class named name ("gpu"), or NULL; *index receives its table index. */
const xs_backend *xs_backend_find(const char *name, int *index);

/* The i-th class of the table, or NULL past the end. */
const xs_backend *xs_backend_at(int i);

#endif
