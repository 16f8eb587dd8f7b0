/* device.c — loads devices/<id>.json through its class's schema table,
 * checks the relations every device file shares, and hands the rest to the
 * class (backend.h): its checks, engine, estimates and corners. */
#include "device.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "device_fields.h"
#include "fileio.h"
#include "paths.h"

/* The physical range of a device figure. Device files state every number in
 * a unit chosen so that real hardware lies between about 0.001 and 20,000 of
 * it (the shipped files: 0.002 ns an element to 12,000 GB/s of L2); a figure
 * a million times beyond either end is a unit mistake (bytes/s typed as
 * GB/s) rather than a device. Inside [1e-6, 1e6], every time, energy and
 * price the model derives from a scenario within XS_MAX_COUNT stays finite
 * (below about 1e80, against a double's 1e308). */
#define XS_DEV_FIGURE_MIN 1e-6
#define XS_DEV_FIGURE_MAX 1e6

/* 1 if f stores one of the device's quoted peaks: a peak is 0 where the
 * engine lacks the format, but a positive one divides FLOPs. */
static int is_peak(const xs_field *f)
{
    size_t first = offsetof(xs_device, peak_tflops);
    return f->offset >= first && f->offset < first + sizeof ((xs_device *)0)->peak_tflops;
}

/* Check every stored number field of dev (fields: its class's schema, n
 * rows): at most XS_DEV_FIGURE_MAX, and, for a field that must be positive
 * (a rate, a share, a size: the rows with an open lower bound), at least
 * XS_DEV_FIGURE_MIN. Fields that may be 0 (standard deviations, fixed
 * costs, an absent engine) are checked against the maximum only. where
 * names the file in the message. */
static int bounds_check(const xs_field *fields, size_t n, const xs_device *dev,
                        const char *where, xs_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const xs_field *f = &fields[i];
        if (f->type != XS_F_NUM || f->offset == XS_NOSTORE)
            continue;
        double x = *(const double *)((const char *)dev + f->offset);
        /* 0 is an optional field left out or one that may be 0; the
         * schema has refused it where a positive value is required */
        if (x == 0)
            continue;
        int need_min = f->lo_open || is_peak(f);
        if (x <= XS_DEV_FIGURE_MAX && (!need_min || x >= XS_DEV_FIGURE_MIN))
            continue;
        /* the schema's own bound where it is tighter (a share is at most 1) */
        double hi = f->hi < XS_DEV_FIGURE_MAX ? f->hi : XS_DEV_FIGURE_MAX;
        if (need_min)
            return xs_error_set(err, XS_ERANGE,
                                "%s: field '%s' must be %sin [%g, %g], the physical range of "
                                "a device figure in its unit (a unit mistake?), got %.15g",
                                where, f->path, f->lo_open ? "" : "0 or ", XS_DEV_FIGURE_MIN,
                                hi, x);
        return xs_error_set(err, XS_ERANGE,
                            "%s: field '%s' must be at most %g, the physical range of a device "
                            "figure in its unit (a unit mistake?), got %.15g",
                            where, f->path, hi, x);
    }
    return XS_OK;
}

static int valid_date(const char *s)
{
    int y, m, d;
    char tail;
    size_t len = strlen(s);
    if (len == 4)
        return sscanf(s, "%4d%c", &y, &tail) == 1 && y >= 2000;
    if (len == 7)
        return sscanf(s, "%4d-%2d%c", &y, &m, &tail) == 2 && y >= 2000 && m >= 1 && m <= 12;
    if (len == 10)
        return sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) == 3 && y >= 2000 && m >= 1 &&
               m <= 12 && d >= 1 && d <= 31;
    return 0;
}

/* Relations every device file must satisfy: its id names the file, idle
 * power is below the limit, the price has a date. */
static int check_common(const xs_device *d, const char *path, xs_error *err)
{
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strrchr(stem, '.');
    if (dot && strcmp(dot, ".json") == 0)
        *dot = '\0';
    if (!xs_is_stdin(path) && strcmp(stem, d->id) != 0) /* stdin has no file name */
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'id' must equal the file name '%s', got \"%s\"", path,
                            stem, d->id);
    if (d->idle_w >= d->tdp_w)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'power.idle_w' must be below power.tdp_w (%g W), got %g",
                            path, d->tdp_w, d->idle_w);
    if (d->power_limit_min_w > 0 && !(d->power_limit_min_w > d->idle_w &&
                                      d->power_limit_min_w <= d->tdp_w))
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'power.limit_min_w' must be above power.idle_w (%g W) "
                            "and at most power.tdp_w (%g W), got %g",
                            path, d->idle_w, d->tdp_w, d->power_limit_min_w);
    if (d->power_limit_max_w > 0 && d->power_limit_max_w < d->tdp_w)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'power.limit_max_w' must be at least power.tdp_w (%g W), "
                            "got %g",
                            path, d->tdp_w, d->power_limit_max_w);
    if (!valid_date(d->price_as_of))
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'price.as_of' must be a date YYYY, YYYY-MM or "
                            "YYYY-MM-DD, got \"%s\"",
                            path, d->price_as_of);
    return XS_OK;
}

/* The "class" row every class's schema starts with, checked on its own
 * before the class's table is chosen. */
static const xs_field CLASS_FIELD = CLASS_ROW;

/* Apply the schema of the class root names to root, then every check. The
 * class picks the schema, so a missing or unknown one is reported first,
 * before fields that only some class knows. */
static int from_json(const cJSON *root, const char *path, xs_device *out, xs_error *err)
{
    const cJSON *cls = cJSON_GetObjectItemCaseSensitive(root, "class");
    int index = 0;
    if (cJSON_IsObject(root) && !(cJSON_IsString(cls) && xs_backend_find(cls->valuestring, &index)))
        return xs_schema_check_field(&CLASS_FIELD, root, path, err);
    const xs_backend *be = xs_backend_at(index);
    size_t n;
    const xs_field *fields = be->fields(&n);
    xs_device d;
    memset(&d, 0, sizeof d);
    d.backend = be;
    int rc = xs_schema_apply(fields, n, root, path, &d, err);
    if (!rc)
        rc = bounds_check(fields, n, &d, path, err);
    if (!rc)
        rc = check_common(&d, path, err);
    if (!rc)
        rc = be->check(&d, path, err);
    if (rc)
        return rc;
    snprintf(d.arch, sizeof d.arch, "%s", be->arch_name(&d));
    *out = d;
    return XS_OK;
}

int xs_dev_load(const char *path, xs_device *dev, xs_error *err)
{
    cJSON *root = NULL;
    int rc = xs_json_load(path, &root, err);
    if (rc)
        return rc;
    rc = from_json(root, path, dev, err);
    cJSON_Delete(root);
    return rc;
}

int xs_dev_open(const char *id_or_path, xs_device *dev, xs_error *err)
{
    char path[PATH_MAX];
    int rc = xs_resolve("devices", id_or_path, path, sizeof path, err);
    return rc ? rc : xs_dev_load(path, dev, err);
}

int xs_dev_write(const xs_device *dev, const cJSON *notes, const char *path, xs_error *err)
{
    const xs_backend *be = xs_backend_of(dev);
    size_t n;
    const xs_field *fields = be->fields(&n);
    cJSON *doc = NULL;
    int rc = xs_schema_write(fields, n, dev, notes, path, &doc, err);
    xs_device back;
    if (!rc) /* what is written must load: the same schema and checks */
        rc = from_json(doc, path, &back, err);
    if (!rc)
        rc = xs_write_json(path, doc, 1, "the device", err);
    cJSON_Delete(doc);
    return rc;
}

void xs_dev_corner(const xs_device *dev, int which, xs_device *out)
{
    xs_backend_of(dev)->corner(dev, which, out);
}

void xs_dev_gemm_engine(const xs_device *dev, xs_gemm_engine *e)
{
    xs_backend_of(dev)->gemm_engine(dev, e);
}

int xs_dev_estimate(const xs_device *dev, const xs_op *op, xs_estimate *est, xs_error *err)
{
    return xs_backend_of(dev)->estimate(dev, op, est, err);
}
