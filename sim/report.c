/* report.c — see report.h. The table groups identical ops of all layers
 * into one row (calls = layers x micro-batches) so a 24-layer model reads in
 * one screen; JSON and CSV keep every op. */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "backend.h"

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

static const char *act_name(int a)
{
    static const char *names[] = {"gelu", "gelu_new", "relu"};
    return a >= 0 && a < 3 ? names[a] : "?";
}

static void scenario_lines(xs_strbuf *sb, const xs_scenario *s, const xs_workload *wl)
{
    const xs_model *m = &s->model;
    const xs_train *t = &s->train;
    xs_sb_printf(sb,
                 "model     %s, %lld layers, hidden %lld, %lld heads, ffn %lld, vocab %lld, "
                 "%s head: %.1f M parameters\n",
                 m->arch == XS_DECODER ? "decoder" : "encoder", (long long)m->layers,
                 (long long)m->hidden, (long long)m->heads, (long long)m->ffn,
                 (long long)m->vocab, m->head == XS_HEAD_SPAN ? "span"
                                      : m->head == XS_HEAD_LM ? "lm" : "cls",
                 wl->params / 1e6);
    int fused;
    int opt = xs_train_optimizer(t, &fused);
    xs_sb_printf(sb,
                 "train     batch %lld x seq %lld, %s, %s (%s), %s kernels, %s attention, "
                 "grad_accum %lld, %lld device%s\n",
                 (long long)t->batch, (long long)t->seq, xs_precision_name(t->precision),
                 xs_optimizer_name(opt), fused ? "fused" : "eager",
                 t->kernels == XS_K_FUSED ? "fused" : "eager",
                 t->attention == XS_ATT_FLASH ? "flash" : "unfused", (long long)t->grad_accum,
                 (long long)s->devices, s->devices > 1 ? "s" : "");
}

static void predict_table(xs_strbuf *sb, const xs_device *dev, const xs_scenario *s,
                           const xs_workload *wl, const xs_prediction *p)
{
    xs_sb_printf(sb, "xpusim predict: %s on %s (%s)\n", s->id, dev->id, dev->name);
    scenario_lines(sb, s, wl);
    xs_sb_printf(sb, "matmuls   asked in %s, run in %s on %s at %.0f MHz sustained%s\n\n",
                 xs_dtype_name(p->matmul_asked), xs_dtype_name(p->matmul_engine),
                 p->matmul_tensor ? "tensor cores" : "fp32 vector units", p->matmul_clock_mhz,
                 p->matmul_engine != p->matmul_asked
                     ? " (the device has no tensor-core path for it)"
                     : "");
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
                     xs_bound_name(p->est[rows[r].first_index].bound));
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
    xs_sb_printf(sb,
                 "\n\nstep      %.4f s   %.1f samples/s   %.0f tokens/s   MFU %.1f%%   "
                 "%.0f W avg   %.1f J\n",
                 p->step_time_s, p->samples_per_s, p->tokens_per_s, 100 * p->mfu,
                 p->avg_power_w, p->step_energy_j);
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
    cJSON_AddNumberToObject(o, "flops", op->flops * c);
    cJSON_AddNumberToObject(o, "bytes", op->bytes * c);
    if (e) {
        cJSON_AddStringToObject(o, "engine", xs_dtype_name(e->engine));
        cJSON_AddNumberToObject(o, "time_s", e->time_s * c);
        cJSON_AddNumberToObject(o, "compute_s", e->compute_s * c);
        cJSON_AddNumberToObject(o, "memory_s", e->memory_s * c);
        cJSON_AddNumberToObject(o, "overhead_s", e->overhead_s * c);
        cJSON_AddStringToObject(o, "bound", xs_bound_name(e->bound));
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
    cJSON_AddStringToObject(mo, "arch", m->arch == XS_DECODER ? "decoder" : "encoder");
    cJSON_AddNumberToObject(mo, "layers", (double)m->layers);
    cJSON_AddNumberToObject(mo, "hidden", (double)m->hidden);
    cJSON_AddNumberToObject(mo, "heads", (double)m->heads);
    cJSON_AddNumberToObject(mo, "ffn", (double)m->ffn);
    cJSON_AddNumberToObject(mo, "vocab", (double)m->vocab);
    cJSON_AddNumberToObject(mo, "max_positions", (double)m->max_positions);
    cJSON_AddStringToObject(mo, "activation", act_name(m->activation));
    cJSON_AddNumberToObject(mo, "params", wl->params);
    cJSON *to = cJSON_AddObjectToObject(o, "train");
    cJSON_AddNumberToObject(to, "batch", (double)t->batch);
    cJSON_AddNumberToObject(to, "seq", (double)t->seq);
    cJSON_AddStringToObject(to, "precision", xs_precision_name(t->precision));
    int fused;
    cJSON_AddStringToObject(to, "optimizer", xs_optimizer_name(xs_train_optimizer(t, &fused)));
    cJSON_AddBoolToObject(to, "fused_optimizer", fused);
    cJSON_AddBoolToObject(to, "loss_sync", t->loss_sync);
    cJSON_AddNumberToObject(to, "host_op_us", t->host_op_us);
    cJSON_AddStringToObject(to, "kernels", kernels[t->kernels]);
    cJSON_AddStringToObject(to, "attention", att[t->attention]);
    cJSON_AddNumberToObject(to, "grad_accum", (double)t->grad_accum);
    cJSON_AddStringToObject(to, "ffn_bias", t->ffn_bias == XS_FFN_BIAS_SEPARATE ? "separate"
                                                                               : "gemm");
    cJSON_AddStringToObject(to, "zero_grad",
                            t->zero_grad == XS_ZERO_GRAD_ZERO ? "zero" : "none");
    cJSON *d = cJSON_AddObjectToObject(o, "data");
    cJSON_AddNumberToObject(d, "samples", (double)s->samples);
    cJSON_AddNumberToObject(d, "epochs", (double)s->epochs);
    cJSON_AddNumberToObject(d, "loader_us", s->loader_us);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "cluster"), "devices",
                            (double)s->devices);
    return o;
}

static void emit_json(xs_strbuf *sb, cJSON *root)
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

static cJSON *step_json(const xs_workload *wl, const xs_prediction *p)
{
    cJSON *st = cJSON_CreateObject();
    cJSON_AddNumberToObject(st, "time_s", p->step_time_s);
    cJSON_AddNumberToObject(st, "samples_per_s", p->samples_per_s);
    cJSON_AddNumberToObject(st, "tokens_per_s", p->tokens_per_s);
    cJSON_AddNumberToObject(st, "energy_j", p->step_energy_j);
    cJSON_AddNumberToObject(st, "avg_power_w", p->avg_power_w);
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
                         const xs_workload *wl, const xs_prediction *p)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "device", device_json(dev));
    cJSON_AddItemToObject(root, "scenario", scenario_json(s, wl));
    cJSON *ops = cJSON_AddArrayToObject(root, "ops");
    for (size_t i = 0; i < wl->n; i++)
        cJSON_AddItemToArray(ops, op_json(&wl->ops[i], &p->est[i]));
    cJSON_AddItemToObject(root, "step", step_json(wl, p));
    cJSON_AddItemToObject(root, "run", run_json(wl, p));
    emit_json(sb, root);
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
                     xs_bound_name(e->bound), e->power_w, e->energy_j * c);
    xs_sb_printf(sb, "\n");
}

void xs_report_predict(xs_strbuf *sb, xs_format fmt, const xs_device *dev,
                       const xs_scenario *s, const xs_workload *wl, const xs_prediction *p)
{
    if (fmt == XS_FMT_JSON) {
        predict_json(sb, dev, s, wl, p);
    } else if (fmt == XS_FMT_CSV) {
        csv_header(sb, 1);
        for (size_t i = 0; i < wl->n; i++)
            csv_row(sb, &wl->ops[i], &p->est[i]);
    } else {
        predict_table(sb, dev, s, wl, p);
    }
}

void xs_report_workload(xs_strbuf *sb, xs_format fmt, const xs_scenario *s,
                        const xs_workload *wl)
{
    if (fmt == XS_FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "scenario", scenario_json(s, wl));
        cJSON_AddNumberToObject(root, "params", wl->params);
        cJSON_AddNumberToObject(root, "params_matmul", wl->params_matmul);
        cJSON_AddNumberToObject(root, "param_tensors", (double)wl->tensors);
        cJSON *ops = cJSON_AddArrayToObject(root, "ops");
        for (size_t i = 0; i < wl->n; i++)
            cJSON_AddItemToArray(ops, op_json(&wl->ops[i], NULL));
        emit_json(sb, root);
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
    xs_sb_printf(sb, "\nstep: %.1f TFLOP, %.1f M parameters in %lld tensors\n", flops / 1e12,
                 wl->params / 1e6, (long long)wl->tensors);
}

void xs_report_compare(xs_strbuf *sb, xs_format fmt, const xs_scenario *s,
                       const xs_workload *wl, const xs_compare_row *rows, size_t n)
{
    if (fmt == XS_FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "scenario", scenario_json(s, wl));
        cJSON *arr = cJSON_AddArrayToObject(root, "devices");
        for (size_t i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToObject(o, "device", device_json(rows[i].dev));
            cJSON_AddStringToObject(o, "matmul_engine", xs_dtype_name(rows[i].p->matmul_engine));
            cJSON_AddItemToObject(o, "step", step_json(wl, rows[i].p));
            cJSON_AddItemToObject(o, "run", run_json(wl, rows[i].p));
            cJSON_AddItemToArray(arr, o);
        }
        emit_json(sb, root);
        return;
    }
    if (fmt == XS_FMT_CSV)
        xs_sb_printf(sb, "device,matmul_engine,step_time_s,samples_per_s,tokens_per_s,mfu,"
                         "avg_power_w,run_time_s,run_energy_kwh,run_cost_usd,"
                         "price_usd_per_hour,price_as_of\n");
    else {
        xs_sb_printf(sb, "xpusim compare: %s, %lld steps of %lld samples\n", s->id,
                     (long long)wl->steps, (long long)wl->samples_per_step);
        scenario_lines(sb, s, wl);
        xs_sb_printf(sb, "\n%-16s %-6s %10s %11s %6s %6s %8s %9s %9s %8s\n", "device", "matmul",
                     "step s", "samples/s", "MFU", "W", "run h", "run kWh", "run $", "$/h");
    }
    for (size_t i = 0; i < n; i++) {
        const xs_prediction *p = rows[i].p;
        const xs_device *d = rows[i].dev;
        if (fmt == XS_FMT_CSV)
            xs_sb_printf(sb, "%s,%s,%.9g,%.9g,%.9g,%.6g,%.6g,%.9g,%.9g,%.9g,%g,%s\n", d->id,
                         xs_dtype_name(rows[i].p->matmul_engine), p->step_time_s, p->samples_per_s,
                         p->tokens_per_s, p->mfu, p->avg_power_w, p->run_time_s,
                         p->run_energy_kwh, p->run_cost_usd, d->price_usd_per_hour,
                         d->price_as_of);
        else
            xs_sb_printf(sb, "%-16s %-6s %10.4f %11.1f %5.1f%% %6.0f %8.2f %9.3f %9.2f %8.3f\n",
                         d->id, xs_dtype_name(rows[i].p->matmul_engine), p->step_time_s, p->samples_per_s,
                         100 * p->mfu, p->avg_power_w, p->run_time_s / 3600, p->run_energy_kwh,
                         p->run_cost_usd, d->price_usd_per_hour);
    }
    if (fmt == XS_FMT_TABLE)
        xs_sb_printf(sb, "\nsorted by run cost; prices are on-demand list prices with the dates "
                         "and providers in devices/*.json (`xpusim devices`)\n");
}

void xs_report_gemm(xs_strbuf *sb, xs_format fmt, const xs_device *dev, const xs_gemm_shape *g,
                    const xs_gemm_result *r)
{
    double tflops = r->flops / r->time_s / 1e12;
    double peak = r->peak_tflops;
    if (fmt == XS_FMT_TABLE) {
        xs_sb_printf(sb, "xpusim gemm: %lld x %lld x %lld%s%s, batch %lld, %s on %s (%s)\n",
                     (long long)g->m, (long long)g->n, (long long)g->k, g->ta ? ", A^T" : "",
                     g->tb ? ", B^T" : "", (long long)g->batch, xs_dtype_name(g->dtype), dev->id,
                     dev->name);
        xs_sb_printf(sb, "time        %.3f us   (%.2f TFLOP/s, %.1f%% of the %g TFLOP/s %s %s peak)\n",
                     r->time_s * 1e6, tflops, 100 * tflops / peak, peak,
                     xs_dtype_name(r->engine), r->tensor ? "tensor-core" : "vector");
        xs_sb_printf(sb, "kernel      tile %dx%dx%d, %d stages%s, split-K %d, %d CTAs/SM\n",
                     r->tile_m, r->tile_n, r->tile_k, r->stages,
                     r->cluster > 1 ? ", 2-CTA cluster" : "", r->split_k, r->ctas_per_sm);
        xs_sb_printf(sb, "quantization %lld tiles in %lld waves: wave efficiency %.1f%%, tile "
                         "efficiency %.1f%%\n",
                     (long long)r->tiles, (long long)r->waves, 100 * r->wave_eff,
                     100 * r->tile_eff);
        xs_sb_printf(sb, "mainloop    %.1f%% MMA-busy; operands %d-byte aligned\n",
                     100 * r->mainloop_eff, r->align_bytes);
        xs_sb_printf(sb, "timeline    SMs %.3f us, DRAM %.3f us (%.1f MB), launches %.3f us\n",
                     r->compute_s * 1e6, r->memory_s * 1e6, r->dram_bytes / 1e6,
                     r->overhead_s * 1e6);
        xs_sb_printf(sb, "bound       %s\n", xs_bound_name(r->bound));
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "device", dev->id);
    cJSON_AddNumberToObject(o, "m", (double)g->m);
    cJSON_AddNumberToObject(o, "n", (double)g->n);
    cJSON_AddNumberToObject(o, "k", (double)g->k);
    cJSON_AddNumberToObject(o, "batch", (double)g->batch);
    cJSON_AddBoolToObject(o, "ta", g->ta);
    cJSON_AddBoolToObject(o, "tb", g->tb);
    cJSON_AddStringToObject(o, "dtype", xs_dtype_name(g->dtype));
    cJSON_AddStringToObject(o, "engine", xs_dtype_name(r->engine));
    cJSON_AddNumberToObject(o, "time_s", r->time_s);
    cJSON_AddNumberToObject(o, "tflops", tflops);
    cJSON_AddNumberToObject(o, "fraction_of_peak", tflops / peak);
    cJSON_AddNumberToObject(o, "tile_m", r->tile_m);
    cJSON_AddNumberToObject(o, "tile_n", r->tile_n);
    cJSON_AddNumberToObject(o, "tile_k", r->tile_k);
    cJSON_AddNumberToObject(o, "stages", r->stages);
    cJSON_AddNumberToObject(o, "split_k", r->split_k);
    cJSON_AddNumberToObject(o, "ctas_per_sm", r->ctas_per_sm);
    cJSON_AddNumberToObject(o, "tiles", (double)r->tiles);
    cJSON_AddNumberToObject(o, "waves", (double)r->waves);
    cJSON_AddNumberToObject(o, "wave_efficiency", r->wave_eff);
    cJSON_AddNumberToObject(o, "tile_efficiency", r->tile_eff);
    cJSON_AddNumberToObject(o, "mainloop_efficiency", r->mainloop_eff);
    cJSON_AddNumberToObject(o, "align_bytes", r->align_bytes);
    cJSON_AddNumberToObject(o, "sm_time_s", r->compute_s);
    cJSON_AddNumberToObject(o, "dram_time_s", r->memory_s);
    cJSON_AddNumberToObject(o, "dram_bytes", r->dram_bytes);
    cJSON_AddStringToObject(o, "bound", xs_bound_name(r->bound));
    emit_json(sb, o);
}

void xs_report_sweep_begin(xs_strbuf *sb, xs_format fmt, char dim)
{
    if (fmt == XS_FMT_JSON)
        xs_sb_printf(sb, "[\n");
    else
        xs_sb_printf(sb, "%c,time_s,tflops,fraction_of_peak,tile_m,tile_n,split_k,tiles,waves,"
                         "wave_efficiency,tile_efficiency,bound\n", dim);
}

void xs_report_sweep_row(xs_strbuf *sb, xs_format fmt, const xs_gemm_result *r, long long value,
                         int last)
{
    double tflops = r->flops / r->time_s / 1e12;
    double frac = tflops / r->peak_tflops;
    const char *f = fmt == XS_FMT_JSON
                        ? "  {\"value\": %lld, \"time_s\": %.9g, \"tflops\": %.6g, "
                          "\"fraction_of_peak\": %.6g, \"tile_m\": %d, \"tile_n\": %d, "
                          "\"split_k\": %d, \"tiles\": %lld, \"waves\": %lld, "
                          "\"wave_efficiency\": %.6g, \"tile_efficiency\": %.6g, "
                          "\"bound\": \"%s\"}%s\n"
                        : "%lld,%.9g,%.6g,%.6g,%d,%d,%d,%lld,%lld,%.6g,%.6g,%s%s\n";
    xs_sb_printf(sb, f, value, r->time_s, tflops, frac, r->tile_m, r->tile_n, r->split_k,
                 (long long)r->tiles, (long long)r->waves, r->wave_eff, r->tile_eff,
                 xs_bound_name(r->bound), fmt == XS_FMT_JSON && !last ? "," : "");
    if (fmt == XS_FMT_JSON && last)
        xs_sb_printf(sb, "]\n");
}

/* A suggestion must beat the shape as given by this much to be called one;
 * smaller differences are within the model's resolution. */
#define ADVICE_MIN_SPEEDUP 1.01

void xs_report_advice(xs_strbuf *sb, xs_format fmt, const xs_device *dev, const xs_scenario *s,
                      double tol_pct, const xs_advice *base, const xs_advice *a, size_t n)
{
    if (fmt == XS_FMT_JSON) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "change", a[i].change);
            cJSON_AddStringToObject(o, "rule", a[i].rule);
            cJSON *sets = cJSON_AddArrayToObject(o, "set");
            for (int k = 0; k < a[i].nsets; k++)
                cJSON_AddItemToArray(sets, cJSON_CreateString(a[i].sets[k]));
            cJSON_AddNumberToObject(o, "params", a[i].params);
            cJSON_AddNumberToObject(o, "params_delta_pct", a[i].params_delta_pct);
            cJSON_AddNumberToObject(o, "samples_per_s", a[i].samples_per_s);
            cJSON_AddNumberToObject(o, "predicted_speedup", a[i].speedup);
            cJSON_AddItemToArray(arr, o);
        }
        emit_json(sb, arr);
        return;
    }
    xs_sb_printf(sb, "xpusim advise: %s on %s, shapes within %g%% of %.1f M parameters\n", s->id,
                 dev->id, tol_pct, base->params / 1e6);
    xs_sb_printf(sb, "as given: %.1f samples/s\n\n", base->samples_per_s);
    if (n == 0 || a[0].speedup < ADVICE_MIN_SPEEDUP)
        xs_sb_printf(sb, "The shape is already good here: none of the %zu nearby shapes is "
                         "predicted faster by %.0f%% or more.\n\n",
                     n, 100 * (ADVICE_MIN_SPEEDUP - 1));
    if (n == 0)
        return;
    xs_sb_printf(sb, "%-4s %-34s %-38s %9s %8s %10s %8s\n", "rank", "change", "rule", "params",
                 "delta", "samples/s", "speed-up");
    for (size_t i = 0; i < n; i++)
        xs_sb_printf(sb, "%-4zu %-34s %-38s %8.1fM %+7.2f%% %10.1f %7.3fx\n", i + 1, a[i].change,
                     a[i].rule, a[i].params / 1e6, a[i].params_delta_pct, a[i].samples_per_s,
                     a[i].speedup);
    xs_sb_printf(sb, "\nApply one with the --set options in `--format json` (field \"set\"). "
                     "Memory capacity is not checked: a larger batch may not fit.\n");
}

static int same_device(const xs_vrow *r, const void *arg)
{
    return strcmp(r->device, (const char *)arg) == 0;
}
static int same_metric(const xs_vrow *r, const void *arg)
{
    return strcmp(r->metric, (const char *)arg) == 0;
}
static int same_file(const xs_vrow *r, const void *arg)
{
    return strcmp(r->file, (const char *)arg) == 0;
}

/* Distinct values of one string field of the rows, in first-seen order. */
static size_t distinct(const xs_vrow *rows, size_t n, int which, const char **out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = which == 0 ? rows[i].device : which == 1 ? rows[i].metric : rows[i].file;
        if (which != 2 && !rows[i].ok)
            continue;
        size_t j = 0;
        while (j < m && strcmp(out[j], v) != 0)
            j++;
        if (j == m)
            out[m++] = v;
    }
    return m;
}

static cJSON *summary_json(const xs_vsummary *v)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)v->n);
    cJSON_AddNumberToObject(o, "mape_pct", v->mape_pct);
    cJSON_AddNumberToObject(o, "median_abs_pct", v->median_abs_pct);
    cJSON_AddNumberToObject(o, "max_abs_pct", v->max_abs_pct);
    cJSON_AddNumberToObject(o, "mean_signed_pct", v->mean_signed_pct);
    cJSON_AddNumberToObject(o, "in_band_pct", v->in_band_pct);
    if (v->n_rest)
        cJSON_AddNumberToObject(o, "rest_factor_median", v->rest_factor_median);
    return o;
}

static void summary_line(xs_strbuf *sb, const char *name, const xs_vsummary *v)
{
    xs_sb_printf(sb, "  %-40s n %3zu   MAPE %5.1f%%   median %5.1f%%   max %5.1f%%   signed %+6.1f%%"
                     "   in band %3.0f%%",
                 name, v->n, v->mape_pct, v->median_abs_pct, v->max_abs_pct, v->mean_signed_pct,
                 v->in_band_pct);
    if (v->n_rest)
        xs_sb_printf(sb, "   rest x%.2f", v->rest_factor_median);
    xs_sb_printf(sb, "\n");
}

void xs_report_validate(xs_strbuf *sb, xs_format fmt, const xs_vrow *rows, size_t n)
{
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys) {
        sb->failed = 1;
        return;
    }
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += !rows[i].ok;
    xs_vsummary all;
    xs_vsummarize(rows, n, NULL, NULL, &all);
    if (fmt == XS_FMT_CSV) {
        xs_sb_printf(sb, "file,line,device,scenario,set,metric,measured,predicted,low,high,"
                         "error_pct,status,measured_iqr_pct,matmul_share_pct,rest_factor\n");
        for (size_t i = 0; i < n; i++) {
            const xs_vrow *r = &rows[i];
            xs_sb_csv(sb, r->file);
            xs_sb_printf(sb, ",%d,", r->line);
            const char *text[] = {r->device, r->scenario, r->set, r->metric};
            for (size_t k = 0; k < sizeof text / sizeof *text; k++) {
                xs_sb_csv(sb, text[k]);
                xs_sb_printf(sb, ",");
            }
            xs_sb_printf(sb, "%.9g,", r->measured);
            if (r->ok) {
                xs_sb_printf(sb, "%.9g,%.9g,%.9g,%.4f,ok,", r->predicted, r->low, r->high,
                             r->error_pct);
            } else {
                xs_sb_printf(sb, ",,,,");
                xs_sb_csv(sb, r->reason);
                xs_sb_printf(sb, ",");
            }
            if (r->has_spread)
                xs_sb_printf(sb, "%.2f", r->spread_pct);
            if (r->ok && r->has_rest)
                xs_sb_printf(sb, ",%.2f,%.4f\n", 100 * r->matmul_share, r->rest_factor);
            else
                xs_sb_printf(sb, ",,\n");
        }
    } else if (fmt == XS_FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON *arr = cJSON_AddArrayToObject(root, "rows");
        for (size_t i = 0; i < n; i++) {
            const xs_vrow *r = &rows[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "file", r->file);
            cJSON_AddNumberToObject(o, "line", r->line);
            cJSON_AddStringToObject(o, "device", r->device);
            cJSON_AddStringToObject(o, "scenario", r->scenario);
            cJSON_AddStringToObject(o, "set", r->set);
            cJSON_AddStringToObject(o, "metric", r->metric);
            cJSON_AddNumberToObject(o, "measured", r->measured);
            if (r->has_spread)
                cJSON_AddNumberToObject(o, "measured_iqr_pct", r->spread_pct);
            if (r->ok) {
                cJSON_AddNumberToObject(o, "predicted", r->predicted);
                cJSON_AddNumberToObject(o, "low", r->low);
                cJSON_AddNumberToObject(o, "high", r->high);
                cJSON_AddNumberToObject(o, "error_pct", r->error_pct);
                if (r->has_rest) {
                    cJSON_AddNumberToObject(o, "matmul_share_pct", 100 * r->matmul_share);
                    cJSON_AddNumberToObject(o, "rest_factor", r->rest_factor);
                }
            } else {
                cJSON_AddStringToObject(o, "error", r->reason);
            }
            cJSON_AddItemToArray(arr, o);
        }
        cJSON *sum = summary_json(&all);
        cJSON_AddNumberToObject(sum, "failed", (double)failed);
        cJSON_AddItemToObject(root, "summary", sum);
        static const char *groups[] = {"by_device", "by_metric", "by_file"};
        int (*keep[])(const xs_vrow *, const void *) = {same_device, same_metric, same_file};
        for (int g = 0; g < 3; g++) {
            cJSON *obj = cJSON_AddObjectToObject(root, groups[g]);
            size_t m = distinct(rows, n, g, keys);
            for (size_t j = 0; j < m; j++) {
                xs_vsummary v;
                xs_vsummarize(rows, n, keep[g], keys[j], &v);
                cJSON_AddItemToObject(obj, keys[j], summary_json(&v));
            }
        }
        emit_json(sb, root);
    } else {
        xs_sb_printf(sb, "xpusim validate: %zu rows, %zu predicted, %zu could not be\n\n", n,
                     n - failed, failed);
        xs_sb_printf(sb, "%-5s %-15s %-18s %-44s %-13s %10s %10s %8s  %s\n", "line", "device",
                     "scenario", "set", "metric", "measured", "predicted", "error",
                     "band (low, high)");
        for (size_t i = 0; i < n; i++) {
            const xs_vrow *r = &rows[i];
            if (!r->ok)
                continue;
            xs_sb_printf(sb, "%-5d %-15.15s %-18.18s %-44.44s %-13s %10.4g %10.4g %+7.1f%%  "
                             "(%.4g, %.4g)%s",
                         r->line, r->device, r->scenario, r->set, r->metric, r->measured,
                         r->predicted, r->error_pct, r->low, r->high,
                         r->measured >= r->low && r->measured <= r->high ? "" : " outside");
            if (r->has_spread)
                xs_sb_printf(sb, "  iqr %.1f%%", r->spread_pct);
            if (r->has_rest)
                xs_sb_printf(sb, "  matmul %.0f%%, rest x%.2f", 100 * r->matmul_share,
                             r->rest_factor);
            xs_sb_printf(sb, "\n");
        }
        if (failed) {
            xs_sb_printf(sb, "\nrows that could not be predicted (%zu):\n", failed);
            for (size_t i = 0; i < n; i++)
                if (!rows[i].ok)
                    xs_sb_printf(sb, "  %s:%d: %s\n", rows[i].file, rows[i].line,
                                 rows[i].reason);
        }
        xs_sb_printf(sb, "\nsummary (error = predicted vs measured; band = the device's "
                         "clock and efficiency ranges)\n");
        summary_line(sb, "all rows", &all);
        static const char *titles[] = {"by device", "by metric", "by file"};
        int (*keep[])(const xs_vrow *, const void *) = {same_device, same_metric, same_file};
        for (int g = 0; g < 3; g++) {
            size_t m = distinct(rows, n, g, keys);
            xs_sb_printf(sb, "%s\n", titles[g]);
            for (size_t j = 0; j < m; j++) {
                xs_vsummary v;
                xs_vsummarize(rows, n, keep[g], keys[j], &v);
                const char *name = keys[j];
                if (g == 2 && strrchr(name, '/'))
                    name = strrchr(name, '/') + 1;
                summary_line(sb, name, &v);
            }
        }
    }
    free(keys);
}

void xs_report_devices(xs_strbuf *sb, xs_format fmt, const xs_device *devs, size_t n)
{
    if (fmt == XS_FMT_JSON) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            const xs_device *d = &devs[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", d->id);
            cJSON_AddStringToObject(o, "name", d->name);
            cJSON_AddStringToObject(o, "class", xs_backend_of(d)->name);
            cJSON_AddStringToObject(o, "arch", d->arch);
            for (int t = 0; t < XS_DTYPE_COUNT; t++) {
                char key[32];
                snprintf(key, sizeof key, "peak_%s_tflops", xs_dtype_name((xs_dtype)t));
                if (d->peak_tflops[t] > 0)
                    cJSON_AddNumberToObject(o, key, d->peak_tflops[t]);
            }
            cJSON_AddNumberToObject(o, "memory_gb", d->mem_capacity_gb);
            cJSON_AddNumberToObject(o, "bandwidth_gbs", d->mem_bw_gbs);
            cJSON_AddNumberToObject(o, "tdp_w", d->tdp_w);
            cJSON_AddNumberToObject(o, "price_usd_per_hour", d->price_usd_per_hour);
            cJSON_AddStringToObject(o, "price_as_of", d->price_as_of);
            cJSON_AddItemToArray(arr, o);
        }
        emit_json(sb, arr);
        return;
    }
    const char *hdr = fmt == XS_FMT_CSV
                          ? "id,name,class,arch,fp32_tflops,tf32_tflops,fp16_tflops,bf16_tflops,"
                            "memory_gb,bandwidth_gbs,tdp_w,price_usd_per_hour,price_as_of\n"
                          : NULL;
    if (hdr)
        xs_sb_printf(sb, "%s", hdr);
    else
        xs_sb_printf(sb, "%-16s %-36s %-11s %6s %6s %7s %7s %6s %7s %5s %7s\n", "id", "name",
                     "arch", "fp32", "tf32", "fp16", "bf16", "GB", "GB/s", "W", "$/h");
    for (size_t i = 0; i < n; i++) {
        const xs_device *d = &devs[i];
        const double *pk = d->peak_tflops;
        if (hdr)
            xs_sb_printf(sb, "%s,\"%s\",%s,%s,%g,%g,%g,%g,%g,%g,%g,%g,%s\n", d->id, d->name,
                         xs_backend_of(d)->name, d->arch, pk[XS_FP32], pk[XS_TF32],
                         pk[XS_FP16], pk[XS_BF16], d->mem_capacity_gb, d->mem_bw_gbs,
                         d->tdp_w, d->price_usd_per_hour, d->price_as_of);
        else
            xs_sb_printf(sb, "%-16s %-36.36s %-11.11s %6.1f %6.1f %7.1f %7.1f %6.0f %7.0f %5.0f %7.3f\n",
                         d->id, d->name, d->arch, pk[XS_FP32], pk[XS_TF32],
                         pk[XS_FP16], pk[XS_BF16], d->mem_capacity_gb, d->mem_bw_gbs,
                         d->tdp_w, d->price_usd_per_hour);
    }
    if (!hdr)
        xs_sb_printf(sb, "dense peaks in TFLOP/s (0 = no tensor-core path); prices per "
                         "device-hour, dated in each file\n");
}
