/* fileio.h — whole-file reads and crash-safe writes (temporary name, then
 * rename), so an interrupted run never leaves a half-written report. The
 * one place that decides what counts as an input file: standard input
 * ("-"), directories, byte-order marks. */
#ifndef XS_FILEIO_H
#define XS_FILEIO_H

#include <stddef.h>

#include "error.h"

/* "-" names standard input wherever xpusim reads a file (-s -, -d -,
 * --measured -, --trace -): 1 if path is it. */
int xs_is_stdin(const char *path);

/* Check that path can be read as what ("a JSON file", "a CSV file"): "-",
 * or a regular file. A directory gives "PATH is a directory, expected a
 * JSON file"; a device, FIFO or socket (which could block or never end) is
 * refused too. A path that cannot be looked up passes: opening it reports
 * why (no such file, no permission). */
int xs_check_input(const char *path, const char *what, xs_error *err);

/* Read all of path into a NUL-terminated buffer that the caller frees,
 * after xs_check_input(path, what). "-" reads standard input to its end
 * the first time and keeps the text, so every later read of "-" in the
 * process gets the same document (a command may load its scenario more
 * than once). A leading UTF-8 byte-order mark, which spreadsheet and
 * Windows editors write, is dropped. Thread-safe. */
int xs_read_input(const char *path, const char *what, char **out, size_t *len,
                  xs_error *err);

/* xs_read_input for a text format (JSON, CSV): a NUL byte, where a text
 * parser would stop and drop the rest unseen, is an error naming the file
 * and its offset (after a byte-order mark, when one was dropped). */
int xs_read_text(const char *path, const char *what, char **out, size_t *len, xs_error *err);

/* xs_read_input(path, "a file", out, len, err). */
int xs_read_file(const char *path, char **out, size_t *len, xs_error *err);

/* Write len bytes to path via a temporary file in the same folder + rename,
 * so a reader never sees half a file. A replaced file keeps its mode, a
 * symlink keeps pointing at the (replaced) file, a device, FIFO or socket
 * is written to rather than replaced, a directory is refused; temporaries
 * left by a killed run of an earlier write to the same file are removed. */
int xs_write_atomic(const char *path, const char *data, size_t len, xs_error *err);

/* doc as JSON text ending in a newline (indented when pretty, else on one
 * line), written with xs_write_atomic; what names the document in the
 * out-of-memory message ("the device", "the trace"). */
struct cJSON;
int xs_write_json(const char *path, const struct cJSON *doc, int pretty, const char *what,
                  xs_error *err);

/* Copy into dst (size dst_size) the folder part of path ("." if none, and
 * for standard input: what it names is relative to the working folder). */
void xs_dirname(const char *path, char *dst, size_t dst_size);

/* 1 if path names an existing regular file. */
int xs_file_exists(const char *path);

#endif
