/* fuzz_hfconfig.c — libFuzzer harness for Hugging Face config.json files:
 * the input is the config, imported through a fixed scenario that names it
 * in model.hf_config and sets nothing of the model's shape itself, then
 * built into its op list. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fileio.h"
#include "fuzz_util.h"
#include "scenario.h"
#include "workload.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cls: the one head every model_type takes; seq 128 fits every shipped config */
static const char SCENARIO[] =
    "{\"id\": \"hf\", \"model\": {\"hf_config\": \"config.json\", \"head\": \"cls\"},\n"
    " \"train\": {\"batch\": 8, \"seq\": 128, \"precision\": \"amp_bf16\",\n"
    "  \"optimizer\": \"adamw\", \"fused_optimizer\": true, \"kernels\": \"eager\",\n"
    "  \"attention\": \"unfused\", \"grad_accum\": 1, \"amp_mode\": \"autocast\",\n"
    "  \"grad_clip\": true, \"grad_clip_impl\": \"torch\", \"fp32_optimizer\": \"same\", \"loss_sync\": false,\n"
    "  \"host_op_us\": 10, \"generic_loop_efficiency\": 0.78, \"loop_elems\": 4,\n"
    "  \"ffn_bias\": \"gemm\", \"zero_grad\": \"none\"},\n"
    " \"data\": {\"samples\": 1000, \"epochs\": 1, \"loader_us\": 0},\n"
    " \"cluster\": {\"devices\": 1}}\n";

static char scenario_path[PATH_MAX];

/* Import data as hf/config.json; 0 when the scenario then loads and builds. */
static int import(const uint8_t *data, size_t size, xs_error *err)
{
    char path[PATH_MAX];
    fz_write("hf", "config.json", data, size, path, sizeof path);
    xs_scenario s;
    int rc = xs_scn_load(scenario_path, NULL, 0, &s, err);
    xs_workload wl;
    if (!rc)
        rc = xs_wl_build(&s, &wl, err);
    if (!rc)
        xs_wl_free(&wl);
    return fz_note("import", rc, err);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    static const char *const subs[] = {"hf"};
    fz_init((*argv)[0], subs, 1);
    fz_write("hf", "hf.json", (const uint8_t *)SCENARIO, sizeof SCENARIO - 1, scenario_path,
             sizeof scenario_path);
    /* a scenario that refused every config would fuzz nothing */
    char shipped[PATH_MAX + 64], *text;
    size_t len;
    xs_error err;
    snprintf(shipped, sizeof shipped, "%s/scenarios/models/bert-base-uncased.json", fz_root());
    if (xs_read_file(shipped, &text, &len, &err) || import((const uint8_t *)text, len, &err)) {
        fprintf(stderr, "fuzz_hfconfig: the fixed scenario does not load: %s\n", err.msg);
        exit(2);
    }
    free(text);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xs_error err;
    fz_nul_refused("import", data, size, import(data, size, &err));
    return 0;
}
