/* test_kernels_layer.c — the Transformer layer kernels: the timed versions
 * against their references, and the references' backward passes against
 * central finite differences of their forward passes (so a wrong formula in
 * both would still be caught). Widths are odd on purpose. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpu_features.h"
#include "kernel_sets.h"
#include "layer_ops.h"
#include "test_util.h"

#define ROWS 7
#define WIDTH 37
#define N (ROWS * WIDTH)

static unsigned rng = 2024;
static float frand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f; /* [-1, 1) */
}

static void fill(float *x, size_t n, float scale, float offset)
{
    for (size_t i = 0; i < n; i++)
        x[i] = offset + scale * frand();
}

/* max |a - b| / (abs_tol + rel_tol |b|) over n values: <= 1 passes */
static double worst(const float *a, const float *b, size_t n, double abs_tol, double rel_tol)
{
    double w = 0;
    for (size_t i = 0; i < n; i++)
        w = fmax(w, fabs((double)a[i] - b[i]) / (abs_tol + rel_tol * fabs((double)b[i])));
    return w;
}

/* The scalar objective L = sum(w . y) for a forward function of x; its
 * gradient with respect to x is what the backward pass returns given dy = w. */
typedef void (*fwd_fn)(const float *x, float *y, void *ctx);

static double objective(fwd_fn f, const float *x, const float *w, void *ctx)
{
    float y[N];
    f(x, y, ctx);
    double s = 0;
    for (int i = 0; i < N; i++)
        s += (double)w[i] * y[i];
    return s;
}

/* Checks dx against central differences at every element. */
static double fd_worst(fwd_fn f, const float *x0, const float *w, const float *dx, void *ctx)
{
    float x[N];
    memcpy(x, x0, sizeof x);
    double wst = 0;
    const float eps = 1e-2f;
    for (int i = 0; i < N; i++) {
        float keep = x[i];
        x[i] = keep + eps;
        double up = objective(f, x, w, ctx);
        x[i] = keep - eps;
        double dn = objective(f, x, w, ctx);
        x[i] = keep;
        double fd = (up - dn) / (2.0 * eps);
        wst = fmax(wst, fabs(fd - dx[i]) / (3e-4 + 1e-2 * fabs(fd)));
    }
    return wst;
}

/* ---- LayerNorm ---------------------------------------------------------- */

static float ln_gamma[WIDTH], ln_beta[WIDTH];

static void ln_forward(const float *x, float *y, void *ctx)
{
    float mean[ROWS], rstd[ROWS];
    (void)ctx;
    xs_krn_layernorm_fwd_ref(x, ln_gamma, ln_beta, y, mean, rstd, ROWS, WIDTH);
}

static void layernorm_should_normalise_and_match_its_reference(void)
{
    static float x[N], y1[N], y2[N];
    float m1[ROWS], r1[ROWS], m2[ROWS], r2[ROWS];
    fill(x, N, 3.0f, 5.0f);
    for (int i = 0; i < WIDTH; i++) {
        ln_gamma[i] = 1.0f;
        ln_beta[i] = 0.0f;
    }
    xs_krn_layernorm_fwd_ref(x, ln_gamma, ln_beta, y1, m1, r1, ROWS, WIDTH);
    for (int r = 0; r < ROWS; r++) {
        double s = 0, ss = 0;
        for (int i = 0; i < WIDTH; i++) {
            s += y1[r * WIDTH + i];
            ss += (double)y1[r * WIDTH + i] * y1[r * WIDTH + i];
        }
        CU_ASSERT(fabs(s / WIDTH) < 1e-5);
        CU_ASSERT(fabs(ss / WIDTH - 1.0) < 1e-3);
    }
    fill(ln_gamma, WIDTH, 0.5f, 1.0f);
    fill(ln_beta, WIDTH, 0.5f, 0.0f);
    xs_krn_layernorm_fwd_ref(x, ln_gamma, ln_beta, y1, m1, r1, ROWS, WIDTH);
    xs_krn_layernorm_fwd(x, ln_gamma, ln_beta, y2, m2, r2, ROWS, WIDTH, 2);
    CU_ASSERT(worst(y2, y1, N, 1e-6, 1e-5) <= 1);
    CU_ASSERT(worst(m2, m1, ROWS, 1e-6, 1e-5) <= 1);
    CU_ASSERT(worst(r2, r1, ROWS, 1e-6, 1e-5) <= 1);
}

static void layernorm_backward_should_be_the_derivative_of_forward(void)
{
    static float x[N], w[N], y[N], dx1[N], dx2[N];
    float mean[ROWS], rstd[ROWS], dg1[WIDTH] = {0}, db1[WIDTH] = {0}, dg2[WIDTH] = {0},
                                  db2[WIDTH] = {0};
    fill(x, N, 2.0f, 0.5f);
    fill(w, N, 1.0f, 0.0f);
    fill(ln_gamma, WIDTH, 0.5f, 1.0f);
    fill(ln_beta, WIDTH, 0.5f, 0.0f);
    xs_krn_layernorm_fwd_ref(x, ln_gamma, ln_beta, y, mean, rstd, ROWS, WIDTH);
    xs_krn_layernorm_bwd_ref(w, x, ln_gamma, mean, rstd, dx1, dg1, db1, ROWS, WIDTH);
    CU_ASSERT(fd_worst(ln_forward, x, w, dx1, NULL) <= 1);
    xs_krn_layernorm_bwd(w, x, ln_gamma, mean, rstd, dx2, dg2, db2, ROWS, WIDTH, 2);
    CU_ASSERT(worst(dx2, dx1, N, 1e-6, 1e-5) <= 1);
    CU_ASSERT(worst(dg2, dg1, WIDTH, 1e-5, 1e-5) <= 1);
    CU_ASSERT(worst(db2, db1, WIDTH, 1e-5, 1e-5) <= 1);
    /* dbeta is the column sum of dy; dgamma that of dy . xhat */
    for (int i = 0; i < WIDTH; i++) {
        double sb = 0, sg = 0;
        for (int r = 0; r < ROWS; r++) {
            sb += w[r * WIDTH + i];
            sg += w[r * WIDTH + i] * (y[r * WIDTH + i] - ln_beta[i]) / ln_gamma[i];
        }
        CU_ASSERT(fabs(db1[i] - sb) < 1e-5);
        CU_ASSERT(fabs(dg1[i] - sg) < 1e-4 * (1 + fabs(sg)));
    }
}

/* ---- softmax ---------------------------------------------------------------- */

static void sm_forward(const float *x, float *y, void *ctx)
{
    xs_krn_softmax_fwd_ref(x, y, *(const float *)ctx, ROWS, WIDTH);
}

static void softmax_should_sum_to_one_and_differentiate(void)
{
    static float x[N], w[N], y1[N], y2[N], dx1[N], dx2[N];
    float scale = 0.7f;
    fill(x, N, 4.0f, 0.0f);
    x[3] = 80.0f; /* a large logit: the max subtraction keeps exp finite */
    xs_krn_softmax_fwd_ref(x, y1, scale, ROWS, WIDTH);
    xs_krn_softmax_fwd(x, y2, scale, ROWS, WIDTH, 2);
    for (int r = 0; r < ROWS; r++) {
        double s = 0;
        for (int i = 0; i < WIDTH; i++)
            s += y1[r * WIDTH + i];
        CU_ASSERT(fabs(s - 1.0) < 1e-5);
    }
    CU_ASSERT(y1[3] > 0.99f && isfinite(y1[3]));
    CU_ASSERT(worst(y2, y1, N, 1e-7, 1e-5) <= 1);
    x[3] = 0.3f;
    fill(w, N, 1.0f, 0.0f);
    xs_krn_softmax_fwd_ref(x, y1, scale, ROWS, WIDTH);
    xs_krn_softmax_bwd_ref(w, y1, dx1, scale, ROWS, WIDTH);
    CU_ASSERT(fd_worst(sm_forward, x, w, dx1, &scale) <= 1);
    xs_krn_softmax_bwd(w, y1, dx2, scale, ROWS, WIDTH, 2);
    CU_ASSERT(worst(dx2, dx1, N, 1e-7, 1e-5) <= 1);
}

/* ---- GELU ------------------------------------------------------------------ */

static void gelu_forward(const float *x, float *y, void *ctx)
{
    (void)ctx;
    xs_krn_gelu_fwd_ref(x, y, N);
}

static void gelu_should_hit_known_values_and_differentiate(void)
{
    /* x Phi(x) from the normal CDF: Phi(1) = 0.841344746, Phi(-2) = 0.022750132 */
    float x[3] = {1.0f, -2.0f, 0.0f}, y[3];
    xs_krn_gelu_fwd_ref(x, y, 3);
    CU_ASSERT_DOUBLE_EQUAL(y[0], 0.841344746, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(y[1], -0.045500264, 1e-6);
    CU_ASSERT_EQUAL(y[2], 0.0f);
    static float xs[N], w[N], y1[N], y2[N], dx1[N], dx2[N];
    fill(xs, N, 3.0f, 0.0f);
    fill(w, N, 1.0f, 0.0f);
    xs_krn_gelu_fwd_ref(xs, y1, N);
    xs_krn_gelu_fwd(xs, y2, N, 2);
    CU_ASSERT(worst(y2, y1, N, 1e-7, 4e-7) <= 1);
    xs_krn_gelu_bwd_ref(w, xs, dx1, N);
    CU_ASSERT(fd_worst(gelu_forward, xs, w, dx1, NULL) <= 1);
    xs_krn_gelu_bwd(w, xs, dx2, N, 2);
    CU_ASSERT(worst(dx2, dx1, N, 1e-7, 4e-7) <= 1);
}

/* ---- bias, residual, dropout ------------------------------------------------- */

static void bias_and_add_should_match_their_definitions(void)
{
    static float y[N], y0[N], b[WIDTH], db1[WIDTH], db2[WIDTH], a[N], s[N];
    fill(y0, N, 1.0f, 0.0f);
    fill(b, WIDTH, 1.0f, 0.0f);
    memcpy(y, y0, sizeof y);
    xs_krn_bias_add(y, b, ROWS, WIDTH, 2);
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(y[i], y0[i] + b[i % WIDTH]);
    for (int i = 0; i < WIDTH; i++)
        db1[i] = db2[i] = 0.25f; /* gradients accumulate */
    xs_krn_bias_grad_ref(y0, db1, ROWS, WIDTH);
    xs_krn_bias_grad(y0, db2, ROWS, WIDTH, 2);
    CU_ASSERT(memcmp(db1, db2, sizeof db1) == 0); /* same order of sums */
    double col = 0.25;
    for (int r = 0; r < ROWS; r++)
        col += y0[r * WIDTH + 4];
    CU_ASSERT_DOUBLE_EQUAL(db1[4], col, 1e-5);
    fill(a, N, 1.0f, 0.0f);
    xs_krn_add(a, y0, s, N, 2);
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(s[i], a[i] + y0[i]);
}

static void dropout_should_keep_the_expected_fraction_and_scale(void)
{
    enum { M = 20000 };
    static float x[M], y1[M], y2[M], dx[M];
    static uint8_t k1[M], k2[M];
    float p = 0.1f;
    for (int i = 0; i < M; i++)
        x[i] = 1.0f + (float)(i % 5);
    xs_krn_dropout_fwd_ref(x, y1, k1, p, 42, M);
    xs_krn_dropout_fwd(x, y2, k2, p, 42, M, 2);
    CU_ASSERT(memcmp(y1, y2, sizeof y1) == 0);
    CU_ASSERT(memcmp(k1, k2, sizeof k1) == 0);
    int kept = 0;
    for (int i = 0; i < M; i++) {
        kept += k1[i];
        CU_ASSERT_EQUAL(y1[i], k1[i] ? x[i] / (1.0f - p) : 0.0f);
    }
    /* binomial(20000, 0.9): sd 42; 5 sd either side */
    CU_ASSERT(abs(kept - 18000) < 212);
    /* another seed, another mask */
    xs_krn_dropout_fwd(x, y2, k2, p, 43, M, 2);
    CU_ASSERT(memcmp(k1, k2, sizeof k1) != 0);
    xs_krn_dropout_bwd(x, k1, dx, p, M, 2);
    CU_ASSERT(memcmp(dx, y1, sizeof dx) == 0); /* the same mask and scale */
}

static void bf16_cast_should_give_the_reference_bits_on_every_kernel_set(void)
{
    enum { M = 1000 };
    static float x[M];
    static xs_bf16 ref[M], fast[M];
    const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x00000001u, /* zero, -zero, smallest subnormal */
        0x007fffffu, 0x3f808000u, 0x3f818000u, /* largest subnormal, ties to even down / up */
        0x7f800000u, 0xff800000u, 0x7fc00001u, /* infinities, a quiet NaN */
        0x7f800001u, 0x7f7fffffu, 0x3f80ffffu  /* a signalling NaN, max float, rounds up */
    };
    for (int i = 0; i < M; i++)
        x[i] = frand() * (float)(1 << (i % 20));
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        memcpy(&x[100 + i], &special[i], 4);
    xs_krn_cast_bf16_ref(x, ref, M);
    CU_ASSERT_EQUAL(ref[104], 0x3f80); /* 1.00390625 ties to even: down */
    CU_ASSERT_EQUAL(ref[105], 0x3f82); /* 1.01171875 ties to even: up */
    CU_ASSERT_EQUAL(ref[111], 0x3f81);
    CU_ASSERT((ref[109] & 0x7f80) == 0x7f80 && (ref[109] & 0x7f)); /* NaN stays NaN */
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set)) {
        memset(fast, 0, sizeof fast);
        xs_krn_cast_bf16(x, fast, M, 2);
        CU_ASSERT(memcmp(fast, ref, sizeof ref) == 0);
    }
}

/* Every timed layer kernel once, into out (B2 values): what the builds
 * for each vector ISA must agree on. */
enum { B2 = 13 * 1003 };
static void run_layer_kernels(const float *x, const float *x2, float *out)
{
    enum { R = 13, W = 1003 };
    static float y[B2], dx[B2], mean[R], rstd[R], gb[2 * W];
    static uint8_t keep[B2];
    float *o = out;
    const float *gamma = x2, *beta = x2 + W;
    memset(gb, 0, sizeof gb);
    xs_krn_layernorm_fwd(x, gamma, beta, y, mean, rstd, R, W, 2);
    memcpy(o, y, sizeof y);
    xs_krn_layernorm_bwd(x2, x, gamma, mean, rstd, dx, gb, gb + W, R, W, 2);
    for (int i = 0; i < B2; i++)
        o[i] += dx[i] + gb[i % (2 * W)];
    xs_krn_softmax_fwd(x, y, 0.3f, R, W, 2);
    xs_krn_softmax_bwd(x2, y, dx, 0.3f, R, W, 2);
    for (int i = 0; i < B2; i++)
        o[i] = o[i] * 0.5f + y[i] + dx[i];
    xs_krn_gelu_fwd(x, y, B2, 2);
    xs_krn_gelu_bwd(x2, x, dx, B2, 2);
    for (int i = 0; i < B2; i++)
        o[i] = o[i] * 0.5f + y[i] + dx[i];
    memcpy(y, x, sizeof y);
    xs_krn_bias_add(y, x2, R, W, 2);
    memset(gb, 0, sizeof gb);
    xs_krn_bias_grad(x, gb, R, W, 2);
    xs_krn_add(x, x2, dx, B2, 2);
    for (int i = 0; i < B2; i++)
        o[i] = o[i] * 0.5f + y[i] + dx[i] + gb[i % W];
    xs_krn_dropout_fwd(x, y, keep, 0.2f, 7, B2, 2);
    xs_krn_dropout_bwd(x2, keep, dx, 0.2f, B2, 2);
    for (int i = 0; i < B2; i++)
        o[i] = o[i] * 0.5f + y[i] + dx[i];
}

/* The layer kernels are one source compiled per vector ISA (and the
 * base ISA): with the same operations in the same order, every build
 * gives the bits the portable one gives. */
static void layer_kernels_should_agree_bit_for_bit_on_every_kernel_set(void)
{
    static float x[B2], x2[B2], base[B2], got[B2];
    fill(x, B2, 2, 0);
    fill(x2, B2, 1, 0.5f);
    tu_set_use(XS_ISA_PORTABLE);
    CU_ASSERT_STRING_EQUAL(xs_krn_layer_ops_path(), "base");
    run_layer_kernels(x, x2, base);
    int sets = 0;
    for (int set = tu_set_first(); set >= 0; set = tu_set_next(set)) {
        run_layer_kernels(x, x2, got);
        int same = memcmp(got, base, sizeof got) == 0;
        if (!same)
            fprintf(stderr, "\n  layer kernels on %s (%s) differ from the portable build\n",
                    xs_cpu_isa_name((xs_cpu_isa)set), xs_krn_layer_ops_path());
        CU_ASSERT(same);
        sets++;
    }
    CU_ASSERT(sets >= 1);
}

static void head_layouts_should_round_trip(void)
{
    enum { B = 2, S = 3, A = 2, D = 5, H = A * D, T = B * S };
    float qkv[T * 3 * H], q[T * H], k[T * H], v[T * H], back[T * 3 * H], rows[T * H],
        heads[T * H];
    for (int i = 0; i < T * 3 * H; i++)
        qkv[i] = (float)i;
    xs_krn_heads_split(qkv, q, k, v, B, S, A, D, 2);
    /* batch 1, head 1, token 2, element 3 of k: row 1*3+2, column h + 1*5 + 3 */
    CU_ASSERT_EQUAL(k[((1 * A + 1) * S + 2) * D + 3], qkv[(1 * S + 2) * 3 * H + H + 1 * D + 3]);
    xs_krn_heads_merge(q, k, v, back, B, S, A, D, 2);
    CU_ASSERT(memcmp(back, qkv, sizeof qkv) == 0);
    xs_krn_heads_to_rows(q, rows, B, S, A, D, 2);
    xs_krn_rows_to_heads(rows, heads, B, S, A, D, 2);
    CU_ASSERT(memcmp(heads, q, sizeof q) == 0);
    for (int t = 0; t < T; t++) /* rows of q are the first h columns of qkv */
        CU_ASSERT(memcmp(rows + t * H, qkv + t * 3 * H, H * sizeof(float)) == 0);
    float z[37];
    for (int i = 0; i < 37; i++)
        z[i] = 1;
    xs_krn_zero(z, 37, 2);
    for (int i = 0; i < 37; i++)
        CU_ASSERT_EQUAL(z[i], 0.0f);
}

/* ---- embedding, cross-entropy ------------------------------------------------ */

static void embedding_should_gather_and_scatter_back(void)
{
    enum { V = 5, S = 3, T = 6, H = 4 };
    float wte[V * H], wpe[S * H], out[T * H], dte[V * H] = {0}, dpe[S * H] = {0};
    int32_t tok[T] = {4, 0, 4, 1, 2, 4};
    fill(wte, V * H, 1.0f, 0.0f);
    fill(wpe, S * H, 1.0f, 0.0f);
    xs_krn_embedding_fwd(tok, wte, wpe, out, T, S, H, 2);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < H; i++)
            CU_ASSERT_EQUAL(out[t * H + i], wte[tok[t] * H + i] + wpe[(t % S) * H + i]);
    float ones[T * H];
    for (int i = 0; i < T * H; i++)
        ones[i] = 1.0f;
    xs_krn_embedding_bwd(tok, ones, dte, dpe, T, S, H, 2);
    CU_ASSERT_EQUAL(dte[4 * H], 3.0f); /* token 4 appears three times */
    CU_ASSERT_EQUAL(dte[3 * H], 0.0f);
    CU_ASSERT_EQUAL(dpe[1 * H + 2], 2.0f); /* each position twice in T = 2 S */
    float rte[V * H] = {0}, rpe[S * H] = {0}, d[T * H];
    fill(d, T * H, 1.0f, 0.0f);
    memset(dte, 0, sizeof dte);
    memset(dpe, 0, sizeof dpe);
    xs_krn_embedding_bwd(tok, d, dte, dpe, T, S, H, 2);
    xs_krn_embedding_bwd_ref(tok, d, rte, rpe, T, S, H);
    CU_ASSERT(memcmp(dte, rte, sizeof rte) == 0); /* same order of sums */
    CU_ASSERT(memcmp(dpe, rpe, sizeof rpe) == 0);
}

static int32_t ce_target[ROWS];

static void ce_forward(const float *x, float *y, void *ctx)
{
    /* the loss placed in y[0], everything else 0, so sum(w y) = w0 loss */
    static float d[N];
    (void)ctx;
    memset(y, 0, N * sizeof *y);
    y[0] = (float)xs_krn_cross_entropy(x, ce_target, d, ROWS, WIDTH, 1);
}

static void cross_entropy_should_give_log_v_and_its_gradient(void)
{
    static float x[N], d[N], w[N];
    for (int r = 0; r < ROWS; r++)
        ce_target[r] = (r * 5) % WIDTH;
    memset(x, 0, sizeof x);
    double l = xs_krn_cross_entropy(x, ce_target, d, ROWS, WIDTH, 2);
    CU_ASSERT_DOUBLE_EQUAL(l, log((double)WIDTH), 1e-6);
    fill(x, N, 2.0f, 0.0f);
    xs_krn_cross_entropy(x, ce_target, d, ROWS, WIDTH, 2);
    memset(w, 0, sizeof w);
    w[0] = 1.0f;
    CU_ASSERT(fd_worst(ce_forward, x, w, d, NULL) <= 1);
    double rowsum = 0;
    for (int i = 0; i < WIDTH; i++)
        rowsum += d[i];
    CU_ASSERT(fabs(rowsum) < 1e-6); /* softmax minus one-hot sums to 0 */
}

int tu_add_kernels_layer_suite(void)
{
    CU_pSuite s = CU_add_suite("kernels_layer", NULL, NULL);
    return !s ||
           !CU_add_test(s, "layernorm_should_normalise_and_match_its_reference",
                        layernorm_should_normalise_and_match_its_reference) ||
           !CU_add_test(s, "layernorm_backward_should_be_the_derivative_of_forward",
                        layernorm_backward_should_be_the_derivative_of_forward) ||
           !CU_add_test(s, "softmax_should_sum_to_one_and_differentiate",
                        softmax_should_sum_to_one_and_differentiate) ||
           !CU_add_test(s, "gelu_should_hit_known_values_and_differentiate",
                        gelu_should_hit_known_values_and_differentiate) ||
           !CU_add_test(s, "bias_and_add_should_match_their_definitions",
                        bias_and_add_should_match_their_definitions) ||
           !CU_add_test(s, "bf16_cast_should_give_the_reference_bits_on_every_kernel_set",
                        bf16_cast_should_give_the_reference_bits_on_every_kernel_set) ||
           !CU_add_test(s, "layer_kernels_should_agree_bit_for_bit_on_every_kernel_set",
                        layer_kernels_should_agree_bit_for_bit_on_every_kernel_set) ||
           !CU_add_test(s, "dropout_should_keep_the_expected_fraction_and_scale",
                        dropout_should_keep_the_expected_fraction_and_scale) ||
           !CU_add_test(s, "head_layouts_should_round_trip", head_layouts_should_round_trip) ||
           !CU_add_test(s, "embedding_should_gather_and_scatter_back",
                        embedding_should_gather_and_scatter_back) ||
           !CU_add_test(s, "cross_entropy_should_give_log_v_and_its_gradient",
                        cross_entropy_should_give_log_v_and_its_gradient);
}
