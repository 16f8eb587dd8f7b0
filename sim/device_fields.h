/* device_fields.h — shorthand for the rows of device-file schemas, for the
 * class schema files (gpu_device.c, cpu_device.c) only: each row stores
 * into a member of xs_device, common or the class's own ("gpu.sm_count"). */
#ifndef XS_DEVICE_FIELDS_H
#define XS_DEVICE_FIELDS_H

#include <math.h>
#include <stddef.h>

#include "backend.h"
#include "device.h"
#include "schema.h"

#define OFF(member) offsetof(xs_device, member)
#define NUM(path, req, lo, open, member, help) \
    {path, XS_F_NUM, req, lo, INFINITY, open, NULL, OFF(member), 0, help}
#define POS(path, req, member, help) NUM(path, req, 0, 1, member, help)
#define NONNEG(path, member, help) NUM(path, 1, 0, 0, member, help)
#define FRAC(path, member, help) {path, XS_F_NUM, 1, 0, 1, 1, NULL, OFF(member), 0, help}
#define INT(path, lo, hi, member, help) \
    {path, XS_F_INT, 1, lo, hi, 0, NULL, OFF(member), 0, help}
#define STR(path, req, member, help) \
    {path, XS_F_STR, req, 0, 0, 0, NULL, OFF(member), sizeof(((xs_device *)0)->member), help}
#define NOTE(path, help) {path, XS_F_STR, 1, 0, 0, 0, NULL, XS_NOSTORE, 4096, help}
#define NOTE_OPT(path, help) {path, XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096, help}
#define CLASS_ROW \
    {"class", XS_F_ENUM, 1, 0, 0, 0, XS_CLASS_CHOICES, OFF(cls), 0, \
     "device class, selects the cost model"}

#endif
