/* report_memory.c — the memory answer, as every report shows it: the peak
 * against the device's memory, its parts, where it happens. */
#include "report.h"

#include "memory.h"

static const char *phase_words(int phase)
{
    static const char *w[] = {"forward", "backward", "optimizer step", "communication"};
    return phase >= 0 && phase < XS_PHASE_COUNT ? w[phase] : "?";
}

void xs_report_memory_lines(xs_strbuf *sb, const xs_memory *m)
{
    double G = XS_GIB;
    xs_sb_printf(sb, "memory    %.2f GB of %.2f GB (", m->total / G, m->capacity / G);
    if (m->fits)
        xs_sb_printf(sb, "fits");
    else
        xs_sb_printf(sb, "does NOT fit: needs %.2f GB more", (m->total - m->capacity) / G);
    xs_sb_printf(sb, "), peak in the %s at %s\n", phase_words(m->peak_phase), m->peak_op);
    xs_sb_printf(sb,
                 "          weights %.2f + grads %.2f + optimizer %.2f + activations %.2f + "
                 "transient %.2f + allocator %.2f + workspace %.2f GB\n",
                 m->weights / G, m->grads / G, m->optimizer / G, m->activations / G,
                 m->transient / G, m->fragmentation / G, m->workspace / G);
}

cJSON *xs_memory_json(const xs_memory *m)
{
    double G = XS_GIB;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "weights_gb", m->weights / G);
    cJSON_AddNumberToObject(o, "grads_gb", m->grads / G);
    cJSON_AddNumberToObject(o, "optimizer_gb", m->optimizer / G);
    cJSON_AddNumberToObject(o, "activations_gb", m->activations / G);
    cJSON_AddNumberToObject(o, "transient_gb", m->transient / G);
    cJSON_AddNumberToObject(o, "fragmentation_gb", m->fragmentation / G);
    cJSON_AddNumberToObject(o, "workspace_gb", m->workspace / G);
    cJSON_AddNumberToObject(o, "total_gb", m->total / G);
    cJSON_AddNumberToObject(o, "capacity_gb", m->capacity / G);
    cJSON_AddBoolToObject(o, "fits", m->fits);
    cJSON_AddStringToObject(o, "peak_op", m->peak_op);
    cJSON_AddStringToObject(o, "peak_phase", xs_phase_name(m->peak_phase));
    return o;
}
