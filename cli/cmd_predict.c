/* cmd_predict.c — `xpusim predict`: one training step op by op on a
 * device, then the whole run: time, energy and cost. */
#include "cli.h"

#include "job.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim predict [-d DEVICE] [-s SCENARIO] [--set KEY=VALUE]...\n"
            "                      [--price USD_PER_HOUR] [--summary]\n"
            "                      [--format table|json|csv] [-o FILE]\n\n"
            "Predicts one optimizer step op by op (forward, backward, optimizer) on DEVICE,\n"
            "then the whole run of SCENARIO: time, energy (kWh) and cost (USD).\n\n"
            "  -d, --device DEVICE      device id or path (default %s; see `xpusim devices`)\n"
            "  -s, --scenario SCENARIO  scenario id or path (default %s)\n"
            "      --set KEY=VALUE      override a scenario key; repeatable\n"
            "  -f, --format FORMAT      table (people; identical layers summed into one row),\n"
            "                           json or csv (scripts; every op)\n"
            "  -o, --output FILE        write there (atomically) instead of stdout\n"
            "      --summary            only the answer: what ran where, the step, its band\n"
            "                           and the run's time, kWh and $ (table or json)\n"
            "      --price DEV=USD      your price per device-hour instead of the list price\n"
            "      --ignore-memory      exit 0 even when the step does not fit the device's\n"
            "                           memory (it is predicted and reported either way;\n"
            "                           without this the exit status is 4)\n"
            "  -h, --help               this text\n\n"
            "Each op's time is max(compute, memory) + launches x launch cost, where compute\n"
            "runs at the device's peak for the format (tensor cores where they support it)\n"
            "at its sustained clock x model.gemm_efficiency, and memory at DRAM bandwidth x\n"
            "model.mem_bw_efficiency. 'bound' says which term set the time. Energy: power\n"
            "between idle and TDP by how busy compute and memory are. MFU: matmul FLOP/s\n"
            "over the datasheet dense peak of the engine the matmuls run on.\n"
            "The host queues a GPU's kernels at what the host model says each launch costs\n"
            "by who issues it (a Python op recorded by autograd, a backward node of the C++\n"
            "engine, an autocast cast, a no_grad Python loop op, a multi-tensor launch: the\n"
            "scenario's host section over sourced defaults; train.host_op_us, when set, one\n"
            "figure for every launch); where it reads a\n"
            "value back (loss scaler, clipping norm, train.loss_sync) the GPU drains and\n"
            "then waits for the launches that follow, and for data.loader_us a sample the\n"
            "host spends fetching the next batch: 'host wait' in the table.\n"
            "Memory: the step's peak device memory (weights, gradients, optimizer state,\n"
            "activations kept for the backward, the largest transient, the allocator's\n"
            "slack, the CUDA context and cuBLAS workspace) against the device's, in GB of\n"
            "2^30 bytes; `xpusim fit` finds the largest micro-batch that fits.\n"
            "JSON ops carry totals per step: flops, bytes, time_s and energy_j are summed\n"
            "over the op's `calls` (micro-batches), so they add up to the step with\n"
            "step.host_wait_s.\n\n",
            DEFAULT_DEVICE, DEFAULT_SCENARIO);
    cli_print_set_keys(out);
    fprintf(out, "\nExamples:\n"
                 "  xpusim predict --summary\n"
                 "  xpusim predict -d l4 -s bert-base-squad --set train.batch=16 "
                 "--set train.precision=amp_bf16\n"
                 "  xpusim predict -d v100-pcie-32gb -s bert-base-squad-hf "
                 "--set device.power_limit_w=150\n"
                 "  xpusim predict -d h100-sxm5-80gb -s gpt2-medium-finetune --price "
                 "h100-sxm5-80gb=2.49 --format json -o run.json\n");
}

int cli_predict(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "dsSfohPUI", usage, &rc))
        return rc;
    if (o.summary && o.format == XS_FMT_CSV)
        return cli_fail(EXIT_USAGE, "predict: --summary goes with --format table or json (csv "
                                    "is the op list)");
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    if (xs_dev_open(o.device ? o.device : DEFAULT_DEVICE, &j.dev, &err) ||
        xs_job_scenario(&j, o.scenario ? o.scenario : DEFAULT_SCENARIO, o.sets, o.nsets, &err) ||
        (rc = cli_apply_prices(&o, &j.dev, 1)) || xs_job_predict(&j, 1, &err)) {
        xs_job_free(&j);
        return rc ? rc : cli_fail_err(&err);
    }
    xs_strbuf sb = {0};
    if (o.summary)
        xs_report_summary(&sb, o.format, &j.dev, &j.s, &j.wl, &j.p);
    else
        xs_report_predict(&sb, o.format, &j.dev, &j.s, &j.wl, &j.p);
    rc = cli_deliver(&sb, o.output);
    xs_sb_free(&sb);
    if (rc == 0 && !j.p.mem.fits && !o.ignore_memory) {
        fprintf(stderr,
                "xpusim: %s does not fit on %s: the step needs %.2f GB, the device has %.2f GB "
                "(exit %d; --ignore-memory to exit 0)\n",
                j.s.id, j.dev.id, j.p.mem.total / XS_GIB, j.p.mem.capacity / XS_GIB,
                EXIT_NOFIT);
        rc = EXIT_NOFIT;
    }
    xs_job_free(&j);
    return rc;
}
