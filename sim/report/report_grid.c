/* report_grid.c — the rows of a grid of runs (`xpusim sweep`, `compare
 * --vary/--weights`): one per (grid point, device), as CSV or JSON, with
 * the varied keys' values first. Written in pieces, so a sweep of millions
 * of rows is formatted a chunk at a time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "schema.h"

/* A varied value as JSON: a number or boolean when all of it parses as
 * one (as --set reads it), else the text. */
static cJSON *value_json(const char *text)
{
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(text, &end, 1);
    if (v && (cJSON_IsNumber(v) || cJSON_IsBool(v)))
        return v;
    cJSON_Delete(v);
    return cJSON_CreateString(text);
}

cJSON *xs_grid_row_json(const xs_grid_view *v, const xs_sweep_row *r, const xs_rank_item *rk)
{
    cJSON *o = cJSON_CreateObject();
    if (v->grid->naxes) {
        cJSON *pt = cJSON_AddObjectToObject(o, "point");
        for (size_t a = 0; a < v->grid->naxes; a++) {
            char buf[XS_SWEEP_VALUE_MAX + 1];
            cJSON_AddItemToObject(pt, v->grid->axes[a].key,
                                  value_json(xs_sweep_value(v->grid, r->point, a, buf,
                                                            sizeof buf)));
        }
    }
    cJSON_AddStringToObject(o, "device", v->devs[r->dev].id);
    int p = r->predicted, run = p && r->fits;
    if (p)
        cJSON_AddStringToObject(o, "matmul_engine", xs_dtype_name(r->matmul_engine));
    else
        cJSON_AddNullToObject(o, "matmul_engine");
    xs_json_num_or_null(o, "step_time_s", p, r->step_time_s);
    xs_json_num_or_null(o, "samples_per_s", p, r->samples_per_s);
    xs_json_num_or_null(o, "tokens_per_s", p, r->tokens_per_s);
    xs_json_num_or_null(o, "mfu", p, r->mfu);
    xs_json_num_or_null(o, "avg_power_w", p, r->avg_power_w);
    xs_json_num_or_null(o, "run_time_s", run, r->run_time_s);
    xs_json_num_or_null(o, "energy_kwh", run, r->run_energy_kwh);
    xs_json_num_or_null(o, "cost_usd", run, r->run_cost_usd);
    if (v->band) {
        cJSON *b = cJSON_AddObjectToObject(o, "band");
        xs_json_num_or_null(b, "cost_usd_low", run, r->run_cost_low_usd);
        xs_json_num_or_null(b, "cost_usd_high", run, r->run_cost_high_usd);
        xs_json_num_or_null(b, "samples_per_s_low", p, r->samples_per_s_low);
        xs_json_num_or_null(b, "samples_per_s_high", p, r->samples_per_s_high);
    }
    xs_json_num_or_null(o, "memory_gb", p, r->memory_gb);
    xs_json_num_or_null(o, "capacity_gb", p, r->capacity_gb);
    cJSON_AddBoolToObject(o, "fits", run);
    if (rk) {
        xs_json_num_or_null(o, "score", rk->candidate, rk->score);
        cJSON_AddBoolToObject(o, "pareto", rk->pareto);
    }
    if (r->reason)
        cJSON_AddStringToObject(o, "reason", r->reason);
    else
        cJSON_AddNullToObject(o, "reason");
    return o;
}

void xs_report_grid_head(xs_strbuf *sb, xs_format fmt, const xs_grid_view *v,
                         const char *scenario_id)
{
    const xs_sweep_grid *g = v->grid;
    if (fmt == XS_FMT_JSON) {
        cJSON *id = cJSON_CreateString(scenario_id);
        char *text = cJSON_PrintUnformatted(id);
        xs_sb_printf(sb, "{\"scenario\":%s,\"varied\":[", text ? text : "null");
        free(text);
        cJSON_Delete(id);
        for (size_t a = 0; a < g->naxes; a++) {
            xs_sb_printf(sb, "%s", a ? "," : "");
            xs_sb_printf(sb, "\"%s\"", g->axes[a].key); /* keys are schema paths: no escapes */
        }
        xs_sb_printf(sb, "],\"rows\":[\n");
        return;
    }
    for (size_t a = 0; a < g->naxes; a++)
        xs_sb_printf(sb, "%s,", g->axes[a].key);
    xs_sb_printf(sb, "device,matmul_engine,step_time_s,samples_per_s,tokens_per_s,mfu,"
                     "avg_power_w,run_time_s,energy_kwh,cost_usd,");
    if (v->band)
        xs_sb_printf(sb, "cost_usd_low,cost_usd_high,samples_per_s_low,samples_per_s_high,");
    xs_sb_printf(sb, "memory_gb,capacity_gb,fits,%sreason\n", v->rank ? "score,pareto," : "");
}

static void csv_num(xs_strbuf *sb, int known, int prec, double x)
{
    if (known)
        xs_sb_g(sb, x, prec);
    xs_sb_put(sb, ",", 1);
}

static void csv_text(xs_strbuf *sb, const char *s)
{
    xs_sb_put(sb, s, strlen(s));
    xs_sb_put(sb, ",", 1);
}

static void csv_row(xs_strbuf *sb, const xs_grid_view *v, const xs_sweep_row *r,
                    const xs_rank_item *rk)
{
    for (size_t a = 0; a < v->grid->naxes; a++) {
        char buf[XS_SWEEP_VALUE_MAX + 1];
        xs_sb_csv(sb, xs_sweep_value(v->grid, r->point, a, buf, sizeof buf));
        xs_sb_put(sb, ",", 1);
    }
    int p = r->predicted, run = p && r->fits;
    csv_text(sb, v->devs[r->dev].id);
    csv_text(sb, p ? xs_dtype_name(r->matmul_engine) : "");
    csv_num(sb, p, 9, r->step_time_s);
    csv_num(sb, p, 9, r->samples_per_s);
    csv_num(sb, p, 9, r->tokens_per_s);
    csv_num(sb, p, 6, r->mfu);
    csv_num(sb, p, 6, r->avg_power_w);
    csv_num(sb, run, 9, r->run_time_s);
    csv_num(sb, run, 9, r->run_energy_kwh);
    csv_num(sb, run, 9, r->run_cost_usd);
    if (v->band) {
        csv_num(sb, run, 9, r->run_cost_low_usd);
        csv_num(sb, run, 9, r->run_cost_high_usd);
        csv_num(sb, p, 9, r->samples_per_s_low);
        csv_num(sb, p, 9, r->samples_per_s_high);
    }
    csv_num(sb, p, 6, r->memory_gb);
    csv_num(sb, p, 6, r->capacity_gb);
    csv_text(sb, run ? "1" : "0");
    if (rk) {
        csv_num(sb, rk->candidate, 6, rk->score);
        csv_text(sb, rk->pareto ? "1" : "0");
    }
    if (r->reason)
        xs_sb_csv(sb, r->reason);
    xs_sb_put(sb, "\n", 1);
}

void xs_report_grid_rows(xs_strbuf *sb, xs_format fmt, const xs_grid_view *v,
                         const xs_sweep_row *rows, const xs_rank_item *ranks,
                         const size_t *order, size_t n, size_t before)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = order ? order[i] : i;
        const xs_rank_item *rk = v->rank && ranks ? &ranks[k] : NULL;
        if (fmt != XS_FMT_JSON) {
            csv_row(sb, v, &rows[k], rk);
            continue;
        }
        cJSON *o = xs_grid_row_json(v, &rows[k], rk);
        char *text = o ? cJSON_PrintUnformatted(o) : NULL;
        if (!text)
            sb->failed = 1;
        else
            xs_sb_printf(sb, "%s%s", before + i ? ",\n" : "", text);
        free(text);
        cJSON_Delete(o);
    }
}

void xs_report_grid_tail(xs_strbuf *sb, xs_format fmt)
{
    if (fmt == XS_FMT_JSON)
        xs_sb_printf(sb, "\n]}\n");
}
