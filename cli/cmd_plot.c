/* cmd_plot.c — `xpusim plot KIND ... -o DIR`: writes the data of a figure
 * as CSV into DIR, then has gnuplot draw it (plots/KIND.gp) as PNG and SVG
 * beside it, so that the figure can be drawn again from the CSV alone.
 * gnuplot is a dependency of the figures only: without it this command
 * fails with one line, and every other command works. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "job.h"
#include "paths.h"
#include "rank.h"
#include "report_steps.h"

#define KINDS "time-by-kind|cost-time|roofline|waterfall"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim plot KIND [-s SCENARIO] [-d DEVICE[,DEVICE...]] [--set KEY=VALUE]...\n"
            "                   [--price DEV=USD_PER_HOUR]... [--order LIST] [--batch N]\n"
            "                   -o DIR\n\n"
            "Draws one figure as DIR/KIND.png and DIR/KIND.svg with gnuplot (plots/KIND.gp)\n"
            "and writes the data it draws beside them as DIR/KIND.csv (so you can draw it\n"
            "again: gnuplot -e \"in='DIR/KIND.csv'; out='NAME'\" plots/KIND.gp). DIR is made\n"
            "if missing; the files are replaced whole. KIND is one of:\n"
            "  time-by-kind  the time of one optimizer step on each device (-d LIST, default\n"
            "                every accelerator), stacked by op kind (gemm, bgemm, attention,\n"
            "                eltwise, norm, softmax, optimizer, ...) and the host wait;\n"
            "                columns: device, step_time_ms, fits, then ms per kind present\n"
            "  cost-time     the whole run's cost against its time on each device (-d LIST,\n"
            "                default every accelerator), log-log, the Pareto-optimal devices\n"
            "                (no other as fast and as cheap, `xpusim compare --weights`)\n"
            "                joined; columns: device, run_time_h, cost_usd, energy_kwh, mfu,\n"
            "                pareto, reason (a device that cannot run or does not fit: no\n"
            "                numbers, the reason), fastest first\n"
            "  roofline      one device's roofline (-d DEVICE): its datasheet peak FLOP/s for\n"
            "                the format the matmuls run in and for the fp32 vector units,\n"
            "                and its DRAM bandwidth, with the step's ops placed on it\n"
            "                (x: FLOPs per DRAM byte, y: FLOP/s achieved; the area of a\n"
            "                point: its share of the step time); an op repeated over the\n"
            "                layers is one point. Columns: op, phase, kind, kind_id,\n"
            "                flops, bytes, time_s, intensity, achieved_tflops, time_share;\n"
            "                the ceilings in DIR/roofline-device.csv (device,\n"
            "                matmul_dtype, matmul_peak_tflops, vector_peak_tflops, dram_gbs,\n"
            "                shown_time_share). Ops without FLOPs or bytes (copies, the\n"
            "                embedding gather) cannot be placed: the figure says what share\n"
            "                of the step they take\n"
            "  waterfall     `xpusim steps` as bars (-d DEVICE, --order, --batch as there):\n"
            "                samples/s per step with the speed-up over the start, the run\n"
            "                cost as points; skipped steps are marked. The CSV is that of\n"
            "                `xpusim steps --format csv`\n\n"
            "  -s, --scenario SCENARIO  scenario id or path (default %s)\n"
            "  -d, --device LIST        device ids or paths (roofline, waterfall: one;\n"
            "                           default %s there)\n"
            "      --set KEY=VALUE      override a scenario key; repeatable\n"
            "      --price DEV=USD      your price per device-hour for DEV; repeatable\n"
            "  -o, --output DIR         the folder of the figures and their data (required)\n"
            "  -h, --help               this text\n"
            "Needs gnuplot (5.4 or later, with the pngcairo and svg terminals) on PATH;\n"
            "the scripts are found in plots/ of the data folder (XPUSIM_DATA).\n\n"
            "Examples:\n"
            "  xpusim plot time-by-kind -s bert-base-squad -d a10,l4,t4,a100-sxm4-80gb -o figs\n"
            "  xpusim plot cost-time -s gpt2-medium-finetune -o figs\n"
            "  xpusim plot roofline -d h100-sxm5-80gb -s bert-large-squad -o figs\n"
            "  xpusim plot waterfall -d a100-sxm4-80gb -s bert-large-squad -o figs\n",
            DEFAULT_SCENARIO, DEFAULT_DEVICE);
}

typedef struct {
    const char *kind, *device, *scenario, *dir, *order;
    const char *sets[MAX_SETS];
    int nsets;
    const char *prices[MAX_SETS];
    int nprices;
    int64_t batch;
} plot_options;

/* gnuplot on PATH, into path; 0 when found */
static int find_gnuplot(char *path, size_t size)
{
    const char *env = getenv("PATH");
    if (!env)
        return -1;
    for (const char *p = env;;) {
        size_t len = strcspn(p, ":");
        snprintf(path, size, "%.*s/gnuplot", (int)len, len ? p : ".");
        if (access(path, X_OK) == 0)
            return 0;
        if (p[len] == '\0')
            return -1;
        p += len + 1;
    }
}

/* A path goes into gnuplot's -e text between single quotes. */
static int quotable(const char *what, const char *s)
{
    if (!strpbrk(s, "'\n\\"))
        return 0;
    char msg[512];
    snprintf(msg, sizeof msg, "plot: %s '%s' holds a quote, backslash or line break, which "
             "gnuplot's -e cannot carry; choose another", what, s);
    return cli_fail(EXIT_USAGE, msg);
}

static int write_file(const char *dir, const char *name, const xs_strbuf *sb)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (sb->failed)
        return cli_fail(EXIT_DATA, "out of memory while formatting the plot's data");
    xs_error err;
    if (xs_write_atomic(path, sb->data ? sb->data : "", sb->len, &err))
        return cli_fail_err(&err);
    return 0;
}

/* Run gnuplot on plots/<kind>.gp with in= the CSV and out= a temporary
 * stem, then rename the PNG and SVG into place: a figure is replaced
 * whole or not at all, as the CSVs are. */
static int draw(const char *gnuplot, const plot_options *o, const char *title)
{
    char root[4096], script[4200], vars[12800], tmp[4200], msg[9000];
    xs_error err;
    if (xs_data_root(root, sizeof root, &err))
        return cli_fail_err(&err);
    snprintf(script, sizeof script, "%s/plots/%s.gp", root, o->kind);
    if (access(script, R_OK) != 0) {
        snprintf(msg, sizeof msg, "plot: cannot read %s (%s)", script, strerror(errno));
        return cli_fail(EXIT_DATA, msg);
    }
    snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", o->dir, o->kind, (long)getpid());
    snprintf(vars, sizeof vars, "in='%s/%s.csv'; out='%s'; title='%s'", o->dir, o->kind, tmp,
             title);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return cli_fail(EXIT_DATA, "plot: cannot start gnuplot (fork failed)");
    if (pid == 0) {
        execl(gnuplot, "gnuplot", "-e", vars, script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int rc = 0;
    const char *ext[] = {"png", "svg"};
    for (int i = 0; i < 2; i++) {
        char from[4300], to[4300];
        snprintf(from, sizeof from, "%s.%s", tmp, ext[i]);
        snprintf(to, sizeof to, "%s/%s.%s", o->dir, o->kind, ext[i]);
        struct stat st;
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(from, &st) == 0 &&
                 st.st_size > 0;
        if (!ok || rename(from, to) != 0) {
            unlink(from);
            if (rc == 0) {
                snprintf(msg, sizeof msg, "plot: gnuplot %s did not draw %s (%s)", script, to,
                         !WIFEXITED(status)           ? "killed"
                         : WEXITSTATUS(status) != 0 ? "it failed: see its message above"
                                                      : "no file, or an empty one");
                rc = cli_fail(EXIT_DATA, msg);
            }
        }
    }
    return rc;
}

/* --- time-by-kind and cost-time: one prediction a device ------------------ */

typedef struct {
    const xs_device *dev;
    xs_job j;
    int ok;           /* predicted */
    char reason[1024];
} dev_run;

static int predict_all(const plot_options *o, xs_device **devs, size_t *n, dev_run **runs)
{
    xs_error err;
    if (cli_load_devices(o->device, 0, devs, n, &err))
        return cli_fail_err(&err);
    cli_options po = {0};
    memcpy(po.prices, o->prices, sizeof po.prices);
    po.nprices = o->nprices;
    int rc = cli_apply_prices(&po, *devs, *n);
    if (rc)
        return rc;
    if (*n == 0)
        return cli_fail(EXIT_USAGE, "plot: no device (devices/ holds none)");
    *runs = calloc(*n, sizeof **runs);
    if (!*runs)
        return cli_fail(EXIT_DATA, "out of memory");
    size_t ok = 0;
    for (size_t i = 0; i < *n; i++) {
        dev_run *r = &(*runs)[i];
        r->dev = &(*devs)[i];
        xs_job_init(&r->j);
        r->j.dev = *r->dev;
        /* the scenario itself must load: its problems are one line */
        if (xs_job_scenario(&r->j, o->scenario, o->sets, o->nsets, &err))
            return cli_fail_err(&err);
        if (xs_job_predict(&r->j, 0, &err)) {
            snprintf(r->reason, sizeof r->reason, "%s", err.msg);
            fprintf(stderr, "xpusim: plot: %s left out: %s\n", r->dev->id, err.msg);
        } else {
            r->ok = 1;
            ok++;
        }
    }
    if (ok == 0)
        return cli_fail(EXIT_DATA, "plot: the scenario cannot run on any of the devices (the "
                                   "reasons are above)");
    return 0;
}

static void free_runs(dev_run *runs, size_t n)
{
    for (size_t i = 0; runs && i < n; i++)
        xs_job_free(&runs[i].j);
    free(runs);
}

static const dev_run *SORT_RUNS; /* qsort has no context argument */

static int by_step_time(const void *a, const void *b)
{
    const dev_run *x = &SORT_RUNS[*(const size_t *)a], *y = &SORT_RUNS[*(const size_t *)b];
    double tx = x->j.p.step_time_s, ty = y->j.p.step_time_s;
    return (tx > ty) - (tx < ty);
}

static int time_by_kind(const plot_options *o, xs_strbuf *sb, char *title, size_t tn)
{
    xs_device *devs = NULL;
    dev_run *runs = NULL;
    size_t n = 0;
    int rc = predict_all(o, &devs, &n, &runs);
    if (rc == 0) {
        double ms[XS_OP_KIND_COUNT * 64];
        double *t = n <= 64 ? ms : calloc(n * XS_OP_KIND_COUNT, sizeof *t);
        size_t *order = calloc(n, sizeof *order);
        int present[XS_OP_KIND_COUNT] = {0};
        if (!t || !order) {
            rc = cli_fail(EXIT_DATA, "out of memory");
        } else {
            memset(t, 0, n * XS_OP_KIND_COUNT * sizeof *t);
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                if (!runs[i].ok)
                    continue;
                order[k++] = i;
                const xs_workload *wl = &runs[i].j.wl;
                for (size_t op = 0; op < wl->n; op++) {
                    double v = runs[i].j.p.est[op].time_s * (double)wl->ops[op].count * 1e3;
                    t[i * XS_OP_KIND_COUNT + (size_t)wl->ops[op].kind] += v;
                    present[wl->ops[op].kind] |= v > 0;
                }
            }
            SORT_RUNS = runs;
            qsort(order, k, sizeof *order, by_step_time);
            xs_sb_printf(sb, "device,step_time_ms,fits");
            for (int c = 0; c < XS_OP_KIND_COUNT; c++)
                if (present[c])
                    xs_sb_printf(sb, ",%s", xs_op_kind_name(c));
            xs_sb_printf(sb, ",host_wait\n");
            for (size_t r = 0; r < k; r++) {
                const dev_run *d = &runs[order[r]];
                xs_sb_csv(sb, d->dev->id);
                xs_sb_printf(sb, ",%.6g,%d", d->j.p.step_time_s * 1e3, d->j.p.mem.fits);
                for (int c = 0; c < XS_OP_KIND_COUNT; c++)
                    if (present[c])
                        xs_sb_printf(sb, ",%.6g", t[order[r] * XS_OP_KIND_COUNT + (size_t)c]);
                xs_sb_printf(sb, ",%.6g\n", d->j.p.host_wait_s * 1e3);
            }
            snprintf(title, tn, "%s: time of one optimizer step by op kind", runs[0].j.s.id);
        }
        if (t != ms)
            free(t);
        free(order);
    }
    free_runs(runs, n);
    free(devs);
    return rc;
}

static int by_time_key(const void *a, const void *b)
{
    const double *x = a, *y = b; /* {group, run time, index} */
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static int cost_time(const plot_options *o, xs_strbuf *sb, char *title, size_t tn)
{
    xs_device *devs = NULL;
    dev_run *runs = NULL;
    size_t n = 0;
    int rc = predict_all(o, &devs, &n, &runs);
    xs_rank_item *items = rc ? NULL : calloc(n, sizeof *items);
    double(*keys)[3] = rc ? NULL : calloc(n, sizeof *keys);
    if (rc == 0 && (!items || !keys))
        rc = cli_fail(EXIT_DATA, "out of memory");
    xs_error err;
    size_t fitting = 0;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            const xs_prediction *p = &runs[i].j.p;
            int cand = runs[i].ok && p->mem.fits;
            items[i] = (xs_rank_item){cand ? p->run_time_s : 0, cand ? p->run_energy_kwh : 0,
                                      cand ? p->run_cost_usd : 0, cand ? p->mfu : 0, cand, 0,
                                      0};
            if (runs[i].ok && !cand)
                snprintf(runs[i].reason, sizeof runs[i].reason,
                         "does not fit: the step needs %.2f GB, the device has %.2f GB",
                         p->mem.total / XS_GIB, p->mem.capacity / XS_GIB);
            fitting += (size_t)cand;
        }
        if (fitting == 0)
            rc = cli_fail(EXIT_DATA, "plot: the step fits none of the devices (`xpusim fit` "
                                     "finds a micro-batch that does)");
        else if (xs_rank_pareto(items, n, &err))
            rc = cli_fail_err(&err);
    }
    if (rc == 0) {
        /* by run time, the devices without numbers last: the figure
         * numbers the points in this order */
        for (size_t i = 0; i < n; i++) {
            keys[i][0] = items[i].candidate ? 0 : 1;
            keys[i][1] = items[i].candidate ? items[i].run_time_s : 0;
            keys[i][2] = (double)i;
        }
        qsort(keys, n, sizeof *keys, by_time_key);
        xs_sb_printf(sb, "device,run_time_h,cost_usd,energy_kwh,mfu,pareto,reason\n");
        for (size_t r = 0; r < n; r++) {
            size_t i = (size_t)keys[r][2];
            xs_sb_csv(sb, runs[i].dev->id);
            if (items[i].candidate)
                xs_sb_printf(sb, ",%.6g,%.6g,%.6g,%.6g,%d,\n", items[i].run_time_s / 3600,
                             items[i].cost_usd, items[i].energy_kwh, items[i].mfu,
                             items[i].pareto);
            else {
                xs_sb_printf(sb, ",,,,,,");
                xs_sb_csv(sb, runs[i].reason);
                xs_sb_printf(sb, "\n");
            }
        }
        snprintf(title, tn, "%s: cost and time of the whole run by device", runs[0].j.s.id);
    }
    free(keys);
    free(items);
    free_runs(runs, n);
    free(devs);
    return rc;
}

/* --- roofline ------------------------------------------------------------ */

typedef struct {
    const xs_op *op; /* the first of its (name, phase) */
    double flops, bytes, time_s;
} agg;

static int roofline(const plot_options *o, xs_strbuf *sb, xs_strbuf *dsb, char *title,
                    size_t tn)
{
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    int rc = 0;
    const char *dev = o->device ? o->device : DEFAULT_DEVICE;
    if (strchr(dev, ','))
        return cli_fail(EXIT_USAGE, "plot roofline: -d names one device");
    cli_options po = {0};
    memcpy(po.prices, o->prices, sizeof po.prices);
    po.nprices = o->nprices;
    if (xs_dev_open(dev, &j.dev, &err) ||
        xs_job_scenario(&j, o->scenario, o->sets, o->nsets, &err) ||
        (rc = cli_apply_prices(&po, &j.dev, 1)) || xs_job_predict(&j, 0, &err)) {
        xs_job_free(&j);
        return rc ? rc : cli_fail_err(&err);
    }
    const xs_workload *wl = &j.wl;
    agg *a = calloc(wl->n ? wl->n : 1, sizeof *a);
    if (!a) {
        xs_job_free(&j);
        return cli_fail(EXIT_DATA, "out of memory");
    }
    size_t na = 0;
    double total = 0, shown = 0;
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        double c = (double)op->count, t = j.p.est[i].time_s * c;
        total += t;
        size_t k = 0;
        while (k < na && !(a[k].op->phase == op->phase && strcmp(a[k].op->name, op->name) == 0))
            k++;
        if (k == na)
            a[na++].op = op;
        a[k].flops += op->flops * c;
        a[k].bytes += op->bytes * c;
        a[k].time_s += t;
    }
    xs_sb_printf(sb, "op,phase,kind,kind_id,flops,bytes,time_s,intensity,achieved_tflops,"
                     "time_share\n");
    for (size_t k = 0; k < na; k++) {
        if (!(a[k].flops > 0 && a[k].bytes > 0 && a[k].time_s > 0))
            continue;
        shown += a[k].time_s;
        xs_sb_csv(sb, a[k].op->name);
        xs_sb_printf(sb, ",%s,%s,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                     xs_phase_name(a[k].op->phase), xs_op_kind_name(a[k].op->kind),
                     a[k].op->kind, a[k].flops, a[k].bytes, a[k].time_s,
                     a[k].flops / a[k].bytes, a[k].flops / a[k].time_s / 1e12,
                     a[k].time_s / j.p.step_time_s);
    }
    xs_sb_printf(dsb, "device,matmul_dtype,matmul_peak_tflops,vector_peak_tflops,dram_gbs,"
                      "shown_time_share\n");
    xs_sb_csv(dsb, j.dev.id);
    xs_sb_printf(dsb, ",%s,%.6g,%.6g,%.6g,%.6g\n", xs_dtype_name(j.p.matmul_engine),
                 j.p.peak_flops / 1e12, j.dev.peak_tflops[XS_FP32], j.dev.mem_bw_gbs,
                 total > 0 ? shown / j.p.step_time_s : 0);
    snprintf(title, tn, "%s on %s: roofline of one optimizer step", j.s.id, j.dev.id);
    free(a);
    xs_job_free(&j);
    return 0;
}

static int waterfall(const plot_options *o, xs_strbuf *sb, char *title, size_t tn)
{
    if (o->device && strchr(o->device, ','))
        return cli_fail(EXIT_USAGE, "plot waterfall: -d names one device");
    xs_steps *st = malloc(sizeof *st);
    if (!st)
        return cli_fail(EXIT_DATA, "out of memory");
    int rc = cli_steps_eval(o->device, o->scenario, o->sets, o->nsets, o->order, o->batch, st);
    if (rc == 0) {
        xs_report_steps(sb, XS_FMT_CSV, st);
        snprintf(title, tn, "%s on %s: optimisations one after another", st->scenario,
                 st->device);
    }
    free(st);
    return rc;
}

static int make_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        char msg[4200];
        snprintf(msg, sizeof msg, "plot: -o %s is not a folder (give the folder the figures "
                 "go to)", dir);
        return cli_fail(EXIT_USAGE, msg);
    }
    if (mkdir(dir, 0777) == 0)
        return 0;
    char msg[4200];
    snprintf(msg, sizeof msg, "plot: cannot make the folder %s (%s)", dir, strerror(errno));
    return cli_fail(EXIT_DATA, msg);
}

int cli_plot(int argc, char **argv)
{
    static const struct option longs[] = {
        {"device", required_argument, 0, 'd'}, {"scenario", required_argument, 0, 's'},
        {"set", required_argument, 0, 'S'},    {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {"order", required_argument, 0, 'O'},
        {"batch", required_argument, 0, 'b'},  {"price", required_argument, 0, 'P'},
        {0, 0, 0, 0}};
    plot_options o = {0};
    int c;
    optind = 1;
    opterr = 0;
    /* "+": KIND first, the options after it */
    while ((c = getopt_long(argc, argv, "+:d:s:o:h", longs, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        return cli_fail(EXIT_USAGE, "plot: give KIND first (" KINDS "; see --help)");
    }
    if (optind >= argc)
        return cli_fail(EXIT_USAGE, "plot: give KIND (" KINDS ") and -o DIR; see --help");
    o.kind = argv[optind];
    if (xs_choice_index(KINDS, o.kind) < 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "plot: KIND must be one of " KINDS ", got '%.64s'", o.kind);
        return cli_fail(EXIT_USAGE, msg);
    }
    argc -= optind;
    argv += optind;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":d:s:o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'd': o.device = optarg; break;
        case 's': o.scenario = optarg; break;
        case 'o': o.dir = optarg; break;
        case 'O': o.order = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'b':
            if (cli_parse_dim("batch", optarg, 1048576, &o.batch))
                return EXIT_USAGE;
            break;
        case 'S':
            if (cli_add_set(o.sets, &o.nsets, optarg))
                return EXIT_USAGE;
            break;
        case 'P':
            if (o.nprices == MAX_SETS)
                return cli_fail(EXIT_USAGE, "too many --price options (at most 64)");
            o.prices[o.nprices++] = optarg;
            break;
        default: return cli_bad_option("plot", c, argv);
        }
    }
    if (optind < argc)
        return cli_extra_argument("plot", argv[optind]);
    int wf = strcmp(o.kind, "waterfall") == 0;
    if (!wf && (o.order || o.batch))
        return cli_fail(EXIT_USAGE, "plot: --order and --batch go with KIND waterfall");
    if (wf && o.nprices)
        return cli_fail(EXIT_USAGE, "plot waterfall: --price goes with the other kinds");
    if (!o.dir)
        return cli_fail(EXIT_USAGE, "plot: give -o DIR, the folder of the figures and their "
                                    "data");
    if (!o.scenario)
        o.scenario = DEFAULT_SCENARIO;
    char gnuplot[4096];
    if (find_gnuplot(gnuplot, sizeof gnuplot))
        return cli_fail(EXIT_NOHW, "plot: gnuplot is not on PATH (install it: apt-get install "
                                   "gnuplot-nox, brew install gnuplot); `xpusim` writes the "
                                   "same data as CSV with --format csv");
    int rc = quotable("-o", o.dir);
    if (rc || (rc = make_dir(o.dir)))
        return rc;
    xs_strbuf sb = {0}, dsb = {0};
    char title[512] = "";
    if (strcmp(o.kind, "time-by-kind") == 0)
        rc = time_by_kind(&o, &sb, title, sizeof title);
    else if (strcmp(o.kind, "cost-time") == 0)
        rc = cost_time(&o, &sb, title, sizeof title);
    else if (strcmp(o.kind, "roofline") == 0)
        rc = roofline(&o, &sb, &dsb, title, sizeof title);
    else
        rc = waterfall(&o, &sb, title, sizeof title);
    /* an id may hold a quote: the title is text, drop it there */
    for (char *p = title; *p; p++)
        if (*p == '\'' || *p == '\\')
            *p = ' ';
    char name[64];
    snprintf(name, sizeof name, "%s.csv", o.kind);
    if (rc == 0 && dsb.len)
        rc = write_file(o.dir, "roofline-device.csv", &dsb);
    if (rc == 0)
        rc = write_file(o.dir, name, &sb);
    xs_sb_free(&sb);
    xs_sb_free(&dsb);
    if (rc == 0)
        rc = draw(gnuplot, &o, title);
    if (rc == 0)
        printf("plot: %s/%s.png and .svg, data in %s/%s.csv\n", o.dir, o.kind, o.dir, o.kind);
    return rc;
}
