/* gemm.c — see gemm.h. Times are for one kernel call on an idle device. */
#include "gemm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "checked.h"

/* An fp32 accumulator tile takes tm.tn.4 bytes of registers, and the rest
 * of a GEMM kernel's registers (addresses, fragments) about half as much
 * again. */
#define ACC_REG_OVERHEAD 1.5
#define MAX_CTAS_PER_SM 16

int xs_gemm_parse_tiles(const char *text, xs_tile *tiles, int *n, const char *where,
                        const char *field, xs_error *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        xs_tile t = {0, 0, 0, 1};
        int used = 0, cused = 0;
        int got = sscanf(tok, "%dx%d/%d%n", &t.m, &t.n, &t.stages, &used);
        if (got == 3 && tok[used] == 'c' && sscanf(tok + used, "c%d%n", &t.cluster, &cused) == 1)
            used += cused;
        /* the whole word is the tile: "128x128/4x" is a typo, not a 128x128/4 tile */
        int ok = got == 3 && tok[used] == '\0' && t.m >= 8 && t.n >= 8 && t.m <= 1024 &&
                 t.n <= 1024 && t.stages >= 1 && t.stages <= 16 && t.cluster >= 1 &&
                 t.cluster <= 16;
        if (!ok || *n == XS_MAX_TILES)
            return xs_error_set(err, XS_EFIELD,
                                "%s: field '%s' must list up to %d tiles like 128x128/4 or "
                                "256x128/4c2, got \"%s\"",
                                where, field, XS_MAX_TILES, tok);
        tiles[(*n)++] = t;
    }
    if (*n == 0)
        return xs_error_set(err, XS_EFIELD, "%s: field '%s' lists no tile", where, field);
    return XS_OK;
}

double xs_gemm_rate(const xs_gemm_engine *e, xs_dtype want, xs_dtype *engine, int *tensor)
{
    xs_dtype use = want;
    if (want != XS_FP32 && e->peak_tflops[want] <= 0)
        use = XS_FP32; /* no matrix-engine path: the library computes in fp32 */
    *engine = use;
    *tensor = use != XS_FP32;
    return e->peak_flops[use] * e->efficiency[use];
}

/* Largest power of two (<= 16) dividing a row of ld elements of es bytes. */
static int row_alignment(int64_t ld, int es)
{
    int64_t bytes = ld * es;
    int a = 16;
    while (a > 1 && bytes % a)
        a /= 2;
    return a;
}

typedef struct {
    const xs_gemm_engine *e;
    const xs_gemm_shape *g;
    int es;               /* input element bytes */
    double sm_flops;      /* per SM, at the sustained clock, x gemm_efficiency */
    double l2_sm;         /* L2 -> SM bytes/s per SM, after the alignment penalty */
    double lat;           /* global-memory latency, s */
    double smem;          /* shared memory per SM, bytes */
    double l2_bytes;
    double dram_bw;       /* achievable */
    double tile_overhead; /* s per tile */
    int sms;
} ctx;

/* Time of one tile when cc CTAs share its SM; *limit says what bounds the
 * mainloop: 0 MMA, 1 L2 loads, 2 latency. */
static double tile_time(const ctx *c, const xs_tile *t, int tk, int64_t kt, int cc, int *limit)
{
    double mma = 2.0 * t->m * t->n * tk / c->sm_flops;
    /* a cluster loads the n-side operand once and multicasts it */
    double load = ((double)t->m + (double)t->n / t->cluster) * tk * c->es / c->l2_sm;
    double lat = c->lat / (t->stages > 1 ? t->stages - 1 : 1);
    double a = cc * mma, b = cc * load, iter = fmax(fmax(a, b), lat);
    if (limit)
        *limit = iter == a ? 0 : iter == b ? 1 : 2;
    double iters = ceil((double)kt / tk);
    double epilogue = cc * (double)t->m * t->n * c->g->out_bytes / c->l2_sm;
    /* pipeline fill before the first MMA and the store after the last, and
     * a fixed cost per tile where the device measured one (CPU kernels) */
    return iters * iter + 2 * c->lat + epilogue + cc * c->tile_overhead;
}

/* DRAM bytes: operands once if they fit in L2 together, else re-read by
 * each group of concurrent tiles that shares them. */
static double dram_bytes(const ctx *c, const xs_tile *t, int64_t tiles_m, int64_t tiles_n,
                         int64_t slots, int split)
{
    const xs_gemm_shape *g = c->g;
    double A = (double)g->m * g->k * c->es, B = (double)g->k * g->n * c->es;
    double C = (double)g->m * g->n * g->out_bytes;
    double ra = 1, rb = 1;
    if (A + B > c->l2_bytes / 2) {
        double gn = fmin((double)tiles_n, fmax(1, floor(sqrt((double)slots))));
        double gm = fmin((double)tiles_m, fmax(1, floor((double)slots / gn)));
        ra = ceil((double)tiles_n / gn);
        rb = ceil((double)tiles_m / gm);
    }
    (void)t;
    double partials = split > 1 ? 2.0 * split * g->m * g->n * 4 : 0; /* fp32 partial sums */
    return (double)g->batch * (A * ra + B * rb + C + partials);
}

int xs_gemm_model_direct(const xs_gemm_engine *e, const xs_gemm_shape *g, xs_gemm_result *r,
                         xs_error *err)
{
    memset(r, 0, sizeof *r);
    xs_dtype engine;
    int tensor;
    xs_gemm_rate(e, g->dtype, &engine, &tensor);
    ctx c;
    c.e = e;
    c.g = g;
    c.es = xs_dtype_bytes(engine);
    c.sms = (int)e->units;
    c.sm_flops = e->peak_flops[engine] * e->efficiency[engine] / c.sms;
    c.tile_overhead = e->tile_overhead_ns[engine] * 1e-9;
    /* Operands whose rows are only 8, 4, 2 or 1-byte aligned force narrower
     * per-thread loads (cuBLAS/CUTLASS align4/2/1 kernels). L1 and the load
     * units process one request per warp instruction, so bandwidth holds
     * while a warp's 32 loads still fill a 128-byte line (>= 4 bytes each)
     * and falls in proportion below that. */
    int align = 16;
    if (g->m > 0 && g->n > 0 && g->k > 0 && !e->packs_operands) {
        /* rows of A, B and C (the epilogue stores C with vector stores or TMA) */
        int64_t a_ld = g->ta ? g->m : g->k, b_ld = g->tb ? g->k : g->n;
        int la = row_alignment(a_ld, c.es), lb = row_alignment(b_ld, c.es),
            lc = row_alignment(g->n, g->out_bytes);
        align = la < lb ? la : lb;
        align = lc < align ? lc : align;
    }
    double align_factor = fmin(1.0, align / 4.0);
    c.l2_sm = e->l2_bw_gbs * 1e9 / c.sms * align_factor;
    /* Rows that are not 16-byte aligned rule out the TMA-fed kernels (TMA
     * needs 16-byte aligned strides): the library runs its unaligned set. */
    int unaligned = tensor && align < 16;
    if (unaligned)
        c.sm_flops *= e->unaligned_rate;
    /* cp.async copies 4, 8 or 16 bytes: narrower rows are staged through
     * registers, double-buffered at best. */
    int max_stages = tensor && align < 4 ? 2 : 1 << 30;
    c.lat = e->latency_ns * 1e-9;
    c.smem = e->smem_per_unit_kb * 1024;
    c.l2_bytes = e->l2_mb * 1024 * 1024;
    c.dram_bw = e->dram_bw_gbs * 1e9 * e->dram_efficiency;

    const xs_tile_set *set = !tensor ? e->vector : unaligned ? e->unaligned : e->matrix;
    const xs_tile *tiles = set->tiles;
    int ntiles = set->n;
    int64_t kbytes = set->k_bytes;
    int tk = (int)(kbytes / c.es);
    if (tk < 1)
        tk = 1;
    double launch = e->launch_us * 1e-6, best = INFINITY;
    int fitted = 0; /* some tile fits the unit's shared memory */
    for (int i = 0; i < ntiles; i++) {
        xs_tile staged = tiles[i];
        if (staged.stages > max_stages)
            staged.stages = max_stages;
        const xs_tile *t = &staged;
        double smem_cta = (double)t->stages * (t->m + t->n) * tk * c.es;
        /* clamped before the conversion: a huge shared memory or register
         * file would not fit an int (undefined behaviour) */
        int by_smem = xs_clamp_int(floor(c.smem / smem_cta), 0, MAX_CTAS_PER_SM);
        int by_regs = e->regfile_kb_per_unit > 0
                          ? xs_clamp_int(floor(e->regfile_kb_per_unit * 1024 /
                                               (t->m * (double)t->n * 4 * ACC_REG_OVERHEAD)),
                                         0, MAX_CTAS_PER_SM)
                          : MAX_CTAS_PER_SM;
        int cps = by_smem < by_regs ? by_smem : by_regs;
        if (cps > MAX_CTAS_PER_SM)
            cps = MAX_CTAS_PER_SM;
        if (e->max_tiles_per_unit > 0 && cps > e->max_tiles_per_unit)
            cps = (int)e->max_tiles_per_unit;
        if (cps < 1)
            continue;
        fitted = 1;
        int64_t tiles_m = (g->m + t->m - 1) / t->m, tiles_n = (g->n + t->n - 1) / t->n;
        for (int split = 1; split <= e->split_k_max; split *= 2) {
            if (split > 1 && (g->k / split) < 2 * tk)
                break;
            int64_t ntile;
            const int64_t factors[] = {tiles_m, tiles_n, g->batch, split};
            if (xs_prod_i64(factors, 4, &ntile))
                return xs_error_set(err, XS_ERANGE,
                                    "GEMM %lld x %lld x %lld (batch %lld) on device %s: its "
                                    "%.3g tiles of %dx%d overflow 64 bits; use smaller "
                                    "dimensions",
                                    (long long)g->m, (long long)g->n, (long long)g->k,
                                    (long long)g->batch, e->device_id,
                                    (double)tiles_m * (double)tiles_n * (double)g->batch * split,
                                    t->m, t->n);
            int64_t slots = (int64_t)c.sms * cps;
            int64_t waves = (ntile + slots - 1) / slots;
            int64_t kt = (g->k + split - 1) / split;
            int64_t last = ntile - (waves - 1) * slots;
            int cc_last = (int)((last + c.sms - 1) / c.sms);
            int limit;
            double sm_time = (double)(waves - 1) * tile_time(&c, t, tk, kt, cps, &limit) +
                             tile_time(&c, t, tk, kt, cc_last, waves == 1 ? &limit : NULL);
            double bytes = dram_bytes(&c, t, tiles_m, tiles_n, slots, split);
            double mem_time = bytes / c.dram_bw;
            double overhead = launch * (split > 1 ? 2 : 1); /* + the reduction kernel */
            double total = fmax(sm_time, mem_time) + overhead;
            if (total >= best)
                continue;
            best = total;
            r->time_s = total;
            r->compute_s = sm_time;
            r->memory_s = mem_time;
            r->overhead_s = overhead;
            r->bound = mem_time > sm_time ? XS_BOUND_MEMORY
                       : limit == 0       ? XS_BOUND_COMPUTE
                       : limit == 1       ? XS_BOUND_MEMORY
                                          : XS_BOUND_LATENCY;
            r->tile_m = t->m;
            r->tile_n = t->n;
            r->tile_k = tk;
            r->stages = t->stages;
            r->cluster = t->cluster;
            r->split_k = split;
            r->ctas_per_sm = cps;
            r->tiles = ntile;
            r->waves = waves;
            r->wave_eff = (double)ntile / ((double)waves * slots);
            r->tile_eff = (double)g->m * g->n / ((double)tiles_m * t->m * (double)tiles_n * t->n);
            double mma = 2.0 * t->m * t->n * tk / c.sm_flops * cps;
            double load = ((double)t->m + (double)t->n / t->cluster) * tk * c.es / c.l2_sm * cps;
            double lat = c.lat / (t->stages > 1 ? t->stages - 1 : 1);
            r->mainloop_eff = mma / fmax(fmax(mma, load), lat);
            r->dram_bytes = bytes;
        }
    }
    if (!fitted)
        return xs_error_set(err, XS_ERANGE,
                            "device %s: none of its %s GEMM tiles fits its %g KB of shared "
                            "memory per SM",
                            e->device_id, tensor ? "tensor" : "simt", e->smem_per_unit_kb);
    if (!isfinite(best) || !(best >= 0))
        return xs_error_set(err, XS_ERANGE,
                            "GEMM %lld x %lld x %lld (batch %lld) on device %s: no finite time "
                            "(%g s); a device figure is out of any real range",
                            (long long)g->m, (long long)g->n, (long long)g->k,
                            (long long)g->batch, e->device_id, best);
    r->engine = engine;
    r->tensor = tensor;
    r->peak_tflops = e->peak_tflops[engine];
    r->align_bytes = align;
    r->flops = 2.0 * g->m * g->n * g->k * g->batch;
    return XS_OK;
}
