/* fuzz_trace.c — libFuzzer harness for PyTorch profiler traces (Chrome
 * trace JSON): the input is the trace, lined up with one fixed prediction
 * (bert-base-squad on a100-sxm4-80gb, made once) as `xpusim validate
 * --trace` does, and reported in every format. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "job.h"
#include "report.h"
#include "trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static xs_job job;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"trace"};
    fz_init((*argv)[0], subs, 1);
    xs_error err;
    xs_job_init(&job);
    if (xs_dev_open("a100-sxm4-80gb", &job.dev, &err) ||
        xs_job_scenario(&job, "bert-base-squad", NULL, 0, &err) || xs_job_predict(&job, 1, &err)) {
        fprintf(stderr, "fuzz_trace: the fixed prediction failed: %s\n", err.msg);
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[4096];
    fz_write("trace", "trace.json", data, size, path, sizeof path);
    xs_trace t;
    xs_error err;
    xs_vrow *rows;
    size_t n;
    int rc = fz_note("load", xs_trace_load(path, &t, &err), &err);
    fz_nul_refused("load", data, size, rc);
    if (rc)
        return 0;
    if (xs_trace_rows(&t, path, &job.dev, job.s.id, "train.batch=32", &job.wl, &job.p, &rows, &n,
                      &err) == XS_OK) {
        xs_strbuf sb = {0};
        for (int f = XS_FMT_TABLE; f <= XS_FMT_CSV; f++)
            xs_report_validate_trace(&sb, (xs_format)f, &t, rows, n);
        fz_no_escape("report", sb.data, sb.len);
        xs_sb_free(&sb);
        xs_vrows_free(rows, n);
    }
    xs_trace_free(&t); /* the per-step figures a load allocates */
    return 0;
}
