/* peak.h — the matrix and vector engines' in-core peaks, measured: long
 * chains of independent AMX TDPBF16PS, or of fp32 FMAs of the kernel set in
 * force (AVX-512, AVX2, NEON; the portable set times scalar multiply-adds),
 * on registers only, no memory traffic. Each returns the FLOPs it executed
 * (on every thread). */
#ifndef XS_KRN_PEAK_H
#define XS_KRN_PEAK_H

/* 0 when the CPU has no AMX (or the kernel set excludes it). */
double xs_krn_peak_amx_bf16(long iters, int threads);
double xs_krn_peak_fma_f32(long iters, int threads);

/* What xs_krn_peak_fma_f32 times: "AVX-512 fp32 FMA", "AVX2 fp32 FMA",
 * "NEON fp32 FMA" or "portable fp32 mul+add". */
const char *xs_krn_peak_fma_name(void);

#endif
