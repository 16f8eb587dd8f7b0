/* wl_ops.c — the building blocks of a layer, each op as PyTorch eager
 * runs it with its backward on the tape: linear (with its LoRA adapter),
 * dropout, LayerNorm, residual adds, softmax, attention, activations,
 * embeddings. */
#include "wl_build.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bounds.h"
#include "checked.h"
#include "grow.h"
#include "kernel_fn.h"
#include "fsdp.h"
#include "kernel_op.h"
#include "lora.h"

/* The LoRA adapter of a targeted linear, as PEFT's lora.Linear.forward
 * runs it after the base layer (huggingface/peft@003369494699fedd543fe38d16e52df96aeae743,
 * src/peft/tuners/lora/layer.py, Linear.forward and update_layer; the cast
 * is _cast_input_dtype, tuners_utils.py @005fdd53c63ed5a27177fd200295a00f93a57b55):
 * x = x.to(lora_A.weight.dtype) (a cast
 * to fp32 when autocast hands it a half tensor: the adapters are fp32),
 * then result + lora_B(lora_A(dropout(x))) * scaling: the dropout (or
 * nn.Identity, no kernel), two bias-free nn.Linear GEMMs through rank r,
 * one multiply by alpha / r and one add. Autograd sums x's two gradients
 * (base and adapter), one add kernel. dx: x requires grad. */
static void lora_adapter(xs_wb *c, const char *name, double rows, double K, double N,
                         int x_island, int dx)
{
    const xs_train *t = &c->s->train;
    double r = (double)t->lora_rank, p = t->lora_dropout;
    char nm[48];
    int frozen = c->frozen, nograd = c->nograd, x_nograd = c->input_nograd;
    int x_kept = c->x_kept, unkept = c->x_unkept;
    /* the adapter reads a new tensor (a cast or dropout output) rather than
     * x itself, which then its A keeps */
    int fresh = c->amp || p > 0;
    xs_wb_enter_modules(c, p > 0 ? 1 : 2); /* lora.Linear itself; nn.Identity when no dropout */
    c->nograd = nograd || !dx; /* the cast and dropout of an x without grad record nothing */
    if (c->amp && !x_island) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, rows * K, c->H + 4, 0, 1, "%s.lora_x.cast", name);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, rows * K, 4 + c->H, 0, 1, "%s.lora_x.cast.bwd", name);
        x_island = 1;
    }
    xs_wb_join(nm, sizeof nm, name, ".lora_dropout");
    xs_wb_dropout(c, nm, rows * K, x_island ? c->I : c->H, p);
    c->nograd = nograd;
    c->frozen = 0;
    c->input_nograd = !dx;
    c->x_kept = fresh ? 0 : 1; /* x itself: kept once, by whoever reads it first */
    xs_wb_join(nm, sizeof nm, name, ".lora_A");
    xs_wb_linear(c, nm, rows, K, r, 0, x_island);
    if (fresh)
        c->x_unkept = unkept;
    c->input_nograd = 0;
    c->x_kept = 0;
    xs_wb_join(nm, sizeof nm, name, ".lora_B");
    int x_unkept = c->x_unkept;
    xs_wb_linear(c, nm, rows, r, N, 0, 0);
    c->x_unkept = x_unkept;
    c->frozen = frozen;
    c->input_nograd = x_nograd;
    c->x_kept = x_kept;
    /* * scaling (a Python float: nothing kept), then the add, whose
     * gradient passes through unchanged */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows * N, 2.0 * c->H, 1, 1, "%s.lora_scale", name);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, rows * N, 2.0 * c->H, 1, 1, "%s.lora_scale.bwd", name);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows * N, 3.0 * c->H, 1, 1, "%s.lora_add", name);
}

/* Y[rows x N] = X[rows x K] W^T (+ b). x_island: X is an fp32-island tensor,
 * so under AMP autocast casts it to half first (and its gradient back).
 * A frozen weight (LoRA) has no weight or bias gradient, and autograd's
 * matmul then keeps no X (its formula saves X only for the weight's
 * gradient); where X needs no gradient either (c->input_nograd), the
 * linear has no backward at all. A targeted linear gets its adapter. */
void xs_wb_linear(xs_wb *c, const char *name, double rows, double K, double N, int bias,
                   int x_island)
{
    if (xs_wb_fp8_linear_here(c)) { /* no adapters, no autocast: fp8.c refuses both */
        xs_wb_fp8_linear(c, name, rows, K, N, bias);
        return;
    }
    int cast_x = c->amp && x_island;
    /* FSDP's MixedPrecision gathers the weights in the half format: autocast
     * casts none, and its gradients land there (fsdp.h) */
    int cast_w = c->amp && !xs_fsdp_half_params(c->s);
    int trained = !c->frozen, dx = !c->input_nograd;
    int adapted = c->lora && xs_lora_targeted(c->s, c->lora_names, name, c->layer);
    /* QLoRA: bitsandbytes' Linear4bit holds the frozen weights of the
     * layers; int8: its Linear8bitLt (wl_int8.c) */
    int quant = c->frozen && c->layer >= 0 && c->s->train.quant != XS_QUANT_NONE;
    int q8 = quant && c->s->train.quant == XS_QUANT_INT8, q4 = quant && !q8;
    double wn = K * N + (bias ? N : 0);
    if (adapted && dx) /* x feeds the base and the adapter: two gradients to add */
        xs_wb_grad_fanout(c, name, rows * K, x_island ? c->I : c->H, 2);
    xs_wb_enter_modules(c, 1);
    xs_wb_add_param(c, K * N, 1, rows == c->T);
    if (bias)
        xs_wb_add_param(c, N, 0, 0);
    if (quant) {
        c->wl->quant_params += K * N;
        c->wl->quant_bytes += xs_quant_bytes(c->s->train.quant, K, N);
    }
    int nograd = c->nograd;
    c->nograd = nograd || (!trained && !dx);
    /* the ops whose outputs are X and the weight the GEMM reads */
    size_t x_src = c->wl->n ? c->wl->n - 1 : (size_t)-1, w_src = (size_t)-1;
    if (cast_x) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, rows * K, 4 + c->H, 0, 1, "%s.cast_x", name);
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        x_src = c->wl->n - 1;
    }
    /* bitsandbytes' MatMul4Bit dequantizes the packed weight for the forward
     * matmul and again for the backward's dX, and keeps only the packed
     * weight, resident anyway (bitsandbytes/autograd/_functions.py,
     * MatMul4Bit: ctx.tensors = (None, B), grad_A = grad_output @
     * F.dequantize_4bit(B, ctx.state).to(grad_output.dtype).t(); team code
     * index, find_string ids 3710483789, 8479261646). Modelled: one kernel
     * reading the packed bytes and writing the matmul format (a weight
     * loaded in fp32 but computed in half would add a cast) */
    double qb = quant ? xs_quant_bytes(c->s->train.quant, K, N) : 0;
    if (q4) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, K * N, qb / (K * N) + c->H, 1, 1, "%s.dequant", name);
        xs_wb_transient(c, K * N * c->H);
    } else if (cast_w && !quant) { /* autocast casts each weight once per forward (its cache) */
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, wn, 4 + c->H, 0, 1 + bias, "%s.cast_w", name);
        xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        w_src = c->wl->n - 1;
    }
    if (q8)
        xs_wb_int8_forward(c, name, rows, K, N, bias, dx);
    else
        xs_wb_gemm(c, XS_PH_FWD, XS_OP_GEMM, rows, N, K, 1, 0, 1, c->H, c->H, "%s", name);
    /* autograd keeps X for dW (in the matmul format: autocast's cast is
     * what it keeps) and, under autocast, the half copy of the weight for
     * dX: the weight cache holds it through the forward, the saved tensor
     * until the backward has used it */
    /* MatMul8bitLt keeps its input A whenever it requires grad
     * (ctx.tensors = (CAt, subA, A)), frozen weight or not */
    if ((trained || (q8 && dx)) && (!c->x_kept || c->x_unkept)) {
        xs_wb_keep(c, rows * K * c->H);
        xs_wb_kept_from(c, x_src);
        c->x_unkept = 0;
    } else if (!c->x_kept) {
        c->x_unkept = 1;
    }
    if (cast_w && !quant && dx) {
        xs_wb_keep(c, K * N * c->H);
        xs_wb_kept_from(c, w_src);
    }
    xs_wb_bwd_group(c);
    if (dx && q4) {
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, K * N, qb / (K * N) + c->H, 1, 1, "%s.dequant.bwd",
               name);
        xs_wb_transient(c, K * N * c->H);
    }
    if (dx && q8)
        xs_wb_int8_backward(c, name, K, N);
    if (dx)
        xs_wb_gemm(c, XS_PH_BWD, XS_OP_GEMM, rows, K, N, 1, 0, 0, c->H, c->H, "%s.dX", name);
    if (trained)
        xs_wb_gemm(c, XS_PH_BWD, XS_OP_GEMM, N, K, rows, 1, 1, 0, c->H, c->H, "%s.dW", name);
    if (trained && bias)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, rows * N, c->H, 1, 1, "%s.db", name);
    if (trained && cast_w)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, wn, c->H + 4, 0, 1 + bias, "%s.dW.cast", name);
    if (cast_x && dx)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, rows * K, c->H + 4, 0, 1, "%s.dX.cast", name);
    c->nograd = nograd;
    if (adapted)
        lora_adapter(c, name, rows, K, N, x_island, dx);
}

/* Dropout writes its output and a 1-byte mask; backward reads the mask. */
void xs_wb_dropout(xs_wb *c, const char *name, double elems, int es, double p)
{
    if (p <= 0)
        return;
    xs_wb_enter_modules(c, 1);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * es + 1, 2, 1, "%s", name);
    xs_wb_keep(c, elems); /* native_dropout's bool mask */
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 2.0 * es + 1, 1, 1, "%s.bwd", name);
}

/* LayerNorm over rows of h: forward saves mean and rstd; backward is one
 * kernel for dx and one for dgamma/dbeta, as PyTorch runs it. Both row
 * kernels walk their row twice, first for its statistics, then to write
 * (pytorch/pytorch@0005c538e468a9597b4372816aecacb33733deb6:
 * aten/src/ATen/native/cuda/layer_norm_kernel.cu: the forward's
 * compute_stats, then a second loop over X; layer_norm_grad_input_kernel's
 * sums over X and dY, then a second loop over both; apex's
 * cuComputeGradInput does the same): x, and dy, are read twice. */
void xs_wb_layernorm(xs_wb *c, const char *name, double rows, int es_in, int es_out)
{
    double h = c->h;
    xs_wb_add_param(c, h, 0, 0);
    xs_wb_add_param(c, h, 0, 0);
    int nograd = c->nograd;
    c->nograd = nograd || (c->frozen && c->input_nograd);
    xs_wb_enter_modules(c, 1);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_NORM, rows * h, 2.0 * es_in + es_out + 8.0 / h, 8, 1, "%s",
           name);
    xs_wb_keep_input(c, rows * h * es_in); /* x, and mean and rstd in fp32 */
    xs_wb_keep(c, rows * 4.0);
    xs_wb_keep(c, rows * 4.0);
    xs_wb_bwd_group(c);
    if (c->frozen) /* frozen weight and bias: layer_norm_backward's output mask
                      skips the dgamma/dbeta kernel */
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_NORM, rows * h, 2.0 * (es_in + es_out) + es_in + 8.0 / h, 12,
               1, "%s.bwd", name);
    else /* dx: x and dy twice, dx once; dgamma/dbeta: x and dy once */
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_NORM, rows * h,
               2.0 * (es_in + es_out) + es_in + 8.0 / h + es_in + es_out, 12, 2, "%s.bwd", name);
    c->nograd = nograd;
}

/* A tensor read by `consumers` ops gets that many gradients; autograd adds
 * them pairwise, one kernel each. Emitted before the consumers, so that the
 * reversed tape runs it after all of their backward ops. */
void xs_wb_grad_fanout(xs_wb *c, const char *name, double elems, int es, int consumers)
{
    if (consumers < 2 || c->input_nograd) /* a tensor without grad gets no gradients */
        return;
    xs_wb_bwd_group(c);
    for (int i = 1; i < consumers; i++)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 3.0 * es, 1, 1, "%s.grad_sum%d", name, i);
}

void xs_wb_residual_add(xs_wb *c, const char *name, double elems, int es_a, int es_b, int es_out)
{
    /* The gradient of a sum passes through unchanged: no backward kernel. */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, es_a + es_b + es_out, 1, 1, "%s", name);
}

/* Split q, k, v into heads (and merge back): torch.matmul copies permuted
 * views to contiguous memory; a fused kernel does all three in one pass.
 * The key enters transposed (Q K^T, a [d x s] operand a head): its copy
 * writes along the sequence while its source runs along the head
 * dimension, and so does the copy of its gradient back into token rows.
 * PyTorch's copy walks the output's order, so each element it reads lies
 * h elements from the last, in an L2 sector of its own. */
void xs_wb_transposing_copy(xs_wb *c, int phase, double elems, const char *name,
                             const char *suffix)
{
    c->transposing = 1;
    xs_wb_mem_op(c, phase, XS_OP_COPY, elems, 2.0 * c->H, 0, 1, "%s%s", name, suffix);
    c->transposing = 0;
}

void xs_wb_head_copies(xs_wb *c, const char *name, double elems, int tensors, int transposed)
{
    int split = transposed && !c->fused; /* a fused kernel reads every head in one pass */
    int plain = tensors - split, launches = c->fused ? 1 : plain;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, elems * plain, 2.0 * c->H, 0, launches, "%s", name);
    if (split)
        xs_wb_transposing_copy(c, XS_PH_FWD, elems, name, ".kT");
    xs_wb_bwd_group(c);
    if (split)
        xs_wb_transposing_copy(c, XS_PH_BWD, elems, name, ".kT.bwd");
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_COPY, elems * plain, 2.0 * c->H, 0, launches, "%s.bwd", name);
}

/* Shared memory a CUDA thread block gets without opting in: 48 KiB on
 * every compute capability here (CUDA C++ Programming Guide, "Technical
 * Specifications per Compute Capability"). */
#define SMEM_PER_BLOCK_BYTES 49152.0

/* Times PyTorch's softmax forward reads each input element
 * (pytorch/pytorch@000cace5a401cabff792f70ee9768708415ec98d:
 * aten/src/ATen/native/cuda/SoftMax.cu, host_softmax): rows of at most 1024
 * elements and 4 KiB run a warp a row that keeps the row in registers; a
 * longer row gets a block that caches it in shared memory when it fits the
 * block's 48 KiB less a float per warp (at most 32 warps:
 * cunn_SoftMaxForwardSmem, rows of whole 16-byte vectors); any other row
 * is read three times, for its max, for the sum of exponentials and to
 * write the result (cunn_SoftMaxForward). */
static int softmax_reads(double cols, int es)
{
    if (cols <= 1024 && cols * es <= 4096)
        return 1;
    /* the shared-memory kernel also needs whole 16-byte vectors a row */
    if (cols * es < SMEM_PER_BLOCK_BYTES - 32 * 4 && fmod(cols * es, 16) == 0)
        return 1;
    return 3;
}

/* Times host_softmax_backward's kernel reads its two inputs (g and y) an
 * element, as softmax_reads the forward's: a row the warp kernel holds in
 * registers or the shared-memory kernel caches is read once; any other
 * row twice for g (its sum, then the result) and once for y. */
static int softmax_bwd_reads(double cols, int es)
{
    return softmax_reads(cols, es) == 1 ? 2 : 3;
}

/* Softmax along rows of cols elements, in and out in es bytes an element.
 * log_softmax's backward (dx = dy - exp(y) sum(dy)) is one kernel that
 * reads y and dy and writes dx; softmax's first multiplies, tmp = dy * y,
 * an elementwise kernel of its own, then runs the same row kernel on tmp
 * and y (dx = tmp - y sum(tmp)): twice the traffic and a launch more
 * (aten/src/ATen/native/cuda/SoftMax.cu at the commit above,
 * softmax_backward_cuda_out). is_log: no division, one FLOP fewer forward. */
void xs_wb_softmax(xs_wb *c, const char *name, double elems, double cols, int es, int is_log)
{
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_SOFTMAX, elems, (softmax_reads(cols, es) + 1.0) * es,
           is_log ? 4 : 5, 1, "%s", name);
    xs_wb_keep_output(c, elems * es); /* both backward formulas read y */
    xs_wb_bwd_group(c);
    if (!is_log)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 3.0 * es, 1, 1, "%s.bwd.mul", name);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_SOFTMAX, elems, (softmax_bwd_reads(cols, es) + 1.0) * es, 3,
                 1, "%s.bwd", name);
}

/* softmax(scale * Q K^T + mask) with dropout, scores held in memory. */
void xs_wb_attention_unfused(xs_wb *c, int causal)
{
    double S2 = c->b * c->a * c->sq * c->sq, ba = c->b * c->a, s = c->sq, d = c->d;
    double p = c->s->model.attn_dropout;
    int H = c->H, sm = c->fused ? H : c->I; /* softmax runs in fp32 under AMP */
    xs_wb_head_copies(c, "attn.heads", c->T * c->h, 3, 1);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.scores");
    xs_wb_keep(c, c->T * c->h * H); /* the head copies of q and k */
    xs_wb_keep(c, c->T * c->h * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.scores.dQ");
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.scores.dK");
    if (c->fused) {
        /* one kernel: scale + mask + softmax + dropout, in and out in half */
        double mask = p > 0 ? 1 : 0;
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_SOFTMAX, S2, 2.0 * H + mask, 8, 1, "attn.softmax");
        xs_wb_keep_output(c, S2 * H); /* the probabilities */
        xs_wb_keep(c, S2 * mask);     /* the dropout mask */
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_SOFTMAX, S2, 3.0 * H + mask, 4, 1, "attn.softmax.bwd");
    } else {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.scale");
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.scale.bwd");
        c->broadcast = 1; /* the [s, s] causal mask, the [b, 1, 1, s] padding mask */
        if (causal) { /* torch.where(causal_mask, w, min) keeps the format */
            xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.causal_mask");
            xs_wb_bwd_group(c);
            xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.causal_mask.bwd");
        }
        if (sm != H) { /* padding-mask add promotes to fp32; causal: autocast's cast */
            xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, H + sm, 1, 1, "%s",
                   causal ? "attn.softmax.cast" : "attn.mask");
            if (causal)
                xs_wb_issued(c, XS_ISSUE_AUTOCAST);
            xs_wb_bwd_group(c);
            xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, sm + H, 0, 1, "%s.bwd",
                   causal ? "attn.softmax.cast" : "attn.mask");
        } else if (!causal) {
            xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, S2, 2.0 * H, 1, 1, "attn.mask");
        }
        c->broadcast = 0;
        xs_wb_softmax(c, "attn.softmax", S2, s, sm, 0);
        /* BERT drops out fp32 probs and autocast casts them for P.V; GPT-2
         * casts back to the value format first, then drops out. */
        if (causal && sm != H) {
            xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.probs.cast");
            xs_wb_issued(c, XS_ISSUE_AUTOCAST);
            xs_wb_bwd_group(c);
            xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.probs.cast.bwd");
        }
        xs_wb_dropout(c, "attn.probs.dropout", S2, causal ? H : sm, p);
        if (!causal && sm != H) {
            xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, S2, sm + H, 0, 1, "attn.probs.cast");
            xs_wb_issued(c, XS_ISSUE_AUTOCAST);
            xs_wb_bwd_group(c);
            xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, S2, H + sm, 0, 1, "attn.probs.cast.bwd");
        }
    }
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_BGEMM, s, d, s, ba, 0, 0, H, H, "attn.context");
    /* P.V keeps v and the probabilities it read: softmax's own output
     * (kept there already) only when no dropout or cast came between */
    int probs_kept = p <= 0 && (c->fused || sm == H);
    xs_wb_keep(c, c->T * c->h * H);
    if (!probs_kept)
        xs_wb_keep(c, S2 * H);
    xs_wb_bwd_group(c);
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, s, d, ba, 0, 1, H, H, "attn.context.dP");
    xs_wb_gemm(c, XS_PH_BWD, XS_OP_BGEMM, s, d, s, ba, 1, 0, H, H, "attn.context.dV");
    xs_wb_head_copies(c, "attn.merge", c->T * c->h, 1, 0);
}

/* Flash-style attention: tiles of Q K^T live in on-chip memory, so no s x s
 * traffic; the causal kernel skips the masked half of the tiles; backward
 * recomputes the scores (5 matmuls of s.s.d against forward's 2). */
static void attention_flash(xs_wb *c, int causal)
{
    double ba = c->b * c->a, s = c->sq, d = c->d, frac = causal ? 0.5 : 1.0;
    double qkvo = c->T * c->h * c->H, lse = ba * s * 4;
    xs_op op;
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_ATTENTION, s, s, d, ba, 0, 1, c->H, c->H, "attn.flash");
    if (c->failed)
        return;
    xs_op *f = &c->wl->ops[c->wl->n - 1];
    f->flops = 4 * ba * s * s * d * frac;
    f->bytes = 4 * qkvo + lse;
    op = *f;
    /* it keeps q, k, v, its output and the rows' logsumexp (and only a
     * seed for dropout): no s x s term */
    xs_wb_keep_output(c, qkvo);
    for (int t = 0; t < 3; t++)
        xs_wb_keep(c, qkvo);
    xs_wb_keep(c, lse);
    xs_wb_bwd_group(c);
    op.phase = XS_PH_BWD;
    op.flops = 10 * ba * s * s * d * frac;
    op.bytes = 8 * qkvo + 2 * lse;
    op.mem.temp = 3 * qkvo; /* dq, dk, dv: no s x s tensor, as in the forward */
    op.launches = 3; /* dO.O preprocess, main kernel, dQ conversion */
    snprintf(op.name, sizeof op.name, "attn.flash.bwd");
    xs_wb_emit(c, &op);
}

/* FFN activation; returns 1 if its output is an fp32 island. */
int xs_wb_activation(xs_wb *c, double elems)
{
    int H = c->H;
    if (c->s->train.ffn_bias == XS_FFN_BIAS_SEPARATE && !c->fused) {
        /* the GEMM wrote y without bias; bias + y broadcasts the bias over
         * the rows (the generic loop). Its backward is the bias reduction
         * the up-projection already has. */
        c->broadcast = 1;
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * H, 1, 1, "ffn.bias_add");
        c->broadcast = 0;
    }
    if (c->s->model.activation == XS_ACT_GELU_NEW && !c->fused) {
        /* transformers' NewGELUActivation is Python: pow, mul, add, mul,
         * tanh, add, mul, mul (8 kernels, 10 reads + 8 writes); pow is on
         * autocast's fp32 list, so the chain runs in fp32 under AMP. Its
         * autograd backward is 11 kernels of about 30 element accesses. */
        int es = c->I;
        if (c->amp) {
            xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, elems, H + 4, 0, 1, "ffn.gelu_new.cast");
            xs_wb_issued(c, XS_ISSUE_AUTOCAST);
        }
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 18.0 * es, 10, 8, "ffn.gelu_new");
        /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 pow(x, 3)))): autograd
         * keeps x (pow), tanh's result, and both factors of the last mul;
         * the ops by a Python scalar keep nothing */
        for (int t = 0; t < 4; t++)
            xs_wb_keep(c, elems * es);
        xs_wb_bwd_group(c);
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 30.0 * es, 16, 11, "ffn.gelu_new.bwd");
        if (c->amp)
            xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, elems, 4 + H, 0, 1, "ffn.gelu_new.cast.bwd");
        return c->amp;
    }
    const char *name = c->s->model.activation == XS_ACT_RELU ? "ffn.relu" : "ffn.gelu";
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, elems, 2.0 * H, 8, 1, "%s", name);
    /* gelu keeps its input, relu its output: one tensor either way */
    if (c->s->model.activation == XS_ACT_RELU)
        xs_wb_keep_output(c, elems * H);
    else
        xs_wb_keep_input(c, elems * H);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, elems, 3.0 * H, 12, 1, "%s.bwd", name);
    return 0;
}

void xs_wb_attention(xs_wb *c, int causal)
{
    /* past the layer's first linears: their input is behind */
    c->x_unkept = 0;
    c->input_nograd = 0;
    if (c->flash)
        attention_flash(c, causal);
    else
        xs_wb_attention_unfused(c, causal);
}

/* nn.Embedding's forward is weight.index_select(0, ids) (aten/src/ATen/
 * native/Embedding.cpp), whose kernel for more than 16 indices
 * (indexSelectLargeIndex, aten/src/ATen/native/cuda/Indexing.cu) runs at
 * most 8 blocks of 128 threads an SM, each thread copying one element at a
 * time behind two 32-bit divisions and two remainders of its index math
 * (IndexToOffset, ATen/cuda/detail/TensorInfo.cuh): the instruction chain,
 * not DRAM, paces it. SM clock cycles an element costs an SM, fitted on
 * the A100 SXM4 80GB's 16 rows of Liger-Kernel's nn.Embedding benchmark
 * (data/published/kernels.csv, V 1024-131072, D 768 and 4096, 16384 ids,
 * fp32: 1.71-2.28, median 1.94, the 3 us launch taken off, at the 1410 MHz
 * boost); the H100 SXM5's 16 rows, kept out of the fit, give 1.56-1.97,
 * median 1.79 at its 1980 MHz boost (predicted 8% slow). */
#define XS_INDEX_SELECT_CYCLES 1.94

/* embedding_dense_backward_cuda (aten/src/ATen/native/cuda/Embedding.cu
 * and EmbeddingBackwardKernel.cu, PyTorch 2.x) on n ids into a table of V
 * rows of d, the incoming gradient es bytes an element, the table's ws:
 * up to 3072 ids, a zero fill and one kernel that walks every id for its
 * feature columns; past that, arange, CUB's radix sort of the int64 ids
 * with their positions over all 64 key bits (up to 4864 ids one
 * single-tile kernel; past that two memsets, a histogram, an exclusive sum
 * and 8 passes of a lookback memset and a onesweep kernel, each pass
 * reading and writing 16 bytes an id), the zero fill, unique_by_key (2
 * kernels), partials per segment, an exclusive sum (2), the partial
 * count, the partial offsets, compute_grad_weight (fp32 partial sums of
 * at most 10 rows: P <= n/10 + S of them) and sum_and_scatter. Every
 * kernel waits on the one before. S, the distinct ids, is taken as
 * min(n, V), the buffers' own bound. The zero fill is an op of its own
 * (at::zeros, before the kernels that add into it); embedding_bwd gives
 * the rest. */
#define EMB_BWD_SMALL_IDS 3072
#define EMB_BWD_SINGLE_TILE_IDS 4864
#define EMB_BWD_ROWS_PER_PARTIAL 10
/* The small path's embedding_backward_feature_kernel gives each block 32
 * feature columns and walks every id in chunks of 32 (one a warp): a
 * barrier, the warps' gradient loads, a barrier, then each row's leader
 * warp adds into grad_weight (a load, then a store), so each chunk waits
 * on two memory round trips before the next can start. */
#define EMB_BWD_SMALL_IDS_A_CHUNK 32
#define EMB_BWD_SMALL_TRIPS_A_CHUNK 2
typedef struct {
    double bytes, launches, serial_trips; /* all but the zero fill */
} emb_bwd;

static emb_bwd embedding_bwd(double V, double n, double d, int es, int ws)
{
    if (n <= EMB_BWD_SMALL_IDS)
        return (emb_bwd){n * d * es + n * 8 * ceil(d / 32) + n * d * ws, 1,
                         EMB_BWD_SMALL_TRIPS_A_CHUNK * ceil(n / EMB_BWD_SMALL_IDS_A_CHUNK)};
    double S = fmin(n, V), P = fmin(n, S + n / EMB_BWD_ROWS_PER_PARTIAL);
    int tiled = n <= EMB_BWD_SINGLE_TILE_IDS;
    double sort = tiled ? 32 * n : 8 * n + 8 * 32 * n;
    double launches = 1 + (tiled ? 1 : 2 + 1 + 1 + 8 * 2) + 2 + 1 + 2 + 1 + 1 + 1 + 1;
    return (emb_bwd){8 * n + sort + (8 * n + 16 * S) + 24 * S + 16 * S + (24 * S + 8 * P) +
                         (n * d * es + 8 * n + P * d * 4) + (P * d * 4 + 8 * S + S * d * ws),
                     launches, 0};
}

/* Gather rows of a table; backward is PyTorch's embedding_dense_backward:
 * sort the indices, sum rows per index, write a dense zero-filled gradient. */
void xs_wb_embedding(xs_wb *c, const char *name, double rows, double lookups)
{
    double h = c->h;
    xs_wb_add_param(c, rows * h, 1, 0);
    xs_wb_enter_modules(c, 1);
    /* a frozen table: autograd runs no embedding backward (ids need none) */
    int nograd = c->nograd;
    c->nograd = nograd || c->frozen;
    double table_reads = fmin(rows, lookups) * h * c->Wm;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_EMBED, 1, lookups * (h * c->Wm + 8) + table_reads, 0, 1, "%s",
           name);
    if (!c->failed)
        c->wl->ops[c->wl->n - 1].hints.issue_cycles = lookups * h * XS_INDEX_SELECT_CYCLES;
    xs_wb_transient(c, lookups * h * c->Wm); /* the rows gathered */
    xs_wb_keep(c, lookups * 8.0);            /* the int64 indices */
    xs_wb_bwd_group(c);
    if (!c->has_tied && !c->failed) { /* the first table is the token embedding */
        c->has_tied = 1;
        c->tied_group = c->gn - 1;
    }
    emb_bwd b = embedding_bwd(rows, lookups, h, c->I, c->Wm);
    /* the fill writes the gradient itself, counted as the parameter's, not
     * a transient: one "element" of its bytes */
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, 1, rows * h * c->Wm, 0, 1, "%s.bwd.zero", name);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_EMBED, 1, b.bytes, 0, (int64_t)b.launches, "%s.bwd", name);
    if (c->last_in_tape && !c->dropped && !c->failed)
        c->tape[c->tn - 1].hints.serial_trips = b.serial_trips;
    c->nograd = nograd;
}

/* The FFN half of a pre-LN layer (GPT-2's block, ViT's layer): the
 * residual stream fans out to the norm and the add, then LayerNorm `ln`,
 * up, the activation, down, dropout, and the residual add. */
void xs_wb_pre_ln_ffn(xs_wb *c, const char *ln)
{
    double T = c->T, h = c->h, e = T * h;
    xs_wb_grad_fanout(c, "ffn.residual", e, c->I, 2);
    xs_wb_layernorm(c, ln, T, c->I, c->I);
    xs_wb_linear(c, "ffn.up", T, h, c->f, 1, 1);
    int island = xs_wb_activation(c, T * c->f);
    xs_wb_linear(c, "ffn.down", T, c->f, h, 1, island);
    xs_wb_dropout(c, "ffn.dropout", e, c->H, c->s->model.dropout);
    xs_wb_residual_add(c, "ffn.residual", e, c->H, c->I, c->I);
}

/* LlamaRMSNorm is Python: hidden_states.to(float32), pow(2), mean(-1),
 * + eps, rsqrt, mul, .to(input_dtype), weight * x. The .to() calls are
 * kernels only when the input is not fp32 (pure bf16, apex O2); under
 * autocast the residual stream is fp32 (fp32 weights, an fp32 residual
 * add), pow and rsqrt are on autocast's fp32 list, and the norm runs in
 * fp32 from end to end. Autograd keeps the fp32 input (pow's and mul's
 * operand), rsqrt's result (its own backward and mul's other operand) and
 * the normalized tensor weight multiplies (the weight, a parameter, costs
 * nothing more). Its backward is autograd's formulas: weight's mul (dy w,
 * dy y, a row sum for dweight), mul's (dy r, dy x and its row sum), rsqrt's
 * (-0.5 dy r^3: pow, mul, mul), mean's (expand, divide), pow's (x.pow(1),
 * times 2, times dy), and the sum of x's two gradients. */
void xs_wb_rmsnorm(xs_wb *c, const char *name, double rows)
{
    double h = c->h, e = rows * h;
    int I = c->I, cast = I != 4;
    xs_wb_add_param(c, h, 0, 0); /* ALL_LAYERNORM_LAYERS: the Trainer's no-decay group */
    xs_wb_enter_modules(c, 1);
    if (cast) {
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, e, I + 4.0, 0, 1, "%s.to_fp32", name);
        xs_wb_keep_output(c, e * 4);
    }
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 8, 1, 1, "%s.pow", name);
    if (!cast)
        xs_wb_keep(c, e * 4); /* x itself, the fp32 residual stream */
    xs_wb_transient(c, e * 4);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_REDUCE, e, 4 + 4 / h, 1, 1, "%s.mean", name);
    xs_wb_transient(c, rows * 4);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows, 16, 2, 2, "%s.rsqrt", name); /* + eps, rsqrt */
    xs_wb_keep_output(c, rows * 4);
    c->broadcast = 1; /* the [rows, 1] rsqrt, then the [h] weight */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 8 + 4 / h, 1, 1, "%s.mul", name);
    if (cast) {
        xs_wb_transient(c, e * 4);
        c->broadcast = 0;
        xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, e, 4.0 + I, 0, 1, "%s.to_input", name);
        c->broadcast = 1;
    }
    xs_wb_keep_output(c, e * I); /* what weight multiplies */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, 2.0 * I, 1, 1, "%s.weight", name);
    xs_wb_bwd_group(c);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 5.0 * I, 2, 2, "%s.weight.bwd", name);
    c->broadcast = 0;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, e, I, 1, 1, "%s.weight.dw", name);
    if (cast)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, e, I + 4.0, 0, 1, "%s.to_input.bwd", name);
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 20, 2, 2, "%s.mul.bwd", name);
    c->broadcast = 0;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_REDUCE, e, 4 + 4 / h, 1, 1, "%s.mul.bwd.sum", name);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, rows, 28, 3, 3, "%s.rsqrt.bwd", name);
    c->broadcast = 1;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 4 + 4 / h, 1, 1, "%s.mean.bwd", name);
    c->broadcast = 0;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 28, 2, 3, "%s.pow.bwd", name);
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_ELTWISE, e, 12, 1, 1, "%s.x.grad_sum", name);
    if (cast)
        xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, e, 4.0 + I, 0, 1, "%s.to_fp32.bwd", name);
}
