/* share.h — how the kernels split a range of items over OpenMP threads:
 * contiguous shares cut on whole lines of `line` items, so no two threads
 * write one cache line and every share starts aligned for the vector code. */
#ifndef XS_KRN_SHARE_H
#define XS_KRN_SHARE_H

#include <stddef.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* The calling thread's share [*lo, *hi) of count items (inside a parallel
 * region; outside one, all of them). */
static inline void xs_krn_share(size_t count, size_t line, size_t *lo, size_t *hi)
{
    size_t t = 0, nt = 1;
#ifdef _OPENMP
    t = (size_t)omp_get_thread_num();
    nt = (size_t)omp_get_num_threads();
#endif
    size_t lines = (count + line - 1) / line, per = (lines + nt - 1) / nt * line;
    *lo = t * per < count ? t * per : count;
    *hi = (t + 1) * per < count ? (t + 1) * per : count;
}

#endif
