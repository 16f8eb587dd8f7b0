/* wl_layers.c — a model's skeleton as every family builds it: its
 * embeddings (frozen under LoRA) and its layers, each numbered and, under
 * train.checkpointing layer, checkpointed; in a compact build a run of
 * identical layers is built once and repeated. */
#include "wl_build.h"

#include <stdlib.h>
#include <string.h>

#include "kernel_fn.h"
#include "lora.h"

/* torch.utils.checkpoint around the layer whose forward ops are
 * wl->ops[start..]: run under no_grad, they keep nothing; the checkpoint
 * keeps the layer's input (and the RNG state, a few bytes). Their copies,
 * which keep what the forward would have kept, run again in the backward
 * (recompute, in replay_tape). transformers' gradient_checkpointing_enable
 * passed use_reentrant=True when given no kwargs through the 4.x releases
 * (modeling_utils.py; its copy in LLaMA-Factory, team code index,
 * find_string id 11985995235) and passes False from 5.x (id 70577654386,
 * quoting transformers 5's modeling_utils.py): either way the layer's
 * Python forward runs again (the reentrant checkpoint before the layer's
 * backward, the non-reentrant one at its first saved-tensor unpack, the
 * same place in this list), so the copies are issued as forward ops are. */
static void checkpoint_layer(xs_wb *c, size_t start, int64_t layer)
{
    if (c->failed || start >= c->wl->n)
        return;
    size_t n = c->wl->n - start;
    size_t need = c->rn + n, cap = c->rcap ? c->rcap : 256;
    while (cap < need)
        cap *= 2;
    xs_op *r = cap > c->rcap ? realloc(c->recomp, cap * sizeof *r) : c->recomp;
    if (r) {
        c->recomp = r;
        c->rcap = cap;
    }
    size_t *rs = realloc(c->rstart, (size_t)(layer + 2) * sizeof *rs);
    double *in = realloc(c->ckpt_in, (size_t)(layer + 1) * sizeof *in);
    if (rs)
        c->rstart = rs;
    if (in)
        c->ckpt_in = in;
    if (!r || !rs || !in) {
        c->failed = 1;
        return;
    }
    c->rstart[layer] = c->rn;
    for (size_t i = start; i < c->wl->n; i++) {
        xs_op op = c->wl->ops[i];
        op.hints.fn = xs_cpu_fn_for_op(&op); /* what it is, though it runs in the backward */
        op.phase = XS_PH_BWD;
        op.recompute = 1;
        c->recomp[c->rn++] = op;
        c->wl->ops[i].mem.saved = c->wl->ops[i].mem.slack = 0;
    }
    c->rstart[layer + 1] = c->rn;
    /* the layer's input: the last layer's output (or the embeddings'), in
     * the fp32-island format */
    double x = c->T * c->h * c->I;
    c->ckpt_in[layer] = x;
    c->wl->ops[start].mem.saved += x;
    c->wl->ops[start].mem.slack += xs_alloc_slack(x);
}

/* LoRA freezes the embeddings, so nothing before the first adapter needs a
 * gradient, unless checkpointing is on: the reentrant checkpoint needs an
 * input that requires grad, and PEFT and transformers make the input
 * embeddings' output require it (enable_input_require_grads). */
void xs_wb_embeddings(xs_wb *c, void (*embeddings)(xs_wb *))
{
    int nograd = c->lora && !c->ckpt;
    c->nograd = nograd;
    embeddings(c);
    c->nograd = 0;
    c->input_nograd = nograd;
}

/* What a layer's ops depend on besides the scenario: the builder's state
 * where the layer starts, the phase of the op before it (whose transient
 * the layer's first linear takes over if it is a forward op: the builders
 * write that op, they read nothing else of it), and the layer's number
 * (through the LoRA targets, xs_lora_layer_blind, and in a family whose
 * first layer differs, first_layer_differs). Two layers that start from
 * equal entries emit equal ops. */
typedef struct {
    double d[4];
    int64_t modules;
    int flags[12];
    int last_phase;
} layer_entry;

static void entry_of(const xs_wb *c, layer_entry *e)
{
    memset(e, 0, sizeof *e);
    e->d[0] = c->pending_saved;
    e->d[1] = c->pending_slack;
    e->d[2] = c->pending_grad_slack;
    e->d[3] = c->wl->trainable_params - c->params_mark;
    e->modules = c->modules;
    const int flags[] = {c->x_kept,  c->x_unkept, c->input_nograd, c->nograd,
                         c->frozen,  c->broadcast, c->transposing, c->dropped,
                         c->last_in_tape, c->failed, c->replayed, c->has_tied};
    memcpy(e->flags, flags, sizeof flags);
    e->last_phase = c->wl->n > 0 ? c->wl->ops[c->wl->n - 1].phase : -1;
}

static int entries_equal(const layer_entry *a, const layer_entry *b)
{
    return memcmp(a->d, b->d, sizeof a->d) == 0 && a->modules == b->modules &&
           memcmp(a->flags, b->flags, sizeof a->flags) == 0 && a->last_phase == b->last_phase;
}

/* The workload's sums a layer adds to, to add the skipped layers' share. */
typedef struct {
    double params, trainable, matmul, quant_params, quant_bytes;
    int64_t tensors, fp8_linears;
} wl_sums;

static wl_sums sums_of(const xs_workload *wl)
{
    return (wl_sums){wl->params, wl->trainable_params, wl->params_matmul, wl->quant_params,
                     wl->quant_bytes, wl->tensors, wl->fp8_linears};
}

/* The layers after the template layer (just built from wl->ops[f0] on,
 * its groups from g0 and parameters from pn0) up to the last but one are
 * it again:
 * their parameters, units and checkpoint slots are added as the template
 * added its own, one after another (the sums are of whole numbers, exact
 * in any order), and the run recorded. */
static void repeat_template(xs_wb *c, size_t f0, size_t g0, size_t pn0, const wl_sums *before,
                            int64_t skipped)
{
    if (c->nruns == XS_WB_MAX_RUNS || g0 == c->gn) { /* a layer without a backward: flat */
        c->not_compact = 1;
        return;
    }
    xs_workload *wl = c->wl;
    wl_sums after = sums_of(wl);
    size_t np = c->pn - pn0;
    for (int64_t r = 0; r < skipped && !c->failed; r++) {
        wl->params += after.params - before->params;
        wl->trainable_params += after.trainable - before->trainable;
        c->params_mark += after.trainable - before->trainable;
        wl->params_matmul += after.matmul - before->matmul;
        wl->quant_params += after.quant_params - before->quant_params;
        wl->quant_bytes += after.quant_bytes - before->quant_bytes;
        wl->tensors += after.tensors - before->tensors;
        wl->fp8_linears += after.fp8_linears - before->fp8_linears;
        xs_wb_repeat_tensor_entries(c, pn0, np); /* the optimizer packs every tensor */
    }
    if (c->ckpt && !c->failed) {
        int tmpl = c->unit, last = c->unit + (int)skipped;
        size_t *rs = realloc(c->rstart, (size_t)(last + 2) * sizeof *rs);
        double *in = realloc(c->ckpt_in, (size_t)(last + 1) * sizeof *in);
        if (rs)
            c->rstart = rs;
        if (in)
            c->ckpt_in = in;
        if (!rs || !in) {
            c->failed = 1;
            return;
        }
        for (int u = tmpl + 1; u <= last; u++) { /* no ops of their own: empty */
            c->rstart[u + 1] = c->rstart[u] = c->rn;
            c->ckpt_in[u] = c->ckpt_in[tmpl];
        }
    }
    c->units += (int)skipped;
    c->runs[c->nruns++] = (xs_wb_run){.f0 = f0, .f1 = wl->n, .g0 = g0, .g1 = c->gn,
                                      .count = skipped + 1, .layer = c->layer};
}

void xs_wb_layers(xs_wb *c, int64_t n, void (*layer)(xs_wb *))
{
    int repeated = 0;
    for (int64_t l = 0; l < n; l++) {
        c->layer = (int)l;
        c->unit = c->units++;
        size_t start = c->wl->n, g0 = c->gn, pn0 = c->pn;
        /* the first layer (else the second: LoRA's first layer takes no
         * gradient in, T5's holds the position bias) is the template of the
         * run up to the last but one, if it starts where it ends */
        int tmpl = c->compact && !repeated && n >= 4 && xs_lora_layer_blind(c->s, c->lora_names) &&
                   (l == 1 || (l == 0 && !c->first_layer_differs));
        layer_entry in, out;
        wl_sums before = sums_of(c->wl);
        if (tmpl)
            entry_of(c, &in);
        layer(c);
        if (c->ckpt)
            checkpoint_layer(c, start, c->unit);
        if (tmpl && !c->failed) {
            entry_of(c, &out);
            if (entries_equal(&in, &out)) {
                repeat_template(c, start, g0, pn0, &before, n - 2 - l);
                l = n - 2;
                repeated = 1;
            }
        }
    }
    c->first_layer_differs = 0;
    c->input_nograd = 0;
    c->layer = -1;
    c->unit = -1;
}
