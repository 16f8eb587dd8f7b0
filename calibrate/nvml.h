/* nvml.h — board power, clocks, throttle reasons and temperature from
 * NVML, loaded with dlopen of libnvidia-ml.so.1 ($XS_NVML_LIB overrides the
 * path), so nothing of NVML is needed to build xpusim or to run it where
 * no power is asked for. A sampler thread reads the board every ~15 ms
 * while a sustained job runs; the total-energy counter (Volta and newer)
 * is read before and after where the board has one. */
#ifndef XS_CAL_NVML_H
#define XS_CAL_NVML_H

#include <stddef.h>

#include "error.h"

typedef struct xs_nvml xs_nvml;

/* Load NVML, init it and find the board: by PCI bus id (the one
 * libxscuda probed, "0000:3B:00.0") when given, else by index. Each
 * failure one line with code XS_ENOHW: the library absent, a function
 * missing, nvmlInit failing (NVML's own error string). *out NULL then. */
int xs_nvml_open(const char *pci_bus_id, int index, xs_nvml **out, xs_error *err);
void xs_nvml_close(xs_nvml *n);

/* What NVML says of the board, read once. */
typedef struct {
    char name[96], driver[32];
    double power_limit_w;      /* enforced limit */
    double max_sm_mhz, max_mem_mhz;
    int has_energy_counter;    /* nvmlDeviceGetTotalEnergyConsumption works */
} xs_nvml_board;
int xs_nvml_board_info(xs_nvml *n, xs_nvml_board *b, xs_error *err);

/* One sample of the board. */
typedef struct {
    double t_s; /* since the sampler started */
    double power_w, sm_mhz, mem_mhz, temp_c;
    unsigned long long reasons; /* clocks event (throttle) reason bits */
} xs_nvml_sample;

/* What a sampled interval comes to. */
typedef struct {
    int n;                          /* samples */
    double seconds;                 /* wall time from start to stop */
    double power_median_w, power_mean_w;
    double sm_mhz_median, mem_mhz_median, temp_max_c;
    unsigned long long reasons_seen; /* OR of every sample's reasons */
    double energy_j;  /* counter difference, or the samples' power integrated */
    int energy_from_counter; /* 1: the energy counter; 0: integrated samples */
} xs_nvml_summary;

/* Start sampling every period_s (clamped to 5..100 ms) in a thread. */
int xs_nvml_sampler_start(xs_nvml *n, double period_s, xs_error *err);
/* Stop it and summarise; XS_EIO when no sample could be taken. */
int xs_nvml_sampler_stop(xs_nvml *n, xs_nvml_summary *s, xs_error *err);

/* The reason bits as words ("sw_power_cap|hw_slowdown"), "none" for 0. */
void xs_nvml_reasons_text(unsigned long long bits, char *out, size_t size);

#endif
