/* paths.c — see paths.h. */
#define _GNU_SOURCE /* dladdr */
#include "paths.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "suggest.h"

static char exe_dir[PATH_MAX];

void xs_paths_init(const char *argv0)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
    } else if (argv0 && realpath(argv0, buf)) {
        /* buf filled by realpath */
    } else {
        snprintf(exe_dir, sizeof exe_dir, ".");
        return;
    }
    xs_dirname(buf, exe_dir, sizeof exe_dir);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int xs_data_root(char *dst, size_t size, xs_error *err)
{
    const char *env = getenv("XPUSIM_DATA");
    char probe[PATH_MAX + 16];
    if (env && *env) {
        snprintf(probe, sizeof probe, "%s/devices", env);
        if (!is_dir(probe))
            return xs_error_set(err, XS_EIO, "XPUSIM_DATA=%s: no devices/ folder there", env);
        snprintf(dst, size, "%s", env);
        return XS_OK;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", exe_dir[0] ? exe_dir : ".");
    /* The binary sits at the top (./xpusim) or in build/asan/; look upwards. */
    for (int up = 0; up < 4; up++) {
        snprintf(probe, sizeof probe, "%s/devices", dir);
        if (is_dir(probe)) {
            snprintf(dst, size, "%s", dir);
            return XS_OK;
        }
        char parent[PATH_MAX];
        xs_dirname(dir, parent, sizeof parent);
        if (strcmp(parent, dir) == 0)
            break;
        snprintf(dir, sizeof dir, "%s", parent);
    }
    /* Installed (make install): the data lie in PREFIX/share/xpusim, and
     * this code in PREFIX/lib/libxpusim.so or PREFIX/bin/xpusim. Found from
     * where this code was loaded, not from a PREFIX compiled in, so that an
     * installed tree still works when moved or staged (DESTDIR), and a
     * program or Python module loading the library finds it without
     * XPUSIM_DATA whatever the executable is. */
    /* the command itself, run by name from PATH as PREFIX/bin/xpusim:
     * dladdr below names the main program by its argv[0], which then has
     * no folder, so the executable's own folder is asked first */
    if (exe_dir[0]) {
        char up[PATH_MAX], share[PATH_MAX + 32];
        xs_dirname(exe_dir, up, sizeof up);
        snprintf(share, sizeof share, "%s/share/xpusim/devices", up);
        if (is_dir(share)) {
            snprintf(dst, size, "%s/share/xpusim", up);
            return XS_OK;
        }
    }
    Dl_info self;
    if (dladdr((void *)xs_data_root, &self) && self.dli_fname && strchr(self.dli_fname, '/')) {
        char real[PATH_MAX], here[PATH_MAX], up[PATH_MAX];
        if (realpath(self.dli_fname, real)) {
            xs_dirname(real, here, sizeof here);
            xs_dirname(here, up, sizeof up);
            char share[PATH_MAX + 32];
            snprintf(share, sizeof share, "%s/share/xpusim/devices", up);
            if (is_dir(share)) {
                snprintf(dst, size, "%s/share/xpusim", up);
                return XS_OK;
            }
        }
    }
    return xs_error_set(err, XS_EIO,
                        "cannot find the devices/ folder next to the executable; set "
                        "XPUSIM_DATA to the xpusim source folder");
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int xs_list_ids(const char *folder, char ***ids, size_t *count, xs_error *err)
{
    char root[PATH_MAX], dir[PATH_MAX + 64];
    int rc = xs_data_root(root, sizeof root, err);
    if (rc)
        return rc;
    snprintf(dir, sizeof dir, "%s/%s", root, folder);
    DIR *d = opendir(dir);
    if (!d)
        return xs_error_set(err, XS_EIO, "%s: cannot list folder", dir);
    size_t n = 0, cap = 16;
    char **out = malloc(cap * sizeof *out);
    struct dirent *e;
    while (out && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **grown = realloc(out, 2 * cap * sizeof *out);
            if (!grown)
                break;
            out = grown;
            cap *= 2;
        }
        out[n] = strndup(e->d_name, len - 5);
        if (!out[n])
            break;
        n++;
    }
    closedir(d);
    if (!out)
        return xs_error_set(err, XS_ENOMEM, "out of memory listing %s", dir);
    qsort(out, n, sizeof *out, by_name);
    *ids = out;
    *count = n;
    return XS_OK;
}

void xs_ids_free(char **ids, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(ids[i]);
    free(ids);
}

int xs_resolve(const char *folder, const char *id_or_path, char *dst, size_t size,
               xs_error *err)
{
    size_t len = strlen(id_or_path);
    if (len == 0)
        return xs_error_set(err, XS_EARG, "an empty name is not a %s id", folder);
    if (xs_is_stdin(id_or_path) || strchr(id_or_path, '/') ||
        (len > 5 && strcmp(id_or_path + len - 5, ".json") == 0)) {
        int rc = xs_check_input(id_or_path, "a JSON file", err);
        if (rc)
            return rc;
        if (!xs_is_stdin(id_or_path) && !xs_file_exists(id_or_path))
            return xs_error_set(err, XS_EIO, "%s: no such file", id_or_path);
        if ((size_t)snprintf(dst, size, "%s", id_or_path) >= size)
            return xs_error_set(err, XS_EARG, "%s: path too long", id_or_path);
        return XS_OK;
    }
    char root[PATH_MAX];
    int rc = xs_data_root(root, sizeof root, err);
    if (rc)
        return rc;
    if ((size_t)snprintf(dst, size, "%s/%s/%s.json", root, folder, id_or_path) >= size)
        return xs_error_set(err, XS_EARG, "%s id too long: %s", folder, id_or_path);
    if (xs_file_exists(dst))
        return XS_OK;
    char **ids = NULL;
    size_t n = 0;
    char known[768] = "";
    if (xs_list_ids(folder, &ids, &n, NULL) != XS_OK)
        n = 0;
    /* ids fold case: "A10" is a10 (file names are lower-case) */
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(ids[i], id_or_path) == 0) {
            snprintf(dst, size, "%s/%s/%s.json", root, folder, ids[i]);
            xs_ids_free(ids, n);
            return XS_OK;
        }
    size_t used = 0;
    for (size_t i = 0; i < n && used + strlen(ids[i]) + 3 < sizeof known; i++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", ids[i]);
    const char *near = xs_suggest(id_or_path, (const char *const *)ids, n);
    char hint[128] = "";
    if (near)
        snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    rc = xs_error_set(err, XS_EARG, "unknown %.*s '%s'%s (known: %s)", (int)strlen(folder) - 1,
                      folder, id_or_path, hint, known);
    xs_ids_free(ids, n);
    return rc;
}
