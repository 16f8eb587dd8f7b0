/* host.c — see host.h. The defaults and where they come from:
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
 * autocast cast 4.1 us and a multi-tensor call 2.0 us plus 1.3 us a launch. Not in these figures:
 * nn.Module.__call__'s own Python (hooks, attribute look-ups; about 158
 * Python opcodes a Linear in 2021, dev-discuss.pytorch.org/t/110), the
 * engine's per-node bookkeeping, and any difference between PyTorch 1.x
 * and 2.x, for which no per-op measurement was found: the host section's
 * fields override each part where a measurement of the recipe's own host
 * exists. */
#include "host.h"

void xs_host_defaults(xs_host *h)
{
    h->python_us = 1.0;
    h->dispatch_us = 1.0;
    h->autograd_us = 1.8;
    h->launch_us = 1.3;
    h->cpu_scale = 1.0;
    h->flat_us = 0;
}

void xs_host_resolve(const xs_host *given, xs_host *out)
{
    xs_host h;
    xs_host_defaults(&h);
    if (given) {
        if (given->python_us > 0)
            h.python_us = given->python_us;
        if (given->dispatch_us > 0)
            h.dispatch_us = given->dispatch_us;
        if (given->autograd_us > 0)
            h.autograd_us = given->autograd_us;
        if (given->launch_us > 0)
            h.launch_us = given->launch_us;
        if (given->cpu_scale > 0)
            h.cpu_scale = given->cpu_scale;
        h.flat_us = given->flat_us > 0 ? given->flat_us : 0;
    }
    *out = h;
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

double xs_host_op_s(const xs_host *h, const xs_op *op)
{
    if (op->launches <= 0)
        return 0;
    double us = (double)op->launches * xs_host_launch_us(h, op->issue);
    if (op->issue == XS_ISSUE_MULTI && h->flat_us <= 0) /* the one Python call */
        us += (h->python_us + h->dispatch_us) / h->cpu_scale;
    return us * 1e-6;
}
