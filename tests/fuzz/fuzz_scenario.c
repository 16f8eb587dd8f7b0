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
    char sets[FZ_SET_MAX][FZ_SET_LEN];
    const char *overrides[FZ_SET_MAX];
    int n;
    size_t at = fz_sets(data, size, sets, FZ_SET_MAX, &n);
    for (int i = 0; i < n; i++)
        overrides[i] = sets[i];
    char name[80], path[4096];
    fz_name(data + at, size - at, "fuzz", name, sizeof name);
    fz_write("scn", name, data + at, size - at, path, sizeof path);
    xs_scenario s;
    xs_error err;
    if (fz_note("load", xs_scn_load(path, overrides, n, &s, &err), &err) == 0) {
        xs_workload wl;
        if (fz_note("workload", xs_wl_build(&s, &wl, &err), &err) == 0)
            xs_wl_free(&wl);
    }
    return 0;
}
