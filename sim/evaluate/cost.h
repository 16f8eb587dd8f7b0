/* cost.h — dollars for device time. */
#ifndef XS_COST_H
#define XS_COST_H

#include <stdint.h>

#include "device.h"

/* Cost of running `devices` devices for seconds, at the device's price. */
double xs_cost_usd(const xs_device *dev, double seconds, int64_t devices);

#endif
