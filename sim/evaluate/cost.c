/* cost.c — see cost.h. Cloud prices are per device-hour (datasheets.md 1e). */
#include "cost.h"

double xs_cost_usd(const xs_device *dev, double seconds, int64_t devices)
{
    return seconds / 3600.0 * (double)devices * dev->price_usd_per_hour;
}
