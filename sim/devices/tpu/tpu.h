/* tpu.h — the TPU device class: Google's TensorCores (MXU systolic arrays,
 * a vector unit, HBM) driven by XLA, which compiles the whole training step
 * into one program.
 *
 * Why not the tile/wave model of gemm.c: that model is about thread blocks
 * (CTAs) that an SM scheduler hands out in waves, their shared-memory and
 * register occupancy, split-K and L2 reuse between concurrent tiles. A TPU
 * has none of these: the compiler statically tiles a matmul into 128 x 128
 * weight tiles that sit in a weight-stationary systolic array while the
 * other operand streams through it row by row from VMEM. Its losses are of
 * another kind: every dimension that enters the array is padded to the
 * array's side (and the streamed one to the 8 sublanes), a weight tile is
 * shifted in one row a cycle (hidden behind the previous tile's stream only
 * when that stream is at least as long), and the array fills and drains
 * once per matmul. Those are what xs_tpu_mxu counts.
 *
 * Everything else (elementwise, reductions, normalization, softmax, the
 * optimizer) runs on the vector unit, (sublanes x lanes) fp32 ALUs, and
 * streams HBM at a share of its bandwidth; an op takes the longer of its
 * math and its traffic (the TensorCore pipelines DMA against compute).
 *
 * XLA fusion is the class's whole-step pass (xs_tpu_fusion): an elementwise
 * op, a cast or a layout copy right after the op that produces its input,
 * in the same phase, is fused into that producer and makes no HBM pass of
 * its own. XLA's own overview gives the rule (tensorflow.org/xla, "XLA:
 * Optimizing Compiler for Machine Learning": the add, multiply and reduce
 * of its example become one kernel whose intermediates never go to
 * memory); openxla/xla's instruction_fusion.cc fuses elementwise producers
 * into consumers and (output fusion) elementwise consumers into a dot. What
 * those rules give for a BERT/GPT layer (derived from the rules, not read
 * from a TPU profile):
 *   - bias add (+ GELU) into the matmul's output ("output fusion" of a dot
 *     with its elementwise consumers);
 *   - the attention scale and the additive mask into the scores matmul;
 *   - the head split/merge transposes into the dots' operand layouts
 *     (layout assignment makes them free, no copy);
 *   - dropout (the RNG, the mask multiply) and the residual add into the
 *     producer before them;
 *   - casts between bf16 and fp32 into their neighbours;
 *   - in the backward, the dropout and GELU derivatives and the gradient
 *     sums into the matmul or reduction that produced their input.
 * LayerNorm and softmax stay fusions of their own (a reduction then an
 * elementwise pass over the same rows: one read, one write, which their ops
 * already count), and so do the bias-gradient reductions. */
#ifndef XS_TPU_H
#define XS_TPU_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "tpu_params.h"

/* dev's own record, as the TPU model reads it (dev's class is tpu: the
 * loader checked it); const where dev is. */
#define xs_tpu_of(dev) XS_OWN_RECORD(xs_tpu_params, dev)
_Static_assert(sizeof(xs_tpu_params) <= XS_DEV_OWN_BYTES && _Alignof(xs_tpu_params) <= _Alignof(xs_dev_own),
               "the TPU record must fit xs_device.own");
#include "op.h"

/* The schema of a class-tpu device file and the checks between its fields
 * (tpu_device.c), which also turn the chip's figures into one device's. */
const xs_field *xs_tpu_fields(size_t *n);
int xs_tpu_check_fields(xs_device *dev, const char *path, xs_error *err);

/* One matmul C[m x n] = A[m x k] B[k x n], batch times, on the device's
 * MXUs. XLA picks which operand stays in the array: the cheaper of the two
 * orientations is kept. */
typedef struct {
    double cycles;        /* MXU cycles on the busiest unit, passes included */
    double ideal_cycles;  /* the same FLOPs on every MXU with no padding or fill */
    double bubble_cycles; /* the once-per-matmul fill and drain of the array */
    double padded_macs;   /* multiply-adds the padded shapes make the array do */
    int64_t tiles;        /* weight tiles (of the array's side) over all MXUs */
    int stationary_b;     /* 1: B (k x n) stays in the array; 0: A does */
} xs_mxu_result;

/* passes: bf16 passes per product (1 for bf16/fp16 inputs; the file's
 * fp32_passes for fp32 ones). Every dimension >= 1. */
void xs_tpu_mxu(const xs_tpu_params *t, int64_t m, int64_t n, int64_t k, int64_t batch,
                int passes, xs_mxu_result *r);

/* x rounded up to a multiple of to (to >= 1). */
int64_t xs_tpu_pad(int64_t x, int64_t to);

/* Marks fused[i] = 1 for each op XLA fuses into the op before it (see the
 * list above), 0 otherwise; returns how many. fused has wl->n entries.
 * DDP's wrapper ops (xs_op.dp_wrapper), which XLA's step does not have,
 * neither fuse nor take consumers. */
size_t xs_tpu_fusion(const xs_workload *wl, unsigned char *fused);

/* Estimate one op on dev before fusion. */
int xs_tpu_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err);

/* Data parallel on a TPU slice (tpu_dp.c): the slice cluster.devices
 * makes on dev, its torus and wraparounds, XLA's one cross-replica sum
 * after the backward; an error line names the cluster key that cannot be
 * modelled (xs_backend.topology). */
int xs_tpu_topology(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err);

#endif
