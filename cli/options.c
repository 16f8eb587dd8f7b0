/* options.c — what the sub-commands share (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backend.h"
#include "backends.h"
#include "fileio.h"
#include "numparse.h"
#include "paths.h"
#include "scenario.h"

int cli_fail(int code, const char *msg)
{
    char line[2048];
    snprintf(line, sizeof line, "%s", msg);
    xs_error_one_line(line, sizeof line); /* it may echo an argument */
    fprintf(stderr, "xpusim: error: %s\n", line);
    return code;
}

int cli_fail_err(const xs_error *err)
{
    int code = err->code == XS_EARG    ? EXIT_USAGE
               : err->code == XS_ENOHW ? EXIT_NOHW
                                       : EXIT_DATA;
    cli_fail(code, err->msg);
    /* the further problems of a document checked whole, one error line each */
    for (const char *p = err->more; *p;) {
        size_t len = strcspn(p, "\n");
        char line[sizeof err->msg]; /* each was a message of its own */
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        cli_fail(code, line);
        p += len + (p[len] == '\n');
    }
    return code;
}

/* getopt's report of a bad option of command cmd: c is ':' (a value is
 * missing) or anything else (an unknown option). */
int cli_bad_option(const char *cmd, int c, char **argv)
{
    char msg[256];
    if (c == ':')
        snprintf(msg, sizeof msg, "%s: option '%s' needs a value", cmd, argv[optind - 1]);
    else
        snprintf(msg, sizeof msg, "%s: unknown option '%s' (see --help)", cmd, argv[optind - 1]);
    return cli_fail(EXIT_USAGE, msg);
}

int cli_extra_argument(const char *cmd, const char *arg)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s: unexpected argument '%s' (see --help)", cmd, arg);
    return cli_fail(EXIT_USAGE, msg);
}

void cli_print_set_keys(FILE *out)
{
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    fprintf(out, "Scenario keys for --set (validated like the file):\n");
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f[i].path, "id") == 0 || strcmp(f[i].path, "description") == 0 ||
            strcmp(f[i].path, "source") == 0 || f[i].type == XS_F_OBJ)
            continue;
        char want[160];
        xs_schema_expect(&f[i], want, sizeof want);
        fprintf(out, "  %-22s %s\n  %-22s   (%s%s%s)\n", f[i].path, f[i].help, "", want,
                f[i].def ? "; default " : "", f[i].def ? f[i].def : "");
    }
}

void cli_print_fields(FILE *out, const xs_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char want[160];
        xs_schema_expect(&f[i], want, sizeof want);
        fprintf(out, "  %-32s %s%s (%s%s%s)\n", f[i].path,
                f[i].required || f[i].def ? "" : "[optional] ", f[i].help, want,
                f[i].def ? "; default " : "", f[i].def ? f[i].def : "");
    }
}

/* Parse the options shared by the sub-commands; returns 0 or an exit code. */
static int parse_options(int argc, char **argv, cli_options *o, const char *allowed)
{
    static const struct option longs[] = {
        {"device", required_argument, 0, 'd'}, {"scenario", required_argument, 0, 's'},
        {"set", required_argument, 0, 'S'},    {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"tolerance", required_argument, 0, 'T'}, {"price", required_argument, 0, 'P'},
        {"all", no_argument, 0, 'A'},          {"summary", no_argument, 0, 'U'},
        {"ignore-memory", no_argument, 0, 'I'}, {"global-batch", required_argument, 0, 'G'},
        {"architecture", no_argument, 0, 'R'}, {"vary", required_argument, 0, 'V'},
        {"weights", required_argument, 0, 'W'}, {"budget-usd", required_argument, 0, 'B'},
        {"deadline-h", required_argument, 0, 'H'}, {"band", no_argument, 0, 'N'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o); /* device and scenario stay NULL unless given */
    o->tolerance = 5;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":d:s:f:o:h", longs, NULL)) != -1) {
        char msg[256];
        if (c != '?' && c != ':' && !strchr(allowed, c)) {
            /* argv[optind - 1] is the option's value when it takes one: name it by c */
            const char *name = "?";
            for (const struct option *l = longs; l->name; l++)
                if (l->val == c)
                    name = l->name;
            snprintf(msg, sizeof msg, "%s: option '--%s' does not apply here (see --help)",
                     argv[0], name);
            return cli_fail(EXIT_USAGE, msg);
        }
        switch (c) {
        case 'd': o->device = optarg; break;
        case 's': o->scenario = optarg; break;
        case 'o': o->output = optarg; break;
        case 'h': o->help = 1; break;
        case 'A': o->all = 1; break;
        case 'U': o->summary = 1; break;
        case 'I': o->ignore_memory = 1; break;
        case 'G':
            if (cli_parse_dim("global-batch", optarg, 1LL << 40, &o->global_batch))
                return EXIT_USAGE;
            break;
        case 'R': o->architecture = 1; break;
        case 'N': o->band = 1; break;
        case 'W': o->weights = optarg; break;
        case 'V':
            if (o->nvaries == MAX_SETS)
                return cli_fail(EXIT_USAGE, "too many --vary options (at most 64)");
            o->varies[o->nvaries++] = optarg;
            break;
        case 'B':
        case 'H': {
            /* dollars for the whole run, hours of wall-clock time */
            const char *name = c == 'B' ? "budget-usd" : "deadline-h";
            double v = 0;
            if (xs_parse_double(optarg, &v) || !(v > 0 && v <= 1e9)) {
                snprintf(msg, sizeof msg, "--%s must be a number in (0, 1e9], got '%s'", name,
                         optarg);
                return cli_fail(EXIT_USAGE, msg);
            }
            *(c == 'B' ? &o->budget_usd : &o->deadline_h) = v;
            break;
        }
        case 'P':
            if (o->nprices == MAX_SETS)
                return cli_fail(EXIT_USAGE, "too many --price options (at most 64)");
            o->prices[o->nprices++] = optarg;
            break;
        case 'T': {
            o->tolerance = 0;
            if (xs_parse_double(optarg, &o->tolerance) || !(o->tolerance > 0 && o->tolerance <= 50)) {
                snprintf(msg, sizeof msg, "--tolerance must be a percentage in (0, 50], got '%s'",
                         optarg);
                return cli_fail(EXIT_USAGE, msg);
            }
            break;
        }
        case 'S':
            if (cli_add_set(o->sets, &o->nsets, optarg))
                return EXIT_USAGE;
            break;
        case 'f':
            if (cli_parse_format(optarg, &o->format))
                return EXIT_USAGE;
            o->format_given = 1;
            break;
        default: return cli_bad_option(argv[0], c, argv);
        }
    }
    if (optind < argc)
        return cli_extra_argument(argv[0], argv[optind]);
    return 0;
}

int cli_add_set(const char **sets, int *n, const char *kv)
{
    if (*n == MAX_SETS)
        return cli_fail(EXIT_USAGE, "too many --set options (at most 64)");
    sets[(*n)++] = kv;
    return 0;
}

int cli_parse_format(const char *text, xs_format *fmt)
{
    int idx = xs_choice_index(XS_FORMAT_CHOICES, text);
    if (idx < 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "--format must be one of table|json|csv, got '%s'", text);
        return cli_fail(EXIT_USAGE, msg);
    }
    *fmt = (xs_format)idx;
    return 0;
}

int cli_parse_table_json(const char *text, xs_format *fmt)
{
    int idx = xs_choice_index("table|json", text);
    if (idx < 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "--format must be table or json, got '%s'", text);
        return cli_fail(EXIT_USAGE, msg);
    }
    *fmt = idx ? XS_FMT_JSON : XS_FMT_TABLE;
    return 0;
}

int cli_begin(int argc, char **argv, cli_options *o, const char *allowed,
                 void (*usage)(FILE *), int *rc)
{
    *rc = parse_options(argc, argv, o, allowed);
    if (*rc == 0 && o->help)
        usage(stdout);
    return *rc != 0 || o->help;
}

int cli_deliver(xs_strbuf *sb, const char *output)
{
    if (sb->failed)
        return cli_fail(EXIT_DATA, "out of memory while formatting the report");
    if (!output) {
        fwrite(sb->data ? sb->data : "", 1, sb->len, stdout);
        return fflush(stdout) == 0 ? 0 : cli_fail(EXIT_DATA, "cannot write to stdout");
    }
    xs_error err;
    if (xs_write_atomic(output, sb->data ? sb->data : "", sb->len, &err))
        return cli_fail_err(&err);
    return 0;
}

int cli_parse_dim(const char *name, const char *text, int64_t max, int64_t *out)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 1 || v > max) {
        char msg[256];
        snprintf(msg, sizeof msg, "--%s must be an integer in [1, %lld], got '%s'", name,
                 (long long)max, text);
        return cli_fail(EXIT_USAGE, msg);
    }
    *out = v;
    return 0;
}

/* The ids of a -d list: split at commas, each trimmed of blanks; an empty
 * id (",," or a trailing comma) is a usage error. */
static int split_ids(const char *list, char ***ids, size_t *n, xs_error *err)
{
    size_t cap = 1;
    for (const char *c = list; *c; c++)
        cap += *c == ',';
    char **v = calloc(cap, sizeof *v);
    if (!v)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    size_t k = 0;
    for (const char *p = list;; p++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && isspace((unsigned char)*p))
            p++, len--;
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        if (len == 0) {
            xs_ids_free(v, k);
            return xs_error_set(err, XS_EARG,
                                "-d '%s' has an empty device id (give ids separated by commas)",
                                list);
        }
        v[k] = strndup(p, len);
        if (!v[k]) {
            xs_ids_free(v, k);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
        k++;
        if (!comma)
            break;
        p = comma;
    }
    *ids = v;
    *n = k;
    return XS_OK;
}

int cli_load_devices(const char *list, int all, xs_device **out, size_t *count, xs_error *err)
{
    char **ids = NULL;
    size_t n = 0;
    int rc = list ? split_ids(list, &ids, &n, err) : xs_list_ids("devices", &ids, &n, err);
    if (rc)
        return rc;
    xs_device *devs = calloc(n ? n : 1, sizeof *devs);
    if (!devs)
        rc = xs_error_set(err, XS_ENOMEM, "out of memory");
    size_t kept = 0;
    for (size_t i = 0; i < n && rc == XS_OK; i++) {
        if ((rc = xs_dev_open(ids[i], &devs[kept], err)))
            break;
        /* the same device twice ("a10,A10", an id and its path) is one row */
        int seen = 0;
        for (size_t j = 0; j < kept && !seen; j++)
            seen = strcmp(devs[j].id, devs[kept].id) == 0;
        /* unasked, the host CPU is not among the accelerators one rents */
        int skip = !list && !all && !xs_backend_of(&devs[kept])->async;
        kept += !seen && !skip;
    }
    xs_ids_free(ids, n);
    if (rc) {
        free(devs);
        return rc;
    }
    *out = devs;
    *count = kept;
    return XS_OK;
}

/* One --price DEV=USD_PER_HOUR onto the device it names. */
static int apply_price(const char *text, xs_device *devs, size_t n)
{
    char msg[512];
    const char *eq = strchr(text, '=');
    double usd = 0;
    if (!eq || eq == text || xs_parse_double(eq + 1, &usd) || !(usd > 0 && usd <= 1e6)) {
        snprintf(msg, sizeof msg,
                 "--price '%s': expected DEVICE=USD_PER_HOUR with a price in (0, 1e6], e.g. "
                 "--price a10=1.10",
                 text);
        return cli_fail(EXIT_USAGE, msg);
    }
    size_t len = (size_t)(eq - text);
    for (size_t i = 0; i < n; i++)
        if (strlen(devs[i].id) == len && strncasecmp(devs[i].id, text, len) == 0) {
            devs[i].price_usd_per_hour = usd;
            snprintf(devs[i].price_provider, sizeof devs[i].price_provider,
                     "your quote (--price)");
            time_t now = time(NULL);
            struct tm utc;
            strftime(devs[i].price_as_of, sizeof devs[i].price_as_of, "%Y-%m-%d", gmtime_r(&now, &utc));
            return 0;
        }
    snprintf(msg, sizeof msg, "--price '%s': '%.*s' is not among the devices of this run", text,
             (int)len, text);
    return cli_fail(EXIT_USAGE, msg);
}

int cli_apply_prices(const cli_options *o, xs_device *devs, size_t n)
{
    for (int i = 0; i < o->nprices; i++) {
        int rc = apply_price(o->prices[i], devs, n);
        if (rc)
            return rc;
    }
    return 0;
}

const xs_cal_backend *cli_cal_backend(const char *cmd, const char *name, int *rc)
{
    char names[128] = "", msg[512];
    const xs_cal_backend *b;
    for (int i = 0, used = 0; (b = xs_cal_backend_at(i)) != NULL && used < (int)sizeof names; i++)
        used += snprintf(names + used, sizeof names - (size_t)used, "%s%s", i ? "|" : "", b->name);
    b = name ? xs_cal_backend_find(name) : NULL;
    if (b)
        return b;
    if (!name)
        snprintf(msg, sizeof msg, "%s: give --backend %s (see --help)", cmd, names);
    else
        snprintf(msg, sizeof msg,
                 "%s: --backend must be one of %s (the backends built on this machine), got '%s'",
                 cmd, names, name);
    *rc = cli_fail(EXIT_USAGE, msg);
    return NULL;
}
