/* test_trace.c — kernel-name classification and the trace comparison. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "test_util.h"
#include "trace.h"

static void kernel_names_should_map_to_their_class(void)
{
    static const struct {
        const char *name;
        int cls;
    } cases[] = {
        {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", XS_KC_GEMM},
        {"volta_sgemm_128x64_nn", XS_KC_GEMM},
        {"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1",
         XS_KC_GEMM},
        {"void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_64x4_nn>(...)",
         XS_KC_GEMM},
        {"void flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false>>(...)",
         XS_KC_ATTENTION},
        {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)",
         XS_KC_SOFTMAX},
        {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float>(...)",
         XS_KC_NORM},
        {"void cuComputeGradInput<c10::Half, float, c10::Half>(...)", XS_KC_NORM},
        {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
         "at::TensorIteratorBase&)::{lambda()#3}::operator()() const>(...)",
         XS_KC_COPY},
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
         "at::native::func_wrapper_t<float, {lambda(float, float)#1}>>>(...)",
         XS_KC_REDUCE},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
         XS_KC_ELEMENTWISE},
        {"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float>(...)",
         XS_KC_ELEMENTWISE},
        {"void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long>(...)",
         XS_KC_EMBED},
        {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float>",
         XS_KC_LOSS},
        {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>(...)",
         XS_KC_OPTIMIZER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = xs_kclass_of_kernel(cases[i].name);
        if (got != cases[i].cls)
            fprintf(stderr, "\n%s -> %s, expected %s\n", cases[i].name, xs_kclass_name(got),
                    xs_kclass_name(cases[i].cls));
        CU_ASSERT_EQUAL(got, cases[i].cls);
    }
}

static void trace_should_sum_kernels_per_class_and_skip_other_events(void)
{
    xs_trace t;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_trace_load("tests/data/traces/synthetic-a100-step.json", &t, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(t.total, 20); /* the cpu_op, memcpy and instant events are not kernels */
    CU_ASSERT_EQUAL(t.kernels[XS_KC_GEMM], 5);
    CU_ASSERT_DOUBLE_EQUAL(t.measured_s[XS_KC_GEMM], (9 + 9 + 9 + 8 + 7) * 1e-6, 1e-12);
    CU_ASSERT_EQUAL(t.kernels[XS_KC_SOFTMAX], 2);
    CU_ASSERT_EQUAL(t.kernels[XS_KC_COPY], 2);
    CU_ASSERT_EQUAL(t.kernels[XS_KC_REDUCE], 1);
    CU_ASSERT_EQUAL(t.kernels[XS_KC_OPTIMIZER], 1);
    CU_ASSERT_DOUBLE_EQUAL(t.first_ts_us, 10000, 1e-9);
    double sum = 0;
    for (int c = 0; c < XS_KC_COUNT; c++)
        sum += t.measured_s[c];
    CU_ASSERT_DOUBLE_EQUAL((t.last_end_us - t.first_ts_us) * 1e-6, sum + 19 * 2e-6, 1e-12);
}

static void bad_traces_should_be_refused_with_a_reason(void)
{
    xs_trace t;
    xs_error err;
    CU_ASSERT_EQUAL(xs_trace_load(tu_write("t1.json", "{\"traceEvents\": 5}"), &t, &err),
                    XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'traceEvents' must be an array"));
    CU_ASSERT_EQUAL(xs_trace_load(tu_write("t2.json", "{\"traceEvents\": [{\"ph\": \"X\", "
                                                      "\"cat\": \"cpu_op\", \"name\": \"a\"}]}"),
                                  &t, &err),
                    XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no GPU kernel events"));
    CU_ASSERT_EQUAL(xs_trace_load(tu_write("t3.json", "[{\"ph\": \"X\", \"cat\": \"kernel\", "
                                                      "\"name\": \"k\", \"ts\": 1}]"),
                                  &t, &err),
                    XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "kernel event 1 must have"));
    CU_ASSERT_EQUAL(xs_trace_load(tu_write("t4.json", "{\"traceEvents\": ["), &t, &err), XS_EJSON);
}

static void validate_trace_cli_should_compare_every_class_and_the_step(void)
{
    tu_result r = tu_run("validate --trace tests/data/traces/synthetic-a100-step.json "
                         "-d a100-sxm4-80gb -s tests/data/scenarios/tiny.json --format json");
    CU_ASSERT_EQUAL(r.status, 0); /* every class in the trace is predicted and vice versa */
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows"), *row;
    int step = 0, classes = 0;
    cJSON_ArrayForEach(row, rows)
    {
        const char *m = cJSON_GetObjectItem(row, "metric")->valuestring;
        step += strcmp(m, "step_time_s") == 0;
        classes += strncmp(m, "kernel_time_s:", 14) == 0;
    }
    CU_ASSERT_EQUAL(step, 1);
    CU_ASSERT_EQUAL(classes, 9); /* all but attention: the tiny model runs unfused */
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("validate --trace tests/data/traces/synthetic-a100-step.json -s tiny");
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--trace needs the -d DEVICE and -s SCENARIO"));
    tu_run_free(&r);
}

int tu_add_trace_suite(void)
{
    CU_pSuite s = CU_add_suite("trace", NULL, NULL);
    return !s ||
           !CU_add_test(s, "kernel_names_should_map_to_their_class",
                        kernel_names_should_map_to_their_class) ||
           !CU_add_test(s, "trace_should_sum_kernels_per_class_and_skip_other_events",
                        trace_should_sum_kernels_per_class_and_skip_other_events) ||
           !CU_add_test(s, "bad_traces_should_be_refused_with_a_reason",
                        bad_traces_should_be_refused_with_a_reason) ||
           !CU_add_test(s, "validate_trace_cli_should_compare_every_class_and_the_step",
                        validate_trace_cli_should_compare_every_class_and_the_step);
}
