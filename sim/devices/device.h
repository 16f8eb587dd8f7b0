/* device.h — one device, loaded from devices/<id>.json: the facts every
 * device class shares (id, class, peaks, memory, power, price, links) and
 * the parameters of its class's cost model, which only the class reads.
 * The file's "class" picks the class (backend.h), whose schema the file
 * must then follow. Immutable once loaded; every number has a source note
 * in the file. */
#ifndef XS_DEVICE_H
#define XS_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "dtype.h"
#include "error.h"
#include "gemm.h"
#include "op.h"

/* What xs_device holds for its class: bytes aligned for any field a
 * class record has, as many as the largest record (the GPU's, with its
 * tile lists) needs; zero where the record ends, so that two devices
 * compare equal byte for byte when their records do (the memos' keys). */
#define XS_DEV_OWN_BYTES 2048
typedef union {
    double align_d;
    int64_t align_i;
    void *align_p;
    unsigned char bytes[XS_DEV_OWN_BYTES];
} xs_dev_own;

struct xs_backend;

typedef struct {
    char id[64];
    char name[96];
    int cls;       /* index of its class in backend.c's table (XS_CLASS_CHOICES) */
    const struct xs_backend *backend; /* that class's record (backend.h), set by the
                                         loader: a device knows its class without
                                         the table */
    char arch[24]; /* "ampere", ... for GPUs; the instruction set (amx-bf16, ...) for CPUs */

    /* Dense peaks in TFLOP/s (TOPS for int8) as quoted: fp32 on the vector
     * units, the others on the matrix engine, 0 where the engine lacks the
     * format (no tf32/bf16 on Volta and Turing). */
    double peak_tflops[XS_DTYPE_COUNT];
    double mem_capacity_gb;
    /* what CUDA reports as the board's total (cudaMemGetInfo, nvidia-smi):
     * less than the capacity by ECC (GDDR boards) and the driver's
     * reservation; 0: not given, the capacity in GiB */
    double mem_usable_mib;
    double mem_bw_gbs; /* peak DRAM bandwidth (a CPU: measured, all cores) */

    double tdp_w, idle_w; /* tdp_w: the default power limit */
    double power_memory_frac; /* share of (tdp - idle) drawn at full memory bandwidth */
    /* share of (tdp - idle) a kernel draws that keeps the compute engines
     * busy at their achievable rate; 0: absent, which is 1 (TDP). Measured
     * by calibrate --backend cuda (NVML under a sustained dense GEMM). */
    double power_compute_frac;
    /* the range of limits the board accepts; 0: not published (then above
     * idle_w, at most tdp_w) */
    double power_limit_min_w, power_limit_max_w;
    /* How the core's power follows its clock under a power limit (power.h):
     * the core voltage at the lowest clocks over that at the top clock
     * (0: absent, the voltage in proportion to the clock), the clock below
     * which it stops falling, and the share of a dense kernel's core power
     * that is leakage (follows the voltage, not the clock; 0: none). */
    double power_v_floor, power_vf_knee_mhz, power_leak_frac;
    /* The power limit in effect (0: the default, tdp_w) and the clock it
     * leaves: clock_scale times the class's clock at the default limit (0
     * or 1: that clock). Set by xs_predict for a --set device.power_limit_w
     * (power.h); a loaded device has both 0. */
    double power_limit_w, clock_scale;

    double price_usd_per_hour;
    char price_provider[128];
    char price_as_of[16];

    double nvlink_gbs_bidir; /* 0 if the board has no NVLink */
    double host_gbs_bidir;
    char host_link[48];

    /* the parameters of the class's own model, read only by the class's
     * folder (gpu.h's xs_gpu_of, cpu.h's, tpu.h's): storage the largest
     * record fits, which each class checks; always written through its
     * record's type (the schema stores each field in its own type) */
    xs_dev_own own;
} xs_device;

/* dev's own record as a T, const where dev is: the one cast to it, for
 * the class's folder (its header names it: xs_gpu_of, ...). The storage is
 * only ever read and written through T's members, each in its own type
 * (the schema stores each field in the type its row says; copies are whole
 * structs or memcpy), so no byte of it is read as two types; the compilers
 * the project builds with (gcc, clang) do not reorder such accesses. */
#define XS_OWN_RECORD(T, dev)                                                                 \
    _Generic((dev), const xs_device *: (const T *)(const void *)(dev)->own.bytes,             \
             default: (T *)(void *)(dev)->own.bytes)

/* Load and validate path into dev. The file's stem must equal its "id".
 * The "class" field selects the schema and the checks between fields;
 * then the relations every class shares (idle below TDP, a dated price)
 * and the class's own are checked. */
int xs_dev_load(const char *path, xs_device *dev, xs_error *err);

/* xs_resolve("devices", id_or_path) then xs_dev_load. */
int xs_dev_open(const char *id_or_path, xs_device *dev, xs_error *err);

/* Write dev as a device file at path (atomically), from its class's
 * schema: stored fields from dev, text fields (notes, sources, the
 * calibration object) from notes at the same paths. The document is
 * checked as a load would check it before anything is written. */
int xs_dev_write(const xs_device *dev, const cJSON *notes, const char *path, xs_error *err);

/* The band's corners: dev with every uncertain parameter of its model at
 * its slow (which < 0) or fast (which > 0) end; which == 0 copies. */
void xs_dev_corner(const xs_device *dev, int which, xs_device *out);

/* dev's matrix engine as the GEMM model reads it (all units, DRAM). */
void xs_dev_gemm_engine(const xs_device *dev, xs_gemm_engine *e);

/* Time and bound of one call of op on dev (energy is filled later). */
int xs_dev_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err);

#endif
