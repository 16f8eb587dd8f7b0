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
    if (!xs_backend_of(dev)->top_clock_scale)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "--set device.power_limit_w=%g: device %s (class %s) has no model of "
                            "a power limit; only GPUs take one",
                            limit_w, dev->id, xs_backend_of(dev)->name);
    double lo, hi;
    int lo_open;
    xs_power_range(dev, &lo, &hi, &lo_open);
    if (!(limit_w > 0) || (lo_open ? limit_w <= lo : limit_w < lo) || limit_w > hi) {
        if (lo_open)
            return xs_error_set(err, XS_ERANGE,
                                "--set device.power_limit_w=%g: device %s takes a limit above "
                                "its idle power %g W and at most %g W (its file publishes no "
                                "range: power.limit_min_w/limit_max_w)",
                                limit_w, dev->id, lo, hi);
        return xs_error_set(err, XS_ERANGE,
                            "--set device.power_limit_w=%g: device %s takes a limit from %g to "
                            "%g W (power.limit_min_w..limit_max_w)",
                            limit_w, dev->id, lo, hi);
    }
    dev->power_limit_w = limit_w;
    dev->clock_scale = 1.0;
    return XS_OK;
}

double xs_power_scale_ceiling(const xs_device *dev)
{
    const xs_backend *be = xs_backend_of(dev);
    double top_scale = be->top_clock_scale ? be->top_clock_scale(dev) : 1.0;
    double limit = xs_dev_power_limit(dev);
    if (limit <= dev->tdp_w || top_scale <= 1.0)
        return 1.0;
    double dense = pow((limit - dev->idle_w) / (dev->tdp_w - dev->idle_w),
                       1.0 / XS_POWER_CLOCK_EXPONENT);
    return fmin(top_scale, dense);
}
