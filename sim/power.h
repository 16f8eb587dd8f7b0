/* power.h — the board's power limit and the core clock it leaves. A board
 * holds its clock only while its power fits its limit; under a lower limit
 * (nvidia-smi -pl) the power manager lowers the core clock, and with it
 * the voltage, until the power fits. The memory clock is not capped, so
 * DRAM-bound time does not stretch.
 *
 * Power of a busy core ~ f V^2, and in the DVFS range the voltage rises
 * about linearly with the clock, so dynamic power ~ f^3 at the same work
 * per cycle (XS_POWER_CLOCK_EXPONENT); static and memory power do not
 * follow the core clock. */
#ifndef XS_POWER_H
#define XS_POWER_H

#include "device.h"
#include "error.h"

/* Dynamic core power ~ f^3: P = a C V^2 f, and over the DVFS range the
 * core voltage rises with the clock, so dynamic power grows as f^2 (fixed
 * voltage) to f^3 (voltage in proportion); the GPU DVFS survey and
 * measurements of Mei, Wang and Chu (Digital Communications and Networks
 * 3(2), 2017, doi:10.1016/j.dcan.2016.10.001) use P = a C V^2 f with the
 * voltage set per clock step. The cube is the rule the shipped PCIe files'
 * sustained clocks were derived with (a100-pcie-*, a10, h100-pcie notes),
 * so one law covers the files and the limit. */
#define XS_POWER_CLOCK_EXPONENT 3.0

/* The factor of the class's clock at the default limit that dev runs at:
 * dev->clock_scale, or 1 when it is unset (0). */
double xs_dev_clock_scale(const xs_device *dev);

/* The limit in effect: dev->power_limit_w, or the default (tdp_w). */
double xs_dev_power_limit(const xs_device *dev);

/* The limits dev accepts: [power.limit_min_w, power.limit_max_w] where the
 * file gives them, else above idle_w and at most tdp_w. */
void xs_power_range(const xs_device *dev, double *lo_w, double *hi_w, int *lo_open);

/* Set dev's power limit to limit_w after checking that its class models a
 * power limit and that the board accepts it; the error names the key
 * device.power_limit_w, the device and its range. Resets the clock scale:
 * xs_predict fits it (predict.c). */
int xs_power_set_limit(xs_device *dev, double limit_w, xs_error *err);

/* The highest clock scale a limit allows: 1 (the file's sustained clock,
 * the clock a dense load holds at the default limit) unless the limit is
 * raised above the default, where a dense load's f^3 power reaches the
 * raised limit at a higher clock, up to the clock the peaks are quoted
 * at (the class's top_clock_scale). */
double xs_power_scale_ceiling(const xs_device *dev);

#endif
