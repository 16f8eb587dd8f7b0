/* report_fit.c — the largest micro-batch and the splits of a global batch. */
#include "report.h"

#include "memory.h"

static void fit_json(xs_strbuf *sb, const xs_fit_report *r)
{
    double G = XS_GIB;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "device", r->dev->id);
    cJSON_AddStringToObject(root, "scenario", r->s->id);
    cJSON_AddNumberToObject(root, "capacity_gb", r->at.capacity / G);
    cJSON_AddNumberToObject(root, "max_batch", (double)r->max_batch);
    cJSON_AddNumberToObject(root, "grad_accum", (double)r->s->train.grad_accum);
    if (r->max_batch > 0)
        cJSON_AddNumberToObject(root, "samples_per_s", r->samples_per_s);
    cJSON_AddItemToObject(root, "memory", xs_memory_json(&r->at)); /* at batch 1 when none fits */
    if (r->next.total > 0)
        cJSON_AddNumberToObject(root, "next_batch_total_gb", r->next.total / G);
    cJSON_AddNumberToObject(root, "global_batch", (double)r->global_batch);
    cJSON *arr = cJSON_AddArrayToObject(root, "combinations");
    for (size_t i = 0; i < r->nsplits; i++) {
        const xs_fit_split *x = &r->splits[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "batch", (double)x->batch);
        cJSON_AddNumberToObject(o, "grad_accum", (double)x->grad_accum);
        cJSON_AddNumberToObject(o, "samples_per_s", x->samples_per_s);
        cJSON_AddNumberToObject(o, "step_time_s", x->step_time_s);
        cJSON_AddNumberToObject(o, "total_gb", x->mem.total / G);
        cJSON_AddNumberToObject(o, "run_time_s", x->run_time_s);
        cJSON_AddNumberToObject(o, "run_cost_usd", x->run_cost_usd);
        cJSON_AddItemToArray(arr, o);
    }
    xs_report_json(sb, root);
}

/* at most this many splits in the table (JSON has them all) */
#define SPLIT_ROWS 12

void xs_report_fit(xs_strbuf *sb, xs_format fmt, const xs_fit_report *r)
{
    if (fmt == XS_FMT_JSON) {
        fit_json(sb, r);
        return;
    }
    double G = XS_GIB;
    xs_sb_printf(sb, "xpusim fit: %s on %s (%s), %.2f GB\n", r->s->id, r->dev->id, r->dev->name,
                 r->at.capacity / G);
    long long ga = (long long)r->s->train.grad_accum;
    if (r->max_batch == 0) {
        xs_sb_printf(sb, "does NOT fit even at micro-batch 1 (grad_accum %lld): the step needs "
                         "%.2f GB\n",
                     ga, r->at.total / G);
        xs_report_memory_lines(sb, &r->at);
    } else {
        xs_sb_printf(sb, "largest micro-batch that fits at grad_accum %lld: %lld, %.1f samples/s",
                     ga, (long long)r->max_batch, r->samples_per_s);
        if (r->next.total > 0)
            xs_sb_printf(sb, " (%lld needs %.2f GB)", (long long)r->max_batch + 1,
                         r->next.total / G);
        xs_sb_printf(sb, "\n");
        xs_report_memory_lines(sb, &r->at);
    }
    xs_sb_printf(sb, "\nglobal batch %lld%s: micro-batch x grad_accum, fastest first\n",
                 (long long)r->global_batch, r->global_given ? "" : " (the scenario's)");
    if (r->nsplits == 0) {
        xs_sb_printf(sb, "  none: no micro-batch dividing %lld fits with train.grad_accum (at "
                         "most 65536) making up the rest\n",
                     (long long)r->global_batch);
        return;
    }
    xs_sb_printf(sb, "  %6s %10s %10s %9s %9s %8s %9s\n", "batch", "grad_accum", "samples/s",
                 "step s", "memory GB", "run h", "run $");
    for (size_t i = 0; i < r->nsplits && i < SPLIT_ROWS; i++) {
        const xs_fit_split *x = &r->splits[i];
        xs_sb_printf(sb, "  %6lld %10lld %10.1f %9.4f %9.2f %8.2f %9.2f\n", (long long)x->batch,
                     (long long)x->grad_accum, x->samples_per_s, x->step_time_s,
                     x->mem.total / G, x->run_time_s / 3600, x->run_cost_usd);
    }
    if (r->nsplits > SPLIT_ROWS)
        xs_sb_printf(sb, "  ... %zu more (--format json lists them all)\n",
                     r->nsplits - SPLIT_ROWS);
}
