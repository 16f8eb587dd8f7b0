/* cmd_compare.c — `xpusim compare`: one scenario on many devices, one row
 * each, cheapest run first; a device that cannot run it is listed last with
 * the reason instead of stopping the others. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "job.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim compare [-s SCENARIO] [-d DEV1,DEV2,... | --all]\n"
            "                      [--set KEY=VALUE]... [--price DEV=USD_PER_HOUR]...\n"
            "                      [--format table|json|csv] [-o FILE]\n\n"
            "Predicts SCENARIO on several devices and prints one row each, cheapest run\n"
            "first: step time, samples/s, MFU, average power, and the whole run's hours,\n"
            "kWh and dollars at each device's dated price, with the cost band (the run on\n"
            "the device's slow and fast corners) and where the price comes from. The\n"
            "'matmul' column says which format the GEMMs really ran in (fp32 where a device\n"
            "lacks tensor cores for the requested one). A device that cannot run the\n"
            "scenario (a CPU has no fused-attention kernel) is listed after the others\n"
            "with the reason; the exit status is 1 only when no device can run it.\n"
            "The 'memory' column is the step's peak against the device's memory (GB of\n"
            "2^30 bytes, as `xpusim predict` reports it); a run that does not fit is ranked\n"
            "after those that do, marked, and priced at nothing: it cannot start (`xpusim\n"
            "fit -d DEV` finds the micro-batch that does).\n\n"
            "  -d, --device LIST        device ids or paths, separated by commas (blanks\n"
            "                           around them ignored; a device named twice is one\n"
            "                           row). Default: every accelerator in devices/\n"
            "      --all                every device in devices/, the host CPUs too\n"
            "      --price DEV=USD      your price per device-hour for DEV instead of the\n"
            "                           list price in its file; repeatable\n"
            "Other options as for `xpusim predict` (see its --help for the --set keys).\n\n"
            "Examples:\n"
            "  xpusim compare -s bert-base-squad\n"
            "  xpusim compare -s gpt2-medium-finetune -d \"a10, l4, t4\" --price l4=0.70\n"
            "  xpusim compare --all --set train.batch=16 --format csv -o compare.csv\n");
}

/* Runs that fit by cost, then those that do not (by how far over they
 * are), then the unavailable, in the order given. */
static int rank(const xs_compare_row *r)
{
    return !r->p ? 2 : r->p->mem.fits ? 0 : 1;
}

static int by_cost(const void *a, const void *b)
{
    const xs_compare_row *x = a, *y = b;
    int rx = rank(x), ry = rank(y);
    if (rx != ry || rx == 2)
        return rx - ry;
    double cx = rx == 0 ? x->p->run_cost_usd : x->p->mem.total / x->p->mem.capacity;
    double cy = rx == 0 ? y->p->run_cost_usd : y->p->mem.total / y->p->mem.capacity;
    return (cx > cy) - (cx < cy);
}

int cli_compare(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfohPA", usage, &rc))
        return rc;
    if (o.all && o.device)
        return cli_fail(EXIT_USAGE, "compare: -d and --all are alternatives (--all: every "
                                    "device in devices/)");
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    xs_device *devs = NULL;
    size_t n = 0;
    if (cli_load_devices(o.device, o.all, &devs, &n, &err)) /* NULL: every accelerator */
        return cli_fail_err(&err);
    if (n == 0) {
        free(devs);
        return cli_fail(EXIT_USAGE, "compare: no device to compare (devices/ holds none)");
    }
    if ((rc = cli_apply_prices(&o, devs, n))) {
        free(devs);
        return rc;
    }
    if (xs_job_scenario(&j, o.scenario ? o.scenario : DEFAULT_SCENARIO, o.sets, o.nsets, &err)) {
        free(devs);
        return cli_fail_err(&err);
    }
    xs_prediction *preds = calloc(n, sizeof *preds);
    xs_compare_row *rows = calloc(n, sizeof *rows);
    char (*why)[sizeof err.msg] = calloc(n, sizeof *why);
    size_t ran = 0;
    if (!preds || !rows || !why)
        rc = cli_fail(EXIT_DATA, "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {
        rows[i].dev = &devs[i];
        if (xs_predict(&devs[i], &j.s, &j.wl, &preds[i], &err) ||
            xs_predict_band(&devs[i], &j.s, &j.wl, &preds[i], &err)) {
            xs_prediction_free(&preds[i]);
            snprintf(why[i], sizeof why[i], "%s", err.msg);
            rows[i].unavailable = why[i];
            continue;
        }
        xs_prediction_free(&preds[i]); /* the totals are all a row needs */
        rows[i].p = &preds[i];
        ran++;
    }
    if (rc == 0) {
        qsort(rows, n, sizeof *rows, by_cost);
        xs_strbuf sb = {0};
        xs_report_compare(&sb, o.format, &j.s, &j.wl, rows, n);
        rc = cli_deliver(&sb, o.output);
        xs_sb_free(&sb);
        if (rc == 0 && ran == 0)
            rc = cli_fail(EXIT_DATA, "compare: no device could run this scenario (reasons "
                                     "listed in the report)");
    }
    free(why);
    free(rows);
    free(preds);
    free(devs);
    xs_job_free(&j);
    return rc;
}
