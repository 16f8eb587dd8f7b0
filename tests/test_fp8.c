/* test_fp8.c — train.precision fp8 (Transformer Engine's te.Linear in the
 * layers) and train.quant int8 (bitsandbytes' Linear8bitLt under LoRA):
 * which devices and scenarios are refused, the fp8 GEMMs against the bf16
 * ones and the fp8 peak, the casts and amax updates a step runs and their
 * counts, int8's bytes a weight and its ops, and the memory bookkeeping of
 * both. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "backend.h"
#include "fp8.h"
#include "gpu.h"
#include "lora.h"
#include "predict.h"
#include "test_util.h"
#include "validate.h"
#include "workload.h"

#define FP8_SCN "llama2-7b-fp8"
/* the seven linears of a Llama layer */
static const char *const LINEARS[] = {"attn.q",   "attn.k",  "attn.v",  "attn.out",
                                      "ffn.gate", "ffn.up", "ffn.down"};

static void build_ok(const char *id, const char *const *sets, int n, xs_scenario *s,
                     xs_workload *wl)
{
    CU_ASSERT_EQUAL_FATAL(tu_build(id, sets, n, s, wl), XS_OK);
}

static int count_named(const xs_workload *wl, const char *name, int phase)
{
    int n = 0;
    for (size_t i = 0; i < wl->n; i++)
        n += strcmp(wl->ops[i].name, name) == 0 && wl->ops[i].phase == phase;
    return n;
}

/* A100, V100 and T4 have no fp8 tensor cores: predict refuses with one
 * line naming the device and the field; H100 and L4 run it. */
static void fp8_should_be_refused_without_fp8_tensor_cores(void)
{
    xs_scenario s;
    xs_workload wl;
    build_ok(FP8_SCN, NULL, 0, &s, &wl);
    const char *refused[] = {"a100-sxm4-80gb", "v100-sxm2-16gb", "t4"};
    for (size_t i = 0; i < 3; i++) {
        xs_device d = tu_device(refused[i]);
        xs_prediction p;
        xs_error err;
        CU_ASSERT_EQUAL(xs_predict(&d, &s, &wl, &p, &err), XS_EUNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, refused[i]));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "compute.peak_fp8_tflops"));
        CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
    }
    const char *run[] = {"h100-sxm5-80gb", "l4"};
    for (size_t i = 0; i < 2; i++) {
        xs_device d = tu_device(run[i]);
        xs_prediction p;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &p, &err), XS_OK);
        CU_ASSERT(p.step_time_s > 0);
        xs_prediction_free(&p);
    }
    xs_wl_free(&wl);
    tu_result r = tu_run("predict -d a100-sxm4-80gb -s " FP8_SCN);
    CU_ASSERT_NOT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "peak_fp8_tflops"));
    tu_run_free(&r);
}

static xs_op gemm_op(double m, double n, double k, xs_dtype t, int out_bytes)
{
    xs_op op = xs_op_make(XS_OP_GEMM, XS_PH_FWD, t, "g");
    op.m = (int64_t)m;
    op.n = (int64_t)n;
    op.k = (int64_t)k;
    op.batch = 1;
    op.flops = 2 * m * n * k;
    op.hints.out_bytes = out_bytes;
    return op;
}

static double gemm_time(const xs_device *d, const xs_op *op)
{
    xs_estimate e;
    xs_error err;
    memset(&e, 0, sizeof e);
    CU_ASSERT_EQUAL(xs_gpu_backend.estimate(d, op, &e, &err), XS_OK);
    return e.time_s;
}

/* A large fp8 GEMM runs faster than the same bf16 one (at most twice as
 * fast: the fp8 peak is twice the bf16 one), and no fp8 GEMM of the step
 * beats the fp8 peak at the clock the device holds. */
static void fp8_gemms_should_be_faster_but_not_past_the_fp8_peak(void)
{
    xs_device d = tu_device("h100-sxm5-80gb");
    xs_op f8 = gemm_op(8192, 8192, 8192, XS_FP8, 2), b16 = gemm_op(8192, 8192, 8192, XS_BF16, 0);
    double t8 = gemm_time(&d, &f8), t16 = gemm_time(&d, &b16);
    CU_ASSERT(t8 < 0.75 * t16);
    CU_ASSERT(t8 >= 0.5 * t16);
    double peak = xs_gpu_peak_flops(&d, XS_FP8);
    CU_ASSERT(peak > 0);
    CU_ASSERT(t8 >= f8.flops / peak);
    xs_scenario s;
    xs_workload wl;
    build_ok(FP8_SCN, NULL, 0, &s, &wl);
    int fp8 = 0;
    for (size_t i = 0; i < wl.n; i++) {
        const xs_op *op = &wl.ops[i];
        if (op->kind != XS_OP_GEMM || op->dtype != XS_FP8)
            continue;
        fp8++;
        CU_ASSERT_EQUAL(op->hints.out_bytes, 2); /* bf16 out */
        CU_ASSERT(gemm_time(&d, op) >= op->flops / peak);
    }
    CU_ASSERT_EQUAL(fp8, 32 * 7 * 3); /* forward, dX and dW of every layer linear */
    xs_wl_free(&wl);
}

/* Every te.Linear casts its input and its weight once a forward and its
 * output gradient once a backward (each micro-batch: is_first_microbatch
 * is None); the amax and scale update runs once a forward and once a
 * backward; the LM head stays a bf16 nn.Linear. */
static void casts_and_amax_updates_should_be_there_and_counted(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *sets[] = {"train.grad_accum=2"};
    build_ok(FP8_SCN, sets, 1, &s, &wl);
    char nm[64];
    for (size_t i = 0; i < 7; i++) {
        snprintf(nm, sizeof nm, "%s.fp8_cast_x", LINEARS[i]);
        CU_ASSERT_EQUAL(count_named(&wl, nm, XS_PH_FWD), 32);
        snprintf(nm, sizeof nm, "%s.fp8_cast_w", LINEARS[i]);
        CU_ASSERT_EQUAL(count_named(&wl, nm, XS_PH_FWD), 32);
        snprintf(nm, sizeof nm, "%s.fp8_cast_dy", LINEARS[i]);
        CU_ASSERT_EQUAL(count_named(&wl, nm, XS_PH_BWD), 32);
        const xs_op *w = tu_find_op(&wl, nm, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_EQUAL(w->count, 2); /* every micro-batch */
        const xs_op *g = tu_find_op(&wl, LINEARS[i], 5);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_EQUAL(g->dtype, XS_FP8);
    }
    CU_ASSERT_EQUAL(wl.fp8_linears, 32 * 7);
    const char *upd[] = {"fp8.amax_cat.fwd", "fp8.amax_scale_update.fwd"};
    for (size_t i = 0; i < 2; i++)
        CU_ASSERT_EQUAL(count_named(&wl, upd[i], XS_PH_FWD), 1);
    CU_ASSERT_EQUAL(count_named(&wl, "fp8.amax_scale_update.bwd", XS_PH_BWD), 1);
    const xs_op *u = tu_find_op(&wl, "fp8.amax_scale_update.fwd", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    /* every history: 224 linears x 3 tensors x 1024 steps, read and written */
    CU_ASSERT_DOUBLE_EQUAL(u->elems, 224.0 * XS_FP8_FWD_TENSORS * XS_FP8_AMAX_HISTORY, 0.5);
    CU_ASSERT_EQUAL(u->count, 2);
    const xs_op *head = tu_find_op(&wl, "head.lm", -1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(head);
    CU_ASSERT_EQUAL(head->dtype, XS_BF16);
    CU_ASSERT_EQUAL(wl.matmul_dtype, XS_FP8);
    xs_wl_free(&wl);
    /* bf16: none of it */
    const char *bf[] = {"train.precision=bf16"};
    build_ok(FP8_SCN, bf, 1, &s, &wl);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.fp8_cast_x", 0));
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "fp8.amax_scale_update.fwd", -1));
    CU_ASSERT_EQUAL(tu_find_op(&wl, "attn.q", 0)->dtype, XS_BF16);
    xs_wl_free(&wl);
}

/* What te.Linear saves is one byte an element: the input's and the
 * weight's fp8 transposes; every kept byte released, every gradient made
 * once, with and without checkpointing and accumulation. */
static void fp8_memory_should_balance_and_keep_fp8_transposes(void)
{
    const char *variants[][2] = {{NULL, NULL},
                                 {"train.checkpointing=layer", "train.grad_accum=2"}};
    for (size_t v = 0; v < 2; v++) {
        xs_scenario s;
        xs_workload wl;
        int n = variants[v][0] ? 2 : 0;
        build_ok(FP8_SCN, variants[v], n, &s, &wl);
        tu_check_memory_balance(&s, &wl);
        xs_wl_free(&wl);
    }
    xs_scenario s;
    xs_workload wl;
    build_ok(FP8_SCN, NULL, 0, &s, &wl);
    const xs_op *x = tu_find_op(&wl, "ffn.down.fp8_cast_x", 3);
    const xs_op *w = tu_find_op(&wl, "ffn.down.fp8_cast_w", 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    double T = 8 * 256, h = 4096, f = 11008;
    CU_ASSERT_DOUBLE_EQUAL(x->mem.saved, T * f, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(w->mem.saved, h * f, 0.5);
    const xs_op *g = tu_find_op(&wl, "ffn.down", 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_DOUBLE_EQUAL(g->mem.saved, 0, 0); /* no bf16 input kept */
    xs_wl_free(&wl);
}

/* What fp8.c refuses: LoRA, fused kernels, shapes TE's fp8 GEMMs cannot
 * take. */
static void fp8_should_refuse_what_it_does_not_model(void)
{
    static const struct {
        const char *sets[2];
        const char *says;
    } cases[] = {
        {{"train.lora.rank=8", NULL}, "PEFT adapts nn.Linear"},
        {{"train.seq=250", "train.batch=1"}, "train.batch x train.seq to be a multiple of 8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = cases[i].sets[1] ? 2 : 1;
        xs_scenario s;
        xs_error err;
        CU_ASSERT_NOT_EQUAL(tu_scn_open_gated(FP8_SCN, cases[i].sets, n, &s, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
    }
    static const struct {
        const char *id, *set, *says;
    } other[] = {
        {"bert-base-squad-hf", "train.kernels=fused", "needs train.kernels eager"},
        {"gpt2-medium-finetune", NULL, "Conv1D"},
        {"bert-base-squad-hf", "train.ffn_bias=separate", "LinearActivation"},
    };
    for (size_t i = 0; i < 3; i++) {
        const char *sets[] = {"train.precision=fp8", other[i].set};
        xs_scenario s;
        xs_error err;
        CU_ASSERT_NOT_EQUAL(tu_scn_open_gated(other[i].id, sets, other[i].set ? 2 : 1, &s, &err),
                            XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, other[i].says));
    }
    /* Hugging Face's BERT: its nn.Linear layers run fp8, its heads bf16 */
    const char *bert[] = {"train.precision=fp8"};
    xs_scenario s;
    xs_workload wl;
    build_ok("bert-base-squad-hf", bert, 1, &s, &wl);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "ffn.up", 0)->dtype, XS_FP8);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "head.qa", -1)->dtype, XS_BF16);
    CU_ASSERT_EQUAL(wl.fp8_linears, 12 * 6);
    tu_check_memory_balance(&s, &wl);
    xs_wl_free(&wl);
}

/* LLM.int8: one byte a weight and one fp32 absmax a output row. */
static void int8_should_store_a_byte_a_weight_and_a_float_a_row(void)
{
    CU_ASSERT_DOUBLE_EQUAL(xs_quant_bytes(XS_QUANT_INT8, 4096, 11008), 4096.0 * 11008 + 4 * 11008,
                           0);
    xs_scenario s;
    xs_workload wl;
    const char *sets[] = {"train.quant=int8"};
    build_ok("llama2-7b-lora", sets, 1, &s, &wl);
    double base = 32 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008);
    CU_ASSERT_DOUBLE_EQUAL(wl.quant_params, base, 0.5);
    double rows = 32 * (4.0 * 4096 + 2.0 * 11008 + 4096);
    CU_ASSERT_DOUBLE_EQUAL(wl.quant_bytes, base + 4 * rows, 0.5);
    xs_wl_free(&wl);
}

/* Each quantized linear runs the fp16 cast, the outlier search with its
 * two host read-backs, the row-wise quantization, the int8 GEMM (int32
 * out), the dequantization, the 16-bit outlier GEMM, and in the backward
 * the dequantized weight before the bf16 dX GEMM; no dW for the base. */
static void int8_ops_should_be_there(void)
{
    xs_scenario s;
    xs_workload wl;
    const char *sets[] = {"train.quant=int8"};
    build_ok("llama2-7b-lora", sets, 1, &s, &wl);
    const char *fwd[] = {"x_fp16", "outliers", "any", "outlier_cols", "quant", "outlier_gather",
                         "dequant_out", "outlier_mm"};
    char nm[64];
    for (size_t l = 0; l < 7; l++) {
        for (size_t i = 0; i < sizeof fwd / sizeof fwd[0]; i++) {
            snprintf(nm, sizeof nm, "%s.int8.%s", LINEARS[l], fwd[i]);
            CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, nm, 4));
        }
        const xs_op *g = tu_find_op(&wl, LINEARS[l], 4);
        CU_ASSERT_PTR_NOT_NULL_FATAL(g);
        CU_ASSERT_EQUAL(g->dtype, XS_INT8);
        CU_ASSERT_EQUAL(g->hints.out_bytes, 4);
        snprintf(nm, sizeof nm, "%s.int8.dequant.bwd", LINEARS[l]);
        CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, nm, 4));
        snprintf(nm, sizeof nm, "%s.dW", LINEARS[l]);
        CU_ASSERT_PTR_NULL(tu_find_op(&wl, nm, 4));
    }
    CU_ASSERT_EQUAL(tu_find_op(&wl, "attn.q.int8.any", 4)->sync, 1);
    CU_ASSERT_EQUAL(tu_find_op(&wl, "attn.q.int8.outlier_cols", 4)->sync, 1);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.dequant", 4)); /* nf4's */
    tu_check_memory_balance(&s, &wl);
    xs_wl_free(&wl);
    /* MatMul8bitLt keeps its input wherever it needs a gradient: the first
     * layer's query reads the frozen embeddings' output (no grad), the
     * second's a tensor behind the first layer's adapters */
    const char *bert[] = {"train.quant=int8", "train.precision=bf16"};
    build_ok("bert-base-lora-sst2", bert, 2, &s, &wl);
    tu_check_memory_balance(&s, &wl);
    const xs_op *q0 = tu_find_op(&wl, "attn.q.int8.outlier_mm", 0);
    const xs_op *q1 = tu_find_op(&wl, "attn.q.int8.outlier_mm", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q1);
    CU_ASSERT_DOUBLE_EQUAL(q0->mem.saved, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(q1->mem.saved, 32.0 * 128 * 768 * 2, 0.5);
    CU_ASSERT_PTR_NULL(tu_find_op(&wl, "attn.q.int8.dequant.bwd", 0));
    CU_ASSERT_PTR_NOT_NULL(tu_find_op(&wl, "attn.q.int8.dequant.bwd", 1));
    xs_wl_free(&wl);
}

/* A quantized base trains only under adapters; int8 with a bf16 model. */
static void int8_should_be_refused_without_lora_or_bf16(void)
{
    static const struct {
        const char *sets[2];
        const char *says;
    } cases[] = {
        {{"train.quant=int8", "train.precision=bf16"}, "train.quant int8 needs train.lora.rank > 0"},
        {{"train.quant=int8", "train.precision=amp_bf16"}, "modelled with train.precision bf16"},
    };
    const char *ids[] = {"bert-base-squad-hf", "llama2-7b-lora"};
    for (size_t i = 0; i < 2; i++) {
        xs_scenario s;
        xs_error err;
        CU_ASSERT_NOT_EQUAL(tu_scn_open_gated(ids[i], cases[i].sets, 2, &s, &err), XS_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[i].says));
    }
    /* no int8 tensor cores: the V100 refuses, the T4 runs it */
    xs_scenario s;
    xs_workload wl;
    const char *q8[] = {"train.quant=int8"};
    build_ok("llama2-7b-lora", q8, 1, &s, &wl);
    xs_device v = tu_device("v100-sxm2-16gb"), t4 = tu_device("t4");
    xs_prediction p;
    xs_error err;
    CU_ASSERT_EQUAL(xs_predict(&v, &s, &wl, &p, &err), XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "compute.peak_int8_tops"));
    CU_ASSERT_EQUAL_FATAL(xs_predict(&t4, &s, &wl, &p, &err), XS_OK);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
}

/* The Llama tutorial's Hugging Face bf16 row is the bf16 twin of the fp8
 * scenario: predicted, within the band the device's ranges give; and on
 * every fp8 board fp8 shortens that step (its GEMMs halve, its casts cost
 * less than they save at 2,048 tokens a step). */
static void te_llama_row_should_be_predicted_and_fp8_faster(void)
{
    const char *files[] = {"data/published/te-llama-h100.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT(n == 1 && rows[0].ok);
    xs_vrows_free(rows, n);
    const char *boards[] = {"h100-sxm5-80gb", "h100-pcie-80gb", "h200-sxm-141gb", "l4"};
    for (size_t i = 0; i < 4; i++) {
        xs_device d = tu_device(boards[i]);
        double t[2];
        const char *p[] = {"train.precision=bf16", "train.precision=fp8"};
        for (int k = 0; k < 2; k++) {
            xs_scenario s;
            xs_workload wl;
            xs_prediction pr;
            build_ok(FP8_SCN, &p[k], 1, &s, &wl);
            CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s, &wl, &pr, &err), XS_OK);
            t[k] = pr.step_time_s;
            xs_prediction_free(&pr);
            xs_wl_free(&wl);
        }
        CU_ASSERT(t[1] < t[0]);
    }
}

int tu_add_fp8_suite(void)
{
    CU_pSuite s = CU_add_suite("fp8", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, fp8_should_be_refused_without_fp8_tensor_cores);
    CU_ADD_TEST(s, fp8_gemms_should_be_faster_but_not_past_the_fp8_peak);
    CU_ADD_TEST(s, casts_and_amax_updates_should_be_there_and_counted);
    CU_ADD_TEST(s, fp8_memory_should_balance_and_keep_fp8_transposes);
    CU_ADD_TEST(s, fp8_should_refuse_what_it_does_not_model);
    CU_ADD_TEST(s, int8_should_store_a_byte_a_weight_and_a_float_a_row);
    CU_ADD_TEST(s, int8_ops_should_be_there);
    CU_ADD_TEST(s, int8_should_be_refused_without_lora_or_bf16);
    CU_ADD_TEST(s, te_llama_row_should_be_predicted_and_fp8_faster);
    return 0;
}
