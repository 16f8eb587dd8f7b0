/* simd.h — the one place the kernels include the vector intrinsics, each
 * only where the compiler targets that architecture: x86-64 gets
 * <immintrin.h> (the AVX2, AVX-512 and AMX code is compiled per function
 * with target attributes and run only where cpu_features says so), aarch64
 * gets <arm_neon.h> (Advanced SIMD is part of every AArch64 core). Other
 * architectures get neither and run the portable kernels. */
#ifndef XS_KRN_SIMD_H
#define XS_KRN_SIMD_H

#if defined(__x86_64__)
#define XS_X86 1
#include <immintrin.h>
#elif defined(__aarch64__)
#define XS_NEON 1
#include <arm_neon.h>
#endif

#endif
