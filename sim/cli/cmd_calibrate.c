/* cmd_calibrate.c — `xpusim calibrate --backend NAME`: run a calibration
 * backend (calibrate/backends.h) and write the device file it fits. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

#include "backends.h"
#include "targets.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim calibrate --backend NAME [--quick] [-o FILE] [--threads N]\n"
            "                        [--measurements FILE.csv] [--force]\n\n"
            "Runs real kernels on this machine and fits a device class's cost model to\n"
            "them, writing a device file that predict, compare, gemm and validate accept\n"
            "like the datasheet devices. The device file and the measurements are written\n"
            "to a temporary name and renamed, so an interrupted run leaves no broken file.\n\n"
            "  --backend NAME           what to calibrate:\n");
    const xs_cal_backend *b;
    for (int i = 0; (b = xs_cal_backend_at(i)) != NULL; i++)
        fprintf(out, "                             %-6s %s, device class %s\n", b->name,
                b->summary, b->device_class);
    fprintf(out,
            "  --quick                  fewer sizes and shapes, shorter timing\n"
            "  -o, --output FILE        device file (its id is the file name without .json;\n"
            "                           default: the backend's, below)\n"
            "      --threads N          cores to calibrate for (default: all)\n"
            "      --measurements FILE  every measurement as CSV (default: next to the\n"
            "                           device file, FILE.measurements.csv)\n"
            "      --force              replace a device or measurements file shipped with\n"
            "                           xpusim or not written by calibrate (without it such\n"
            "                           files are refused before anything is measured)\n"
            "  -h, --help               this text\n\n"
            "Then: xpusim validate --backend NAME -d FILE  (runs real kernels and a training\n"
            "step at shapes the fit never saw, predicted vs measured).\n");
    for (int i = 0; (b = xs_cal_backend_at(i)) != NULL; i++)
        fprintf(out, "\n--backend %s (default -o %s):\n%s", b->name, b->default_out,
                b->calibrate_doc);
    fprintf(out, "\nExamples:\n"
                 "  xpusim calibrate --backend cpu -o my-host.json\n"
                 "  xpusim calibrate --backend cpu --quick --threads 1 -o my-host-1core.json\n"
                 "  xpusim predict -d my-host.json -s bert-base-squad --summary\n");
}

/* The command line, space-separated, for provenance. */
static void join_args(int argc, char **argv, char *dst, size_t size)
{
    size_t used = (size_t)snprintf(dst, size, "xpusim");
    for (int i = 0; i < argc && used < size; i++)
        used += (size_t)snprintf(dst + used, size - used, " %s", argv[i]);
}

int cli_calibrate(int argc, char **argv)
{
    static const struct option longs[] = {
        {"backend", required_argument, 0, 'b'}, {"quick", no_argument, 0, 'q'},
        {"output", required_argument, 0, 'o'},  {"threads", required_argument, 0, 't'},
        {"measurements", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'},
        {"force", no_argument, 0, 'F'},              {0, 0, 0, 0}};
    const char *backend = NULL;
    xs_cal_run_opts o = {0, 0, NULL, NULL, NULL, stderr};
    optind = 1;
    opterr = 0;
    int c, force = 0;
    char msg[512];
    while ((c = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'b': backend = optarg; break;
        case 'q': o.quick = 1; break;
        case 'o': o.out = optarg; break;
        case 'm': o.measurements = optarg; break;
        case 'F': force = 1; break;
        case 't': {
            int64_t t;
            if (cli_parse_dim("threads", optarg, 4096, &t))
                return EXIT_USAGE;
            o.threads = (int)t;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return cli_bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return cli_extra_argument(argv[0], argv[optind]);
    int rc;
    const xs_cal_backend *b = cli_cal_backend("calibrate", backend, &rc);
    if (!b)
        return rc;
    if (!o.out)
        o.out = b->default_out;
    size_t len = strlen(o.out);
    if (len < 6 || strcmp(o.out + len - 5, ".json") != 0) {
        snprintf(msg, sizeof msg, "calibrate: -o must name a .json device file, got '%s'",
                 o.out);
        return cli_fail(EXIT_USAGE, msg);
    }
    char meas[4096];
    if (!o.measurements) {
        xs_cal_measurements_path(o.out, meas, sizeof meas);
        o.measurements = meas;
    }
    char command[1024];
    join_args(argc, argv, command, sizeof command);
    o.command = command;
    /* the host, then the files: nothing is opened before both pass */
    xs_error err;
    if (b->host_check(&err) || xs_cal_targets_check(o.out, o.measurements, force, &err) ||
        b->calibrate(&o, &err))
        return cli_fail_err(&err);
    return 0;
}
