/* test_schema.c — the table-driven validator on its own. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "schema.h"
#include "test_util.h"

typedef struct {
    double x;
    int64_t n;
    char s[8];
    int flag, pick;
} demo;

static const xs_field DEMO[] = {
    {"a.x", XS_F_NUM, 1, 0, INFINITY, 1, NULL, offsetof(demo, x), 0, "a positive number", NULL},
    {"a.n", XS_F_INT, 0, 1, 10, 0, NULL, offsetof(demo, n), 0, "small count", NULL},
    {"s", XS_F_STR, 0, 0, 0, 0, NULL, offsetof(demo, s), 8, "short name", NULL},
    {"flag", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(demo, flag), 0, "switch", NULL},
    {"pick", XS_F_ENUM, 0, 0, 0, 0, "red|green", offsetof(demo, pick), 0, "colour", NULL},
};
#define NDEMO (sizeof DEMO / sizeof DEMO[0])

static int apply(const char *json, demo *d, xs_error *err)
{
    cJSON *root = NULL;
    int rc = xs_json_parse(json, "demo.json", &root, err);
    if (rc)
        return rc;
    memset(d, 0, sizeof *d);
    rc = xs_schema_apply(DEMO, NDEMO, root, "demo.json", d, err);
    cJSON_Delete(root);
    return rc;
}

static void schema_should_store_every_type(void)
{
    demo d;
    xs_error err;
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":2.5,\"n\":3},\"s\":\"abc\",\"flag\":true,"
                          "\"pick\":\"green\"}", &d, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(d.x, 2.5, 0);
    CU_ASSERT_EQUAL(d.n, 3);
    CU_ASSERT_STRING_EQUAL(d.s, "abc");
    CU_ASSERT_EQUAL(d.flag, 1);
    CU_ASSERT_EQUAL(d.pick, 1);
}

static void schema_should_name_file_field_and_expectation(void)
{
    demo d;
    xs_error err;
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":-3}}", &d, &err), XS_EFIELD);
    CU_ASSERT_STRING_EQUAL(err.msg, "demo.json: field 'a.x' must be a number > 0, got -3");
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1,\"n\":2.5}}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'a.n' must be an integer in [1, 10], got 2.5"));
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1,\"n\":11}}", &d, &err), XS_EFIELD);
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":\"fast\"}}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "got \"fast\""));
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1},\"pick\":\"blue\"}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "one of red|green"));
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1},\"flag\":1}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "true or false"));
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1},\"s\":\"much too long\"}", &d, &err), XS_EFIELD);
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1},\"s\":\"\"}", &d, &err), XS_EFIELD);
}

static void schema_should_reject_missing_unknown_and_duplicate_fields(void)
{
    demo d;
    xs_error err;
    CU_ASSERT_EQUAL(apply("{\"a\":{}}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing required field 'a.x'"));
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1,\"y\":2}}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown field 'a.y' (known here: x, n)"));
    CU_ASSERT_EQUAL(apply("{\"a\":{\"x\":1,\"x\":2}}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'a.x' appears twice"));
    CU_ASSERT_EQUAL(apply("{\"a\":5}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "field 'a' must be an object"));
    CU_ASSERT_EQUAL(apply("[1,2]", &d, &err), XS_EFIELD);
}

static void schema_should_report_line_and_column_of_malformed_json(void)
{
    demo d;
    xs_error err;
    CU_ASSERT_EQUAL(apply("{\n  \"a\": {\"x\": 1,}\n}", &d, &err), XS_EJSON);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "demo.json: malformed JSON at line 2"));
    CU_ASSERT_EQUAL(apply("", &d, &err), XS_EJSON);
}

static void choice_index_should_match_whole_words_only(void)
{
    CU_ASSERT_EQUAL(xs_choice_index("fp32|tf32|fp16", "tf32"), 1);
    CU_ASSERT_EQUAL(xs_choice_index("fp32|tf32|fp16", "fp1"), -1);
    CU_ASSERT_EQUAL(xs_choice_index("fp32|tf32|fp16", "fp16"), 2);
    CU_ASSERT_EQUAL(xs_choice_index("fp32", ""), -1);
}

/* Defaults: an absent field takes its default, a present one its value;
 * a field with a default is never missing. */
static const xs_field DEFAULTED[] = {
    {"a.x", XS_F_NUM, 0, 0, INFINITY, 1, NULL, offsetof(demo, x), 0, "x", "2.5"},
    {"a.n", XS_F_INT, 0, 1, 10, 0, NULL, offsetof(demo, n), 0, "n", "7"},
    {"s", XS_F_STR, 0, 0, 0, 0, NULL, offsetof(demo, s), 8, "s", "abc"},
    {"flag", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(demo, flag), 0, "flag", "true"},
    {"pick", XS_F_ENUM, 0, 0, 0, 0, "red|green", offsetof(demo, pick), 0, "pick", "green"},
};

static int apply_with(const xs_field *f, size_t n, int all, const char *json, demo *d,
                      xs_error *err)
{
    cJSON *root = NULL;
    int rc = xs_json_parse(json, "demo.json", &root, err);
    if (rc)
        return rc;
    memset(d, 0, sizeof *d);
    rc = all ? xs_schema_apply_all(f, n, root, "demo.json", d, err)
             : xs_schema_apply(f, n, root, "demo.json", d, err);
    cJSON_Delete(root);
    return rc;
}

static void absent_fields_should_take_their_defaults(void)
{
    demo d;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(apply_with(DEFAULTED, NDEMO, 0, "{}", &d, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(d.x, 2.5, 0);
    CU_ASSERT_EQUAL(d.n, 7);
    CU_ASSERT_STRING_EQUAL(d.s, "abc");
    CU_ASSERT_EQUAL(d.flag, 1);
    CU_ASSERT_EQUAL(d.pick, 1);
    CU_ASSERT_EQUAL_FATAL(apply_with(DEFAULTED, NDEMO, 1,
                                     "{\"a\":{\"n\":3},\"flag\":false,\"pick\":\"red\"}",
                                     &d, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(d.n, 3);
    CU_ASSERT_EQUAL(d.flag, 0);
    CU_ASSERT_EQUAL(d.pick, 0);
    CU_ASSERT_DOUBLE_EQUAL(d.x, 2.5, 0);
    /* a default is checked like a value: a table whose default its own
     * range refuses is caught, not stored */
    static const xs_field BAD[] = {
        {"a.n", XS_F_INT, 0, 1, 10, 0, NULL, offsetof(demo, n), 0, "n", "11"}};
    CU_ASSERT_EQUAL(apply_with(BAD, 1, 0, "{}", &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the default of 'a.n'"));
    cJSON *v = xs_schema_default(&DEFAULTED[4]);
    CU_ASSERT(cJSON_IsString(v) && strcmp(v->valuestring, "green") == 0);
    cJSON_Delete(v);
    CU_ASSERT_PTR_NULL(xs_schema_default(&DEMO[0]));
}

/* xs_schema_apply_all: every problem, the first as xs_schema_apply says it,
 * the others one a line after it; a first-error check says only the first. */
static void apply_all_should_report_every_problem(void)
{
    demo d;
    xs_error err;
    const char *three = "{\"a\":{\"n\":0},\"colour\":1,\"pick\":\"blue\"}";
    CU_ASSERT_EQUAL(apply_with(DEMO, NDEMO, 0, three, &d, &err), XS_EFIELD);
    char first[sizeof err.msg];
    snprintf(first, sizeof first, "%s", err.msg);
    CU_ASSERT_STRING_EQUAL(err.more, "");
    CU_ASSERT_EQUAL(apply_with(DEMO, NDEMO, 1, three, &d, &err), XS_EFIELD);
    CU_ASSERT_STRING_EQUAL(err.msg, first);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown field 'colour'"));
    CU_ASSERT_STRING_EQUAL(err.more,
                           "demo.json: missing required field 'a.x' (a number > 0: a positive "
                           "number)\n"
                           "demo.json: field 'a.n' must be an integer in [1, 10], got 0\n"
                           "demo.json: field 'pick' must be one of red|green, got \"blue\"");
    /* one problem: more stays empty, so the message is what it always was */
    CU_ASSERT_EQUAL(apply_with(DEMO, NDEMO, 1, "{\"a\":{\"x\":-1}}", &d, &err), XS_EFIELD);
    CU_ASSERT_STRING_EQUAL(err.msg, "demo.json: field 'a.x' must be a number > 0, got -1");
    CU_ASSERT_STRING_EQUAL(err.more, "");
    /* an object where a value was due: said once, not again as missing fields */
    CU_ASSERT_EQUAL(apply_with(DEMO, NDEMO, 1, "{\"a\":5}", &d, &err), XS_EFIELD);
    CU_ASSERT_STRING_EQUAL(err.msg, "demo.json: field 'a' must be an object");
    CU_ASSERT_STRING_EQUAL(err.more, "");
    /* more problems than fit: the rest counted on a closing line */
    char big[40000];
    size_t used = (size_t)snprintf(big, sizeof big, "{\"a\":{\"x\":1}");
    for (int i = 0; i < 200; i++)
        used += (size_t)snprintf(big + used, sizeof big - used,
                                 ",\"unknown_key_number_%03d_with_a_long_name\":1", i);
    snprintf(big + used, sizeof big - used, "}");
    CU_ASSERT_EQUAL(apply_with(DEMO, NDEMO, 1, big, &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown_key_number_000"));
    const char *last = strrchr(err.more, '\n');
    CU_ASSERT_PTR_NOT_NULL_FATAL(last);
    CU_ASSERT_PTR_NOT_NULL(strstr(last, "more problems not shown"));
    CU_ASSERT(strlen(err.more) < sizeof err.more);
}

int tu_add_schema_suite(void)
{
    CU_pSuite s = CU_add_suite("schema", NULL, NULL);
    return !s || !CU_add_test(s, "schema_should_store_every_type", schema_should_store_every_type) ||
           !CU_add_test(s, "schema_should_name_file_field_and_expectation",
                        schema_should_name_file_field_and_expectation) ||
           !CU_add_test(s, "schema_should_reject_missing_unknown_and_duplicate_fields",
                        schema_should_reject_missing_unknown_and_duplicate_fields) ||
           !CU_add_test(s, "schema_should_report_line_and_column_of_malformed_json",
                        schema_should_report_line_and_column_of_malformed_json) ||
           !CU_add_test(s, "choice_index_should_match_whole_words_only",
                        choice_index_should_match_whole_words_only) ||
           !CU_add_test(s, "absent_fields_should_take_their_defaults",
                        absent_fields_should_take_their_defaults) ||
           !CU_add_test(s, "apply_all_should_report_every_problem",
                        apply_all_should_report_every_problem);
}
