/* tpu.c — see tpu.h. */
#include "tpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t xs_tpu_pad(int64_t x, int64_t to)
{
    return (x + to - 1) / to * to;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* One orientation: the k x n operand stays in the arrays as dim x dim
 * weight tiles; the m rows stream through each, padded to the sublanes.
 * A weight tile is shifted in one row a cycle, double-buffered behind the
 * stream of the tile before it (Jouppi et al., ISCA 2017, section 2: the
 * matrix unit holds a second weight tile "to hide the 256 cycles it takes
 * to shift a tile in"), so a tile costs the longer of its stream and its
 * shift. The array fills and drains once per matmul: the first row meets
 * the last weight row dim cycles after it enters and its sum leaves dim
 * cycles later ("an initial pipeline bubble ... after that ... no
 * additional bubble", jax-ml/scaling-book@04d8de5:tpus.md, appendix B). */
static void orient(const xs_tpu_params *t, int64_t m, int64_t n, int64_t k, int64_t batch,
                   int passes, xs_mxu_result *r)
{
    int64_t dim = t->mxu_dim;
    int64_t units = t->cores_per_device * t->mxus_per_core;
    int64_t rows = xs_tpu_pad(m, t->sublanes);
    int64_t tiles = ceil_div(k, dim) * ceil_div(n, dim) * batch;
    double per_tile = (double)(rows > dim ? rows : dim);
    memset(r, 0, sizeof *r);
    r->tiles = tiles;
    r->bubble_cycles = 2.0 * (double)dim;
    r->cycles = (double)ceil_div(tiles, units) * per_tile * passes + r->bubble_cycles;
    r->padded_macs = (double)tiles * (double)dim * (double)dim * (double)rows * passes;
    r->ideal_cycles =
        (double)m * (double)n * (double)k * (double)batch * passes / ((double)dim * dim * units);
}

void xs_tpu_mxu(const xs_tpu_params *t, int64_t m, int64_t n, int64_t k, int64_t batch,
                int passes, xs_mxu_result *r)
{
    xs_mxu_result a, b;
    orient(t, m, n, k, batch, passes, &a); /* B stays */
    orient(t, n, m, k, batch, passes, &b); /* A stays (C transposed) */
    a.stationary_b = 1;
    b.stationary_b = 0;
    *r = b.cycles < a.cycles ? b : a;
}

/* The MXU runs bf16 products into fp32 sums; fp16 has no MXU path and
 * runs as bf16 (torch_xla's autocast on TPU casts to bf16); fp32 operands
 * are split into bf16 terms, one MXU pass each, as XLA's precision config
 * asks: DEFAULT 1 pass, HIGH 3 (bf16_3x), HIGHEST 6 (bf16_6x). On TPU, XLA
 * defaults fp32 matmuls to DEFAULT, one bf16 pass with fp32 accumulation
 * (jax-ml/jax issue 1856: "matrix multiplication on TPUs (with float32
 * dtypes) defaults to bfloat16 multiplication with float32 accumulation");
 * torch_xla.backends.set_mat_mul_precision offers 'default', 'high' and
 * 'highest' (docs.pytorch.org/xla r2.8, torch_xla/backends). The file says
 * which one a prediction assumes. */
static int passes_for(const xs_device *dev, xs_dtype dt)
{
    return dt == XS_FP32 || dt == XS_TF32 ? (int)xs_tpu_of(dev)->fp32_passes : 1;
}

static double mxu_hz(const xs_device *dev)
{
    return xs_tpu_of(dev)->clock_mhz * 1e6 * xs_tpu_of(dev)->mxu_efficiency;
}

static double hbm_rate(const xs_device *dev)
{
    return dev->mem_bw_gbs * 1e9 * xs_tpu_of(dev)->hbm_efficiency;
}

static void finish(xs_estimate *est)
{
    est->time_s = fmax(est->compute_s, est->memory_s) + est->overhead_s;
    est->bound = est->compute_s >= est->memory_s ? XS_BOUND_COMPUTE : XS_BOUND_MEMORY;
}

int xs_tpu_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err)
{
    memset(est, 0, sizeof *est);
    (void)err;
    if (op->kind == XS_OP_GEMM || op->kind == XS_OP_BGEMM) {
        if (op->m < 1 || op->n < 1 || op->k < 1)
            return xs_error_set(err, XS_ERANGE,
                                "device %s: matmul '%s' has an empty shape %lld x %lld x %lld",
                                dev->id, op->name, (long long)op->m, (long long)op->n,
                                (long long)op->k);
        xs_mxu_result r;
        xs_tpu_mxu(xs_tpu_of(dev), op->m, op->n, op->k, op->batch > 0 ? op->batch : 1,
                   passes_for(dev, op->dtype), &r);
        est->engine = XS_BF16;
        est->tensor = 1;
        est->compute_s = r.cycles / mxu_hz(dev);
    } else if (op->kind == XS_OP_ATTENTION) {
        /* a fused attention kernel: its FLOPs at the MXU's rate */
        est->engine = XS_BF16;
        est->tensor = 1;
        est->compute_s = op->flops * passes_for(dev, op->dtype) /
                         (dev->peak_tflops[XS_BF16] * 1e12 * xs_tpu_of(dev)->mxu_efficiency);
    } else {
        /* the vector unit: one ALU operation an element where the op
         * states no FLOPs */
        double work = op->flops > 0 ? op->flops : op->elems;
        est->engine = XS_FP32;
        est->tensor = 0;
        est->compute_s = work / (dev->peak_tflops[XS_FP32] * 1e12);
    }
    est->memory_s = op->bytes / hbm_rate(dev);
    finish(est);
    return XS_OK;
}

/* The kinds XLA folds into the fusion of the op that produces their input. */
static int fusible(int kind)
{
    return kind == XS_OP_ELTWISE || kind == XS_OP_CAST || kind == XS_OP_COPY;
}

/* A producer XLA fuses consumers into: every op of the step but the
 * optimizer (its own per-parameter fusion after the reduction of the
 * gradients) and collectives. */
static int producer(int kind)
{
    return kind != XS_OP_OPTIMIZER && kind != XS_OP_COMM;
}

size_t xs_tpu_fusion(const xs_workload *wl, unsigned char *fused)
{
    size_t n = 0;
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        fused[i] = 0;
        if (i == 0 || !fusible(op->kind) || op->dp_wrapper)
            continue;
        const xs_op *prev = &wl->ops[i - 1];
        if (producer(prev->kind) && !prev->dp_wrapper && prev->phase == op->phase &&
            prev->count == op->count) {
            fused[i] = 1;
            n++;
        }
    }
    return n;
}

/* Token ids, attention mask and labels (or segment ids): the int32
 * tensors a token of the BERT and GPT recipes feeds, 4 bytes each. */
#define INFEED_BYTES_PER_TOKEN 12.0

/* The step as XLA runs it: fused ops lose their HBM pass and keep their
 * vector-unit work; the host sends the step's inputs over its link
 * (infeed) while nothing else is queued, since the program waits for them;
 * the rest of the input pipeline runs on host threads ahead of the device
 * (tf.data / torch_xla's MpDeviceLoader prefetch) and shows only where it
 * is slower than the device. */
static double tpu_whole_step(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                             xs_estimate *est, char *note, size_t cap)
{
    /* data parallel: XLA's cross-replica sum reads and writes the
     * gradients in place and folds the 1/world-size scale into the
     * optimizer's fusion, so DDP's bucket copies, divide and copy back
     * have no counterpart (tpu_dp.c) */
    for (size_t i = 0; i < wl->n; i++)
        if (wl->ops[i].dp_wrapper)
            est[i].time_s = est[i].compute_s = est[i].memory_s = est[i].overhead_s = 0;
    unsigned char *fused = calloc(wl->n ? wl->n : 1, 1);
    double removed = 0, cycles = 0, ideal = 0;
    size_t nf = 0;
    if (fused) {
        nf = xs_tpu_fusion(wl, fused);
        for (size_t i = 0; i < wl->n; i++) {
            if (!fused[i])
                continue;
            removed += wl->ops[i].bytes * (double)wl->ops[i].count;
            est[i].memory_s = 0;
            finish(&est[i]);
        }
        free(fused);
    }
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        if (op->kind != XS_OP_GEMM && op->kind != XS_OP_BGEMM)
            continue;
        xs_mxu_result r;
        xs_tpu_mxu(xs_tpu_of(dev), op->m, op->n, op->k, op->batch > 0 ? op->batch : 1,
                   passes_for(dev, op->dtype), &r);
        cycles += r.cycles * (double)op->count;
        ideal += r.ideal_cycles * (double)op->count;
    }
    int64_t rows = s->train.batch * s->train.seq;
    int padded = rows % xs_tpu_of(dev)->sublanes != 0;
    snprintf(note, cap,
             "XLA: %zu elementwise/copy ops fused into their producers (%.2f GB of HBM traffic "
             "a step removed); MXU: %.1f%% of matmul cycles are padding to %lldx%lld tiles%s "
             "and array fill; fp32 matmuls as %lld bf16 pass%s",
             nf, removed / 1e9, cycles > 0 ? 100 * (1 - ideal / cycles) : 0,
             (long long)xs_tpu_of(dev)->mxu_dim, (long long)xs_tpu_of(dev)->mxu_dim,
             padded ? " (batch x seq rows padded to 8)" : "", (long long)xs_tpu_of(dev)->fp32_passes,
             xs_tpu_of(dev)->fp32_passes == 1 ? " (XLA DEFAULT)" : "es");
    /* each device's host link carries that device's share of the step */
    double link = dev->host_gbs_bidir / 2 * 1e9;
    return (double)wl->tokens_per_step / (double)s->devices * INFEED_BYTES_PER_TOKEN / link;
}

static void tpu_matmul_format(const xs_device *dev, xs_dtype asked, xs_dtype *engine,
                              int *tensor)
{
    (void)dev;
    (void)asked;
    *engine = XS_BF16;
    *tensor = 1;
}

/* The MXUs described for the shared GEMM interface: peaks and clock for
 * reports; no tile lists, so the tile/wave model (the `gemm` command)
 * refuses a TPU rather than cost it as a GPU. */
static void tpu_engine(const xs_device *dev, xs_gemm_engine *e)
{
    memset(e, 0, sizeof *e);
    e->device_id = dev->id;
    e->units = xs_tpu_of(dev)->cores_per_device * xs_tpu_of(dev)->mxus_per_core;
    e->clock_mhz = xs_tpu_of(dev)->clock_mhz;
    for (int t = 0; t < XS_DTYPE_COUNT; t++) {
        e->peak_tflops[t] = dev->peak_tflops[t];
        e->peak_flops[t] = dev->peak_tflops[t] * 1e12;
        e->efficiency[t] = xs_tpu_of(dev)->mxu_efficiency;
    }
    e->dram_bw_gbs = dev->mem_bw_gbs;
    e->dram_efficiency = xs_tpu_of(dev)->hbm_efficiency;
}

static void tpu_corner(const xs_device *dev, int which, xs_device *out)
{
    *out = *dev;
    xs_tpu_params *t = xs_tpu_of(out);
    if (which < 0) {
        t->mxu_efficiency = xs_tpu_of(dev)->mxu_efficiency_low;
        t->hbm_efficiency = xs_tpu_of(dev)->hbm_efficiency_low;
    } else if (which > 0) {
        t->mxu_efficiency = 1;
        t->hbm_efficiency = xs_tpu_of(dev)->hbm_efficiency_high;
    }
}

static const char *tpu_arch_name(const xs_device *dev)
{
    return xs_tpu_of(dev)->generation;
}

const xs_backend xs_tpu_backend = {
    .name = "tpu",
    .doc = "a Google Cloud TPU generation as one XLA device: a TensorCore on v2/v3,\n"
           "the chip on v4/v5e/v5p (megacore); its peak, HBM, power and price are that\n"
           "share of the chip's quoted figures",
    .fields = xs_tpu_fields,
    .check = xs_tpu_check_fields,
    .arch_name = tpu_arch_name,
    .gemm_engine = tpu_engine,
    .estimate = xs_tpu_estimate,
    .corner = tpu_corner,
    .async = 1,
    .matrix_unit = "MXUs",
    .whole_step = tpu_whole_step,
    .matmul_format = tpu_matmul_format,
    .topology = xs_tpu_topology,
};
