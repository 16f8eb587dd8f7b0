/* host.h — what the host CPU spends issuing a training step's kernels to an
 * accelerator. PyTorch eager pays, per kernel, some of: the Python call and
 * its argument parsing, the C++ dispatcher (op lookup, output allocation),
 * recording an autograd node, and the driver's cudaLaunchKernel. Which of
 * these an op pays depends on who issues it (xs_issue, op.h): a forward op
 * from Python pays all four; a backward node run by the C++ autograd engine
 * pays no Python and records nothing; a multi-tensor kernel pays one
 * Python call and then a launch per chunk list; a per-tensor Python loop
 * under no_grad records nothing. The scenario's optional `host` section
 * overrides any part; train.host_op_us, when given, prices every launch
 * at that one figure instead (the model before this one). */
#ifndef XS_HOST_H
#define XS_HOST_H

#include "op.h"

typedef struct {
    double python_us;   /* Python call + argument parsing of one torch call */
    double dispatch_us; /* C++ dispatcher and op set-up, no Python */
    double autograd_us; /* recording the autograd node of a forward op */
    double launch_us;   /* one cudaLaunchKernel */
    double cpu_scale;   /* the host's single-thread speed relative to the
                           CPUs the defaults were measured on; costs divide
                           by it */
    double flat_us;     /* > 0: every launch costs this (train.host_op_us) */
} xs_host;

/* The sourced defaults (host.c), with flat_us 0. */
void xs_host_defaults(xs_host *h);

/* given's fields that are > 0 over the defaults; flat_us as given. */
void xs_host_resolve(const xs_host *given, xs_host *out);

/* Host microseconds for one launch issued the given way (the per-launch
 * part only for XS_ISSUE_MULTI, whose one Python call is extra). */
double xs_host_launch_us(const xs_host *h, int issue);

/* Host seconds to issue one call of op (all its launches). */
double xs_host_op_s(const xs_host *h, const xs_op *op);

#endif
