/* comm.h — NCCL collectives between the GPUs of a data-parallel job, as
 * alpha-beta models: a fixed latency per algorithm step plus the bytes each
 * GPU must move over its slowest link at what that link achieves.
 *
 * Conventions are nccl-tests' (doc/PERFORMANCE.md): for a buffer of S bytes
 * taking t seconds, algbw = S / t; busbw = algbw x 2(n-1)/n for all-reduce
 * and x (n-1)/n for reduce-scatter and all-gather (S: the whole buffer, the
 * all-gather's output, the reduce-scatter's input). busbw is what one GPU's
 * link carries, so it compares with the link's bandwidth whatever n is.
 *
 * The topology (xs_topo) is the job's: GPUs per node and the link inside a
 * node (NVLink or PCIe, from the device file), the network between nodes
 * (a scenario key: no default, it differs too much between clusters). */
#ifndef XS_COMM_H
#define XS_COMM_H

#include "device.h"
#include "error.h"
#include "op.h"
#include "scenario.h"


/* ring: every GPU in one ring (2(n-1) steps for all-reduce); tree: NCCL's
 * double binary tree across nodes with a chain inside each node; hier: the
 * two-level scheme, reduce-scatter inside each node, all-reduce of each
 * GPU's shard across nodes, all-gather inside each node; nvls: NVLink
 * SHARP, the all-reduce done in a Hopper NVSwitch (one node). torus:
 * XLA's collectives over a TPU slice's ICI torus (the only algorithm
 * there, and none of NCCL's): see xs_topo.ici. */
typedef enum {
    XS_ALGO_RING,
    XS_ALGO_TREE,
    XS_ALGO_HIER,
    XS_ALGO_NVLS,
    XS_ALGO_TORUS,
    XS_ALGO_COUNT
} xs_algo;

typedef enum { XS_LINK_NVLINK, XS_LINK_PCIE, XS_LINK_COUNT } xs_link;

typedef struct {
    int n;          /* GPUs in the job */
    int per_node;   /* GPUs in each node (n is a multiple of it) */
    int nodes;      /* n / per_node */
    int link;       /* xs_link inside a node */
    double intra_gbs; /* one GPU's link bandwidth each way inside a node, GB/s (1e9) */
    double net_gbs;   /* one node's network bandwidth each way, GB/s; 0 with one node */
    int nvls;         /* NCCL may reduce in the NVSwitch (NVLS): gpu_topo.c */
    int sm_count;     /* the GPU's SMs, which NCCL's kernels share with compute */
    double mem_bw_gbs; /* the GPU's DRAM bandwidth, which they share too */
    /* A TPU slice (ici 1, filled by the tpu class): the chips along each
     * dimension of its ICI torus (1 where a dimension is unused), 1 in
     * wrap[i] where that dimension closes into a ring (else a line), the
     * devices on a chip (2 on v2/v3, whose TensorCores are devices and
     * share the chip's links; else 1), the latency of a hop; intra_gbs is
     * one ICI link's bandwidth each way. combined: the step's collectives
     * of one kind before the end of the backward run as one, after the
     * backward (XLA's single cross-replica sum of every gradient). */
    int ici;
    char slice[32]; /* what Cloud TPU calls the slice: "v3-8", "v5litepod-16" */
    int ndims;      /* the torus's dimensions: 2 or 3 */
    int dims[3], wrap[3];
    int per_chip;
    double hop_us;
    int combined;
} xs_topo;

/* Seconds for one collective of `bytes` (nccl-tests' S) with algorithm
 * algo; INFINITY where the algorithm does not apply (tree and hier for
 * reduce-scatter and all-gather; hier within one node). 0 when n is 1. */
double xs_comm_time(const xs_topo *t, int coll, int algo, double bytes);

/* The fastest algorithm for this size, as NCCL's tuner picks one from the
 * same kind of model (src/graph/tuning.cc); *algo gets it (may be NULL). */
double xs_comm_best(const xs_topo *t, int coll, double bytes, int *algo);

/* nccl-tests' busbw (GB/s) of a collective of `bytes` over n GPUs that
 * took `seconds`. */
double xs_comm_busbw(int coll, int n, double bytes, double seconds);

/* Share of the GPU a running collective takes from the kernels it
 * overlaps: the larger of its SMs' share and its DRAM traffic's share of
 * the device's bandwidth, at the collective's bus bandwidth busbw_gbs. */
double xs_comm_contention(const xs_topo *t, double busbw_gbs);

/* The job's topology for s on dev: one device alone, else what dev's class
 * builds (xs_backend.topology: GPUs in nodes over NVLink or PCIe and a
 * network, gpu_topo.c; a TPU slice's torus, tpu_dp.c); a class without one
 * is refused. An error line names the key when the combination cannot be
 * modelled. */
int xs_topo_of(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err);

/* Where t runs a step's collectives combined (t->combined), each
 * collective op of wl before its first comm_wait op gets, in est, its
 * share by bytes of one collective of its kind over all their bytes, so
 * that they add up to that one collective's time. */
void xs_comm_combine(const xs_topo *t, const xs_workload *wl, xs_estimate *est);

const char *xs_algo_name(int algo);
const char *xs_link_name(int link);

#endif
