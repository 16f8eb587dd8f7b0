/* runs_on.c — see runs_on.h. */
#include "runs_on.h"

#include "backend.h"

int xs_fp8_device_check(const xs_device *dev, const xs_scenario *s, xs_error *err)
{
    if (s->train.precision != XS_P_FP8 || dev->peak_tflops[XS_FP8] > 0)
        return XS_OK;
    return xs_error_set(err, XS_EUNSUPPORTED,
                        "scenario %s: train.precision fp8 needs fp8 tensor cores (Ada or "
                        "Hopper); device %s has no compute.peak_fp8_tflops",
                        s->id, dev->id);
}

int xs_quant_device_check(const xs_device *dev, const xs_scenario *s, xs_error *err)
{
    /* bitsandbytes' quantized layers are CUDA kernels: XLA has no NF4 or
     * LLM.int8 layer, and the host CPU runs no CUDA */
    const xs_backend *be = xs_backend_of(dev);
    if (s->train.quant != XS_QUANT_NONE && !be->cuda)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "scenario %s: train.quant %s is bitsandbytes' CUDA layers, modelled "
                            "on GPUs only; device %s is of class %s",
                            s->id, s->train.quant == XS_QUANT_NF4 ? "nf4" : "int8", dev->id, be->name);
    if (s->train.quant != XS_QUANT_INT8 || dev->peak_tflops[XS_INT8] > 0)
        return XS_OK;
    return xs_error_set(err, XS_EUNSUPPORTED,
                        "scenario %s: train.quant int8 is modelled on int8 tensor cores "
                        "(bitsandbytes' cuBLASLt int8 GEMM); device %s has no "
                        "compute.peak_int8_tops",
                        s->id, dev->id);
}
