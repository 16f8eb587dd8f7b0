/* xs_hd.h — XS_HD marks per-element math shared by the CPU kernels and the
 * CUDA kernels: __host__ __device__ under nvcc, nothing under a C compiler. */
#ifndef XS_HD_H
#define XS_HD_H

#ifdef __CUDACC__
#define XS_HD __host__ __device__ static inline
#else
#define XS_HD static inline
#endif

#endif
