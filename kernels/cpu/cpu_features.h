/* cpu_features.h — what this CPU and its OS let the kernels use, found at
 * run time (x86-64: CPUID and XCR0; aarch64: the auxiliary vector), so one
 * binary runs everywhere and takes the fastest kernel set the machine allows.
 *
 * Kernel sets, best first on each architecture:
 *   x86-64:  amx-bf16 > avx512-bf16 > avx512 > avx2 (AVX2 + FMA) > portable
 *   aarch64: neon > portable
 * A set includes everything below it (amx-bf16 also runs the AVX-512 fp32
 * kernels). Where the set has no bf16 unit (avx512, avx2, neon, portable),
 * bf16 GEMMs convert their operands to fp32 while packing them and run on
 * the fp32 kernel.
 *
 * XS_CPU_ISA=SET caps the kernels at SET (one of the names above, which the
 * CPU must have), so that a lower set's kernels run, are tested and are
 * calibrated on a machine that has a higher one. XS_CPU_DISABLE (comma-
 * separated: amx, avx512bf16, avx512, avx2, neon) turns single features
 * off, for the tests of each fallback. */
#ifndef XS_CPU_FEATURES_H
#define XS_CPU_FEATURES_H

typedef enum {
    XS_ISA_PORTABLE,
    XS_ISA_NEON,
    XS_ISA_AVX2,
    XS_ISA_AVX512,
    XS_ISA_AVX512_BF16,
    XS_ISA_AMX_BF16,
    XS_ISA_COUNT
} xs_cpu_isa;

typedef struct {
    int avx2;        /* AVX2 and FMA, with OS support for the YMM state */
    int avx512;      /* AVX-512 F + BW + VL, with OS support for the ZMM state */
    int avx512_bf16; /* VDPBF16PS */
    int amx_bf16;    /* AMX tiles with BF16 TMUL, and the OS granted tile data */
    int neon;        /* aarch64 Advanced SIMD (fp32 FMA, IEEE sqrt and divide) */
    xs_cpu_isa isa;  /* the kernel set the kernels run: the best one left */
    int cores;       /* logical CPUs OpenMP may use */
    char model[64];  /* CPUID brand string; on aarch64 the implementer and part */
    /* the CPU's identity beyond its name (cloud VMs show one brand string,
     * "Intel(R) Xeon(R) Processor", for several generations): x86-64
     * "VENDOR family F model M stepping S" from CPUID leaf 0 and 1;
     * aarch64 "implementer I part P variant V revision R" from
     * /proc/cpuinfo; "" where neither is known */
    char signature[80];
    /* non-empty when XS_CPU_ISA names no set or one this CPU lacks: the
     * kernels then run the best set and the entry points (calibrate,
     * validate --backend cpu, bench) refuse with this text */
    char isa_error[192];
} xs_cpu_features;

/* Detected once, by the first caller (pthread_once): thread-safe. */
const xs_cpu_features *xs_cpu_features_get(void);

/* Detect again (after a test changed XS_CPU_ISA or XS_CPU_DISABLE); not
 * thread-safe. */
void xs_cpu_features_redetect(void);

/* "amx-bf16", "avx512-bf16", "avx512", "avx2", "neon", "portable"; the
 * names a device file's compute.isa and XS_CPU_ISA use. NULL out of range. */
const char *xs_cpu_isa_name(xs_cpu_isa isa);

/* The set called name, or -1. */
int xs_cpu_isa_parse(const char *name);

/* 1 when the kernel set has a bf16 unit (AMX or VDPBF16PS); else bf16
 * GEMMs run on the fp32 kernel. */
int xs_cpu_isa_has_bf16_unit(xs_cpu_isa isa);

/* The path of bf16 GEMMs: "amx", "avx512bf16", or "fp32-SET" (converted
 * to fp32 while packed, multiplied by SET's fp32 kernel). */
const char *xs_cpu_bf16_path(void);

/* The fp32 FMA units' FLOPs per cycle per core of a kernel set, from the
 * vendors' documents (see cpu_features.c); 0 when unknown. */
double xs_cpu_isa_fma_flop_per_cycle(xs_cpu_isa isa);

#endif
