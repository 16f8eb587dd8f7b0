/* lstm.c — see lstm.h. The recurrent step is a skinny product (batch rows
 * against the 4H x H recurrent weights) followed by the gate update; both
 * run in one region per step, each thread owning work items of 8 hidden
 * units: it computes their 4 x 8 gate columns for every sample and updates
 * their cell and hidden state, so no barrier separates the product from
 * the update. The recurrent weights are packed once, per item as H rows of
 * 32 contiguous floats (the 8 units' i, f, g, o columns), so the inner loop
 * is 32 independent multiply-adds the compiler vectorizes: the same C
 * compiled for the build's baseline and, on x86-64, for AVX2 + FMA, chosen
 * by CPUID at run time (no intrinsics, so any host builds it). A thread keeps
 * the same items every step (static schedule): its slice of the weights
 * stays in its own cache when the slice fits. With bf16 the panels hold
 * bf16 weights, widened to fp32 as each row is loaded (a shift), and each
 * new h is rounded to bf16; the input projection is the bf16 GEMM on
 * activations cast by the layer kernels' cast. */
#include "lstm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bf16.h"
#include "cpu_features.h"
#include "cpu_gemm.h"
#include "layer_ops.h"

#define U XS_KRN_LSTM_UNITS
#define COLS (4 * U) /* gate columns of one work item */

typedef struct xs_krn_lstm lstm_t;
typedef void (*item_fn)(const lstm_t *, const void *, const float *, const float *,
                        const float *, float *, size_t, size_t);

struct xs_krn_lstm {
    xs_krn_lstm_shape s;
    item_fn item; /* the step's inner function for this CPU (pick_item) */
    const float *w;
    size_t items;
    float **packed; /* [layer]: items x H x COLS (fp32) */
    xs_bf16 **packed16; /* [layer]: the same, bf16 */
    xs_bf16 **wih16;    /* [layer]: weight_ih, 4H x in, bf16 */
    xs_bf16 *in16;      /* seq x batch x max(in, H): a layer's input cast to bf16 */
    float **bias;   /* [layer]: bias_ih + bias_hh, 4H */
    float *gates;   /* seq x batch x 4H: the input projection of one layer */
    float *out[2];  /* seq x batch x H: the layers' outputs, alternating */
    float *cell;    /* batch x H */
    float *zero;    /* batch x H zeros: the initial hidden state */
};

static item_fn pick_item(int bf16);

/* x as the nearest bf16 value when bf16 is set */
static float round_to(float x, int bf16)
{
    return bf16 ? xs_bf16_to_f32(xs_f32_to_bf16(x)) : x;
}

size_t xs_krn_lstm_weights_len(const xs_krn_lstm_shape *s)
{
    size_t h = s->hidden, n = 0;
    for (size_t l = 0; l < s->layers; l++)
        n += 4 * h * ((l ? h : s->input) + h + 2);
    return n;
}

void xs_krn_lstm_offsets(const xs_krn_lstm_shape *s, size_t l, size_t *w_ih, size_t *w_hh,
                         size_t *b_ih, size_t *b_hh)
{
    size_t h = s->hidden, at = 0;
    for (size_t i = 0; i < l; i++)
        at += 4 * h * ((i ? h : s->input) + h + 2);
    *w_ih = at;
    *w_hh = at + 4 * h * (l ? h : s->input);
    *b_ih = *w_hh + 4 * h * h;
    *b_hh = *b_ih + 4 * h;
}

static double sigmoid_d(double x)
{
    return 1 / (1 + exp(-x));
}

void xs_krn_lstm_ref(const xs_krn_lstm_shape *s, const float *w, const float *x, float *y)
{
    size_t H = s->hidden, B = s->batch, T = s->seq, nw = xs_krn_lstm_weights_len(s);
    float *in = malloc(T * B * (s->input > H ? s->input : H) * sizeof *in);
    float *h = calloc(B * H, sizeof *h), *c = calloc(B * H, sizeof *c);
    double *a = malloc(4 * H * sizeof *a);
    float *wr = malloc(nw * sizeof *wr); /* the weights as the kernel holds them */
    if (!in || !h || !c || !a || !wr) {
        free(in), free(h), free(c), free(a), free(wr);
        memset(y, 0xff, T * B * H * sizeof *y); /* NaN: no silent answer */
        return;
    }
    for (size_t i = 0; i < nw; i++)
        wr[i] = round_to(w[i], s->bf16);
    w = wr;
    for (size_t i = 0; i < T * B * s->input; i++)
        in[i] = round_to(x[i], s->bf16);
    for (size_t l = 0; l < s->layers; l++) {
        size_t K = l ? H : s->input, oih, ohh, obi, obh;
        xs_krn_lstm_offsets(s, l, &oih, &ohh, &obi, &obh);
        memset(h, 0, B * H * sizeof *h);
        memset(c, 0, B * H * sizeof *c);
        for (size_t t = 0; t < T; t++)
            for (size_t b = 0; b < B; b++) {
                const float *xt = in + (t * B + b) * K, *hb = h + b * H;
                for (size_t j = 0; j < 4 * H; j++) {
                    double v = (double)w[obi + j] + w[obh + j];
                    for (size_t p = 0; p < K; p++)
                        v += (double)w[oih + j * K + p] * xt[p];
                    for (size_t p = 0; p < H; p++)
                        v += (double)w[ohh + j * H + p] * hb[p];
                    a[j] = v;
                }
                for (size_t j = 0; j < H; j++) {
                    double ig = sigmoid_d(a[j]), fg = sigmoid_d(a[H + j]);
                    double gg = tanh(a[2 * H + j]), og = sigmoid_d(a[3 * H + j]);
                    double cn = fg * c[b * H + j] + ig * gg;
                    c[b * H + j] = (float)cn;
                    y[(t * B + b) * H + j] = round_to((float)(og * tanh(cn)), s->bf16);
                }
                /* this sample's new h, for the next step */
                memcpy(h + b * H, y + (t * B + b) * H, H * sizeof *h);
            }
        memcpy(in, y, T * B * H * sizeof *in); /* the next layer's input */
    }
    free(in), free(h), free(c), free(a), free(wr);
}

void xs_krn_lstm_free(xs_krn_lstm *k)
{
    if (!k)
        return;
    for (size_t l = 0; l < k->s.layers; l++) {
        if (k->packed)
            free(k->packed[l]);
        if (k->packed16)
            free(k->packed16[l]);
        if (k->wih16)
            free(k->wih16[l]);
        if (k->bias)
            free(k->bias[l]);
    }
    free(k->packed);
    free(k->packed16);
    free(k->wih16);
    free(k->in16);
    free(k->bias);
    free(k->gates);
    free(k->out[0]);
    free(k->out[1]);
    free(k->cell);
    free(k->zero);
    free(k);
}

/* Item i's H x COLS panel: row p holds weight_hh[g H + 8 i + u][p] at
 * column g 8 + u, zero past the last unit; in fp32 (dst) or bf16 (dst16).
 * A bf16 row stores each 16 columns c..c+15 as c, c+8, c+1, c+9, ...: read
 * as eight 32-bit words, a shift left by 16 gives columns c..c+7 as fp32
 * and a mask of the high halves c+8..c+15, two plain vector ALU operations
 * where widening 16-bit lanes takes the one shuffle port (measured: half
 * the fp32 step's speed on Sapphire Rapids with vpmovzxwd). */
static size_t bf16_slot(size_t col)
{
    size_t c = col % 16;
    return col - c + (c < 8 ? 2 * c : 2 * (c - 8) + 1);
}

static void pack_layer(const xs_krn_lstm_shape *s, const float *whh, size_t items, float *dst,
                       xs_bf16 *dst16)
{
    size_t H = s->hidden;
    for (size_t i = 0; i < items; i++)
        for (size_t p = 0; p < H; p++)
            for (size_t col = 0; col < COLS; col++) {
                size_t g = col / U, j = i * U + col % U, at = (i * H + p) * COLS + col;
                float v = j < H ? whh[(g * H + j) * H + p] : 0;
                if (dst16)
                    dst16[at - col + bf16_slot(col)] = xs_f32_to_bf16(v);
                else
                    dst[at] = v;
            }
}

xs_krn_lstm *xs_krn_lstm_alloc(const xs_krn_lstm_shape *s, const float *w)
{
    if (!s->layers || !s->input || !s->hidden || !s->seq || !s->batch || !w)
        return NULL;
    xs_krn_lstm *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->s = *s;
    k->w = w;
    k->item = pick_item(s->bf16);
    size_t H = s->hidden, TB = s->seq * s->batch, widest = s->input > H ? s->input : H;
    k->items = (H + U - 1) / U;
    k->packed = calloc(s->layers, sizeof *k->packed);
    k->packed16 = calloc(s->layers, sizeof *k->packed16);
    k->wih16 = calloc(s->layers, sizeof *k->wih16);
    k->in16 = s->bf16 ? malloc(TB * widest * sizeof *k->in16) : NULL;
    k->bias = calloc(s->layers, sizeof *k->bias);
    k->gates = calloc(TB * 4 * H, sizeof *k->gates);
    k->out[0] = calloc(TB * H, sizeof(float));
    k->out[1] = calloc(TB * H, sizeof(float));
    k->cell = calloc(s->batch * H, sizeof *k->cell);
    k->zero = calloc(s->batch * H, sizeof *k->zero);
    int ok = k->packed && k->packed16 && k->wih16 && (k->in16 || !s->bf16) && k->bias &&
             k->gates && k->out[0] && k->out[1] && k->cell && k->zero;
    for (size_t l = 0; ok && l < s->layers; l++) {
        size_t oih, ohh, obi, obh, K = l ? H : s->input, panel = k->items * H * COLS;
        xs_krn_lstm_offsets(s, l, &oih, &ohh, &obi, &obh);
        if (s->bf16) {
            k->packed16[l] = malloc(panel * sizeof(xs_bf16));
            k->wih16[l] = malloc(4 * H * K * sizeof(xs_bf16));
            ok = k->packed16[l] && k->wih16[l];
        } else {
            k->packed[l] = malloc(panel * sizeof(float));
            ok = k->packed[l] != NULL;
        }
        k->bias[l] = malloc(4 * H * sizeof(float));
        if (!(ok = ok && k->bias[l]))
            break;
        pack_layer(s, w + ohh, k->items, k->packed[l], k->packed16[l]);
        for (size_t j = 0; s->bf16 && j < 4 * H * K; j++)
            k->wih16[l][j] = xs_f32_to_bf16(w[oih + j]);
        for (size_t j = 0; j < 4 * H; j++)
            k->bias[l][j] = round_to(w[obi + j], s->bf16) + round_to(w[obh + j], s->bf16);
    }
    if (!ok) {
        xs_krn_lstm_free(k);
        return NULL;
    }
    return k;
}

typedef float v8 __attribute__((vector_size(32)));

static inline float sigmoidf(float x)
{
    return 1 / (1 + expf(-x));
}

/* tanh through the one exponential: tanh x = 2 sigmoid(2x) - 1 (absolute
 * error a few float roundings, far inside the reference check's 1e-4) */
static inline float tanh_f(float x)
{
    return 2 * sigmoidf(2 * x) - 1;
}

/* Work item i of one step for sample b: its gate columns from the
 * projected input g (batch x 4H), the summed bias and h_prev times the
 * packed weights, then the cell and the new h of its units. The 32
 * accumulators stay in vector registers (2 AVX-512, 4 AVX2 or 8 SSE ones)
 * while the panel streams past, one row of 32 per element of h. */
typedef uint32_t u32x8 __attribute__((vector_size(32)));

/* widen16 reads a pair of bf16 columns as one 32-bit word: the first in
 * its low half, which holds on little-endian targets only (x86-64 and
 * aarch64 as Linux runs them) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "kernels/cpu/lstm.c: the bf16 step assumes a little-endian target"
#endif

/* 16 bf16 columns stored as bf16_slot lays them out, as two vectors of 8
 * fp32 (through pointers: a vector return value would change the ABI
 * between the baseline and the AVX2 builds) */
static inline __attribute__((always_inline)) void widen16(const xs_bf16 *x, v8 *lo, v8 *hi)
{
    u32x8 w, a, b;
    memcpy(&w, x, sizeof w);
    a = w << 16;
    b = w & 0xffff0000u;
    memcpy(lo, &a, sizeof *lo);
    memcpy(hi, &b, sizeof *hi);
}

static inline __attribute__((always_inline)) void item_body(const xs_krn_lstm *k,
                                                            const void *panel,
                                                            const float *bias, const float *g,
                                                            const float *hp, float *hn, size_t i,
                                                            size_t b, const int bf16)
{
    size_t H = k->s.hidden;
    float acc[COLS];
    for (size_t col = 0; col < COLS; col++) {
        size_t gi = col / U, j = i * U + col % U;
        acc[col] = j < H ? g[b * 4 * H + gi * H + j] + bias[gi * H + j] : 0;
    }
    /* four 8-wide vectors (GCC/clang vector extensions: split into what
     * the target has), so the accumulators live in registers */
    v8 a0, a1, a2, a3;
    memcpy(&a0, acc, sizeof a0);
    memcpy(&a1, acc + 8, sizeof a1);
    memcpy(&a2, acc + 16, sizeof a2);
    memcpy(&a3, acc + 24, sizeof a3);
    const float *h = hp + b * H;
    for (size_t p = 0; p < H; p++) {
        v8 hv = (v8){0} + h[p], w0, w1, w2, w3;
        if (bf16) {
            const xs_bf16 *wrow = (const xs_bf16 *)panel + p * COLS;
            widen16(wrow, &w0, &w1);
            widen16(wrow + 16, &w2, &w3);
        } else {
            const float *wrow = (const float *)panel + p * COLS;
            memcpy(&w0, wrow, sizeof w0);
            memcpy(&w1, wrow + 8, sizeof w1);
            memcpy(&w2, wrow + 16, sizeof w2);
            memcpy(&w3, wrow + 24, sizeof w3);
        }
        a0 += hv * w0;
        a1 += hv * w1;
        a2 += hv * w2;
        a3 += hv * w3;
    }
    memcpy(acc, &a0, sizeof a0);
    memcpy(acc + 8, &a1, sizeof a1);
    memcpy(acc + 16, &a2, sizeof a2);
    memcpy(acc + 24, &a3, sizeof a3);
    for (size_t u = 0; u < U && i * U + u < H; u++) {
        size_t j = i * U + u;
        float ig = sigmoidf(acc[u]), fg = sigmoidf(acc[U + u]);
        float gg = tanh_f(acc[2 * U + u]), og = sigmoidf(acc[3 * U + u]);
        float cn = fg * k->cell[b * H + j] + ig * gg;
        k->cell[b * H + j] = cn;
        hn[b * H + j] = round_to(og * tanh_f(cn), bf16);
    }
}

static void item_portable(const xs_krn_lstm *k, const void *panel, const float *bias,
                          const float *g, const float *hp, float *hn, size_t i, size_t b)
{
    item_body(k, panel, bias, g, hp, hn, i, b, 0);
}

static void item16_portable(const xs_krn_lstm *k, const void *panel, const float *bias,
                            const float *g, const float *hp, float *hn, size_t i, size_t b)
{
    item_body(k, panel, bias, g, hp, hn, i, b, 1);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* the same loops compiled for AVX2 + FMA, taken when CPUID has them */
__attribute__((target("avx2,fma"))) static void item_avx2(const xs_krn_lstm *k,
                                                           const void *panel, const float *bias,
                                                           const float *g, const float *hp,
                                                           float *hn, size_t i, size_t b)
{
    item_body(k, panel, bias, g, hp, hn, i, b, 0);
}

__attribute__((target("avx2,fma"))) static void item16_avx2(const xs_krn_lstm *k,
                                                             const void *panel,
                                                             const float *bias, const float *g,
                                                             const float *hp, float *hn,
                                                             size_t i, size_t b)
{
    item_body(k, panel, bias, g, hp, hn, i, b, 1);
}
#define HAVE_AVX2_PATH 1
#endif

/* The AVX2 + FMA build where the kernel set in force has them (XS_CPU_ISA
 * caps it like the other kernels) */
static item_fn pick_item(int bf16)
{
#ifdef HAVE_AVX2_PATH
    if (xs_cpu_features_get()->avx2)
        return bf16 ? item16_avx2 : item_avx2;
#endif
    return bf16 ? item16_portable : item_portable;
}

const char *xs_krn_lstm_path(void)
{
    return pick_item(0) == item_portable ? "portable" : "avx2 fma";
}

/* One time step of layer l: hn = cell(g + bias + hp W_hh^T), one region. */
static void step(xs_krn_lstm *k, size_t l, const float *g, const float *hp, float *hn, int nt)
{
    const float *packed = k->packed[l], *bias = k->bias[l];
    const xs_bf16 *packed16 = k->packed16[l];
    size_t H = k->s.hidden, B = k->s.batch, items = k->items;
    item_fn item = k->item;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t i = 0; i < items; i++) {
        const void *panel = packed16 ? (const void *)(packed16 + i * H * COLS)
                                     : (const void *)(packed + i * H * COLS);
        for (size_t b = 0; b < B; b++)
            item(k, panel, bias, g, hp, hn, i, b);
    }
}

void xs_krn_lstm_step(xs_krn_lstm *k, int threads)
{
    step(k, 0, k->gates, k->zero, k->out[0], threads > 0 ? threads : 1);
}

void xs_krn_lstm_run(xs_krn_lstm *k, const float *x, float *y, const int *threads,
                     double *group_s)
{
    const xs_krn_lstm_shape *s = &k->s;
    size_t H = s->hidden, B = s->batch, T = s->seq;
    const float *in = x;
    for (size_t l = 0; l < s->layers; l++) {
        size_t K = l ? H : s->input, oih, ohh, obi, obh;
        xs_krn_lstm_offsets(s, l, &oih, &ohh, &obi, &obh);
        int t_in = threads[2 * l] > 0 ? threads[2 * l] : 1;
        int t_rec = threads[2 * l + 1] > 0 ? threads[2 * l + 1] : 1;
        float *out = l + 1 == s->layers ? y : k->out[l % 2];
        double t0 = omp_get_wtime();
        if (s->bf16) {
            xs_krn_cast_bf16(in, k->in16, T * B * K, t_in);
            xs_krn_gemm_bf16(0, 1, T * B, 4 * H, K, k->in16, k->wih16[l], k->gates, 0, t_in);
        } else {
            xs_krn_gemm_f32(0, 1, T * B, 4 * H, K, in, k->w + oih, k->gates, 0, t_in);
        }
        double t1 = omp_get_wtime();
        memset(k->cell, 0, B * H * sizeof *k->cell);
        for (size_t t = 0; t < T; t++)
            step(k, l, k->gates + t * B * 4 * H, t ? out + (t - 1) * B * H : k->zero,
                 out + t * B * H, t_rec);
        double t2 = omp_get_wtime();
        if (group_s) {
            group_s[2 * l] += t1 - t0;
            group_s[2 * l + 1] += t2 - t1;
        }
        in = out;
    }
}
