/* cmd_advise.c — `xpusim advise`: changes that make a training step run
 * faster on a device, each predicted through the full step model. */
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
            "                     [--architecture] [--tolerance PCT] [--format table|json]\n"
            "                     [-o FILE]\n\n"
            "Proposes changes that make SCENARIO's training step faster on DEVICE, each\n"
            "predicted through the full step model and ranked by predicted samples/s, with\n"
            "the --set options that apply it. Says so when nothing gains 1%% or more.\n\n"
            "A pretrained checkpoint (the scenario's model comes from model.hf_config) keeps\n"
            "its shape, so only what a fine-tune can change is proposed (kind fine-tune):\n"
            "  micro-batch x grad_accum at the same global batch, and separately a larger\n"
            "    micro-batch, which changes the global batch (retune the learning rate);\n"
            "  precision: fp32 -> tf32, amp_fp16 or amp_bf16 where DEVICE has the format,\n"
            "    AMP as torch.autocast or apex O2 (train.precision, train.amp_mode);\n"
            "  attention unfused -> flash (SDPA), fused layer kernels (train.kernels),\n"
            "    a fused or foreach optimizer (train.fused_optimizer, train.optimizer_impl);\n"
            "  vocabulary padding to a multiple of 64 or 128 (model.vocab:\n"
            "    resize_token_embeddings(pad_to_multiple_of=64));\n"
            "and one row with all of the above that add up, applied together.\n"
            "Model shapes (kind architecture: hidden, heads and FFN sizes following Anthony\n"
            "et al., arXiv 2401.14489) need training from scratch: proposed for an inline\n"
            "model, and for a pretrained one only with --architecture. Candidates whose\n"
            "parameter count moves more than PCT percent (default 5) are dropped.\n\n"
            "  --architecture    propose model shapes for a pretrained checkpoint too\n"
            "  --tolerance PCT   largest parameter change kept, in percent (0, 50]\n\n"
            "JSON: an array of {kind, change, rule, set, changes_global_batch, params,\n"
            "params_delta_pct, samples_per_s, predicted_speedup}, fastest first; `set`\n"
            "holds the --set options that apply the change.\n\n"
            "Examples:\n"
            "  xpusim advise -d a100-sxm4-80gb -s bert-base-squad-hf\n"
            "  xpusim advise -d h100-sxm5-80gb -s gpt2-medium-finetune --architecture\n"
            "  xpusim advise -d t4 -s bert-base-squad --tolerance 2 --format json\n");
}

int cli_advise(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfohTR", usage, &rc))
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
    xs_advise_opts opt = {o.tolerance, o.architecture};
    if (xs_advise(&dev, spath, o.sets, o.nsets, &opt, &base, &advice, &n, &err))
        return cli_fail_err(&err);
    xs_scenario s;
    if (xs_scn_load(spath, o.sets, o.nsets, &s, &err)) {
        free(advice);
        return cli_fail_err(&err);
    }
    xs_strbuf sb = {0};
    xs_report_advice(&sb, o.format, &dev, &s, o.tolerance, o.architecture, &base, advice, n);
    rc = cli_deliver(&sb, o.output);
    xs_sb_free(&sb);
    free(advice);
    return rc;
}
