/* wl_int8.c — train.quant int8: the frozen base linears of the layers as
 * bitsandbytes' Linear8bitLt runs them in training (transformers'
 * load_in_8bit, llm_int8_threshold 6.0), through MatMul8bitLt
 * (bitsandbytes/autograd/_functions.py, team code index find_string id
 * 8479261646) and its CUDA ops (bitsandbytes/backends/cuda/ops.py, id
 * 53397386364). The weight does not require grad, so the input takes the
 * fast path, int8_vectorwise_quant, not int8_double_quant. */
#include "wl_build.h"

/* Input columns holding an outlier (|x| >= 6) that the 16-bit side GEMM
 * takes: from 6.7B parameters on, LLM.int8's outliers sit in about six
 * hidden dimensions (Dettmers et al. 2022, arXiv 2208.07339, section 4.1:
 * 150k outliers a sequence "concentrated in only 6 different hidden
 * dimensions"). Taken for every layer's linears (an assumption: smaller
 * models have fewer, and some layers none; the side GEMM is tiny either
 * way, its launches are what cost). */
#define INT8_OUTLIER_COLS 6.0

/* The forward of Linear8bitLt from its input (bf16, rows x K) to its bf16
 * output: A.to(float16); int8_vectorwise_quant with a threshold
 * (outliers = A.abs() >= threshold, outliers.any() read back on the host,
 * outliers.any(dim=0) and argwhere, another read-back, then
 * cint8_vector_quant and out_row[:, outlier_cols] = 0); then
 * int8_mixed_scaled_mm: subA = A[:, cols].contiguous(), the weight's
 * outlier columns dequantized (CB[:, cols], int8_vectorwise_dequant,
 * .to(A.dtype)), int8_linear_matmul (cuBLASLt, int8 in, int32 out),
 * int8_mm_dequant to fp16 and .to(bf16) (the bias added separately: it
 * is not fp16), and output.addmm(subA, subB). ctx keeps subA (and A
 * itself: the caller's bookkeeping, xs_wb_linear). */
void xs_wb_int8_forward(xs_wb *c, const char *name, double rows, double K, double N, int bias,
                        int dx)
{
    double e = rows * K, o = INT8_OUTLIER_COLS;
    int H = c->H;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, e, H + 2.0, 0, 1, "%s.int8.x_fp16", name);
    xs_wb_transient(c, e * 2);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, e, (2 + 2) + (2 + 1), 1, 2, "%s.int8.outliers",
                 name);
    xs_wb_transient(c, e);
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_REDUCE, e, 1, 1, 1, "%s.int8.any", name);
    xs_wb_transient(c, 1);
    if (!c->failed)
        c->wl->ops[c->wl->n - 1].sync = 1;
    /* any(dim=0) over the rows, then argwhere (a count read back, a write) */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_REDUCE, e, 1 + 1 / rows, 1, 3, "%s.int8.outlier_cols",
                 name);
    xs_wb_transient(c, o * 8);
    if (!c->failed)
        c->wl->ops[c->wl->n - 1].sync = 1;
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_CAST, e, 2 + 1 + 4 / K + o / K, 1, 2, "%s.int8.quant",
                 name);
    xs_wb_transient(c, e + rows * 4);
    /* subA gathered, CB's columns gathered, dequantized (fp32) and cast */
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_COPY, rows * o,
                 2.0 * H + N * (1 + 1 + (1 + 4) + (4 + H)) / rows, 0, 4,
                 "%s.int8.outlier_gather", name);
    if (dx)
        xs_wb_keep_output(c, rows * o * H);
    else
        xs_wb_transient(c, rows * o * H);
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_GEMM, rows, N, K, 1, 0, 1, 1, 4, "%s", name);
    if (!c->failed) {
        xs_op *g = &c->wl->ops[c->wl->n - 1];
        g->dtype = XS_INT8;
        g->hints.out_bytes = 4;
    }
    xs_wb_mem_op(c, XS_PH_FWD, XS_OP_ELTWISE, rows * N, 4 + 2 + (2 + H) + (bias ? 2.0 * H : 0),
                 2, 2 + bias, "%s.int8.dequant_out", name);
    xs_wb_transient(c, rows * N * H);
    /* addmm: the outlier columns' product added into a new output */
    xs_wb_gemm(c, XS_PH_FWD, XS_OP_GEMM, rows, N, o, 1, 0, 1, H, H, "%s.int8.outlier_mm", name);
    if (!c->failed)
        c->wl->ops[c->wl->n - 1].bytes += rows * N * H;
}

/* The input gradient's weight: CB.to(bf16, copy=True) and, in place,
 * .mul_(SCB.unsqueeze(1).mul(1 / 127)): three kernels writing a bf16 copy
 * of the whole weight, which the dX GEMM then reads (MatMul8bitLt.backward,
 * req_gradA). */
void xs_wb_int8_backward(xs_wb *c, const char *name, double K, double N)
{
    int H = c->H;
    xs_wb_mem_op(c, XS_PH_BWD, XS_OP_CAST, K * N, (1 + H) + (2.0 * H) + 12 / K, 1, 3,
                 "%s.int8.dequant.bwd", name);
    xs_wb_transient(c, K * N * H);
}
