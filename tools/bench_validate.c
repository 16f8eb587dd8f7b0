/* bench_validate.c — see bench_validate.h. */
#define _GNU_SOURCE
#include "bench_validate.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "validate.h"

/* The shipped rows a realistic file repeats: whole runs, GEMMs, kernels. */
static const char *const SOURCES[] = {
    "data/measured/dev-bert-finetune-lambda.csv",
    "data/measured/dev-gemm-deepbench-v100.csv",
    "data/published/kernels.csv",
};

static size_t heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* kB of a /proc/self/status line ("VmHWM:"), or -1. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0) {
            kb = strtol(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

/* Reset VmHWM to the resident size now (Linux: clear_refs 5). */
static int reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int rc = fputs("5", f) < 0;
    return fclose(f) || rc ? -1 : 0;
}

/* The rows (no header) of the source files, one string; NULL on error. */
static char *source_rows(void)
{
    size_t cap = 0, used = 0;
    char *all = NULL;
    for (size_t i = 0; i < sizeof SOURCES / sizeof SOURCES[0]; i++) {
        char *text = NULL;
        xs_error err;
        if (xs_read_text(SOURCES[i], "a CSV file", &text, NULL, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            free(all);
            return NULL;
        }
        const char *body = strchr(text, '\n');
        body = body ? body + 1 : "";
        size_t n = strlen(body);
        if (used + n + 2 > cap) {
            cap = 2 * (used + n + 2);
            char *grown = realloc(all, cap);
            if (!grown) {
                free(text);
                free(all);
                return NULL;
            }
            all = grown;
        }
        memcpy(all + used, body, n);
        used += n;
        if (n && all[used - 1] != '\n')
            all[used++] = '\n';
        all[used] = '\0';
        free(text);
    }
    return all;
}

static int write_file(const char *path, const char *rows, double mb, size_t *bytes)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench: cannot write %s\n", path);
        return -1;
    }
    size_t n = strlen(rows), want = (size_t)(mb * 1e6), got = 0;
    got += (size_t)fprintf(f, "device,scenario,set,metric,value,source\n");
    while (got < want && n) {
        fwrite(rows, 1, n, f);
        got += n;
    }
    *bytes = got;
    return fclose(f) ? -1 : 0;
}

int xs_bench_validate_memory(const char *dir, double mb, int short_rows, xs_bench_vmem *out)
{
    char *rows = short_rows ? strdup("a,b,,time_s,1,x\n") : source_rows();
    if (!rows)
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/bench-measured-%s.csv", dir, short_rows ? "short" : "rows");
    int rc = write_file(path, rows, mb, &out->file_bytes);
    free(rows);
    if (rc)
        return -1;
    malloc_trim(0);
    size_t heap0 = heap_in_use();
    long rss0 = status_kb("VmRSS:");
    int peak_known = reset_peak() == 0 && rss0 >= 0;
    xs_vrow *v = NULL;
    xs_error err;
    rc = xs_measured_load(path, &v, &out->rows, &err);
    long hwm = status_kb("VmHWM:");
    size_t heap1 = heap_in_use();
    unlink(path);
    if (rc) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    double f = (double)out->file_bytes;
    out->held = (double)(heap1 - heap0) / f;
    out->peak = peak_known && hwm >= rss0 ? (double)(hwm - rss0) * 1024 / f : -1;
    xs_vrows_free(v, out->rows);
    return 0;
}
