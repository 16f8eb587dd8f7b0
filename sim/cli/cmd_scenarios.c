/* cmd_scenarios.c — `xpusim scenarios`: the shipped scenarios and what
 * each fine-tunes. */
#include "cli.h"

#include "paths.h"
#include "scenario.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim scenarios\n\n"
            "Lists the scenario files in scenarios/ with their descriptions.\n\n"
            "Writing a scenario: copy one (scenarios/bert-base-squad.json is a full example)\n"
            "to a new file; its \"id\" must equal the file name without .json. \"model\"\n"
            "either names a Hugging Face config.json (\"hf_config\", a path relative to the\n"
            "scenario file; model_type bert, roberta or gpt2) plus the task head (\"head\":\n"
            "span|cls|lm), or gives the shape itself (layers, hidden, heads, ffn, vocab,\n"
            "max_positions, ...). \"train\" holds batch, seq, precision, optimizer and the\n"
            "kernel choices, \"data\" the samples and epochs, \"cluster\" the device count.\n"
            "Every key, what it means and what it accepts: `xpusim predict --help`; an\n"
            "unknown key is an error, and so is a missing required one (named). Use it by\n"
            "path (-s my-run.json) or put it in scenarios/ and use its id.\n\n"
            "Examples:\n"
            "  xpusim scenarios\n"
            "  cp scenarios/bert-base-squad.json my-run.json   # set \"id\": \"my-run\", edit\n"
            "  xpusim predict -s my-run.json --set model.hf_config=my-model/config.json\n");
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
