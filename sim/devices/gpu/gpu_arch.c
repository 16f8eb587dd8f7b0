/* gpu_arch.c — what each CUDA compute capability offers, for the GPU
 * model (gpu.c) and the checks of a device file (gpu_device.c) alike. */
#include "gpu.h"

/* CUDA C++ Programming Guide, "Technical Specifications per Compute
 * Capability": maximum number of resident threads per SM. */
int64_t xs_sm_threads(int64_t sm_version)
{
    switch (sm_version) {
    case 70: case 72: case 80: case 90:
        return 2048;
    case 86: case 87: case 89:
        return 1536;
    case 75:
        return 1024;
    default:
        return 0;
    }
}
