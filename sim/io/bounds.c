/* bounds.c — see bounds.h. Products are formed with checked int64
 * arithmetic (checked.h), so a count that would wrap is reported with the
 * fields that made it, its size shown from a double (which cannot wrap). */
#include "bounds.h"

#include <stdio.h>

#include "checked.h"

/* One count the scenario implies: the product of n factors. */
static int check_count(const char *where, const char *what, const char *unit, const int64_t *f,
                       int n, xs_error *err)
{
    int64_t p;
    if (xs_prod_i64(f, n, &p) == 0 && p <= XS_MAX_COUNT)
        return XS_OK;
    double approx = 1;
    for (int i = 0; i < n; i++)
        approx *= (double)f[i];
    return xs_error_set(err, XS_ERANGE,
                        "%s: %s = %.3g %s, over the limit of 2^50 = %.3g (byte counts must "
                        "stay exact and inside 64 bits); use smaller values",
                        where, what, approx, unit, (double)XS_MAX_COUNT);
}

/* Parameters of the Transformer layers: four h x h attention projections
 * and two h x f FFN matrices a layer (biases and norms are far smaller). */
static int check_params(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    const int64_t attn_f[] = {4, m->hidden, m->hidden}, ffn_f[] = {2, m->hidden, m->ffn};
    int64_t attn, ffn, layer, total;
    int bad = xs_prod_i64(attn_f, 3, &attn) || xs_prod_i64(ffn_f, 3, &ffn) ||
              xs_add_i64(attn, ffn, &layer) || xs_mul_i64(layer, m->layers, &total);
    if (!bad && total <= XS_MAX_COUNT)
        return XS_OK;
    double approx = (double)m->layers *
                    (4.0 * (double)m->hidden * (double)m->hidden +
                     2.0 * (double)m->hidden * (double)m->ffn);
    return xs_error_set(err, XS_ERANGE,
                        "%s: model.layers x (4 x model.hidden^2 + 2 x model.hidden x model.ffn) "
                        "= %.3g parameters, over the limit of 2^50 = %.3g (byte counts must "
                        "stay exact and inside 64 bits); use smaller values",
                        where, approx, (double)XS_MAX_COUNT);
}

int xs_scn_counts_check(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    const struct {
        const char *name;
        int64_t v;
    } positive[] = {{"train.batch", t->batch},       {"train.seq", t->seq},
                    {"train.grad_accum", t->grad_accum}, {"cluster.devices", s->devices},
                    {"data.samples", s->samples},     {"data.epochs", s->epochs},
                    {"model.layers", m->layers},      {"model.hidden", m->hidden},
                    {"model.heads", m->heads},        {"model.ffn", m->ffn},
                    {"model.vocab", m->vocab},        {"model.labels", m->labels}};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        if (positive[i].v < 1)
            return xs_error_set(err, XS_ERANGE, "%s: %s must be at least 1, got %lld", where,
                                positive[i].name, (long long)positive[i].v);
    return XS_OK;
}

int xs_scn_bounds_check(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    int rc = xs_scn_counts_check(s, where, err);
    if (rc)
        return rc;
    const int64_t qkv[] = {t->batch, t->seq, m->hidden, 3};
    const int64_t ffn[] = {t->batch, t->seq, m->ffn};
    const int64_t logits[] = {t->batch, t->seq, m->vocab};
    const int64_t scores[] = {t->batch, m->heads, t->seq, t->seq};
    const int64_t tokens[] = {t->batch, t->seq, t->grad_accum, s->devices};
    rc = check_count(where, "train.batch x train.seq x model.hidden x 3",
                         "elements in the q, k and v tensors", qkv, 4, err);
    if (!rc)
        rc = check_count(where, "train.batch x train.seq x model.ffn",
                         "elements in one FFN activation", ffn, 3, err);
    if (!rc && m->head == XS_HEAD_LM)
        rc = check_count(where, "train.batch x train.seq x model.vocab",
                         "elements in the logits", logits, 3, err);
    /* flash attention keeps no score tensor, but its FLOPs and the tile
     * counts of its kernels grow the same way */
    if (!rc)
        rc = check_count(where, "train.batch x model.heads x train.seq x train.seq",
                         "attention-score elements", scores, 4, err);
    if (!rc)
        rc = check_params(s, where, err);
    if (!rc && m->family == XS_FAMILY_VIT) {
        const int64_t pixels[] = {t->batch, m->channels, m->image_size, m->image_size};
        const int64_t patch_w[] = {m->hidden, m->channels, m->patch_size, m->patch_size};
        rc = check_count(where, "train.batch x model.channels x model.image_size^2",
                         "pixels in a micro-batch", pixels, 4, err);
        if (!rc)
            rc = check_count(where, "model.hidden x model.channels x model.patch_size^2",
                             "patch-embedding weights", patch_w, 4, err);
    }
    if (!rc && m->family == XS_FAMILY_T5) { /* the decoder's tensors, over the target */
        const int64_t tq = t->target_seq > 0 ? t->target_seq : 1;
        const int64_t cross[] = {t->batch, m->heads, tq, t->seq};
        const int64_t tlogits[] = {t->batch, tq, m->vocab};
        const int64_t dec[] = {m->decoder_layers > 0 ? m->decoder_layers : m->layers,
                               2 * m->hidden, 4 * m->hidden + m->ffn};
        rc = check_count(where, "train.batch x model.heads x train.target_seq x train.seq",
                         "cross-attention score elements", cross, 4, err);
        if (!rc)
            rc = check_count(where, "train.batch x train.target_seq x model.vocab",
                             "elements in the logits", tlogits, 3, err);
        if (!rc)
            rc = check_count(where,
                             "model.decoder_layers x 2 model.hidden x (4 model.hidden + model.ffn)",
                             "decoder parameters", dec, 3, err);
    }
    if (!rc)
        rc = check_count(where, "train.batch x train.seq x train.grad_accum x cluster.devices",
                         "tokens a step", tokens, 4, err);
    if (rc)
        return rc;
    /* The run's steps are not an element count: only int64 range matters.
     * samples a step <= tokens a step, checked above. */
    int64_t per_step = t->batch * t->grad_accum * s->devices;
    int64_t per_epoch = s->samples / per_step + (s->samples % per_step != 0), steps;
    if (xs_mul_i64(per_epoch, s->epochs, &steps))
        return xs_error_set(err, XS_ERANGE,
                            "%s: data.samples / (train.batch x train.grad_accum x "
                            "cluster.devices) x data.epochs = %.3g steps overflows 64 bits; use "
                            "smaller values",
                            where, (double)per_epoch * (double)s->epochs);
    return XS_OK;
}
