/* report_advice.c — the advisor's ranked suggestions, each with the --set
 * options that apply it. */
#include "report.h"

#include <stdio.h>
#include <string.h>

void xs_report_advice(xs_strbuf *sb, xs_format fmt, const xs_device *dev, const xs_scenario *s,
                      double tol_pct, int architecture, const xs_advice *base, const xs_advice *a,
                      size_t n)
{
    if (fmt == XS_FMT_JSON) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "kind", xs_advice_kind_name(a[i].kind));
            cJSON_AddStringToObject(o, "change", a[i].change);
            cJSON_AddStringToObject(o, "rule", a[i].rule);
            cJSON *sets = cJSON_AddArrayToObject(o, "set");
            for (int k = 0; k < a[i].nsets; k++)
                cJSON_AddItemToArray(sets, cJSON_CreateString(a[i].sets[k]));
            cJSON_AddBoolToObject(o, "changes_global_batch", a[i].changes_global_batch);
            cJSON_AddNumberToObject(o, "params", a[i].params);
            cJSON_AddNumberToObject(o, "params_delta_pct", a[i].params_delta_pct);
            cJSON_AddNumberToObject(o, "samples_per_s", a[i].samples_per_s);
            cJSON_AddNumberToObject(o, "predicted_speedup", a[i].speedup);
            cJSON_AddItemToArray(arr, o);
        }
        xs_report_json(sb, arr);
        return;
    }
    int pretrained = s->model.hf_config[0] != '\0';
    xs_sb_printf(sb, "xpusim advise: %s on %s, %.1f M parameters (%s)\n", s->id, dev->id,
                 base->params / 1e6,
                 pretrained ? (architecture ? "pretrained checkpoint; with --architecture, model "
                                              "shapes too"
                                            : "pretrained checkpoint: changes a fine-tune can "
                                              "apply; model shapes with --architecture")
                            : "inline model: fine-tune changes and model shapes");
    xs_sb_printf(sb, "as given: %.1f samples/s, global batch %lld (micro-batch %lld x grad_accum "
                     "%lld x %lld device%s); vocabulary and shapes within %g%% of the parameters\n\n",
                 base->samples_per_s,
                 (long long)(s->train.batch * s->train.grad_accum * s->devices),
                 (long long)s->train.batch, (long long)s->train.grad_accum, (long long)s->devices,
                 s->devices == 1 ? "" : "s", tol_pct);
    if (!base->fits)
        xs_sb_printf(sb, "As given, the step does NOT fit the device's memory (`xpusim predict` "
                         "shows by how much; `xpusim fit` the largest micro-batch): every change "
                         "below fits.\n\n");
    if (n == 0 || a[0].speedup < XS_ADVICE_MIN_SPEEDUP)
        xs_sb_printf(sb, "Nothing to gain here: none of the %zu changes tried is predicted "
                         "faster by %.0f%% or more.\n\n",
                     n, 100 * (XS_ADVICE_MIN_SPEEDUP - 1));
    if (n == 0)
        return;
    int w = 32; /* the change column fits the longest change */
    for (size_t i = 0; i < n; i++)
        w = strlen(a[i].change) > (size_t)w ? (int)strlen(a[i].change) : w;
    xs_sb_printf(sb, "%-4s %-12s %-*s %10s %8s %8s\n", "rank", "kind", w, "change", "samples/s",
                 "speed-up", "params");
    for (size_t i = 0; i < n; i++) {
        xs_sb_printf(sb, "%-4zu %-12s %-*s %10.1f %7.3fx %+7.2f%%\n", i + 1,
                     xs_advice_kind_name(a[i].kind), w, a[i].change, a[i].samples_per_s,
                     a[i].speedup, a[i].params_delta_pct);
        xs_sb_printf(sb, "%-17s %s\n%-17s", "", a[i].rule, "");
        for (int k = 0; k < a[i].nsets; k++)
            xs_sb_printf(sb, " --set %s", a[i].sets[k]);
        xs_sb_printf(sb, "\n");
    }
    xs_sb_printf(sb, "\nRanked by predicted samples/s. A new global batch changes the "
                     "optimisation: retune the learning rate. Only changes whose step fits the "
                     "device's memory are proposed (`xpusim fit` finds the largest micro-batch).\n");
}
