/* trace.c — see trace.h. The trace format is Kineto's Chrome trace as
 * torch.profiler exports it (libkineto output_json.cpp, CuptiActivity.cpp):
 * complete events ("ph": "X") with a "cat" — user_annotation for
 * ProfilerStep#N on the host (cpu_op in some releases, Operator in 1.8),
 * gpu_user_annotation for its copy on the GPU, cuda_runtime / cuda_driver
 * for launches (args.correlation), kernel, gpu_memcpy, gpu_memset for GPU
 * work (args.correlation, device, stream) — and a top-level
 * deviceProperties list ({"id", "name", ...} per GPU). */
#include "trace.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "grow.h"
#include "schema.h"

#define STEP_PREFIX "ProfilerStep#"

typedef struct {
    int number;
    double ts, dur;
    int index; /* event index in traceEvents, for messages */
} span;

typedef struct {
    double corr, ts, tid; /* tid < 0: none */
} launch;

/* A GEMM op of the host (aten::mm, ...) with its recorded shape. */
typedef struct {
    double ts, dur, tid;
    int64_t m, n, k, batch;
} gemm_op;

typedef struct {
    double ts, dur, corr; /* corr < 0: none */
    int cls, device;      /* device < 0: none */
    const char *name;     /* into the parsed document */
} gpu_event;

/* Everything a load collects before it turns into steps; one free. */
typedef struct {
    span *host, *gpu;
    size_t nhost, ngpu, caphost, capgpu;
    launch *launches;
    size_t nlaunch, caplaunch;
    gpu_event *ev;
    size_t nev, capev;
    gemm_op *ops; /* by ts once built */
    size_t nops, capops;
} loader;

static void loader_free(loader *l)
{
    free(l->host);
    free(l->gpu);
    free(l->launches);
    free(l->ev);
    free(l->ops);
}

static int cat_is(const char *cat, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(cat, *names) == 0)
            return 1;
    return 0;
}

/* Kineto's categories, with the names of PyTorch 1.8's exporter. */
static const char *const GPU_CATS[] = {"kernel", "Kernel", "gpu_memcpy", "Memcpy",
                                       "gpu_memset", "Memset", NULL};
static const char *const LAUNCH_CATS[] = {"cuda_runtime", "cuda_driver", "Runtime", NULL};

static double num_arg(const cJSON *e, const char *key)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *v = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, key) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static int by_span_ts(const void *a, const void *b)
{
    double x = ((const span *)a)->ts, y = ((const span *)b)->ts;
    return (x > y) - (x < y);
}

static int by_span_number(const void *a, const void *b)
{
    return ((const span *)a)->number - ((const span *)b)->number;
}

static int by_corr(const void *a, const void *b)
{
    double x = ((const launch *)a)->corr, y = ((const launch *)b)->corr;
    return (x > y) - (x < y);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and 100 x IQR / median of v[0, n) (sorted in place); linear
 * interpolation between ranks, as the GPU kit's quantiles(). */
static double median_spread(double *v, size_t n, double *spread_pct)
{
    *spread_pct = -1;
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, by_double);
    double q[3];
    for (int i = 0; i < 3; i++) {
        double r = (i + 1) * 0.25 * (double)(n - 1);
        size_t lo = (size_t)r, hi = lo + 1 < n ? lo + 1 : lo;
        q[i] = v[lo] + (v[hi] - v[lo]) * (r - (double)lo);
    }
    if (n >= 2 && q[1] > 0)
        *spread_pct = 100 * (q[2] - q[0]) / q[1];
    return q[1];
}

/* The span of spans[0, n) (sorted by ts) that contains ts, or -1. */
static long containing(const span *s, size_t n, double ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first span starting after ts */
        size_t mid = (lo + hi) / 2;
        if (s[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    return ts < s[lo - 1].ts + s[lo - 1].dur ? (long)(lo - 1) : -1;
}

/* The last span of s[0, n) (sorted by ts) that began at or before ts, or -1. */
static long last_begun(const span *s, size_t n, double ts)
{
    long found = -1;
    for (size_t i = 0; i < n && s[i].ts <= ts; i++)
        found = (long)i;
    return found;
}


/* A profiler time in microseconds: finite, a duration from 0 to 1e12 us
 * (11.6 days, past any profiled step) and a timestamp within 1e18 us of 0
 * (the epoch is 1.7e15 us ago): a larger figure is a damaged trace, and
 * would make the step sums and fits infinite. */
#define MAX_DUR_US 1e12
#define MAX_TS_US 1e18
static int times_ok(const cJSON *ts, const cJSON *dur)
{
    return cJSON_IsNumber(ts) && cJSON_IsNumber(dur) && isfinite(ts->valuedouble) &&
           fabs(ts->valuedouble) <= MAX_TS_US && dur->valuedouble >= 0 &&
           dur->valuedouble <= MAX_DUR_US;
}

/* The 'ts' and 'dur' of a named host-side event (a step, an op). */
static int read_times(const char *path, int index, const cJSON *e, const char *name, double *ts,
                      double *dur, xs_error *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "ts");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "dur");
    if (!times_ok(t, d))
        return xs_error_set(err, XS_EFIELD,
                            "%s: event %d (%s) must have numbers 'ts' and 'dur' (us, 'dur' "
                            "from 0 to 1e12)",
                            path, index, name);
    *ts = t->valuedouble;
    *dur = d->valuedouble;
    return XS_OK;
}
static int read_step_span(const char *path, int index, const cJSON *e, const char *name,
                          span *out, xs_error *err)
{
    const char *digits = name + strlen(STEP_PREFIX);
    char *end;
    long nr = strtol(digits, &end, 10);
    if (!isdigit((unsigned char)*digits) || *end || nr < 0 || nr > 1000000000L)
        return xs_error_set(err, XS_EFIELD,
                            "%s: event %d: field 'name' must be ProfilerStep#<step number>, "
                            "got \"%.60s\"",
                            path, index, name);
    int rc = read_times(path, index, e, name, &out->ts, &out->dur, err);
    if (rc)
        return rc;
    out->number = (int)nr;
    out->index = index;
    return XS_OK;
}

/* ATen's GEMM ops, with which of their "Input Dims" are the two matrices:
 * mm(A, B), addmm(bias, A, B, beta, alpha), bmm(A, B), baddbmm(C, A, B,
 * beta, alpha) (native_functions.yaml); the batched ones are 3-D. */
static const char *const OP_CATS[] = {"cpu_op", "Operator", NULL};
static const struct {
    const char *name;
    int a, dims; /* index of A in Input Dims (B follows), rank of A and B */
} GEMM_OPS[] = {
    {"aten::mm", 0, 2}, {"aten::addmm", 1, 2}, {"aten::bmm", 0, 3}, {"aten::baddbmm", 1, 3}};

static int gemm_op_kind(const char *name)
{
    for (int i = 0; i < (int)(sizeof GEMM_OPS / sizeof *GEMM_OPS); i++)
        if (strcmp(name, GEMM_OPS[i].name) == 0)
            return i;
    return -1;
}

/* Dimensions of Input Dims[i] into d[rank]; 0 when it is that many whole
 * numbers in [0, 2^31). */
static int read_dims(const cJSON *dims, int i, int rank, int64_t *d)
{
    const cJSON *a = cJSON_GetArrayItem(dims, i);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != rank)
        return -1;
    for (int j = 0; j < rank; j++) {
        const cJSON *v = cJSON_GetArrayItem(a, j);
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 2147483648.0) ||
            v->valuedouble != floor(v->valuedouble))
            return -1;
        d[j] = (int64_t)v->valuedouble;
    }
    return 0;
}

/* A GEMM op: without Input Dims (record_shapes off) it names no shape and
 * is left out; with them they must be the matrices of a GEMM. */
static int read_gemm_op(const char *path, int index, const cJSON *e, const char *name, loader *l,
                        xs_error *err)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *dims = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, "Input Dims")
                                             : NULL;
    if (!dims)
        return XS_OK;
    int g = gemm_op_kind(name), r = GEMM_OPS[g].dims;
    int64_t a[3], b[3];
    double ts, dur;
    int rc = read_times(path, index, e, name, &ts, &dur, err);
    if (rc)
        return rc;
    if (!cJSON_IsArray(dims) || read_dims(dims, GEMM_OPS[g].a, r, a) ||
        read_dims(dims, GEMM_OPS[g].a + 1, r, b) || a[r - 1] != b[r - 2] ||
        (r == 3 && a[0] != b[0]))
        return xs_error_set(err, XS_EFIELD,
                            "%s: event %d (%s): args.'Input Dims' must hold the matrices %s of a "
                            "GEMM, whole numbers with equal inner sizes",
                            path, index, name, r == 2 ? "[M, K], [K, N]" : "[B, M, K], [B, K, N]");
    gemm_op *grown = xs_grow(l->ops, &l->capops, l->nops, sizeof *grown, 64);
    if (!grown)
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
    l->ops = grown;
    const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    int64_t m = a[r - 2], n = b[r - 1];
    grown[l->nops++] = (gemm_op){ts, dur,
                                 cJSON_IsNumber(tid) && tid->valuedouble >= 0 ? tid->valuedouble
                                                                              : -1,
                                 m < n ? m : n, m < n ? n : m, a[r - 1], r == 3 ? a[0] : 1};
    return XS_OK;
}

static int by_op_ts(const void *a, const void *b)
{
    double x = ((const gemm_op *)a)->ts, y = ((const gemm_op *)b)->ts;
    return (x > y) - (x < y);
}

/* The GEMM op (sorted by ts) of the launch's thread that was running when
 * the launch was made, or NULL. Ops of one thread do not nest; other
 * threads' ops may interleave, so a few earlier ones are looked at. */
static const gemm_op *op_of_launch(const gemm_op *ops, size_t n, const launch *at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first op starting after the launch */
        size_t mid = (lo + hi) / 2;
        if (ops[mid].ts <= at->ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, seen = 0; i > 0 && seen < 64; i--, seen++) {
        const gemm_op *o = &ops[i - 1];
        if ((o->tid < 0 || at->tid < 0 || o->tid == at->tid) && at->ts < o->ts + o->dur)
            return o;
    }
    return NULL;
}

/* Add one kernel to its shape's row. */
static int add_shape(xs_trace *t, size_t *cap, const gemm_op *o, double s)
{
    for (size_t i = 0; i < t->nshapes; i++) {
        xs_trace_shape *h = &t->shapes[i];
        if (h->m == o->m && h->n == o->n && h->k == o->k && h->batch == o->batch) {
            h->events++;
            h->time_s += s;
            return XS_OK;
        }
    }
    xs_trace_shape *grown = xs_grow(t->shapes, cap, t->nshapes, sizeof *grown, 16);
    if (!grown)
        return XS_ENOMEM;
    t->shapes = grown;
    grown[t->nshapes++] = (xs_trace_shape){o->m, o->n, o->k, o->batch, 1, s};
    return XS_OK;
}

/* Fill l from the events; every GPU event classified. */
static int collect(const char *path, const cJSON *events, loader *l, xs_error *err)
{
    int index = -1;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        index++;
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0 || !cJSON_IsString(cat))
            continue; /* metadata, instants, flows */
        const char *c = cat->valuestring;
        if (cJSON_IsString(name) && strncmp(name->valuestring, STEP_PREFIX,
                                            strlen(STEP_PREFIX)) == 0) {
            int on_gpu = strcmp(c, "gpu_user_annotation") == 0;
            span **v = on_gpu ? &l->gpu : &l->host;
            size_t *n = on_gpu ? &l->ngpu : &l->nhost, *cap = on_gpu ? &l->capgpu : &l->caphost;
            span *grown = xs_grow(*v, cap, *n, sizeof **v, 16);
            if (!grown)
                return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
            *v = grown;
            int rc = read_step_span(path, index, e, name->valuestring, &grown[*n], err);
            if (rc)
                return rc;
            (*n)++;
        } else if (cat_is(c, LAUNCH_CATS)) {
            const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
            double corr = num_arg(e, "correlation");
            if (!cJSON_IsNumber(ts) || corr < 0)
                continue; /* a runtime call that launched nothing we can follow */
            launch *grown = xs_grow(l->launches, &l->caplaunch, l->nlaunch, sizeof *grown, 256);
            if (!grown)
                return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
            l->launches = grown;
            const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
            grown[l->nlaunch++] = (launch){corr, ts->valuedouble,
                                           cJSON_IsNumber(tid) && tid->valuedouble >= 0
                                               ? tid->valuedouble
                                               : -1};
        } else if (cat_is(c, OP_CATS) && cJSON_IsString(name) &&
                   gemm_op_kind(name->valuestring) >= 0) {
            int rc = read_gemm_op(path, index, e, name->valuestring, l, err);
            if (rc)
                return rc;
        } else if (cat_is(c, GPU_CATS)) {
            const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
            const cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
            if (!cJSON_IsString(name) || !times_ok(ts, dur))
                return xs_error_set(err, XS_EFIELD,
                                    "%s: GPU event %d (cat %s) must have a string 'name' and "
                                    "numbers 'ts' and 'dur' (us, 'dur' from 0 to 1e12)",
                                    path, index, c);
            /* a device index past any machine's is a damaged trace, and would
             * not fit the int it is kept in */
            double device = num_arg(e, "device");
            if (!(device >= -1 && device <= 65535))
                return xs_error_set(err, XS_EFIELD,
                                    "%s: GPU event %d: args.device must be a device index in "
                                    "[0, 65535], got %.17g",
                                    path, index, device);
            gpu_event *grown = xs_grow(l->ev, &l->capev, l->nev, sizeof *grown, 256);
            if (!grown)
                return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
            l->ev = grown;
            grown[l->nev++] = (gpu_event){ts->valuedouble, dur->valuedouble,
                                          num_arg(e, "correlation"),
                                          xs_kclass_of_kernel(name->valuestring), (int)device,
                                          name->valuestring};
        }
    }
    return XS_OK;
}

/* A step number twice on one side means two traces glued together, or a
 * repeat=0 schedule whose cycles the exporter did not separate. */
static int check_unique(const char *path, span *s, size_t n, const char *side, xs_error *err)
{
    if (n < 2)
        return XS_OK;
    qsort(s, n, sizeof *s, by_span_number);
    for (size_t i = 1; i < n; i++)
        if (s[i].number == s[i - 1].number)
            return xs_error_set(err, XS_EFIELD,
                                "%s: events %d and %d: ProfilerStep#%d appears twice on the %s; "
                                "a trace must hold each step once",
                                path, s[i - 1].index, s[i].index, s[i].number, side);
    return XS_OK;
}

static void name_gpu(const cJSON *root, const loader *l, xs_trace *t)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(root, "deviceProperties");
    if (!cJSON_IsArray(props))
        return;
    int device = -1; /* the GPU the first event that says so ran on */
    for (size_t i = 0; i < l->nev && device < 0; i++)
        device = l->ev[i].device;
    const cJSON *p, *first = NULL, *chosen = NULL;
    cJSON_ArrayForEach(p, props)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(p, "id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        if (!cJSON_IsString(name))
            continue;
        if (!first)
            first = name;
        /* compared as doubles: an id past int's range is no device index */
        if (cJSON_IsNumber(id) && id->valuedouble == (double)device)
            chosen = name;
    }
    if (!chosen)
        chosen = first;
    if (chosen) {
        snprintf(t->gpu_name, sizeof t->gpu_name, "%s", chosen->valuestring);
        /* reports print it: a newline or escape of the file's stays text */
        xs_error_one_line(t->gpu_name, sizeof t->gpu_name);
    }
}

static void note_unknown(xs_trace_unknown *u, size_t *nu, size_t cap, const char *name,
                         double s)
{
    char cut[sizeof u->name];
    size_t len = strlen(name);
    if (len < sizeof cut)
        memcpy(cut, name, len + 1);
    else
        snprintf(cut, sizeof cut, "%.*s...", (int)sizeof cut - 4, name);
    xs_error_one_line(cut, sizeof cut); /* printed in the report as text */
    for (size_t i = 0; i < *nu; i++)
        if (strcmp(u[i].name, cut) == 0) {
            u[i].events++;
            u[i].time_s += s;
            return;
        }
    if (*nu == cap)
        return;
    memcpy(u[*nu].name, cut, sizeof cut);
    u[*nu].events = 1;
    u[*nu].time_s = s;
    (*nu)++;
}

static int by_unknown_time(const void *a, const void *b)
{
    double x = ((const xs_trace_unknown *)a)->time_s, y = ((const xs_trace_unknown *)b)->time_s;
    return (x < y) - (x > y);
}

/* Steps from the spans, events into steps, medians over the steps. */
static int build(const char *path, loader *l, xs_trace *t, xs_error *err)
{
    int rc = check_unique(path, l->host, l->nhost, "host", err);
    if (!rc)
        rc = check_unique(path, l->gpu, l->ngpu, "GPU", err);
    if (rc)
        return rc;
    t->has_steps = l->nhost + l->ngpu > 0;
    /* one step per number seen on either side, in number order */
    size_t cap = l->nhost + l->ngpu + 1, ns = 0;
    xs_trace_step *st = calloc(cap, sizeof *st);
    int *host_of = malloc(cap * sizeof *host_of), *gpu_of = malloc(cap * sizeof *gpu_of);
    size_t nunknown_cap = 64, nunk = 0;
    xs_trace_unknown *unk = calloc(nunknown_cap, sizeof *unk);
    if (!st || !host_of || !gpu_of || !unk) {
        free(st);
        free(host_of);
        free(gpu_of);
        free(unk);
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
    }
    for (size_t h = 0, g = 0; h < l->nhost || g < l->ngpu || (!t->has_steps && ns == 0);) {
        xs_trace_step *s = &st[ns];
        s->host_us = -1;
        s->first_us = INFINITY;
        host_of[ns] = gpu_of[ns] = -1;
        if (!t->has_steps) {
            s->number = -1;
        } else if (g == l->ngpu || (h < l->nhost && l->host[h].number <= l->gpu[g].number)) {
            s->number = l->host[h].number;
            s->host_us = l->host[h].dur;
            host_of[ns] = (int)h++;
            if (g < l->ngpu && l->gpu[g].number == s->number)
                gpu_of[ns] = (int)g++;
        } else {
            s->number = l->gpu[g].number;
            gpu_of[ns] = (int)g++;
        }
        ns++;
    }
    /* the spans by time, each knowing its step */
    span *host = l->host, *gpu = l->gpu;
    for (size_t i = 0; i < ns; i++) {
        if (host_of[i] >= 0)
            host[host_of[i]].number = (int)i; /* reuse: step index */
        if (gpu_of[i] >= 0)
            gpu[gpu_of[i]].number = (int)i;
    }
    if (l->nhost) /* qsort and bsearch want a real array, even an empty one */
        qsort(host, l->nhost, sizeof *host, by_span_ts);
    if (l->ngpu)
        qsort(gpu, l->ngpu, sizeof *gpu, by_span_ts);
    if (l->nlaunch)
        qsort(l->launches, l->nlaunch, sizeof *l->launches, by_corr);
    if (l->nops)
        qsort(l->ops, l->nops, sizeof *l->ops, by_op_ts);
    size_t shape_cap = 0;
    int shape_rc = XS_OK;
    for (size_t i = 0; i < l->nev; i++) {
        const gpu_event *e = &l->ev[i];
        long step = -1, k = -1;
        int how = XS_TA_WHOLE;
        const launch *at = NULL;
        if (e->corr >= 0 && l->nhost && l->nlaunch) {
            launch key = {e->corr, 0, 0};
            at = bsearch(&key, l->launches, l->nlaunch, sizeof key, by_corr);
        }
        if (!t->has_steps) {
            step = 0;
        } else if (at) { /* launched inside a step's host span, or outside every step */
            how = XS_TA_LAUNCH;
            k = containing(host, l->nhost, at->ts);
            step = k >= 0 ? host[k].number : -1;
        } else if (l->ngpu && (k = containing(gpu, l->ngpu, e->ts)) >= 0) {
            how = XS_TA_GPU_SPAN;
            step = gpu[k].number;
        } else if (l->nhost && (k = last_begun(host, l->nhost, e->ts)) >= 0) {
            how = XS_TA_TIME;
            step = host[k].number;
        }
        double s = e->dur * 1e-6;
        if (step < 0) {
            t->outside++;
            t->outside_s += s;
            continue;
        }
        t->assigned[how]++;
        xs_trace_step *p = &st[step];
        p->events[e->cls]++;
        p->time_s[e->cls] += s;
        p->first_us = fmin(p->first_us, e->ts);
        p->last_end_us = fmax(p->last_end_us, e->ts + e->dur);
        if (e->cls == XS_KC_OTHER)
            note_unknown(unk, &nunk, nunknown_cap, e->name, s);
        if (e->cls == XS_KC_GEMM) { /* its shape: the GEMM op its launch ran in */
            if (!at && e->corr >= 0 && l->nlaunch) {
                launch key = {e->corr, 0, 0};
                at = bsearch(&key, l->launches, l->nlaunch, sizeof key, by_corr);
            }
            const gemm_op *o = at && l->nops ? op_of_launch(l->ops, l->nops, at) : NULL;
            if (o && !shape_rc) {
                shape_rc = add_shape(t, &shape_cap, o, s);
            } else if (!o) {
                t->gemm_unshaped++;
                t->gemm_unshaped_s += s;
            }
        }
    }
    free(host_of);
    free(gpu_of);
    size_t kept = 0; /* steps without GPU activity say nothing about the GPU */
    for (size_t i = 0; i < ns; i++) {
        size_t any = 0;
        for (int c = 0; c < XS_KC_COUNT; c++)
            any += st[i].events[c];
        if (any)
            st[kept++] = st[i];
        else
            t->empty_steps++;
    }
    t->steps = st;
    t->nsteps = kept;
    if (shape_rc) {
        free(unk);
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
    }
    qsort(unk, nunk, sizeof *unk, by_unknown_time);
    t->nunknown = nunk < 3 ? nunk : 3;
    memcpy(t->unknown, unk, t->nunknown * sizeof *unk);
    free(unk);
    if (!kept)
        return xs_error_set(err, XS_EFIELD,
                            "%s: no GPU event falls in a ProfilerStep span (%zu events, %zu "
                            "steps); profile with CUDA activities on and call prof.step() "
                            "once per training step",
                            path, t->total, ns);
    double *v = malloc(kept * sizeof *v);
    if (!v)
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
    for (int c = 0; c < XS_KC_COUNT; c++) {
        for (size_t i = 0; i < kept; i++) {
            v[i] = st[i].time_s[c];
            t->seen[c] += st[i].events[c];
        }
        t->measured_s[c] = median_spread(v, kept, &t->spread_pct[c]);
        double unused;
        for (size_t i = 0; i < kept; i++)
            v[i] = (double)st[i].events[c];
        t->events[c] = median_spread(v, kept, &unused);
    }
    double unused;
    for (size_t i = 0; i < kept; i++) {
        double busy = 0;
        for (int c = 0; c < XS_KC_COUNT; c++)
            busy += st[i].time_s[c];
        v[i] = busy;
    }
    t->gpu_s = median_spread(v, kept, &unused);
    for (size_t i = 0; i < kept; i++) {
        double n = 0;
        for (int c = 0; c < XS_KC_COUNT; c++)
            n += (double)st[i].events[c];
        v[i] = n;
    }
    t->events_per_step = median_spread(v, kept, &unused);
    /* a step's length: its host span where every step has one (the wall
     * time of one iteration, host waits included), else its GPU activity */
    t->step_is_host = 1;
    for (size_t i = 0; i < kept; i++)
        t->step_is_host &= st[i].host_us >= 0;
    for (size_t i = 0; i < kept; i++)
        v[i] = t->step_is_host ? st[i].host_us * 1e-6
                               : (st[i].last_end_us - st[i].first_us) * 1e-6;
    t->step_s = median_spread(v, kept, &t->step_spread_pct);
    free(v);
    return XS_OK;
}

void xs_trace_free(xs_trace *t)
{
    free(t->steps);
    t->steps = NULL;
    t->nsteps = 0;
    free(t->shapes);
    t->shapes = NULL;
    t->nshapes = 0;
}

int xs_trace_load(const char *path, xs_trace *t, xs_error *err)
{
    memset(t, 0, sizeof *t);
    cJSON *root = NULL;
    int rc = xs_json_load(path, &root, err);
    if (rc)
        return rc;
    const cJSON *events = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root,
                                                                                     "traceEvents");
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(root, "deviceProperties");
    if (!cJSON_IsArray(events))
        rc = xs_error_set(err, XS_EFIELD,
                          "%s: field 'traceEvents' must be an array of trace events", path);
    else if (props && !cJSON_IsArray(props))
        rc = xs_error_set(err, XS_EFIELD,
                          "%s: field 'deviceProperties' must be an array of GPUs "
                          "({\"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", ...})",
                          path);
    loader l = {0};
    if (!rc)
        rc = collect(path, events, &l, err);
    t->total = l.nev;
    if (!rc && l.nev == 0)
        rc = xs_error_set(err, XS_EFIELD,
                          "%s: no GPU kernel events (\"ph\": \"X\", \"cat\": \"kernel\"); "
                          "export the trace with CUDA activities on",
                          path);
    if (!rc) {
        name_gpu(root, &l, t);
        rc = build(path, &l, t, err);
    }
    loader_free(&l);
    cJSON_Delete(root); /* last: the GPU events' names point into it */
    if (rc)
        xs_trace_free(t);
    return rc;
}

/* What a board name says: its model number ("a100"), form factor and
 * memory, read from its lower-case alphanumeric words ("80GB" -> "80gb"). */
typedef struct {
    char model[24], form[8];
    long mem_gb; /* 0: not stated */
} board;

static void board_of(const char *s, board *b)
{
    memset(b, 0, sizeof *b);
    char prev[24] = "";
    while (*s) {
        char w[24];
        size_t n = 0;
        while (*s && !isalnum((unsigned char)*s))
            s++;
        while (*s && isalnum((unsigned char)*s)) {
            if (n + 1 < sizeof w)
                w[n++] = (char)tolower((unsigned char)*s);
            s++;
        }
        w[n] = '\0';
        if (!n)
            break;
        char *end;
        long num = strtol(w, &end, 10);
        int digits = strpbrk(w, "0123456789") != NULL;
        if (end != w && strcmp(end, "gb") == 0) {
            b->mem_gb = num;
        } else if (strcmp(w, "gb") == 0 && prev[0] &&
                   strspn(prev, "0123456789") == strlen(prev)) { /* "80 GB" */
            b->mem_gb = strtol(prev, NULL, 10);
        } else if (strncmp(w, "sxm", 3) == 0) { /* SXM2, SXM4, SXM5: one socket family */
            if (!b->form[0])
                snprintf(b->form, sizeof b->form, "sxm");
        } else if (strcmp(w, "pcie") == 0 || strcmp(w, "nvl") == 0) {
            if (!b->form[0])
                snprintf(b->form, sizeof b->form, "%.4s", w);
        } else if (strncmp(w, "hbm", 3) == 0) {
            /* memory technology, not the board */
        } else if (digits && !b->model[0]) {
            snprintf(b->model, sizeof b->model, "%s", w);
        }
        snprintf(prev, sizeof prev, "%s", w);
    }
}

int xs_gpu_name_matches(const char *cuda_name, const char *device_name)
{
    board a, b;
    board_of(cuda_name, &a);
    board_of(device_name, &b);
    if (!a.model[0] || !b.model[0]) /* no model number to hold them to */
        return 1;
    if (strcmp(a.model, b.model) != 0)
        return 0;
    if (a.form[0] || b.form[0]) {
        const char *fa = a.form[0] ? a.form : "sxm", *fb = b.form[0] ? b.form : "sxm";
        if (strcmp(fa, fb) != 0)
            return 0;
    }
    return !(a.mem_gb && b.mem_gb && a.mem_gb != b.mem_gb);
}

int xs_trace_rows(const xs_trace *t, const char *trace_path, const xs_device *dev,
                  const char *scenario, const char *set, const xs_workload *wl,
                  const xs_prediction *p, xs_vrow **rows, size_t *n, xs_error *err)
{
    double predicted[XS_KC_COUNT] = {0};
    double launches[XS_KC_COUNT] = {0};
    double all_launches = 0;
    for (size_t i = 0; i < wl->n; i++) {
        int c = xs_kclass_of_op(wl->ops[i].kind);
        predicted[c] += p->est[i].time_s * (double)wl->ops[i].count;
        launches[c] += (double)(wl->ops[i].launches * wl->ops[i].count);
        all_launches += (double)(wl->ops[i].launches * wl->ops[i].count);
    }
    xs_vrow *out = calloc(XS_KC_COUNT + 1, sizeof *out);
    if (!out)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    size_t m = 0;
    for (int c = 0; c < XS_KC_COUNT; c++) {
        if (c == XS_KC_OTHER || (!t->seen[c] && !launches[c]))
            continue; /* other: reported with the trace, not a prediction */
        xs_vrow *r = &out[m++];
        r->file = trace_path;
        r->line = c + 1;
        snprintf(r->device, sizeof r->device, "%s", dev->id);
        snprintf(r->scenario, sizeof r->scenario, "%s", scenario);
        if (xs_vrow_set(r, "%s", set)) {
            xs_vrows_free(out, m);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
        snprintf(r->metric, sizeof r->metric, "kernel_time_s:%s", xs_kclass_name(c));
        snprintf(r->kclass, sizeof r->kclass, "%s", xs_kclass_name(c));
        r->measured = t->measured_s[c];
        r->predicted = predicted[c];
        r->low = r->high = predicted[c];
        r->trace_steps = (int)t->nsteps;
        r->trace_events = t->events[c];
        r->trace_launches = launches[c];
        r->has_spread = t->spread_pct[c] >= 0;
        r->spread_pct = r->has_spread ? t->spread_pct[c] : 0;
        if (t->seen[c] == 0) {
            xs_vrow_fail(r, "no %s kernels in the trace, %.0f predicted (%.3g s)",
                         xs_kclass_name(c), launches[c], predicted[c]);
        } else if (launches[c] == 0) {
            xs_vrow_fail(r,
                         "%.0f %s kernels a step in the trace (%.3g s) that the model does not "
                         "predict",
                         t->events[c], xs_kclass_name(c), t->measured_s[c]);
        } else if (!(r->measured > 0)) {
            xs_vrow_fail(r, "the %s kernels take no time in the median step",
                         xs_kclass_name(c));
        } else {
            r->ok = 1;
            r->error_pct = xs_verror_pct(r->metric, r->predicted, r->measured);
        }
    }
    xs_vrow *r = &out[m++];
    r->file = trace_path;
    r->line = 0;
    snprintf(r->device, sizeof r->device, "%s", dev->id);
    snprintf(r->scenario, sizeof r->scenario, "%s", scenario);
    if (xs_vrow_set(r, "%s", set)) {
        xs_vrows_free(out, m);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    snprintf(r->metric, sizeof r->metric, "step_time_s");
    snprintf(r->kclass, sizeof r->kclass, "%.*s", (int)sizeof r->kclass - 1, scenario);
    r->measured = t->step_s;
    r->predicted = p->step_time_s;
    r->low = p->step_time_low_s > 0 ? p->step_time_low_s : p->step_time_s;
    r->high = p->step_time_high_s > 0 ? p->step_time_high_s : p->step_time_s;
    r->trace_steps = (int)t->nsteps;
    r->trace_events = t->events_per_step;
    r->trace_launches = all_launches;
    r->has_spread = t->step_spread_pct >= 0;
    r->spread_pct = r->has_spread ? t->step_spread_pct : 0;
    r->ok = r->measured > 0;
    if (r->ok)
        r->error_pct = xs_verror_pct(r->metric, r->predicted, r->measured);
    else
        xs_vrow_fail(r, "the trace's steps span no time");
    *rows = out;
    *n = m;
    return XS_OK;
}
