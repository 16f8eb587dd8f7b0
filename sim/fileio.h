/* fileio.h — whole-file reads and crash-safe writes (temporary name, then
 * rename), so an interrupted run never leaves a half-written report. */
#ifndef XS_FILEIO_H
#define XS_FILEIO_H

#include <stddef.h>

#include "error.h"

/* Read all of path into a NUL-terminated buffer that the caller frees. */
int xs_read_file(const char *path, char **out, size_t *len, xs_error *err);

/* Write len bytes to path via a temporary file in the same folder + rename. */
int xs_write_atomic(const char *path, const char *data, size_t len, xs_error *err);

/* Copy into dst (size dst_size) the folder part of path ("." if none). */
void xs_dirname(const char *path, char *dst, size_t dst_size);

/* 1 if path names an existing regular file. */
int xs_file_exists(const char *path);

#endif
