/* test_backend.c — the seams between the core and the device classes: the
 * class table agrees with the class names files may use and every slot is
 * whole; each class describes its matrix engine from its own parameters;
 * every shipped device file is written back, field for field, from its
 * class's schema table (the one description calibrate writes with); the
 * calibration backends name a device class that exists; one xs_job gives
 * what the separate steps give. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <CUnit/CUnit.h>

#include "backend.h"
#include "backends.h"
#include "cpu.h"
#include "gpu.h"
#include "job.h"
#include "paths.h"
#include "test_util.h"

static void class_table_should_match_the_class_names_and_be_whole(void)
{
    int n = 0;
    const xs_backend *be;
    for (; (be = xs_backend_at(n)) != NULL; n++) {
        char word[32];
        CU_ASSERT_EQUAL(xs_choice_word(XS_CLASS_CHOICES, n, word, sizeof word), 0);
        CU_ASSERT_STRING_EQUAL(word, be->name);
        int index = -1;
        CU_ASSERT_PTR_EQUAL(xs_backend_find(be->name, &index), be);
        CU_ASSERT_EQUAL(index, n);
        CU_ASSERT(be->doc && be->fields && be->check && be->arch_name && be->gemm_engine &&
                  be->estimate && be->corner);
        size_t nf;
        const xs_field *f = be->fields(&nf);
        CU_ASSERT(nf > 10);
        CU_ASSERT_STRING_EQUAL(f[2].path, "class"); /* read before the rest picks the table */
    }
    char past[32];
    CU_ASSERT_EQUAL(xs_choice_word(XS_CLASS_CHOICES, n, past, sizeof past), -1);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_PTR_NOT_NULL(xs_backend_find("tpu", NULL));
    CU_ASSERT_PTR_NULL(xs_backend_find("npu", NULL));
}

static void each_class_should_describe_its_engine_from_its_own_parameters(void)
{
    xs_device a, c;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("a100-sxm4-80gb", &a, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("xeon-amx-2c", &c, &err), XS_OK);
    xs_gemm_engine e;
    xs_dev_gemm_engine(&a, &e);
    CU_ASSERT_EQUAL(e.units, xs_gpu_of(&a)->sm_count);
    CU_ASSERT_DOUBLE_EQUAL(e.clock_mhz, xs_gpu_of(&a)->clock_sustained_mhz, 0);
    CU_ASSERT_DOUBLE_EQUAL(e.peak_flops[XS_FP16], xs_gpu_peak_flops(&a, XS_FP16), 0);
    CU_ASSERT_DOUBLE_EQUAL(e.dram_bw_gbs, a.mem_bw_gbs, 0);
    CU_ASSERT_PTR_EQUAL(e.matrix, &xs_gpu_of(&a)->tensor_tiles);
    CU_ASSERT_FALSE(e.packs_operands);
    CU_ASSERT_STRING_EQUAL(e.device_id, "a100-sxm4-80gb");
    xs_dev_gemm_engine(&c, &e);
    CU_ASSERT_EQUAL(e.units, xs_cpu_of(&c)->cores);
    CU_ASSERT_DOUBLE_EQUAL(e.l2_mb, xs_cpu_of(&c)->llc_mb, 0);
    CU_ASSERT_DOUBLE_EQUAL(e.tile_overhead_ns[XS_BF16], xs_cpu_of(&c)->block_ns_bf16, 0);
    CU_ASSERT_DOUBLE_EQUAL(e.launch_us, 0, 0); /* parallel regions are costed by cpu.c */
    /* a corner moves the engine: the slow GPU corner holds a lower clock */
    xs_device slow;
    xs_dev_corner(&a, -1, &slow);
    xs_dev_gemm_engine(&slow, &e);
    CU_ASSERT(e.clock_mhz < xs_gpu_of(&a)->clock_sustained_mhz);
    CU_ASSERT_STRING_EQUAL(slow.arch, "ampere");
}

/* Load repo file devices/<id>.json, write it from the schema with the
 * original's text fields, and expect the same document. */
static void expect_round_trip(const char *id)
{
    char rel[128];
    snprintf(rel, sizeof rel, "devices/%s.json", id);
    cJSON *orig = tu_load_json(rel);
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open(id, &d, &err), XS_OK);
    size_t n;
    const xs_field *f = xs_backend_of(&d)->fields(&n);
    cJSON *back = NULL;
    CU_ASSERT_EQUAL(xs_schema_write(f, n, &d, orig, rel, &back, &err), XS_OK);
    int same = back && cJSON_Compare(orig, back, 1);
    if (!same) {
        char *t = back ? cJSON_Print(back) : NULL;
        fprintf(stderr, "\n%s written back differs:\n%s\n", id, t ? t : "(nothing)");
        cJSON_free(t);
    }
    CU_ASSERT(same);
    cJSON_Delete(back);
    cJSON_Delete(orig);
}

static void every_device_file_should_be_written_back_from_its_schema(void)
{
    char **ids;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_list_ids("devices", &ids, &n, &err), XS_OK);
    for (size_t i = 0; i < n; i++)
        expect_round_trip(ids[i]);
    xs_ids_free(ids, n);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void device_write_should_check_before_it_writes(void)
{
    cJSON *orig = tu_load_json("devices/xeon-amx-2c.json");
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("xeon-amx-2c", &d, &err), XS_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/xeon-amx-2c.json", tu_tmpdir());
    /* a good device: written, and it loads back to the same numbers */
    CU_ASSERT_EQUAL(xs_dev_write(&d, orig, path, &err), XS_OK);
    xs_device back;
    CU_ASSERT_EQUAL_FATAL(xs_dev_load(path, &back, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(xs_cpu_of(&back)->k[XS_FN_GELU].ns_per_elem, xs_cpu_of(&d)->k[XS_FN_GELU].ns_per_elem, 0);
    CU_ASSERT_EQUAL(xs_cpu_of(&back)->bf16_blocks.n, 1);
    CU_ASSERT_EQUAL(xs_cpu_of(&back)->fp32_blocks.n, 1);
    remove(path);
    /* one that a load would refuse is not written at all */
    xs_device bad = d;
    bad.idle_w = bad.tdp_w * 2;
    CU_ASSERT_EQUAL(xs_dev_write(&bad, orig, path, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "field 'power.idle_w' must be below"));
    CU_ASSERT_FALSE(exists(path));
    bad = d;
    xs_cpu_of(&bad)->k[XS_FN_ADD].ns_per_elem = -1;
    CU_ASSERT_EQUAL(xs_dev_write(&bad, orig, path, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'kernels.add.ns_per_elem' must be a number > 0"));
    CU_ASSERT_FALSE(exists(path));
    /* a required text field with nothing to write is named */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(orig, "memory"), "source");
    CU_ASSERT_EQUAL(xs_dev_write(&d, orig, path, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nothing to write for required field 'memory.source'"));
    CU_ASSERT_FALSE(exists(path));
    cJSON_Delete(orig);
}

/* The class picks the schema, so it is checked before any field that only
 * one class knows: a CPU file relabelled is refused for its class. */
static void a_bad_class_should_be_reported_before_other_fields(void)
{
    static const struct {
        const char *cls, *part;
    } cases[] = {{"npu", "field 'class' must be one of gpu|cpu|tpu, got \"npu\""},
                 {NULL, "missing required field 'class' (one of gpu|cpu|tpu"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *doc = tu_load_json("devices/xeon-amx-2c.json");
        if (cases[i].cls)
            cJSON_ReplaceItemInObject(doc, "class", cJSON_CreateString(cases[i].cls));
        else
            cJSON_DeleteItemFromObject(doc, "class");
        const char *path = tu_write_json("xeon-amx-2c.json", doc);
        cJSON_Delete(doc);
        xs_device d;
        xs_error err;
        CU_ASSERT_EQUAL(xs_dev_load(path, &d, &err), XS_EFIELD);
        if (!strstr(err.msg, cases[i].part))
            fprintf(stderr, "\nmessage '%s' lacks '%s'\n", err.msg, cases[i].part);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].part));
    }
}

static void calibration_backends_should_name_a_device_class(void)
{
    const xs_cal_backend *b;
    int n = 0;
    for (; (b = xs_cal_backend_at(n)) != NULL; n++) {
        CU_ASSERT_PTR_EQUAL(xs_cal_backend_find(b->name), b);
        CU_ASSERT_PTR_NOT_NULL(xs_backend_find(b->device_class, NULL));
        CU_ASSERT(b->calibrate && b->check && b->summary && b->calibrate_doc && b->check_doc);
        CU_ASSERT(b->host_check && b->same_host); /* checked before anything runs */
        size_t len = strlen(b->default_out);
        CU_ASSERT(len > 5 && strcmp(b->default_out + len - 5, ".json") == 0);
    }
    CU_ASSERT(n >= 1);
    CU_ASSERT_PTR_NOT_NULL(xs_cal_backend_find("cpu"));
    CU_ASSERT_PTR_NULL(xs_cal_backend_find("tpu"));
}

static void job_should_predict_what_the_steps_predict(void)
{
    static const char *sets[] = {"train.batch=8"};
    xs_error err;
    xs_job j;
    xs_job_init(&j);
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("t4", &j.dev, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_scenario(&j, "bert-base-squad", sets, 1, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_job_predict(&j, 1, &err), XS_OK);
    CU_ASSERT_EQUAL(j.s.train.batch, 8);
    xs_prediction p;
    CU_ASSERT_EQUAL_FATAL(xs_predict(&j.dev, &j.s, &j.wl, &p, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(j.p.step_time_s, p.step_time_s, 0);
    CU_ASSERT(j.p.step_time_high_s > j.p.step_time_s && j.p.step_time_low_s < j.p.step_time_s);
    CU_ASSERT_EQUAL(j.p.matmul_asked, XS_FP16);
    CU_ASSERT_EQUAL(j.p.matmul_engine, XS_FP16);
    CU_ASSERT(j.p.matmul_tensor);
    CU_ASSERT_DOUBLE_EQUAL(j.p.matmul_clock_mhz, xs_gpu_of(&j.dev)->clock_sustained_mhz, 0);
    xs_prediction_free(&p);
    xs_job_free(&j);
    CU_ASSERT_PTR_NULL(j.p.est);
    /* a bad override names the --set, and nothing is left to free */
    static const char *bad[] = {"train.batch=-2"};
    xs_job_init(&j);
    CU_ASSERT_EQUAL(xs_job_scenario(&j, "bert-base-squad", bad, 1, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.batch"));
    xs_job_free(&j);
}

int tu_add_backend_suite(void)
{
    CU_pSuite s = CU_add_suite("backend", NULL, NULL);
    return !s ||
           !CU_add_test(s, "class_table_should_match_the_class_names_and_be_whole",
                        class_table_should_match_the_class_names_and_be_whole) ||
           !CU_add_test(s, "each_class_should_describe_its_engine_from_its_own_parameters",
                        each_class_should_describe_its_engine_from_its_own_parameters) ||
           !CU_add_test(s, "every_device_file_should_be_written_back_from_its_schema",
                        every_device_file_should_be_written_back_from_its_schema) ||
           !CU_add_test(s, "device_write_should_check_before_it_writes",
                        device_write_should_check_before_it_writes) ||
           !CU_add_test(s, "a_bad_class_should_be_reported_before_other_fields",
                        a_bad_class_should_be_reported_before_other_fields) ||
           !CU_add_test(s, "calibration_backends_should_name_a_device_class",
                        calibration_backends_should_name_a_device_class) ||
           !CU_add_test(s, "job_should_predict_what_the_steps_predict",
                        job_should_predict_what_the_steps_predict);
}
