/* test_fileio.c — input files as users hand them over (fileio.h): a
 * directory where a file is expected, spreadsheet exports (a UTF-8
 * byte-order mark, CRLF line ends), and '-' for standard input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "device.h"
#include "fileio.h"
#include "scenario.h"
#include "schema.h"
#include "test_util.h"
#include "validate.h"

#define BOM "\xEF\xBB\xBF"
#define MEASURED_HEADER "device,scenario,set,metric,value,source"

/* Text of a repository file; the caller frees. */
static char *repo_text(const char *path)
{
    char *text = NULL;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_read_file(path, &text, NULL, &err), XS_OK);
    return text;
}

static void a_directory_should_be_refused_as_an_input_file(void)
{
    xs_error err;
    char *text = NULL;
    CU_ASSERT_EQUAL(xs_read_file(tu_tmpdir(), &text, NULL, &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, " is a directory, expected a file"));
    xs_vrow *rows = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(xs_measured_load("tests", &rows, &n, &err), XS_EIO);
    CU_ASSERT_STRING_EQUAL(err.msg, "tests is a directory, expected a CSV file");
    xs_device d;
    CU_ASSERT_EQUAL(xs_dev_open("devices/", &d, &err), XS_EIO);
    CU_ASSERT_STRING_EQUAL(err.msg, "devices/ is a directory, expected a JSON file");
    xs_scenario s;
    CU_ASSERT_EQUAL(xs_scn_open("scenarios/", NULL, 0, &s, &err), XS_EIO);
    CU_ASSERT_STRING_EQUAL(err.msg, "scenarios/ is a directory, expected a JSON file");
    /* a device node would never end: refused, not read */
    CU_ASSERT_EQUAL(xs_dev_open("/dev/zero", &d, &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/dev/zero is not a regular file"));
    /* a missing file still says so */
    CU_ASSERT_EQUAL(xs_dev_open("tests/data/none.json", &d, &err), XS_EIO);
    CU_ASSERT_STRING_EQUAL(err.msg, "tests/data/none.json: no such file");
}

static void a_byte_order_mark_should_be_dropped(void)
{
    const char *path = tu_write("bom.txt", BOM "{}");
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(xs_read_file(path, &text, &len, NULL), XS_OK);
    CU_ASSERT_STRING_EQUAL(text, "{}");
    CU_ASSERT_EQUAL(len, 2);
    free(text);
    /* a measured-run CSV saved by a spreadsheet as "CSV UTF-8" */
    char *csv = repo_text("tests/data/measured/mixed.csv");
    char *with_bom = malloc(strlen(csv) + 4);
    sprintf(with_bom, BOM "%s", csv);
    const char *files[] = {tu_write("bom.csv", with_bom), "tests/data/measured/mixed.csv"};
    xs_vrow *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(files[0], &a, &na, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(files[1], &b, &nb, &err), XS_OK);
    CU_ASSERT_EQUAL(na, nb);
    for (size_t i = 0; i < na && i < nb; i++) {
        CU_ASSERT_STRING_EQUAL(a[i].device, b[i].device);
        CU_ASSERT_EQUAL(a[i].ok, b[i].ok);
    }
    xs_vrows_free(a, na);
    xs_vrows_free(b, nb);
    free(with_bom);
    free(csv);
    /* and a scenario saved by an editor that writes one */
    char *json = repo_text("tests/data/scenarios/tiny.json");
    char *json_bom = malloc(strlen(json) + 4);
    sprintf(json_bom, BOM "%s", json);
    xs_scenario s;
    CU_ASSERT_EQUAL(xs_scn_load(tu_write("tiny.json", json_bom), NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.hidden, 64);
    free(json_bom);
    free(json);
}

/* Windows line ends end a record; none of them reaches a field, quoted or
 * not, last or not (the value and the source are the last two). */
static void crlf_line_ends_should_not_reach_the_fields(void)
{
    const char *path = tu_write("crlf.csv",
                                MEASURED_HEADER "\r\n"
                                "a100-sxm4-80gb,bert-base-squad,train.batch=8,samples_per_s,150,"
                                "\"quoted, source\"\r\n"
                                "\r\n"
                                "t4,-,op=optimizer;optimizer=adamw;fused=1;params=1000,time_s,"
                                "0.002,\r\n"
                                "l4,bert-base-squad,,step_time_s,0.5\r\n");
    xs_vrow *rows = NULL;
    size_t n = 0;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(path, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT(rows[0].ok && rows[1].ok);
    CU_ASSERT_STRING_EQUAL(xs_vrow_set_of(&rows[0]), "train.batch=8");
    CU_ASSERT_DOUBLE_EQUAL(rows[0].measured, 150, 0);
    CU_ASSERT_DOUBLE_EQUAL(rows[1].measured, 0.002, 0);
    CU_ASSERT_EQUAL(rows[1].line, 4);
    /* five fields: the reason counts them, no '\r' among them */
    CU_ASSERT_FALSE(rows[2].ok);
    CU_ASSERT_STRING_EQUAL(xs_vrow_reason(&rows[2]), "expected 6 fields, got 5");
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_PTR_NULL(strchr(xs_vrow_set_of(&rows[i]), '\r'));
    xs_vrows_free(rows, n);
    /* old Mac line ends (CR alone) too */
    path = tu_write("cr.csv", MEASURED_HEADER "\rl4,bert-base-squad,,step_time_s,0.5,x\r");
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(path, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT(n == 1 && rows[0].ok && rows[0].measured == 0.5);
    xs_vrows_free(rows, n);
}

static void directories_on_the_command_line_should_say_so_in_one_line(void)
{
    const struct {
        const char *args, *msg;
    } cases[] = {
        {"predict -s /tmp", "xpusim: error: /tmp is a directory, expected a JSON file\n"},
        {"predict -d devices/", "xpusim: error: devices/ is a directory, expected a JSON file\n"},
        {"validate --measured tests/",
         "xpusim: error: tests/ is a directory, expected a CSV file\n"},
        {"validate --trace tests/data -d a100-sxm4-80gb -s bert-base-squad",
         "xpusim: error: tests/data is a directory, expected a JSON file\n"},
        {"compare -s scenarios/",
         "xpusim: error: scenarios/ is a directory, expected a JSON file\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_result r = tu_run(cases[i].args);
        CU_ASSERT_EQUAL(r.status, 1);
        CU_ASSERT_STRING_EQUAL(r.err, cases[i].msg);
        tu_run_free(&r);
    }
}

static void a_dash_should_read_standard_input(void)
{
    /* a scenario (its hf_config, if any, is relative to the working folder) */
    tu_result r = tu_run_stdin("predict -s -", "tests/data/scenarios/tiny.json");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "xpusim predict: tiny on a100-sxm4-80gb"));
    CU_ASSERT_STRING_EQUAL(r.err, "");
    tu_run_free(&r);
    /* advise and compare load it more than once: the same text each time */
    r = tu_run_stdin("advise -s -", "tests/data/scenarios/tiny.json");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "tiny on a100-sxm4-80gb"));
    tu_run_free(&r);
    r = tu_run_stdin("compare -d t4,l4 -s -", "tests/data/scenarios/tiny.json");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "l4 "));
    tu_run_free(&r);
    /* a device: no file name for its id to match */
    r = tu_run_stdin("predict -d - -s bert-base-squad", "devices/t4.json");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "bert-base-squad on t4"));
    tu_run_free(&r);
    /* measured runs and a trace */
    r = tu_run_stdin("validate --measured - --format csv", "tests/data/measured/mixed.csv");
    tu_result file = tu_run("validate --measured tests/data/measured/mixed.csv --format csv");
    CU_ASSERT_EQUAL(r.status, file.status);
    CU_ASSERT_EQUAL(tu_lines(r.out), tu_lines(file.out));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\n-,2,a100-sxm4-80gb,bert-large-squad,"));
    tu_run_free(&file);
    tu_run_free(&r);
    r = tu_run_stdin("validate --trace - -d a100-sxm4-80gb -s bert-large-squad --format csv",
                     "tests/data/traces/synthetic-a100-step.json");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "kernel_time_s:gemm"));
    tu_run_free(&r);
    /* one document: two options cannot both have it */
    r = tu_run_stdin("predict -s - -d -", "tests/data/scenarios/tiny.json");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "standard input ('-') holds one file"));
    tu_run_free(&r);
    /* empty input: the parser's line, naming '-' */
    r = tu_run_stdin("predict -s -", "/dev/null");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_STRING_EQUAL(r.err, "xpusim: error: -: malformed JSON at line 1, column 1\n");
    tu_run_free(&r);
}

/* Output files (the audit's findings 1 and 2): a replaced file keeps its
 * mode, a symlink stays a link to the new content, a device node is
 * written to and stays a node, a directory is refused, and temporaries a
 * killed run left behind are removed by the next write. */
static void outputs_should_respect_what_is_at_the_path(void)
{
    char path[600], link[600], stale[700], live[700], dir[600];
    snprintf(path, sizeof path, "%s/out.csv", tu_tmpdir());
    snprintf(link, sizeof link, "%s/link.csv", tu_tmpdir());
    snprintf(dir, sizeof dir, "%s", tu_tmpdir());
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_write_atomic(path, "one\n", 4, &err), XS_OK);
    CU_ASSERT_EQUAL(chmod(path, 0600), 0);
    CU_ASSERT_EQUAL(xs_write_atomic(path, "two\n", 4, &err), XS_OK);
    struct stat st;
    CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
    CU_ASSERT_EQUAL(symlink("out.csv", link), 0);
    CU_ASSERT_EQUAL(xs_write_atomic(link, "three\n", 6, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(lstat(link, &st), 0);
    CU_ASSERT(S_ISLNK(st.st_mode));
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL(xs_read_file(path, &text, &len, &err), XS_OK);
    CU_ASSERT(text && strcmp(text, "three\n") == 0);
    free(text);
    CU_ASSERT_EQUAL(xs_write_atomic("/dev/null", "x", 1, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(stat("/dev/null", &st), 0);
    CU_ASSERT(S_ISCHR(st.st_mode));
    CU_ASSERT_EQUAL(xs_write_atomic(dir, "x", 1, &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is a directory"));
    /* pid 2^22 + 1 is past Linux's pid_max: no such process, a stale file */
    snprintf(stale, sizeof stale, "%s/.out.csv.xpusim-tmp-4194305-abcdef", tu_tmpdir());
    snprintf(live, sizeof live, "%s/.out.csv.xpusim-tmp-%ld-abcdef", tu_tmpdir(), (long)getpid());
    FILE *f = fopen(stale, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    f = fopen(live, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    CU_ASSERT_EQUAL(xs_write_atomic(path, "four\n", 5, &err), XS_OK);
    CU_ASSERT_NOT_EQUAL(access(stale, F_OK), 0);
    CU_ASSERT_EQUAL(access(live, F_OK), 0); /* its writer (this process) is alive */
    unlink(live);
    /* into a folder that is not there: said so, nothing written */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no-such-folder/out.csv", tu_tmpdir());
    CU_ASSERT_EQUAL(xs_write_atomic(missing, "x", 1, &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such-folder does not exist"));
}

/* What the writes do as the calling user sees it, in a child process run
 * as nobody when the suites run as root (root may write anything): bit i
 * of the exit status is check i failing. */
static int write_checks_as(const char *dir)
{
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
        return 64;
    int bad = 0;
    char p[700], q[700], t[700];
    xs_error err;
    /* 1: a file the caller cannot write is not replaced (the folder would
     * let a rename do it) */
    snprintf(p, sizeof p, "%s/locked.csv", dir);
    bad |= (xs_write_atomic(p, "new\n", 4, &err) != XS_EIO ||
            !strstr(err.msg, "cannot write: Permission denied")) << 0;
    /* 2: a writable file in a folder that takes no new file: in place */
    snprintf(p, sizeof p, "%s/ro/open.csv", dir);
    bad |= (xs_write_atomic(p, "in place\n", 9, &err) != XS_OK) << 1;
    char *text = NULL;
    bad |= (xs_read_file(p, &text, NULL, &err) != XS_OK || strcmp(text, "in place\n") != 0) << 2;
    free(text);
    /* 3: a dangling link stays a link, its target made */
    snprintf(q, sizeof q, "%s/dangling.csv", dir);
    snprintf(t, sizeof t, "%s/made.csv", dir);
    struct stat st;
    bad |= (xs_write_atomic(q, "x\n", 2, &err) != XS_OK || lstat(q, &st) != 0 ||
            !S_ISLNK(st.st_mode) || stat(t, &st) != 0 || !S_ISREG(st.st_mode)) << 3;
    /* 4: a new file gets 0666 less the umask, and the umask is left alone */
    mode_t before = umask(027);
    snprintf(p, sizeof p, "%s/fresh.csv", dir);
    bad |= (xs_write_atomic(p, "x\n", 2, &err) != XS_OK || stat(p, &st) != 0 ||
            (st.st_mode & 0777) != 0640 || umask(027) != 027) << 4;
    umask(before);
    return bad;
}

/* The audit's finding 4: -o replaced a file the caller could not write, a
 * dangling symlink became a regular file, a writable file in a read-only
 * folder was refused, -o "" named no file, and the umask was toggled for
 * the whole process. */
static void outputs_should_not_replace_what_the_caller_cannot_write(void)
{
    char dir[600] = "/tmp/xs-perm-XXXXXX", p[700];
    /* not under the scratch folder, which only its owner may enter */
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    CU_ASSERT_EQUAL(chmod(dir, 0777), 0); /* writable by the child: no sticky bit */
    snprintf(p, sizeof p, "%s/locked.csv", dir);
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("old\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(chmod(p, 0444), 0);
    snprintf(p, sizeof p, "%s/ro", dir);
    CU_ASSERT_EQUAL_FATAL(mkdir(p, 0777), 0);
    snprintf(p, sizeof p, "%s/ro/open.csv", dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f = fopen(p, "w"));
    fclose(f);
    CU_ASSERT_EQUAL(chmod(p, 0666), 0);
    snprintf(p, sizeof p, "%s/ro", dir);
    CU_ASSERT_EQUAL(chmod(p, 0555), 0);
    snprintf(p, sizeof p, "%s/dangling.csv", dir);
    CU_ASSERT_EQUAL(symlink("made.csv", p), 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0)
        _exit(write_checks_as(dir));
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status));
    if (WEXITSTATUS(status))
        fprintf(stderr, "\nwrite checks failing: mask %d\n", WEXITSTATUS(status));
    CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
    char rm[800];
    snprintf(rm, sizeof rm, "chmod -R u+w '%s' && rm -rf '%s'", dir, dir);
    CU_ASSERT_EQUAL(system(rm), 0);
    tu_result r = tu_run("predict -o ''");
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "an empty file name"));
    tu_run_free(&r);
}

/* The audit's finding 8: inputs are read whole, so a huge one is refused
 * with the cap named instead of exhausting memory (a sparse file: no disk
 * is used). */
/* bytes (len of them, NULs and all) into <tmpdir>/name; the path. */
static const char *write_bytes(const char *name, const char *bytes, size_t len)
{
    static char path[4][512];
    static int slot;
    char *p = path[slot++ % 4];
    snprintf(p, 512, "%s/%s", tu_tmpdir(), name);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(bytes, 1, len, f), len);
    fclose(f);
    return p;
}

/* A NUL byte ended every document silently: what followed it was never
 * read (a device file's later fields, a CSV's later rows). Refused with
 * the file and the offset; a header alone is no measured-run file. */
static void nul_bytes_and_empty_files_should_be_refused(void)
{
    xs_error err;
    cJSON *doc = NULL;
    static const char json[] = "{\"id\": \"x\"}\0{\"more\": 1}";
    const char *jp = write_bytes("nul.json", json, sizeof json - 1);
    CU_ASSERT_EQUAL(xs_json_load(jp, &doc, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a NUL byte at offset 11: a JSON file holds none"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nul.json"));
    static const char csv[] = MEASURED_HEADER "\nt4,bert-base-squad,,samples_per_s,10,x\n\0"
                                              "t4,bert-base-squad,,samples_per_s,99,x\n";
    const char *cp = write_bytes("nul.csv", csv, sizeof csv - 1);
    xs_vrow *rows = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(xs_measured_load(cp, &rows, &n, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a NUL byte at offset"));
    const char *hp = tu_write("header.csv", MEASURED_HEADER "\n");
    CU_ASSERT_EQUAL(xs_measured_load(hp, &rows, &n, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no row after the header"));
    char args[600];
    snprintf(args, sizeof args, "validate --measured '%s'", hp);
    tu_result r = tu_run(args);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "no row after the header"));
    tu_run_free(&r);
    snprintf(args, sizeof args, "predict -d '%s'", jp);
    r = tu_run(args);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "a NUL byte at offset 11"));
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_free(&r);
}

/* strtod also reads hex floats (0x1p8 = 256), inf and nan: none is a
 * number a user writes in a measured-run file or an option. */
static void hex_floats_and_absurd_values_should_be_refused(void)
{
    const char *p = tu_write("hex.csv", MEASURED_HEADER "\n"
                                        "t4,bert-base-squad,,samples_per_s,0x1p8,x\n"
                                        "t4,bert-base-squad,,samples_per_s,inf,x\n"
                                        "t4,bert-base-squad,,samples_per_s,\" 12\",x\n");
    xs_vrow *rows = NULL;
    size_t n = 0;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(p, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_FALSE(rows[i].ok);
        CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[i]), "field 'value' must be a number > 0"));
    }
    xs_vrows_free(rows, n);
    static const struct {
        const char *args, *part;
    } cases[] = {
        {"predict --price a100-sxm4-80gb=0x1p-3", "expected DEVICE=USD_PER_HOUR"},
        {"compare -d t4,l4 --budget-usd 0x1p1", "--budget-usd must be a number"},
        {"compare -d t4,l4 --deadline-h 0x1p1", "--deadline-h must be a number"},
        {"compare -d t4,l4 --weights time=0x1p0", "--weights time=0x1p0: 'time=0x1p0' must be"},
        {"compare -d t4,l4 --weights time=inf", "must be time=W with W a number"},
        {"predict -s gpt2-medium-finetune --set cluster.devices=65536 "
         "--set cluster.network_gbs=1e-300",
         "cluster.network_gbs 1e-300 is below 0.01 GB/s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_result r = tu_run(cases[i].args);
        CU_ASSERT_NOT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, cases[i].part));
        if (!strstr(r.err, cases[i].part))
            fprintf(stderr, "\n%s: %s\n", cases[i].args, r.err);
        tu_run_free(&r);
    }
}

static void a_huge_input_should_be_refused_with_the_cap(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/huge.json", tu_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(ftruncate(fileno(f), (off_t)3 << 30), 0);
    fclose(f);
    char *text = NULL;
    size_t len;
    xs_error err;
    CU_ASSERT_EQUAL(xs_read_input(path, "a profiler trace", &text, &len, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "larger than 1024 MiB"));
    CU_ASSERT_PTR_NULL(text);
    unlink(path);
}

int tu_add_fileio_suite(void)
{
    CU_pSuite s = CU_add_suite("fileio", NULL, NULL);
    return !s ||
           !CU_add_test(s, "a_directory_should_be_refused_as_an_input_file",
                        a_directory_should_be_refused_as_an_input_file) ||
           !CU_add_test(s, "a_byte_order_mark_should_be_dropped",
                        a_byte_order_mark_should_be_dropped) ||
           !CU_add_test(s, "crlf_line_ends_should_not_reach_the_fields",
                        crlf_line_ends_should_not_reach_the_fields) ||
           !CU_add_test(s, "directories_on_the_command_line_should_say_so_in_one_line",
                        directories_on_the_command_line_should_say_so_in_one_line) ||
           !CU_add_test(s, "a_dash_should_read_standard_input", a_dash_should_read_standard_input) ||
           !CU_add_test(s, "nul_bytes_and_empty_files_should_be_refused",
                        nul_bytes_and_empty_files_should_be_refused) ||
           !CU_add_test(s, "hex_floats_and_absurd_values_should_be_refused",
                        hex_floats_and_absurd_values_should_be_refused) ||
           !CU_add_test(s, "a_huge_input_should_be_refused_with_the_cap",
                        a_huge_input_should_be_refused_with_the_cap) ||
           !CU_add_test(s, "outputs_should_not_replace_what_the_caller_cannot_write",
                        outputs_should_not_replace_what_the_caller_cannot_write) ||
           !CU_add_test(s, "outputs_should_respect_what_is_at_the_path",
                        outputs_should_respect_what_is_at_the_path);
}
