/* cmd_workload.c — `xpusim workload`: the op list of one training step,
 * no device. */
#include "cli.h"

#include "job.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim workload [-s SCENARIO] [--set KEY=VALUE]... [--format "
            "table|json|csv] [-o FILE]\n\n"
            "Lists the ops of one optimizer step of SCENARIO without a device: GEMM shapes,\n"
            "FLOPs, DRAM bytes and kernel launches, forward, backward and optimizer.\n"
            "Options as for `xpusim predict` (see its --help for the --set keys).\n\n"
            "Examples:\n"
            "  xpusim workload -s bert-base-squad\n"
            "  xpusim workload -s gpt2-medium-finetune --set train.attention=unfused --format csv\n"
            "  xpusim workload --set model.hf_config=my-model/config.json --format json\n");
}

int cli_workload(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "sSfoh", usage, &rc))
        return rc;
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    if (xs_job_scenario(&j, o.scenario ? o.scenario : DEFAULT_SCENARIO, o.sets, o.nsets, &err)) {
        xs_job_free(&j);
        return cli_fail_err(&err);
    }
    xs_strbuf sb = {0};
    xs_report_workload(&sb, o.format, &j.s, &j.wl);
    rc = cli_deliver(&sb, o.output);
    xs_sb_free(&sb);
    xs_job_free(&j);
    return rc;
}
