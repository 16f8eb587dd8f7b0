/* test_gemm_plan.c — the CUDA GEMMs' index arithmetic (kernels/common/
 * gemm_plan.h) on the CPU, where it can be checked without a GPU: the grid
 * order, the chunks, the ldmatrix addresses against the mma fragment
 * layout, a whole block's data flow emulated element by element, the
 * cuBLAS argument mapping through a column-major reference GEMM, and the
 * tolerance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "../kernels/common/gemm_plan.h"
#include "test_util.h"

static void block_order_should_visit_every_tile_once(void)
{
    static const int shapes[][2] = {{1, 1}, {1, 9}, {9, 1}, {8, 8}, {17, 5}, {33, 64}, {7, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int mt, nt;
        long long blocks = xs_gemm_blocks((long long)shapes[s][0] * XS_GEMM_BM - 5,
                                          (long long)shapes[s][1] * XS_GEMM_BN, &mt, &nt);
        CU_ASSERT_EQUAL(mt, shapes[s][0]);
        CU_ASSERT_EQUAL(nt, shapes[s][1]);
        CU_ASSERT_EQUAL(blocks, (long long)mt * nt);
        char *seen = calloc((size_t)blocks, 1);
        for (int pid = 0; pid < blocks; pid++) {
            int tm, tn;
            xs_gemm_tile_of(pid, mt, nt, &tm, &tn);
            CU_ASSERT(tm >= 0 && tm < mt && tn >= 0 && tn < nt);
            if (tm >= 0 && tm < mt && tn >= 0 && tn < nt) {
                CU_ASSERT_EQUAL(seen[tm * nt + tn], 0);
                seen[tm * nt + tn] = 1;
            }
            /* consecutive blocks stay within one group of tile rows */
            CU_ASSERT_EQUAL(tm / XS_GEMM_GROUP_M, pid / (XS_GEMM_GROUP_M * nt));
        }
        free(seen);
    }
}

static void grid_should_refuse_more_tiles_than_a_launch_takes(void)
{
    int mt = -1, nt = -1;
    CU_ASSERT_EQUAL(xs_gemm_blocks(1, 1, &mt, &nt), 1);
    CU_ASSERT_EQUAL(xs_gemm_blocks(129, 128, &mt, &nt), 2);
    CU_ASSERT_EQUAL(xs_gemm_blocks(2147483647LL, 2147483647LL, &mt, &nt), 0);
    CU_ASSERT_EQUAL(xs_gemm_blocks(0, 5, &mt, &nt), 0);
}

/* Shared-memory limits per block (opt-in) and per SM, CUDA C++ Programming
 * Guide, "Technical Specifications per Compute Capability": 7.5 64 KB;
 * 8.0 163 KB per block, 164 KB per SM; 8.6 and 8.9 99 KB per block; 9.0
 * 227 KB per block, 228 KB per SM; 1 KB per block reserved by the system. */
static void shared_memory_should_fit_every_target(void)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int async = xs_gemm_smem_bytes(ta, tb, xs_gemm_stages(8));
            int regs = xs_gemm_smem_bytes(ta, tb, xs_gemm_stages(7));
            CU_ASSERT(async <= 99 * 1024);
            CU_ASSERT(2 * (async + 1024) <= 164 * 1024); /* two blocks per A100 SM */
            CU_ASSERT(regs <= 64 * 1024);
            CU_ASSERT(async > 48 * 1024); /* so the launcher must raise the limit */
            CU_ASSERT_EQUAL((xs_gemm_stage_elems(ta, tb) * 2) % 16, 0);
        }
    CU_ASSERT_EQUAL(xs_gemm_stages(7), 2);
    CU_ASSERT_EQUAL(xs_gemm_stages(9), 3);
}

static void chunks_should_cover_each_tile_once_with_whole_work_per_thread(void)
{
    for (int t = 0; t < 4; t++) {
        xs_gemm_tile tile = (t & 2) ? xs_gemm_b_tile(t & 1) : xs_gemm_a_tile(t & 1);
        int chunks = tile.rows * tile.cols / 8;
        CU_ASSERT_EQUAL(chunks % XS_GEMM_THREADS, 0);
        char *seen = calloc((size_t)(tile.rows * tile.cols), 1);
        for (int idx = 0; idx < chunks; idx++) {
            int r, c;
            xs_gemm_chunk_at(idx, tile.cols, &r, &c);
            CU_ASSERT(r >= 0 && r < tile.rows && c >= 0 && c + 8 <= tile.cols && c % 8 == 0);
            for (int e = 0; e < 8 && r < tile.rows && c + e < tile.cols; e++) {
                CU_ASSERT_EQUAL(seen[r * tile.cols + c + e], 0);
                seen[r * tile.cols + c + e] = 1;
            }
            /* destinations start on 16 bytes for cp.async */
            CU_ASSERT_EQUAL(((r * tile.ld + c) * 2) % 16, 0);
        }
        free(seen);
    }
}

static void chunk_kind_should_split_at_the_matrix_edge(void)
{
    CU_ASSERT_EQUAL(xs_gemm_chunk_kind(0, 0, 4, 16, 1), XS_GEMM_CHUNK_FULL);
    CU_ASSERT_EQUAL(xs_gemm_chunk_kind(3, 8, 4, 16, 1), XS_GEMM_CHUNK_FULL);
    CU_ASSERT_EQUAL(xs_gemm_chunk_kind(3, 8, 4, 15, 1), XS_GEMM_CHUNK_PARTIAL);
    CU_ASSERT_EQUAL(xs_gemm_chunk_kind(4, 0, 4, 16, 1), XS_GEMM_CHUNK_EMPTY);
    CU_ASSERT_EQUAL(xs_gemm_chunk_kind(0, 16, 4, 16, 1), XS_GEMM_CHUNK_EMPTY);
    CU_ASSERT_EQUAL(xs_gemm_chunk_kind(0, 0, 4, 16, 0), XS_GEMM_CHUNK_PARTIAL);
    CU_ASSERT(xs_gemm_vec_ok(256, 1024, 2));
    CU_ASSERT(!xs_gemm_vec_ok(258, 1024, 2)); /* base off 16 bytes */
    CU_ASSERT(!xs_gemm_vec_ok(256, 1028, 2)); /* pitch 2056 bytes */
    CU_ASSERT(xs_gemm_vec_ok(256, 1028, 4));
    CU_ASSERT(xs_gemm_pair_ok(4, 6));
    CU_ASSERT(!xs_gemm_pair_ok(2, 6));
    CU_ASSERT(!xs_gemm_pair_ok(4, 7));
}

/* ldmatrix.x4 on a tile of values: what register `reg` (0..3) of `lane`
 * holds (two 16-bit elements, lo and hi), by the PTX ISA's rule. */
static void ldsm(const double *tile, const int *addr, int trans, int lane, int reg, double out[2])
{
    int g = lane >> 2, t = lane & 3;
    for (int h = 0; h < 2; h++)
        out[h] = trans ? tile[addr[8 * reg + 2 * t + h] + g] : tile[addr[8 * reg + g] + 2 * t + h];
}

/* Value of element (row, col) of the matrix a tile holds, distinct everywhere. */
static double code(int row, int col) { return row * 1000.0 + col; }

static void ldmatrix_addresses_should_yield_the_mma_fragments(void)
{
    for (int ta = 0; ta < 2; ta++) {
        xs_gemm_tile tile = xs_gemm_a_tile(ta);
        double *s = calloc((size_t)(tile.rows * tile.ld), sizeof(double));
        /* the tile stores A[m][k] at [m][k] (!ta) or [k][m] (ta) */
        for (int r = 0; r < tile.rows; r++)
            for (int c = 0; c < tile.cols; c++)
                s[r * tile.ld + c] = ta ? code(c, r) : code(r, c);
        for (int m0 = 0; m0 < XS_GEMM_BM; m0 += 16)
            for (int kk = 0; kk < XS_GEMM_BK; kk += 16) {
                int addr[32];
                for (int l = 0; l < 32; l++) {
                    addr[l] = xs_gemm_ldsm_a(l, ta, m0, kk, tile.ld);
                    CU_ASSERT_EQUAL((addr[l] * 2) % 16, 0);
                }
                /* one phase reads 8 rows of 16 bytes: distinct bank groups */
                for (int i = 0; i < 4; i++) {
                    int used = 0;
                    for (int r = 0; r < 8; r++)
                        used |= 1 << ((addr[8 * i + r] * 2 / 16) % 8);
                    CU_ASSERT_EQUAL(used, 0xff);
                }
                for (int l = 0; l < 32; l++)
                    for (int reg = 0; reg < 4; reg++) {
                        double v[2];
                        ldsm(s, addr, ta, l, reg, v);
                        int row = m0 + (l >> 2) + 8 * (reg & 1), col = kk + 2 * (l & 3) + 8 * (reg >> 1);
                        CU_ASSERT_EQUAL(v[0], code(row, col));
                        CU_ASSERT_EQUAL(v[1], code(row, col + 1));
                    }
            }
        free(s);
    }
    for (int tb = 0; tb < 2; tb++) {
        xs_gemm_tile tile = xs_gemm_b_tile(tb);
        double *s = calloc((size_t)(tile.rows * tile.ld), sizeof(double));
        /* code(k, n) of B at [k][n] (!tb) or [n][k] (tb) */
        for (int r = 0; r < tile.rows; r++)
            for (int c = 0; c < tile.cols; c++)
                s[r * tile.ld + c] = tb ? code(c, r) : code(r, c);
        for (int n0 = 0; n0 < XS_GEMM_BN; n0 += 16)
            for (int kk = 0; kk < XS_GEMM_BK; kk += 16) {
                int addr[32];
                for (int l = 0; l < 32; l++)
                    addr[l] = xs_gemm_ldsm_b(l, tb, n0, kk, tile.ld);
                for (int i = 0; i < 4; i++) {
                    int used = 0;
                    for (int r = 0; r < 8; r++)
                        used |= 1 << ((addr[8 * i + r] * 2 / 16) % 8);
                    CU_ASSERT_EQUAL(used, 0xff);
                }
                for (int l = 0; l < 32; l++)
                    for (int reg = 0; reg < 4; reg++) {
                        double v[2];
                        ldsm(s, addr, !tb, l, reg, v);
                        /* registers 0, 1: b0, b1 of columns n0..; 2, 3 of n0+8.. */
                        int n = n0 + 8 * (reg >> 1) + (l >> 2), k = kk + 2 * (l & 3) + 8 * (reg & 1);
                        CU_ASSERT_EQUAL(v[0], code(k, n));
                        CU_ASSERT_EQUAL(v[1], code(k + 1, n));
                    }
            }
        free(s);
    }
}

/* The whole kernel's data flow for one shape, element by element on the
 * CPU: tiles copied chunk by chunk as the kernel copies them (zeros outside
 * the matrices), fragments read by the ldmatrix rule from the kernel's
 * addresses, m16n8k16 products in the fragment layout, and the predicated
 * epilogue; the result must equal the reference product exactly (small
 * integers). Unaligned operands (vec 0) take the element path. */
static void emulate(int m, int n, int k, int ta, int tb, int vec)
{
    long long lda, ldb, ldc;
    xs_gemm_row_lds(m, n, k, ta, tb, &lda, &ldb, &ldc);
    double *a = malloc(sizeof(double) * (size_t)m * k), *b = malloc(sizeof(double) * (size_t)k * n);
    double *c = malloc(sizeof(double) * (size_t)m * n), *ref = malloc(sizeof(double) * (size_t)m * n);
    double *sabs = malloc(sizeof(double) * (size_t)m * n);
    for (long long i = 0; i < (long long)m * k; i++)
        a[i] = (double)((i * 7 + 3) % 11) - 5;
    for (long long i = 0; i < (long long)k * n; i++)
        b[i] = (double)((i * 5 + 1) % 13) - 6;
    for (long long i = 0; i < (long long)m * n; i++)
        c[i] = NAN;
    xs_gemm_ref_rowmajor(m, n, k, ta, tb, a, lda, b, ldb, ref, sabs, ldc);

    xs_gemm_tile at = xs_gemm_a_tile(ta), bt = xs_gemm_b_tile(tb);
    double *as = malloc(sizeof(double) * (size_t)(at.rows * at.ld));
    double *bs = malloc(sizeof(double) * (size_t)(bt.rows * bt.ld));
    double *acc = malloc(sizeof(double) * XS_GEMM_THREADS * XS_GEMM_MI * XS_GEMM_NJ * 4);
    int mt, nt;
    long long blocks = xs_gemm_blocks(m, n, &mt, &nt);
    for (int pid = 0; pid < blocks; pid++) {
        int tm, tn;
        xs_gemm_tile_of(pid, mt, nt, &tm, &tn);
        long long m0 = (long long)tm * XS_GEMM_BM, n0 = (long long)tn * XS_GEMM_BN;
        memset(acc, 0, sizeof(double) * XS_GEMM_THREADS * XS_GEMM_MI * XS_GEMM_NJ * 4);
        for (long long k0 = 0; k0 < k; k0 += XS_GEMM_BK) {
            for (int op = 0; op < 2; op++) {
                xs_gemm_tile tile = op ? bt : at;
                double *s = op ? bs : as;
                const double *g = op ? b : a;
                long long rows = op ? (tb ? n : k) : (ta ? k : m), cols = op ? (tb ? k : n) : (ta ? m : k);
                long long ld = op ? ldb : lda;
                long long r0 = op ? (tb ? n0 : k0) : (ta ? k0 : m0), c0 = op ? (tb ? k0 : n0) : (ta ? m0 : k0);
                for (int i = 0; i < tile.rows * tile.ld; i++)
                    s[i] = NAN; /* the padding is never read */
                for (int idx = 0; idx < tile.rows * tile.cols / 8; idx++) {
                    int row, col;
                    xs_gemm_chunk_at(idx, tile.cols, &row, &col);
                    long long r = r0 + row, cc = c0 + col;
                    int kind = xs_gemm_chunk_kind(r, cc, rows, cols, vec);
                    for (int e = 0; e < 8; e++) {
                        double v = 0;
                        if (kind == XS_GEMM_CHUNK_FULL)
                            v = g[r * ld + cc + e];
                        else if (kind == XS_GEMM_CHUNK_PARTIAL)
                            v = cc + e < cols ? g[r * ld + cc + e] : 0;
                        s[row * tile.ld + col + e] = v;
                    }
                }
            }
            for (int warp = 0; warp < XS_GEMM_THREADS / 32; warp++) {
                int wm = warp / XS_GEMM_WARPS_N, wn = warp % XS_GEMM_WARPS_N;
                for (int kk = 0; kk < XS_GEMM_BK; kk += 16)
                    for (int mi = 0; mi < XS_GEMM_MI; mi++)
                        for (int nj = 0; nj < XS_GEMM_NJ; nj++) {
                            int aaddr[32], baddr[32];
                            for (int l = 0; l < 32; l++) {
                                aaddr[l] = xs_gemm_ldsm_a(l, ta, wm * XS_GEMM_WM + mi * 16, kk, at.ld);
                                baddr[l] = xs_gemm_ldsm_b(l, tb, wn * XS_GEMM_WN + (nj & ~1) * 8, kk, bt.ld);
                            }
                            /* gather every lane's fragments into a 16 x 16 A and
                             * a 16 x 8 B by the mma layout, then multiply */
                            double fa[16][16], fb[16][8];
                            for (int l = 0; l < 32; l++) {
                                int g4 = l >> 2, t4 = l & 3;
                                for (int reg = 0; reg < 4; reg++) {
                                    double v[2];
                                    ldsm(as, aaddr, ta, l, reg, v);
                                    fa[g4 + 8 * (reg & 1)][2 * t4 + 8 * (reg >> 1)] = v[0];
                                    fa[g4 + 8 * (reg & 1)][2 * t4 + 8 * (reg >> 1) + 1] = v[1];
                                }
                                for (int reg = 0; reg < 2; reg++) {
                                    double v[2];
                                    ldsm(bs, baddr, !tb, l, 2 * (nj & 1) + reg, v);
                                    fb[2 * t4 + 8 * reg][g4] = v[0];
                                    fb[2 * t4 + 8 * reg + 1][g4] = v[1];
                                }
                            }
                            for (int l = 0; l < 32; l++)
                                for (int e = 0; e < 4; e++) {
                                    int r, col;
                                    xs_gemm_acc_at(l, e, &r, &col);
                                    double s = 0;
                                    for (int q = 0; q < 16; q++)
                                        s += fa[r][q] * fb[q][col];
                                    acc[(((warp * 32 + l) * XS_GEMM_MI + mi) * XS_GEMM_NJ + nj) * 4 + e] += s;
                                }
                        }
            }
        }
        for (int th = 0; th < XS_GEMM_THREADS; th++) {
            int warp = th >> 5, l = th & 31, wm = warp / XS_GEMM_WARPS_N, wn = warp % XS_GEMM_WARPS_N;
            for (int mi = 0; mi < XS_GEMM_MI; mi++)
                for (int nj = 0; nj < XS_GEMM_NJ; nj++)
                    for (int e = 0; e < 4; e++) {
                        int r, col;
                        xs_gemm_acc_at(l, e, &r, &col);
                        long long row = m0 + wm * XS_GEMM_WM + mi * 16 + r;
                        long long cc = n0 + wn * XS_GEMM_WN + nj * 8 + col;
                        if (row < m && cc < n)
                            c[row * ldc + cc] = acc[((th * XS_GEMM_MI + mi) * XS_GEMM_NJ + nj) * 4 + e];
                    }
        }
    }
    int bad = 0;
    for (long long i = 0; i < (long long)m * n; i++)
        bad += !(c[i] == ref[i]);
    CU_ASSERT_EQUAL(bad, 0);
    free(a), free(b), free(c), free(ref), free(sabs), free(as), free(bs), free(acc);
}

static void emulated_kernel_should_compute_the_product_at_edges_and_every_transposition(void)
{
    static const int shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {129, 127, 31}, {130, 136, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            emulate(shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1, shapes[s][2] % 8 == 0);
    /* the element path on a shape the vector path would take */
    emulate(128, 128, 32, 1, 0, 0);
}

/* The cuBLAS call's arguments, run through BLAS's column-major meaning on
 * the row-major storage, must give the row-major product: proves the
 * transposes, the swap of A and B, of m and n, and the leading dimensions. */
static void cublas_mapping_should_reproduce_the_row_major_product(void)
{
    static const int shapes[][3] = {{1, 1, 1}, {2, 3, 4}, {5, 7, 3}, {16, 9, 33}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++) {
            int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], ta = t & 1, tb = t >> 1;
            long long lda, ldb, ldc;
            xs_gemm_row_lds(m, n, k, ta, tb, &lda, &ldb, &ldc);
            double *a = malloc(sizeof(double) * (size_t)(m * k)), *b = malloc(sizeof(double) * (size_t)(k * n));
            double *ref = malloc(sizeof(double) * (size_t)(m * n)), *sabs = malloc(sizeof(double) * (size_t)(m * n));
            double *c = malloc(sizeof(double) * (size_t)(m * n));
            for (int i = 0; i < m * k; i++)
                a[i] = (double)(i % 7) - 3 + i * 0.001;
            for (int i = 0; i < k * n; i++)
                b[i] = (double)(i % 5) - 2 - i * 0.002;
            xs_gemm_ref_rowmajor(m, n, k, ta, tb, a, lda, b, ldb, ref, sabs, ldc);
            xs_gemm_colmajor cm = xs_gemm_to_colmajor(m, n, k, ta, tb, lda, ldb, ldc);
            CU_ASSERT_EQUAL(cm.m, n);
            CU_ASSERT_EQUAL(cm.n, m);
            /* BLAS's argument checks: lda >= rows of the stored first operand */
            CU_ASSERT(cm.ld_first >= (cm.trans_first ? cm.k : cm.m));
            CU_ASSERT(cm.ld_second >= (cm.trans_second ? cm.n : cm.k));
            CU_ASSERT(cm.ldc >= cm.m);
            xs_gemm_ref_colmajor(cm.trans_first, cm.trans_second, cm.m, cm.n, cm.k, b, cm.ld_first, a, cm.ld_second, c,
                                 cm.ldc);
            double worst = 0;
            for (int i = 0; i < m * n; i++)
                worst = fmax(worst, fabs(c[i] - ref[i]) / (1e-12 + sabs[i]));
            CU_ASSERT(worst < 1e-14);
            free(a), free(b), free(ref), free(sabs), free(c);
        }
}

static void colmajor_reference_should_follow_blas_conventions(void)
{
    /* A 2 x 3 column-major with lda 2: [1 3 5; 2 4 6]; B 3 x 1: [1; 0; -1] */
    const double a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0, -1};
    double c[2] = {0, 0};
    xs_gemm_ref_colmajor(0, 0, 2, 1, 3, a, 2, b, 3, c, 2);
    CU_ASSERT_EQUAL(c[0], -4);
    CU_ASSERT_EQUAL(c[1], -4);
    /* A^T (A read as 3 x 2 column-major, lda 3: [1 4; 2 5; 3 6]) x [1; -1] */
    const double x[] = {1, -1};
    double d[3];
    xs_gemm_ref_colmajor(1, 0, 2, 1, 3, a, 3, b, 3, d, 2); /* (A^T is 2 x 3) . b */
    CU_ASSERT_EQUAL(d[0], 1 * 1 + 2 * 0 + 3 * -1);
    CU_ASSERT_EQUAL(d[1], 4 * 1 + 5 * 0 + 6 * -1);
    xs_gemm_ref_colmajor(0, 0, 3, 1, 2, a, 3, x, 2, d, 3);
    CU_ASSERT_EQUAL(d[0], -3);
    CU_ASSERT_EQUAL(d[2], -3);
}

static void tolerance_should_scale_with_k_and_the_output_type(void)
{
    /* fp16, k 1, exact product 1: one rounding of C (2^-11) plus the
     * accumulation term and the subnormal floor */
    double t = xs_gemm_tolerance(2, 1, 1.0, 1.0);
    CU_ASSERT_DOUBLE_EQUAL(t, 1.0 / 2048 + 2.0 / 16777216 + 1.0 / 16777216, 1e-18);
    CU_ASSERT(xs_gemm_tolerance(2, 1024, 1.0, 100.0) > xs_gemm_tolerance(2, 64, 1.0, 100.0));
    CU_ASSERT(xs_gemm_tolerance(3, 64, 1.0, 10.0) > xs_gemm_tolerance(2, 64, 1.0, 10.0));
    CU_ASSERT(xs_gemm_tolerance(1, 64, 1.0, 10.0) > xs_gemm_tolerance(0, 64, 1.0, 10.0));
    /* half an ulp of bf16 at 3.0 passes; one percent of it does not */
    double c = 3.0, s = 20.0;
    CU_ASSERT(0.5 * c / 128 / xs_gemm_tolerance(3, 256, c, s) <= 1.0);
    CU_ASSERT(0.01 * c / xs_gemm_tolerance(3, 256, c, s) > 1.0);
    CU_ASSERT(0.01 * c / xs_gemm_tolerance(2, 256, c, s) > 1.0);
}

int tu_add_gemm_plan_suite(void)
{
    CU_pSuite s = CU_add_suite("gemm_plan", NULL, NULL);
    return !s ||
           !CU_add_test(s, "block_order_should_visit_every_tile_once", block_order_should_visit_every_tile_once) ||
           !CU_add_test(s, "grid_should_refuse_more_tiles_than_a_launch_takes",
                        grid_should_refuse_more_tiles_than_a_launch_takes) ||
           !CU_add_test(s, "shared_memory_should_fit_every_target", shared_memory_should_fit_every_target) ||
           !CU_add_test(s, "chunks_should_cover_each_tile_once_with_whole_work_per_thread",
                        chunks_should_cover_each_tile_once_with_whole_work_per_thread) ||
           !CU_add_test(s, "chunk_kind_should_split_at_the_matrix_edge", chunk_kind_should_split_at_the_matrix_edge) ||
           !CU_add_test(s, "ldmatrix_addresses_should_yield_the_mma_fragments",
                        ldmatrix_addresses_should_yield_the_mma_fragments) ||
           !CU_add_test(s, "emulated_kernel_should_compute_the_product_at_edges_and_every_transposition",
                        emulated_kernel_should_compute_the_product_at_edges_and_every_transposition) ||
           !CU_add_test(s, "cublas_mapping_should_reproduce_the_row_major_product",
                        cublas_mapping_should_reproduce_the_row_major_product) ||
           !CU_add_test(s, "colmajor_reference_should_follow_blas_conventions",
                        colmajor_reference_should_follow_blas_conventions) ||
           !CU_add_test(s, "tolerance_should_scale_with_k_and_the_output_type",
                        tolerance_should_scale_with_k_and_the_output_type);
}
