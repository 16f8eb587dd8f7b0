/* cpu.c — see cpu.h. */
#include "cpu.h"

#include <math.h>
#include <string.h>

#include "gemm.h"

double xs_cpu_level_bw(const xs_device *dev, double footprint, int threads)
{
    const xs_cpu_params *c = xs_cpu_of(dev);
    double t = threads;
    if (footprint <= c->l2_kb_per_core * 1024 * t)
        return c->bw_l2_core * 1e9 * t;
    if (footprint <= c->llc_mb * 1024 * 1024)
        return c->bw_llc_core * 1e9 * t;
    return fmin(c->bw_dram_core * t, dev->mem_bw_gbs) * 1e9;
}

xs_cpu_gemm_kernel xs_cpu_gemm_kernel_for(const char *isa, int bf16)
{
    if (!bf16)
        return XS_CPU_GEMM_FP32;
    if (strcmp(isa, "amx-bf16") == 0)
        return XS_CPU_GEMM_BF16_AMX;
    if (strcmp(isa, "avx512-bf16") == 0)
        return XS_CPU_GEMM_BF16_DOT;
    return XS_CPU_GEMM_BF16_ON_FP32;
}

void xs_cpu_gemm_pack_bytes(xs_cpu_gemm_kernel kern, long long m, long long n, long long k,
                            int ta, int tb, double *contig, double *transposed, int *direct)
{
    int units = kern == XS_CPU_GEMM_BF16_DOT || kern == XS_CPU_GEMM_BF16_AMX;
    /* bytes read an element, bytes written (the fp32 kernel's panels hold fp32) */
    double es_in = kern == XS_CPU_GEMM_FP32 ? 4 : 2, es_out = units ? 2 : 4;
    double M = (double)m, N = (double)n, K = (double)k;
    /* the bf16 panels pad K to whole 32-deep steps, the fp32 ones do not */
    double mp = ceil(M / 32) * 32, np = ceil(N / 32) * 32, kp = units ? ceil(K / 32) * 32 : K;
    double a = es_in * M * K + es_out * mp * kp, b = es_in * K * N + es_out * kp * np;
    *contig = *transposed = 0;
    *direct = kern == XS_CPU_GEMM_BF16_AMX && !ta && k % 32 == 0 && m % 32 == 0;
    if (units) {
        if (!*direct)
            *(ta ? transposed : contig) += a;
        *(tb ? transposed : contig) += b;
    } else {
        *(ta ? contig : transposed) += a;
        *(tb ? transposed : contig) += b;
    }
}

int xs_cpu_is_cold(const xs_cpu_params *c, double footprint)
{
    return footprint > c->l2_kb_per_core * 1024 / 4;
}

/* The CPU kernels as a tile/wave engine: a core is a unit running one
 * 32 x 32 C block (2 x 2 AMX tiles, or 4 x 8-row AVX-512 strips) at a
 * time, with its fitted mainloop efficiency and per-block cost; operands
 * are packed into aligned panels, so row alignment does not matter; no
 * split-K, no launches (parallel regions are costed by the CPU model). */
static void cpu_engine(const xs_device *dev, xs_gemm_engine *e)
{
    const xs_cpu_params *c = xs_cpu_of(dev);
    memset(e, 0, sizeof *e);
    e->device_id = dev->id;
    e->units = c->cores;
    e->clock_mhz = c->clock_mhz;
    for (int t = 0; t < XS_DTYPE_COUNT; t++) {
        /* the peaks were measured at the clock the cores hold: no scaling */
        e->peak_tflops[t] = dev->peak_tflops[t];
        e->peak_flops[t] = dev->peak_tflops[t] > 0 ? dev->peak_tflops[t] * 1e12 : 0;
        e->efficiency[t] = c->gemm_eff_fp32;
    }
    e->efficiency[XS_BF16] = c->gemm_eff_bf16;
    e->tile_overhead_ns[XS_FP32] = c->block_ns_fp32;
    e->tile_overhead_ns[XS_BF16] = c->block_ns_bf16;
    e->matrix = e->unaligned = &c->bf16_blocks;
    e->vector = &c->fp32_blocks;
    e->unaligned_rate = 1;
    e->packs_operands = 1;
    e->max_tiles_per_unit = 1;
    e->split_k_max = 1;
    e->l2_bw_gbs = c->bw_l2_read_core * (double)c->cores;
    e->l2_mb = c->llc_mb;
    e->smem_per_unit_kb = 1e6; /* packed panels live in cache, not a scratchpad */
    e->latency_ns = 0;         /* folded into the fitted per-block cost */
    e->dram_bw_gbs = dev->mem_bw_gbs;
    e->dram_efficiency = 1;
}

/* One GEMM call on threads cores: its fixed cost, packing, then the
 * tile/wave model with the memory time at the bandwidth of the level the
 * operands fit in. A batched GEMM is that many calls: the CPU kernels run
 * one matrix at a time. */
static int gemm_estimate(const xs_device *dev, const xs_op *op, int threads, xs_estimate *est,
                         xs_error *err)
{
    const xs_cpu_params *c = xs_cpu_of(dev);
    xs_gemm_engine e;
    cpu_engine(dev, &e);
    /* the engine's peaks and L2 feed are all cores'; on fewer threads each
     * unit keeps one core's share (the GEMM model divides by units) */
    double share = (double)threads / (double)c->cores;
    e.units = threads;
    for (int t = 0; t < XS_DTYPE_COUNT; t++)
        e.peak_flops[t] *= share;
    e.l2_bw_gbs *= share;
    xs_dtype engine;
    int tensor;
    xs_gemm_rate(&e, op->dtype, &engine, &tensor);
    int bf16 = engine == XS_BF16, direct;
    /* bf16 on the fp32 engine: the kernel set has no bf16 unit and converts
     * while packing (its operands are still bf16 in memory) */
    xs_cpu_gemm_kernel kern = xs_cpu_gemm_kernel_for(c->isa, op->dtype == XS_BF16);
    if (!bf16 && kern != XS_CPU_GEMM_BF16_ON_FP32)
        kern = XS_CPU_GEMM_FP32;
    double es = kern == XS_CPU_GEMM_BF16_ON_FP32 ? 2 : xs_dtype_bytes(engine);
    double footprint = es * ((double)op->m * op->k + (double)op->k * op->n) +
                       4.0 * (double)op->m * op->n;
    e.dram_bw_gbs = xs_cpu_level_bw(dev, footprint, threads) / 1e9;
    xs_gemm_shape g = {op->m, op->n, op->k, 1, op->ta, op->tb, op->dtype, 4};
    xs_gemm_result r;
    int rc = xs_gemm_model(&e, &g, &r, err);
    if (rc)
        return rc;
    double contig, transposed;
    xs_cpu_gemm_pack_bytes(kern, op->m, op->n, op->k, op->ta, op->tb, &contig, &transposed,
                           &direct);
    double pack = contig / (c->pack_gbs_core * 1e9 * threads) +
                  transposed / (c->pack_transposed_gbs_core * 1e9 * threads);
    double call = (bf16 ? c->gemm_call_us_bf16 : c->gemm_call_us_fp32) * 1e-6;
    double batch = op->batch > 0 ? (double)op->batch : 1;
    if (xs_cpu_is_cold(c, fmax(footprint * batch, op->hints.group_bytes)))
        pack += footprint /
                ((bf16 ? c->cold_gbs_core_bf16 : c->cold_gbs_core_fp32) * 1e9 * threads);
    est->engine = engine;
    est->tensor = tensor;
    est->compute_s = batch * r.compute_s;
    est->memory_s = batch * (r.memory_s + pack);
    est->overhead_s = batch * call;
    est->time_s = batch * (r.time_s + pack + call);
    est->bound = r.bound;
    if (est->overhead_s > fmax(est->compute_s, est->memory_s))
        est->bound = XS_BOUND_LAUNCH;
    return XS_OK;
}

int xs_cpu_estimate(const xs_device *dev, const xs_op *op, int threads, xs_estimate *est,
                    xs_error *err)
{
    memset(est, 0, sizeof *est);
    if (threads < 1 || threads > xs_cpu_of(dev)->cores)
        return xs_error_set(err, XS_ERANGE, "device %s: threads must be in 1..%lld, got %d",
                            dev->id, (long long)xs_cpu_of(dev)->cores, threads);
    if (op->kind == XS_OP_GEMM || op->kind == XS_OP_BGEMM)
        return gemm_estimate(dev, op, threads, est, err);
    int fn = xs_cpu_fn_for_op(op);
    if (fn < 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "device %s: the CPU model has no kernel for op '%s' (fused "
                            "attention and collectives run on accelerators only)",
                            dev->id, op->name);
    const xs_cpu_kcost *k = &xs_cpu_of(dev)->k[fn];
    double elems = op->elems > 0 ? op->elems : op->bytes / 4;
    double ns = xs_cpu_is_cold(xs_cpu_of(dev), fmax(op->bytes, op->hints.group_bytes)) ? k->ns_per_elem
                                                                           : k->ns_per_elem_hot;
    est->engine = XS_FP32;
    est->tensor = 0;
    est->compute_s = elems * ns * 1e-9 / threads;
    est->memory_s = op->bytes / xs_cpu_level_bw(dev, op->bytes, threads);
    est->overhead_s = k->overhead_us * 1e-6;
    double body = fmax(est->compute_s, est->memory_s);
    est->time_s = body + est->overhead_s;
    est->bound = est->overhead_s > body          ? XS_BOUND_LAUNCH
                 : est->compute_s >= est->memory_s ? XS_BOUND_COMPUTE
                                                   : XS_BOUND_MEMORY;
    return XS_OK;
}

static int cpu_backend_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est,
                                xs_error *err)
{
    return xs_cpu_estimate(dev, op, (int)xs_cpu_of(dev)->cores, est, err);
}

/* x moved s standard deviations, kept above a tenth of itself */
static double shift(double x, double sd, double s)
{
    return fmax(0.1 * x, x + s * sd);
}

void xs_cpu_corner(const xs_device *dev, int which, xs_device *out)
{
    *out = *dev;
    if (which == 0)
        return;
    double s = which > 0 ? 1 : -1; /* +: faster */
    xs_cpu_params *c = xs_cpu_of(out);
    const xs_cpu_params *o = xs_cpu_of(dev);
    c->gemm_eff_bf16 = fmin(1, shift(o->gemm_eff_bf16, o->gemm_eff_bf16_sd, s));
    c->gemm_eff_fp32 = fmin(1, shift(o->gemm_eff_fp32, o->gemm_eff_fp32_sd, s));
    c->bw_l2_core = shift(o->bw_l2_core, o->bw_l2_core_sd, s);
    c->bw_llc_core = shift(o->bw_llc_core, o->bw_llc_core_sd, s);
    c->bw_dram_core = shift(o->bw_dram_core, o->bw_dram_core_sd, s);
    out->mem_bw_gbs = shift(dev->mem_bw_gbs, o->bw_dram_all_sd, s);
    for (int f = 0; f < XS_FN_COUNT; f++) {
        c->k[f].ns_per_elem = shift(o->k[f].ns_per_elem, o->k[f].ns_per_elem_sd, -s);
        c->k[f].ns_per_elem_hot =
            o->k[f].ns_per_elem_hot * c->k[f].ns_per_elem / o->k[f].ns_per_elem;
    }
}

static const char *cpu_arch_name(const xs_device *dev)
{
    return xs_cpu_of(dev)->isa;
}

/* --help lists one kernel's rows for all: they repeat per kernel. */
static int cpu_documents(const xs_field *f)
{
    return strncmp(f->path, "kernels.", 8) != 0 || strncmp(f->path, "kernels.zero.", 13) == 0 ||
           strcmp(f->path, "kernels.source") == 0;
}

const xs_backend xs_cpu_backend = {
    .name = "cpu",
    .doc = "this host's CPU, written by `xpusim calibrate --backend cpu` from\n"
           "measurements on the host; kernels.<name> is one of zero add bias bias_grad\n"
           "dropout dropout_bwd gelu gelu_bwd layernorm layernorm_bwd softmax softmax_bwd\n"
           "xent embed embed_bwd cast copy adan adamw",
    .fields = xs_cpu_fields,
    .documents = cpu_documents,
    .check = xs_cpu_check_fields,
    .arch_name = cpu_arch_name,
    .gemm_engine = cpu_engine,
    .estimate = cpu_backend_estimate,
    .corner = xs_cpu_corner,
    .async = 0,
};
