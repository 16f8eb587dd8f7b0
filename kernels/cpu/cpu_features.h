/* cpu_features.h — what this x86-64 CPU and its OS let the kernels use,
 * found at run time (CPUID and XCR0), so one binary runs everywhere and takes
 * the fastest path the machine allows. XS_CPU_DISABLE (comma-separated:
 * amx, avx512bf16, avx512) turns paths off, so tests can run the fallbacks. */
#ifndef XS_CPU_FEATURES_H
#define XS_CPU_FEATURES_H

typedef struct {
    int avx512;      /* AVX-512 F + BW + VL, with OS support for the ZMM state */
    int avx512_bf16; /* VDPBF16PS */
    int amx_bf16;    /* AMX tiles with BF16 TMUL, and the OS granted tile data */
    int cores;       /* logical CPUs OpenMP may use */
    char model[64];  /* CPUID brand string */
} xs_cpu_features;

/* Detected once; thread-safe after the first call returns. */
const xs_cpu_features *xs_cpu_features_get(void);

/* Detect again (after a test changed XS_CPU_DISABLE); not thread-safe. */
void xs_cpu_features_redetect(void);

/* The name of the best path for bf16 GEMMs: "amx", "avx512bf16" or "portable". */
const char *xs_cpu_bf16_path(void);

#endif
