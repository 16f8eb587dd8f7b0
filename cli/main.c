/* main.c — the `xpusim` command: finds the sub-command in one table (which
 * also writes the command list of --help and of the unknown-command error)
 * and runs it. Exit codes: 0 success, 1 bad input data or a failed write,
 * 2 bad usage. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "paths.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *summary;
} COMMANDS[] = {
    {"predict", cli_predict, "per-op breakdown of one training step and totals for the run"},
    {"compare", cli_compare, "one scenario on many devices: throughput, run hours, kWh, $"},
    {"sweep", cli_sweep, "a grid of scenario variants x devices, on all cores, as CSV or JSON"},
    {"steps", cli_steps, "the optimisation waterfall: AMP, fused optimizer, fused kernels,\n"
                         "              flash attention, a larger batch, one after another"},
    {"plot", cli_plot, "figures (PNG + SVG, gnuplot): time by op kind, cost vs time,\n"
                       "              roofline, waterfall"},
    {"fit", cli_fit, "the largest micro-batch that fits a device, and the fastest\n"
                     "              micro-batch x grad_accum for a global batch"},
    {"gemm", cli_gemm, "one GEMM: time, TFLOP/s, chosen tile, waves, bound"},
    {"advise", cli_advise, "nearby model shapes that run faster on a device"},
    {"validate", cli_validate,
     "predicted vs measured: measured runs (CSV), profiler traces, or\n"
     "              a real BERT step on this CPU (--backend cpu)"},
    {"calibrate", cli_calibrate,
     "fit a device file from measurements: this host's CPU, a GPU\n"
     "              (cuda), or a profiler trace of a run (trace)"},
    {"threads", cli_threads, "the best thread count per layer of an LSTM or encoder on a CPU,\n"
                             "              fixed and dynamic plans; --run times them for real"},
    {"workload", cli_workload, "the op list of one step (shapes, FLOPs, bytes), no device"},
    {"devices", cli_devices, "list the devices and their datasheet figures"},
    {"scenarios", cli_scenarios, "list the built-in fine-tuning scenarios"},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *out)
{
    fprintf(out, "xpusim " XPUSIM_VERSION " — predicts the time, energy and cost of Transformer\n"
                 "fine-tuning, kernel by kernel, on NVIDIA GPUs, Google TPUs and this\n"
                 "host's CPU.\n\n"
                 "Usage: xpusim COMMAND [OPTIONS]   (xpusim COMMAND --help for details)\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-11s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out,
            "\nExamples:\n"
            "  xpusim predict                                   # %s on %s\n"
            "  xpusim predict -d h100-sxm5-80gb -s bert-base-squad --set train.batch=64\n"
            "  xpusim compare -s bert-base-squad --set train.batch=32\n"
            "  xpusim predict -d t4 -s gpt2-medium-finetune --set train.precision=amp_fp16 "
            "--format json -o t4.json\n\n"
            "Devices and scenarios are ids (files in devices/ and scenarios/) or paths;\n"
            "'-' reads one of them (or a --measured CSV, a --trace) from standard input.\n"
            "Set XPUSIM_DATA to the source folder if xpusim cannot find them.\n",
            DEFAULT_SCENARIO, DEFAULT_DEVICE);
}

/* How many file options of argv read standard input ("-s -", "--trace=-").
 * It holds one document, so a command may give it to one option only:
 * "-s - -d -" would hand the scenario to the device loader too. */
static int stdin_readers(int argc, char **argv)
{
    static const char *const opts[] = {"-s", "--scenario", "-d", "--device", "--trace",
                                       "--measured"};
    int n = 0;
    for (int i = 1; i < argc; i++)
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            size_t len = strlen(opts[k]);
            if (strncmp(argv[i], opts[k], len) != 0)
                continue;
            const char *rest = argv[i] + len;
            if (*rest == '\0' && i + 1 < argc && strcmp(argv[i + 1], "-") == 0)
                n++;
            else if (strcmp(rest, "=-") == 0 || (len == 2 && strcmp(rest, "-") == 0))
                n++; /* --trace=- or -s- */
        }
    return n;
}

int main(int argc, char **argv)
{
    xs_paths_init(argv[0]);
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("xpusim " XPUSIM_VERSION "\n");
        return 0;
    }
    if (stdin_readers(argc, argv) > 1)
        return cli_fail(EXIT_USAGE, "standard input ('-') holds one file: give it to one of "
                                    "-s, -d, --trace and --measured only");
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 1, argv + 1);
    char msg[512];
    int used = snprintf(msg, sizeof msg, "unknown command '%s' (commands: ", argv[1]);
    for (size_t i = 0; i < NCOMMANDS && used < (int)sizeof msg; i++)
        used += snprintf(msg + used, sizeof msg - (size_t)used, "%s%s", i ? ", " : "",
                         COMMANDS[i].name);
    if (used < (int)sizeof msg)
        snprintf(msg + used, sizeof msg - (size_t)used, "; see xpusim --help)");
    return cli_fail(EXIT_USAGE, msg);
}
