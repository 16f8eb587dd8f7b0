/* report_gemm.c — one GEMM and GEMM sweeps: time, throughput against the
 * engine's quoted peak, the kernel tile and its quantization. */
#include "report.h"

#include <stdio.h>

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
    xs_report_json(sb, o);
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
