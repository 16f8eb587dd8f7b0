/* test_kernels_bert.c — the small BERT training step: its gradients against
 * central finite differences of its loss, bf16 against fp32, the loss going
 * down over a few Adan steps on a learnable synthetic task, and the trace
 * recording every kernel call with the FLOPs of the model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "bert.h"
#include "cpu_params.h"
#include "test_util.h"

static void batch(const xs_bert_cfg *c, int32_t *tok, int32_t *tgt, unsigned seed)
{
    unsigned r = seed;
    for (int i = 0; i < c->batch * c->seq; i++) {
        r = r * 1664525u + 1013904223u;
        tok[i] = (int32_t)((r >> 8) % (unsigned)c->vocab);
        /* a token-to-token map: learnable, not trivially the identity */
        tgt[i] = (tok[i] * 7 + 3) % c->vocab;
    }
}

static const xs_bert_cfg tiny = {.layers = 2, .hidden = 16, .heads = 2, .ffn = 24, .vocab = 11,
                                 .seq = 5, .batch = 2, .dropout = 0.0f, .bf16 = 0,
                                 .threads = 2};

/* At BERT's initialisation (weights 0.02) the gradients inside the layers
 * are ~1e-6, below what fp32 finite differences resolve; the check runs at
 * a random point with weights of order 0.3 instead, where they are 1e-4 to
 * 1e-1 everywhere. Every 20th parameter is checked. */
static void gradients_should_match_finite_differences(void)
{
    xs_bert *b = xs_bert_create(&tiny, 7);
    CU_ASSERT_FATAL(b != NULL);
    int32_t tok[10], tgt[10];
    batch(&tiny, tok, tgt, 3);
    size_t n;
    float *p = xs_bert_param_data(b, &n);
    unsigned r = 99;
    for (size_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        p[i] = (float)((r >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    xs_bert_forward_backward(b, tok, tgt, NULL);
    float *grad = malloc(n * sizeof *grad);
    CU_ASSERT_FATAL(grad != NULL);
    memcpy(grad, xs_bert_grad_data(b), n * sizeof *grad);
    double worst = 0;
    int checked = 0, sizeable = 0;
    const float eps = 1e-2f;
    for (size_t i = 0; i < n; i += 20) {
        float keep = p[i];
        p[i] = keep + eps;
        double up = xs_bert_forward_backward(b, tok, tgt, NULL);
        p[i] = keep - eps;
        double dn = xs_bert_forward_backward(b, tok, tgt, NULL);
        p[i] = keep;
        double fd = (up - dn) / (2.0 * eps);
        worst = fmax(worst, fabs(fd - grad[i]) / (2e-5 + 1e-2 * fabs(fd)));
        checked++;
        sizeable += fabs(fd) > 1e-4;
    }
    CU_ASSERT(sizeable > checked / 2); /* the check is not vacuous */
    CU_ASSERT(worst <= 1.0);
    if (getenv("XS_TEST_VERBOSE") || worst > 1.0)
        fprintf(stderr, "\nbert gradient check: %d parameters, worst error %.2f of the tolerance\n",
                checked, worst);
    free(grad);
    xs_bert_free(b);
}

static void bf16_gradients_should_point_where_fp32_ones_do(void)
{
    xs_bert_cfg c = tiny;
    c.hidden = 32;
    c.ffn = 64;
    c.seq = 16;
    xs_bert *b32 = xs_bert_create(&c, 9);
    c.bf16 = 1;
    xs_bert *b16 = xs_bert_create(&c, 9);
    CU_ASSERT_FATAL(b32 && b16);
    int32_t tok[32], tgt[32];
    batch(&c, tok, tgt, 5);
    double l32 = xs_bert_forward_backward(b32, tok, tgt, NULL);
    double l16 = xs_bert_forward_backward(b16, tok, tgt, NULL);
    CU_ASSERT(fabs(l32 - l16) < 1e-2 * l32);
    size_t n;
    xs_bert_param_data(b32, &n);
    const float *g32 = xs_bert_grad_data(b32), *g16 = xs_bert_grad_data(b16);
    double dot = 0, a = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        dot += (double)g32[i] * g16[i];
        a += (double)g32[i] * g32[i];
        bb += (double)g16[i] * g16[i];
    }
    double cosine = dot / sqrt(a * bb);
    CU_ASSERT(cosine > 0.99);
    CU_ASSERT(cosine < 1.0 - 1e-9); /* bf16 really rounded something */
    xs_bert_free(b32);
    xs_bert_free(b16);
}

static void loss_should_fall_over_a_few_steps(void)
{
    for (int bf16 = 0; bf16 <= 1; bf16++) {
        xs_bert_cfg c = {.layers = 2, .hidden = 64, .heads = 4, .ffn = 128, .vocab = 32,
                         .seq = 16, .batch = 4, .dropout = 0.1f, .bf16 = bf16, .threads = 2};
        xs_bert *b = xs_bert_create(&c, 11);
        CU_ASSERT_FATAL(b != NULL);
        xs_adan_hparams h = xs_adan_defaults(3e-3f, 0.01f);
        int32_t tok[64], tgt[64];
        double first = 0, last = 0;
        for (int s = 0; s < 30; s++) {
            batch(&c, tok, tgt, 100u + (unsigned)s); /* a fresh batch each step */
            double l = xs_bert_step(b, tok, tgt, &h, NULL);
            CU_ASSERT(isfinite(l));
            if (s == 0)
                first = l;
            last = l;
        }
        /* starts near ln 32 = 3.47 (small random weights) */
        CU_ASSERT(fabs(first - log(32.0)) < 0.3);
        CU_ASSERT(last < 0.5 * first);
        if (!(last < 0.5 * first))
            fprintf(stderr, "\nbert %s: loss %.3f -> %.3f\n", bf16 ? "bf16" : "fp32", first, last);
        xs_bert_free(b);
    }
}

static void trace_should_record_every_gemm_with_its_flops(void)
{
    xs_bert_cfg c = tiny;
    c.bf16 = 1;
    xs_bert *b = xs_bert_create(&c, 1);
    CU_ASSERT_FATAL(b != NULL);
    int32_t tok[10], tgt[10];
    batch(&c, tok, tgt, 1);
    xs_bert_trace t = {0};
    xs_adan_hparams h = xs_adan_defaults(1e-3f, 0);
    xs_bert_step(b, tok, tgt, &h, &t);
    double T = c.batch * c.seq, H = c.hidden, F = c.ffn, V = c.vocab, S = c.seq,
           BA = c.batch * c.heads;
    /* per layer forward 4 h^2 T + 2 h f T (x2 for FLOPs) plus attention
     * 2 B a s^2 d; backward twice that; the head 3 x 2 T h V */
    double layer = 2 * T * (4 * H * H + 2 * H * F) + 2 * 2 * BA * S * S * (H / c.heads);
    double expect = c.layers * 3 * layer + 3 * 2 * T * H * V;
    double flops = 0, total = 0;
    int gemms = 0, casts = 0, optim = 0;
    for (size_t i = 0; i < t.n; i++) {
        total += t.ops[i].time_s;
        CU_ASSERT(t.ops[i].time_s >= 0);
        if (!strcmp(t.ops[i].fn, "gemm")) {
            gemms++;
            flops += t.ops[i].flops;
            CU_ASSERT_STRING_EQUAL(t.ops[i].dtype, "bf16");
        }
        else /* every other kernel is one the CPU cost model knows */
            CU_ASSERT(xs_cpu_fn_index(t.ops[i].fn) >= 0);
        casts += !strcmp(t.ops[i].fn, "cast");
        optim += !strcmp(t.ops[i].fn, "adan");
    }
    CU_ASSERT_DOUBLE_EQUAL(flops, expect, 1e-6 * expect);
    /* forward 4 + 2 BA per layer, backward 8 + 4 BA, the head 3 */
    CU_ASSERT_EQUAL(gemms, c.layers * (12 + 6 * (int)BA) + 3);
    CU_ASSERT_EQUAL(casts, 2 * gemms); /* every bf16 GEMM casts its two operands */
    CU_ASSERT_EQUAL(optim, 1);
    /* per layer qkv 3h^2+3h, out h^2+h, FFN 2hf+f+h, two LayerNorms 4h; word
     * and position tables (V+S)h; the head Vh+V: 2 x 1960 + 256 + 187 */
    CU_ASSERT_EQUAL(xs_bert_params(b), 4363u);
    CU_ASSERT(total > 0);
    xs_bert_trace_free(&t);
    xs_bert_free(b);
}

static void bad_configurations_should_be_refused(void)
{
    xs_bert_cfg c = tiny;
    c.heads = 3; /* 16 not divisible by 3 */
    CU_ASSERT_PTR_NULL(xs_bert_create(&c, 1));
    c = tiny;
    c.dropout = 1.0f;
    CU_ASSERT_PTR_NULL(xs_bert_create(&c, 1));
    c = tiny;
    c.vocab = 1;
    CU_ASSERT_PTR_NULL(xs_bert_create(&c, 1));
    c = tiny;
    c.hidden = 1 << 20;
    c.heads = 1;
    c.vocab = 1 << 20; /* 2^40 parameters: refused before any allocation */
    CU_ASSERT_PTR_NULL(xs_bert_create(&c, 1));
}

int tu_add_kernels_bert_suite(void)
{
    CU_pSuite s = CU_add_suite("kernels_bert", NULL, NULL);
    return !s ||
           !CU_add_test(s, "gradients_should_match_finite_differences",
                        gradients_should_match_finite_differences) ||
           !CU_add_test(s, "bf16_gradients_should_point_where_fp32_ones_do",
                        bf16_gradients_should_point_where_fp32_ones_do) ||
           !CU_add_test(s, "loss_should_fall_over_a_few_steps", loss_should_fall_over_a_few_steps) ||
           !CU_add_test(s, "trace_should_record_every_gemm_with_its_flops",
                        trace_should_record_every_gemm_with_its_flops) ||
           !CU_add_test(s, "bad_configurations_should_be_refused",
                        bad_configurations_should_be_refused);
}
