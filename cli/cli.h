/* cli.h — what the `xpusim` sub-commands share: exit codes, error lines,
 * the common options (-d -s --set --format -o --tolerance), writing a
 * report, and the commands themselves (one file each, cmd_*.c). The CLI is
 * the only place that decides exit codes and the only part of xpusim that
 * reaches calibrate/; the library (sim/) never includes this folder. */
#ifndef XS_CLI_H
#define XS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "backends.h"
#include "device.h"
#include "error.h"
#include "report.h"
#include "schema.h"
#include "steps.h"
#include "strbuf.h"

#define XPUSIM_VERSION "0.1.0"
#define DEFAULT_DEVICE "a100-sxm4-80gb"
#define DEFAULT_SCENARIO "bert-large-squad"
#define MAX_SETS 64

/* EXIT_NOHW: the hardware or library the command needs (a CUDA GPU,
 * libxscuda.so, NVML, AVX-512) is not on this host. */
/* EXIT_NOFIT: the prediction is made, but the step needs more device memory
 * than the device has (predict without --ignore-memory). */
enum { EXIT_DATA = 1, EXIT_USAGE = 2, EXIT_NOHW = 3, EXIT_NOFIT = 4 };

/* Print "xpusim: error: msg" and return code. */
int cli_fail(int code, const char *msg);
/* The same for a library error: usage errors exit 2, missing hardware 3,
 * data errors 1. */
int cli_fail_err(const xs_error *err);
/* getopt's report of a bad option of command cmd: c is ':' (a value is
 * missing) or anything else (an unknown option). */
int cli_bad_option(const char *cmd, int c, char **argv);
/* A word left over after a command's options. */
int cli_extra_argument(const char *cmd, const char *arg);

/* The options most commands share; device and scenario stay NULL unless
 * given (the command picks its default). */
typedef struct {
    const char *device, *scenario, *output;
    const char *sets[MAX_SETS];
    int nsets;
    xs_format format;
    double tolerance; /* advise: percent of the parameter count */
    const char *prices[MAX_SETS]; /* --price DEV=USD_PER_HOUR */
    int nprices;
    int all;     /* --all: the host CPUs too */
    int summary; /* --summary: only the answer */
    int ignore_memory;    /* --ignore-memory: a step that does not fit exits 0 */
    int64_t global_batch; /* --global-batch N: samples an optimizer step; 0: not given */
    int architecture; /* advise --architecture: model shapes of a pretrained model too */
    const char *varies[MAX_SETS]; /* --vary KEY=V1,V2,...|A:B[:STEP] */
    int nvaries;
    const char *weights;  /* --weights time=W,energy=W,cost=W,util=W; NULL: not given */
    double budget_usd;    /* --budget-usd X; 0: not given */
    double deadline_h;    /* --deadline-h H; 0: not given */
    int band;             /* sweep --band: the slow and fast corners too */
    int format_given;     /* --format was given (sweep has no table) */
    int help;
} cli_options;

/* Parse the shared options a command allows (getopt letters in allowed:
 * d s S f o h T, P for --price, A for --all, U for --summary, I for
 * --ignore-memory, G for --global-batch, R for --architecture, V for --vary,
 * W for --weights, B for --budget-usd, H for --deadline-h, N for --band) and print its
 * help if asked. Returns 1 when the command is done (help shown or bad
 * usage), with *rc its exit code. */
int cli_begin(int argc, char **argv, cli_options *o, const char *allowed,
              void (*usage)(FILE *), int *rc);

/* Append a --set KEY=VALUE (sets holds MAX_SETS), or a usage error. */
int cli_add_set(const char **sets, int *n, const char *kv);
/* --format's value (table|json|csv), or a usage error. */
int cli_parse_format(const char *text, xs_format *fmt);
/* --format's value for a command without CSV (table|json), or a usage error. */
int cli_parse_table_json(const char *text, xs_format *fmt);

/* Write the report to output (atomically) or stdout; 0 or an exit code. */
int cli_deliver(xs_strbuf *sb, const char *output);

/* A positive integer option value in [1, max], or a usage error. */
int cli_parse_dim(const char *name, const char *text, int64_t max, int64_t *out);

/* Load every device named in list ("a, b,c": trimmed, a device named twice
 * kept once), or when list is NULL every shipped device — accelerators only
 * unless all. *out (count of them) is the caller's to free. */
int cli_load_devices(const char *list, int all, xs_device **out, size_t *count, xs_error *err);

/* Apply the --price DEV=USD_PER_HOUR overrides to the devices (each must
 * name one of them); 0 or an exit code after one error line. */
int cli_apply_prices(const cli_options *o, xs_device *devs, size_t n);

/* The calibration backend called name for command cmd, or NULL after a
 * usage error (a missing or unknown name, listing the known) with *rc its
 * exit code. */
const xs_cal_backend *cli_cal_backend(const char *cmd, const char *name, int *rc);

/* The scenario keys --set accepts, with what each expects. */
void cli_print_set_keys(FILE *out);
/* Schema rows as help lines. */
void cli_print_fields(FILE *out, const xs_field *f, size_t n);

int cli_predict(int argc, char **argv);
int cli_workload(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_fit(int argc, char **argv);
int cli_gemm(int argc, char **argv);
int cli_advise(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_devices(int argc, char **argv);
int cli_scenarios(int argc, char **argv);
int cli_steps(int argc, char **argv);
int cli_plot(int argc, char **argv);
int cli_threads(int argc, char **argv);

/* The optimisation waterfall of scenario on device (ids or paths; NULL:
 * the defaults) with the user's overrides, --order (NULL: the default
 * order) and --batch (0: the largest that fits): 0, or an exit code after
 * one error line. (cmd_steps.c; `xpusim plot waterfall` draws it.) */
int cli_steps_eval(const char *device, const char *scenario, const char *const *sets, int nsets,
                   const char *order, int64_t batch, xs_steps *out);

#endif
