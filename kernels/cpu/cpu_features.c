/* cpu_features.c — see cpu_features.h. */
#include "cpu_features.h"

#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Linux x86 arch_prctl: ask for permission to use AMX tile data (the kernel
 * enables the 8 KB tile state per process only on request). */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static xs_cpu_features features;
static int detected;

static unsigned long long xgetbv0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
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

static void detect(void)
{
    unsigned int a, b, c, d;
    xs_cpu_features f;
    memset(&f, 0, sizeof f);
    int osxsave = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27));
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    /* opmask, ZMM_Hi256 and Hi16_ZMM state (bits 5-7) plus AVX (1-2) */
    int os_avx512 = (xcr0 & 0xe6) == 0xe6;
    int os_amx = (xcr0 & (3ull << 17)) == (3ull << 17);
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        int f_bw_vl = (b & (1u << 16)) && (b & (1u << 30)) && (b & (1u << 31));
        f.avx512 = f_bw_vl && os_avx512 && !disabled("avx512");
        int amx = (d & (1u << 24)) && (d & (1u << 22)); /* AMX-TILE, AMX-BF16 */
        f.amx_bf16 = amx && os_amx && f.avx512 && !disabled("amx") &&
                     syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d))
        f.avx512_bf16 = (a & (1u << 5)) && f.avx512 && !disabled("avx512bf16");
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
        snprintf(f.model, sizeof f.model, "%s", start);
    } else {
        snprintf(f.model, sizeof f.model, "unknown x86-64");
    }
#ifdef _OPENMP
    f.cores = omp_get_max_threads();
#else
    f.cores = 1;
#endif
    features = f;
}

const xs_cpu_features *xs_cpu_features_get(void)
{
    if (!detected) {
        detect();
        detected = 1;
    }
    return &features;
}

void xs_cpu_features_redetect(void)
{
    detect();
    detected = 1;
}

const char *xs_cpu_bf16_path(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    return f->amx_bf16 ? "amx" : f->avx512_bf16 ? "avx512bf16" : "portable";
}
