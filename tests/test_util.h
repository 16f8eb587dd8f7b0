/* test_util.h — helpers shared by the suites: scratch files, running the
 * CLI, mutating a JSON document to provoke one loader error at a time. */
#ifndef XS_TEST_UTIL_H
#define XS_TEST_UTIL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "device.h"
#include "scenario.h"
#include "predict.h"
#include "workload.h"

/* A fresh scratch folder for this test run (removed at exit). */
const char *tu_tmpdir(void);
/* Write text to <tmpdir>/name; returns the path (static buffer per call slot). */
const char *tu_write(const char *name, const char *text);
/* Parse a repository file (path relative to the source root). Caller frees. */
cJSON *tu_load_json(const char *repo_path);
/* Write a JSON document to <tmpdir>/name; returns the path. */
const char *tu_write_json(const char *name, const cJSON *doc);

typedef struct {
    int status;    /* exit code */
    char *out;     /* stdout, caller frees with tu_run_free */
    char *err;     /* stderr */
} tu_result;

/* Run the xpusim binary ($XPUSIM_BIN) with args (a shell-quoted string). */
tu_result tu_run(const char *args);
/* The same with standard input read from the file input. */
tu_result tu_run_stdin(const char *args, const char *input);
void tu_run_free(tu_result *r);
/* Number of lines in s. */
int tu_lines(const char *s);

/* A scenario loaded as the commands take it, id or path (xs_scn_open) or
 * path (xs_scn_load), then through the workload's gate (its relations,
 * gate.h), a gate error naming the overrides it is about. */
int tu_scn_open_gated(const char *id_or_path, const char *const *sets, int n, xs_scenario *s,
                      xs_error *err);
int tu_scn_load_gated(const char *path, const char *const *sets, int n, xs_scenario *s,
                      xs_error *err);

/* A shipped device (devices/<id>.json), loaded or failed as a test assertion. */
xs_device tu_device(const char *id);

/* Load scenario id (or path) with its --set overrides and build its op
 * list; on failure print the error and return its code. */
/* tu_build without the message on stderr: the caller reads err. */
int tu_build_err(const char *id, const char *const *sets, int n, xs_scenario *s, xs_workload *wl,
                 xs_error *err);
int tu_build(const char *id, const char *const *sets, int n, xs_scenario *s, xs_workload *wl);
/* The op named name in layer (-1: outside the layers), the first in list
 * order, or NULL. */
const xs_op *tu_find_op(const xs_workload *wl, const char *name, int layer);
/* The memory bookkeeping of a built step (xs_op_mem): every tensor kept is
 * released by the backward, every trainable parameter's gradient made
 * once, kept tensors only in the forward or a checkpointed recomputation. */
void tu_check_memory_balance(const xs_scenario *s, const xs_workload *wl);

/* A prediction's compute: every op but the collectives, times its count
 * (the device time a step would take on one stream). */
double tu_compute_sum(const xs_workload *wl, const xs_prediction *p);
/* A step with collectives on their own stream: it lasts at least its
 * compute and at least its collectives, at most both in series plus what
 * sharing the GPU costs; the exposed part within the collectives; the
 * throughput the step's samples over its time. */
void tu_check_two_streams(const xs_workload *wl, const xs_prediction *p);

/* Build scenario id under each recipe (up to 4 --sets, NULL after the
 * last when fewer) and check each op list's memory balance. */
void tu_check_balance_recipes(const char *id, const char *const (*recipes)[4], size_t n);

/* Suite registration, one per module. */
int tu_add_schema_suite(void);
int tu_add_comm_suite(void);
int tu_add_threads_suite(void);
int tu_add_kernels_lstm_suite(void);
int tu_add_kernels_host_suite(void);
int tu_add_numfmt_suite(void);
int tu_add_memo_suite(void);
int tu_add_compact_suite(void);
int tu_add_ddp_suite(void);
int tu_add_fsdp_suite(void);
int tu_add_lora_suite(void);
int tu_add_device_suite(void);
int tu_add_scenario_suite(void);
int tu_add_workload_suite(void);
int tu_add_llama_suite(void);
int tu_add_distilbert_suite(void);
int tu_add_vit_suite(void);
int tu_add_t5_suite(void);
int tu_add_tpu_suite(void);
int tu_add_tpu_dp_suite(void);
int tu_add_gpu_suite(void);
int tu_add_gemm_suite(void);
int tu_add_advise_suite(void);
int tu_add_validate_suite(void);
int tu_add_kernel_op_suite(void);
int tu_add_trace_suite(void);
int tu_add_kernel_class_suite(void);
int tu_add_kernels_optim_suite(void);
int tu_add_kernels_gemm_suite(void);
int tu_add_gemm_plan_suite(void);
int tu_add_kernels_layer_suite(void);
int tu_add_kernels_bert_suite(void);
int tu_add_cpu_model_suite(void);
int tu_add_backend_suite(void);
int tu_add_cli_suite(void);
int tu_add_bounds_suite(void);
int tu_add_fileio_suite(void);
int tu_add_power_suite(void);
int tu_add_memory_suite(void);
int tu_add_trace_calibrate_suite(void);
int tu_add_multi_tensor_suite(void);
int tu_add_half_convert_suite(void);
int tu_add_host_suite(void);
int tu_add_sweep_suite(void);
int tu_add_steps_suite(void);
int tu_add_cuda_backend_suite(void);
int tu_add_fp8_suite(void);
int tu_add_api_suite(void);

#endif
