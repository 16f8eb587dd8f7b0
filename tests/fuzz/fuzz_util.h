/* fuzz_util.h — what the libFuzzer harnesses share. The loaders read paths,
 * not buffers, so each input is written to a scratch folder of this process
 * and loaded from there, through the same file reading the tool uses. */
#ifndef XS_FUZZ_UTIL_H
#define XS_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Remember the data root (devices/ and scenarios/ beside build/fuzz/) and
 * make the scratch folder, with sub-folders subs[0..nsubs) and a link
 * <sub>/models -> scenarios/models in each, so a scenario's relative
 * hf_config resolves as in the repository. Exits on failure: a harness
 * that cannot set up must not report clean runs. */
void fz_init(const char *argv0, const char *const *subs, int nsubs);

/* With FUZZ_VERBOSE=1 in the environment, print why an input was refused
 * (err's message when rc != 0): how to check that the seeds get past the
 * loaders. A refusal must say why in one line (a message, no control
 * character: the tool prints it as it is): else abort(), a finding.
 * Returns rc. */
int fz_note(const char *step, int rc, const xs_error *err);

/* A NUL byte inside a file ends no document silently: a file of size
 * bytes holding one must have been refused (rc != 0); else abort(). */
void fz_nul_refused(const char *step, const uint8_t *data, size_t size, int rc);

/* Text a report prints holds no escape sequence of the input's (no ESC
 * byte); else abort(). */
void fz_no_escape(const char *step, const char *text, size_t len);

/* The data root as xs_data_root found it. */
const char *fz_root(void);

/* <scratch>/<sub>/<name> into dst. */
void fz_path(const char *sub, const char *name, char *dst, size_t dst_size);

/* Write size bytes of data to fz_path(sub, name), returned in dst. Exits
 * on a write failure (the scratch folder is ours). */
void fz_write(const char *sub, const char *name, const uint8_t *data, size_t size, char *dst,
              size_t dst_size);

/* The file name a JSON document asks for: "<id>.json" when its top-level
 * "id" is a plain name ([A-Za-z0-9_.-], not starting with '.'), else
 * "<fallback>.json". The loaders insist that the id equals the file name;
 * naming the file after it lets the fuzzer reach the checks behind it. */
void fz_name(const uint8_t *data, size_t size, const char *fallback, char *dst, size_t dst_size);

/* Leading "set KEY=VALUE" lines of data (at most FZ_SET_MAX, each cut to
 * FZ_SET_LEN - 1 bytes), then the document. */
#define FZ_SET_LEN 256
#define FZ_SET_MAX 8

/* A document preceded by its "set" lines, as a loader takes it: the
 * overrides (pointers into sets) and the document written under sub,
 * named by fz_name (fallback "fuzz"). */
typedef struct {
    char sets[FZ_SET_MAX][FZ_SET_LEN];
    const char *overrides[FZ_SET_MAX];
    int n;
    char path[4096];
} fz_doc;
void fz_doc_write(const char *sub, const uint8_t *data, size_t size, fz_doc *d);

/* The offset of the first line "%%" in data (the split between two
 * documents of one input), or size when there is none; *next is where the
 * second document starts. */
size_t fz_split(const uint8_t *data, size_t size, size_t *next);

#endif
