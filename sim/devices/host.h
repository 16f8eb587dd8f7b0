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

/* PyTorch eras whose host costs differ where a published measurement
 * shows it (host.c); XS_FW_UNSTATED keeps the era-free per-op figures. */
typedef enum {
    XS_FW_UNSTATED,
    XS_FW_PT18,  /* PyTorch 1.5 - 1.8: nn.Module.__call__ checks every hook dict */
    XS_FW_PT113, /* PyTorch 1.9 - 1.13: the no-hooks fast path (pytorch#52576) */
    XS_FW_PT2,   /* PyTorch 2.x eager (torch.compile out of scope) */
    XS_FW_COUNT
} xs_framework;

/* host.framework's choices, in xs_framework order. */
#define XS_FRAMEWORK_CHOICES "unstated|pytorch-1.8|pytorch-1.13|pytorch-2"

typedef struct {
    int framework;      /* xs_framework: the era the defaults are taken from */
    double python_us;   /* Python call + argument parsing of one torch call */
    double dispatch_us; /* C++ dispatcher and op set-up, no Python */
    double autograd_us; /* recording the autograd node of a forward op */
    double launch_us;   /* one cudaLaunchKernel */
    double module_us;   /* one nn.Module.__call__ beyond its forward's ops;
                           0 where no measurement of the era exists */
    double cpu_scale;   /* the host's single-thread speed relative to the
                           CPUs the defaults were measured on; costs divide
                           by it */
    double flat_us;     /* > 0: every launch costs this (train.host_op_us) */
} xs_host;

/* The sourced defaults of era fw (host.c), with flat_us 0; an unknown fw
 * gives the unstated era's. */
void xs_host_framework_defaults(int fw, xs_host *h);

/* The unstated era's defaults. */
void xs_host_defaults(xs_host *h);

/* The defaults of given's era, with given's fields that are > 0 over them;
 * flat_us as given. */
void xs_host_resolve(const xs_host *given, xs_host *out);

/* "pytorch-1.13", ...; "?" out of range. */
const char *xs_framework_name(int fw);

/* Host microseconds for one launch issued the given way (the per-launch
 * part only for XS_ISSUE_MULTI, whose one Python call is extra). */
double xs_host_launch_us(const xs_host *h, int issue);

/* Host seconds to issue one call of op: all its launches and the
 * nn.Module calls that wrap it. */
double xs_host_op_s(const xs_host *h, const xs_op *op);

/* The same for the many ops of a step: the costs of h that do not depend
 * on the op, worked out once, then each op's time with them. */
typedef struct {
    double launch_us[XS_ISSUE_COUNT]; /* xs_host_launch_us of each issue kind */
    double multi_call_us;             /* a multi-tensor apply's one Python call */
} xs_host_costs;
void xs_host_costs_of(const xs_host *h, xs_host_costs *c);
double xs_host_op_s_at(const xs_host *h, const xs_host_costs *c, const xs_op *op);

#endif
