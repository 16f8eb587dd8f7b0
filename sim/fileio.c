/* fileio.c — see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int xs_read_file(const char *path, char **out, size_t *len, xs_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return xs_error_set(err, XS_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf)
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory reading file", path);
    if (failed) {
        free(buf);
        return xs_error_set(err, XS_EIO, "%s: read error", path);
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return XS_OK;
}

void xs_dirname(const char *path, char *dst, size_t dst_size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dst, dst_size, ".");
        return;
    }
    size_t n = (size_t)(slash - path);
    if (n == 0)
        n = 1; /* "/file" lives in "/" */
    if (n >= dst_size)
        n = dst_size - 1;
    memcpy(dst, path, n);
    dst[n] = '\0';
}

int xs_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int xs_write_atomic(const char *path, const char *data, size_t len, xs_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return xs_error_set(err, XS_EIO, "%s: path too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return xs_error_set(err, XS_EIO, "%s: cannot create temporary file: %s", path,
                            strerror(errno));
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        done += (size_t)w;
    }
    /* mkstemp makes 0600 files; a report should be readable like any other. */
    int ok = done == len && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            saved = errno;
        unlink(tmp);
        return xs_error_set(err, XS_EIO, "%s: cannot write: %s", path, strerror(saved));
    }
    return XS_OK;
}
