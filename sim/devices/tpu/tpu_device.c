/* tpu_device.c — the schema of a class-tpu device file (one XLA device of
 * a Google TPU generation: a TensorCore on v2/v3, the chip on v4/v5e/v5p,
 * its figures that share of the chip's quoted ones) and the checks between
 * its fields. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_fields.h"
#include "tpu.h"

/* rows that store into the xs_tpu_params record (device_fields.h) */
#define T(m) XS_OWN(xs_tpu_params, m)
#define T_STR(m) XS_OWN_STR(xs_tpu_params, m)

static const xs_field TPU_FIELDS[] = {
    ID_ROW,
    STR("name", 1, D_STR(name), "what the device is"),
    CLASS_ROW,
    NOTE_OPT("note", "free text"),
    STR("compute.generation", 1, T_STR(generation), "v2, v3, v4, v5e or v5p"),
    INT("compute.tensorcores_per_chip", 1, 8, T(cores_per_chip), "TensorCores on one chip"),
    INT("compute.tensorcores_per_device", 1, 8, T(cores_per_device),
        "TensorCores one XLA device drives: 1 where each core is a device (v2, v3), "
        "2 for megacore (v4, v5p)"),
    INT("compute.mxus_per_tensorcore", 1, 64, T(mxus_per_core), "matrix units per TensorCore"),
    INT("compute.mxu_size", 8, 1024, T(mxu_dim), "side of the square systolic array (128)"),
    INT("compute.vpu_sublanes", 1, 128, T(sublanes),
        "sublanes of the vector unit: the second-minor tile a matmul's streamed rows pad to"),
    INT("compute.vpu_lanes", 1, 1024, T(lanes), "lanes of the vector unit"),
    INT("compute.vpu_alus_per_lane", 1, 16, T(vpu_alus),
        "fp32 ALUs per (sublane, lane) pair"),
    POS("compute.clock_mhz", 1, T(clock_mhz), "TensorCore clock"),
    POS("compute.peak_bf16_tflops", 1, D(peak_tflops[XS_BF16]),
        "bf16 peak of the device's MXUs (the chip's quoted peak x its share)"),
    NOTE("compute.source", "where the compute figures come from"),
    NOTE_OPT("compute.note", "free text"),
    POS("memory.capacity_gb", 1, D(mem_capacity_gb), "HBM the device addresses, GiB"),
    POS("memory.bandwidth_gbs", 1, D(mem_bw_gbs), "HBM bandwidth of the device, 1e9 B/s"),
    NOTE("memory.source", "where the memory figures come from"),
    NOTE_OPT("memory.note", "free text"),
    INT("interconnect.ici_links", 1, 16, T(ici_links), "ICI ports per chip"),
    POS("interconnect.ici_gbs_per_link", 1, T(ici_gbs_per_link),
        "ICI bandwidth of one link, one direction, 1e9 B/s"),
    STR("interconnect.topology", 1, T_STR(topology), "2d-torus or 3d-torus"),
    STR("interconnect.pod_shape", 1, T_STR(pod_shape),
        "chips along each torus dimension of the largest slice (a pod), as '16x16' or "
        "'16x16x16': the slices data parallel may use, and which of their sides wrap"),
    STR("interconnect.slice_chips", 0, T_STR(slice_chips),
        "the slice sizes the provider offers, in chips, ascending powers of two from 4 joined "
        "by commas (\"4,16,64,128,256\"); absent: every power of two from 4 that fits the pod"),
    STR("interconnect.host_link", 1, D_STR(host_link), "the chip's link to its host"),
    POS("interconnect.host_gbs_bidir", 1, D(host_gbs_bidir),
        "host link, both directions, the device's share (infeed uses one direction)"),
    NOTE("interconnect.source", "where the interconnect figures come from"),
    NOTE_OPT("interconnect.note", "free text"),
    POWER_ROWS("the device's share of the chip's power under dense load",
               "the device's share of the chip's power at rest"),
    PRICE_ROWS("device-hour (the chip-hour price x the device's share)"),
    INT("model.fp32_matmul_passes", 1, 6, T(fp32_passes),
        "bf16 passes of an fp32 matmul: 1 (XLA DEFAULT), 3 (HIGH) or 6 (HIGHEST)"),
    FRAC("model.mxu_efficiency", T(mxu_efficiency),
         "share of MXU cycles the schedule issues beyond padding and fill"),
    FRAC("model.mxu_efficiency_low", T(mxu_efficiency_low), "slow end of mxu_efficiency"),
    FRAC("model.hbm_efficiency", T(hbm_efficiency),
         "share of HBM bandwidth a streaming fusion reaches"),
    FRAC("model.hbm_efficiency_low", T(hbm_efficiency_low), "slow end of hbm_efficiency"),
    FRAC("model.hbm_efficiency_high", T(hbm_efficiency_high), "fast end of hbm_efficiency"),
    NOTE("model.source", "where the model parameters come from"),
    NOTE_OPT("model.note", "free text"),
};

const xs_field *xs_tpu_fields(size_t *n)
{
    *n = sizeof TPU_FIELDS / sizeof TPU_FIELDS[0];
    return TPU_FIELDS;
}

/* "16x16" into t->pod for a 2d-torus, "16x20x28" for a 3d-torus; the
 * unused third dimension is 1. Returns 0 when the shape has as many
 * dimensions as the topology and each is a count in [1, 1024]. */
static int parse_pod(xs_tpu_params *t)
{
    int want = t->topology[0] == '2' ? 2 : 3;
    const char *c = t->pod_shape;
    t->pod[0] = t->pod[1] = t->pod[2] = 1;
    for (int n = 0; n < want; n++) {
        char *end;
        if (*c < '0' || *c > '9')
            return -1;
        long v = strtol(c, &end, 10);
        if (v < 1 || v > 1024 || *end != (n + 1 < want ? 'x' : '\0'))
            return -1;
        t->pod[n] = v;
        c = end + 1;
    }
    return 0;
}

/* "4,16,64" into t->slices; "" leaves none (every power of two). Returns 0
 * when each is a power of two from 4, ascending, within the pod. */
static int parse_slices(xs_tpu_params *t)
{
    const char *c = t->slice_chips;
    int64_t pod = t->pod[0] * t->pod[1] * t->pod[2], prev = 0;
    t->nslices = 0;
    while (*c) {
        char *end;
        if (*c < '0' || *c > '9' || t->nslices == 16)
            return -1;
        long long v = strtoll(c, &end, 10);
        if (v < 4 || (v & (v - 1)) != 0 || v <= prev || v > pod || (*end != ',' && *end))
            return -1;
        t->slices[t->nslices++] = prev = v;
        c = *end ? end + 1 : end;
        if (*end == ',' && !*c)
            return -1; /* a trailing comma */
    }
    return 0;
}

/* A quoted peak and the one the array, clock and unit counts give may
 * differ by rounding (v2: 45 quoted, 45.9 computed); beyond this one of the
 * fields is wrong. */
#define PEAK_TOLERANCE 0.03

int xs_tpu_check_fields(xs_device *d, const char *path, xs_error *err)
{
    xs_tpu_params *t = xs_tpu_of(d);
    static const char *const gens[] = {"v2", "v3", "v4", "v5e", "v5p"};
    int known = 0;
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
        known |= strcmp(t->generation, gens[i]) == 0;
    if (!known)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'compute.generation' must be one of v2, v3, v4, v5e, v5p, "
                            "got \"%s\"",
                            path, t->generation);
    if (t->cores_per_chip % t->cores_per_device != 0)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.tensorcores_per_device' must divide "
                            "compute.tensorcores_per_chip (%lld), got %lld",
                            path, (long long)t->cores_per_chip, (long long)t->cores_per_device);
    if (strcmp(t->topology, "2d-torus") != 0 && strcmp(t->topology, "3d-torus") != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'interconnect.topology' must be 2d-torus or 3d-torus, "
                            "got \"%s\"",
                            path, t->topology);
    if (parse_pod(t))
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'interconnect.pod_shape' must be %s chips a dimension "
                            "joined by 'x', each from 1 to 1024 (like \"%s\"), got \"%s\"",
                            path, t->topology[0] == '2' ? "two" : "three",
                            t->topology[0] == '2' ? "16x16" : "16x16x16", t->pod_shape);
    if (parse_slices(t))
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'interconnect.slice_chips' must be up to 16 chip counts "
                            "joined by commas, each a power of two from 4, ascending, at most "
                            "the pod's %lld chips (like \"4,16,64\"), got \"%s\"",
                            path, (long long)(t->pod[0] * t->pod[1] * t->pod[2]), t->slice_chips);
    if (t->fp32_passes != 1 && t->fp32_passes != 3 && t->fp32_passes != 6)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'model.fp32_matmul_passes' must be 1, 3 or 6 (XLA's "
                            "DEFAULT, HIGH, HIGHEST), got %lld",
                            path, (long long)t->fp32_passes);
    if (t->mxu_efficiency_low > t->mxu_efficiency)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'model.mxu_efficiency_low' must not exceed "
                            "model.mxu_efficiency (%g), got %g",
                            path, t->mxu_efficiency, t->mxu_efficiency_low);
    if (!(t->hbm_efficiency_low <= t->hbm_efficiency &&
          t->hbm_efficiency <= t->hbm_efficiency_high))
        return xs_error_set(err, XS_ERANGE,
                            "%s: fields 'model.hbm_efficiency_low' <= 'model.hbm_efficiency' <= "
                            "'model.hbm_efficiency_high' must hold, got %g, %g, %g",
                            path, t->hbm_efficiency_low, t->hbm_efficiency,
                            t->hbm_efficiency_high);
    double dim = (double)t->mxu_dim;
    double computed = (double)(t->cores_per_device * t->mxus_per_core) * 2 * dim * dim *
                      t->clock_mhz * 1e-6; /* TFLOP/s */
    double peak = d->peak_tflops[XS_BF16];
    if (fabs(computed - peak) > PEAK_TOLERANCE * peak)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'compute.peak_bf16_tflops' must agree within 3%% with "
                            "tensorcores_per_device x mxus_per_tensorcore x 2 x mxu_size^2 x "
                            "clock_mhz (%.1f TFLOP/s), got %g",
                            path, computed, peak);
    /* the vector unit, in fp32; no fp16 or tf32 path on the MXU */
    d->peak_tflops[XS_FP32] = (double)(t->cores_per_device * t->sublanes * t->lanes *
                                       t->vpu_alus) * t->clock_mhz * 1e-6;
    if (d->power_limit_min_w > 0 || d->power_limit_max_w > 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: fields 'power.limit_min_w'/'power.limit_max_w' are not "
                            "modelled for TPUs (no published power-limit range); remove them",
                            path);
    return XS_OK;
}
