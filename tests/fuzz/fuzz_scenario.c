/* fuzz_scenario.c — libFuzzer harness for scenario files with --set
 * overrides: the input is optional leading lines "set KEY=VALUE" (each one
 * --set) and then the scenario JSON. Its relative model.hf_config finds the
 * shipped Hugging Face configs under models/. A scenario that loads is
 * built into its op list, the first thing every command does with it. */
#include <stdint.h>

#include "fuzz_util.h"
#include "scenario.h"
#include "workload.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"scn"};
    fz_init((*argv)[0], subs, 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fz_doc in; /* one input at a time; off the stack */
    fz_doc_write("scn", data, size, &in);
    xs_scenario s;
    xs_error err;
    if (fz_note("load", xs_scn_load(in.path, in.overrides, in.n, &s, &err), &err) == 0) {
        xs_workload wl;
        if (fz_note("workload", xs_wl_build(&s, &wl, &err), &err) == 0)
            xs_wl_free(&wl);
    }
    return 0;
}
