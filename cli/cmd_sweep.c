/* cmd_sweep.c — `xpusim sweep`: a scenario over a grid of --vary values x
 * devices, every point predicted as compare predicts it, on all cores,
 * one CSV (or JSON) row a (point, device) in grid order; a point a device
 * cannot run is a row with its reason. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "sweep.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim sweep [-s SCENARIO] [-d DEV1,DEV2,... | -d all | --all]\n"
            "                    --vary KEY=V1,V2,... [--vary ...] [--set KEY=VALUE]...\n"
            "                    [--price DEV=USD_PER_HOUR]... [--band] [--format csv|json]\n"
            "                    [-o FILE]\n\n"
            "Predicts SCENARIO at every point of a grid, the cartesian product of the\n"
            "--vary keys' values, on each device, the way `xpusim compare` predicts one\n"
            "run, and writes one row a (point, device), in grid order (the first --vary\n"
            "key slowest, devices fastest): the varied values, the device, the step time,\n"
            "samples/s, tokens/s, MFU, average power, the run's time, kWh and dollars,\n"
            "the step's peak memory against the device's, fits, and a reason where the\n"
            "run cannot start (does not fit, a precision or kernel the device lacks, a\n"
            "combination of values the scenario refuses). Run figures are left empty\n"
            "for a run that does not fit. The grid runs on all cores (OpenMP;\n"
            "OMP_NUM_THREADS=N for fewer); the rows do not depend on the thread count.\n"
            "A counter on stderr shows progress when the sweep runs over a second.\n\n"
            "  --vary KEY=V1,V2,...     a scenario key (any key --set takes) and its values;\n"
            "                           an integer key also takes ranges A:B or A:B:STEP\n"
            "                           (A to B inclusive, step 1 by default), mixed with\n"
            "                           single values: train.batch=1,2,4:64:4. Repeatable;\n"
            "                           every value is checked up front as --set checks it\n"
            "  -d, --device LIST        device ids or paths, separated by commas; 'all':\n"
            "                           every device in devices/ (the host CPUs too).\n"
            "                           Default: " DEFAULT_DEVICE "\n"
            "      --all                the same as -d all\n"
            "      --band               also the run's cost and samples/s on the device's\n"
            "                           slow and fast corners (3 predictions a row)\n"
            "      --price DEV=USD      your price per device-hour for DEV; repeatable\n"
            "  -f, --format csv|json    default csv; JSON is {\"scenario\", \"varied\",\n"
            "                           \"rows\": [{\"point\": {KEY: VALUE}, \"device\", ...}]}\n"
            "  -o, --output FILE        written whole or not at all; default stdout\n"
            "At most %d rows (points x devices). The exit status is 1 when no row could\n"
            "be predicted at all (the file is written all the same). To rank the rows\n"
            "by a weighted score, use `xpusim compare --vary ... --weights ...`.\n\n"
            "Examples:\n"
            "  xpusim sweep -s bert-base-squad -d a10,l4,t4 --vary train.batch=8:64:8 -o batch.csv\n"
            "  xpusim sweep -s gpt2-medium-finetune -d all --vary train.precision=fp32,amp_fp16 "
            "--vary train.batch=4,8,16 -o grid.csv\n"
            "  xpusim sweep -s bert-large-squad --vary train.batch=1:48 --vary "
            "train.attention=unfused,flash --format json -o sweep.json\n",
            XS_SWEEP_MAX_ROWS);
}

/* The stderr counter: on a terminal one line redrawn in place, elsewhere a
 * line every 10 s; nothing for a sweep done within its first second. */
typedef struct {
    struct timespec start;
    double last;   /* seconds since start of the last line, < 0: none yet */
    size_t before; /* points of the chunks done */
    size_t total;
    int tty;
} progress;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void show(size_t done, void *ctx)
{
    progress *pg = ctx;
    double t = since(&pg->start);
    if (t < 1 || (pg->last >= 0 && t - pg->last < (pg->tty ? 0.2 : 10)))
        return;
    pg->last = t;
    size_t n = pg->before + done;
    fprintf(stderr, "%ssweep: %zu/%zu points (%.0f%%), %.0f s%s", pg->tty ? "\r" : "", n,
            pg->total, 100.0 * (double)n / (double)pg->total, t, pg->tty ? "" : "\n");
    fflush(stderr);
}

static int sweep_run(const cli_options *o, const xs_sweep_grid *g, const xs_device *devs,
                     size_t ndev, const char *scenario, xs_strbuf *sb, size_t *predicted)
{
    xs_error err;
    progress pg = {.last = -1, .total = g->points, .tty = isatty(STDERR_FILENO)};
    clock_gettime(CLOCK_MONOTONIC, &pg.start);
    xs_sweep_spec sp = {scenario, o->sets, o->nsets, g, devs, ndev, o->band, show, &pg};
    xs_grid_view v = {g, devs, o->band, 0};
    xs_format fmt = o->format;
    /* a chunk at a time: the rows of a 10-million-point grid need not all
     * be held, only their text */
    size_t chunk = 4096 / ndev + 1;
    xs_sweep_row *rows = calloc(chunk * ndev, sizeof *rows);
    if (!rows)
        return cli_fail(EXIT_DATA, "out of memory");
    xs_report_grid_head(sb, fmt, &v, scenario);
    int rc = 0;
    for (size_t first = 0; first < g->points && rc == 0; first += chunk) {
        size_t count = g->points - first < chunk ? g->points - first : chunk;
        pg.before = first;
        if (xs_sweep_eval(&sp, first, count, rows, &err)) {
            rc = cli_fail_err(&err);
            break;
        }
        for (size_t i = 0; i < count * ndev; i++)
            *predicted += (size_t)rows[i].predicted;
        xs_report_grid_rows(sb, fmt, &v, rows, NULL, NULL, count * ndev, first * ndev);
        xs_sweep_rows_free(rows, count * ndev);
    }
    xs_report_grid_tail(sb, fmt);
    free(rows);
    if (pg.last >= 0)
        fprintf(stderr, "%ssweep: %zu points x %zu devices in %.1f s\n",
                pg.tty ? "\r\033[K" : "", /* the counter's line, cleared */
                g->points, ndev, since(&pg.start));
    return rc;
}

int cli_sweep(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfohPAVN", usage, &rc))
        return rc;
    if (!o.format_given)
        o.format = XS_FMT_CSV;
    if (o.format == XS_FMT_TABLE)
        return cli_fail(EXIT_USAGE, "sweep: --format must be csv or json (a sweep is data; "
                                    "`xpusim compare --vary` prints a ranked table)");
    int all = o.all || (o.device && strcmp(o.device, "all") == 0);
    if (o.all && o.device)
        return cli_fail(EXIT_USAGE, "sweep: -d and --all are alternatives (--all: every "
                                    "device in devices/)");
    xs_error err;
    xs_sweep_grid g;
    xs_sweep_init(&g);
    for (int i = 0; i < o.nvaries; i++)
        if (xs_sweep_add(&g, o.varies[i], &err)) {
            xs_sweep_free(&g);
            return cli_fail_err(&err);
        }
    xs_device *devs = NULL;
    size_t n = 0;
    const char *list = all ? NULL : o.device ? o.device : DEFAULT_DEVICE;
    if (cli_load_devices(list, all, &devs, &n, &err)) {
        xs_sweep_free(&g);
        return cli_fail_err(&err);
    }
    const char *scenario = o.scenario ? o.scenario : DEFAULT_SCENARIO;
    xs_job j;
    xs_job_init(&j);
    if (n == 0)
        rc = cli_fail(EXIT_USAGE, "sweep: no device to sweep (devices/ holds none)");
    else if ((rc = cli_apply_prices(&o, devs, n)))
        ;
    else if (xs_sweep_check(&g, n, o.sets, o.nsets, &err) ||
             /* the scenario as given must load: its problems are one line,
              * not one reason a row */
             xs_job_scenario(&j, scenario, o.sets, o.nsets, &err))
        rc = cli_fail_err(&err);
    xs_job_free(&j);
    size_t predicted = 0;
    if (rc == 0) {
        xs_strbuf sb = {0};
        rc = sweep_run(&o, &g, devs, n, scenario, &sb, &predicted);
        if (rc == 0)
            rc = cli_deliver(&sb, o.output);
        xs_sb_free(&sb);
        if (rc == 0 && predicted == 0)
            rc = cli_fail(EXIT_DATA, "sweep: no point of the grid could be predicted on any "
                                     "device (the reasons are in the report)");
    }
    free(devs);
    xs_sweep_free(&g);
    return rc;
}
