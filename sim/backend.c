/* backend.c — maps device classes to their cost functions. */
#include "backend.h"

#include "cpu.h"

const xs_backend *xs_backend_for(const xs_device *dev, xs_error *err)
{
    static const xs_backend *const by_class[] = {
        [XS_CLASS_GPU] = &xs_gpu_backend,
        [XS_CLASS_TPU] = NULL,
        [XS_CLASS_CPU] = &xs_cpu_backend,
    };
    const xs_backend *b = dev->cls >= 0 && dev->cls <= XS_CLASS_CPU ? by_class[dev->cls] : NULL;
    if (!b)
        xs_error_set(err, XS_EUNSUPPORTED, "device %s: no cost model for class '%s' yet",
                     dev->id, dev->cls == XS_CLASS_TPU ? "tpu" : "?");
    return b;
}
