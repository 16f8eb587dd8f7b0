/* test_power.c — the board's power limit: the clock it leaves, the step's
 * average power under it, the refused limits, and the validate metrics of
 * power-limit runs (epoch_time_s, avg_power_w). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "backend.h"
#include "energy.h"
#include "gpu.h"
#include "paths.h"
#include "power.h"
#include "predict.h"
#include "validate.h"
#include "test_util.h"

/* Load device id and predict scenario scn on it with sets. */
static int predict_on(const xs_device *d, const char *scn, const char *const *sets, int n,
                      xs_prediction *p, int64_t *steps_per_epoch, xs_error *err)
{
    char path[512];
    xs_scenario s;
    xs_workload wl;
    int rc = xs_resolve("scenarios", scn, path, sizeof path, err);
    if (!rc)
        rc = xs_scn_load(path, sets, n, &s, err);
    if (!rc)
        rc = xs_wl_build(&s, &wl, err);
    if (rc)
        return rc;
    rc = xs_predict(d, &s, &wl, p, err);
    if (!rc)
        rc = xs_predict_band(d, &s, &wl, p, err);
    if (steps_per_epoch)
        *steps_per_epoch = wl.steps_per_epoch;
    xs_prediction_free(p);
    xs_wl_free(&wl);
    return rc;
}

static int predict_at_limit(const xs_device *d, const char *scn, double limit_w,
                            const char *extra, xs_prediction *p, xs_error *err)
{
    char set[64];
    const char *sets[2];
    int n = 0;
    if (limit_w > 0) {
        snprintf(set, sizeof set, "device.power_limit_w=%.17g", limit_w);
        sets[n++] = set;
    }
    if (extra)
        sets[n++] = extra;
    return predict_on(d, scn, sets, n, p, NULL, err);
}

/* Every shipped GPU and scenario, at the default limit and at the lowest
 * the board accepts (a file without a published range: halfway between
 * idle and the default): the step's average power never exceeds the limit,
 * nor does either corner of its band (each corner's clock is fitted too),
 * and a lower limit never speeds the step up. */
static void every_device_and_scenario_should_fit_its_power_limit(void)
{
    static const char *const scenarios[] = {"bert-base-squad", "bert-large-squad",
                                            "gpt2-medium-finetune", "bert-base-squad-hf"};
    DIR *dir = opendir("devices");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    int checked = 0, limited = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        char id[256];
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        snprintf(id, sizeof id, "%.*s", (int)(len - 5), e->d_name);
        xs_device d = tu_device(id);
        if (!xs_backend_of(&d)->clock_mhz)
            continue; /* no power model: refused (below) */
        double lo, hi;
        int lo_open;
        xs_power_range(&d, &lo, &hi, &lo_open);
        double low_limit = lo_open ? 0.5 * (d.idle_w + d.tdp_w) : lo;
        for (size_t i = 0; i < sizeof scenarios / sizeof *scenarios; i++) {
            xs_prediction def, low;
            xs_error err;
            if (predict_at_limit(&d, scenarios[i], 0, NULL, &def, &err))
                continue; /* the device cannot run it at all */
            CU_ASSERT(def.avg_power_w <= d.tdp_w * (1 + 1e-12));
            CU_ASSERT(def.avg_power_high_w <= d.tdp_w * (1 + 1e-12));
            CU_ASSERT_DOUBLE_EQUAL(def.clock_scale, 1.0, 0);
            int rc = predict_at_limit(&d, scenarios[i], low_limit, NULL, &low, &err);
            CU_ASSERT_EQUAL(rc, XS_OK);
            if (rc) {
                fprintf(stderr, "\n%s on %s at %g W: %s\n", scenarios[i], id, low_limit, err.msg);
                continue;
            }
            CU_ASSERT(low.avg_power_w <= low_limit * (1 + 1e-12));
            CU_ASSERT(low.avg_power_high_w <= low_limit * (1 + 1e-12));
            CU_ASSERT(low.avg_power_low_w <= low.avg_power_high_w);
            CU_ASSERT(low.step_time_s >= def.step_time_s * (1 - 1e-12));
            CU_ASSERT(low.clock_scale <= 1.0);
            limited += low.clock_scale < 1.0;
            checked++;
        }
    }
    closedir(dir);
    CU_ASSERT(checked >= 40);
    CU_ASSERT(limited >= checked / 2); /* the low limits do bind */
}

/* From the board's highest limit down to its lowest, the V100 PCIe's fp32
 * BERT step never gets faster and never draws more; where the limit binds
 * the average sits at the limit (the clock is the highest that fits). */
static void lowering_the_limit_should_slow_the_step_and_lower_power(void)
{
    xs_device d = tu_device("v100-pcie-32gb");
    double prev_t = 0, prev_w = 1e9;
    int binding = 0;
    for (double w = 250; w >= 100; w -= 10) {
        xs_prediction p;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(predict_at_limit(&d, "bert-base-squad-hf", w, NULL, &p, &err),
                              XS_OK);
        CU_ASSERT(p.step_time_s >= prev_t * (1 - 1e-9));
        CU_ASSERT(p.avg_power_w <= prev_w * (1 + 1e-9));
        CU_ASSERT(p.avg_power_w <= w * (1 + 1e-12));
        if (p.clock_scale < 1) {
            binding++;
            CU_ASSERT(p.avg_power_w > w * 0.999);
            CU_ASSERT(p.step_time_low_s <= p.step_time_s && p.step_time_s <= p.step_time_high_s);
        }
        prev_t = p.step_time_s;
        prev_w = p.avg_power_w;
    }
    CU_ASSERT(binding >= 10);
}

/* DRAM's clock is not capped: a memory-bound step slows far less than a
 * compute-bound one under the same limit. */
static void memory_bound_time_should_not_follow_the_core_clock(void)
{
    xs_device d = tu_device("a100-pcie-40gb");
    xs_prediction def, low;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(predict_at_limit(&d, "bert-base-squad", 0, NULL, &def, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(predict_at_limit(&d, "bert-base-squad", 150, NULL, &low, &err), XS_OK);
    double slowdown = low.step_time_s / def.step_time_s;
    CU_ASSERT(low.clock_scale < 1);
    CU_ASSERT(slowdown < 1 / low.clock_scale); /* the memory-bound part does not stretch */
    CU_ASSERT(slowdown > 1);
    double mem = low.bound_time_s[XS_BOUND_MEMORY] / def.bound_time_s[XS_BOUND_MEMORY];
    CU_ASSERT(mem < 1.02);
}

/* A file without the voltage-curve and leakage fields: a kernel's core
 * share of the idle-to-TDP range scales as the clock cubed (the voltage in
 * proportion to the clock); its memory share does not; at scale 1 the old
 * formula holds. */
static void core_power_should_scale_as_the_clock_cubed(void)
{
    xs_device d = tu_device("a100-pcie-40gb");
    d.power_v_floor = d.power_vf_knee_mhz = d.power_leak_frac = 0;
    xs_estimate est = {0};
    est.time_s = 1;
    est.compute_s = 1;
    xs_energy_fill(&d, &est);
    CU_ASSERT_DOUBLE_EQUAL(est.power_w, d.tdp_w, 1e-9);
    d.clock_scale = 0.5;
    xs_energy_fill(&d, &est);
    CU_ASSERT_DOUBLE_EQUAL(est.power_w, d.idle_w + (d.tdp_w - d.idle_w) / 8, 1e-9);
    est.compute_s = 0;
    est.memory_s = 1;
    xs_energy_fill(&d, &est);
    CU_ASSERT_DOUBLE_EQUAL(est.power_w, d.idle_w + (d.tdp_w - d.idle_w) * d.power_memory_frac,
                           1e-9);
}

/* The V100 PCIe's law (voltage floor, leakage): 1 at the file's clock,
 * growing with the clock, the voltage flat below the knee and on the line
 * above it, and (1 - leak) s v^2 + leak v at every scale. */
static void core_power_should_follow_voltage_floor_and_leakage(void)
{
    xs_device d = tu_device("v100-pcie-32gb");
    CU_ASSERT_FATAL(d.power_v_floor > 0 && d.power_vf_knee_mhz > 0 && d.power_leak_frac > 0);
    CU_ASSERT_DOUBLE_EQUAL(xs_power_core_factor(&d, 1.0), 1.0, 1e-12);
    double knee = d.power_vf_knee_mhz / xs_gpu_of(&d)->clock_sustained_mhz;
    double prev = 0;
    for (double s = 0.05; s <= 1.0 + 1e-9; s += 0.01) {
        double c = xs_power_core_factor(&d, s);
        CU_ASSERT(c > prev);
        prev = c;
        double v = xs_power_voltage_ratio(&d, s);
        CU_ASSERT_DOUBLE_EQUAL(c, (1 - d.power_leak_frac) * s * v * v + d.power_leak_frac * v,
                               1e-12);
        if (s < knee) /* the floor, relative to the voltage at the file's clock */
            CU_ASSERT_DOUBLE_EQUAL(v, xs_power_voltage_ratio(&d, 0.05), 1e-12);
    }
    /* below the knee the dynamic part falls only as the clock: halving the
     * clock there halves it, where the cube would leave an eighth */
    double s1 = 0.5 * knee, s2 = 0.25 * knee, leak = d.power_leak_frac;
    double v0 = xs_power_voltage_ratio(&d, s1);
    CU_ASSERT_DOUBLE_EQUAL(xs_power_core_factor(&d, s2) - leak * v0,
                           0.5 * (xs_power_core_factor(&d, s1) - leak * v0), 1e-12);
    /* the energy of a dense kernel at scale s uses the same factor */
    xs_estimate est = {0};
    est.time_s = est.compute_s = 1;
    d.clock_scale = 0.6;
    xs_energy_fill(&d, &est);
    CU_ASSERT_DOUBLE_EQUAL(est.power_w,
                           d.idle_w + (d.tdp_w - d.idle_w) * xs_power_core_factor(&d, 0.6), 1e-9);
}

/* Under the voltage floor the clock must fall much further to shed the
 * same watts: 10 W off a limit near 100 W moves the V100's clock several
 * times more than 10 W off a limit near 200 W, and more than the cube law
 * (the same board without the fields) moves it. */
static void below_the_knee_the_clock_should_fall_faster_with_the_limit(void)
{
    xs_device d = tu_device("v100-pcie-32gb"), cube = d;
    cube.power_v_floor = cube.power_vf_knee_mhz = cube.power_leak_frac = 0;
    double knee = d.power_vf_knee_mhz / xs_gpu_of(&d)->clock_sustained_mhz;
    double clock[2][4];
    static const double limits[4] = {100, 110, 200, 210};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) {
            xs_prediction p;
            xs_error err;
            CU_ASSERT_EQUAL_FATAL(predict_at_limit(k ? &cube : &d, "bert-base-squad-hf",
                                                   limits[i], NULL, &p, &err),
                                  XS_OK);
            CU_ASSERT(p.avg_power_w <= limits[i] * (1 + 1e-12));
            clock[k][i] = p.clock_scale;
        }
    CU_ASSERT(clock[0][0] < knee && clock[0][1] < knee); /* 100, 110 W: below the knee */
    CU_ASSERT(clock[0][2] > knee && clock[0][3] > knee); /* 200, 210 W: above it */
    double low = clock[0][1] - clock[0][0], high = clock[0][3] - clock[0][2];
    CU_ASSERT(low > 3 * high);
    CU_ASSERT(low > clock[1][1] - clock[1][0]);
    CU_ASSERT(clock[0][0] < clock[1][0]); /* the floor leaves less clock at 100 W */
}

/* The new power fields of a GPU file are checked: each number in range,
 * the floor and the knee together, the knee below the top clock. */
static void bad_voltage_fields_should_be_refused(void)
{
    static const struct {
        const char *key;
        double value;
        const char *drop; /* a field removed, or NULL */
        const char *part;
    } cases[] = {
        {"v_floor", 1.2, NULL, "power.v_floor"},
        {"v_floor", 1.0, NULL, "must be below 1"},
        {"v_floor", -0.1, NULL, "power.v_floor"},
        {"vf_knee_mhz", 1380, NULL, "'power.vf_knee_mhz' must be below the top clock"},
        {"vf_knee_mhz", -5, NULL, "power.vf_knee_mhz"},
        {"leak_frac", 1.5, NULL, "power.leak_frac"},
        {"leak_frac", 0.1, "vf_knee_mhz", "come together"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *doc = tu_load_json("devices/v100-pcie-32gb.json");
        cJSON *power = cJSON_GetObjectItem(doc, "power");
        cJSON_DeleteItemFromObject(power, cases[i].key);
        cJSON_AddNumberToObject(power, cases[i].key, cases[i].value);
        if (cases[i].drop)
            cJSON_DeleteItemFromObject(power, cases[i].drop);
        const char *path = tu_write_json("v100-pcie-32gb.json", doc);
        cJSON_Delete(doc);
        xs_device d;
        xs_error err;
        int rc = xs_dev_load(path, &d, &err);
        CU_ASSERT_NOT_EQUAL(rc, XS_OK);
        if (rc && !strstr(err.msg, cases[i].part))
            fprintf(stderr, "\nmessage '%s' lacks '%s'\n", err.msg, cases[i].part);
        CU_ASSERT(rc && strstr(err.msg, cases[i].part) && strstr(err.msg, "v100-pcie-32gb.json"));
        CU_ASSERT_EQUAL(tu_lines(err.msg), 0);
    }
}

/* Limits outside the board's range, non-positive ones and limits for a
 * class without a power model are refused, naming the key and the range. */
static void bad_limits_should_be_refused_with_the_range(void)
{
    xs_device d = tu_device("v100-pcie-32gb");
    xs_prediction p;
    xs_error err;
    CU_ASSERT_EQUAL(predict_at_limit(&d, "bert-base-squad-hf", 99, NULL, &p, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "device.power_limit_w=99"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "from 100 to 250 W"));
    CU_ASSERT_EQUAL(predict_at_limit(&d, "bert-base-squad-hf", 251, NULL, &p, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "v100-pcie-32gb"));
    /* no published range: above idle, at most the default */
    xs_device t4 = tu_device("t4");
    CU_ASSERT_EQUAL(predict_at_limit(&t4, "bert-base-squad", t4.idle_w, NULL, &p, &err),
                    XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "above its idle power"));
    xs_device cpu = tu_device("xeon-amx-2c");
    CU_ASSERT_EQUAL(predict_at_limit(&cpu, "bert-base-squad", 10, NULL, &p, &err),
                    XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "device.power_limit_w"));
    const char *zero[] = {"device.power_limit_w=0"}, *neg[] = {"device.power_limit_w=-5"},
               *text[] = {"device.power_limit_w=lots"};
    const char *const *bad[] = {zero, neg, text};
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_NOT_EQUAL(predict_on(&d, "bert-base-squad-hf", bad[i], 1, &p, NULL, &err), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "device.power_limit_w"));
    }
    /* on the command line: one line, non-zero exit */
    tu_result r = tu_run("predict -d v100-pcie-32gb -s bert-base-squad-hf "
                         "--set device.power_limit_w=300");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "from 100 to 250 W"));
    tu_run_free(&r);
    r = tu_run("compare -s bert-base-squad --set device.power_limit_w=150 --format csv");
    CU_ASSERT_EQUAL(r.status, 0); /* boards that refuse 150 W are listed with the reason */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "takes a limit"));
    tu_run_free(&r);
}

/* epoch_time_s is the step times the epoch's steps, avg_power_w the
 * step's average power, each with its band; both in every format. */
static void power_limit_rows_should_predict_epoch_time_and_power(void)
{
    const char *csv = tu_write("zeus.csv",
                               "device,scenario,set,metric,value,source\n"
                               "v100-pcie-32gb,bert-base-squad-hf,device.power_limit_w=150;"
                               "train.batch=16,epoch_time_s,2000,x\n"
                               "v100-pcie-32gb,bert-base-squad-hf,device.power_limit_w=150;"
                               "train.batch=16,avg_power_w,150,x\n");
    const char *files[] = {csv};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT(rows[0].ok && rows[1].ok);
    xs_device d = tu_device("v100-pcie-32gb");
    xs_prediction p;
    int64_t spe = 0;
    const char *sets[] = {"device.power_limit_w=150", "train.batch=16"};
    CU_ASSERT_EQUAL_FATAL(predict_on(&d, "bert-base-squad-hf", sets, 2, &p, &spe, &err), XS_OK);
    CU_ASSERT_EQUAL(spe, (88524 + 15) / 16);
    CU_ASSERT_DOUBLE_EQUAL(rows[0].predicted, p.step_time_s * (double)spe, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(rows[1].predicted, p.avg_power_w, 1e-9);
    CU_ASSERT(rows[1].predicted <= 150 * (1 + 1e-12));
    CU_ASSERT(rows[0].low <= rows[0].predicted && rows[0].predicted <= rows[0].high);
    CU_ASSERT(rows[1].low <= rows[1].high && rows[1].low > 0);
    CU_ASSERT(rows[0].has_rest && !rows[1].has_rest); /* a power has no matmul share */
    xs_vrows_free(rows, n);
    char cmd[600];
    static const char *const formats[] = {"table", "csv", "json"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "validate --measured '%s' --format %s", csv, formats[i]);
        tu_result r = tu_run(cmd);
        CU_ASSERT_EQUAL(r.status, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "epoch_time_s"));
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "avg_power_w"));
        tu_run_free(&r);
    }
}

int tu_add_power_suite(void)
{
    CU_pSuite s = CU_add_suite("power", NULL, NULL);
    return !s ||
           !CU_add_test(s, "every_device_and_scenario_should_fit_its_power_limit",
                        every_device_and_scenario_should_fit_its_power_limit) ||
           !CU_add_test(s, "lowering_the_limit_should_slow_the_step_and_lower_power",
                        lowering_the_limit_should_slow_the_step_and_lower_power) ||
           !CU_add_test(s, "memory_bound_time_should_not_follow_the_core_clock",
                        memory_bound_time_should_not_follow_the_core_clock) ||
           !CU_add_test(s, "core_power_should_scale_as_the_clock_cubed",
                        core_power_should_scale_as_the_clock_cubed) ||
           !CU_add_test(s, "core_power_should_follow_voltage_floor_and_leakage",
                        core_power_should_follow_voltage_floor_and_leakage) ||
           !CU_add_test(s, "below_the_knee_the_clock_should_fall_faster_with_the_limit",
                        below_the_knee_the_clock_should_fall_faster_with_the_limit) ||
           !CU_add_test(s, "bad_voltage_fields_should_be_refused",
                        bad_voltage_fields_should_be_refused) ||
           !CU_add_test(s, "bad_limits_should_be_refused_with_the_range",
                        bad_limits_should_be_refused_with_the_range) ||
           !CU_add_test(s, "power_limit_rows_should_predict_epoch_time_and_power",
                        power_limit_rows_should_predict_epoch_time_and_power);
}
