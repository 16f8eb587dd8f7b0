/* cmd_advise.c — `xpusim advise`: nearby model shapes that run faster on a
 * device, each predicted through the full step model. */
#include "cli.h"

#include <limits.h>
#include <stdlib.h>

#include "advise.h"
#include "device.h"
#include "paths.h"
#include "scenario.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim advise [-d DEVICE] [-s SCENARIO] [--set KEY=VALUE]...\n"
            "                     [--tolerance PCT] [--format table|json] [-o FILE]\n\n"
            "Proposes model shapes near SCENARIO's that follow the hardware-friendly rules of\n"
            "Anthony et al. (arXiv 2401.14489): vocabulary, hidden and FFN sizes divisible by\n"
            "64 (or 128, 256), head size h/a a multiple of 64, and a micro-batch whose b x s\n"
            "is a multiple of a larger power of two. Each is predicted on DEVICE through the\n"
            "full step model; those within PCT percent (default 5) of the parameter count\n"
            "are ranked by predicted samples/s. Says so when the shape is already good.\n\n"
            "JSON: an array of {change, rule, set, params, params_delta_pct, samples_per_s,\n"
            "predicted_speedup}, fastest first; `set` holds the --set options to apply it.\n\n"
            "Examples:\n"
            "  xpusim advise -d a100-sxm4-80gb -s gpt2-medium-finetune\n"
            "  xpusim advise -d t4 -s bert-base-squad --tolerance 2\n"
            "  xpusim advise -d l4 --set model.vocab=50257 --format json\n");
}

int cli_advise(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfohT", usage, &rc))
        return rc;
    if (o.format == XS_FMT_CSV)
        return cli_fail(EXIT_USAGE, "advise: --format must be table or json");
    xs_error err;
    char spath[PATH_MAX];
    xs_device dev;
    if (xs_dev_open(o.device ? o.device : DEFAULT_DEVICE, &dev, &err) ||
        xs_resolve("scenarios", o.scenario ? o.scenario : DEFAULT_SCENARIO, spath, sizeof spath,
                   &err))
        return cli_fail_err(&err);
    xs_advice base, *advice = NULL;
    size_t n = 0;
    if (xs_advise(&dev, spath, o.sets, o.nsets, o.tolerance, &base, &advice, &n, &err))
        return cli_fail_err(&err);
    xs_scenario s;
    if (xs_scn_load(spath, o.sets, o.nsets, &s, &err)) {
        free(advice);
        return cli_fail_err(&err);
    }
    xs_strbuf sb = {0};
    xs_report_advice(&sb, o.format, &dev, &s, o.tolerance, &base, advice, n);
    rc = cli_deliver(&sb, o.output);
    xs_sb_free(&sb);
    free(advice);
    return rc;
}
