/* fuzz_inference.c — libFuzzer harness for the inference scenarios of
 * `xpusim threads` (sim/workload/infer.c) with --set overrides: optional leading
 * lines "set KEY=VALUE", then the scenario JSON. One that loads is built
 * into its op groups and planned on the shipped CPU device, as the
 * command does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "fuzz_util.h"
#include "infer.h"
#include "threads.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static xs_device cpu;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"inf"};
    fz_init((*argv)[0], subs, 1);
    xs_error err;
    if (xs_dev_open("xeon-amx-2c", &cpu, &err)) { /* a harness must not run half set up */
        fprintf(stderr, "fuzz_inference: %s\n", err.msg);
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fz_doc in; /* one input at a time; off the stack */
    fz_doc_write("inf", data, size, &in);
    xs_inf_scenario s;
    xs_error err;
    if (fz_note("load", xs_inf_open(in.path, in.overrides, in.n, &s, &err), &err) == 0) {
        xs_thr_work w;
        if (fz_note("work", xs_inf_work(&s, &w, &err), &err) == 0) {
            xs_thr_plan p;
            if (fz_note("plan", xs_thr_plan_make(&cpu, &w, &p, &err), &err) == 0)
                xs_thr_plan_free(&p);
            xs_thr_work_free(&w);
        }
    }
    return 0;
}
