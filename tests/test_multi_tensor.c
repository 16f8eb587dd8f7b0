/* test_multi_tensor.c — the multi-tensor launch plan of
 * kernels/common/multi_tensor.h, which the CUDA optimizers launch from:
 * the same launch count as the workload model's apex count, every element
 * in exactly one block, no launch past a limit, and the same blocks as a
 * literal transcription of apex's loop at small limits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "../kernels/common/multi_tensor.h"
#include "test_util.h"
#include "workload.h"

static unsigned rng = 777;
static unsigned urand(unsigned n)
{
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) % n;
}

/* Walk a whole plan, asserting the limits and the coverage on the way;
 * returns the launch count (-1 when the plan refused the input). */
static long long walk(const long long *sizes, size_t n, long long chunk, int max_t, int max_b)
{
    xs_mt_plan p = {0};
    if (xs_mt_plan_init(&p, sizes, n, chunk, max_t, max_b) != 0)
        return -1;
    long long *next = calloc(n ? n : 1, sizeof *next); /* next chunk expected per tensor */
    long long *covered = calloc(n ? n : 1, sizeof *covered);
    static xs_mt_launch L;
    long long launches = 0;
    size_t prev_last = 0;
    int ok = 1;
    while (xs_mt_next(&p, &L)) {
        launches++;
        ok &= L.ntensors >= 1 && L.ntensors <= max_t && L.nblocks >= 1 && L.nblocks <= max_b;
        for (int s = 0; s < L.ntensors; s++) {
            ok &= L.tensor[s] < n && sizes[L.tensor[s]] > 0;
            if (s > 0)
                ok &= L.tensor[s] > L.tensor[s - 1]; /* list order, each tensor once */
        }
        /* a launch starts where the last one stopped: the same tensor only
         * when that one was cut */
        if (launches > 1)
            ok &= L.tensor[0] >= prev_last;
        int used[XS_MT_MAX_TENSORS] = {0};
        for (int b = 0; b < L.nblocks; b++) {
            int s = L.block_slot[b];
            ok &= s < L.ntensors;
            if (s >= L.ntensors)
                break;
            used[s] = 1;
            size_t t = L.tensor[s];
            ok &= L.block_chunk[b] == next[t]; /* chunks in order, none twice */
            next[t]++;
            long long first;
            long long span = xs_mt_chunk_span(sizes[t], chunk, L.block_chunk[b], &first);
            ok &= span >= 1 && first == covered[t];
            covered[t] += span;
        }
        for (int s = 0; s < L.ntensors; s++)
            ok &= used[s];
        prev_last = L.tensor[L.ntensors - 1];
    }
    CU_ASSERT_EQUAL(L.nblocks, 0);
    for (size_t t = 0; t < n; t++)
        ok &= covered[t] == sizes[t] && next[t] == (sizes[t] + chunk - 1) / chunk;
    CU_ASSERT_TRUE(ok);
    free(next);
    free(covered);
    return launches;
}

static long long model_launches(const long long *sizes, size_t n, int depth)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = (double)sizes[i];
    long long r = xs_wl_mta_launches(d, n, depth);
    free(d);
    return r;
}

static void plan_should_give_the_workload_models_launch_count(void)
{
    static long long sizes[20000];
    for (int depth = 1; depth <= XS_MT_MAX_DEPTH; depth++) {
        int mt = xs_mt_max_tensors(depth);
        /* Transformers of several widths, cut at odd totals */
        const long long cases[][2] = {{110000000, 768}, {335000000, 1024}, {1300000000, 2048},
                                      {999999, 64},     {3, 0},           {20971521, 0},
                                      {20971520, 0}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            long long n = xs_mt_transformer_sizes(cases[c][0], cases[c][1], sizes, 20000);
            CU_ASSERT_FATAL(n > 0 && n <= 20000);
            CU_ASSERT_EQUAL(walk(sizes, (size_t)n, XS_MT_CHUNK, mt, XS_MT_MAX_BLOCKS),
                            model_launches(sizes, (size_t)n, depth));
        }
        /* random lists with empty tensors anywhere, at the end too, and
         * tensors across several full launches */
        for (int trial = 0; trial < 200; trial++) {
            size_t n = 1 + urand(300);
            for (size_t i = 0; i < n; i++) {
                unsigned kind = urand(8);
                sizes[i] = kind == 0   ? 0
                           : kind == 1 ? (long long)urand(100)
                           : kind == 2 ? 65536LL * (1 + urand(700))
                           : kind == 3 ? 65536LL * (1 + urand(400)) + 1 + urand(65535)
                                       : (long long)urand(3000000);
            }
            CU_ASSERT_EQUAL(walk(sizes, n, XS_MT_CHUNK, mt, XS_MT_MAX_BLOCKS),
                            model_launches(sizes, n, depth));
        }
    }
    long long empty[3] = {0, 0, 0};
    CU_ASSERT_EQUAL(walk(empty, 3, XS_MT_CHUNK, 110, 320), 0);
    CU_ASSERT_EQUAL(model_launches(empty, 3, 1), 0);
}

/* apex's loop as written (csrc/multi_tensor_apply.cuh @ 123854c), with
 * PyTorch's `if (numel == 0) continue`, recording (tensor, chunk) per block
 * and -1 at each launch. */
static size_t apex_blocks(const long long *sizes, size_t n, long long chunk, int max_t, int max_b,
                          long long *out)
{
    size_t k = 0;
    int loc_block = 0, loc_tensor = 0;
    long long slot_tensor[XS_MT_MAX_TENSORS];
    long long pend[XS_MT_MAX_BLOCKS][2];
    size_t last = n;
    for (size_t t = 0; t < n; t++)
        if (sizes[t] > 0)
            last = t;
    for (size_t t = 0; t < n; t++) {
        if (sizes[t] == 0)
            continue;
        slot_tensor[loc_tensor++] = (long long)t;
        long long chunks = (sizes[t] + chunk - 1) / chunk;
        for (long long c = 0; c < chunks; c++) {
            pend[loc_block][0] = slot_tensor[loc_tensor - 1];
            pend[loc_block][1] = c;
            loc_block++;
            int tensors_full = loc_tensor == max_t && c == chunks - 1;
            int blocks_full = loc_block == max_b;
            int last_chunk = t == last && c == chunks - 1;
            if (tensors_full || blocks_full || last_chunk) {
                for (int b = 0; b < loc_block; b++) {
                    out[k++] = pend[b][0];
                    out[k++] = pend[b][1];
                }
                out[k++] = -1;
                loc_block = 0;
                if (c == chunks - 1) {
                    loc_tensor = 0;
                } else {
                    slot_tensor[0] = slot_tensor[loc_tensor - 1];
                    loc_tensor = 1;
                }
            }
        }
    }
    return k;
}

static void plan_should_place_the_same_blocks_as_apexs_loop_at_small_limits(void)
{
    static long long sizes[64], want[100000], got[100000];
    static xs_mt_launch L;
    for (int trial = 0; trial < 3000; trial++) {
        size_t n = 1 + urand(40);
        for (size_t i = 0; i < n; i++)
            sizes[i] = urand(4) == 0 ? 0 : (long long)urand(40);
        long long chunk = 1 + urand(7);
        int max_t = 1 + (int)urand(6), max_b = 1 + (int)urand(9);
        size_t nw = apex_blocks(sizes, n, chunk, max_t, max_b, want), ng = 0;
        xs_mt_plan p = {0};
        CU_ASSERT_FATAL(xs_mt_plan_init(&p, sizes, n, chunk, max_t, max_b) == 0);
        while (xs_mt_next(&p, &L)) {
            for (int b = 0; b < L.nblocks; b++) {
                got[ng++] = (long long)L.tensor[L.block_slot[b]];
                got[ng++] = L.block_chunk[b];
            }
            got[ng++] = -1;
        }
        CU_ASSERT_EQUAL(ng, nw);
        CU_ASSERT_TRUE(ng == nw && memcmp(got, want, ng * sizeof got[0]) == 0);
        walk(sizes, n, chunk, max_t, max_b); /* and its own invariants */
    }
}

static void plan_should_start_a_cut_tensor_in_slot_zero_of_the_next_launch(void)
{
    long long sizes[3] = {10, 25, 4}; /* chunk 4: 3, 7 and 1 chunks; 5 blocks a launch */
    xs_mt_plan p = {0};
    static xs_mt_launch L;
    CU_ASSERT_FATAL(xs_mt_plan_init(&p, sizes, 3, 4, 8, 5) == 0);
    CU_ASSERT_TRUE(xs_mt_next(&p, &L));
    CU_ASSERT_EQUAL(L.ntensors, 2);
    CU_ASSERT_EQUAL(L.nblocks, 5); /* tensor 0's 3 chunks, tensor 1's first 2 */
    CU_ASSERT_TRUE(xs_mt_next(&p, &L));
    CU_ASSERT_EQUAL(L.tensor[0], 1);
    CU_ASSERT_EQUAL(L.block_chunk[0], 2);
    CU_ASSERT_EQUAL(L.nblocks, 5); /* chunks 2..6 of tensor 1: full again at its end */
    CU_ASSERT_EQUAL(L.ntensors, 1);
    CU_ASSERT_TRUE(xs_mt_next(&p, &L));
    CU_ASSERT_EQUAL(L.tensor[0], 2);
    CU_ASSERT_EQUAL(L.nblocks, 1);
    CU_ASSERT_FALSE(xs_mt_next(&p, &L));
    /* the last chunk of the last span is short: 25 = 6 x 4 + 1 */
    long long first;
    CU_ASSERT_EQUAL(xs_mt_chunk_span(25, 4, 6, &first), 1);
    CU_ASSERT_EQUAL(first, 24);
}

static void plan_should_refuse_limits_out_of_range(void)
{
    long long ok[2] = {5, 6}, neg[2] = {5, -1}, huge[1] = {(long long)INT_MAX * 4 + 8};
    xs_mt_plan p = {0};
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, ok, 2, 0, 10, 10), -1);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, ok, 2, 4, 0, 10), -1);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, ok, 2, 4, XS_MT_MAX_TENSORS + 1, 10), -1);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, ok, 2, 4, 10, 0), -1);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, ok, 2, 4, 10, XS_MT_MAX_BLOCKS + 1), -1);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, neg, 2, 4, 10, 10), -1);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, huge, 1, 4, 10, 10), -1);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, huge, 1, 8, 10, 10), 0);
    CU_ASSERT_EQUAL(xs_mt_plan_init(&p, NULL, 0, 4, 10, 10), 0);
    CU_ASSERT_EQUAL(xs_mt_max_tensors(0), 0);
    CU_ASSERT_EQUAL(xs_mt_max_tensors(6), 26);
    CU_ASSERT_EQUAL(xs_mt_max_tensors(9), 0);
}

static void transformer_list_should_hold_12h2_plus_13h_a_layer_and_exactly_elems(void)
{
    static long long s[4096];
    long long h = 768, per_layer = 12 * h * h + 13 * h;
    long long n = xs_mt_transformer_sizes(3 * per_layer, h, s, 4096);
    CU_ASSERT_EQUAL(n, 48);
    long long sum = 0;
    for (long long i = 0; i < n; i++)
        sum += s[i];
    CU_ASSERT_EQUAL(sum, 3 * per_layer);
    CU_ASSERT_EQUAL(s[0], h * h);
    CU_ASSERT_EQUAL(s[1], h);
    CU_ASSERT_EQUAL(s[10], 4 * h * h);
    CU_ASSERT_EQUAL(s[11], 4 * h);
    /* cut in the middle of the next layer's Q: one more tensor, the rest */
    n = xs_mt_transformer_sizes(3 * per_layer + 1000, h, s, 4096);
    CU_ASSERT_EQUAL(n, 49);
    CU_ASSERT_EQUAL(s[48], 1000);
    CU_ASSERT_EQUAL(xs_mt_transformer_sizes(3 * per_layer + 1000, h, NULL, 0), 49);
    CU_ASSERT_EQUAL(xs_mt_transformer_sizes(5, 0, s, 1), 1);
    CU_ASSERT_EQUAL(s[0], 5);
    CU_ASSERT_EQUAL(xs_mt_transformer_sizes(0, 64, s, 4096), -1);
    CU_ASSERT_EQUAL(xs_mt_transformer_sizes(10, -1, s, 4096), -1);
    CU_ASSERT_EQUAL(xs_mt_transformer_sizes(10, (1LL << 24) + 1, s, 4096), -1);
}

int tu_add_multi_tensor_suite(void)
{
    CU_pSuite s = CU_add_suite("multi_tensor", NULL, NULL);
    if (!s)
        return -1;
    return (CU_add_test(s, "plan_should_give_the_workload_models_launch_count",
                        plan_should_give_the_workload_models_launch_count) &&
            CU_add_test(s, "plan_should_place_the_same_blocks_as_apexs_loop_at_small_limits",
                        plan_should_place_the_same_blocks_as_apexs_loop_at_small_limits) &&
            CU_add_test(s, "plan_should_start_a_cut_tensor_in_slot_zero_of_the_next_launch",
                        plan_should_start_a_cut_tensor_in_slot_zero_of_the_next_launch) &&
            CU_add_test(s, "plan_should_refuse_limits_out_of_range",
                        plan_should_refuse_limits_out_of_range) &&
            CU_add_test(s, "transformer_list_should_hold_12h2_plus_13h_a_layer_and_exactly_elems",
                        transformer_list_should_hold_12h2_plus_13h_a_layer_and_exactly_elems))
               ? 0
               : -1;
}
