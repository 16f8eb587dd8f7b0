/* advise.c — see advise.h. Each candidate is the user's scenario plus a few
 * --set overrides, run through the same load -> workload -> predict path
 * as `xpusim predict`, so the advice and the prediction cannot disagree. */
#include "advise.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "scenario.h"

#define MAX_CANDIDATES 64
/* "b.s a multiple of a large power of two" (training-math.md); 128 rows is
 * the M of the common 128-wide tiles, so such token counts quantize cleanly. */
#define LARGE_POW2 128
#define MAX_USER_SETS 64
/* larger micro-batches at the same global batch offered, nearest first */
#define MAX_SAME_GLOBAL 8
/* the schema's bounds of train.batch and train.grad_accum (scenario.c) */
#define MAX_BATCH 1048576
#define MAX_GRAD_ACCUM 65536

/* What a candidate changes. One candidate of each combinable group at most
 * joins the combined row: those keep the optimisation as tuned (the global
 * batch, the model's shape). */
enum {
    G_SAME_GLOBAL, /* micro-batch x accumulation at the same global batch */
    G_PRECISION,   /* precision, AMP implementation */
    G_ATTENTION,
    G_KERNELS,
    G_OPTIMIZER,
    G_VOCAB,
    G_GLOBAL, /* a different global batch */
    G_SHAPE,  /* hidden, heads, FFN */
    G_COUNT
};
#define G_COMBINABLE G_GLOBAL /* groups below it combine */

typedef struct {
    xs_advice a;
    int group;
    char tag[64]; /* its name in the combined row */
} cand;

typedef struct {
    cand *c;
    size_t n;
} list;

typedef struct {
    const xs_device *dev;
    const char *path;
    const char *const *sets;
    int nsets;
} query;

const char *xs_advice_kind_name(int kind)
{
    return kind == XS_ADVICE_ARCHITECTURE ? "architecture" : "fine-tune";
}

/* Whether a candidate, predicted in j, can run at all: every candidate and
 * every combination passes here, and one answered 0 is never proposed. A
 * step whose peak device memory exceeds the device's (memory.h) cannot
 * start. */
static int admissible(const xs_job *j)
{
    return j->p.mem.fits;
}

/* Predict the scenario with extra overrides: samples/s, parameters, and
 * whether it is admissible. */
static int evaluate(const query *q, const char (*extra)[64], int nextra, double *sps,
                    double *params, int *ok, xs_error *err)
{
    const char *all[MAX_USER_SETS + XS_ADVICE_MAX_SETS];
    if (q->nsets > MAX_USER_SETS || nextra > XS_ADVICE_MAX_SETS)
        return xs_error_set(err, XS_EARG, "too many --set options");
    for (int i = 0; i < q->nsets; i++)
        all[i] = q->sets[i];
    for (int i = 0; i < nextra; i++)
        all[q->nsets + i] = extra[i];
    xs_job one;
    xs_job_init(&one);
    one.dev = *q->dev;
    int rc = xs_job_scenario_compact(&one, q->path, all, q->nsets + nextra, err);
    if (!rc)
        rc = xs_job_predict(&one, 0, err);
    if (!rc) {
        *sps = one.p.samples_per_s;
        *params = one.wl.params;
        *ok = admissible(&one);
    }
    xs_job_free(&one);
    return rc;
}

/* The next free slot of l, cleared, or NULL when l is full. */
static cand *slot(list *l, int group, int kind)
{
    if (l->n == MAX_CANDIDATES)
        return NULL;
    cand *c = &l->c[l->n];
    memset(c, 0, sizeof *c);
    c->group = group;
    c->a.kind = kind;
    return c;
}

__attribute__((format(printf, 2, 3))) static void put_set(cand *c, const char *fmt, ...)
{
    if (c->a.nsets == XS_ADVICE_MAX_SETS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->a.sets[c->a.nsets++], sizeof c->a.sets[0], fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void put_rule(cand *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->a.rule, sizeof c->a.rule, fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void put_change(cand *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->a.change, sizeof c->a.change, fmt, ap);
    va_end(ap);
}

static int same_sets(const xs_advice *x, const xs_advice *y)
{
    if (x->nsets != y->nsets)
        return 0;
    for (int i = 0; i < x->nsets; i++)
        if (strcmp(x->sets[i], y->sets[i]) != 0)
            return 0;
    return 1;
}

/* Keep the slot just filled unless the same overrides are there already. */
static void keep(list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (same_sets(&l->c[i].a, &l->c[l->n].a))
            return;
    l->n++;
}

static int64_t round_to(int64_t x, int64_t mult, int up)
{
    return up ? (x + mult - 1) / mult * mult : x / mult * mult;
}

static int64_t pow2_factor(int64_t x)
{
    return x & -x;
}

/* A micro-batch nb (with the scenario's accumulation) changing the global
 * batch: the optimisation's hyper-parameters were tuned for the old one. */
static void global_batch(const xs_scenario *s, list *l, int64_t nb, const char *why)
{
    const xs_train *t = &s->train;
    int64_t per = t->grad_accum * s->devices;
    cand *c = slot(l, G_GLOBAL, XS_ADVICE_FINETUNE);
    if (!c || nb < 1 || nb > MAX_BATCH || nb == t->batch)
        return;
    c->a.changes_global_batch = 1;
    put_set(c, "train.batch=%lld", (long long)nb);
    put_change(c, "micro-batch %lld -> %lld (global batch %lld -> %lld)", (long long)t->batch,
               (long long)nb, (long long)(t->batch * per), (long long)(nb * per));
    put_rule(c, "%s; a new global batch: retune the learning rate and warm-up", why);
    keep(l);
}

/* The same global batch as na micro-batches a step. */
static void same_global(const xs_scenario *s, list *l, int64_t na, const char *how)
{
    const xs_train *t = &s->train;
    int64_t g = t->batch * t->grad_accum, nb = g / na;
    cand *c = slot(l, G_SAME_GLOBAL, XS_ADVICE_FINETUNE);
    if (!c || g % na != 0 || nb > MAX_BATCH)
        return;
    put_set(c, "train.batch=%lld", (long long)nb);
    put_set(c, "train.grad_accum=%lld", (long long)na);
    put_change(c, "micro-batch %lld x %lld -> %lld x %lld", (long long)t->batch,
               (long long)t->grad_accum, (long long)nb, (long long)na);
    put_rule(c, "the same global batch %lld in %s", (long long)(g * s->devices), how);
    snprintf(c->tag, sizeof c->tag, "micro-batch %lld x %lld", (long long)nb, (long long)na);
    keep(l);
}

/* Micro-batch x gradient accumulation: at the same global batch (larger
 * micro-batches, nearest first, and the next smaller one, which needs less
 * memory), then a doubled micro-batch and one whose b x s is a multiple of
 * a large power of two, which change the global batch. */
static void batch_candidates(const xs_scenario *s, list *l)
{
    const xs_train *t = &s->train;
    int64_t b = t->batch, ga = t->grad_accum, g = b * ga, sq = t->seq;
    int offered = 0;
    for (int64_t na = ga - 1; na >= 1 && offered < MAX_SAME_GLOBAL; na--)
        if (g % na == 0 && g / na <= MAX_BATCH) {
            same_global(s, l, na, "fewer, larger micro-batches");
            offered++;
        }
    for (int64_t na = ga + 1; na <= MAX_GRAD_ACCUM && na <= g; na++)
        if (g % na == 0) {
            same_global(s, l, na, "smaller micro-batches: less memory");
            break;
        }
    global_batch(s, l, 2 * b, "twice the micro-batch");
    /* micro-batches whose b.s becomes a multiple of a large power of two,
     * offered only where b.s is not one already; within [b/2, 2b] */
    if (pow2_factor(b * sq) < LARGE_POW2) {
        int64_t lo = 0, hi = 0;
        for (int64_t nb = b - 1; nb >= (b + 1) / 2 && nb >= 1 && !lo; nb--)
            if (pow2_factor(nb * sq) >= LARGE_POW2)
                lo = nb;
        for (int64_t nb = b + 1; nb <= 2 * b && !hi; nb++)
            if (pow2_factor(nb * sq) >= LARGE_POW2)
                hi = nb;
        int64_t tries[] = {lo, hi};
        for (int i = 0; i < 2; i++)
            if (tries[i]) {
                char why[96];
                snprintf(why, sizeof why, "b x s = %lld, a multiple of %lld",
                         (long long)(tries[i] * sq), (long long)pow2_factor(tries[i] * sq));
                global_batch(s, l, tries[i], why);
            }
    }
}

static void precision_to(const xs_scenario *s, list *l, int p, int mode, const char *rule)
{
    const xs_train *t = &s->train;
    int mixed = p == XS_P_AMP_FP16 || p == XS_P_AMP_BF16;
    cand *c = slot(l, G_PRECISION, XS_ADVICE_FINETUNE);
    if (!c)
        return;
    put_set(c, "train.precision=%s", xs_precision_name(p));
    if (mixed)
        put_set(c, "train.amp_mode=%s", mode == XS_AMP_O2 ? "o2" : "autocast");
    const char *mname = mixed ? (mode == XS_AMP_O2 ? " (o2)" : " (autocast)") : "";
    if (p == t->precision)
        put_change(c, "amp_mode %s -> %s", t->amp_mode == XS_AMP_O2 ? "o2" : "autocast",
                   mode == XS_AMP_O2 ? "o2" : "autocast");
    else
        put_change(c, "precision %s -> %s%s", xs_precision_name(t->precision),
                   xs_precision_name(p), mname);
    snprintf(c->tag, sizeof c->tag, "%s%s", xs_precision_name(p), mname);
    put_rule(c, "%s", rule);
    keep(l);
}

#define AUTOCAST_FP16 "mixed precision: torch.autocast(dtype=torch.float16) and a GradScaler"
#define AUTOCAST_BF16 "mixed precision: torch.autocast(dtype=torch.bfloat16), no loss scaling"
#define APEX_O2 "mixed precision: apex amp O2 (half model, fp32 master weights)"

/* Precision, offered in the formats dev's matrix engine has (a peak of 0:
 * the format is missing, e.g. no tf32 or bf16 before Ampere). apex O2 is
 * the fp16 recipe (NVIDIA's BERT); bf16 runs under autocast. */
static void precision_candidates(const xs_scenario *s, const xs_device *dev, list *l)
{
    const xs_train *t = &s->train;
    const double *pk = dev->peak_tflops;
    int p = t->precision;
    if (p == XS_P_FP32 && pk[XS_TF32] > 0)
        precision_to(s, l, XS_P_TF32, 0,
                     "fp32 matmuls on the TF32 tensor cores: "
                     "torch.backends.cuda.matmul.allow_tf32 = True");
    if (p == XS_P_FP32 || p == XS_P_TF32) {
        if (pk[XS_FP16] > 0) {
            precision_to(s, l, XS_P_AMP_FP16, XS_AMP_AUTOCAST, AUTOCAST_FP16);
            precision_to(s, l, XS_P_AMP_FP16, XS_AMP_O2, APEX_O2);
        }
        if (pk[XS_BF16] > 0)
            precision_to(s, l, XS_P_AMP_BF16, XS_AMP_AUTOCAST, AUTOCAST_BF16);
    }
    if (p == XS_P_AMP_FP16) {
        if (t->amp_mode == XS_AMP_O2)
            precision_to(s, l, p, XS_AMP_AUTOCAST, "torch.autocast instead of apex amp O2");
        else
            precision_to(s, l, p, XS_AMP_O2, "apex amp O2 instead of torch.autocast: the "
                                            "model in half, fewer casts");
        if (pk[XS_BF16] > 0)
            precision_to(s, l, XS_P_AMP_BF16, XS_AMP_AUTOCAST, AUTOCAST_BF16);
    }
    if (p == XS_P_AMP_BF16 && t->amp_mode == XS_AMP_O2)
        precision_to(s, l, p, XS_AMP_AUTOCAST, "torch.autocast instead of apex amp O2");
}

/* Kernels a fine-tune can swap without touching the model: fused
 * attention, fused layer kernels, a fused or foreach optimizer. */
static void kernel_candidates(const xs_scenario *s, list *l)
{
    const xs_train *t = &s->train;
    cand *c;
    if (t->attention == XS_ATT_UNFUSED && (c = slot(l, G_ATTENTION, XS_ADVICE_FINETUNE))) {
        put_set(c, "train.attention=flash");
        put_change(c, "attention unfused -> flash");
        /* SDPA picks FlashAttention where it runs (Ampere on) and the
         * memory-efficient kernel before; neither writes the s x s scores */
        put_rule(c, "fused attention, no s x s scores in memory: "
                    "F.scaled_dot_product_attention (attn_implementation=\"sdpa\")");
        snprintf(c->tag, sizeof c->tag, "flash attention");
        keep(l);
    }
    if (t->kernels == XS_K_EAGER && (c = slot(l, G_KERNELS, XS_ADVICE_FINETUNE))) {
        put_set(c, "train.kernels=fused");
        put_change(c, "kernels eager -> fused");
        put_rule(c, "fused layer kernels (LightSeq): fewer passes and launches, same GEMMs");
        snprintf(c->tag, sizeof c->tag, "fused kernels");
        keep(l);
    }
    int fused, o = xs_train_optimizer(t, &fused), impl = xs_train_optimizer_impl(t);
    if (o == XS_OPT_BERTADAM) /* a Python loop of its own, with no fused form */
        return;
    static const char *impls[] = {"auto", "multi_tensor", "per_tensor", "foreach", "for_loop"};
    if (impl != XS_OPT_IMPL_MULTI_TENSOR && (c = slot(l, G_OPTIMIZER, XS_ADVICE_FINETUNE))) {
        put_set(c, "train.fused_optimizer=true");
        put_set(c, "train.optimizer_impl=multi_tensor");
        put_change(c, "optimizer %s -> multi_tensor", impls[impl]);
        put_rule(c, "one fused kernel a parameter group: torch.optim.%s(fused=True) or apex "
                    "Fused%s",
                 o == XS_OPT_SGD ? "SGD" : o == XS_OPT_ADAMW ? "AdamW" : "Adam",
                 o == XS_OPT_SGD ? "SGD" : "Adam");
        snprintf(c->tag, sizeof c->tag, "fused optimizer");
        keep(l);
    }
    if ((impl == XS_OPT_IMPL_FOR_LOOP || impl == XS_OPT_IMPL_PER_TENSOR) &&
        (o == XS_OPT_ADAM || o == XS_OPT_ADAMW) && (c = slot(l, G_OPTIMIZER, XS_ADVICE_FINETUNE))) {
        put_set(c, "train.fused_optimizer=false");
        put_set(c, "train.optimizer_impl=foreach");
        put_change(c, "optimizer %s -> foreach", impls[impl]);
        put_rule(c, "torch's multi-tensor _foreach ops: torch.optim.%s(foreach=True)",
                 o == XS_OPT_ADAMW ? "AdamW" : "Adam");
        snprintf(c->tag, sizeof c->tag, "foreach optimizer");
        keep(l);
    }
}

/* Vocabulary padding: the embedding and the LM head's rows, which a
 * fine-tune changes with transformers' PreTrainedModel.
 * resize_token_embeddings(new_num_tokens, pad_to_multiple_of=64). */
static void vocab_candidates(const xs_scenario *s, list *l)
{
    int64_t V = s->model.vocab;
    if (s->model.family == XS_FAMILY_VIT) /* no token table to pad */
        return;
    for (int64_t mult = 64; mult <= 128; mult *= 2) {
        int64_t v = round_to(V, mult, 1);
        cand *c = slot(l, G_VOCAB, XS_ADVICE_FINETUNE);
        if (v == V || !c)
            continue;
        put_set(c, "model.vocab=%lld", (long long)v);
        put_change(c, "vocab %lld -> %lld", (long long)V, (long long)v);
        put_rule(c, "vocab divisible by %lld: resize_token_embeddings(pad_to_multiple_of=%lld)",
                 (long long)mult, (long long)mult);
        snprintf(c->tag, sizeof c->tag, "vocab %lld", (long long)v);
        keep(l);
    }
}

/* One model-shape candidate: its sets and rule, the change said from them. */
static void shape(const xs_scenario *s, list *l, const char *set1, const char *set2,
                  const char *rule)
{
    cand *c = slot(l, G_SHAPE, XS_ADVICE_ARCHITECTURE);
    if (!c)
        return;
    put_set(c, "%s", set1);
    if (set2)
        put_set(c, "%s", set2);
    put_rule(c, "%s", rule);
    const xs_model *m = &s->model;
    size_t used = 0;
    for (int i = 0; i < c->a.nsets && used < sizeof c->a.change; i++) {
        const char *kv = c->a.sets[i];
        const char *key = kv + strlen("model."), *val = strchr(kv, '=') + 1;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(val - 1 - key), key);
        long long old = strcmp(name, "hidden") == 0  ? (long long)m->hidden
                        : strcmp(name, "heads") == 0 ? (long long)m->heads
                                                     : (long long)m->ffn;
        used += (size_t)snprintf(c->a.change + used, sizeof c->a.change - used, "%s%s %lld -> %s",
                                 i ? ", " : "", name, old, val);
    }
    keep(l);
}

/* Model shapes next to the scenario's, by the rules of training-math.md. */
static void shape_candidates(const xs_scenario *s, list *l)
{
    const xs_model *m = &s->model;
    char a[64], b[64], rule[96];
    int64_t h = m->hidden, heads = m->heads, f = m->ffn;
    for (int up = 0; up <= 1; up++) {
        int64_t hh = round_to(h, 64, up);
        if (hh == h || hh < 64)
            continue;
        snprintf(a, sizeof a, "model.hidden=%lld", (long long)hh);
        if (hh % heads == 0)
            shape(s, l, a, NULL, "hidden divisible by 64");
        snprintf(b, sizeof b, "model.heads=%lld", (long long)(hh / 64));
        shape(s, l, a, b, "hidden divisible by 64, head size 64");
    }
    for (int64_t d = 64; d <= 128; d *= 2)
        if (h % d == 0 && h / d != heads) {
            snprintf(a, sizeof a, "model.heads=%lld", (long long)(h / d));
            snprintf(rule, sizeof rule, "head size h/a = %lld, a multiple of 64", (long long)d);
            shape(s, l, a, NULL, rule);
        }
    for (int64_t mult = 64; mult <= 256; mult *= 2)
        for (int up = 0; up <= 1; up++) {
            int64_t ff = round_to(f, mult, up);
            if (ff != f && ff >= mult) {
                snprintf(a, sizeof a, "model.ffn=%lld", (long long)ff);
                snprintf(rule, sizeof rule, "FFN size divisible by %lld", (long long)mult);
                shape(s, l, a, NULL, rule);
            }
        }
}

/* The combined row: greedily, the combinable group whose best single change
 * makes the combination fastest joins it, while it gains XS_ADVICE_MIN_SPEEDUP
 * or more; changes interact (vocabulary padding matters once the matmuls
 * run in half precision), so each is predicted on top of those chosen.
 * Only each group's best single change is tried. Fills *out and returns 1
 * when two or more changes combine. */
static int combine(const query *q, const cand *c, size_t n, const xs_advice *base, cand *out)
{
    int best[G_COMBINABLE];
    for (int g = 0; g < G_COMBINABLE; g++)
        best[g] = -1;
    for (size_t i = 0; i < n; i++) {
        int g = c[i].group;
        if (g < G_COMBINABLE && c[i].a.speedup >= XS_ADVICE_MIN_SPEEDUP &&
            (best[g] < 0 || c[i].a.samples_per_s > c[best[g]].a.samples_per_s))
            best[g] = (int)i;
    }
    memset(out, 0, sizeof *out);
    out->a.kind = XS_ADVICE_FINETUNE;
    int chosen[G_COMBINABLE] = {0}, count = 0;
    double cur = base->samples_per_s, params = base->params;
    for (;;) {
        int pick = -1;
        double pick_sps = cur * XS_ADVICE_MIN_SPEEDUP, pick_params = 0;
        for (int g = 0; g < G_COMBINABLE; g++) {
            if (best[g] < 0 || chosen[g] || out->a.nsets + c[best[g]].a.nsets > XS_ADVICE_MAX_SETS)
                continue;
            cand trial = *out;
            for (int k = 0; k < c[best[g]].a.nsets; k++)
                strcpy(trial.a.sets[trial.a.nsets++], c[best[g]].a.sets[k]);
            double sps, p;
            int ok;
            xs_error err;
            if (evaluate(q, (const char(*)[64])trial.a.sets, trial.a.nsets, &sps, &p, &ok, &err) ||
                !ok || !(sps >= pick_sps))
                continue;
            pick = g, pick_sps = sps, pick_params = p;
        }
        if (pick < 0)
            break;
        const cand *b = &c[best[pick]];
        for (int k = 0; k < b->a.nsets; k++)
            strcpy(out->a.sets[out->a.nsets++], b->a.sets[k]);
        size_t used = strlen(out->a.change);
        snprintf(out->a.change + used, sizeof out->a.change - used, "%s%s",
                 count ? " + " : "all of the above: ", b->tag);
        chosen[pick] = 1;
        cur = pick_sps;
        params = pick_params;
        count++;
    }
    if (count < 2)
        return 0;
    out->a.samples_per_s = cur;
    out->a.params = params;
    snprintf(out->a.rule, sizeof out->a.rule,
             "the %d changes listed that add up, applied together (each gains %.0f%% or more on "
             "top of those before it)",
             count, 100 * (XS_ADVICE_MIN_SPEEDUP - 1));
    return 1;
}

static int by_throughput(const void *x, const void *y)
{
    double a = ((const cand *)x)->a.samples_per_s, b = ((const cand *)y)->a.samples_per_s;
    return (a < b) - (a > b);
}

int xs_advise(const xs_device *dev, const char *scn_path, const char *const *sets, int nsets,
              const xs_advise_opts *opt, xs_advice *base, xs_advice **out, size_t *n,
              xs_error *err)
{
    query q = {dev, scn_path, sets, nsets};
    xs_scenario s;
    int rc = xs_scn_load(scn_path, sets, nsets, &s, err);
    if (rc)
        return rc;
    memset(base, 0, sizeof *base);
    snprintf(base->change, sizeof base->change, "as given");
    int base_ok; /* the scenario as given is compared against whether it fits or not */
    rc = evaluate(&q, NULL, 0, &base->samples_per_s, &base->params, &base_ok, err);
    if (rc)
        return rc;
    base->speedup = 1;
    base->fits = base_ok;
    if (!(base->samples_per_s > 0)) /* every speed-up divides by it */
        return xs_error_set(err, XS_ERANGE, "%s: the scenario as given predicts %g samples/s, "
                            "nothing to compare candidates with", scn_path, base->samples_per_s);
    /* one slot beyond the candidates for the combined row */
    list l = {calloc(MAX_CANDIDATES + 1, sizeof(cand)), 0};
    if (!l.c)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    batch_candidates(&s, &l);
    precision_candidates(&s, dev, &l);
    kernel_candidates(&s, &l);
    vocab_candidates(&s, &l);
    /* a pretrained checkpoint's shape is fixed; an inline one is the user's to choose */
    if (opt->architecture || s.model.hf_config[0] == '\0')
        shape_candidates(&s, &l);
    size_t kept = 0;
    for (size_t i = 0; i < l.n; i++) {
        cand *c = &l.c[i];
        xs_error cand_err;
        int ok;
        /* a candidate the scenario rejects (e.g. heads not dividing hidden) is skipped */
        if (evaluate(&q, (const char(*)[64])c->a.sets, c->a.nsets, &c->a.samples_per_s,
                     &c->a.params, &ok, &cand_err) != XS_OK ||
            !ok)
            continue;
        c->a.params_delta_pct = 100 * (c->a.params - base->params) / base->params;
        if (fabs(c->a.params_delta_pct) > opt->tol_pct)
            continue;
        c->a.speedup = c->a.samples_per_s / base->samples_per_s;
        c->a.fits = 1; /* admissible() let it through */
        l.c[kept++] = *c;
    }
    cand all;
    if (combine(&q, l.c, kept, base, &all)) {
        all.a.params_delta_pct = 100 * (all.a.params - base->params) / base->params;
        all.a.speedup = all.a.samples_per_s / base->samples_per_s;
        all.a.fits = 1;
        if (fabs(all.a.params_delta_pct) <= opt->tol_pct)
            l.c[kept++] = all;
    }
    qsort(l.c, kept, sizeof *l.c, by_throughput);
    xs_advice *a = calloc(kept ? kept : 1, sizeof *a);
    if (!a) {
        free(l.c);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < kept; i++)
        a[i] = l.c[i].a;
    free(l.c);
    *out = a;
    *n = kept;
    return XS_OK;
}
