/* cmd_predict.c — `xpusim predict`: one training step op by op on a
 * device, then the whole run: time, energy and cost. */
#include "cli.h"

#include "job.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim predict [-d DEVICE] [-s SCENARIO] [--set KEY=VALUE]...\n"
            "                      [--format table|json|csv] [-o FILE]\n\n"
            "Predicts one optimizer step op by op (forward, backward, optimizer) on DEVICE,\n"
            "then the whole run of SCENARIO: time, energy (kWh) and cost (USD).\n\n"
            "  -d, --device DEVICE      device id or path (default %s; see `xpusim devices`)\n"
            "  -s, --scenario SCENARIO  scenario id or path (default %s)\n"
            "      --set KEY=VALUE      override a scenario key; repeatable\n"
            "  -f, --format FORMAT      table (people; identical layers summed into one row),\n"
            "                           json or csv (scripts; every op)\n"
            "  -o, --output FILE        write there (atomically) instead of stdout\n"
            "  -h, --help               this text\n\n"
            "Each op's time is max(compute, memory) + launches x launch cost, where compute\n"
            "runs at the device's peak for the format (tensor cores where they support it)\n"
            "at its sustained clock x model.gemm_efficiency, and memory at DRAM bandwidth x\n"
            "model.mem_bw_efficiency. 'bound' says which term set the time. Energy: power\n"
            "between idle and TDP by how busy compute and memory are. MFU: matmul FLOP/s\n"
            "over the datasheet dense peak of the engine the matmuls run on.\n"
            "The host queues a GPU's kernels at train.host_op_us a launch; where it reads a\n"
            "value back (loss scaler, clipping norm, train.loss_sync) the GPU drains and\n"
            "then waits for the launches that follow, and for data.loader_us a sample the\n"
            "host spends fetching the next batch: 'host wait' in the table.\n"
            "JSON ops carry totals per step: flops, bytes, time_s and energy_j are summed\n"
            "over the op's `calls` (micro-batches), so they add up to the step with\n"
            "step.host_wait_s.\n\n",
            DEFAULT_DEVICE, DEFAULT_SCENARIO);
    cli_print_set_keys(out);
}

int cli_predict(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfoh", usage, &rc))
        return rc;
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    if (xs_dev_open(o.device ? o.device : DEFAULT_DEVICE, &j.dev, &err) ||
        xs_job_scenario(&j, o.scenario ? o.scenario : DEFAULT_SCENARIO, o.sets, o.nsets, &err) ||
        xs_job_predict(&j, 1, &err)) {
        xs_job_free(&j);
        return cli_fail_err(&err);
    }
    xs_strbuf sb = {0};
    xs_report_predict(&sb, o.format, &j.dev, &j.s, &j.wl, &j.p);
    rc = cli_deliver(&sb, o.output);
    xs_sb_free(&sb);
    xs_job_free(&j);
    return rc;
}
