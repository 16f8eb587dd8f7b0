/* validate.h — "how wrong is the model on my run?": reads measured runs in
 * the measured-run format (shared/reference/measured/README.md), predicts
 * each row — whole fine-tuning scenarios and single kernels (op=gemm,
 * op=optimizer) — and summarises the errors. A row that cannot be parsed or
 * predicted keeps its reason and is counted apart, never dropped. */
#ifndef XS_VALIDATE_H
#define XS_VALIDATE_H

#include <stddef.h>

#include "error.h"

/* The metrics a measured row may give: a whole run's rates and times
 * (epoch_time_s: one epoch's steps; avg_power_w: the board's average power
 * over steps, as NVML reads it; memory_gb: the device memory the step
 * takes at its peak, GiB, CUDA context included, as nvidia-smi shows it;
 * memory_allocated_gb: the same without the context, as
 * torch.cuda.max_memory_allocated counts it),
 * or one kernel call's time (time_s). */
#define XS_VMETRICS                                                                              \
    "samples_per_s|tokens_per_s|step_time_s|epoch_time_s|avg_power_w|memory_gb|"                 \
    "memory_allocated_gb|time_s"

/* The longest reason and set a row keeps (a reason: an xs_error message;
 * a longer set field is the row's error). */
#define XS_VREASON_MAX 1024
#define XS_VSET_MAX 512

/* One measured row and its prediction. The set and the reason are the
 * row's own strings, off the record so that a row costs about what its
 * text does (a file of rows is loaded whole): free an array of rows with
 * xs_vrows_free, write them with xs_vrow_set and xs_vrow_fail. */
typedef struct {
    const char *file;    /* the measured-run file it came from (not owned) */
    int line;            /* in the CSV file */
    char device[64];
    char scenario[128];
    char *set;           /* ';'-separated key=value; NULL or "" when none */
    char metric[32];
    /* What the row measures, for the summary by class: a kernel row's op
     * ("layernorm"; "layernorm.bwd" for dir=bwd, "layernorm.fwdbwd" for
     * dir=both), a run's scenario. */
    char kclass[48];
    double measured;
    int ok;              /* 0: see reason */
    char *reason;        /* why ok is 0, one line; NULL until a failure (xs_vrow_reason) */
    double predicted, low, high; /* low/high: the uncertainty band */
    double error_pct;    /* xs_verror_pct: + optimistic, - pessimistic */
    /* Scenario rows only (has_rest; kernel rows: matmul_share < 0). Where the error
     * sits, on the assumption that the matmul kernels were predicted right:
     * matmul_share is the share of the predicted step spent in GEMM, batched
     * GEMM and fused attention kernels; rest_factor is how many times longer
     * than predicted the rest of the step (every other kernel and the host
     * wait) must have taken for the measurement; <= 0 when the predicted
     * matmul time alone exceeds the measured step. */
    int has_rest;
    double matmul_share, rest_factor;
    int has_spread;      /* the measurement's own spread is known: */
    double spread_pct;   /* 100 x inter-quartile range / median of its repetitions
                            (a trace row: of its steps) */
    /* Trace rows only (trace_steps > 0; 0 on every other row): the training
     * steps the measured figure is the median over, the GPU events of the
     * row's class in the median step, and the kernel launches the model
     * predicts for the class in one step. */
    int trace_steps;
    double trace_events, trace_launches;
} xs_vrow;

/* Row r fails: ok = 0 and the reason (printf-style, made one line and cut
 * at XS_VREASON_MAX - 1 characters, as an xs_error message is), replacing
 * any earlier one. Returns -1, for "return xs_vrow_fail(...)". */
int xs_vrow_fail(xs_vrow *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* r's set (printf-style, at most XS_VSET_MAX - 1 characters); 0, or -1
 * when memory ran out (the row has then failed, with that reason). */
int xs_vrow_set(xs_vrow *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* r's reason, "" when it has none; r's set, "" when it has none. */
const char *xs_vrow_reason(const xs_vrow *r);
const char *xs_vrow_set_of(const xs_vrow *r);
/* Free the strings of n rows and the array (NULL: nothing). */
void xs_vrows_free(xs_vrow *rows, size_t n);

/* The signed error of a prediction, in percent of the measurement, with
 * one sign for every metric: positive when the prediction is optimistic
 * (the run faster, a step or kernel shorter, less power, energy or memory
 * than measured), negative when it is pessimistic. Its size is
 * |predicted - measured| / measured whatever the metric. */
double xs_verror_pct(const char *metric, double predicted, double measured);

/* What reports say of the sign (the table's header, the JSON, --help). */
#define XS_VERROR_SIGN "+ = optimistic: faster, or less power or memory, than measured"

typedef struct {
    size_t n;            /* rows predicted */
    double mape_pct, median_abs_pct, max_abs_pct, mean_signed_pct;
    double in_band_pct;  /* share of rows whose measurement lies inside the band */
    size_t n_rest;       /* scenario rows among them, and their median rest_factor */
    double rest_factor_median;
} xs_vsummary;

/* A kernel class on one device: predicted / measured time over its
 * time_s rows (1: right; below 1: the model is too fast), the median and
 * the quartiles (p25-p75: the spread), n rows. A row with host_us (an
 * isolated call's harness floor) counts only when its measurement is at
 * least XS_VISIBLE_OVER_FLOOR times that floor: below it the harness, not
 * the kernel, sets the figure (under_floor counts those left out). */
#define XS_VISIBLE_OVER_FLOOR 2.0
typedef struct {
    size_t n, under_floor;
    double median, p25, p75;
} xs_vratio;

/* The ok time_s rows of class kclass on device. */
void xs_vratio_summarize(const xs_vrow *rows, size_t n, const char *kclass, const char *device,
                         xs_vratio *out);

/* Parse path; every data row becomes an xs_vrow (ok = 0 with a reason when
 * it cannot be parsed). The caller frees *rows (xs_vrows_free). Fails only
 * when the file cannot be read, its header is not the measured-run header,
 * it has no row, or memory runs out. The rows take about
 * `bench: validate_bytes_per_csv_byte` times the file's size. */
int xs_measured_load(const char *path, xs_vrow **rows, size_t *n, xs_error *err);

/* Load every file in paths and predict every row: one array, file order. */
int xs_validate_files(const char *const *paths, int npaths, xs_vrow **rows, size_t *n,
                      xs_error *err);

/* Predict one parsed row in place (ok, reason, predicted, band, error). */
void xs_validate_row(xs_vrow *row);
/* Set row->kclass, the class the report summarises it under: its
 * scenario, or a kernel row's op (with .bwd / .fwdbwd for its direction),
 * from row->scenario and row->set. xs_validate_row does it; a backend's
 * check that builds its rows itself calls it. */
void xs_vrow_classify(xs_vrow *row);

/* Summary over the ok rows for which keep(row, arg) is true (NULL: all). */
void xs_vsummarize(const xs_vrow *rows, size_t n, int (*keep)(const xs_vrow *, const void *),
                   const void *arg, xs_vsummary *out);

#endif
