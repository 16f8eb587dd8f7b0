/* paths.h — where devices/ and scenarios/ live, and turning an id such as
 * "a100-sxm4-80gb" into a file path. The data root is $XPUSIM_DATA, else the
 * nearest folder holding devices/ at or above the executable's folder. */
#ifndef XS_PATHS_H
#define XS_PATHS_H

#include <stddef.h>

#include "error.h"

/* Remember the executable path (argv[0] or /proc/self/exe) for lookups. */
void xs_paths_init(const char *argv0);

/* The data root into dst, or an error saying how to set XPUSIM_DATA. */
int xs_data_root(char *dst, size_t size, xs_error *err);

/* Resolve an id or a path in folder ("devices", "scenarios"): a value with
 * '/' or ending in .json is a path, and "-" standard input (fileio.h);
 * otherwise <root>/<folder>/<id>.json. An unknown id is an error that
 * lists the known ones; a path that is a directory says so. */
int xs_resolve(const char *folder, const char *id_or_path, char *dst, size_t size,
               xs_error *err);

/* Sorted ids (file stems) of the *.json files in <root>/<folder>. The caller
 * frees with xs_ids_free. */
int xs_list_ids(const char *folder, char ***ids, size_t *count, xs_error *err);
void xs_ids_free(char **ids, size_t count);

#endif
