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

static xs_cpu_host_state state(double fma, double file_fma, double dram, double file_dram)
{
    xs_cpu_host_state s = {2, fma, file_fma, dram, file_dram, 0.01, 0.02};
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
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "state box was calibrated in (its FMA peak by -34%, measured"));
    CU_ASSERT_PTR_NULL(strstr(buf, "DRAM"));
    s = state(100, 100, 50, 40);
    CU_ASSERT_EQUAL(xs_cpu_host_state_drift("box", &s, buf, sizeof buf), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(its DRAM bandwidth by +25%, measured"));
    s = state(50, 100, 20, 40);
    CU_ASSERT_EQUAL(xs_cpu_host_state_drift("box", &s, buf, sizeof buf), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "FMA peak by -50% and its DRAM bandwidth by -50%"));
    xs_cpu_host_state_text(&s, buf, sizeof buf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "fp32 FMA peak 50 GFLOP/s a core (device file 100, -50%"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "DRAM triad on 2 cores 20.0 GB/s (device file 40.0, -50%"));
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
           !CU_add_test(s, "drift_should_name_each_ceiling_that_moved",
                        drift_should_name_each_ceiling_that_moved) ||
           !CU_add_test(s, "check_should_refuse_another_cpu_generation",
                        check_should_refuse_another_cpu_generation);
}
