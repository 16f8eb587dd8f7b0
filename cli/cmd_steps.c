/* cmd_steps.c — `xpusim steps`: the optimisation waterfall (steps.h), one
 * optimisation switched on after another from a start with all of them
 * off, each step predicted as `xpusim predict` predicts it. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "report_steps.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim steps [-d DEVICE] [-s SCENARIO] [--order STEP,STEP,...]\n"
            "                    [--batch N] [--set KEY=VALUE]... [--format table|csv|json]\n"
            "                    [-o FILE]\n\n"
            "The optimisation waterfall: SCENARIO on DEVICE with every optimisation off\n"
            "(train.precision fp32, the optimizer unfused, train.kernels eager,\n"
            "train.attention unfused, the scenario's micro-batch), then the steps switched\n"
            "on one after another, each keeping the ones before it:\n"
            "  amp              train.precision amp_bf16 where the device's matrix engine\n"
            "                   runs bf16 (the same peak as fp16 on every GPU that has both,\n"
            "                   and no GradScaler under autocast), else amp_fp16; skipped\n"
            "                   on a device with neither\n"
            "  fused_optimizer  train.fused_optimizer true, optimizer_impl multi_tensor (apex\n"
            "                   FusedAdam, torch fused=True); skipped for bertadam\n"
            "  fused_kernels    train.kernels fused (LightSeq's layer kernels): the classic\n"
            "                   family (BERT, GPT-2) only\n"
            "  flash            train.attention flash\n"
            "  batch            train.batch: the largest micro-batch that fits the device\n"
            "                   (as `xpusim fit` finds it), or --batch N\n"
            "A step that cannot apply (the device lacks the engine, the family the kernels,\n"
            "the batch does not fit, the scenario refuses the override) is listed as\n"
            "skipped with the reason and changes nothing. Each step is a plain prediction:\n"
            "`xpusim predict` with the step's overrides (JSON \"sets\") gives its numbers.\n"
            "The start keeps the scenario's unfused optimizer kernels when it has some\n"
            "(torch.optim's foreach), else the for-loop; in fp32 a recipe's\n"
            "train.fp32_optimizer applies.\n\n"
            "  -d, --device DEVICE      device id or path (default %s)\n"
            "  -s, --scenario SCENARIO  scenario id or path (default %s)\n"
            "      --order LIST         the steps to take, in order, separated by commas\n"
            "                           (default " XS_STEP_ORDER_DEFAULT ");\n"
            "                           steps left out stay off\n"
            "      --batch N            the batch step's micro-batch instead of the largest\n"
            "                           that fits\n"
            "      --set KEY=VALUE      override a scenario key; repeatable (not the keys the\n"
            "                           waterfall sets: train.precision, fused_optimizer,\n"
            "                           optimizer_impl, kernels, attention; train.batch sets\n"
            "                           the start's batch)\n"
            "  -f, --format FORMAT      table (default), json or csv\n"
            "  -o, --output FILE        write there (atomically) instead of stdout\n"
            "  -h, --help               this text\n\n"
            "Table: per step the micro-batch, time per optimizer step (ms), samples/s, the\n"
            "run's hours, kWh and dollars, MFU, peak memory / the device's (GB of 2^30\n"
            "bytes; NO: does not fit), and samples/s against the last applied step (vs\n"
            "prev) and against the start (vs start); then each step's overrides and why,\n"
            "or why it was skipped.\n"
            "JSON: {\"device\", \"scenario\", \"steps\": [{\"index\", \"step\" (start|amp|...),\n"
            "\"applied\", \"setting\" (the overrides the step adds), \"why\" (null when\n"
            "skipped), \"skipped\" (the reason, null when applied), \"sets\" (every override\n"
            "of the step, yours first), \"batch\", \"step_time_s\", \"samples_per_s\",\n"
            "\"tokens_per_s\", \"run_time_s\", \"energy_kwh\", \"cost_usd\", \"mfu\",\n"
            "\"memory_gb\", \"capacity_gb\", \"fits\", \"matmul_engine\", \"speedup_vs_prev\",\n"
            "\"speedup_vs_start\" (samples/s ratios), \"cost_change_vs_prev\",\n"
            "\"cost_change_vs_start\" (run cost ratio - 1)}]}; a skipped step's numbers are\n"
            "null. CSV: the same columns, one row a step, with 'note' (why, or the reason\n"
            "it was skipped); `xpusim plot waterfall` draws it.\n\n"
            "Examples:\n"
            "  xpusim steps -d a100-sxm4-80gb -s bert-large-squad\n"
            "  xpusim steps -d t4 -s gpt2-medium-finetune --order batch,amp,flash\n"
            "  xpusim steps -d h100-sxm5-80gb -s tinyllama-1.1b-finetune --batch 16 "
            "--format json -o steps.json\n"
            "  xpusim steps -d l4 -s bert-base-squad --set train.batch=8 --format csv -o "
            "steps.csv\n",
            DEFAULT_DEVICE, DEFAULT_SCENARIO);
}

int cli_steps_eval(const char *device, const char *scenario, const char *const *sets, int nsets,
                   const char *order, int64_t batch, xs_steps *out)
{
    xs_error err;
    int ord[XS_STEP_COUNT], nord;
    if (xs_steps_parse_order(order ? order : XS_STEP_ORDER_DEFAULT, ord, &nord, &err))
        return cli_fail_err(&err);
    xs_device dev;
    if (xs_dev_open(device ? device : DEFAULT_DEVICE, &dev, &err))
        return cli_fail_err(&err);
    xs_steps_spec sp = {&dev, scenario ? scenario : DEFAULT_SCENARIO, sets, nsets, ord, nord,
                        batch};
    if (xs_steps_run(&sp, out, &err))
        return cli_fail_err(&err);
    return 0;
}

int cli_steps(int argc, char **argv)
{
    static const struct option longs[] = {
        {"device", required_argument, 0, 'd'}, {"scenario", required_argument, 0, 's'},
        {"set", required_argument, 0, 'S'},    {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"order", required_argument, 0, 'O'},  {"batch", required_argument, 0, 'b'},
        {0, 0, 0, 0}};
    const char *device = NULL, *scenario = NULL, *output = NULL, *order = NULL;
    const char *sets[MAX_SETS];
    int nsets = 0, c;
    int64_t batch = 0;
    xs_format fmt = XS_FMT_TABLE;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":d:s:f:o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'd': device = optarg; break;
        case 's': scenario = optarg; break;
        case 'o': output = optarg; break;
        case 'O': order = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'b':
            if (cli_parse_dim("batch", optarg, 1048576, &batch))
                return EXIT_USAGE;
            break;
        case 'S':
            if (cli_add_set(sets, &nsets, optarg))
                return EXIT_USAGE;
            break;
        case 'f':
            if (cli_parse_format(optarg, &fmt))
                return EXIT_USAGE;
            break;
        default: return cli_bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return cli_extra_argument(argv[0], argv[optind]);
    xs_steps *st = malloc(sizeof *st);
    if (!st)
        return cli_fail(EXIT_DATA, "out of memory");
    int rc = cli_steps_eval(device, scenario, sets, nsets, order, batch, st);
    if (rc == 0) {
        xs_strbuf sb = {0};
        xs_report_steps(&sb, fmt, st);
        rc = cli_deliver(&sb, output);
        xs_sb_free(&sb);
    }
    free(st);
    return rc;
}
