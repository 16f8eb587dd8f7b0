/* fileio.c — see fileio.h. */
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

int xs_is_stdin(const char *path)
{
    return strcmp(path, "-") == 0;
}

int xs_check_input(const char *path, const char *what, xs_error *err)
{
    if (xs_is_stdin(path))
        return XS_OK;
    struct stat st;
    if (stat(path, &st) != 0)
        return XS_OK; /* opening it says why (no such file, permission) */
    if (S_ISDIR(st.st_mode))
        return xs_error_set(err, XS_EIO, "%s is a directory, expected %s", path, what);
    if (!S_ISREG(st.st_mode))
        return xs_error_set(err, XS_EIO,
                            "%s is not a regular file (a device, FIFO or socket), expected %s; "
                            "give '-' to read standard input",
                            path, what);
    return XS_OK;
}

/* Read f to its end into a NUL-terminated buffer; 0, or -1 out of memory,
 * -2 on a read error. */
/* Inputs are read whole and parsed in memory (a trace's JSON tree takes
 * about six times its size): past this a file is refused rather than
 * exhausting memory. A profiler trace of a few training steps is tens of
 * MB; a million-row measured-run CSV about 150 MB. */
#define XS_INPUT_MAX_BYTES ((size_t)1 << 30)

static int read_stream(FILE *f, char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        if (n > XS_INPUT_MAX_BYTES) {
            free(buf);
            return -3;
        }
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    if (!buf)
        return -1;
    if (ferror(f)) {
        free(buf);
        return -2;
    }
    buf[n] = '\0';
    /* the UTF-8 byte-order mark: not part of any document xpusim reads */
    if (n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        n -= 3;
        memmove(buf, buf + 3, n + 1);
    }
    *out = buf;
    *len = n;
    return 0;
}

/* Standard input can be read once: its text, kept for every later read
 * of "-" (a command may load its scenario several times). */
static struct {
    pthread_mutex_t lock;
    int done, rc;
    char *text;
    size_t len;
} std_in = {PTHREAD_MUTEX_INITIALIZER, 0, 0, NULL, 0};

static int read_stdin(char **out, size_t *len)
{
    pthread_mutex_lock(&std_in.lock);
    if (!std_in.done) {
        std_in.rc = read_stream(stdin, &std_in.text, &std_in.len);
        std_in.done = 1;
    }
    int rc = std_in.rc;
    char *copy = rc ? NULL : malloc(std_in.len + 1);
    if (copy)
        memcpy(copy, std_in.text, std_in.len + 1);
    else if (!rc)
        rc = -1;
    pthread_mutex_unlock(&std_in.lock);
    if (rc)
        return rc;
    *out = copy;
    *len = std_in.len;
    return 0;
}

int xs_read_input(const char *path, const char *what, char **out, size_t *len,
                  xs_error *err)
{
    int rc = xs_check_input(path, what, err);
    if (rc)
        return rc;
    char *text = NULL;
    size_t n = 0;
    if (xs_is_stdin(path)) {
        rc = read_stdin(&text, &n);
    } else {
        struct stat st;
        FILE *f = fopen(path, "rb");
        if (!f)
            return xs_error_set(err, XS_EIO, "%s: cannot open: %s", path, strerror(errno));
        /* refused before reading when its size already says so */
        rc = fstat(fileno(f), &st) == 0 && (size_t)st.st_size > XS_INPUT_MAX_BYTES
                 ? -3
                 : read_stream(f, &text, &n);
        fclose(f);
    }
    const char *name = xs_is_stdin(path) ? "- (standard input)" : path;
    if (rc == -1)
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory reading file", name);
    if (rc == -3)
        return xs_error_set(err, XS_ERANGE, "%s: larger than %zu MiB, the most xpusim reads "
                                            "as %s (trim it: a few steps of a trace suffice)",
                            name, XS_INPUT_MAX_BYTES >> 20, what);
    if (rc)
        return xs_error_set(err, XS_EIO, "%s: read error", name);
    *out = text;
    if (len)
        *len = n;
    return XS_OK;
}

int xs_read_text(const char *path, const char *what, char **out, size_t *len, xs_error *err)
{
    size_t n = 0;
    int rc = xs_read_input(path, what, out, &n, err);
    if (rc)
        return rc;
    const char *nul = memchr(*out, '\0', n);
    if (nul) {
        size_t at = (size_t)(nul - *out);
        free(*out);
        *out = NULL;
        return xs_error_set(err, XS_EFIELD,
                            "%s: a NUL byte at offset %zu: %s holds none (a binary or "
                            "corrupted file?)",
                            xs_is_stdin(path) ? "- (standard input)" : path, at, what);
    }
    if (len)
        *len = n;
    return XS_OK;
}

int xs_read_file(const char *path, char **out, size_t *len, xs_error *err)
{
    return xs_read_input(path, "a file", out, len, err);
}

void xs_dirname(const char *path, char *dst, size_t dst_size)
{
    const char *slash = strrchr(path, '/');
    if (!slash || xs_is_stdin(path)) {
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

/* Write all of data to fd; 0 or an errno. */
static int write_all(int fd, const char *data, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        done += (size_t)w;
    }
    return 0;
}

/* A device, FIFO or socket at the path is written to, not replaced: `-o
 * /dev/null` run as root must not turn the node into a regular file. */
static int write_through(const char *path, const char *data, size_t len, xs_error *err)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return xs_error_set(err, XS_EIO, "%s: cannot open for writing: %s", path,
                            strerror(errno));
    int e = write_all(fd, data, len);
    if (close(fd) != 0 && !e)
        e = errno;
    return e ? xs_error_set(err, XS_EIO, "%s: cannot write: %s", path, strerror(e)) : XS_OK;
}

#define TMP_TAG ".xpusim-tmp-"

/* Temporaries are named .<name>.xpusim-tmp-<pid>-XXXXXX beside the target,
 * so a run killed mid-write (SIGKILL leaves its temporary behind) is
 * cleaned up by the next write of the same file: any such temporary whose
 * process is gone is removed. */
static void remove_stale_temporaries(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char prefix[NAME_MAX + 32];
    if ((size_t)snprintf(prefix, sizeof prefix, ".%s" TMP_TAG, base) >= sizeof prefix) {
        closedir(d);
        return;
    }
    size_t plen = strlen(prefix);
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, plen) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + plen, &end, 10);
        if (end == e->d_name + plen || *end != '-' || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its writer may still be running */
        char stale[4096];
        if ((size_t)snprintf(stale, sizeof stale, "%s/%s", dir, e->d_name) < sizeof stale)
            unlink(stale);
    }
    closedir(d);
}

/* A fresh temporary beside the target, named as remove_stale_temporaries
 * expects, created with O_EXCL and mode (the umask applies, as to any
 * other program's output: no process-wide umask read or toggled); the
 * descriptor, or -1 with errno. */
static int create_temporary(const char *dir, const char *base, mode_t mode, char *tmp,
                            size_t size)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned long seed = (unsigned long)getpid() * 2654435761u ^ (unsigned long)time(NULL) ^
                         (unsigned long)(uintptr_t)tmp;
    for (int attempt = 0; attempt < 64; attempt++) {
        char tail[7];
        for (int i = 0; i < 6; i++) {
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
            tail[i] = letters[(seed >> 33) % (sizeof letters - 1)];
        }
        tail[6] = '\0';
        if (snprintf(tmp, size, "%s/.%s" TMP_TAG "%ld-%s", dir, base, (long)getpid(), tail) >=
            (int)size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* The file a dangling symlink at path names (created where the link
 * points, so the link stays a link), into target; 0, or -1 when path is
 * no dangling link. */
static int dangling_target(const char *path, char *target, size_t size)
{
    struct stat lst;
    char link[PATH_MAX];
    if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode))
        return -1;
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0)
        return -1;
    link[n] = '\0';
    if (link[0] == '/') {
        snprintf(target, size, "%s", link);
    } else {
        char dir[PATH_MAX];
        xs_dirname(path, dir, sizeof dir);
        if ((size_t)snprintf(target, size, "%s/%s", dir, link) >= size)
            return -1;
    }
    return 0;
}

int xs_write_atomic(const char *path, const char *data, size_t len, xs_error *err)
{
    if (!path[0])
        return xs_error_set(err, XS_EARG, "an empty file name: give the file to write");
    char target[PATH_MAX];
    struct stat st;
    int exists = stat(path, &st) == 0; /* follows a symlink: its target is replaced */
    if (exists && S_ISDIR(st.st_mode))
        return xs_error_set(err, XS_EIO, "%s is a directory, expected a file name to write",
                            path);
    if (exists && !S_ISREG(st.st_mode))
        return write_through(path, data, len, err);
    /* what the caller may not write is not replaced either (the folder's
     * write permission alone would let a rename do it) */
    if (exists && access(path, W_OK) != 0)
        return xs_error_set(err, XS_EIO, "%s: cannot write: %s", path, strerror(errno));
    /* a symlink stays a link: the file it points to is what gets written,
     * created there when the link dangles */
    if (exists ? !realpath(path, target) : dangling_target(path, target, sizeof target) != 0)
        snprintf(target, sizeof target, "%s", path);
    char dir[PATH_MAX], tmp[PATH_MAX + 256];
    xs_dirname(target, dir, sizeof dir);
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    remove_stale_temporaries(dir, base);
    /* a replaced file keeps its mode; a new one gets 0666 less the umask */
    mode_t mode = exists ? st.st_mode & 07777 : 0666;
    int fd = create_temporary(dir, base, exists ? 0600 : mode, tmp, sizeof tmp);
    int mk_errno = errno;
    struct stat dst;
    if (fd < 0 && mk_errno == ENOENT && stat(dir, &dst) != 0)
        return xs_error_set(err, XS_EIO, "%s: the folder %s does not exist (create it first)",
                            path, dir);
    /* a writable file in a folder that takes no new file: written in place */
    if (fd < 0 && exists && (mk_errno == EACCES || mk_errno == EPERM || mk_errno == EROFS))
        return write_through(target, data, len, err);
    if (fd < 0)
        return xs_error_set(err, XS_EIO, "%s: cannot create temporary file: %s", path,
                            strerror(mk_errno));
    int e = write_all(fd, data, len);
    if (!e && ((exists && fchmod(fd, mode) != 0) || fsync(fd) != 0))
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, target) != 0)
        e = errno;
    if (e) {
        unlink(tmp);
        return xs_error_set(err, XS_EIO, "%s: cannot write: %s", path, strerror(e));
    }
    return XS_OK;
}

int xs_write_json(const char *path, const cJSON *doc, int pretty, const char *what,
                  xs_error *err)
{
    char *text = pretty ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc);
    size_t len = text ? strlen(text) : 0;
    char *with_nl = text ? realloc(text, len + 2) : NULL;
    if (!with_nl) {
        free(text);
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory formatting %s", path, what);
    }
    with_nl[len] = '\n';
    with_nl[len + 1] = '\0';
    int rc = xs_write_atomic(path, with_nl, len + 1, err);
    free(with_nl);
    return rc;
}
