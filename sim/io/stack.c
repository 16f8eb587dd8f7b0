/* stack.c — see stack.h. The defaults and where they come from:
 *
 * python_us 1.0, dispatch_us 1.0: a PyTorch tensor op with no autograd
 *   (x * x, requires_grad=False) costs "approx 2 us. Approx half of it is
 *   python parsing overhead (same operation called using c++ API would
 *   take about a microsecond)" (N. Gimelshein, PyTorch maintainer,
 *   github.com/pytorch/pytorch/issues/41383, 2020-07-14; PyTorch 1.5/1.6).
 * autograd_us 1.8: the same issue's measurement, y = 2 * x a million
 *   times: 6.8 s with requires_grad=True, 5.0 s without; the difference is
 *   recording the autograd node (6.8 - 5.0 us an op).
 * launch_us 1.3: a raw cuLaunchKernel, "~1.3us" (meta-pytorch/tritonbench
 *   pull 1016, 2026, GB200 host); the same launch driven from Python
 *   measured 3.0 us with 0 arguments and 3.3 us with 19 (tritonbench pull
 *   1017), which adds a Python binding this model counts in python_us.
 *
 * So a forward op issued from Python costs 1.0 + 1.0 + 1.8 + 1.3 = 5.1 us,
 * a backward node from the C++ engine 2.3 us, a no_grad loop op 3.3 us, an
 * autocast cast 4.1 us and a multi-tensor call 2.0 us plus 1.3 us a launch.
 *
 * By era (host.framework), where a measurement shows a difference:
 *
 * module_us, one nn.Module.__call__ around its forward's ops:
 *   pytorch-1.8 (1.5 - 1.8): 2.17 us. Module._call_impl then walked every
 *     hook dict (global and the module's own, forward-pre, forward and
 *     backward) on each call; a module whose forward is one y.copy_(x)
 *     took 3.08 us a call against 0.91 us for y.copy_(x) alone (H. He,
 *     github.com/pytorch/pytorch/pull/50431, comment of 2021-02-21, on
 *     the master of that day, before the fast path below). nn.Linear paid
 *     5.0 us over F.linear (9.74 - 4.74 us) in the same run: the wrapper
 *     plus two parameter look-ups through Module.__getattr__; the model
 *     prices every module at the wrapper's 2.17 us, a lower bound for the
 *     modules that read parameters.
 *   pytorch-1.13 (1.9 - 1.13) and pytorch-2: 0, not priced. _call_impl
 *     returns forward_call(*input) at once when no hook is registered
 *     (pytorch/pytorch pull 52576, opened 2021-02-22, days before 1.8.0
 *     shipped from its release branch; in the releases from 1.9 on); no
 *     published time per call of that path was found, so these eras leave
 *     it to host.module_us where a measurement of the recipe's host
 *     exists. What the fast path skips is large: the hook checks were
 *     about 55 of the 158 Python opcodes an nn.Linear call ran in early
 *     2021 (dev-discuss.pytorch.org/t/110).
 * python_us, dispatch_us, autograd_us, launch_us: the same in every era.
 *   No published per-op measurement separates PyTorch 2.x from 1.x on one
 *   CPU: torch.sin on a 0-d CPU tensor, no autograd, took 2.59 ms per 1000
 *   calls in a 2.x nightly of 2024-11 (pytorch/pytorch issue 139518),
 *   the order of #41383's 2 us for x * x in 1.6 on another, unnamed CPU.
 *
 * cpu_scale has no per-class default: the CPUs behind #41383 and #50431
 * are not published. What one class costs against another is large: the
 * same torch.nn.Linear forward (bf16, hidden 2048, 8192 tokens) took 13.48
 * us of CPU time on an H100 DGX (Xeon Platinum 8480C), 33.17 us on a GH200
 * and 37.08 us on a GB200 (Grace) (NVIDIA/TransformerEngine issue 2053,
 * 2025-08-11): a Grace host is 0.41 and 0.36 of that Xeon. */
#include "stack.h"

#include <string.h>

void xs_host_framework_defaults(int fw, xs_host *h)
{
    memset(h, 0, sizeof *h); /* its padding too: predictions compare as bytes */
    h->framework = fw > XS_FW_UNSTATED && fw < XS_FW_COUNT ? fw : XS_FW_UNSTATED;
    h->python_us = 1.0;
    h->dispatch_us = 1.0;
    h->autograd_us = 1.8;
    h->launch_us = 1.3;
    h->module_us = h->framework == XS_FW_PT18 ? 3.08 - 0.91 : 0;
    h->cpu_scale = 1.0;
    h->flat_us = 0;
}

void xs_host_defaults(xs_host *h)
{
    xs_host_framework_defaults(XS_FW_UNSTATED, h);
}

const char *xs_framework_name(int fw)
{
    static const char *names[XS_FW_COUNT] = {"unstated", "pytorch-1.8", "pytorch-1.13",
                                             "pytorch-2"};
    return fw >= 0 && fw < XS_FW_COUNT ? names[fw] : "?";
}

void xs_host_resolve(const xs_host *given, xs_host *out)
{
    xs_host h;
    xs_host_framework_defaults(given ? given->framework : XS_FW_UNSTATED, &h);
    if (given) {
        if (given->python_us > 0)
            h.python_us = given->python_us;
        if (given->dispatch_us > 0)
            h.dispatch_us = given->dispatch_us;
        if (given->autograd_us > 0)
            h.autograd_us = given->autograd_us;
        if (given->launch_us > 0)
            h.launch_us = given->launch_us;
        if (given->module_us > 0)
            h.module_us = given->module_us;
        if (given->cpu_scale > 0)
            h.cpu_scale = given->cpu_scale;
        h.flat_us = given->flat_us > 0 ? given->flat_us : 0;
    }
    memcpy(out, &h, sizeof h);
}

double xs_host_launch_us(const xs_host *h, int issue)
{
    if (h->flat_us > 0)
        return h->flat_us;
    double us;
    switch (issue) {
    case XS_ISSUE_ENGINE: us = h->dispatch_us + h->launch_us; break;
    case XS_ISSUE_MULTI: us = h->launch_us; break;
    case XS_ISSUE_LOOP: us = h->python_us + h->dispatch_us + h->launch_us; break;
    case XS_ISSUE_AUTOCAST: us = h->dispatch_us + h->autograd_us + h->launch_us; break;
    default: us = h->python_us + h->dispatch_us + h->autograd_us + h->launch_us; break;
    }
    return us / h->cpu_scale;
}

void xs_host_costs_of(const xs_host *h, xs_host_costs *c)
{
    for (int i = 0; i < XS_ISSUE_COUNT; i++)
        c->launch_us[i] = xs_host_launch_us(h, i);
    c->multi_call_us = (h->python_us + h->dispatch_us) / h->cpu_scale;
}
