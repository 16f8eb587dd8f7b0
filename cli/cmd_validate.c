/* cmd_validate.c — `xpusim validate`: predicted against measured, from
 * measured-run CSV files, a profiler trace of one step, or a calibration
 * backend's own runs of real kernels on this machine. */
#include "cli.h"
#include "kernel_op.h"
#include "schema.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backends.h"
#include "job.h"
#include "trace.h"
#include "validate.h"

#define MAX_MEASURED 16

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim validate --measured FILE.csv [--measured FILE.csv]...\n"
            "                       [--format table|json|csv] [-o FILE]\n"
            "       xpusim validate --trace TRACE.json -d DEVICE -s SCENARIO [--set K=V]...\n"
            "                       [--format table|json|csv] [-o FILE]\n"
            "       xpusim validate --backend NAME -d DEVICE [--quick] [--allow-other-host]\n"
            "                       [--format table|json|csv] [-o FILE]\n\n"
            "Reads measured runs in the measured-run format (header\n"
            "device,scenario,set,metric,value,source; `set` holds ';'-separated key=value\n"
            "overrides) and predicts every row: whole fine-tuning scenarios (metric\n"
            "samples_per_s, tokens_per_s, step_time_s, epoch_time_s or avg_power_w, the\n"
            "board's average power; a set may hold device.power_limit_w=W) and single\n"
            "kernels (scenario '-',\n"
            "metric time_s) with set op=gemm;m=..;n=..;k=..;ta=N|T;tb=N|T;dtype=..\n"
            "[;batch=..][;layout=col|row] (col, the BLAS convention, by default)\n"
            "[;bias=1][;tile=MxN][;split_k=1] (what a profiler recorded: the fused bias and\n"
            "a splitKreduce, kept for the report; the cuBLAS kernel's tile, the kernel the\n"
            "model then times) or\n"
            "op=optimizer;optimizer=..;fused=0|1;params=N[;tensors=N][;state_bytes=4].\n"
            "Every other kernel class a training step costs has a row too: the kernel(s)\n"
            "the workload builds for that shape (the same builder as in a step), their\n"
            "times summed. dtype is fp32|fp16|bf16; dir=fwd|bwd|both where the class has\n"
            "a backward kernel (both: forward then backward, as y = f(x); y.backward(dy));\n"
            "loop_elems (default %d) and generic_loop_efficiency (default %.2f) are the\n"
            "framework's elementwise-loop figures, as in a scenario. Keys besides those:\n",
            XS_KOP_LOOP_ELEMS, XS_KOP_GENERIC_LOOP_EFFICIENCY);
    for (int k = 0; k < XS_KOP_COUNT; k++) {
        char name[32];
        xs_choice_word(XS_KOP_CHOICES, k, name, sizeof name);
        fprintf(out, "  op=%-21s %s\n", name, xs_kernel_keys(k) + strlen(XS_KOP_COMMON_KEYS "|"));
    }
    fprintf(out,
            "(rows, cols: a row kernel's shape; elems: elements; classes: logits a row;\n"
            "vocab, dim, lookups: the table and the indices gathered; params, tensors: the\n"
            "gradients a multi-tensor kernel walks; copy: a cast between fp32 and fp16/bf16;\n"
            "transpose inner=strided: the K^T head copy that reads across rows; pointwise\n"
            "fn=" XS_KOP_POINTWISE_FNS ": one ATen\n"
            "elementwise kernel, the _scalar forms with a Python number; embedding: dir fwd\n"
            "when absent, op=embedding_bwd the same as dir=bwd; rmsnorm: transformers'\n"
            "Python LlamaRMSNorm (7 forward and 10 backward kernels on a half input, 5 and\n"
            "8 on fp32); attention: q, k, v\n"
            "of [batch, heads, seq, head_dim], impl=flash (FlashAttention-2 as SDPA vendors\n"
            "it; sdpa: the same, the backend SDPA picks for fp16/bf16 from Ampere on) or\n"
            "unfused (head copies, bmm, scale, mask, softmax, dropout, bmm and the merge, as\n"
            "an eager layer runs them), causal=0|1, dropout=P (default 0).)\n"
            "Any kernel row (gemm too) may hold host_us=F: the measurement is one eager call\n"
            "timed by CUDA events on an idle stream, F the harness's floor (its smallest\n"
            "call); the kernel then hides under F until it outlasts what the host does after\n"
            "launching it: predicted = max(F, the call's dispatch + the kernel).\n"
            "NCCL collectives: op=all_reduce|reduce_scatter|all_gather;devices=N;bytes=S\n"
            "[;per_node=G][;interconnect=auto|nvlink|pcie][;network_gbs=B], S as\n"
            "nccl-tests' size, the time NCCL's fastest algorithm takes (comm.h).\n"
            "Prints per row predicted, measured, signed error and the uncertainty band, then\n"
            "the count, MAPE, median and max absolute error overall, per file, per device,\n"
            "per metric and per class (a kernel row's op, attention.flash|unfused|sdpa by\n"
            "impl, with .bwd for dir=bwd and .fwdbwd for dir=both; gemm by regime:\n"
            "gemm.split_k, .batched, .skinny (a side of at most 64), .small_k (k <= 256),\n"
            ".large; pointwise by fn; a run's\n"
            "scenario), and for kernel rows by class and device the median and quartiles of\n"
            "predicted / measured time (rows measured below 2 x host_us left out and\n"
            "counted: the floor, not the kernel, set them). A row that cannot be parsed or\n"
            "predicted is listed with its reason and counted apart. The error's sign is the\n"
            "same for every metric: + = optimistic (the run faster, or less power or memory,\n"
            "than measured), - = pessimistic; its size |predicted - measured| / measured.\n\n"
            "Where the error sits: a scenario row also gets matmul_share_pct, the share of\n"
            "the predicted step spent in GEMM, batched-GEMM and fused-attention kernels, and\n"
            "rest_factor, how many times longer than predicted the rest of the step (every\n"
            "other kernel and the host wait) must have run to give the measurement if the\n"
            "matmuls were predicted right (1: no error there; 1.3: the rest ran 30%% longer).\n"
            "Zero or less: the predicted matmuls alone outlast the measured step, so they\n"
            "are too slow. Summaries give its median. It assumes the matmul time is right:\n"
            "compare rows with different matmul shares, or a trace (--trace), before\n"
            "trusting it.\n\n"
            "With --trace, TRACE.json is a PyTorch profiler Chrome trace (export_chrome_trace)\n"
            "of SCENARIO training on DEVICE. It is split into its steps, the ProfilerStep#N\n"
            "spans that prof.step() records (torch.profiler.schedule(wait, warmup, active)):\n"
            "each GPU kernel, copy and fill goes to the step whose span holds the runtime call\n"
            "that launched it (args.correlation), else the step's GPU-side span, else the\n"
            "last step begun before it ran; a trace without ProfilerStep spans is one step.\n"
            "GPU events are classified by name (gemm, attention, softmax, norm, elementwise,\n"
            "copy, reduce, embed, loss, optimizer, comm; other: unknown or not modelled, shown\n"
            "but not compared) and each class's time in the median step is compared with one\n"
            "predicted step (metric kernel_time_s:CLASS), as is the median step's length\n"
            "(step_time_s: its host span, or its GPU activity's span when the trace records\n"
            "no host side). A trace whose deviceProperties name another GPU than DEVICE gets\n"
            "a warning on stderr.\n\n");
    const xs_cal_backend *b;
    for (int i = 0; (b = xs_cal_backend_at(i)) != NULL; i++)
        fprintf(out, "%s\n", b->check_doc);
    fprintf(out,
            "A device calibrated on another machine is refused (exit 2): the check would\n"
            "measure the difference between the machines, not the model's error.\n"
            "--allow-other-host runs it anyway and says so on the report's last line.\n\n");
    fprintf(out,
            "Exit status: 0 when every row was predicted, 1 when any row could not be\n"
            "(the report is still written), 2 for bad usage, 3 when the hardware or library\n"
            "a --backend needs is not on this host (no CUDA GPU, libxscuda.so or NVML; a\n"
            "build without the CPU kernels, or an XS_CPU_ISA set this CPU lacks).\n\n"
            "JSON: error_sign, rows[] {file, line, device, scenario, set, metric, class, measured,\n"
            "[measured_iqr_pct,] predicted, low, high, error_pct, [matmul_share_pct,\n"
            "rest_factor] | error, [trace_steps, kernels_per_step, kernels_predicted]},\n"
            "summary {n, mape_pct, median_abs_pct, max_abs_pct, mean_signed_pct,\n"
            "in_band_pct, [rest_factor_median,] failed}, by_device, by_metric, by_file,\n"
            "by_class,\n"
            "[trace {steps, has_step_spans, first_step, last_step, empty_steps, assigned,\n"
            "outside_events, outside_s, step_time, gpu_events_per_step, gpu_busy_s, gpu_name,\n"
            "other {time_s, events, largest[]}}], with --backend cpu host_state {cores,\n"
            "fma_gflops_core, device_fma_gflops_core, fma_change_pct, fma_rel_iqr_pct,\n"
            "dram_working_set_mb, dram_gbs (null: no memory for the triad), device_dram_gbs,\n"
            "[dram_change_pct, dram_rel_iqr_pct,] threshold_pct, moved (the figures alone:\n"
            "under --allow-other-host no note follows)}, [notes[] (the table's note: lines)].\n"
            "CSV: the same row fields, trace columns, then class; notes go to stderr.\n\n"
            "Examples:\n"
            "  xpusim validate --measured data/measured/dev-bert-finetune-lambda.csv\n"
            "  xpusim validate --measured data/published/kernels.csv --format csv\n"
            "  xpusim validate --trace step.json -d a100-sxm4-80gb -s bert-base-squad\n"
            "  xpusim validate --backend cpu -d my-host.json --quick\n"
            "  xpusim validate --backend cuda -d my-h100.json --format csv -o check.csv\n"
            "  xpusim validate --backend cuda -d h100-sxm5-80gb --quick\n");
}

/* Predict scenario on device and line the prediction up with a measured
 * trace: one row per kernel class and one for the step. A trace recorded
 * on another GPU than the device is compared all the same, after one
 * warning line naming both. */
static int validate_trace(const char *trace, const char *device, const char *scenario,
                          const char *const *sets, int nsets, xs_trace *t, xs_vrow **rows,
                          size_t *n, xs_error *err)
{
    char setline[512] = "";
    xs_job j;
    xs_job_init(&j);
    int rc = xs_trace_load(trace, t, err);
    if (!rc)
        rc = xs_dev_open(device, &j.dev, err);
    if (!rc && t->gpu_name[0] && !xs_gpu_name_matches(t->gpu_name, j.dev.name))
        fprintf(stderr,
                "xpusim: warning: %s: the trace ran on %s (deviceProperties), not on %s (%s); "
                "comparing with %s's prediction anyway\n",
                trace, t->gpu_name, j.dev.id, j.dev.name, j.dev.id);
    if (!rc)
        rc = xs_job_scenario(&j, scenario, sets, nsets, err);
    if (!rc)
        rc = xs_job_predict(&j, 1, err);
    for (int i = 0, used = 0; !rc && i < nsets && used < (int)sizeof setline; i++)
        used += snprintf(setline + used, sizeof setline - (size_t)used, "%s%s", i ? ";" : "",
                         sets[i]);
    if (!rc)
        rc = xs_trace_rows(t, trace, &j.dev, j.s.id, setline, &j.wl, &j.p, rows, n, err);
    xs_job_free(&j);
    if (rc)
        xs_trace_free(t);
    return rc;
}

/* Exit status of a finished validation: its report delivered, and every
 * row predicted. t: the trace the rows come from, or NULL. */
static int finish_validate(xs_vrow *rows, size_t n, const xs_trace *t, const cJSON *extra,
                           xs_format fmt, const char *output)
{
    xs_strbuf sb = {0};
    if (t)
        xs_report_validate_trace(&sb, fmt, t, rows, n);
    else
        xs_report_validate_extra(&sb, fmt, rows, n, extra);
    int rc = cli_deliver(&sb, output);
    xs_sb_free(&sb);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += !rows[i].ok;
    xs_vrows_free(rows, n);
    if (rc == 0 && failed) {
        fprintf(stderr, "xpusim: error: %zu of %zu measured rows could not be predicted (listed "
                        "in the report)\n", failed, n);
        rc = EXIT_DATA;
    }
    return rc;
}

/* validate --backend NAME: run real kernels here and predict them. */
static int validate_backend(const char *name, const char *device, int quick, int other,
                            int allow_other_host, xs_format fmt, const char *output)
{
    int rc;
    const xs_cal_backend *b = cli_cal_backend("validate", name, &rc);
    if (!b)
        return rc;
    char msg[640];
    if (other) {
        snprintf(msg, sizeof msg,
                 "validate: --backend %s runs its own training step and kernels; --measured, "
                 "--trace, -s and --set do not go with it",
                 b->name);
        return cli_fail(EXIT_USAGE, msg);
    }
    if (!device) {
        snprintf(msg, sizeof msg,
                 "validate: --backend %s needs -d DEVICE: a device of class %s, a file written "
                 "by `xpusim calibrate --backend %s`%s",
                 b->name, b->device_class, b->name,
                 strcmp(b->device_class, "gpu") == 0 ? " or a shipped one (h100-sxm5-80gb)" : "");
        return cli_fail(EXIT_USAGE, msg);
    }
    xs_error err;
    xs_device dev;
    if (xs_dev_open(device, &dev, &err))
        return cli_fail_err(&err);
    if (strcmp(xs_backend_of(&dev)->name, b->device_class) != 0) {
        snprintf(msg, sizeof msg,
                 "validate --backend %s: device %s is not a %s device (make one with `xpusim "
                 "calibrate --backend %s`)",
                 b->name, dev.id, b->device_class, b->name);
        return cli_fail(EXIT_USAGE, msg);
    }
    /* a model checked on another machine measures the machines' difference */
    char why[320] = "";
    int same = b->same_host(&dev, why, sizeof why);
    if (!same && !allow_other_host) {
        snprintf(msg, sizeof msg,
                 "validate --backend %s: %s; calibrate this host first, or give "
                 "--allow-other-host to compare the two machines",
                 b->name, why);
        return cli_fail(EXIT_USAGE, msg);
    }
    /* no GPU, library or instruction set here: exit 3, before anything runs */
    if (b->host_check(&err))
        return cli_fail_err(&err);
    cJSON *extra = cJSON_CreateObject();
    int oom = !extra;
    if (!oom && !same) {
        snprintf(msg, sizeof msg, "this compares two machines (--allow-other-host): %s", why);
        oom = xs_report_add_note(extra, msg) != XS_OK;
    }
    if (oom) {
        cJSON_Delete(extra);
        return cli_fail(EXIT_DATA, "validate: out of memory");
    }
    xs_cal_check_opts o = {quick, stderr, extra, !same};
    xs_vrow *rows;
    size_t n;
    if (b->check(&dev, &o, &rows, &n, &err)) {
        cJSON_Delete(extra);
        return cli_fail_err(&err);
    }
    rc = finish_validate(rows, n, NULL, extra, fmt, output);
    if (fmt == XS_FMT_CSV) /* no room in the rows */
        xs_report_notes_to(stderr, extra);
    cJSON_Delete(extra);
    return rc;
}

int cli_validate(int argc, char **argv)
{
    static const struct option longs[] = {
        {"measured", required_argument, 0, 'm'}, {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},   {"help", no_argument, 0, 'h'},
        {"trace", required_argument, 0, 't'},    {"device", required_argument, 0, 'd'},
        {"scenario", required_argument, 0, 's'}, {"set", required_argument, 0, 'S'},
        {"backend", required_argument, 0, 'b'},  {"quick", no_argument, 0, 'q'},
        {"allow-other-host", no_argument, 0, 'A'}, {0, 0, 0, 0}};
    const char *files[MAX_MEASURED], *output = NULL, *trace = NULL, *device = NULL,
                                     *scenario = NULL, *sets[MAX_SETS], *backend = NULL;
    int nfiles = 0, nsets = 0, quick = 0, allow_other_host = 0;
    xs_format fmt = XS_FMT_TABLE;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":f:o:hd:s:", longs, NULL)) != -1) {
        switch (c) {
        case 't': trace = optarg; break;
        case 'b': backend = optarg; break;
        case 'q': quick = 1; break;
        case 'A': allow_other_host = 1; break;
        case 'd': device = optarg; break;
        case 's': scenario = optarg; break;
        case 'S':
            if (cli_add_set(sets, &nsets, optarg))
                return EXIT_USAGE;
            break;
        case 'm':
            if (nfiles == MAX_MEASURED)
                return cli_fail(EXIT_USAGE, "validate: at most 16 --measured files");
            files[nfiles++] = optarg;
            break;
        case 'o': output = optarg; break;
        case 'f':
            if (cli_parse_format(optarg, &fmt))
                return EXIT_USAGE;
            break;
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return cli_extra_argument(argv[0], argv[optind]);
    if (backend)
        return validate_backend(backend, device, quick, nfiles || trace || scenario || nsets,
                                allow_other_host, fmt, output);
    if (quick || allow_other_host)
        return cli_fail(EXIT_USAGE,
                        "validate: --quick and --allow-other-host go with --backend cpu|cuda");
    if (nfiles == 0 && !trace)
        return cli_fail(EXIT_USAGE, "validate: give --measured FILE.csv, --trace TRACE.json or "
                                "--backend cpu -d DEVICE (see --help)");
    if (nfiles && trace)
        return cli_fail(EXIT_USAGE, "validate: --measured and --trace are separate runs");
    if ((device || scenario || nsets) && !trace)
        return cli_fail(EXIT_USAGE, "validate: -d, -s and --set go with --trace (a measured-run "
                                "CSV names its own devices and scenarios)");
    if (trace && (!device || !scenario))
        return cli_fail(EXIT_USAGE, "validate: --trace needs the -d DEVICE and -s SCENARIO it ran");
    xs_error err;
    xs_vrow *rows;
    size_t n;
    if (trace) {
        xs_trace t;
        if (validate_trace(trace, device, scenario, sets, nsets, &t, &rows, &n, &err))
            return cli_fail_err(&err);
        int rc = finish_validate(rows, n, &t, NULL, fmt, output);
        xs_trace_free(&t);
        return rc;
    }
    if (xs_validate_files(files, nfiles, &rows, &n, &err))
        return cli_fail_err(&err);
    return finish_validate(rows, n, NULL, NULL, fmt, output);
}
