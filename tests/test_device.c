/* test_device.c — every shipped device file loads and agrees with the
 * datasheet arithmetic; every loader error path is provoked by a bad copy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "device.h"
#include "gpu.h"
#include "gpu_flash.h"
#include "paths.h"
#include "test_util.h"

static void load_ok(const char *id, xs_device *d)
{
    char path[512];
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_resolve("devices", id, path, sizeof path, &err), XS_OK);
    int rc = xs_dev_load(path, d, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
}

static void every_required_device_should_load(void)
{
    static const char *ids[] = {"v100-sxm2-16gb", "v100-sxm2-32gb", "t4", "a10",
                                "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-40gb",
                                "a100-pcie-80gb", "l4", "h100-sxm5-80gb", "h100-pcie-80gb",
                                "h200-sxm-141gb"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        xs_device d;
        load_ok(ids[i], &d);
        CU_ASSERT_STRING_EQUAL(d.id, ids[i]);
        CU_ASSERT(d.idle_w < d.tdp_w);
        CU_ASSERT(d.price_usd_per_hour > 0);
    }
}

/* Dense tensor peak = SMs x FLOP/clk/SM x tensor clock (datasheets.md 1a,
 * per-SM table); catches a typo in any of the three numbers. */
static void device_tensor_peaks_should_equal_sms_times_rate_times_clock(void)
{
    static const struct {
        int sm;
        double rate;
    } fp16_per_sm_clk[] = {{70, 1024}, {75, 1024}, {80, 2048}, {86, 1024}, {89, 1024}, {90, 4096}};
    char **ids;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_list_ids("devices", &ids, &n, &err), XS_OK);
    CU_ASSERT(n >= 12);
    for (size_t i = 0; i < n; i++) {
        xs_device d;
        load_ok(ids[i], &d);
        if (xs_backend_of(&d) != &xs_gpu_backend) /* calibrated CPUs: measured peaks, tested elsewhere */
            continue;
        double rate = 0;
        for (size_t j = 0; j < sizeof fp16_per_sm_clk / sizeof fp16_per_sm_clk[0]; j++)
            if (fp16_per_sm_clk[j].sm == xs_gpu_of(&d)->sm_version)
                rate = fp16_per_sm_clk[j].rate;
        CU_ASSERT(rate > 0);
        /* GeForce boards issue fp16/bf16 MMA with fp32 accumulation (what
         * PyTorch uses) at half the rate (GA102 whitepaper, appendix: RTX 3090
         * 71 vs 142 TFLOPS with fp16 accumulation); the A10 and A40 of the same
         * die do not halve it. */
        if (strstr(d.name, "GeForce"))
            rate /= 2;
        double expect = (double)xs_gpu_of(&d)->sm_count * rate * xs_gpu_of(&d)->clock_tensor_mhz * 1e6 / 1e12;
        CU_ASSERT(fabs(d.peak_tflops[XS_FP16] - expect) / expect < 0.01);
        if (d.peak_tflops[XS_TF32] > 0)
            CU_ASSERT(fabs(d.peak_tflops[XS_TF32] * 2 - d.peak_tflops[XS_FP16]) /
                          d.peak_tflops[XS_FP16] < 0.01);
    }
    xs_ids_free(ids, n);
}

/* The GPU files state latency_ns as 400 SM cycles (the microbenchmark
 * literature's global-memory latency) at the sustained clock: a file whose
 * clock moves without its latency (or the reverse) breaks that relation. */
static void memory_latency_should_be_400_cycles_at_the_sustained_clock(void)
{
    char **ids;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_list_ids("devices", &ids, &n, &err), XS_OK);
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        xs_device d;
        load_ok(ids[i], &d);
        if (xs_backend_of(&d) != &xs_gpu_backend)
            continue;
        double expect = 400.0 / xs_gpu_of(&d)->clock_sustained_mhz * 1e3;
        if (fabs(xs_gpu_of(&d)->mem_latency_ns - expect) > 0.1)
            fprintf(stderr, "\n%s: latency_ns %g, 400 cycles at %g MHz are %.1f ns\n", ids[i],
                    xs_gpu_of(&d)->mem_latency_ns, xs_gpu_of(&d)->clock_sustained_mhz, expect);
        CU_ASSERT(fabs(xs_gpu_of(&d)->mem_latency_ns - expect) <= 0.1);
        checked++;
    }
    CU_ASSERT(checked >= 12);
    xs_ids_free(ids, n);
}

static void volta_and_turing_should_have_no_tf32_or_bf16(void)
{
    xs_device v, t, a;
    load_ok("v100-sxm2-16gb", &v);
    load_ok("t4", &t);
    load_ok("a100-sxm4-80gb", &a);
    CU_ASSERT_EQUAL(v.peak_tflops[XS_TF32], 0);
    CU_ASSERT_EQUAL(v.peak_tflops[XS_BF16], 0);
    CU_ASSERT_EQUAL(t.peak_tflops[XS_BF16], 0);
    CU_ASSERT_EQUAL(xs_gpu_peak_flops(&v, XS_BF16), 0);
    CU_ASSERT(a.peak_tflops[XS_BF16] > 0);
    CU_ASSERT_EQUAL(xs_gpu_of(&v)->mma_m, 8);
    CU_ASSERT_EQUAL(xs_gpu_of(&a)->mma_k, 16);
}

static void peak_flops_should_scale_to_the_sustained_clock(void)
{
    xs_device t;
    load_ok("t4", &t);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_peak_flops(&t, XS_FP16), 65e12 * 1008 / 1590, 1e6);
    xs_device h;
    load_ok("h100-sxm5-80gb", &h);
    /* fp32 is quoted at the 1980 MHz boost, tensor at 1830: both run at the
     * sustained clock the power limit holds, below either */
    double f = xs_gpu_of(&h)->clock_sustained_mhz;
    CU_ASSERT(f > 1000 && f < 1830);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_peak_flops(&h, XS_FP32), 66.9e12 * f / 1980, 1e6);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_peak_flops(&h, XS_BF16), 989.4e12 * f / 1830, 1e6);
}

/* Load a mutated copy of a good device and expect code and a message part. */
static void expect_bad(cJSON *doc, const char *file, int code, const char *part)
{
    const char *path = tu_write_json(file, doc);
    xs_device d;
    xs_error err;
    int rc = xs_dev_load(path, &d, &err);
    CU_ASSERT_EQUAL(rc, code);
    if (rc && !strstr(err.msg, part))
        fprintf(stderr, "\nmessage '%s' lacks '%s'\n", err.msg, part);
    CU_ASSERT(rc && strstr(err.msg, part) != NULL && strstr(err.msg, file) != NULL);
    CU_ASSERT_EQUAL(tu_lines(err.msg), 0);
    cJSON_Delete(doc);
}

static cJSON *good(void)
{
    cJSON *doc = tu_load_json("devices/a100-sxm4-80gb.json");
    return doc;
}

static void set_num(cJSON *doc, const char *obj, const char *key, double v)
{
    cJSON *o = cJSON_GetObjectItem(doc, obj);
    cJSON_ReplaceItemInObject(o, key, cJSON_CreateNumber(v));
}

/* FP32-unit work holds its own clock where a file gives one (the A100s: its
 * SGEMMs need more than the tensor-load clock), the sustained clock where
 * not; the slow corner moves it by the sustained clock's share; no file may
 * put it above the boost clock the fp32 peak is quoted at. */
static void fp32_units_should_hold_their_own_clock(void)
{
    xs_device a, t;
    load_ok("a100-pcie-40gb", &a);
    load_ok("t4", &t);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_peak_flops(&a, XS_FP32), 19.5e12, 1e6);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_peak_flops(&a, XS_FP16), 312e12 * 1115 / 1410, 1e6);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_peak_flops(&t, XS_FP32), 8.1e12 * 1008 / 1590, 1e6);
    xs_device slow;
    xs_dev_corner(&a, -1, &slow);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_peak_flops(&slow, XS_FP32),
                           19.5e12 * xs_gpu_of(&a)->clock_sustained_low_mhz / 1115, 1e6);
    cJSON *doc = tu_load_json("devices/a100-pcie-40gb.json");
    set_num(doc, "compute", "clock_fp32_mhz", 1500);
    expect_bad(doc, "a100-pcie-40gb.json", XS_ERANGE, "'compute.clock_fp32_mhz' must not exceed");
}

/* One FlashAttention-2 call over batch x heads = 128 heads of seq 2048. */
static xs_op flash_op(int phase, double d)
{
    xs_op op;
    xs_op_init(&op, XS_OP_ATTENTION, phase, XS_BF16, "attn.flash");
    op.m = op.n = 2048;
    op.k = (int64_t)d;
    op.batch = 128;
    double mm = phase == XS_PH_BWD ? XS_FLASH_BWD_MM_PER_SCORE_D : XS_FLASH_FWD_MM_PER_SCORE_D;
    op.flops = mm * 128 * 2048.0 * 2048 * d;
    return op;
}

static xs_estimate flash_est(const xs_device *dev, const xs_op *op)
{
    xs_estimate e;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_estimate(dev, op, &e, &err), XS_OK);
    return e;
}

static double flash_rate(const xs_device *dev, int phase, double d)
{
    xs_op op = flash_op(phase, d);
    return op.flops / flash_est(dev, &op).compute_s;
}

/* FA2's matmuls run at what mma.sync reaches (on Hopper, a share of the
 * wgmma peak), and each score then waits on its exponential and softmax
 * arithmetic: a smaller head dimension has fewer matmul FLOPs a score to
 * hide them behind, so it reaches less of the peak. */
static void flash_attention_should_pay_for_its_softmax_and_mma_sync(void)
{
    xs_device a, h;
    load_ok("a100-sxm4-80gb", &a);
    load_ok("h100-sxm5-80gb", &h);
    double pa = xs_gpu_peak_flops(&a, XS_BF16), ph = xs_gpu_peak_flops(&h, XS_BF16);
    for (int bwd = 0; bwd <= 1; bwd++) {
        int ph_ = bwd ? XS_PH_BWD : XS_PH_FWD;
        CU_ASSERT(flash_rate(&a, ph_, 64) < flash_rate(&a, ph_, 128));
        CU_ASSERT(flash_rate(&a, ph_, 128) < pa);
        CU_ASSERT(flash_rate(&h, ph_, 128) < 0.63 * ph);
        CU_ASSERT(flash_rate(&h, ph_, 128) > 0.3 * ph);
    }
    /* mma.sync's share moves the matmul term alone */
    xs_op op = flash_op(XS_PH_FWD, 128);
    xs_estimate e = flash_est(&h, &op);
    double with = e.compute_s;
    CU_ASSERT_EQUAL(e.engine, XS_BF16);
    CU_ASSERT(e.tensor);
    xs_device full = h;
    xs_gpu_of(&full)->mma_sync_share = 0;
    double without = flash_est(&full, &op).compute_s;
    CU_ASSERT_DOUBLE_EQUAL(with - without, op.flops / (0.63 * ph) - op.flops / ph,
                           1e-9 * with);
    cJSON *doc = tu_load_json("devices/h100-sxm5-80gb.json");
    set_num(doc, "compute", "mma_sync_share", 1.5);
    expect_bad(doc, "h100-sxm5-80gb.json", XS_ERANGE,
               "'compute.mma_sync_share' must be a share in (0, 1], got 1.5");
}

static void device_loader_should_reject_each_bad_field(void)
{
    cJSON *doc = good();
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "memory"), "bandwidth_gbs");
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD,
               "missing required field 'memory.bandwidth_gbs'");

    doc = good();
    set_num(doc, "memory", "bandwidth_gbs", -3);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD,
               "field 'memory.bandwidth_gbs' must be a number > 0, got -3");

    doc = good();
    set_num(doc, "power", "tdp_w", 0);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "'power.tdp_w' must be a number > 0");

    doc = good();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "compute"), "sm_count",
                              cJSON_CreateString("108"));
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "'compute.sm_count' must be an integer");

    doc = good();
    cJSON_AddNumberToObject(cJSON_GetObjectItem(doc, "memory"), "bandwith_gbs", 2039);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "unknown field 'memory.bandwith_gbs'");

    doc = good();
    cJSON_ReplaceItemInObject(doc, "class", cJSON_CreateString("fpga"));
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "one of gpu|cpu|tpu");

    doc = good();
    cJSON_ReplaceItemInObject(doc, "memory", cJSON_CreateNumber(5));
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "field 'memory' must be an object");

    doc = good();
    set_num(doc, "model", "gemm_efficiency", 1.5);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "'model.gemm_efficiency' must be a number in (0, 1]");

    doc = good();
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "price"), "source");
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "missing required field 'price.source'");

    /* reports print the name as it is: a control character is refused,
     * and echoed escaped */
    doc = good();
    cJSON_ReplaceItemInObject(doc, "name", cJSON_CreateString("A100\x1b[2J\nforged"));
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD,
               "field 'name' must be a non-empty string of at most 95 characters, no control "
               "character, got \"A100\\x1b[2J\\nforged\"");
}

static void device_loader_should_check_relations_between_fields(void)
{
    cJSON *doc = good();
    expect_bad(doc, "other-name.json", XS_EFIELD, "field 'id' must equal the file name");

    doc = good();
    set_num(doc, "power", "idle_w", 400);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_ERANGE, "'power.idle_w' must be below");

    doc = good();
    set_num(doc, "compute", "clock_sustained_mhz", 2000);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_ERANGE, "'compute.clock_sustained_mhz'");

    doc = good();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "compute"), "tensor_mma_shape",
                              cJSON_CreateString("16x8x16"));
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "must look like m16n8k16");

    doc = good();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "price"), "as_of",
                              cJSON_CreateString("Sept 2026"));
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD, "'price.as_of' must be a date");

    /* the in-flight bound needs the threads an SM holds */
    doc = good();
    set_num(doc, "compute", "sm_version", 95);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(doc, "memory"), "stream_latency_ns", 1500);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD,
               "'memory.stream_latency_ns' needs resident threads per SM, unknown for "
               "compute.sm_version 95");

    doc = good();
    cJSON_AddNumberToObject(cJSON_GetObjectItem(doc, "memory"), "stream_latency_ns", -1);
    expect_bad(doc, "a100-sxm4-80gb.json", XS_EFIELD,
               "field 'memory.stream_latency_ns' must be a number > 0, got -1");
}

/* The node's links: NVLink's topology, generation, GPUs and bandwidth
 * come together (and only with NVLink); PCIe's generation and lanes give
 * host_gbs_bidir; every field's missing, negative or mistyped value is one
 * line naming it. */
static void interconnect_fields_should_be_checked_one_line_each(void)
{
    static const char *F = "a100-sxm4-80gb.json";
    cJSON *doc = good();
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "interconnect"), "gpus_per_node");
    expect_bad(doc, F, XS_EFIELD, "missing required field 'interconnect.gpus_per_node'");

    doc = good();
    set_num(doc, "interconnect", "gpus_per_node", -8);
    expect_bad(doc, F, XS_EFIELD, "field 'interconnect.gpus_per_node' must be an integer");

    doc = good();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "interconnect"), "pcie_generation",
                              cJSON_CreateString("4.0"));
    expect_bad(doc, F, XS_EFIELD, "field 'interconnect.pcie_generation' must be an integer");

    doc = good();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "interconnect"), "nvlink",
                              cJSON_CreateString("nvswitch"));
    expect_bad(doc, F, XS_EFIELD, "'interconnect.nvlink' must be one of none|bridge|mesh|switch");

    doc = good();
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "interconnect"), "nvlink_generation");
    expect_bad(doc, F, XS_EFIELD,
               "field 'interconnect.nvlink_generation' is required when interconnect.nvlink "
               "is not none");

    doc = good();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "interconnect"), "nvlink",
                              cJSON_CreateString("none"));
    expect_bad(doc, F, XS_EFIELD,
               "field 'interconnect.nvlink_gbs_bidir' needs interconnect.nvlink other than none");

    doc = good();
    set_num(doc, "interconnect", "pcie_lanes", 12);
    expect_bad(doc, F, XS_ERANGE, "field 'interconnect.pcie_lanes' must be 1, 2, 4, 8, 16 or 32");

    /* PCIe 3.0 x16 is 31.5 GB/s both ways, not the file's 64 */
    doc = good();
    set_num(doc, "interconnect", "pcie_generation", 3);
    expect_bad(doc, F, XS_ERANGE,
               "field 'interconnect.host_gbs_bidir' must be PCIe 3 x16's bandwidth (31.5 GB/s");

    /* every GPU file states its node, each as its own source says */
    const char *ids[] = {"a100-sxm4-80gb", "v100-sxm2-16gb", "h100-pcie-80gb", "t4", "l4"};
    const int want_nvlink[] = {XS_NVLINK_SWITCH, XS_NVLINK_MESH, XS_NVLINK_BRIDGE,
                               XS_NVLINK_NONE, XS_NVLINK_NONE};
    const int64_t want_node[] = {8, 8, 8, 4, 8};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        xs_device d = tu_device(ids[k]);
        CU_ASSERT_EQUAL(xs_gpu_of(&d)->nvlink, want_nvlink[k]);
        CU_ASSERT_EQUAL(xs_gpu_of(&d)->gpus_per_node, want_node[k]);
        CU_ASSERT_EQUAL(xs_gpu_of(&d)->pcie_lanes, 16);
    }
}

static void resident_threads_should_follow_the_compute_capability(void)
{
    CU_ASSERT_EQUAL(xs_sm_threads(70), 2048);
    CU_ASSERT_EQUAL(xs_sm_threads(75), 1024);
    CU_ASSERT_EQUAL(xs_sm_threads(80), 2048);
    CU_ASSERT_EQUAL(xs_sm_threads(86), 1536);
    CU_ASSERT_EQUAL(xs_sm_threads(89), 1536);
    CU_ASSERT_EQUAL(xs_sm_threads(90), 2048);
    CU_ASSERT_EQUAL(xs_sm_threads(100), 0);
    xs_device d;
    load_ok("a10", &d);
    CU_ASSERT_EQUAL(xs_sm_threads(xs_gpu_of(&d)->sm_version), 1536);
    CU_ASSERT_DOUBLE_EQUAL(xs_gpu_of(&d)->stream_latency_ns, 0, 0); /* no measurement: not modelled */
    load_ok("h200-sxm-141gb", &d);
    CU_ASSERT_EQUAL(xs_sm_threads(xs_gpu_of(&d)->sm_version), 2048);
    CU_ASSERT(xs_gpu_of(&d)->stream_latency_ns > xs_gpu_of(&d)->mem_latency_ns);
}

static void device_loader_should_report_unreadable_and_malformed_files(void)
{
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL(xs_dev_load("/nonexistent/x.json", &d, &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/x.json: cannot open"));
    const char *path = tu_write("broken.json", "{ \"id\": \"broken\",\n \"name\": }");
    CU_ASSERT_EQUAL(xs_dev_load(path, &d, &err), XS_EJSON);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "malformed JSON at line 2"));
}

static void resolve_should_list_known_ids_for_an_unknown_one(void)
{
    char path[512];
    xs_error err;
    CU_ASSERT_EQUAL(xs_resolve("devices", "a100", path, sizeof path, &err), XS_EARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown device 'a100'; did you mean 'a10'? (known: a10, a100-pcie-40gb"));
    CU_ASSERT_EQUAL(xs_resolve("devices", "T4", path, sizeof path, &err), XS_OK); /* folds case */
    CU_ASSERT_PTR_NOT_NULL(strstr(path, "/devices/t4.json"));
    CU_ASSERT_EQUAL(xs_resolve("devices", "quux", path, sizeof path, &err), XS_EARG);
    CU_ASSERT_PTR_NULL(strstr(err.msg, "did you mean")); /* nothing near: the list only */
    CU_ASSERT_EQUAL(xs_resolve("devices", "", path, sizeof path, &err), XS_EARG);
    CU_ASSERT_EQUAL(xs_resolve("devices", "./nope.json", path, sizeof path, &err), XS_EIO);
}

int tu_add_device_suite(void)
{
    CU_pSuite s = CU_add_suite("device", NULL, NULL);
    return !s ||
           !CU_add_test(s, "every_required_device_should_load", every_required_device_should_load) ||
           !CU_add_test(s, "device_tensor_peaks_should_equal_sms_times_rate_times_clock",
                        device_tensor_peaks_should_equal_sms_times_rate_times_clock) ||
           !CU_add_test(s, "memory_latency_should_be_400_cycles_at_the_sustained_clock",
                        memory_latency_should_be_400_cycles_at_the_sustained_clock) ||
           !CU_add_test(s, "volta_and_turing_should_have_no_tf32_or_bf16",
                        volta_and_turing_should_have_no_tf32_or_bf16) ||
           !CU_add_test(s, "peak_flops_should_scale_to_the_sustained_clock",
                        peak_flops_should_scale_to_the_sustained_clock) ||
           !CU_add_test(s, "fp32_units_should_hold_their_own_clock",
                        fp32_units_should_hold_their_own_clock) ||
           !CU_add_test(s, "flash_attention_should_pay_for_its_softmax_and_mma_sync",
                        flash_attention_should_pay_for_its_softmax_and_mma_sync) ||
           !CU_add_test(s, "device_loader_should_reject_each_bad_field",
                        device_loader_should_reject_each_bad_field) ||
           !CU_add_test(s, "device_loader_should_check_relations_between_fields",
                        device_loader_should_check_relations_between_fields) ||
           !CU_add_test(s, "interconnect_fields_should_be_checked_one_line_each",
                        interconnect_fields_should_be_checked_one_line_each) ||
           !CU_add_test(s, "resident_threads_should_follow_the_compute_capability",
                        resident_threads_should_follow_the_compute_capability) ||
           !CU_add_test(s, "device_loader_should_report_unreadable_and_malformed_files",
                        device_loader_should_report_unreadable_and_malformed_files) ||
           !CU_add_test(s, "resolve_should_list_known_ids_for_an_unknown_one",
                        resolve_should_list_known_ids_for_an_unknown_one);
}
