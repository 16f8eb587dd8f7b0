/* predict.c — see predict.h. Kernels of one step run back to back on one
 * stream, so the step time is the sum of op times. */
#include "predict.h"

#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cost.h"
#include "energy.h"
#include "gemm.h"

int xs_predict(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
               xs_prediction *p, xs_error *err)
{
    memset(p, 0, sizeof *p);
    if (s->devices > 1)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "scenario %s: cluster.devices = %lld needs the multi-device "
                            "communication model, which does not exist yet; use 1",
                            s->id, (long long)s->devices);
    const xs_backend *be = xs_backend_for(dev, err);
    if (!be)
        return err ? err->code : XS_EUNSUPPORTED;
    p->est = calloc(wl->n ? wl->n : 1, sizeof *p->est);
    if (!p->est)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        xs_estimate *e = &p->est[i];
        int rc = be->estimate(dev, op, e, err);
        if (rc) {
            xs_prediction_free(p);
            return rc;
        }
        xs_energy_fill(dev, e);
        double n = (double)op->count;
        p->step_time_s += e->time_s * n;
        p->step_energy_j += e->energy_j * n;
        p->step_flops += op->flops * n;
        p->phase_time_s[op->phase] += e->time_s * n;
        p->bound_time_s[e->bound] += e->time_s * n;
        if (xs_op_is_matmul(op->kind))
            p->matmul_flops += op->flops * n;
    }
    p->devices = s->devices;
    if (p->step_time_s > 0) {
        p->samples_per_s = (double)wl->samples_per_step / p->step_time_s;
        p->tokens_per_s = (double)wl->tokens_per_step / p->step_time_s;
        p->avg_power_w = p->step_energy_j / p->step_time_s;
        /* MFU against the datasheet peak (not the sustained clock) of the
         * engine the GEMMs run on, as MFU is usually quoted */
        xs_dtype engine;
        int tensor;
        xs_gemm_rate(dev, wl->matmul_dtype, &engine, &tensor);
        p->peak_flops = dev->peak_tflops[engine] * 1e12;
        p->mfu = p->matmul_flops / (p->step_time_s * p->peak_flops);
    }
    p->steps = wl->steps;
    p->run_time_s = p->step_time_s * (double)wl->steps;
    p->run_energy_kwh = p->step_energy_j * (double)wl->steps * (double)s->devices / 3.6e6;
    p->run_cost_usd = xs_cost_usd(dev, p->run_time_s, s->devices);
    return XS_OK;
}

void xs_prediction_free(xs_prediction *p)
{
    free(p->est);
    p->est = NULL;
}

int xs_predict_band(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                    xs_prediction *p, xs_error *err)
{
    xs_prediction corner[2];
    for (int i = 0; i < 2; i++) {
        xs_device d;
        xs_dev_corner(dev, i == 0 ? -1 : +1, &d);
        int rc = xs_predict(&d, s, wl, &corner[i], err);
        if (rc)
            return rc;
        xs_prediction_free(&corner[i]);
    }
    p->step_time_high_s = corner[0].step_time_s; /* the slow corner */
    p->step_time_low_s = corner[1].step_time_s;
    p->samples_per_s_low = corner[0].samples_per_s;
    p->samples_per_s_high = corner[1].samples_per_s;
    p->run_cost_high_usd = corner[0].run_cost_usd;
    p->run_cost_low_usd = corner[1].run_cost_usd;
    return XS_OK;
}
