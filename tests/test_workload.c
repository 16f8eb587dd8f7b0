/* test_workload.c — the op list of one step: FLOPs against 6PT, published
 * parameter counts, backward shapes, optimizer traffic, AMP casts, flash
 * attention, gradient accumulation, and the golden list of a tiny model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "device.h"
#include "paths.h"
#include "predict.h"
#include "scenario.h"
#include "test_util.h"
#include "workload.h"

static void build(const char *id, const char *const *sets, int n, xs_scenario *s,
                  xs_workload *wl)
{
    char path[512];
    xs_error err;
    int rc = xs_resolve("scenarios", id, path, sizeof path, &err);
    if (!rc)
        rc = xs_scn_load(path, sets, n, s, &err);
    if (!rc)
        rc = xs_wl_build(s, wl, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
}

static double matmul_flops_per_micro_batch(const xs_workload *wl)
{
    double f = 0;
    for (size_t i = 0; i < wl->n; i++)
        if (xs_op_is_matmul(wl->ops[i].kind))
            f += wl->ops[i].flops * (double)wl->ops[i].count;
    return f / (double)wl->micro_batches;
}

/* training-math.md: GEMM FLOPs = 6 P T + 12 L b s^2 h, with P the weights
 * every token is multiplied by: the layers' projections plus the head's
 * (for a tied LM head that is the V x h embedding). Computed here from the
 * shape alone, independently of the workload's own bookkeeping. */
static void check_6pt(const xs_scenario *s, const xs_workload *wl, double head_weights)
{
    const xs_model *m = &s->model;
    double h = (double)m->hidden, f = (double)m->ffn, L = (double)m->layers;
    double b = (double)s->train.batch, sq = (double)s->train.seq, T = b * sq;
    double P = L * (4 * h * h + 2 * h * f) + head_weights;
    double expect = 6 * P * T + 12 * L * b * sq * sq * h;
    double got = matmul_flops_per_micro_batch(wl);
    CU_ASSERT(fabs(got - expect) / expect < 0.02);
    if (fabs(got - expect) / expect >= 0.02)
        fprintf(stderr, "\n%s: GEMM FLOPs %.4g vs 6PT+attention %.4g\n", s->id, got, expect);
}

static void gemm_flops_should_match_6pt_plus_attention(void)
{
    xs_scenario s;
    xs_workload wl;
    build("bert-large-squad", NULL, 0, &s, &wl);
    check_6pt(&s, &wl, 2.0 * 1024);
    xs_wl_free(&wl);
    const char *unfused[] = {"train.attention=unfused", "train.grad_accum=1"};
    build("gpt2-medium-finetune", unfused, 2, &s, &wl);
    check_6pt(&s, &wl, 50257.0 * 1024);
    xs_wl_free(&wl);
}

static void parameter_counts_should_match_the_published_models(void)
{
    xs_scenario s;
    xs_workload wl;
    /* transformers' num_parameters(): GPT2LMHeadModel gpt2-medium 354,823,168;
     * BertForQuestionAnswering bert-base-uncased 108,893,186 (no pooler) */
    build("gpt2-medium-finetune", NULL, 0, &s, &wl);
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 354823168, 0.5);
    CU_ASSERT_EQUAL(wl.tensors, 2 + 24 * 12 + 2);
    xs_wl_free(&wl);
    build("bert-base-squad", NULL, 0, &s, &wl);
    CU_ASSERT_DOUBLE_EQUAL(wl.params, 108893186, 0.5);
    CU_ASSERT_EQUAL(wl.tensors, 5 + 12 * 16 + 2);
    xs_wl_free(&wl);
}

static void each_linear_should_have_two_backward_gemms_with_swapped_shapes(void)
{
    xs_scenario s;
    xs_workload wl;
    build("bert-large-squad", NULL, 0, &s, &wl);
    const xs_op *fw = tu_find_op(&wl, "ffn.up", 5), *dx = tu_find_op(&wl, "ffn.up.dX", 5),
                *dw = tu_find_op(&wl, "ffn.up.dW", 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fw);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dx);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dw);
    int64_t T = 24 * 384;
    CU_ASSERT(fw->m == T && fw->n == 4096 && fw->k == 1024);
    CU_ASSERT(dx->m == T && dx->n == 1024 && dx->k == 4096);
    CU_ASSERT(dw->m == 4096 && dw->n == 1024 && dw->k == T && dw->ta == 1);
    CU_ASSERT_DOUBLE_EQUAL(fw->flops, dx->flops, 1);
    CU_ASSERT_DOUBLE_EQUAL(fw->flops, dw->flops, 1);
    CU_ASSERT_EQUAL(fw->phase, XS_PH_FWD);
    CU_ASSERT_EQUAL(dx->phase, XS_PH_BWD);
    /* backward runs in reverse: the last layer's ops come before the first's */
    CU_ASSERT(tu_find_op(&wl, "ffn.up.dX", 23) < tu_find_op(&wl, "ffn.up.dX", 0));
    CU_ASSERT(tu_find_op(&wl, "attn.scores.dQ", 0) > tu_find_op(&wl, "attn.context.dV", 0));
    xs_wl_free(&wl);
}

static double optimizer_bytes_per_param(const char *opt, int fused, const char *precision)
{
    char o[64], f[64], p[64];
    snprintf(o, sizeof o, "train.optimizer=%s", opt);
    snprintf(f, sizeof f, "train.fused_optimizer=%s", fused ? "true" : "false");
    snprintf(p, sizeof p, "train.precision=%s", precision);
    const char *sets[] = {o, f, p, "train.fp32_optimizer=same"};
    xs_scenario s;
    xs_workload wl;
    build("bert-base-squad", sets, 4, &s, &wl);
    double bytes = 0;
    for (size_t i = 0; i < wl.n; i++)
        if (strncmp(wl.ops[i].name, "optimizer.", 10) == 0)
            bytes += wl.ops[i].bytes;
    double per = bytes / wl.params;
    xs_wl_free(&wl);
    return per;
}

static void fp32_recipe_should_switch_to_bertadam(void)
{
    xs_scenario s;
    xs_workload wl;
    /* run_squad.py: FusedAdam under --fp16, BertAdam otherwise */
    const char *fp32[] = {"train.precision=tf32"};
    build("bert-base-squad", fp32, 1, &s, &wl);
    const xs_op *norm = tu_find_op(&wl, "bertadam.grad_norm", -1);
    const xs_op *opt = tu_find_op(&wl, "optimizer.bertadam.eager", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(norm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(opt);
    CU_ASSERT(norm->sync && !opt->sync);
    CU_ASSERT(norm < opt);
    /* twelve fp32 tensor ops a parameter tensor: 120 bytes a parameter */
    CU_ASSERT_DOUBLE_EQUAL(opt->bytes, wl.params * 120, 1);
    CU_ASSERT_EQUAL(opt->launches, 12 * wl.tensors);
    xs_wl_free(&wl);
    const char *amp[] = {"train.precision=amp_fp16"};
    build("bert-base-squad", amp, 1, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "bertadam.grad_norm", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "optimizer.adamw", -1));
    xs_wl_free(&wl);
    /* 'same' keeps the scenario's optimizer in fp32 too */
    const char *same[] = {"train.precision=fp32", "train.fp32_optimizer=same"};
    build("bert-base-squad", same, 2, &s, &wl);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "optimizer.adamw", -1));
    xs_wl_free(&wl);
}

static void optimizer_traffic_should_follow_the_arrays_it_touches(void)
{
    CU_ASSERT_DOUBLE_EQUAL(optimizer_bytes_per_param("sgd", 1, "fp32"), 20, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(optimizer_bytes_per_param("adam", 1, "fp32"), 28, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(optimizer_bytes_per_param("adamw", 1, "amp_fp16"), 28, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(optimizer_bytes_per_param("adan", 1, "fp32"), 44, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(optimizer_bytes_per_param("adan", 0, "fp32"), 176, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(optimizer_bytes_per_param("adamw", 0, "fp32"), 80, 1e-9);
    /* pure bf16 keeps parameters and states in 2 bytes */
    CU_ASSERT_DOUBLE_EQUAL(optimizer_bytes_per_param("adam", 1, "bf16"), 14, 1e-9);
}

static int count_kind(const xs_workload *wl, int kind)
{
    int n = 0;
    for (size_t i = 0; i < wl->n; i++)
        n += wl->ops[i].kind == kind;
    return n;
}

static void amp_should_add_casts_and_the_loss_scale_check(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *fp16[] = {"train.precision=amp_fp16", "train.amp_mode=autocast"};
    build("bert-base-squad", fp16, 2, &s, &wl);
    CU_ASSERT(count_kind(&wl, XS_OP_CAST) > 0);
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "amp.unscale_check", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.q.cast_w", 0));
    CU_ASSERT_EQUAL(wl.matmul_dtype, XS_FP16);
    xs_wl_free(&wl);
    const char *bf16[] = {"train.precision=amp_bf16", "train.amp_mode=autocast"};
    build("bert-base-squad", bf16, 2, &s, &wl);
    CU_ASSERT(count_kind(&wl, XS_OP_CAST) > 0);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "amp.unscale_check", -1)); /* bf16 needs no loss scale */
    xs_wl_free(&wl);
    const char *fp32[] = {"train.precision=fp32"};
    build("bert-base-squad", fp32, 1, &s, &wl);
    CU_ASSERT_EQUAL(count_kind(&wl, XS_OP_CAST), 0);
    CU_ASSERT_EQUAL(wl.matmul_dtype, XS_FP32);
    xs_wl_free(&wl);
}

static double total(const xs_workload *wl, int bytes);

/* apex O2: the model is half, so no per-forward casts and no fp32 islands;
 * the master copy costs a gradient copy-in and a weight copy-out a step. */
static void amp_o2_should_trade_casts_for_master_copies(void)
{
    xs_scenario s;
    xs_workload o2, ac;
    const char *a[] = {"train.amp_mode=o2"}, *b[] = {"train.amp_mode=autocast"};
    build("bert-base-squad", a, 1, &s, &o2);
    build("bert-base-squad", b, 1, &s, &ac);
    CU_ASSERT_PTR_NULL(tu_find_op(&o2, "attn.q.cast_w", 0));
    CU_ASSERT_PTR_NULL(tu_find_op(&o2, "attn.probs.cast", 0));
    const xs_op *in = tu_find_op(&o2, "amp.master_grads", -1), *out = tu_find_op(&o2, "amp.master_to_model", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_DOUBLE_EQUAL(in->bytes, o2.params * 6, 1);
    CU_ASSERT_DOUBLE_EQUAL(out->bytes, o2.params * 6, 1);
    CU_ASSERT_EQUAL(count_kind(&o2, XS_OP_CAST), 1);
    /* the s x s softmax reads and writes half instead of fp32 */
    const xs_op *sm_o2 = tu_find_op(&o2, "attn.softmax", 0), *sm_ac = tu_find_op(&ac, "attn.softmax", 0);
    CU_ASSERT_DOUBLE_EQUAL(sm_o2->bytes * 2, sm_ac->bytes, 1);
    CU_ASSERT(total(&o2, 1) < 0.8 * total(&ac, 1));
    CU_ASSERT_DOUBLE_EQUAL(matmul_flops_per_micro_batch(&o2), matmul_flops_per_micro_batch(&ac), 1);
    /* clipping reads the gradients for the norm (read back to the host),
     * then scales them in place */
    const xs_op *norm = tu_find_op(&o2, "grad_clip.norm", -1), *scale = tu_find_op(&o2, "grad_clip.scale", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(norm);
    CU_ASSERT_PTR_NOT_NULL_FATAL(scale);
    CU_ASSERT_DOUBLE_EQUAL(norm->bytes, o2.params * 4, 1);
    CU_ASSERT_DOUBLE_EQUAL(scale->bytes, o2.params * 8, 1);
    CU_ASSERT(norm->sync && !scale->sync);
    CU_ASSERT(tu_find_op(&o2, "amp.master_grads", -1)->sync);
    xs_wl_free(&o2);
    xs_wl_free(&ac);
}

/* multi_tensor_apply's loop as apex writes it (csrc/multi_tensor_apply.cuh),
 * chunk by chunk, to check the workload's closed form against. */
static int64_t ref_mta(const double *sizes, size_t n, int depth)
{
    static const int max_t[8] = {110, 64, 48, 36, 30, 26, 22, 20};
    int64_t launches = 0;
    int tensors = 0, blocks = 0;
    for (size_t t = 0; t < n; t++) {
        tensors++;
        int64_t chunks = (int64_t)ceil(sizes[t] / 65536);
        for (int64_t ch = 0; ch < chunks; ch++) {
            blocks++;
            int tensors_full = tensors == max_t[depth - 1] && ch == chunks - 1;
            int blocks_full = blocks == 320;
            int last = t == n - 1 && ch == chunks - 1;
            if (tensors_full || blocks_full || last) {
                launches++;
                blocks = 0;
                tensors = ch == chunks - 1 ? 0 : 1;
            }
        }
    }
    return launches;
}

static void multi_tensor_apply_should_launch_as_apex_chunks_it(void)
{
    double one[400];
    for (int i = 0; i < 400; i++)
        one[i] = 1000;
    /* 250 one-chunk tensors, one list: 110 tensors a launch */
    CU_ASSERT_EQUAL(xs_wl_mta_launches(one, 250, 1), 3);
    /* 400 of them, two lists: 64 a launch, and the 320-block limit at 320 */
    CU_ASSERT_EQUAL(xs_wl_mta_launches(one, 400, 2), ref_mta(one, 400, 2));
    /* one tensor of 1000 chunks: full launches at 320, 640, 960, then the rest */
    double big = 1000 * 65536.0;
    CU_ASSERT_EQUAL(xs_wl_mta_launches(&big, 1, 4), 4);
    CU_ASSERT_EQUAL(xs_wl_mta_launches(one, 0, 1), 0);
    /* an empty tensor takes no slot and closes no launch, last or not
     * (MultiTensorApply.cuh skips it): the chunks before it still launch */
    double with_empty[] = {100000, 0}, empty_first[] = {0, 100000, 0, 100000};
    CU_ASSERT_EQUAL(xs_wl_mta_launches(with_empty, 2, 1), 1);
    CU_ASSERT_EQUAL(xs_wl_mta_launches(empty_first, 4, 1), 1);
    /* mixtures of small and large tensors, every depth: as the loop does it */
    unsigned seed = 12345;
    double sizes[600];
    for (int trial = 0; trial < 40; trial++) {
        size_t n = 1 + (size_t)(trial * 15 % 600);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 8) % 1000;
            sizes[i] = r < 600 ? 1 + r * 100.0 : r < 950 ? 65536.0 * (r - 590) / 7
                                                          : 65536.0 * 700 + r;
        }
        for (int depth = 1; depth <= 8; depth++)
            CU_ASSERT_EQUAL(xs_wl_mta_launches(sizes, n, depth), ref_mta(sizes, n, depth));
    }
}

/* n tensors of one chunk each, as the tiny model's all are */
static int64_t ref_small(int64_t n, int depth)
{
    double *sz = calloc((size_t)n, sizeof *sz);
    for (int64_t i = 0; i < n; i++)
        sz[i] = 1000;
    int64_t l = ref_mta(sz, (size_t)n, depth);
    free(sz);
    return l;
}

static size_t index_of(const xs_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->n; i++)
        if (strcmp(wl->ops[i].name, name) == 0)
            return i;
    return wl->n;
}

/* The AMP and optimizer kernels of one step, launch by launch and byte by
 * byte, on a tiny model with enough tensors (20 layers: 327) that the
 * multi-tensor limits bite. Each tensor fits in one 65536-element chunk. */
static void amp_kernels_should_match_the_audited_recipes(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *tiny = "tests/data/scenarios/tiny.json";
    const int L = 20;
    /* weight-decay group: 3 embedding tables, 6 weights a layer, the span
     * head's weight; no decay: 2 + 4 LayerNorm vectors a layer, 6 biases a
     * layer, the head's bias */
    const int64_t decay = 3 + 6 * L + 1, nodecay = 2 + 10 * L + 1, T = decay + nodecay;
    /* apex O2 as NVIDIA's run_squad.py runs it */
    const char *o2[] = {"model.layers=20", "train.amp_mode=o2", "train.grad_clip=true",
                        "train.grad_clip_impl=apex", "train.zero_grad=zero"};
    build(tiny, o2, 5, &s, &wl);
    double P = wl.params;
    CU_ASSERT_EQUAL_FATAL(wl.tensors, T);
    const xs_op *op = tu_find_op(&wl, "amp.overflow_clear", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT(op->launches == 1 && op->count == 2 && op->issue == XS_ISSUE_LOOP);
    op = tu_find_op(&wl, "amp.scale_loss", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT(op->launches == 1 && op->count == 2 && op->issue == XS_ISSUE_EAGER);
    /* the scaled loss's gradient is the backward's first kernel */
    size_t first_bwd = 0;
    while (first_bwd < wl.n && wl.ops[first_bwd].phase != XS_PH_BWD)
        first_bwd++;
    CU_ASSERT_STRING_EQUAL(wl.ops[first_bwd].name, "amp.scale_loss.bwd");
    op = tu_find_op(&wl, "amp.master_grads", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(T, 2));
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, 6 * P, 0);
    CU_ASSERT(op->sync && op->issue == XS_ISSUE_MULTI && op->count == 1);
    op = tu_find_op(&wl, "amp.master_grads.accumulate", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(T, 3));
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, 10 * P, 0);
    CU_ASSERT(op->sync && op->count == 1);
    op = tu_find_op(&wl, "grad_clip.norm", -1); /* zeros(320) + l2norm + cleanup */
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(T, 1) + 2);
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, 4 * P, 0);
    CU_ASSERT(op->sync && op->count == 2);
    op = tu_find_op(&wl, "grad_clip.scale", -1); /* multi_tensor_scale over [l, l] */
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(T, 2));
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, 8 * P, 0);
    CU_ASSERT(!op->sync && op->count == 2);
    op = tu_find_op(&wl, "optimizer.adamw", -1); /* FusedAdam: [g, p, m, v] a group */
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(decay, 4) + ref_small(nodecay, 4));
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, 28 * P, 0);
    op = tu_find_op(&wl, "amp.master_to_model", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(T, 2));
    op = tu_find_op(&wl, "grad.zero", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT(op->launches == T && op->issue == XS_ISSUE_LOOP);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "amp.unscale_check", -1));
    xs_wl_free(&wl);
    /* torch.autocast + GradScaler, clip_grad_norm_ as the Trainer calls it */
    const char *ac[] = {"model.layers=20", "train.amp_mode=autocast", "train.grad_clip=true",
                        "train.grad_clip_impl=torch"};
    build(tiny, ac, 4, &s, &wl);
    P = wl.params;
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "amp.overflow_clear", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "amp.scale_loss", -1));
    op = tu_find_op(&wl, "amp.inv_scale", -1); /* double(), reciprocal(), float() */
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT(op->launches == 3 && op->issue == XS_ISSUE_LOOP);
    op = tu_find_op(&wl, "amp.found_inf", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, 1);
    op = tu_find_op(&wl, "amp.unscale_check", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(T, 1));
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, 8 * P, 0);
    CU_ASSERT(!op->sync); /* unscale_ does not sync; step() does, after clipping */
    op = tu_find_op(&wl, "grad_clip.norm", -1); /* _foreach_norm, stack, vector_norm */
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT(op->launches == ref_small(T, 1) + 2 && op->count == 1);
    op = tu_find_op(&wl, "grad_clip.coef", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, 3);
    op = tu_find_op(&wl, "grad_clip.scale", -1); /* _foreach_mul_ */
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(T, 1));
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, 8 * P, 0);
    CU_ASSERT(op->sync); /* found_inf.item() right before optimizer.step() */
    size_t upd = index_of(&wl, "amp.update_scale"), opt = index_of(&wl, "optimizer.adamw");
    CU_ASSERT(upd < wl.n && opt < upd);
    CU_ASSERT_EQUAL(wl.ops[upd].launches, 1);
    /* autocast's casts are issued inside the dispatcher, recorded by autograd */
    CU_ASSERT_EQUAL(tu_find_op(&wl, "attn.q.cast_w", 0)->issue, XS_ISSUE_AUTOCAST);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "attn.q", 0)->issue, XS_ISSUE_EAGER);
    xs_wl_free(&wl);
    /* bf16 needs no loss scale: no scaling kernels at all */
    const char *bf[] = {"train.precision=amp_bf16"};
    build(tiny, bf, 1, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "amp.scale_loss", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "amp.inv_scale", -1));
    xs_wl_free(&wl);
}

/* The optimizer's kernels as each implementation launches them. */
static void optimizer_impls_should_launch_as_their_code_does(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *tiny = "tests/data/scenarios/tiny.json";
    const int L = 20;
    const int64_t decay = 3 + 6 * L + 1, nodecay = 2 + 10 * L + 1, T = decay + nodecay;
    const char *mt[] = {"model.layers=20", "train.optimizer_impl=multi_tensor"};
    build(tiny, mt, 2, &s, &wl);
    const xs_op *op = tu_find_op(&wl, "optimizer.adamw", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(decay, 4) + ref_small(nodecay, 4));
    CU_ASSERT_EQUAL(op->issue, XS_ISSUE_MULTI);
    double bytes = op->bytes, P = wl.params;
    xs_wl_free(&wl);
    /* the older apex FusedAdam: the same traffic, one kernel a tensor from Python */
    const char *pt[] = {"model.layers=20", "train.optimizer_impl=per_tensor"};
    build(tiny, pt, 2, &s, &wl);
    op = tu_find_op(&wl, "optimizer.adamw.per_tensor", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT(op->launches == T && op->issue == XS_ISSUE_LOOP);
    CU_ASSERT_DOUBLE_EQUAL(op->bytes, bytes, 0);
    xs_wl_free(&wl);
    /* torch foreach AdamW: eight _foreach_ ops, the weight-decay multiply
     * only over the decay group; 84 bytes a decayed parameter, 76 the rest */
    const char *fe[] = {"model.layers=20", "train.fused_optimizer=false",
                        "train.optimizer_impl=foreach"};
    build(tiny, fe, 3, &s, &wl);
    int ops = 0;
    double fb = 0;
    for (size_t i = 0; i < wl.n; i++)
        if (strncmp(wl.ops[i].name, "optimizer.adamw.foreach.", 24) == 0) {
            ops++;
            fb += wl.ops[i].bytes;
            CU_ASSERT_EQUAL(wl.ops[i].issue, XS_ISSUE_MULTI);
        }
    CU_ASSERT_EQUAL(ops, 8);
    op = tu_find_op(&wl, "optimizer.adamw.foreach.addcmul", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(decay, 3) + ref_small(nodecay, 3));
    op = tu_find_op(&wl, "optimizer.adamw.foreach.mul", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(op);
    CU_ASSERT_EQUAL(op->launches, ref_small(decay, 1));
    double pn = 2 * 64 + L * (4 * 64 + 4 * 64 + 256 + 64) + 2; /* LN vectors and biases */
    CU_ASSERT_DOUBLE_EQUAL(fb, 84 * (P - pn) + 76 * pn, 1e-6);
    xs_wl_free(&wl);
    const char *fa[] = {"train.optimizer=adam", "train.fused_optimizer=false",
                        "train.optimizer_impl=foreach"};
    build(tiny, fa, 3, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "optimizer.adam.foreach.mul", -1));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "optimizer.adam.foreach.addcdiv", -1));
    xs_wl_free(&wl);
    /* a value that contradicts train.fused_optimizer, or has no such kernels, is refused */
    char path[512];
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_resolve("scenarios", tiny, path, sizeof path, &err), XS_OK);
    const char *c1[] = {"train.optimizer_impl=foreach"};
    CU_ASSERT_NOT_EQUAL(tu_scn_load_gated(path, c1, 1, &s, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.fused_optimizer false"));
    const char *c2[] = {"train.optimizer=sgd", "train.fused_optimizer=false",
                        "train.optimizer_impl=foreach"};
    CU_ASSERT_NOT_EQUAL(tu_scn_load_gated(path, c2, 3, &s, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "adam and adamw"));
    const char *c3[] = {"train.optimizer=bertadam", "train.optimizer_impl=multi_tensor"};
    CU_ASSERT_NOT_EQUAL(tu_scn_load_gated(path, c3, 2, &s, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bertadam"));
    const char *c4[] = {"train.optimizer_impl=fast"};
    CU_ASSERT_NOT_EQUAL(xs_scn_load(path, c4, 1, &s, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.optimizer_impl"));
}

static double total(const xs_workload *wl, int bytes)
{
    double t = 0;
    for (size_t i = 0; i < wl->n; i++)
        t += (bytes ? wl->ops[i].bytes : (double)wl->ops[i].launches) *
             (double)wl->ops[i].count;
    return t;
}

static void flash_attention_should_remove_the_seq_squared_traffic(void)
{
    xs_scenario s;
    xs_workload un, fl;
    const char *a[] = {"train.attention=unfused"}, *b[] = {"train.attention=flash"};
    build("bert-large-squad", a, 1, &s, &un);
    build("bert-large-squad", b, 1, &s, &fl);
    CU_ASSERT_EQUAL(count_kind(&fl, XS_OP_BGEMM), 0);
    CU_ASSERT(count_kind(&fl, XS_OP_ATTENTION) == 2 * 24);
    CU_ASSERT_PTR_NULL(tu_find_op(&fl, "attn.softmax", 0));
    /* bytes per layer drop by the s x s passes (several GB at batch 24) */
    CU_ASSERT(total(&un, 1) - total(&fl, 1) > 24 * 1e9);
    CU_ASSERT_DOUBLE_EQUAL(matmul_flops_per_micro_batch(&fl) * 1.0,
                           matmul_flops_per_micro_batch(&un) +
                               24 * 2.0 * 24 * 16 * 384.0 * 384 * 64,
                           1e6); /* flash: 7 s.s.d matmuls a layer (backward recomputes the
                                    scores) against unfused 6; one more 2.b.a.s^2.d each */
    xs_wl_free(&un);
    xs_wl_free(&fl);
}

static void fused_kernels_should_cut_launches_not_gemm_flops(void)
{
    xs_scenario s;
    xs_workload eg, fu;
    const char *e[] = {"train.kernels=eager"}, *f[] = {"train.kernels=fused"};
    build("bert-base-squad", e, 1, &s, &eg);
    build("bert-base-squad", f, 1, &s, &fu);
    CU_ASSERT(total(&fu, 0) < 0.7 * total(&eg, 0));
    CU_ASSERT(total(&fu, 1) < total(&eg, 1));
    CU_ASSERT_DOUBLE_EQUAL(matmul_flops_per_micro_batch(&fu), matmul_flops_per_micro_batch(&eg),
                           1);
    CU_ASSERT_DOUBLE_EQUAL(fu.params, eg.params, 0.5);
    xs_wl_free(&eg);
    xs_wl_free(&fu);
}

/* run_squad.py's BERT: the head split/merge copies and the padding-mask add
 * (a [b, 1, 1, s] operand) leave PyTorch's vectorized loop; the scale, the
 * dropouts and the fused optimizer do not. Fused layer kernels have no
 * TensorIterator loops at all. */
static void broadcasts_copies_and_casts_should_take_the_generic_loop(void)
{
    xs_scenario s;
    xs_workload eg, fu, au;
    const char *e[] = {"train.generic_loop_efficiency=0.6"};
    const char *f[] = {"train.kernels=fused", "train.generic_loop_efficiency=0.6"};
    const char *a[] = {"train.amp_mode=autocast", "train.generic_loop_efficiency=0.6"};
    build("bert-base-squad", e, 1, &s, &eg);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.heads", 0)->hints.bw_scale, 0.6, 0);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.heads.bwd", 0)->hints.bw_scale, 0.6, 0);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.mask", 0)->hints.bw_scale, 0.6, 0);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.scale", 0)->hints.bw_scale, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.softmax", 0)->hints.bw_scale, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.probs.dropout", 0)->hints.bw_scale, 0, 0);
    for (size_t i = 0; i < eg.n; i++) {
        if (eg.ops[i].phase == XS_PH_OPT || xs_op_is_matmul(eg.ops[i].kind))
            CU_ASSERT_DOUBLE_EQUAL(eg.ops[i].hints.bw_scale, 0, 0);
    }
    build("bert-base-squad", f, 2, &s, &fu);
    for (size_t i = 0; i < fu.n; i++)
        CU_ASSERT_DOUBLE_EQUAL(fu.ops[i].hints.bw_scale, 0, 0);
    build("bert-base-squad", a, 2, &s, &au); /* autocast: every cast converts dtypes */
    size_t casts = 0;
    for (size_t i = 0; i < au.n; i++) {
        if (au.ops[i].kind == XS_OP_CAST && au.ops[i].phase != XS_PH_OPT) {
            casts++;
            CU_ASSERT_DOUBLE_EQUAL(au.ops[i].hints.bw_scale, 0.6, 0);
        }
    }
    CU_ASSERT(casts > 0);
    xs_wl_free(&eg);
    xs_wl_free(&fu);
    xs_wl_free(&au);
}

/* Every elementwise, copy and cast kernel of the eager step hands each
 * thread train.loop_elems elements; row kernels, GEMMs, the optimizer and
 * fused layer kernels keep their own amount in flight. */
static void elementwise_loops_should_carry_their_elements_per_thread(void)
{
    xs_scenario s;
    xs_workload eg, fu;
    const char *e[] = {"train.loop_elems=8"};
    const char *f[] = {"train.kernels=fused", "train.loop_elems=8"};
    build("bert-base-squad", e, 1, &s, &eg);
    size_t loops = 0;
    for (size_t i = 0; i < eg.n; i++) {
        const xs_op *op = &eg.ops[i];
        int loop = op->phase != XS_PH_OPT && (op->kind == XS_OP_ELTWISE ||
                                              op->kind == XS_OP_COPY || op->kind == XS_OP_CAST);
        loops += loop;
        CU_ASSERT_DOUBLE_EQUAL(op->hints.loop_elems, loop ? 8 : 0, 0);
    }
    CU_ASSERT(loops > 10);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.probs.dropout", 0)->hints.loop_elems, 8, 0);
    CU_ASSERT_DOUBLE_EQUAL(tu_find_op(&eg, "attn.softmax", 0)->hints.loop_elems, 0, 0);
    build("bert-base-squad", f, 2, &s, &fu);
    for (size_t i = 0; i < fu.n; i++)
        CU_ASSERT_DOUBLE_EQUAL(fu.ops[i].hints.loop_elems, 0, 0);
    xs_wl_free(&eg);
    xs_wl_free(&fu);
}

/* zero_grad without set_to_none (PyTorch < 2.0, apex amp) fills every
 * gradient with zeros, one kernel a tensor, and autograd then adds each new
 * gradient into the zeroed one; apex O2 drops its half gradients before the
 * backward, so it pays the fill but adds nothing. */
static void zeroed_gradients_should_be_filled_and_added_into(void)
{
    xs_scenario s;
    xs_workload fp, o2, none, acc;
    const char *f[] = {"train.precision=tf32", "train.zero_grad=zero"};
    const char *h[] = {"train.precision=amp_fp16", "train.amp_mode=o2", "train.zero_grad=zero"};
    const char *n[] = {"train.precision=tf32", "train.zero_grad=none"};
    const char *a[] = {"train.precision=tf32", "train.zero_grad=zero", "train.grad_accum=3",
                       "train.batch=8"};
    build("bert-base-squad", f, 2, &s, &fp);
    const xs_op *fill = tu_find_op(&fp, "grad.zero", -1), *add = tu_find_op(&fp, "grad.accumulate", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fill);
    CU_ASSERT_PTR_NOT_NULL_FATAL(add);
    CU_ASSERT_EQUAL(fill->phase, XS_PH_OPT);
    CU_ASSERT_EQUAL(fill->launches, fp.tensors);
    CU_ASSERT_DOUBLE_EQUAL(fill->bytes, fp.params * 4, 1);
    CU_ASSERT_EQUAL(add->phase, XS_PH_BWD);
    CU_ASSERT_EQUAL(add->count, 1);
    CU_ASSERT_EQUAL(add->launches, fp.tensors);
    CU_ASSERT_DOUBLE_EQUAL(add->bytes, fp.params * 3 * 4, 1);
    build("bert-base-squad", h, 3, &s, &o2);
    fill = tu_find_op(&o2, "grad.zero", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fill);
    CU_ASSERT_DOUBLE_EQUAL(fill->bytes, o2.params * 2, 1);
    CU_ASSERT_PTR_NULL(tu_find_op(&o2, "grad.accumulate", -1));
    build("bert-base-squad", n, 2, &s, &none);
    CU_ASSERT_PTR_NULL(tu_find_op(&none, "grad.zero", -1));
    CU_ASSERT_PTR_NULL(tu_find_op(&none, "grad.accumulate", -1));
    build("bert-base-squad", a, 4, &s, &acc); /* every micro-batch adds */
    CU_ASSERT_EQUAL(tu_find_op(&acc, "grad.accumulate", -1)->count, 3);
    xs_wl_free(&fp);
    xs_wl_free(&o2);
    xs_wl_free(&none);
    xs_wl_free(&acc);
}

/* Q K^T takes the key as [d x s] a head: the eager step copies it (and its
 * gradient back) across rows, apart from the q and v copies that keep the
 * head dimension contiguous; a fused kernel reads the heads in place. */
static void the_key_copy_should_read_across_rows(void)
{
    xs_scenario s;
    xs_workload eg, fu;
    const char *f[] = {"train.kernels=fused"};
    build("bert-base-squad", NULL, 0, &s, &eg);
    double T = (double)s.train.batch * (double)s.train.seq, h = (double)s.model.hidden;
    const xs_op *qv = tu_find_op(&eg, "attn.heads", 0), *k = tu_find_op(&eg, "attn.heads.kT", 0),
                *kb = tu_find_op(&eg, "attn.heads.kT.bwd", 0), *merge = tu_find_op(&eg, "attn.merge", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(qv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(merge);
    CU_ASSERT_EQUAL(qv->launches, 2);
    CU_ASSERT_DOUBLE_EQUAL(qv->elems, 2 * T * h, 0);
    CU_ASSERT_DOUBLE_EQUAL(qv->hints.strided_elems, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(k->hints.strided_elems, T * h, 0);
    CU_ASSERT_DOUBLE_EQUAL(kb->hints.strided_elems, T * h, 0);
    CU_ASSERT_EQUAL(kb->phase, XS_PH_BWD);
    CU_ASSERT_DOUBLE_EQUAL(merge->hints.strided_elems, 0, 0);
    build("bert-base-squad", f, 1, &s, &fu);
    CU_ASSERT_PTR_NULL(tu_find_op(&fu, "attn.heads.kT", 0));
    for (size_t i = 0; i < fu.n; i++)
        CU_ASSERT_DOUBLE_EQUAL(fu.ops[i].hints.strided_elems, 0, 0);
    xs_wl_free(&eg);
    xs_wl_free(&fu);
}

static void separate_ffn_bias_should_add_one_broadcast_add_a_layer(void)
{
    xs_scenario s;
    xs_workload sep, gem, fu;
    const char *a[] = {"train.ffn_bias=separate", "train.generic_loop_efficiency=0.6"};
    const char *b[] = {"train.ffn_bias=gemm"};
    const char *f[] = {"train.ffn_bias=separate", "train.kernels=fused"};
    build("bert-base-squad", a, 2, &s, &sep);
    double elems = (double)(s.train.batch * s.train.seq * s.model.ffn);
    size_t adds = 0;
    double add_bytes = 0;
    for (size_t i = 0; i < sep.n; i++) {
        const xs_op *op = &sep.ops[i];
        if (strcmp(op->name, "ffn.bias_add") != 0)
            continue;
        adds++;
        add_bytes += op->bytes;
        CU_ASSERT_EQUAL(op->phase, XS_PH_FWD);
        CU_ASSERT_EQUAL(op->launches, 1);
        /* reads the GEMM's half output, writes the half sum; the bias broadcasts */
        CU_ASSERT_DOUBLE_EQUAL(op->bytes, elems * 2 * 2, 0);
        CU_ASSERT_DOUBLE_EQUAL(op->hints.bw_scale, 0.6, 0);
    }
    CU_ASSERT_EQUAL(adds, (size_t)s.model.layers);
    build("bert-base-squad", b, 1, &s, &gem);
    CU_ASSERT_EQUAL(gem.n + adds, sep.n);
    double gem_bytes = 0, sep_bytes = 0;
    for (size_t i = 0; i < gem.n; i++)
        gem_bytes += gem.ops[i].bytes;
    for (size_t i = 0; i < sep.n; i++)
        sep_bytes += sep.ops[i].bytes;
    CU_ASSERT_DOUBLE_EQUAL(sep_bytes - gem_bytes, add_bytes, sep_bytes * 1e-12);
    build("bert-base-squad", f, 2, &s, &fu); /* a fused layer adds it in its epilogue */
    for (size_t i = 0; i < fu.n; i++)
        CU_ASSERT(strcmp(fu.ops[i].name, "ffn.bias_add") != 0);
    xs_wl_free(&sep);
    xs_wl_free(&gem);
    xs_wl_free(&fu);
}

static void grad_accum_should_repeat_micro_batches_and_accumulate(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *sets[] = {"train.grad_accum=4", "train.batch=8"};
    build("bert-base-squad", sets, 2, &s, &wl);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "ffn.up", 0)->count, 4);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "optimizer.adamw", -1)->count, 1);
    /* apex O2 sets the half gradients to None before each backward: the
     * later micro-batches add into the fp32 master gradients in apex's
     * multi_tensor_axpby, not in autograd */
    const xs_op *axpby = tu_find_op(&wl, "amp.master_grads.accumulate", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(axpby);
    CU_ASSERT_EQUAL(axpby->count, 3);
    CU_ASSERT_EQUAL(axpby->sync, 1);
    CU_ASSERT_DOUBLE_EQUAL(axpby->bytes, wl.params * (2 + 4 + 4), 0);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "amp.master_grads", -1)->count, 1);
    /* run_squad.py clips after every backward */
    CU_ASSERT_EQUAL(tu_find_op(&wl, "grad_clip.norm", -1)->count, 4);
    CU_ASSERT_EQUAL(wl.samples_per_step, 32);
    CU_ASSERT_EQUAL(wl.steps_per_epoch, (88641 + 31) / 32);
    CU_ASSERT_EQUAL(wl.steps, 2 * ((88641 + 31) / 32));
    xs_wl_free(&wl);
    /* under autocast autograd's AccumulateGrad adds them, tensor by tensor */
    const char *ac[] = {"train.grad_accum=4", "train.batch=8", "train.amp_mode=autocast",
                        "train.zero_grad=none"};
    build("bert-base-squad", ac, 4, &s, &wl);
    const xs_op *acc = tu_find_op(&wl, "grad.accumulate", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(acc);
    CU_ASSERT_EQUAL(acc->count, 3);
    CU_ASSERT_EQUAL(acc->launches, wl.tensors);
    CU_ASSERT_EQUAL(acc->issue, XS_ISSUE_ENGINE);
    xs_wl_free(&wl);
}

static double step_s(const xs_scenario *s, const xs_workload *wl)
{
    xs_device dev;
    xs_error err;
    xs_prediction p;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("v100-pcie-32gb", &dev, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_predict(&dev, s, wl, &p, &err), XS_OK);
    double t = p.step_time_s;
    xs_prediction_free(&p);
    return t;
}

/* A forward + loss.backward() benchmark (train.timed fwd_bwd): no optimizer
 * kernel, every backward adds into the gradients it left (no zero_grad),
 * the loss's forward kernels run untimed; the step is shorter by at least
 * the optimizer's time. */
static void fwd_bwd_benchmark_should_time_no_optimizer_and_no_loss_forward(void)
{
    xs_scenario s, f;
    xs_workload wl, wf;
    const char *sets[] = {"train.precision=fp32", "train.batch=2", "model.head=lm",
                          "train.timed=fwd_bwd"};
    build("bert-large-squad", sets, 3, &s, &wl);
    build("bert-large-squad", sets, 4, &f, &wf);
    int opt = 0;
    for (size_t i = 0; i < wf.n; i++)
        opt += wf.ops[i].phase == XS_PH_OPT;
    CU_ASSERT_EQUAL(opt, 0);
    const xs_op *acc = tu_find_op(&wf, "grad.accumulate", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(acc);
    CU_ASSERT_EQUAL(acc->count, 1);
    CU_ASSERT_EQUAL(acc->launches, wf.tensors);
    const xs_op *ls = tu_find_op(&wf, "head.log_softmax", -1);
    const xs_op *lb = tu_find_op(&wf, "head.log_softmax.bwd", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ls);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lb);
    CU_ASSERT_EQUAL(ls->count, 0);
    CU_ASSERT_EQUAL(lb->count, 1);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "head.log_softmax", -1)->count, 1);
    double opt_s = 0;
    {
        xs_device dev;
        xs_error err;
        xs_prediction p;
        CU_ASSERT_EQUAL_FATAL(xs_dev_open("v100-pcie-32gb", &dev, &err), XS_OK);
        CU_ASSERT_EQUAL_FATAL(xs_predict(&dev, &s, &wl, &p, &err), XS_OK);
        for (size_t i = 0; i < wl.n; i++)
            if (wl.ops[i].phase == XS_PH_OPT)
                opt_s += p.est[i].time_s * (double)wl.ops[i].count;
        xs_prediction_free(&p);
    }
    CU_ASSERT(opt_s > 0);
    CU_ASSERT(step_s(&f, &wf) < step_s(&s, &wl) - 0.9 * opt_s);
    /* no step() made optimizer state; no zero_grad freed the gradients */
    {
        xs_device dev;
        xs_error err;
        xs_prediction p;
        CU_ASSERT_EQUAL_FATAL(xs_dev_open("v100-pcie-32gb", &dev, &err), XS_OK);
        CU_ASSERT_EQUAL_FATAL(xs_predict(&dev, &f, &wf, &p, &err), XS_OK);
        CU_ASSERT_EQUAL(p.mem.optimizer, 0);
        CU_ASSERT(p.mem.grads >= 4.0 * wf.trainable_params);
        xs_prediction_free(&p);
    }
    xs_wl_free(&wl);
    xs_wl_free(&wf);
}

static void decoder_with_span_head_should_be_refused(void)
{
    xs_scenario s;
    xs_workload wl;
    char path[512];
    xs_error err;
    const char *sets[] = {"model.head=span"};
    CU_ASSERT_EQUAL(xs_resolve("scenarios", "gpt2-medium-finetune", path, sizeof path, &err),
                    XS_OK);
    CU_ASSERT_EQUAL(xs_scn_load(path, sets, 1, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_wl_build(&s, &wl, &err), XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs model.arch 'encoder'"));
}

static void tiny_model_op_list_should_match_the_golden_file(void)
{
    tu_result r = tu_run("workload -s tests/data/scenarios/tiny.json --format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    FILE *f = fopen("tests/data/golden/tiny-ops.csv", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char *golden = calloc(1, 1 << 20);
    size_t n = fread(golden, 1, (1 << 20) - 1, f);
    fclose(f);
    golden[n] = '\0';
    CU_ASSERT_STRING_EQUAL(r.out, golden);
    if (strcmp(r.out, golden) != 0)
        fprintf(stderr, "\nop list changed: review `make golden` and its diff\n");
    free(golden);
    tu_run_free(&r);
}

int tu_add_workload_suite(void)
{
    CU_pSuite s = CU_add_suite("workload", NULL, NULL);
    if (s && !CU_add_test(s, "fwd_bwd_benchmark_should_time_no_optimizer_and_no_loss_forward",
                          fwd_bwd_benchmark_should_time_no_optimizer_and_no_loss_forward))
        return -1;
    return !s ||
           !CU_add_test(s, "gemm_flops_should_match_6pt_plus_attention",
                        gemm_flops_should_match_6pt_plus_attention) ||
           !CU_add_test(s, "parameter_counts_should_match_the_published_models",
                        parameter_counts_should_match_the_published_models) ||
           !CU_add_test(s, "each_linear_should_have_two_backward_gemms_with_swapped_shapes",
                        each_linear_should_have_two_backward_gemms_with_swapped_shapes) ||
           !CU_add_test(s, "optimizer_traffic_should_follow_the_arrays_it_touches",
                        optimizer_traffic_should_follow_the_arrays_it_touches) ||
        !CU_add_test(s, "fp32_recipe_should_switch_to_bertadam",
                     fp32_recipe_should_switch_to_bertadam) ||
           !CU_add_test(s, "amp_should_add_casts_and_the_loss_scale_check",
                        amp_should_add_casts_and_the_loss_scale_check) ||
           !CU_add_test(s, "amp_o2_should_trade_casts_for_master_copies",
                        amp_o2_should_trade_casts_for_master_copies) ||
           !CU_add_test(s, "flash_attention_should_remove_the_seq_squared_traffic",
                        flash_attention_should_remove_the_seq_squared_traffic) ||
           !CU_add_test(s, "fused_kernels_should_cut_launches_not_gemm_flops",
                        fused_kernels_should_cut_launches_not_gemm_flops) ||
           !CU_add_test(s, "zeroed_gradients_should_be_filled_and_added_into",
                        zeroed_gradients_should_be_filled_and_added_into) ||
           !CU_add_test(s, "the_key_copy_should_read_across_rows",
                        the_key_copy_should_read_across_rows) ||
           !CU_add_test(s, "elementwise_loops_should_carry_their_elements_per_thread",
                        elementwise_loops_should_carry_their_elements_per_thread) ||
           !CU_add_test(s, "broadcasts_copies_and_casts_should_take_the_generic_loop",
                        broadcasts_copies_and_casts_should_take_the_generic_loop) ||
           !CU_add_test(s, "separate_ffn_bias_should_add_one_broadcast_add_a_layer",
                        separate_ffn_bias_should_add_one_broadcast_add_a_layer) ||
           !CU_add_test(s, "grad_accum_should_repeat_micro_batches_and_accumulate",
                        grad_accum_should_repeat_micro_batches_and_accumulate) ||
           !CU_add_test(s, "decoder_with_span_head_should_be_refused",
                        decoder_with_span_head_should_be_refused) ||
           !CU_add_test(s, "multi_tensor_apply_should_launch_as_apex_chunks_it",
                        multi_tensor_apply_should_launch_as_apex_chunks_it) ||
           !CU_add_test(s, "amp_kernels_should_match_the_audited_recipes",
                        amp_kernels_should_match_the_audited_recipes) ||
           !CU_add_test(s, "optimizer_impls_should_launch_as_their_code_does",
                        optimizer_impls_should_launch_as_their_code_does) ||
           !CU_add_test(s, "tiny_model_op_list_should_match_the_golden_file",
                        tiny_model_op_list_should_match_the_golden_file);
}
