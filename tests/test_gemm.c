/* test_gemm.c — the GEMM model's arithmetic: tile and wave counts at and
 * just past their boundaries, CTAs per SM, alignment, small K, split-K and
 * the DRAM bound. Uses the A100's engine reduced to one tile shape so each
 * effect can be seen alone. */
#include <math.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "device.h"
#include "gemm.h"
#include "paths.h"
#include "test_util.h"

/* The engine of a shipped device; the device lives as long as the test run,
 * since the engine names it. */
static xs_gemm_engine engine_of(const char *id)
{
    static xs_device devs[4];
    static int used;
    xs_device *d = &devs[used++ % 4];
    xs_error err;
    CU_ASSERT_EQUAL(xs_dev_open(id, d, &err), XS_OK);
    xs_gemm_engine e;
    xs_dev_gemm_engine(d, &e);
    return e;
}

/* The A100's engine with one tile in its aligned and unaligned sets (each
 * keeps its K bytes); the sets live in a small ring, since the engine only
 * points at them. */
static xs_gemm_engine one_tile(const char *tiles, int split_k_max)
{
    static xs_tile_set sets[4][2];
    static int used;
    xs_gemm_engine d = engine_of("a100-sxm4-80gb");
    xs_tile_set *two = sets[used++ % 4];
    int m, n, st;
    sscanf(tiles, "%dx%d/%d", &m, &n, &st);
    two[0] = *d.matrix;
    two[1] = *d.unaligned;
    for (int i = 0; i < 2; i++) {
        two[i].tiles[0] = (xs_tile){m, n, st, 1};
        two[i].n = 1;
    }
    d.matrix = &two[0];
    d.unaligned = &two[1];
    d.split_k_max = split_k_max;
    return d;
}

static xs_gemm_result run(const xs_gemm_engine *d, int64_t m, int64_t n, int64_t k)
{
    xs_gemm_shape g = {m, n, k, 1, 0, 0, XS_FP16, 2};
    xs_gemm_result r;
    xs_error err;
    CU_ASSERT_EQUAL(xs_gemm_model(d, &g, &r, &err), XS_OK);
    return r;
}

static void tile_count_should_step_just_past_a_multiple_of_the_tile(void)
{
    xs_gemm_engine d = one_tile("128x128/4", 1);
    xs_gemm_result r = run(&d, 1024, 1024, 1024);
    CU_ASSERT_EQUAL(r.tiles, 64);
    CU_ASSERT_DOUBLE_EQUAL(r.tile_eff, 1.0, 1e-12);
    r = run(&d, 1025, 1024, 1024);
    CU_ASSERT_EQUAL(r.tiles, 72);
    CU_ASSERT_DOUBLE_EQUAL(r.tile_eff, 1025.0 / 1152, 1e-12);
    r = run(&d, 1, 1, 1024);
    CU_ASSERT_EQUAL(r.tiles, 1);
}

static void ctas_per_sm_should_follow_shared_memory_and_registers(void)
{
    /* 4 stages x (128+128) x 32 halves x 2 B = 64 KB: 2 fit in 164 KB;
     * accumulators 128x128x4 B x 1.5 = 96 KB: 2 fit in 256 KB of registers */
    xs_gemm_engine d = one_tile("128x128/4", 1);
    CU_ASSERT_EQUAL(run(&d, 4096, 4096, 4096).ctas_per_sm, 2);
    d = one_tile("64x64/4", 1); /* 32 KB smem -> 5; 24 KB regs -> 10 */
    CU_ASSERT_EQUAL(run(&d, 4096, 4096, 4096).ctas_per_sm, 5);
    d = one_tile("256x256/4", 1); /* 128 KB smem fits once; 384 KB of registers does not */
    xs_gemm_shape g = {4096, 4096, 4096, 1, 0, 0, XS_FP16, 2};
    xs_gemm_result r;
    xs_error err;
    CU_ASSERT_EQUAL(xs_gemm_model(&d, &g, &r, &err), XS_ERANGE);
    /* shared memory and registers past what an int counts (a device file
     * may say 1e57 KB): the cap holds, nothing overflows (fuzz_device) */
    d = one_tile("64x64/4", 1);
    d.smem_per_unit_kb = d.regfile_kb_per_unit = 1e57;
    CU_ASSERT_EQUAL(run(&d, 4096, 4096, 4096).ctas_per_sm, 16);
}

static void waves_should_step_one_tile_past_a_full_wave(void)
{
    /* 108 SMs x 2 CTAs = 216 slots */
    xs_gemm_engine d = one_tile("128x128/4", 1);
    xs_gemm_result full = run(&d, 128 * 27, 128 * 8, 4096); /* 27 x 8 tiles */
    xs_gemm_result past = run(&d, 128 * 27 + 1, 128 * 8, 4096); /* 28 x 8 */
    CU_ASSERT_EQUAL(full.tiles, 216);
    CU_ASSERT_EQUAL(full.waves, 1);
    CU_ASSERT_DOUBLE_EQUAL(full.wave_eff, 1.0, 1e-12);
    CU_ASSERT_EQUAL(full.bound, XS_BOUND_COMPUTE);
    CU_ASSERT_EQUAL(past.tiles, 224);
    CU_ASSERT_EQUAL(past.waves, 2);
    CU_ASSERT_DOUBLE_EQUAL(past.wave_eff, 224.0 / 432, 1e-12);
    /* the 8 tiles of the last wave have an SM each: half a full wave's time */
    CU_ASSERT(past.time_s > 1.3 * full.time_s && past.time_s < 1.7 * full.time_s);
}

static void odd_leading_dimensions_should_take_the_slower_path(void)
{
    xs_gemm_engine d = one_tile("64x64/4", 1); /* a tile whose mainloop is load-limited */
    xs_gemm_result al = run(&d, 4096, 4096, 1024);
    xs_gemm_result four = run(&d, 4096, 4096, 1022); /* rows of 2044 B: 4-byte aligned */
    xs_gemm_result odd = run(&d, 4096, 4096, 1023);  /* rows of 2046 B: 2-byte aligned */
    CU_ASSERT_EQUAL(al.align_bytes, 16);
    CU_ASSERT_EQUAL(four.align_bytes, 4);
    CU_ASSERT_EQUAL(odd.align_bytes, 2);
    double per_al = al.time_s / al.flops, per_four = four.time_s / four.flops,
           per_odd = odd.time_s / odd.flops;
    CU_ASSERT(fabs(per_four / per_al - 1) < 0.02);
    CU_ASSERT(per_odd > 1.5 * per_al);
    /* with --ta the rows of A are m long: an odd m matters, an odd k does not */
    xs_gemm_shape g = {4095, 4096, 1024, 1, 1, 0, XS_FP16, 2};
    xs_gemm_result r;
    xs_error err;
    CU_ASSERT_EQUAL(xs_gemm_model(&d, &g, &r, &err), XS_OK);
    CU_ASSERT_EQUAL(r.align_bytes, 2);
}

static void hopper_should_leave_tma_kernels_for_unaligned_rows(void)
{
    xs_error err;
    xs_gemm_engine h = engine_of("h100-sxm5-80gb");
    /* vocab 50304 rows are 16-byte aligned, 50257 rows only 2-byte */
    xs_gemm_shape g = {8192, 50304, 1024, 1, 0, 1, XS_FP16, 2};
    xs_gemm_result al, odd;
    CU_ASSERT_EQUAL(xs_gemm_model(&h, &g, &al, &err), XS_OK);
    g.n = 50257;
    CU_ASSERT_EQUAL(xs_gemm_model(&h, &g, &odd, &err), XS_OK);
    CU_ASSERT_EQUAL(al.cluster, 2); /* a TMA-multicast wgmma tile */
    CU_ASSERT_EQUAL(odd.cluster, 1);
    CU_ASSERT(odd.stages <= 2);   /* no cp.async below 4-byte rows */
    CU_ASSERT(odd.time_s / odd.flops > 1.5 * al.time_s / al.flops);
}

static void small_k_should_be_dominated_by_pipeline_fill(void)
{
    xs_gemm_engine d = one_tile("128x128/4", 1);
    xs_gemm_result big = run(&d, 8192, 8192, 4096), small = run(&d, 8192, 8192, 64);
    double eff_big = big.flops / big.time_s, eff_small = small.flops / small.time_s;
    CU_ASSERT(eff_small < 0.6 * eff_big);
}

static void split_k_should_be_chosen_when_few_tiles_have_long_k(void)
{
    xs_gemm_engine d = one_tile("64x64/4", 16);
    xs_gemm_result r = run(&d, 64, 64, 1 << 18);
    CU_ASSERT(r.split_k > 1);
    xs_gemm_engine nosplit = one_tile("64x64/4", 1);
    xs_gemm_result one = run(&nosplit, 64, 64, 1 << 18);
    CU_ASSERT_EQUAL(one.split_k, 1);
    CU_ASSERT(r.time_s < 0.5 * one.time_s);
    /* a GEMM that fills the GPU gains nothing from splitting */
    CU_ASSERT_EQUAL(run(&d, 8192, 8192, 4096).split_k, 1);
}

static void skinny_gemm_should_be_bound_by_dram(void)
{
    xs_gemm_engine d = engine_of("a100-sxm4-80gb");
    xs_gemm_result r = run(&d, 8, 16384, 16384); /* reads a 512 MB operand once */
    CU_ASSERT_EQUAL(r.bound, XS_BOUND_MEMORY);
    double floor_s = 16384.0 * 16384 * 2 / (d.dram_bw_gbs * 1e9 * d.dram_efficiency);
    CU_ASSERT(r.time_s >= floor_s && r.time_s < 1.2 * floor_s);
}

static void tile_list_errors_should_name_the_field(void)
{
    cJSON *doc = tu_load_json("devices/a100-sxm4-80gb.json");
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "gemm"), "tensor_tiles",
                              cJSON_CreateString("128x128/4 128by64"));
    const char *p = tu_write_json("a100-sxm4-80gb.json", doc);
    cJSON_Delete(doc);
    xs_device d;
    xs_error err;
    CU_ASSERT_EQUAL(xs_dev_load(p, &d, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'gemm.tensor_tiles' must list up to 16 tiles like "
                                           "128x128/4 or 256x128/4c2, got \"128by64\""));
    /* a tile followed by anything else is refused whole, not read as the tile */
    const char *junk[] = {"128x128/4adam", "128x128/4c", "128x128/4c2x"};
    for (int i = 0; i < 3; i++) {
        xs_tile tiles[XS_MAX_TILES];
        int n;
        CU_ASSERT_EQUAL(xs_gemm_parse_tiles(junk[i], tiles, &n, "d.json", "gemm.simt_tiles", &err),
                        XS_EFIELD);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, junk[i]));
    }
}

static int same_result(const xs_gemm_result *a, const xs_gemm_result *b)
{
    return a->time_s == b->time_s && a->compute_s == b->compute_s &&
           a->memory_s == b->memory_s && a->overhead_s == b->overhead_s &&
           a->bound == b->bound && a->engine == b->engine && a->tensor == b->tensor &&
           a->tile_m == b->tile_m && a->tile_n == b->tile_n && a->stages == b->stages &&
           a->split_k == b->split_k && a->tiles == b->tiles && a->waves == b->waves &&
           a->ctas_per_sm == b->ctas_per_sm && a->align_bytes == b->align_bytes &&
           a->dram_bytes == b->dram_bytes && a->flops == b->flops;
}

/* The memo (gemm_memo.c) returns what the search returns: over more
 * engines than it remembers, revisited, over shapes that share a hash
 * bucket's neighbourhood, and after an engine changes in place. */
static void memo_should_never_change_a_result(void)
{
    /* engine_of keeps 4 devices alive: 3 here, one_tile's the fourth; two
     * more engines differ from theirs in one figure */
    const char *ids[] = {"a100-sxm4-80gb", "t4", "h100-sxm5-80gb"};
    xs_gemm_engine e[6];
    for (int i = 0; i < 3; i++)
        e[i] = engine_of(ids[i]);
    e[3] = one_tile("128x128/4", 4); /* an A100 with other tiles */
    e[4] = e[0];
    e[4].split_k_max = 1;
    e[5] = e[1];
    e[5].efficiency[XS_FP16] *= 0.9;
    const xs_gemm_shape shapes[] = {
        {4096, 1024, 1024, 1, 0, 0, XS_FP16, 2}, {4096, 1024, 1024, 1, 0, 1, XS_FP16, 2},
        {4096, 1024, 1024, 1, 0, 0, XS_FP32, 4}, {4096, 1024, 1024, 1, 0, 0, XS_FP16, 4},
        {384, 384, 64, 192, 0, 1, XS_BF16, 2},   {30522, 4096, 1024, 1, 1, 0, XS_FP16, 2},
        {8, 8, 8, 1, 0, 0, XS_FP16, 2},          {4097, 1023, 1025, 1, 0, 0, XS_FP16, 2},
        {16, 4096, 4096, 1, 0, 0, XS_BF16, 2},   {4096, 16, 4096, 1, 0, 0, XS_BF16, 2},
    };
    int n = (int)(sizeof shapes / sizeof shapes[0]), checked = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < n; j++) {
                xs_gemm_result memo, direct;
                xs_error err;
                int rc = xs_gemm_model(&e[i], &shapes[j], &memo, &err);
                CU_ASSERT_EQUAL(rc, xs_gemm_model_direct(&e[i], &shapes[j], &direct, &err));
                checked += rc == XS_OK && same_result(&memo, &direct);
            }
    CU_ASSERT_EQUAL(checked, 3 * 6 * n);
    /* the same engine struct, its clock lowered: the memo must not answer
     * with the old engine's time */
    xs_gemm_result before, after, direct;
    xs_error err;
    CU_ASSERT_EQUAL(xs_gemm_model(&e[0], &shapes[0], &before, &err), XS_OK);
    e[0].clock_mhz /= 2;
    for (int t = 0; t < XS_DTYPE_COUNT; t++)
        e[0].peak_flops[t] /= 2;
    CU_ASSERT_EQUAL(xs_gemm_model(&e[0], &shapes[0], &after, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_gemm_model_direct(&e[0], &shapes[0], &direct, &err), XS_OK);
    CU_ASSERT_TRUE(same_result(&after, &direct));
    CU_ASSERT_TRUE(after.compute_s > before.compute_s);
}

int tu_add_gemm_suite(void)
{
    CU_pSuite s = CU_add_suite("gemm", NULL, NULL);
    return !s ||
           !CU_add_test(s, "tile_count_should_step_just_past_a_multiple_of_the_tile",
                        tile_count_should_step_just_past_a_multiple_of_the_tile) ||
           !CU_add_test(s, "ctas_per_sm_should_follow_shared_memory_and_registers",
                        ctas_per_sm_should_follow_shared_memory_and_registers) ||
           !CU_add_test(s, "waves_should_step_one_tile_past_a_full_wave",
                        waves_should_step_one_tile_past_a_full_wave) ||
           !CU_add_test(s, "odd_leading_dimensions_should_take_the_slower_path",
                        odd_leading_dimensions_should_take_the_slower_path) ||
           !CU_add_test(s, "hopper_should_leave_tma_kernels_for_unaligned_rows",
                        hopper_should_leave_tma_kernels_for_unaligned_rows) ||
           !CU_add_test(s, "small_k_should_be_dominated_by_pipeline_fill",
                        small_k_should_be_dominated_by_pipeline_fill) ||
           !CU_add_test(s, "split_k_should_be_chosen_when_few_tiles_have_long_k",
                        split_k_should_be_chosen_when_few_tiles_have_long_k) ||
           !CU_add_test(s, "skinny_gemm_should_be_bound_by_dram", skinny_gemm_should_be_bound_by_dram) ||
           !CU_add_test(s, "tile_list_errors_should_name_the_field",
                        tile_list_errors_should_name_the_field) ||
           !CU_add_test(s, "memo_should_never_change_a_result", memo_should_never_change_a_result);
}
