/* cuda_meas.c — see cuda_meas.h. */
#include "cuda_meas.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "grow.h"
#include "numparse.h"
#include "strbuf.h"

static const char *const BENCH[XS_CB_COUNT] = {
    "launch",    "copy",       "triad",       "gemm_cublas", "gemm_own",
    "layernorm", "softmax",    "adan_fused",  "adan_eager",  "adamw_fused",
    "sustain_gemm", "sustain_copy", "idle"};
static const char *const DTYPE[] = {"fp32", "tf32", "fp16", "bf16"};
static const char *const SRC[] = {"-", "counter", "samples"};

const char *xs_cbench_name(int bench)
{
    return bench >= 0 && bench < XS_CB_COUNT ? BENCH[bench] : "?";
}

int xs_cmeas_add(xs_cmeas_list *l, const xs_cmeas *m)
{
    xs_cmeas *g = xs_grow(l->v, &l->cap, l->n, sizeof *g, 64);
    if (!g)
        return XS_ENOMEM;
    l->v = g;
    l->v[l->n++] = *m;
    return XS_OK;
}

void xs_cmeas_free(xs_cmeas_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* A key is [a-z0-9_], a value printable ASCII without a newline. */
static int meta_ok(const char *key, const char *value)
{
    if (!key[0] || strlen(key) >= 32 || strlen(value) >= 224)
        return 0;
    for (const char *c = key; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return 0;
    for (const char *c = value; *c; c++)
        if (*c < 0x20 || *c > 0x7e)
            return 0;
    return 1;
}

int xs_cmeas_meta_set(xs_cmeas_list *l, const char *key, const char *value)
{
    if (!meta_ok(key, value))
        return XS_ERANGE;
    int i = 0;
    while (i < l->nmeta && strcmp(l->meta[i].key, key) != 0)
        i++;
    if (i == XS_CMEAS_MAX_META)
        return XS_ERANGE;
    snprintf(l->meta[i].key, sizeof l->meta[i].key, "%s", key);
    snprintf(l->meta[i].value, sizeof l->meta[i].value, "%s", value);
    if (i == l->nmeta)
        l->nmeta++;
    return XS_OK;
}

const char *xs_cmeas_meta_get(const xs_cmeas_list *l, const char *key)
{
    for (int i = 0; i < l->nmeta; i++)
        if (strcmp(l->meta[i].key, key) == 0)
            return l->meta[i].value;
    return NULL;
}

int xs_cmeas_write(const xs_cmeas_list *l, const char *path, xs_error *err)
{
    xs_strbuf sb = {0};
    xs_sb_printf(&sb, "%s\n", XS_CMEAS_CSV_HEADER);
    for (int i = 0; i < l->nmeta; i++)
        xs_sb_printf(&sb, "# %s=%s\n", l->meta[i].key, l->meta[i].value);
    for (size_t i = 0; i < l->n; i++) {
        const xs_cmeas *m = &l->v[i];
        char impl[64];
        snprintf(impl, sizeof impl, "%s", m->impl[0] ? m->impl : "-");
        for (char *c = impl; *c; c++) /* one field, one line */
            if (*c == ',' || *c == '\n' || *c == '\r' || *c == '"')
                *c = ';';
        xs_sb_printf(&sb,
                     "%s,%s,%lld,%lld,%lld,%d,%d,%lld,%d,%lld,%.6e,%.6e,%.6e,%.17g,%.17g,%d,%d,"
                     "%.6g,%.6g,%.6g,%s,%.6g,%.6g,%.6g,0x%llx,%s\n",
                     xs_cbench_name(m->bench), m->dtype >= 0 && m->dtype < 4 ? DTYPE[m->dtype] : "-",
                     m->m, m->n, m->k, m->ta, m->tb, m->elems, m->hidden, m->reps, m->median_s,
                     m->q1_s, m->q3_s, m->bytes, m->flops, m->launches, m->tensors, m->sustain_s,
                     m->power_w, m->energy_j, SRC[m->energy_src >= 0 && m->energy_src < 3 ? m->energy_src : 0],
                     m->sm_mhz, m->mem_mhz, m->temp_c, m->reasons, impl);
    }
    if (sb.failed) {
        xs_sb_free(&sb);
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory formatting measurements", path);
    }
    int rc = xs_write_atomic(path, sb.data ? sb.data : "", sb.len, err);
    xs_sb_free(&sb);
    return rc;
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct {
    const char *path;
    int line;
    xs_error *err;
} rd;

static const char *const COLS[XS_CMEAS_COLUMNS] = {
    "bench", "dtype", "m", "n", "k", "ta", "tb", "elems", "hidden", "reps",
    "median_s", "q1_s", "q3_s", "bytes", "flops", "launches", "tensors", "sustain_s",
    "power_w", "energy_j", "energy_src", "sm_mhz", "mem_mhz", "temp_c", "reasons", "impl"};

static int bad(const rd *r, int col, const char *expected, const char *got)
{
    return xs_error_set(r->err, XS_EFIELD, "%s:%d: column '%s': expected %s, got '%.40s'",
                        r->path, r->line, COLS[col], expected, got);
}

static int word(const rd *r, int col, const char *f, const char *const *words, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(f, words[i]) == 0) {
            *out = i;
            return XS_OK;
        }
    char exp[256];
    int used = snprintf(exp, sizeof exp, "one of ");
    for (int i = 0; i < n && used < (int)sizeof exp; i++)
        used += snprintf(exp + used, sizeof exp - (size_t)used, "%s%s", i ? "|" : "", words[i]);
    return bad(r, col, exp, f);
}

static int num(const rd *r, int col, const char *f, double lo, double hi, double *out)
{
    double v = 0;
    char exp[96];
    snprintf(exp, sizeof exp, "a number in %g..%g", lo, hi);
    if (xs_parse_double(f, &v) || v < lo || v > hi)
        return bad(r, col, exp, f);
    *out = v;
    return XS_OK;
}

static int integer(const rd *r, int col, const char *f, long long lo, long long hi,
                   long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(f, &end, 10);
    char exp[96];
    snprintf(exp, sizeof exp, "an integer in %lld..%lld", lo, hi);
    if (!f[0] || *end || errno == ERANGE || v < lo || v > hi)
        return bad(r, col, exp, f);
    *out = v;
    return XS_OK;
}

static int parse_row(const rd *r, char **f, xs_cmeas *m)
{
    long long v;
    double d;
    int rc;
    memset(m, 0, sizeof *m);
    if ((rc = word(r, 0, f[0], BENCH, XS_CB_COUNT, &m->bench)))
        return rc;
    if (strcmp(f[1], "-") == 0)
        m->dtype = -1;
    else if ((rc = word(r, 1, f[1], DTYPE, 4, &m->dtype)))
        return rc;
    const long long BIG = (long long)1 << 40;
    long long *dims[] = {&m->m, &m->n, &m->k};
    for (int c = 2; c <= 4; c++)
        if ((rc = integer(r, c, f[c], 0, 1 << 24, dims[c - 2])))
            return rc;
    if ((rc = integer(r, 5, f[5], 0, 1, &v)))
        return rc;
    m->ta = (int)v;
    if ((rc = integer(r, 6, f[6], 0, 1, &v)))
        return rc;
    m->tb = (int)v;
    if ((rc = integer(r, 7, f[7], 0, BIG, &m->elems)) || (rc = integer(r, 8, f[8], 0, 1 << 20, &v)))
        return rc;
    m->hidden = (int)v;
    if ((rc = integer(r, 9, f[9], 0, BIG, &m->reps)))
        return rc;
    int timed = m->bench < XS_CB_IDLE;
    double tmin = timed ? 1e-12 : 0;
    if ((rc = num(r, 10, f[10], tmin, 1e4, &m->median_s)) ||
        (rc = num(r, 11, f[11], tmin, 1e4, &m->q1_s)) ||
        (rc = num(r, 12, f[12], tmin, 1e4, &m->q3_s)))
        return rc;
    if (!(m->q1_s <= m->median_s && m->median_s <= m->q3_s))
        return bad(r, 11, "q1_s <= median_s <= q3_s", f[11]);
    if (timed && m->reps < 1)
        return bad(r, 9, "at least 1 repetition for a timed bench", f[9]);
    if ((rc = num(r, 13, f[13], 0, 1e18, &m->bytes)) || (rc = num(r, 14, f[14], 0, 1e21, &m->flops)))
        return rc;
    if ((rc = integer(r, 15, f[15], 0, 1 << 24, &v)))
        return rc;
    m->launches = (int)v;
    if ((rc = integer(r, 16, f[16], 0, 1 << 24, &v)))
        return rc;
    m->tensors = (int)v;
    if ((rc = num(r, 17, f[17], 0, 1e6, &m->sustain_s)) ||
        (rc = num(r, 18, f[18], 0, 1e5, &m->power_w)) ||
        (rc = num(r, 19, f[19], 0, 1e12, &m->energy_j)) ||
        (rc = word(r, 20, f[20], SRC, 3, &m->energy_src)) ||
        (rc = num(r, 21, f[21], -1, 1e5, &m->sm_mhz)) ||
        (rc = num(r, 22, f[22], -1, 1e5, &m->mem_mhz)) ||
        (rc = num(r, 23, f[23], -1, 1e3, &m->temp_c)))
        return rc;
    if (m->bench >= XS_CB_SUSTAIN_GEMM && (m->sustain_s <= 0 || m->power_w <= 0))
        return bad(r, m->sustain_s <= 0 ? 17 : 18, "a value > 0 for a sustained or idle run",
                   f[m->sustain_s <= 0 ? 17 : 18]);
    char *end;
    errno = 0;
    if (strncmp(f[24], "0x", 2) != 0 || !f[24][2])
        return bad(r, 24, "a hexadecimal mask 0x...", f[24]);
    m->reasons = strtoull(f[24] + 2, &end, 16);
    if (*end || errno == ERANGE)
        return bad(r, 24, "a hexadecimal mask 0x...", f[24]);
    if (strlen(f[25]) >= sizeof m->impl)
        return bad(r, 25, "at most 63 characters", f[25]);
    snprintf(m->impl, sizeof m->impl, "%s", f[25]);
    (void)d;
    return XS_OK;
}

int xs_cmeas_read(const char *path, xs_cmeas_list *l, xs_error *err)
{
    memset(l, 0, sizeof *l);
    char *text;
    size_t len;
    int rc = xs_read_text(path, "a measurement CSV", &text, &len, err);
    if (rc)
        return rc;
    rd r = {path, 0, err};
    char *p = text;
    while (!rc && *p) {
        char *eol = strchr(p, '\n');
        char *next = eol ? eol + 1 : p + strlen(p);
        if (eol)
            *eol = '\0';
        size_t n = strlen(p);
        if (n && p[n - 1] == '\r')
            p[--n] = '\0';
        r.line++;
        if (r.line == 1) {
            if (strcmp(p, XS_CMEAS_CSV_HEADER) != 0)
                rc = xs_error_set(err, XS_EFIELD,
                                  "%s:1: not a measurement file of calibrate --backend cuda: the "
                                  "header must be '%s'",
                                  path, XS_CMEAS_CSV_HEADER);
        } else if (p[0] == '#') {
            char *eq = strchr(p, '=');
            if (strncmp(p, "# ", 2) != 0 || !eq)
                rc = xs_error_set(err, XS_EFIELD,
                                  "%s:%d: a provenance line must read '# key=value', got '%.40s'",
                                  path, r.line, p);
            else {
                *eq = '\0';
                if (xs_cmeas_meta_set(l, p + 2, eq + 1))
                    rc = xs_error_set(err, XS_EFIELD,
                                      "%s:%d: provenance '%.31s': a key of [a-z0-9_] (under 32), "
                                      "a printable value under 224 characters, at most %d lines",
                                      path, r.line, p + 2, XS_CMEAS_MAX_META);
            }
        } else if (n) {
            char *f[XS_CMEAS_COLUMNS];
            int nf = 0;
            char *s = p;
            for (;;) {
                char *comma = strchr(s, ',');
                if (nf < XS_CMEAS_COLUMNS)
                    f[nf] = s;
                nf++;
                if (!comma)
                    break;
                *comma = '\0';
                s = comma + 1;
            }
            if (nf != XS_CMEAS_COLUMNS)
                rc = xs_error_set(err, XS_EFIELD,
                                  "%s:%d: %d columns, expected %d (column '%s' %s)", path, r.line,
                                  nf, XS_CMEAS_COLUMNS,
                                  COLS[nf < XS_CMEAS_COLUMNS ? nf : XS_CMEAS_COLUMNS - 1],
                                  nf < XS_CMEAS_COLUMNS ? "is missing" : "is followed by more");
            xs_cmeas m;
            if (!rc && !(rc = parse_row(&r, f, &m)) && xs_cmeas_add(l, &m))
                rc = xs_error_set(err, XS_ENOMEM, "%s: out of memory", path);
        }
        p = next;
    }
    free(text);
    if (!rc && r.line == 0)
        rc = xs_error_set(err, XS_EFIELD, "%s: empty: no header, no rows", path);
    if (rc)
        xs_cmeas_free(l);
    return rc;
}
