/* gemm_mma.cu — the own mixed-precision GEMM (XS_CJ_GEMM): fp16 or bf16 in,
 * fp32 accumulate, C in the input type, row-major with any transposition,
 * any m, n, k >= 1, on tensor cores through ldmatrix + mma.sync. The index
 * arithmetic (tiles, chunks, fragment addresses) is in kernels/common/
 * gemm_plan.h, proven on the CPU by tests/test_gemm_plan.c.
 *
 * Structure (the route CUTLASS's sm80 tensor-op GEMMs take; facts from
 * NVIDIA/cutlass include/cutlass/arch/mma_sm80.h, mma_sm75.h, memory_sm80.h
 * and the PTX ISA: "mma", "ldmatrix", "cp.async"; the code is our own):
 * - a 128 x 128 block tile, 32 of k per stage, 8 warps of 64 x 32;
 * - sm_80+: a 3-stage cp.async pipeline (global -> shared without
 *   registers; cp.async's src-size 0 writes the zeros of tiles past m, n,
 *   k); sm_75: the next tile is loaded into registers while the tensor
 *   cores work on the current one, then stored to the other of 2 buffers;
 * - fragments by ldmatrix.x4 (.trans for the operands stored k-major), so
 *   all four ta/tb cases use the same mma and only the addresses differ;
 * - mma.m16n8k16 on sm_80+; on sm_75 (no m16n8k16 before sm_80) two
 *   m16n8k8 per k16; bf16 mma exists from sm_80 only: the sm_75 build of
 *   the bf16 kernel contains a trap instead, and the launcher refuses bf16
 *   when the device's compute capability is below 8.0;
 * - the epilogue converts the fp32 accumulators and stores pairs of
 *   elements straight from registers, predicated on m and n: C is 1/k of
 *   the traffic at Transformer shapes, not worth a trip through shared
 *   memory;
 * - a chunk of 8 elements is one 16-byte copy when the operand's base and
 *   row pitch are 16-byte multiples and the chunk is inside the matrix; a
 *   chunk across the edge, or any chunk of an operand that is not aligned,
 *   is read element by element (correct for any pitch, slower).
 *
 * Resources (ptxas -v, CUDA 13.0): sm_80 kernels 126-128 registers, no
 * spills (launch bounds 256 threads x 2 blocks cap them at 128); sm_75
 * 128 registers and 8-24 bytes of spill (the staged tile's 16 registers).
 * ptxas refuses m16n8k16 below sm_80 ("Feature '.m16n8k16' requires
 * .target sm_80 or higher"), hence the pair of m16n8k8 on Turing.
 * Fragment layouts: PTX ISA, https://docs.nvidia.com/cuda/parallel-thread-
 * execution/ sections "Matrix Fragments for mma.m16n8k16 with floating
 * point type", "ldmatrix", "cp.async".
 *
 * What to expect (not timed here: no GPU on the build host). A100: 128 x
 * 128 x 32 with 3 stages is the configuration with which CUTLASS reaches
 * most of cuBLAS's f16 rate; without fragment double-buffering and with
 * padding instead of swizzling, about 0.7-0.85 of cuBLAS at the Transformer
 * shapes of the benchmark. H100: cuBLAS uses wgmma (HGMMA), which
 * mma.sync cannot reach; expect about 0.5-0.65 of cuBLAS there. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdio.h>

#include "gemm_ops.cuh"
#include "gemm_plan.h"
#include "xs_cu.h"

namespace {

/* Both tile layouts per (ta, tb) as compile-time numbers. */
template <bool TA, bool TB> struct xs_layout {
    static constexpr int A_ROWS = TA ? XS_GEMM_BK : XS_GEMM_BM;
    static constexpr int A_COLS = TA ? XS_GEMM_BM : XS_GEMM_BK;
    static constexpr int A_LD = A_COLS + XS_GEMM_PAD;
    static constexpr int B_ROWS = TB ? XS_GEMM_BN : XS_GEMM_BK;
    static constexpr int B_COLS = TB ? XS_GEMM_BK : XS_GEMM_BN;
    static constexpr int B_LD = B_COLS + XS_GEMM_PAD;
    static constexpr int A_ELEMS = A_ROWS * A_LD;
    static constexpr int STAGE = A_ELEMS + B_ROWS * B_LD;
    /* every thread copies the same number of chunks of each operand */
    static constexpr int A_CHUNKS = A_ROWS * A_COLS / 8 / XS_GEMM_THREADS;
    static constexpr int B_CHUNKS = B_ROWS * B_COLS / 8 / XS_GEMM_THREADS;
    static_assert(A_ROWS * A_COLS % (8 * XS_GEMM_THREADS) == 0, "A tile is not whole chunks per thread");
    static_assert(B_ROWS * B_COLS % (8 * XS_GEMM_THREADS) == 0, "B tile is not whole chunks per thread");
    static_assert((A_LD * 2) % 16 == 0 && (B_LD * 2) % 16 == 0, "padded rows must start on 16 bytes");
    static_assert((A_ELEMS * 2) % 16 == 0 && (STAGE * 2) % 16 == 0, "stages must start on 16 bytes");
};

/* One operand as stored in global memory: rows x cols, row pitch ld. */
struct xs_operand {
    const unsigned short *p; /* 2-byte elements: only their bits are copied */
    long long rows, cols, ld;
    int vec;
};

struct xs_kargs {
    const void *a, *b;
    void *c;
    int m, n, k, mt, nt;
    long long lda, ldb, ldc;
    int a_vec, b_vec, c_pair;
    unsigned smem_bytes; /* what the host gave the launch (checked on entry) */
};

__device__ __forceinline__ unsigned xs_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* The chunk at global (r, c) as 16 bytes, reading element by element
 * (zeros outside the matrix). For the partial and unaligned chunks. */
__device__ __forceinline__ uint4 xs_chunk_scalar(const xs_operand &o, long long r, long long c)
{
    unsigned short e[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        e[i] = (r < o.rows && c + i < o.cols) ? o.p[r * o.ld + c + i] : (unsigned short)0;
    uint4 v;
    v.x = e[0] | ((unsigned)e[1] << 16);
    v.y = e[2] | ((unsigned)e[3] << 16);
    v.z = e[4] | ((unsigned)e[5] << 16);
    v.w = e[6] | ((unsigned)e[7] << 16);
    return v;
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800
/* The chunk at (r, c) into registers (sm_75's staging). */
__device__ __forceinline__ uint4 xs_chunk_load(const xs_operand &o, long long r, long long c)
{
    int kind = xs_gemm_chunk_kind(r, c, o.rows, o.cols, o.vec);
    if (kind == XS_GEMM_CHUNK_FULL)
        return __ldg(reinterpret_cast<const uint4 *>(o.p + r * o.ld + c));
    if (kind == XS_GEMM_CHUNK_EMPTY)
        return make_uint4(0, 0, 0, 0);
    return xs_chunk_scalar(o, r, c);
}
#endif

#if __CUDA_ARCH__ >= 800
/* cp.async.cg: 16 bytes global -> shared, bypassing L1; src_size 0 fills
 * the 16 bytes with zeros and reads nothing (the address given is the
 * operand's base, always valid). */
__device__ __forceinline__ void xs_cp_async16(void *smem, const void *gmem, int src_size)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(xs_smem_addr(smem)), "l"(gmem),
                 "r"(src_size)
                 : "memory");
}
__device__ __forceinline__ void xs_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void xs_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* A tile of `o` at (r0, c0) into shared memory `s` (row pitch LD), by
 * cp.async where a chunk is whole, by ordinary stores where it is partial
 * (those are visible after the same __syncthreads as the copies). */
template <int COLS, int LD, int CHUNKS>
__device__ __forceinline__ void xs_tile_async(unsigned short *s, const xs_operand &o, long long r0, long long c0)
{
#pragma unroll
    for (int i = 0; i < CHUNKS; i++) {
        int row, col;
        xs_gemm_chunk_at((int)threadIdx.x + i * XS_GEMM_THREADS, COLS, &row, &col);
        long long r = r0 + row, c = c0 + col;
        unsigned short *dst = s + row * LD + col;
        int kind = xs_gemm_chunk_kind(r, c, o.rows, o.cols, o.vec);
        if (kind == XS_GEMM_CHUNK_FULL)
            xs_cp_async16(dst, o.p + r * o.ld + c, 16);
        else if (kind == XS_GEMM_CHUNK_EMPTY)
            xs_cp_async16(dst, o.p, 0);
        else
            *reinterpret_cast<uint4 *>(dst) = xs_chunk_scalar(o, r, c);
    }
}
#endif

__device__ __forceinline__ void xs_ldsm_x4(unsigned r[4], const unsigned short *p)
{
#if __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(xs_smem_addr(p)));
#else
    (void)p;
    r[0] = r[1] = r[2] = r[3] = 0;
    __trap();
#endif
}

__device__ __forceinline__ void xs_ldsm_x4_trans(unsigned r[4], const unsigned short *p)
{
#if __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(xs_smem_addr(p)));
#else
    (void)p;
    r[0] = r[1] = r[2] = r[3] = 0;
    __trap();
#endif
}

/* d += a b for one 16 x 8 x 16 tile, fp32 accumulators. */
template <typename T> struct xs_mma;

template <> struct xs_mma<__half> {
    static __device__ __forceinline__ void run(float d[4], const unsigned a[4], const unsigned b[2])
    {
#if __CUDA_ARCH__ >= 800
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif __CUDA_ARCH__ >= 750
        /* k 0..7 are a0, a1 and b0; k 8..15 a2, a3 and b1 (the m16n8k8
         * fragments are the halves of m16n8k16's) */
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(b[0]));
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[2]), "r"(a[3]), "r"(b[1]));
#else
        (void)d, (void)a, (void)b;
        __trap();
#endif
    }
    static __device__ __forceinline__ unsigned pack(float x, float y)
    {
        __half2 h = __floats2half2_rn(x, y);
        return *reinterpret_cast<unsigned *>(&h);
    }
    static __device__ __forceinline__ unsigned short one(float x)
    {
        __half h = __float2half_rn(x);
        return *reinterpret_cast<unsigned short *>(&h);
    }
};

template <> struct xs_mma<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float d[4], const unsigned a[4], const unsigned b[2])
    {
#if __CUDA_ARCH__ >= 800
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
        /* no bf16 mma before sm_80; the launcher never gets here */
        (void)d, (void)a, (void)b;
        __trap();
#endif
    }
    static __device__ __forceinline__ unsigned pack(float x, float y)
    {
        __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
        return *reinterpret_cast<unsigned *>(&h);
    }
    static __device__ __forceinline__ unsigned short one(float x)
    {
        __nv_bfloat16 h = __float2bfloat16_rn(x);
        return *reinterpret_cast<unsigned short *>(&h);
    }
};

/* acc += the stage's A tile x B tile (32 of k: two k16 steps). */
template <typename T, bool TA, bool TB>
__device__ __forceinline__ void xs_stage_mma(float (&acc)[XS_GEMM_MI][XS_GEMM_NJ][4], const unsigned short *as,
                                             const unsigned short *bs, int warp_m, int warp_n, int lane)
{
    typedef xs_layout<TA, TB> L;
#pragma unroll
    for (int kk = 0; kk < XS_GEMM_BK; kk += 16) {
        unsigned af[XS_GEMM_MI][4], bf[XS_GEMM_NJ][2];
#pragma unroll
        for (int mi = 0; mi < XS_GEMM_MI; mi++) {
            const unsigned short *p =
                as + xs_gemm_ldsm_a(lane, TA, warp_m * XS_GEMM_WM + mi * 16, kk, L::A_LD);
            if (TA)
                xs_ldsm_x4_trans(af[mi], p);
            else
                xs_ldsm_x4(af[mi], p);
        }
#pragma unroll
        for (int nj = 0; nj < XS_GEMM_NJ; nj += 2) {
            unsigned r[4];
            const unsigned short *p =
                bs + xs_gemm_ldsm_b(lane, TB, warp_n * XS_GEMM_WN + nj * 8, kk, L::B_LD);
            if (TB)
                xs_ldsm_x4(r, p);
            else
                xs_ldsm_x4_trans(r, p);
            bf[nj][0] = r[0];
            bf[nj][1] = r[1];
            bf[nj + 1][0] = r[2];
            bf[nj + 1][1] = r[3];
        }
#pragma unroll
        for (int mi = 0; mi < XS_GEMM_MI; mi++)
#pragma unroll
            for (int nj = 0; nj < XS_GEMM_NJ; nj++)
                xs_mma<T>::run(acc[mi][nj], af[mi], bf[nj]);
    }
}

template <typename T, bool TA, bool TB>
__global__ void __launch_bounds__(XS_GEMM_THREADS, 2) xs_gemm_mma_kernel(xs_kargs p)
{
    typedef xs_layout<TA, TB> L;
    /* uint4: one declaration for every instantiation, 16-byte aligned */
    extern __shared__ uint4 xs_gemm_smem[];
    unsigned short *smem = reinterpret_cast<unsigned short *>(xs_gemm_smem);
#if __CUDA_ARCH__ >= 800
    constexpr int STAGES = XS_GEMM_STAGES_ASYNC;
#else
    constexpr int STAGES = XS_GEMM_STAGES_REGS;
#endif
    /* The host sized the shared memory with xs_gemm_smem_bytes for the
     * device's compute capability; a mismatch with this build's stage count
     * would read past it: stop rather than compute garbage. */
    unsigned dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    if (dyn < (unsigned)(2 * STAGES * L::STAGE) || p.smem_bytes < (unsigned)(2 * STAGES * L::STAGE))
        __trap();

    int tm, tn;
    xs_gemm_tile_of((int)blockIdx.x, p.mt, p.nt, &tm, &tn);
    const long long m0 = (long long)tm * XS_GEMM_BM, n0 = (long long)tn * XS_GEMM_BN;
    /* A stored m x k (or k x m when TA), B k x n (or n x k when TB) */
    xs_operand oa = {static_cast<const unsigned short *>(p.a), TA ? p.k : p.m, TA ? p.m : p.k, p.lda, p.a_vec};
    xs_operand ob = {static_cast<const unsigned short *>(p.b), TB ? p.n : p.k, TB ? p.k : p.n, p.ldb, p.b_vec};
    /* tile origins in the stored matrices for k offset k0 */
#define XS_A_R0(k0) (TA ? (long long)(k0) : m0)
#define XS_A_C0(k0) (TA ? m0 : (long long)(k0))
#define XS_B_R0(k0) (TB ? n0 : (long long)(k0))
#define XS_B_C0(k0) (TB ? (long long)(k0) : n0)

    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int warp_m = warp / XS_GEMM_WARPS_N, warp_n = warp % XS_GEMM_WARPS_N;
    const int ktiles = (p.k - 1) / XS_GEMM_BK + 1; /* k >= 1; k + 31 could pass INT_MAX */

    float acc[XS_GEMM_MI][XS_GEMM_NJ][4];
#pragma unroll
    for (int mi = 0; mi < XS_GEMM_MI; mi++)
#pragma unroll
        for (int nj = 0; nj < XS_GEMM_NJ; nj++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[mi][nj][e] = 0.0f;

#if __CUDA_ARCH__ >= 800
    /* Prologue: tiles 0..STAGES-2 in flight, one commit group each (empty
     * groups too, so that "group kt is complete" is always wait_group
     * STAGES-2). */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ktiles) {
            unsigned short *st = smem + s * L::STAGE;
            xs_tile_async<L::A_COLS, L::A_LD, L::A_CHUNKS>(st, oa, XS_A_R0(s * XS_GEMM_BK), XS_A_C0(s * XS_GEMM_BK));
            xs_tile_async<L::B_COLS, L::B_LD, L::B_CHUNKS>(st + L::A_ELEMS, ob, XS_B_R0(s * XS_GEMM_BK),
                                                           XS_B_C0(s * XS_GEMM_BK));
        }
        xs_cp_async_commit();
    }
    for (int kt = 0; kt < ktiles; kt++) {
        /* this thread's copies of tile kt are done; the barrier makes every
         * thread's visible, and tells that all warps have finished tile
         * kt-1, whose stage the prefetch below overwrites */
        xs_cp_async_wait<STAGES - 2>();
        __syncthreads();
        int next = kt + STAGES - 1;
        if (next < ktiles) {
            unsigned short *st = smem + (next % STAGES) * L::STAGE;
            long long k0 = (long long)next * XS_GEMM_BK;
            xs_tile_async<L::A_COLS, L::A_LD, L::A_CHUNKS>(st, oa, XS_A_R0(k0), XS_A_C0(k0));
            xs_tile_async<L::B_COLS, L::B_LD, L::B_CHUNKS>(st + L::A_ELEMS, ob, XS_B_R0(k0), XS_B_C0(k0));
        }
        xs_cp_async_commit();
        const unsigned short *st = smem + (kt % STAGES) * L::STAGE;
        xs_stage_mma<T, TA, TB>(acc, st, st + L::A_ELEMS, warp_m, warp_n, lane);
    }
    xs_cp_async_wait<0>();
#else
    /* sm_75: two buffers; tile kt+1 travels in registers while tile kt is
     * multiplied, and is stored after it. */
    uint4 ra[L::A_CHUNKS], rb[L::B_CHUNKS];
    auto load = [&](long long k0) {
#pragma unroll
        for (int i = 0; i < L::A_CHUNKS; i++) {
            int row, col;
            xs_gemm_chunk_at((int)threadIdx.x + i * XS_GEMM_THREADS, L::A_COLS, &row, &col);
            ra[i] = xs_chunk_load(oa, XS_A_R0(k0) + row, XS_A_C0(k0) + col);
        }
#pragma unroll
        for (int i = 0; i < L::B_CHUNKS; i++) {
            int row, col;
            xs_gemm_chunk_at((int)threadIdx.x + i * XS_GEMM_THREADS, L::B_COLS, &row, &col);
            rb[i] = xs_chunk_load(ob, XS_B_R0(k0) + row, XS_B_C0(k0) + col);
        }
    };
    auto store = [&](int buf) {
        unsigned short *st = smem + buf * L::STAGE;
#pragma unroll
        for (int i = 0; i < L::A_CHUNKS; i++) {
            int row, col;
            xs_gemm_chunk_at((int)threadIdx.x + i * XS_GEMM_THREADS, L::A_COLS, &row, &col);
            *reinterpret_cast<uint4 *>(st + row * L::A_LD + col) = ra[i];
        }
#pragma unroll
        for (int i = 0; i < L::B_CHUNKS; i++) {
            int row, col;
            xs_gemm_chunk_at((int)threadIdx.x + i * XS_GEMM_THREADS, L::B_COLS, &row, &col);
            *reinterpret_cast<uint4 *>(st + L::A_ELEMS + row * L::B_LD + col) = rb[i];
        }
    };
    load(0);
    store(0);
    __syncthreads();
    for (int kt = 0; kt < ktiles; kt++) {
        bool more = kt + 1 < ktiles;
        if (more)
            load((long long)(kt + 1) * XS_GEMM_BK);
        const unsigned short *st = smem + (kt & 1) * L::STAGE;
        xs_stage_mma<T, TA, TB>(acc, st, st + L::A_ELEMS, warp_m, warp_n, lane);
        /* buffer (kt+1)&1 was last read in iteration kt-1, which every warp
         * finished before the barrier that ended it */
        if (more)
            store((kt + 1) & 1);
        __syncthreads();
    }
#endif
#undef XS_A_R0
#undef XS_A_C0
#undef XS_B_R0
#undef XS_B_C0

    /* Epilogue: accumulators -> T, predicated on m and n. */
    unsigned short *c = static_cast<unsigned short *>(p.c);
#pragma unroll
    for (int mi = 0; mi < XS_GEMM_MI; mi++)
#pragma unroll
        for (int nj = 0; nj < XS_GEMM_NJ; nj++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int r, col;
                xs_gemm_acc_at(lane, 2 * h, &r, &col);
                long long row = m0 + warp_m * XS_GEMM_WM + mi * 16 + r;
                long long cc = n0 + warp_n * XS_GEMM_WN + nj * 8 + col;
                if (row >= p.m || cc >= p.n)
                    continue;
                float x = acc[mi][nj][2 * h], y = acc[mi][nj][2 * h + 1];
                unsigned short *dst = c + row * p.ldc + cc;
                if (p.c_pair && cc + 1 < p.n) {
                    *reinterpret_cast<unsigned *>(dst) = xs_mma<T>::pack(x, y);
                } else {
                    dst[0] = xs_mma<T>::one(x);
                    if (cc + 1 < p.n)
                        dst[1] = xs_mma<T>::one(y);
                }
            }
}

typedef void (*xs_kernel_fn)(xs_kargs);

template <typename T> xs_kernel_fn xs_pick(int ta, int tb)
{
    if (ta)
        return tb ? xs_gemm_mma_kernel<T, true, true> : xs_gemm_mma_kernel<T, true, false>;
    return tb ? xs_gemm_mma_kernel<T, false, true> : xs_gemm_mma_kernel<T, false, false>;
}

xs_kernel_fn xs_kernel_for(const xs_gemm_operands *op)
{
    return op->dtype == XS_CD_BF16 ? xs_pick<__nv_bfloat16>(op->ta, op->tb) : xs_pick<__half>(op->ta, op->tb);
}

/* The launch's arguments; 0 when the grid cannot be formed. */
int xs_kargs_of(const xs_gemm_operands *op, int cc_major, xs_kargs *k)
{
    if (!xs_gemm_blocks(op->m, op->n, &k->mt, &k->nt))
        return 0;
    k->a = op->a;
    k->b = op->b;
    k->c = op->c;
    k->m = op->m;
    k->n = op->n;
    k->k = op->k;
    k->lda = op->lda;
    k->ldb = op->ldb;
    k->ldc = op->ldc;
    k->a_vec = xs_gemm_vec_ok((uintptr_t)op->a, op->lda, 2);
    k->b_vec = xs_gemm_vec_ok((uintptr_t)op->b, op->ldb, 2);
    k->c_pair = xs_gemm_pair_ok((uintptr_t)op->c, op->ldc);
    k->smem_bytes = (unsigned)xs_gemm_smem_bytes(op->ta, op->tb, xs_gemm_stages(cc_major));
    return 1;
}

} /* namespace */

int xs_gemm_mma_prepare(const xs_gemm_operands *op, char *impl, size_t impl_sz, char *err, size_t errsz)
{
    const cudaDeviceProp *pr = xs_cu_props();
    if (op->dtype != XS_CD_FP16 && op->dtype != XS_CD_BF16) {
        snprintf(err, errsz, "own GEMM: dtype %d: fp16 or bf16 expected (fp32 and tf32 run through cuBLAS)",
                 op->dtype);
        return XS_CUDA_UNSUPPORTED;
    }
    if (pr->major < 7 || (pr->major == 7 && pr->minor < 5)) {
        snprintf(err, errsz, "own GEMM: compute capability %d.%d: ldmatrix and mma.sync need 7.5 (Turing) or newer",
                 pr->major, pr->minor);
        return XS_CUDA_UNSUPPORTED;
    }
    if (op->dtype == XS_CD_BF16 && pr->major < 8) {
        snprintf(err, errsz, "own GEMM: bf16 on compute capability %d.%d: bf16 mma.sync needs 8.0 (Ampere) or newer",
                 pr->major, pr->minor);
        return XS_CUDA_UNSUPPORTED;
    }
    xs_kargs k;
    if (!xs_kargs_of(op, pr->major, &k)) {
        snprintf(err, errsz, "own GEMM: m %d x n %d is more than 2^31-1 tiles of 128 x 128", op->m, op->n);
        return XS_CUDA_BADJOB;
    }
    if (k.smem_bytes > pr->sharedMemPerBlockOptin) {
        snprintf(err, errsz, "own GEMM: needs %u bytes of shared memory per block, the device allows %zu",
                 k.smem_bytes, (size_t)pr->sharedMemPerBlockOptin);
        return XS_CUDA_UNSUPPORTED;
    }
    XS_CU_TRY(cudaFuncSetAttribute(xs_kernel_for(op), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)k.smem_bytes));
    int stages = xs_gemm_stages(pr->major);
    snprintf(impl, impl_sz, "mma.sync %s %dx%dx%d %d-stage %s%s", pr->major >= 8 ? "m16n8k16" : "m16n8k8x2",
             XS_GEMM_BM, XS_GEMM_BN, XS_GEMM_BK, stages, pr->major >= 8 ? "cp.async" : "regs",
             k.a_vec && k.b_vec ? "" : " scalar-loads");
    return XS_CUDA_OK;
}

cudaError_t xs_gemm_mma_launch(const xs_gemm_operands *op, cudaStream_t stream)
{
    xs_kargs k;
    if (!xs_kargs_of(op, xs_cu_props()->major, &k))
        return cudaErrorInvalidValue;
    xs_kernel_for(op)<<<(unsigned)(k.mt * (long long)k.nt), XS_GEMM_THREADS, k.smem_bytes, stream>>>(k);
    return cudaGetLastError();
}
