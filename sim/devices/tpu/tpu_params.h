/* tpu_params.h — what the TPU model knows about one Google TPU generation,
 * read from a device file with class "tpu" (tpu_device.c). A device is
 * what one XLA device drives: a TensorCore on v2 and v3, where each core is
 * its own device, the whole chip on v4 and v5p (megacore: both cores as
 * one device) and on v5e (one core a chip); the file states its peak, HBM,
 * power and price as that device's share of the chip's quoted figures. */
#ifndef XS_TPU_PARAMS_H
#define XS_TPU_PARAMS_H

#include <stdint.h>

typedef struct {
    char generation[8];          /* "v2" .. "v5p": the report's architecture */
    int64_t cores_per_chip;      /* TensorCores on a chip */
    int64_t cores_per_device;    /* TensorCores one XLA device drives */
    int64_t mxus_per_core;       /* matrix units per TensorCore */
    int64_t mxu_dim;             /* side of the square systolic array (128) */
    int64_t sublanes, lanes;     /* the (8, 128) vector-register tile */
    int64_t vpu_alus;            /* ALUs per (sublane, lane) pair */
    double clock_mhz;
    int64_t ici_links;           /* ICI ports per chip */
    double ici_gbs_per_link;     /* one direction, as collectives use it */
    char topology[12];           /* "2d-torus" | "3d-torus" */
    char pod_shape[16];          /* the largest slice, chips a dimension: "16x16x16" */
    int64_t pod[3];              /* the same parsed (1 past the topology's dimensions) */
    /* the slices Cloud TPU offers, in chips, as the file lists them ("4,16,64");
     * empty: every power of two from 4 that fits the pod */
    char slice_chips[96];
    int64_t slices[16];
    int nslices;
    /* XLA's precision for fp32 matmuls: 1 bf16 pass (DEFAULT), 3 (HIGH,
     * bf16_3x) or 6 (HIGHEST, bf16_6x) */
    int64_t fp32_passes;
    /* share of the MXU cycles the compiler's schedule keeps issuing beyond
     * padding and fill (1: every cycle), and its slow end */
    double mxu_efficiency, mxu_efficiency_low;
    /* share of HBM bandwidth a streaming fusion reaches, and its band */
    double hbm_efficiency, hbm_efficiency_low, hbm_efficiency_high;
} xs_tpu_params;

#endif
