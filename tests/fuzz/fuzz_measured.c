/* fuzz_measured.c — libFuzzer harness for measured-run CSV files
 * (shared/reference/measured/README.md): the input is the file. Its rows
 * are predicted as `xpusim validate` predicts them, up to a budget (a
 * scenario row predicts a whole training step three times), then
 * summarised and reported in every format. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "report.h"
#include "validate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rows predicted per input: kernel rows (cheap) and scenario rows. */
#define KERNEL_ROWS 16
#define SCENARIO_ROWS 2

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"csv"};
    fz_init((*argv)[0], subs, 1);
    return 0;
}

static int by_device(const xs_vrow *r, const void *dev)
{
    return strcmp(r->device, dev) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4096];
    fz_write("csv", "measured.csv", data, size, path, sizeof path);
    xs_vrow *rows;
    size_t n;
    xs_error err;
    int rc = fz_note("load", xs_measured_load(path, &rows, &n, &err), &err);
    fz_nul_refused("load", data, size, rc);
    if (rc)
        return 0;
    int kernels = 0, scenarios = 0;
    for (size_t i = 0; i < n; i++) {
        int kernel = strcmp(rows[i].scenario, "-") == 0;
        if (kernel ? kernels++ < KERNEL_ROWS : scenarios++ < SCENARIO_ROWS) {
            xs_validate_row(&rows[i]);
            xs_error why = {0, "", ""};
            snprintf(why.msg, sizeof why.msg, "line %d: %s", rows[i].line, xs_vrow_reason(&rows[i]));
            fz_note("row", !rows[i].ok, &why);
        } else if (rows[i].ok) { /* left unpredicted: reported as a failed row */
            xs_vrow_fail(&rows[i], "over the harness's budget");
        }
    }
    xs_vsummary sum;
    xs_vsummarize(rows, n, NULL, NULL, &sum);
    if (n)
        xs_vsummarize(rows, n, by_device, rows[0].device, &sum);
    xs_strbuf sb = {0};
    for (int f = XS_FMT_TABLE; f <= XS_FMT_CSV; f++)
        xs_report_validate(&sb, (xs_format)f, rows, n);
    fz_no_escape("report", sb.data, sb.len);
    xs_sb_free(&sb);
    xs_vrows_free(rows, n);
    return 0;
}
