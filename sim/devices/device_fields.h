/* device_fields.h — shorthand for the rows of device-file schemas, for the
 * class schema files (gpu_device.c, cpu_device.c) and the loader only: each
 * row stores into a member of xs_device, common or the class's own
 * ("gpu.sm_count"). */
#ifndef XS_DEVICE_FIELDS_H
#define XS_DEVICE_FIELDS_H

#include <math.h>
#include <stddef.h>

#include "backend.h"
#include "device.h"
#include "schema.h"

#define OFF(member) offsetof(xs_device, member)
#define NUM(path, req, lo, open, member, help) \
    {path, XS_F_NUM, req, lo, INFINITY, open, NULL, OFF(member), 0, help, NULL}
#define POS(path, req, member, help) NUM(path, req, 0, 1, member, help)
#define NONNEG(path, member, help) NUM(path, 1, 0, 0, member, help)
#define NONNEG_OPT(path, member, help) NUM(path, 0, 0, 0, member, help)
#define FRAC(path, member, help) {path, XS_F_NUM, 1, 0, 1, 1, NULL, OFF(member), 0, help, NULL}
#define INT(path, lo, hi, member, help) \
    {path, XS_F_INT, 1, lo, hi, 0, NULL, OFF(member), 0, help, NULL}
#define STR(path, req, member, help) \
    {path, XS_F_STR, req, 0, 0, 0, NULL, OFF(member), sizeof(((xs_device *)0)->member), help, NULL}
#define NOTE(path, help) {path, XS_F_STR, 1, 0, 0, 0, NULL, XS_NOSTORE, 4096, help, NULL}
#define NOTE_OPT(path, help) {path, XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096, help, NULL}
#define CLASS_ROW \
    {"class", XS_F_ENUM, 1, 0, 0, 0, XS_CLASS_CHOICES, OFF(cls), 0, \
     "device class, selects the cost model", NULL}

/* The common facts every class's file states the same way. */
#define ID_ROW STR("id", 1, id, "device id, equal to the file name without .json")
#define POWER_ROWS(tdp_help, idle_help)                                               \
    POS("power.tdp_w", 1, tdp_w, tdp_help " (the default power limit)"), POS("power.idle_w", 1, idle_w, idle_help), \
        FRAC("power.memory_frac", power_memory_frac,                                   \
             "share of (tdp - idle) drawn by a kernel saturating memory bandwidth"),   \
        {"power.compute_frac", XS_F_NUM, 0, 0, 1, 1, NULL, OFF(power_compute_frac), 0, \
         "share of (tdp - idle) drawn by a kernel keeping the compute engines busy; "  \
         "absent: 1 (a dense kernel draws tdp)", NULL},                                \
        POS("power.limit_min_w", 0, power_limit_min_w,                                 \
            "lowest power limit the board accepts (nvidia-smi's Min Power Limit); "   \
            "absent: any limit above idle_w"),                                         \
        POS("power.limit_max_w", 0, power_limit_max_w,                                 \
            "highest power limit the board accepts (nvidia-smi's Max Power Limit); "   \
            "absent: tdp_w, the default limit"),                                       \
        NOTE("power.source", "where the power figures come from"),                     \
        NOTE_OPT("power.note", "free text")
#define PRICE_ROWS(per)                                                                  \
    POS("price.usd_per_hour", 1, price_usd_per_hour, "on-demand price per " per),        \
        STR("price.provider", 1, price_provider, "who charges that price"),              \
        STR("price.as_of", 1, price_as_of, "date of the price, YYYY, YYYY-MM or YYYY-MM-DD"), \
        NOTE("price.source", "where the price comes from"), NOTE_OPT("price.note", "free text")

#endif
