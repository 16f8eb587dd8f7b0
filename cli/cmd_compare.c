/* cmd_compare.c — `xpusim compare`: one scenario on many devices, one row
 * each, cheapest run first; a device that cannot run it is listed last with
 * the reason instead of stopping the others. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "rank.h"
#include "sweep.h"

/* compare ranks every row in memory and prints them: a bigger grid is for
 * `xpusim sweep`, which streams */
#define COMPARE_MAX_ROWS 100000

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
            "To decide: any of the four options below ranks the runs by a score instead\n"
            "of by cost, adds the columns 'score' and 'P' (and \"score\", \"pareto\" in\n"
            "JSON and CSV, whose rows are then those of `xpusim sweep` plus these two and\n"
            "the band) and marks the Pareto-optimal runs on (run time, run $): those no\n"
            "other run beats on one without losing on the other (runs equal on both are\n"
            "all marked). Runs that do not fit or cannot run are listed after, unranked.\n"
            "      --weights W          time=W,energy=W,cost=W,util=W: how much the run's\n"
            "                           time, kWh, dollars and MFU count; a metric not named\n"
            "                           counts 0. Default time=1,cost=1: compare answers\n"
            "                           which device finishes soonest for the least money;\n"
            "                           energy is already in a rented device's hourly price\n"
            "                           and MFU is a means, not an end, so they count only\n"
            "                           when asked. Each metric is normalised against the\n"
            "                           best run shown, best/value for time, kWh and $,\n"
            "                           value/MFU_best for MFU (1: the best, 0.5: twice as\n"
            "                           slow, dear or idle); the score is their weighted\n"
            "                           mean, 1 for a run best on every weighted metric\n"
            "      --budget-usd X       leave out the runs that cost more than X dollars\n"
            "      --deadline-h H       leave out the runs that take more than H hours\n"
            "                           (the table says how many were left out; when none\n"
            "                           is left, one error line says what the cheapest and\n"
            "                           the fastest would take, exit 1)\n"
            "      --vary KEY=V1,V2,... compare over a grid of scenario variants as `xpusim\n"
            "                           sweep` builds it (ranges A:B[:STEP]; repeatable):\n"
            "                           one row a (point, device), at most %d\n\n"
            "Examples:\n"
            "  xpusim compare -s bert-base-squad\n"
            "  xpusim compare -s bert-base-squad --vary train.batch=16,32,64 --weights "
            "time=1,cost=2\n"
            "  xpusim compare -s mistral-7b-qlora --budget-usd 10 --deadline-h 5 --format json\n"
            "  xpusim compare -s gpt2-medium-finetune -d \"a10, l4, t4\" --price l4=0.70\n"
            "  xpusim compare --all --set train.batch=16 --format csv -o compare.csv\n",
            COMPARE_MAX_ROWS);
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

/* The one line when the filters leave nothing: what the nearest runs take. */
static int nothing_within(const cli_options *o, const xs_rank_outcome *d)
{
    char msg[512], limits[128] = "";
    if (o->budget_usd > 0)
        snprintf(limits, sizeof limits, "--budget-usd %g", o->budget_usd);
    if (o->deadline_h > 0)
        snprintf(limits + strlen(limits), sizeof limits - strlen(limits), "%s--deadline-h %g",
                 limits[0] ? " and " : "", o->deadline_h);
    snprintf(msg, sizeof msg,
             "compare: no run is within %s: the cheapest run costs $%.2f, the fastest takes "
             "%.2f h",
             limits, d->cheapest_usd, d->fastest_s / 3600);
    return cli_fail(EXIT_DATA, msg);
}

/* compare ranking: --weights, --budget-usd, --deadline-h, --vary. */
static int decide(const cli_options *o, const xs_job *j, const xs_device *devs, size_t n)
{
    xs_error err;
    xs_weights w = XS_WEIGHTS_DEFAULT;
    if (o->weights && xs_weights_parse(o->weights, &w, &err))
        return cli_fail_err(&err);
    xs_sweep_grid g;
    xs_sweep_init(&g);
    int rc = 0;
    for (int i = 0; i < o->nvaries && rc == 0; i++)
        if (xs_sweep_add(&g, o->varies[i], &err))
            rc = cli_fail_err(&err);
    if (rc == 0 && xs_sweep_check(&g, n, o->sets, o->nsets, &err))
        rc = cli_fail_err(&err);
    if (rc == 0 && g.points * n > COMPARE_MAX_ROWS) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "compare: %zu points x %zu devices is more than the %d rows compare ranks; "
                 "`xpusim sweep` writes bigger grids",
                 g.points, n, COMPARE_MAX_ROWS);
        rc = cli_fail(EXIT_USAGE, msg);
    }
    if (rc) {
        xs_sweep_free(&g);
        return rc;
    }
    size_t nrows = g.points * n;
    xs_sweep_row *rows = calloc(nrows, sizeof *rows);
    xs_rank_item *ranks = calloc(nrows, sizeof *ranks);
    size_t *order = calloc(nrows, sizeof *order);
    xs_sweep_spec sp = {o->scenario ? o->scenario : DEFAULT_SCENARIO, o->sets, o->nsets, &g,
                        devs, n, 1, NULL, NULL};
    if (!rows || !ranks || !order)
        rc = cli_fail(EXIT_DATA, "out of memory");
    else if (xs_sweep_eval(&sp, 0, g.points, rows, &err))
        rc = cli_fail_err(&err);
    size_t predicted = 0;
    unsigned char *ran = rc == 0 ? malloc(nrows ? nrows : 1) : NULL;
    if (rc == 0 && !ran)
        rc = cli_fail(EXIT_DATA, "out of memory");
    for (size_t i = 0; rc == 0 && i < nrows; i++) {
        const xs_sweep_row *r = &rows[i];
        ranks[i] = (xs_rank_item){r->run_time_s, r->run_energy_kwh, r->run_cost_usd, r->mfu,
                                  r->predicted && r->fits, 0, 0};
        ran[i] = (unsigned char)r->predicted;
        predicted += (size_t)r->predicted;
    }
    xs_rank_outcome out = {0};
    if (rc == 0 && xs_rank_decide(ranks, nrows, ran, &w, o->budget_usd, o->deadline_h, order,
                                  &out, &err))
        rc = cli_fail_err(&err);
    else if (rc == 0 && out.none_within)
        rc = nothing_within(o, &out);
    free(ran);
    if (rc == 0) {
        xs_decision d = {&j->s, &j->wl, {&g, devs, 1, 1}, rows, ranks, order, out.shown, w,
                         o->budget_usd, o->deadline_h, out.dropped};
        xs_strbuf sb = {0};
        xs_report_decision(&sb, o->format, &d);
        rc = cli_deliver(&sb, o->output);
        xs_sb_free(&sb);
        if (rc == 0 && predicted == 0)
            rc = cli_fail(EXIT_DATA, "compare: no device could run this scenario (reasons "
                                     "listed in the report)");
    }
    if (rows)
        xs_sweep_rows_free(rows, nrows);
    free(order);
    free(ranks);
    free(rows);
    xs_sweep_free(&g);
    return rc;
}

int cli_compare(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfohPAVWBH", usage, &rc))
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
    if (xs_job_scenario_compact(&j, o.scenario ? o.scenario : DEFAULT_SCENARIO, o.sets, o.nsets,
                                &err)) {
        free(devs);
        return cli_fail_err(&err);
    }
    if (o.nvaries || o.weights || o.budget_usd > 0 || o.deadline_h > 0) {
        rc = decide(&o, &j, devs, n);
        free(devs);
        xs_job_free(&j);
        return rc;
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
