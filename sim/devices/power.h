/* power.h — the board's power limit and the core clock it leaves. A board
 * holds its clock only while its power fits its limit; under a lower limit
 * (nvidia-smi -pl) the power manager lowers the core clock, and with it
 * the voltage, until the power fits. The memory clock is not capped, so
 * DRAM-bound time does not stretch.
 *
 * Power of a busy core ~ f V^2 plus leakage ~ V; the voltage falls with
 * the clock down to a floor, below which only the clock falls, so under a
 * low limit the clock must drop much further to shed the same power
 * (xs_power_core_factor). Idle and memory power do not follow the core
 * clock. */
#ifndef XS_POWER_H
#define XS_POWER_H

#include "device.h"
#include "error.h"

/* The core's power at clock scale s over its power at scale 1, for the
 * same work per cycle: (1 - leak) s v(s)^2 + leak v(s), where v(s) is the
 * core voltage at s over that at scale 1 and leak is power.leak_frac.
 * Dynamic power is a C V^2 f (Mei, Wang and Chu, Digital Communications
 * and Networks 3(2), 2017, doi:10.1016/j.dcan.2016.10.001); leakage is
 * V I_leak, scaled by the voltage ratio alone as AccelWattch does for its
 * static and idle-SM power (Kandiah et al., MICRO'21; accel-sim/
 * gpgpu-sim_distribution, src/accelwattch/gpgpu_sim_wrapper.cc,
 * update_components_power). The voltage follows the clock on a line from
 * (power.vf_knee_mhz, power.v_floor) up to the top clock and stays at the
 * floor below the knee; without those fields it is in proportion to the
 * clock (v = s, dynamic power ~ f^3, the rule the shipped PCIe files'
 * sustained clocks were derived with). Increasing in s; 1 at s = 1. */
double xs_power_core_factor(const xs_device *dev, double scale);

/* The core voltage at clock scale s over that at scale 1 (see above). */
double xs_power_voltage_ratio(const xs_device *dev, double scale);

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
 * raised above the default, where a dense load's core power
 * (xs_power_core_factor) reaches the raised limit at a higher clock, up to
 * the clock the peaks are quoted at (the class's clock_mhz). */
double xs_power_scale_ceiling(const xs_device *dev);

#endif
