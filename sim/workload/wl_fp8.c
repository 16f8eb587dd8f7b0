/* wl_fp8.c — train.precision fp8: the layers' linears as Transformer
 * Engine's te.Linear runs them under fp8_autocast with its DelayedScaling
 * recipe (fp8.h), and the recipe's per-step amax and scale updates.
 *
 * te.Linear (NVIDIA/TransformerEngine@0004dbd0231cb02d7b47d45344900a494fa13f46,
 * transformer_engine/pytorch/module/linear.py, _Linear, the TE 1.x of the
 * Llama tutorial's time):
 * - forward: fp8_cast_transpose_fused casts the bf16 input to fp8 and
 *   writes its fp8 transpose too (the input of the weight gradient); the
 *   same kernel casts the bf16 weight to fp8 and its transpose
 *   (update_fp8_weights: is_first_microbatch is None, as accelerate and
 *   the Trainer call it, so every forward, every micro-batch), into new
 *   tensors each forward (get_fp8_weights_scratchpad: "Return empty weight
 *   placeholders for each fwd/bwd pass" when is_first_microbatch is None;
 *   team code index, find_string id 2352338128), not the persistent
 *   buffers it keeps when told which micro-batch runs);
 *   fp8_gemm(weight_fp8, input_fp8) writes bf16 (the
 *   activation dtype), fp32 accumulation, the bias in its epilogue.
 *   Each cast kernel also writes its tensor's amax.
 * - saved for the backward: the input's fp8 transpose (one byte an
 *   element, not the bf16 input), the weight's fp8 transpose, and a clone
 *   of the forward scale_inv tensor.
 * - backward: fp8_cast_transpose_fused on the output gradient (E5M2 under
 *   HYBRID; fp8_cast_transpose_bgrad_fused with a bias, which also sums
 *   the bias gradient), dgrad = fp8_gemm(weight_t_fp8, grad_fp8) and
 *   wgrad = fp8_gemm(input_t_fp8, grad_t_fp8), both writing bf16.
 * The GEMMs' split accumulator (use_split_accumulator in dgrad and wgrad,
 * promotions of the partial sums to fp32) is not modelled: it costs the
 * GEMM some issue slots the tile model has no term for. */
#include "wl_build.h"

#include <math.h>

#include "fp8.h"

/* 1 when the linear now emitted is a te.Linear */
int xs_wb_fp8_linear_here(const xs_wb *c)
{
    return c->s->train.precision == XS_P_FP8 && c->layer >= 0;
}

/* An fp8 GEMM: one-byte operands, bf16 output */
static void fp8_gemm(xs_wb *c, int phase, double m, double n, double k, int ta, int tb,
                     const char *name, const char *suffix)
{
    xs_wb_gemm(c, phase, XS_OP_GEMM, m, n, k, 1, ta, tb, 1, 2, "%s%s", name, suffix);
    if (c->failed || c->dropped)
        return;
    xs_op *op = c->last_in_tape ? &c->tape[c->tn - 1] : &c->wl->ops[c->wl->n - 1];
    op->dtype = XS_FP8;
    op->hints.out_bytes = 2;
}

void xs_wb_fp8_linear(xs_wb *c, const char *name, double rows, double K, double N, int bias)
{
    int dx = !c->input_nograd, H = c->H;
    xs_wb_enter_modules(c, 1);
    xs_wb_add_param(c, K * N, 1, rows == c->T);
    if (bias)
        xs_wb_add_param(c, N, 0, 0);
    c->wl->fp8_linears += 1;
    /* the input: bf16 read, fp8 and its fp8 transpose written; the
     * transpose is what the backward keeps, the rest lives until the GEMM */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, rows * K, H + 2.0, 0, 1, "%s.fp8_cast_x", name);
    xs_wb_keep(c, rows * K);
    xs_wb_transient(c, rows * K);
    /* the weight (the bias is bf16 already): its fp8 transpose kept for
     * dgrad, its fp8 copy alive until the GEMM */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, K * N, 2.0 + 2.0, 0, 1, "%s.fp8_cast_w", name);
    xs_wb_keep(c, K * N);
    xs_wb_transient(c, K * N);
    /* fp8_meta["scaling_fwd"].scale_inv.clone(), saved for the backward */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, XS_FP8_FWD_TENSORS, 8, 0, 1, "%s.fp8_scale_inv",
                 name);
    xs_wb_keep_output(c, XS_FP8_FWD_TENSORS * 4.0);
    fp8_gemm(c, XS_PH_FWD, rows, N, K, 0, 1, name, "");
    xs_wb_bwd_group(c);
    /* the output gradient: bf16 read, fp8 and its transpose written (and
     * the bias gradient summed on the way, bf16) */
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, rows * N, H + 2.0 + (bias ? H / rows : 0), 0, 1,
                 "%s.fp8_cast_dy", name);
    xs_wb_transient(c, 2 * rows * N);
    if (dx)
        fp8_gemm(c, XS_PH_BWD, rows, K, N, 0, 0, name, ".dX");
    fp8_gemm(c, XS_PH_BWD, N, K, rows, 1, 0, name, ".dW");
}

/* FP8GlobalStateManager.reduce_and_update_fp8_tensors, once a forward (at
 * fp8_autocast's exit) and once a backward (after the first te.Linear's,
 * the last to run): torch.cat of every module's current amax (PyTorch's
 * cat copies up to 128 inputs a launch: CAT_ARRAY_BATCH_SIZE,
 * aten/src/ATen/native/cuda/Shape.cu), then one
 * fused_amax_and_scale_update_after_reduction kernel that rolls each amax
 * history, takes its max and writes the new scale (TE's fp8.py; team code
 * index, find_string id 2950516690); amax_history_len 1024 and "max" are
 * the recipe's defaults (fp8.h). Single device: no all-reduce. */
void xs_wb_fp8_amax_update(xs_wb *c, int phase)
{
    double linears = c->wl->fp8_linears, per = phase == XS_PH_FWD ? XS_FP8_FWD_TENSORS
                                                                  : XS_FP8_BWD_TENSORS;
    double n = linears * per;
    if (!(n > 0))
        return;
    const char *tag = phase == XS_PH_FWD ? "fwd" : "bwd";
    xs_wb_mem_op(c, phase, XS_OP_COPY, n, 8, 0, (int64_t)ceil(linears / 128), "fp8.amax_cat.%s",
                 tag);
    xs_wb_transient(c, n * 4);
    /* each history read and written, each scale (and scale_inv) written */
    xs_wb_mem_op(c, phase, XS_OP_REDUCE, n * XS_FP8_AMAX_HISTORY,
                 8 + 12.0 / XS_FP8_AMAX_HISTORY, 1, 1, "fp8.amax_scale_update.%s", tag);
    xs_wb_transient(c, 0);
}
