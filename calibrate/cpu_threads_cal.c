/* cpu_threads_cal.c — see threads_cal.h. */
#include "threads_cal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "cpu.h"
#include "cpu_features.h"
#include "cpu_gemm.h"
#include "fileio.h"
#include "lstm.h"
#include "schema.h"
#include "scratch.h"
#include "targets.h"
#include "threads.h"

#include "xs_version.h"

/* regions one timed call opens, so the clock's own cost is spread thin */
#define REGIONS_PER_CALL 64

typedef struct {
    int threads;
} region_ctx;

static void run_regions(void *p)
{
    int nt = ((region_ctx *)p)->threads;
    for (int i = 0; i < REGIONS_PER_CALL; i++) {
#pragma omp parallel num_threads(nt)
        {
            __asm__ volatile("" ::: "memory");
        }
    }
}

typedef struct {
    xs_krn_lstm *k;
    int threads;
} step_ctx;

static void run_step(void *p)
{
    step_ctx *c = p;
    xs_krn_lstm_step(c->k, c->threads);
}

typedef struct {
    size_t m, n, k;
    float *a, *b, *c;
    int threads;
} gemm_ctx;

static void run_gemm(void *p)
{
    gemm_ctx *g = p;
    xs_krn_gemm_f32(0, 1, g->m, g->n, g->k, g->a, g->b, g->c, 0, g->threads);
}

static int keep(xs_meas_list *ms, const char *name, int threads, long long m, long long n,
                long long k, const xs_cal_result *r, xs_error *err)
{
    xs_meas row;
    memset(&row, 0, sizeof row);
    snprintf(row.bench, sizeof row.bench, "threads");
    snprintf(row.name, sizeof row.name, "%s", name);
    row.threads = threads;
    row.m = m, row.n = n, row.k = k;
    row.r = *r;
    if (xs_meas_add(ms, &row))
        return xs_error_set(err, XS_ENOMEM, "calibrate: out of memory keeping measurements");
    return XS_OK;
}

static xs_cal_opts opts(int quick)
{
    xs_cal_opts o = xs_cal_default_opts();
    o.time_cap_s = quick ? 0.08 : 0.3;
    o.max_reps = quick ? 40 : 200;
    return o;
}

/* An LSTM of one layer with hidden h and batch b, for timing its step. */
static xs_krn_lstm *step_kernel(size_t h, size_t b, int bf16, float **w)
{
    xs_krn_lstm_shape s = {1, 8, h, 2, b, bf16};
    size_t n = xs_krn_lstm_weights_len(&s);
    *w = malloc(n * sizeof **w);
    if (!*w)
        return NULL;
    for (size_t i = 0; i < n; i++) /* small values: no denormals, no overflow */
        (*w)[i] = (float)((int)(i % 17) - 8) / (64.0f * (float)h);
    return xs_krn_lstm_alloc(&s, *w);
}

static int time_step(size_t h, size_t b, int bf16, int threads, int quick, xs_cal_result *r,
                     xs_error *err)
{
    float *w = NULL;
    xs_krn_lstm *k = step_kernel(h, b, bf16, &w);
    if (!k) {
        free(w);
        return xs_error_set(err, XS_ENOMEM, "calibrate: out of memory for an LSTM step");
    }
    step_ctx c = {k, threads};
    xs_cal_kernel kern = {"lstm_step", 0, 2.0 * 32 * (double)h * (double)b * (double)((h + 7) / 8),
                          run_step, &c, NULL};
    xs_cal_opts o = opts(quick);
    xs_cal_measure(&kern, &o, r);
    xs_krn_lstm_free(k);
    free(w);
    return XS_OK;
}

/* region(t) = region_us + region_us_per_thread (t - 1) */
static int region_sweep(xs_device *dev, const int *counts, int nc, int quick, xs_meas_list *ms,
                        xs_thr_cal *out, xs_error *err)
{
    double X[2 * XS_THR_MAX_COUNTS], y[XS_THR_MAX_COUNTS];
    for (int i = 0; i < nc; i++) {
        region_ctx c = {counts[i]};
        xs_cal_kernel kern = {"region", 0, 0, run_regions, &c, NULL};
        xs_cal_opts o = opts(quick);
        xs_cal_result r;
        xs_cal_measure(&kern, &o, &r);
        int rc = keep(ms, "region", counts[i], REGIONS_PER_CALL, 0, 0, &r, err);
        if (rc)
            return rc;
        X[2 * i] = 1;
        X[2 * i + 1] = counts[i] - 1;
        y[i] = r.median_s / REGIONS_PER_CALL;
    }
    /* one count (a one-core host): the intercept alone */
    if (nc == 1)
        X[1] = y[0], X[0] = 1;
    int rc = nc == 1 ? xs_fit_nonneg(X, y, 1, 1, "parallel region", &out->region, err)
                     : xs_fit_nonneg(X, y, nc, 2, "parallel region", &out->region, err);
    if (rc)
        return rc;
    xs_cpu_of(dev)->thr.region_us = xs_fit_round(fmax(out->region.coef[0] * 1e6, 1e-3), 4);
    xs_cpu_of(dev)->thr.region_us_per_thread = nc == 1 ? 0 : xs_fit_round(out->region.coef[1] * 1e6, 4);
    return XS_OK;
}

/* one core, weights in half its L2: time = c + macs x a + gate updates x g,
 * for the fp32 step or the bf16 one (its weights half the bytes: the same
 * hidden sizes, so the two fits see the same shapes) */
static int lstm_fit(xs_device *dev, int bf16, int quick, xs_meas_list *ms, xs_fit *fit,
                    xs_error *err)
{
    double l2 = xs_cpu_of(dev)->l2_kb_per_core * 1024;
    size_t hmax = (size_t)(sqrt(l2 / 2 / 16) * 0.9) / 8 * 8;
    if (hmax < 32)
        hmax = 32;
    size_t hs[3] = {hmax / 4 / 8 * 8, hmax / 2 / 8 * 8, hmax}, bs[2] = {1, 8};
    double X[3 * 6], y[6];
    int n = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            size_t h = hs[i] < 8 ? 8 : hs[i], b = bs[j], items = (h + 7) / 8;
            xs_cal_result r;
            int rc = time_step(h, b, bf16, 1, quick, &r, err);
            if (!rc)
                rc = keep(ms, bf16 ? "lstm_bf16_step_1core" : "lstm_step_1core", 1, (long long)b,
                          (long long)h, 0, &r, err);
            if (rc)
                return rc;
            X[3 * n] = 1;
            X[3 * n + 1] = (double)(b * 32 * h * items);
            X[3 * n + 2] = (double)(b * 8 * items);
            y[n++] = r.median_s;
        }
    int rc = xs_fit_nonneg(X, y, n, 3, bf16 ? "bf16 LSTM step" : "LSTM step", fit, err);
    if (rc)
        return rc;
    if (!(fit->coef[1] > 0))
        return xs_error_set(err, XS_ERANGE, "calibrate: the %sLSTM step's time does not grow "
                                            "with its multiply-adds",
                            bf16 ? "bf16 " : "");
    double mac = xs_fit_round(fit->coef[1] * 1e9, 4);
    /* a dropped gate term: too cheap to see beside the products */
    double gate = xs_fit_round(fmax(fit->coef[2] * 1e9, 1e-3), 4);
    *(bf16 ? &xs_cpu_of(dev)->thr.lstm_bf16_ns_per_mac : &xs_cpu_of(dev)->thr.lstm_ns_per_mac) = mac;
    *(bf16 ? &xs_cpu_of(dev)->thr.lstm_bf16_gate_ns : &xs_cpu_of(dev)->thr.lstm_gate_ns) = gate;
    return XS_OK;
}

static void residual(double pred, double meas, double *sum2, double *max_pct)
{
    double e = 100 * (pred - meas) / meas;
    *sum2 += e * e;
    *max_pct = fmax(*max_pct, fabs(e));
}

/* The model's LSTM steps and input-projection GEMMs at every count against
 * measurements of the kernels: shapes it was not fitted to. */
static int check(xs_device *dev, const int *counts, int nc, int quick, xs_meas_list *ms,
                 xs_thr_cal *out, xs_error *err)
{
    static const size_t SHAPES[][2] = {{512, 8}, {256, 1}}; /* hidden, batch */
    double s2 = 0, g2 = 0;
    for (int c = 0; c < nc; c++) {
        for (size_t i = 0; i < 4; i++) { /* each shape in fp32, then bf16 */
            int bf16 = i >= 2;
            size_t h = SHAPES[i % 2][0], b = SHAPES[i % 2][1];
            xs_cal_result r;
            int rc = time_step(h, b, bf16, counts[c], quick, &r, err);
            if (!rc)
                rc = keep(ms, bf16 ? "lstm_bf16_step" : "lstm_step", counts[c], (long long)b,
                          (long long)h, 0, &r, err);
            if (rc)
                return rc;
            xs_thr_item it;
            memset(&it, 0, sizeof it);
            it.kind = XS_THR_LSTM_STEP;
            it.op.dtype = bf16 ? XS_BF16 : XS_FP32;
            it.batch = (int64_t)b;
            it.hidden = (int64_t)h;
            xs_estimate e;
            if ((rc = xs_thr_item_time(dev, &it, counts[c], &e, err)))
                return rc;
            residual(e.time_s, r.median_s, &s2, &out->step_max_pct);
            out->step_points++;
        }
        /* an input projection: 50 steps x batch 8 rows, hidden 256, input 256 */
        gemm_ctx g = {400, 1024, 256, NULL, NULL, NULL, counts[c]};
        g.a = calloc(g.m * g.k, sizeof(float));
        g.b = calloc(g.n * g.k, sizeof(float));
        g.c = calloc(g.m * g.n, sizeof(float));
        if (!g.a || !g.b || !g.c) {
            free(g.a), free(g.b), free(g.c);
            return xs_error_set(err, XS_ENOMEM, "calibrate: out of memory for a GEMM");
        }
        xs_cal_kernel kern = {"gemm", 0, 2.0 * 400 * 1024 * 256, run_gemm, &g, NULL};
        xs_cal_opts o = opts(quick);
        xs_cal_result r;
        xs_cal_measure(&kern, &o, &r);
        free(g.a), free(g.b), free(g.c);
        int rc = keep(ms, "gemm_fp32", counts[c], 400, 1024, 256, &r, err);
        if (rc)
            return rc;
        xs_thr_item it;
        memset(&it, 0, sizeof it);
        it.kind = XS_THR_OP;
        xs_op_init(&it.op, XS_OP_GEMM, XS_PH_FWD, XS_FP32, "check");
        it.op.m = 400, it.op.n = 1024, it.op.k = 256, it.op.tb = 1;
        xs_estimate e;
        if ((rc = xs_thr_item_time(dev, &it, counts[c], &e, err)))
            return rc;
        residual(e.time_s, r.median_s, &g2, &out->gemm_max_pct);
        out->gemm_points++;
    }
    out->step_rms_pct = sqrt(s2 / out->step_points);
    out->gemm_rms_pct = sqrt(g2 / out->gemm_points);
    return XS_OK;
}

int xs_thr_calibrate(xs_device *dev, int quick, xs_meas_list *ms, FILE *log, xs_thr_cal *out,
                     xs_error *err)
{
    memset(out, 0, sizeof *out);
    int counts[XS_THR_MAX_COUNTS];
    int nc = xs_thr_counts((int)xs_cpu_of(dev)->cores, counts, XS_THR_MAX_COUNTS);
    int rc = region_sweep(dev, counts, nc, quick, ms, out, err);
    if (!rc && log)
        fprintf(log, "calibrate threads: a parallel region %.3f us + %.3f us a further thread "
                     "(%d counts, rms residual %.1f%%)\n",
                xs_cpu_of(dev)->thr.region_us, xs_cpu_of(dev)->thr.region_us_per_thread, nc,
                out->region.rms_rel_pct);
    if (!rc)
        rc = lstm_fit(dev, 0, quick, ms, &out->lstm, err);
    if (!rc && log)
        fprintf(log, "calibrate threads: LSTM step %.4f ns a multiply-add, %.3f ns a gate update "
                     "(rms residual %.1f%%)\n",
                xs_cpu_of(dev)->thr.lstm_ns_per_mac, xs_cpu_of(dev)->thr.lstm_gate_ns, out->lstm.rms_rel_pct);
    if (!rc)
        rc = lstm_fit(dev, 1, quick, ms, &out->lstm_bf16, err);
    if (!rc && log)
        fprintf(log, "calibrate threads: bf16 LSTM step %.4f ns a multiply-add, %.3f ns a gate "
                     "update (rms residual %.1f%%)\n",
                xs_cpu_of(dev)->thr.lstm_bf16_ns_per_mac, xs_cpu_of(dev)->thr.lstm_bf16_gate_ns,
                out->lstm_bf16.rms_rel_pct);
    if (!rc)
        rc = check(dev, counts, nc, quick, ms, out, err);
    if (!rc && log)
        fprintf(log, "calibrate threads: model vs kernels at 1..%d threads: LSTM steps rms %.1f%% "
                     "(max %.1f%%), GEMMs rms %.1f%% (max %.1f%%)\n",
                counts[nc - 1], out->step_rms_pct, out->step_max_pct, out->gemm_rms_pct,
                out->gemm_max_pct);
    xs_krn_scratch_free();
    return rc;
}

static void add_fit(cJSON *fits, const char *name, int points, double rms, double max)
{
    cJSON_DeleteItemFromObjectCaseSensitive(fits, name);
    cJSON *o = cJSON_AddObjectToObject(fits, name);
    cJSON_AddNumberToObject(o, "points", points);
    cJSON_AddNumberToObject(o, "rms_residual_pct", round(rms * 100) / 100);
    cJSON_AddNumberToObject(o, "max_residual_pct", round(max * 100) / 100);
}

int xs_thr_cal_notes(cJSON *notes, const xs_thr_cal *r)
{
    cJSON *t = cJSON_GetObjectItemCaseSensitive(notes, "threads");
    if (!t)
        t = cJSON_AddObjectToObject(notes, "threads");
    cJSON_DeleteItemFromObjectCaseSensitive(t, "source");
    cJSON_AddStringToObject(
        t, "source",
        "measured and fitted (GSL weighted least squares): region_us and "
        "region_us_per_thread from an empty OpenMP parallel region timed at each thread count "
        "(64 a call); lstm_ns_per_mac and lstm_gate_ns from the LSTM kernel's recurrent step "
        "(kernels/cpu/lstm.c) on one core at 3 hidden sizes whose fp32 weights fit half of L2 "
        "and batch 1 and 8 (time = call + multiply-adds x a + gate updates x g), "
        "lstm_bf16_ns_per_mac and lstm_bf16_gate_ns the same for its bf16 step; "
        "calibration.fits.threads_lstm_step_check and threads_gemm_check are the thread "
        "model against LSTM steps (hidden 512 batch 8, hidden 256 batch 1; fp32 and bf16) and "
        "an fp32 400x1024x256 GEMM at each count, shapes it was not fitted to");
    cJSON *cal = cJSON_GetObjectItemCaseSensitive(notes, "calibration");
    if (!cal)
        cal = cJSON_AddObjectToObject(notes, "calibration");
    cJSON *fits = cJSON_GetObjectItemCaseSensitive(cal, "fits");
    if (!fits)
        fits = cJSON_AddObjectToObject(cal, "fits");
    if (!t || !cal || !fits)
        return XS_ENOMEM;
    add_fit(fits, "threads_region", r->region.n, r->region.rms_rel_pct, r->region.max_rel_pct);
    add_fit(fits, "threads_lstm_step", r->lstm.n, r->lstm.rms_rel_pct, r->lstm.max_rel_pct);
    add_fit(fits, "threads_lstm_bf16_step", r->lstm_bf16.n, r->lstm_bf16.rms_rel_pct,
            r->lstm_bf16.max_rel_pct);
    add_fit(fits, "threads_lstm_step_check", r->step_points, r->step_rms_pct, r->step_max_pct);
    add_fit(fits, "threads_gemm_check", r->gemm_points, r->gemm_rms_pct, r->gemm_max_pct);
    return XS_OK;
}

/* calibration.threads_sweep: when and how a refresh measured the section */
/* the 1-minute load average (Linux), or -1 */
static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double load = -1;
    if (f && fscanf(f, "%lf", &load) != 1)
        load = -1;
    if (f)
        fclose(f);
    return load;
}

static void provenance(cJSON *doc, const char *csv, int quick, double load)
{
    cJSON *cal = cJSON_GetObjectItemCaseSensitive(doc, "calibration");
    if (!cal)
        return;
    char date[16];
    time_t now = time(NULL);
    struct tm utc;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime_r(&now, &utc));
    cJSON_DeleteItemFromObjectCaseSensitive(cal, "threads_sweep");
    cJSON *o = cJSON_AddObjectToObject(cal, "threads_sweep");
    cJSON_AddStringToObject(o, "date", date);
    cJSON_AddStringToObject(o, "command", quick ? "xpusim threads --calibrate --quick"
                                                : "xpusim threads --calibrate");
    cJSON_AddStringToObject(o, "xpusim_version", XS_VERSION);
    cJSON_AddStringToObject(o, "measurements", csv);
    cJSON_AddStringToObject(o, "lstm_kernel", xs_krn_lstm_path());
    /* other processes on the cores stretch every multi-thread region: say
     * how busy the host was as the sweep began (Linux; absent elsewhere) */
    if (load >= 0)
        cJSON_AddNumberToObject(o, "load_average_1min", load);
}

int xs_thr_calibrate_file(const char *path, const char *measurements, int quick, int force,
                          FILE *log, xs_error *err)
{
    char csv[4096];
    size_t len = strlen(path);
    if (measurements)
        snprintf(csv, sizeof csv, "%s", measurements);
    else
        snprintf(csv, sizeof csv, "%.*s.threads.csv",
                 (int)(len > 5 && strcmp(path + len - 5, ".json") == 0 ? len - 5 : len), path);
    xs_device dev;
    int rc = xs_cal_targets_check(path, csv, force, err);
    if (rc) { /* its advice is calibrate's (-o): say what to do here */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        char *cut = strstr(why, "; write to a new name");
        if (cut)
            *cut = '\0';
        return xs_error_set(err, rc,
                            "threads --calibrate: %s; add --force to replace its threads "
                            "section, or calibrate this host into a file of its own (xpusim "
                            "calibrate --backend cpu -o my-host.json)",
                            strncmp(why, "calibrate: ", 11) == 0 ? why + 11 : why);
    }
    if (!rc)
        rc = xs_dev_load(path, &dev, err);
    if (rc)
        return rc;
    if (strcmp(xs_backend_of(&dev)->name, "cpu") != 0)
        return xs_error_set(err, XS_EARG, "%s: a %s device; --calibrate measures this host's "
                                          "CPU into a CPU device file",
                            path, xs_backend_of(&dev)->name);
    const xs_cpu_features *f = xs_cpu_features_get();
    if (strcmp(xs_cpu_of(&dev)->cpu_model, f->model) != 0 || xs_cpu_of(&dev)->cores > f->cores)
        return xs_error_set(err, XS_ENOHW,
                            "%s was calibrated on \"%s\" (%lld cores), this host is \"%s\" (%d): "
                            "measure this host into its own file (xpusim calibrate --backend cpu)",
                            path, xs_cpu_of(&dev)->cpu_model, (long long)xs_cpu_of(&dev)->cores, f->model,
                            f->cores);
    if (xs_cpu_of(&dev)->cpu_signature[0] && f->signature[0] &&
        strcmp(xs_cpu_of(&dev)->cpu_signature, f->signature) != 0)
        return xs_error_set(err, XS_ENOHW,
                            "%s was calibrated on CPU signature \"%s\", this host's is \"%s\": measure this host "
                            "into its own file (xpusim calibrate --backend cpu)",
                            path, xs_cpu_of(&dev)->cpu_signature, f->signature);
    cJSON *doc = NULL;
    if ((rc = xs_json_load(path, &doc, err)))
        return rc;
    xs_meas_list ms = {0};
    xs_thr_cal r;
    double load = load_average();
    rc = xs_thr_calibrate(&dev, quick, &ms, log, &r, err);
    if (!rc)
        rc = xs_meas_write_csv(&ms, csv, err);
    if (!rc)
        provenance(doc, csv, quick, load);
    if (!rc && xs_thr_cal_notes(doc, &r))
        rc = xs_error_set(err, XS_ENOMEM, "out of memory writing %s", path);
    if (!rc)
        rc = xs_dev_write(&dev, doc, path, err);
    if (!rc && log)
        fprintf(log, "calibrate threads: wrote the threads section of %s and %s\n", path, csv);
    cJSON_Delete(doc);
    xs_meas_free(&ms);
    return rc;
}
