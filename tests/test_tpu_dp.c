/* test_tpu_dp.c — data parallel on a TPU slice (tpu_dp.c, comm.c's torus):
 * the torus all-reduce against its closed form, three dimensions against
 * two at equal chips and links, the slices Cloud TPU offers and where they
 * wrap around, the refusals (one line naming the key), and the step: one
 * cross-replica sum after the backward, never faster than the compute or
 * the collective alone, scaling efficiency at most 1. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "comm.h"
#include "predict.h"
#include "scenario.h"
#include "test_util.h"
#include "tpu.h"
#include "workload.h"

/* comm.c's stated constants: the share of a link a collective reaches,
 * and a hop's latency (tpu_dp.c) */
#define EFF 0.74
#define HOP 1e-6

static xs_topo slice(int n, int per_chip, int d0, int d1, int d2, int wrap, double link)
{
    xs_topo t;
    memset(&t, 0, sizeof t);
    t.n = n;
    t.per_node = n;
    t.nodes = 1;
    t.ici = 1;
    t.ndims = d2 > 1 ? 3 : 2;
    t.combined = 1;
    t.per_chip = per_chip;
    t.dims[0] = d0;
    t.dims[1] = d1;
    t.dims[2] = d2;
    for (int i = 0; i < 3; i++)
        t.wrap[i] = wrap;
    t.intra_gbs = link;
    t.hop_us = 1;
    return t;
}

/* For D dimensions of d chips (n = d^D), each dimension's links carry
 * (n - 1)/n S / D a phase, at twice a link's one-way rate round a ring and
 * once along a line; a phase's data travel d/2 hops a ring dimension, d - 1
 * a line; an all-reduce is two phases. v2/v3's core pair adds, a phase,
 * half the buffer at one link's rate and one hop. */
static void torus_allreduce_should_match_its_closed_form(void)
{
    const struct {
        int d, D, wrap, per_chip;
    } c[] = {{4, 3, 1, 1}, {16, 3, 1, 1}, {16, 2, 1, 1}, {2, 3, 0, 1}, {2, 2, 0, 1},
             {4, 2, 0, 1}, {8, 1, 1, 1}, {2, 2, 0, 2}, {32, 2, 1, 2}};
    const double W = 45e9;
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        int dims[3] = {1, 1, 1}, chips = 1;
        for (int i = 0; i < c[k].D; i++) {
            dims[i] = c[k].d;
            chips *= c[k].d;
        }
        xs_topo t = slice(chips * c[k].per_chip, c[k].per_chip, dims[0], dims[1], dims[2],
                          c[k].wrap, W / 1e9);
        for (double S = 1e3; S < 1e10; S *= 10) {
            double n = chips, rate = W * EFF * (c[k].wrap ? 2 : 1);
            double hops = c[k].D * (c[k].wrap ? c[k].d / 2 : c[k].d - 1);
            double phase = (n - 1) / n * S / (c[k].D * rate) + hops * HOP;
            if (c[k].per_chip == 2)
                phase += 0.5 * S / (W * EFF) + HOP;
            double got = xs_comm_time(&t, XS_COLL_ALLREDUCE, XS_ALGO_TORUS, S);
            CU_ASSERT_DOUBLE_EQUAL(got, 2 * phase, 1e-12 + 1e-9 * phase);
            CU_ASSERT_DOUBLE_EQUAL(xs_comm_time(&t, XS_COLL_REDUCE_SCATTER, XS_ALGO_TORUS, S),
                                   phase, 1e-12 + 1e-9 * phase);
            CU_ASSERT_DOUBLE_EQUAL(xs_comm_time(&t, XS_COLL_ALLGATHER, XS_ALGO_TORUS, S), phase,
                                   1e-12 + 1e-9 * phase);
            /* NCCL's algorithms do not run on ICI; the best is the torus */
            CU_ASSERT(isinf(xs_comm_time(&t, XS_COLL_ALLREDUCE, XS_ALGO_RING, S)));
            int algo = -1;
            CU_ASSERT_DOUBLE_EQUAL(xs_comm_best(&t, XS_COLL_ALLREDUCE, S, &algo), got, 0);
            CU_ASSERT_EQUAL(algo, XS_ALGO_TORUS);
        }
    }
    /* unequal sides: the busiest dimension sets the time. 2x2x4 lines:
     * the side of 4 carries 3/4 S/3 first, 3/4 S/6 second, 3/4 S/12 last */
    xs_topo t = slice(16, 1, 2, 2, 4, 0, 45);
    double S = 1e9, load = 0.75 * S / 3 * (1 + 0.5 + 0.25);
    double want = 2 * (load / (45e9 * EFF) + (1 + 1 + 3) * HOP);
    CU_ASSERT_DOUBLE_EQUAL(xs_comm_time(&t, XS_COLL_ALLREDUCE, XS_ALGO_TORUS, S), want,
                           1e-9 * want);
    /* one device: nothing to do */
    xs_topo one = slice(1, 1, 1, 1, 1, 0, 45);
    CU_ASSERT_EQUAL(xs_comm_best(&one, XS_COLL_ALLREDUCE, 1e9, NULL), 0);
}

/* At equal chips and equal links, three dimensions carry the buffer on
 * three pairs of links where two carry it on two: 4x4x4 against 8x8 and
 * 16x16x16 against 64x64, rings or lines alike; and through the device
 * files, a v4 cube against the same chip wired as an 8x8 2D torus. */
static void three_dimensions_should_beat_two_at_equal_chips(void)
{
    for (int wrap = 0; wrap <= 1; wrap++) {
        xs_topo c3 = slice(64, 1, 4, 4, 4, wrap, 45), c2 = slice(64, 1, 8, 8, 1, wrap, 45);
        xs_topo b3 = slice(4096, 1, 16, 16, 16, wrap, 45), b2 = slice(4096, 1, 64, 64, 1, wrap, 45);
        for (double S = 1e6; S < 1e10; S *= 10) {
            CU_ASSERT(xs_comm_best(&c3, XS_COLL_ALLREDUCE, S, NULL) <
                      xs_comm_best(&c2, XS_COLL_ALLREDUCE, S, NULL));
            CU_ASSERT(xs_comm_best(&b3, XS_COLL_ALLREDUCE, S, NULL) <
                      xs_comm_best(&b2, XS_COLL_ALLREDUCE, S, NULL));
        }
        /* large buffers: the bandwidth term alone, 2/3 of the 2D time */
        double r = xs_comm_best(&b3, XS_COLL_ALLREDUCE, 1e12, NULL) /
                   xs_comm_best(&b2, XS_COLL_ALLREDUCE, 1e12, NULL);
        CU_ASSERT_DOUBLE_EQUAL(r, 2.0 / 3, 1e-3);
    }
    xs_device v4 = tu_device("tpu-v4"), flat = v4;
    snprintf(xs_tpu_of(&flat)->topology, sizeof xs_tpu_of(&flat)->topology, "2d-torus");
    xs_tpu_of(&flat)->pod[0] = xs_tpu_of(&flat)->pod[1] = 8;
    xs_tpu_of(&flat)->pod[2] = 1;
    xs_scenario s;
    xs_error err;
    const char *sets[] = {"cluster.devices=64"};
    CU_ASSERT_EQUAL_FATAL(xs_scn_open("bert-base-squad", sets, 1, &s, &err), XS_OK);
    xs_topo t3, t2;
    CU_ASSERT_EQUAL_FATAL(xs_topo_of(&v4, &s, &t3, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_topo_of(&flat, &s, &t2, &err), XS_OK);
    CU_ASSERT(t3.wrap[0] && t3.wrap[1] && t3.wrap[2] && t2.wrap[0] && t2.wrap[1]);
    CU_ASSERT_EQUAL(t2.dims[0] * t2.dims[1], 64);
    CU_ASSERT(xs_comm_best(&t3, XS_COLL_ALLREDUCE, 1.34e9, NULL) <
              xs_comm_best(&t2, XS_COLL_ALLREDUCE, 1.34e9, NULL));
}

static int topo_for(const char *dev, const char *const *sets, int n, xs_topo *t, xs_error *err)
{
    xs_scenario s;
    int rc = xs_scn_open("bert-base-squad", sets, n, &s, err);
    if (rc)
        return rc;
    xs_device d = tu_device(dev);
    return xs_topo_of(&d, &s, t, err);
}

/* Cloud TPU's accelerator types: the slice's name, its sides (shortest
 * first) and where it wraps around. */
static void slices_should_have_cloud_tpu_shapes(void)
{
    const struct {
        const char *dev, *devices, *name;
        int per_chip, dims[3], wrap[3];
    } c[] = {
        {"tpu-v3", "cluster.devices=8", "v3-8", 2, {2, 2, 1}, {0, 0, 0}},
        {"tpu-v3", "cluster.devices=64", "v3-64", 2, {4, 8, 1}, {0, 0, 0}},
        {"tpu-v3", "cluster.devices=32", "v3-32", 2, {4, 4, 1}, {0, 0, 0}},
        {"tpu-v2", "cluster.devices=256", "v2-256", 2, {8, 16, 1}, {0, 1, 0}},
        {"tpu-v3", "cluster.devices=2048", "v3-2048", 2, {32, 32, 1}, {1, 1, 0}},
        {"tpu-v2", "cluster.devices=512", "v2-512", 2, {16, 16, 1}, {1, 1, 0}},
        {"tpu-v4", "cluster.devices=4", "v4-8", 1, {2, 2, 1}, {0, 0, 0}},
        {"tpu-v4", "cluster.devices=16", "v4-32", 1, {2, 2, 4}, {0, 0, 0}},
        {"tpu-v4", "cluster.devices=64", "v4-128", 1, {4, 4, 4}, {1, 1, 1}},
        {"tpu-v4", "cluster.devices=128", "v4-256", 1, {4, 4, 8}, {1, 1, 1}},
        {"tpu-v5e", "cluster.devices=8", "v5litepod-8", 1, {2, 4, 1}, {0, 0, 0}},
        {"tpu-v5e", "cluster.devices=128", "v5litepod-128", 1, {8, 16, 1}, {0, 1, 0}},
        {"tpu-v5e", "cluster.devices=256", "v5litepod-256", 1, {16, 16, 1}, {1, 1, 0}},
        {"tpu-v5p", "cluster.devices=4096", "v5p-8192", 1, {16, 16, 16}, {1, 1, 1}},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        const char *sets[] = {c[k].devices};
        xs_topo t;
        xs_error err;
        int rc = topo_for(c[k].dev, sets, 1, &t, &err);
        if (rc)
            fprintf(stderr, "\n%s %s: %s\n", c[k].dev, c[k].devices, err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
        CU_ASSERT_STRING_EQUAL(t.slice, c[k].name);
        CU_ASSERT(t.ici && t.combined);
        CU_ASSERT_EQUAL(t.per_chip, c[k].per_chip);
        for (int i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(t.dims[i], c[k].dims[i]);
            CU_ASSERT_EQUAL(t.wrap[i], c[k].wrap[i]);
        }
    }
    xs_topo t;
    xs_error err;
    const char *v5p[] = {"cluster.devices=4"};
    CU_ASSERT_EQUAL(topo_for("tpu-v5p", v5p, 1, &t, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(t.intra_gbs, 100, 1e-12); /* the device file's link */
}

/* What cannot be a slice, or is a GPU cluster's key: one line naming the
 * key and the device. */
static void impossible_slices_should_be_refused_in_one_line(void)
{
    const struct {
        const char *dev, *sets[2], *part;
    } c[] = {
        {"tpu-v4", {"cluster.devices=6"}, "6 is 6 chips, no TPU v4 slice: use 4, 8, 16, 32"},
        {"tpu-v4", {"cluster.devices=2"}, "cluster.devices 2 is 2 chips"},
        {"tpu-v4", {"cluster.devices=8192"}, "... 4096 devices (1 a chip; pod 16x16x16)"},
        {"tpu-v5p", {"cluster.devices=8192"}, "... 4096 devices (1 a chip; pod 16x20x28)"},
        {"tpu-v5e", {"cluster.devices=512"}, "... 256 devices (1 a chip; pod 16x16)"},
        {"tpu-v3", {"cluster.devices=3"}, "use a multiple of 2"},
        {"tpu-v3", {"cluster.devices=2"}, "is 1 chip, no TPU v3 slice"},
        {"tpu-v3", {"cluster.devices=24"}, "is 12 chips"},
        /* offered slices only: no v3-16, no v2-16 or v2-64 */
        {"tpu-v3", {"cluster.devices=16"}, "use 8, 32, 64, 128, 256, 512 ... 2048 devices"},
        {"tpu-v2", {"cluster.devices=64"}, "use 8, 32, 128, 256, 512 devices (2 a chip"},
        {"tpu-v4", {"cluster.devices=8", "cluster.sharding=zero1"}, "cluster.sharding zero1"},
        {"tpu-v4", {"cluster.devices=8", "cluster.sharding=zero2"}, "cluster.sharding zero2"},
        {"tpu-v4", {"cluster.devices=8", "cluster.interconnect=pcie"}, "cluster.interconnect pcie"},
        {"tpu-v4", {"cluster.devices=8", "cluster.per_node=4"}, "cluster.per_node 4"},
        {"tpu-v4", {"cluster.devices=8", "cluster.network_gbs=25"}, "cluster.network_gbs"},
        {"xeon-amx-2c", {"cluster.devices=4"}, "needs GPUs or TPUs"},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        xs_topo t;
        xs_error err;
        int n = c[k].sets[1] ? 2 : 1;
        int rc = topo_for(c[k].dev, c[k].sets, n, &t, &err);
        CU_ASSERT_NOT_EQUAL(rc, XS_OK);
        int ok = rc && strstr(err.msg, c[k].part) && strstr(err.msg, c[k].dev) &&
                 tu_lines(err.msg) == 0;
        if (!ok)
            fprintf(stderr, "\n%s %s: '%s' lacks '%s'\n", c[k].dev, c[k].sets[0],
                    rc ? err.msg : "(accepted)", c[k].part);
        CU_ASSERT(ok);
    }
}

/* XLA's step: the gradients in one cross-replica sum after the backward,
 * wholly exposed, nothing sharing the chip; DDP's copies gone, and its
 * bucket memory; the step never faster than the compute or the collective
 * alone nor than one device's step; scaling efficiency in (0, 1]. */
static void tpu_step_should_add_one_exposed_all_reduce(void)
{
    const struct {
        const char *dev, *id, *sets[3];
        int n;
    } c[] = {
        {"tpu-v3", "bert-large-squad", {"cluster.devices=8", "train.batch=3"}, 2},
        {"tpu-v4", "bert-large-squad", {"cluster.devices=4"}, 1},
        {"tpu-v4", "gpt2-medium-finetune", {"cluster.devices=64", "train.grad_accum=2"}, 2},
        {"tpu-v5e", "bert-base-squad", {"cluster.devices=16"}, 1},
        {"tpu-v5p", "llama2-7b-lora", {"cluster.devices=16", "train.batch=2"}, 2},
        {"tpu-v2", "distilbert-sst2", {"cluster.devices=32"}, 1},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build(c[k].id, c[k].sets, c[k].n, &s, &wl), XS_OK);
        xs_device d = tu_device(c[k].dev);
        xs_prediction p, p1;
        xs_error err;
        int rc = xs_predict(&d, &s, &wl, &p, &err);
        if (rc)
            fprintf(stderr, "\n%s on %s: %s\n", c[k].id, c[k].dev, err.msg);
        CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
        /* the collective: one all-reduce of every gradient byte */
        double bytes = 0;
        for (size_t i = 0; i < wl.n; i++) {
            if (wl.ops[i].kind == XS_OP_COMM)
                bytes += wl.ops[i].bytes;
            if (wl.ops[i].dp_wrapper)
                CU_ASSERT_EQUAL(p.est[i].time_s, 0);
        }
        CU_ASSERT(bytes > 0);
        double one = xs_comm_time(&p.topo, XS_COLL_ALLREDUCE, XS_ALGO_TORUS, bytes);
        CU_ASSERT_DOUBLE_EQUAL(p.comm_s, one, 1e-9 * one);
        CU_ASSERT_DOUBLE_EQUAL(p.exposed_tail_s, p.comm_s, 1e-9 * p.comm_s);
        CU_ASSERT_EQUAL(p.contention_s, 0);
        CU_ASSERT_EQUAL(p.serial_s, 0);
        double compute = tu_compute_sum(&wl, &p);
        CU_ASSERT_DOUBLE_EQUAL(p.device_time_s, compute + p.comm_s, 1e-9 * p.device_time_s);
        CU_ASSERT(p.step_time_s >= compute && p.step_time_s >= p.comm_s);
        /* against the same per-device step on one device */
        xs_scenario s1 = s;
        s1.devices = 1;
        xs_workload w1;
        CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s1, &w1, &err), XS_OK);
        CU_ASSERT_EQUAL_FATAL(xs_predict(&d, &s1, &w1, &p1, &err), XS_OK);
        CU_ASSERT(p.step_time_s >= p1.step_time_s);
        CU_ASSERT(p.scaling_efficiency > 0 && p.scaling_efficiency <= 1);
        CU_ASSERT_DOUBLE_EQUAL(p.scaling_efficiency,
                               p.samples_per_s / (s.devices * p1.samples_per_s), 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(p.mem.total, p1.mem.total, 1e-9 * p1.mem.total);
        /* chips x the chip-hour: devices x the device-hour */
        CU_ASSERT_DOUBLE_EQUAL(p.run_cost_usd,
                               p.run_time_s / 3600 * (double)s.devices * d.price_usd_per_hour,
                               1e-9 * p.run_cost_usd);
        xs_prediction_free(&p1);
        xs_wl_free(&w1);
        xs_prediction_free(&p);
        xs_wl_free(&wl);
    }
}

/* Over every generation and slice size, more devices never raise one
 * device's throughput above running alone. */
static void scaling_efficiency_should_not_exceed_one(void)
{
    const char *devs[] = {"tpu-v2", "tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p"};
    for (size_t k = 0; k < sizeof devs / sizeof devs[0]; k++) {
        xs_device d = tu_device(devs[k]);
        int per = (int)(xs_tpu_of(&d)->cores_per_chip / xs_tpu_of(&d)->cores_per_device);
        for (int chips = 4; chips <= 256; chips *= 4) {
            char n[48];
            snprintf(n, sizeof n, "cluster.devices=%d", chips * per);
            const char *sets[] = {n, "train.batch=4"};
            xs_scenario s;
            xs_workload wl;
            CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-squad", sets, 2, &s, &wl), XS_OK);
            xs_prediction p;
            xs_error err;
            int rc = xs_predict(&d, &s, &wl, &p, &err);
            if (rc)
                fprintf(stderr, "\n%s %s: %s\n", devs[k], n, err.msg);
            CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
            CU_ASSERT(p.scaling_efficiency > 0.5 && p.scaling_efficiency <= 1);
            xs_prediction_free(&p);
            xs_wl_free(&wl);
        }
    }
}

/* predict shows the slice and the sum; a bad slice is one line. */
static void predict_should_show_the_slice(void)
{
    tu_result r = tu_run("predict -d tpu-v4 -s bert-base-squad --set cluster.devices=64 --summary");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "cluster   64 devices = v4-128 slice, 64 chips, ICI "
                                         "torus 4x4x4, every side wraps around"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "in one all-reduce after the backward"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\ncomm      "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "scaling efficiency"));
    tu_run_free(&r);
    r = tu_run("predict -d tpu-v3 -s bert-base-squad --set cluster.devices=8 --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"slice\":\t\"v3-8\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"ddp\":\t\"xla\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"devices_per_chip\":\t2"));
    tu_run_free(&r);
    r = tu_run("predict -d tpu-v4 --set cluster.devices=12");
    CU_ASSERT_EQUAL(r.status, 1);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "xpusim: error: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "cluster.devices 12 is 12 chips"));
    CU_ASSERT_EQUAL(r.out[0], '\0');
    tu_run_free(&r);
}

int tu_add_tpu_dp_suite(void)
{
    CU_pSuite s = CU_add_suite("tpu_dp", NULL, NULL);
    return !s ||
           !CU_add_test(s, "torus_allreduce_should_match_its_closed_form",
                        torus_allreduce_should_match_its_closed_form) ||
           !CU_add_test(s, "three_dimensions_should_beat_two_at_equal_chips",
                        three_dimensions_should_beat_two_at_equal_chips) ||
           !CU_add_test(s, "slices_should_have_cloud_tpu_shapes",
                        slices_should_have_cloud_tpu_shapes) ||
           !CU_add_test(s, "impossible_slices_should_be_refused_in_one_line",
                        impossible_slices_should_be_refused_in_one_line) ||
           !CU_add_test(s, "tpu_step_should_add_one_exposed_all_reduce",
                        tpu_step_should_add_one_exposed_all_reduce) ||
           !CU_add_test(s, "scaling_efficiency_should_not_exceed_one",
                        scaling_efficiency_should_not_exceed_one) ||
           !CU_add_test(s, "predict_should_show_the_slice", predict_should_show_the_slice);
}
