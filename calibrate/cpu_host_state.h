/* cpu_host_state.h — is this host, now, the machine a CPU device file
 * describes? A cloud VM can be moved to another host generation under the
 * same brand string, or share its cores with a neighbour; the check would
 * then measure that, not the model. Before validate --backend cpu runs
 * anything, the two ceilings every CPU prediction rests on are measured
 * again (a second or two): the fp32 FMA peak of all cores and their DRAM
 * triad bandwidth, against the file's compute.peak_fp32_tflops and
 * memory.bw_dram_gbs, the same kernels and sizes calibrate used. */
#ifndef XS_CAL_CPU_HOST_STATE_H
#define XS_CAL_CPU_HOST_STATE_H

#include <stddef.h>

#include "device.h"
#include "error.h"

typedef struct {
    int cores;
    double fma_gflops_core, file_fma_gflops_core; /* now; in the device file */
    double dram_gbs, file_dram_gbs;
    double fma_rel_iqr, dram_rel_iqr; /* the measurements' own spread */
} xs_cpu_host_state;

/* A ceiling that moved by more than this fraction is reported: calibration
 * runs on a quiet host repeat within 5% (their IQRs), and the model's
 * every prediction moves with these two. */
#define XS_CPU_HOST_DRIFT 0.15

/* The working set of calibrate's largest triad (past the last-level cache
 * by 4x, 256 MB to 2 GB, at most a sixth of memory), from which the DRAM
 * bandwidth comes. */
double xs_cpu_dram_set_bytes(void);

/* Measure both ceilings on dev->cpu.cores threads. */
int xs_cpu_host_state_measure(const xs_device *dev, int quick, xs_cpu_host_state *s,
                              xs_error *err);

/* "FMA peak -35%, DRAM bandwidth +2%": the figures, one line. */
void xs_cpu_host_state_text(const xs_cpu_host_state *s, char *buf, size_t size);

/* 1 and a sentence in buf when either ceiling moved past XS_CPU_HOST_DRIFT;
 * else 0 and buf empty. */
int xs_cpu_host_state_drift(const char *device_id, const xs_cpu_host_state *s, char *buf,
                            size_t size);

#endif
