/* peak.h — the matrix and vector engines' in-core peaks, measured: long
 * chains of independent AMX TDPBF16PS or AVX-512 FMA on registers only, no
 * memory traffic. Each returns the FLOPs it executed (on every thread). */
#ifndef XS_KRN_PEAK_H
#define XS_KRN_PEAK_H

/* 0 when the engine is not available on this CPU. */
double xs_krn_peak_amx_bf16(long iters, int threads);
double xs_krn_peak_fma_f32(long iters, int threads);

#endif
