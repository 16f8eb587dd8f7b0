/* comm.c — see comm.h.
 *
 * Latencies are NCCL's own tuner's (NVIDIA/nccl src/graph/tuning.cc,
 * Simple protocol, the one large buffers use; team code index find_string
 * id 15804745244): a base of 8.4 us per collective (baseLat, Ring and Tree
 * Simple) and per algorithm step 3.4 us over NVLink, 5.7 us over PCIe for a
 * ring (hwLat NVLINK/PCI Ring Simple), 4.0 us a hop for the tree inside a
 * node (Tree Simple) and 14 us a step across the network (NET, Ring and
 * Tree Simple). Its tree all-reduce moves data at 0.92 x 0.5 of the link's
 * bus bandwidth (the tuner's busBw*.92 and its bus-to-algorithm ratio .5),
 * a ring at n / 2(n-1) of it.
 *
 * The bandwidth a link achieves is a share of its datasheet figure (one
 * direction): LINK_EFF from nccl-tests all_reduce_perf at large sizes on
 * A100 SXM4 boards, whose NVLink carries 300 GB/s each way: ~200 GB/s busbw
 * on 8 GPUs through NVSwitch (NVIDIA/nccl-tests#149, an HPE Apollo 6500,
 * NCCL 2.18) and 208 GB/s on a pair joined by 12 links (NVIDIA/nccl-tests
 * #178): 0.67 and 0.69. No PCIe measurement of the same kind was found, so
 * PCIe takes the same share: a stated assumption. NET_EFF from 3 nodes of 8
 * A100 with 4 x 200 Gb/s HDR InfiniBand each: 84.8 GB/s average busbw of
 * the 100 GB/s the NICs carry (NVIDIA/nccl-tests#119).
 *
 * NVLink SHARP (NVLS) reduces inside a Hopper NVSwitch: each GPU's link
 * carries its data once each way instead of a ring's 2(n-1)/n, and the
 * same tuner prices it at 5/6 of the link's bus bandwidth (its "Convert
 * bus BW to algorithm BW" ratio for NCCL_ALGO_NVLS) after a latency of
 * 25 us (hwLat NVLINK, NVLS Simple; baseLat 0), within one node only
 * (NVLS across nodes needs CollNet). The link's achieved share is LINK_EFF
 * as for a ring: no NVLS measurement went into either figure. */
#include "comm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

#define LINK_EFF 0.68
#define NET_EFF 0.848
#define BASE_LAT_US 8.4
#define RING_LAT_US_NVLINK 3.4
#define RING_LAT_US_PCIE 5.7
#define TREE_LAT_US 4.0
#define NET_LAT_US 14.0
#define TREE_BW 0.46
#define NVLS_LAT_US 25.0
#define NVLS_BW (5.0 / 6.0)

/* NCCL runs one CUDA block a channel (its docs: NCCL_MIN_NCHANNELS /
 * NCCL_MAX_NCHANNELS, "the number of CUDA blocks NCCL uses"); how many
 * channels it opens depends on the topology. 16 over NVLink, 4 over PCIe:
 * a stated assumption, not a measurement. Its DRAM traffic: each byte a
 * ring step moves is written into the receiver's buffer, read there with
 * the local chunk and the sum written onwards, about 3 bytes of DRAM per
 * byte on the link (a stated count of the Simple protocol's passes). */
#define CHANNELS_NVLINK 16
#define CHANNELS_PCIE 4
#define DRAM_PER_LINK_BYTE 3.0

/* XLA's collectives over a TPU slice's ICI torus (xs_topo.ici).
 *
 * A dimension of d chips is a ring where it wraps around and a line where
 * it does not. Round a ring half the data goes each way, so both directions
 * of every link carry it; along a line the ring runs out and back, each
 * link carrying it one way at a time: a dimension moves data at two links'
 * one-way rate or at one (How to Scale Your Model, jax-ml/scaling-book@
 * 04d8de58b9f64e2d6cc1df469b8a36f506a0138d tpus.md, the ICI table's note:
 * the bidirectional rate holds 'when we have a wraparound connection on the
 * particular axis'; sharding.md, Pop Quiz 2: without one 'we actually can't
 * do a fully bidirectional AllGather'). A reduce-scatter over a ring of d
 * moves (d - 1)/d of what it is handed over each chip's links, and its
 * data travel d/2 hops round a ring, d - 1 along a line (the same source's
 * hop counts), ICI_HOP_US each ('typically around 1us', sharding.md, 'A
 * note on ICI latency'); the all-gather mirrors it, an all-reduce is both.
 *
 * Several dimensions work at once: the buffer is split into one equal
 * share a dimension, and share k is reduced over the dimensions in the
 * order k, k+1, ... (each handed what the dimensions before it left, 1/d
 * of it), so that every dimension's links carry data together (an
 * AllGather over several axes 'increases the available bandwidth by a
 * factor of n_axes', sharding.md). The dimension whose links carry the
 * most sets the time; a share's hops add up along its path. For D
 * dimensions of d chips, n = d^D, an all-reduce takes
 * 2 (n - 1)/n S / (D x the dimension's rate) + 2 D hops(d) x ICI_HOP_US.
 *
 * ICI_EFF: the share of a link's rate a collective reaches, from the one
 * published profile found: an AllGather of 33.6 MB (bf16[2048, 8192])
 * over a line of 4 TPU v5e chips took 680 us (sharding.md, Pop Quiz 2),
 * where 3/4 x 33.6 MB at v5e's 5e10 B/s a link one way (the book's ICI
 * table, devices/tpu-v5e.json) is 503 us and the 3 hops 3 us: 503 / 677 =
 * 0.74. The same profile's small case (32 kB shards: about 8 us measured)
 * comes out at 5.7 us: the latency side is low by about 2 us. */
#define ICI_EFF 0.74

/* the phases of coll: an all-reduce is a reduce-scatter and an all-gather */
static int phases(int coll)
{
    return coll == XS_COLL_ALLREDUCE ? 2 : 1;
}

/* One phase over the chips' torus: bytes is what each chip holds. */
static double torus_phase(const xs_topo *t, double bytes)
{
    int d[3], wrap[3], nd = 0;
    for (int i = 0; i < 3; i++)
        if (t->dims[i] > 1) {
            d[nd] = t->dims[i];
            wrap[nd++] = t->wrap[i];
        }
    if (nd == 0)
        return 0;
    double load[3] = {0, 0, 0}, hops = 0;
    for (int k = 0; k < nd; k++) { /* share k: dimensions k, k+1, ... */
        double left = bytes / nd;
        for (int j = 0; j < nd; j++) {
            int i = (k + j) % nd;
            load[i] += (double)(d[i] - 1) / d[i] * left;
            left /= d[i];
        }
    }
    double slowest = 0, link = t->intra_gbs * 1e9 * ICI_EFF;
    for (int i = 0; i < nd; i++) {
        slowest = fmax(slowest, load[i] / (link * (wrap[i] ? 2 : 1)));
        hops += wrap[i] ? d[i] / 2 : d[i] - 1;
    }
    return slowest + hops * t->hop_us * 1e-6;
}

/* v2/v3: the two TensorCores of a chip (two devices) first split the
 * buffer between them, each sending the other half of it; the chips'
 * torus then reduces each core's half, both halves over the chip's links
 * (the chip carries the whole buffer); the gather mirrors it. The path
 * between a chip's cores is taken at one link's one-way rate and one hop:
 * a stated assumption, no figure for it is published. */
static double torus(const xs_topo *t, int coll, double bytes)
{
    double pair = 0;
    if (t->per_chip > 1) {
        double p = t->per_chip;
        pair = (p - 1) / p * bytes / (t->intra_gbs * 1e9 * ICI_EFF) + (p - 1) * t->hop_us * 1e-6;
    }
    return phases(coll) * (pair + torus_phase(t, bytes));
}

void xs_comm_combine(const xs_topo *t, const xs_workload *wl, xs_estimate *est)
{
    size_t wait_at = wl->n;
    for (size_t i = 0; i < wl->n && wait_at == wl->n; i++)
        if (wl->ops[i].comm_wait)
            wait_at = i;
    double total[XS_COLL_COUNT] = {0};
    for (size_t i = 0; i < wait_at; i++)
        if (wl->ops[i].kind == XS_OP_COMM && wl->ops[i].coll >= 0 &&
            wl->ops[i].coll < XS_COLL_COUNT)
            total[wl->ops[i].coll] += wl->ops[i].bytes;
    for (size_t i = 0; i < wait_at; i++) {
        const xs_op *op = &wl->ops[i];
        if (op->kind != XS_OP_COMM || op->coll < 0 || op->coll >= XS_COLL_COUNT ||
            !(total[op->coll] > 0))
            continue;
        est[i].time_s = xs_comm_best(t, op->coll, total[op->coll], NULL) * op->bytes /
                        total[op->coll];
    }
}

static double ring_steps_lat(int steps, int inter_steps, double intra_us)
{
    return (BASE_LAT_US + (steps - inter_steps) * intra_us + inter_steps * NET_LAT_US) * 1e-6;
}

static double intra_us(const xs_topo *t)
{
    return t->link == XS_LINK_NVLINK ? RING_LAT_US_NVLINK : RING_LAT_US_PCIE;
}

/* the bandwidth a flat ring reaches: its slowest hop, a GPU's link or, when
 * it leaves the node, the node's network (every ring that crosses it
 * shares the node's NICs, and each GPU sends its whole share across once) */
static double ring_bw(const xs_topo *t)
{
    double b = t->intra_gbs * LINK_EFF;
    if (t->nodes > 1)
        b = fmin(b, t->net_gbs * NET_EFF);
    return b * 1e9;
}

/* one ring over m members, each link at bw (B/s), per-step latency lat_us,
 * inter of its steps across the network */
static double ring(int coll, int m, double bytes, double bw, double lat_us, int inter_nodes)
{
    if (m <= 1)
        return 0;
    int ar = coll == XS_COLL_ALLREDUCE;
    int steps = ar ? 2 * (m - 1) : m - 1;
    int inter = inter_nodes > 1 ? (ar ? 2 * (inter_nodes - 1) : inter_nodes - 1) : 0;
    double factor = (ar ? 2.0 : 1.0) * (m - 1) / m;
    return ring_steps_lat(steps, inter, lat_us) + bytes * factor / bw;
}

static int log2i(int x)
{
    int l = 0;
    while (x > 1) {
        x >>= 1;
        l++;
    }
    return l;
}

double xs_comm_time(const xs_topo *t, int coll, int algo, double bytes)
{
    if (t->n <= 1)
        return 0;
    if (t->ici)
        return algo == XS_ALGO_TORUS ? torus(t, coll, bytes) : INFINITY;
    switch (algo) {
    case XS_ALGO_RING:
        return ring(coll, t->n, bytes, ring_bw(t), intra_us(t), t->nodes);
    case XS_ALGO_TREE:
        if (coll != XS_COLL_ALLREDUCE)
            return INFINITY;
        return (BASE_LAT_US + 2 * ((t->per_node - 1) * TREE_LAT_US + log2i(t->nodes) * NET_LAT_US)) *
                   1e-6 +
               bytes / (TREE_BW * ring_bw(t));
    case XS_ALGO_NVLS:
        if (coll != XS_COLL_ALLREDUCE || !t->nvls)
            return INFINITY;
        return NVLS_LAT_US * 1e-6 + bytes / (NVLS_BW * t->intra_gbs * LINK_EFF * 1e9);
    case XS_ALGO_HIER: {
        if (coll != XS_COLL_ALLREDUCE || t->nodes <= 1 || t->per_node <= 1)
            return INFINITY;
        /* each GPU's shard (1/per_node of the buffer) crosses the network in
         * a ring of the nodes, the per_node rings sharing the node's NICs */
        double g = t->per_node, in_bw = t->intra_gbs * LINK_EFF * 1e9;
        double net_bw = t->net_gbs * NET_EFF * 1e9 / g;
        return ring(XS_COLL_REDUCE_SCATTER, t->per_node, bytes, in_bw, intra_us(t), 0) +
               ring(XS_COLL_ALLREDUCE, t->nodes, bytes / g, net_bw, NET_LAT_US, 0) +
               ring(XS_COLL_ALLGATHER, t->per_node, bytes, in_bw, intra_us(t), 0);
    }
    default:
        return INFINITY;
    }
}

double xs_comm_best(const xs_topo *t, int coll, double bytes, int *algo)
{
    double best = INFINITY;
    int pick = XS_ALGO_RING;
    for (int a = 0; a < XS_ALGO_COUNT; a++) {
        double s = xs_comm_time(t, coll, a, bytes);
        if (s < best) {
            best = s;
            pick = a;
        }
    }
    if (algo)
        *algo = pick;
    return best;
}

double xs_comm_busbw(int coll, int n, double bytes, double seconds)
{
    if (!(seconds > 0) || n <= 1)
        return 0;
    double factor = (coll == XS_COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n;
    return bytes / seconds * factor / 1e9;
}

double xs_comm_contention(const xs_topo *t, double busbw_gbs)
{
    double ch = t->link == XS_LINK_NVLINK ? CHANNELS_NVLINK : CHANNELS_PCIE;
    double sm = t->sm_count > 0 ? fmin(ch / (double)t->sm_count, 0.5) : 0;
    double mem = t->mem_bw_gbs > 0 ? fmin(DRAM_PER_LINK_BYTE * busbw_gbs / t->mem_bw_gbs, 0.5)
                                   : 0;
    return fmax(sm, mem);
}

int xs_topo_of(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err)
{
    memset(t, 0, sizeof *t);
    int64_t n = s->devices;
    t->n = (int)n;
    t->per_node = (int)n;
    t->nodes = 1;
    if (n <= 1)
        return XS_OK;
    const xs_backend *b = xs_backend_of(dev);
    if (!b->topology)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "scenario %s on device %s: cluster.devices %lld needs GPUs or TPUs: "
                            "the collectives modelled are NCCL's and XLA's over a TPU slice",
                            s->id, dev->id, (long long)n);
    return b->topology(dev, s, t, err);
}

const char *xs_algo_name(int algo)
{
    static const char *names[] = {"ring", "tree", "hierarchical", "nvls", "torus"};
    return algo >= 0 && algo < XS_ALGO_COUNT ? names[algo] : "?";
}

const char *xs_link_name(int link)
{
    static const char *names[] = {"nvlink", "pcie"};
    return link >= 0 && link < XS_LINK_COUNT ? names[link] : "?";
}
