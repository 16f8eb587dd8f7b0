/* cmd_compare.c — `xpusim compare`: one scenario on many devices, one row
 * each, cheapest run first. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "job.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim compare [-s SCENARIO] [-d DEV1,DEV2,...] [--set KEY=VALUE]...\n"
            "                      [--format table|json|csv] [-o FILE]\n\n"
            "Predicts SCENARIO on several devices (default: every file in devices/) and\n"
            "prints one row each, cheapest run first: step time, samples/s, MFU, average\n"
            "power, and the whole run's hours, kWh and dollars at each device's dated\n"
            "price. The 'matmul' column says which format the GEMMs really ran in (fp32\n"
            "where a device lacks tensor cores for the requested one).\n"
            "Options as for `xpusim predict` (see its --help for the --set keys).\n");
}

static int by_cost(const void *a, const void *b)
{
    double x = ((const xs_compare_row *)a)->p->run_cost_usd;
    double y = ((const xs_compare_row *)b)->p->run_cost_usd;
    return (x > y) - (x < y);
}

int cli_compare(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfoh", usage, &rc))
        return rc;
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    xs_device *devs = NULL;
    size_t n = 0;
    if (cli_load_devices(o.device, &devs, &n, &err)) /* NULL: every device */
        return cli_fail_err(&err);
    if (n == 0) {
        free(devs);
        return cli_fail(EXIT_USAGE, "compare: -d names no device (give ids separated by commas)");
    }
    if (xs_job_scenario(&j, o.scenario ? o.scenario : DEFAULT_SCENARIO, o.sets, o.nsets, &err)) {
        free(devs);
        return cli_fail_err(&err);
    }
    xs_prediction *preds = calloc(n ? n : 1, sizeof *preds);
    xs_compare_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!preds || !rows)
        rc = cli_fail(EXIT_DATA, "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (xs_predict(&devs[i], &j.s, &j.wl, &preds[i], &err)) {
            rc = cli_fail_err(&err);
            break;
        }
        xs_prediction_free(&preds[i]); /* the totals are all a row needs */
        rows[i].dev = &devs[i];
        rows[i].p = &preds[i];
    }
    if (rc == 0) {
        qsort(rows, n, sizeof *rows, by_cost);
        xs_strbuf sb = {0};
        xs_report_compare(&sb, o.format, &j.s, &j.wl, rows, n);
        rc = cli_deliver(&sb, o.output);
        xs_sb_free(&sb);
    }
    free(rows);
    free(preds);
    free(devs);
    xs_job_free(&j);
    return rc;
}
