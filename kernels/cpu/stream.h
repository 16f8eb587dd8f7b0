/* stream.h — bandwidth yardsticks (McCalpin's STREAM kernels): triad
 * a = b + s c, and a read-only sum that measures load bandwidth at any
 * working-set size, from L1 to DRAM. */
#ifndef XS_KRN_STREAM_H
#define XS_KRN_STREAM_H

#include <stddef.h>

/* a[i] = b[i] + s * c[i]: 12 bytes an element as STREAM counts it. */
void xs_krn_triad(float *a, const float *b, const float *c, float s, size_t count, int threads);

/* Sum of x (read-only, 4 bytes an element); returned so it is not elided. */
double xs_krn_read(const float *x, size_t count, int threads);

#endif
