/* stack.h — the training stack's host side as a scenario gives it (its
 * `host` section): the PyTorch era and what one torch call, dispatch,
 * autograd record, launch and nn.Module call cost on the host, with the
 * sourced defaults of each era (stack.c), and what that makes one launch
 * cost by who issues it (xs_issue). The host model (host.h) adds a step's
 * launches up with these prices; reports show them. */
#ifndef XS_STACK_H
#define XS_STACK_H

#include "op.h"

/* PyTorch eras whose host costs differ where a published measurement
 * shows it (stack.c); XS_FW_UNSTATED keeps the era-free per-op figures. */
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

/* The sourced defaults of era fw (stack.c), with flat_us 0; an unknown fw
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

/* The prices of h that do not depend on the op, worked out once for the
 * many ops of a step (the host model's, host.h, and the reports'). */
typedef struct {
    double launch_us[XS_ISSUE_COUNT]; /* xs_host_launch_us of each issue kind */
    double multi_call_us;             /* a multi-tensor apply's one Python call */
} xs_host_costs;
void xs_host_costs_of(const xs_host *h, xs_host_costs *c);

#endif
