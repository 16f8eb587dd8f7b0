/* report_devices.c — one row per device: class, architecture, peaks,
 * memory, power and price. */
#include "report.h"

#include <stdio.h>

#include "backend.h"

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
        xs_report_json(sb, arr);
        return;
    }
    const char *hdr = fmt == XS_FMT_CSV
                          ? "id,name,class,arch,fp32_tflops,tf32_tflops,fp16_tflops,bf16_tflops,"
                            "memory_gb,bandwidth_gbs,tdp_w,price_usd_per_hour,price_as_of\n"
                          : NULL;
    if (hdr)
        xs_sb_printf(sb, "%s", hdr);
    else
        xs_sb_printf(sb, "%-16s %-36s %-5s %-11s %6s %6s %7s %7s %6s %7s %5s %7s\n", "id",
                     "name", "class", "arch", "fp32", "tf32", "fp16", "bf16", "GB", "GB/s", "W",
                     "$/h");
    for (size_t i = 0; i < n; i++) {
        const xs_device *d = &devs[i];
        const double *pk = d->peak_tflops;
        if (hdr)
            xs_sb_printf(sb, "%s,\"%s\",%s,%s,%g,%g,%g,%g,%g,%g,%g,%g,%s\n", d->id, d->name,
                         xs_backend_of(d)->name, d->arch, pk[XS_FP32], pk[XS_TF32],
                         pk[XS_FP16], pk[XS_BF16], d->mem_capacity_gb, d->mem_bw_gbs,
                         d->tdp_w, d->price_usd_per_hour, d->price_as_of);
        else
            xs_sb_printf(sb,
                         "%-16s %-36.36s %-5.5s %-11.11s %6.1f %6.1f %7.1f %7.1f %6.0f %7.0f %5.0f "
                         "%7.3f\n",
                         d->id, d->name, xs_backend_of(d)->name, d->arch, pk[XS_FP32], pk[XS_TF32],
                         pk[XS_FP16], pk[XS_BF16], d->mem_capacity_gb, d->mem_bw_gbs,
                         d->tdp_w, d->price_usd_per_hour);
    }
    if (!hdr)
        xs_sb_printf(sb, "dense peaks in TFLOP/s (0 = no tensor-core path; fp32 of a tpu: "
                         "its vector unit); prices per device-hour, dated in each file\n");
}
