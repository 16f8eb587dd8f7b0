/* power.c — see power.h. */
#include "power.h"

#include <math.h>

#include "backend.h"

double xs_dev_clock_scale(const xs_device *dev)
{
    return dev->clock_scale > 0 ? dev->clock_scale : 1.0;
}

double xs_dev_power_limit(const xs_device *dev)
{
    return dev->power_limit_w > 0 ? dev->power_limit_w : dev->tdp_w;
}

void xs_power_range(const xs_device *dev, double *lo_w, double *hi_w, int *lo_open)
{
    *lo_open = !(dev->power_limit_min_w > 0);
    *lo_w = *lo_open ? dev->idle_w : dev->power_limit_min_w;
    *hi_w = dev->power_limit_max_w > 0 ? dev->power_limit_max_w : dev->tdp_w;
}

int xs_power_set_limit(xs_device *dev, double limit_w, xs_error *err)
{
    if (!xs_backend_of(dev)->clock_mhz)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "device.power_limit_w=%.10g: device %s (class %s) has no model of "
                            "a power limit; only GPUs take one",
                            limit_w, dev->id, xs_backend_of(dev)->name);
    double lo, hi;
    int lo_open;
    xs_power_range(dev, &lo, &hi, &lo_open);
    if (!(limit_w > 0) || (lo_open ? limit_w <= lo : limit_w < lo) || limit_w > hi) {
        if (lo_open)
            return xs_error_set(err, XS_ERANGE,
                                "device.power_limit_w=%.10g: device %s takes a limit above "
                                "its idle power %g W and at most %g W (its file publishes no "
                                "range: power.limit_min_w/limit_max_w)",
                                limit_w, dev->id, lo, hi);
        return xs_error_set(err, XS_ERANGE,
                            "device.power_limit_w=%.10g: device %s takes a limit from %g to "
                            "%g W (power.limit_min_w..limit_max_w)",
                            limit_w, dev->id, lo, hi);
    }
    dev->power_limit_w = limit_w;
    dev->clock_scale = 1.0;
    return XS_OK;
}

/* The core voltage at clock f (MHz) over that at the top clock f_top:
 * the floor below the knee, a line from the knee to (f_top, 1) above it. */
static double voltage_at(const xs_device *dev, double f, double f_top)
{
    double floor = dev->power_v_floor, knee = dev->power_vf_knee_mhz;
    if (f <= knee)
        return floor;
    return floor + (1.0 - floor) * (f - knee) / (f_top - knee);
}

double xs_power_voltage_ratio(const xs_device *dev, double scale)
{
    const xs_backend *be = xs_backend_of(dev);
    double f1 = 0, f_top = 0;
    if (be->clock_mhz)
        be->clock_mhz(dev, &f1, &f_top);
    if (!(dev->power_v_floor > 0) || f1 <= 0)
        return scale; /* the voltage in proportion to the clock */
    return voltage_at(dev, scale * f1, f_top) / voltage_at(dev, f1, f_top);
}

double xs_power_core_factor(const xs_device *dev, double scale)
{
    double v = xs_power_voltage_ratio(dev, scale), leak = dev->power_leak_frac;
    return (1.0 - leak) * scale * v * v + leak * v;
}

/* The scale at which a dense load's core power reaches the raised limit:
 * the factor grows with the scale, so bisection on [1, top]. */
#define CEILING_TOLERANCE 1e-9

double xs_power_scale_ceiling(const xs_device *dev)
{
    const xs_backend *be = xs_backend_of(dev);
    double f1 = 0, f_top = 0;
    if (be->clock_mhz)
        be->clock_mhz(dev, &f1, &f_top);
    double top_scale = be->clock_mhz ? f_top / f1 : 1.0;
    double limit = xs_dev_power_limit(dev);
    if (limit <= dev->tdp_w || top_scale <= 1.0)
        return 1.0;
    double want = (limit - dev->idle_w) / (dev->tdp_w - dev->idle_w);
    if (xs_power_core_factor(dev, top_scale) <= want)
        return top_scale;
    double lo = 1.0, hi = top_scale;
    while (hi - lo > CEILING_TOLERANCE) {
        double mid = 0.5 * (lo + hi);
        if (xs_power_core_factor(dev, mid) <= want)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
