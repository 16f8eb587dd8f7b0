/* fuzz_device.c — libFuzzer harness for device files (devices/<id>.json):
 * the input is the file. A device that loads is listed, and a GEMM and an
 * optimizer step are costed on each of its corners, so the numbers it
 * accepted are used as a prediction uses them; then it is written back
 * from its schema, as calibration writes devices, and must load again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "device.h"
#include "fuzz_util.h"
#include "report.h"
#include "workload.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"dev", "back"};
    fz_init((*argv)[0], subs, 2);
    return 0;
}

/* A loaded device costs a GEMM and an optimizer step on every corner. */
static void use(const xs_device *dev)
{
    xs_strbuf sb = {0};
    for (int f = XS_FMT_TABLE; f <= XS_FMT_CSV; f++)
        xs_report_devices(&sb, (xs_format)f, dev, 1);
    xs_sb_free(&sb);
    for (int c = -1; c <= 1; c++) {
        xs_device d;
        xs_dev_corner(dev, c, &d);
        xs_gemm_engine e;
        xs_dev_gemm_engine(&d, &e);
        xs_gemm_shape g = {1000, 1024, 4096, 1, 0, 1, XS_FP16, 2};
        xs_gemm_result r;
        xs_error err;
        xs_gemm_model(&e, &g, &r, &err);
        xs_op op;
        if (xs_wl_optimizer_op(XS_OPT_ADAMW, 1, 3.4e8, 400, 4, &op) == 0)
            xs_dev_estimate(&d, &op, &(xs_estimate){0}, &err);
    }
}

/* What loaded must write back and load again; anything else is a bug. */
static void round_trip(const xs_device *dev, const uint8_t *data, size_t size, const char *name)
{
    char path[4096];
    fz_path("back", name, path, sizeof path);
    cJSON *notes = cJSON_ParseWithLength((const char *)data, size);
    xs_error err;
    xs_device back;
    if (xs_dev_write(dev, notes, path, &err) || xs_dev_load(path, &back, &err)) {
        fprintf(stderr, "fuzz_device: a loaded device does not round-trip: %s\n", err.msg);
        abort();
    }
    cJSON_Delete(notes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[80], path[4096];
    fz_name(data, size, "fuzz", name, sizeof name);
    fz_write("dev", name, data, size, path, sizeof path);
    xs_device dev;
    xs_error err;
    int rc = fz_note("load", xs_dev_load(path, &dev, &err), &err);
    fz_nul_refused("load", data, size, rc);
    if (rc == 0) {
        use(&dev);
        round_trip(&dev, data, size, name);
    }
    return 0;
}
