/* cmd_devices.c — `xpusim devices`: every device file with its peaks,
 * memory, power and price; --help documents each class's file format. */
#include "cli.h"

#include <stdlib.h>

#include "backend.h"

static void usage(FILE *out)
{
    fprintf(out, "Usage: xpusim devices [--format table|json|csv] [-o FILE]\n\n"
                 "Lists the device files in devices/ with their dense peaks, memory, power\n"
                 "and price. A device file's \"class\" selects its cost model and its fields\n"
                 "(all required unless marked optional).\n\n"
                 "Examples:\n"
                 "  xpusim devices\n"
                 "  xpusim devices --format csv -o devices.csv\n"
                 "  cp devices/l4.json devices/my-l4.json   # then edit price.usd_per_hour\n");
    const xs_backend *be;
    for (int c = 0; (be = xs_backend_at(c)) != NULL; c++) {
        fprintf(out, "\nclass %s: %s:\n", be->name, be->doc);
        size_t n;
        const xs_field *f = be->fields(&n);
        for (size_t i = 0; i < n; i++)
            if (!be->documents || be->documents(&f[i]))
                cli_print_fields(out, &f[i], 1);
    }
}

int cli_devices(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "foh", usage, &rc))
        return rc;
    xs_error err;
    xs_device *devs;
    size_t n;
    if (cli_load_devices(NULL, 1, &devs, &n, &err))
        return cli_fail_err(&err);
    xs_strbuf sb = {0};
    xs_report_devices(&sb, o.format, devs, n);
    rc = cli_deliver(&sb, o.output);
    xs_sb_free(&sb);
    free(devs);
    return rc;
}
