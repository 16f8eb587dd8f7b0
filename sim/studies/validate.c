/* validate.c — see validate.h. */
#include "validate.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "fileio.h"
#include "gate.h"
#include "gemm.h"
#include "job.h"
#include "comm.h"
#include "kernel_op.h"
#include "kvset.h"
#include "numparse.h"
#include "workload.h"

#define MEASURED_HEADER "device,scenario,set,metric,value,source"
#define MAX_FIELDS 6

/* Longer than any row slot it is copied to, so a cut field is never taken
 * for a whole one. */
#define FIELD_CAP 1024

/* Split one CSV record (RFC 4180 quoting) from *p into fields; advance *p
 * past the record. cut[i] is set when field i was longer than FIELD_CAP - 1
 * characters (what is kept is then not the field). Returns the field
 * count, or -1 on an unterminated quote. */
static int csv_record(const char **p, char fields[][FIELD_CAP], int cut[], int max)
{
    const char *s = *p;
    int n = 0;
    for (;;) {
        char *out = n < max ? fields[n] : NULL;
        size_t len = 0;
        int dropped = 0;
#define KEEP(ch)                                                                                 \
    do {                                                                                         \
        if (out && len < FIELD_CAP - 1)                                                          \
            out[len++] = (ch);                                                                   \
        else                                                                                     \
            dropped = 1;                                                                         \
    } while (0)
        if (*s == '"') {
            s++;
            for (;;) {
                if (*s == '\0')
                    return -1;
                if (*s == '"' && s[1] == '"') {
                    s += 2;
                    KEEP('"');
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    KEEP(*s);
                    s++;
                }
            }
        }
        while (*s && *s != ',' && *s != '\n' && *s != '\r') {
            KEEP(*s);
            s++;
        }
#undef KEEP
        if (out) {
            out[len] = '\0';
            cut[n] = dropped;
        }
        n++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\r')
            s++;
        if (*s == '\n')
            s++;
        break;
    }
    *p = s;
    return n;
}

static int blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

/* Copy a field; one too long for its slot is the row's error, not cut
 * short, and so is one holding a control character (a newline in a quoted
 * field, an escape sequence): no id or key has one, and the reports print
 * fields as they are. */
static int copy_field(char *dst, size_t size, const char *src, const char *name, xs_vrow *r)
{
    size_t len = strlen(src);
    if (len >= size) {
        snprintf(r->reason, sizeof r->reason, "field '%s' is longer than %zu characters", name,
                 size - 1);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)src[i] < 0x20 || src[i] == 0x7f) {
            snprintf(r->reason, sizeof r->reason,
                     "field '%s' holds a control character (byte 0x%02x at its character %zu)",
                     name, (unsigned char)src[i], i + 1);
            return -1;
        }
    memcpy(dst, src, len + 1);
    return 0;
}

int xs_measured_load(const char *path, xs_vrow **rows, size_t *n, xs_error *err)
{
    char *text = NULL;
    int rc = xs_read_text(path, "a CSV file", &text, NULL, err);
    if (rc)
        return rc;
    char fields[MAX_FIELDS + 1][FIELD_CAP]; /* per call: loads may run in parallel */
    int cut[MAX_FIELDS + 1] = {0};
    const char *p = text;
    int cnt = csv_record(&p, fields, cut, MAX_FIELDS + 1);
    static const char *names[MAX_FIELDS] = {"device", "scenario", "set",
                                            "metric", "value",    "source"};
    int header_ok = cnt == MAX_FIELDS;
    for (int i = 0; header_ok && i < MAX_FIELDS; i++)
        header_ok = strcmp(fields[i], names[i]) == 0;
    if (!header_ok) {
        free(text);
        return xs_error_set(err, XS_EFIELD, "%s: line 1: the header must be %s", path,
                            MEASURED_HEADER);
    }
    size_t cap = 64, used = 0;
    xs_vrow *out = calloc(cap, sizeof *out);
    for (int line = 2; out && *p; line++) {
        const char *start = p;
        cnt = csv_record(&p, fields, cut, MAX_FIELDS + 1);
        if (cnt == 1 && blank(fields[0]) && p > start)
            continue; /* an empty line */
        if (used == cap) {
            xs_vrow *grown = realloc(out, 2 * cap * sizeof *out);
            if (!grown)
                break;
            out = grown;
            memset(out + cap, 0, cap * sizeof *out);
            cap *= 2;
        }
        xs_vrow *r = &out[used++];
        r->file = path;
        r->line = line;
        if (cnt != MAX_FIELDS) {
            snprintf(r->reason, sizeof r->reason,
                     cnt < 0 ? "unterminated quote" : "expected 6 fields, got %d", cnt);
            if (cnt < 0)
                p += strlen(p);
            continue;
        }
        int longest = -1;
        for (int i = 0; i < MAX_FIELDS && longest < 0; i++)
            if (cut[i])
                longest = i;
        if (longest >= 0) {
            snprintf(r->reason, sizeof r->reason, "field '%s' is longer than %d characters",
                     names[longest], FIELD_CAP - 1);
            continue;
        }
        if (copy_field(r->device, sizeof r->device, fields[0], "device", r) ||
            copy_field(r->scenario, sizeof r->scenario, fields[1], "scenario", r) ||
            copy_field(r->set, sizeof r->set, fields[2], "set", r) ||
            copy_field(r->metric, sizeof r->metric, fields[3], "metric", r))
            continue;
        r->measured = 0;
        if (xs_parse_double(fields[4], &r->measured) || !(r->measured > 0))
            snprintf(r->reason, sizeof r->reason, "field 'value' must be a number > 0, got \"%.60s\"",
                     fields[4]);
        else if (xs_choice_index(XS_VMETRICS, r->metric) < 0)
            snprintf(r->reason, sizeof r->reason,
                     "field 'metric' must be one of " XS_VMETRICS ", got \"%.40s\"", r->metric);
        else
            r->ok = 1; /* parsed; prediction may still fail */
    }
    for (size_t i = 0; i < used; i++) /* a reason quoting the file stays one line */
        xs_error_one_line(out[i].reason, sizeof out[i].reason);
    free(text);
    if (!out)
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
    if (used == 0) {
        free(out);
        return xs_error_set(err, XS_EFIELD,
                            "%s: no row after the header: a measured-run file holds one row "
                            "a measurement (%s)",
                            path, MEASURED_HEADER);
    }
    *rows = out;
    *n = used;
    return XS_OK;
}

static int load_device(const char *id, xs_device *dev, char *reason, size_t size)
{
    xs_error err;
    if (xs_dev_open(id, dev, &err)) {
        snprintf(reason, size, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* op=gemm: rows follow the BLAS (column-major) convention of cuBLAS
 * measurements unless layout=row: column-major C = op(A) op(B) is the
 * row-major C^T = op(B)^T op(A)^T, so m and n and the transposes swap. */
static int predict_gemm(const xs_device *dev, xs_vrow *r, double *t, double *lo, double *hi)
{
    long long m, n, k, batch;
    char v[16], dt[16];
    size_t rs = sizeof r->reason;
    if (xs_kv_known(r->set, "op|m|n|k|batch|ta|tb|dtype|layout", r->reason, rs) ||
        xs_kv_int(r->set, "m", 1, 1 << 24, -1, &m, r->reason, rs) ||
        xs_kv_int(r->set, "n", 1, 1 << 24, -1, &n, r->reason, rs) ||
        xs_kv_int(r->set, "k", 1, 1 << 24, -1, &k, r->reason, rs) ||
        xs_kv_int(r->set, "batch", 1, 1 << 20, 1, &batch, r->reason, rs))
        return -1;
    int t_a = 0, t_b = 0, col = 1;
    if (xs_kv_get(r->set, "ta", v, sizeof v))
        t_a = strcmp(v, "T") == 0 ? 1 : strcmp(v, "N") == 0 ? 0 : -1;
    if (xs_kv_get(r->set, "tb", v, sizeof v))
        t_b = strcmp(v, "T") == 0 ? 1 : strcmp(v, "N") == 0 ? 0 : -1;
    if (xs_kv_get(r->set, "layout", v, sizeof v))
        col = strcmp(v, "col") == 0 ? 1 : strcmp(v, "row") == 0 ? 0 : -1;
    int dtype = xs_kv_get(r->set, "dtype", dt, sizeof dt) ? xs_choice_index("fp32|tf32|fp16|bf16", dt)
                                                       : -1;
    if (t_a < 0 || t_b < 0 || col < 0 || dtype < 0) {
        snprintf(r->reason, rs, "set: ta/tb must be N or T, layout col or row, dtype one of "
                                "fp32|tf32|fp16|bf16");
        return -1;
    }
    xs_gemm_shape g = {col ? n : m, col ? m : n, k, batch, col ? t_b : t_a, col ? t_a : t_b,
                       (xs_dtype)dtype, xs_dtype_bytes((xs_dtype)dtype)};
    for (int c = -1; c <= 1; c++) {
        xs_device d;
        xs_dev_corner(dev, c, &d);
        xs_gemm_engine e;
        xs_dev_gemm_engine(&d, &e);
        xs_gemm_result res;
        xs_error err;
        if (xs_gemm_model(&e, &g, &res, &err)) {
            snprintf(r->reason, rs, "%s", err.msg);
            return -1;
        }
        *(c < 0 ? hi : c == 0 ? t : lo) = res.time_s;
    }
    return 0;
}

/* op=optimizer: one optimizer step over `params` parameters. */
static int predict_optimizer(const xs_device *dev, xs_vrow *r, double *t, double *lo,
                             double *hi)
{
    long long fused, params, tensors;
    char name[16];
    size_t rs = sizeof r->reason;
    if (xs_kv_known(r->set, "op|optimizer|fused|params|tensors|state_bytes", r->reason, rs) ||
        xs_kv_int(r->set, "fused", 0, 1, -1, &fused, r->reason, rs) ||
        xs_kv_int(r->set, "params", 1, (long long)1 << 45, -1, &params, r->reason, rs) ||
        xs_kv_int(r->set, "tensors", 1, 1 << 24, 1, &tensors, r->reason, rs))
        return -1;
    long long state_bytes;
    if (xs_kv_int(r->set, "state_bytes", 2, 4, 4, &state_bytes, r->reason, rs))
        return -1;
    int o = xs_kv_get(r->set, "optimizer", name, sizeof name)
                ? xs_choice_index(XS_OPTIMIZER_CHOICES, name)
                : -1;
    if (o < 0) {
        snprintf(r->reason, rs, "set: 'optimizer' must be one of %s", XS_OPTIMIZER_CHOICES);
        return -1;
    }
    xs_op op;
    xs_wl_optimizer_op(o, (int)fused, (double)params, tensors, (int)state_bytes, &op);
    for (int c = -1; c <= 1; c++) {
        xs_device d;
        xs_dev_corner(dev, c, &d);
        xs_estimate e;
        xs_error err;
        if (xs_dev_estimate(&d, &op, &e, &err)) {
            snprintf(r->reason, rs, "%s", err.msg);
            return -1;
        }
        *(c < 0 ? hi : c == 0 ? t : lo) = e.time_s;
    }
    return 0;
}

/* op=all_reduce|reduce_scatter|all_gather: one NCCL collective of `bytes`
 * (nccl-tests' size) over `devices` GPUs of the row's device, per_node a
 * node (default min(devices, 8)), over the interconnect and network a
 * scenario's cluster keys would name; the algorithm NCCL's tuner would
 * pick (comm.h). A link has no uncertainty corners: the band is the point. */
static int predict_collective(const xs_device *dev, xs_vrow *r, const char *op, double *t,
                              double *lo, double *hi)
{
    long long devices, per_node;
    double bytes, net;
    char ic[16] = "auto";
    size_t rs = sizeof r->reason;
    if (xs_kv_known(r->set, "op|devices|per_node|bytes|interconnect|network_gbs", r->reason, rs) ||
        xs_kv_int(r->set, "devices", 2, 65536, -1, &devices, r->reason, rs) ||
        xs_kv_int(r->set, "per_node", 0, 65536, 0, &per_node, r->reason, rs) ||
        xs_kv_num(r->set, "bytes", 1, 1e15, -1, &bytes, r->reason, rs) ||
        xs_kv_num(r->set, "network_gbs", 0, 1e5, 0, &net, r->reason, rs))
        return -1;
    if (net > 0 && net < XS_NETWORK_GBS_MIN) { /* the gate's floor (gate.h) */
        snprintf(r->reason, rs, "set: 'network_gbs' must be at least %g (10 MB/s), got %g",
                 XS_NETWORK_GBS_MIN, net);
        return -1;
    }
    xs_kv_get(r->set, "interconnect", ic, sizeof ic);
    xs_scenario s;
    memset(&s, 0, sizeof s);
    snprintf(s.id, sizeof s.id, "-");
    s.devices = devices;
    s.per_node = per_node;
    s.network_gbs = net;
    s.interconnect = xs_choice_index(XS_INTERCONNECT_CHOICES, ic);
    int coll = xs_choice_index("all_reduce|reduce_scatter|all_gather", op);
    int64_t g = per_node > 0 ? per_node : (devices < 8 ? devices : 8);
    if (s.interconnect < 0 || devices % g != 0) {
        snprintf(r->reason, rs, "set: interconnect must be one of " XS_INTERCONNECT_CHOICES
                                ", devices a multiple of per_node");
        return -1;
    }
    xs_topo topo;
    xs_error err;
    if (xs_topo_of(dev, &s, &topo, &err)) {
        snprintf(r->reason, rs, "%s", err.msg);
        return -1;
    }
    *t = *lo = *hi = xs_comm_best(&topo, coll, bytes, NULL);
    return 0;
}

/* Every other class (op=softmax, layernorm, ...): the kernel(s) the
 * workload builds for that shape, their times summed. */
static int predict_kernel(const xs_device *dev, xs_vrow *r, double *t, double *lo, double *hi)
{
    size_t rs = sizeof r->reason;
    xs_kernel_spec k;
    xs_op ops[XS_KERNEL_OPS_MAX];
    int n;
    xs_error err;
    if (xs_kernel_spec_parse(r->set, &k, r->reason, rs))
        return -1;
    if (xs_kernel_ops(&k, ops, &n, &err)) {
        snprintf(r->reason, rs, "%s", err.msg);
        return -1;
    }
    for (int c = -1; c <= 1; c++) {
        xs_device d;
        xs_dev_corner(dev, c, &d);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            xs_estimate e;
            if (xs_dev_estimate(&d, &ops[i], &e, &err)) {
                snprintf(r->reason, rs, "%s", err.msg);
                return -1;
            }
            sum += e.time_s;
        }
        *(c < 0 ? hi : c == 0 ? t : lo) = sum;
    }
    return 0;
}

/* A whole fine-tuning scenario with the row's ';'-separated overrides. */
static int predict_scenario(const xs_device *dev, xs_vrow *r, double *val, double *lo,
                            double *hi, double *matmul_share)
{
    char sets_buf[512];
    const char *sets[64];
    int n = 0;
    xs_error err;
    snprintf(sets_buf, sizeof sets_buf, "%s", r->set);
    for (char *save = NULL, *tok = strtok_r(sets_buf, ";", &save); tok && n < 64;
         tok = strtok_r(NULL, ";", &save))
        if (!blank(tok))
            sets[n++] = tok;
    xs_job j;
    xs_job_init(&j);
    j.dev = *dev;
    if (xs_job_scenario_compact(&j, r->scenario, sets, n, &err) || xs_job_predict(&j, 1, &err)) {
        snprintf(r->reason, sizeof r->reason, "%s", err.msg);
        xs_job_free(&j);
        return -1;
    }
    const xs_prediction *p = &j.p;
    *matmul_share = p->step_time_s > 0 ? p->matmul_time_s / p->step_time_s : 0;
    double tokens = (double)j.s.train.seq;
    int rc = 0;
    if (strcmp(r->metric, "samples_per_s") == 0) {
        *val = p->samples_per_s;
        *lo = p->samples_per_s_low;
        *hi = p->samples_per_s_high;
    } else if (strcmp(r->metric, "tokens_per_s") == 0) {
        *val = p->tokens_per_s;
        *lo = p->samples_per_s_low * tokens;
        *hi = p->samples_per_s_high * tokens;
    } else if (strcmp(r->metric, "step_time_s") == 0) {
        *val = p->step_time_s;
        *lo = p->step_time_low_s;
        *hi = p->step_time_high_s;
    } else if (strcmp(r->metric, "epoch_time_s") == 0) {
        /* every step of an epoch, the last (partial) batch as a full one */
        double steps = (double)j.wl.steps_per_epoch;
        *val = p->step_time_s * steps;
        *lo = p->step_time_low_s * steps;
        *hi = p->step_time_high_s * steps;
    } else if (strcmp(r->metric, "avg_power_w") == 0) {
        /* the board's average over steps (what NVML integrates); not a
         * time, so no matmul share */
        *val = p->avg_power_w;
        *lo = p->avg_power_low_w;
        *hi = p->avg_power_high_w;
        *matmul_share = -1;
    } else if (strcmp(r->metric, "memory_gb") == 0 ||
               strcmp(r->metric, "memory_allocated_gb") == 0) {
        /* the step's peak device memory (GiB), as nvidia-smi counts it, or
         * as torch.cuda.max_memory_allocated does (the CUDA context apart);
         * no band (the corners change speed, not bytes) and not a time */
        double b = p->mem.total -
                   (strcmp(r->metric, "memory_allocated_gb") == 0 ? p->mem.context : 0);
        *val = *lo = *hi = b / XS_GIB;
        *matmul_share = -1;
    } else {
        snprintf(r->reason, sizeof r->reason,
                 "metric 'time_s' is for single kernels; a scenario row needs samples_per_s, "
                 "tokens_per_s, step_time_s, epoch_time_s, avg_power_w, memory_gb or "
                 "memory_allocated_gb");
        rc = -1;
    }
    xs_job_free(&j);
    return rc;
}

/* measured step time = predicted (share + (1 - share) rest): solved for rest. */
static void set_rest_factor(xs_vrow *r, double share)
{
    r->matmul_share = share;
    r->rest_factor = 0;
    r->has_rest = share >= 0 && share < 1 && r->predicted > 0;
    if (!r->has_rest)
        return;
    int is_time = strcmp(r->metric, "step_time_s") == 0 || strcmp(r->metric, "epoch_time_s") == 0;
    double slower = is_time ? r->measured / r->predicted : r->predicted / r->measured;
    r->rest_factor = (slower - share) / (1 - share);
}

/* ".bwd" and ".fwdbwd": the directions are different kernels, with
 * different traffic. */
void xs_vrow_classify(xs_vrow *r)
{
    char op[40], dir[8];
    if (strcmp(r->scenario, "-") != 0) {
        snprintf(r->kclass, sizeof r->kclass, "%.*s", (int)sizeof r->kclass - 1, r->scenario);
        return;
    }
    if (!xs_kv_get(r->set, "op", op, sizeof op))
        snprintf(op, sizeof op, "-");
    int has_dir = xs_kv_get(r->set, "dir", dir, sizeof dir);
    const char *suffix = !has_dir                     ? ""
                         : strcmp(dir, "bwd") == 0  ? ".bwd"
                         : strcmp(dir, "both") == 0 ? ".fwdbwd"
                                                    : "";
    snprintf(r->kclass, sizeof r->kclass, "%s%s", op, suffix);
}

double xs_verror_pct(const char *metric, double predicted, double measured)
{
    /* a rate: predicting more is optimistic; a time, power, energy or
     * memory: predicting less is */
    int rate = strcmp(metric, "samples_per_s") == 0 || strcmp(metric, "tokens_per_s") == 0;
    return 100 * (rate ? predicted - measured : measured - predicted) / measured;
}

static void validate_row(xs_vrow *r);

void xs_validate_row(xs_vrow *r)
{
    validate_row(r);
    xs_error_one_line(r->reason, sizeof r->reason); /* it may quote the row */
}

static void validate_row(xs_vrow *r)
{
    if (!r->ok)
        return;
    r->ok = 0;
    xs_vrow_classify(r);
    xs_device dev;
    if (load_device(r->device, &dev, r->reason, sizeof r->reason))
        return;
    double v = 0, lo = 0, hi = 0, share = -1;
    int rc;
    if (strcmp(r->scenario, "-") == 0) {
        char op[32];
        if (strcmp(r->metric, "time_s") != 0) {
            snprintf(r->reason, sizeof r->reason, "a kernel row (scenario '-') needs metric time_s");
            return;
        }
        if (!xs_kv_get(r->set, "op", op, sizeof op)) {
            snprintf(r->reason, sizeof r->reason,
                     "a kernel row (scenario '-') needs op= in its set, one of gemm|optimizer|%s",
                     XS_KOP_CHOICES);
            return;
        }
        if (strcmp(op, "gemm") == 0)
            rc = predict_gemm(&dev, r, &v, &lo, &hi);
        else if (strcmp(op, "optimizer") == 0)
            rc = predict_optimizer(&dev, r, &v, &lo, &hi);
        else if (xs_choice_index(XS_KOP_CHOICES, op) >= 0)
            rc = predict_kernel(&dev, r, &v, &lo, &hi);
        else if (xs_choice_index("all_reduce|reduce_scatter|all_gather", op) >= 0)
            rc = predict_collective(&dev, r, op, &v, &lo, &hi);
        else {
            snprintf(r->reason, sizeof r->reason,
                     "set: op must be one of gemm|optimizer|%s, got '%.40s'", XS_KOP_CHOICES, op);
            return;
        }
    } else {
        rc = predict_scenario(&dev, r, &v, &lo, &hi, &share);
    }
    if (rc)
        return;
    r->predicted = v;
    r->low = fmin(lo, hi);
    r->high = fmax(lo, hi);
    r->error_pct = xs_verror_pct(r->metric, v, r->measured);
    set_rest_factor(r, share);
    /* a value near the largest or smallest double (1e308, 4.9e-324) makes
     * the ratios inf: a reason, not "inf" in the report */
    if (!isfinite(v) || !isfinite(lo) || !isfinite(hi) || !isfinite(r->error_pct) ||
        !isfinite(r->rest_factor)) {
        snprintf(r->reason, sizeof r->reason,
                 "predicted %g against measured %g: the error is not a finite number (is "
                 "field 'value' in the metric's unit?)",
                 v, r->measured);
        return;
    }
    r->ok = 1;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; 0 for an empty set. */
static double median(double *v, size_t m)
{
    if (!m)
        return 0;
    qsort(v, m, sizeof *v, by_double);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

void xs_vsummarize(const xs_vrow *rows, size_t n, int (*keep)(const xs_vrow *, const void *),
                   const void *arg, xs_vsummary *out)
{
    memset(out, 0, sizeof *out);
    double *abs_err = malloc((n ? n : 1) * sizeof *abs_err);
    double *rest = malloc((n ? n : 1) * sizeof *rest);
    if (!abs_err || !rest) {
        free(abs_err);
        free(rest);
        return;
    }
    size_t m = 0, in_band = 0;
    double sum = 0, signed_sum = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_vrow *r = &rows[i];
        if (!r->ok || (keep && !keep(r, arg)))
            continue;
        abs_err[m++] = fabs(r->error_pct);
        sum += fabs(r->error_pct);
        signed_sum += r->error_pct;
        in_band += r->measured >= r->low && r->measured <= r->high;
        if (r->has_rest)
            rest[out->n_rest++] = r->rest_factor;
    }
    out->n = m;
    out->rest_factor_median = median(rest, out->n_rest);
    if (m) {
        out->mape_pct = sum / (double)m;
        out->mean_signed_pct = signed_sum / (double)m;
        out->median_abs_pct = median(abs_err, m);
        out->max_abs_pct = abs_err[m - 1];
        out->in_band_pct = 100.0 * (double)in_band / (double)m;
    }
    free(abs_err);
    free(rest);
}

int xs_validate_files(const char *const *paths, int npaths, xs_vrow **rows, size_t *n,
                      xs_error *err)
{
    xs_vrow *all = NULL;
    size_t total = 0;
    for (int f = 0; f < npaths; f++) {
        xs_vrow *part;
        size_t m;
        int rc = xs_measured_load(paths[f], &part, &m, err);
        if (rc) {
            free(all);
            return rc;
        }
        xs_vrow *grown = realloc(all, (total + m + 1) * sizeof *all);
        if (!grown) {
            free(part);
            free(all);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
        all = grown;
        memcpy(all + total, part, m * sizeof *part);
        free(part);
        for (size_t i = 0; i < m; i++)
            xs_validate_row(&all[total + i]);
        total += m;
    }
    *rows = all;
    *n = total;
    return XS_OK;
}
