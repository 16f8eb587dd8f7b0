/* cmd_fit.c — `xpusim fit`: will it fit, and what batch should I use? */
#include "cli.h"

#include <stdlib.h>

#include "batch_fit.h"
#include "job.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim fit [-d DEVICE] [-s SCENARIO] [--set KEY=VALUE]...\n"
            "                  [--global-batch N] [--format table|json] [-o FILE]\n\n"
            "Finds the largest micro-batch (train.batch) of SCENARIO whose training step fits\n"
            "DEVICE's memory, with its predicted throughput and its memory by part, then\n"
            "the ways to reach a global batch of N samples an optimizer step (micro-batch x\n"
            "train.grad_accum, every micro-batch that divides N whose step fits), fastest first.\n"
            "N defaults to the scenario's own global batch (train.batch x train.grad_accum).\n"
            "Memory is the step's peak, as `xpusim predict` reports it (weights, gradients,\n"
            "optimizer state, activations kept for the backward, the largest transient, the\n"
            "allocator's slack, CUDA context and cuBLAS workspace), in GB of 2^30 bytes.\n\n"
            "  -d, --device DEVICE      device id or path (default %s)\n"
            "  -s, --scenario SCENARIO  scenario id or path (default %s)\n"
            "      --set KEY=VALUE      override a scenario key (see `xpusim predict --help`)\n"
            "      --global-batch N     samples per optimizer step to split\n"
            "  -f, --format FORMAT      table or json (max_batch, samples_per_s, memory,\n"
            "                           combinations: [{batch, grad_accum, samples_per_s,\n"
            "                           step_time_s, total_gb, run_time_s, run_cost_usd}])\n"
            "  -o, --output FILE        write there (atomically) instead of stdout\n\n"
            "The largest micro-batch is searched at the scenario's train.grad_accum (gradients\n"
            "kept across micro-batches when it is over 1); each split is checked on its own.\n"
            "Exit status 4 when not even a micro-batch of 1 fits, or no split of N does.\n\n"
            "Examples:\n"
            "  xpusim fit -d t4 -s bert-large-squad\n"
            "  xpusim fit -d a10 -s gpt2-medium-finetune --global-batch 64\n"
            "  xpusim fit -d l4 -s bert-base-squad --set train.precision=amp_bf16 --format json\n",
            DEFAULT_DEVICE, DEFAULT_SCENARIO);
}

int cli_fit(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfohG", usage, &rc))
        return rc;
    if (o.format == XS_FMT_CSV)
        return cli_fail(EXIT_USAGE, "fit: --format must be table or json");
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    if (xs_dev_open(o.device ? o.device : DEFAULT_DEVICE, &j.dev, &err) ||
        xs_job_scenario(&j, o.scenario ? o.scenario : DEFAULT_SCENARIO, o.sets, o.nsets, &err)) {
        xs_job_free(&j);
        return cli_fail_err(&err);
    }
    xs_fit_report r = {.dev = &j.dev, .s = &j.s};
    r.global_given = o.global_batch > 0;
    r.global_batch = r.global_given ? o.global_batch : j.s.train.batch * j.s.train.grad_accum;
    xs_fit_split *splits = NULL;
    rc = xs_fit_max_batch(&j.dev, &j.s, &r.max_batch, &r.at, &r.next, &err);
    if (!rc && r.max_batch > 0) {
        j.s.train.batch = r.max_batch;
        xs_wl_free(&j.wl);
        rc = xs_wl_build(&j.s, &j.wl, &err);
        if (!rc)
            rc = xs_job_predict(&j, 0, &err);
        r.samples_per_s = j.p.samples_per_s;
        if (!rc)
            rc = xs_fit_splits(&j.dev, &j.s, r.global_batch, &splits, &r.nsplits, &err);
    } else if (!rc) { /* no micro-batch fits at the scenario's grad_accum; one alone may */
        rc = xs_fit_splits(&j.dev, &j.s, r.global_batch, &splits, &r.nsplits, &err);
    }
    if (rc) {
        xs_job_free(&j);
        return cli_fail_err(&err);
    }
    r.splits = splits;
    xs_strbuf sb = {0};
    xs_report_fit(&sb, o.format, &r);
    rc = cli_deliver(&sb, o.output);
    xs_sb_free(&sb);
    if (rc == 0 && (r.max_batch == 0 || r.nsplits == 0))
        rc = EXIT_NOFIT;
    free(splits);
    xs_job_free(&j);
    return rc;
}
