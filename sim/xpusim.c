/* xpusim.c — the command-line front end: parses arguments, calls the
 * library, prints or writes the report. The only place that decides exit
 * codes: 0 success, 1 bad input data or a failed write, 2 bad usage. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "backend.h"
#include "cpu_calibrate.h"
#include "cpu_check.h"
#include "device.h"
#include "fileio.h"
#include "gemm.h"
#include "paths.h"
#include "predict.h"
#include "report.h"
#include "scenario.h"
#include "trace.h"
#include "validate.h"
#include "workload.h"

#define XPUSIM_VERSION "0.1.0"
#define DEFAULT_DEVICE "a100-sxm4-80gb"
#define DEFAULT_SCENARIO "bert-large-squad"
#define MAX_SETS 64

enum { EXIT_DATA = 1, EXIT_USAGE = 2 };

static int fail(int code, const char *msg)
{
    fprintf(stderr, "xpusim: error: %s\n", msg);
    return code;
}

static int fail_err(const xs_error *err)
{
    return fail(err->code == XS_EARG ? EXIT_USAGE : EXIT_DATA, err->msg);
}

/* getopt's report of a bad option of command cmd: c is ':' (a value is
 * missing) or anything else (an unknown option). */
static int bad_option(const char *cmd, int c, char **argv)
{
    char msg[256];
    if (c == ':')
        snprintf(msg, sizeof msg, "%s: option '%s' needs a value", cmd, argv[optind - 1]);
    else
        snprintf(msg, sizeof msg, "%s: unknown option '%s' (see --help)", cmd, argv[optind - 1]);
    return fail(EXIT_USAGE, msg);
}

/* A word left over after a command's options. */
static int extra_argument(const char *cmd, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s: unexpected argument '%s' (see --help)", cmd, arg);
    return fail(EXIT_USAGE, msg);
}

static void print_set_keys(FILE *out)
{
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    fprintf(out, "Scenario keys for --set (validated like the file):\n");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f[i].path, "id") == 0 || strcmp(f[i].path, "description") == 0 ||
            strcmp(f[i].path, "source") == 0)
            continue;
        char want[160];
        xs_schema_expect(&f[i], want, sizeof want);
        fprintf(out, "  %-22s %s\n  %-22s   (%s)\n", f[i].path, f[i].help, "", want);
    }
}

static void usage_main(FILE *out)
{
    fprintf(out,
            "xpusim " XPUSIM_VERSION " — predicts the time, energy and cost of Transformer\n"
            "fine-tuning, kernel by kernel, on GPUs.\n\n"
            "Usage: xpusim COMMAND [OPTIONS]   (xpusim COMMAND --help for details)\n\n"
            "Commands:\n"
            "  predict     per-op breakdown of one training step and totals for the run\n"
            "  compare     one scenario on many devices: throughput, run hours, kWh, $\n"
            "  gemm        one GEMM: time, TFLOP/s, chosen tile, waves, bound\n"
            "  advise      nearby model shapes that run faster on a device\n"
            "  validate    predicted vs measured: measured runs (CSV), profiler traces, or\n"
            "              a real BERT step on this CPU (--backend cpu)\n"
            "  calibrate   measure this host's CPU and fit its cost model (a device file)\n"
            "  workload    the op list of one step (shapes, FLOPs, bytes), no device\n"
            "  devices     list the devices and their datasheet figures\n"
            "  scenarios   list the built-in fine-tuning scenarios\n\n"
            "Examples:\n"
            "  xpusim predict                                   # %s on %s\n"
            "  xpusim predict -d h100-sxm5-80gb -s bert-base-squad --set train.batch=64\n"
            "  xpusim compare -s bert-base-squad --set train.batch=32\n"
            "  xpusim predict -d t4 -s gpt2-medium-finetune --set train.precision=amp_fp16 "
            "--format json -o t4.json\n\n"
            "Devices and scenarios are ids (files in devices/ and scenarios/) or paths.\n"
            "Set XPUSIM_DATA to the source folder if xpusim cannot find them.\n",
            DEFAULT_SCENARIO, DEFAULT_DEVICE);
}

static void usage_predict(FILE *out)
{
    fprintf(out,
            "Usage: xpusim predict [-d DEVICE] [-s SCENARIO] [--set KEY=VALUE]...\n"
            "                      [--format table|json|csv] [-o FILE]\n\n"
            "Predicts one optimizer step op by op (forward, backward, optimizer) on DEVICE,\n"
            "then the whole run of SCENARIO: time, energy (kWh) and cost (USD).\n\n"
            "  -d, --device DEVICE      device id or path (default %s; see `xpusim devices`)\n"
            "  -s, --scenario SCENARIO  scenario id or path (default %s)\n"
            "      --set KEY=VALUE      override a scenario key; repeatable\n"
            "  -f, --format FORMAT      table (people; identical layers summed into one row),\n"
            "                           json or csv (scripts; every op)\n"
            "  -o, --output FILE        write there (atomically) instead of stdout\n"
            "  -h, --help               this text\n\n"
            "Each op's time is max(compute, memory) + launches x launch cost, where compute\n"
            "runs at the device's peak for the format (tensor cores where they support it)\n"
            "at its sustained clock x model.gemm_efficiency, and memory at DRAM bandwidth x\n"
            "model.mem_bw_efficiency. 'bound' says which term set the time. Energy: power\n"
            "between idle and TDP by how busy compute and memory are. MFU: matmul FLOP/s\n"
            "over the datasheet dense peak of the engine the matmuls run on.\n"
            "The host queues a GPU's kernels at train.host_op_us a launch; where it reads a\n"
            "value back (loss scaler, clipping norm, train.loss_sync) the GPU drains and\n"
            "then waits for the launches that follow, and for data.loader_us a sample the\n"
            "host spends fetching the next batch: 'host wait' in the table.\n"
            "JSON ops carry totals per step: flops, bytes, time_s and energy_j are summed\n"
            "over the op's `calls` (micro-batches), so they add up to the step with\n"
            "step.host_wait_s.\n\n",
            DEFAULT_DEVICE, DEFAULT_SCENARIO);
    print_set_keys(out);
}

static void usage_workload(FILE *out)
{
    fprintf(out,
            "Usage: xpusim workload [-s SCENARIO] [--set KEY=VALUE]... [--format "
            "table|json|csv] [-o FILE]\n\n"
            "Lists the ops of one optimizer step of SCENARIO without a device: GEMM shapes,\n"
            "FLOPs, DRAM bytes and kernel launches, forward, backward and optimizer.\n"
            "Options as for `xpusim predict` (see its --help for the --set keys).\n");
}

static void print_fields(FILE *out, const xs_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char want[160];
        xs_schema_expect(&f[i], want, sizeof want);
        fprintf(out, "  %-32s %s%s (%s)\n", f[i].path, f[i].required ? "" : "[optional] ",
                f[i].help, want);
    }
}

static void usage_devices(FILE *out)
{
    fprintf(out, "Usage: xpusim devices [--format table|json|csv] [-o FILE]\n\n"
                 "Lists the device files in devices/ with their dense peaks, memory, power\n"
                 "and price. A device file's \"class\" selects its cost model and its fields\n"
                 "(all required unless marked optional).\n");
    const xs_backend *be;
    for (int c = 0; (be = xs_backend_at(c)) != NULL; c++) {
        fprintf(out, "\nclass %s: %s:\n", be->name, be->doc);
        size_t n;
        const xs_field *f = be->fields(&n);
        for (size_t i = 0; i < n; i++)
            if (!be->documents || be->documents(&f[i]))
                print_fields(out, &f[i], 1);
    }
}

static void usage_compare(FILE *out)
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

static void usage_gemm(FILE *out)
{
    fprintf(out,
            "Usage: xpusim gemm [-d DEVICE] --m M --n N --k K [--dtype fp32|tf32|fp16|bf16]\n"
            "                   [--ta] [--tb] [--batch B] [--format table|json] [-o FILE]\n\n"
            "Predicts one GEMM, C[m x n] = op(A)[m x k] . op(B)[k x n] (B times if --batch),\n"
            "on DEVICE (default %s): time, TFLOP/s and fraction of peak, the kernel tile\n"
            "a heuristic library would pick (tried: every tile the device lists x split-K),\n"
            "tile and wave quantization, mainloop efficiency and the bound.\n\n"
            "  --ta, --tb     A (B) is stored transposed (row-major convention: without\n"
            "                 --ta the rows of A are k long; with it, m long)\n"
            "  --dtype        input format (default fp16); without tensor cores for it the\n"
            "                 GEMM runs on the fp32 units\n"
            "  --sweep D=A:B[:S]  vary dimension D (m, n or k) from A to B in steps of S\n"
            "                 (default 1) and print one row per value, CSV (or JSON with\n"
            "                 --format json): the sawtooth of tile and wave quantization\n\n"
            "JSON keys: time_s, tflops, fraction_of_peak, tile_m, tile_n, tile_k, stages,\n"
            "split_k, ctas_per_sm, tiles, waves, wave_efficiency, tile_efficiency,\n"
            "mainloop_efficiency, align_bytes, sm_time_s, dram_time_s, dram_bytes, bound.\n",
            DEFAULT_DEVICE);
}

static void usage_advise(FILE *out)
{
    fprintf(out,
            "Usage: xpusim advise [-d DEVICE] [-s SCENARIO] [--set KEY=VALUE]...\n"
            "                     [--tolerance PCT] [--format table|json] [-o FILE]\n\n"
            "Proposes model shapes near SCENARIO's that follow the hardware-friendly rules of\n"
            "Anthony et al. (arXiv 2401.14489): vocabulary, hidden and FFN sizes divisible by\n"
            "64 (or 128, 256), head size h/a a multiple of 64, and a micro-batch whose b x s\n"
            "is a multiple of a larger power of two. Each is predicted on DEVICE through the\n"
            "full step model; those within PCT percent (default 5) of the parameter count\n"
            "are ranked by predicted samples/s. Says so when the shape is already good.\n\n"
            "JSON: an array of {change, rule, set, params, params_delta_pct, samples_per_s,\n"
            "predicted_speedup}, fastest first; `set` holds the --set options to apply it.\n");
}

static void usage_validate(FILE *out)
{
    fprintf(out,
            "Usage: xpusim validate --measured FILE.csv [--measured FILE.csv]...\n"
            "                       [--format table|json|csv] [-o FILE]\n"
            "       xpusim validate --trace TRACE.json -d DEVICE -s SCENARIO [--set K=V]...\n"
            "                       [--format table|json|csv] [-o FILE]\n"
            "       xpusim validate --backend cpu -d DEVICE [--quick]\n"
            "                       [--format table|json|csv] [-o FILE]\n\n"
            "Reads measured runs in the measured-run format (header\n"
            "device,scenario,set,metric,value,source; `set` holds ';'-separated key=value\n"
            "overrides) and predicts every row: whole fine-tuning scenarios (metric\n"
            "samples_per_s, tokens_per_s or step_time_s) and single kernels (scenario '-',\n"
            "metric time_s) with set op=gemm;m=..;n=..;k=..;ta=N|T;tb=N|T;dtype=..\n"
            "[;batch=..][;layout=col|row] (col, the BLAS convention, by default) or\n"
            "op=optimizer;optimizer=..;fused=0|1;params=N[;tensors=N][;state_bytes=4].\n"
            "Prints per row predicted, measured, signed error and the uncertainty band, then\n"
            "the count, MAPE, median and max absolute error overall, per file, per device\n"
            "and per metric. A row that cannot be parsed or predicted is listed with its\n"
            "reason and counted apart.\n\n"
            "Where the error sits: a scenario row also gets matmul_share_pct, the share of\n"
            "the predicted step spent in GEMM, batched-GEMM and fused-attention kernels, and\n"
            "rest_factor, how many times longer than predicted the rest of the step (every\n"
            "other kernel and the host wait) must have run to give the measurement if the\n"
            "matmuls were predicted right (1: no error there; 1.3: the rest ran 30%% longer).\n"
            "Zero or less: the predicted matmuls alone outlast the measured step, so they\n"
            "are too slow. Summaries give its median. It assumes the matmul time is right:\n"
            "compare rows with different matmul shares, or a trace (--trace), before\n"
            "trusting it.\n\n"
            "With --trace, TRACE.json is a PyTorch profiler Chrome trace (export_chrome_trace)\n"
            "of one training step of SCENARIO on DEVICE: its GPU kernels are classified by\n"
            "name (gemm, attention, softmax, norm, elementwise, copy, reduce, embed, loss,\n"
            "optimizer), matched to the predicted launches of each class, and compared per\n"
            "class (metric kernel_time_s:CLASS) and for the whole step (the kernels' span).\n\n"
            "With --backend cpu, DEVICE is a calibrated CPU (xpusim calibrate --backend cpu):\n"
            "a real fine-tuning step of a small BERT encoder runs here (fp32, then bf16\n"
            "matmuls; forward, loss, backward, fused Adan) and every kernel call is timed\n"
            "and predicted: one row per kernel name (metric time_s, its calls in one step\n"
            "summed; scenario bert-cpu-fp32|bf16), one per step (metric step_time_s), and one\n"
            "per single kernel at shapes and sizes the calibration never used (scenario '-').\n"
            "Measured values are medians over steps or repetitions; measured_iqr_pct is\n"
            "their inter-quartile range. --quick: a smaller model and fewer kernels.\n\n"
            "Exit status: 0 when every row was predicted, 1 when any row could not be\n"
            "(the report is still written), 2 for bad usage.\n\n"
            "JSON: rows[] {file, line, device, scenario, set, metric, measured,\n"
            "[measured_iqr_pct,] predicted, low, high, error_pct, [matmul_share_pct,\n"
            "rest_factor] | error}, summary {n, mape_pct, median_abs_pct, max_abs_pct,\n"
            "mean_signed_pct, in_band_pct, [rest_factor_median,] failed}, by_device,\n"
            "by_metric, by_file.\n");
}

static void usage_scenarios(FILE *out)
{
    fprintf(out, "Usage: xpusim scenarios\n\nLists the scenario files in scenarios/ with "
                 "their descriptions.\n");
}

typedef struct {
    const char *device, *scenario, *output;
    const char *sets[MAX_SETS];
    int nsets;
    xs_format format;
    double tolerance; /* advise: percent of the parameter count */
    int help;
} options;

/* Parse the options shared by the sub-commands; returns 0 or an exit code. */
static int parse_options(int argc, char **argv, options *o, const char *allowed)
{
    static const struct option longs[] = {
        {"device", required_argument, 0, 'd'}, {"scenario", required_argument, 0, 's'},
        {"set", required_argument, 0, 'S'},    {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"tolerance", required_argument, 0, 'T'}, {0, 0, 0, 0}};
    memset(o, 0, sizeof *o); /* device and scenario stay NULL unless given */
    o->tolerance = 5;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":d:s:f:o:h", longs, NULL)) != -1) {
        char msg[256];
        if (c != '?' && c != ':' && !strchr(allowed, c)) {
            snprintf(msg, sizeof msg, "%s: option '%s' does not apply here (see --help)",
                     argv[0], argv[optind - 1]);
            return fail(EXIT_USAGE, msg);
        }
        switch (c) {
        case 'd': o->device = optarg; break;
        case 's': o->scenario = optarg; break;
        case 'o': o->output = optarg; break;
        case 'h': o->help = 1; break;
        case 'T': {
            char *end;
            o->tolerance = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(o->tolerance > 0 && o->tolerance <= 50)) {
                snprintf(msg, sizeof msg, "--tolerance must be a percentage in (0, 50], got '%s'",
                         optarg);
                return fail(EXIT_USAGE, msg);
            }
            break;
        }
        case 'S':
            if (o->nsets == MAX_SETS)
                return fail(EXIT_USAGE, "too many --set options (at most 64)");
            o->sets[o->nsets++] = optarg;
            break;
        case 'f': {
            int idx = xs_choice_index(XS_FORMAT_CHOICES, optarg);
            if (idx < 0) {
                snprintf(msg, sizeof msg, "--format must be one of table|json|csv, got '%s'",
                         optarg);
                return fail(EXIT_USAGE, msg);
            }
            o->format = (xs_format)idx;
            break;
        }
        default: return bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return extra_argument(argv[0], argv[optind]);
    return 0;
}

/* Parse a sub-command's options and print its help if asked. Returns 1 when
 * the command is done (help shown or bad usage), with *rc its exit code. */
static int begin(int argc, char **argv, options *o, const char *allowed,
                 void (*usage)(FILE *), int *rc)
{
    *rc = parse_options(argc, argv, o, allowed);
    if (*rc == 0 && o->help)
        usage(stdout);
    return *rc != 0 || o->help;
}

static int deliver(xs_strbuf *sb, const char *output)
{
    if (sb->failed)
        return fail(EXIT_DATA, "out of memory while formatting the report");
    if (!output) {
        fwrite(sb->data ? sb->data : "", 1, sb->len, stdout);
        return fflush(stdout) == 0 ? 0 : fail(EXIT_DATA, "cannot write to stdout");
    }
    xs_error err;
    if (xs_write_atomic(output, sb->data ? sb->data : "", sb->len, &err))
        return fail_err(&err);
    return 0;
}

static int load_scenario(const options *o, xs_scenario *s, xs_workload *wl, xs_error *err)
{
    char path[PATH_MAX];
    const char *id = o->scenario ? o->scenario : DEFAULT_SCENARIO;
    int rc = xs_resolve("scenarios", id, path, sizeof path, err);
    if (!rc)
        rc = xs_scn_load(path, o->sets, o->nsets, s, err);
    if (!rc)
        rc = xs_wl_build(s, wl, err);
    return rc;
}

static int cmd_predict(int argc, char **argv)
{
    options o;
    int rc;
    if (begin(argc, argv, &o, "dsSfoh", usage_predict, &rc))
        return rc;
    xs_error err;
    char path[PATH_MAX];
    xs_device dev;
    if (xs_resolve("devices", o.device ? o.device : DEFAULT_DEVICE, path, sizeof path, &err) ||
        xs_dev_load(path, &dev, &err))
        return fail_err(&err);
    xs_scenario s;
    xs_workload wl;
    if (load_scenario(&o, &s, &wl, &err))
        return fail_err(&err);
    xs_prediction p;
    if (xs_predict(&dev, &s, &wl, &p, &err)) {
        xs_wl_free(&wl);
        return fail_err(&err);
    }
    if (xs_predict_band(&dev, &s, &wl, &p, &err)) {
        xs_prediction_free(&p);
        xs_wl_free(&wl);
        return fail_err(&err);
    }
    xs_strbuf sb = {0};
    xs_report_predict(&sb, o.format, &dev, &s, &wl, &p);
    rc = deliver(&sb, o.output);
    xs_sb_free(&sb);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
    return rc;
}

static int cmd_workload(int argc, char **argv)
{
    options o;
    int rc;
    if (begin(argc, argv, &o, "sSfoh", usage_workload, &rc))
        return rc;
    xs_error err;
    xs_scenario s;
    xs_workload wl;
    if (load_scenario(&o, &s, &wl, &err))
        return fail_err(&err);
    xs_strbuf sb = {0};
    xs_report_workload(&sb, o.format, &s, &wl);
    rc = deliver(&sb, o.output);
    xs_sb_free(&sb);
    xs_wl_free(&wl);
    return rc;
}

/* Load every device named in list ("a,b,c"), or all when list is NULL. */
static int load_devices(const char *list, xs_device **out, size_t *count, xs_error *err)
{
    char **ids = NULL;
    size_t n = 0;
    int rc = XS_OK;
    if (!list) {
        rc = xs_list_ids("devices", &ids, &n, err);
    } else {
        char *copy = strdup(list);
        ids = calloc(strlen(list) / 2 + 2, sizeof *ids);
        if (!copy || !ids) {
            free(copy);
            free(ids);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
            ids[n++] = strdup(tok);
        free(copy);
    }
    if (rc)
        return rc;
    xs_device *devs = calloc(n ? n : 1, sizeof *devs);
    if (!devs)
        rc = xs_error_set(err, XS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc == XS_OK; i++) {
        char path[PATH_MAX];
        if (!ids[i])
            rc = xs_error_set(err, XS_ENOMEM, "out of memory");
        else if (!(rc = xs_resolve("devices", ids[i], path, sizeof path, err)))
            rc = xs_dev_load(path, &devs[i], err);
    }
    xs_ids_free(ids, n);
    if (rc) {
        free(devs);
        return rc;
    }
    *out = devs;
    *count = n;
    return XS_OK;
}

static int by_cost(const void *a, const void *b)
{
    double x = ((const xs_compare_row *)a)->p->run_cost_usd;
    double y = ((const xs_compare_row *)b)->p->run_cost_usd;
    return (x > y) - (x < y);
}

static int cmd_compare(int argc, char **argv)
{
    options o;
    int rc;
    if (begin(argc, argv, &o, "dsSfoh", usage_compare, &rc))
        return rc;
    xs_error err;
    xs_scenario s;
    xs_workload wl;
    xs_device *devs = NULL;
    size_t n = 0;
    if (load_devices(o.device, &devs, &n, &err)) /* NULL: every device */
        return fail_err(&err);
    if (n == 0) {
        free(devs);
        return fail(EXIT_USAGE, "compare: -d names no device (give ids separated by commas)");
    }
    if (load_scenario(&o, &s, &wl, &err)) {
        free(devs);
        return fail_err(&err);
    }
    xs_prediction *preds = calloc(n ? n : 1, sizeof *preds);
    xs_compare_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!preds || !rows)
        rc = fail(EXIT_DATA, "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (xs_predict(&devs[i], &s, &wl, &preds[i], &err)) {
            rc = fail_err(&err);
            break;
        }
        xs_prediction_free(&preds[i]); /* the totals are all a row needs */
        rows[i].dev = &devs[i];
        rows[i].p = &preds[i];
    }
    if (rc == 0) {
        qsort(rows, n, sizeof *rows, by_cost);
        xs_strbuf sb = {0};
        xs_report_compare(&sb, o.format, &s, &wl, rows, n);
        rc = deliver(&sb, o.output);
        xs_sb_free(&sb);
    }
    free(rows);
    free(preds);
    free(devs);
    xs_wl_free(&wl);
    return rc;
}

static int cmd_advise(int argc, char **argv)
{
    options o;
    int rc;
    if (begin(argc, argv, &o, "dsSfohT", usage_advise, &rc))
        return rc;
    if (o.format == XS_FMT_CSV)
        return fail(EXIT_USAGE, "advise: --format must be table or json");
    xs_error err;
    char dpath[PATH_MAX], spath[PATH_MAX];
    xs_device dev;
    if (xs_resolve("devices", o.device ? o.device : DEFAULT_DEVICE, dpath, sizeof dpath, &err) ||
        xs_dev_load(dpath, &dev, &err) ||
        xs_resolve("scenarios", o.scenario ? o.scenario : DEFAULT_SCENARIO, spath, sizeof spath,
                   &err))
        return fail_err(&err);
    xs_advice base, *advice = NULL;
    size_t n = 0;
    if (xs_advise(&dev, spath, o.sets, o.nsets, o.tolerance, &base, &advice, &n, &err))
        return fail_err(&err);
    xs_scenario s;
    if (xs_scn_load(spath, o.sets, o.nsets, &s, &err)) {
        free(advice);
        return fail_err(&err);
    }
    xs_strbuf sb = {0};
    xs_report_advice(&sb, o.format, &dev, &s, o.tolerance, &base, advice, n);
    rc = deliver(&sb, o.output);
    xs_sb_free(&sb);
    free(advice);
    return rc;
}

#define MAX_MEASURED 16

/* Predict scenario on device and line the prediction up with a measured
 * trace of one step: one row per kernel class and one for the step. */
static int validate_trace(const char *trace, const char *device, const char *scenario,
                          const char *const *sets, int nsets, xs_vrow **rows, size_t *n,
                          xs_error *err)
{
    char dpath[PATH_MAX], spath[PATH_MAX], setline[512] = "";
    xs_device dev;
    xs_scenario s;
    xs_workload wl;
    xs_prediction p;
    xs_trace t;
    int rc = xs_trace_load(trace, &t, err);
    if (!rc)
        rc = xs_resolve("devices", device, dpath, sizeof dpath, err);
    if (!rc)
        rc = xs_dev_load(dpath, &dev, err);
    if (!rc)
        rc = xs_resolve("scenarios", scenario, spath, sizeof spath, err);
    if (!rc)
        rc = xs_scn_load(spath, sets, nsets, &s, err);
    if (!rc)
        rc = xs_wl_build(&s, &wl, err);
    if (rc)
        return rc;
    rc = xs_predict(&dev, &s, &wl, &p, err);
    if (!rc)
        rc = xs_predict_band(&dev, &s, &wl, &p, err);
    for (int i = 0, used = 0; !rc && i < nsets && used < (int)sizeof setline; i++)
        used += snprintf(setline + used, sizeof setline - (size_t)used, "%s%s", i ? ";" : "",
                         sets[i]);
    if (!rc)
        rc = xs_trace_rows(&t, trace, &dev, s.id, setline, &wl, &p, rows, n, err);
    if (!rc || p.est)
        xs_prediction_free(&p);
    xs_wl_free(&wl);
    return rc;
}

/* Exit status of a finished validation: its report delivered, and every
 * row predicted. */
static int finish_validate(xs_vrow *rows, size_t n, xs_format fmt, const char *output)
{
    xs_strbuf sb = {0};
    xs_report_validate(&sb, fmt, rows, n);
    int rc = deliver(&sb, output);
    xs_sb_free(&sb);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += !rows[i].ok;
    free(rows);
    if (rc == 0 && failed) {
        fprintf(stderr, "xpusim: error: %zu of %zu measured rows could not be predicted (listed "
                        "in the report)\n", failed, n);
        rc = EXIT_DATA;
    }
    return rc;
}

/* validate --backend cpu: run real kernels here and predict them. */
static int validate_backend(const char *backend, const char *device, int quick, int other,
                            xs_format fmt, const char *output)
{
    char msg[256];
    if (strcmp(backend, "cpu") != 0) {
        snprintf(msg, sizeof msg,
                 "validate: --backend must be cpu (kernels that run on this machine), got '%s'",
                 backend);
        return fail(EXIT_USAGE, msg);
    }
    if (other)
        return fail(EXIT_USAGE, "validate: --backend cpu runs its own BERT step and kernels; "
                                "--measured, --trace, -s and --set do not go with it");
    if (!device)
        return fail(EXIT_USAGE, "validate: --backend cpu needs -d DEVICE, a device file "
                                "written by `xpusim calibrate --backend cpu`");
    xs_error err;
    char path[PATH_MAX];
    xs_device dev;
    if (xs_resolve("devices", device, path, sizeof path, &err) || xs_dev_load(path, &dev, &err))
        return fail_err(&err);
    if (xs_backend_of(&dev) != &xs_cpu_backend) {
        snprintf(msg, sizeof msg,
                 "validate --backend cpu: device %s is not a cpu device (make one with "
                 "`xpusim calibrate --backend cpu`)",
                 dev.id);
        return fail(EXIT_USAGE, msg);
    }
    xs_cpu_check_opts o = {quick, stderr};
    fprintf(stderr, "validate: running %s, fp32 then bf16, and single kernels on %lld cores\n",
            xs_cpu_check_model(quick), (long long)dev.cpu.cores);
    xs_vrow *rows;
    size_t n;
    if (xs_cpu_check(&dev, &o, &rows, &n, &err))
        return fail_err(&err);
    return finish_validate(rows, n, fmt, output);
}

static int cmd_validate(int argc, char **argv)
{
    static const struct option longs[] = {
        {"measured", required_argument, 0, 'm'}, {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},   {"help", no_argument, 0, 'h'},
        {"trace", required_argument, 0, 't'},    {"device", required_argument, 0, 'd'},
        {"scenario", required_argument, 0, 's'}, {"set", required_argument, 0, 'S'},
        {"backend", required_argument, 0, 'b'},  {"quick", no_argument, 0, 'q'},
        {0, 0, 0, 0}};
    const char *files[MAX_MEASURED], *output = NULL, *trace = NULL, *device = NULL,
                                     *scenario = NULL, *sets[MAX_SETS], *backend = NULL;
    int nfiles = 0, nsets = 0, quick = 0;
    xs_format fmt = XS_FMT_TABLE;
    optind = 1;
    opterr = 0;
    int c;
    char msg[256];
    while ((c = getopt_long(argc, argv, ":f:o:hd:s:", longs, NULL)) != -1) {
        switch (c) {
        case 't': trace = optarg; break;
        case 'b': backend = optarg; break;
        case 'q': quick = 1; break;
        case 'd': device = optarg; break;
        case 's': scenario = optarg; break;
        case 'S':
            if (nsets == MAX_SETS)
                return fail(EXIT_USAGE, "too many --set options (at most 64)");
            sets[nsets++] = optarg;
            break;
        case 'm':
            if (nfiles == MAX_MEASURED)
                return fail(EXIT_USAGE, "validate: at most 16 --measured files");
            files[nfiles++] = optarg;
            break;
        case 'o': output = optarg; break;
        case 'f': {
            int idx = xs_choice_index(XS_FORMAT_CHOICES, optarg);
            if (idx < 0) {
                snprintf(msg, sizeof msg, "--format must be one of table|json|csv, got '%s'",
                         optarg);
                return fail(EXIT_USAGE, msg);
            }
            fmt = (xs_format)idx;
            break;
        }
        case 'h': usage_validate(stdout); return 0;
        default: return bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return extra_argument(argv[0], argv[optind]);
    if (backend)
        return validate_backend(backend, device, quick, nfiles || trace || scenario || nsets,
                                fmt, output);
    if (quick)
        return fail(EXIT_USAGE, "validate: --quick goes with --backend cpu");
    if (nfiles == 0 && !trace)
        return fail(EXIT_USAGE, "validate: give --measured FILE.csv, --trace TRACE.json or "
                                "--backend cpu -d DEVICE (see --help)");
    if (nfiles && trace)
        return fail(EXIT_USAGE, "validate: --measured and --trace are separate runs");
    if ((device || scenario || nsets) && !trace)
        return fail(EXIT_USAGE, "validate: -d, -s and --set go with --trace (a measured-run "
                                "CSV names its own devices and scenarios)");
    if (trace && (!device || !scenario))
        return fail(EXIT_USAGE, "validate: --trace needs the -d DEVICE and -s SCENARIO it ran");
    xs_error err;
    xs_vrow *rows;
    size_t n;
    if (trace) {
        if (validate_trace(trace, device, scenario, sets, nsets, &rows, &n, &err))
            return fail_err(&err);
    } else if (xs_validate_files(files, nfiles, &rows, &n, &err)) {
        return fail_err(&err);
    }
    return finish_validate(rows, n, fmt, output);
}

/* A positive integer option value, or a usage error. */
static int parse_dim(const char *name, const char *text, int64_t max, int64_t *out)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 1 || v > max) {
        char msg[256];
        snprintf(msg, sizeof msg, "--%s must be an integer in [1, %lld], got '%s'", name,
                 (long long)max, text);
        return fail(EXIT_USAGE, msg);
    }
    *out = v;
    return 0;
}

static void usage_calibrate(FILE *out)
{
    fprintf(out,
            "Usage: xpusim calibrate --backend cpu [--quick] [-o FILE] [--threads N]\n"
            "                        [--measurements FILE.csv]\n\n"
            "Runs real kernels on this host and fits the CPU cost model to them, writing a\n"
            "device file (class cpu) that predict, compare, gemm and validate accept like\n"
            "the datasheet devices. Measured: fork/join cost, in-core AVX-512 FMA and AMX\n"
            "peaks, STREAM-triad bandwidth from inside L2 to past the last-level cache at\n"
            "1..N threads, fp32 and bf16 GEMM sweeps over odd and skinny shapes (all cores\n"
            "and one), and every layer and optimizer kernel of the BERT step inside L2.\n"
            "Fitted by weighted least squares (GSL): per-level bandwidths, GEMM mainloop\n"
            "efficiency, per-block and per-call costs and packing rates, each kernel's time\n"
            "per element and per call; the file records each parameter's standard\n"
            "deviation and each fit's residuals, the host, date, command and kernel\n"
            "versions. Both files are written to a temporary name and renamed, so an\n"
            "interrupted run leaves no broken file.\n\n"
            "  --backend cpu            what to calibrate (cpu: this host; GPUs need the\n"
            "                           CUDA kernels, not built here)\n"
            "  --quick                  fewer sizes and shapes, shorter timing (< 2 min)\n"
            "  -o, --output FILE        device file (default host-cpu.json; its id is the\n"
            "                           file name without .json)\n"
            "      --threads N          cores to calibrate for (default: all)\n"
            "      --measurements FILE  every measurement as CSV (default: next to the\n"
            "                           device file, FILE.measurements.csv)\n"
            "  -h, --help               this text\n\n"
            "Then: xpusim validate --backend cpu -d FILE  (runs a real BERT training step\n"
            "and kernels at shapes the fit never saw, predicted vs measured).\n"
            "The default run takes a few minutes; the host should be otherwise idle.\n");
}

/* The command line, space-separated, for provenance. */
static void join_args(int argc, char **argv, char *dst, size_t size)
{
    size_t used = (size_t)snprintf(dst, size, "xpusim");
    for (int i = 0; i < argc && used < size; i++)
        used += (size_t)snprintf(dst + used, size - used, " %s", argv[i]);
}

static int cmd_calibrate(int argc, char **argv)
{
    static const struct option longs[] = {
        {"backend", required_argument, 0, 'b'}, {"quick", no_argument, 0, 'q'},
        {"output", required_argument, 0, 'o'},  {"threads", required_argument, 0, 't'},
        {"measurements", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *backend = NULL;
    xs_cpu_cal_opts o = {0, 0, "host-cpu.json", NULL, NULL, stderr};
    optind = 1;
    opterr = 0;
    int c;
    char msg[512];
    while ((c = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'b': backend = optarg; break;
        case 'q': o.quick = 1; break;
        case 'o': o.out = optarg; break;
        case 'm': o.measurements = optarg; break;
        case 't': {
            int64_t t;
            if (parse_dim("threads", optarg, 4096, &t))
                return EXIT_USAGE;
            o.threads = (int)t;
            break;
        }
        case 'h': usage_calibrate(stdout); return 0;
        default: return bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return extra_argument(argv[0], argv[optind]);
    if (!backend)
        return fail(EXIT_USAGE, "calibrate: give --backend cpu (see --help)");
    if (strcmp(backend, "cpu") != 0) {
        snprintf(msg, sizeof msg,
                 "calibrate: --backend must be cpu (the only backend with kernels built on "
                 "this machine), got '%s'",
                 backend);
        return fail(EXIT_USAGE, msg);
    }
    size_t len = strlen(o.out);
    if (len < 6 || strcmp(o.out + len - 5, ".json") != 0) {
        snprintf(msg, sizeof msg, "calibrate: -o must name a .json device file, got '%s'",
                 o.out);
        return fail(EXIT_USAGE, msg);
    }
    char command[1024];
    join_args(argc, argv, command, sizeof command);
    o.command = command;
    xs_error err;
    if (xs_cpu_calibrate(&o, &err))
        return fail_err(&err);
    return 0;
}


static int cmd_gemm(int argc, char **argv)
{
    static const struct option longs[] = {
        {"device", required_argument, 0, 'd'}, {"m", required_argument, 0, 'm'},
        {"n", required_argument, 0, 'n'},      {"k", required_argument, 0, 'k'},
        {"batch", required_argument, 0, 'b'},  {"dtype", required_argument, 0, 't'},
        {"ta", no_argument, 0, 'A'},           {"tb", no_argument, 0, 'B'},
        {"format", required_argument, 0, 'f'}, {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {"sweep", required_argument, 0, 'w'},
        {0, 0, 0, 0}};
    const char *device = DEFAULT_DEVICE, *output = NULL, *sweep = NULL;
    xs_gemm_shape g = {0, 0, 0, 1, 0, 0, XS_FP16, 2};
    xs_format fmt = XS_FMT_TABLE;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    char msg[256];
    /* 2^24 per dimension keeps m.n.k.batch exact in a double */
    const int64_t dim_max = (int64_t)1 << 24;
    while ((c = getopt_long(argc, argv, ":d:f:o:h", longs, NULL)) != -1 && rc == 0) {
        switch (c) {
        case 'd': device = optarg; break;
        case 'o': output = optarg; break;
        case 'w': sweep = optarg; break;
        case 'A': g.ta = 1; break;
        case 'B': g.tb = 1; break;
        case 'm': rc = parse_dim("m", optarg, dim_max, &g.m); break;
        case 'n': rc = parse_dim("n", optarg, dim_max, &g.n); break;
        case 'k': rc = parse_dim("k", optarg, dim_max, &g.k); break;
        case 'b': rc = parse_dim("batch", optarg, 1 << 20, &g.batch); break;
        case 't': {
            int idx = xs_choice_index("fp32|tf32|fp16|bf16", optarg);
            if (idx < 0) {
                snprintf(msg, sizeof msg, "--dtype must be one of fp32|tf32|fp16|bf16, got '%s'",
                         optarg);
                return fail(EXIT_USAGE, msg);
            }
            g.dtype = (xs_dtype)idx; /* the first four xs_dtype values, in order */
            g.out_bytes = xs_dtype_bytes(g.dtype);
            break;
        }
        case 'f': {
            int idx = xs_choice_index("table|json", optarg);
            if (idx < 0) {
                snprintf(msg, sizeof msg, "--format must be table or json, got '%s'", optarg);
                return fail(EXIT_USAGE, msg);
            }
            fmt = idx ? XS_FMT_JSON : XS_FMT_TABLE;
            break;
        }
        case 'h': usage_gemm(stdout); return 0;
        default: return bad_option(argv[0], c, argv);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return extra_argument(argv[0], argv[optind]);
    char dim = 0;
    long long from = 0, to = 0, step = 1;
    if (sweep) {
        char tail;
        int got = sscanf(sweep, "%c=%lld:%lld:%lld%c", &dim, &from, &to, &step, &tail);
        if (!(got == 3 || got == 4) || !strchr("mnk", dim) || from < 1 || to < from ||
            to > dim_max || step < 1 || (to - from) / step > 1000000) {
            snprintf(msg, sizeof msg,
                     "--sweep must look like n=1:4096 or k=64:8192:64 (m, n or k; at most a "
                     "million points), got '%s'", sweep);
            return fail(EXIT_USAGE, msg);
        }
        int64_t *d = dim == 'm' ? &g.m : dim == 'n' ? &g.n : &g.k;
        *d = from; /* the swept dimension needs no --m/--n/--k */
    }
    if (!g.m || !g.n || !g.k)
        return fail(EXIT_USAGE, "gemm: --m, --n and --k are required (see --help)");
    xs_error err;
    char path[PATH_MAX];
    xs_device dev;
    if (xs_resolve("devices", device, path, sizeof path, &err) || xs_dev_load(path, &dev, &err))
        return fail_err(&err);
    xs_gemm_engine e;
    xs_dev_gemm_engine(&dev, &e);
    xs_gemm_result r;
    xs_strbuf sb = {0};
    if (sweep) {
        int64_t *d = dim == 'm' ? &g.m : dim == 'n' ? &g.n : &g.k;
        xs_report_sweep_begin(&sb, fmt, dim);
        for (long long v = from; v <= to; v += step) {
            *d = v;
            if (xs_gemm_model(&e, &g, &r, &err)) {
                xs_sb_free(&sb);
                return fail_err(&err);
            }
            xs_report_sweep_row(&sb, fmt, &r, v, v + step > to);
        }
    } else {
        if (xs_gemm_model(&e, &g, &r, &err))
            return fail_err(&err);
        xs_report_gemm(&sb, fmt, &dev, &g, &r);
    }
    rc = deliver(&sb, output);
    xs_sb_free(&sb);
    return rc;
}

static int cmd_devices(int argc, char **argv)
{
    options o;
    int rc;
    if (begin(argc, argv, &o, "foh", usage_devices, &rc))
        return rc;
    xs_error err;
    xs_device *devs;
    size_t n;
    if (load_devices(NULL, &devs, &n, &err))
        return fail_err(&err);
    xs_strbuf sb = {0};
    xs_report_devices(&sb, o.format, devs, n);
    rc = deliver(&sb, o.output);
    xs_sb_free(&sb);
    free(devs);
    return rc;
}

static int cmd_scenarios(int argc, char **argv)
{
    options o;
    int rc;
    if (begin(argc, argv, &o, "h", usage_scenarios, &rc))
        return rc;
    xs_error err;
    char **ids;
    size_t n;
    if (xs_list_ids("scenarios", &ids, &n, &err))
        return fail_err(&err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[PATH_MAX];
        xs_scenario s;
        if (xs_resolve("scenarios", ids[i], path, sizeof path, &err) ||
            xs_scn_load(path, NULL, 0, &s, &err))
            rc = fail_err(&err);
        else
            printf("%-24s %s\n", s.id, s.description);
    }
    xs_ids_free(ids, n);
    return rc;
}

int main(int argc, char **argv)
{
    xs_paths_init(argv[0]);
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage_main(stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("xpusim " XPUSIM_VERSION "\n");
        return 0;
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"predict", cmd_predict},
                    {"workload", cmd_workload},
                    {"compare", cmd_compare},
                    {"gemm", cmd_gemm},
                    {"advise", cmd_advise},
                    {"validate", cmd_validate},
                    {"calibrate", cmd_calibrate},
                    {"devices", cmd_devices},
                    {"scenarios", cmd_scenarios}};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    char msg[256];
    snprintf(msg, sizeof msg,
             "unknown command '%s' (commands: predict, compare, gemm, advise, validate, calibrate, workload, devices, "
             "scenarios; see "
             "xpusim --help)", argv[1]);
    return fail(EXIT_USAGE, msg);
}
