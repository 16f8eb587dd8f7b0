/* gpu_topo.c — the GPUs of a data-parallel job as NCCL sees them: nodes
 * of the usual server's GPUs over NVLink or PCIe, a network between the
 * nodes, and whether NCCL may reduce in the switch (the class's topology
 * slot; the collectives' times: comm.c). */
#include "gpu.h"

#include <string.h>

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
    return t->link == XS_LINK_NVLINK && xs_gpu_of(dev)->nvlink == XS_NVLINK_SWITCH &&
           xs_gpu_of(dev)->nvlink_generation >= 4 && t->nodes == 1 && fw != XS_FW_PT18 &&
           fw != XS_FW_PT113;
}

/* The link inside a node is the device file's (interconnect.nvlink):
 * NVSwitch and the V100 SXM2 hybrid cube-mesh join every GPU of the
 * baseboard, so NCCL rings over NVLink by default; a PCIe card's NVLink is
 * an optional bridge, so it goes through the host unless told otherwise,
 * and then only as many GPUs as the bridge joins. A node holds the usual
 * server's GPUs (interconnect.gpus_per_node) unless cluster.per_node
 * says otherwise. */
int xs_gpu_topology(const xs_device *dev, const xs_scenario *s, xs_topo *t, xs_error *err)
{
    int64_t n = s->devices;
    const xs_gpu_params *gp = xs_gpu_of(dev);
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
                            "scenario %s on device %s: cluster.devices %lld over %lld per node "
                            "spans %d nodes: give their network, cluster.network_gbs (GB/s each "
                            "way per node)",
                            s->id, dev->id, (long long)n, (long long)g, t->nodes);
    t->link = ic == XS_IC_NVLINK ? XS_LINK_NVLINK : XS_LINK_PCIE;
    t->intra_gbs = (ic == XS_IC_NVLINK ? dev->nvlink_gbs_bidir : dev->host_gbs_bidir) / 2;
    t->net_gbs = t->nodes > 1 ? s->network_gbs : 0;
    t->nvls = nvls_possible(dev, s, t);
    t->sm_count = (int)gp->sm_count;
    t->mem_bw_gbs = dev->mem_bw_gbs;
    return XS_OK;
}
