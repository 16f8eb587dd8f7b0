/* nvml.c — see nvml.h.
 *
 * NVML's C ABI, declared here because no nvml.h is needed at build time.
 * Signatures and units from NVML's API reference
 * (https://docs.nvidia.com/deploy/nvml-api/):
 *   group__nvmlInitializationAndCleanup.html: nvmlReturn_t nvmlInit_v2(void),
 *     nvmlShutdown(void)
 *   group__nvmlErrorReporting.html: const char *nvmlErrorString(nvmlReturn_t)
 *   group__nvmlSystemQueries.html: nvmlSystemGetDriverVersion(char *, unsigned int)
 *   group__nvmlDeviceQueries.html:
 *     nvmlDeviceGetHandleByPciBusId_v2(const char *, nvmlDevice_t *)
 *     nvmlDeviceGetHandleByIndex_v2(unsigned int, nvmlDevice_t *)
 *     nvmlDeviceGetName(nvmlDevice_t, char *, unsigned int)
 *     nvmlDeviceGetPowerUsage(nvmlDevice_t, unsigned int *)          milliwatts
 *     nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t, unsigned long long *)
 *                                                   millijoules since the driver
 *                                                   loaded, Volta and newer
 *     nvmlDeviceGetClockInfo / nvmlDeviceGetMaxClockInfo(nvmlDevice_t,
 *                            nvmlClockType_t, unsigned int *)      MHz
 *     nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t, unsigned long long *)
 *                            (named ...ClocksThrottleReasons before CUDA 12.2's NVML)
 *     nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t, unsigned int *)  milliwatts
 *     nvmlDeviceGetTemperature(nvmlDevice_t, nvmlTemperatureSensors_t,
 *                              unsigned int *)                      degrees C
 *   group__nvmlClocksEventReasons.html: the reason bits below.
 * nvmlReturn_t and the enums are C enums (int); NVML_SUCCESS is 0;
 * NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2; NVML_TEMPERATURE_GPU = 0;
 * nvmlDevice_t is an opaque pointer. */
#include "nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"

typedef int nvml_ret;
typedef void *nvml_dev;
#define NVML_SUCCESS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0

typedef struct {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*by_pci)(const char *, nvml_dev *);
    nvml_ret (*by_index)(unsigned int, nvml_dev *);
    nvml_ret (*name)(nvml_dev, char *, unsigned int);
    nvml_ret (*driver)(char *, unsigned int);
    nvml_ret (*power)(nvml_dev, unsigned int *);
    nvml_ret (*energy)(nvml_dev, unsigned long long *);
    nvml_ret (*clock)(nvml_dev, int, unsigned int *);
    nvml_ret (*max_clock)(nvml_dev, int, unsigned int *);
    nvml_ret (*reasons)(nvml_dev, unsigned long long *);
    nvml_ret (*limit)(nvml_dev, unsigned int *);
    nvml_ret (*temp)(nvml_dev, int, unsigned int *);
} nvml_fns;

struct xs_nvml {
    void *handle;
    nvml_fns f;
    nvml_dev dev;
    /* the sampler */
    pthread_t thread;
    pthread_mutex_t lock;
    int running, stop, thread_made;
    double period_s, t0;
    xs_nvml_sample *s;
    size_t ns, cap;
    int grow_failed;
    unsigned long long e0;
    int e0_ok;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *nvml_why(const xs_nvml *n, nvml_ret r)
{
    const char *s = n->f.error_string ? n->f.error_string(r) : NULL;
    return s ? s : "unknown NVML error";
}

/* dlsym into a function pointer of any type (POSIX: it fits a void *). */
static int sym(void *h, const char *name, void *fn)
{
    void *p = dlsym(h, name);
    memcpy(fn, &p, sizeof p);
    return p != NULL;
}

int xs_nvml_open(const char *pci_bus_id, int index, xs_nvml **out, xs_error *err)
{
    *out = NULL;
    const char *env = getenv("XS_NVML_LIB");
    const char *path = env && env[0] ? env : "libnvidia-ml.so.1";
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return xs_error_set(err, XS_ENOHW,
                            "no NVML (board power and clocks need the NVIDIA driver's "
                            "libnvidia-ml.so.1): %s",
                            why ? why : path);
    }
    xs_nvml *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(h);
        return xs_error_set(err, XS_ENOMEM, "NVML: out of memory");
    }
    n->handle = h;
    nvml_fns *f = &n->f;
    static const char *const names[] = {
        "nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlDeviceGetHandleByPciBusId_v2",
        "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlSystemGetDriverVersion",
        "nvmlDeviceGetPowerUsage", "nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxClockInfo",
        "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetTemperature"};
    void *slots[] = {&f->init,  &f->shutdown, &f->error_string, &f->by_pci,
                     &f->by_index, &f->name,  &f->driver,       &f->power,
                     &f->clock, &f->max_clock, &f->limit,       &f->temp};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!sym(h, names[i], slots[i])) {
            xs_error_set(err, XS_ENOHW, "NVML (%s) has no %s: the NVIDIA driver is too old", path,
                         names[i]);
            dlclose(h);
            free(n);
            return XS_ENOHW;
        }
    if (!sym(h, "nvmlDeviceGetCurrentClocksEventReasons", &f->reasons) &&
        !sym(h, "nvmlDeviceGetCurrentClocksThrottleReasons", &f->reasons)) {
        xs_error_set(err, XS_ENOHW,
                     "NVML (%s) has neither nvmlDeviceGetCurrentClocksEventReasons nor "
                     "nvmlDeviceGetCurrentClocksThrottleReasons: the NVIDIA driver is too old",
                     path);
        dlclose(h);
        free(n);
        return XS_ENOHW;
    }
    sym(h, "nvmlDeviceGetTotalEnergyConsumption", &f->energy); /* optional: Volta+ */
    nvml_ret r = f->init();
    if (r != NVML_SUCCESS) {
        xs_error_set(err, XS_ENOHW, "NVML init failed: %s", nvml_why(n, r));
        dlclose(h);
        free(n);
        return XS_ENOHW;
    }
    r = pci_bus_id && pci_bus_id[0] ? f->by_pci(pci_bus_id, &n->dev)
                                    : f->by_index((unsigned)index, &n->dev);
    if (r != NVML_SUCCESS) {
        if (pci_bus_id && pci_bus_id[0])
            xs_error_set(err, XS_ENOHW, "NVML has no board at PCI bus id %s: %s", pci_bus_id,
                         nvml_why(n, r));
        else
            xs_error_set(err, XS_ENOHW, "NVML has no board at index %d: %s", index,
                         nvml_why(n, r));
        f->shutdown();
        dlclose(h);
        free(n);
        return XS_ENOHW;
    }
    pthread_mutex_init(&n->lock, NULL);
    *out = n;
    return XS_OK;
}

void xs_nvml_close(xs_nvml *n)
{
    if (!n)
        return;
    if (n->running) {
        xs_nvml_summary s;
        xs_nvml_sampler_stop(n, &s, NULL);
    }
    n->f.shutdown();
    dlclose(n->handle);
    pthread_mutex_destroy(&n->lock);
    free(n->s);
    free(n);
}

int xs_nvml_board_info(xs_nvml *n, xs_nvml_board *b, xs_error *err)
{
    memset(b, 0, sizeof *b);
    unsigned int v = 0;
    nvml_ret r = n->f.name(n->dev, b->name, sizeof b->name);
    if (r != NVML_SUCCESS)
        return xs_error_set(err, XS_EIO, "NVML: nvmlDeviceGetName: %s", nvml_why(n, r));
    b->name[sizeof b->name - 1] = '\0';
    if ((r = n->f.driver(b->driver, sizeof b->driver)) != NVML_SUCCESS)
        snprintf(b->driver, sizeof b->driver, "unknown");
    b->driver[sizeof b->driver - 1] = '\0';
    if ((r = n->f.limit(n->dev, &v)) != NVML_SUCCESS)
        return xs_error_set(err, XS_EIO, "NVML: nvmlDeviceGetEnforcedPowerLimit: %s",
                            nvml_why(n, r));
    b->power_limit_w = v / 1000.0;
    if (n->f.max_clock(n->dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        b->max_sm_mhz = v;
    if (n->f.max_clock(n->dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        b->max_mem_mhz = v;
    unsigned long long e;
    b->has_energy_counter = n->f.energy && n->f.energy(n->dev, &e) == NVML_SUCCESS;
    return XS_OK;
}

static void take_sample(xs_nvml *n)
{
    xs_nvml_sample s = {now_s() - n->t0, -1, -1, -1, -1, 0};
    unsigned int v;
    if (n->f.power(n->dev, &v) == NVML_SUCCESS)
        s.power_w = v / 1000.0;
    if (n->f.clock(n->dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        s.sm_mhz = v;
    if (n->f.clock(n->dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        s.mem_mhz = v;
    if (n->f.temp(n->dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        s.temp_c = v;
    unsigned long long bits;
    if (n->f.reasons(n->dev, &bits) == NVML_SUCCESS)
        s.reasons = bits;
    pthread_mutex_lock(&n->lock);
    xs_nvml_sample *g = xs_grow(n->s, &n->cap, n->ns, sizeof *g, 256);
    if (g) {
        n->s = g;
        n->s[n->ns++] = s;
    } else {
        n->grow_failed = 1;
    }
    pthread_mutex_unlock(&n->lock);
}

static void *sampler(void *p)
{
    xs_nvml *n = p;
    for (;;) {
        pthread_mutex_lock(&n->lock);
        int stop = n->stop;
        pthread_mutex_unlock(&n->lock);
        if (stop)
            break;
        take_sample(n);
        struct timespec ts = {0, (long)(n->period_s * 1e9)};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int xs_nvml_sampler_start(xs_nvml *n, double period_s, xs_error *err)
{
    if (n->running)
        return xs_error_set(err, XS_EARG, "NVML: the sampler is already running");
    n->period_s = fmin(fmax(period_s, 0.005), 0.1);
    n->ns = 0;
    n->stop = 0;
    n->grow_failed = 0;
    n->t0 = now_s();
    n->e0_ok = n->f.energy && n->f.energy(n->dev, &n->e0) == NVML_SUCCESS;
    if (pthread_create(&n->thread, NULL, sampler, n) != 0)
        return xs_error_set(err, XS_EIO, "NVML: cannot start the sampler thread");
    n->running = 1;
    return XS_OK;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the non-negative entries of v (n of them); -1 when none. */
static double median_of(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] >= 0)
            v[k++] = v[i];
    if (!k)
        return -1;
    qsort(v, k, sizeof *v, cmp_d);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int xs_nvml_sampler_stop(xs_nvml *n, xs_nvml_summary *s, xs_error *err)
{
    memset(s, 0, sizeof *s);
    if (!n->running)
        return xs_error_set(err, XS_EARG, "NVML: the sampler is not running");
    pthread_mutex_lock(&n->lock);
    n->stop = 1;
    pthread_mutex_unlock(&n->lock);
    pthread_join(n->thread, NULL);
    n->running = 0;
    take_sample(n); /* the last instant, so the integral spans the interval */
    s->seconds = now_s() - n->t0;
    unsigned long long e1;
    int e1_ok = n->e0_ok && n->f.energy(n->dev, &e1) == NVML_SUCCESS && e1 >= n->e0;
    if (n->grow_failed)
        return xs_error_set(err, XS_ENOMEM, "NVML: out of memory keeping samples");
    size_t k = n->ns;
    double *v = malloc((k ? k : 1) * sizeof *v);
    if (!v)
        return xs_error_set(err, XS_ENOMEM, "NVML: out of memory summarising samples");
    double psum = 0, integral = 0;
    int np = 0;
    s->temp_max_c = -1;
    for (size_t i = 0; i < k; i++) {
        const xs_nvml_sample *q = &n->s[i];
        s->reasons_seen |= q->reasons;
        s->temp_max_c = fmax(s->temp_max_c, q->temp_c);
        if (q->power_w >= 0) {
            psum += q->power_w;
            np++;
        }
        if (i && q->power_w >= 0 && n->s[i - 1].power_w >= 0) /* trapezoids */
            integral += 0.5 * (q->power_w + n->s[i - 1].power_w) * (q->t_s - n->s[i - 1].t_s);
    }
    for (size_t i = 0; i < k; i++)
        v[i] = n->s[i].power_w;
    s->power_median_w = median_of(v, k);
    for (size_t i = 0; i < k; i++)
        v[i] = n->s[i].sm_mhz;
    s->sm_mhz_median = median_of(v, k);
    for (size_t i = 0; i < k; i++)
        v[i] = n->s[i].mem_mhz;
    s->mem_mhz_median = median_of(v, k);
    free(v);
    s->n = np;
    if (np == 0)
        return xs_error_set(err, XS_EIO, "NVML: no power sample could be read in %.2f s",
                            s->seconds);
    s->power_mean_w = psum / np;
    if (e1_ok) {
        s->energy_j = (double)(e1 - n->e0) / 1000.0; /* mJ */
        s->energy_from_counter = 1;
    } else {
        s->energy_j = integral;
    }
    return XS_OK;
}

void xs_nvml_reasons_text(unsigned long long bits, char *out, size_t size)
{
    /* nvmlClocksEventReasons (group__nvmlClocksEventReasons.html) */
    static const struct {
        unsigned long long bit;
        const char *name;
    } R[] = {{0x1ULL, "gpu_idle"},        {0x2ULL, "applications_clocks"},
             {0x4ULL, "sw_power_cap"},    {0x8ULL, "hw_slowdown"},
             {0x10ULL, "sync_boost"},     {0x20ULL, "sw_thermal"},
             {0x40ULL, "hw_thermal"},     {0x80ULL, "hw_power_brake"},
             {0x100ULL, "display_clocks"}};
    size_t used = 0;
    if (size)
        out[0] = '\0';
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
        if ((bits & R[i].bit) && used < size)
            used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "|" : "", R[i].name);
    unsigned long long known = 0x1FFULL;
    if ((bits & ~known) && used < size)
        used += (size_t)snprintf(out + used, size - used, "%sother(0x%llx)", used ? "|" : "",
                                 bits & ~known);
    if (!used && size)
        snprintf(out, size, "none");
}
