/* optim_fused.cu — fused Adan and AdamW: one pass over every parameter,
 * many tensors per launch from the multi-tensor plan of
 * kernels/common/multi_tensor.h, the per-element math of optim_math.h
 * called as is (--fmad=false keeps it bit for bit with the CPU).
 * Parameters fp32, or fp16/bf16 with an fp32 master copy: the gradient
 * comes in the parameter's dtype and is widened in the kernel, the update
 * runs on the master and the parameter is written rounded to nearest even
 * (half_convert.h). State is fp32.
 * Bytes per parameter by definition (each array read once, each written
 * once): Adan fp32: p rw 8, g 4, g_prev rw 8, m, v, n rw 24 = 44; with a
 * master: p write 2, g 2, master rw 8, state 32 = 44. AdamW fp32: p rw 8,
 * g 4, m, v rw 16 = 28; with a master: 2 + 2 + 8 + 16 = 28. */
#include <stdint.h>
#include <string.h>

#include "../common/half_convert.h"
#include "../common/multi_tensor.h"
#include "optim_cu.cuh"

int xs_cu_emulate;

/* unrolled on the GPU (register arrays indexed by constants only); the
 * host compiler of the emulated path does not know the pragma */
#ifdef __CUDA_ARCH__
#define XS_UNROLL _Pragma("unroll")
#else
#define XS_UNROLL
#endif

/* parameter storage: 0 fp32, 1 fp16, 2 bf16 */
enum { PK_F32 = 0, PK_F16 = 1, PK_BF16 = 2 };

/* depth_to_max_tensors of multi_tensor.h as a compile-time value, for the
 * kernel argument's array sizes (checked against it at run time) */
constexpr int mt_max_t(int d)
{
    return d == 1 ? 110 : d == 2 ? 64 : d == 3 ? 48 : d == 4 ? 36 : d == 5 ? 30 : d == 6 ? 26
                                                                           : d == 7 ? 22 : 20;
}

/* The kernel argument of one launch: per list the addresses of its
 * tensors, their sizes, and the block table (apex's TensorListMetadata,
 * with 64-bit sizes). */
template <int D> struct mt_args {
    void *addr[D][mt_max_t(D)];
    long long size[mt_max_t(D)];
    unsigned char block_slot[XS_MT_MAX_BLOCKS];
    int block_chunk[XS_MT_MAX_BLOCKS];
};

struct adan_op {
    static constexpr int NS = 4; /* g_prev, m, v, n */
    typedef xs_adan_consts consts;
    static __host__ __device__ __forceinline__ void elem(const consts *c, float *p, float g, float *s)
    {
        xs_adan_elem(c, p, g, &s[0], &s[1], &s[2], &s[3]);
    }
};

struct adamw_op {
    static constexpr int NS = 2; /* m, v */
    typedef xs_adamw_consts consts;
    static __host__ __device__ __forceinline__ void elem(const consts *c, float *p, float g, float *s)
    {
        xs_adamw_elem(c, p, g, &s[0], &s[1]);
    }
};

template <class OP, int PK> struct mt_shape {
    static constexpr int D = 2 + (PK != PK_F32 ? 1 : 0) + OP::NS; /* p, g, [master], state */
};

/* the kernel parameter space is 4 KB (apex's reason for its limits) */
static_assert(sizeof(mt_args<mt_shape<adan_op, PK_F16>::D>) + sizeof(xs_adan_consts) + 8 <= 4096,
              "Adan's kernel argument passes 4 KB");
static_assert(sizeof(mt_args<mt_shape<adan_op, PK_F32>::D>) + sizeof(xs_adan_consts) + 8 <= 4096,
              "Adan's kernel argument passes 4 KB");
static_assert(sizeof(mt_args<mt_shape<adamw_op, PK_F16>::D>) + sizeof(xs_adamw_consts) + 8 <= 4096,
              "AdamW's kernel argument passes 4 KB");
static_assert(sizeof(mt_args<mt_shape<adamw_op, PK_F32>::D>) + sizeof(xs_adamw_consts) + 8 <= 4096,
              "AdamW's kernel argument passes 4 KB");

template <int PK> __host__ __device__ __forceinline__ float widen(uint16_t h)
{
    return PK == PK_F16 ? xs_f16_bits_to_f32(h) : xs_bf16_bits_to_f32(h);
}

template <int PK> __host__ __device__ __forceinline__ uint16_t narrow(float f)
{
    return PK == PK_F16 ? xs_f32_to_f16_bits(f) : xs_f32_to_bf16_bits(f);
}

/* The four elements a thread holds, through the optimizer's per-element
 * update: the state of element j of list k is sv[k][j]. Shared by the fp32
 * and the half-parameter paths, which differ only in how p and g arrive. */
template <class OP>
__host__ __device__ __forceinline__ void step4(const typename OP::consts &cc, float pv[4],
                                               const float gv[4], float (*sv)[4])
{
XS_UNROLL
    for (int j = 0; j < 4; j++) {
        float s[OP::NS];
XS_UNROLL
        for (int k = 0; k < OP::NS; k++)
            s[k] = sv[k][j];
        OP::elem(&cc, &pv[j], gv[j], s);
XS_UNROLL
        for (int k = 0; k < OP::NS; k++)
            sv[k][j] = s[k];
    }
}

template <int NS>
__host__ __device__ __forceinline__ void load_state4(float *const *st, long long i, float (*sv)[4])
{
XS_UNROLL
    for (int k = 0; k < NS; k++) {
        float4 S = reinterpret_cast<const float4 *>(st[k])[i];
        sv[k][0] = S.x, sv[k][1] = S.y, sv[k][2] = S.z, sv[k][3] = S.w;
    }
}

template <int NS>
__host__ __device__ __forceinline__ void store_state4(float *const *st, long long i,
                                                      float (*sv)[4])
{
XS_UNROLL
    for (int k = 0; k < NS; k++)
        reinterpret_cast<float4 *>(st[k])[i] = make_float4(sv[k][0], sv[k][1], sv[k][2], sv[k][3]);
}

/* One element (the tail, or a tensor not aligned for vectors): *pv in place. */
template <class OP>
__host__ __device__ __forceinline__ void step1(const typename OP::consts &cc, float *pv, float g,
                                               float *const *st, long long i)
{
    float s[OP::NS];
XS_UNROLL
    for (int k = 0; k < OP::NS; k++)
        s[k] = st[k][i];
    OP::elem(&cc, pv, g, s);
XS_UNROLL
    for (int k = 0; k < OP::NS; k++)
        st[k][i] = s[k];
}

/* One block a chunk; 4 consecutive elements a thread per step: float4 for
 * fp32 arrays and 8-byte loads of 4 halves when every array of the tensor
 * is aligned for them (the chunk size is a multiple of 4, so the tensor's
 * base decides), else one element at a time. */
template <class OP, int PK>
__host__ __device__ __forceinline__ void mt_block(const mt_args<mt_shape<OP, PK>::D> &a,
                                                  const typename OP::consts &c, long long chunk,
                                                  int block, int tid, int nthreads)
{
    constexpr int NS = OP::NS, S0 = PK != PK_F32 ? 3 : 2; /* first state list */
    const int slot = a.block_slot[block];
    long long first;
    const long long len = xs_mt_chunk_span(a.size[slot], chunk, a.block_chunk[block], &first);
    float *st[NS];
    uintptr_t f32_bits = 0;
XS_UNROLL
    for (int k = 0; k < NS; k++) {
        st[k] = (float *)a.addr[S0 + k][slot] + first;
        f32_bits |= (uintptr_t)st[k];
    }
    const typename OP::consts cc = c;
    if (PK == PK_F32) {
        float *p = (float *)a.addr[0][slot] + first;
        const float *g = (const float *)a.addr[1][slot] + first;
        f32_bits |= (uintptr_t)p | (uintptr_t)g;
        long long n4 = (f32_bits & 15) == 0 ? len / 4 : 0;
        for (long long i = tid; i < n4; i += nthreads) {
            float4 P = reinterpret_cast<const float4 *>(p)[i];
            float4 G = reinterpret_cast<const float4 *>(g)[i];
            float pv[4] = {P.x, P.y, P.z, P.w}, gv[4] = {G.x, G.y, G.z, G.w}, sv[NS][4];
            load_state4<NS>(st, i, sv);
            step4<OP>(cc, pv, gv, sv);
            reinterpret_cast<float4 *>(p)[i] = make_float4(pv[0], pv[1], pv[2], pv[3]);
            store_state4<NS>(st, i, sv);
        }
        for (long long i = n4 * 4 + tid; i < len; i += nthreads) {
            float pv = p[i];
            step1<OP>(cc, &pv, g[i], st, i);
            p[i] = pv;
        }
    } else {
        uint16_t *p = (uint16_t *)a.addr[0][slot] + first;
        const uint16_t *g = (const uint16_t *)a.addr[1][slot] + first;
        float *ms = (float *)a.addr[2][slot] + first;
        f32_bits |= (uintptr_t)ms;
        int aligned = (f32_bits & 15) == 0 && (((uintptr_t)p | (uintptr_t)g) & 7) == 0;
        long long n4 = aligned ? len / 4 : 0;
        for (long long i = tid; i < n4; i += nthreads) {
            uint2 G = reinterpret_cast<const uint2 *>(g)[i]; /* element 0 in the low half */
            float4 M = reinterpret_cast<const float4 *>(ms)[i];
            float gv[4] = {widen<PK>((uint16_t)(G.x & 0xffffu)), widen<PK>((uint16_t)(G.x >> 16)),
                           widen<PK>((uint16_t)(G.y & 0xffffu)), widen<PK>((uint16_t)(G.y >> 16))};
            float pv[4] = {M.x, M.y, M.z, M.w}, sv[NS][4];
            load_state4<NS>(st, i, sv);
            step4<OP>(cc, pv, gv, sv);
            reinterpret_cast<float4 *>(ms)[i] = make_float4(pv[0], pv[1], pv[2], pv[3]);
            uint2 P;
            P.x = (uint32_t)narrow<PK>(pv[0]) | ((uint32_t)narrow<PK>(pv[1]) << 16);
            P.y = (uint32_t)narrow<PK>(pv[2]) | ((uint32_t)narrow<PK>(pv[3]) << 16);
            reinterpret_cast<uint2 *>(p)[i] = P;
            store_state4<NS>(st, i, sv);
        }
        for (long long i = n4 * 4 + tid; i < len; i += nthreads) {
            float pv = ms[i];
            step1<OP>(cc, &pv, widen<PK>(g[i]), st, i);
            ms[i] = pv;
            p[i] = narrow<PK>(pv);
        }
    }
}

template <class OP, int PK>
__global__ void __launch_bounds__(XS_MT_THREADS, XS_MT_BLOCKS_PER_SM)
    xs_mt_optim_kernel(mt_args<mt_shape<OP, PK>::D> a, typename OP::consts c, long long chunk)
{
    mt_block<OP, PK>(a, c, chunk, blockIdx.x, threadIdx.x, blockDim.x);
}

template <class OP, int PK>
static cudaError_t mt_launch(const xs_optim_arrays *A, const typename OP::consts *c,
                             cudaStream_t stream, int *launches)
{
    constexpr int D = mt_shape<OP, PK>::D, NS = OP::NS;
    constexpr int MT = mt_max_t(D);
    if (xs_mt_max_tensors(D) != MT)
        return cudaErrorInvalidValue;
    for (int k = 0; k < NS; k++)
        if (!A->s[k])
            return cudaErrorInvalidValue;
    if (!A->p || !A->g || (PK != PK_F32 && !A->master))
        return cudaErrorInvalidValue;
    xs_mt_plan plan;
    if (xs_mt_plan_init(&plan, A->size, A->n, XS_MT_CHUNK, MT, XS_MT_MAX_BLOCKS) != 0)
        return cudaErrorInvalidValue;
    static xs_mt_launch L; /* host only, one step at a time */
    mt_args<D> args;
    memset(&args, 0, sizeof args);
    const size_t psz = PK == PK_F32 ? 4 : 2;
    int count = 0;
    while (xs_mt_next(&plan, &L)) {
        for (int s = 0; s < L.ntensors; s++) {
            size_t t = L.tensor[s];
            long long off = A->offset[t];
            args.addr[0][s] = (char *)A->p + (size_t)off * psz;
            args.addr[1][s] = (char *)A->g + (size_t)off * psz;
            int k = 2;
            if (PK != PK_F32)
                args.addr[k++][s] = A->master + off;
            for (int q = 0; q < NS; q++)
                args.addr[k++][s] = A->s[q] + off;
            args.size[s] = A->size[t];
        }
        memcpy(args.block_slot, L.block_slot, (size_t)L.nblocks);
        memcpy(args.block_chunk, L.block_chunk, (size_t)L.nblocks * sizeof(int));
        if (xs_cu_emulate) { /* the same blocks, thread by thread, on the host */
            for (int b = 0; b < L.nblocks; b++)
                for (int t = 0; t < XS_MT_THREADS; t++)
                    mt_block<OP, PK>(args, *c, (long long)XS_MT_CHUNK, b, t, XS_MT_THREADS);
        } else {
            xs_mt_optim_kernel<OP, PK><<<L.nblocks, XS_MT_THREADS, 0, stream>>>(
                args, *c, (long long)XS_MT_CHUNK);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess)
                return e;
        }
        count++;
    }
    if (launches)
        *launches = count;
    return cudaSuccess;
}

cudaError_t xs_cu_adan_fused(const xs_optim_arrays *a, const xs_adan_consts *c,
                             cudaStream_t st, int *launches)
{
    switch (a->dtype) {
    case XS_CD_FP32: return mt_launch<adan_op, PK_F32>(a, c, st, launches);
    case XS_CD_FP16: return mt_launch<adan_op, PK_F16>(a, c, st, launches);
    case XS_CD_BF16: return mt_launch<adan_op, PK_BF16>(a, c, st, launches);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t xs_cu_adamw_fused(const xs_optim_arrays *a, const xs_adamw_consts *c,
                              cudaStream_t st, int *launches)
{
    switch (a->dtype) {
    case XS_CD_FP32: return mt_launch<adamw_op, PK_F32>(a, c, st, launches);
    case XS_CD_FP16: return mt_launch<adamw_op, PK_F16>(a, c, st, launches);
    case XS_CD_BF16: return mt_launch<adamw_op, PK_BF16>(a, c, st, launches);
    default: return cudaErrorInvalidValue;
    }
}
