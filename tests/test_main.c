/* test_main.c — runs every CUnit suite; exits non-zero on any failure. */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "test_util.h"

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    int (*suites[])(void) = {tu_add_schema_suite,   tu_add_device_suite,   tu_add_backend_suite, tu_add_scenario_suite,
                             tu_add_workload_suite, tu_add_gemm_suite,   tu_add_gpu_suite,
                             tu_add_advise_suite, tu_add_validate_suite, tu_add_kernel_op_suite, tu_add_kernel_class_suite, tu_add_trace_suite, tu_add_trace_calibrate_suite,
                             tu_add_kernels_optim_suite, tu_add_kernels_gemm_suite,
                             tu_add_multi_tensor_suite, tu_add_gemm_plan_suite, tu_add_half_convert_suite,
                             tu_add_kernels_layer_suite, tu_add_kernels_bert_suite,
                             tu_add_cpu_model_suite,
                             tu_add_cli_suite, tu_add_bounds_suite, tu_add_fileio_suite,
                             tu_add_power_suite, tu_add_memory_suite,
                             tu_add_host_suite, tu_add_cuda_backend_suite, tu_add_lora_suite,
                             tu_add_llama_suite, tu_add_distilbert_suite,
                             tu_add_vit_suite, tu_add_fp8_suite,
                             tu_add_sweep_suite, tu_add_t5_suite,
                             tu_add_tpu_suite, tu_add_tpu_dp_suite, tu_add_api_suite,
                             tu_add_steps_suite, tu_add_comm_suite,
                             tu_add_ddp_suite, tu_add_fsdp_suite, tu_add_compact_suite,
                             tu_add_threads_suite, tu_add_kernels_lstm_suite, tu_add_kernels_host_suite,
                             tu_add_numfmt_suite, tu_add_memo_suite};
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        if (suites[i]() != 0) {
            fprintf(stderr, "cannot register suite %zu\n", i);
            CU_cleanup_registry();
            return 1;
        }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    /* XS_TEST_SUITE=NAME runs one suite (a quick iteration), all by default */
    const char *only = getenv("XS_TEST_SUITE");
    CU_pSuite one = only && only[0] ? CU_get_suite(only) : NULL;
    if (only && only[0] && !one) {
        fprintf(stderr, "XS_TEST_SUITE=%s: no such suite\n", only);
        CU_cleanup_registry();
        return 1;
    }
    /* XS_TEST_SHARD=K/N runs the K-th of N interleaved parts of the suites
     * (0-based; whole suites, as a suite's tests may build on each other):
     * make test-valgrind runs the parts side by side */
    const char *shard = getenv("XS_TEST_SHARD");
    if (shard && shard[0] && !one) {
        unsigned k, n;
        char tail;
        if (sscanf(shard, "%u/%u%c", &k, &n, &tail) != 2 || n == 0 || k >= n) {
            fprintf(stderr, "XS_TEST_SHARD=%s: expected K/N with 0 <= K < N\n", shard);
            CU_cleanup_registry();
            return 1;
        }
        unsigned i = 0;
        for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext, i++)
            CU_set_suite_active(s, i % n == k ? CU_TRUE : CU_FALSE);
    }
    if (one)
        CU_basic_run_suite(one);
    else
        CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
