/* scratch.c — see scratch.h. */
#include "scratch.h"

#include <stdlib.h>

/* one set a thread: two threads calling a kernel never share a buffer */
static _Thread_local void *buffers[XS_SCRATCH_SLOTS];
static _Thread_local size_t sizes[XS_SCRATCH_SLOTS];

void *xs_krn_scratch(int slot, size_t bytes)
{
    if (slot < 0 || slot >= XS_SCRATCH_SLOTS)
        return NULL;
    if (bytes <= sizes[slot])
        return buffers[slot];
    size_t want = (bytes + 63) / 64 * 64;
    void *grown = aligned_alloc(64, want);
    if (!grown)
        return NULL;
    free(buffers[slot]);
    buffers[slot] = grown;
    sizes[slot] = want;
    return grown;
}

void xs_krn_scratch_free(void)
{
    for (int i = 0; i < XS_SCRATCH_SLOTS; i++) {
        free(buffers[i]);
        buffers[i] = NULL;
        sizes[i] = 0;
    }
}
