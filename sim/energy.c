/* energy.c — see energy.h. */
#include "energy.h"

#include <math.h>

void xs_energy_fill(const xs_device *dev, xs_estimate *est)
{
    if (est->time_s <= 0) {
        est->power_w = dev->idle_w;
        est->energy_j = 0;
        return;
    }
    double busy_compute = est->compute_s / est->time_s;
    double busy_memory = est->memory_s / est->time_s;
    double activity = fmin(1.0, busy_compute + dev->power_memory_frac * busy_memory);
    est->power_w = dev->idle_w + (dev->tdp_w - dev->idle_w) * activity;
    est->energy_j = est->power_w * est->time_s;
}
