/* report_cluster.c — the data-parallel answer, shown when a job runs on
 * several devices: the topology, the collectives and how much of them the
 * backward hides, per-device and job throughput against one device, and
 * the memory one device holds against a single-device run. */
#include "report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "fsdp.h"
#include "memory.h"

static const char *sharding_words(int sharding)
{
    switch (sharding) {
    case XS_SHARD_ZERO1: return "zero1 (optimizer state and master weights split)";
    case XS_SHARD_ZERO2: return "zero2 (gradients, optimizer state and master weights split)";
    case XS_SHARD_FSDP:
        return "fsdp (FULL_SHARD: parameters, gradients and optimizer state split)";
    case XS_SHARD_FSDP_GRAD_OP:
        return "fsdp_grad_op (SHARD_GRAD_OP: parameters, gradients and optimizer state split; "
               "parameters kept gathered from the forward through the backward)";
    default: return "none (DDP: every device keeps all state)";
    }
}

/* The format FSDP gathers parameters in, for the report. */
static const char *gather_format(const xs_scenario *s)
{
    xs_fsdp_formats f;
    xs_fsdp_formats_of(s, &f);
    if (f.gather == 4)
        return "fp32";
    int bf16 = s->train.precision == XS_P_BF16 || s->train.precision == XS_P_AMP_BF16;
    return bf16 ? "bf16" : "fp16";
}

/* The bytes of the gradients' collectives before the backward's end: the
 * one collective a combined topology runs (xs_comm_combine). */
static double combined_bytes(const xs_workload *wl)
{
    double total = 0;
    for (size_t i = 0; i < wl->n && !wl->ops[i].comm_wait; i++)
        if (wl->ops[i].kind == XS_OP_COMM)
            total += wl->ops[i].bytes;
    return total;
}

/* "2x2x4", and which sides close into rings */
static void torus_words(const xs_topo *t, char *buf, size_t cap)
{
    int nd = t->ndims, all = 1, any = 0;
    size_t len = 0;
    for (int i = 0; i < nd; i++) {
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%d", i ? "x" : "",
                                t->dims[i]);
        all &= t->wrap[i];
        any |= t->wrap[i];
    }
    if (all || !any) {
        snprintf(buf + len, len < cap ? cap - len : 0, all ? ", every side wraps around"
                                                           : ", no wraparound: each side a line");
        return;
    }
    for (int i = 0; i < nd; i++)
        if (t->wrap[i]) {
            snprintf(buf + len, len < cap ? cap - len : 0, ", the side of %d wraps around",
                     t->dims[i]);
            return;
        }
}

/* The TPU slice: XLA's one cross-replica sum over the ICI torus. */
static void slice_line(xs_strbuf *sb, const xs_workload *wl, const xs_topo *t)
{
    char torus[96];
    torus_words(t, torus, sizeof torus);
    int chips = t->n / (t->per_chip > 0 ? t->per_chip : 1);
    xs_sb_printf(sb, "cluster   %d devices = %s slice, %d chips", t->n, t->slice, chips);
    if (t->per_chip > 1)
        xs_sb_printf(sb, " of %d TensorCores (their devices share the chip's links)",
                     t->per_chip);
    xs_sb_printf(sb,
                 ", ICI torus %s, %.0f GB/s each way a link, %.0f us a hop; replicated "
                 "(every device keeps all state); XLA sums all %.1f MB of gradients in one "
                 "all-reduce after the backward (bidirectional rings per torus dimension)\n",
                 torus, t->intra_gbs, t->hop_us, combined_bytes(wl) / 1e6);
}

void xs_report_cluster_lines(xs_strbuf *sb, const xs_scenario *s, const xs_workload *wl,
                             const xs_prediction *p)
{
    const xs_topo *t = &p->topo;
    if (t->ici) {
        slice_line(sb, wl, t);
    } else {
        int fsdp = xs_fsdp_on(s);
        xs_sb_printf(sb, "cluster   %d devices = %d node%s x %d, %s %.0f GB/s each way a GPU",
                     t->n, t->nodes, t->nodes > 1 ? "s" : "", t->per_node,
                     xs_link_name(t->link), t->intra_gbs);
        if (t->nodes > 1)
            xs_sb_printf(sb, ", network %.0f GB/s each way a node", t->net_gbs);
        if (fsdp)
            xs_sb_printf(sb, "; sharding %s; %lld units (%lld layers, largest %.1f MB gathered, "
                             "+ root %.1f MB), gathered in %s, backward prefetch BACKWARD_PRE, "
                             "%s for the largest\n",
                         sharding_words(s->sharding), (long long)wl->fsdp_units,
                         (long long)wl->fsdp_units - 1, wl->fsdp_unit_bytes / 1e6,
                         wl->fsdp_root_bytes / 1e6, gather_format(s),
                         xs_algo_name(p->comm_algo));
        else
        xs_sb_printf(sb, "; sharding %s; %s DDP, %lld buckets (first %.1f MB, largest %.1f MB), "
                         "%s for the largest\n",
                     sharding_words(s->sharding), s->ddp == XS_DDP_APEX ? "apex" : "torch",
                     (long long)wl->buckets, wl->first_bucket_bytes / 1e6,
                     wl->largest_bucket_bytes / 1e6, xs_algo_name(p->comm_algo));
    }
    double exposed = p->exposed_tail_s + p->serial_s;
    if (xs_fsdp_on(s))
        xs_sb_printf(sb,
                     "comm      %.2f ms of collectives a step on NCCL's stream; exposed %.2f ms "
                     "(%.2f the compute waiting for all-gathers + %.2f the optimizer waiting "
                     "for reduce-scatters), compute slowed %.2f ms by sharing the GPU\n",
                     p->comm_s * 1e3, exposed * 1e3, p->serial_s * 1e3,
                     p->exposed_tail_s * 1e3, p->contention_s * 1e3);
    else
        xs_sb_printf(sb,
                     "comm      %.2f ms of collectives a step %s; exposed %.2f ms "
                     "(%.2f after the backward's last kernel + %.2f not overlapped), compute "
                     "slowed %.2f ms by sharing the %s\n",
                     p->comm_s * 1e3, t->ici ? "over ICI" : "on NCCL's stream", exposed * 1e3,
                     p->exposed_tail_s * 1e3, p->serial_s * 1e3, p->contention_s * 1e3,
                     t->ici ? "chip" : "GPU");
    xs_sb_printf(sb,
                 "scaling   %.1f samples/s a device, %.1f the job; one device alone: %.1f "
                 "samples/s, so %.1f%% scaling efficiency; memory a device %.2f GB (one device "
                 "alone: %.2f GB)\n",
                 p->samples_per_s / (double)t->n, p->samples_per_s, p->single_samples_per_s,
                 100 * p->scaling_efficiency, p->mem.total / XS_GIB,
                 p->single_mem_total / XS_GIB);
}

cJSON *xs_report_cluster_json(const xs_scenario *s, const xs_workload *wl,
                              const xs_prediction *p)
{
    const xs_topo *t = &p->topo;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "devices", t->n);
    cJSON_AddNumberToObject(o, "per_node", t->per_node);
    cJSON_AddNumberToObject(o, "nodes", t->nodes);
    cJSON_AddStringToObject(o, "interconnect", t->ici ? "ici" : xs_link_name(t->link));
    cJSON_AddNumberToObject(o, "link_gbs_each_way", t->intra_gbs);
    cJSON_AddNumberToObject(o, "network_gbs_each_way", t->net_gbs);
    if (t->ici) { /* the TPU slice and its torus */
        cJSON_AddStringToObject(o, "slice", t->slice);
        cJSON_AddNumberToObject(o, "chips", t->n / (t->per_chip > 0 ? t->per_chip : 1));
        cJSON_AddNumberToObject(o, "devices_per_chip", t->per_chip);
        int nd = t->ndims;
        cJSON *dims = cJSON_AddArrayToObject(o, "torus");
        cJSON *wrap = cJSON_AddArrayToObject(o, "wraparound");
        for (int i = 0; i < nd; i++) {
            cJSON_AddItemToArray(dims, cJSON_CreateNumber(t->dims[i]));
            cJSON_AddItemToArray(wrap, cJSON_CreateBool(t->wrap[i]));
        }
        cJSON_AddNumberToObject(o, "hop_us", t->hop_us);
    }
    cJSON_AddStringToObject(o, "sharding", xs_sharding_name(s->sharding));
    /* combined: XLA's one all-reduce stands for the workload's buckets */
    double all = t->combined ? combined_bytes(wl) : 0;
    cJSON_AddStringToObject(o, "ddp", t->ici ? "xla" : s->ddp == XS_DDP_APEX ? "apex" : "torch");
    cJSON_AddNumberToObject(o, "buckets", t->combined ? 1 : (double)wl->buckets);
    cJSON_AddNumberToObject(o, "first_bucket_bytes", t->combined ? all : wl->first_bucket_bytes);
    cJSON_AddNumberToObject(o, "largest_bucket_bytes",
                            t->combined ? all : wl->largest_bucket_bytes);
    cJSON_AddStringToObject(o, "algorithm_largest_bucket", xs_algo_name(p->comm_algo));
    cJSON_AddNumberToObject(o, "comm_s", p->comm_s);
    cJSON_AddNumberToObject(o, "exposed_s", p->exposed_tail_s + p->serial_s);
    cJSON_AddNumberToObject(o, "exposed_tail_s", p->exposed_tail_s);
    cJSON_AddNumberToObject(o, "not_overlapped_s", p->serial_s);
    cJSON_AddNumberToObject(o, "contention_s", p->contention_s);
    if (xs_fsdp_on(s)) { /* exposed_tail_s: the optimizer's wait; not_overlapped_s: the gathers' */
        cJSON *f = cJSON_AddObjectToObject(o, "fsdp");
        cJSON_AddNumberToObject(f, "units", (double)wl->fsdp_units);
        cJSON_AddNumberToObject(f, "largest_layer_unit_bytes", wl->fsdp_unit_bytes);
        cJSON_AddNumberToObject(f, "root_unit_bytes", wl->fsdp_root_bytes);
        cJSON_AddStringToObject(f, "gather_format", gather_format(s));
        cJSON_AddStringToObject(f, "backward_prefetch", "BACKWARD_PRE");
    }
    cJSON_AddNumberToObject(o, "samples_per_s_per_device", p->samples_per_s / (double)t->n);
    cJSON_AddNumberToObject(o, "samples_per_s_job", p->samples_per_s);
    cJSON_AddNumberToObject(o, "samples_per_s_one_device", p->single_samples_per_s);
    cJSON_AddNumberToObject(o, "scaling_efficiency", p->scaling_efficiency);
    cJSON_AddNumberToObject(o, "memory_gb_per_device", p->mem.total / XS_GIB);
    cJSON_AddNumberToObject(o, "memory_gb_one_device", p->single_mem_total / XS_GIB);
    return o;
}

/* The GPUs of the instance a device's price is a share of, read from its
 * price.provider as the device files write it ("8x H100 SXM instance, per
 * GPU", "p5e.48xlarge ... (8 GPUs, per GPU)"); 1 when the price is for one
 * GPU or the text names no shape. */
int xs_instance_gpus(const xs_device *dev)
{
    const char *p = dev->price_provider;
    if (!strstr(p, "per GPU"))
        return 1;
    for (const char *c = p; *c; c++) {
        /* a count that starts a word ("8x ", "(8 GPUs"), not an
         * instance type's size ("p5e.48xlarge") */
        if (!isdigit((unsigned char)*c) || (c > p && (isalnum((unsigned char)c[-1]) || c[-1] == '.')))
            continue;
        char *end;
        long n = strtol(c, &end, 10);
        if (n > 1 && n <= 64 && (strncmp(end, "x ", 2) == 0 || strncmp(end, " GPUs", 5) == 0))
            return (int)n;
    }
    return 1;
}

void xs_report_instance_lines(xs_strbuf *sb, const xs_scenario *s, const xs_compare_row *rows,
                              size_t n)
{
    int header = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_device *d = rows[i].dev;
        int g = xs_instance_gpus(d);
        if (!rows[i].p || !rows[i].p->mem.fits || g <= 1) /* unpriced, or a single-GPU price */
            continue;
        int64_t inst = (s->devices + g - 1) / g;
        if (!header++)
            xs_sb_printf(sb, "\ninstance shapes ('run $' is the job's: devices x the per-GPU "
                             "price; these prices are shares of multi-GPU instances):\n");
        xs_sb_printf(sb, "  %-16s %lld device%s on %lld %d-GPU instance%s", d->id,
                     (long long)s->devices, s->devices > 1 ? "s" : "", (long long)inst, g,
                     inst > 1 ? "s" : "");
        if (s->devices % g)
            xs_sb_printf(sb, ": billed for %lld GPUs, $%.2f the run unless the provider rents "
                             "fewer\n",
                         (long long)(inst * g),
                         rows[i].p->run_cost_usd * (double)(inst * g) / (double)s->devices);
        else
            xs_sb_printf(sb, ": whole instances\n");
    }
    /* a TPU device is a chip or, on v2/v3, half of one: the job is a
     * slice billed by the chip-hour */
    header = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_prediction *p = rows[i].p;
        if (!p || !p->mem.fits || !p->topo.ici)
            continue;
        const xs_topo *t = &p->topo;
        int per = t->per_chip > 0 ? t->per_chip : 1;
        if (!header++)
            xs_sb_printf(sb, "\nTPU slices ('run $' is the job's: chips x the chip-hour "
                             "price):\n");
        xs_sb_printf(sb, "  %-16s %lld devices = %s slice, %d chips x $%.3f a chip-hour = "
                         "$%.2f/h\n",
                     rows[i].dev->id, (long long)s->devices, t->slice, t->n / per,
                     rows[i].dev->price_usd_per_hour * per,
                     rows[i].dev->price_usd_per_hour * (double)t->n);
    }
}
