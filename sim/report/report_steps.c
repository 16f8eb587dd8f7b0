/* report_steps.c — see report_steps.h. */
#include "report_steps.h"

#include <stdio.h>
#include <string.h>

#include "schema.h"

/* The value a step set, short: "amp_bf16", "multi_tensor", "64". */
static const char *short_setting(const xs_step *s, char *buf, size_t n)
{
    if (s->kind == -1 || !s->applied)
        return s->kind == -1 ? "all off" : "skipped";
    const char *last = strrchr(s->setting, ' ');
    last = last ? last + 1 : s->setting;
    const char *eq = strchr(last, '=');
    snprintf(buf, n, "%s", eq ? eq + 1 : last);
    return buf;
}

/* the last applied step before index i (the start for the first) */
static const xs_step *prev_applied(const xs_steps *st, size_t i)
{
    while (i > 0 && !st->step[--i].applied)
        ;
    return &st->step[i];
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

static void table(xs_strbuf *sb, const xs_steps *st)
{
    xs_sb_printf(sb, "Optimisation waterfall: %s on %s\n", st->scenario, st->device);
    xs_sb_printf(sb, "Each step keeps the ones above it; a skipped step changes nothing.\n\n");
    xs_sb_printf(sb, "%-2s %-16s %-13s %6s %9s %10s %8s %8s %9s %6s %15s %8s %8s\n", "#", "step",
                 "setting", "batch", "step ms", "samples/s", "run h", "kWh", "run $", "MFU",
                 "memory GB", "vs prev", "vs start");
    const xs_step *s0 = &st->step[0];
    for (size_t i = 0; i < st->n; i++) {
        const xs_step *s = &st->step[i];
        char buf[XS_STEPS_SET_MAX], mem[40];
        const char *what = short_setting(s, buf, sizeof buf);
        if (!s->applied) {
            xs_sb_printf(sb, "%-2zu %-16s %-13s %s\n", i, xs_step_name(s->kind), what,
                         "(see below)");
            continue;
        }
        snprintf(mem, sizeof mem, "%.1f/%.0f%s", s->memory_gb, s->capacity_gb,
                 s->fits ? "" : " NO");
        const xs_step *p = i ? prev_applied(st, i) : s0;
        xs_sb_printf(sb,
                     "%-2zu %-16s %-13.13s %6lld %9.1f %10.1f %8.2f %8.2f %9.2f %5.1f%% %15s "
                     "%7.2fx %7.2fx\n",
                     i, xs_step_name(s->kind), what, (long long)s->batch, s->step_time_s * 1e3,
                     s->samples_per_s, s->run_time_s / 3600, s->energy_kwh, s->cost_usd,
                     s->mfu * 100, mem, ratio(s->samples_per_s, p->samples_per_s),
                     ratio(s->samples_per_s, s0->samples_per_s));
    }
    xs_sb_printf(sb, "\nvs prev, vs start: samples/s over the last applied step's and the "
                     "start's; memory: the step's peak / the device's (NO: does not fit).\n");
    xs_sb_printf(sb, "\nSteps:\n");
    for (size_t i = 0; i < st->n; i++) {
        const xs_step *s = &st->step[i];
        if (s->applied)
            xs_sb_printf(sb, "  %zu %-15s %s%s%s\n", i, xs_step_name(s->kind), s->setting,
                         s->why[0] ? ": " : "", s->why);
        else
            xs_sb_printf(sb, "  %zu %-15s skipped: %s\n", i, xs_step_name(s->kind), s->why);
    }
    const xs_step *last = prev_applied(st, st->n);
    if (st->n > 1 && last != s0)
        xs_sb_printf(sb, "\nAll steps: %.2fx the samples/s of the start, run cost %+.0f%%.\n",
                     ratio(last->samples_per_s, s0->samples_per_s),
                     (ratio(last->cost_usd, s0->cost_usd) - 1) * 100);
}

static void json(xs_strbuf *sb, const xs_steps *st)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "device", st->device);
    cJSON_AddStringToObject(root, "scenario", st->scenario);
    cJSON *arr = cJSON_AddArrayToObject(root, "steps");
    const xs_step *s0 = &st->step[0];
    for (size_t i = 0; i < st->n; i++) {
        const xs_step *s = &st->step[i];
        const xs_step *p = i ? prev_applied(st, i) : s0;
        int a = s->applied;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", (double)i);
        cJSON_AddStringToObject(o, "step", xs_step_name(s->kind));
        cJSON_AddBoolToObject(o, "applied", a);
        cJSON_AddStringToObject(o, "setting", s->setting);
        if (a)
            cJSON_AddStringToObject(o, "why", s->why);
        else
            cJSON_AddNullToObject(o, "why");
        if (a)
            cJSON_AddNullToObject(o, "skipped");
        else
            cJSON_AddStringToObject(o, "skipped", s->why);
        cJSON *sets = cJSON_AddArrayToObject(o, "sets");
        for (int k = 0; a && k < s->nsets; k++)
            cJSON_AddItemToArray(sets, cJSON_CreateString(st->sets[k]));
        xs_json_num_or_null(o, "batch", a, (double)s->batch);
        xs_json_num_or_null(o, "step_time_s", a, s->step_time_s);
        xs_json_num_or_null(o, "samples_per_s", a, s->samples_per_s);
        xs_json_num_or_null(o, "tokens_per_s", a, s->tokens_per_s);
        xs_json_num_or_null(o, "run_time_s", a, s->run_time_s);
        xs_json_num_or_null(o, "energy_kwh", a, s->energy_kwh);
        xs_json_num_or_null(o, "cost_usd", a, s->cost_usd);
        xs_json_num_or_null(o, "mfu", a, s->mfu);
        xs_json_num_or_null(o, "memory_gb", a, s->memory_gb);
        xs_json_num_or_null(o, "capacity_gb", a, s->capacity_gb);
        if (a) {
            cJSON_AddBoolToObject(o, "fits", s->fits);
            cJSON_AddStringToObject(o, "matmul_engine", xs_dtype_name(s->matmul_engine));
        } else {
            cJSON_AddNullToObject(o, "fits");
            cJSON_AddNullToObject(o, "matmul_engine");
        }
        xs_json_num_or_null(o, "speedup_vs_prev", a, ratio(s->samples_per_s, p->samples_per_s));
        xs_json_num_or_null(o, "speedup_vs_start", a, ratio(s->samples_per_s, s0->samples_per_s));
        xs_json_num_or_null(o, "cost_change_vs_prev", a, ratio(s->cost_usd, p->cost_usd) - 1);
        xs_json_num_or_null(o, "cost_change_vs_start", a, ratio(s->cost_usd, s0->cost_usd) - 1);
        cJSON_AddItemToArray(arr, o);
    }
    xs_report_json(sb, root);
}

static void csv(xs_strbuf *sb, const xs_steps *st)
{
    xs_sb_printf(sb, "index,step,applied,setting,batch,step_time_s,samples_per_s,tokens_per_s,"
                     "run_time_s,energy_kwh,cost_usd,mfu,memory_gb,capacity_gb,fits,"
                     "matmul_engine,speedup_vs_prev,speedup_vs_start,cost_change_vs_prev,"
                     "cost_change_vs_start,note\n");
    const xs_step *s0 = &st->step[0];
    for (size_t i = 0; i < st->n; i++) {
        const xs_step *s = &st->step[i];
        const xs_step *p = i ? prev_applied(st, i) : s0;
        xs_sb_printf(sb, "%zu,%s,%d,", i, xs_step_name(s->kind), s->applied);
        xs_sb_csv(sb, s->setting);
        if (s->applied)
            xs_sb_printf(sb, ",%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.6g,%d,%s,%.6g,%.6g,"
                             "%.6g,%.6g,",
                         (long long)s->batch, s->step_time_s, s->samples_per_s, s->tokens_per_s,
                         s->run_time_s, s->energy_kwh, s->cost_usd, s->mfu, s->memory_gb,
                         s->capacity_gb, s->fits, xs_dtype_name(s->matmul_engine),
                         ratio(s->samples_per_s, p->samples_per_s),
                         ratio(s->samples_per_s, s0->samples_per_s),
                         ratio(s->cost_usd, p->cost_usd) - 1,
                         ratio(s->cost_usd, s0->cost_usd) - 1);
        else
            xs_sb_printf(sb, ",,,,,,,,,,,,,,,,,");
        xs_sb_csv(sb, s->why);
        xs_sb_printf(sb, "\n");
    }
}

void xs_report_steps(xs_strbuf *sb, xs_format fmt, const xs_steps *st)
{
    if (fmt == XS_FMT_JSON)
        json(sb, st);
    else if (fmt == XS_FMT_CSV)
        csv(sb, st);
    else
        table(sb, st);
}
