/* kernels_absent.c — the kernel suites of a build without the CPU kernels
 * (make CPU_KERNELS=0): each registers one test that reports the suite
 * skipped and why, in place of tests/test_kernels_*.c. */
#include <stdio.h>

#include <CUnit/CUnit.h>

#include "test_util.h"

static void kernels_are_not_built(void)
{
    fprintf(stderr, "\n(skipped: this build has no CPU kernels, make CPU_KERNELS=0)\n");
}

static int add_skipped(const char *name)
{
    CU_pSuite s = CU_add_suite(name, NULL, NULL);
    return !s || !CU_add_test(s, "skipped_without_the_cpu_kernels", kernels_are_not_built);
}

int tu_add_kernels_optim_suite(void)
{
    return add_skipped("kernels_optim");
}

int tu_add_kernels_gemm_suite(void)
{
    return add_skipped("kernels_gemm");
}

int tu_add_kernels_layer_suite(void)
{
    return add_skipped("kernels_layer");
}

int tu_add_kernels_bert_suite(void)
{
    return add_skipped("kernels_bert");
}

int tu_add_kernels_lstm_suite(void)
{
    return add_skipped("kernels_lstm");
}

int tu_add_kernels_host_suite(void)
{
    return add_skipped("kernels_host");
}
