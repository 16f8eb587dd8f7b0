/* rowop.cu — the LayerNorm and softmax jobs: buffers, the timed call, and
 * the check against a double-precision loop over the same (dtype-rounded)
 * inputs, each element within a stated bound: one unit in the last place
 * of the output dtype (the final rounding) plus the fp32 math's error,
 * (L + 16) 2^-24 relative for a sum whose threads each add L elements in
 * sequence before a tree of at most 16 levels (the recursive-summation
 * bound, Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
 * sec. 4.2), carried through each formula below. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <vector>

#include "check.cuh"
#include "rowop.cuh"

enum { SLOT_X = 11, SLOT_Y, SLOT_GB, SLOT_STATS };

static size_t dsize(int dtype)
{
    return dtype == XS_CD_FP16 || dtype == XS_CD_BF16 ? 2 : 4;
}

typedef struct {
    int kind, dtype;
    long long m, n;
    void *x, *y, *gamma, *beta;
    float *mean, *rstd;
} row_ctx;

static cudaError_t row_call(void *vctx, cudaStream_t st)
{
    row_ctx *r = (row_ctx *)vctx;
    if (r->kind == XS_CJ_LAYERNORM)
        return xs_cu_layernorm(r->dtype, r->x, r->gamma, r->beta, r->y, r->mean, r->rstd, r->m,
                               r->n, st);
    return xs_cu_softmax(r->dtype, r->x, r->y, r->m, r->n, st);
}

/* the slots of a row job of m x n */
static int row_buffers(row_ctx *r, char *err, size_t errsz)
{
    size_t s = dsize(r->dtype), mn = (size_t)r->m * (size_t)r->n;
    char *gb;
    float *stats;
    if (!(r->x = xs_cu_buffer(SLOT_X, mn * s, err, errsz)) ||
        !(r->y = xs_cu_buffer(SLOT_Y, mn * s, err, errsz)) ||
        !(gb = (char *)xs_cu_buffer(SLOT_GB, 2 * (size_t)r->n * s, err, errsz)) ||
        !(stats = (float *)xs_cu_buffer(SLOT_STATS, 2 * (size_t)r->m * 4, err, errsz)))
        return XS_CUDA_FAILED;
    r->gamma = gb;
    r->beta = gb + (size_t)r->n * s;
    r->mean = stats;
    r->rstd = stats + r->m;
    return XS_CUDA_OK;
}

static int fill(void *d, int dtype, size_t n, unsigned seed, float lo, float hi, char *err,
                size_t errsz)
{
    if (dtype == XS_CD_FP32)
        return xs_cu_fill_f32((float *)d, n, seed, lo, hi, err, errsz);
    return xs_cu_fill_16((unsigned short *)d, n, seed, lo, hi, dtype == XS_CD_BF16, err, errsz);
}

int xs_cu_rowop_run(const xs_cuda_job *job, xs_cuda_result *res, char *err, size_t errsz)
{
    row_ctx r = {job->kind, job->dtype, job->m, job->n, NULL, NULL, NULL, NULL, NULL, NULL};
    int rc;
    if ((rc = row_buffers(&r, err, errsz)))
        return rc;
    size_t mn = (size_t)r.m * (size_t)r.n;
    if ((rc = fill(r.x, r.dtype, mn, 30, -4, 4, err, errsz)) ||
        (rc = fill(r.gamma, r.dtype, (size_t)r.n, 31, 0.5f, 1.5f, err, errsz)) ||
        (rc = fill(r.beta, r.dtype, (size_t)r.n, 32, -0.5f, 0.5f, err, errsz)))
        return rc;
    if ((rc = xs_cu_time(job, row_call, &r, res, err, errsz)))
        return rc;
    double s = (double)dsize(r.dtype), m = (double)r.m, n = (double)r.n;
    res->bytes = job->kind == XS_CJ_LAYERNORM ? 2 * s * m * n + 2 * s * n + 8 * m : 2 * s * m * n;
    res->launches = 1;
    const char *dn = r.dtype == XS_CD_FP16 ? "fp16" : r.dtype == XS_CD_BF16 ? "bf16" : "fp32";
    if (r.n <= XS_ROW_WARP_MAX)
        snprintf(res->impl, sizeof res->impl, "%s %s warp/row (%d rows/block), in registers",
                 job->kind == XS_CJ_LAYERNORM ? "layernorm" : "softmax", dn, XS_ROW_WARPS);
    else
        snprintf(res->impl, sizeof res->impl, "%s %s block/row x%d, 3 passes",
                 job->kind == XS_CJ_LAYERNORM ? "layernorm" : "softmax", dn, XS_ROW_BLOCK);
    return XS_CUDA_OK;
}

/* host values in the dtype, and their exact fp32 values */
static void host_values(int dtype, size_t n, xs_rng *g, float lo, float hi, std::vector<uint8_t> &raw,
                        std::vector<float> &val)
{
    raw.resize(n * dsize(dtype));
    val.resize(n);
    for (size_t i = 0; i < n; i++) {
        float f = xs_rng_float(g, lo, hi);
        if (dtype == XS_CD_FP32) {
            memcpy(&raw[i * 4], &f, 4);
        } else {
            uint16_t h = dtype == XS_CD_FP16 ? xs_f32_to_f16_bits(f) : xs_f32_to_bf16_bits(f);
            memcpy(&raw[i * 2], &h, 2);
            f = dtype == XS_CD_FP16 ? xs_f16_bits_to_f32(h) : xs_bf16_bits_to_f32(h);
        }
        val[i] = f;
    }
}

static float out_value(int dtype, const std::vector<uint8_t> &raw, size_t i)
{
    if (dtype == XS_CD_FP32) {
        float f;
        memcpy(&f, &raw[i * 4], 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, &raw[i * 2], 2);
    return dtype == XS_CD_FP16 ? xs_f16_bits_to_f32(h) : xs_bf16_bits_to_f32(h);
}

static double out_ulp(int dtype, double v)
{
    return dtype == XS_CD_FP16 ? xs_ulp_at(v, 10, -14)
           : dtype == XS_CD_BF16 ? xs_ulp_at(v, 7, -126)
                                 : xs_ulp_at(v, 23, -126);
}

/* One run at the job's width n (rows of at most 2^24 elements) and as many
 * rows as fit in XS_CHECK_MAX_ELEMS (at least 1), inputs rounded to the
 * dtype first, y poisoned with NaN patterns so an unwritten element fails. */
int xs_cu_rowop_check(const xs_cuda_job *job, double *max_err, char *err, size_t errsz)
{
    const int dt = job->dtype, ln = job->kind == XS_CJ_LAYERNORM;
    long long n = job->n < (1LL << 24) ? job->n : (1LL << 24);
    long long m = XS_CHECK_MAX_ELEMS / n;
    m = m < 1 ? 1 : m > job->m ? job->m : m;
    row_ctx r = {job->kind, dt, m, n, NULL, NULL, NULL, NULL, NULL, NULL};
    int rc;
    if ((rc = row_buffers(&r, err, errsz)))
        return rc;
    const size_t mn = (size_t)m * (size_t)n, s = dsize(dt);
    xs_rng g = {0x1a7e5ULL ^ (unsigned long long)(n * 31 + m)};
    std::vector<uint8_t> xr, gr, br, yr(mn * s);
    std::vector<float> xv, gv, bv;
    /* LayerNorm: an offset of 3 so the mean matters; softmax: a range of 16 */
    host_values(dt, mn, &g, ln ? 2 : -8, ln ? 4 : 8, xr, xv);
    host_values(dt, (size_t)n, &g, 0.5f, 1.5f, gr, gv);
    host_values(dt, (size_t)n, &g, -0.5f, 0.5f, br, bv);
    XS_CU_TRY(cudaMemcpy(r.x, xr.data(), mn * s, cudaMemcpyHostToDevice));
    XS_CU_TRY(cudaMemcpy(r.gamma, gr.data(), (size_t)n * s, cudaMemcpyHostToDevice));
    XS_CU_TRY(cudaMemcpy(r.beta, br.data(), (size_t)n * s, cudaMemcpyHostToDevice));
    XS_CU_TRY(cudaMemset(r.y, 0xff, mn * s)); /* NaN in all three dtypes */
    XS_CU_TRY(cudaMemset(r.mean, 0xff, 2 * (size_t)m * 4));
    XS_CU_TRY(row_call(&r, 0));
    XS_CU_TRY(cudaDeviceSynchronize());
    XS_CU_TRY(cudaMemcpy(yr.data(), r.y, mn * s, cudaMemcpyDeviceToHost));
    std::vector<float> stats(2 * (size_t)m);
    XS_CU_TRY(cudaMemcpy(stats.data(), r.mean, 2 * (size_t)m * 4, cudaMemcpyDeviceToHost));

    const double u = ldexp(1.0, -24), gam = (double)(xs_row_serial(n) + 16) * u;
    double worst = 0;
    for (long long row = 0; row < m; row++) {
        const float *x = &xv[(size_t)(row * n)];
        double mx = -HUGE_VAL, sum = 0, sabs = 0;
        for (long long c = 0; c < n; c++) {
            mx = fmax(mx, x[c]);
            sum += x[c];
            sabs += fabs(x[c]);
        }
        double mu = sum / n, q = 0, es = 0;
        for (long long c = 0; c < n; c++) {
            q += (x[c] - mu) * (x[c] - mu);
            es += exp(x[c] - mx);
        }
        double rs = 1 / sqrt(q / n + (double)XS_LN_EPS);
        if (ln) {
            /* the fp32 mean is off by up to gam sum|x| / n; the variance by
             * gam relative, so rstd by about gam / 2 (doubled for margin) */
            double dmu = 2 * gam * sabs / n + xs_ulp_at(mu, 23, -126);
            double e_mu = fabs(stats[(size_t)row] - mu) / dmu;
            double e_rs = fabs(stats[(size_t)(m + row)] - rs) / (2 * gam * rs + xs_ulp_at(rs, 23, -126));
            worst = fmax(worst, isnan(stats[(size_t)row]) || isnan(stats[(size_t)(m + row)])
                                    ? HUGE_VAL
                                    : fmax(e_mu, e_rs));
            for (long long c = 0; c < n; c++) {
                double xh = (x[c] - mu) * rs, want = xh * gv[(size_t)c] + bv[(size_t)c];
                double got = out_value(dt, yr, (size_t)(row * n + c));
                double tol = out_ulp(dt, want) +
                             fabs(gv[(size_t)c]) * (fabs(xh) * 2 * gam + dmu * rs) +
                             4 * u * (fabs(xh * gv[(size_t)c]) + fabs(bv[(size_t)c]));
                worst = fmax(worst, isnan(got) ? HUGE_VAL : fabs(got - want) / tol);
            }
        } else {
            for (long long c = 0; c < n; c++) {
                double want = exp(x[c] - mx) / es;
                double got = out_value(dt, yr, (size_t)(row * n + c));
                /* x - max rounds (|x - max| u, carried by exp), expf's 2 ulp,
                 * the sum's gam and the division's half ulp */
                double tol = out_ulp(dt, want) + want * (gam + (fabs(x[c] - mx) + 4) * u);
                worst = fmax(worst, isnan(got) ? HUGE_VAL : fabs(got - want) / tol);
            }
        }
    }
    *max_err = worst;
    return XS_CUDA_OK;
}
