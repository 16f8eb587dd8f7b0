/* device_fields.h — shorthand for the rows of device-file schemas, for the
 * class schema files (gpu_device.c, cpu_device.c, tpu_device.c) and the
 * loader only: each row stores into a member of xs_device, common or of
 * the class's own record. */
#ifndef XS_DEVICE_FIELDS_H
#define XS_DEVICE_FIELDS_H

#include <math.h>
#include <stddef.h>

#include "backend.h"
#include "device.h"
#include "schema.h"

/* Where a row stores: a member of the facts every device has (D), or of
 * its class's own record, which xs_device holds in `own` (XS_OWN: the
 * class's schema file names its record's type, gpu_device.c's G(m) say).
 * A text row stores its size too (D_STR, XS_OWN_STR). */
#define D(m) offsetof(xs_device, m)
#define D_STR(m) D(m), sizeof(((xs_device *)0)->m)
#define XS_OWN(type, m) (offsetof(xs_device, own) + offsetof(type, m))
#define XS_OWN_STR(type, m) XS_OWN(type, m), sizeof(((type *)0)->m)
#define NUM(path, req, lo, open, at, help) \
    {path, XS_F_NUM, req, lo, INFINITY, open, NULL, at, 0, help, NULL}
#define POS(path, req, at, help) NUM(path, req, 0, 1, at, help)
#define NONNEG(path, at, help) NUM(path, 1, 0, 0, at, help)
#define NONNEG_OPT(path, at, help) NUM(path, 0, 0, 0, at, help)
#define FRAC(path, at, help) {path, XS_F_NUM, 1, 0, 1, 1, NULL, at, 0, help, NULL}
#define INT(path, lo, hi, at, help) \
    {path, XS_F_INT, 1, lo, hi, 0, NULL, at, 0, help, NULL}
#define STR(path, req, at_size, help) \
    {path, XS_F_STR, req, 0, 0, 0, NULL, at_size, help, NULL}
#define NOTE(path, help) {path, XS_F_STR, 1, 0, 0, 0, NULL, XS_NOSTORE, 4096, help, NULL}
#define NOTE_OPT(path, help) {path, XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096, help, NULL}
#define CLASS_ROW \
    {"class", XS_F_ENUM, 1, 0, 0, 0, XS_CLASS_CHOICES, D(cls), 0, \
     "device class, selects the cost model", NULL}

/* The common facts every class's file states the same way. */
#define ID_ROW STR("id", 1, D_STR(id), "device id, equal to the file name without .json")
#define POWER_ROWS(tdp_help, idle_help)                                               \
    POS("power.tdp_w", 1, D(tdp_w), tdp_help " (the default power limit)"), POS("power.idle_w", 1, D(idle_w), idle_help), \
        FRAC("power.memory_frac", D(power_memory_frac),                                   \
             "share of (tdp - idle) drawn by a kernel saturating memory bandwidth"),   \
        {"power.compute_frac", XS_F_NUM, 0, 0, 1, 1, NULL, D(power_compute_frac), 0, \
         "share of (tdp - idle) drawn by a kernel keeping the compute engines busy; "  \
         "absent: 1 (a dense kernel draws tdp)", NULL},                                \
        POS("power.limit_min_w", 0, D(power_limit_min_w),                                 \
            "lowest power limit the board accepts (nvidia-smi's Min Power Limit); "   \
            "absent: any limit above idle_w"),                                         \
        POS("power.limit_max_w", 0, D(power_limit_max_w),                                 \
            "highest power limit the board accepts (nvidia-smi's Max Power Limit); "   \
            "absent: tdp_w, the default limit"),                                       \
        NOTE("power.source", "where the power figures come from"),                     \
        NOTE_OPT("power.note", "free text")
#define PRICE_ROWS(per)                                                                  \
    POS("price.usd_per_hour", 1, D(price_usd_per_hour), "on-demand price per " per),        \
        STR("price.provider", 1, D_STR(price_provider), "who charges that price"),              \
        STR("price.as_of", 1, D_STR(price_as_of), "date of the price, YYYY, YYYY-MM or YYYY-MM-DD"), \
        NOTE("price.source", "where the price comes from"), NOTE_OPT("price.note", "free text")

#endif
