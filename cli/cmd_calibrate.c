/* cmd_calibrate.c — `xpusim calibrate --backend NAME`: run a calibration
 * backend (calibrate/backends.h) and write the device file it fits. */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends.h"
#include "kernel_class.h"
#include "numparse.h"
#include "targets.h"
#include "trace_calibrate.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim calibrate --backend NAME [--quick] [-o FILE] [--threads N]\n"
            "                        [--measurements FILE.csv] [--force]\n"
            "       xpusim calibrate --backend cuda [--quick] [-o FILE] [--measurements FILE.csv]\n"
            "                        [--base DEVICE] [--device-index N] [--force]\n"
            "       xpusim calibrate --backend cuda --from-measurements FILE.csv [--base DEVICE]\n"
            "                        -o FILE [--force]\n"
            "       xpusim calibrate --backend trace --trace T.json -d DEVICE -s SCENARIO\n"
            "                        [--set K=V]... [-o FILE] [--force]\n"
            "       xpusim calibrate --backend trace --simulate-trace T.json -d DEVICE\n"
            "                        -s SCENARIO [--set K=V]... [--step-s S | --samples-per-s R]\n"
            "                        [--class-factor CLASS=X]... [--steps N] [--force]\n\n"
            "Runs real kernels on this machine and fits a device class's cost model to\n"
            "them, writing a device file that predict, compare, gemm and validate accept\n"
            "like the datasheet devices. The device file and the measurements are written\n"
            "to a temporary name and renamed, so an interrupted run leaves no broken file.\n\n"
            "  --backend NAME           what to calibrate:\n");
    const xs_cal_backend *b;
    for (int i = 0; (b = xs_cal_backend_at(i)) != NULL; i++)
        fprintf(out, "                             %-6s %s, device class %s\n", b->name,
                b->summary, b->device_class);
    fprintf(out,
            "  --quick                  fewer sizes and shapes, shorter timing (cpu, cuda)\n"
            "  -o, --output FILE        device file (its id is the file name without .json;\n"
            "                           default: the backend's, below)\n"
            "      --threads N          cores to calibrate for (default: all; cpu)\n"
            "      --measurements FILE  every measurement as CSV (default: next to the\n"
            "                           device file, FILE.measurements.csv; cpu, cuda)\n"
            "      --base DEVICE        the gpu device file the fit starts from (cuda;\n"
            "                           default: the shipped file the GPU's name maps to)\n"
            "      --device-index N     the CUDA device to measure (cuda; default 0)\n"
            "      --from-measurements FILE.csv  fit a recorded cuda run, no GPU needed (cuda)\n"
            "      --trace T.json       the profiler trace to calibrate from (trace)\n"
            "  -d, --device DEVICE      the device file (id or path) the trace ran on (trace)\n"
            "  -s, --scenario SCENARIO  the scenario the trace ran (trace)\n"
            "      --set KEY=VALUE      scenario override, repeatable (trace)\n"
            "      --simulate-trace T.json  write a simulated trace instead (trace; below)\n"
            "      --step-s S           its step time in seconds\n"
            "      --samples-per-s R    or its measured rate: step = samples per step / R\n"
            "      --class-factor CLASS=X  slow the class's kernels by X (repeatable)\n"
            "      --steps N            ProfilerStep spans it holds (default 3)\n"
            "      --force              replace a device or measurements file shipped with\n"
            "                           xpusim or not written by calibrate (without it such\n"
            "                           files are refused before anything is measured)\n"
            "  -h, --help               this text\n\n"
            "Then: xpusim validate --backend NAME -d FILE  (runs real kernels and a training\n"
            "step at shapes the fit never saw, predicted vs measured).\n");
    for (int i = 0; (b = xs_cal_backend_at(i)) != NULL; i++)
        fprintf(out, "\n--backend %s (default -o %s):\n%s", b->name, b->default_out,
                b->calibrate_doc);
    fprintf(out, "\nExamples:\n"
                 "  xpusim calibrate --backend cpu -o my-host.json\n"
                 "  xpusim calibrate --backend cpu --quick --threads 1 -o my-host-1core.json\n"
                 "  xpusim predict -d my-host.json -s bert-base-squad --summary\n"
                 "  xpusim calibrate --backend cuda -o my-h100.json\n"
                 "  xpusim calibrate --backend cuda --from-measurements my-h100.measurements.csv \\\n"
                 "      -o my-h100-refit.json\n"
                 "  xpusim calibrate --backend trace --trace step.json -d a100-sxm4-80gb \\\n"
                 "      -s bert-base-squad --set train.batch=64 -o my-a100.json\n"
                 "  xpusim predict -d my-a100.json -s bert-base-squad --set train.batch=128\n"
                 "  xpusim calibrate --backend trace --simulate-trace sim.json -d h100-sxm5-80gb \\\n"
                 "      -s bert-base-squad --set train.batch=320 --samples-per-s 858\n");
}

/* The command line, space-separated, for provenance. */
static void join_args(int argc, char **argv, char *dst, size_t size)
{
    size_t used = (size_t)snprintf(dst, size, "xpusim");
    for (int i = 0; i < argc && used < size; i++)
        used += (size_t)snprintf(dst + used, size - used, " %s", argv[i]);
}

/* --class-factor CLASS=X into f[class]; 0 or an exit code. */
static int parse_class_factor(const char *kv, double *f)
{
    char msg[512];
    const char *eq = strchr(kv, '=');
    double x = 0;
    int bad = !eq || xs_parse_double(eq + 1, &x);
    int c = 0;
    for (; eq && c < XS_KC_OTHER; c++)
        if (strlen(xs_kclass_name(c)) == (size_t)(eq - kv) &&
            strncmp(kv, xs_kclass_name(c), (size_t)(eq - kv)) == 0)
            break;
    if (bad || c == XS_KC_OTHER || !(x >= 0.1 && x <= 10)) {
        snprintf(msg, sizeof msg,
                 "calibrate: --class-factor must be CLASS=X with CLASS one of gemm, attention, "
                 "softmax, norm, elementwise, copy, reduce, embed, loss, optimizer, comm and X "
                 "in [0.1, 10], got '%s'",
                 kv);
        return cli_fail(EXIT_USAGE, msg);
    }
    f[c] = x;
    return 0;
}

/* A positive number of seconds or samples a second; 0 or an exit code. */
static int parse_positive(const char *name, const char *text, double *out)
{
    double x = 0;
    if (xs_parse_double(text, &x) || !(x > 0)) {
        char msg[256];
        snprintf(msg, sizeof msg, "calibrate: --%s must be a number > 0, got '%s'", name, text);
        return cli_fail(EXIT_USAGE, msg);
    }
    *out = x;
    return 0;
}

/* A simulated trace replaces only a simulated trace, unless forced. */
static int simulate_target_check(const char *path, int force)
{
    struct stat st;
    if (force || stat(path, &st) != 0)
        return 0;
    xs_error err;
    cJSON *doc = NULL;
    int mine = xs_json_load(path, &doc, &err) == XS_OK &&
               cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "xpusim_simulated"));
    cJSON_Delete(doc);
    if (mine)
        return 0;
    char msg[4200];
    snprintf(msg, sizeof msg,
             "calibrate: %s exists and is not a trace written by --simulate-trace; choose "
             "another name or add --force to replace it",
             path);
    return cli_fail(EXIT_USAGE, msg);
}

int cli_calibrate(int argc, char **argv)
{
    static const struct option longs[] = {
        {"backend", required_argument, 0, 'b'},      {"quick", no_argument, 0, 'q'},
        {"output", required_argument, 0, 'o'},       {"threads", required_argument, 0, 't'},
        {"measurements", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'},
        {"force", no_argument, 0, 'F'},              {"trace", required_argument, 0, 'T'},
        {"device", required_argument, 0, 'd'},       {"scenario", required_argument, 0, 's'},
        {"set", required_argument, 0, 'S'},          {"simulate-trace", required_argument, 0, 'W'},
        {"step-s", required_argument, 0, 'P'},       {"samples-per-s", required_argument, 0, 'R'},
        {"class-factor", required_argument, 0, 'C'}, {"steps", required_argument, 0, 'N'},
        {"base", required_argument, 0, 'B'},         {"from-measurements", required_argument, 0, 'M'},
        {"device-index", required_argument, 0, 'I'}, {0, 0, 0, 0}};
    const char *backend = NULL, *sets[MAX_SETS], *simulate = NULL;
    xs_cal_run_opts o = {.log = stderr};
    xs_trace_sim_opts sim = {.steps = 3, .log = stderr};
    optind = 1;
    opterr = 0;
    int c, force = 0, nsets = 0, cpu_only = 0, sim_only = 0, cuda_only = 0, threads_given = 0,
        meas_given = 0;
    char msg[512];
    while ((c = getopt_long(argc, argv, ":o:hd:s:", longs, NULL)) != -1) {
        switch (c) {
        case 'b': backend = optarg; break;
        case 'q': o.quick = 1; cpu_only = 1; break;
        case 'o': o.out = optarg; break;
        case 'm': o.measurements = optarg; cpu_only = 1; meas_given = 1; break;
        case 'F': force = 1; break;
        case 'B': o.base = optarg; cuda_only = 1; break;
        case 'M': o.from_measurements = optarg; cuda_only = 1; break;
        case 'I': {
            char *end;
            long idx = strtol(optarg, &end, 10);
            if (!optarg[0] || *end || idx < 0 || idx > 63) {
                snprintf(msg, sizeof msg, "calibrate: --device-index must be an integer in 0..63, "
                                          "got '%.40s'", optarg);
                return cli_fail(EXIT_USAGE, msg);
            }
            o.device_index = (int)idx;
            cuda_only = 1;
            break;
        }
        case 'T': o.trace = optarg; break;
        case 'd': o.device = optarg; break;
        case 's': o.scenario = optarg; break;
        case 'S':
            if (cli_add_set(sets, &nsets, optarg))
                return EXIT_USAGE;
            break;
        case 'W': simulate = optarg; break;
        case 'P':
            if (parse_positive("step-s", optarg, &sim.step_s))
                return EXIT_USAGE;
            sim_only = 1;
            break;
        case 'R':
            if (parse_positive("samples-per-s", optarg, &sim.samples_per_s))
                return EXIT_USAGE;
            sim_only = 1;
            break;
        case 'C':
            if (parse_class_factor(optarg, sim.factor))
                return EXIT_USAGE;
            sim_only = 1;
            break;
        case 'N': {
            int64_t n;
            if (cli_parse_dim("steps", optarg, 100, &n))
                return EXIT_USAGE;
            sim.steps = (int)n;
            sim_only = 1;
            break;
        }
        case 't': {
            int64_t t;
            if (cli_parse_dim("threads", optarg, 4096, &t))
                return EXIT_USAGE;
            o.threads = (int)t;
            cpu_only = 1;
            threads_given = 1;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return cli_extra_argument(argv[0], argv[optind]);
    int rc;
    const xs_cal_backend *b = cli_cal_backend("calibrate", backend, &rc);
    if (!b)
        return rc;
    int is_trace = strcmp(b->name, "trace") == 0;
    o.sets = sets;
    o.nsets = nsets;
    if (!is_trace && (o.trace || o.device || o.scenario || nsets || simulate || sim_only)) {
        snprintf(msg, sizeof msg,
                 "calibrate: --trace, -d, -s, --set and the --simulate-trace options go with "
                 "--backend trace, not --backend %s",
                 b->name);
        return cli_fail(EXIT_USAGE, msg);
    }
    int is_cuda = strcmp(b->name, "cuda") == 0;
    if (cuda_only && !is_cuda)
        return cli_fail(EXIT_USAGE, "calibrate: --base, --from-measurements and --device-index go "
                                    "with --backend cuda");
    if (is_cuda && threads_given)
        return cli_fail(EXIT_USAGE, "calibrate --backend cuda: --threads goes with --backend cpu");
    if (is_cuda && o.from_measurements && (o.quick || o.device_index || meas_given))
        return cli_fail(EXIT_USAGE, "calibrate --backend cuda: --from-measurements runs nothing; "
                                    "--quick, --device-index and --measurements go with a "
                                    "measuring run");
    if (is_trace && cpu_only)
        return cli_fail(EXIT_USAGE, "calibrate: --quick, --threads and --measurements do not go "
                                    "with --backend trace (it runs no kernel)");
    if (is_trace && (!o.device || !o.scenario))
        return cli_fail(EXIT_USAGE,
                        "calibrate --backend trace: give -d DEVICE and -s SCENARIO, the device "
                        "file and the scenario the trace ran");
    char command[1024];
    join_args(argc, argv, command, sizeof command);
    o.command = command;
    xs_error err;
    if (is_trace && simulate) {
        if (o.trace || o.out)
            return cli_fail(EXIT_USAGE, "calibrate: --simulate-trace writes a trace; --trace and "
                                        "-o go with a calibration");
        if (sim.step_s > 0 && sim.samples_per_s > 0)
            return cli_fail(EXIT_USAGE, "calibrate: give --step-s or --samples-per-s, not both");
        if ((rc = simulate_target_check(simulate, force)))
            return rc;
        sim.device = o.device;
        sim.scenario = o.scenario;
        sim.sets = sets;
        sim.nsets = nsets;
        sim.out = simulate;
        sim.command = command;
        return xs_trace_simulate(&sim, &err) ? cli_fail_err(&err) : 0;
    }
    if (sim_only)
        return cli_fail(EXIT_USAGE, "calibrate: --step-s, --samples-per-s, --class-factor and "
                                    "--steps go with --simulate-trace");
    if (is_trace && !o.trace)
        return cli_fail(EXIT_USAGE, "calibrate --backend trace: give --trace T.json, the "
                                    "profiler trace to calibrate from (or --simulate-trace to "
                                    "write one)");
    char out[4096];
    if (!o.out && is_trace) { /* <device id>-cal.json, here */
        const char *base = strrchr(o.device, '/');
        base = base ? base + 1 : o.device;
        size_t n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0)
            n -= 5;
        snprintf(out, sizeof out, "%.*s-cal.json", (int)n, base);
        o.out = out;
    }
    if (!o.out)
        o.out = b->default_out;
    size_t len = strlen(o.out);
    if (len < 6 || strcmp(o.out + len - 5, ".json") != 0) {
        snprintf(msg, sizeof msg, "calibrate: -o must name a .json device file, got '%s'",
                 o.out);
        return cli_fail(EXIT_USAGE, msg);
    }
    char meas[4096];
    if (!o.measurements && !is_trace) {
        xs_cal_measurements_path(o.out, meas, sizeof meas);
        o.measurements = meas;
    }
    /* the host, then the files: nothing is opened before both pass */
    /* a recorded run is fitted on any host, and writes no measurements */
    if (is_cuda && o.from_measurements)
        return xs_cal_targets_check(o.out, NULL, force, &err) || b->calibrate(&o, &err)
                   ? cli_fail_err(&err)
                   : 0;
    if (b->host_check(&err) || xs_cal_targets_check(o.out, o.measurements, force, &err) ||
        b->calibrate(&o, &err))
        return cli_fail_err(&err);
    return 0;
}
