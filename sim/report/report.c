/* report.c — the reports of a training step: predict (per op, step and
 * run), workload (the op list alone) and compare (one row a device), and
 * the JSON emitter every report shares. The table groups identical ops of
 * all layers into one row (calls = layers x micro-batches) so a 24-layer
 * model reads in one screen; JSON and CSV keep every op. */
#include "report.h"
#include "backend.h"

#include "family.h"
#include "stack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xs_report_json(xs_strbuf *sb, cJSON *root)
{
    char *text = root ? cJSON_Print(root) : NULL;
    if (!text) {
        sb->failed = 1;
    } else {
        xs_sb_printf(sb, "%s\n", text);
        free(text);
    }
    cJSON_Delete(root);
}


/* One table row: an op name in one phase, summed over layers. */
typedef struct {
    const xs_op *first;
    size_t first_index;
    int64_t calls;
    double flops, bytes, time_s;
} row;

static row *group_rows(const xs_workload *wl, const xs_prediction *p, size_t *nrows)
{
    row *rows = calloc(wl->n ? wl->n : 1, sizeof *rows);
    size_t n = 0;
    for (size_t i = 0; rows && i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        size_t r = 0;
        while (r < n && !(rows[r].first->phase == op->phase &&
                          strcmp(rows[r].first->name, op->name) == 0))
            r++;
        if (r == n) {
            rows[n].first = op;
            rows[n].first_index = i;
            n++;
        }
        double c = (double)op->count;
        rows[r].calls += op->count;
        rows[r].flops += op->flops * c;
        rows[r].bytes += op->bytes * c;
        rows[r].time_s += p ? p->est[i].time_s * c : 0;
    }
    *nrows = n;
    return rows;
}

static void shape_text(const xs_op *op, char *buf, size_t size)
{
    if (!op->m) {
        snprintf(buf, size, "-");
        return;
    }
    if (op->batch > 1)
        snprintf(buf, size, "%lldx%lldx%lld b%lld", (long long)op->m, (long long)op->n,
                 (long long)op->k, (long long)op->batch);
    else
        snprintf(buf, size, "%lldx%lldx%lld", (long long)op->m, (long long)op->n,
                 (long long)op->k);
}

/* Only matmuls have a format of their own; pointwise ops run on fp32 units. */
static const char *op_dtype(const xs_op *op)
{
    return xs_op_is_matmul(op->kind) ? xs_dtype_name(op->dtype) : "-";
}

static void scenario_lines(xs_strbuf *sb, const xs_scenario *s, const xs_workload *wl)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    xs_family_of(m->family)->describe(sb, s, wl->params);
    int fused;
    int opt = xs_train_optimizer(t, &fused);
    xs_sb_printf(sb,
                 "train     batch %lld x seq %lld, %s, %s (%s), %s kernels, %s attention, "
                 "grad_accum %lld, %lld device%s%s\n",
                 (long long)t->batch, (long long)t->seq, xs_precision_name(t->precision),
                 xs_optimizer_name(opt), fused ? "fused" : "eager",
                 t->kernels == XS_K_FUSED ? "fused" : "eager",
                 t->attention == XS_ATT_FLASH ? "flash" : "unfused", (long long)t->grad_accum,
                 (long long)s->devices, s->devices > 1 ? "s" : "",
                 t->timed == XS_TIMED_FWD_BWD
                     ? "; timed: forward + loss.backward() only (no optimizer step, no "
                       "zero_grad, the loss's forward and loading untimed)"
                     : "");
    if (t->lora_rank > 0)
        xs_sb_printf(sb,
                     "lora      rank %lld on %s (alpha %g, dropout %g), head %s%s: %.3f M of "
                     "%.1f M parameters trained\n",
                     (long long)t->lora_rank, t->lora_targets[0] ? t->lora_targets : "PEFT's default",
                     t->lora_alpha, t->lora_dropout, t->lora_train_head ? "trained" : "frozen",
                     t->quant == XS_QUANT_NF4 ? ", base weights of the layers in nf4" : "",
                     wl->trainable_params / 1e6, wl->params / 1e6);
    if (t->checkpointing == XS_CKPT_LAYER)
        xs_sb_printf(sb, "ckpt      every layer checkpointed: its forward runs again in the "
                         "backward\n");
    if (s->power_limit_w > 0)
        xs_sb_printf(sb, "power     limit %g W (device.power_limit_w): the core clock is the "
                         "highest at which the step's average power fits\n",
                     s->power_limit_w);
}

/* A collective runs on NCCL's stream, bound by its links: no kernel bound
 * of the compute stream's applies. */
static const char *op_bound(const xs_op *op, const xs_estimate *e)
{
    return op->kind == XS_OP_COMM ? "link" : xs_bound_name(e->bound);
}

/* What the device's matrix engine is called: its class's word for it. */
static const char *matrix_unit(const xs_device *dev)
{
    const char *u = xs_backend_of(dev)->matrix_unit;
    return u ? u : "tensor cores";
}

/* What was predicted: device, scenario, and where the matmuls ran. */
static void predict_header(xs_strbuf *sb, const xs_device *dev, const xs_scenario *s,
                           const xs_workload *wl, const xs_prediction *p)
{
    xs_sb_printf(sb, "xpusim predict: %s on %s (%s)\n", s->id, dev->id, dev->name);
    scenario_lines(sb, s, wl);
    xs_sb_printf(sb, "matmuls   asked in %s, run in %s on %s at %.0f MHz sustained%s\n",
                 xs_dtype_name(p->matmul_asked), xs_dtype_name(p->matmul_engine),
                 p->matmul_tensor ? matrix_unit(dev) : "fp32 vector units", p->matmul_clock_mhz,
                 p->matmul_engine == p->matmul_asked ? ""
                 : xs_backend_of(dev)->matrix_unit
                     ? " (the MXUs multiply in bf16 and sum in fp32)"
                     : " (the device has no tensor-core path for it)");
    if (s->power_limit_w > 0)
        xs_sb_printf(sb, "clock     %.1f%% of the clock at the default %g W limit, under the %g W "
                         "limit\n",
                     100 * p->clock_scale, dev->tdp_w, p->power_limit_w);
    if (p->note[0])
        xs_sb_printf(sb, "compiled  %s\n", p->note);
    const xs_host *h = &p->host;
    const xs_host_costs *c = &p->host_costs;
    if (p->host_issue_s <= 0)
        return; /* the host is the device: nothing is issued ahead */
    if (h->flat_us > 0)
        xs_sb_printf(sb, "host      %.3g us a launch (train.host_op_us), %.1f ms to issue the "
                         "step\n",
                     h->flat_us, p->host_issue_s * 1e3);
    else
        xs_sb_printf(sb,
                     "host      us a launch: eager %.3g, engine %.3g, autocast %.3g, loop %.3g, "
                     "multi-tensor %.3g + %.3g a call; nn.Module call %.3g (framework %s, "
                     "cpu_scale %.3g); %.1f ms to issue the step\n",
                     c->launch_us[XS_ISSUE_EAGER], c->launch_us[XS_ISSUE_ENGINE],
                     c->launch_us[XS_ISSUE_AUTOCAST], c->launch_us[XS_ISSUE_LOOP],
                     c->launch_us[XS_ISSUE_MULTI], c->multi_call_us, h->module_us / h->cpu_scale,
                     xs_framework_name(h->framework), h->cpu_scale, p->host_issue_s * 1e3);
}

/* The answer: the step, its band, and the whole run's time, energy, cost. */
static void predict_answer(xs_strbuf *sb, const xs_device *dev, const xs_scenario *s,
                           const xs_workload *wl, const xs_prediction *p)
{
    xs_report_memory_lines(sb, &p->mem);
    xs_sb_printf(sb,
                 "step      %.4f s   %.1f samples/s   %.0f tokens/s   MFU %.1f%%   "
                 "%.0f W avg   %.1f J\n",
                 p->step_time_s, p->samples_per_s, p->tokens_per_s, 100 * p->mfu,
                 p->avg_power_w, p->step_energy_j);
    if (s->devices > 1)
        xs_report_cluster_lines(sb, s, wl, p);
    if (p->step_time_high_s > 0)
        xs_sb_printf(sb, "band      %.1f to %.1f samples/s, $%.2f to $%.2f a run (the device's "
                         "sustained-clock and efficiency ranges)\n",
                     p->samples_per_s_low, p->samples_per_s_high, p->run_cost_low_usd,
                     p->run_cost_high_usd);
    xs_sb_printf(sb,
                 "run       %lld steps (%lld/epoch x %lld epochs)   %.2f h   %.3f kWh   "
                 "$%.2f at $%.3f/device-hour (%s, %s)\n",
                 (long long)p->steps, (long long)wl->steps_per_epoch, (long long)s->epochs,
                 p->run_time_s / 3600, p->run_energy_kwh, p->run_cost_usd,
                 dev->price_usd_per_hour, dev->price_provider, dev->price_as_of);
}

static void predict_table(xs_strbuf *sb, const xs_device *dev, const xs_scenario *s,
                           const xs_workload *wl, const xs_prediction *p)
{
    predict_header(sb, dev, s, wl, p);
    xs_sb_printf(sb, "\n");
    size_t nrows;
    row *rows = group_rows(wl, p, &nrows);
    if (!rows) {
        sb->failed = 1;
        return;
    }
    xs_sb_printf(sb, "%-5s %-32s %-9s %6s %-22s %10s %10s %9s %6s %-7s\n", "phase", "op",
                 "kind", "calls", "m x n x k (batch)", "GFLOP", "MB", "time ms", "share",
                 "bound");
    for (size_t r = 0; r < nrows; r++) {
        const xs_op *op = rows[r].first;
        char shape[48];
        shape_text(op, shape, sizeof shape);
        xs_sb_printf(sb, "%-5s %-32s %-9s %6lld %-22s %10.2f %10.1f %9.3f %5.1f%% %-7s\n",
                     xs_phase_name(op->phase), op->name, xs_op_kind_name(op->kind),
                     (long long)rows[r].calls, shape, rows[r].flops / 1e9, rows[r].bytes / 1e6,
                     rows[r].time_s * 1e3, 100 * rows[r].time_s / p->step_time_s,
                     op_bound(op, &p->est[rows[r].first_index]));
    }
    free(rows);
    xs_sb_printf(sb, "\nby phase  ");
    for (int ph = 0; ph < XS_PHASE_COUNT; ph++)
        if (p->phase_time_s[ph] > 0)
            xs_sb_printf(sb, "%s %.1f ms (%.0f%%)   ", xs_phase_name(ph),
                         p->phase_time_s[ph] * 1e3, 100 * p->phase_time_s[ph] / p->step_time_s);
    if (p->host_wait_s >= 5e-5) /* shown from 0.05 ms */
        xs_sb_printf(sb, "host wait %.1f ms (%.0f%%: the device idle while the host loads "
                         "samples or issues kernels after a read-back)",
                     p->host_wait_s * 1e3, 100 * p->host_wait_s / p->step_time_s);
    xs_sb_printf(sb, "\nby bound  ");
    for (int b = 0; b < XS_BOUND_COUNT; b++)
        xs_sb_printf(sb, "%s %.1f ms (%.0f%%)   ", xs_bound_name(b), p->bound_time_s[b] * 1e3,
                     100 * p->bound_time_s[b] / p->step_time_s);
    xs_sb_printf(sb, "\n\n");
    predict_answer(sb, dev, s, wl, p);
}

static cJSON *op_json(const xs_op *op, const xs_estimate *e)
{
    double c = (double)op->count;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", op->name);
    cJSON_AddNumberToObject(o, "layer", op->layer);
    cJSON_AddStringToObject(o, "phase", xs_phase_name(op->phase));
    cJSON_AddStringToObject(o, "kind", xs_op_kind_name(op->kind));
    cJSON_AddStringToObject(o, "dtype", op_dtype(op));
    cJSON_AddNumberToObject(o, "m", (double)op->m);
    cJSON_AddNumberToObject(o, "n", (double)op->n);
    cJSON_AddNumberToObject(o, "k", (double)op->k);
    cJSON_AddNumberToObject(o, "batch", (double)op->batch);
    cJSON_AddBoolToObject(o, "ta", op->ta);
    cJSON_AddBoolToObject(o, "tb", op->tb);
    cJSON_AddNumberToObject(o, "calls", c);
    cJSON_AddNumberToObject(o, "launches", (double)op->launches * c);
    cJSON_AddStringToObject(o, "issue", xs_issue_name(op->issue));
    cJSON_AddNumberToObject(o, "modules", (double)op->modules * c);
    cJSON_AddNumberToObject(o, "flops", op->flops * c);
    cJSON_AddNumberToObject(o, "bytes", op->bytes * c);
    if (e) {
        cJSON_AddStringToObject(o, "engine", xs_dtype_name(e->engine));
        cJSON_AddNumberToObject(o, "time_s", e->time_s * c);
        cJSON_AddNumberToObject(o, "compute_s", e->compute_s * c);
        cJSON_AddNumberToObject(o, "memory_s", e->memory_s * c);
        cJSON_AddNumberToObject(o, "overhead_s", e->overhead_s * c);
        cJSON_AddStringToObject(o, "bound", op_bound(op, e));
        cJSON_AddNumberToObject(o, "power_w", e->power_w);
        cJSON_AddNumberToObject(o, "energy_j", e->energy_j * c);
    }
    return o;
}

static cJSON *scenario_json(const xs_scenario *s, const xs_workload *wl)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    static const char *kernels[] = {"eager", "fused"}, *att[] = {"unfused", "flash"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", s->id);
    cJSON_AddStringToObject(o, "description", s->description);
    cJSON *mo = cJSON_AddObjectToObject(o, "model");
    cJSON_AddStringToObject(mo, "arch", m->arch == XS_ENCODER_DECODER ? "encoder_decoder"
                                        : m->arch == XS_DECODER        ? "decoder"
                                                                       : "encoder");
    cJSON_AddNumberToObject(mo, "layers", (double)m->layers);
    cJSON_AddNumberToObject(mo, "hidden", (double)m->hidden);
    cJSON_AddNumberToObject(mo, "heads", (double)m->heads);
    cJSON_AddNumberToObject(mo, "ffn", (double)m->ffn);
    cJSON_AddNumberToObject(mo, "vocab", (double)m->vocab);
    cJSON_AddNumberToObject(mo, "max_positions", (double)m->max_positions);
    cJSON_AddStringToObject(mo, "activation", xs_activation_name(m->activation));
    cJSON_AddNumberToObject(mo, "params", wl->params);
    cJSON_AddNumberToObject(mo, "trainable_params", wl->trainable_params);
    const xs_family *fam = xs_family_of(m->family);
    if (fam->model_json)
        fam->model_json(mo, s);
    cJSON *to = cJSON_AddObjectToObject(o, "train");
    cJSON_AddNumberToObject(to, "batch", (double)t->batch);
    cJSON_AddNumberToObject(to, "seq", (double)t->seq);
    if (fam->train_json)
        fam->train_json(to, s);
    cJSON_AddStringToObject(to, "precision", xs_precision_name(t->precision));
    int fused;
    cJSON_AddStringToObject(to, "optimizer", xs_optimizer_name(xs_train_optimizer(t, &fused)));
    cJSON_AddBoolToObject(to, "fused_optimizer", fused);
    static const char *impls[] = {"auto", "multi_tensor", "per_tensor", "foreach", "for_loop"};
    cJSON_AddStringToObject(to, "optimizer_impl", impls[xs_train_optimizer_impl(t)]);
    cJSON_AddBoolToObject(to, "loss_sync", t->loss_sync);
    cJSON_AddNumberToObject(to, "host_op_us", t->host_op_us);
    cJSON_AddStringToObject(to, "kernels", kernels[t->kernels]);
    cJSON_AddStringToObject(to, "attention", att[t->attention]);
    cJSON_AddNumberToObject(to, "grad_accum", (double)t->grad_accum);
    cJSON_AddStringToObject(to, "ffn_bias", t->ffn_bias == XS_FFN_BIAS_SEPARATE ? "separate"
                                                                               : "gemm");
    cJSON_AddStringToObject(to, "zero_grad",
                            t->zero_grad == XS_ZERO_GRAD_ZERO ? "zero" : "none");
    xs_host h;
    xs_scn_host(s, &h);
    cJSON *ho = cJSON_AddObjectToObject(o, "host");
    cJSON_AddStringToObject(ho, "framework", xs_framework_name(h.framework));
    cJSON_AddNumberToObject(ho, "python_us", h.python_us);
    cJSON_AddNumberToObject(ho, "dispatch_us", h.dispatch_us);
    cJSON_AddNumberToObject(ho, "autograd_us", h.autograd_us);
    cJSON_AddNumberToObject(ho, "launch_us", h.launch_us);
    cJSON_AddNumberToObject(ho, "module_us", h.module_us);
    cJSON_AddNumberToObject(ho, "cpu_scale", h.cpu_scale);
    cJSON_AddNumberToObject(ho, "host_op_us", h.flat_us);
    cJSON *pl = cJSON_AddObjectToObject(ho, "per_launch_us");
    for (int i = 0; i < XS_ISSUE_COUNT; i++)
        cJSON_AddNumberToObject(pl, xs_issue_name(i), xs_host_launch_us(&h, i));
    cJSON_AddNumberToObject(ho, "multi_tensor_call_us",
                            h.flat_us > 0 ? 0 : (h.python_us + h.dispatch_us) / h.cpu_scale);
    cJSON *d = cJSON_AddObjectToObject(o, "data");
    cJSON_AddNumberToObject(d, "samples", (double)s->samples);
    cJSON_AddNumberToObject(d, "epochs", (double)s->epochs);
    cJSON_AddNumberToObject(d, "loader_us", s->loader_us);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "cluster"), "devices",
                            (double)s->devices);
    return o;
}

static cJSON *step_json(const xs_workload *wl, const xs_prediction *p)
{
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "time_s", p->step_time_s);
    cJSON_AddNumberToObject(st, "samples_per_s", p->samples_per_s);
    cJSON_AddNumberToObject(st, "tokens_per_s", p->tokens_per_s);
    cJSON_AddNumberToObject(st, "energy_j", p->step_energy_j);
    cJSON_AddNumberToObject(st, "avg_power_w", p->avg_power_w);
    cJSON_AddNumberToObject(st, "power_limit_w", p->power_limit_w);
    cJSON_AddNumberToObject(st, "clock_scale", p->clock_scale);
    cJSON_AddNumberToObject(st, "mfu", p->mfu);
    cJSON_AddNumberToObject(st, "flops", p->step_flops);
    cJSON_AddNumberToObject(st, "matmul_flops", p->matmul_flops);
    cJSON_AddNumberToObject(st, "samples", (double)wl->samples_per_step);
    if (p->step_time_high_s > 0) {
        cJSON_AddNumberToObject(st, "time_s_low", p->step_time_low_s);
        cJSON_AddNumberToObject(st, "time_s_high", p->step_time_high_s);
        cJSON_AddNumberToObject(st, "samples_per_s_low", p->samples_per_s_low);
        cJSON_AddNumberToObject(st, "samples_per_s_high", p->samples_per_s_high);
    }
    cJSON_AddNumberToObject(st, "device_time_s", p->device_time_s);
    cJSON_AddNumberToObject(st, "host_wait_s", p->host_wait_s);
    cJSON_AddNumberToObject(st, "host_issue_s", p->host_issue_s);
    cJSON *pt = cJSON_AddObjectToObject(st, "phase_time_s");
    for (int ph = 0; ph < XS_PHASE_COUNT; ph++)
        cJSON_AddNumberToObject(pt, xs_phase_name(ph), p->phase_time_s[ph]);
    cJSON *bt = cJSON_AddObjectToObject(st, "bound_time_s");
    for (int b = 0; b < XS_BOUND_COUNT; b++)
        cJSON_AddNumberToObject(bt, xs_bound_name(b), p->bound_time_s[b]);
    return st;
}

static cJSON *run_json(const xs_workload *wl, const xs_prediction *p)
{
    cJSON *run = cJSON_CreateObject();
    if (p->step_time_high_s > 0) {
        cJSON_AddNumberToObject(run, "cost_usd_low", p->run_cost_low_usd);
        cJSON_AddNumberToObject(run, "cost_usd_high", p->run_cost_high_usd);
    }
    cJSON_AddNumberToObject(run, "steps", (double)p->steps);
    cJSON_AddNumberToObject(run, "steps_per_epoch", (double)wl->steps_per_epoch);
    cJSON_AddNumberToObject(run, "devices", (double)p->devices);
    cJSON_AddNumberToObject(run, "time_s", p->run_time_s);
    cJSON_AddNumberToObject(run, "energy_kwh", p->run_energy_kwh);
    cJSON_AddNumberToObject(run, "cost_usd", p->run_cost_usd);
    return run;
}

static cJSON *device_json(const xs_device *dev)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "id", dev->id);
    cJSON_AddStringToObject(d, "name", dev->name);
    cJSON_AddNumberToObject(d, "price_usd_per_hour", dev->price_usd_per_hour);
    cJSON_AddStringToObject(d, "price_provider", dev->price_provider);
    cJSON_AddStringToObject(d, "price_as_of", dev->price_as_of);
    return d;
}

static void predict_json(xs_strbuf *sb, const xs_device *dev, const xs_scenario *s,
                         const xs_workload *wl, const xs_prediction *p, int with_ops)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "device", device_json(dev));
    cJSON_AddItemToObject(root, "scenario", scenario_json(s, wl));
    cJSON *ops = with_ops ? cJSON_AddArrayToObject(root, "ops") : NULL;
    for (size_t i = 0; ops && i < wl->n; i++)
        cJSON_AddItemToArray(ops, op_json(&wl->ops[i], &p->est[i]));
    cJSON_AddItemToObject(root, "step", step_json(wl, p));
    cJSON_AddItemToObject(root, "run", run_json(wl, p));
    cJSON_AddItemToObject(root, "memory", xs_memory_json(&p->mem));
    if (s->devices > 1)
        cJSON_AddItemToObject(root, "data_parallel", xs_report_cluster_json(s, wl, p));
    if (p->note[0])
        cJSON_AddStringToObject(root, "compiled", p->note);
    xs_report_json(sb, root);
}

static void csv_header(xs_strbuf *sb, int timed)
{
    xs_sb_printf(sb, "name,layer,phase,kind,dtype,m,n,k,batch,ta,tb,calls,launches,flops,bytes");
    xs_sb_printf(sb, "%s\n", timed ? ",engine,time_s,compute_s,memory_s,overhead_s,bound,power_w,"
                                     "energy_j" : "");
}

static void csv_row(xs_strbuf *sb, const xs_op *op, const xs_estimate *e)
{
    double c = (double)op->count;
    xs_sb_printf(sb, "%s,%d,%s,%s,%s,%lld,%lld,%lld,%lld,%d,%d,%lld,%lld,%.9g,%.9g", op->name,
                 op->layer, xs_phase_name(op->phase), xs_op_kind_name(op->kind),
                 op_dtype(op), (long long)op->m, (long long)op->n,
                 (long long)op->k, (long long)op->batch, op->ta, op->tb, (long long)op->count,
                 (long long)(op->launches * op->count), op->flops * c, op->bytes * c);
    if (e)
        xs_sb_printf(sb, ",%s,%.9g,%.9g,%.9g,%.9g,%s,%.6g,%.9g", xs_dtype_name(e->engine),
                     e->time_s * c, e->compute_s * c, e->memory_s * c, e->overhead_s * c,
                     op_bound(op, e), e->power_w, e->energy_j * c);
    xs_sb_printf(sb, "\n");
}

void xs_report_predict(xs_strbuf *sb, xs_format fmt, const xs_device *dev,
                       const xs_scenario *s, const xs_workload *wl, const xs_prediction *p)
{
    if (fmt == XS_FMT_JSON) {
        predict_json(sb, dev, s, wl, p, 1);
    } else if (fmt == XS_FMT_CSV) {
        csv_header(sb, 1);
        for (size_t i = 0; i < wl->n; i++)
            csv_row(sb, &wl->ops[i], &p->est[i]);
    } else {
        predict_table(sb, dev, s, wl, p);
    }
}

void xs_report_summary(xs_strbuf *sb, xs_format fmt, const xs_device *dev,
                       const xs_scenario *s, const xs_workload *wl, const xs_prediction *p)
{
    if (fmt == XS_FMT_JSON) {
        predict_json(sb, dev, s, wl, p, 0);
        return;
    }
    predict_header(sb, dev, s, wl, p);
    predict_answer(sb, dev, s, wl, p);
}

void xs_report_workload(xs_strbuf *sb, xs_format fmt, const xs_scenario *s,
                        const xs_workload *wl)
{
    if (fmt == XS_FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "scenario", scenario_json(s, wl));
        cJSON_AddNumberToObject(root, "params", wl->params);
        cJSON_AddNumberToObject(root, "trainable_params", wl->trainable_params);
        cJSON_AddNumberToObject(root, "params_matmul", wl->params_matmul);
        cJSON_AddNumberToObject(root, "param_tensors", (double)wl->tensors);
        cJSON *ops = cJSON_AddArrayToObject(root, "ops");
        for (size_t i = 0; i < wl->n; i++)
            cJSON_AddItemToArray(ops, op_json(&wl->ops[i], NULL));
        xs_report_json(sb, root);
        return;
    }
    if (fmt == XS_FMT_CSV) {
        csv_header(sb, 0);
        for (size_t i = 0; i < wl->n; i++)
            csv_row(sb, &wl->ops[i], NULL);
        return;
    }
    xs_sb_printf(sb, "xpusim workload: %s (%zu ops a step)\n", s->id, wl->n);
    scenario_lines(sb, s, wl);
    size_t nrows;
    row *rows = group_rows(wl, NULL, &nrows);
    if (!rows) {
        sb->failed = 1;
        return;
    }
    double flops = 0;
    for (size_t r = 0; r < nrows; r++)
        flops += rows[r].flops;
    xs_sb_printf(sb, "\n%-5s %-32s %-9s %6s %-22s %10s %10s %8s\n", "phase", "op", "kind",
                 "calls", "m x n x k (batch)", "GFLOP", "MB", "launches");
    for (size_t r = 0; r < nrows; r++) {
        const xs_op *op = rows[r].first;
        char shape[48];
        shape_text(op, shape, sizeof shape);
        xs_sb_printf(sb, "%-5s %-32s %-9s %6lld %-22s %10.2f %10.1f %8lld\n",
                     xs_phase_name(op->phase), op->name, xs_op_kind_name(op->kind),
                     (long long)rows[r].calls, shape, rows[r].flops / 1e9, rows[r].bytes / 1e6,
                     (long long)(op->launches * rows[r].calls));
    }
    free(rows);
    if (wl->trainable_params != wl->params) /* LoRA: the tensors are the trained ones */
        xs_sb_printf(sb, "\nstep: %.1f TFLOP, %.1f M parameters, %.3f M trained in %lld tensors\n",
                     flops / 1e12, wl->params / 1e6, wl->trainable_params / 1e6,
                     (long long)wl->tensors);
    else
        xs_sb_printf(sb, "\nstep: %.1f TFLOP, %.1f M parameters in %lld tensors\n", flops / 1e12,
                     wl->params / 1e6, (long long)wl->tensors);
}

/* "$0.82-1.08": the run's cost on the device's cheap and dear corners. */
static void cost_band(char *dst, size_t size, const xs_prediction *p)
{
    if (p->step_time_high_s > 0)
        snprintf(dst, size, "%.2f-%.2f", p->run_cost_low_usd, p->run_cost_high_usd);
    else
        snprintf(dst, size, "-");
}

static void compare_json(xs_strbuf *sb, const xs_scenario *s, const xs_workload *wl,
                         const xs_compare_row *rows, size_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "scenario", scenario_json(s, wl));
    cJSON *arr = cJSON_AddArrayToObject(root, "devices");
    cJSON *out = cJSON_AddArrayToObject(root, "unavailable");
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "device", device_json(rows[i].dev));
        if (!rows[i].p) {
            cJSON_AddStringToObject(o, "reason", rows[i].unavailable);
            cJSON_AddItemToArray(out, o);
            continue;
        }
        cJSON_AddStringToObject(o, "matmul_engine", xs_dtype_name(rows[i].p->matmul_engine));
        cJSON_AddItemToObject(o, "step", step_json(wl, rows[i].p));
        if (rows[i].p->mem.fits) /* a run that cannot start has no run to price */
            cJSON_AddItemToObject(o, "run", run_json(wl, rows[i].p));
        cJSON_AddItemToObject(o, "memory", xs_memory_json(&rows[i].p->mem));
        cJSON_AddItemToArray(arr, o);
    }
    xs_report_json(sb, root);
}

void xs_report_compare(xs_strbuf *sb, xs_format fmt, const xs_scenario *s,
                       const xs_workload *wl, const xs_compare_row *rows, size_t n)
{
    if (fmt == XS_FMT_JSON) {
        compare_json(sb, s, wl, rows, n);
        return;
    }
    /* new columns go at the end, so scripts reading the old ones keep working */
    if (fmt == XS_FMT_CSV)
        xs_sb_printf(sb, "device,matmul_engine,step_time_s,samples_per_s,tokens_per_s,mfu,"
                         "avg_power_w,run_time_s,run_energy_kwh,run_cost_usd,"
                         "price_usd_per_hour,price_as_of,price_provider,run_cost_low_usd,"
                         "run_cost_high_usd,samples_per_s_low,samples_per_s_high,"
                         "unavailable,memory_gb,capacity_gb,fits\n");
    else {
        xs_sb_printf(sb, "xpusim compare: %s, %lld steps of %lld samples\n", s->id,
                     (long long)wl->steps, (long long)wl->samples_per_step);
        scenario_lines(sb, s, wl);
        xs_sb_printf(sb, "\n%-16s %-6s %10s %11s %6s %6s %12s %8s %9s %9s %11s %8s  %s\n",
                     "device", "matmul", "step s", "samples/s", "MFU", "W", "memory GB",
                     "run h", "run kWh", "run $", "$ band", "$/h", "price from");
    }
    size_t unavailable = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_prediction *p = rows[i].p;
        const xs_device *d = rows[i].dev;
        if (!p) {
            unavailable++;
            if (fmt == XS_FMT_CSV) {
                xs_sb_printf(sb, "%s,,,,,,,,,,%g,%s,", d->id, d->price_usd_per_hour,
                             d->price_as_of);
                xs_sb_csv(sb, d->price_provider);
                xs_sb_printf(sb, ",,,,,");
                xs_sb_csv(sb, rows[i].unavailable);
                xs_sb_printf(sb, ",,,\n");
            }
            continue;
        }
        const xs_memory *m = &p->mem;
        if (fmt == XS_FMT_CSV) {
            xs_sb_printf(sb, "%s,%s,%.9g,%.9g,%.9g,%.6g,%.6g,", d->id,
                         xs_dtype_name(p->matmul_engine), p->step_time_s, p->samples_per_s,
                         p->tokens_per_s, p->mfu, p->avg_power_w);
            if (m->fits) /* a run that cannot start is not priced */
                xs_sb_printf(sb, "%.9g,%.9g,%.9g,", p->run_time_s, p->run_energy_kwh,
                             p->run_cost_usd);
            else
                xs_sb_printf(sb, ",,,");
            xs_sb_printf(sb, "%g,%s,", d->price_usd_per_hour, d->price_as_of);
            xs_sb_csv(sb, d->price_provider);
            if (m->fits)
                xs_sb_printf(sb, ",%.9g,%.9g,", p->run_cost_low_usd, p->run_cost_high_usd);
            else
                xs_sb_printf(sb, ",,,");
            xs_sb_printf(sb, "%.9g,%.9g,,%.6g,%.6g,%d\n", p->samples_per_s_low,
                         p->samples_per_s_high, m->total / XS_GIB, m->capacity / XS_GIB,
                         m->fits);
        } else {
            char band[48], mem[32];
            cost_band(band, sizeof band, p);
            snprintf(mem, sizeof mem, "%.1f/%.1f%s", m->total / XS_GIB, m->capacity / XS_GIB,
                     m->fits ? "" : "!");
            xs_sb_printf(sb, "%-16s %-6s %10.4f %11.1f %5.1f%% %6.0f %12s ", d->id,
                         xs_dtype_name(p->matmul_engine), p->step_time_s, p->samples_per_s,
                         100 * p->mfu, p->avg_power_w, mem);
            if (m->fits)
                xs_sb_printf(sb, "%8.2f %9.3f %9.2f %11s %8.3f  %s, %s\n", p->run_time_s / 3600,
                             p->run_energy_kwh, p->run_cost_usd, band, d->price_usd_per_hour,
                             d->price_provider, d->price_as_of);
            else
                xs_sb_printf(sb, "does NOT fit: needs %.1f GB more\n",
                             (m->total - m->capacity) / XS_GIB);
        }
    }
    if (fmt != XS_FMT_TABLE)
        return;
    xs_sb_printf(sb, "\nsorted by run cost; '$ band' is the run's cost on the device's slow and "
                     "fast corners; prices are on-demand list prices unless --price gave yours "
                     "(`xpusim devices`); 'memory GB' is the step's peak / the memory the device "
                     "offers, '!' where the peak exceeds it (those rows last, not priced; "
                     "`xpusim fit` finds a micro-batch that fits)\n");
    if (s->devices > 1)
        xs_report_instance_lines(sb, s, rows, n);
    if (unavailable)
        xs_sb_printf(sb, "\ncannot run this scenario:\n");
    for (size_t i = 0; i < n; i++)
        if (!rows[i].p)
            xs_sb_printf(sb, "  %-16s %s\n", rows[i].dev->id, rows[i].unavailable);
}

/* "train.batch=32 " for the rows of a grid; "" without one. */
static void point_text(const xs_decision *d, size_t point, char *dst, size_t size)
{
    size_t used = 0;
    dst[0] = '\0';
    for (size_t a = 0; a < d->view.grid->naxes && used < size; a++) {
        char buf[XS_SWEEP_VALUE_MAX + 1];
        used += (size_t)snprintf(dst + used, size - used, "%s=%s ", d->view.grid->axes[a].key,
                                 xs_sweep_value(d->view.grid, point, a, buf, sizeof buf));
    }
}

static void decision_json(xs_strbuf *sb, const xs_decision *d)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "scenario", scenario_json(d->s, d->wl));
    cJSON *varied = cJSON_AddArrayToObject(root, "varied");
    for (size_t a = 0; a < d->view.grid->naxes; a++)
        cJSON_AddItemToArray(varied, cJSON_CreateString(d->view.grid->axes[a].key));
    cJSON *w = cJSON_AddObjectToObject(root, "weights");
    cJSON_AddNumberToObject(w, "time", d->w.time);
    cJSON_AddNumberToObject(w, "energy", d->w.energy);
    cJSON_AddNumberToObject(w, "cost", d->w.cost);
    cJSON_AddNumberToObject(w, "util", d->w.util);
    cJSON *f = cJSON_AddObjectToObject(root, "filters");
    if (d->budget_usd > 0)
        cJSON_AddNumberToObject(f, "budget_usd", d->budget_usd);
    if (d->deadline_h > 0)
        cJSON_AddNumberToObject(f, "deadline_h", d->deadline_h);
    cJSON_AddNumberToObject(f, "dropped", (double)d->dropped);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (size_t i = 0; i < d->n; i++) {
        size_t k = d->order[i];
        cJSON_AddItemToArray(rows, xs_grid_row_json(&d->view, &d->rows[k], &d->ranks[k]));
    }
    xs_report_json(sb, root);
}

void xs_report_decision(xs_strbuf *sb, xs_format fmt, const xs_decision *d)
{
    if (fmt == XS_FMT_JSON) {
        decision_json(sb, d);
        return;
    }
    if (fmt == XS_FMT_CSV) {
        xs_report_grid_head(sb, fmt, &d->view, d->s->id);
        xs_report_grid_rows(sb, fmt, &d->view, d->rows, d->ranks, d->order, d->n, 0);
        return;
    }
    const xs_sweep_grid *g = d->view.grid;
    xs_sb_printf(sb, "xpusim compare: %s, %lld steps of %lld samples\n", d->s->id,
                 (long long)d->wl->steps, (long long)d->wl->samples_per_step);
    scenario_lines(sb, d->s, d->wl);
    if (g->naxes) {
        xs_sb_printf(sb, "varied    ");
        for (size_t a = 0; a < g->naxes; a++)
            xs_sb_printf(sb, "%s%s (%zu values)", a ? ", " : "", g->axes[a].key, g->axes[a].n);
        xs_sb_printf(sb, ": %zu points; the lines above are the scenario as given\n", g->points);
    }
    int width[XS_SWEEP_MAX_AXES];
    for (size_t a = 0; a < g->naxes; a++) {
        width[a] = (int)strlen(g->axes[a].key);
        for (size_t i = 0; i < d->n; i++) {
            char buf[XS_SWEEP_VALUE_MAX + 1];
            int len = (int)strlen(xs_sweep_value(g, d->rows[d->order[i]].point, a, buf,
                                                 sizeof buf));
            width[a] = len > width[a] ? len : width[a];
        }
        width[a] = width[a] > 40 ? 40 : width[a];
    }
    xs_sb_printf(sb, "\n");
    for (size_t a = 0; a < g->naxes; a++)
        xs_sb_printf(sb, "%-*s ", width[a], g->axes[a].key);
    xs_sb_printf(sb, "%-16s %-6s %10s %11s %6s %6s %12s %8s %9s %9s %11s %6s %1s %8s  %s\n",
                 "device", "matmul", "step s", "samples/s", "MFU", "W", "memory GB", "run h",
                 "run kWh", "run $", "$ band", "score", "P", "$/h", "price from");
    size_t unavailable = 0;
    for (size_t i = 0; i < d->n; i++) {
        const xs_sweep_row *r = &d->rows[d->order[i]];
        const xs_rank_item *rk = &d->ranks[d->order[i]];
        const xs_device *dev = &d->view.devs[r->dev];
        if (!r->predicted) {
            unavailable++;
            continue;
        }
        for (size_t a = 0; a < g->naxes; a++) {
            char buf[XS_SWEEP_VALUE_MAX + 1];
            xs_sb_printf(sb, "%-*.*s ", width[a], width[a],
                         xs_sweep_value(g, r->point, a, buf, sizeof buf));
        }
        char mem[32];
        snprintf(mem, sizeof mem, "%.1f/%.1f%s", r->memory_gb, r->capacity_gb,
                 r->fits ? "" : "!");
        xs_sb_printf(sb, "%-16s %-6s %10.4f %11.1f %5.1f%% %6.0f %12s ", dev->id,
                     xs_dtype_name(r->matmul_engine), r->step_time_s, r->samples_per_s,
                     100 * r->mfu, r->avg_power_w, mem);
        if (!r->fits) {
            xs_sb_printf(sb, "does NOT fit: needs %.1f GB more\n", r->memory_gb - r->capacity_gb);
            continue;
        }
        char band[48] = "-";
        if (d->view.band)
            snprintf(band, sizeof band, "%.2f-%.2f", r->run_cost_low_usd, r->run_cost_high_usd);
        xs_sb_printf(sb, "%8.2f %9.3f %9.2f %11s %6.3f %1s %8.3f  %s, %s\n", r->run_time_s / 3600,
                     r->run_energy_kwh, r->run_cost_usd, band, rk->score, rk->pareto ? "*" : "",
                     dev->price_usd_per_hour, dev->price_provider, dev->price_as_of);
    }
    xs_sb_printf(sb, "\nranked by score: the weighted mean (weights time %g, energy %g, cost %g, "
                     "util %g) of each metric against the best row shown: best/value for run "
                     "time, kWh and $, value/best for MFU, so 1 is the best on every weighted "
                     "metric; '*' in P: Pareto-optimal on (run time, run $), no other row is as "
                     "fast and as cheap and better on one; '$ band' is the run's cost on the "
                     "device's slow and fast corners; 'memory GB' is the step's peak / the "
                     "memory the device offers, '!' where it does not fit (those rows last, not "
                     "ranked)\n",
                 d->w.time, d->w.energy, d->w.cost, d->w.util);
    if (d->dropped) {
        char limits[96] = "";
        if (d->budget_usd > 0)
            snprintf(limits, sizeof limits, "$%g", d->budget_usd);
        if (d->deadline_h > 0)
            snprintf(limits + strlen(limits), sizeof limits - strlen(limits), "%s%g h",
                     limits[0] ? " or " : "", d->deadline_h);
        xs_sb_printf(sb, "%zu run%s over %s left out (--budget-usd, --deadline-h)\n", d->dropped,
                     d->dropped == 1 ? "" : "s", limits);
    }
    if (unavailable)
        xs_sb_printf(sb, "\ncannot run this scenario:\n");
    for (size_t i = 0; i < d->n; i++) {
        const xs_sweep_row *r = &d->rows[d->order[i]];
        if (r->predicted)
            continue;
        char pt[512];
        point_text(d, r->point, pt, sizeof pt);
        xs_sb_printf(sb, "  %s%-16s %s\n", pt, d->view.devs[r->dev].id, r->reason);
    }
}
