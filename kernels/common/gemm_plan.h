/* gemm_plan.h — the index arithmetic of the CUDA GEMMs (kernels/cuda/
 * gemm_mma.cu, gemm_cublas.cu), written as plain functions so that the CPU
 * tests (tests/test_gemm_plan.c) prove it before any GPU runs it: the grid
 * and its tile order, the 16-byte chunks a block copies and when each may
 * be one vector copy, the lane addresses of ldmatrix and the mma fragments
 * they must produce, the row-major -> column-major mapping of the cuBLAS
 * call with a column-major reference GEMM to run it through, and the error
 * tolerance of a mixed-precision product. Plain C11 and CUDA C++ alike. */
#ifndef XS_GEMM_PLAN_H
#define XS_GEMM_PLAN_H

#include <math.h>
#include <stdint.h>

#include "xs_hd.h"

/* The own kernel's block tile: 128 x 128 of C per block, 32 of k per stage,
 * 8 warps as 2 (m) x 4 (n), each warp 64 x 32 of C = 4 x 4 mma tiles of
 * 16 x 8. Why this shape: it is CUTLASS's default sm80 f16 tensor-op
 * threadblock (cutlass/include/cutlass/gemm/device/default_gemm_configuration.h,
 * OpClassTensorOp Sm80: 128x256x64 / 128x128x32 families); a 64 x 32 warp
 * tile loads 4 A fragments and 4 B fragments (12 ldmatrix.x4 per k32) for
 * 32 mma, so shared-memory bandwidth stays under the tensor cores' need;
 * 64 fp32 accumulators per thread keep a block within 128 registers per
 * thread, so two blocks (16 warps) fit an SM on A100/H100 (64 K registers). */
#define XS_GEMM_BM 128
#define XS_GEMM_BN 128
#define XS_GEMM_BK 32
#define XS_GEMM_WARPS_M 2
#define XS_GEMM_WARPS_N 4
#define XS_GEMM_THREADS (32 * XS_GEMM_WARPS_M * XS_GEMM_WARPS_N)
#define XS_GEMM_WM (XS_GEMM_BM / XS_GEMM_WARPS_M) /* 64 */
#define XS_GEMM_WN (XS_GEMM_BN / XS_GEMM_WARPS_N) /* 32 */
#define XS_GEMM_MI (XS_GEMM_WM / 16)              /* 4 mma rows of 16 per warp */
#define XS_GEMM_NJ (XS_GEMM_WN / 8)               /* 4 mma columns of 8 per warp */
/* Each shared-memory row is padded by 8 elements (16 bytes): rows of 40 (80
 * bytes) or 136 (272 bytes) elements put the 8 rows one ldmatrix phase reads
 * in 8 different 16-byte bank groups (80 r mod 128 and 272 r mod 128 are
 * distinct for r = 0..7), so ldmatrix is conflict-free, and every row still
 * starts on 16 bytes for cp.async. */
#define XS_GEMM_PAD 8
/* Blocks run in groups of 8 tile rows, column by column inside a group, so
 * the blocks resident at one time share A rows and B columns in L2 (the
 * ordering of triton-lang/triton python/tutorials/03-matrix-multiplication.py,
 * "L2 cache optimizations"). */
#define XS_GEMM_GROUP_M 8
/* Stages of the shared-memory pipeline: 3 with cp.async (sm_80+: 3 x 20 KB;
 * 2 blocks fit the 164 KB of A100 and 228 KB of H100); 2 on sm_75, where
 * the next tile is staged in registers (2 x 20 KB within Turing's 64 KB). */
#define XS_GEMM_STAGES_ASYNC 3
#define XS_GEMM_STAGES_REGS 2

/* The largest m n k a check multiplies on the CPU (double precision, about
 * a second per 2^30 on one core); the check refuses bigger shapes, and the
 * GPU test list (kernels/cuda/cuda_tests.cu) asserts at compile time that
 * its shapes stay within it. */
#define XS_GEMM_CHECK_MAX_MNK (1LL << 30)

XS_HD int xs_gemm_stages(int cc_major) { return cc_major >= 8 ? XS_GEMM_STAGES_ASYNC : XS_GEMM_STAGES_REGS; }

/* An operand's tile in shared memory is stored as it is in global memory:
 * A (!ta) m-rows of k, A (ta) k-rows of m, B (!tb) k-rows of n, B (tb)
 * n-rows of k. rows x cols of the tile, and its padded row length. */
typedef struct {
    int rows, cols, ld;
} xs_gemm_tile;

XS_HD xs_gemm_tile xs_gemm_a_tile(int ta)
{
    xs_gemm_tile t;
    t.rows = ta ? XS_GEMM_BK : XS_GEMM_BM;
    t.cols = ta ? XS_GEMM_BM : XS_GEMM_BK;
    t.ld = t.cols + XS_GEMM_PAD;
    return t;
}

XS_HD xs_gemm_tile xs_gemm_b_tile(int tb)
{
    xs_gemm_tile t;
    t.rows = tb ? XS_GEMM_BN : XS_GEMM_BK;
    t.cols = tb ? XS_GEMM_BK : XS_GEMM_BN;
    t.ld = t.cols + XS_GEMM_PAD;
    return t;
}

/* Elements of one pipeline stage (A then B). */
XS_HD int xs_gemm_stage_elems(int ta, int tb)
{
    xs_gemm_tile a = xs_gemm_a_tile(ta), b = xs_gemm_b_tile(tb);
    return a.rows * a.ld + b.rows * b.ld;
}

/* Dynamic shared memory of one block, 2-byte elements. */
XS_HD int xs_gemm_smem_bytes(int ta, int tb, int stages) { return 2 * stages * xs_gemm_stage_elems(ta, tb); }

/* The grid: one block per 128 x 128 tile of C, a 1-D grid (gridDim.y would
 * cap m at 65535 tiles). 0 (and 0 tiles) when m or n is below 1 or the
 * tile count passes INT_MAX. */
XS_HD long long xs_gemm_blocks(long long m, long long n, int *mt, int *nt)
{
    long long a = (m + XS_GEMM_BM - 1) / XS_GEMM_BM, b = (n + XS_GEMM_BN - 1) / XS_GEMM_BN;
    *mt = *nt = 0;
    if (m < 1 || n < 1 || a > 2147483647LL || b > 2147483647LL || a * b > 2147483647LL)
        return 0;
    *mt = (int)a;
    *nt = (int)b;
    return a * b;
}

/* Block `pid` (0..mt*nt-1) -> its tile (tm, tn), grouped by XS_GEMM_GROUP_M
 * tile rows: a bijection (tests/test_gemm_plan.c checks it). */
XS_HD void xs_gemm_tile_of(int pid, int mt, int nt, int *tm, int *tn)
{
    int per_group = XS_GEMM_GROUP_M * nt;
    int group = pid / per_group;
    int first = group * XS_GEMM_GROUP_M;
    int size = mt - first < XS_GEMM_GROUP_M ? mt - first : XS_GEMM_GROUP_M;
    int in = pid - group * per_group;
    *tm = first + in % size;
    *tn = in / size;
}

/* 16-byte chunks: a tile of rows x cols (cols a multiple of 8) is copied as
 * rows x cols/8 chunks of 8 elements, chunk `idx` at (row, col). */
XS_HD void xs_gemm_chunk_at(int idx, int cols, int *row, int *col)
{
    *row = idx / (cols / 8);
    *col = (idx % (cols / 8)) * 8;
}

/* What a chunk at global (row, col) of a stored rows x cols matrix is: all
 * 8 elements inside and vector-copyable, none inside (zeros), or some
 * (element by element). `vec`: the operand allows 16-byte copies. */
enum { XS_GEMM_CHUNK_FULL, XS_GEMM_CHUNK_EMPTY, XS_GEMM_CHUNK_PARTIAL };

XS_HD int xs_gemm_chunk_kind(long long row, long long col, long long rows, long long cols, int vec)
{
    if (row >= rows || col >= cols)
        return XS_GEMM_CHUNK_EMPTY;
    if (vec && col + 8 <= cols)
        return XS_GEMM_CHUNK_FULL;
    return XS_GEMM_CHUNK_PARTIAL;
}

/* 16-byte copies of an operand of `elem_bytes` elements need its base
 * address and its row pitch (ld elements) to be multiples of 16 bytes. */
XS_HD int xs_gemm_vec_ok(uintptr_t base, long long ld, int elem_bytes)
{
    return base % 16 == 0 && (ld * elem_bytes) % 16 == 0;
}

/* Paired (2-element) stores of C need 4-byte alignment of the base and an
 * even row pitch; the column of a pair is always even. */
XS_HD int xs_gemm_pair_ok(uintptr_t base, long long ldc) { return base % 4 == 0 && ldc % 2 == 0; }

/* The lane addresses of ldmatrix.x4 (PTX ISA, "Warp-level matrix load
 * instruction: ldmatrix": lanes 8i..8i+7 give the 8 row addresses of matrix
 * i; lane l receives row l/4, elements 2(l%4), 2(l%4)+1 of each matrix, or
 * with .trans the elements at rows 2(l%4), 2(l%4)+1 of column l/4). The
 * four matrices are chosen so that the registers come out as the operands
 * of mma.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
 * floating point type": A a0..a3 = rows g, g+8 x k 2t..2t+1, then k+8; B
 * b0, b1 = k 2t..2t+1 and 2t+8.. x column g; g = lane/4, t = lane%4).
 * Offsets are in elements from the tile's start; tests/test_gemm_plan.c
 * runs ldmatrix's rule on them and compares with the fragment layout. */

/* A fragment of rows m0..m0+15, k kk..kk+15; ta: the tile is k-rows of m,
 * read with .trans. */
XS_HD int xs_gemm_ldsm_a(int lane, int ta, int m0, int kk, int ld)
{
    if (!ta)
        return (m0 + (lane & 15)) * ld + kk + (lane >> 4) * 8;
    return (kk + (lane & 7) + ((lane >> 4) << 3)) * ld + m0 + ((lane >> 3) & 1) * 8;
}

/* Two B fragments: columns n0..n0+7 (registers 0, 1) and n0+8..n0+15
 * (registers 2, 3), k kk..kk+15; !tb: the tile is k-rows of n, read with
 * .trans. */
XS_HD int xs_gemm_ldsm_b(int lane, int tb, int n0, int kk, int ld)
{
    if (tb)
        return (n0 + (lane & 7) + ((lane >> 4) << 3)) * ld + kk + ((lane >> 3) & 1) * 8;
    return (kk + (lane & 7) + (((lane >> 3) & 1) << 3)) * ld + n0 + (lane >> 4) * 8;
}

/* Accumulator e (0..3) of an m16n8 tile held by `lane`: its row and column
 * inside the tile (c0, c1 at row g, c2, c3 at row g+8; columns 2t, 2t+1). */
XS_HD void xs_gemm_acc_at(int lane, int e, int *row, int *col)
{
    *row = (lane >> 2) + 8 * (e >> 1);
    *col = 2 * (lane & 3) + (e & 1);
}

/* --- cuBLAS: row-major C = op(A) op(B) as a column-major call ----------
 * A row-major matrix read column-major is its transpose, so the call
 * computes C^T (n x m, column-major, ldc = n) = op(B)^T op(A)^T: B is the
 * first operand, A the second, m and n swap, and each operand keeps its own
 * transposition flag (a row-major k x n B, !tb, is a column-major n x k
 * matrix: no transpose). Leading dimensions are the row lengths of the
 * row-major storage: lda = ta ? m : k, ldb = tb ? k : n, ldc = n. */
typedef struct {
    int trans_first, trans_second; /* 1: CUBLAS_OP_T */
    long long m, n, k;             /* of the column-major call */
    long long ld_first, ld_second, ldc;
} xs_gemm_colmajor;

XS_HD void xs_gemm_row_lds(long long m, long long n, long long k, int ta, int tb, long long *lda,
                           long long *ldb, long long *ldc)
{
    *lda = ta ? m : k;
    *ldb = tb ? k : n;
    *ldc = n;
}

/* The call's arguments; first operand = B, second = A. */
XS_HD xs_gemm_colmajor xs_gemm_to_colmajor(long long m, long long n, long long k, int ta, int tb,
                                           long long lda, long long ldb, long long ldc)
{
    xs_gemm_colmajor c;
    c.trans_first = tb;
    c.trans_second = ta;
    c.m = n;
    c.n = m;
    c.k = k;
    c.ld_first = ldb;
    c.ld_second = lda;
    c.ldc = ldc;
    return c;
}

/* Column-major reference with BLAS's meaning of every argument: C (m x n,
 * ldc) = op(A) op(B), op(A) m x k, A stored lda-major columns. Double
 * precision; for the tests of the mapping. */
static inline void xs_gemm_ref_colmajor(int transa, int transb, long long m, long long n, long long k,
                                        const double *a, long long lda, const double *b, long long ldb,
                                        double *c, long long ldc)
{
    for (long long j = 0; j < n; j++)
        for (long long i = 0; i < m; i++) {
            double s = 0;
            for (long long l = 0; l < k; l++) {
                double x = transa ? a[l + i * lda] : a[i + l * lda];
                double y = transb ? b[j + l * ldb] : b[l + j * ldb];
                s += x * y;
            }
            c[i + j * ldc] = s;
        }
}

/* Row-major reference as xs_cuda.h defines the job (C = op(A) op(B), ta: A
 * stored k x m, tb: B stored n x k): each element and sum |a b| of its
 * products (the scale of its rounding error). */
static inline void xs_gemm_ref_rowmajor(long long m, long long n, long long k, int ta, int tb,
                                        const double *a, long long lda, const double *b, long long ldb,
                                        double *c, double *sabs, long long ldc)
{
    for (long long i = 0; i < m; i++)
        for (long long j = 0; j < n; j++) {
            double s = 0, t = 0;
            for (long long l = 0; l < k; l++) {
                double x = ta ? a[l * lda + i] : a[i * lda + l];
                double y = tb ? b[j * ldb + l] : b[l * ldb + j];
                s += x * y;
                t += fabs(x * y);
            }
            c[i * ldc + j] = s;
            sabs[i * ldc + j] = t;
        }
}

/* --- tolerance of one element ---------------------------------------------
 * The GPU's inputs are the reference's inputs (copied back after rounding),
 * and a product of two fp16 (11-bit) or bf16 (8-bit) significands is exact
 * in fp32 (24 bits), so the error comes from (1) the fp32 accumulation over
 * k terms: at most k u32 |a||b| summed in any order (Higham, Accuracy and
 * Stability of Numerical Algorithms, 2nd ed., eq. 3.5, gamma_k); tensor
 * cores may truncate instead of rounding while they add (Fasi, Higham,
 * Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ CS
 * 2021), so 2 u32 per addition: 2 k u32 S, S = sum |a_l b_l|; (2) tf32
 * only: each fp32 input rounded or truncated to 10 stored bits inside the
 * tensor core, relative error below 2^-10 each, 2 * 2^-10 S per product;
 * (3) the one rounding of C to the output type, u_out |c| (u: 2^-11 fp16,
 * 2^-8 bf16, 2^-24 fp32 and tf32) and, fp16 only, half its smallest
 * subnormal (2^-25) when |c| is that small: a floor of 2^-24. So
 *   tol = u_out |ref| + (2 k 2^-24 + input) S + floor.
 * dtype: xs_cuda_dtype's order (0 fp32, 1 tf32, 2 fp16, 3 bf16). */
XS_HD double xs_gemm_tolerance(int dtype, long long k, double ref, double sabs)
{
    const double u32 = 1.0 / 16777216.0; /* 2^-24 */
    double u_out = dtype == 2 ? 1.0 / 2048 : dtype == 3 ? 1.0 / 256 : u32;
    double input = dtype == 1 ? 2.0 / 1024 : 0.0;
    double floor_ = dtype == 2 ? u32 : 1e-37;
    return u_out * fabs(ref) + (2.0 * (double)k * u32 + input) * sabs + floor_;
}

#endif
