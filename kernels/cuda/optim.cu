/* optim.cu — the optimizer jobs: the tensor list a job describes, its
 * arrays on the GPU, the timed step, and the check against the shared math
 * of kernels/common/optim_math.h (fused: bit for bit, fp32 and the master
 * path; eager: the state bit for bit, the parameter within a stated bound).
 * Hyper-parameters are fixed (the time does not depend on them): Adan's
 * betas 0.98, 0.92, 0.99 and eps 1e-8 (sail-sg/Adan defaults, as
 * kernels/cpu/optim.c), AdamW's 0.9, 0.999, 1e-8 and weight decay 0.01
 * (torch.optim.AdamW defaults), lr 1e-3; Adan's weight decay 0.02 so its
 * decay path runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "../common/half_convert.h"
#include "../common/multi_tensor.h"
#include "check.cuh"
#include "optim_cu.cuh"

#define LR 1e-3f
#define ADAN_WD 0.02f
#define ADAMW_WD 0.01f

/* Buffer slots of the optimizer arrays (xs_cu_buffer) */
enum { SLOT_P = 3, SLOT_G, SLOT_MASTER, SLOT_S0, SLOT_TMP = SLOT_S0 + 4 };

static xs_adan_consts adan_consts(int step)
{
    return xs_adan_setup(LR, 0.98f, 0.92f, 0.99f, 1e-8f, ADAN_WD, step);
}

static xs_adamw_consts adamw_consts(int step)
{
    return xs_adamw_setup(LR, 0.9f, 0.999f, 1e-8f, ADAMW_WD, step);
}

static int state_lists(int kind)
{
    return kind == XS_CJ_ADAMW_FUSED ? 2 : 4;
}

static const char *kind_name(int kind)
{
    return kind == XS_CJ_ADAN_FUSED ? "adan_fused" : kind == XS_CJ_ADAN_EAGER ? "adan_eager"
                                                                            : "adamw_fused";
}

static const char *dtype_name(int dtype)
{
    return dtype == XS_CD_FP16 ? "fp16" : dtype == XS_CD_BF16 ? "bf16" : "fp32";
}

/* Offsets of the tensors packed one after the other, each start rounded up
 * to `align` elements (the caching allocator's 512-byte blocks give a real
 * model's tensors aligned starts; align 1 packs them unaligned, to test the
 * kernels' scalar paths). Returns the elements of one array. */
static long long layout(const std::vector<long long> &size, long long align,
                        std::vector<long long> &offset)
{
    long long at = 0;
    offset.resize(size.size());
    for (size_t t = 0; t < size.size(); t++) {
        at = (at + align - 1) / align * align;
        offset[t] = at;
        at += size[t];
    }
    return at > 0 ? at : 1;
}

static cudaError_t step_call(int kind, const xs_optim_arrays *a, int step, cudaStream_t st,
                             int *launches)
{
    if (kind == XS_CJ_ADAMW_FUSED) {
        xs_adamw_consts c = adamw_consts(step);
        return xs_cu_adamw_fused(a, &c, st, launches);
    }
    xs_adan_consts c = adan_consts(step);
    return kind == XS_CJ_ADAN_EAGER ? xs_cu_adan_eager(a, &c, st, launches)
                                    : xs_cu_adan_fused(a, &c, st, launches);
}

typedef struct {
    int kind, step, launches;
    xs_optim_arrays a;
} optim_ctx;

static cudaError_t optim_call(void *vctx, cudaStream_t st)
{
    optim_ctx *x = (optim_ctx *)vctx;
    return step_call(x->kind, &x->a, x->step, st, &x->launches);
}

static int unsupported_eager(const xs_cuda_job *job, char *err, size_t errsz)
{
    if (job->kind == XS_CJ_ADAN_EAGER && job->dtype != XS_CD_FP32) {
        snprintf(err, errsz, "adan_eager: fp32 parameters only (dtype %s asked)",
                 dtype_name(job->dtype));
        return XS_CUDA_UNSUPPORTED;
    }
    return XS_CUDA_OK;
}

static std::vector<long long> tensor_list(long long elems, int hidden)
{
    long long n = xs_mt_transformer_sizes(elems, hidden, NULL, 0);
    std::vector<long long> size(n > 0 ? (size_t)n : 0);
    if (n > 0)
        xs_mt_transformer_sizes(elems, hidden, size.data(), n);
    return size;
}

int xs_cu_optim_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz)
{
    int rc = unsupported_eager(job, err, errsz);
    if (rc)
        return rc;
    std::vector<long long> size = tensor_list(job->elems, job->hidden), offset;
    if (size.empty()) {
        snprintf(err, errsz, "job.elems %lld, hidden %d: no tensor list", job->elems, job->hidden);
        return XS_CUDA_BADJOB;
    }
    long long total = layout(size, 64, offset), biggest = 0;
    for (long long s : size)
        biggest = s > biggest ? s : biggest;
    optim_ctx x;
    memset(&x, 0, sizeof x);
    x.kind = job->kind;
    x.step = job->step;
    xs_optim_arrays *a = &x.a;
    a->dtype = job->dtype;
    a->n = size.size();
    a->size = size.data();
    a->offset = offset.data();
    int low = job->dtype != XS_CD_FP32;
    size_t psz = low ? 2 : 4, n = (size_t)total;
    if (!(a->p = xs_cu_buffer(SLOT_P, n * psz, err, errsz)) ||
        !(a->g = xs_cu_buffer(SLOT_G, n * psz, err, errsz)))
        return XS_CUDA_FAILED;
    if (low && !(a->master = (float *)xs_cu_buffer(SLOT_MASTER, n * 4, err, errsz)))
        return XS_CUDA_FAILED;
    for (int k = 0; k < state_lists(job->kind); k++)
        if (!(a->s[k] = (float *)xs_cu_buffer(SLOT_S0 + k, n * 4, err, errsz)))
            return XS_CUDA_FAILED;
    if (job->kind == XS_CJ_ADAN_EAGER &&
        !(a->tmp = (float *)xs_cu_buffer(SLOT_TMP, (size_t)biggest * 4, err, errsz)))
        return XS_CUDA_FAILED;
    /* realistic magnitudes; n (Adan's last state) must stay >= 0 */
    static const float lo[4] = {-1e-2f, -1e-3f, -1e-3f, 0}, hi[4] = {1e-2f, 1e-3f, 1e-3f, 1e-4f};
    for (int k = 0; k < state_lists(job->kind); k++) {
        int kk = job->kind == XS_CJ_ADAMW_FUSED ? k + 1 : k; /* AdamW: m, v */
        if ((rc = xs_cu_fill_f32(a->s[k], n, 10 + k, lo[kk], hi[kk], err, errsz)))
            return rc;
    }
    if (low) {
        int bf = job->dtype == XS_CD_BF16;
        if ((rc = xs_cu_fill_16((unsigned short *)a->p, n, 20, -1, 1, bf, err, errsz)) ||
            (rc = xs_cu_fill_16((unsigned short *)a->g, n, 21, -1e-2f, 1e-2f, bf, err, errsz)) ||
            (rc = xs_cu_fill_f32(a->master, n, 22, -1, 1, err, errsz)))
            return rc;
    } else if ((rc = xs_cu_fill_f32((float *)a->p, n, 20, -1, 1, err, errsz)) ||
               (rc = xs_cu_fill_f32((float *)a->g, n, 21, -1e-2f, 1e-2f, err, errsz))) {
        return rc;
    }
    XS_CU_TRY(cudaDeviceSynchronize());
    if ((rc = xs_cu_time(job, optim_call, &x, res, err, errsz)))
        return rc;
    double per = job->kind == XS_CJ_ADAN_FUSED ? 44 : job->kind == XS_CJ_ADAN_EAGER ? 172 : 28;
    res->bytes = per * (double)job->elems;
    res->launches = x.launches;
    res->tensors = (int)size.size();
    if (job->kind == XS_CJ_ADAN_EAGER)
        snprintf(res->impl, sizeof res->impl, "adan_eager 17 kernels/tensor float4 x%d", 256);
    else
        snprintf(res->impl, sizeof res->impl, "%s multi-tensor %s %dx4 chunk %d",
                 kind_name(job->kind), dtype_name(job->dtype), XS_MT_THREADS, XS_MT_CHUNK);
    return XS_CUDA_OK;
}

/* ---- check ---------------------------------------------------------------- */

/* The host copy of one list's arrays. */
typedef struct {
    std::vector<float> p32, g32, master, s[4];
    std::vector<uint16_t> p16, g16;
} host_arrays;

static float g_value(const host_arrays &h, int dtype, size_t i)
{
    if (dtype == XS_CD_FP32)
        return h.g32[i];
    return dtype == XS_CD_FP16 ? xs_f16_bits_to_f32(h.g16[i]) : xs_bf16_bits_to_f32(h.g16[i]);
}

static uint16_t narrow(int dtype, float f)
{
    return dtype == XS_CD_FP16 ? xs_f32_to_f16_bits(f) : xs_f32_to_bf16_bits(f);
}

static void new_grads(host_arrays &h, int dtype, size_t n, xs_rng *r)
{
    for (size_t i = 0; i < n; i++) {
        float g = xs_rng_float(r, -1e-2f, 1e-2f);
        if (dtype == XS_CD_FP32)
            h.g32[i] = g;
        else
            h.g16[i] = narrow(dtype, g);
    }
}

/* The check's arrays: device slots, or host buffers (256-byte aligned, as
 * cudaMalloc's) when the launchers emulate the GPU. */
static void *host_slot[XS_CU_SLOTS];
static size_t host_cap[XS_CU_SLOTS];

static void *check_buffer(int slot, size_t bytes, char *err, size_t errsz)
{
    if (!xs_cu_emulate)
        return xs_cu_buffer(slot, bytes, err, errsz);
    bytes = (bytes + 255) / 256 * 256;
    if (host_cap[slot] >= bytes)
        return host_slot[slot];
    free(host_slot[slot]);
    host_slot[slot] = aligned_alloc(256, bytes);
    host_cap[slot] = host_slot[slot] ? bytes : 0;
    if (!host_slot[slot])
        snprintf(err, errsz, "emulation: out of host memory (%zu bytes)", bytes);
    return host_slot[slot];
}

static void check_release_host(void)
{
    for (int i = 0; i < XS_CU_SLOTS; i++) {
        free(host_slot[i]);
        host_slot[i] = NULL;
        host_cap[i] = 0;
    }
}

static cudaError_t copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if (xs_cu_emulate) {
        memcpy(dst, src, bytes);
        return cudaSuccess;
    }
    return cudaMemcpy(dst, src, bytes, kind);
}

#define UP(dst, src, bytes) XS_CU_TRY(copy(dst, src, bytes, cudaMemcpyHostToDevice))
#define DOWN(dst, src, bytes) XS_CU_TRY(copy(dst, src, bytes, cudaMemcpyDeviceToHost))

/* Two steps (job->step, then the next with fresh gradients) of the kernel
 * and of the reference over one tensor list; *worst gets the largest error
 * on the xs_cuda.h scale. */
static int check_list(const xs_cuda_job *job, const std::vector<long long> &size, long long align,
                      unsigned seed, double *worst, char *err, size_t errsz)
{
    const int kind = job->kind, dt = job->dtype, ns = state_lists(kind), low = dt != XS_CD_FP32;
    std::vector<long long> offset;
    const size_t n = (size_t)layout(size, align, offset);
    long long biggest = 1;
    for (long long s : size)
        biggest = s > biggest ? s : biggest;
    xs_rng r = {seed};
    host_arrays h, ref;
    static const float lo[4] = {-1e-2f, -1e-3f, -1e-3f, 0}, hi[4] = {1e-2f, 1e-3f, 1e-3f, 1e-4f};
    if (low) {
        h.p16.resize(n);
        h.g16.resize(n);
        h.master.resize(n);
    } else {
        h.p32.resize(n);
        h.g32.resize(n);
    }
    for (int k = 0; k < ns; k++)
        h.s[k].resize(n);
    for (size_t i = 0; i < n; i++) {
        float p = xs_rng_float(&r, -1, 1);
        if (low) {
            h.master[i] = p;
            h.p16[i] = narrow(dt, p);
        } else {
            h.p32[i] = p;
        }
        for (int k = 0; k < ns; k++) {
            int kk = kind == XS_CJ_ADAMW_FUSED ? k + 1 : k;
            h.s[k][i] = xs_rng_float(&r, lo[kk], hi[kk]);
        }
    }
    new_grads(h, dt, n, &r);
    ref = h;
    if (kind == XS_CJ_ADAN_EAGER) /* the eager kernels keep -g_prev */
        for (size_t i = 0; i < n; i++)
            h.s[0][i] = -h.s[0][i];

    xs_optim_arrays a;
    memset(&a, 0, sizeof a);
    a.dtype = dt;
    a.n = size.size();
    a.size = size.data();
    a.offset = offset.data();
    const size_t psz = low ? 2 : 4;
    if (!(a.p = check_buffer(SLOT_P, n * psz, err, errsz)) ||
        !(a.g = check_buffer(SLOT_G, n * psz, err, errsz)) ||
        (low && !(a.master = (float *)check_buffer(SLOT_MASTER, n * 4, err, errsz))) ||
        (kind == XS_CJ_ADAN_EAGER &&
         !(a.tmp = (float *)check_buffer(SLOT_TMP, (size_t)biggest * 4, err, errsz))))
        return XS_CUDA_FAILED;
    for (int k = 0; k < ns; k++)
        if (!(a.s[k] = (float *)check_buffer(SLOT_S0 + k, n * 4, err, errsz)))
            return XS_CUDA_FAILED;
    UP(a.p, low ? (void *)h.p16.data() : (void *)h.p32.data(), n * psz);
    if (low)
        UP(a.master, h.master.data(), n * 4);
    for (int k = 0; k < ns; k++)
        UP(a.s[k], h.s[k].data(), n * 4);

    /* eager's bound on |p - p_ref|, per element, summed over the steps:
     * its p takes three roundings where the fused update takes two, and
     * its denominator divides by sqrt(bc3) instead of multiplying by the
     * inverse: 3 ulp of the largest p it passes through, plus 16 units of
     * 2^-24 of the two update terms (a few roundings each) */
    std::vector<double> tol(kind == XS_CJ_ADAN_EAGER ? n : 0, 0.0);
    for (int st = 0; st < 2; st++) {
        int step = job->step + st;
        if (st == 1) {
            new_grads(h, dt, n, &r);
            if (low)
                ref.g16 = h.g16;
            else
                ref.g32 = h.g32;
        }
        UP(a.g, low ? (void *)h.g16.data() : (void *)h.g32.data(), n * psz);
        XS_CU_TRY(step_call(kind, &a, step, 0, NULL));
        if (!xs_cu_emulate)
            XS_CU_TRY(cudaDeviceSynchronize());
        /* the reference: the same tensors, element by element */
        xs_adan_consts ca = adan_consts(step);
        xs_adamw_consts cw = adamw_consts(step);
        for (size_t t = 0; t < size.size(); t++)
            for (long long e = 0; e < size[t]; e++) {
                size_t i = (size_t)(offset[t] + e);
                float g = g_value(ref, dt, i);
                float *p = low ? &ref.master[i] : &ref.p32[i];
                float p0 = *p;
                if (kind == XS_CJ_ADAMW_FUSED) {
                    xs_adamw_elem(&cw, p, g, &ref.s[0][i], &ref.s[1][i]);
                } else {
                    xs_adan_elem(&ca, p, g, &ref.s[0][i], &ref.s[1][i], &ref.s[2][i], &ref.s[3][i]);
                    if (kind == XS_CJ_ADAN_EAGER) {
                        double den = sqrt((double)ref.s[3][i]) * ca.inv_sqrt_bc3 + ca.eps;
                        double ua = fabs(ca.step_m * (double)ref.s[1][i] / den);
                        double ub = fabs(ca.step_v * (double)ref.s[2][i] / den);
                        tol[i] = tol[i] * ca.inv_decay +
                                 3 * xs_ulp_at(fabs(p0) + ua + ub, 23, -126) +
                                 16 * ldexp(ua + ub, -24);
                    }
                }
                if (low)
                    ref.p16[i] = narrow(dt, *p);
            }
    }
    /* everything back and compared */
    host_arrays got;
    got.p32.resize(low ? 0 : n);
    got.p16.resize(low ? n : 0);
    got.master.resize(low ? n : 0);
    DOWN(low ? (void *)got.p16.data() : (void *)got.p32.data(), a.p, n * psz);
    if (low)
        DOWN(got.master.data(), a.master, n * 4);
    for (int k = 0; k < ns; k++) {
        got.s[k].resize(n);
        DOWN(got.s[k].data(), a.s[k], n * 4);
    }
    double w = 0;
    uint16_t mask = dt == XS_CD_FP16 ? 0x7c00 : 0x7f80;
    for (size_t i = 0; i < n; i++) {
        double e;
        if (kind == XS_CJ_ADAN_EAGER) {
            double d = fabs((double)got.p32[i] - (double)ref.p32[i]);
            e = isnan(got.p32[i]) ? HUGE_VAL : d / (tol[i] > 0 ? tol[i] : 1e-45);
            if (d == 0)
                e = 0;
            /* the state is the same operations: bit for bit; d is -g_prev */
            e = fmax(e, xs_exact_err(xs_ulps_f32(-got.s[0][i], ref.s[0][i])));
            for (int k = 1; k < ns; k++)
                e = fmax(e, xs_exact_err(xs_ulps_f32(got.s[k][i], ref.s[k][i])));
        } else {
            e = low ? fmax(xs_exact_err(xs_ulps_16(got.p16[i], ref.p16[i], mask)),
                           xs_exact_err(xs_ulps_f32(got.master[i], ref.master[i])))
                    : xs_exact_err(xs_ulps_f32(got.p32[i], ref.p32[i]));
            for (int k = 0; k < ns; k++)
                e = fmax(e, xs_exact_err(xs_ulps_f32(got.s[k][i], ref.s[k][i])));
        }
        if (e > w)
            w = e;
    }
    *worst = fmax(*worst, w);
    return XS_CUDA_OK;
}

/* The job's own tensor list (cut at XS_CHECK_MAX_ELEMS parameters), packed
 * with aligned starts as run() places them, then a list of awkward sizes
 * packed with no alignment: one element, three, empty tensors among them
 * and at the end, one just past a chunk, 1000003, one across two chunks
 * and a half, so that the vector paths, the scalar paths, the chunk tails
 * and the plan's empty-tensor skip all run. */
int xs_cu_optim_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz)
{
    int rc = unsupported_eager(job, err, errsz);
    if (rc)
        return rc;
    long long elems = job->elems < XS_CHECK_MAX_ELEMS ? job->elems : XS_CHECK_MAX_ELEMS;
    std::vector<long long> own = tensor_list(elems, job->hidden);
    std::vector<long long> odd = {1, 0, 3, 65537, 0, 4, 1000003, 5, 131072, 7, 0, 163842, 0};
    double worst = 0;
    if (!(rc = check_list(job, own, 64, 0xada0u + (unsigned)job->kind, &worst, err, errsz)) &&
        !(rc = check_list(job, own, 1, 0xada1u, &worst, err, errsz)))
        rc = check_list(job, odd, 1, 0xada2u, &worst, err, errsz);
    if (xs_cu_emulate)
        check_release_host();
    if (rc)
        return rc;
    *max_err = worst;
    return XS_CUDA_OK;
}
