/* report.h — formats numbers it is handed: a table for people, JSON and CSV
 * for scripts. Computes nothing about the model itself: a prediction
 * carries what its report shows (the engine the matmuls ran on, the band).
 * One file per result: report.c (a step: predict, workload, compare),
 * report_gemm.c, report_advice.c, report_validate.c, report_devices.c. */
#ifndef XS_REPORT_H
#define XS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "advise.h"
#include "batch_fit.h"
#include "device.h"
#include "gemm.h"
#include "predict.h"
#include "rank.h"
#include "scenario.h"
#include "strbuf.h"
#include "sweep.h"
#include "trace.h"
#include "validate.h"
#include "workload.h"

typedef enum { XS_FMT_TABLE, XS_FMT_JSON, XS_FMT_CSV } xs_format;
#define XS_FORMAT_CHOICES "table|json|csv"

/* Per-op breakdown plus step and run totals of a prediction. */
void xs_report_predict(xs_strbuf *sb, xs_format fmt, const xs_device *dev,
                       const xs_scenario *s, const xs_workload *wl, const xs_prediction *p);

/* Only the answer (table or JSON): what ran where, the step, its band, the
 * run's time, energy and cost; no per-op rows. */
void xs_report_summary(xs_strbuf *sb, xs_format fmt, const xs_device *dev,
                       const xs_scenario *s, const xs_workload *wl, const xs_prediction *p);

/* The op list alone (no device): shapes, FLOPs, bytes, launches. */
void xs_report_workload(xs_strbuf *sb, xs_format fmt, const xs_scenario *s,
                        const xs_workload *wl);

/* One scenario on several devices: one row each (predictions without their
 * per-op estimates, with their band, are enough). A device that cannot run
 * the scenario has no prediction and says why; such rows come last. */
typedef struct {
    const xs_device *dev;
    const xs_prediction *p; /* NULL when unavailable */
    const char *unavailable; /* why not, or NULL */
} xs_compare_row;
void xs_report_compare(xs_strbuf *sb, xs_format fmt, const xs_scenario *s,
                       const xs_workload *wl, const xs_compare_row *rows, size_t n);
/* report_cluster.c: for cluster.devices > 1, the instances each priced
 * device's job fills and what a partly used one bills */
void xs_report_instance_lines(xs_strbuf *sb, const xs_scenario *s, const xs_compare_row *rows,
                              size_t n);

/* The rows of a grid of runs (report_grid.c): `xpusim sweep`, and compare
 * asked to rank. One row a (grid point, device): the varied keys' values,
 * the device, the step and the run (run figures only for a run that fits),
 * the band when band, score and pareto when rank, and the reason a run
 * cannot start. CSV, or JSON {"scenario", "varied", "rows": [...]}, written
 * as a head, rows in pieces and a tail. */
typedef struct {
    const xs_sweep_grid *grid;
    const xs_device *devs; /* indexed by row.dev */
    int band;              /* the band columns */
    int rank;              /* the score and pareto columns */
} xs_grid_view;
void xs_report_grid_head(xs_strbuf *sb, xs_format fmt, const xs_grid_view *v,
                         const char *scenario_id);
/* rows[order[i]] (order NULL: rows[i]) for i < n, with ranks[the same]
 * when v->rank; before: rows this report already holds (JSON commas). */
void xs_report_grid_rows(xs_strbuf *sb, xs_format fmt, const xs_grid_view *v,
                         const xs_sweep_row *rows, const xs_rank_item *ranks,
                         const size_t *order, size_t n, size_t before);
void xs_report_grid_tail(xs_strbuf *sb, xs_format fmt);
/* One row as a JSON object (caller frees); rk NULL: no score. */
cJSON *xs_grid_row_json(const xs_grid_view *v, const xs_sweep_row *r, const xs_rank_item *rk);

/* compare as a decision tool: the rows of a grid x devices, the runs that
 * can start ranked by score (best first; ties by cost, then time, then
 * grid order), then those that do not fit and those that cannot run. */
typedef struct {
    const xs_scenario *s;   /* the scenario as given (the varied keys aside) */
    const xs_workload *wl;
    xs_grid_view view;
    const xs_sweep_row *rows;
    const xs_rank_item *ranks; /* parallel to rows */
    const size_t *order;       /* the rows shown, in order */
    size_t n;
    xs_weights w;
    double budget_usd, deadline_h; /* 0: none */
    size_t dropped;                /* runs over one of them, not shown */
} xs_decision;
void xs_report_decision(xs_strbuf *sb, xs_format fmt, const xs_decision *d);

/* One GEMM: time, throughput, chosen kernel and its quantization. */
void xs_report_gemm(xs_strbuf *sb, xs_format fmt, const xs_device *dev, const xs_gemm_shape *g,
                    const xs_gemm_result *r);

/* A GEMM sweep: a header, then one row per value of the swept dimension
 * (CSV, or a JSON array with fmt json; last closes it). */
void xs_report_sweep_begin(xs_strbuf *sb, xs_format fmt, char dim);
void xs_report_sweep_row(xs_strbuf *sb, xs_format fmt, const xs_gemm_result *r, long long value,
                         int last);

/* The advisor's ranked suggestions against the scenario as given;
 * architecture: --architecture was given. */
void xs_report_advice(xs_strbuf *sb, xs_format fmt, const xs_device *dev, const xs_scenario *s,
                      double tol_pct, int architecture, const xs_advice *base, const xs_advice *a,
                      size_t n);

/* Measured against predicted: every row, then summaries overall, per file,
 * per device and per metric; rows that failed, with their reasons. */
void xs_report_validate(xs_strbuf *sb, xs_format fmt, const xs_vrow *rows, size_t n);
/* The same with what a run on this host says of itself (validate
 * --backend): extra's items join the JSON's top level (host_state, notes),
 * and its "notes" strings end the table as "note: ..." lines. CSV has no
 * room for either: the caller tells its reader (xs_report_notes_to). */
void xs_report_validate_extra(xs_strbuf *sb, xs_format fmt, const xs_vrow *rows, size_t n,
                              const cJSON *extra);
/* Append a sentence to extra's "notes" array (made on first use);
 * XS_OK, or XS_ENOMEM. */
int xs_report_add_note(cJSON *extra, const char *text);
/* extra's notes, one "note: ..." line each, to f. */
void xs_report_notes_to(FILE *f, const cJSON *extra);
/* The rows of a profiler trace (xs_trace_rows) with what the trace says of
 * itself: its steps, how its GPU events found them, its GPU, the time no
 * class claims. The table is per kernel class; JSON adds a "trace" object,
 * CSV is xs_report_validate's. */
void xs_report_validate_trace(xs_strbuf *sb, xs_format fmt, const xs_trace *t,
                              const xs_vrow *rows, size_t n);

/* The memory answer: "memory  X GB of Y GB (fits | does NOT fit: needs Z GB
 * more)" and its parts (GB = 2^30 bytes, memory.h); the JSON object
 * {weights_gb, grads_gb, optimizer_gb, activations_gb, transient_gb,
 * fragmentation_gb, workspace_gb, total_gb, capacity_gb, fits, peak_op,
 * peak_phase}. */
void xs_report_memory_lines(xs_strbuf *sb, const xs_memory *m);
/* report_cluster.c: for cluster.devices > 1 */
void xs_report_cluster_lines(xs_strbuf *sb, const xs_scenario *s, const xs_workload *wl,
                             const xs_prediction *p);
cJSON *xs_report_cluster_json(const xs_scenario *s, const xs_workload *wl,
                              const xs_prediction *p);
/* The GPUs of the instance dev's price is a per-GPU share of (1: none),
 * and compare's note on the instances a multi-device job fills. */
int xs_instance_gpus(const xs_device *dev);
cJSON *xs_memory_json(const xs_memory *m);

/* `xpusim fit`: the largest micro-batch and the splits of a global batch. */
typedef struct {
    const xs_device *dev;
    const xs_scenario *s;
    int64_t max_batch;    /* 0: not even 1 fits (at the scenario's grad_accum) */
    double samples_per_s; /* at max_batch */
    xs_memory at, next;   /* at max_batch (1 when 0) and one more (total 0: none) */
    int64_t global_batch;
    int global_given;     /* --global-batch, not the scenario's own */
    const xs_fit_split *splits;
    size_t nsplits;
} xs_fit_report;
void xs_report_fit(xs_strbuf *sb, xs_format fmt, const xs_fit_report *r);

/* Print root into sb and free it (every JSON report ends here). */
void xs_report_json(xs_strbuf *sb, cJSON *root);

/* One row per device: peaks, memory, power, price. */
void xs_report_devices(xs_strbuf *sb, xs_format fmt, const xs_device *devs, size_t n);

#endif
