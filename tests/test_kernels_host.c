/* test_kernels_host.c — which machine the CPU kernels run on: the CPU
 * signature a device file records and validate compares, and the drift
 * report of the host-state check (calibrate/cpu_host_state.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpu_calibrate.h"
#include "cpu_features.h"
#include "cpu_host_state.h"
#include "test_util.h"

/* x86-64: "VENDOR family F model M stepping S", read from CPUID; the
 * numbers as the vendors' manuals display them (stepping a nibble, model
 * a byte). */
static void signature_should_name_family_model_and_stepping(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
#if defined(__x86_64__)
    char vendor[16];
    unsigned family, model, stepping;
    CU_ASSERT_EQUAL(sscanf(f->signature, "%15s family %u model %u stepping %u", vendor, &family,
                           &model, &stepping),
                    4);
    CU_ASSERT(strlen(vendor) == 12); /* CPUID leaf 0: 12 characters */
    CU_ASSERT(family >= 6);          /* every x86-64 CPU */
    CU_ASSERT(model <= 255 && stepping <= 15);
#else
    fprintf(stderr, "\n(skipped: not x86-64; signature here is \"%s\")\n", f->signature);
#endif
}

/* Linux shows CPUID's family, model and stepping in /proc/cpuinfo, decoded
 * the same way: the signature must agree with it. */
static void signature_should_agree_with_proc_cpuinfo(void)
{
#if defined(__x86_64__) && defined(__linux__)
    if (getenv("XS_TEST_UNDER_VALGRIND")) { /* make test-valgrind */
        fprintf(stderr, "\n(skipped: valgrind answers CPUID with a CPU of its own)\n");
        return;
    }
    FILE *in = fopen("/proc/cpuinfo", "r");
    if (!in) {
        fprintf(stderr, "\n(skipped: no /proc/cpuinfo)\n");
        return;
    }
    char line[512], vendor[32] = "";
    int family = -1, model = -1, stepping = -1;
    /* the first processor's block: every core of a VM is the same CPU */
    while (fgets(line, sizeof line, in) && line[0] != '\n') {
        /* the vendor ID is 12 raw characters, spaces included ("  Shanghai  ") */
        char *colon = strchr(line, ':');
        if (strncmp(line, "vendor_id", 9) == 0 && colon && colon[1] == ' ')
            snprintf(vendor, sizeof vendor, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
        sscanf(line, "cpu family : %d", &family);
        sscanf(line, "model : %d", &model);
        sscanf(line, "stepping : %d", &stepping);
    }
    fclose(in);
    if (!vendor[0] || family < 0 || model < 0 || stepping < 0) {
        fprintf(stderr, "\n(skipped: /proc/cpuinfo names no vendor, family, model and stepping)\n");
        return;
    }
    char want[96];
    snprintf(want, sizeof want, "%s family %d model %d stepping %d", vendor, family, model,
             stepping);
    CU_ASSERT_STRING_EQUAL(xs_cpu_features_get()->signature, want);
#else
    fprintf(stderr, "\n(skipped: /proc/cpuinfo decodes CPUID on x86-64 Linux only)\n");
#endif
}

static xs_cpu_host_state state(double fma, double file_fma, double dram, double file_dram)
{
    xs_cpu_host_state s = {2, fma, file_fma, dram, file_dram, 0.01, 0.02, 1024};
    return s;
}

/* A ceiling that moved past XS_CPU_HOST_DRIFT is named with its signed
 * change; within it, no note. */
static void drift_should_name_each_ceiling_that_moved(void)
{
    char buf[400];
    xs_cpu_host_state s = state(100, 100, 40, 40);
    CU_ASSERT_EQUAL(xs_cpu_host_state_drift("box", &s, buf, sizeof buf), 0);
    CU_ASSERT_STRING_EQUAL(buf, "");
    s = state(110, 100, 36, 40); /* +10%, -10%: within */
    CU_ASSERT_EQUAL(xs_cpu_host_state_drift("box", &s, buf, sizeof buf), 0);
    s = state(66, 100, 40, 40);
    CU_ASSERT_EQUAL(xs_cpu_host_state_drift("box", &s, buf, sizeof buf), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "this host measured FMA peak -34% against box's figures"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "run validate again"));
    CU_ASSERT_PTR_NULL(strstr(buf, "DRAM"));
    s = state(100, 100, 50, 40);
    CU_ASSERT_EQUAL(xs_cpu_host_state_moved(&s, buf, sizeof buf), 1);
    CU_ASSERT_STRING_EQUAL(buf, "DRAM bandwidth +25%");
    s = state(50, 100, 20, 40);
    CU_ASSERT_EQUAL(xs_cpu_host_state_moved(&s, buf, sizeof buf), 1);
    CU_ASSERT_STRING_EQUAL(buf, "FMA peak -50% and DRAM bandwidth -50%");
    xs_cpu_host_state_text(&s, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "fp32 FMA peak 50 GFLOP/s a core (device file 100, -50%"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "DRAM triad on 2 cores 20.0 GB/s (device file 40.0, -50%"));
}

/* A change under half a percent reads +0%, not -0%; a triad that found no
 * memory says so and leaves DRAM out of the verdict and the JSON. */
static void host_state_should_print_zero_and_a_missing_triad(void)
{
    char buf[400];
    xs_cpu_host_state s = state(99.7, 100, 0, 40);
    xs_cpu_host_state_text(&s, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(device file 100, +0%;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "DRAM triad not measured (no memory for its 1024 MB)"));
    CU_ASSERT_EQUAL(xs_cpu_host_state_moved(&s, buf, sizeof buf), 0);
    cJSON *j = xs_cpu_host_state_json(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(j, "dram_gbs")));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(j, "dram_change_pct"));
    CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(j, "moved")));
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(j, "fma_change_pct")->valuedouble, 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(j, "device_dram_gbs")->valuedouble, 40, 1e-12);
    cJSON_Delete(j);
    s = state(100, 100, 30, 40);
    j = xs_cpu_host_state_json(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(j, "moved")));
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(j, "dram_change_pct")->valuedouble, -25, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(j, "dram_rel_iqr_pct")->valuedouble, 2, 1e-12);
    cJSON_Delete(j);
}

/* One brand string covers several generations on cloud VMs: a file whose
 * signature is another CPU's is refused, in one line, before anything runs. */
static void check_should_refuse_another_cpu_generation(void)
{
    const xs_cpu_features *f = xs_cpu_features_get();
    xs_error err;
    if (xs_cpu_host_check(&err)) {
        fprintf(stderr, "\n(skipped: %s)\n", err.msg);
        return;
    }
    if (!f->signature[0]) {
        fprintf(stderr, "\n(skipped: this host reports no CPU signature)\n");
        return;
    }
    cJSON *doc = tu_load_json("devices/xeon-amx-2c.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON_ReplaceItemInObject(doc, "id", cJSON_CreateString("older"));
    cJSON *compute = cJSON_GetObjectItem(doc, "compute");
    cJSON_ReplaceItemInObject(compute, "cpu_model", cJSON_CreateString(f->model));
    cJSON_ReplaceItemInObject(compute, "isa", cJSON_CreateString(xs_cpu_kernel_set()));
    cJSON_AddStringToObject(compute, "cpu_signature", "GenuineIntel family 6 model 1 stepping 0");
    const char *path = tu_write_json("older.json", doc);
    cJSON_Delete(doc);
    char cmd[700], want[300];
    snprintf(cmd, sizeof cmd, "validate --backend cpu --quick -d '%s'", path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    snprintf(want, sizeof want,
             "calibrated on CPU signature \"GenuineIntel family 6 model 1 stepping 0\", this host's is \"%s\"",
             f->signature);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, want));
    CU_ASSERT_EQUAL(r.out[0], '\0');
    if (r.status != 2 || !strstr(r.err, want))
        fprintf(stderr, "\nvalidate -> %d: %s\n", r.status, r.err);
    tu_run_free(&r);
}

int tu_add_kernels_host_suite(void)
{
    CU_pSuite s = CU_add_suite("kernels_host", NULL, NULL);
    return !s ||
           !CU_add_test(s, "signature_should_name_family_model_and_stepping",
                        signature_should_name_family_model_and_stepping) ||
           !CU_add_test(s, "signature_should_agree_with_proc_cpuinfo",
                        signature_should_agree_with_proc_cpuinfo) ||
           !CU_add_test(s, "drift_should_name_each_ceiling_that_moved",
                        drift_should_name_each_ceiling_that_moved) ||
           !CU_add_test(s, "host_state_should_print_zero_and_a_missing_triad",
                        host_state_should_print_zero_and_a_missing_triad) ||
           !CU_add_test(s, "check_should_refuse_another_cpu_generation",
                        check_should_refuse_another_cpu_generation);
}
