/* bert.c — see bert.h. Layout: activations [tokens x width] row-major;
 * attention per (batch, head) on [seq x head_dim] slices copied out of the
 * fused QKV projection. All memory is carved out of three allocations
 * (parameters, optimizer state, activations). */
#include "bert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_gemm.h"
#include "layer_ops.h"

typedef struct {
    float *wqkv, *bqkv, *wo, *bo, *g1, *b1, *w1, *c1, *w2, *c2, *g2, *b2;
} layer_params;

typedef struct {
    float *x;                 /* layer input [T x h] */
    float *qkv;               /* [T x 3h] */
    float *q, *k, *v;         /* [B a s d] */
    float *p;                 /* softmax [B a s s] */
    float *pd;                /* after dropout */
    uint8_t *pkeep;
    float *ctxh;              /* [B a s d] */
    float *ctx;               /* [T x h] */
    float *o, *od;            /* output projection, after dropout */
    uint8_t *okeep;
    float *r1, *mean1, *rstd1, *h1; /* residual sum, LN1 stats, LN1 out */
    float *f, *g;             /* FFN pre-activation, GELU */
    float *f2, *f2d;
    uint8_t *fkeep;
    float *r2, *mean2, *rstd2; /* layer output = next layer's x */
} layer_acts;

/* gradient work buffers of the backward pass */
typedef struct {
    float *dx[2];             /* layer output/input gradients, alternating [T x h] */
    float *dr, *dh1, *dctx, *dproj; /* [T x h] */
    float *dqkv;              /* [T x 3h] */
    float *dg, *df;           /* [T x f] */
    float *dctxh, *dq, *dk, *dv; /* [B a s d] */
    float *dP;                /* [B a s s] */
} grad_bufs;

struct xs_bert {
    xs_bert_cfg c;
    size_t T, nparams;
    float *params, *grads, *gprev, *m, *v, *n; /* optimizer state, contiguous */
    float *wte, *wpe, *wout, *bout;
    float *dwte, *dwpe, *dwout, *dbout;
    layer_params *lp, *lg; /* parameters and their gradients */
    layer_acts *la;
    float *out;            /* final hidden [T x h] */
    float *scores;         /* attention scores before softmax [B a s s] */
    float *logits, *dlogits;
    grad_bufs gb;
    xs_bf16 *ca, *cb;      /* bf16 casts of GEMM operands */
    float *arena;
    int step;
    uint64_t seed;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void record(xs_bert_trace *t, const char *name, const char *fn, const char *dtype,
                   long long m, long long n, long long k, int ta, int tb, double elems,
                   double flops, double bytes, double seconds)
{
    if (!t)
        return;
    if (t->n == t->cap) { /* doubled when full (the kernels see no library header) */
        size_t cap = t->cap ? 2 * t->cap : 256;
        xs_bert_op *grown = realloc(t->ops, cap * sizeof *grown);
        if (!grown)
            return; /* the trace is a best effort; the step itself goes on */
        t->ops = grown;
        t->cap = cap;
    }
    xs_bert_op *o = &t->ops[t->n++];
    snprintf(o->name, sizeof o->name, "%s", name);
    o->fn = fn;
    o->dtype = dtype;
    o->m = m;
    o->n = n;
    o->k = k;
    o->ta = ta;
    o->tb = tb;
    o->elems = elems;
    o->flops = flops;
    o->bytes = bytes;
    o->time_s = seconds;
}

void xs_bert_trace_free(xs_bert_trace *t)
{
    free(t->ops);
    t->ops = NULL;
    t->n = t->cap = 0;
}

/* ---- timed kernel wrappers ------------------------------------------------------ */

typedef struct {
    xs_bert *b;
    xs_bert_trace *t;
} ctx;

/* C = op(A) op(B) (+C): in bf16 the operands are cast first (recorded as
 * casts), as mixed precision does */
static void mm(ctx *x, const char *name, int ta, int tb, size_t m, size_t n, size_t k,
               const float *A, const float *B, float *C, int acc)
{
    xs_bert *b = x->b;
    int nt = b->c.threads;
    double flops = 2.0 * (double)m * (double)n * (double)k;
    if (b->c.bf16) {
        double t0 = now(), ea = (double)(m * k), eb = (double)(k * n);
        xs_krn_cast_bf16(A, b->ca, m * k, nt);
        double tm = now();
        xs_krn_cast_bf16(B, b->cb, k * n, nt);
        double t1 = now();
        record(x->t, "cast", "cast", "fp32", 0, 0, 0, 0, 0, ea, 0, XS_KRN_B_CAST * ea, tm - t0);
        record(x->t, "cast", "cast", "fp32", 0, 0, 0, 0, 0, eb, 0, XS_KRN_B_CAST * eb, t1 - tm);
        xs_krn_gemm_bf16(ta, tb, m, n, k, b->ca, b->cb, C, acc, nt);
        record(x->t, name, "gemm", "bf16", (long long)m, (long long)n, (long long)k, ta, tb, 0,
               flops, 2.0 * (double)(m * k + k * n) + 4.0 * (double)(m * n) * (acc ? 2 : 1),
               now() - t1);
    } else {
        double t0 = now();
        xs_krn_gemm_f32(ta, tb, m, n, k, A, B, C, acc, nt);
        record(x->t, name, "gemm", "fp32", (long long)m, (long long)n, (long long)k, ta, tb, 0,
               flops, 4.0 * (double)(m * k + k * n + m * n * (acc ? 2 : 1)), now() - t0);
    }
}

/* Time one kernel call of elems elements moving bpe bytes each. */
#define TIMED(x, name, fn, elems, bpe, call)                                                  \
    do {                                                                                      \
        double t0_ = now(), e_ = (elems);                                                     \
        call;                                                                                 \
        record((x)->t, name, fn, "fp32", 0, 0, 0, 0, 0, e_, 0, (bpe) * e_, now() - t0_);      \
    } while (0)

/* ---- construction -------------------------------------------------------------- */

static uint64_t rng_state;
static float gauss(void)
{
    /* Box-Muller on a 64-bit LCG: deterministic initial weights */
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    double u1 = ((rng_state >> 11) + 1.0) / 9007199254740993.0;
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    double u2 = (rng_state >> 11) / 9007199254740992.0;
    return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

/* Arrays are laid out by offsets first (base NULL: only count), then
 * carved from one allocation; every array starts on a 64-byte line. */
typedef struct {
    float *base;
    size_t used; /* floats */
} arena;

static float *carve(arena *a, size_t count)
{
    float *p = a->base ? a->base + a->used : NULL;
    a->used += (count + 15) / 16 * 16;
    return p;
}

static uint8_t *carve_bytes(arena *a, size_t count)
{
    return (uint8_t *)carve(a, (count + 3) / 4);
}

static size_t layout_params(xs_bert *b, float *base, float *grads)
{
    size_t h = (size_t)b->c.hidden, f = (size_t)b->c.ffn, V = (size_t)b->c.vocab,
           S = (size_t)b->c.seq;
    arena p = {base, 0}, g = {grads, 0};
    for (int l = 0; l < b->c.layers; l++) {
        layer_params *P = &b->lp[l], *G = &b->lg[l];
        size_t sizes[12] = {3 * h * h, 3 * h, h * h, h, h, h, f * h, f, h * f, h, h, h};
        float **pf[12] = {&P->wqkv, &P->bqkv, &P->wo, &P->bo, &P->g1, &P->b1,
                          &P->w1,   &P->c1,   &P->w2, &P->c2, &P->g2, &P->b2};
        float **gf[12] = {&G->wqkv, &G->bqkv, &G->wo, &G->bo, &G->g1, &G->b1,
                          &G->w1,   &G->c1,   &G->w2, &G->c2, &G->g2, &G->b2};
        for (int i = 0; i < 12; i++) {
            *pf[i] = carve(&p, sizes[i]);
            *gf[i] = carve(&g, sizes[i]);
        }
    }
    b->wte = carve(&p, V * h);
    b->dwte = carve(&g, V * h);
    b->wpe = carve(&p, S * h);
    b->dwpe = carve(&g, S * h);
    b->wout = carve(&p, V * h);
    b->dwout = carve(&g, V * h);
    b->bout = carve(&p, V);
    b->dbout = carve(&g, V);
    return p.used;
}

static size_t layout_acts(xs_bert *b, float *base)
{
    const xs_bert_cfg *c = &b->c;
    size_t h = (size_t)c->hidden, f = (size_t)c->ffn, V = (size_t)c->vocab, S = (size_t)c->seq,
           T = b->T, P = (size_t)c->batch * (size_t)c->heads * S * S;
    arena a = {base, 0};
    for (int l = 0; l < c->layers; l++) {
        layer_acts *A = &b->la[l];
        A->x = carve(&a, T * h);
        A->qkv = carve(&a, T * 3 * h);
        A->q = carve(&a, T * h);
        A->k = carve(&a, T * h);
        A->v = carve(&a, T * h);
        A->p = carve(&a, P);
        A->pd = carve(&a, P);
        A->pkeep = carve_bytes(&a, P);
        A->ctxh = carve(&a, T * h);
        A->ctx = carve(&a, T * h);
        A->o = carve(&a, T * h);
        A->od = carve(&a, T * h);
        A->okeep = carve_bytes(&a, T * h);
        A->r1 = carve(&a, T * h);
        A->mean1 = carve(&a, T);
        A->rstd1 = carve(&a, T);
        A->h1 = carve(&a, T * h);
        A->f = carve(&a, T * f);
        A->g = carve(&a, T * f);
        A->f2 = carve(&a, T * h);
        A->f2d = carve(&a, T * h);
        A->fkeep = carve_bytes(&a, T * h);
        A->r2 = carve(&a, T * h);
        A->mean2 = carve(&a, T);
        A->rstd2 = carve(&a, T);
    }
    b->out = carve(&a, T * h);
    b->scores = carve(&a, P);
    b->logits = carve(&a, T * V);
    b->dlogits = carve(&a, T * V);
    grad_bufs *g = &b->gb;
    g->dx[0] = carve(&a, T * h);
    g->dx[1] = carve(&a, T * h);
    g->dr = carve(&a, T * h);
    g->dh1 = carve(&a, T * h);
    g->dctx = carve(&a, T * h);
    g->dproj = carve(&a, T * h);
    g->dqkv = carve(&a, T * 3 * h);
    g->dg = carve(&a, T * f);
    g->df = carve(&a, T * f);
    g->dctxh = carve(&a, T * h);
    g->dq = carve(&a, T * h);
    g->dk = carve(&a, T * h);
    g->dv = carve(&a, T * h);
    g->dP = carve(&a, P);
    return a.used;
}

static size_t max3(size_t a, size_t b, size_t c)
{
    size_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* Sizes are products of configuration values: refuse any that would
 * overflow (or not fit in memory anyway). */
static int sizes_fit(const xs_bert_cfg *c)
{
    double h = c->hidden, f = c->ffn, V = c->vocab, S = c->seq, B = c->batch, L = c->layers;
    double T = B * S, acts = L * (T * (20 * h + 2 * f) + 2.5 * B * c->heads * S * S) + 2 * T * V;
    double params = 6 * (L * (4 * h * h + 2 * h * f) + 2 * V * h + S * h);
    return acts + params < 1e10;
}

xs_bert *xs_bert_create(const xs_bert_cfg *cfg, uint64_t seed)
{
    const xs_bert_cfg *c = cfg;
    if (c->layers < 1 || c->hidden < 1 || c->heads < 1 || c->hidden % c->heads || c->ffn < 1 ||
        c->vocab < 2 || c->seq < 1 || c->batch < 1 || !(c->dropout >= 0 && c->dropout < 1) ||
        !sizes_fit(c))
        return NULL;
    xs_bert *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->c = *c;
    if (b->c.threads < 1)
        b->c.threads = 1;
    size_t h = (size_t)c->hidden, f = (size_t)c->ffn, V = (size_t)c->vocab, S = (size_t)c->seq,
           L = (size_t)c->layers;
    b->T = (size_t)c->batch * S;
    b->lp = calloc(L, sizeof *b->lp);
    b->lg = calloc(L, sizeof *b->lg);
    b->la = calloc(L, sizeof *b->la);
    if (!b->lp || !b->lg || !b->la) {
        xs_bert_free(b);
        return NULL;
    }
    size_t total = layout_params(b, NULL, NULL), acts = layout_acts(b, NULL);
    /* the largest GEMM operand either side: activations (T rows) or weights */
    size_t cast_max = max3(b->T * max3(3 * h, f, V), h * max3(3 * h, f, V), S * S);
    b->params = aligned_alloc(64, 6 * total * sizeof(float));
    b->arena = aligned_alloc(64, acts * sizeof(float));
    b->ca = aligned_alloc(64, (cast_max + 32) / 32 * 32 * sizeof(xs_bf16));
    b->cb = aligned_alloc(64, (cast_max + 32) / 32 * 32 * sizeof(xs_bf16));
    if (!b->params || !b->arena || !b->ca || !b->cb) {
        xs_bert_free(b);
        return NULL;
    }
    memset(b->params, 0, 6 * total * sizeof(float));
    memset(b->arena, 0, acts * sizeof(float));
    b->nparams = total;
    b->grads = b->params + total;
    b->gprev = b->grads + total;
    b->m = b->gprev + total;
    b->v = b->m + total;
    b->n = b->v + total;
    layout_params(b, b->params, b->grads);
    layout_acts(b, b->arena);
    rng_state = seed ? seed : 1;
    b->seed = seed;
    /* weights N(0, 0.02), biases 0, LayerNorm gains 1 (BERT's initialisation) */
    for (size_t i = 0; i < total; i++)
        b->params[i] = 0.02f * gauss();
    for (size_t l = 0; l < L; l++) {
        layer_params *P = &b->lp[l];
        for (size_t i = 0; i < h; i++) {
            P->g1[i] = P->g2[i] = 1;
            P->b1[i] = P->b2[i] = P->bo[i] = P->c2[i] = 0;
        }
        memset(P->bqkv, 0, 3 * h * sizeof(float));
        memset(P->c1, 0, f * sizeof(float));
    }
    memset(b->bout, 0, V * sizeof(float));
    return b;
}

void xs_bert_free(xs_bert *b)
{
    if (!b)
        return;
    free(b->params);
    free(b->lp);
    free(b->lg);
    free(b->la);
    free(b->arena);
    free(b->ca);
    free(b->cb);
    free(b);
}

size_t xs_bert_params(const xs_bert *b)
{
    size_t h = (size_t)b->c.hidden, f = (size_t)b->c.ffn, V = (size_t)b->c.vocab;
    return (size_t)b->c.layers * (4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h) +
           (V + (size_t)b->c.seq) * h + V * h + V;
}

/* ---- the step ------------------------------------------------------------------- */

/* input in la[l].x; output to out_rows (the next layer's x, or b->out) */
static void layer_forward(ctx *x, size_t l, float *out_rows)
{
    xs_bert *b = x->b;
    const xs_bert_cfg *c = &b->c;
    layer_params *P = &b->lp[l];
    layer_acts *A = &b->la[l];
    size_t h = (size_t)c->hidden, f = (size_t)c->ffn, T = b->T, S = (size_t)c->seq,
           B = (size_t)c->batch, H = (size_t)c->heads, d = h / H, BA = B * H;
    int nt = c->threads;
    float p = c->dropout, scale = 1.0f / sqrtf((float)d);
    uint64_t seed = b->seed * 1000003u + (uint64_t)b->step * 131u + l * 17u;
    mm(x, "attn.qkv", 0, 1, T, 3 * h, h, A->x, P->wqkv, A->qkv, 0);
    TIMED(x, "attn.qkv.bias", "bias", (double)(T * 3 * h), XS_KRN_B_BIAS,
          xs_krn_bias_add(A->qkv, P->bqkv, T, 3 * h, nt));
    TIMED(x, "attn.heads", "copy", (double)(T * 3 * h), XS_KRN_B_COPY,
          xs_krn_heads_split(A->qkv, A->q, A->k, A->v, B, S, H, d, nt));
    for (size_t i = 0; i < BA; i++)
        mm(x, "attn.scores", 0, 1, S, S, d, A->q + i * S * d, A->k + i * S * d,
           b->scores + i * S * S, 0);
    TIMED(x, "attn.softmax", "softmax", (double)(BA * S * S), XS_KRN_B_SOFTMAX,
          xs_krn_softmax_fwd(b->scores, A->p, scale, BA * S, S, nt));
    TIMED(x, "attn.dropout", "dropout", (double)(BA * S * S), XS_KRN_B_DROPOUT,
          xs_krn_dropout_fwd(A->p, A->pd, A->pkeep, p, seed, BA * S * S, nt));
    for (size_t i = 0; i < BA; i++)
        mm(x, "attn.context", 0, 0, S, d, S, A->pd + i * S * S, A->v + i * S * d,
           A->ctxh + i * S * d, 0);
    TIMED(x, "attn.merge", "copy", (double)(T * h), XS_KRN_B_COPY,
          xs_krn_heads_to_rows(A->ctxh, A->ctx, B, S, H, d, nt));
    mm(x, "attn.out", 0, 1, T, h, h, A->ctx, P->wo, A->o, 0);
    TIMED(x, "attn.out.bias", "bias", (double)(T * h), XS_KRN_B_BIAS,
          xs_krn_bias_add(A->o, P->bo, T, h, nt));
    TIMED(x, "attn.dropout_out", "dropout", (double)(T * h), XS_KRN_B_DROPOUT,
          xs_krn_dropout_fwd(A->o, A->od, A->okeep, p, seed + 1, T * h, nt));
    TIMED(x, "attn.residual", "add", (double)(T * h), XS_KRN_B_ADD,
          xs_krn_add(A->od, A->x, A->r1, T * h, nt));
    TIMED(x, "attn.ln", "layernorm", (double)(T * h), XS_KRN_B_LAYERNORM,
          xs_krn_layernorm_fwd(A->r1, P->g1, P->b1, A->h1, A->mean1, A->rstd1, T, h, nt));
    mm(x, "ffn.up", 0, 1, T, f, h, A->h1, P->w1, A->f, 0);
    TIMED(x, "ffn.up.bias", "bias", (double)(T * f), XS_KRN_B_BIAS,
          xs_krn_bias_add(A->f, P->c1, T, f, nt));
    TIMED(x, "ffn.gelu", "gelu", (double)(T * f), XS_KRN_B_GELU,
          xs_krn_gelu_fwd(A->f, A->g, T * f, nt));
    mm(x, "ffn.down", 0, 1, T, h, f, A->g, P->w2, A->f2, 0);
    TIMED(x, "ffn.down.bias", "bias", (double)(T * h), XS_KRN_B_BIAS,
          xs_krn_bias_add(A->f2, P->c2, T, h, nt));
    TIMED(x, "ffn.dropout", "dropout", (double)(T * h), XS_KRN_B_DROPOUT,
          xs_krn_dropout_fwd(A->f2, A->f2d, A->fkeep, p, seed + 2, T * h, nt));
    TIMED(x, "ffn.residual", "add", (double)(T * h), XS_KRN_B_ADD,
          xs_krn_add(A->f2d, A->h1, A->r2, T * h, nt));
    TIMED(x, "ffn.ln", "layernorm", (double)(T * h), XS_KRN_B_LAYERNORM,
          xs_krn_layernorm_fwd(A->r2, P->g2, P->b2, out_rows, A->mean2, A->rstd2, T, h, nt));
}

/* dout: gradient of the layer's output; leaves the input's gradient in din */
static void layer_backward(ctx *x, size_t l, const float *dout, float *din)
{
    xs_bert *b = x->b;
    const xs_bert_cfg *c = &b->c;
    layer_params *P = &b->lp[l], *G = &b->lg[l];
    layer_acts *A = &b->la[l];
    size_t h = (size_t)c->hidden, f = (size_t)c->ffn, T = b->T, S = (size_t)c->seq,
           B = (size_t)c->batch, H = (size_t)c->heads, d = h / H, BA = B * H;
    int nt = c->threads;
    float p = c->dropout, scale = 1.0f / sqrtf((float)d);
    grad_bufs *gb = &b->gb;
    float *dr2 = gb->dr, *dg = gb->dg, *df = gb->df, *dh1 = gb->dh1, *dctx = gb->dctx;
    /* LN2: the residual's gradient reaches both the FFN branch and h1 */
    TIMED(x, "ffn.ln.bwd", "layernorm_bwd", (double)(T * h), XS_KRN_B_LAYERNORM_BWD,
          xs_krn_layernorm_bwd(dout, A->r2, P->g2, A->mean2, A->rstd2, dr2, G->g2, G->b2, T, h,
                               nt));
    TIMED(x, "ffn.dropout.bwd", "dropout_bwd", (double)(T * h), XS_KRN_B_DROPOUT_BWD,
          xs_krn_dropout_bwd(dr2, A->fkeep, din, p, T * h, nt));
    TIMED(x, "ffn.down.db", "bias_grad", (double)(T * h), XS_KRN_B_BIAS_GRAD,
          xs_krn_bias_grad(din, G->c2, T, h, nt));
    mm(x, "ffn.down.dX", 0, 0, T, f, h, din, P->w2, dg, 0);
    mm(x, "ffn.down.dW", 1, 0, h, f, T, din, A->g, G->w2, 1);
    TIMED(x, "ffn.gelu.bwd", "gelu_bwd", (double)(T * f), XS_KRN_B_GELU_BWD,
          xs_krn_gelu_bwd(dg, A->f, df, T * f, nt));
    TIMED(x, "ffn.up.db", "bias_grad", (double)(T * f), XS_KRN_B_BIAS_GRAD,
          xs_krn_bias_grad(df, G->c1, T, f, nt));
    mm(x, "ffn.up.dX", 0, 0, T, h, f, df, P->w1, dh1, 0);
    mm(x, "ffn.up.dW", 1, 0, f, h, T, df, A->h1, G->w1, 1);
    TIMED(x, "ffn.x.grad_sum", "add", (double)(T * h), XS_KRN_B_ADD,
          xs_krn_add(dh1, dr2, dh1, T * h, nt));
    /* LN1 */
    float *dr1 = dr2;
    TIMED(x, "attn.ln.bwd", "layernorm_bwd", (double)(T * h), XS_KRN_B_LAYERNORM_BWD,
          xs_krn_layernorm_bwd(dh1, A->r1, P->g1, A->mean1, A->rstd1, dr1, G->g1, G->b1, T, h,
                               nt));
    float *dotmp = gb->dproj;
    TIMED(x, "attn.dropout_out.bwd", "dropout_bwd", (double)(T * h), XS_KRN_B_DROPOUT_BWD,
          xs_krn_dropout_bwd(dr1, A->okeep, dotmp, p, T * h, nt));
    TIMED(x, "attn.out.db", "bias_grad", (double)(T * h), XS_KRN_B_BIAS_GRAD,
          xs_krn_bias_grad(dotmp, G->bo, T, h, nt));
    mm(x, "attn.out.dX", 0, 0, T, h, h, dotmp, P->wo, dctx, 0);
    mm(x, "attn.out.dW", 1, 0, h, h, T, dotmp, A->ctx, G->wo, 1);
    /* attention */
    float *dctxh = gb->dctxh, *dq = gb->dq, *dk = gb->dk, *dv = gb->dv, *dP = gb->dP;
    TIMED(x, "attn.merge.bwd", "copy", (double)(T * h), XS_KRN_B_COPY,
          xs_krn_rows_to_heads(dctx, dctxh, B, S, H, d, nt));
    for (size_t i = 0; i < BA; i++) {
        mm(x, "attn.context.dP", 0, 1, S, S, d, dctxh + i * S * d, A->v + i * S * d,
           dP + i * S * S, 0);
        mm(x, "attn.context.dV", 1, 0, S, d, S, A->pd + i * S * S, dctxh + i * S * d,
           dv + i * S * d, 0);
    }
    TIMED(x, "attn.dropout.bwd", "dropout_bwd", (double)(BA * S * S), XS_KRN_B_DROPOUT_BWD,
          xs_krn_dropout_bwd(dP, A->pkeep, dP, p, BA * S * S, nt));
    TIMED(x, "attn.softmax.bwd", "softmax_bwd", (double)(BA * S * S), XS_KRN_B_SOFTMAX_BWD,
          xs_krn_softmax_bwd(dP, A->p, dP, scale, BA * S, S, nt));
    for (size_t i = 0; i < BA; i++) {
        mm(x, "attn.scores.dQ", 0, 0, S, d, S, dP + i * S * S, A->k + i * S * d, dq + i * S * d,
           0);
        mm(x, "attn.scores.dK", 1, 0, S, d, S, dP + i * S * S, A->q + i * S * d, dk + i * S * d,
           0);
    }
    float *dqkv = gb->dqkv;
    TIMED(x, "attn.heads.bwd", "copy", (double)(T * 3 * h), XS_KRN_B_COPY,
          xs_krn_heads_merge(dq, dk, dv, dqkv, B, S, H, d, nt));
    TIMED(x, "attn.qkv.db", "bias_grad", (double)(T * 3 * h), XS_KRN_B_BIAS_GRAD,
          xs_krn_bias_grad(dqkv, G->bqkv, T, 3 * h, nt));
    mm(x, "attn.qkv.dX", 0, 0, T, h, 3 * h, dqkv, P->wqkv, din, 0);
    mm(x, "attn.qkv.dW", 1, 0, 3 * h, h, T, dqkv, A->x, G->wqkv, 1);
    TIMED(x, "attn.x.grad_sum", "add", (double)(T * h), XS_KRN_B_ADD,
          xs_krn_add(din, dr1, din, T * h, nt));
}

double xs_bert_forward_backward(xs_bert *b, const int32_t *tokens, const int32_t *targets,
                                xs_bert_trace *trace)
{
    ctx x = {b, trace};
    const xs_bert_cfg *c = &b->c;
    size_t h = (size_t)c->hidden, V = (size_t)c->vocab, T = b->T, S = (size_t)c->seq,
           L = (size_t)c->layers;
    int nt = c->threads;
    TIMED(&x, "grad.zero", "zero", (double)b->nparams, XS_KRN_B_ZERO,
          xs_krn_zero(b->grads, b->nparams, nt));
    /* forward */
    TIMED(&x, "embed", "embed", (double)(T * h), XS_KRN_B_EMBED,
          xs_krn_embedding_fwd(tokens, b->wte, b->wpe, b->la[0].x, T, S, h, nt));
    for (size_t l = 0; l < L; l++)
        layer_forward(&x, l, l + 1 < L ? b->la[l + 1].x : b->out);
    mm(&x, "head.logits", 0, 1, T, V, h, b->out, b->wout, b->logits, 0);
    TIMED(&x, "head.bias", "bias", (double)(T * V), XS_KRN_B_BIAS,
          xs_krn_bias_add(b->logits, b->bout, T, V, nt));
    double loss;
    TIMED(&x, "head.loss", "xent", (double)(T * V), XS_KRN_B_XENT,
          loss = xs_krn_cross_entropy(b->logits, targets, b->dlogits, T, V, nt));
    /* backward */
    TIMED(&x, "head.db", "bias_grad", (double)(T * V), XS_KRN_B_BIAS_GRAD,
          xs_krn_bias_grad(b->dlogits, b->dbout, T, V, nt));
    float *dcur = b->gb.dx[0], *dnext = b->gb.dx[1];
    mm(&x, "head.dX", 0, 0, T, h, V, b->dlogits, b->wout, dcur, 0);
    mm(&x, "head.dW", 1, 0, V, h, T, b->dlogits, b->out, b->dwout, 1);
    for (size_t l = L; l-- > 0;) {
        layer_backward(&x, l, dcur, dnext);
        float *t = dcur;
        dcur = dnext;
        dnext = t;
    }
    TIMED(&x, "embed.bwd", "embed_bwd", (double)(T * h), XS_KRN_B_EMBED_BWD,
          xs_krn_embedding_bwd(tokens, dcur, b->dwte, b->dwpe, T, S, h, nt));
    return loss;
}

void xs_bert_update(xs_bert *b, const xs_adan_hparams *hp, xs_bert_trace *trace)
{
    ctx x = {b, trace};
    b->step++;
    /* one fused Adan over the whole parameter vector; Adan's first step
     * takes g_prev = g */
    if (b->step == 1)
        memcpy(b->gprev, b->grads, b->nparams * sizeof(float));
    TIMED(&x, "optimizer.adan", "adan", (double)b->nparams, XS_ADAN_FUSED_BYTES,
          xs_krn_adan_fused(hp, b->step, b->params, b->grads, b->gprev, b->m, b->v, b->n,
                            b->nparams, b->c.threads));
}

double xs_bert_step(xs_bert *b, const int32_t *tokens, const int32_t *targets,
                    const xs_adan_hparams *hp, xs_bert_trace *trace)
{
    double loss = xs_bert_forward_backward(b, tokens, targets, trace);
    xs_bert_update(b, hp, trace);
    return loss;
}

float *xs_bert_param_data(xs_bert *b, size_t *count)
{
    *count = b->nparams;
    return b->params;
}

const float *xs_bert_grad_data(const xs_bert *b)
{
    return b->grads;
}
