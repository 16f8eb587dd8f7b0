/* gemm.h — the GEMM model shared by every matrix engine (GPU tensor cores
 * now; the TPU MXU and CPU AMX tiles later, through device parameters).
 * Today: which engine and format run a GEMM and the roofline at the
 * device's stated GEMM efficiency. The tile / wave / alignment model plugs
 * in behind xs_gemm_time without changing callers. */
#ifndef XS_GEMM_H
#define XS_GEMM_H

#include "device.h"
#include "estimate.h"
#include "workload.h"

/* The engine that runs a matmul in format want on dev: the tensor cores if
 * they support it, else the fp32 vector units (tf32 and bf16 on Volta and
 * Turing). Sets *engine and *tensor; returns achievable FLOP/s. */
double xs_gemm_rate(const xs_device *dev, xs_dtype want, xs_dtype *engine, int *tensor);

/* Compute and memory time of one call of a matmul-kind op (gemm, bgemm,
 * attention); fills compute_s, memory_s, engine and tensor of est. */
void xs_gemm_time(const xs_device *dev, const xs_op *op, xs_estimate *est);

#endif
