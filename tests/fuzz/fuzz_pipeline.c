/* fuzz_pipeline.c — libFuzzer harness over the whole load -> workload ->
 * predict path (job.h) that every command takes: the input is a device
 * file, a line "%%", then a scenario input as fuzz_scenario reads it
 * (leading "set KEY=VALUE" lines, then the JSON). A prediction that is
 * made, with its band, is reported in every format. */
#include <stdint.h>

#include "fuzz_util.h"
#include "job.h"
#include "report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"dev", "scn"};
    fz_init((*argv)[0], subs, 2);
    return 0;
}

static void report(const xs_job *j)
{
    xs_strbuf sb = {0};
    for (int f = XS_FMT_TABLE; f <= XS_FMT_CSV; f++) {
        xs_report_predict(&sb, (xs_format)f, &j->dev, &j->s, &j->wl, &j->p);
        xs_report_workload(&sb, (xs_format)f, &j->s, &j->wl);
    }
    xs_sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t next, dev_size = fz_split(data, size, &next);
    char name[80], dev_path[4096];
    fz_name(data, dev_size, "fuzz", name, sizeof name);
    fz_write("dev", name, data, dev_size, dev_path, sizeof dev_path);
    static fz_doc scn; /* one input at a time; off the stack */
    fz_doc_write("scn", data + next, size - next, &scn);

    xs_job j;
    xs_error err;
    xs_job_init(&j);
    if (fz_note("device", xs_dev_load(dev_path, &j.dev, &err), &err) == 0 &&
        fz_note("scenario", xs_job_scenario(&j, scn.path, scn.overrides, scn.n, &err), &err) == 0 &&
        fz_note("predict", xs_job_predict(&j, 1, &err), &err) == 0)
        report(&j);
    xs_job_free(&j);
    return 0;
}
