/* grow.h — the one rule for arrays that are appended to: when full, double
 * the capacity (from `first` when empty). Used by the op lists, the trace
 * and measurement lists and the validate rows alike. */
#ifndef XS_GROW_H
#define XS_GROW_H

#include <stdlib.h>

/* v (capacity *cap, n used) with room for one more element of size bytes:
 * v itself while there is room, else the reallocated array (*cap updated),
 * or NULL when out of memory (v is then untouched and still owned). */
static inline void *xs_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return v;
    size_t nc = *cap ? 2 * *cap : first;
    void *grown = realloc(v, nc * size);
    if (grown)
        *cap = nc;
    return grown;
}

#endif
