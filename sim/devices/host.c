/* host.c — see host.h. The figures it prices launches with are the
 * stack's (stack.c, with their sources). */
#include "host.h"

double xs_host_op_s_at(const xs_host *h, const xs_host_costs *c, const xs_op *op)
{
    if (h->flat_us > 0) /* one figure a launch, modules and all */
        return op->launches > 0 ? (double)op->launches * h->flat_us * 1e-6 : 0;
    double us = op->modules > 0 ? (double)op->modules * h->module_us / h->cpu_scale : 0;
    if (op->launches > 0) {
        int issue = op->issue >= 0 && op->issue < XS_ISSUE_COUNT ? op->issue : XS_ISSUE_EAGER;
        us += (double)op->launches * c->launch_us[issue];
        if (op->issue == XS_ISSUE_MULTI) /* the one Python call */
            us += c->multi_call_us;
    }
    return us * 1e-6;
}

double xs_host_op_s(const xs_host *h, const xs_op *op)
{
    xs_host_costs c;
    xs_host_costs_of(h, &c);
    return xs_host_op_s_at(h, &c, op);
}
