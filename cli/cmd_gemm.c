/* cmd_gemm.c — `xpusim gemm`: one GEMM, or a sweep of one dimension, on a
 * device's matrix engine: time, tile, waves, bound. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "gemm.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim gemm [-d DEVICE] --m M --n N --k K [--dtype fp32|tf32|fp16|bf16]\n"
            "                   [--ta] [--tb] [--batch B] [--format table|json] [-o FILE]\n\n"
            "Predicts one GEMM, C[m x n] = op(A)[m x k] . op(B)[k x n] (B times if --batch),\n"
            "on DEVICE (default %s): time, TFLOP/s and fraction of peak, the kernel tile\n"
            "a heuristic library would pick (tried: every tile the device lists x split-K),\n"
            "tile and wave quantization, mainloop efficiency and the bound.\n\n"
            "  --ta, --tb     A (B) is stored transposed (row-major convention: without\n"
            "                 --ta the rows of A are k long; with it, m long)\n"
            "  --dtype        input format (default fp16); without tensor cores for it the\n"
            "                 GEMM runs on the fp32 units\n"
            "  --sweep D=A:B[:S]  vary dimension D (m, n or k) from A to B in steps of S\n"
            "                 (default 1) and print one row per value, CSV (or JSON with\n"
            "                 --format json): the sawtooth of tile and wave quantization\n\n"
            "JSON keys: time_s, tflops, fraction_of_peak, tile_m, tile_n, tile_k, stages,\n"
            "split_k, ctas_per_sm, tiles, waves, wave_efficiency, tile_efficiency,\n"
            "mainloop_efficiency, align_bytes, sm_time_s, dram_time_s, dram_bytes, bound.\n\n"
            "Examples:\n"
            "  xpusim gemm -d h100-sxm5-80gb --m 8192 --n 8192 --k 8192\n"
            "  xpusim gemm -d t4 --m 4096 --n 1024 --k 4096 --dtype fp32 --tb\n"
            "  xpusim gemm -d a100-sxm4-80gb --m 4096 --k 4096 --sweep n=1:4096 -o sweep.csv\n",
            DEFAULT_DEVICE);
}

int cli_gemm(int argc, char **argv)
{
    static const struct option longs[] = {
        {"device", required_argument, 0, 'd'}, {"m", required_argument, 0, 'm'},
        {"n", required_argument, 0, 'n'},      {"k", required_argument, 0, 'k'},
        {"batch", required_argument, 0, 'b'},  {"dtype", required_argument, 0, 't'},
        {"ta", no_argument, 0, 'A'},           {"tb", no_argument, 0, 'B'},
        {"format", required_argument, 0, 'f'}, {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {"sweep", required_argument, 0, 'w'},
        {0, 0, 0, 0}};
    const char *device = DEFAULT_DEVICE, *output = NULL, *sweep = NULL;
    xs_gemm_shape g = {0, 0, 0, 1, 0, 0, XS_FP16, 2};
    xs_format fmt = XS_FMT_TABLE;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    char msg[256];
    /* 2^24 per dimension keeps m.n.k.batch exact in a double */
    const int64_t dim_max = (int64_t)1 << 24;
    while ((c = getopt_long(argc, argv, ":d:f:o:h", longs, NULL)) != -1 && rc == 0) {
        switch (c) {
        case 'd': device = optarg; break;
        case 'o': output = optarg; break;
        case 'w': sweep = optarg; break;
        case 'A': g.ta = 1; break;
        case 'B': g.tb = 1; break;
        case 'm': rc = cli_parse_dim("m", optarg, dim_max, &g.m); break;
        case 'n': rc = cli_parse_dim("n", optarg, dim_max, &g.n); break;
        case 'k': rc = cli_parse_dim("k", optarg, dim_max, &g.k); break;
        case 'b': rc = cli_parse_dim("batch", optarg, 1 << 20, &g.batch); break;
        case 't': {
            int idx = xs_choice_index("fp32|tf32|fp16|bf16", optarg);
            if (idx < 0) {
                snprintf(msg, sizeof msg, "--dtype must be one of fp32|tf32|fp16|bf16, got '%s'",
                         optarg);
                return cli_fail(EXIT_USAGE, msg);
            }
            g.dtype = (xs_dtype)idx; /* the first four xs_dtype values, in order */
            g.out_bytes = xs_dtype_bytes(g.dtype);
            break;
        }
        case 'f': rc = cli_parse_table_json(optarg, &fmt); break;
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(argv[0], c, argv);
        }
    }
    if (rc)
        return rc;
    if (optind < argc)
        return cli_extra_argument(argv[0], argv[optind]);
    char dim = 0;
    long long from = 0, to = 0, step = 1;
    if (sweep) {
        char tail;
        int got = sscanf(sweep, "%c=%lld:%lld:%lld%c", &dim, &from, &to, &step, &tail);
        if (!(got == 3 || got == 4) || !strchr("mnk", dim) || from < 1 || to < from ||
            to > dim_max || step < 1 || (to - from) / step > 1000000) {
            snprintf(msg, sizeof msg,
                     "--sweep must look like n=1:4096 or k=64:8192:64 (m, n or k; at most a "
                     "million points), got '%s'", sweep);
            return cli_fail(EXIT_USAGE, msg);
        }
        int64_t *d = dim == 'm' ? &g.m : dim == 'n' ? &g.n : &g.k;
        *d = from; /* the swept dimension needs no --m/--n/--k */
    }
    if (!g.m || !g.n || !g.k)
        return cli_fail(EXIT_USAGE, "gemm: --m, --n and --k are required (see --help)");
    xs_error err;
    xs_device dev;
    if (xs_dev_open(device, &dev, &err))
        return cli_fail_err(&err);
    xs_gemm_engine e;
    xs_dev_gemm_engine(&dev, &e);
    xs_gemm_result r;
    xs_strbuf sb = {0};
    if (sweep) {
        int64_t *d = dim == 'm' ? &g.m : dim == 'n' ? &g.n : &g.k;
        xs_report_sweep_begin(&sb, fmt, dim);
        /* by count: from + i * step stays within [from, to] (v += step
         * overflowed with a step near 2^63) */
        long long points = (to - from) / step + 1;
        for (long long i = 0; i < points; i++) {
            long long v = from + i * step;
            *d = v;
            if (xs_gemm_model(&e, &g, &r, &err)) {
                xs_sb_free(&sb);
                return cli_fail_err(&err);
            }
            xs_report_sweep_row(&sb, fmt, &r, v, i == points - 1);
        }
    } else {
        if (xs_gemm_model(&e, &g, &r, &err))
            return cli_fail_err(&err);
        xs_report_gemm(&sb, fmt, &dev, &g, &r);
    }
    rc = cli_deliver(&sb, output);
    xs_sb_free(&sb);
    return rc;
}
