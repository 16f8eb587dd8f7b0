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

/* NCCL reduces in the switch (NVLS) on an NVSwitch of NVLink 4 or later
 * (NVLink SHARP arrived with the third-generation NVSwitch of HGX H100),
 * in one node (its tuner disables NVLS across nodes without CollNet), from
 * NCCL 2.17 (2.18.1's release notes, docs.nvidia.com/deeplearning/nccl/
 * release-notes/rel_2-18-1.html, add its inter-node forms to it). PyTorch's
 * wheels bundle such an NCCL from 2.1 (nvidia-nccl-cu12 2.18.1): a
 * pytorch-2 host, or an unstated one (nccl-tests rows, a current NCCL),
 * gets it; PyTorch 1.x (NCCL 2.10-2.14) does not. */
static int nvls_possible(const xs_device *dev, const xs_scenario *s, const xs_topo *t)
{
    int fw = s->host.framework;
    return t->link == XS_LINK_NVLINK && dev->gpu.nvlink == XS_NVLINK_SWITCH &&
           dev->gpu.nvlink_generation >= 4 && t->nodes == 1 && fw != XS_FW_PT18 &&
           fw != XS_FW_PT113;
}

/* The link inside a node is the device file's (interconnect.nvlink):
 * NVSwitch and the V100 SXM2 hybrid cube-mesh join every GPU of the
 * baseboard, so NCCL rings over NVLink by default; a PCIe card's NVLink is
 * an optional bridge, so it goes through the host unless told otherwise,
 * and then only as many GPUs as the bridge joins. A node holds the usual
 * server's GPUs (interconnect.gpus_per_node) unless cluster.per_node
 * says otherwise. */
int xs_topo_of(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err)
{
    memset(t, 0, sizeof *t);
    int64_t n = s->devices;
    t->n = (int)n;
    t->per_node = (int)n;
    t->nodes = 1;
    if (n <= 1)
        return XS_OK;
    const xs_backend *b = xs_backend_at(dev->cls);
    if (!b || strcmp(b->name, "gpu") != 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "scenario %s on device %s: cluster.devices %lld needs GPUs: the "
                            "collectives modelled are NCCL's",
                            s->id, dev->id, (long long)n);
    const xs_gpu_params *gp = &dev->gpu;
    int64_t usual = gp->gpus_per_node > 0 ? gp->gpus_per_node : 8;
    int64_t g = s->per_node > 0 ? s->per_node : (n < usual ? n : usual);
    if (n % g != 0)
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s: cluster.devices %lld is not whole nodes of device %s's "
                            "%lld GPUs (interconnect.gpus_per_node); set cluster.per_node",
                            s->id, (long long)n, dev->id, (long long)g);
    t->per_node = (int)g;
    t->nodes = (int)(n / g);
    int ic = s->interconnect;
    int fabric = gp->nvlink == XS_NVLINK_SWITCH || gp->nvlink == XS_NVLINK_MESH;
    if (ic == XS_IC_AUTO)
        ic = fabric ? XS_IC_NVLINK : XS_IC_PCIE;
    if (ic == XS_IC_NVLINK && gp->nvlink == XS_NVLINK_NONE)
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s: cluster.interconnect nvlink: device %s has no NVLink "
                            "(interconnect.nvlink none); use pcie",
                            s->id, dev->id);
    if (ic == XS_IC_NVLINK && g > gp->nvlink_gpus) {
        if (gp->nvlink == XS_NVLINK_BRIDGE)
            return xs_error_set(err, XS_EFIELD,
                                "scenario %s: cluster.interconnect nvlink with cluster.per_node "
                                "%lld: device %s is a PCIe card whose NVLink bridge joins %s "
                                "(interconnect.nvlink_gpus %lld); use pcie, or %lld per node",
                                s->id, (long long)g, dev->id,
                                gp->nvlink_gpus == 2 ? "pairs" : "fewer GPUs",
                                (long long)gp->nvlink_gpus, (long long)gp->nvlink_gpus);
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s: cluster.per_node %lld: device %s's NVLink joins %lld "
                            "GPUs (interconnect.nvlink_gpus); use at most that many per node",
                            s->id, (long long)g, dev->id, (long long)gp->nvlink_gpus);
    }
    if (t->nodes > 1 && !(s->network_gbs > 0))
        return xs_error_set(err, XS_EFIELD,
                            "scenario %s: %d nodes need cluster.network_gbs", s->id, t->nodes);
    t->link = ic == XS_IC_NVLINK ? XS_LINK_NVLINK : XS_LINK_PCIE;
    t->intra_gbs = (ic == XS_IC_NVLINK ? dev->nvlink_gbs_bidir : dev->host_gbs_bidir) / 2;
    t->net_gbs = t->nodes > 1 ? s->network_gbs : 0;
    t->nvls = nvls_possible(dev, s, t);
    t->sm_count = (int)gp->sm_count;
    t->mem_bw_gbs = dev->mem_bw_gbs;
    return XS_OK;
}

const char *xs_coll_name(int coll)
{
    static const char *names[] = {"all_reduce", "reduce_scatter", "all_gather"};
    return coll >= 0 && coll < XS_COLL_COUNT ? names[coll] : "?";
}

const char *xs_algo_name(int algo)
{
    static const char *names[] = {"ring", "tree", "hierarchical", "nvls"};
    return algo >= 0 && algo < XS_ALGO_COUNT ? names[algo] : "?";
}

const char *xs_link_name(int link)
{
    static const char *names[] = {"nvlink", "pcie"};
    return link >= 0 && link < XS_LINK_COUNT ? names[link] : "?";
}
