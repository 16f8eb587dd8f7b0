/* test_sweep.c — the grid (--vary parsing, ranges, order), its evaluation
 * (one row a point and device, reasons, thread count), and the ranking
 * arithmetic (weights, normalisation, Pareto, filters) on hand-made sets. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <omp.h>

#include "job.h"
#include "rank.h"
#include "sweep.h"
#include "test_util.h"

static void weights_should_parse_any_subset_and_refuse_bad_parts(void)
{
    xs_weights w;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_weights_parse("time=1,cost=2", &w, &err), XS_OK);
    CU_ASSERT(w.time == 1 && w.energy == 0 && w.cost == 2 && w.util == 0);
    CU_ASSERT_EQUAL_FATAL(xs_weights_parse("util=0.5,energy=3,time=0,cost=1e3", &w, &err), XS_OK);
    CU_ASSERT(w.time == 0 && w.energy == 3 && w.cost == 1000 && w.util == 0.5);
    w = XS_WEIGHTS_DEFAULT;
    CU_ASSERT(w.time == 1 && w.energy == 0 && w.cost == 1 && w.util == 0);
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "empty"},
        {"speed=1", "unknown metric 'speed'"},
        {"time=1,time=2", "'time' given twice"},
        {"time=-1", "a number in [0, 1e6]"},
        {"time=", "a number in [0, 1e6]"},
        {"time", "a number in [0, 1e6]"},
        {"time=1x", "a number in [0, 1e6]"},
        {"time=nan", "a number in [0, 1e6]"},
        {"time=inf", "a number in [0, 1e6]"},
        {"time=2e6", "a number in [0, 1e6]"},
        {"time=1,", "unknown metric ''"},
        {"time=0,cost=0", "every weight is 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_EQUAL(xs_weights_parse(bad[i].text, &w, &err), XS_EARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--weights"));
        if (!strstr(err.msg, bad[i].says))
            fprintf(stderr, "\n--weights '%s': %s\n", bad[i].text, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].says));
    }
}

/* a: fast, dear, well used; b: twice as slow, half the price and energy,
 * half the MFU; c cannot start */
static void set_abc(xs_rank_item *it)
{
    it[0] = (xs_rank_item){100, 2, 10, 0.5, 1, -1, -1};
    it[1] = (xs_rank_item){200, 1, 5, 0.25, 1, -1, -1};
    it[2] = (xs_rank_item){50, 0.5, 1, 0.9, 0, -1, -1};
}

static void score_should_be_the_weighted_mean_of_best_over_value(void)
{
    xs_rank_item it[3];
    static const struct {
        xs_weights w;
        double a, b;
    } cases[] = {
        {{1, 0, 0, 0}, 1, 0.5},       /* time: b takes twice as long */
        {{0, 0, 1, 0}, 0.5, 1},       /* cost: a costs twice as much */
        {{0, 1, 0, 0}, 0.5, 1},       /* energy */
        {{0, 0, 0, 1}, 1, 0.5},       /* util: value / best */
        {{1, 0, 1, 0}, 0.75, 0.75},   /* the default: a tie */
        {{3, 0, 0, 1}, 1, 0.5},       /* (3 * 0.5 + 1 * 0.5) / 4 */
        {{1, 0, 3, 0}, 0.625, 0.875}, /* (1 + 3 * 0.5) / 4, (0.5 + 3) / 4 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_abc(it);
        xs_rank_score(it, 3, &cases[i].w);
        CU_ASSERT_DOUBLE_EQUAL(it[0].score, cases[i].a, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(it[1].score, cases[i].b, 1e-12);
        CU_ASSERT_EQUAL(it[2].score, 0); /* not a candidate: not scored, not the best */
    }
    /* a metric every candidate has at 0 (a free device) counts as 1 for all */
    set_abc(it);
    it[0].cost_usd = it[1].cost_usd = 0;
    xs_rank_score(it, 3, &(xs_weights){0, 0, 1, 0});
    CU_ASSERT_DOUBLE_EQUAL(it[0].score, 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(it[1].score, 1, 1e-12);
    /* one free run is the best; the priced ones get 0 on cost */
    set_abc(it);
    it[1].cost_usd = 0;
    xs_rank_score(it, 3, &(xs_weights){1, 0, 1, 0});
    CU_ASSERT_DOUBLE_EQUAL(it[0].score, 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(it[1].score, 0.75, 1e-12);
}

static void pareto_should_keep_ties_and_drop_the_dominated(void)
{
    /* (run time, cost) */
    static const struct {
        double t, c;
        int candidate, pareto;
    } set[] = {
        {1, 10, 1, 1}, /* the fastest */
        {2, 5, 1, 1},
        {3, 5, 1, 0},  /* as cheap as the one above, slower */
        {2, 5, 1, 1},  /* equal to the second on both: both stay */
        {4, 1, 1, 1},  /* the cheapest */
        {1, 12, 1, 0}, /* as fast as the first, dearer */
        {5, 1, 1, 0},  /* as cheap as the cheapest, slower */
        {0.5, 0.5, 0, 0}, /* would dominate all, but cannot start */
        {1.5, 10, 1, 0},  /* dominated by the first: slower, as dear */
        {3.5, 4.9, 1, 1}, /* between the two: not beaten on both */
    };
    size_t n = sizeof set / sizeof set[0];
    xs_rank_item it[sizeof set / sizeof set[0]];
    for (size_t i = 0; i < n; i++)
        it[i] = (xs_rank_item){set[i].t, 1, set[i].c, 0.3, set[i].candidate, 0, -1};
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_rank_pareto(it, n, &err), XS_OK);
    for (size_t i = 0; i < n; i++) {
        if (it[i].pareto != set[i].pareto)
            fprintf(stderr, "\nrow %zu (%g, %g): pareto %d\n", i, set[i].t, set[i].c, it[i].pareto);
        CU_ASSERT_EQUAL(it[i].pareto, set[i].pareto);
    }
    /* a brute-force check on a larger pseudo-random set with many ties */
    enum { N = 400 };
    static xs_rank_item r[N];
    unsigned seed = 12345;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        double t = (double)(seed >> 16 & 31);
        seed = seed * 1103515245u + 12345u;
        double c = (double)(seed >> 16 & 31);
        r[i] = (xs_rank_item){t, 0, c, 0, (seed >> 8 & 7) != 0, 0, -1};
    }
    CU_ASSERT_EQUAL_FATAL(xs_rank_pareto(r, N, &err), XS_OK);
    size_t marked = 0;
    for (size_t i = 0; i < N; i++) {
        int dominated = 0;
        for (size_t j = 0; j < N && !dominated; j++)
            dominated = r[j].candidate && r[j].run_time_s <= r[i].run_time_s &&
                        r[j].cost_usd <= r[i].cost_usd &&
                        (r[j].run_time_s < r[i].run_time_s || r[j].cost_usd < r[i].cost_usd);
        CU_ASSERT_EQUAL(r[i].pareto, r[i].candidate && !dominated);
        marked += (size_t)r[i].pareto;
    }
    CU_ASSERT(marked >= 2 && marked < N / 4);
}

static void filters_should_keep_runs_at_the_limit_and_drop_those_over(void)
{
    xs_rank_item it = {7200, 1, 10, 0.3, 1, 0, 0}; /* 2 h, $10 */
    CU_ASSERT(xs_rank_within(&it, 0, 0));
    CU_ASSERT(xs_rank_within(&it, 10, 0));
    CU_ASSERT(!xs_rank_within(&it, 9.99, 0));
    CU_ASSERT(xs_rank_within(&it, 0, 2));
    CU_ASSERT(!xs_rank_within(&it, 0, 1.99));
    CU_ASSERT(xs_rank_within(&it, 10, 2));
    CU_ASSERT(!xs_rank_within(&it, 100, 1.5));
    CU_ASSERT(!xs_rank_within(&it, 5, 100));
}

static const char *value(const xs_sweep_grid *g, size_t p, size_t a)
{
    static char buf[XS_SWEEP_VALUE_MAX + 1];
    return xs_sweep_value(g, p, a, buf, sizeof buf);
}

static void ranges_should_expand_in_order_with_the_last_key_fastest(void)
{
    xs_sweep_grid g;
    xs_error err;
    xs_sweep_init(&g);
    CU_ASSERT_EQUAL(g.points, 1);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.batch=8:64:8", &err), XS_OK);
    CU_ASSERT_EQUAL(g.points, 8);
    CU_ASSERT_STRING_EQUAL(value(&g, 0, 0), "8");
    CU_ASSERT_STRING_EQUAL(value(&g, 7, 0), "64");
    xs_sweep_free(&g);

    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.batch=1,2,4:7,9:10:5", &err), XS_OK);
    static const char *want[] = {"1", "2", "4", "5", "6", "7", "9"}; /* 9:10:5 is 9 alone */
    CU_ASSERT_EQUAL_FATAL(g.points, 7);
    for (size_t i = 0; i < 7; i++)
        CU_ASSERT_STRING_EQUAL(value(&g, i, 0), want[i]);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.precision=fp32,amp_fp16", &err), XS_OK);
    CU_ASSERT_EQUAL(g.points, 14);
    /* the first key slowest */
    CU_ASSERT_STRING_EQUAL(value(&g, 0, 0), "1");
    CU_ASSERT_STRING_EQUAL(value(&g, 0, 1), "fp32");
    CU_ASSERT_STRING_EQUAL(value(&g, 1, 0), "1");
    CU_ASSERT_STRING_EQUAL(value(&g, 1, 1), "amp_fp16");
    CU_ASSERT_STRING_EQUAL(value(&g, 2, 0), "2");
    CU_ASSERT_STRING_EQUAL(value(&g, 13, 0), "9");
    CU_ASSERT_STRING_EQUAL(value(&g, 13, 1), "amp_fp16");
    /* A:A is one value */
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.grad_accum=3:3", &err), XS_OK);
    CU_ASSERT_EQUAL(g.points, 14);
    xs_sweep_free(&g);
}

static void bad_vary_values_should_be_refused_by_name(void)
{
    static const struct {
        const char *spec, *says;
    } bad[] = {
        {"train.batch", "expected KEY=V1,V2"},
        {"=8", "expected KEY=V1,V2"},
        {"train.batch=64:8", "range '64:8' is empty or goes backwards"},
        {"train.batch=8:64:0", "range '8:64:0' is empty or goes backwards"},
        {"train.batch=8:64:-8", "range '8:64:-8' is empty or goes backwards"},
        {"train.batch=8:x", "'8:x' is not a range A:B[:STEP] of integers"},
        {"train.batch=8:", "'8:' is not a range"},
        {"train.batch=:8", "':8' is not a range"},
        {"train.batch=1:2:3:4", "'1:2:3:4' is not a range"},
        {"train.batch=8.5:16", "not a range"},
        {"train.batch=8,,16", "an empty value"},
        {"train.batch=", "an empty value"},
        {"train.batch=0", "--vary train.batch=0: "},       /* --set's range check */
        {"train.batch=0:8", "--vary train.batch=0: "},     /* a range's ends are checked */
        {"train.batch=8:999999999999", "--vary train.batch=999999999999: "},
        {"train.batch=8,abc", "--vary train.batch=abc: "},
        {"train.precision=fp32,fp64", "--vary train.precision=fp64: "},
        {"train.precision=fp32:fp16", "--vary train.precision=fp32:fp16: "}, /* no range */
        {"train.bacth=8", "did you mean 'train.batch'"},
        {"id=x", "unknown key 'id'"},
        {"data.samples=1:20000000", "more than 10000000 points"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        xs_sweep_grid g;
        xs_error err;
        xs_sweep_init(&g);
        CU_ASSERT_NOT_EQUAL(xs_sweep_add(&g, bad[i].spec, &err), XS_OK);
        CU_ASSERT_EQUAL(g.naxes, 0);
        CU_ASSERT_EQUAL(g.points, 1);
        if (!strstr(err.msg, bad[i].says))
            fprintf(stderr, "\n--vary %s: %s\n", bad[i].spec, err.msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].says));
        CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
        xs_sweep_free(&g);
    }
    /* a key varied twice; a product over the limit; a key both fixed and varied */
    xs_sweep_grid g;
    xs_error err;
    xs_sweep_init(&g);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.batch=1:4000", &err), XS_OK);
    CU_ASSERT_NOT_EQUAL(xs_sweep_add(&g, "train.batch=8", &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'train.batch' is varied twice"));
    CU_ASSERT_NOT_EQUAL(xs_sweep_add(&g, "train.seq=1:4000", &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than 10000000 points"));
    CU_ASSERT_EQUAL(g.points, 4000);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.seq=1:2500", &err), XS_OK);
    CU_ASSERT_EQUAL(g.points, 10000000);
    CU_ASSERT_EQUAL(xs_sweep_check(&g, 1, NULL, 0, &err), XS_OK);
    CU_ASSERT_NOT_EQUAL(xs_sweep_check(&g, 2, NULL, 0, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "10000000 points x 2 devices"));
    const char *sets[] = {"train.precision=fp32", "train.seq=128"};
    CU_ASSERT_NOT_EQUAL(xs_sweep_check(&g, 1, sets, 2, &err), XS_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--set train.seq=128 and --vary train.seq=1:2500"));
    xs_sweep_free(&g);
}

static int same_rows(const xs_sweep_row *a, const xs_sweep_row *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xs_sweep_row x = a[i], y = b[i];
        int reasons = (!x.reason && !y.reason) ||
                      (x.reason && y.reason && strcmp(x.reason, y.reason) == 0);
        x.reason = y.reason = NULL;
        if (!reasons || memcmp(&x, &y, sizeof x) != 0)
            return 0;
    }
    return 1;
}

static void grid_should_give_one_row_a_point_and_device_with_reasons(void)
{
    xs_device devs[2] = {tu_device("t4"), tu_device("xeon-amx-2c")};
    xs_sweep_grid g;
    xs_error err;
    xs_sweep_init(&g);
    /* batch 128 at seq 384 does not fit a T4's 15 GB; seq 1024 is over
     * BERT's 512 positions; the CPU has no fused attention kernel */
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.seq=128,1024", &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.batch=8,128", &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.attention=unfused,flash", &err), XS_OK);
    const char *sets[] = {"data.samples=1000"};
    xs_sweep_spec sp = {"bert-base-squad", sets, 1, &g, devs, 2, 1, NULL, NULL};
    size_t n = g.points * 2;
    CU_ASSERT_EQUAL_FATAL(n, 16);
    xs_sweep_row *one = calloc(n, sizeof *one), *two = calloc(n, sizeof *two);
    omp_set_num_threads(1);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_eval(&sp, 0, g.points, one, &err), XS_OK);
    omp_set_num_threads(2);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_eval(&sp, 0, g.points, two, &err), XS_OK);
    CU_ASSERT(same_rows(one, two, n));
    for (size_t i = 0; i < n; i++) {
        const xs_sweep_row *r = &one[i];
        CU_ASSERT_EQUAL(r->point, i / 2);
        CU_ASSERT_EQUAL(r->dev, i % 2);
        char seq[16], batch[16], attn[16];
        xs_sweep_value(&g, r->point, 0, seq, sizeof seq);
        xs_sweep_value(&g, r->point, 1, batch, sizeof batch);
        xs_sweep_value(&g, r->point, 2, attn, sizeof attn);
        int cpu = r->dev == 1;
        if (strcmp(seq, "1024") == 0) {
            CU_ASSERT(!r->predicted && r->reason &&
                      strstr(r->reason, "--vary train.seq=1024: ") == r->reason);
        } else if (cpu && strcmp(attn, "flash") == 0) {
            CU_ASSERT(!r->predicted && r->reason && strstr(r->reason, "attn.flash"));
        } else {
            CU_ASSERT_FATAL(r->predicted);
            CU_ASSERT(r->step_time_s > 0 && r->samples_per_s > 0 && r->memory_gb > 0);
            CU_ASSERT_EQUAL(r->fits, r->memory_gb <= r->capacity_gb);
            CU_ASSERT_EQUAL(r->fits, r->reason == NULL);
            CU_ASSERT_EQUAL(r->run_cost_usd > 0, r->fits);
            if (!r->fits)
                CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "does not fit"));
        }
    }
    /* a point is predicted exactly as a single prediction makes it */
    xs_job j;
    xs_job_init(&j);
    const char *pt[] = {"data.samples=1000", "train.seq=128", "train.batch=8",
                        "train.attention=flash"};
    CU_ASSERT_EQUAL_FATAL(xs_job_scenario(&j, "bert-base-squad", pt, 4, &err), XS_OK);
    j.dev = devs[0];
    CU_ASSERT_EQUAL_FATAL(xs_job_predict(&j, 1, &err), XS_OK);
    const xs_sweep_row *r = &one[1 * 2 + 0]; /* point 1: 128, 8, flash; the T4 */
    CU_ASSERT_EQUAL(r->step_time_s, j.p.step_time_s);
    CU_ASSERT_EQUAL(r->run_cost_usd, j.p.run_cost_usd);
    CU_ASSERT_EQUAL(r->run_cost_high_usd, j.p.run_cost_high_usd);
    CU_ASSERT_EQUAL(r->mfu, j.p.mfu);
    xs_job_free(&j);
    /* a chunk of the grid is the same rows as the whole */
    xs_sweep_row part[6];
    CU_ASSERT_EQUAL_FATAL(xs_sweep_eval(&sp, 5, 3, part, &err), XS_OK);
    CU_ASSERT(same_rows(part, one + 10, 6));
    xs_sweep_rows_free(part, 6);
    xs_sweep_rows_free(one, n);
    xs_sweep_rows_free(two, n);
    free(one);
    free(two);
    xs_sweep_free(&g);
    omp_set_num_threads(omp_get_num_procs());
}

/* Points that differ only in data.samples and data.epochs share their
 * step (one prediction, each run worked out from it): every row is the
 * one a single prediction of that point gives, the band's costs and the
 * runs whose step count overflows included. */
static void run_keys_should_give_each_point_its_own_prediction(void)
{
    xs_device devs[3] = {tu_device("a100-sxm4-80gb"), tu_device("tpu-v3"),
                         tu_device("xeon-amx-2c")};
    xs_sweep_grid g;
    xs_error err;
    xs_sweep_init(&g);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "train.batch=4,16", &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "data.epochs=1,3", &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_sweep_add(&g, "data.samples=1,777,90001,1000000000000", &err),
                          XS_OK);
    xs_sweep_spec sp = {"bert-base-squad", NULL, 0, &g, devs, 3, 1, NULL, NULL};
    size_t n = g.points * 3;
    xs_sweep_row *rows = calloc(n, sizeof *rows);
    omp_set_num_threads(1); /* one thread walks the points in order: reruns */
    CU_ASSERT_EQUAL_FATAL(xs_sweep_eval(&sp, 0, g.points, rows, &err), XS_OK);
    int compared = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_sweep_row *r = &rows[i];
        char v[3][XS_SWEEP_VALUE_MAX + 1], kv[3][sizeof g.axes[0].key + XS_SWEEP_VALUE_MAX + 2];
        const char *pt[3];
        for (int a = 0; a < 3; a++) {
            xs_sweep_value(&g, r->point, (size_t)a, v[a], sizeof v[a]);
            snprintf(kv[a], sizeof kv[a], "%.100s=%.100s", g.axes[a].key, v[a]);
            pt[a] = kv[a];
        }
        xs_job j;
        xs_job_init(&j);
        int rc = xs_job_scenario(&j, "bert-base-squad", pt, 3, &err);
        if (rc == XS_OK) {
            j.dev = devs[r->dev];
            rc = xs_job_predict(&j, 1, &err);
        }
        CU_ASSERT_EQUAL(rc == XS_OK, r->predicted);
        if (rc == XS_OK && r->predicted) {
            CU_ASSERT_EQUAL(r->steps, j.p.steps);
            CU_ASSERT_EQUAL(r->step_time_s, j.p.step_time_s);
            if (r->fits) {
                CU_ASSERT_EQUAL(r->run_time_s, j.p.run_time_s);
                CU_ASSERT_EQUAL(r->run_energy_kwh, j.p.run_energy_kwh);
                CU_ASSERT_EQUAL(r->run_cost_usd, j.p.run_cost_usd);
                CU_ASSERT_EQUAL(r->run_cost_low_usd, j.p.run_cost_low_usd);
                CU_ASSERT_EQUAL(r->run_cost_high_usd, j.p.run_cost_high_usd);
            }
            compared++;
        } else if (rc != XS_OK && r->reason) {
            CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, strchr(err.msg, ':') ? strchr(err.msg, ':')
                                                                           : err.msg));
        }
        xs_job_free(&j);
    }
    CU_ASSERT(compared >= 30);
    xs_sweep_rows_free(rows, n);
    free(rows);
    xs_sweep_free(&g);
    omp_set_num_threads(omp_get_num_procs());
}

int tu_add_sweep_suite(void)
{
    CU_pSuite s = CU_add_suite("sweep", NULL, NULL);
    return !s ||
           !CU_add_test(s, "run_keys_should_give_each_point_its_own_prediction",
                        run_keys_should_give_each_point_its_own_prediction) ||
           !CU_add_test(s, "weights_should_parse_any_subset_and_refuse_bad_parts",
                        weights_should_parse_any_subset_and_refuse_bad_parts) ||
           !CU_add_test(s, "score_should_be_the_weighted_mean_of_best_over_value",
                        score_should_be_the_weighted_mean_of_best_over_value) ||
           !CU_add_test(s, "pareto_should_keep_ties_and_drop_the_dominated",
                        pareto_should_keep_ties_and_drop_the_dominated) ||
           !CU_add_test(s, "filters_should_keep_runs_at_the_limit_and_drop_those_over",
                        filters_should_keep_runs_at_the_limit_and_drop_those_over) ||
           !CU_add_test(s, "ranges_should_expand_in_order_with_the_last_key_fastest",
                        ranges_should_expand_in_order_with_the_last_key_fastest) ||
           !CU_add_test(s, "bad_vary_values_should_be_refused_by_name",
                        bad_vary_values_should_be_refused_by_name) ||
           !CU_add_test(s, "grid_should_give_one_row_a_point_and_device_with_reasons",
                        grid_should_give_one_row_a_point_and_device_with_reasons);
}
