/* test_tpu.c — the TPU class: MXU padding at the array's boundaries, the
 * weight shift and fill/drain that dominate small matmuls, XLA fusion
 * removing exactly the fused ops' HBM passes, the shipped device files and
 * bad ones, and every shipped scenario predicted on a TPU (data parallel
 * over the torus: test_tpu_dp.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>

#include "device.h"
#include "gemm.h"
#include "predict.h"
#include "test_util.h"
#include "tpu.h"
#include "workload.h"

/* One TensorCore with one 128 x 128 MXU and 8 sublanes: cycles are then
 * countable by hand. */
static xs_tpu_params one_mxu(void)
{
    xs_tpu_params t;
    memset(&t, 0, sizeof t);
    t.cores_per_chip = t.cores_per_device = 1;
    t.mxus_per_core = 1;
    t.mxu_dim = 128;
    t.sublanes = 8;
    t.lanes = 128;
    t.vpu_alus = 2;
    t.clock_mhz = 1000;
    t.fp32_passes = 1;
    return t;
}

static double cyc(const xs_tpu_params *t, int64_t m, int64_t n, int64_t k)
{
    xs_mxu_result r;
    xs_tpu_mxu(t, m, n, k, 1, 1, &r);
    return r.cycles;
}

static void padding_should_cost_whole_tiles_at_128(void)
{
    xs_tpu_params t = one_mxu();
    CU_ASSERT_EQUAL(xs_tpu_pad(127, 128), 128);
    CU_ASSERT_EQUAL(xs_tpu_pad(128, 128), 128);
    CU_ASSERT_EQUAL(xs_tpu_pad(129, 128), 256);
    CU_ASSERT_EQUAL(xs_tpu_pad(1001, 8), 1008);
    /* K: 8 weight tiles (n = 1024), each streamed by 1024 rows, + 256 fill */
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1024, 1024, 127), 8 * 1024 + 256, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1024, 1024, 128), 8 * 1024 + 256, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1024, 1024, 129), 16 * 1024 + 256, 1e-9);
    /* N likewise */
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1024, 127, 1024), cyc(&t, 1024, 128, 1024), 1e-9);
    /* n = 129 would double B's tiles (16 x 1024 cycles): XLA keeps A in
     * the array instead, 8 x 8 tiles each streamed by 129 -> 136 rows */
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1024, 129, 1024), 64 * 136 + 256, 1e-9);
    /* the streamed rows pad to the 8 sublanes: 1001..1008 cost the same,
     * 1009 one more group of 8 (one weight tile: k = n = 128) */
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1001, 128, 128), 1008 + 256, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1008, 128, 128), 1008 + 256, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 1009, 128, 128), 1016 + 256, 1e-9);
    /* the padded work the array does, against the real work */
    xs_mxu_result a, b;
    xs_tpu_mxu(&t, 1024, 1024, 127, 1, 1, &a);
    xs_tpu_mxu(&t, 1024, 1024, 128, 1, 1, &b);
    CU_ASSERT_DOUBLE_EQUAL(a.padded_macs, b.padded_macs, 1e-9);
    CU_ASSERT(a.ideal_cycles < b.ideal_cycles);
    /* 8 rows against a 128 x 4096 B on 4 MXUs: B's 32 tiles spread over
     * the units (8 each, 128 cycles of weight shift apiece) beat keeping
     * A's one tile on one unit and streaming 4096 rows through it */
    xs_tpu_params four = t;
    four.mxus_per_core = 4;
    xs_mxu_result s;
    xs_tpu_mxu(&four, 8, 4096, 128, 1, 1, &s);
    CU_ASSERT_EQUAL(s.stationary_b, 1);
    CU_ASSERT_DOUBLE_EQUAL(s.cycles, 8 * 128 + 256, 1e-9);
    xs_tpu_mxu(&four, 4096, 8, 128, 1, 1, &s);
    CU_ASSERT_EQUAL(s.stationary_b, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.cycles, 8 * 128 + 256, 1e-9);
}

static void fill_drain_should_dominate_small_k(void)
{
    xs_tpu_params t = one_mxu();
    xs_mxu_result r;
    /* one weight tile with 16 of its 128 rows used: 128 stream + 256 fill */
    xs_tpu_mxu(&t, 128, 128, 16, 1, 1, &r);
    CU_ASSERT_DOUBLE_EQUAL(r.cycles, 128 + 256, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r.ideal_cycles, 16, 1e-9);
    CU_ASSERT(r.bubble_cycles / r.cycles > 0.5);
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 128, 128, 1), cyc(&t, 128, 128, 128), 1e-9);
    /* a short stream cannot hide the next tile's 128-cycle weight shift */
    CU_ASSERT_DOUBLE_EQUAL(cyc(&t, 8, 8, 1024), 8 * 128 + 256, 1e-9);
    /* large, aligned: the fill is noise */
    xs_tpu_mxu(&t, 4096, 4096, 4096, 1, 1, &r);
    CU_ASSERT(r.ideal_cycles / r.cycles > 0.999);
    /* fp32 at XLA's HIGHEST: six bf16 passes */
    xs_mxu_result six;
    xs_tpu_mxu(&t, 4096, 4096, 4096, 1, 6, &six);
    CU_ASSERT_DOUBLE_EQUAL(six.cycles - 256, 6 * (r.cycles - 256), 1e-6);
    /* the MXUs of a device share the tiles */
    xs_tpu_params four = t;
    four.mxus_per_core = 4;
    CU_ASSERT_DOUBLE_EQUAL(cyc(&four, 1024, 1024, 1024) - 256, (cyc(&t, 1024, 1024, 1024) - 256) / 4,
                           1e-9);
}

static void fusion_should_remove_exactly_the_fused_passes(void)
{
    xs_scenario s;
    xs_workload wl;
    CU_ASSERT_FATAL(tu_build("bert-base-squad", NULL, 0, &s, &wl) == 0);
    xs_device d = tu_device("tpu-v4");
    unsigned char *fused = calloc(wl.n, 1);
    size_t nf = xs_tpu_fusion(&wl, fused);
    CU_ASSERT(nf > 0);
    xs_prediction p;
    xs_error err;
    CU_ASSERT_FATAL(xs_predict(&d, &s, &wl, &p, &err) == XS_OK);
    double removed = 0;
    int checked = 0;
    for (size_t i = 0; i < wl.n; i++) {
        const xs_op *op = &wl.ops[i];
        xs_estimate alone;
        CU_ASSERT_EQUAL(xs_tpu_estimate(&d, op, &alone, &err), XS_OK);
        if (fused[i]) {
            /* no HBM pass; its vector-unit work stays */
            CU_ASSERT(op->kind == XS_OP_ELTWISE || op->kind == XS_OP_CAST || op->kind == XS_OP_COPY);
            CU_ASSERT_EQUAL(p.est[i].memory_s, 0);
            CU_ASSERT_DOUBLE_EQUAL(p.est[i].time_s, alone.compute_s, 1e-15);
            removed += alone.memory_s * (double)op->count;
        } else {
            CU_ASSERT_EQUAL(p.est[i].memory_s, alone.memory_s);
            CU_ASSERT_EQUAL(p.est[i].time_s, alone.time_s);
        }
        checked++;
    }
    CU_ASSERT_EQUAL((size_t)checked, wl.n);
    CU_ASSERT(removed > 0);
    /* the fusions the model names, in layer 0 */
    const char *in[] = {"attn.scale", "attn.mask", "attn.heads", "ffn.bias_add", "ffn.gelu",
                        "attn.residual", "ffn.gelu.bwd"};
    const char *out[] = {"attn.softmax", "attn.ln", "ffn.up", "attn.scores", "ffn.up.db"};
    for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
        const xs_op *op = tu_find_op(&wl, in[k], 0);
        CU_ASSERT_FATAL(op != NULL);
        CU_ASSERT_EQUAL(fused[op - wl.ops], 1);
    }
    for (size_t k = 0; k < sizeof out / sizeof out[0]; k++) {
        const xs_op *op = tu_find_op(&wl, out[k], 0);
        CU_ASSERT_FATAL(op != NULL);
        CU_ASSERT_EQUAL(fused[op - wl.ops], 0);
    }
    /* the step is the sum of its ops (and the infeed): fusion made it
     * shorter by at most the passes it removed */
    double unfused = 0;
    for (size_t i = 0; i < wl.n; i++) {
        xs_estimate e;
        xs_tpu_estimate(&d, &wl.ops[i], &e, &err);
        unfused += e.time_s * (double)wl.ops[i].count;
    }
    CU_ASSERT(p.device_time_s < unfused);
    CU_ASSERT(unfused - p.device_time_s <= removed * (1 + 1e-12));
    CU_ASSERT(strstr(p.note, "fused") != NULL);
    xs_prediction_free(&p);
    free(fused);
    xs_wl_free(&wl);
}

static void every_tpu_device_should_load(void)
{
    const struct {
        const char *id, *arch;
        double bf16, gb, price;
    } want[] = {
        {"tpu-v2", "v2", 22.5, 8, 0.5625},  {"tpu-v3", "v3", 61.5, 16, 1.0},
        {"tpu-v4", "v4", 275, 32, 3.22},        {"tpu-v5e", "v5e", 197, 16, 1.20},
        {"tpu-v5p", "v5p", 459, 95, 4.20},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        xs_device d = tu_device(want[i].id);
        CU_ASSERT_STRING_EQUAL(d.arch, want[i].arch);
        CU_ASSERT_DOUBLE_EQUAL(d.peak_tflops[XS_BF16], want[i].bf16, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(d.mem_capacity_gb, want[i].gb, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(d.price_usd_per_hour, want[i].price, 1e-9);
        CU_ASSERT_EQUAL(d.peak_tflops[XS_FP16], 0);
        CU_ASSERT(d.peak_tflops[XS_FP32] > 0 && d.peak_tflops[XS_FP32] < d.peak_tflops[XS_BF16]);
        CU_ASSERT(d.idle_w > 0 && d.idle_w < d.tdp_w);
        /* the offered slices, where the file lists them, ascend from 4 */
        for (int k = 0; k < xs_tpu_of(&d)->nslices; k++)
            CU_ASSERT(xs_tpu_of(&d)->slices[k] >= 4 && (k == 0 || xs_tpu_of(&d)->slices[k] > xs_tpu_of(&d)->slices[k - 1]));
        /* written back from the schema, as calibrate writes devices, it
         * loads to the same device */
        char file[64];
        snprintf(file, sizeof file, "devices/%s.json", want[i].id);
        cJSON *notes = tu_load_json(file);
        snprintf(file, sizeof file, "%s/%s.json", tu_tmpdir(), want[i].id);
        xs_error werr;
        xs_device back;
        CU_ASSERT_EQUAL(xs_dev_write(&d, notes, file, &werr), XS_OK);
        CU_ASSERT_EQUAL(xs_dev_load(file, &back, &werr), XS_OK);
        CU_ASSERT_EQUAL(memcmp(&back, &d, sizeof d), 0);
        cJSON_Delete(notes);
        /* the tile/wave GEMM model does not cost MXUs */
        xs_gemm_engine e;
        xs_dev_gemm_engine(&d, &e);
        xs_gemm_shape g = {1024, 1024, 1024, 1, 0, 0, XS_BF16, 2};
        xs_gemm_result r;
        xs_error err;
        CU_ASSERT_EQUAL(xs_gemm_model(&e, &g, &r, &err), XS_EUNSUPPORTED);
    }
}

static void expect_bad(cJSON *doc, const char *field_part)
{
    const char *path = tu_write_json("tpu-v4.json", doc);
    xs_device d;
    xs_error err;
    int rc = xs_dev_load(path, &d, &err);
    CU_ASSERT(rc != XS_OK);
    if (rc == XS_OK || !strstr(err.msg, field_part))
        fprintf(stderr, "\nmessage '%s' lacks '%s'\n", rc ? err.msg : "(loaded)", field_part);
    CU_ASSERT(rc && strstr(err.msg, field_part) != NULL && strstr(err.msg, "tpu-v4.json") != NULL);
    CU_ASSERT_EQUAL(tu_lines(err.msg), 0);
    cJSON_Delete(doc);
}

static void set_item(cJSON *doc, const char *obj, const char *key, cJSON *v)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, obj), key, v);
}

static void bad_tpu_field_should_name_file_and_field(void)
{
    cJSON *doc = tu_load_json("devices/tpu-v4.json");
    set_item(doc, "compute", "peak_bf16_tflops", cJSON_CreateNumber(500));
    expect_bad(doc, "field 'compute.peak_bf16_tflops' must agree");
    doc = tu_load_json("devices/tpu-v4.json");
    set_item(doc, "interconnect", "topology", cJSON_CreateString("ring"));
    expect_bad(doc, "field 'interconnect.topology' must be 2d-torus or 3d-torus");
    doc = tu_load_json("devices/tpu-v4.json");
    set_item(doc, "compute", "tensorcores_per_device", cJSON_CreateNumber(3));
    expect_bad(doc, "field 'compute.tensorcores_per_device' must divide");
    doc = tu_load_json("devices/tpu-v4.json");
    set_item(doc, "model", "fp32_matmul_passes", cJSON_CreateNumber(2));
    expect_bad(doc, "field 'model.fp32_matmul_passes' must be 1, 3 or 6");
    const char *pods[] = {"16x16", "16x16x16x2", "16x0x16", "16x16x", "x16x16", "16 x16x16"};
    for (size_t i = 0; i < sizeof pods / sizeof pods[0]; i++) {
        doc = tu_load_json("devices/tpu-v4.json");
        set_item(doc, "interconnect", "pod_shape", cJSON_CreateString(pods[i]));
        expect_bad(doc, "field 'interconnect.pod_shape' must be three chips a dimension");
    }
    const char *slices[] = {"4,16,", "3", "4,4", "8,4", "4,x", "8192", ",4", "4 ,8", "6"};
    for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++) {
        doc = tu_load_json("devices/tpu-v4.json");
        cJSON_AddItemToObject(cJSON_GetObjectItem(doc, "interconnect"), "slice_chips",
                              cJSON_CreateString(slices[i]));
        expect_bad(doc, "field 'interconnect.slice_chips' must be up to 16 chip counts");
    }
    doc = tu_load_json("devices/tpu-v4.json");
    set_item(doc, "compute", "mxu_size", cJSON_CreateString("128"));
    expect_bad(doc, "'compute.mxu_size' must be an integer");
}

/* Every scenario the GPUs take runs on a TPU, its matmuls in bf16 on the
 * MXUs and its step finite: the QLoRA one on a bf16 base (bitsandbytes is
 * CUDA only), the fp8 one (Transformer Engine's) in bf16. */
static void every_scenario_should_predict_on_a_tpu(void)
{
    static const struct {
        const char *id, *set;
    } scn[] = {{"bert-base-lora-sst2", NULL},     {"bert-base-squad-hf", NULL},
               {"bert-base-squad", NULL},         {"bert-large-squad", NULL},
               {"gpt2-medium-finetune", NULL},    {"llama2-7b-lora", NULL},
               {"mistral-7b-qlora", "train.quant=none"},
               {"tinyllama-1.1b-finetune", NULL}, {"distilbert-sst2", NULL},
               {"vit-base-finetune", NULL},       {"t5-base-summarization", NULL},
               {"llama2-7b-fp8", "train.precision=bf16"}};
    const char *devs[] = {"tpu-v3", "tpu-v5e"};
    for (size_t i = 0; i < sizeof scn / sizeof scn[0]; i++)
        for (size_t j = 0; j < sizeof devs / sizeof devs[0]; j++) {
            xs_scenario s;
            xs_workload wl;
            const char *sets[] = {scn[i].set};
            CU_ASSERT_FATAL(tu_build(scn[i].id, sets, scn[i].set ? 1 : 0, &s, &wl) == 0);
            xs_device d = tu_device(devs[j]);
            xs_prediction p;
            xs_error err;
            int rc = xs_predict(&d, &s, &wl, &p, &err);
            if (rc)
                fprintf(stderr, "\n%s on %s: %s\n", scn[i].id, devs[j], err.msg);
            CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
            CU_ASSERT(isfinite(p.step_time_s) && p.step_time_s > 0);
            CU_ASSERT_EQUAL(p.matmul_engine, XS_BF16);
            CU_ASSERT(p.mfu > 0 && p.mfu < 1);
            CU_ASSERT(p.avg_power_w >= d.idle_w && p.avg_power_w <= d.tdp_w);
            xs_prediction_free(&p);
            xs_wl_free(&wl);
        }
}

int tu_add_tpu_suite(void)
{
    CU_pSuite s = CU_add_suite("tpu", NULL, NULL);
    return !s ||
           !CU_add_test(s, "padding_should_cost_whole_tiles_at_128",
                        padding_should_cost_whole_tiles_at_128) ||
           !CU_add_test(s, "fill_drain_should_dominate_small_k", fill_drain_should_dominate_small_k) ||
           !CU_add_test(s, "fusion_should_remove_exactly_the_fused_passes",
                        fusion_should_remove_exactly_the_fused_passes) ||
           !CU_add_test(s, "every_tpu_device_should_load", every_tpu_device_should_load) ||
           !CU_add_test(s, "bad_tpu_field_should_name_file_and_field",
                        bad_tpu_field_should_name_file_and_field) ||
           !CU_add_test(s, "every_scenario_should_predict_on_a_tpu",
                        every_scenario_should_predict_on_a_tpu);
}
