/* cpu_host_state.h — is this host, now, the machine a CPU device file
 * describes? A cloud VM can be moved to another host generation under the
 * same brand string, or share its cores with a neighbour; the check would
 * then measure that, not the model. Before validate --backend cpu runs
 * anything, the two ceilings every CPU prediction rests on are measured
 * again (a second or two): the fp32 FMA peak of all cores and their DRAM
 * triad bandwidth, against the file's compute.peak_fp32_tflops and
 * memory.bw_dram_gbs: calibrate's kernels, the triad on the working set
 * that bounds calibrate's bandwidth sweep (its DRAM plateau is the two
 * largest sizes of a doubling series up to it). */
#ifndef XS_CAL_CPU_HOST_STATE_H
#define XS_CAL_CPU_HOST_STATE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "device.h"

typedef struct {
    int cores;
    double fma_gflops_core, file_fma_gflops_core; /* now; in the device file */
    double dram_gbs, file_dram_gbs;               /* dram_gbs 0: not measured */
    double fma_rel_iqr, dram_rel_iqr;             /* the measurements' own spread */
    double dram_set_mb;                           /* the triad's working set */
} xs_cpu_host_state;

/* A ceiling that moved by more than this fraction is reported: calibration
 * runs on a quiet host repeat within 5% (their IQRs), and the model's
 * every prediction moves with these two. A threshold for telling the
 * reader, not a model parameter. */
#define XS_CPU_HOST_DRIFT 0.15

/* The working set of calibrate's bandwidth sweep at its largest (past the
 * last-level cache by 4x, 256 MB to 2 GB, at most a sixth of memory), the
 * size the DRAM bandwidth comes from. */
double xs_cpu_dram_set_bytes(void);

/* Measure both ceilings on xs_cpu_of(dev)->cores threads. The triad's buffers
 * not allocated: dram_gbs 0, the FMA peak still measured. */
void xs_cpu_host_state_measure(const xs_device *dev, int quick, xs_cpu_host_state *s);

/* Both ceilings now and in the file, their change and spread, one line. */
void xs_cpu_host_state_text(const xs_cpu_host_state *s, char *buf, size_t size);

/* 1 when either ceiling moved past XS_CPU_HOST_DRIFT, with what moved in
 * buf ("FMA peak -35% and DRAM bandwidth -22%"); else 0 and buf empty. */
int xs_cpu_host_state_moved(const xs_cpu_host_state *s, char *buf, size_t size);

/* The report's note when a ceiling moved (the reader's next step in it);
 * else 0 and buf empty. */
int xs_cpu_host_state_drift(const char *device_id, const xs_cpu_host_state *s, char *buf,
                            size_t size);

/* The report's host_state object; NULL when out of memory. */
cJSON *xs_cpu_host_state_json(const xs_cpu_host_state *s);

#endif
