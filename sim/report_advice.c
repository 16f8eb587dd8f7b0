/* report_advice.c — the shape advisor's ranked suggestions. */
#include "report.h"

#include <stdio.h>

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
        xs_report_json(sb, arr);
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
