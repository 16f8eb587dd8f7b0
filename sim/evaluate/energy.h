/* energy.h — board power between idle and TDP, driven by how busy an op
 * keeps the compute engines and the memory system. */
#ifndef XS_ENERGY_H
#define XS_ENERGY_H

#include "device.h"
#include "op.h"

/* Fill est->power_w and est->energy_j from its times. A kernel that keeps
 * the engines busy at their achievable rate all its time draws TDP (that is
 * why the clock drops to the sustained clock); one that saturates DRAM
 * draws power.memory_frac of the range; launch gaps draw idle power.
 * Under a power limit the core runs at dev's clock scale and its share of
 * the range scales by xs_power_core_factor (clock, voltage and leakage,
 * power.h); the memory share does not. */
void xs_energy_fill(const xs_device *dev, xs_estimate *est);

/* The same in two parts, for the many ops of one step on one device:
 * the core's share factor (the same for every op at dev's clock), then
 * each op's fill with it. */
double xs_energy_core(const xs_device *dev);
void xs_energy_fill_at(const xs_device *dev, double core, xs_estimate *est);

#endif
