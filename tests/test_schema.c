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
                        choice_index_should_match_whole_words_only);
}
