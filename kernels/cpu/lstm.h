/* lstm.h — LSTM inference (fp32) on the CPU: a plain reference and the
 * timed version, which runs each layer in two kinds of OpenMP region (the
 * input projection of the whole sequence, one GEMM; then one region per
 * time step for the recurrent product and the gate update) and takes the
 * thread count of each kind per layer from its caller, so a plan can
 * change the count between layers as the network runs.
 *
 * Layout as torch.nn.LSTM (batch_first=False, zero initial state, gate
 * order i, f, g, o): x is seq x batch x input, y is seq x batch x hidden
 * (the last layer's h for every step). The weights are one array holding,
 * layer after layer, weight_ih (4H x in), weight_hh (4H x H), bias_ih (4H)
 * and bias_hh (4H): the order of nn.LSTM's parameters(), so the same file
 * loads into PyTorch. */
#ifndef XS_KRN_LSTM_H
#define XS_KRN_LSTM_H

#include <stddef.h>

/* bf16: the weights, the biases and the activations between ops (x, h,
 * the layers' outputs) are bf16 values, as torch.nn.LSTM converted with
 * .to(torch.bfloat16); products accumulate and the cell state is kept in
 * fp32. The input projection is the bf16 GEMM (AMX, AVX512-BF16, or
 * converted to fp32 while packed); the recurrent step reads its weights as
 * bf16, half the bytes. Outputs are still fp32 arrays, holding bf16 values. */
typedef struct {
    size_t layers, input, hidden, seq, batch;
    int bf16;
} xs_krn_lstm_shape;

/* Hidden units one work item of the recurrent step covers: its 4 gates
 * make 32 output columns, the width of the GEMM kernels' blocks. The
 * step's parallel work is ceil(hidden / 8) items. */
#define XS_KRN_LSTM_UNITS 8

/* Floats of the weight array, and where layer l's four tensors start in it. */
size_t xs_krn_lstm_weights_len(const xs_krn_lstm_shape *s);
void xs_krn_lstm_offsets(const xs_krn_lstm_shape *s, size_t l, size_t *w_ih, size_t *w_hh,
                         size_t *b_ih, size_t *b_hh);

/* y = LSTM(x) by the textbook loops, in double accumulators (with bf16,
 * x, the weights, the biases and each h rounded to bf16 first). */
void xs_krn_lstm_ref(const xs_krn_lstm_shape *s, const float *w, const float *x, float *y);

/* The timed kernel's state: the recurrent weights packed per work item,
 * the summed biases, the input projections and the layer outputs. One
 * owner: xs_krn_lstm_alloc's caller frees it with xs_krn_lstm_free; w must
 * stay valid while it is used (the input weights are read in place). */
typedef struct xs_krn_lstm xs_krn_lstm;

/* NULL when out of memory or a dimension is 0. */
xs_krn_lstm *xs_krn_lstm_alloc(const xs_krn_lstm_shape *s, const float *w);
void xs_krn_lstm_free(xs_krn_lstm *k);

/* Run it: y = LSTM(x). threads[2 l] is layer l's input-projection region
 * count, threads[2 l + 1] its recurrent steps' (each >= 1). group_s, when
 * not NULL, gets the wall seconds of each of those 2 x layers groups added. */
void xs_krn_lstm_run(xs_krn_lstm *k, const float *x, float *y, const int *threads,
                     double *group_s);

/* The recurrent step's code path on this CPU: "avx2 fma" or "portable". */
const char *xs_krn_lstm_path(void);

/* One recurrent step of layer 0 alone (h of step 0 in, step 1 out) on
 * threads threads: what the calibration times. */
void xs_krn_lstm_step(xs_krn_lstm *k, int threads);

#endif
