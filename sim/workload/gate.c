/* gate.c — see gate.h. */
#include "gate.h"

#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "family.h"
#include "fp8.h"
#include "fsdp.h"
#include "lora.h"

/* A data-parallel job's nodes must be whole where the scenario gives
 * them. How devices join (GPUs in nodes of up to 8 over a network, a TPU
 * slice over its torus) is the device class's: xs_topo_of checks the rest
 * against the device. */
static int check_cluster(const xs_scenario *s, const char *path, xs_error *err)
{
    int64_t n = s->devices, g = s->per_node;
    if (g > 0 && n % g != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: cluster.devices (%lld) must be a multiple of cluster.per_node "
                            "(%lld): nodes are whole",
                            path, (long long)n, (long long)g);
    /* 10 MB/s a node is slower than any cluster network (1 Gbit Ethernet is
     * 0.125 GB/s): below it a figure is a unit slip, and it would make a
     * step of 1e299 s out of 1e-300 */
    if (s->network_gbs > 0 && s->network_gbs < XS_NETWORK_GBS_MIN)
        return xs_error_set(err, XS_ERANGE,
                            "%s: cluster.network_gbs %g is below %g GB/s (10 MB/s), slower than "
                            "any cluster network: give one node's bandwidth each way in GB/s "
                            "(8 x 200 Gb/s HDR InfiniBand = 200), or 0 for one node",
                            path, s->network_gbs, XS_NETWORK_GBS_MIN);
    if (s->sharding != XS_SHARD_NONE && n == 1)
        return xs_error_set(err, XS_EFIELD,
                            "%s: cluster.sharding %s splits state over devices: needs "
                            "cluster.devices > 1",
                            path, xs_sharding_name(s->sharding));
    return xs_fsdp_check(s, path, err);
}

/* Relations between fields; then the sizes (bounds.h). */
static int check_relations(const xs_scenario *s, const char *path, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->hidden % m->heads != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: model.hidden (%lld) must be divisible by model.heads (%lld)",
                            path, (long long)m->hidden, (long long)m->heads);
    const xs_train *t = &s->train;
    int rc = xs_family_of(m->family)->check(s, path, err);
    if (rc)
        return rc;
    int impl = t->optimizer_impl, fused_impl = impl == XS_OPT_IMPL_MULTI_TENSOR ||
                                               impl == XS_OPT_IMPL_PER_TENSOR;
    char word[32];
    xs_choice_word(XS_OPT_IMPL_CHOICES, impl, word, sizeof word);
    if (impl != XS_OPT_IMPL_AUTO && fused_impl != (t->fused_optimizer != 0))
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.optimizer_impl '%s' needs train.fused_optimizer %s, "
                            "got %s",
                            path, word, fused_impl ? "true" : "false",
                            t->fused_optimizer ? "true" : "false");
    if (impl == XS_OPT_IMPL_FOREACH && t->optimizer != XS_OPT_ADAM &&
        t->optimizer != XS_OPT_ADAMW)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.optimizer_impl 'foreach' is modelled for train.optimizer "
                            "adam and adamw, got %s",
                            path, xs_optimizer_name(t->optimizer));
    if (impl != XS_OPT_IMPL_AUTO && impl != XS_OPT_IMPL_FOR_LOOP &&
        t->optimizer == XS_OPT_BERTADAM)
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.optimizer_impl '%s': bertadam is a Python loop of "
                            "tensor ops (for_loop or auto), it has no fused or foreach form",
                            path, word);
    rc = xs_lora_check(s, xs_family_lora(xs_family_of(m->family), s), path, err);
    if (!rc)
        rc = xs_fp8_check(s, path, err);
    if (!rc)
        rc = xs_scn_bounds_check(s, path, err);
    return rc ? rc : check_cluster(s, path, err);
}

/* What the builders make of a head: a span head reads an encoder's
 * tokens. */
static int check_head(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    if (m->arch == XS_DECODER && m->head == XS_HEAD_SPAN)
        return xs_error_set(err, XS_EUNSUPPORTED, "%s: model.head 'span' needs model.arch 'encoder'",
                            where);
    return XS_OK;
}

int xs_wl_gate(const xs_scenario *s, xs_error *err)
{
    char where[sizeof s->source + 16];
    if (s->source[0])
        snprintf(where, sizeof where, "%s", s->source);
    else
        snprintf(where, sizeof where, "scenario %s", s->id);
    int rc = xs_scn_counts_check(s, where, err); /* the relations divide by them */
    if (!rc)
        rc = check_relations(s, where, err);
    return rc ? rc : check_head(s, where, err);
}
