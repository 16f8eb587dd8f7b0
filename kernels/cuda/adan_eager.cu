/* adan_eager.cu — Adan as PyTorch's single-tensor implementation runs it
 * (sail-sg/Adan adan.py _single_tensor_adan, the order of
 * kernels/cpu/optim.c's xs_krn_adan_eager): 17 elementwise kernels per
 * tensor, each one full pass, so every intermediate goes through DRAM.
 * fp32 only. d holds -g_prev (PyTorch's neg_pre_grad), t is a temporary.
 * Bytes per parameter by definition, pass by pass (read + write, a store
 * that overwrites a whole value reads nothing first): 1 d+=g 12, 2 m*= 8,
 * 3 m+=g 12, 4 v*= 8, 5 v+=d 12, 6 d*= 8, 7 d+=g 12, 8 n*= 8, 9 n+=d*d 12,
 * 10 t=sqrt(n) 8, 11 t/= 8, 12 t+= 8, 13 p+=m/t 16, 14 p+=v/t 16, 15 p*= 8,
 * 16 d=0 4, 17 d-=g 12: 172. (The CPU's 176 counts the write-allocate read
 * of pass 16, which a GPU store of whole sectors does not make.) */
#include <stdint.h>

#include "optim_cu.cuh"

#define EAGER_THREADS 256

typedef struct {
    float b1, b2, b3, one_b1, one_b2, one_b3, sqrt_bc3, eps, neg_step_m, neg_step_v, inv_decay;
} eager_consts;

/* pass OP: y = f(y, a, b); whether it reads y and how many inputs */
__host__ __device__ constexpr bool reads_y(int op) { return op != 10 && op != 16; }
__host__ __device__ constexpr int inputs(int op)
{
    return (op == 13 || op == 14) ? 2
           : (op == 1 || op == 3 || op == 5 || op == 7 || op == 9 || op == 10 || op == 17) ? 1
                                                                                            : 0;
}

template <int OP>
__host__ __device__ __forceinline__ float eager_f(float y, float a, float b, const eager_consts &c)
{
    switch (OP) {
    case 1: return y + a;                      /* diff = g - g_prev (d is -g_prev) */
    case 2: return y * c.b1;                   /* m.mul_(b1) */
    case 3: return y + c.one_b1 * a;           /* m.add_(g, 1-b1) */
    case 4: return y * c.b2;                   /* v.mul_(b2) */
    case 5: return y + c.one_b2 * a;           /* v.add_(diff, 1-b2) */
    case 6: return y * c.b2;                   /* diff.mul_(b2) */
    case 7: return y + a;                      /* diff.add_(g): u */
    case 8: return y * c.b3;                   /* n.mul_(b3) */
    case 9: return y + c.one_b3 * (a * a);     /* n.addcmul_(u, u, 1-b3) */
    case 10: return sqrtf(a);                  /* denom = n.sqrt() */
    case 11: return y / c.sqrt_bc3;            /* .div_(sqrt(bc3)) */
    case 12: return y + c.eps;                 /* .add_(eps) */
    case 13: return y + c.neg_step_m * (a / b); /* p.addcdiv_(m, denom, -step_m) */
    case 14: return y + c.neg_step_v * (a / b); /* p.addcdiv_(v, denom, -step_v) */
    case 15: return y * c.inv_decay;           /* p.div_(1 + lr wd) */
    case 16: return 0.0f;                      /* neg_pre_grad.zero_() */
    default: return y - a;                     /* .add_(g, alpha=-1) */
    }
}

/* grid-stride, float4 when every array it touches is 16-byte aligned */
template <int OP>
__host__ __device__ __forceinline__ void eager_thread(float *y, const float *a, const float *b,
                                                      long long n, const eager_consts &c,
                                                      long long tid, long long stride)
{
    constexpr bool RY = reads_y(OP);
    constexpr int NI = inputs(OP);
    uintptr_t al = (uintptr_t)y | (NI >= 1 ? (uintptr_t)a : 0) | (NI >= 2 ? (uintptr_t)b : 0);
    long long done = 0;
    if ((al & 15) == 0) {
        long long n4 = n / 4;
        for (long long i = tid; i < n4; i += stride) {
            float4 Y = RY ? reinterpret_cast<const float4 *>(y)[i] : make_float4(0, 0, 0, 0);
            float4 A = NI >= 1 ? reinterpret_cast<const float4 *>(a)[i] : make_float4(0, 0, 0, 0);
            float4 B = NI >= 2 ? reinterpret_cast<const float4 *>(b)[i] : make_float4(0, 0, 0, 0);
            Y.x = eager_f<OP>(Y.x, A.x, B.x, c);
            Y.y = eager_f<OP>(Y.y, A.y, B.y, c);
            Y.z = eager_f<OP>(Y.z, A.z, B.z, c);
            Y.w = eager_f<OP>(Y.w, A.w, B.w, c);
            reinterpret_cast<float4 *>(y)[i] = Y;
        }
        done = n4 * 4;
    }
    for (long long i = done + tid; i < n; i += stride)
        y[i] = eager_f<OP>(RY ? y[i] : 0.0f, NI >= 1 ? a[i] : 0.0f, NI >= 2 ? b[i] : 0.0f, c);
}

template <int OP>
__global__ void __launch_bounds__(EAGER_THREADS)
    xs_adan_eager_kernel(float *y, const float *a, const float *b, long long n, eager_consts c)
{
    eager_thread<OP>(y, a, b, n, c, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                     (long long)gridDim.x * blockDim.x);
}

template <int OP>
static cudaError_t pass(float *y, const float *a, const float *b, long long n, int grid_cap,
                        const eager_consts &c, cudaStream_t st)
{
    long long need = (n / 4 + EAGER_THREADS) / EAGER_THREADS;
    int grid = need < grid_cap ? (int)need : grid_cap;
    if (xs_cu_emulate) {
        long long threads = (long long)grid * EAGER_THREADS;
        for (long long t = 0; t < threads; t++)
            eager_thread<OP>(y, a, b, n, c, t, threads);
        return cudaSuccess;
    }
    xs_adan_eager_kernel<OP><<<grid, EAGER_THREADS, 0, st>>>(y, a, b, n, c);
    return cudaGetLastError();
}

cudaError_t xs_cu_adan_eager(const xs_optim_arrays *A, const xs_adan_consts *k,
                             cudaStream_t st, int *launches)
{
    if (A->dtype != XS_CD_FP32 || !A->p || !A->g || !A->tmp || !A->s[0] || !A->s[1] ||
        !A->s[2] || !A->s[3])
        return cudaErrorInvalidValue;
    eager_consts c = {k->b1,      k->b2,  k->b3, k->one_b1, k->one_b2, k->one_b3,
                      1.0f / k->inv_sqrt_bc3, k->eps, -k->step_m, -k->step_v, k->inv_decay};
    /* one occupancy query per step, not per launch: the 17 kernels are alike */
    int grid_cap = xs_cu_emulate ? 4 /* a few blocks: the grid-stride loop wraps */
                                 : xs_cu_fill_grid((const void *)xs_adan_eager_kernel<13>,
                                                   EAGER_THREADS, 1LL << 30);
    int count = 0;
    cudaError_t e = cudaSuccess;
    for (size_t t = 0; t < A->n && e == cudaSuccess; t++) {
        long long n = A->size[t], o = A->offset[t];
        if (n == 0)
            continue; /* PyTorch launches nothing for an empty tensor */
        float *p = (float *)A->p + o, *tm = A->tmp;
        const float *g = (const float *)A->g + o;
        float *d = A->s[0] + o, *m = A->s[1] + o, *v = A->s[2] + o, *nn = A->s[3] + o;
        if ((e = pass<1>(d, g, NULL, n, grid_cap, c, st)) ||
            (e = pass<2>(m, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<3>(m, g, NULL, n, grid_cap, c, st)) ||
            (e = pass<4>(v, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<5>(v, d, NULL, n, grid_cap, c, st)) ||
            (e = pass<6>(d, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<7>(d, g, NULL, n, grid_cap, c, st)) ||
            (e = pass<8>(nn, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<9>(nn, d, NULL, n, grid_cap, c, st)) ||
            (e = pass<10>(tm, nn, NULL, n, grid_cap, c, st)) ||
            (e = pass<11>(tm, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<12>(tm, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<13>(p, m, tm, n, grid_cap, c, st)) ||
            (e = pass<14>(p, v, tm, n, grid_cap, c, st)) ||
            (e = pass<15>(p, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<16>(d, NULL, NULL, n, grid_cap, c, st)) ||
            (e = pass<17>(d, g, NULL, n, grid_cap, c, st)))
            break;
        count += 17;
    }
    if (launches)
        *launches = count;
    return e;
}
