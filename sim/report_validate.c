/* report_validate.c — measured against predicted: every row, then the
 * summaries overall, per device, per metric and per file. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

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
        xs_report_json(sb, root);
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
