/* cmd_threads.c — `xpusim threads`: the predicted time of each op group of
 * an inference scenario (an LSTM, a Transformer encoder) at each thread
 * count on a CPU, the best count per group, and the whole run under the
 * default, the best fixed count and the per-group dynamic plan; with --run
 * the LSTM kernel runs all three and is timed next to the prediction. */
#include "cli.h"
#include "backend.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cpu.h"
#include "cpu_calibrate.h"
#include "cpu_features.h"
#include "fileio.h"
#include "infer.h"
#include "paths.h"
#include "threads.h"
#include "threads_cal.h"
#include "threads_run.h"

#define HOST_FILE "host-cpu.json"
#define DEFAULT_INF_SCENARIO "lstm-inference"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim threads [-d DEVICE] [-s SCENARIO] [--set KEY=VALUE]... [--run [--quick]]\n"
            "                      [--save-io DIR] [--format table|json] [-o FILE]\n"
            "       xpusim threads --calibrate [-d DEVICE] [--quick] [--measurements CSV] [--force]\n\n"
            "How many threads each part of a network should run on, on a CPU. For an\n"
            "inference scenario (default %s; also encoder-inference) it predicts\n"
            "each op group's time at each thread count from 1 to the device's cores, the\n"
            "best count per group, and the whole run three ways: the default (every group\n"
            "on all cores, as OpenMP and PyTorch start), the best fixed count for the whole\n"
            "run, and the dynamic plan (each group on its own best count, switched as the\n"
            "network runs). An LSTM's groups are, per layer, the input projection (one\n"
            "large GEMM over the whole sequence) and the recurrent steps (a skinny product\n"
            "and the gate update, seq times); an encoder's are its kinds of op (qkv,\n"
            "scores, softmax, ..., each over every layer).\n\n"
            "The model (sim/devices/cpu/threads.h) gives an op's time on t threads from the CPU\n"
            "model's per-core compute and bandwidth, DRAM bandwidth that saturates, the\n"
            "parallel work the op holds (rows, work items, GEMM blocks) and the cost of\n"
            "each parallel region (fork and join), fitted by the calibration's thread\n"
            "sweeps. On a 2-core host the counts are 1 and 2 and the settings differ\n"
            "little; the plan matters on a many-core server: calibrate it there.\n\n"
            "  -d DEVICE   a CPU device file; 'host' (the default): ./" HOST_FILE " (what\n"
            "              `xpusim calibrate --backend cpu` writes), else the shipped CPU\n"
            "              file calibrated on this CPU (brand string, signature) with the\n"
            "              kernel set this run uses\n"
            "  -s SCENARIO an inference scenario: scenarios/<id>.json or a path\n"
            "  --set K=V   inference.batch, inference.seq, inference.precision (fp32, or\n"
            "              bf16 for an LSTM: bf16 weights and activations, fp32 sums and\n"
            "              cell state, as nn.LSTM after .to(torch.bfloat16)), model.layers,\n"
            "              model.hidden, model.input_size, model.heads, model.ffn\n"
            "  --run       run the LSTM on this host with kernels/cpu/lstm.c (checked\n"
            "              against its reference first): every group at every count, then\n"
            "              the three settings (median of repeated runs); LSTM scenarios only\n"
            "  --quick     fewer repetitions (--run, --calibrate)\n"
            "  --save-io DIR  with --run: the weights, input and output the run used\n"
            "              (weights.bin, input.bin, output.bin, shape.json), for\n"
            "              tools/torch_lstm_threads.py to run the same LSTM in PyTorch\n"
            "  --calibrate measure the thread sweeps on this host and write them into the\n"
            "              device file's threads section (the rest of the file is kept);\n"
            "              the rows go to --measurements CSV, else <file stem>.threads.csv;\n"
            "              a file the repository ships (devices/, calibrate/runs/) only\n"
            "              with --force\n"
            "  --format    table (default) or json; -o FILE writes it there\n\n"
            "JSON keys: scenario, device, precision, cores, counts, groups (each name, best_threads,\n"
            "time_s_by_threads {count: seconds}, with --run measured_time_s_by_threads),\n"
            "totals (default_s, default_threads, best_fixed_s, best_fixed_threads,\n"
            "dynamic_s, dynamic_threads [per group]), with --run measured (default_s,\n"
            "best_fixed_s, best_fixed_threads, dynamic_s, their rel_iqr, reps,\n"
            "max_abs_err), same_host.\n\n"
            "Examples:\n"
            "  xpusim threads -s lstm-inference\n"
            "  xpusim threads -d xeon-amx-2c -s lstm-inference --run --format json\n"
            "  xpusim threads -s lstm-inference --set inference.precision=bf16 --run\n"
            "  xpusim threads -s encoder-inference --set inference.batch=32\n"
            "  xpusim threads --calibrate -d my-host.json\n",
            DEFAULT_INF_SCENARIO);
}

/* 1 when dev describes this host (xs_cpu_same_host: brand string,
 * signature where both have one, kernel set); else 0 with why. A build
 * without the kernels cannot read this CPU: never (its xs_cpu_same_host
 * says yes, leaving validate's refusal to host_check). */
static int this_host(const xs_device *dev, char *why, size_t size)
{
    if (!xs_cpu_kernel_set()) {
        snprintf(why, size, "this xpusim was built without the CPU kernels");
        return 0;
    }
    return xs_cpu_same_host(dev, why, size);
}

/* -d host: ./host-cpu.json, else the shipped CPU file of this host. */
static int resolve_host(char *path, size_t size, xs_error *err)
{
    if (xs_file_exists(HOST_FILE)) {
        snprintf(path, size, "%s", HOST_FILE);
        return XS_OK;
    }
    char **ids;
    size_t n;
    int rc = xs_list_ids("devices", &ids, &n, err);
    if (rc)
        return rc;
    int found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        xs_device d;
        xs_error ignored;
        char why[320];
        if (xs_dev_open(ids[i], &d, &ignored) == XS_OK && strcmp(xs_backend_of(&d)->name, "cpu") == 0 &&
            this_host(&d, why, sizeof why))
            found = xs_resolve("devices", ids[i], path, size, &ignored) == XS_OK;
    }
    xs_ids_free(ids, n);
    if (!found) {
        const xs_cpu_features *f = xs_cpu_features_get();
        const char *set = xs_cpu_kernel_set();
        return xs_error_set(err, XS_EARG,
                            "-d host: no device file for this CPU (\"%s\"%s%s%s%s): run `xpusim "
                            "calibrate --backend cpu` here (it writes " HOST_FILE
                            "), or give -d FILE",
                            f->model, f->signature[0] ? ", " : "", f->signature,
                            set ? ", kernel set " : "", set ? set : "");
    }
    return XS_OK;
}

static int open_device(const char *name, char *path, size_t size, xs_device *dev,
                       xs_error *err)
{
    int rc = strcmp(name, "host") == 0 ? resolve_host(path, size, err)
                                       : xs_resolve("devices", name, path, size, err);
    return rc ? rc : xs_dev_load(path, dev, err);
}

static void describe(xs_strbuf *sb, const xs_inf_scenario *s)
{
    if (s->family == XS_INF_LSTM)
        xs_sb_printf(sb, "lstm, %lld layers, hidden %lld, input %lld", (long long)s->layers,
                     (long long)s->hidden, (long long)s->input_size);
    else
        xs_sb_printf(sb, "encoder, %lld layers, hidden %lld, %lld heads, ffn %lld",
                     (long long)s->layers, (long long)s->hidden, (long long)s->heads,
                     (long long)s->ffn);
    xs_sb_printf(sb, "; batch %lld x seq %lld, %s", (long long)s->batch, (long long)s->seq,
                 s->precision == XS_INF_BF16 ? "bf16" : "fp32");
}

/* The counts a table shows: all up to 12 of them, else powers of two,
 * the cores and every count a plan picked. */
static int shown(const xs_thr_plan *p, int c)
{
    int t = p->counts[c];
    if (p->ncounts <= 12 || (t & (t - 1)) == 0 || c == p->ncounts - 1 || c == p->best_fixed)
        return 1;
    for (int g = 0; g < p->ngroups; g++)
        if (p->best[g] == c)
            return 1;
    return 0;
}

static void dynamic_text(const xs_thr_plan *p, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int g = 0; g < p->ngroups; g++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%d", g ? "," : "",
                 p->counts[p->best[g]]);
}

static void table(xs_strbuf *sb, const xs_device *dev, const xs_inf_scenario *s,
                  const xs_thr_work *w, const xs_thr_plan *p, const xs_thr_measured *m,
                  const char *other_host)
{
    xs_sb_printf(sb, "xpusim threads: %s on %s (%s)\nmodel     ", s->id, dev->id, dev->name);
    describe(sb, s);
    xs_sb_printf(sb, "\nthreads   1..%d (a parallel region: %.2f us + %.3f us a further thread); "
                     "default: %d, all cores, as OpenMP and PyTorch start\n\n",
                 (int)xs_cpu_of(dev)->cores, xs_cpu_of(dev)->thr.region_us, xs_cpu_of(dev)->thr.region_us_per_thread,
                 p->default_threads);
    xs_sb_printf(sb, "%-22s", "group (ms a run)");
    for (int c = 0; c < p->ncounts; c++)
        if (shown(p, c))
            xs_sb_printf(sb, " %9s%-3d", "t=", p->counts[c]);
    xs_sb_printf(sb, "  best\n");
    for (int g = 0; g < p->ngroups; g++) {
        for (int row = 0; row < (m ? 2 : 1); row++) {
            xs_sb_printf(sb, "%-22s", row ? "  measured" : w->groups[g]);
            for (int c = 0; c < p->ncounts; c++)
                if (shown(p, c))
                    xs_sb_printf(sb, " %12.3f",
                                 1e3 * (row ? m->group_s : p->time)[g * p->ncounts + c]);
            if (!row)
                xs_sb_printf(sb, "  %4d", p->counts[p->best[g]]);
            xs_sb_printf(sb, "\n");
        }
    }
    char dyn[512];
    dynamic_text(p, dyn, sizeof dyn);
    xs_sb_printf(sb, "\n%-12s %-24s %12s%s\n", "setting", "threads", "predicted s",
                 m ? "   measured s  spread  measured/predicted" : "");
    struct {
        const char *name;
        char threads[512];
        double pred, meas, iqr;
    } rows[3] = {{"default", "", p->default_s, m ? m->default_s : 0, m ? m->default_iqr : 0},
                 {"best fixed", "", p->best_fixed_s, m ? m->best_fixed_s : 0,
                  m ? m->best_fixed_iqr : 0},
                 {"dynamic", "", p->dynamic_s, m ? m->dynamic_s : 0, m ? m->dynamic_iqr : 0}};
    snprintf(rows[0].threads, sizeof rows[0].threads, "%d", p->default_threads);
    snprintf(rows[1].threads, sizeof rows[1].threads, "%d", p->counts[p->best_fixed]);
    snprintf(rows[2].threads, sizeof rows[2].threads, "%s", dyn);
    for (int i = 0; i < 3; i++) {
        xs_sb_printf(sb, "%-12s %-24.24s %12.4f", rows[i].name, rows[i].threads, rows[i].pred);
        if (m)
            xs_sb_printf(sb, " %12.4f  %5.1f%%  %8.2f", rows[i].meas, 100 * rows[i].iqr,
                         rows[i].meas / rows[i].pred);
        xs_sb_printf(sb, "\n");
    }
    xs_sb_printf(sb, "\ndynamic: each group on its own best count (groups in the order above); "
                     "predicted gain over the default %.1f%%, over the best fixed %.1f%%\n",
                 100 * (1 - p->dynamic_s / p->default_s),
                 100 * (1 - p->dynamic_s / p->best_fixed_s));
    if (m)
        xs_sb_printf(sb, "measured: kernels/cpu/lstm.c on this host, within %.2g of its "
                         "reference; spread = (q3 - q1) / median of %d+ runs\n",
                     m->max_abs_err, m->reps);
    if (m && other_host)
        xs_sb_printf(sb, "note: %s: the measurements are another machine's\n", other_host);
}

static cJSON *by_threads(const xs_thr_plan *p, const double *row)
{
    cJSON *o = cJSON_CreateObject();
    for (int c = 0; c < p->ncounts; c++) {
        char key[16];
        snprintf(key, sizeof key, "%d", p->counts[c]);
        cJSON_AddNumberToObject(o, key, row[c]);
    }
    return o;
}

static void json(xs_strbuf *sb, const xs_device *dev, const xs_inf_scenario *s,
                 const xs_thr_work *w, const xs_thr_plan *p, const xs_thr_measured *m,
                 int same_host)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "scenario", s->id);
    cJSON_AddStringToObject(o, "device", dev->id);
    cJSON_AddStringToObject(o, "precision", s->precision == XS_INF_BF16 ? "bf16" : "fp32");
    cJSON_AddNumberToObject(o, "cores", (double)xs_cpu_of(dev)->cores);
    cJSON *counts = cJSON_AddArrayToObject(o, "counts");
    for (int c = 0; c < p->ncounts; c++)
        cJSON_AddItemToArray(counts, cJSON_CreateNumber(p->counts[c]));
    cJSON *groups = cJSON_AddArrayToObject(o, "groups");
    for (int g = 0; g < p->ngroups; g++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", w->groups[g]);
        cJSON_AddNumberToObject(e, "best_threads", p->counts[p->best[g]]);
        cJSON_AddItemToObject(e, "time_s_by_threads", by_threads(p, p->time + g * p->ncounts));
        if (m)
            cJSON_AddItemToObject(e, "measured_time_s_by_threads",
                                  by_threads(p, m->group_s + g * p->ncounts));
        cJSON_AddItemToArray(groups, e);
    }
    cJSON *t = cJSON_AddObjectToObject(o, "totals");
    cJSON_AddNumberToObject(t, "default_s", p->default_s);
    cJSON_AddNumberToObject(t, "default_threads", p->default_threads);
    cJSON_AddNumberToObject(t, "best_fixed_s", p->best_fixed_s);
    cJSON_AddNumberToObject(t, "best_fixed_threads", p->counts[p->best_fixed]);
    cJSON_AddNumberToObject(t, "dynamic_s", p->dynamic_s);
    cJSON *dyn = cJSON_AddArrayToObject(t, "dynamic_threads");
    for (int g = 0; g < p->ngroups; g++)
        cJSON_AddItemToArray(dyn, cJSON_CreateNumber(p->counts[p->best[g]]));
    if (m) {
        cJSON *ms = cJSON_AddObjectToObject(o, "measured");
        cJSON_AddNumberToObject(ms, "default_s", m->default_s);
        cJSON_AddNumberToObject(ms, "best_fixed_s", m->best_fixed_s);
        cJSON_AddNumberToObject(ms, "best_fixed_threads", p->counts[p->best_fixed]);
        cJSON_AddNumberToObject(ms, "dynamic_s", m->dynamic_s);
        cJSON_AddNumberToObject(ms, "default_rel_iqr", m->default_iqr);
        cJSON_AddNumberToObject(ms, "best_fixed_rel_iqr", m->best_fixed_iqr);
        cJSON_AddNumberToObject(ms, "dynamic_rel_iqr", m->dynamic_iqr);
        cJSON_AddNumberToObject(ms, "reps", m->reps);
        cJSON_AddNumberToObject(ms, "max_abs_err", m->max_abs_err);
    }
    cJSON_AddBoolToObject(o, "same_host", same_host);
    char *text = cJSON_Print(o);
    if (text)
        xs_sb_printf(sb, "%s\n", text);
    else
        sb->failed = 1;
    cJSON_free(text);
    cJSON_Delete(o);
}

int cli_threads(int argc, char **argv)
{
    static const struct option longs[] = {
        {"device", required_argument, 0, 'd'},  {"scenario", required_argument, 0, 's'},
        {"set", required_argument, 0, 'S'},     {"run", no_argument, 0, 'r'},
        {"quick", no_argument, 0, 'q'},         {"save-io", required_argument, 0, 'w'},
        {"calibrate", no_argument, 0, 'c'},     {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},  {"help", no_argument, 0, 'h'},
        {"measurements", required_argument, 0, 'm'}, {"force", no_argument, 0, 'F'},
        {0, 0, 0, 0}};
    const char *device = "host", *scenario = DEFAULT_INF_SCENARIO, *output = NULL;
    const char *save_dir = NULL, *measurements = NULL, *sets[MAX_SETS];
    int nsets = 0, run = 0, quick = 0, calibrate = 0, force = 0, c, rc = 0;
    xs_format fmt = XS_FMT_TABLE;
    char msg[512];
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":d:s:f:o:h", longs, NULL)) != -1 && rc == 0) {
        switch (c) {
        case 'd': device = optarg; break;
        case 's': scenario = optarg; break;
        case 'o': output = optarg; break;
        case 'w': save_dir = optarg; break;
        case 'm': measurements = optarg; break;
        case 'r': run = 1; break;
        case 'q': quick = 1; break;
        case 'c': calibrate = 1; break;
        case 'F': force = 1; break;
        case 'S': rc = cli_add_set(sets, &nsets, optarg); break;
        case 'f': rc = cli_parse_table_json(optarg, &fmt); break;
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(argv[0], c, argv);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_extra_argument(argv[0], argv[optind]);
    if (save_dir && !run)
        return cli_fail(EXIT_USAGE, "threads: --save-io goes with --run (it saves what a run used)");
    if ((measurements || force) && !calibrate)
        return cli_fail(EXIT_USAGE, "threads: --measurements and --force go with --calibrate");
    if (quick && !run && !calibrate)
        return cli_fail(EXIT_USAGE, "threads: --quick goes with --run or --calibrate");
    xs_error err;
    xs_device dev;
    char path[PATH_MAX];
    if (calibrate) {
        if (run || nsets || output || save_dir || fmt != XS_FMT_TABLE)
            return cli_fail(EXIT_USAGE, "threads --calibrate takes -d, --quick, --measurements and --force only");
        if (open_device(device, path, sizeof path, &dev, &err) ||
            xs_thr_calibrate_file(path, measurements, quick, force, stderr, &err))
            return cli_fail_err(&err);
        return 0;
    }
    xs_inf_scenario s;
    xs_thr_work w;
    xs_thr_plan p;
    if (open_device(device, path, sizeof path, &dev, &err) ||
        xs_inf_open(scenario, sets, nsets, &s, &err) || xs_thr_device_ok(&dev, &err))
        return cli_fail_err(&err);
    if (run && s.family != XS_INF_LSTM) {
        snprintf(msg, sizeof msg,
                 "threads --run: %s is a Transformer encoder; --run executes the LSTM kernel "
                 "(kernels/cpu/lstm.c) only, the encoder is predicted only",
                 s.id);
        return cli_fail(EXIT_USAGE, msg);
    }
    if (xs_inf_work(&s, &w, &err))
        return cli_fail_err(&err);
    if (xs_thr_plan_make(&dev, &w, &p, &err)) {
        xs_thr_work_free(&w);
        return cli_fail_err(&err);
    }
    const xs_cpu_features *f = xs_cpu_features_get();
    char other[320];
    int same_host = this_host(&dev, other, sizeof other);
    xs_thr_measured m;
    int measured = 0;
    if (run) {
        if (xs_cpu_host_check(&err)) { /* no kernels built, or a set this CPU lacks */
            const char *why = strncmp(err.msg, "--backend cpu: ", 15) == 0 ? err.msg + 15
                                                                           : err.msg;
            snprintf(msg, sizeof msg, "threads --run: %.400s", why);
            rc = cli_fail(EXIT_NOHW, msg);
        } else if (xs_cpu_of(&dev)->cores > f->cores) {
            snprintf(msg, sizeof msg,
                     "threads --run: %s has %lld cores, this host runs %d threads: run it on "
                     "the host it describes",
                     dev.id, (long long)xs_cpu_of(&dev)->cores, f->cores);
            rc = cli_fail(EXIT_NOHW, msg);
        } else if (xs_thr_run_lstm(&s, &p, quick, save_dir, stderr, &m, &err)) {
            rc = cli_fail_err(&err);
        } else {
            measured = 1;
        }
    }
    if (!rc) {
        xs_strbuf sb = {0};
        if (fmt == XS_FMT_JSON)
            json(&sb, &dev, &s, &w, &p, measured ? &m : NULL, same_host);
        else
            table(&sb, &dev, &s, &w, &p, measured ? &m : NULL, same_host ? NULL : other);
        rc = cli_deliver(&sb, output);
        xs_sb_free(&sb);
    }
    if (measured)
        xs_thr_measured_free(&m);
    xs_thr_plan_free(&p);
    xs_thr_work_free(&w);
    return rc;
}
