/* targets.c — calibrate must not damage files it did not create (an audit
 * found the README's command truncating the committed measurements before
 * refusing the host), so every target is judged before the first kernel. */
#include "targets.h"
#include "cuda_meas.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "device.h"
#include "fileio.h"
#include "measure.h"
#include "paths.h"

int xs_cal_device_id(const char *out, char *id, size_t size, xs_error *err)
{
    const char *base = strrchr(out, '/');
    snprintf(id, size, "%s", base ? base + 1 : out);
    char *dot = strrchr(id, '.');
    if (dot && !strcmp(dot, ".json"))
        *dot = '\0';
    if (strlen(id) >= sizeof ((xs_device *)0)->id)
        return xs_error_set(err, XS_EARG,
                            "calibrate: the device id (the file name without .json) must be at "
                            "most %zu characters, got \"%s\"",
                            sizeof ((xs_device *)0)->id - 1, id);
    return XS_OK;
}

void xs_cal_measurements_path(const char *out, char *dst, size_t size)
{
    size_t len = strlen(out);
    if (len >= 5 && strcmp(out + len - 5, ".json") == 0)
        len -= 5;
    snprintf(dst, size, "%.*s.measurements.csv", (int)len, out);
}

/* 1 when path's folder is <root>/<sub> (both resolved, so ./x, symlinks and
 * absolute paths agree). */
static int in_folder(const char *path, const char *root, const char *sub)
{
    char dir[PATH_MAX], want[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
    xs_dirname(path, dir, sizeof dir);
    snprintf(want, sizeof want, "%s/%s", root, sub);
    return realpath(dir, a) && realpath(want, b) && strcmp(a, b) == 0;
}

/* 1 when the existing file carries calibrate's mark: a device file with a
 * "calibration" provenance block, or a CSV starting with the measurement
 * header. */
static int made_by_calibrate(const char *path, int is_csv)
{
    size_t len;
    char *text;
    xs_error ignore;
    if (xs_read_file(path, &text, &len, &ignore) != XS_OK)
        return 0;
    int mine;
    if (is_csv) {
        mine = 0;
        static const char *const headers[] = {XS_MEAS_CSV_HEADER, XS_CMEAS_CSV_HEADER};
        for (int i = 0; i < 2; i++) {
            size_t h = strlen(headers[i]);
            mine |= len > h && strncmp(text, headers[i], h) == 0 &&
                    (text[h] == '\n' || text[h] == '\r');
        }
    } else {
        cJSON *doc = cJSON_ParseWithLength(text, len);
        mine = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "calibration"));
        cJSON_Delete(doc);
    }
    free(text);
    return mine;
}

static int check_one(const char *path, int is_csv, int force, xs_error *err)
{
    const char *what = is_csv ? "measurements file" : "device file";
    struct stat st;
    if (stat(path, &st) != 0)
        return XS_OK; /* absent: nothing to damage (a bad folder fails at the write) */
    if (S_ISDIR(st.st_mode))
        return xs_error_set(err, XS_EARG, "calibrate: %s %s is a directory, expected a file name",
                            what, path);
    if (force)
        return XS_OK;
    char root[PATH_MAX];
    xs_error ignore;
    if (xs_data_root(root, sizeof root, &ignore) == XS_OK &&
        (in_folder(path, root, "devices") || in_folder(path, root, "calibrate/runs")))
        return xs_error_set(err, XS_EARG,
                            "calibrate: %s is a %s shipped with xpusim; write to a new name "
                            "(-o my-host.json) or add --force to replace it",
                            path, what);
    if (!made_by_calibrate(path, is_csv))
        return xs_error_set(err, XS_EARG,
                            "calibrate: %s exists and was not written by xpusim calibrate; "
                            "choose another name or add --force to replace it",
                            path);
    return XS_OK;
}

int xs_cal_targets_check(const char *out, const char *measurements, int force, xs_error *err)
{
    int rc = check_one(out, 0, force, err);
    return rc || !measurements ? rc : check_one(measurements, 1, force, err);
}
