/* cpu_features.c — see cpu_features.h. */
#include "cpu_features.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define XS_X86 1
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

static xs_cpu_features features;
static pthread_once_t detected = PTHREAD_ONCE_INIT; /* the first caller detects, once */

static const char *const ISA_NAMES[XS_ISA_COUNT] = {
    [XS_ISA_PORTABLE] = "portable",       [XS_ISA_NEON] = "neon",
    [XS_ISA_AVX2] = "avx2",               [XS_ISA_AVX512] = "avx512",
    [XS_ISA_AVX512_BF16] = "avx512-bf16", [XS_ISA_AMX_BF16] = "amx-bf16",
};

const char *xs_cpu_isa_name(xs_cpu_isa isa)
{
    return (int)isa >= 0 && isa < XS_ISA_COUNT ? ISA_NAMES[isa] : NULL;
}

int xs_cpu_isa_parse(const char *name)
{
    for (int i = 0; i < XS_ISA_COUNT; i++)
        if (name && strcmp(name, ISA_NAMES[i]) == 0)
            return i;
    return -1;
}

int xs_cpu_isa_has_bf16_unit(xs_cpu_isa isa)
{
    return isa == XS_ISA_AMX_BF16 || isa == XS_ISA_AVX512_BF16;
}

/* fp32 FMA FLOPs per cycle per core: ports x lanes x 2.
 *   AVX-512 (Sapphire Rapids): 2 x 512-bit ports, 64 (datasheets.md section 3).
 *   AVX2: 2 x 256-bit FMA units, 32: Intel from Haswell (Intel 64 and IA-32
 *   Architectures Optimization Reference Manual, Haswell chapter) and AMD
 *   Zen 2 / Zen 3 (AMD Software Optimization Guides for family 17h and 19h).
 *   NEON: 2 x 128-bit FMA pipes, 16 (Arm Neoverse N1 Software Optimization
 *   Guide); Neoverse V1 and Apple cores have 4, so a clock derived from this
 *   reads twice too high there (the clock is reported, not used by the model).
 *   portable: no vector unit is assumed: 0, no clock is derived. */
double xs_cpu_isa_fma_flop_per_cycle(xs_cpu_isa isa)
{
    switch (isa) {
    case XS_ISA_AMX_BF16:
    case XS_ISA_AVX512_BF16:
    case XS_ISA_AVX512: return 64;
    case XS_ISA_AVX2: return 32;
    case XS_ISA_NEON: return 16;
    default: return 0;
    }
}

static int disabled(const char *what)
{
    const char *env = getenv("XS_CPU_DISABLE");
    if (!env)
        return 0;
    size_t n = strlen(what);
    for (const char *p = env; (p = strstr(p, what)); p += n)
        if ((p == env || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

#ifdef XS_X86
/* Linux x86 arch_prctl: ask for permission to use AMX tile data (the kernel
 * enables the 8 KB tile state per process only on request). */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static unsigned long long xgetbv0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

/* Family and model as Intel's and AMD's manuals display them: the
 * extended family added when the base one is 15, the extended model
 * prepended for families 6 and 15 (Intel SDM vol. 2A, CPUID leaf 1). */
static void x86_signature(xs_cpu_features *f)
{
    unsigned int a, b, c, d;
    char vendor[13];
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return;
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = '\0';
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    unsigned int family = (a >> 8) & 0xf, model = (a >> 4) & 0xf, stepping = a & 0xf;
    if (family == 15)
        family += (a >> 20) & 0xff;
    if (family == 6 || family >= 15)
        model += ((a >> 16) & 0xf) << 4;
    snprintf(f->signature, sizeof f->signature, "%s family %u model %u stepping %u", vendor,
             family, model, stepping);
}

static void detect_arch(xs_cpu_features *f)
{
    unsigned int a, b, c, d;
    x86_signature(f);
    int osxsave = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27));
    int fma = osxsave && (c & (1u << 12)) && (c & (1u << 28)); /* FMA, AVX */
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    int os_avx = (xcr0 & 0x6) == 0x6; /* XMM and YMM state */
    /* opmask, ZMM_Hi256 and Hi16_ZMM state (bits 5-7) plus AVX (1-2) */
    int os_avx512 = (xcr0 & 0xe6) == 0xe6;
    int os_amx = (xcr0 & (3ull << 17)) == (3ull << 17);
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f->avx2 = (b & (1u << 5)) && fma && os_avx && !disabled("avx2");
        int f_bw_vl = (b & (1u << 16)) && (b & (1u << 30)) && (b & (1u << 31));
        f->avx512 = f_bw_vl && os_avx512 && f->avx2 && !disabled("avx512");
        int amx = (d & (1u << 24)) && (d & (1u << 22)); /* AMX-TILE, AMX-BF16 */
        f->amx_bf16 = amx && os_amx && f->avx512 && !disabled("amx") &&
                      syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d))
        f->avx512_bf16 = (a & (1u << 5)) && f->avx512 && !disabled("avx512bf16");
    unsigned int brand[12];
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
        for (unsigned int i = 0; i < 3; i++)
            __get_cpuid(0x80000002 + i, &brand[4 * i], &brand[4 * i + 1], &brand[4 * i + 2],
                        &brand[4 * i + 3]);
        char text[sizeof brand + 1];
        memcpy(text, brand, sizeof brand); /* 48 bytes, NUL-padded by the CPU */
        text[sizeof brand] = '\0';
        const char *start = text;
        while (*start == ' ')
            start++;
        snprintf(f->model, sizeof f->model, "%s", start);
    } else {
        snprintf(f->model, sizeof f->model, "unknown x86-64");
    }
}
#else
/* The value of "key : value" in /proc/cpuinfo's first processor, or "". */
static void cpuinfo(const char *key, char *out, size_t size)
{
    out[0] = '\0';
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (!fp)
        return;
    char line[256];
    size_t n = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, key, n) == 0 && strchr(line, ':')) {
            const char *v = strchr(line, ':') + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(out, size, "%s", v);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    fclose(fp);
}

static void detect_arch(xs_cpu_features *f)
{
#if defined(__aarch64__)
    /* Advanced SIMD is part of every AArch64 core; HWCAP_ASIMD says the OS
     * agrees (Linux arch/arm64 hwcap bit 1) */
    f->neon = (getauxval(AT_HWCAP) & (1ul << 1)) && !disabled("neon");
    char impl[16], part[16], variant[16], revision[16];
    cpuinfo("CPU implementer", impl, sizeof impl);
    cpuinfo("CPU part", part, sizeof part);
    cpuinfo("CPU variant", variant, sizeof variant);
    cpuinfo("CPU revision", revision, sizeof revision);
    if (impl[0] && part[0]) {
        snprintf(f->model, sizeof f->model, "aarch64 implementer %.15s part %.15s", impl, part);
        snprintf(f->signature, sizeof f->signature,
                 "implementer %.10s part %.10s variant %.10s revision %.10s", impl, part,
                 variant[0] ? variant : "?", revision[0] ? revision : "?");
    } else {
        snprintf(f->model, sizeof f->model, "unknown aarch64");
    }
#else
    char name[64];
    cpuinfo("model name", name, sizeof name);
    snprintf(f->model, sizeof f->model, "%s", name[0] ? name : "unknown CPU");
#endif
}
#endif

/* The best set the features allow. */
static xs_cpu_isa best_isa(const xs_cpu_features *f)
{
    return f->amx_bf16      ? XS_ISA_AMX_BF16
           : f->avx512_bf16 ? XS_ISA_AVX512_BF16
           : f->avx512      ? XS_ISA_AVX512
           : f->avx2        ? XS_ISA_AVX2
           : f->neon        ? XS_ISA_NEON
                            : XS_ISA_PORTABLE;
}

/* Turn off what lies above cap. */
static void apply_cap(xs_cpu_features *f, xs_cpu_isa cap)
{
    if (cap < XS_ISA_AMX_BF16)
        f->amx_bf16 = 0;
    if (cap < XS_ISA_AVX512_BF16)
        f->avx512_bf16 = 0;
    if (cap < XS_ISA_AVX512)
        f->avx512 = 0;
    if (cap < XS_ISA_AVX2)
        f->avx2 = 0;
    if (cap < XS_ISA_NEON)
        f->neon = 0;
}

/* 1 when the CPU (after XS_CPU_DISABLE) can run set isa. */
static int has_isa(const xs_cpu_features *f, xs_cpu_isa isa)
{
    switch (isa) {
    case XS_ISA_PORTABLE: return 1;
    case XS_ISA_NEON: return f->neon;
    case XS_ISA_AVX2: return f->avx2;
    case XS_ISA_AVX512: return f->avx512;
    case XS_ISA_AVX512_BF16: return f->avx512_bf16;
    case XS_ISA_AMX_BF16: return f->amx_bf16;
    default: return 0;
    }
}

static void detect(void)
{
    xs_cpu_features f;
    memset(&f, 0, sizeof f);
    detect_arch(&f);
    const char *want = getenv("XS_CPU_ISA");
    if (want && want[0]) {
        int cap = xs_cpu_isa_parse(want);
        if (cap < 0)
            snprintf(f.isa_error, sizeof f.isa_error,
                     "XS_CPU_ISA='%.40s' names no kernel set: use amx-bf16, avx512-bf16, "
                     "avx512, avx2, neon or portable",
                     want);
        else if (!has_isa(&f, (xs_cpu_isa)cap))
            snprintf(f.isa_error, sizeof f.isa_error,
                     "XS_CPU_ISA=%s: this CPU (%.60s) cannot run that kernel set; its best is %s",
                     want, f.model, xs_cpu_isa_name(best_isa(&f)));
        else
            apply_cap(&f, (xs_cpu_isa)cap);
    }
    f.isa = best_isa(&f);
#ifdef _OPENMP
    f.cores = omp_get_max_threads();
#else
    f.cores = 1;
#endif
    features = f;
}

const xs_cpu_features *xs_cpu_features_get(void)
{
    pthread_once(&detected, detect);
    return &features;
}

void xs_cpu_features_redetect(void)
{
    pthread_once(&detected, detect);
    detect();
}

const char *xs_cpu_bf16_path(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    switch (f->isa) {
    case XS_ISA_AMX_BF16: return "amx";
    case XS_ISA_AVX512_BF16: return "avx512bf16";
    case XS_ISA_AVX512: return "fp32-avx512";
    case XS_ISA_AVX2: return "fp32-avx2";
    case XS_ISA_NEON: return "fp32-neon";
    default: return "fp32-portable";
    }
}
