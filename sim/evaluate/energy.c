/* energy.c — see energy.h. */
#include "energy.h"

#include <math.h>

#include "backend.h"
#include "power.h"

double xs_energy_core(const xs_device *dev)
{
    /* The core's power follows its clock and voltage (power.h); DRAM's
     * does not, its clock is not capped. At the default limit the scale is
     * 1 and a dense kernel draws TDP. */
    double core = 1.0;
    if (xs_backend_of(dev)->clock_mhz)
        core = xs_power_core_factor(dev, xs_dev_clock_scale(dev));
    if (dev->power_compute_frac > 0) /* a measured board's dense draw */
        core *= dev->power_compute_frac;
    return core;
}

void xs_energy_fill_at(const xs_device *dev, double core, xs_estimate *est)
{
    if (est->time_s <= 0) {
        est->power_w = dev->idle_w;
        est->energy_j = 0;
        return;
    }
    double busy_compute = est->compute_s / est->time_s;
    double busy_memory = dev->power_memory_frac * est->memory_s / est->time_s;
    double busy = busy_compute + busy_memory;
    if (busy > 1.0) { /* the engines share one board: at most all of its range */
        busy_compute /= busy;
        busy_memory /= busy;
    }
    est->power_w = dev->idle_w + (dev->tdp_w - dev->idle_w) * (busy_compute * core + busy_memory);
    est->energy_j = est->power_w * est->time_s;
}

void xs_energy_fill(const xs_device *dev, xs_estimate *est)
{
    xs_energy_fill_at(dev, xs_energy_core(dev), est);
}
