/* backend.c — maps device classes to their cost functions. */
#include "backend.h"

const xs_backend *xs_backend_for(const xs_device *dev, xs_error *err)
{
    static const xs_backend *const by_class[] = {
        [XS_CLASS_GPU] = &xs_gpu_backend,
        [XS_CLASS_TPU] = NULL,
        [XS_CLASS_CPU] = NULL,
    };
    const xs_backend *b = dev->cls >= 0 && dev->cls <= XS_CLASS_CPU ? by_class[dev->cls] : NULL;
    if (!b)
        xs_error_set(err, XS_EUNSUPPORTED, "device %s: no cost model for class '%s' yet",
                     dev->id, dev->cls == XS_CLASS_TPU ? "tpu" : "cpu");
    return b;
}
