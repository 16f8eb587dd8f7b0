/* cuda_meas.h — the rows `calibrate --backend cuda` measures on a GPU, one
 * per job (kernels/cuda/xs_cuda.h) or sustained run, written as CSV so that
 * the fit can be redone from the file alone (--from-measurements) on a
 * host with no GPU. Every column is named with its unit. Knows nothing of
 * CUDA or the device model: the fuzz harness links it alone. */
#ifndef XS_CAL_CUDA_MEAS_H
#define XS_CAL_CUDA_MEAS_H

#include <stddef.h>

#include "error.h"

/* What a row measured. The timed benches hold one call's time over
 * repetitions (median, quartiles); the sustained ones (sustain_*) a run of
 * calls back to back, with the board's power and clocks sampled; idle the
 * board doing nothing, sampled the same way. */
#define XS_CB_CHOICES                                                                          \
    "launch|copy|triad|gemm_cublas|gemm_own|layernorm|softmax|adan_fused|adan_eager|"          \
    "adamw_fused|sustain_gemm|sustain_copy|idle"
typedef enum {
    XS_CB_LAUNCH,
    XS_CB_COPY,
    XS_CB_TRIAD,
    XS_CB_GEMM_CUBLAS,
    XS_CB_GEMM_OWN,
    XS_CB_LAYERNORM,
    XS_CB_SOFTMAX,
    XS_CB_ADAN_FUSED,
    XS_CB_ADAN_EAGER,
    XS_CB_ADAMW_FUSED,
    XS_CB_SUSTAIN_GEMM,
    XS_CB_SUSTAIN_COPY,
    XS_CB_IDLE,
    XS_CB_COUNT
} xs_cbench;

#define XS_CD_CHOICES "fp32|tf32|fp16|bf16" /* xs_cuda_dtype's order */

/* median_s, q1_s, q3_s: one call (launch: one launch); reps: timed
 * repetitions, or the calls of a sustained run; sustain_s: a sustained or
 * idle run's length by events (idle: by the clock); power_w: the median
 * sampled board power, energy_j the run's energy (energy_src: counter, the
 * board's total-energy counter; samples, the power samples integrated; -
 * none sampled); sm_mhz, mem_mhz: median sampled clocks; temp_c: the
 * highest temperature sampled; reasons: NVML's clocks-event reasons seen
 * (OR of every sample, hex). */
#define XS_CMEAS_CSV_HEADER                                                                    \
    "bench,dtype,m,n,k,ta,tb,elems,hidden,reps,median_s,q1_s,q3_s,bytes,flops,launches,"      \
    "tensors,sustain_s,power_w,energy_j,energy_src,sm_mhz,mem_mhz,temp_c,reasons,impl"
#define XS_CMEAS_COLUMNS 26

typedef struct {
    int bench; /* xs_cbench */
    int dtype; /* XS_CD_CHOICES index; -1 where none ('-') */
    long long m, n, k;
    int ta, tb;
    long long elems;
    int hidden;
    long long reps;
    double median_s, q1_s, q3_s;
    double bytes, flops; /* one call */
    int launches, tensors;
    double sustain_s, power_w, energy_j;
    int energy_src; /* 0 none, 1 counter, 2 samples */
    double sm_mhz, mem_mhz, temp_c;
    unsigned long long reasons;
    char impl[64];
} xs_cmeas;

/* The run's provenance, one "# key=value" line each after the header:
 * the GPU, driver, runtime, NVML's clocks and limit, date, command. */
#define XS_CMEAS_MAX_META 32
typedef struct {
    char key[32], value[224];
} xs_cmeas_meta;

typedef struct {
    xs_cmeas *v;
    size_t n, cap;
    xs_cmeas_meta meta[XS_CMEAS_MAX_META];
    int nmeta;
} xs_cmeas_list;

/* Set (or replace) a provenance entry; XS_ERANGE when full or too long. */
int xs_cmeas_meta_set(xs_cmeas_list *l, const char *key, const char *value);
/* The entry's value, or NULL. */
const char *xs_cmeas_meta_get(const xs_cmeas_list *l, const char *key);

int xs_cmeas_add(xs_cmeas_list *l, const xs_cmeas *m);
void xs_cmeas_free(xs_cmeas_list *l);

const char *xs_cbench_name(int bench);

/* Write every row (atomically) to path. */
int xs_cmeas_write(const xs_cmeas_list *l, const char *path, xs_error *err);

/* Read a file xs_cmeas_write wrote. Any fault is one error naming the
 * file, the line and the column, and what was expected there; nothing is
 * kept then. */
int xs_cmeas_read(const char *path, xs_cmeas_list *l, xs_error *err);

#endif
