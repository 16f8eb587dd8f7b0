/* validate.c — see validate.h. */
#include "validate.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
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
#include "stack.h"
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

/* Check a field for its slot: one too long is the row's error, not cut
 * short, and so is one holding a control character (a newline in a quoted
 * field, an escape sequence): no id or key has one, and the reports print
 * fields as they are. */
static int field_fits(const char *src, size_t size, const char *name, xs_vrow *r)
{
    size_t len = strlen(src);
    if (len >= size)
        return xs_vrow_fail(r, "field '%s' is longer than %zu characters", name, size - 1);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)src[i] < 0x20 || src[i] == 0x7f)
            return xs_vrow_fail(r,
                                "field '%s' holds a control character (byte 0x%02x at its "
                                "character %zu)",
                                name, (unsigned char)src[i], i + 1);
    return 0;
}

static int copy_field(char *dst, size_t size, const char *src, const char *name, xs_vrow *r)
{
    if (field_fits(src, size, name, r))
        return -1;
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

static const char out_of_memory[] = "out of memory";

int xs_vrow_fail(xs_vrow *r, const char *fmt, ...)
{
    char why[XS_VREASON_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    xs_error_one_line(why, sizeof why); /* it may quote the row */
    if (r->reason != out_of_memory)
        free(r->reason);
    r->reason = strdup(why);
    if (!r->reason)
        r->reason = (char *)out_of_memory;
    r->ok = 0;
    return -1;
}

int xs_vrow_set(xs_vrow *r, const char *fmt, ...)
{
    char text[XS_VSET_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    free(r->set);
    r->set = strdup(text);
    return r->set ? 0 : xs_vrow_fail(r, "out of memory");
}

const char *xs_vrow_reason(const xs_vrow *r)
{
    return r->reason ? r->reason : "";
}

const char *xs_vrow_set_of(const xs_vrow *r)
{
    return r->set ? r->set : "";
}

void xs_vrows_free(xs_vrow *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++) {
        free(rows[i].set);
        if (rows[i].reason != out_of_memory)
            free(rows[i].reason);
    }
    free(rows);
}

/* One data record into r (line and file set); r->ok when it parsed. */
static void parse_row(xs_vrow *r, int cnt, char fields[][FIELD_CAP], const int cut[],
                      const char *const names[])
{
    if (cnt != MAX_FIELDS) {
        if (cnt < 0)
            xs_vrow_fail(r, "unterminated quote");
        else
            xs_vrow_fail(r, "expected 6 fields, got %d", cnt);
        return;
    }
    for (int i = 0; i < MAX_FIELDS; i++)
        if (cut[i]) {
            xs_vrow_fail(r, "field '%s' is longer than %d characters", names[i], FIELD_CAP - 1);
            return;
        }
    if (copy_field(r->device, sizeof r->device, fields[0], "device", r) ||
        copy_field(r->scenario, sizeof r->scenario, fields[1], "scenario", r) ||
        field_fits(fields[2], XS_VSET_MAX, "set", r) ||
        copy_field(r->metric, sizeof r->metric, fields[3], "metric", r))
        return;
    if (fields[2][0] && xs_vrow_set(r, "%s", fields[2]))
        return;
    r->measured = 0;
    if (xs_parse_double(fields[4], &r->measured) || !(r->measured > 0))
        xs_vrow_fail(r, "field 'value' must be a number > 0, got \"%.60s\"", fields[4]);
    else if (xs_choice_index(XS_VMETRICS, r->metric) < 0)
        xs_vrow_fail(r, "field 'metric' must be one of " XS_VMETRICS ", got \"%.40s\"",
                     r->metric);
    else
        r->ok = 1; /* parsed; prediction may still fail */
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
    static const char *const names[MAX_FIELDS] = {"device", "scenario", "set",
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
    int oom = !out;
    for (int line = 2; !oom && *p; line++) {
        const char *start = p;
        cnt = csv_record(&p, fields, cut, MAX_FIELDS + 1);
        if (cnt == 1 && blank(fields[0]) && p > start)
            continue; /* an empty line */
        if (cnt < 0)
            p += strlen(p);
        if (used == cap) {
            /* growth by half, not double: the slack stays a third of the rows */
            size_t more = cap + cap / 2;
            xs_vrow *grown = realloc(out, more * sizeof *out);
            if (!grown) {
                oom = 1;
                break;
            }
            out = grown;
            memset(out + cap, 0, (more - cap) * sizeof *out);
            cap = more;
        }
        xs_vrow *r = &out[used++];
        r->file = path;
        r->line = line;
        parse_row(r, cnt, fields, cut, names);
        oom = r->reason && strcmp(r->reason, out_of_memory) == 0;
    }
    free(text);
    if (oom) {
        xs_vrows_free(out, used);
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
    }
    if (used == 0) {
        free(out);
        return xs_error_set(err, XS_EFIELD,
                            "%s: no row after the header: a measured-run file holds one row "
                            "a measurement (%s)",
                            path, MEASURED_HEADER);
    }
    xs_vrow *fit = realloc(out, used * sizeof *out); /* the slack back */
    *rows = fit ? fit : out;
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

/* tile=MxN, the cuBLAS kernel's tile a profiler recorded (volta_sgemm_128x64_tn:
 * 128x64): *tm, *tn, or 0 when the row records none. */
static int gemm_tile_key(const char *set, int *tm, int *tn, char *why, size_t rs)
{
    char v[32];
    *tm = *tn = 0;
    if (!xs_kv_get(set, "tile", v, sizeof v))
        return 0;
    unsigned a, b;
    char end;
    if (sscanf(v, "%ux%u%c", &a, &b, &end) != 2 || a < 1 || b < 1 || a > 1024 || b > 1024) {
        snprintf(why, rs, "set: tile must be MxN, the cuBLAS kernel's tile (128x64), got '%.32s'", v);
        return -1;
    }
    *tm = (int)a;
    *tn = (int)b;
    return 0;
}

/* The tile the library chose, where the row records it: the model times
 * that kernel rather than the one its own search would pick, so a kernel
 * row tests the tile's cost apart from the library's heuristic. Its stages
 * are the listed tile's, or the set's first tile's when the device lists
 * no such tile. */
static void only_tile(const xs_tile_set *from, int tm, int tn, xs_tile_set *to)
{
    *to = *from;
    to->n = 1;
    to->tiles[0] = from->n ? from->tiles[0] : (xs_tile){tm, tn, 2, 1};
    for (int i = 0; i < from->n; i++)
        if (from->tiles[i].m == tm && from->tiles[i].n == tn)
            to->tiles[0] = from->tiles[i];
    to->tiles[0].m = tm;
    to->tiles[0].n = tn;
}

/* op=gemm: rows follow the BLAS (column-major) convention of cuBLAS
 * measurements unless layout=row: column-major C = op(A) op(B) is the
 * row-major C^T = op(B)^T op(A)^T, so m and n and the transposes swap. */
static int predict_gemm(const xs_device *dev, const xs_vrow *r, char *why, double *t, double *lo, double *hi)
{
    const char *set = xs_vrow_set_of(r);
    long long m, n, k, batch;
    char v[16], dt[16];
    size_t rs = XS_VREASON_MAX;
    long long bias, split_k;
    int tm, tn;
    if (xs_kv_known(set, "op|m|n|k|batch|ta|tb|dtype|layout|bias|tile|split_k|host_us", why, rs) ||
        xs_kv_int(set, "m", 1, 1 << 24, -1, &m, why, rs) ||
        xs_kv_int(set, "n", 1, 1 << 24, -1, &n, why, rs) ||
        xs_kv_int(set, "k", 1, 1 << 24, -1, &k, why, rs) ||
        xs_kv_int(set, "batch", 1, 1 << 20, 1, &batch, why, rs) ||
        xs_kv_int(set, "bias", 0, 1, 0, &bias, why, rs) ||
        xs_kv_int(set, "split_k", 0, 1, 0, &split_k, why, rs) || gemm_tile_key(set, &tm, &tn, why, rs))
        return -1;
    int t_a = 0, t_b = 0, col = 1;
    if (xs_kv_get(set, "ta", v, sizeof v))
        t_a = strcmp(v, "T") == 0 ? 1 : strcmp(v, "N") == 0 ? 0 : -1;
    if (xs_kv_get(set, "tb", v, sizeof v))
        t_b = strcmp(v, "T") == 0 ? 1 : strcmp(v, "N") == 0 ? 0 : -1;
    if (xs_kv_get(set, "layout", v, sizeof v))
        col = strcmp(v, "col") == 0 ? 1 : strcmp(v, "row") == 0 ? 0 : -1;
    int dtype = xs_kv_get(set, "dtype", dt, sizeof dt) ? xs_choice_index("fp32|tf32|fp16|bf16", dt)
                                                       : -1;
    if (t_a < 0 || t_b < 0 || col < 0 || dtype < 0) {
        snprintf(why, rs, "set: ta/tb must be N or T, layout col or row, dtype one of "
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
        xs_tile_set sets[3];
        if (tm) { /* the memo keys on the engine, not on the sets it points to: no memo */
            only_tile(e.vector, tm, tn, &sets[0]);
            only_tile(e.matrix, tm, tn, &sets[1]);
            only_tile(e.unaligned, tm, tn, &sets[2]);
            e.vector = &sets[0];
            e.matrix = &sets[1];
            e.unaligned = &sets[2];
        }
        if ((tm ? xs_gemm_model_direct : xs_gemm_model)(&e, &g, &res, &err)) {
            snprintf(why, rs, "%s", err.msg);
            return -1;
        }
        *(c < 0 ? hi : c == 0 ? t : lo) = res.time_s;
    }
    return 0;
}

/* op=optimizer: one optimizer step over `params` parameters. */
static int predict_optimizer(const xs_device *dev, const xs_vrow *r, char *why, double *t, double *lo,
                             double *hi)
{
    const char *set = xs_vrow_set_of(r);
    long long fused, params, tensors;
    char name[16];
    size_t rs = XS_VREASON_MAX;
    if (xs_kv_known(set, "op|optimizer|fused|params|tensors|state_bytes", why, rs) ||
        xs_kv_int(set, "fused", 0, 1, -1, &fused, why, rs) ||
        xs_kv_int(set, "params", 1, (long long)1 << 45, -1, &params, why, rs) ||
        xs_kv_int(set, "tensors", 1, 1 << 24, 1, &tensors, why, rs))
        return -1;
    long long state_bytes;
    if (xs_kv_int(set, "state_bytes", 2, 4, 4, &state_bytes, why, rs))
        return -1;
    int o = xs_kv_get(set, "optimizer", name, sizeof name)
                ? xs_choice_index(XS_OPTIMIZER_CHOICES, name)
                : -1;
    if (o < 0) {
        snprintf(why, rs, "set: 'optimizer' must be one of %s", XS_OPTIMIZER_CHOICES);
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
            snprintf(why, rs, "%s", err.msg);
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
static int predict_collective(const xs_device *dev, const xs_vrow *r, char *why, const char *op, double *t,
                              double *lo, double *hi)
{
    const char *set = xs_vrow_set_of(r);
    long long devices, per_node;
    double bytes, net;
    char ic[16] = "auto";
    size_t rs = XS_VREASON_MAX;
    if (xs_kv_known(set, "op|devices|per_node|bytes|interconnect|network_gbs", why, rs) ||
        xs_kv_int(set, "devices", 2, 65536, -1, &devices, why, rs) ||
        xs_kv_int(set, "per_node", 0, 65536, 0, &per_node, why, rs) ||
        xs_kv_num(set, "bytes", 1, 1e15, -1, &bytes, why, rs) ||
        xs_kv_num(set, "network_gbs", 0, 1e5, 0, &net, why, rs))
        return -1;
    if (net > 0 && net < XS_NETWORK_GBS_MIN) { /* the gate's floor (gate.h) */
        snprintf(why, rs, "set: 'network_gbs' must be at least %g (10 MB/s), got %g",
                 XS_NETWORK_GBS_MIN, net);
        return -1;
    }
    xs_kv_get(set, "interconnect", ic, sizeof ic);
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
        snprintf(why, rs, "set: interconnect must be one of " XS_INTERCONNECT_CHOICES
                                ", devices a multiple of per_node");
        return -1;
    }
    xs_topo topo;
    xs_error err;
    if (xs_topo_of(dev, &s, &topo, &err)) {
        snprintf(why, rs, "%s", err.msg);
        return -1;
    }
    *t = *lo = *hi = xs_comm_best(&topo, coll, bytes, NULL);
    return 0;
}

/* Every other class (op=softmax, layernorm, ...): the kernel(s) the
 * workload builds for that shape, their times summed. */
static int predict_kernel(const xs_device *dev, const xs_vrow *r, char *why, double *t, double *lo, double *hi)
{
    const char *set = xs_vrow_set_of(r);
    size_t rs = XS_VREASON_MAX;
    xs_kernel_spec k;
    xs_op ops[XS_KERNEL_OPS_MAX];
    int n;
    xs_error err;
    if (xs_kernel_spec_parse(set, &k, why, rs))
        return -1;
    if (xs_kernel_ops(&k, ops, &n, &err)) {
        snprintf(why, rs, "%s", err.msg);
        return -1;
    }
    for (int c = -1; c <= 1; c++) {
        xs_device d;
        xs_dev_corner(dev, c, &d);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            xs_estimate e;
            if (xs_dev_estimate(&d, &ops[i], &e, &err)) {
                snprintf(why, rs, "%s", err.msg);
                return -1;
            }
            sum += e.time_s;
        }
        *(c < 0 ? hi : c == 0 ? t : lo) = sum;
    }
    return 0;
}

/* A whole fine-tuning scenario with the row's ';'-separated overrides. */
static int predict_scenario(const xs_device *dev, const xs_vrow *r, char *why, double *val, double *lo,
                            double *hi, double *matmul_share)
{
    const char *set = xs_vrow_set_of(r);
    char sets_buf[512];
    const char *sets[64];
    int n = 0;
    xs_error err;
    snprintf(sets_buf, sizeof sets_buf, "%s", set);
    for (char *save = NULL, *tok = strtok_r(sets_buf, ";", &save); tok && n < 64;
         tok = strtok_r(NULL, ";", &save))
        if (!blank(tok))
            sets[n++] = tok;
    xs_job j;
    xs_job_init(&j);
    j.dev = *dev;
    if (xs_job_scenario_compact(&j, r->scenario, sets, n, &err) || xs_job_predict(&j, 1, &err)) {
        snprintf(why, XS_VREASON_MAX, "%s", err.msg);
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
        snprintf(why, XS_VREASON_MAX,
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

/* One eager call on an idle stream between two CUDA events (start.record();
 * op(); end.record(); synchronize): the GPU records the start at once, waits
 * while Python dispatches the op (a no_grad call: Python, dispatcher and
 * launch, stack.c), runs the kernel, and records the end when the host has
 * got that far, host_us after the start at the earliest (the harness's
 * floor, row key host_us). So the kernel hides under the floor until it
 * outlasts what the host does after launching it. */
static double isolated_call_s(double host_us, double kernel_s)
{
    xs_host h;
    xs_host_framework_defaults(XS_FW_PT2, &h);
    double dispatch_s = xs_host_launch_us(&h, XS_ISSUE_LOOP) * 1e-6;
    return fmax(host_us * 1e-6, dispatch_s + kernel_s);
}

/* A GEMM row's regime, which decides what bounds it: split_k (cuBLAS split
 * the reduction, a recorded splitKreduce), batched (batch > 1: attention's
 * bmm), skinny (an output side of at most 64: too few tiles to fill the
 * device, little reuse), small_k (k <= 256: the output's traffic weighs as
 * much as the math), else large. */
static const char *gemm_regime(const char *set)
{
    /* a key that does not parse leaves its default: predict_gemm says why */
    char why[8];
    long long m = 0, n = 0, k = 0, batch = 1, split_k = 0;
    xs_kv_int(set, "m", 1, 1 << 24, 0, &m, why, sizeof why);
    xs_kv_int(set, "n", 1, 1 << 24, 0, &n, why, sizeof why);
    xs_kv_int(set, "k", 1, 1 << 24, 0, &k, why, sizeof why);
    xs_kv_int(set, "batch", 1, 1 << 20, 1, &batch, why, sizeof why);
    xs_kv_int(set, "split_k", 0, 1, 0, &split_k, why, sizeof why);
    if (split_k)
        return "gemm.split_k";
    if (batch > 1)
        return "gemm.batched";
    if (m <= 64 || n <= 64)
        return "gemm.skinny";
    if (k <= 256)
        return "gemm.small_k";
    return "gemm.large";
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
    if (!xs_kv_get(xs_vrow_set_of(r), "op", op, sizeof op))
        snprintf(op, sizeof op, "-");
    if (strcmp(op, "gemm") == 0) {
        snprintf(r->kclass, sizeof r->kclass, "%s", gemm_regime(xs_vrow_set_of(r)));
        return;
    }
    char fn[24];
    if (strcmp(op, "pointwise") == 0 && xs_kv_get(xs_vrow_set_of(r), "fn", fn, sizeof fn)) {
        snprintf(r->kclass, sizeof r->kclass, "pointwise.%.20s", fn);
        return;
    }
    int emb_bwd = strcmp(op, "embedding_bwd") == 0; /* the kernels of op=embedding;dir=bwd */
    if (emb_bwd)
        snprintf(op, sizeof op, "embedding");
    char impl[16];
    if (strcmp(op, "attention") == 0 && xs_kv_get(xs_vrow_set_of(r), "impl", impl, sizeof impl))
        snprintf(op, sizeof op, "attention.%.12s", impl); /* flash and unfused: other kernels */
    int has_dir = xs_kv_get(xs_vrow_set_of(r), "dir", dir, sizeof dir);
    const char *suffix = emb_bwd                      ? ".bwd"
                         : !has_dir                   ? ""
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

/* Predict r (parsed): 0 with its prediction, band and error, or -1 with
 * why. */
static int predict_row(xs_vrow *r, char *why)
{
    xs_vrow_classify(r);
    xs_device dev;
    if (load_device(r->device, &dev, why, XS_VREASON_MAX))
        return -1;
    const char *set = xs_vrow_set_of(r);
    double v = 0, lo = 0, hi = 0, share = -1;
    int rc;
    if (strcmp(r->scenario, "-") == 0) {
        char op[32];
        if (strcmp(r->metric, "time_s") != 0) {
            snprintf(why, XS_VREASON_MAX, "a kernel row (scenario '-') needs metric time_s");
            return -1;
        }
        if (!xs_kv_get(set, "op", op, sizeof op)) {
            snprintf(why, XS_VREASON_MAX,
                     "a kernel row (scenario '-') needs op= in its set, one of gemm|optimizer|%s",
                     XS_KOP_CHOICES);
            return -1;
        }
        if (strcmp(op, "gemm") == 0)
            rc = predict_gemm(&dev, r, why, &v, &lo, &hi);
        else if (strcmp(op, "optimizer") == 0)
            rc = predict_optimizer(&dev, r, why, &v, &lo, &hi);
        else if (xs_choice_index(XS_KOP_CHOICES, op) >= 0)
            rc = predict_kernel(&dev, r, why, &v, &lo, &hi);
        else if (xs_choice_index("all_reduce|reduce_scatter|all_gather", op) >= 0)
            rc = predict_collective(&dev, r, why, op, &v, &lo, &hi);
        else {
            snprintf(why, XS_VREASON_MAX, "set: op must be one of gemm|optimizer|%s, got '%.40s'",
                     XS_KOP_CHOICES, op);
            return -1;
        }
        double host_us = 0;
        if (!rc && xs_kv_num(set, "host_us", 0, 1e6, 0, &host_us, why, XS_VREASON_MAX))
            return -1;
        if (host_us > 0) {
            v = isolated_call_s(host_us, v);
            lo = isolated_call_s(host_us, lo);
            hi = isolated_call_s(host_us, hi);
        }
    } else {
        rc = predict_scenario(&dev, r, why, &v, &lo, &hi, &share);
    }
    if (rc)
        return -1;
    r->predicted = v;
    r->low = fmin(lo, hi);
    r->high = fmax(lo, hi);
    r->error_pct = xs_verror_pct(r->metric, v, r->measured);
    set_rest_factor(r, share);
    /* a value near the largest or smallest double (1e308, 4.9e-324) makes
     * the ratios inf: a reason, not "inf" in the report */
    if (!isfinite(v) || !isfinite(lo) || !isfinite(hi) || !isfinite(r->error_pct) ||
        !isfinite(r->rest_factor)) {
        snprintf(why, XS_VREASON_MAX,
                 "predicted %g against measured %g: the error is not a finite number (is "
                 "field 'value' in the metric's unit?)",
                 v, r->measured);
        return -1;
    }
    return 0;
}

void xs_validate_row(xs_vrow *r)
{
    if (!r->ok)
        return;
    char why[XS_VREASON_MAX] = "";
    if (predict_row(r, why))
        xs_vrow_fail(r, "%s", why); /* made one line: it may quote the row */
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

void xs_vratio_summarize(const xs_vrow *rows, size_t n, const char *kclass, const char *device,
                         xs_vratio *out)
{
    memset(out, 0, sizeof *out);
    double *q = malloc((n ? n : 1) * sizeof *q);
    if (!q)
        return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_vrow *r = &rows[i];
        if (!r->ok || !(r->measured > 0) || strcmp(r->metric, "time_s") != 0 ||
            strcmp(r->kclass, kclass) != 0 || strcmp(r->device, device) != 0)
            continue;
        double host_us = 0;
        char why[8];
        xs_kv_num(xs_vrow_set_of(r), "host_us", 0, 1e6, 0, &host_us, why, sizeof why);
        if (r->measured < XS_VISIBLE_OVER_FLOOR * host_us * 1e-6) {
            out->under_floor++;
            continue;
        }
        q[m++] = r->predicted / r->measured;
    }
    out->n = m;
    if (m) {
        out->median = median(q, m); /* sorts q */
        out->p25 = q[(m - 1) / 4];
        out->p75 = q[(3 * (m - 1)) / 4];
    }
    free(q);
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
            xs_vrows_free(all, total);
            return rc;
        }
        if (!all) { /* the first file's rows are the array: no copy */
            all = part;
        } else {
            xs_vrow *grown = realloc(all, (total + m) * sizeof *all);
            if (!grown) {
                xs_vrows_free(part, m);
                xs_vrows_free(all, total);
                return xs_error_set(err, XS_ENOMEM, "out of memory");
            }
            all = grown;
            memcpy(all + total, part, m * sizeof *part); /* the strings move with the rows */
            free(part);
        }
        for (size_t i = 0; i < m; i++)
            xs_validate_row(&all[total + i]);
        total += m;
    }
    *rows = all;
    *n = total;
    return XS_OK;
}
