/* cmd_scenarios.c — `xpusim scenarios`: the shipped scenarios and what
 * each fine-tunes. */
#include "cli.h"

#include "paths.h"
#include "scenario.h"

static void usage(FILE *out)
{
    fprintf(out, "Usage: xpusim scenarios\n\nLists the scenario files in scenarios/ with "
                 "their descriptions.\n");
}

int cli_scenarios(int argc, char **argv)
{
    cli_options o;
    int rc;
    if (cli_begin(argc, argv, &o, "h", usage, &rc))
        return rc;
    xs_error err;
    char **ids;
    size_t n;
    if (xs_list_ids("scenarios", &ids, &n, &err))
        return cli_fail_err(&err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        xs_scenario s;
        if (xs_scn_open(ids[i], NULL, 0, &s, &err))
            rc = cli_fail_err(&err);
        else
            printf("%-24s %s\n", s.id, s.description);
    }
    xs_ids_free(ids, n);
    return rc;
}
