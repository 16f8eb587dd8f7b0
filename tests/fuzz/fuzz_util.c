/* fuzz_util.c — see fuzz_util.h. */
#include "fuzz_util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "paths.h"

static char root[PATH_MAX];
static char scratch[PATH_MAX];

const char *fz_root(void)
{
    return root;
}

int fz_note(const char *step, int rc, const xs_error *err)
{
    static int verbose = -1;
    if (verbose < 0) {
        const char *v = getenv("FUZZ_VERBOSE");
        verbose = v && *v && strcmp(v, "0") != 0;
    }
    if (verbose)
        fprintf(stderr, "fuzz: %s: %s\n", step, rc ? err->msg : "ok");
    if (rc) {
        const unsigned char *m = (const unsigned char *)err->msg;
        int bad = !m[0];
        for (; *m && !bad; m++)
            bad = *m < 0x20 || *m == 0x7f;
        if (bad) {
            fprintf(stderr, "fuzz: %s: an error that is not one line of text: \"%s\"\n", step,
                    err->msg);
            abort();
        }
    }
    return rc;
}

void fz_nul_refused(const char *step, const uint8_t *data, size_t size, int rc)
{
    if (rc == 0 && size && memchr(data, 0, size)) {
        fprintf(stderr, "fuzz: %s: a file holding a NUL byte was taken\n", step);
        abort();
    }
}

void fz_no_escape(const char *step, const char *text, size_t len)
{
    if (len && memchr(text, 0x1b, len)) {
        fprintf(stderr, "fuzz: %s: the report holds an escape byte of the input's\n", step);
        abort();
    }
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "fuzz: %s: %s\n", what, path);
    exit(2);
}

static void remove_scratch(void)
{
    char cmd[PATH_MAX + 16];
    if (scratch[0] && snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch) < (int)sizeof cmd &&
        system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", scratch);
}

void fz_init(const char *argv0, const char *const *subs, int nsubs)
{
    xs_error err;
    xs_paths_init(argv0);
    if (xs_data_root(root, sizeof root, &err))
        die(err.msg, argv0);
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/xpusim-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch))
        die("cannot make a scratch folder", scratch);
    atexit(remove_scratch);
    for (int i = 0; i < nsubs; i++) {
        char dir[PATH_MAX + 64], models[PATH_MAX + 80], target[PATH_MAX + 32];
        snprintf(dir, sizeof dir, "%s/%s", scratch, subs[i]);
        snprintf(models, sizeof models, "%s/models", dir);
        snprintf(target, sizeof target, "%s/scenarios/models", root);
        if (mkdir(dir, 0700) != 0)
            die("cannot make", dir);
        if (symlink(target, models) != 0)
            die("cannot link", models);
    }
}

void fz_path(const char *sub, const char *name, char *dst, size_t dst_size)
{
    if ((size_t)snprintf(dst, dst_size, "%s/%s/%s", scratch, sub, name) >= dst_size)
        die("path too long", name);
}

void fz_write(const char *sub, const char *name, const uint8_t *data, size_t size, char *dst,
              size_t dst_size)
{
    fz_path(sub, name, dst, dst_size);
    FILE *f = fopen(dst, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        die("cannot write", dst);
}

static int plain_name(const char *s)
{
    if (!s[0] || s[0] == '.' || strlen(s) > 60)
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
           strlen(s);
}

void fz_name(const uint8_t *data, size_t size, const char *fallback, char *dst, size_t dst_size)
{
    snprintf(dst, dst_size, "%s.json", fallback);
    cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(doc, "id");
    if (cJSON_IsString(id) && plain_name(id->valuestring))
        snprintf(dst, dst_size, "%s.json", id->valuestring);
    cJSON_Delete(doc);
}

/* Leading "set KEY=VALUE" lines of data: up to max overrides copied into
 * sets (each NUL-terminated), their count in *n; returns how many bytes
 * they took (the document follows). */
static size_t fz_sets(const uint8_t *data, size_t size, char sets[][FZ_SET_LEN], int max,
                      int *n)
{
    size_t at = 0;
    *n = 0;
    while (*n < max && size - at > 4 && memcmp(data + at, "set ", 4) == 0) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size;
        size_t len = end - at - 4;
        if (len >= FZ_SET_LEN)
            len = FZ_SET_LEN - 1;
        memcpy(sets[*n], data + at + 4, len);
        sets[*n][len] = '\0';
        (*n)++;
        at = nl ? end + 1 : size;
    }
    return at;
}

void fz_doc_write(const char *sub, const uint8_t *data, size_t size, fz_doc *d)
{
    size_t at = fz_sets(data, size, d->sets, FZ_SET_MAX, &d->n);
    for (int i = 0; i < d->n; i++)
        d->overrides[i] = d->sets[i];
    char name[80];
    fz_name(data + at, size - at, "fuzz", name, sizeof name);
    fz_write(sub, name, data + at, size - at, d->path, sizeof d->path);
}

size_t fz_split(const uint8_t *data, size_t size, size_t *next)
{
    for (size_t at = 0; at + 2 <= size; at++) {
        int line_start = at == 0 || data[at - 1] == '\n';
        int line_end = at + 2 == size || data[at + 2] == '\n';
        if (line_start && line_end && data[at] == '%' && data[at + 1] == '%') {
            *next = at + 2 < size ? at + 3 : size;
            return at;
        }
    }
    *next = size;
    return size;
}
