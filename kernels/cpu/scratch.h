/* scratch.h — grow-only, 64-byte aligned work buffers for the kernels'
 * packed operands, kept between calls: a fresh multi-megabyte allocation
 * per call is served by mmap and pays its page faults every time (measured:
 * 2.5x slower fp32 GEMMs). One owner: this module. Each thread has its
 * own buffers (thread-local), so kernels called from several threads at
 * once never share one; xs_krn_scratch_free releases the calling
 * thread's (a thread that ran kernels calls it before it ends). */
#ifndef XS_KRN_SCRATCH_H
#define XS_KRN_SCRATCH_H

#include <stddef.h>

enum { XS_SCRATCH_A, XS_SCRATCH_B, XS_SCRATCH_SLOTS };

/* A buffer of at least bytes for slot; NULL when out of memory. Valid until
 * this thread's next call for the same slot or xs_krn_scratch_free. */
void *xs_krn_scratch(int slot, size_t bytes);
void xs_krn_scratch_free(void);

#endif
