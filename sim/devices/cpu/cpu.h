/* cpu.h — the host-CPU cost model. Every parameter is calibrated on the
 * host (`xpusim calibrate --backend cpu`): per-core vector and AMX mainloop
 * rates, cache and DRAM bandwidths, operand packing, per-kernel costs per
 * element and per call (fork/join), so an op's time depends on the thread
 * count and on which level of the memory hierarchy its data fits in.
 *
 * GEMMs go through the shared tile/wave model (gemm.c) with the CPU
 * kernels' 32 x 32 C block (2 x 2 AMX tiles) as the tile and a core as the
 * SM, plus the time to pack the operands and one fork/join per parallel
 * region. Every other kernel takes its fixed cost plus the longer of its
 * work (elements x fitted time per element / threads) and its traffic at
 * the bandwidth of the level its bytes fit in. */
#ifndef XS_CPU_H
#define XS_CPU_H

#include <stddef.h>

#include "backend.h"
#include "cpu_params.h"

/* dev's own record, as the CPU model reads it (dev's class is cpu: the
 * loader checked it); const where dev is. */
#define xs_cpu_of(dev) XS_OWN_RECORD(xs_cpu_params, dev)
_Static_assert(sizeof(xs_cpu_params) <= XS_DEV_OWN_BYTES && _Alignof(xs_cpu_params) <= _Alignof(xs_dev_own),
               "the CPU record must fit xs_device.own");
#include "op.h"

/* The schema of a class-cpu device file and the checks between its
 * fields (cpu_device.c). */
const xs_field *xs_cpu_fields(size_t *n);
int xs_cpu_check_fields(xs_device *dev, const char *path, xs_error *err);

/* Bytes/s a kernel streaming footprint bytes reaches on threads cores. */
double xs_cpu_level_bw(const xs_device *dev, double footprint, int threads);

/* The GEMM kernel of kernels/cpu/ an op runs: the fp32 kernel, the same
 * kernel fed bf16 operands converted to fp32 while packed (bf16 on a
 * kernel set without a bf16 unit: avx512, avx2, neon, portable), the
 * AVX512-BF16 kernel, or the AMX one. */
typedef enum {
    XS_CPU_GEMM_FP32,
    XS_CPU_GEMM_BF16_ON_FP32,
    XS_CPU_GEMM_BF16_DOT,
    XS_CPU_GEMM_BF16_AMX
} xs_cpu_gemm_kernel;

/* The kernel a GEMM with bf16 (else fp32) operands runs on a device whose
 * kernel set is isa (compute.isa: "amx-bf16", "avx512-bf16", "avx2", ...). */
xs_cpu_gemm_kernel xs_cpu_gemm_kernel_for(const char *isa, int bf16);

/* Bytes kernel kern copies into packed panels, split into straight copies
 * and transposing ones (in 32 x 32 squares), and whether the AMX kernel
 * reads A in place (*direct). Each operand is read once and written padded
 * to 32 rows and columns (the bf16 kernels also pad K; the fp32 kernel
 * writes fp32 whatever it reads). The fp32 A panel holds A transposed, so
 * a row-major A is the transposing copy; a B stored transposed is
 * transposed by every kernel; the bf16 kernels keep A's rows and
 * interleave K pairs of B. */
void xs_cpu_gemm_pack_bytes(xs_cpu_gemm_kernel kern, long long m, long long n, long long k,
                            int ta, int tb, double *contig, double *transposed, int *direct);

/* 1 when a kernel touching footprint bytes meets its data cold. In a
 * training step a kernel whose data fit easily in one core's L2 (a quarter
 * of it) works on what the kernels just before it produced, still cached
 * (attention heads, their casts); larger ones read activations written
 * long before and write to lines no cache holds, since a step touches more
 * than the LLC holds. The quarter is a stated assumption, not a fit. */
int xs_cpu_is_cold(const xs_cpu_params *c, double footprint);

/* Estimate one call of op on threads cores (1..cores). */
int xs_cpu_estimate(const xs_device *dev, const xs_op *op, int threads, xs_estimate *est,
                    xs_error *err);

/* The band's corners for a CPU device: every fitted parameter one
 * standard deviation towards slow (which < 0) or fast (which > 0). */
void xs_cpu_corner(const xs_device *dev, int which, xs_device *out);

#endif
