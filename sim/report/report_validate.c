/* report_validate.c — measured against predicted: every row, then the
 * summaries overall, per device, per metric and per file. A trace gets its
 * own table (per kernel class: kernels a step, measured and predicted ms)
 * under a header saying how its steps were found. */
#include "report.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

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
static int same_class(const xs_vrow *r, const void *arg)
{
    return strcmp(r->kclass, (const char *)arg) == 0;
}

/* Distinct values of one string field of the rows, in first-seen order. */
static size_t distinct(const xs_vrow *rows, size_t n, int which, const char **out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = which == 0   ? rows[i].device
                        : which == 1 ? rows[i].metric
                        : which == 2 ? rows[i].file
                                     : rows[i].kclass;
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

/* The (class, device) pairs of the ok kernel rows (metric time_s), in
 * first-seen order, in a new array the caller frees: *m pairs, [2 j] the
 * class and [2 j + 1] the device. NULL when memory runs out. */
static const char **class_devices(const xs_vrow *rows, size_t n, size_t *m)
{
    const char **out = malloc((2 * n + 2) * sizeof *out);
    *m = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const xs_vrow *r = &rows[i];
        if (!r->ok || strcmp(r->metric, "time_s") != 0)
            continue;
        size_t j = 0;
        while (j < *m && (strcmp(out[2 * j], r->kclass) != 0 || strcmp(out[2 * j + 1], r->device) != 0))
            j++;
        if (j == *m) {
            out[2 * j] = r->kclass;
            out[2 * j + 1] = r->device;
            ++*m;
        }
    }
    return out;
}

static cJSON *ratio_json(const char *kclass, const char *device, const xs_vratio *q)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "class", kclass);
    cJSON_AddStringToObject(o, "device", device);
    cJSON_AddNumberToObject(o, "n", (double)q->n);
    cJSON_AddNumberToObject(o, "under_floor", (double)q->under_floor);
    cJSON_AddNumberToObject(o, "median_ratio", q->median);
    cJSON_AddNumberToObject(o, "p25_ratio", q->p25);
    cJSON_AddNumberToObject(o, "p75_ratio", q->p75);
    return o;
}

static void ratio_table(xs_strbuf *sb, const xs_vrow *rows, size_t n)
{
    size_t m;
    const char **pairs = class_devices(rows, n, &m);
    if (!pairs)
        sb->failed = 1;
    if (!m) {
        free(pairs);
        return;
    }
    xs_sb_printf(sb, "by class and device (kernel rows: predicted / measured time, 1 = right, "
                     "below 1 = the model is too fast; spread = p25-p75; under floor = rows "
                     "measured below %g x their host_us, left out)\n", XS_VISIBLE_OVER_FLOOR);
    for (size_t j = 0; j < m; j++) {
        xs_vratio q;
        xs_vratio_summarize(rows, n, pairs[2 * j], pairs[2 * j + 1], &q);
        if (!q.n) {
            xs_sb_printf(sb, "  %-24s %-18s n %6zu   every row under the floor (%zu)\n",
                         pairs[2 * j], pairs[2 * j + 1], q.n, q.under_floor);
            continue;
        }
        xs_sb_printf(sb, "  %-24s %-18s n %6zu   median %6.3f   spread %6.3f - %-6.3f",
                     pairs[2 * j], pairs[2 * j + 1], q.n, q.median, q.p25, q.p75);
        if (q.under_floor)
            xs_sb_printf(sb, "   under floor %zu", q.under_floor);
        xs_sb_printf(sb, "\n");
    }
    free(pairs);
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
    if (v->n == 0) { /* no figure to summarise: zeros would read as a perfect model */
        xs_sb_printf(sb, "  %-40s n %3zu   no row could be predicted (reasons in the rows "
                         "above)\n", name, v->n);
        return;
    }
    xs_sb_printf(sb, "  %-40s n %3zu   MAPE %5.1f%%   median %5.1f%%   max %5.1f%%   signed %+6.1f%%"
                     "   in band %3.0f%%",
                 name, v->n, v->mape_pct, v->median_abs_pct, v->max_abs_pct, v->mean_signed_pct,
                 v->in_band_pct);
    if (v->n_rest)
        xs_sb_printf(sb, "   rest x%.2f", v->rest_factor_median);
    xs_sb_printf(sb, "\n");
}

static int in_band(const xs_vrow *r)
{
    return r->measured >= r->low && r->measured <= r->high;
}

/* ---- set column ------------------------------------------------------ */

#define SET_WIDTH 56

/* The ';'-separated items of set, "; "-joined, each key without its
 * section ("train.batch" -> "batch") unless another key of the same set
 * has that name too. *shortened: some key lost its section. */
static void set_text(const char *set, char *out, size_t size, int *shortened)
{
    const char *item[64];
    size_t len[64], n = 0;
    for (const char *s = set; *s && n < 64;) {
        size_t l = strcspn(s, ";");
        size_t skip = strspn(s, " ");
        if (l > skip) {
            item[n] = s + skip;
            len[n++] = l - skip;
        }
        s += l + (s[l] == ';');
    }
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t keylen = strcspn(item[i], "=");
        if (keylen > len[i])
            keylen = len[i];
        const char *shortkey = item[i];
        for (const char *p = item[i]; p < item[i] + keylen; p++)
            if (*p == '.')
                shortkey = p + 1;
        size_t sl = keylen - (size_t)(shortkey - item[i]);
        for (size_t j = 0; j < n && shortkey != item[i]; j++) {
            if (j == i)
                continue;
            size_t kl = strcspn(item[j], "=");
            const char *o = item[j];
            for (const char *p = item[j]; p < item[j] + kl; p++)
                if (*p == '.')
                    o = p + 1;
            if ((size_t)(item[j] + kl - o) == sl && memcmp(o, shortkey, sl) == 0)
                shortkey = item[i]; /* ambiguous: keep the section */
        }
        *shortened |= shortkey != item[i];
        size_t keep = len[i] - (size_t)(shortkey - item[i]);
        int w = snprintf(out + used, size - used, "%s%.*s", i ? "; " : "", (int)keep, shortkey);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
    }
}

/* text ("a; b; c") from the current column on, broken after "; " so that a
 * line holds at most width characters (an item longer than that gets a
 * line of its own, whole); continuation lines start at column indent. */
static void wrapped(xs_strbuf *sb, const char *text, int width, int indent)
{
    int col = 0;
    for (const char *s = text; *s;) {
        const char *semi = strstr(s, "; ");
        int l = semi ? (int)(semi - s) + 1 : (int)strlen(s); /* with its ';' */
        if (col > 0 && col + 1 + l > width) {
            xs_sb_printf(sb, "\n%*s", indent, "");
            col = 0;
        }
        xs_sb_printf(sb, "%s%.*s", col ? " " : "", l, s);
        col += (col ? 1 : 0) + l;
        s += l;
        s += *s == ' ';
    }
}

/* ---- table of measured runs ------------------------------------------ */

static int widest(const xs_vrow *rows, size_t n, size_t field, int floor)
{
    int w = floor;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].ok)
            continue;
        const char *s = (const char *)&rows[i] + field;
        int l = (int)strlen(s);
        w = l > w ? l : w;
    }
    return w;
}

static void runs_table(xs_strbuf *sb, const xs_vrow *rows, size_t n)
{
    int wd = widest(rows, n, offsetof(xs_vrow, device), 6);
    int ws = widest(rows, n, offsetof(xs_vrow, scenario), 8);
    int wm = widest(rows, n, offsetof(xs_vrow, metric), 6);
    int indent = 5 + 1 + wd + 2 + ws + 2 + wm + 2 + 10 + 1 + 10 + 1 + 8 + 2 + 22 + 1 + 6 + 1 + 7 +
                 1 + 6 + 2;
    xs_sb_printf(sb, "%-5s %-*s  %-*s  %-*s  %10s %10s %8s  %-22s %6s %7s %6s  %s\n", "line", wd,
                 "device", ws, "scenario", wm, "metric", "measured", "predicted", "error",
                 "band (low - high)", "iqr", "matmul", "rest", "set");
    int any_out = 0, any_rest = 0, any_short = 0, any_iqr = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_vrow *r = &rows[i];
        if (!r->ok)
            continue;
        char band[48], iqr[16] = "-", mm[16] = "-", rest[16] = "-", set[1024];
        int out = !in_band(r);
        any_out |= out;
        snprintf(band, sizeof band, "%.4g - %.4g%s", r->low, r->high, out ? " *" : "");
        if (r->has_spread) {
            any_iqr = 1;
            snprintf(iqr, sizeof iqr, "%.1f%%", r->spread_pct);
        }
        if (r->has_rest) {
            any_rest = 1;
            snprintf(mm, sizeof mm, "%.0f%%", 100 * r->matmul_share);
            snprintf(rest, sizeof rest, "x%.2f", r->rest_factor);
        }
        set_text(xs_vrow_set_of(r), set, sizeof set, &any_short);
        xs_sb_printf(sb, "%-5d %-*s  %-*s  %-*s  %10.4g %10.4g %+7.1f%%  %-22s %6s %7s %6s  ",
                     r->line, wd, r->device, ws, r->scenario, wm, r->metric, r->measured,
                     r->predicted, r->error_pct, band, iqr, mm, rest);
        wrapped(sb, set[0] ? set : "-", SET_WIDTH, indent);
        xs_sb_printf(sb, "\n");
    }
    xs_sb_printf(sb, "\n");
    if (any_out)
        xs_sb_printf(sb, "* the measurement lies outside the predicted band (the device's clock "
                         "and efficiency ranges)\n");
    if (any_iqr)
        xs_sb_printf(sb, "iqr: the measurement's own spread, inter-quartile range / median of "
                         "its repetitions\n");
    if (any_rest)
        xs_sb_printf(sb,
                     "matmul: share of the predicted step in GEMM, batched-GEMM and "
                     "fused-attention kernels.\n"
                     "rest xF: if those matmul kernels took exactly their predicted time, the rest "
                     "of the step (every other kernel\n"
                     "  and the host wait) took F times its predicted time to give the measured "
                     "step (x1.00: no error there;\n"
                     "  x1.30: 30%% longer; 0 or less: the predicted matmuls alone outlast the "
                     "measured step). Throughput rows\n"
                     "  are turned into a time per step first.\n");
    if (any_short)
        xs_sb_printf(sb, "set: keys without their section (batch = train.batch) where no other "
                         "key of the row has the same name\n");
}

/* ---- table of a trace ------------------------------------------------- */

static void trace_header(xs_strbuf *sb, const xs_trace *t, const xs_vrow *rows, size_t n)
{
    const xs_vrow *r0 = n ? &rows[0] : NULL;
    if (r0)
        xs_sb_printf(sb, "xpusim validate --trace %s: %s on %s\n", r0->file, r0->scenario,
                     r0->device);
    if (t->has_steps) {
        int lo = t->steps[0].number, hi = t->steps[t->nsteps - 1].number;
        xs_sb_printf(sb, "steps     %zu (ProfilerStep#%d", t->nsteps, lo);
        if (hi != lo)
            xs_sb_printf(sb, " to #%d", hi);
        xs_sb_printf(sb, "); measured figures are the median step, never the sum of steps");
        if (t->empty_steps)
            xs_sb_printf(sb, "; %zu step%s without GPU activity left out", t->empty_steps,
                         t->empty_steps == 1 ? "" : "s");
        xs_sb_printf(sb, "\n");
        static const char *how[XS_TA_COUNT] = {"by their launch (correlation id)",
                                               "by the step's GPU-side span",
                                               "by time (no launch in the trace)", "whole"};
        xs_sb_printf(sb, "          GPU events given to steps");
        const char *sep = " ";
        for (int h = 0; h < XS_TA_WHOLE; h++)
            if (t->assigned[h]) {
                xs_sb_printf(sb, "%s%s: %zu", sep, how[h], t->assigned[h]);
                sep = ", ";
            }
        xs_sb_printf(sb, "\n");
        if (t->outside)
            xs_sb_printf(sb, "          %zu GPU event%s (%.3f ms) outside every step, left out\n",
                         t->outside, t->outside == 1 ? "" : "s", 1e3 * t->outside_s);
    } else {
        xs_sb_printf(sb, "steps     1: the trace has no ProfilerStep spans, so it is taken as "
                         "one training step\n");
    }
    xs_sb_printf(sb, "gpu       %s; %.0f GPU events and %.3f ms of GPU time in the median step\n",
                 t->gpu_name[0] ? t->gpu_name : "(the trace does not name its GPU)",
                 t->events_per_step, 1e3 * t->gpu_s);
    double other = t->measured_s[XS_KC_OTHER];
    xs_sb_printf(sb, "other     %.3f ms a step (%.1f%% of GPU time) in %.0f GPU event%s that no "
                     "class takes: not compared",
                 1e3 * other, t->gpu_s > 0 ? 100 * other / t->gpu_s : 0, t->events[XS_KC_OTHER],
                 t->events[XS_KC_OTHER] == 1 ? "" : "s");
    for (size_t i = 0; i < t->nunknown; i++) /* the largest, to extend kernel_class.c by */
        xs_sb_printf(sb, "\n          %.3f ms in %zu event%s over all %zu step%s: %s",
                     1e3 * t->unknown[i].time_s, t->unknown[i].events,
                     t->unknown[i].events == 1 ? "" : "s", t->nsteps, t->nsteps == 1 ? "" : "s",
                     t->unknown[i].name);
    xs_sb_printf(sb, "\n");
    if (r0 && xs_vrow_set_of(r0)[0]) {
        char set[1024];
        int shortened = 0;
        set_text(xs_vrow_set_of(r0), set, sizeof set, &shortened);
        xs_sb_printf(sb, "set       ");
        wrapped(sb, set, 70, 10);
        xs_sb_printf(sb, "\n");
    }
    xs_sb_printf(sb, "\n");
}

static void trace_table(xs_strbuf *sb, const xs_trace *t, const xs_vrow *rows, size_t n)
{
    trace_header(sb, t, rows, n);
    xs_sb_printf(sb, "%-18s %12s %10s %12s %13s %9s %6s\n", "class", "kernels/step",
                 "predicted", "measured ms", "predicted ms", "error", "iqr");
    for (size_t i = 0; i < n; i++) {
        const xs_vrow *r = &rows[i];
        int step = strcmp(r->metric, "step_time_s") == 0;
        const char *colon = strchr(r->metric, ':');
        char name[32], err[16] = "-", iqr[16] = "-";
        snprintf(name, sizeof name, "%s", step ? (t->step_is_host ? "step (host span)"
                                                                  : "step (GPU span)")
                                               : colon ? colon + 1 : r->metric);
        if (r->ok)
            snprintf(err, sizeof err, "%+.1f%%", r->error_pct);
        if (r->has_spread)
            snprintf(iqr, sizeof iqr, "%.0f%%", r->spread_pct);
        xs_sb_printf(sb, "%-18s %12.0f %10.0f %12.4f %13.4f %9s %6s", name, r->trace_events,
                     r->trace_launches, 1e3 * r->measured, 1e3 * r->predicted, err, iqr);
        if (step)
            xs_sb_printf(sb, "  band %.4f - %.4f ms%s", 1e3 * r->low, 1e3 * r->high,
                         in_band(r) ? "" : ", measured outside");
        xs_sb_printf(sb, "\n");
    }
    xs_sb_printf(sb, "\nkernels/step: GPU events of the class in the median step (kernels, "
                     "copies, fills); predicted: the kernel\n"
                     "  launches the model predicts for one step. gemm includes batched GEMMs, "
                     "copy includes dtype casts\n"
                     "  (a kernel's name does not tell them apart). iqr: inter-quartile range / "
                     "median over the steps.\n");
    xs_sb_printf(sb, "step: the median step's %s.\n",
                 t->step_is_host ? "host span (ProfilerStep#N's wall time, host waits included)"
                                 : "GPU activity, from its first GPU event's start to its "
                                   "last one's end");
}

/* ---- all formats ------------------------------------------------------ */

static cJSON *trace_json(const xs_trace *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "steps", (double)t->nsteps);
    cJSON_AddBoolToObject(o, "has_step_spans", t->has_steps);
    if (t->has_steps && t->nsteps) {
        cJSON_AddNumberToObject(o, "first_step", t->steps[0].number);
        cJSON_AddNumberToObject(o, "last_step", t->steps[t->nsteps - 1].number);
    }
    cJSON_AddNumberToObject(o, "empty_steps", (double)t->empty_steps);
    cJSON *a = cJSON_AddObjectToObject(o, "assigned");
    static const char *how[XS_TA_COUNT] = {"launch", "gpu_span", "time", "whole"};
    for (int h = 0; h < XS_TA_COUNT; h++)
        cJSON_AddNumberToObject(a, how[h], (double)t->assigned[h]);
    cJSON_AddNumberToObject(o, "outside_events", (double)t->outside);
    cJSON_AddNumberToObject(o, "outside_s", t->outside_s);
    cJSON_AddStringToObject(o, "step_time", t->step_is_host ? "host_span" : "gpu_span");
    cJSON_AddNumberToObject(o, "gpu_events_per_step", t->events_per_step);
    cJSON_AddNumberToObject(o, "gpu_busy_s", t->gpu_s);
    cJSON_AddStringToObject(o, "gpu_name", t->gpu_name);
    cJSON *other = cJSON_AddObjectToObject(o, "other");
    cJSON_AddNumberToObject(other, "time_s", t->measured_s[XS_KC_OTHER]);
    cJSON_AddNumberToObject(other, "events", t->events[XS_KC_OTHER]);
    cJSON *names = cJSON_AddArrayToObject(other, "largest");
    for (size_t i = 0; i < t->nunknown; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "name", t->unknown[i].name);
        cJSON_AddNumberToObject(k, "events", (double)t->unknown[i].events);
        cJSON_AddNumberToObject(k, "time_s", t->unknown[i].time_s);
        cJSON_AddItemToArray(names, k);
    }
    return o;
}

/* extra's notes, one "note: ..." line each */
static void note_lines(xs_strbuf *sb, const cJSON *extra)
{
    const cJSON *note;
    cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(extra, "notes"))
        if (cJSON_IsString(note))
            xs_sb_printf(sb, "note: %s\n", note->valuestring);
}

static void report(xs_strbuf *sb, xs_format fmt, const xs_vrow *rows, size_t n,
                   const xs_trace *t, const cJSON *extra)
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
        /* new columns go at the end: scripts index the old ones */
        xs_sb_printf(sb, "file,line,device,scenario,set,metric,measured,predicted,low,high,"
                         "error_pct,status,measured_iqr_pct,matmul_share_pct,rest_factor,"
                         "trace_steps,kernels_per_step,kernels_predicted,class\n");
        for (size_t i = 0; i < n; i++) {
            const xs_vrow *r = &rows[i];
            xs_sb_csv(sb, r->file);
            xs_sb_printf(sb, ",%d,", r->line);
            const char *text[] = {r->device, r->scenario, xs_vrow_set_of(r), r->metric};
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
                xs_sb_csv(sb, xs_vrow_reason(r));
                xs_sb_printf(sb, ",");
            }
            if (r->has_spread)
                xs_sb_printf(sb, "%.2f", r->spread_pct);
            if (r->ok && r->has_rest)
                xs_sb_printf(sb, ",%.2f,%.4f", 100 * r->matmul_share, r->rest_factor);
            else
                xs_sb_printf(sb, ",,");
            if (r->trace_steps > 0)
                xs_sb_printf(sb, ",%d,%.9g,%.9g,", r->trace_steps, r->trace_events,
                             r->trace_launches);
            else
                xs_sb_printf(sb, ",,,,");
            xs_sb_csv(sb, r->kclass);
            xs_sb_printf(sb, "\n");
        }
    } else if (fmt == XS_FMT_JSON) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "error_sign", XS_VERROR_SIGN ", - = pessimistic");
        cJSON *arr = cJSON_AddArrayToObject(root, "rows");
        for (size_t i = 0; i < n; i++) {
            const xs_vrow *r = &rows[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "file", r->file);
            cJSON_AddNumberToObject(o, "line", r->line);
            cJSON_AddStringToObject(o, "device", r->device);
            cJSON_AddStringToObject(o, "scenario", r->scenario);
            cJSON_AddStringToObject(o, "set", xs_vrow_set_of(r));
            cJSON_AddStringToObject(o, "metric", r->metric);
            cJSON_AddStringToObject(o, "class", r->kclass);
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
                cJSON_AddStringToObject(o, "error", xs_vrow_reason(r));
            }
            if (r->trace_steps > 0) {
                cJSON_AddNumberToObject(o, "trace_steps", r->trace_steps);
                cJSON_AddNumberToObject(o, "kernels_per_step", r->trace_events);
                cJSON_AddNumberToObject(o, "kernels_predicted", r->trace_launches);
            }
            cJSON_AddItemToArray(arr, o);
        }
        cJSON *sum = summary_json(&all);
        cJSON_AddNumberToObject(sum, "failed", (double)failed);
        cJSON_AddItemToObject(root, "summary", sum);
        static const char *groups[] = {"by_device", "by_metric", "by_file", "by_class"};
        int (*keep[])(const xs_vrow *, const void *) = {same_device, same_metric, same_file,
                                                        same_class};
        for (int g = 0; g < 4; g++) {
            cJSON *obj = cJSON_AddObjectToObject(root, groups[g]);
            size_t m = distinct(rows, n, g, keys);
            for (size_t j = 0; j < m; j++) {
                xs_vsummary v;
                xs_vsummarize(rows, n, keep[g], keys[j], &v);
                cJSON_AddItemToObject(obj, keys[j], summary_json(&v));
            }
        }
        cJSON *ratios = cJSON_AddArrayToObject(root, "by_class_device");
        size_t m;
        const char **pairs = class_devices(rows, n, &m);
        if (!pairs || !ratios)
            sb->failed = 1;
        for (size_t j = 0; ratios && j < m; j++) {
            xs_vratio q;
            xs_vratio_summarize(rows, n, pairs[2 * j], pairs[2 * j + 1], &q);
            cJSON_AddItemToArray(ratios, ratio_json(pairs[2 * j], pairs[2 * j + 1], &q));
        }
        free(pairs);
        if (t)
            cJSON_AddItemToObject(root, "trace", trace_json(t));
        const cJSON *item;
        cJSON_ArrayForEach(item, extra)
        {
            cJSON *copy = cJSON_Duplicate(item, 1);
            if (!copy || !item->string || !cJSON_AddItemToObject(root, item->string, copy)) {
                cJSON_Delete(copy);
                sb->failed = 1;
            }
        }
        xs_report_json(sb, root);
    } else {
        if (t) {
            trace_table(sb, t, rows, n);
        } else {
            xs_sb_printf(sb, "xpusim validate: %zu rows, %zu predicted, %zu could not be\n\n", n,
                         n - failed, failed);
            runs_table(sb, rows, n);
        }
        if (failed) {
            xs_sb_printf(sb, "\nrows that could not be predicted (%zu):\n", failed);
            for (size_t i = 0; i < n; i++)
                if (!rows[i].ok)
                    xs_sb_printf(sb, "  %s:%d: %s\n", rows[i].file, rows[i].line,
                                 xs_vrow_reason(&rows[i]));
        }
        xs_sb_printf(sb, "\nsummary (error: " XS_VERROR_SIGN ", - = pessimistic; band = "
                         "the device's clock and efficiency ranges)\n");
        summary_line(sb, "all rows", &all);
        /* a trace is one device, one file, one row per metric: nothing to group */
        static const char *titles[] = {"by device", "by metric", "by file", "by class"};
        int (*keep[])(const xs_vrow *, const void *) = {same_device, same_metric, same_file,
                                                        same_class};
        for (int g = 0; !t && g < 4; g++) {
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
        if (!t) /* a trace is one device and its own table */
            ratio_table(sb, rows, n);
        note_lines(sb, extra);
    }
    free(keys);
}

void xs_report_validate(xs_strbuf *sb, xs_format fmt, const xs_vrow *rows, size_t n)
{
    report(sb, fmt, rows, n, NULL, NULL);
}

void xs_report_validate_extra(xs_strbuf *sb, xs_format fmt, const xs_vrow *rows, size_t n,
                              const cJSON *extra)
{
    report(sb, fmt, rows, n, NULL, extra);
}

void xs_report_validate_trace(xs_strbuf *sb, xs_format fmt, const xs_trace *t,
                              const xs_vrow *rows, size_t n)
{
    report(sb, fmt, rows, n, t, NULL);
}

int xs_report_add_note(cJSON *extra, const char *text)
{
    cJSON *notes = cJSON_GetObjectItemCaseSensitive(extra, "notes");
    if (!notes)
        notes = cJSON_AddArrayToObject(extra, "notes");
    cJSON *s = cJSON_CreateString(text);
    if (!notes || !s || !cJSON_AddItemToArray(notes, s)) {
        cJSON_Delete(s);
        return XS_ENOMEM;
    }
    return XS_OK;
}

void xs_report_notes_to(FILE *f, const cJSON *extra)
{
    xs_strbuf sb = {0};
    note_lines(&sb, extra);
    if (sb.data)
        fputs(sb.data, f);
    xs_sb_free(&sb);
}
