/* xpusim.h — the embeddable xpusim engine: predict the time, energy and
 * dollar cost of a Transformer fine-tuning step and run, op by op, from a
 * device and a scenario (ids of the shipped files, or paths), in-process.
 *
 *   xs_status st;
 *   xs_device_h *dev = NULL;
 *   xs_scenario_h *scn = NULL;
 *   const char *sets[] = {"train.batch=16"};
 *   xs_summary sum;
 *   if (xs_device_open("a100-sxm4-80gb", &dev, &st) == XS_STATUS_OK &&
 *       xs_scenario_open("bert-large-squad", sets, 1, &scn, &st) == XS_STATUS_OK &&
 *       xs_predict_run(dev, scn, &sum, NULL, NULL, &st) == XS_STATUS_OK)
 *       printf("%.1f samples/s\n", sum.samples_per_s);
 *   else
 *       fprintf(stderr, "%s\n", st.msg);
 *   xs_scenario_free(scn);
 *   xs_device_free(dev);
 *
 * Link with `pkg-config --cflags --libs xpusim`. This is the only header
 * installed; the library's internal headers are not part of its interface.
 *
 * Data: the devices/ and scenarios/ ids are looked up in $XPUSIM_DATA, else
 * at or above the executable's folder, else in PREFIX/share/xpusim beside
 * the PREFIX/lib/libxpusim.so that was loaded. A program linked with the
 * static library is its own code: unless it is installed in PREFIX/bin,
 * set XPUSIM_DATA (`pkg-config --variable=datadir xpusim` names it).
 *
 * Ownership, as cJSON's header states it: a pointer a function returns
 * through an out-argument or as its value belongs to the caller, who frees
 * it with the function named beside it (xs_device_free, xs_scenario_free,
 * xs_free); every free function accepts NULL and does nothing then, so
 * freeing a pointer that an opening function left NULL on error is safe.
 * Pointers the caller passes in (ids, paths, --set strings, handles) are
 * only read during the call and never kept: the caller may free them as
 * soon as it returns.
 *
 * Errors: every function that can fail returns an xs_status_code (0 on
 * success) and fills the caller's xs_status, when one is given (it may be
 * NULL), with the code and a message a user can act on: the same line the
 * xpusim command prints after "xpusim: error: ". The status is the
 * caller's own struct rather than a last error kept per handle or per
 * thread: the handles stay immutable, so that one can be shared, and an
 * open that fails has no handle to keep it in.
 *
 * Threads: a handle is immutable once opened, so any number of threads
 * may predict with the same device and scenario handles at once; each
 * call's results are its own. The library keeps no mutable global state
 * but the GEMM memo (one per thread, _Thread_local, so threads share
 * nothing and take no lock) and standard input, which a handle opened
 * from "-" reads once, under a lock. xs_sweep and xs_compare run their
 * grid on all cores (OpenMP) themselves.
 *
 * Versions: XS_LIB_VERSION_* are those of this header; xs_lib_version()
 * is the library's. The shared library's soname is libxpusim.so.MAJOR: a
 * change that breaks a program built against an older header (a function
 * removed or changed, a field of a public struct moved, removed or added)
 * bumps MAJOR, and with it the soname; a function added bumps MINOR; a
 * fix that changes no declaration bumps PATCH. */
#ifndef XPUSIM_H
#define XPUSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XS_LIB_VERSION_MAJOR 0
#define XS_LIB_VERSION_MINOR 1
#define XS_LIB_VERSION_PATCH 0

/* The library's version, "MAJOR.MINOR.PATCH" (static storage: not freed). */
const char *xs_lib_version(void);

/* ---- errors -------------------------------------------------------------- */

typedef enum {
    XS_STATUS_OK = 0,
    XS_STATUS_IO = -1,          /* a file could not be read or found */
    XS_STATUS_JSON = -2,        /* malformed JSON */
    XS_STATUS_FIELD = -3,       /* a missing, unknown or mistyped field (or --set key) */
    XS_STATUS_RANGE = -4,       /* a value outside its allowed range */
    XS_STATUS_NOMEM = -5,
    XS_STATUS_UNSUPPORTED = -6, /* valid input that no model handles (yet) */
    XS_STATUS_ARG = -7,         /* a bad argument: an unknown id, a malformed option */
    XS_STATUS_NOHW = -8         /* hardware or a library the call needs is missing */
} xs_status_code;

typedef struct {
    int code;       /* an xs_status_code */
    char msg[1024]; /* one line, no newline; "" when code is XS_STATUS_OK */
    /* when a document is checked whole (a scenario), the further problems
     * after msg's, one a line; "" when none */
    char more[3072];
} xs_status;

/* Free what the library handed out with this name in its comment (JSON
 * text, row arrays). NULL is fine. */
void xs_free(void *p);

/* ---- devices and scenarios ------------------------------------------------ */

/* Opaque handles, immutable once opened. */
typedef struct xs_device_h xs_device_h;
typedef struct xs_scenario_h xs_scenario_h;

/* Open a device: an id of the shipped devices ("a100-sxm4-80gb", case
 * folded) or a path to a device JSON file ('/' in it, or ending in .json).
 * On success *out is the caller's (xs_device_free); on error *out is NULL. */
int xs_device_open(const char *id_or_path, xs_device_h **out, xs_status *st);
void xs_device_free(xs_device_h *dev);
/* The device's id (owned by dev, valid until it is freed). */
const char *xs_device_id(const xs_device_h *dev);

/* Open a scenario (an id or a path, as for devices) with nsets overrides
 * "KEY=VALUE" (the command's --set; sets may be NULL when nsets is 0) and
 * build its op list: a bad file, key or value fails here. On success
 * *out is the caller's (xs_scenario_free); on error *out is NULL. */
int xs_scenario_open(const char *id_or_path, const char *const *sets, int nsets,
                     xs_scenario_h **out, xs_status *st);
void xs_scenario_free(xs_scenario_h *scn);
/* The scenario's id (owned by scn, valid until it is freed). */
const char *xs_scenario_id(const xs_scenario_h *scn);

/* The ids of the shipped devices (folder "devices") or scenarios
 * ("scenarios"), sorted, as one block: *ids is an array of *n strings
 * stored in the same block; free it once, with xs_free(*ids). */
int xs_list(const char *folder, char ***ids, size_t *n, xs_status *st);

/* ---- one prediction -------------------------------------------------------- */

/* The answer for one scenario on one device (per device when the scenario
 * runs data-parallel). Memory in GB of 2^30 bytes. */
typedef struct {
    double step_time_s;           /* one optimizer step */
    double step_time_low_s, step_time_high_s; /* on the device's fast and slow corners */
    double samples_per_s, tokens_per_s;
    double mfu;                   /* matmul FLOP/s over the engine's dense peak, 0..1 */
    double avg_power_w;
    double step_energy_j;
    double host_wait_s;           /* device idle waiting for the host, in the step */
    int64_t steps;                /* optimizer steps of the whole run */
    double run_time_s, run_energy_kwh, run_cost_usd;
    double run_cost_low_usd, run_cost_high_usd;
    double memory_gb, capacity_gb;
    int fits;                     /* 1: the step fits the device's memory */
    size_t nops;                  /* ops of the step (rows xs_predict_run gives) */
} xs_summary;

/* One op of the step, totals per step (summed over its calls, as the JSON
 * ops are): the op rows' time_s plus the summary's host_wait_s is the step
 * time. Plain values, no pointers. */
typedef struct {
    char name[48];
    int layer;            /* Transformer layer, -1 outside the layers */
    char phase[8];        /* fwd, bwd, opt, comm */
    char kind[16];        /* gemm, bgemm, attention, eltwise, norm, ... */
    char dtype[16];       /* the format it computes in */
    int64_t m, n, k, batch; /* GEMM shape (0 for other kinds) */
    int64_t calls;        /* per step */
    double flops, bytes;  /* per step */
    double time_s, energy_j; /* per step */
    char bound[12];       /* compute, memory, launch, latency */
} xs_op_row;

/* Predict scn on dev. sum (may be NULL) gets the answer; with ops not NULL,
 * *ops gets the step's op rows (*nops of them), the caller's to free with
 * xs_free. A step that does not fit the device's memory is predicted all
 * the same (sum->fits says so). */
int xs_predict_run(const xs_device_h *dev, const xs_scenario_h *scn, xs_summary *sum,
                   xs_op_row **ops, size_t *nops, xs_status *st);

/* The whole prediction as the JSON text `xpusim predict --format json`
 * prints for the same device and scenario, byte for byte: a NUL-terminated
 * string the caller frees with xs_free, or NULL on error. */
char *xs_predict_json(const xs_device_h *dev, const xs_scenario_h *scn, xs_status *st);

/* ---- many predictions --------------------------------------------------------- */

/* One (grid point, device) of a sweep or a comparison. Its strings lie in
 * the block of the row array itself: freeing the array frees them. */
typedef struct {
    const char *device;    /* the device's id */
    const char *point;     /* the varied keys' values, "KEY=V KEY=V" ("" with none) */
    int predicted;         /* 1: a prediction was made (fits or not) */
    int fits;              /* 1: it fits the device's memory; the run figures are 0 if not */
    const char *reason;    /* NULL when the run can start; else why not */
    double step_time_s, samples_per_s, tokens_per_s, mfu, avg_power_w;
    double run_time_s, run_energy_kwh, run_cost_usd;
    double run_cost_low_usd, run_cost_high_usd;
    double memory_gb, capacity_gb;
    double score;          /* xs_compare only: 0..1, 1 = best on every weighted metric */
    int pareto;            /* xs_compare only: 1 = Pareto-optimal on (run time, cost) */
} xs_run_row;

/* The devices and the grid of a sweep or comparison; NULL: all zero (for
 * xs_compare: every accelerator, the scenario as given, time=1,cost=1). */
typedef struct {
    const xs_device_h *const *devices; /* ndevices handles; NULL (0) in xs_compare:
                                          every shipped accelerator */
    size_t ndevices;
    const char *const *vary; /* nvary "KEY=V1,V2,A:B[:STEP]" (the command's --vary) */
    int nvary;
    /* xs_compare only: */
    const char *weights; /* "time=W,energy=W,cost=W,util=W"; NULL: time=1,cost=1 */
    double budget_usd;   /* leave out runs dearer than this; <= 0: no limit */
    double deadline_h;   /* leave out runs longer than this; <= 0: no limit */
} xs_grid_opts;

/* The most rows (points x devices) xs_sweep and xs_compare return: they
 * hold every row in memory (`xpusim sweep` streams bigger grids). */
#define XS_GRID_MAX_ROWS 1000000

/* `xpusim sweep --band`: scenario (id or path, with nsets --set overrides)
 * at every point of the grid on every device, one row a (point, device),
 * in grid order (the last --vary fastest, then the devices in order). A
 * point a device cannot run is a row with its reason, not an error. *rows
 * (*nrows of them) is the caller's to free with xs_free. */
int xs_sweep(const char *scenario, const char *const *sets, int nsets, const xs_grid_opts *opts,
             xs_run_row **rows, size_t *nrows, xs_status *st);

/* `xpusim compare --weights ...`: the sweep's rows scored and marked
 * Pareto-optimal among the runs that fit and pass the budget and deadline,
 * in the order compare prints them: by score (ties: cheaper, faster, grid
 * order), then the runs that do not fit, then those that cannot run. The
 * runs outside the budget or deadline are left out; when that leaves
 * none, an error says what the cheapest and the fastest would take. */
int xs_compare(const char *scenario, const char *const *sets, int nsets,
               const xs_grid_opts *opts, xs_run_row **rows, size_t *nrows, xs_status *st);

/* ---- validation ----------------------------------------------------------------- */

/* `xpusim validate --measured F... --format json`: every row of the
 * measured-run CSV files predicted, with its error, and the summary, as
 * that command's JSON text (the caller frees it with xs_free; NULL on
 * error). Rows that cannot be predicted are in the text with their reason;
 * *failed (may be NULL) gets their count. */
char *xs_validate_json(const char *const *paths, int npaths, size_t *failed, xs_status *st);

#ifdef __cplusplus
}
#endif

#endif
