/* test_cuda_backend.c — calibrate and validate --backend cuda without a
 * GPU: against tests/fake_gpu.c (build/rel/libxs_fake_gpu.so, standing in
 * for both libxscuda.so and NVML), the fit recovers the fake's known
 * parameters; a measurement file fits the same way with no GPU; every
 * missing piece (library, GPU, NVML) is one line and exit 3; bad
 * measurement files name their file, line and column. */
#include <CUnit/CUnit.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_calibrate.h"
#include "cuda_lib.h"
#include "cuda_meas.h"
#include "gpu.h"
#include "nvml.h"
#include "schema.h"
#include "test_util.h"

#define FAKE "build/rel/libxs_fake_gpu.so"
#define RECORDED "tests/data/cuda/fake-h100.measurements.csv"

/* The fake's parameters (tests/fake_gpu.c), restated: what calibrate must find. */
#define FAKE_LAUNCH_US 2.5
#define FAKE_DRAM_GBS 2847.5
#define FAKE_IDLE_W 70.0
#define FAKE_PJ_PER_FLOP 0.4
#define FAKE_PJ_PER_BYTE 60.0
#define FAKE_SM_MHZ 1650.0
#define FAKE_GEMM_EFF 0.80 /* the base's GEMM model at this efficiency times the fake's GEMMs */
#define FAKE_NOISE 0.005   /* every repetition is the law's time x (1 +- at most this) */
#define H100_BW_GBS 3350.0 /* devices/h100-sxm5-80gb.json, the base the name maps to */
#define H100_TDP_W 700.0
#define FAKE_L2_BYTES (50.0 * 1048576)

static char fake_path[PATH_MAX];

static void use_fake(void)
{
    if (!realpath(FAKE, fake_path))
        snprintf(fake_path, sizeof fake_path, "%s", FAKE);
    setenv("XS_CUDA_LIB", fake_path, 1);
    setenv("XS_NVML_LIB", fake_path, 1);
    unsetenv("XS_FAKE_GPU");
    unsetenv("XS_FAKE_NVML");
}

static void no_fake(void)
{
    unsetenv("XS_CUDA_LIB");
    unsetenv("XS_NVML_LIB");
    unsetenv("XS_FAKE_GPU");
    unsetenv("XS_FAKE_NVML");
}

static double num_at(const cJSON *doc, const char *path)
{
    const cJSON *v = xs_json_path(doc, path);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str_at(const cJSON *doc, const char *path)
{
    const cJSON *v = xs_json_path(doc, path);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static cJSON *load(const char *path)
{
    cJSON *doc = NULL;
    xs_error err;
    if (xs_json_load(path, &doc, &err))
        fprintf(stderr, "\n%s\n", err.msg);
    return doc;
}

/* The GEMM fit of a device file calibrated against the fake (live or from
 * its recording). The fake times each GEMM by xpusim's GEMM model of the
 * base at FAKE_GEMM_EFF with the fake's launch cost, bandwidth and clock,
 * times 1 +- FAKE_NOISE per repetition (so the row's median too). The fit
 * runs the same model with the launch cost and streaming efficiency it
 * fitted first (each within FAKE_NOISE of the fake's: medians of noisy
 * rows) and the clock NVML reported (exact). So at FAKE_GEMM_EFF a row is
 * off by the noise, plus at most FAKE_NOISE more where launches or DRAM
 * bound it: 2 x FAKE_NOISE at most.
 * - the efficiency: a compute-bound row's time goes as 1 / efficiency and
 *   is off by the noise alone (launch and DRAM do not bound it); rows bound
 *   elsewhere do not move with the efficiency and do not pull the fit; so
 *   the least-squares efficiency lands within FAKE_NOISE (relative) of
 *   FAKE_GEMM_EFF, all dtypes together and each alone (the file's 4 digits
 *   are far inside that);
 * - the residuals: the fit minimizes the summed squared (log) error, so its
 *   rms is at most the rms at FAKE_GEMM_EFF, under 2 x FAKE_NOISE; a row's
 *   residual moves from its value there by at most the efficiency's error,
 *   so the largest is under 3 x FAKE_NOISE.
 * The fake before it followed the model (its own roofline at 0.70) fitted
 * 0.964 with a 49% rms: these bounds fail for a fit that does not recover
 * the model it is given. */
static void expect_gemm_fit(const cJSON *d)
{
    static const char *const DT[] = {"fp32", "tf32", "fp16", "bf16"};
    double ge = num_at(d, "model.gemm_efficiency");
    CU_ASSERT_DOUBLE_EQUAL(ge, FAKE_GEMM_EFF, FAKE_NOISE * FAKE_GEMM_EFF);
    CU_ASSERT_EQUAL(num_at(d, "calibration.fits.gemm_efficiency.n"), 60);
    double rms = num_at(d, "calibration.fits.gemm_efficiency.rms_residual_pct");
    double mx = num_at(d, "calibration.fits.gemm_efficiency.max_residual_pct");
    CU_ASSERT(rms >= 0 && rms <= 100 * 2 * FAKE_NOISE);
    CU_ASSERT(mx >= rms && mx <= 100 * 3 * FAKE_NOISE);
    if (!(fabs(ge - FAKE_GEMM_EFF) <= FAKE_NOISE * FAKE_GEMM_EFF && rms <= 100 * 2 * FAKE_NOISE))
        fprintf(stderr, "\nGEMM fit: efficiency %.4g (fake %.2f), rms %.3g%%, max %.3g%%\n", ge,
                FAKE_GEMM_EFF, rms, mx);
    for (int i = 0; i < 4; i++) {
        char p[96];
        snprintf(p, sizeof p, "calibration.fits.gemm_efficiency_by_dtype.%s.n", DT[i]);
        CU_ASSERT_EQUAL(num_at(d, p), 15);
        snprintf(p, sizeof p, "calibration.fits.gemm_efficiency_by_dtype.%s.value", DT[i]);
        CU_ASSERT_DOUBLE_EQUAL(num_at(d, p), FAKE_GEMM_EFF, FAKE_NOISE * FAKE_GEMM_EFF);
        snprintf(p, sizeof p, "calibration.fits.gemm_efficiency_by_dtype.%s.rms_residual_pct", DT[i]);
        CU_ASSERT(num_at(d, p) <= 100 * 2 * FAKE_NOISE);
    }
    CU_ASSERT(num_at(d, "model.gemm_efficiency_low") <= ge && ge <= num_at(d, "model.gemm_efficiency_high"));
    CU_ASSERT(num_at(d, "model.gemm_efficiency_high") - num_at(d, "model.gemm_efficiency_low") <=
              2 * FAKE_NOISE * FAKE_GEMM_EFF);
}

/* Written once by the first test, read by the next ones. */
static char cal_json[600], cal_csv[600];

/* Expected values, from the fake's laws:
 * - launch: every launch takes 2.5 us (+-0.5% noise; the median of 256);
 * - streaming: a copy past L2 takes launch + bytes / 2847.5 GB/s, so
 *   bytes / (t - launch) / 3350 GB/s = 0.85 (noise +-0.5%);
 * - idle: NVML reads 70 W while no job runs;
 * - power: a sustained job draws 70 W + 0.4 pJ x FLOP/s + 60 pJ x B/s at its
 *   own rate, and the sustained rows keep exactly that rate (calls / time),
 *   so the two slopes come back to NVML's mW resolution;
 * - memory_frac: the sustained copy moves 8 x L2 bytes (8 B an element of L2 /
 *   8 elements) in launch + bytes / 2847.5 GB/s, drawing 60 pJ x B/s over idle,
 *   a share of (700 - 70) W;
 * - clock: NVML reads 1650 MHz while a sustained job runs. */
static void calibrate_should_recover_the_fakes_parameters(void)
{
    use_fake();
    snprintf(cal_json, sizeof cal_json, "%s/fake-h100.json", tu_tmpdir());
    snprintf(cal_csv, sizeof cal_csv, "%s/fake-h100.measurements.csv", tu_tmpdir());
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "calibrate --backend cuda --quick -o '%s'", cal_json);
    tu_result r = tu_run(cmd);
    no_fake();
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "wrote"));
    tu_run_free(&r);
    cJSON *d = load(cal_json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "model.kernel_launch_us"), FAKE_LAUNCH_US, 0.01 * FAKE_LAUNCH_US);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "model.mem_bw_efficiency"), FAKE_DRAM_GBS / H100_BW_GBS, 0.01);
    CU_ASSERT(num_at(d, "model.mem_bw_efficiency_low") <= num_at(d, "model.mem_bw_efficiency"));
    CU_ASSERT(num_at(d, "model.mem_bw_efficiency_high") >= num_at(d, "model.mem_bw_efficiency"));
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "power.idle_w"), FAKE_IDLE_W, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "calibration.fits.power.pj_per_flop"), FAKE_PJ_PER_FLOP,
                           0.02 * FAKE_PJ_PER_FLOP);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "calibration.fits.power.pj_per_byte"), FAKE_PJ_PER_BYTE,
                           0.02 * FAKE_PJ_PER_BYTE);
    double bytes = 8.0 * FAKE_L2_BYTES;
    double rate = bytes / (FAKE_LAUNCH_US * 1e-6 + bytes / (FAKE_DRAM_GBS * 1e9));
    double frac = FAKE_PJ_PER_BYTE * 1e-12 * rate / (H100_TDP_W - FAKE_IDLE_W);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "power.memory_frac"), frac, 0.01 * frac);
    CU_ASSERT(num_at(d, "power.compute_frac") > 0 && num_at(d, "power.compute_frac") <= 1);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "compute.clock_sustained_mhz"), FAKE_SM_MHZ, 0.5);
    /* the GEMM fit: one efficiency for 15 shapes x 4 dtypes, and one each */
    expect_gemm_fit(d);
    /* the row kernels: factors in range, fitted on their rows */
    static const char *const CLS[] = {"norm", "softmax", "optimizer"};
    for (int i = 0; i < 3; i++) {
        char p[96];
        snprintf(p, sizeof p, "model.class_time_factor.%s", CLS[i]);
        CU_ASSERT(num_at(d, p) >= 0.1 && num_at(d, p) <= 10);
        snprintf(p, sizeof p, "calibration.fits.class_time_factor.%s.n", CLS[i]);
        CU_ASSERT(num_at(d, p) >= 3);
    }
    /* provenance */
    CU_ASSERT_STRING_EQUAL(str_at(d, "calibration.gpu.name"), "NVIDIA H100 80GB HBM3");
    CU_ASSERT_STRING_EQUAL(str_at(d, "name"), "NVIDIA H100 80GB HBM3");
    CU_ASSERT_STRING_EQUAL(str_at(d, "calibration.gpu.driver"), "580.00-fake");
    CU_ASSERT_STRING_EQUAL(str_at(d, "calibration.base"), "h100-sxm5-80gb");
    CU_ASSERT_PTR_NOT_NULL(strstr(str_at(d, "calibration.clocks_event_reasons_seen"), "sw_power_cap"));
    CU_ASSERT_PTR_NOT_NULL(strstr(str_at(d, "calibration.fits.power.energy_from"), "counter"));
    cJSON_Delete(d);
    /* and the file is a device the tool predicts with */
    snprintf(cmd, sizeof cmd, "predict -d '%s' -s bert-base-squad --summary", cal_json);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
}

/* Two device documents equal but for what names the run (id, command,
 * the measurement file's path). */
static int same_device(const char *a, const char *b)
{
    cJSON *x = load(a), *y = load(b);
    int same = 0;
    if (x && y) {
        const char *const drop[] = {"command", "measurements"};
        for (int i = 0; i < 2; i++) {
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(x, "calibration"), drop[i]);
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(y, "calibration"), drop[i]);
        }
        cJSON_DeleteItemFromObjectCaseSensitive(x, "id");
        cJSON_DeleteItemFromObjectCaseSensitive(y, "id");
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(x, "model"), "source");
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(y, "model"), "source");
        same = cJSON_Compare(x, y, 1);
    }
    cJSON_Delete(x);
    cJSON_Delete(y);
    return same;
}

static void from_measurements_should_write_the_same_device(void)
{
    CU_ASSERT_FATAL(cal_json[0] && access(cal_csv, R_OK) == 0);
    /* no library may be loaded: a path that does not exist proves it */
    setenv("XS_CUDA_LIB", "/nonexistent/libxscuda.so", 1);
    setenv("XS_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    char out[600], cmd[1400];
    snprintf(out, sizeof out, "%s/refit.json", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "calibrate --backend cuda --from-measurements '%s' -o '%s'", cal_csv,
             out);
    tu_result r = tu_run(cmd);
    no_fake();
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    CU_ASSERT(same_device(cal_json, out));
}

/* The shipped recording (synthesized by the fake, say its provenance
 * lines) fits to the fake's figures with no GPU. */
static void recorded_file_should_fit(void)
{
    setenv("XS_CUDA_LIB", "/nonexistent/libxscuda.so", 1);
    char out[600], cmd[1400];
    snprintf(out, sizeof out, "%s/recorded.json", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "calibrate --backend cuda --from-measurements " RECORDED " -o '%s'",
             out);
    tu_result r = tu_run(cmd);
    no_fake();
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    cJSON *d = load(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "model.kernel_launch_us"), FAKE_LAUNCH_US, 0.025);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "power.idle_w"), FAKE_IDLE_W, 0.01);
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "calibration.fits.power.pj_per_byte"), FAKE_PJ_PER_BYTE, 1.2);
    CU_ASSERT_PTR_NOT_NULL(strstr(str_at(d, "calibration.measured_by"), "--backend cuda"));
    expect_gemm_fit(d);
    cJSON_Delete(d);
    /* --base picks another start: a V100's bandwidth is under what the rows reached */
    snprintf(cmd, sizeof cmd,
             "calibrate --backend cuda --from-measurements " RECORDED " --base v100-sxm2-16gb "
             "-o '%s/v100.json'",
             tu_tmpdir());
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "not of this device"));
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    tu_run_free(&r);
}

/* One line on stderr naming want, exit 3, and no file written. */
static void expect_nohw(const char *args, const char *want, const char *file)
{
    tu_result r = tu_run(args);
    CU_ASSERT_EQUAL(r.status, 3);
    if (!strstr(r.err, want))
        fprintf(stderr, "\nwanted '%s' in: %s\n", want, r.err);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, want));
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    if (file)
        CU_ASSERT_NOT_EQUAL(access(file, F_OK), 0);
    tu_run_free(&r);
}

/* 1 when the command under test finds a built library: build/cuda/ in the
 * folder of its executable (XPUSIM_BIN's last word; build/clang/xpusim and
 * build/nokern/xpusim look beside themselves, not in ./build/cuda). */
static int cuda_lib_beside_command(void)
{
    const char *bin = getenv("XPUSIM_BIN");
    const char *last = bin ? strrchr(bin, ' ') : NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s", last ? last + 1 : bin ? bin : "./xpusim");
    char *slash = strrchr(path, '/');
    size_t at = slash ? (size_t)(slash - path) + 1 : 0;
    /* the sanitizer build's binary looks in its tree's root (cuda_lib.c) */
    if (at >= 11 && strncmp(path + at - 11, "build/asan/", 11) == 0)
        at -= 11;
    snprintf(path + at, sizeof path - at, "build/cuda/libxscuda.so");
    return access(path, F_OK) == 0;
}

static void missing_hardware_should_exit_3(void)
{
    char out[600], cmd[1400];
    snprintf(out, sizeof out, "%s/none.json", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "calibrate --backend cuda --quick -o '%s'", out);
    /* no library where XS_CUDA_LIB points */
    no_fake();
    setenv("XS_CUDA_LIB", "/nonexistent/libxscuda.so", 1);
    expect_nohw(cmd, "XS_CUDA_LIB=/nonexistent/libxscuda.so: no such file", out);
    /* the library a build makes: absent (no nvcc), or the real one on this GPU-less host */
    unsetenv("XS_CUDA_LIB");
    int built = cuda_lib_beside_command();
    expect_nohw(cmd, built ? "no CUDA GPU" : "xpusim was built without CUDA", out);
    /* the fake with no GPU */
    use_fake();
    setenv("XS_FAKE_GPU", "none", 1);
    expect_nohw(cmd, "no CUDA GPU: cudaGetDeviceCount: no CUDA-capable device is detected", out);
    expect_nohw("validate --backend cuda -d h100-sxm5-80gb", "no CUDA GPU", NULL);
    /* a GPU, but no NVML, a library that is not NVML, or NVML failing */
    use_fake();
    setenv("XS_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    expect_nohw(cmd, "no NVML", out);
    setenv("XS_NVML_LIB", "libm.so.6", 1);
    expect_nohw(cmd, "has no nvmlInit_v2", out);
    use_fake();
    setenv("XS_FAKE_NVML", "initfail", 1);
    expect_nohw(cmd, "NVML init failed: Driver Not Loaded (fake)", out);
    expect_nohw("validate --backend cuda -d h100-sxm5-80gb --quick", "NVML init failed", NULL);
    /* a GPU the table does not know: ask for --base (usage, exit 2) */
    no_fake();
}

/* The same loader errors in-process, and the reasons' words. */
static void loaders_should_fail_cleanly(void)
{
    xs_error err;
    xs_nvml *n = (xs_nvml *)1;
    setenv("XS_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    CU_ASSERT_EQUAL(xs_nvml_open(NULL, 0, &n, &err), XS_ENOHW);
    CU_ASSERT_PTR_NULL(n);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no NVML"));
    use_fake();
    CU_ASSERT_EQUAL_FATAL(xs_nvml_open("00000000:1B:00.0", 0, &n, &err), XS_OK);
    xs_nvml_board b;
    CU_ASSERT_EQUAL(xs_nvml_board_info(n, &b, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(b.power_limit_w, 700, 1e-9);
    CU_ASSERT(b.has_energy_counter);
    xs_nvml_summary s;
    CU_ASSERT_EQUAL(xs_nvml_sampler_stop(n, &s, &err), XS_EARG); /* not started */
    CU_ASSERT_EQUAL(xs_nvml_sampler_start(n, 0.005, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_nvml_sampler_stop(n, &s, &err), XS_OK);
    CU_ASSERT(s.n >= 1);
    CU_ASSERT_DOUBLE_EQUAL(s.power_median_w, FAKE_IDLE_W, 1e-9);
    xs_nvml_close(n);
    CU_ASSERT_EQUAL(xs_nvml_open("0000:99:00.0", 0, &n, &err), XS_ENOHW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no board at PCI bus id 0000:99:00.0"));
    xs_cuda_lib lib;
    CU_ASSERT_EQUAL(xs_cuda_lib_open(&lib, 1, &err), XS_ENOHW); /* the fake has one GPU */
    CU_ASSERT_EQUAL_FATAL(xs_cuda_lib_open(&lib, 0, &err), XS_OK);
    xs_cuda_job j;
    memset(&j, 0, sizeof j);
    j.kind = XS_CJ_GEMM;
    j.dtype = XS_CD_FP32;
    j.m = j.n = j.k = 64;
    j.reps = 3;
    xs_cuda_result res;
    CU_ASSERT_EQUAL(xs_cuda_lib_run(&lib, &j, &res, "own fp32 GEMM", &err), XS_EUNSUPPORTED);
    j.reps = 0;
    j.dtype = XS_CD_FP16;
    CU_ASSERT_EQUAL(xs_cuda_lib_run(&lib, &j, &res, "no reps", &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "reps must be in"));
    xs_cuda_lib_close(&lib);
    no_fake();
    char text[128];
    xs_nvml_reasons_text(0x4 | 0x40, text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "sw_power_cap|hw_thermal");
    xs_nvml_reasons_text(0, text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "none");
    xs_nvml_reasons_text(0x10000, text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "other(0x10000)");
}

/* The fake's GEMM times are xpusim's GEMM model of its base at
 * FAKE_GEMM_EFF (with its launch cost, bandwidth and clock), each
 * repetition within the noise: what the fit is then checked against. */
static void fake_gemms_should_follow_the_model(void)
{
    xs_device dev = tu_device("h100-sxm5-80gb");
    xs_gpu_of(&dev)->gemm_efficiency = FAKE_GEMM_EFF;
    xs_gpu_of(&dev)->kernel_launch_us = FAKE_LAUNCH_US;
    xs_gpu_of(&dev)->mem_bw_efficiency = FAKE_DRAM_GBS / H100_BW_GBS;
    xs_gpu_of(&dev)->clock_sustained_mhz = FAKE_SM_MHZ;
    /* compute-bound, a tile edge, skinny (memory), tiny (launch) */
    static const long long SH[][3] = {{4096, 3072, 1024}, {2049, 1024, 1024}, {4096, 16, 4096}, {8, 8, 8}};
    use_fake();
    xs_cuda_lib lib;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_cuda_lib_open(&lib, 0, &err), XS_OK);
    int moved = 0;
    for (int kind = 0; kind < 2; kind++)
        for (int dt = kind ? XS_CD_FP16 : XS_CD_FP32; dt < XS_CD_COUNT; dt++)
            for (size_t i = 0; i < sizeof SH / sizeof SH[0]; i++) {
                xs_cuda_job j;
                memset(&j, 0, sizeof j);
                j.kind = kind ? XS_CJ_GEMM : XS_CJ_GEMM_CUBLAS;
                j.dtype = dt;
                j.m = SH[i][0];
                j.n = SH[i][1];
                j.k = SH[i][2];
                j.reps = 8;
                xs_cuda_result res;
                CU_ASSERT_EQUAL_FATAL(xs_cuda_lib_run(&lib, &j, &res, "fake GEMM", &err), XS_OK);
                xs_cmeas row;
                memset(&row, 0, sizeof row);
                row.bench = XS_CB_GEMM_CUBLAS;
                row.dtype = dt;
                row.m = j.m;
                row.n = j.n;
                row.k = j.k;
                double t = 0, t70 = 0;
                CU_ASSERT_EQUAL_FATAL(xs_cuda_predict_row(&dev, &row, &t, &err), XS_OK);
                CU_ASSERT_EQUAL(res.reps, 8);
                for (int r = 0; r < res.reps; r++)
                    CU_ASSERT(fabs(res.time_s[r] / t - 1) <= FAKE_NOISE * (1 + 1e-9));
                CU_ASSERT_DOUBLE_EQUAL(res.flops, 2.0 * j.m * j.n * j.k, 1e-6 * res.flops);
                /* and the efficiency is what moves it where compute bounds */
                xs_device d70 = dev;
                xs_gpu_of(&d70)->gemm_efficiency = 0.70;
                CU_ASSERT_EQUAL_FATAL(xs_cuda_predict_row(&d70, &row, &t70, &err), XS_OK);
                moved += t70 / t - 1 > 4 * FAKE_NOISE;
            }
    CU_ASSERT(moved >= 6); /* the compute-bound shape at least, in all 6 kind x dtype pairs */
    xs_cuda_lib_close(&lib);
    no_fake();
}

static void no_energy_counter_should_integrate_samples(void)
{
    use_fake();
    setenv("XS_FAKE_NVML", "noenergy", 1);
    char out[600], cmd[1400];
    snprintf(out, sizeof out, "%s/noenergy.json", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "calibrate --backend cuda --quick -o '%s'", out);
    tu_result r = tu_run(cmd);
    no_fake();
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    cJSON *d = load(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(str_at(d, "calibration.fits.power.energy_from"), "samples"));
    CU_ASSERT_DOUBLE_EQUAL(num_at(d, "power.idle_w"), FAKE_IDLE_W, 0.01);
    cJSON_Delete(d);
}

static void validate_should_check_held_out_kernels_and_energy(void)
{
    CU_ASSERT_FATAL(cal_json[0] != '\0');
    use_fake();
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "validate --backend cuda -d '%s' --quick --format json", cal_json);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const cJSON *rows = cJSON_GetObjectItem(doc, "rows"), *row;
    int gemm = 0, held = 0, energy = 0, copy = 0, n = 0;
    cJSON_ArrayForEach(row, rows)
    {
        n++;
        const char *set = cJSON_GetStringValue(cJSON_GetObjectItem(row, "set"));
        const char *metric = cJSON_GetStringValue(cJSON_GetObjectItem(row, "metric"));
        gemm += set && strstr(set, "op=gemm") && strcmp(metric, "time_s") == 0;
        held += set && strstr(set, "shape_not_in_sweep") != NULL;
        copy += set && strstr(set, "op=copy") != NULL;
        if (metric && strcmp(metric, "energy_j") == 0) {
            energy++;
            CU_ASSERT(cJSON_GetObjectItem(row, "measured")->valuedouble > 0);
        }
    }
    CU_ASSERT(n >= 20);
    CU_ASSERT_EQUAL(gemm, 12);
    CU_ASSERT_EQUAL(held, 12);
    CU_ASSERT(copy >= 2);
    CU_ASSERT_EQUAL(energy, 1);
    cJSON_Delete(doc);
    tu_run_free(&r);
    /* a datasheet file of the same board is checked too */
    r = tu_run("validate --backend cuda -d h100-sxm5-80gb --quick --format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    /* another board's file is another machine */
    r = tu_run("validate --backend cuda -d a100-sxm4-80gb --quick");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--allow-other-host"));
    tu_run_free(&r);
    no_fake();
}

/* Each bad file: one error naming file, line and column. */
static void bad_measurement_files_should_be_refused(void)
{
    static const struct {
        const char *name, *body, *want;
    } C[] = {
        {"header.csv", "bench,dtype\nlaunch,-\n", ":1: not a measurement file"},
        {"missing.csv",
         XS_CMEAS_CSV_HEADER "\nlaunch,-,0,0,0,0,0,0,0,256,2.5e-06,2.4e-06,2.6e-06,0,0,1,0,0,0,0,-,0,0,0,0x0\n",
         ":2: 25 columns, expected 26 (column 'impl' is missing)"},
        {"negative.csv",
         XS_CMEAS_CSV_HEADER "\nlaunch,-,0,0,0,0,0,0,0,256,-2.5e-06,2.4e-06,2.6e-06,0,0,1,0,0,0,0,-,0,0,0,0x0,x\n",
         ":2: column 'median_s': expected a number in 1e-12..10000, got '-2.5e-06'"},
        {"garbage.csv", XS_CMEAS_CSV_HEADER "\n\x01\x02garbage\n", ":2: 1 columns"},
        {"bench.csv",
         XS_CMEAS_CSV_HEADER "\nwarp,-,0,0,0,0,0,0,0,256,2.5e-06,2.4e-06,2.6e-06,0,0,1,0,0,0,0,-,0,0,0,0x0,x\n",
         ":2: column 'bench': expected one of launch|"},
        {"order.csv",
         XS_CMEAS_CSV_HEADER "\nlaunch,-,0,0,0,0,0,0,0,256,2.5e-06,2.6e-06,2.4e-06,0,0,1,0,0,0,0,-,0,0,0,0x0,x\n",
         "column 'q1_s': expected q1_s <= median_s <= q3_s"},
        {"meta.csv", XS_CMEAS_CSV_HEADER "\n#gpu_name\n", ":2: a provenance line must read"},
        {"empty.csv", "", "empty"},
        {"nolaunch.csv", XS_CMEAS_CSV_HEADER "\n", "no launch row"},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        const char *path = tu_write(C[i].name, C[i].body);
        char cmd[1400];
        snprintf(cmd, sizeof cmd,
                 "calibrate --backend cuda --from-measurements '%s' --base h100-sxm5-80gb -o "
                 "'%s/cuda-bad.json'",
                 path, tu_tmpdir());
        tu_result r = tu_run(cmd);
        CU_ASSERT_EQUAL(r.status, 1);
        if (!strstr(r.err, C[i].want))
            fprintf(stderr, "\n%s: wanted '%s' in: %s\n", C[i].name, C[i].want, r.err);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.err, C[i].want));
        CU_ASSERT_EQUAL(tu_lines(r.err), 1);
        if (i < 7)
            CU_ASSERT_PTR_NOT_NULL(strstr(r.err, C[i].name));
        tu_run_free(&r);
    }
    /* in-process: nothing is kept on failure */
    xs_cmeas_list l;
    xs_error err;
    CU_ASSERT_EQUAL(xs_cmeas_read(tu_write("neg2.csv", C[2].body), &l, &err), XS_EFIELD);
    CU_ASSERT_PTR_NULL(l.v);
    CU_ASSERT_EQUAL(xs_cmeas_read(RECORDED, &l, &err), XS_OK);
    CU_ASSERT(l.n > 50);
    CU_ASSERT_STRING_EQUAL(xs_cmeas_meta_get(&l, "gpu_name"), "NVIDIA H100 80GB HBM3");
    xs_cmeas_free(&l);
    /* usage */
    tu_result r = tu_run("calibrate --backend cpu --from-measurements x.csv");
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_free(&r);
    r = tu_run("calibrate --backend cuda --device-index -1");
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_free(&r);
    r = tu_run("calibrate --backend cuda --from-measurements " RECORDED " --quick -o x.json");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "runs nothing"));
    tu_run_free(&r);
    r = tu_run("calibrate --backend cuda --threads 2");
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_free(&r);
}

static void gpu_names_should_map_to_shipped_devices(void)
{
    static const char *const M[][2] = {
        {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"}, {"NVIDIA H100 PCIe", "h100-pcie-80gb"},
        {"NVIDIA H200", "h200-sxm-141gb"},          {"NVIDIA H200 NVL", "h200-nvl-141gb"},
        {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"}, {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
        {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"}, {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
        {"NVIDIA A10", "a10"},                       {"NVIDIA A40", "a40"},
        {"NVIDIA L4", "l4"},                         {"Tesla T4", "t4"},
        {"Quadro RTX 6000", "quadro-rtx-6000"},      {"NVIDIA GeForce RTX 3090", "rtx-3090"},
        {"Tesla V100-SXM2-16GB", "v100-sxm2-16gb"},  {"Tesla V100-PCIE-32GB", "v100-pcie-32gb"},
    };
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) {
        const char *id = xs_cuda_base_for_name(M[i][0]);
        CU_ASSERT_PTR_NOT_NULL(id);
        if (id && strcmp(id, M[i][1]) != 0)
            fprintf(stderr, "\n%s -> %s, wanted %s\n", M[i][0], id, M[i][1]);
        CU_ASSERT(id && strcmp(id, M[i][1]) == 0);
    }
    static const char *const UNKNOWN[] = {"NVIDIA L40S", "NVIDIA H100 NVL", "NVIDIA GeForce RTX 3090 Ti",
                                          "NVIDIA B200", ""};
    for (size_t i = 0; i < sizeof UNKNOWN / sizeof UNKNOWN[0]; i++)
        CU_ASSERT_PTR_NULL(xs_cuda_base_for_name(UNKNOWN[i]));
}

/* The sweep crosses the tile and wave edges of the base file. */
static void sweep_should_cross_tile_and_wave_edges(void)
{
    xs_device d = tu_device("h100-sxm5-80gb");
    xs_cuda_shape s[XS_CUDA_MAX_SHAPES];
    int n = xs_cuda_gemm_sweep(&d, 0, s);
    long long tm = xs_gpu_of(&d)->tensor_tiles.tiles[0].m, tn = xs_gpu_of(&d)->tensor_tiles.tiles[0].n;
    int edge = 0, wave = 0, skinny = 0;
    for (int i = 0; i < n; i++) {
        edge += s[i].m % tm == 1 || s[i].m % tm == tm - 1 || s[i].n % tn == 1 || s[i].n % tn == tn - 1;
        wave += s[i].n == tn && (s[i].m / tm == xs_gpu_of(&d)->sm_count + 1 || s[i].m / tm == xs_gpu_of(&d)->sm_count - 1);
        skinny += s[i].n <= 128;
    }
    CU_ASSERT(edge >= 4);
    CU_ASSERT(wave >= 2);
    CU_ASSERT(skinny >= 3);
    CU_ASSERT(xs_cuda_gemm_shape_used(&d, 4096, 2304, 768));
    CU_ASSERT(!xs_cuda_gemm_shape_used(&d, 2048, 2304, 768));
}

int tu_add_cuda_backend_suite(void)
{
    CU_pSuite s = CU_add_suite("cuda_backend", NULL, NULL);
    if (!s ||
        !CU_add_test(s, "calibrate_should_recover_the_fakes_parameters",
                     calibrate_should_recover_the_fakes_parameters) ||
        !CU_add_test(s, "from_measurements_should_write_the_same_device",
                     from_measurements_should_write_the_same_device) ||
        !CU_add_test(s, "recorded_file_should_fit", recorded_file_should_fit) ||
        !CU_add_test(s, "missing_hardware_should_exit_3", missing_hardware_should_exit_3) ||
        !CU_add_test(s, "loaders_should_fail_cleanly", loaders_should_fail_cleanly) ||
        !CU_add_test(s, "fake_gemms_should_follow_the_model", fake_gemms_should_follow_the_model) ||
        !CU_add_test(s, "no_energy_counter_should_integrate_samples",
                     no_energy_counter_should_integrate_samples) ||
        !CU_add_test(s, "validate_should_check_held_out_kernels_and_energy",
                     validate_should_check_held_out_kernels_and_energy) ||
        !CU_add_test(s, "bad_measurement_files_should_be_refused",
                     bad_measurement_files_should_be_refused) ||
        !CU_add_test(s, "gpu_names_should_map_to_shipped_devices",
                     gpu_names_should_map_to_shipped_devices) ||
        !CU_add_test(s, "sweep_should_cross_tile_and_wave_edges",
                     sweep_should_cross_tile_and_wave_edges))
        return -1;
    return 0;
}
