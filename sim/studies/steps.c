/* steps.c — see steps.h. The waterfall is composition only: it chooses
 * the overrides of each step and hands them to the one load -> build ->
 * predict path (job.h); what a step changes in the prediction is what that
 * override changes in `xpusim predict`. */
#include "steps.h"

#include <stdio.h>
#include <string.h>

#include "batch_fit.h"
#include "job.h"
#include "memory.h"
#include "schema.h"

static const char *const NAMES[XS_STEP_COUNT] = {"amp", "fused_optimizer", "fused_kernels",
                                                 "flash", "batch"};

/* the keys the start turns off and the steps turn on again */
static const char *const OWNED[] = {"train.precision", "train.fused_optimizer",
                                    "train.optimizer_impl", "train.kernels", "train.attention"};

const char *xs_step_name(int kind)
{
    return kind == -1 ? "start" : kind >= 0 && kind < XS_STEP_COUNT ? NAMES[kind] : "?";
}

int xs_steps_parse_order(const char *text, int *order, int *n, xs_error *err)
{
    int seen[XS_STEP_COUNT] = {0};
    *n = 0;
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
        int k = len < sizeof word ? xs_choice_index(XS_STEP_CHOICES, word) : -1;
        if (k < 0)
            return xs_error_set(err, XS_EARG,
                                "--order: '%.*s' is not a step (steps: amp, fused_optimizer, "
                                "fused_kernels, flash, batch, separated by commas)",
                                (int)(len > 64 ? 64 : len), p);
        if (seen[k]++)
            return xs_error_set(err, XS_EARG, "--order: step '%s' is named twice", NAMES[k]);
        order[(*n)++] = k;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    return XS_OK;
}

int xs_steps_owns_key(const char *kv)
{
    size_t len = strcspn(kv, "=");
    for (size_t i = 0; i < sizeof OWNED / sizeof OWNED[0]; i++)
        if (strlen(OWNED[i]) == len && strncmp(kv, OWNED[i], len) == 0)
            return 1;
    return 0;
}

static int add_set(xs_steps *st, const char *kv, xs_error *err)
{
    if (st->nsets == XS_STEPS_MAX_SETS)
        return xs_error_set(err, XS_EARG, "steps: too many --set overrides (at most %d)",
                            XS_STEPS_MAX_SETS - 16);
    if (strlen(kv) >= XS_STEPS_SET_MAX)
        return xs_error_set(err, XS_EARG, "steps: --set '%.40s...' is longer than %d characters",
                            kv, XS_STEPS_SET_MAX - 1);
    snprintf(st->sets[st->nsets++], XS_STEPS_SET_MAX, "%s", kv);
    return XS_OK;
}

/* A job with the first nsets overrides of st: loaded, built and predicted,
 * or the error that stopped it (the job is then freed). */
static int job_at(const xs_steps_spec *sp, const xs_steps *st, int nsets, xs_job *j,
                  xs_error *err)
{
    const char *sets[XS_STEPS_MAX_SETS];
    for (int i = 0; i < nsets; i++)
        sets[i] = st->sets[i];
    xs_job_init(j);
    j->dev = *sp->dev;
    int rc = xs_job_scenario_compact(j, sp->scenario, sets, nsets, err);
    if (!rc)
        rc = xs_job_predict(j, 0, err);
    if (rc)
        xs_job_free(j);
    return rc;
}

static void fill(xs_step *s, const xs_job *j)
{
    const xs_prediction *p = &j->p;
    s->batch = j->s.train.batch;
    s->step_time_s = p->step_time_s;
    s->samples_per_s = p->samples_per_s;
    s->tokens_per_s = p->tokens_per_s;
    s->run_time_s = p->run_time_s;
    s->energy_kwh = p->run_energy_kwh;
    s->cost_usd = p->run_cost_usd;
    s->mfu = p->mfu;
    s->memory_gb = p->mem.total / XS_GIB;
    s->capacity_gb = p->mem.capacity / XS_GIB;
    s->fits = p->mem.fits;
    s->matmul_engine = p->matmul_engine;
}

/* Errors that stop the waterfall rather than skip one step. */
static int fatal(int rc)
{
    return rc == XS_ENOMEM || rc == XS_EIO;
}

/* The overrides of step kind on the current scenario (cur), or a reason
 * it cannot apply in why (then set is ""). */
static int choose(const xs_steps_spec *sp, const xs_job *cur, int kind, char *set, size_t n,
                  char *why, size_t wn, xs_error *err)
{
    const xs_device *dev = sp->dev;
    const xs_scenario *s = &cur->s;
    set[0] = why[0] = '\0';
    switch (kind) {
    case XS_STEP_AMP:
        /* bf16 first: the same matrix-engine peak as fp16 on every GPU in
         * devices/ that has both (from the datasheets), and under autocast
         * no GradScaler, whose scale, unscale and inf check an fp16 step
         * runs (wl_optimizer.c); apex O2 scales either way */
        if (dev->peak_tflops[XS_BF16] > 0) {
            snprintf(set, n, "train.precision=amp_bf16");
            snprintf(why, wn, "%s runs bf16 on its matrix engine (datasheet peak %g TFLOP/s)%s",
                     dev->id, dev->peak_tflops[XS_BF16],
                     s->train.amp_mode == XS_AMP_AUTOCAST
                         ? ": bf16 needs no GradScaler (its scale, unscale and inf check)"
                         : "; apex O2 scales the loss in bf16 as in fp16");
        } else if (dev->peak_tflops[XS_FP16] > 0) {
            snprintf(set, n, "train.precision=amp_fp16");
            snprintf(why, wn, "%s runs fp16 (datasheet peak %g TFLOP/s) but not bf16 on its "
                              "matrix engine",
                     dev->id, dev->peak_tflops[XS_FP16]);
        } else
            snprintf(why, wn, "%s has no fp16 or bf16 matrix engine (datasheet peak 0)",
                     dev->id);
        return XS_OK;
    case XS_STEP_FUSED_OPTIMIZER: {
        int fused;
        if (xs_train_optimizer(&s->train, &fused) == XS_OPT_BERTADAM)
            snprintf(why, wn, "the optimizer at this step is bertadam (train.%s), a Python loop "
                              "of tensor ops with no fused form",
                     s->train.optimizer == XS_OPT_BERTADAM ? "optimizer"
                                                           : "fp32_optimizer, in fp32");
        else
            snprintf(set, n, "train.fused_optimizer=true,train.optimizer_impl=multi_tensor");
        return XS_OK;
    }
    case XS_STEP_FUSED_KERNELS:
        if (s->model.family != XS_FAMILY_CLASSIC) {
            char fam[32];
            xs_choice_word(XS_FAMILY_CHOICES, s->model.family, fam, sizeof fam);
            snprintf(why, wn, "train.kernels fused (LightSeq's layer kernels) is modelled for "
                              "the classic family (BERT, GPT-2) only, not %s",
                     fam);
        } else if (s->train.lora_rank > 0)
            snprintf(why, wn, "train.kernels fused (LightSeq's layer kernels) has no LoRA "
                              "adapters: the scenario trains with train.lora.rank %lld",
                     (long long)s->train.lora_rank);
        else
            snprintf(set, n, "train.kernels=fused");
        return XS_OK;
    case XS_STEP_FLASH:
        snprintf(set, n, "train.attention=flash");
        return XS_OK;
    case XS_STEP_BATCH: {
        int64_t b = sp->batch, have = s->train.batch;
        xs_memory at, next;
        if (b == 0) {
            int rc = xs_fit_max_batch(dev, s, &b, &at, &next, err);
            if (rc)
                return rc;
            if (b <= have) {
                if (b == 0)
                    snprintf(why, wn, "not even train.batch=1 fits %s (%.2f GB of %.2f GB)",
                             dev->id, at.total / XS_GIB, at.capacity / XS_GIB);
                else if (b < have)
                    snprintf(why, wn,
                             "train.batch=%lld does not fit %s (%.2f GB of %.2f GB): the "
                             "largest micro-batch that fits is %lld, smaller",
                             (long long)have, dev->id, cur->p.mem.total / XS_GIB,
                             cur->p.mem.capacity / XS_GIB, (long long)b);
                else
                    snprintf(why, wn,
                             "train.batch=%lld is already the largest that fits %s (%lld "
                             "needs %.2f GB of %.2f GB)",
                             (long long)have, dev->id, (long long)(b + 1), next.total / XS_GIB,
                             next.capacity / XS_GIB);
                return XS_OK;
            }
            snprintf(why, wn, "the largest micro-batch that fits %s (%.2f GB of %.2f GB)",
                     dev->id, at.total / XS_GIB, at.capacity / XS_GIB);
        } else {
            if (b == have) {
                snprintf(why, wn, "train.batch is %lld already", (long long)b);
                return XS_OK;
            }
            int rc = xs_fit_memory_at(dev, s, b, &at, err);
            if (rc && fatal(rc))
                return rc;
            if (rc) {
                snprintf(why, wn, "%s", err->msg);
                return XS_OK;
            }
            if (!at.fits) {
                snprintf(why, wn, "train.batch=%lld does not fit %s: %.2f GB of %.2f GB",
                         (long long)b, dev->id, at.total / XS_GIB, at.capacity / XS_GIB);
                return XS_OK;
            }
            snprintf(why, wn, "--batch %lld", (long long)b);
        }
        snprintf(set, n, "train.batch=%lld", (long long)b);
        return XS_OK;
    }
    }
    return xs_error_set(err, XS_EARG, "steps: unknown step %d", kind);
}

int xs_steps_run(const xs_steps_spec *sp, xs_steps *st, xs_error *err)
{
    memset(st, 0, sizeof *st);
    snprintf(st->device, sizeof st->device, "%s", sp->dev->id);
    int rc;
    for (int i = 0; i < sp->nsets; i++) {
        if (xs_steps_owns_key(sp->sets[i]))
            return xs_error_set(err, XS_EARG,
                                "steps: --set %.*s: the waterfall sets this key (off at the "
                                "start, on in its step); leave the step out of --order to keep "
                                "it off",
                                (int)strcspn(sp->sets[i], "="), sp->sets[i]);
        if ((rc = add_set(st, sp->sets[i], err)))
            return rc;
    }
    /* the scenario as given, to learn the optimizer kernels it runs when
     * not fused: torch.optim's foreach stays foreach (the start is the
     * scenario with its optimisations off, not a slower recipe) */
    xs_job j;
    xs_job_init(&j);
    if ((rc = xs_job_scenario(&j, sp->scenario, sp->sets, sp->nsets, err))) {
        xs_job_free(&j);
        return rc;
    }
    snprintf(st->scenario, sizeof st->scenario, "%s", j.s.id);
    int foreach = j.s.train.optimizer_impl == XS_OPT_IMPL_FOREACH;
    xs_job_free(&j);
    static const char *const start[] = {"train.precision=fp32", "train.fused_optimizer=false",
                                        "train.kernels=eager", "train.attention=unfused"};
    for (size_t i = 0; i < sizeof start / sizeof start[0]; i++)
        if ((rc = add_set(st, start[i], err)))
            return rc;
    if ((rc = add_set(st, foreach ? "train.optimizer_impl=foreach" : "train.optimizer_impl=auto",
                      err)))
        return rc;

    xs_step *s0 = &st->step[0];
    s0->kind = -1;
    s0->applied = 1;
    s0->nsets = st->nsets;
    xs_job cur;
    if ((rc = job_at(sp, st, st->nsets, &cur, err)))
        return rc;
    int fused;
    int opt = xs_train_optimizer(&cur.s.train, &fused);
    snprintf(s0->setting, sizeof s0->setting,
             "fp32, %s unfused (%s), eager kernels, unfused attention", xs_optimizer_name(opt),
             opt == XS_OPT_BERTADAM || !foreach ? "for-loop" : "foreach");
    if (opt != cur.s.train.optimizer)
        snprintf(s0->why, sizeof s0->why, "in fp32 the recipe runs %s (train.fp32_optimizer)",
                 xs_optimizer_name(opt));
    fill(s0, &cur);
    st->n = 1;

    for (int k = 0; k < sp->norder; k++) {
        xs_step *s = &st->step[st->n++];
        *s = st->step[st->n - 2]; /* a skipped step keeps the last applied one's numbers */
        s->kind = sp->order[k];
        s->applied = 0;
        s->setting[0] = s->why[0] = '\0';
        char set[XS_STEPS_SET_MAX];
        if ((rc = choose(sp, &cur, s->kind, set, sizeof set, s->why, sizeof s->why, err)))
            break;
        if (!set[0])
            continue;
        int before = st->nsets;
        /* one override a key: "a=1,b=2" is two --set */
        for (char *p = set, *q; p; p = q) {
            q = strchr(p, ',');
            if (q)
                *q++ = '\0';
            if ((rc = add_set(st, p, err)))
                break;
        }
        if (rc)
            break;
        xs_job next;
        xs_error e;
        int jrc = job_at(sp, st, st->nsets, &next, &e);
        if (jrc && fatal(jrc)) {
            *err = e;
            rc = jrc;
            break;
        }
        if (jrc) {
            st->nsets = before;
            snprintf(s->why, sizeof s->why, "%s", e.msg);
            continue;
        }
        s->applied = 1;
        s->nsets = st->nsets;
        for (int i = before; i < st->nsets; i++)
            snprintf(s->setting + strlen(s->setting), sizeof s->setting - strlen(s->setting),
                     "%s%s", i > before ? " " : "", st->sets[i]);
        fill(s, &next);
        xs_job_free(&cur);
        cur = next;
    }
    xs_job_free(&cur);
    return rc;
}
