/* backend.c — the one table of device classes, in XS_CLASS_CHOICES order. */
#include "backend.h"

#include <string.h>

static const xs_backend *const CLASSES[] = {&xs_gpu_backend, &xs_cpu_backend,
                                              &xs_tpu_backend};
#define NCLASSES ((int)(sizeof CLASSES / sizeof CLASSES[0]))

const xs_backend *xs_backend_at(int i)
{
    return i >= 0 && i < NCLASSES ? CLASSES[i] : NULL;
}

const xs_backend *xs_backend_find(const char *name, int *index)
{
    for (int i = 0; i < NCLASSES; i++)
        if (strcmp(CLASSES[i]->name, name) == 0) {
            if (index)
                *index = i;
            return CLASSES[i];
        }
    return NULL;
}
