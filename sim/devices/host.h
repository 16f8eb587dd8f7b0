/* host.h — what the host CPU spends issuing a training step's kernels to an
 * accelerator. PyTorch eager pays, per kernel, some of: the Python call and
 * its argument parsing, the C++ dispatcher (op lookup, output allocation),
 * recording an autograd node, and the driver's cudaLaunchKernel. Which of
 * these an op pays depends on who issues it (xs_issue, op.h): a forward op
 * from Python pays all four; a backward node run by the C++ autograd engine
 * pays no Python and records nothing; a multi-tensor kernel pays one
 * Python call and then a launch per chunk list; a per-tensor Python loop
 * under no_grad records nothing. A forward op also pays the nn.Module
 * calls that wrap it (xs_op.modules), whose Python cost depends on the
 * framework's era (xs_framework). The scenario's optional `host` section
 * names the era and overrides any part; train.host_op_us, when given,
 * prices every launch at that one figure instead (the model before this
 * one). */
#ifndef XS_HOST_H
#define XS_HOST_H

#include "op.h"
#include "stack.h"

/* Host seconds to issue one call of op: all its launches and the
 * nn.Module calls that wrap it. */
double xs_host_op_s(const xs_host *h, const xs_op *op);

/* The same for the many ops of a step, with the costs of h that do not
 * depend on the op worked out once (xs_host_costs_of). */
double xs_host_op_s_at(const xs_host *h, const xs_host_costs *c, const xs_op *op);

#endif
