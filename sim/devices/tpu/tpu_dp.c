/* tpu_dp.c — data parallel on a TPU slice: which slice a scenario's
 * cluster.devices is, how its ICI torus is shaped and where it wraps
 * around, and what XLA does with the gradients (the collectives' times
 * are comm.c's, its torus algorithm).
 *
 * What XLA runs: torch_xla's xm.optimizer_step calls reduce_gradients,
 * which all-reduces the list of every gradient in one xm.all_reduce with
 * scale 1/world size (pytorch/xla@fa72136a9e880b1ff10a1eda39897d81f6e9d8ed
 * torch_xla/core/xla_model.py; its bucketed variant only where the
 * ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB environment variable is set, default
 * 0), in place, with no bucket copies; JAX's pmap/pjit data parallel sums
 * the gradients the same way in the compiled step. The all-reduce's inputs
 * are the last gradients of the backward, so it runs after it. XLA on TPU
 * can overlap collectives with compute, but for all-reduce that is
 * opt-in: MaxText's flag library (AI-Hypercomputer/maxtext@05d3525e834959775
 * d417fd65c3d7aadd213a3f7 benchmarks/xla_flags_library.py) lists the
 * continuation-fusion flags for all-gather as 'enabled by default' and
 * those for all-reduce (--xla_enable_async_all_reduce,
 * --xla_tpu_enable_async_collective_fusion_fuse_all_reduce) as flags to
 * add, and its DATA_PARALLEL_OVERLAP flags are for DCN all-reduces between
 * slices. So the model is the default: one cross-replica sum of every
 * gradient after the backward, nothing overlapped (xs_topo.combined).
 *
 * Slices (Cloud TPU's accelerator types): those the device file lists
 * (interconnect.slice_chips: v2 has no 8- or 32-chip slice, v3 no 8-chip
 * one), else every power of two from 4 chips (v4-8, v5p-8) that fits the
 * pod (interconnect.pod_shape); the shape grows by doubling its shortest
 * side:
 * cloud.google.com/tpu/docs/v5e lists 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16
 * (and 1x1), cloud.google.com/tpu/docs/v5p 2x2x1, 2x2x2, 2x4x4, 4x4x4,
 * 4x4x8, 4x8x8, 8x8x8, 8x8x16, 8x16x16, 16x16x16 ('most (but not all)'
 * shapes; 2x2x4 is the rule's 16 chips), both read 2026-11-28. Shapes off
 * the rule (v5p's largest single slice, 16x16x24 = 6144 chips; v4's
 * 8x8x12) are not modelled. Where a slice wraps around (How to Scale
 * Your Model, jax-ml/scaling-book@04d8de58b9f64e2d6cc1df469b8a36f506a0138d
 * tpus.md, 'TPU Networking'): v4 and v5p close every dimension into a
 * ring through their optical switches when the slice is whole 4x4x4 cubes
 * ('A 4x4x4 or 4x4x8 will still have wraparounds along all axes'; 'a
 * 2x2x4 won't have any'); v5e wraps a dimension that spans the pod's 16
 * ('A TPU v5e 8x16 will have a wraparound on the longer axis'), and v2
 * and v3, the same kind of fixed 2D torus without optical switches, are
 * taken to do the same along their pod's side (no statement found). */
#include "tpu.h"

#include <stdio.h>
#include <string.h>

/* 'typically around 1us' a hop (the scaling book, sharding.md, 'A note on
 * ICI latency'); no per-generation figure is published */
#define ICI_HOP_US 1.0
/* the smallest multi-chip slice of every generation: 4 chips */
#define SLICE_MIN_CHIPS 4

static const char *const IC_NAMES[] = {"auto", "nvlink", "pcie"};

static int is_pow2(int64_t x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* The keys of cluster that belong to NCCL's GPUs and would change what a
 * TPU slice does, refused by name. */
static int gpu_keys(const xs_device *dev, const xs_scenario *s, xs_error *err)
{
    if (s->sharding != XS_SHARD_NONE)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "scenario %s on device %s: cluster.sharding %s is not modelled on "
                            "TPUs (XLA's data parallel here keeps every weight, gradient and "
                            "optimizer state on every device); use none",
                            s->id, dev->id, xs_sharding_name(s->sharding));
    /* cluster.ddp is left alone: it names the PyTorch wrapper a recipe
     * uses on GPUs (bert-*-squad: NVIDIA's apex), which XLA's sum of the
     * gradients replaces on a TPU whichever it is */
    if (s->interconnect != XS_IC_AUTO)
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s on device %s: cluster.interconnect %s: TPU chips join "
                            "over their ICI torus (the device file's interconnect); remove the "
                            "key",
                            s->id, dev->id, IC_NAMES[s->interconnect]);
    if (s->per_node > 0)
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s on device %s: cluster.per_node %lld: a TPU slice's "
                            "chips join over ICI whatever host they sit in; remove the key",
                            s->id, dev->id, (long long)s->per_node);
    if (s->network_gbs > 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "scenario %s on device %s: cluster.network_gbs: several TPU slices "
                            "over the data-center network (multislice) are not modelled; "
                            "remove the key and use one slice",
                            s->id, dev->id);
    return XS_OK;
}

/* The slice of `chips` chips: its sides, grown from 1x1(x1) by doubling
 * the shortest (the first of equals), shortest first; 0 when it fits the
 * pod. */
static int slice_shape(const xs_tpu_params *tp, int64_t chips, int nd, int dims[3])
{
    dims[0] = dims[1] = dims[2] = 1;
    for (int64_t c = 1; c < chips; c *= 2) {
        int s = 0;
        for (int i = 1; i < nd; i++)
            if (dims[i] < dims[s])
                s = i;
        dims[s] *= 2;
    }
    /* sorted ascending, the sides must fit the pod's sorted ascending */
    int64_t a[3] = {dims[0], dims[1], dims[2]}, b[3] = {tp->pod[0], tp->pod[1], tp->pod[2]};
    for (int i = 0; i < nd; i++)
        for (int j = i + 1; j < nd; j++) {
            if (a[j] < a[i]) {
                int64_t x = a[i];
                a[i] = a[j];
                a[j] = x;
            }
            if (b[j] < b[i]) {
                int64_t x = b[i];
                b[i] = b[j];
                b[j] = x;
            }
        }
    for (int i = 0; i < nd; i++)
        if (a[i] > b[i])
            return -1;
    /* as Cloud TPU writes it: 2x2x4, 4x8, an unused side last (2x2x1) */
    int k = 0;
    for (int i = 0; i < nd; i++)
        if (a[i] > 1)
            dims[k++] = (int)a[i];
    while (k < 3)
        dims[k++] = 1;
    return 0;
}

/* Whether a slice of `chips` is offered: one of the file's slice sizes,
 * or, where it lists none, a power of two from 4 whose shape fits the pod. */
static int offered(const xs_tpu_params *tp, int nd, int64_t chips)
{
    int dims[3];
    if (tp->nslices > 0) {
        for (int i = 0; i < tp->nslices; i++)
            if (tp->slices[i] == chips)
                return slice_shape(tp, chips, nd, dims) == 0;
        return 0;
    }
    return is_pow2(chips) && chips >= SLICE_MIN_CHIPS && slice_shape(tp, chips, nd, dims) == 0;
}

/* "8, 32, 64 ... devices (v3-8, v3-32 ...)": the offered slices as
 * cluster.devices values */
static void offered_words(const xs_tpu_params *tp, int nd, int64_t per_chip, char *buf,
                          size_t cap)
{
    size_t len = 0;
    int k = 0;
    int64_t last = 0;
    for (int64_t c = SLICE_MIN_CHIPS; c <= 1 << 20; c *= 2) {
        if (!offered(tp, nd, c))
            continue;
        if (k++ < 6)
            len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%lld",
                                    k > 1 ? ", " : "", (long long)(c * per_chip));
        last = c;
    }
    if (k > 6)
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, " ... %lld",
                                (long long)(last * per_chip));
    snprintf(buf + len, len < cap ? cap - len : 0, " devices (%lld a chip; pod %s)",
             (long long)per_chip, tp->pod_shape);
}

int xs_tpu_topology(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err)
{
    const xs_tpu_params *tp = xs_tpu_of(dev);
    int rc = gpu_keys(dev, s, err);
    if (rc)
        return rc;
    int64_t per_chip = tp->cores_per_chip / tp->cores_per_device, n = s->devices;
    int nd = tp->topology[0] == '2' ? 2 : 3;
    if (n % per_chip != 0)
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s on device %s: cluster.devices %lld: a TPU %s chip "
                            "holds %lld devices (its TensorCores); use a multiple of %lld",
                            s->id, dev->id, (long long)n, tp->generation, (long long)per_chip,
                            (long long)per_chip);
    int64_t chips = n / per_chip;
    if (!offered(tp, nd, chips)) {
        char list[160];
        offered_words(tp, nd, per_chip, list, sizeof list);
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s on device %s: cluster.devices %lld is %lld chip%s, no TPU "
                            "%s slice: use %s",
                            s->id, dev->id, (long long)n, (long long)chips, chips == 1 ? "" : "s",
                            tp->generation, list);
    }
    t->ici = 1;
    t->ndims = nd;
    t->combined = 1;
    t->per_chip = (int)per_chip;
    t->per_node = (int)n; /* one slice: ICI spans its hosts */
    t->nodes = 1;
    t->intra_gbs = tp->ici_gbs_per_link;
    t->hop_us = ICI_HOP_US;
    slice_shape(tp, chips, nd, t->dims);
    /* Cloud TPU names a slice by its TensorCores, v5e's by its chips */
    if (strcmp(tp->generation, "v5e") == 0)
        snprintf(t->slice, sizeof t->slice, "v5litepod-%lld", (long long)chips);
    else
        snprintf(t->slice, sizeof t->slice, "%.*s-%lld", (int)sizeof tp->generation,
                 tp->generation, (long long)(chips * tp->cores_per_chip));
    int cubes = nd == 3;
    for (int i = 0; i < nd; i++)
        cubes &= t->dims[i] % 4 == 0;
    for (int i = 0; i < nd; i++)
        t->wrap[i] = nd == 3 ? cubes : t->dims[i] == tp->pod[0] || t->dims[i] == tp->pod[1];
    return XS_OK;
}
