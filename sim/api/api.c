/* api.c — the public interface (include/xpusim.h) over the library's own
 * path: a device and a scenario opened once (xs_dev_open, xs_job_scenario),
 * predicted with xs_job's steps, reported by report*.c, so that what a
 * program gets is what the command prints. Handles own copies of what
 * they were opened from and are never written after opening. */
#include "xpusim.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "job.h"
#include "paths.h"
#include "rank.h"
#include "report.h"
#include "sweep.h"
#include "validate.h"

/* The public codes are the library's own. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(XS_STATUS_OK, XS_OK) && SAME(XS_STATUS_IO, XS_EIO) &&
                   SAME(XS_STATUS_JSON, XS_EJSON) && SAME(XS_STATUS_FIELD, XS_EFIELD) &&
                   SAME(XS_STATUS_RANGE, XS_ERANGE) && SAME(XS_STATUS_NOMEM, XS_ENOMEM) &&
                   SAME(XS_STATUS_UNSUPPORTED, XS_EUNSUPPORTED) && SAME(XS_STATUS_ARG, XS_EARG) &&
                   SAME(XS_STATUS_NOHW, XS_ENOHW),
               "xpusim.h's status codes are error.h's");
_Static_assert(sizeof(((xs_status *)0)->msg) == sizeof(((xs_error *)0)->msg) &&
                   sizeof(((xs_status *)0)->more) == sizeof(((xs_error *)0)->more),
               "an xs_status holds an xs_error's message whole");

struct xs_device_h {
    xs_device dev;
};

struct xs_scenario_h {
    xs_job job; /* its scenario and workload; dev and p unused */
};

const char *xs_lib_version(void)
{
    return "0.1.0";
}

void xs_free(void *p)
{
    free(p);
}

/* Hand err to the caller's status (which may be NULL); returns its code. */
static int out(xs_status *st, const xs_error *err)
{
    if (st) {
        st->code = err->code;
        memcpy(st->msg, err->msg, sizeof st->msg);
        memcpy(st->more, err->more, sizeof st->more);
        xs_error_one_line(st->msg, sizeof st->msg);
    }
    return err->code;
}

static int ok(xs_status *st)
{
    if (st)
        *st = (xs_status){0};
    return XS_OK;
}

static int fail(xs_status *st, int code, const char *msg)
{
    xs_error err;
    xs_error_set(&err, code, "%s", msg);
    return out(st, &err);
}

int xs_device_open(const char *id_or_path, xs_device_h **dev, xs_status *st)
{
    if (!dev)
        return fail(st, XS_EARG, "xs_device_open: dev is NULL");
    *dev = NULL;
    if (!id_or_path)
        return fail(st, XS_EARG, "xs_device_open: no device id or path (NULL)");
    xs_device_h *h = calloc(1, sizeof *h);
    if (!h)
        return fail(st, XS_ENOMEM, "out of memory");
    xs_error err;
    if (xs_dev_open(id_or_path, &h->dev, &err)) {
        free(h);
        return out(st, &err);
    }
    *dev = h;
    return ok(st);
}

void xs_device_free(xs_device_h *dev)
{
    free(dev);
}

const char *xs_device_id(const xs_device_h *dev)
{
    return dev ? dev->dev.id : NULL;
}

int xs_scenario_open(const char *id_or_path, const char *const *sets, int nsets,
                     xs_scenario_h **scn, xs_status *st)
{
    if (!scn)
        return fail(st, XS_EARG, "xs_scenario_open: scn is NULL");
    *scn = NULL;
    if (!id_or_path)
        return fail(st, XS_EARG, "xs_scenario_open: no scenario id or path (NULL)");
    if (nsets < 0 || (nsets > 0 && !sets))
        return fail(st, XS_EARG, "xs_scenario_open: nsets must be >= 0, with sets given");
    for (int i = 0; i < nsets; i++)
        if (!sets[i])
            return fail(st, XS_EARG, "xs_scenario_open: sets[] holds a NULL");
    xs_scenario_h *h = calloc(1, sizeof *h);
    if (!h)
        return fail(st, XS_ENOMEM, "out of memory");
    xs_job_init(&h->job);
    xs_error err;
    if (xs_job_scenario(&h->job, id_or_path, sets, nsets, &err)) {
        xs_job_free(&h->job);
        free(h);
        return out(st, &err);
    }
    *scn = h;
    return ok(st);
}

void xs_scenario_free(xs_scenario_h *scn)
{
    if (!scn)
        return;
    xs_job_free(&scn->job);
    free(scn);
}

const char *xs_scenario_id(const xs_scenario_h *scn)
{
    return scn ? scn->job.s.id : NULL;
}

int xs_list(const char *folder, char ***ids, size_t *n, xs_status *st)
{
    if (!ids || !n)
        return fail(st, XS_EARG, "xs_list: ids and n must not be NULL");
    *ids = NULL;
    *n = 0;
    if (!folder || (strcmp(folder, "devices") != 0 && strcmp(folder, "scenarios") != 0))
        return fail(st, XS_EARG, "xs_list: folder must be \"devices\" or \"scenarios\"");
    char **list;
    size_t count;
    xs_error err;
    if (xs_list_ids(folder, &list, &count, &err))
        return out(st, &err);
    /* one block: the pointers, then the strings */
    size_t bytes = (count + 1) * sizeof(char *);
    for (size_t i = 0; i < count; i++)
        bytes += strlen(list[i]) + 1;
    char **block = malloc(bytes);
    if (!block) {
        xs_ids_free(list, count);
        return fail(st, XS_ENOMEM, "out of memory");
    }
    char *text = (char *)(block + count + 1);
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(list[i]) + 1;
        block[i] = memcpy(text, list[i], len);
        text += len;
    }
    block[count] = NULL;
    xs_ids_free(list, count);
    *ids = block;
    *n = count;
    return ok(st);
}

/* The prediction `xpusim predict` makes (xs_job_predict's): with its
 * band; the handles are only read. */
static int predict(const xs_device_h *dev, const xs_scenario_h *scn, xs_prediction *p,
                   xs_status *st)
{
    memset(p, 0, sizeof *p);
    if (!dev || !scn)
        return fail(st, XS_EARG, "no device or scenario handle (NULL)");
    xs_error err;
    if (xs_predict(&dev->dev, &scn->job.s, &scn->job.wl, p, &err) ||
        xs_predict_band(&dev->dev, &scn->job.s, &scn->job.wl, p, &err)) {
        xs_prediction_free(p);
        return out(st, &err);
    }
    return XS_OK;
}

static void copy_name(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

int xs_predict_run(const xs_device_h *dev, const xs_scenario_h *scn, xs_summary *sum,
                   xs_op_row **ops, size_t *nops, xs_status *st)
{
    if (ops)
        *ops = NULL;
    if (nops)
        *nops = 0;
    if (ops && !nops)
        return fail(st, XS_EARG, "xs_predict_run: ops given without nops");
    xs_prediction pred;
    int rc = predict(dev, scn, &pred, st);
    if (rc)
        return rc;
    const xs_prediction *p = &pred;
    const xs_workload *wl = &scn->job.wl;
    if (sum)
        *sum = (xs_summary){
            .step_time_s = p->step_time_s,
            .step_time_low_s = p->step_time_low_s,
            .step_time_high_s = p->step_time_high_s,
            .samples_per_s = p->samples_per_s,
            .tokens_per_s = p->tokens_per_s,
            .mfu = p->mfu,
            .avg_power_w = p->avg_power_w,
            .step_energy_j = p->step_energy_j,
            .host_wait_s = p->host_wait_s,
            .steps = p->steps,
            .run_time_s = p->run_time_s,
            .run_energy_kwh = p->run_energy_kwh,
            .run_cost_usd = p->run_cost_usd,
            .run_cost_low_usd = p->run_cost_low_usd,
            .run_cost_high_usd = p->run_cost_high_usd,
            .memory_gb = p->mem.total / XS_GIB,
            .capacity_gb = p->mem.capacity / XS_GIB,
            .fits = p->mem.fits,
            .nops = wl->n,
        };
    if (ops) {
        xs_op_row *rows = calloc(wl->n ? wl->n : 1, sizeof *rows);
        if (!rows) {
            xs_prediction_free(&pred);
            return fail(st, XS_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < wl->n; i++) {
            const xs_op *op = &wl->ops[i];
            const xs_estimate *e = &p->est[i];
            double c = (double)op->count;
            xs_op_row *r = &rows[i];
            copy_name(r->name, sizeof r->name, op->name);
            r->layer = op->layer;
            copy_name(r->phase, sizeof r->phase, xs_phase_name(op->phase));
            copy_name(r->kind, sizeof r->kind, xs_op_kind_name(op->kind));
            /* as the JSON says it: only matmuls have a format of their own */
            copy_name(r->dtype, sizeof r->dtype,
                      xs_op_is_matmul(op->kind) ? xs_dtype_name(op->dtype) : "-");
            r->m = op->m;
            r->n = op->n;
            r->k = op->k;
            r->batch = op->batch;
            r->calls = op->count;
            r->flops = op->flops * c;
            r->bytes = op->bytes * c;
            r->time_s = e->time_s * c;
            r->energy_j = e->energy_j * c;
            copy_name(r->bound, sizeof r->bound, xs_bound_name(e->bound));
        }
        *ops = rows;
        *nops = wl->n;
    }
    xs_prediction_free(&pred);
    return ok(st);
}

/* The report's text as a string of its own, or NULL out of memory. */
static char *take(xs_strbuf *sb, xs_status *st)
{
    char *text = NULL;
    if (!sb->failed) {
        text = malloc(sb->len + 1);
        if (text) {
            memcpy(text, sb->data ? sb->data : "", sb->len);
            text[sb->len] = '\0';
        }
    }
    xs_sb_free(sb);
    if (!text)
        fail(st, XS_ENOMEM, "out of memory while formatting the report");
    else
        ok(st);
    return text;
}

char *xs_predict_json(const xs_device_h *dev, const xs_scenario_h *scn, xs_status *st)
{
    xs_prediction p;
    if (predict(dev, scn, &p, st))
        return NULL;
    xs_strbuf sb = {0};
    xs_report_predict(&sb, XS_FMT_JSON, &dev->dev, &scn->job.s, &scn->job.wl, &p);
    xs_prediction_free(&p);
    return take(&sb, st);
}

/* The devices a grid runs on, as one array: the handles', or (none given,
 * allowed) every shipped accelerator, the host CPUs left out as compare
 * leaves them out. */
static int grid_devices(const xs_grid_opts *o, int allow_none, xs_device **devs, size_t *n,
                        xs_status *st)
{
    xs_error err;
    *devs = NULL;
    *n = 0;
    if (o->ndevices > 0 && !o->devices)
        return fail(st, XS_EARG, "ndevices > 0 with devices NULL");
    if (o->ndevices > 0) {
        xs_device *d = calloc(o->ndevices, sizeof *d);
        if (!d)
            return fail(st, XS_ENOMEM, "out of memory");
        for (size_t i = 0; i < o->ndevices; i++) {
            if (!o->devices[i]) {
                free(d);
                return fail(st, XS_EARG, "devices[] holds a NULL handle");
            }
            d[i] = o->devices[i]->dev;
        }
        *devs = d;
        *n = o->ndevices;
        return XS_OK;
    }
    if (!allow_none)
        return fail(st, XS_EARG, "no device to sweep (ndevices is 0)");
    char **ids;
    size_t count;
    if (xs_list_ids("devices", &ids, &count, &err))
        return out(st, &err);
    xs_device *d = calloc(count ? count : 1, sizeof *d);
    int rc = d ? XS_OK : xs_error_set(&err, XS_ENOMEM, "out of memory");
    size_t kept = 0;
    for (size_t i = 0; i < count && rc == XS_OK; i++)
        if ((rc = xs_dev_open(ids[i], &d[kept], &err)) == XS_OK)
            kept += (size_t)xs_backend_of(&d[kept])->async;
    xs_ids_free(ids, count);
    if (rc == XS_OK && kept == 0)
        rc = xs_error_set(&err, XS_EARG, "no device to compare (devices/ holds none)");
    if (rc) {
        free(d);
        return out(st, &err);
    }
    *devs = d;
    *n = kept;
    return XS_OK;
}

/* The public rows of rows[order[i]] (order NULL: rows[i]), i < n, in one
 * block with their strings. */
static xs_run_row *public_rows(const xs_sweep_grid *g, const xs_device *devs,
                               const xs_sweep_row *rows, const xs_rank_item *ranks,
                               const size_t *order, size_t n)
{
    size_t text = 0;
    char buf[XS_SWEEP_VALUE_MAX + 1];
    for (size_t j = 0; j < n; j++) {
        const xs_sweep_row *r = &rows[order ? order[j] : j];
        text += strlen(devs[r->dev].id) + 1 + (r->reason ? strlen(r->reason) + 1 : 0) + 1;
        for (size_t a = 0; a < g->naxes; a++)
            text += strlen(g->axes[a].key) + 2 +
                    strlen(xs_sweep_value(g, r->point, a, buf, sizeof buf));
    }
    xs_run_row *out_rows = malloc(n * sizeof *out_rows + text + 1);
    if (!out_rows)
        return NULL;
    char *t = (char *)(out_rows + n);
    for (size_t j = 0; j < n; j++) {
        size_t i = order ? order[j] : j;
        const xs_sweep_row *r = &rows[i];
        xs_run_row *o = &out_rows[j];
        *o = (xs_run_row){
            .predicted = r->predicted,
            .fits = r->fits,
            .step_time_s = r->step_time_s,
            .samples_per_s = r->samples_per_s,
            .tokens_per_s = r->tokens_per_s,
            .mfu = r->mfu,
            .avg_power_w = r->avg_power_w,
            .run_time_s = r->run_time_s,
            .run_energy_kwh = r->run_energy_kwh,
            .run_cost_usd = r->run_cost_usd,
            .run_cost_low_usd = r->run_cost_low_usd,
            .run_cost_high_usd = r->run_cost_high_usd,
            .memory_gb = r->memory_gb,
            .capacity_gb = r->capacity_gb,
            .score = ranks ? ranks[i].score : 0,
            .pareto = ranks ? ranks[i].pareto : 0,
        };
        o->device = t;
        t += sprintf(t, "%s", devs[r->dev].id) + 1;
        o->point = t;
        for (size_t a = 0; a < g->naxes; a++)
            t += sprintf(t, "%s%s=%s", a ? " " : "", g->axes[a].key,
                         xs_sweep_value(g, r->point, a, buf, sizeof buf));
        *t++ = '\0'; /* no axis: no sprintf wrote one */
        if (r->reason) {
            o->reason = t;
            t += sprintf(t, "%s", r->reason) + 1;
        }
    }
    return out_rows;
}

/* What xs_sweep and xs_compare share: the grid built and checked, and
 * evaluated into *rows (*nrows of them, point-major). */
typedef struct {
    xs_sweep_grid g;
    xs_device *devs;
    size_t ndev;
    xs_sweep_row *rows;
    size_t nrows;
} grid_run;

static void grid_free(grid_run *r)
{
    if (r->rows)
        xs_sweep_rows_free(r->rows, r->nrows);
    free(r->rows);
    free(r->devs);
    xs_sweep_free(&r->g);
}

static int grid_eval(const char *scenario, const char *const *sets, int nsets,
                     const xs_grid_opts *o, int allow_no_device, grid_run *r, xs_status *st)
{
    memset(r, 0, sizeof *r);
    xs_sweep_init(&r->g);
    if (!scenario)
        return fail(st, XS_EARG, "no scenario id or path (NULL)");
    if (nsets < 0 || (nsets > 0 && !sets) || o->nvary < 0 || (o->nvary > 0 && !o->vary))
        return fail(st, XS_EARG, "nsets and nvary must be >= 0, with their arrays given");
    xs_error err;
    for (int i = 0; i < o->nvary; i++)
        if (!o->vary[i] || xs_sweep_add(&r->g, o->vary[i], &err))
            return o->vary[i] ? out(st, &err) : fail(st, XS_EARG, "vary[] holds a NULL");
    int rc = grid_devices(o, allow_no_device, &r->devs, &r->ndev, st);
    if (rc)
        return rc;
    if (xs_sweep_check(&r->g, r->ndev, sets, nsets, &err))
        return out(st, &err);
    if (r->g.points > XS_GRID_MAX_ROWS / r->ndev) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "%zu points x %zu devices is more than the %d rows a call returns; `xpusim "
                 "sweep` writes bigger grids",
                 r->g.points, r->ndev, XS_GRID_MAX_ROWS);
        return fail(st, XS_EARG, msg);
    }
    /* the scenario as given must load: its problems are one error, not a
     * reason on every row (as `xpusim sweep` has it) */
    xs_job j;
    xs_job_init(&j);
    rc = xs_job_scenario_compact(&j, scenario, sets, nsets, &err);
    xs_job_free(&j);
    if (rc)
        return out(st, &err);
    r->nrows = r->g.points * r->ndev;
    r->rows = calloc(r->nrows, sizeof *r->rows);
    if (!r->rows)
        return fail(st, XS_ENOMEM, "out of memory");
    xs_sweep_spec sp = {scenario, sets, nsets, &r->g, r->devs, r->ndev, 1, NULL, NULL};
    return xs_sweep_eval(&sp, 0, r->g.points, r->rows, &err) ? out(st, &err) : XS_OK;
}

int xs_sweep(const char *scenario, const char *const *sets, int nsets, const xs_grid_opts *opts,
             xs_run_row **rows, size_t *nrows, xs_status *st)
{
    if (!rows || !nrows)
        return fail(st, XS_EARG, "xs_sweep: rows and nrows must not be NULL");
    *rows = NULL;
    *nrows = 0;
    const xs_grid_opts none = {0};
    opts = opts ? opts : &none;
    grid_run r;
    int rc = grid_eval(scenario, sets, nsets, opts, 0, &r, st);
    if (rc == XS_OK) {
        *rows = public_rows(&r.g, r.devs, r.rows, NULL, NULL, r.nrows);
        rc = *rows ? ok(st) : fail(st, XS_ENOMEM, "out of memory");
        *nrows = *rows ? r.nrows : 0;
    }
    grid_free(&r);
    return rc;
}

int xs_compare(const char *scenario, const char *const *sets, int nsets,
               const xs_grid_opts *opts, xs_run_row **rows, size_t *nrows, xs_status *st)
{
    if (!rows || !nrows)
        return fail(st, XS_EARG, "xs_compare: rows and nrows must not be NULL");
    *rows = NULL;
    *nrows = 0;
    const xs_grid_opts none = {0};
    opts = opts ? opts : &none;
    xs_error err;
    xs_weights w = XS_WEIGHTS_DEFAULT;
    if (opts->weights && xs_weights_parse(opts->weights, &w, &err))
        return out(st, &err);
    grid_run r;
    int rc = grid_eval(scenario, sets, nsets, opts, 1, &r, st);
    if (rc) {
        grid_free(&r);
        return rc;
    }
    size_t n = r.nrows;
    xs_rank_item *ranks = calloc(n, sizeof *ranks);
    size_t *order = calloc(n, sizeof *order);
    unsigned char *ran = calloc(n, 1);
    if (!ranks || !order || !ran)
        rc = fail(st, XS_ENOMEM, "out of memory");
    for (size_t i = 0; rc == XS_OK && i < n; i++) {
        const xs_sweep_row *s = &r.rows[i];
        ranks[i] = (xs_rank_item){s->run_time_s, s->run_energy_kwh, s->run_cost_usd, s->mfu,
                                  s->predicted && s->fits, 0, 0};
        ran[i] = (unsigned char)s->predicted;
    }
    /* as `xpusim compare` decides (rank.h) */
    xs_rank_outcome d = {0};
    if (rc == XS_OK && xs_rank_decide(ranks, n, ran, &w, opts->budget_usd, opts->deadline_h,
                                      order, &d, &err))
        rc = out(st, &err);
    if (rc == XS_OK && d.none_within) {
        xs_error_set(&err, XS_EARG,
                     "no run is within budget_usd %g and deadline_h %g (<= 0: none): the "
                     "cheapest run costs $%.2f, the fastest takes %.2f h",
                     opts->budget_usd, opts->deadline_h, d.cheapest_usd, d.fastest_s / 3600);
        rc = out(st, &err);
    }
    size_t shown = d.shown;
    if (rc == XS_OK) {
        *rows = public_rows(&r.g, r.devs, r.rows, ranks, order, shown);
        rc = *rows ? ok(st) : fail(st, XS_ENOMEM, "out of memory");
        *nrows = *rows ? shown : 0;
    }
    free(ran);
    free(order);
    free(ranks);
    grid_free(&r);
    return rc;
}

char *xs_validate_json(const char *const *paths, int npaths, size_t *failed, xs_status *st)
{
    if (failed)
        *failed = 0;
    if (npaths < 1 || !paths) {
        fail(st, XS_EARG, "xs_validate_json: give at least one measured-run CSV file");
        return NULL;
    }
    for (int i = 0; i < npaths; i++)
        if (!paths[i]) {
            fail(st, XS_EARG, "xs_validate_json: paths[] holds a NULL");
            return NULL;
        }
    xs_error err;
    xs_vrow *rows;
    size_t n;
    if (xs_validate_files(paths, npaths, &rows, &n, &err)) {
        out(st, &err);
        return NULL;
    }
    xs_strbuf sb = {0};
    xs_report_validate(&sb, XS_FMT_JSON, rows, n);
    for (size_t i = 0; failed && i < n; i++)
        *failed += !rows[i].ok;
    xs_vrows_free(rows, n);
    return take(&sb, st);
}
