/* test_gpu.c — the GPU cost function, energy, cost and the step totals. */
#include <math.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "backend.h"
#include "cost.h"
#include "energy.h"
#include "gemm.h"
#include "gpu.h"
#include "host.h"
#include "paths.h"
#include "predict.h"
#include "test_util.h"

static xs_op gemm_op(double m, double n, double k, xs_dtype t)
{
    xs_op op = xs_op_make(XS_OP_GEMM, XS_PH_FWD, t, "g");
    op.m = (int64_t)m;
    op.n = (int64_t)n;
    op.k = (int64_t)k;
    op.batch = 1;
    op.flops = 2 * m * n * k;
    op.bytes = (m * k + k * n + m * n) * xs_dtype_bytes(t);
    return op;
}

static xs_estimate run(const xs_device *d, const xs_op *op)
{
    xs_estimate e;
    xs_error err;
    memset(&e, 0, sizeof e);
    CU_ASSERT_EQUAL(xs_gpu_backend.estimate(d, op, &e, &err), XS_OK);
    xs_energy_fill(d, &e);
    return e;
}

static void large_gemm_should_be_compute_bound_at_the_tensor_rate(void)
{
    xs_device a = tu_device("a100-sxm4-80gb");
    xs_op op = gemm_op(8192, 8192, 8192, XS_FP16);
    xs_estimate e = run(&a, &op);
    CU_ASSERT_EQUAL(e.bound, XS_BOUND_COMPUTE);
    CU_ASSERT(e.tensor);
    /* 8192^3 fills the GPU in ~19 waves of 256x128 tiles: within a few
     * percent of the ideal at the mainloop's rate, never faster */
    double ideal = op.flops / (312e12 * 1305 / 1410 * xs_gpu_of(&a)->gemm_efficiency); /* held clock */
    CU_ASSERT(e.time_s > ideal && e.time_s < 1.05 * ideal + xs_gpu_of(&a)->kernel_launch_us * 1e-6);
    /* busy engines all the time: the board sits at its power limit */
    CU_ASSERT(e.power_w > 0.99 * a.tdp_w);
}

static void formats_without_tensor_cores_should_run_on_fp32_units(void)
{
    xs_device v = tu_device("v100-sxm2-16gb"), t = tu_device("t4");
    xs_op op = gemm_op(4096, 4096, 4096, XS_TF32);
    xs_estimate e = run(&v, &op);
    CU_ASSERT_EQUAL(e.engine, XS_FP32);
    CU_ASSERT_FALSE(e.tensor);
    CU_ASSERT_DOUBLE_EQUAL(e.compute_s, op.flops / (15.7e12 * xs_gpu_of(&v)->gemm_efficiency), 1e-12);
    op.dtype = XS_BF16;
    e = run(&t, &op);
    CU_ASSERT_EQUAL(e.engine, XS_FP32);
    op.dtype = XS_FP16;
    e = run(&t, &op);
    CU_ASSERT_EQUAL(e.engine, XS_FP16);
    CU_ASSERT(e.tensor);
    /* the T4 holds 1008 MHz under load (its file's f^3 rule), not its 1590 MHz boost */
    CU_ASSERT_DOUBLE_EQUAL(e.compute_s, op.flops / (65e12 * 1008 / 1590 * xs_gpu_of(&t)->gemm_efficiency),
                           1e-12);
}

/* One launch of a non-GEMM kernel moving bytes, no math. */
static xs_op stream_op(int kind, double bytes)
{
    xs_op op = xs_op_make(kind, XS_PH_FWD, XS_FP32, "stream");
    op.bytes = bytes;
    return op;
}

static void small_and_streaming_ops_should_be_launch_and_memory_bound(void)
{
    xs_device h = tu_device("h100-sxm5-80gb");
    xs_op op = stream_op(XS_OP_ELTWISE, 1e9);
    op.flops = 1e8;
    xs_estimate e = run(&h, &op);
    CU_ASSERT_EQUAL(e.bound, XS_BOUND_MEMORY);
    CU_ASSERT_DOUBLE_EQUAL(e.memory_s, 1e9 / (3350e9 * xs_gpu_of(&h)->mem_bw_efficiency), 1e-15);
    CU_ASSERT(e.power_w > h.idle_w && e.power_w < h.tdp_w);
    op.bytes = 1e3;
    op.flops = 1e3;
    e = run(&h, &op);
    CU_ASSERT_EQUAL(e.bound, XS_BOUND_LAUNCH);
    CU_ASSERT(e.power_w < h.idle_w + 0.01 * (h.tdp_w - h.idle_w));
    op.launches = 10;
    xs_estimate e10 = run(&h, &op);
    CU_ASSERT_DOUBLE_EQUAL(e10.overhead_s, 10 * e.overhead_s, 1e-15);
}

static void generic_loop_ops_should_stream_at_their_share_of_the_bandwidth(void)
{
    xs_device h = tu_device("h100-sxm5-80gb");
    xs_op op = stream_op(XS_OP_COPY, 1e9);
    xs_estimate unset = run(&h, &op);
    op.hints.bw_scale = 1;
    xs_estimate vec = run(&h, &op);
    op.hints.bw_scale = 0.5;
    xs_estimate half = run(&h, &op);
    CU_ASSERT_DOUBLE_EQUAL(unset.memory_s, vec.memory_s, 0);
    CU_ASSERT_DOUBLE_EQUAL(half.memory_s, 2 * vec.memory_s, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(half.time_s - half.memory_s, vec.time_s - vec.memory_s, 1e-15);
    /* GEMMs have their own tile model: the share does not touch them */
    xs_op g = gemm_op(4096, 4096, 4096, XS_FP16);
    xs_estimate g1 = run(&h, &g);
    g.hints.bw_scale = 0.5;
    xs_estimate g2 = run(&h, &g);
    CU_ASSERT_DOUBLE_EQUAL(g1.time_s, g2.time_s, 0);
}

static void elementwise_loops_should_wait_on_too_few_loads_in_flight(void)
{
    xs_device h = tu_device("h200-sxm-141gb");
    /* 2^29 elements: 16-bit in and out, then fp32 in and out */
    double elems = 536870912.0, per_trip = 132.0 * 2048 * 4;
    xs_op half = stream_op(XS_OP_ELTWISE, elems * 4);
    half.elems = elems;
    half.hints.loop_elems = 4;
    xs_estimate e = run(&h, &half);
    double trips = elems / per_trip * xs_gpu_of(&h)->stream_latency_ns * 1e-9;
    CU_ASSERT_EQUAL(e.bound, XS_BOUND_LATENCY);
    CU_ASSERT_DOUBLE_EQUAL(e.time_s - e.overhead_s, trips, 1e-12);
    CU_ASSERT(e.memory_s < trips);
    /* the same elements in fp32 move twice the bytes a trip: DRAM binds */
    xs_op wide = half;
    wide.bytes = elems * 8;
    xs_estimate w = run(&h, &wide);
    CU_ASSERT_EQUAL(w.bound, XS_BOUND_MEMORY);
    CU_ASSERT_DOUBLE_EQUAL(w.time_s - w.overhead_s, w.memory_s, 1e-15);
    /* twice the elements a thread: half the trips, DRAM binds again */
    half.hints.loop_elems = 8;
    CU_ASSERT_EQUAL(run(&h, &half).bound, XS_BOUND_MEMORY);
    /* kernels that keep rows in flight (loop_elems 0) and devices without
     * a measured round trip are not bounded */
    half.hints.loop_elems = 0;
    CU_ASSERT_EQUAL(run(&h, &half).bound, XS_BOUND_MEMORY);
    xs_device a = tu_device("a100-sxm4-80gb");
    half.hints.loop_elems = 4;
    CU_ASSERT_EQUAL(run(&a, &half).bound, XS_BOUND_MEMORY);
}

/* A copy that reads one element from each of many rows moves a 32-byte L2
 * sector per element: on an H100, 2^27 16-bit elements then take
 * 2^27 x 32 B over the L2 bandwidth, above their DRAM time; the same copy
 * reading contiguous runs streams at DRAM speed. */
static void reads_across_rows_should_pay_an_l2_sector_each(void)
{
    xs_device h = tu_device("h100-sxm5-80gb");
    double elems = 134217728.0;
    xs_op plain = stream_op(XS_OP_COPY, elems * 4);
    plain.elems = elems;
    xs_estimate p = run(&h, &plain);
    xs_op across = plain;
    across.hints.strided_elems = elems;
    xs_estimate a = run(&h, &across);
    double sectors = elems * 32 / (xs_gpu_of(&h)->l2_bw_gbs * 1e9);
    CU_ASSERT(sectors > p.memory_s);
    CU_ASSERT_DOUBLE_EQUAL(a.time_s - a.overhead_s, sectors, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p.time_s - p.overhead_s, p.memory_s, 1e-15);
    CU_ASSERT_EQUAL(a.bound, XS_BOUND_MEMORY);
    /* fp32 elements: twice the DRAM bytes, the same sectors */
    across.bytes = elems * 8;
    plain.bytes = elems * 8;
    CU_ASSERT(run(&h, &across).time_s / run(&h, &plain).time_s <
              a.time_s / p.time_s);
}

static void cost_should_be_time_times_devices_times_price(void)
{
    xs_device a = tu_device("a100-sxm4-80gb");
    CU_ASSERT_DOUBLE_EQUAL(xs_cost_usd(&a, 3600, 2), 2 * a.price_usd_per_hour, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(xs_cost_usd(&a, 0, 8), 0, 0);
}

static int predict_id(const char *devid, const char *scn, const char *const *sets, int n,
                      xs_device *d, xs_workload *wl, xs_prediction *p, xs_error *err)
{
    char path[512];
    xs_scenario s;
    *d = tu_device(devid);
    int rc = xs_resolve("scenarios", scn, path, sizeof path, err);
    if (!rc)
        rc = xs_scn_load(path, sets, n, &s, err);
    if (!rc)
        rc = xs_wl_build(&s, wl, err);
    if (!rc) {
        rc = xs_predict(d, &s, wl, p, err);
        if (rc)
            xs_wl_free(wl);
    }
    return rc;
}

/* Device time of the ops named prefix, and their launches. */
static double ops_time(const xs_workload *wl, const xs_prediction *p, const char *prefix,
                       double *launches)
{
    double t = 0;
    *launches = 0;
    for (size_t i = 0; i < wl->n; i++)
        if (strncmp(wl->ops[i].name, prefix, strlen(prefix)) == 0) {
            t += p->est[i].time_s * (double)wl->ops[i].count;
            *launches += (double)(wl->ops[i].launches * wl->ops[i].count);
        }
    return t;
}

static void host_should_hide_behind_long_kernels_until_a_read_back(void)
{
    xs_device d;
    xs_workload wl;
    xs_prediction p;
    xs_error err;
    /* no read-backs and a fast host: the host runs ahead, the device never waits */
    const char *ahead[] = {"train.precision=amp_fp16", "train.batch=64", "train.grad_clip=false",
                           "train.loss_sync=false", "train.amp_mode=autocast",
                           "train.host_op_us=1", "data.loader_us=0"};
    /* autocast keeps GradScaler's overflow read-back: the only sync */
    CU_ASSERT_EQUAL_FATAL(predict_id("a100-sxm4-80gb", "bert-base-squad", ahead, 7, &d, &wl, &p,
                                     &err), XS_OK);
    double launches;
    double opt_t = ops_time(&wl, &p, "optimizer.", &launches);
    /* after that read-back the host issues the optimizer's few launches: a
     * few microseconds, never more than its issue time */
    CU_ASSERT(p.host_wait_s > 0);
    CU_ASSERT(p.host_wait_s <= launches * 1e-6 + 2e-6 + 1e-12);
    CU_ASSERT(opt_t > 0);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
    const char *none[] = {"train.precision=bf16", "train.grad_clip=false", "train.loss_sync=false",
                          "train.host_op_us=1"};
    CU_ASSERT_EQUAL_FATAL(predict_id("a100-sxm4-80gb", "bert-base-squad", none, 4, &d, &wl, &p,
                                     &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(p.host_wait_s, 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p.step_time_s, p.device_time_s, 1e-12);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
}

static void sample_loading_should_idle_the_gpu_only_after_a_step_end_sync(void)
{
    xs_device d;
    xs_workload wl;
    xs_prediction p0, p1, q;
    xs_error err;
    /* loss.item() drains the GPU at each step's end: the next batch's
     * loading is exposed in full, sample by sample */
    const char *sync0[] = {"train.batch=64", "train.loss_sync=true", "data.loader_us=0"};
    const char *sync1[] = {"train.batch=64", "train.loss_sync=true", "data.loader_us=40"};
    CU_ASSERT_EQUAL_FATAL(predict_id("h100-sxm5-80gb", "bert-base-squad", sync0, 3, &d, &wl, &p0,
                                     &err), XS_OK);
    xs_wl_free(&wl);
    CU_ASSERT_EQUAL_FATAL(predict_id("h100-sxm5-80gb", "bert-base-squad", sync1, 3, &d, &wl, &p1,
                                     &err), XS_OK);
    xs_wl_free(&wl);
    CU_ASSERT_DOUBLE_EQUAL(p1.device_time_s, p0.device_time_s, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p1.host_wait_s - p0.host_wait_s, 64 * 40e-6, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(p1.step_energy_j - p0.step_energy_j, 64 * 40e-6 * d.idle_w, 1e-9);
    /* no read-back at all: the host loads while the previous step runs */
    const char *none[] = {"train.precision=bf16", "train.grad_clip=false", "train.loss_sync=false",
                          "train.batch=64", "data.loader_us=40"};
    CU_ASSERT_EQUAL_FATAL(predict_id("h100-sxm5-80gb", "bert-base-squad", none, 5, &d, &wl, &q,
                                     &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(q.host_wait_s, 0, 1e-12);
    xs_prediction_free(&p0);
    xs_prediction_free(&p1);
    xs_prediction_free(&q);
    xs_wl_free(&wl);
}

static void eager_optimizer_after_a_read_back_should_be_host_bound(void)
{
    xs_device d;
    xs_workload wl;
    xs_prediction p;
    xs_error err;
    /* fp32 switches the recipe to BertAdam: its norm is read back, then
     * 12 launches a tensor follow, each a Python op under no_grad (the host
     * model's loop price), from a host slow enough (a third of the speed
     * the defaults were measured at) that the device runs them faster */
    const char *sets[] = {"train.precision=tf32", "train.batch=64", "host.cpu_scale=0.3"};
    CU_ASSERT_EQUAL_FATAL(predict_id("h100-sxm5-80gb", "bert-base-squad", sets, 3, &d, &wl, &p,
                                     &err), XS_OK);
    double launches;
    double opt_t = ops_time(&wl, &p, "optimizer.bertadam", &launches);
    CU_ASSERT_DOUBLE_EQUAL(launches, 12.0 * (double)wl.tensors, 0);
    double issue = launches * xs_host_launch_us(&p.host, XS_ISSUE_LOOP) * 1e-6;
    CU_ASSERT(issue > opt_t);
    /* the device waits at least for the issue time it cannot overlap */
    CU_ASSERT(p.host_wait_s >= issue - opt_t - 1e-9);
    CU_ASSERT(p.host_wait_s < issue + 1e-3);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
    /* a host twice as slow waits about twice as long */
    const char *slow[] = {"train.precision=tf32", "train.batch=64", "host.cpu_scale=0.15"};
    xs_prediction q;
    CU_ASSERT_EQUAL_FATAL(predict_id("h100-sxm5-80gb", "bert-base-squad", slow, 3, &d, &wl, &q,
                                     &err), XS_OK);
    CU_ASSERT(q.host_wait_s > 1.9 * p.host_wait_s);
    CU_ASSERT_DOUBLE_EQUAL(q.device_time_s, p.device_time_s, 1e-12);
    xs_prediction_free(&q);
    xs_wl_free(&wl);
}

static void step_totals_should_add_up_the_ops(void)
{
    xs_device d;
    xs_workload wl;
    xs_prediction p;
    xs_error err;
    const char *sets[] = {"train.grad_accum=2"};
    CU_ASSERT_EQUAL_FATAL(predict_id("a100-sxm4-80gb", "bert-base-squad", sets, 1, &d, &wl, &p,
                                     &err), XS_OK);
    double t = 0, e = 0, mm = 0;
    for (size_t i = 0; i < wl.n; i++) {
        t += p.est[i].time_s * (double)wl.ops[i].count;
        e += p.est[i].energy_j * (double)wl.ops[i].count;
        if (xs_op_is_matmul(wl.ops[i].kind))
            mm += wl.ops[i].flops * (double)wl.ops[i].count;
    }
    /* the step is the kernels plus the time the device waits for the host */
    CU_ASSERT_DOUBLE_EQUAL(p.device_time_s, t, t * 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p.step_time_s, t + p.host_wait_s, t * 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p.step_energy_j, e + p.host_wait_s * d.idle_w, e * 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p.samples_per_s, 64 / p.step_time_s, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(p.mfu, mm / (p.step_time_s * 312e12), 1e-12);
    CU_ASSERT(p.mfu > 0.05 && p.mfu < 1);
    CU_ASSERT_EQUAL(p.steps, 2 * ((88641 + 63) / 64));
    CU_ASSERT_DOUBLE_EQUAL(p.run_time_s, p.step_time_s * (double)p.steps, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(p.run_cost_usd, p.run_time_s / 3600 * d.price_usd_per_hour, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(p.run_energy_kwh, p.step_energy_j * (double)p.steps / 3.6e6, 1e-12);
    CU_ASSERT(p.avg_power_w > d.idle_w && p.avg_power_w <= d.tdp_w);
    double phases = 0;
    for (int i = 0; i < XS_PHASE_COUNT; i++)
        phases += p.phase_time_s[i];
    CU_ASSERT_DOUBLE_EQUAL(phases + p.host_wait_s, p.step_time_s, 1e-12);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
}

static double samples_per_s(const char *devid, const char *precision)
{
    xs_device d;
    xs_workload wl;
    xs_prediction p;
    xs_error err;
    char set[64];
    snprintf(set, sizeof set, "train.precision=%s", precision);
    const char *sets[] = {set};
    CU_ASSERT_EQUAL_FATAL(predict_id(devid, "bert-base-squad", sets, 1, &d, &wl, &p, &err),
                          XS_OK);
    double r = p.samples_per_s;
    xs_prediction_free(&p);
    xs_wl_free(&wl);
    return r;
}

static void faster_hardware_and_formats_should_predict_higher_throughput(void)
{
    double t4 = samples_per_s("t4", "amp_fp16"), a100 = samples_per_s("a100-sxm4-80gb", "amp_fp16"),
           h100 = samples_per_s("h100-sxm5-80gb", "amp_fp16");
    CU_ASSERT(t4 < a100 && a100 < h100);
    CU_ASSERT(samples_per_s("a100-sxm4-80gb", "fp32") < samples_per_s("a100-sxm4-80gb", "tf32"));
    CU_ASSERT(samples_per_s("a100-sxm4-80gb", "tf32") < a100);
    /* Volta has no tf32: asking for it changes nothing but the name */
    CU_ASSERT_DOUBLE_EQUAL(samples_per_s("v100-sxm2-16gb", "tf32"),
                           samples_per_s("v100-sxm2-16gb", "fp32"), 1e-9);
}

/* Several GPUs are predicted (comm.h, wl_ddp.c; test_ddp.c holds the
 * model's tests); a CPU device is refused: the collectives are NCCL's. */
static void multi_device_scenarios_should_be_predicted_on_gpus_only(void)
{
    xs_device d;
    xs_workload wl;
    xs_prediction p;
    xs_error err;
    const char *sets[] = {"cluster.devices=8"};
    CU_ASSERT_EQUAL_FATAL(predict_id("a100-sxm4-80gb", "bert-base-squad", sets, 1, &d, &wl, &p,
                                     &err),
                          XS_OK);
    CU_ASSERT_EQUAL(p.devices, 8);
    CU_ASSERT(p.comm_s > 0);
    xs_prediction_free(&p);
    xs_wl_free(&wl);
    CU_ASSERT_EQUAL(predict_id("xeon-amx-2c", "bert-base-squad", sets, 1, &d, &wl, &p, &err),
                    XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cluster.devices 8 needs GPUs"));
}

int tu_add_gpu_suite(void)
{
    CU_pSuite s = CU_add_suite("gpu", NULL, NULL);
    return !s ||
           !CU_add_test(s, "large_gemm_should_be_compute_bound_at_the_tensor_rate",
                        large_gemm_should_be_compute_bound_at_the_tensor_rate) ||
           !CU_add_test(s, "formats_without_tensor_cores_should_run_on_fp32_units",
                        formats_without_tensor_cores_should_run_on_fp32_units) ||
           !CU_add_test(s, "small_and_streaming_ops_should_be_launch_and_memory_bound",
                        small_and_streaming_ops_should_be_launch_and_memory_bound) ||
           !CU_add_test(s, "elementwise_loops_should_wait_on_too_few_loads_in_flight",
                        elementwise_loops_should_wait_on_too_few_loads_in_flight) ||
           !CU_add_test(s, "reads_across_rows_should_pay_an_l2_sector_each",
                        reads_across_rows_should_pay_an_l2_sector_each) ||
           !CU_add_test(s, "generic_loop_ops_should_stream_at_their_share_of_the_bandwidth",
                        generic_loop_ops_should_stream_at_their_share_of_the_bandwidth) ||
           !CU_add_test(s, "cost_should_be_time_times_devices_times_price",
                        cost_should_be_time_times_devices_times_price) ||
           !CU_add_test(s, "step_totals_should_add_up_the_ops", step_totals_should_add_up_the_ops) ||
           !CU_add_test(s, "host_should_hide_behind_long_kernels_until_a_read_back",
                        host_should_hide_behind_long_kernels_until_a_read_back) ||
           !CU_add_test(s, "sample_loading_should_idle_the_gpu_only_after_a_step_end_sync",
                        sample_loading_should_idle_the_gpu_only_after_a_step_end_sync) ||
           !CU_add_test(s, "eager_optimizer_after_a_read_back_should_be_host_bound",
                        eager_optimizer_after_a_read_back_should_be_host_bound) ||
           !CU_add_test(s, "faster_hardware_and_formats_should_predict_higher_throughput",
                        faster_hardware_and_formats_should_predict_higher_throughput) ||
           !CU_add_test(s, "multi_device_scenarios_should_be_predicted_on_gpus_only",
                        multi_device_scenarios_should_be_predicted_on_gpus_only);
}
