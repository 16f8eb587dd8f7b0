/* fuzz_cudameas.c — libFuzzer harness for the measurement CSV that
 * `calibrate --backend cuda` writes and --from-measurements reads
 * (calibrate/cuda_meas.h): the input is the file. A file that reads is
 * written back and read again, and must give the same rows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_meas.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"csv"};
    fz_init((*argv)[0], subs, 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4096], again[4096];
    fz_write("csv", "in.csv", data, size, path, sizeof path);
    xs_cmeas_list l, m;
    xs_error err;
    int rc = fz_note("read", xs_cmeas_read(path, &l, &err), &err);
    fz_nul_refused("read", data, size, rc);
    if (rc)
        return 0;
    fz_path("csv", "again.csv", again, sizeof again);
    if (xs_cmeas_write(&l, again, &err) || xs_cmeas_read(again, &m, &err)) {
        fprintf(stderr, "a file that read did not read back: %s\n", err.msg);
        abort();
    }
    if (m.n != l.n || m.nmeta != l.nmeta) {
        fprintf(stderr, "read back %zu rows, %d provenance lines; wrote %zu, %d\n", m.n, m.nmeta,
                l.n, l.nmeta);
        abort();
    }
    for (size_t i = 0; i < l.n; i++)
        if (m.v[i].bench != l.v[i].bench || m.v[i].reps != l.v[i].reps ||
            m.v[i].m != l.v[i].m || m.v[i].reasons != l.v[i].reasons) {
            fprintf(stderr, "row %zu changed on the way back\n", i + 1);
            abort();
        }
    xs_cmeas_free(&l);
    xs_cmeas_free(&m);
    return 0;
}
