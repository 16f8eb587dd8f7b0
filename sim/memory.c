/* memory.c — see memory.h. */
#include "memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "host.h"

/* Bytes a parameter takes in each role, by precision and AMP mode: the
 * model's own weights, a master copy, the gradients autograd writes, the
 * master gradients, one element of optimizer state. */
typedef struct {
    int weight, master, grad, master_grad, state;
} elem_bytes;

static elem_bytes bytes_of(const xs_train *t)
{
    int mixed = t->precision == XS_P_AMP_FP16 || t->precision == XS_P_AMP_BF16;
    if (mixed && t->amp_mode == XS_AMP_O2) /* half model, fp32 master copy and gradients */
        return (elem_bytes){2, 4, 2, 4, 4};
    /* pure bf16 (and Transformer Engine's fp8, whose model is bf16): states
     * in the parameters' format */
    if (t->precision == XS_P_BF16 || t->precision == XS_P_FP8)
        return (elem_bytes){2, 0, 2, 0, 2};
    return (elem_bytes){4, 0, 4, 0, 4}; /* fp32, tf32, autocast (fp32 parameters) */
}

/* Elements of optimizer state a parameter: SGD's momentum buffer; Adam's
 * exp_avg and exp_avg_sq (BertAdam's next_m, next_v); Adan's m, v, n and
 * the previous gradient (training-math.md). Created at the first step and
 * kept. */
static int state_elems(int optimizer)
{
    switch (optimizer) {
    case XS_OPT_SGD: return 1;
    case XS_OPT_ADAN: return 4;
    default: return 2;
    }
}

/* Gradients persist across the forward when a micro-batch adds into the
 * last one's (grad_accum > 1) or zero_grad zero-fills instead of freeing
 * (train.zero_grad zero); with set_to_none and one micro-batch each
 * gradient is created in the backward, as its op runs. apex O2 sets the
 * half gradients to None before every backward whatever zero_grad does. */
static int grads_persist(const xs_train *t, int o2)
{
    if (o2)
        return 0;
    return t->grad_accum > 1 || t->zero_grad == XS_ZERO_GRAD_ZERO;
}

/* The CUDA context of a PyTorch process before its first tensor (driver
 * state and the module images of the kernels loaded), outside the caching
 * allocator, by era (MiB): every kernel loaded at start before CUDA 11.7
 * (nvidia-smi after torch.ones((1,1)).to("cuda") on a V100, CUDA 11.2:
 * 1343 MiB, huggingface/transformers@249ef81 docs/source/en/
 * model_memory_anatomy.md); PyTorch 1.13's own eager loading (cudaMemGetInfo
 * after a small tensor, CUDA_MODULE_LOADING=DEFAULT: 666,632,192 bytes,
 * pytorch/pytorch#86509, the PR that made LAZY the default from 1.13.0);
 * lazy loading, kernels loaded as they are first used: "around 400MB"
 * (pytorch/pytorch#109888, a maintainer; 274 MiB before any kernel ran,
 * #86509). The NGC 22.09 container of the pytorch-1.13 scenarios predates
 * that default. */
static double context_mib(const xs_scenario *s)
{
    if (s->cuda_context_mib > 0)
        return s->cuda_context_mib;
    switch (s->host.framework) {
    case XS_FW_PT18: return 1343;
    case XS_FW_PT113: return 666632192.0 / 1048576;
    default: return 400;
    }
}

/* The cuBLAS workspace PyTorch gives a handle on a stream, through its
 * allocator (aten/src/ATen/cuda/CublasHandlePool.cpp @ 26a3905: 4096 KiB x
 * 2 + 16 KiB x 8 by default, 4096 KiB x 8 on sm_90), and cuBLASLt's (1024
 * KiB, CUBLASLT_WORKSPACE_SIZE's default): one pair for the thread that
 * runs the forward and one for the autograd engine's device thread, which
 * gets its own handle from the per-thread pool. */
static double blas_workspace(const xs_device *dev)
{
    double cublas = dev->gpu.sm_version >= 90 ? 4096.0 * 8 * 1024 : (4096.0 * 2 + 16 * 8) * 1024;
    return 2 * (cublas + 1024.0 * 1024);
}

static int is_gpu(const xs_device *dev)
{
    const xs_backend *b = xs_backend_at(dev->cls);
    return b && strcmp(b->name, "gpu") == 0;
}

/* What the walk reads of an op. */
typedef struct {
    double saved, slack, grads, grad_slack, temp, temp_slack, freed, freed_slack;
    int phase, comm;
} walk_op;

int xs_memory_predict(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                      xs_memory *m, xs_error *err)
{
    memset(m, 0, sizeof *m);
    const xs_train *t = &s->train;
    int mixed = t->precision == XS_P_AMP_FP16 || t->precision == XS_P_AMP_BF16;
    int o2 = mixed && t->amp_mode == XS_AMP_O2;
    elem_bytes eb = bytes_of(t);
    int fused;
    int o = xs_train_optimizer(t, &fused);
    /* P: what the optimizer trains (gradients, master copies, state); the
     * frozen rest (LoRA's base) holds its weights alone, those stored
     * quantized (QLoRA) in their packed bytes */
    double P = wl->trainable_params;
    /* ZeRO-1 splits the optimizer state and the fp32 master copy over the
     * devices, ZeRO-2 the gradients too (Rajbhandari et al., SC'20, "ZeRO",
     * sec. 5: P_os, P_os+g); what DDP keeps whole is 1/1 */
    double shard = s->devices > 1 && s->sharding != XS_SHARD_NONE ? 1.0 / (double)s->devices : 1;
    double gshard = s->devices > 1 && s->sharding == XS_SHARD_ZERO2 ? shard : 1;
    m->weights = (wl->params - wl->quant_params) * eb.weight + wl->quant_bytes +
                 P * eb.master * shard;
    m->optimizer = P * state_elems(o) * eb.state * shard;
    int persist = grads_persist(t, o2);
    /* apex O2's fp32 master gradients exist from its unscale after the
     * backward to the end of the step (apex/amp/_process_optimizer.py @
     * f17401f: post_backward_with_master_weights makes them, new_step sets
     * them to None), so through the later micro-batches too when they
     * accumulate there */
    double master_grads = P * eb.master_grad * shard;
    int master_all_step = t->grad_accum > 1;

    /* The walk: kept tensors pile up in the forward and go in the backward;
     * gradients appear as their ops run (or persist); an op's output and its
     * input (the op before's output) are alive while it runs. The slack is
     * what the allocator rounds those tensors up by. */
    /* DDP's buckets (wl_ddp.c) are allocated once and live all step; XLA
     * (a TPU) sums the gradients in place and has none (tpu_dp.c) */
    double ddp = is_gpu(dev) ? wl->ddp_buffer_bytes : 0;
    double saved = 0, slack = 0, grads = (persist ? P * eb.grad * gshard : 0) + ddp;
    double grad_slack = 0;
    double prev_temp = 0, prev_temp_slack = 0, peak = -1;
    int gpu = is_gpu(dev);
    int prev_phase = -1;
    size_t peak_at = 0;
    /* what the walk needs of each op, once per op of the list (a compact
     * list runs each many times), the allocator's rounding of its
     * transient included */
    walk_op local[128];
    walk_op *w = wl->n <= 128 ? local : malloc(wl->n * sizeof *w);
    if (!w)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        w[i] = (walk_op){op->mem.saved,      op->mem.slack,     op->mem.grads * eb.grad * gshard,
                         op->mem.grad_slack, op->mem.temp,      xs_alloc_slack(op->mem.temp),
                         op->mem.freed,      op->mem.freed_slack, op->phase,
                         op->kind == XS_OP_COMM};
    }
    double activations_max = m->activations_max;
    for (size_t k = 0, steps = xs_wl_steps(wl); k < steps; k++) {
        size_t at = xs_wl_op_at(wl, k);
        const walk_op *op = &w[at];
        if (op->comm) /* in place in the buckets: nothing of its own */
            continue;
        /* forward ops, and a checkpointed layer's forward run again in the
         * backward */
        saved += op->saved;
        slack += op->slack;
        if (!persist) {
            grads += op->grads;
            grad_slack += op->grad_slack;
        }
        double extra = op->phase == XS_PH_OPT || master_all_step ? master_grads : 0;
        int same = op->phase == prev_phase;
        double prev = same ? prev_temp : 0;
        double tr = op->temp + prev;
        double frag = gpu ? slack + grad_slack + op->temp_slack + (same ? prev_temp_slack : 0)
                          : 0; /* the caching allocator is CUDA's; a CPU tensor is a malloc */
        double live = saved + grads + extra + tr + frag;
        if (live > peak) {
            peak = live;
            m->activations = saved;
            m->grads = grads + extra;
            m->transient = tr;
            m->fragmentation = frag;
            peak_at = at;
        }
        if (saved > activations_max)
            activations_max = saved;
        if (op->phase == XS_PH_BWD) {
            double left = saved - op->freed, left_slack = slack - op->freed_slack;
            saved = left > 0 ? left : 0; /* fmax(0, x), inlined */
            slack = left_slack > 0 ? left_slack : 0;
        }
        prev_temp = op->temp;
        prev_temp_slack = op->temp_slack;
        prev_phase = op->phase;
    }
    m->activations_max = activations_max;
    if (w != local)
        free(w);
    if (peak >= 0) {
        snprintf(m->peak_op, sizeof m->peak_op, "%s", wl->ops[peak_at].name);
        m->peak_phase = wl->ops[peak_at].phase;
    }
    if (gpu) {
        m->context = context_mib(s) * 1048576.0;
        m->workspace = blas_workspace(dev) + m->context;
    }
    m->total = m->weights + m->grads + m->optimizer + m->activations + m->transient +
               m->fragmentation + m->workspace;
    m->capacity = dev->mem_usable_mib > 0 ? dev->mem_usable_mib * 1048576.0
                                          : dev->mem_capacity_gb * XS_GIB;
    m->fits = m->total <= m->capacity;
    return XS_OK;
}
