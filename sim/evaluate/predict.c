/* predict.c — see predict.h. Kernels of one step run back to back on one
 * stream; on an accelerator the host queues them ahead of the device, so the
 * step is the sum of kernel times unless the host falls behind (a timeline
 * of both, below). */
#include "predict.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cost.h"
#include "energy.h"
#include "est_memo.h"
#include "fp8.h"
#include "fsdp.h"
#include "fsdp_timing.h"
#include "gemm.h"
#include "power.h"
#include "runs_on.h"
#include "host.h"
#include "lora.h"

/* Host and device run asynchronously: the host spends the host model's
 * time for each op queueing its kernels (who issues them sets the price a
 * launch, host.h); the device starts the op's first kernel once it is
 * queued and the previous op is done, and cannot finish before its last
 * kernel is queued. An op whose result the host reads back (sync), and the
 * loss read at a step's end (loss_sync), make the host wait for the
 * device. The host fetches the step's samples (load_s) before it queues
 * the first kernel. Two steps run so that the second starts with the lead
 * the host built in the first; its length is the steady-state step. */
/* What the loops over the step need of an op, worked out once per op of
 * the list (a compact list runs each many times): its calls' time,
 * energy and FLOPs, the host's time to issue them, and the share of both
 * before its first and after its last kernel. The step's sums read the
 * op's lanes: one per sum, the op's share of it or 0 (a collective's only
 * share is its issue time; an op adds its time to its own phase's and
 * bound's lanes). */
enum {
    L_ISSUE,
    L_T,
    L_ENERGY,
    L_FLOPS,
    L_MM_FLOPS, /* MFU counts the model's FLOPs, not a recomputation's */
    L_MM_T,
    L_PHASE,
    L_BOUND = L_PHASE + XS_PHASE_COUNT,
    L_COUNT = L_BOUND + XS_BOUND_COUNT,
    L_VECS = (L_COUNT + 1) / 2, /* pairs: SSE2's and NEON's width, any host's */
    L_PAD = 2 * L_VECS
};

/* two lanes, added as one vector where the target has them (a GNU C
 * extension gcc and clang share) */
typedef double lane_pair __attribute__((vector_size(16)));

typedef struct {
    union {
        double lane[L_PAD];
        lane_pair pair[L_VECS];
    };
    union { /* the time on the device and on the host: one vector add a step */
        struct {
            double t, issue;
        };
        lane_pair dev_host;
    };
    double first, tail;
    int sync, comm;
} op_sums;

static void sums_of(const xs_op *op, const xs_estimate *e, const xs_host *h,
                    const xs_host_costs *hc, op_sums *o)
{
    double n = (double)op->count, launches = (double)op->launches * n;
    *o = (op_sums){.t = e->time_s * n};
    o->issue = h ? xs_host_op_s_at(h, hc, op) * n : 0;
    o->first = launches > 0 ? o->issue / launches : 0;
    o->tail = launches > 0 ? o->t / launches : 0;
    o->sync = op->sync;
    o->comm = op->kind == XS_OP_COMM; /* NCCL's stream: data_parallel() */
    o->lane[L_ISSUE] = o->issue; /* the host issues the collectives too */
    if (o->comm)
        return;
    int matmul = xs_op_is_matmul(op->kind);
    o->lane[L_T] = o->t;
    o->lane[L_ENERGY] = e->energy_j * n;
    o->lane[L_FLOPS] = op->flops * n;
    o->lane[L_MM_FLOPS] = matmul && !op->recompute ? o->lane[L_FLOPS] : 0;
    o->lane[L_MM_T] = matmul ? o->t : 0;
    o->lane[L_PHASE + op->phase] = o->t;
    o->lane[L_BOUND + e->bound] = o->t;
}

/* The step's sums over its ops in order, every lane at every op: adding
 * an op's 0 leaves a sum as it was (the sums start at +0 and grow by
 * values >= 0), so each sum sees its own ops' additions in the step's
 * order, the same bits as adding them one sum at a time, and the lanes
 * add side by side in vector registers (unrolled, so that they stay
 * there). */
#define ADD_LANES(sum, x)                                                                      \
    do {                                                                                       \
        _Pragma("GCC unroll 16") for (int l_ = 0; l_ < L_VECS; l_++) (sum)[l_] += (x)->pair[l_]; \
    } while (0)

static void put_sums(const lane_pair *sum, xs_prediction *p)
{
    double acc[L_PAD];
    memcpy(acc, sum, sizeof acc);
    for (int ph = 0; ph < XS_PHASE_COUNT; ph++)
        p->phase_time_s[ph] = acc[L_PHASE + ph];
    for (int b = 0; b < XS_BOUND_COUNT; b++)
        p->bound_time_s[b] = acc[L_BOUND + b];
    p->step_time_s = acc[L_T];
    p->step_energy_j = acc[L_ENERGY];
    p->step_flops = acc[L_FLOPS];
    p->matmul_flops = acc[L_MM_FLOPS];
    p->matmul_time_s = acc[L_MM_T];
    p->host_issue_s = acc[L_ISSUE];
}

/* The spans of wl: its own, or the flat list as one */
static const struct xs_wl_span *spans_of(const xs_workload *wl, struct xs_wl_span *flat,
                                         size_t *n)
{
    *flat = (struct xs_wl_span){0, (uint32_t)wl->n, 1, 0};
    *n = wl->spans ? wl->nspans : 1;
    return wl->spans ? wl->spans : flat;
}

static void sum_step(const xs_workload *wl, const op_sums *o, xs_prediction *p)
{
    lane_pair sum[L_VECS] = {{0}};
    struct xs_wl_span flat;
    size_t n;
    const struct xs_wl_span *spans = spans_of(wl, &flat, &n);
    for (size_t j = 0; j < n; j++)
        for (uint32_t r = 0; r < spans[j].repeat; r++)
            for (const op_sums *x = o + spans[j].first, *end = x + spans[j].len; x < end; x++)
                ADD_LANES(sum, x);
    put_sums(sum, p);
}

/* fmax for the timeline's times, which are finite: inlined, where fmax is
 * a call (it must handle NaN) */
static inline double later(double a, double b)
{
    return a > b ? a : b;
}

/* One op on the timeline. */
static inline void run_op(const op_sums *x, double *host, double *dev)
{
    if (x->comm)
        return;
    double start = later(*dev, *host + x->first);
    *host += x->issue;
    *dev = later(start + x->t, *host + x->tail);
    if (x->sync)
        *host = later(*host, *dev);
}

/* A span's ops once, where the device is so far ahead of the host that no
 * op of it waits for its launch: each `later` above picks the device's
 * side, so the device's time grows by each op's time and the host's by its
 * issue time, the same additions in the same order (the same bits). The
 * lead must cover every op's issue time before it, plus its own launch
 * share, with a margin for the roundings of the sums (1e-9 of the clocks,
 * far above the ~1e-16 an addition loses). A span with a sync, or a
 * collective, takes the general path. */
typedef struct {
    double issue, reach; /* the span's issue time; the most an op needs ahead */
    int general;         /* a sync or a collective: the general path */
} span_need;

static void need_of(const op_sums *o, const struct xs_wl_span *sp, span_need *n)
{
    n->issue = n->reach = 0;
    n->general = 0;
    for (size_t i = sp->first; i < (size_t)sp->first + sp->len; i++) {
        const op_sums *x = &o[i];
        n->general |= x->sync || x->comm;
        n->issue += x->issue;
        n->reach = later(n->reach, later(x->first, x->issue + x->tail));
    }
}

/* Whether a repetition of the span may take the device's side at every
 * op (above) from these clocks. */
static inline int device_leads(const span_need *n, double host, double dev)
{
    if (n->general)
        return 0;
    double lead = dev - host, margin = 1e-12 + 1e-9 * (fabs(dev) + fabs(host) + n->issue);
    return lead > n->issue + n->reach + margin;
}

/* Two steps on the timeline (the second's length is returned), the first
 * adding the step's sums as it goes: the sums' additions and the clocks'
 * wait on the additions before them, and taking both in one pass lets
 * them wait side by side. */
static double timeline(const xs_workload *wl, const op_sums *o, double load_s, int loss_sync,
                       xs_prediction *p)
{
    double host = 0, dev = 0, first_end = 0;
    struct xs_wl_span flat;
    size_t nspans;
    const struct xs_wl_span *spans = spans_of(wl, &flat, &nspans);
    span_need local[32];
    span_need *need = nspans <= 32 ? local : malloc(nspans * sizeof *need);
    if (!need) { /* out of memory: every op the general way */
        local[0] = (span_need){0, 0, 1};
        need = local;
        spans = &flat;
        nspans = 1;
    }
    for (size_t j = 0; j < nspans; j++)
        need_of(o, &spans[j], &need[j]);
    lane_pair sum[L_VECS] = {{0}};
    for (int step = 0; step < 2; step++) {
        host += load_s;
        for (size_t j = 0; j < nspans; j++) {
            const op_sums *first = o + spans[j].first, *end = first + spans[j].len;
            for (uint32_t r = 0; r < spans[j].repeat; r++) {
                if (device_leads(&need[j], host, dev)) {
                    lane_pair dh = {dev, host};
                    if (step == 0)
                        for (const op_sums *x = first; x < end; x++) {
                            dh += x->dev_host;
                            ADD_LANES(sum, x);
                        }
                    else
                        for (const op_sums *x = first; x < end; x++)
                            dh += x->dev_host;
                    dev = dh[0];
                    host = dh[1];
                } else {
                    for (const op_sums *x = first; x < end; x++) {
                        run_op(x, &host, &dev);
                        if (step == 0)
                            ADD_LANES(sum, x);
                    }
                }
            }
        }
        if (loss_sync)
            host = later(host, dev);
        if (step == 0)
            first_end = dev;
    }
    if (need != local)
        free(need);
    put_sums(sum, p);
    return dev - first_end;
}

/* Data parallel: the collectives run on their own stream while the
 * backward goes on. A bucket's collective is ready when the last
 * micro-batch's backward has produced its gradients (the compute stream's
 * end of backward less the single-call time of the backward ops after it)
 * and starts when the previous collective is done; the ops that wait for
 * them (DDP's copy back) start after the last. While a collective overlaps
 * the backward, the compute runs slower by the share of the GPU NCCL's
 * kernels take (xs_comm_contention: SMs or DRAM bandwidth), so the
 * backward ends later by overlap x share / (1 - share). Collectives after
 * the wait (ZeRO's weight all-gather after the optimizer) overlap nothing:
 * the next forward needs the weights. The slowdown one overlap causes
 * delays the later buckets; it is not fed back into its own length (a
 * term of share^2). */
static void data_parallel(const xs_workload *wl, const xs_estimate *est, xs_prediction *p)
{
    size_t wait_at = wl->n;
    for (size_t i = 0; i < wl->n && wait_at == wl->n; i++)
        if (wl->ops[i].comm_wait)
            wait_at = i;
    double end_bwd = 0, largest = 0;
    for (size_t i = 0; i < wait_at; i++)
        if (wl->ops[i].kind != XS_OP_COMM)
            end_bwd += est[i].time_s * (double)wl->ops[i].count;
    double after = 0, comm_end = 0;
    /* ready times from the back: the single-call backward after each */
    double *ready = calloc(wait_at ? wait_at : 1, sizeof *ready);
    if (!ready)
        return; /* only the report's overlap figures are lost; the sums stand */
    for (size_t i = wait_at; i-- > 0;) {
        if (wl->ops[i].kind == XS_OP_COMM) /* combined: one collective after all */
            ready[i] = p->topo.combined ? end_bwd : end_bwd - after;
        else
            after += est[i].time_s;
    }
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        if (op->kind != XS_OP_COMM)
            continue;
        double t = est[i].time_s;
        p->comm_s += t;
        if (i > wait_at) {
            p->serial_s += t;
            continue;
        }
        /* the compute slowed so far delays the gradients this one waits for */
        double start = fmax(ready[i] + p->contention_s, comm_end);
        comm_end = start + t;
        double overlap = fmax(0, fmin(comm_end, end_bwd + p->contention_s) - start);
        double share = xs_comm_contention(&p->topo, xs_comm_busbw(op->coll, p->topo.n, op->bytes, t));
        p->contention_s += overlap * share / (1 - share);
        if (op->bytes > largest) {
            largest = op->bytes;
            xs_comm_best(&p->topo, op->coll, op->bytes, &p->comm_algo);
        }
    }
    free(ready);
    p->exposed_tail_s = fmax(0, comm_end - (end_bwd + p->contention_s));
}

/* One op's estimate must be a time: finite and not negative. The device
 * and scenario limits (bounds.h) keep it so; this names the op if not. */
static inline int a_time(double t)
{
    return t >= 0 && t <= DBL_MAX; /* false for NaN */
}

static int check_estimate(const xs_device *dev, const xs_scenario *s, const xs_op *op,
                          const xs_estimate *e, xs_error *err)
{
    if (a_time(e->time_s) && a_time(e->compute_s) && a_time(e->memory_s) &&
        a_time(e->overhead_s))
        return XS_OK;
    const double t[] = {e->time_s, e->compute_s, e->memory_s, e->overhead_s};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!isfinite(t[i]) || t[i] < 0)
            return xs_error_set(err, XS_ERANGE,
                                "scenario %s on device %s: op %s gets no finite time (%g s); "
                                "a device figure or a scenario value is out of any real range",
                                s->id, dev->id, op->name, t[i]);
    return XS_OK;
}

/* Every figure a report prints must be a finite number >= 0: a NaN or an
 * inf would print as "nan"/"inf" and read as a prediction. */
static int check_totals(const xs_device *dev, const xs_scenario *s, const xs_prediction *p,
                        xs_error *err)
{
    const struct {
        const char *name;
        double v;
    } figures[] = {
        {"step time", p->step_time_s},       {"step energy", p->step_energy_j},
        {"samples/s", p->samples_per_s},     {"tokens/s", p->tokens_per_s},
        {"MFU", p->mfu},                     {"average power", p->avg_power_w},
        {"run time", p->run_time_s},         {"run energy", p->run_energy_kwh},
        {"run cost", p->run_cost_usd},       {"host issue time", p->host_issue_s},
        {"host wait", p->host_wait_s},
    };
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
        if (!isfinite(figures[i].v) || figures[i].v < 0)
            return xs_error_set(err, XS_ERANGE,
                                "scenario %s on device %s: the predicted %s is %g, not a finite "
                                "number >= 0; a device figure or a scenario value is out of any "
                                "real range",
                                s->id, dev->id, figures[i].name, figures[i].v);
    return XS_OK;
}

/* The step on dev as it is, at its clock scale. */
static int predict_at(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                      xs_prediction *p, xs_error *err)
{
    memset(p, 0, sizeof *p);
    int rc0 = xs_fp8_device_check(dev, s, err);
    if (!rc0)
        rc0 = xs_quant_device_check(dev, s, err);
    if (!rc0)
        rc0 = xs_topo_of(dev, s, &p->topo, err);
    if (rc0)
        return rc0;
    const xs_backend *be = xs_backend_of(dev);
    xs_gemm_engine eng;
    be->gemm_engine(dev, &eng);
    xs_gemm_memo_bind(&eng); /* the step's GEMMs all run on it */
    int tensor;
    if (be->matmul_format)
        be->matmul_format(dev, wl->matmul_dtype, &p->matmul_engine, &tensor);
    else
        xs_gemm_rate(&eng, wl->matmul_dtype, &p->matmul_engine, &tensor);
    p->matmul_asked = wl->matmul_dtype;
    p->matmul_tensor = tensor;
    p->matmul_clock_mhz = eng.clock_mhz;
    /* each cleared as it is estimated: calloc clears a block a word at a time */
    p->est = malloc((wl->n ? wl->n : 1) * sizeof *p->est);
    if (!p->est)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    op_sums local[256];
    op_sums *o = wl->n <= 256 ? local : malloc(wl->n * sizeof *o);
    if (!o) {
        xs_prediction_free(p);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    const xs_host *host = NULL;
    xs_host_costs hc;
    if (be->async && !be->whole_step) {
        xs_scn_host(s, &p->host);
        host = &p->host;
        xs_host_costs_of(host, &hc);
        p->host_costs = hc;
    }
    double core = xs_energy_core(dev);
    /* Each op in one pass: its estimate (remembered with its energy where
     * no compiled step changes it afterwards), and its sums. A compiled
     * step looks at all the estimates before anything adds them. */
    int one_pass = !be->whole_step;
    void *memo = xs_est_memo_table(dev); /* NULL: each op estimated */
    int rc = XS_OK;
    for (size_t i = 0; i < wl->n && !rc; i++) {
        const xs_op *op = &wl->ops[i];
        xs_estimate *e = &p->est[i];
        if (op->kind == XS_OP_COMM) { /* its own stream: data_parallel() */
            memset(e, 0, sizeof *e);
            e->time_s = xs_comm_best(&p->topo, op->coll, op->bytes, NULL);
            e->bound = XS_BOUND_LATENCY;
            e->engine = op->dtype;
        } else if (!memo || !xs_est_memo_get(memo, i, op, e)) {
            memset(e, 0, sizeof *e); /* padding too: estimates compare as bytes */
            rc = be->estimate_on ? be->estimate_on(dev, &eng, op, e, err)
                                 : be->estimate(dev, op, e, err);
            if (!rc)
                rc = check_estimate(dev, s, op, e, err);
            if (!rc && one_pass)
                xs_energy_fill_at(dev, core, e);
            if (!rc && memo)
                xs_est_memo_put(memo, i, op, e);
        }
        if (one_pass)
            sums_of(op, e, host, &hc, &o[i]);
    }
    /* one collective for the step's buckets (comm.h); a combined topology
     * is a compiled step's, whose sums come after */
    if (!rc && p->topo.combined)
        xs_comm_combine(&p->topo, wl, p->est);
    /* a compiled step: what the compiler does across ops, and its infeed */
    double outside_s = 0;
    if (!rc && !one_pass) {
        outside_s = be->whole_step(dev, s, wl, p->est, p->note, sizeof p->note);
        for (size_t i = 0; i < wl->n && !rc; i++) {
            rc = check_estimate(dev, s, &wl->ops[i], &p->est[i], err);
            if (wl->ops[i].kind != XS_OP_COMM)
                xs_energy_fill_at(dev, core, &p->est[i]);
            sums_of(&wl->ops[i], &p->est[i], host, &hc, &o[i]);
        }
    }
    if (rc) {
        if (o != local)
            free(o);
        xs_prediction_free(p);
        return rc;
    }
    /* in the step's order, as the kernels run: the same sums, bit for bit,
     * whether the list is compact or not (on an async device, in the
     * timeline's first step) */
    /* each device's loop fetches its own micro-batches */
    /* a forward + backward benchmark times neither the loading nor the loss read-back */
    int timed_step = s->train.timed == XS_TIMED_STEP;
    double load_s =
        timed_step ? s->loader_us * 1e-6 * (double)(s->train.batch * s->train.grad_accum) : 0;
    if (be->async && !be->whole_step) {
        double t = timeline(wl, o, load_s, timed_step && s->train.loss_sync, p);
        p->device_time_s = p->step_time_s;
        p->host_wait_s = fmax(0, t - p->device_time_s);
    } else {
        sum_step(wl, o, p);
        p->device_time_s = p->step_time_s;
        /* a compiled step (one program a step: no per-op issue; the input
         * pipeline runs ahead on host threads and shows only where it is
         * slower), or the host is the device: loading is serial */
        p->host_wait_s = be->whole_step ? outside_s + fmax(0, load_s - p->device_time_s) : load_s;
    }
    if (s->devices > 1) {
        /* the collectives' share of the step, at idle power: NCCL's few
         * blocks draw little beside the compute they overlap (a stated
         * simplification) */
        if (xs_fsdp_on(s)) { /* FSDP's two streams: fsdp.h */
            xs_fsdp_timing ft;
            xs_fsdp_overlap(&p->topo, wl, p->est, &ft);
            p->comm_s = ft.comm_s;
            p->serial_s = ft.stall_s;
            p->exposed_tail_s = ft.tail_s;
            p->contention_s = ft.contention_s;
            p->comm_algo = ft.algo_largest;
        } else {
            data_parallel(wl, p->est, p);
        }
        double comm = p->contention_s + p->exposed_tail_s + p->serial_s;
        p->device_time_s += comm;
        p->step_energy_j += comm * dev->idle_w;
    }
    if (o != local)
        free(o);
    p->step_time_s = p->device_time_s + p->host_wait_s;
    p->step_energy_j += p->host_wait_s * dev->idle_w;
    p->devices = s->devices;
    if (p->step_time_s > 0) {
        p->samples_per_s = (double)wl->samples_per_step / p->step_time_s;
        p->tokens_per_s = (double)wl->tokens_per_step / p->step_time_s;
        p->avg_power_w = p->step_energy_j / p->step_time_s;
        /* MFU against the datasheet peak (not the sustained clock) of the
         * engine the GEMMs run on, as MFU is usually quoted */
        p->peak_flops = dev->peak_tflops[p->matmul_engine] * 1e12;
        if (p->peak_flops > 0)
            p->mfu = p->matmul_flops / (p->step_time_s * p->peak_flops);
    }
    p->power_limit_w = xs_dev_power_limit(dev);
    p->clock_scale = xs_dev_clock_scale(dev);
    rc = xs_predict_rerun(dev, s, wl->steps, p, err);
    if (rc)
        xs_prediction_free(p);
    return rc;
}

int xs_predict_rerun(const xs_device *dev, const xs_scenario *s, int64_t steps, xs_prediction *p,
                     xs_error *err)
{
    p->steps = steps;
    p->run_time_s = p->step_time_s * (double)steps;
    p->run_energy_kwh = p->step_energy_j * (double)steps * (double)s->devices / 3.6e6;
    p->run_cost_usd = xs_cost_usd(dev, p->run_time_s, s->devices);
    return check_totals(dev, s, p, err);
}

void xs_predict_band_rerun(const xs_device *dev, const xs_scenario *s, xs_prediction *p)
{
    /* each corner's run, priced as its own prediction prices it (a
     * corner device keeps dev's price) */
    p->run_cost_high_usd = xs_cost_usd(dev, p->step_time_high_s * (double)p->steps, s->devices);
    p->run_cost_low_usd = xs_cost_usd(dev, p->step_time_low_s * (double)p->steps, s->devices);
}

/* The clock under a power limit is one clock for the whole step, set by
 * the step's mix of kernels, not one per kernel: the power manager holds
 * the board's averaged power at the limit, and a capped board shows one
 * steady clock per workload phase (an RTX 3090 at 315 W, sampled at 2 Hz:
 * 314 W median, the cap active in nearly every sample, 1500-1515 MHz
 * through memory-bound decode and 1635-1650 MHz through GEMM-bound
 * prefill, memory clock never moved: github.com/ashalliants/ninfer-3090
 * pull 72), while a step's kernels last 0.01-10 ms and repeat the same mix
 * every step. The decode figure also shows why memory power must not
 * follow the core clock: memory-heavy phases leave the core less of the
 * limit. The clock is the highest (at most the ceiling, power.h) whose
 * step-average power fits the limit; bisection on the scale, since the
 * average grows with the clock (the core's share, xs_power_core_factor,
 * grows; memory-bound time does not shrink). SCALE_FLOOR: no P0 clock
 * under a power cap goes below a few per cent of the boost clock (a V100's
 * lowest SM clock, 135 MHz, is 9% of its 1380-1530 MHz boost). */
#define SCALE_FLOOR 0.05
#define SCALE_TOLERANCE 1e-5

static int fit_clock(xs_device *d, const xs_scenario *s, const xs_workload *wl,
                     xs_prediction *p, xs_error *err)
{
    double limit = xs_dev_power_limit(d);
    double hi = xs_power_scale_ceiling(d);
    d->clock_scale = hi;
    int rc = predict_at(d, s, wl, p, err);
    if (rc || p->avg_power_w <= limit)
        return rc;
    xs_prediction_free(p);
    double lo = hi > 1.0 ? 1.0 : SCALE_FLOOR; /* at 1 a raised limit holds */
    if (lo == SCALE_FLOOR) {
        d->clock_scale = lo;
        if ((rc = predict_at(d, s, wl, p, err)))
            return rc;
        double floor_w = p->avg_power_w;
        xs_prediction_free(p);
        if (floor_w > limit)
            return xs_error_set(err, XS_ERANGE,
                                "device.power_limit_w=%.10g: scenario %s on device %s draws "
                                "%.1f W even at %.0f%% of its clock (idle and memory power); "
                                "no clock fits the limit",
                                limit, s->id, d->id, floor_w, 100 * SCALE_FLOOR);
    }
    while (hi - lo > SCALE_TOLERANCE) {
        d->clock_scale = 0.5 * (lo + hi);
        if ((rc = predict_at(d, s, wl, p, err)))
            return rc;
        if (p->avg_power_w <= limit)
            lo = d->clock_scale;
        else
            hi = d->clock_scale;
        xs_prediction_free(p);
    }
    d->clock_scale = lo;
    return predict_at(d, s, wl, p, err);
}

/* The same per-device step on one device, no collectives and no shards:
 * what scaling efficiency and the memory saving are measured against. */
static int single_device(const xs_device *dev, const xs_scenario *s, xs_prediction *p,
                         xs_error *err)
{
    xs_scenario one = *s;
    one.devices = 1;
    one.per_node = 0;
    one.sharding = XS_SHARD_NONE;
    xs_workload w1;
    int rc = xs_wl_build(&one, &w1, err);
    if (rc)
        return rc;
    xs_prediction p1;
    rc = xs_predict(dev, &one, &w1, &p1, err);
    xs_wl_free(&w1);
    if (rc)
        return rc;
    p->single_samples_per_s = p1.samples_per_s;
    if (p1.samples_per_s > 0)
        p->scaling_efficiency = p->samples_per_s / ((double)s->devices * p1.samples_per_s);
    p->single_mem_total = p1.mem.total;
    xs_prediction_free(&p1);
    return XS_OK;
}

/* A compiled step's fusions look at each op's neighbours in the step
 * (tpu.c), and data parallel's collectives at where each sits: both take
 * a compact list expanded. */
static int needs_order(const xs_device *dev, const xs_scenario *s, const xs_workload *wl)
{
    return wl->spans && (xs_backend_of(dev)->whole_step || s->devices > 1);
}

/* Predict a compact list expanded; the estimates kept are each op's first
 * run's, one per op of the compact list. */
static int predict_expanded(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                            xs_prediction *p, xs_error *err)
{
    xs_workload flat;
    int rc = xs_wl_expand(wl, &flat, err);
    if (rc)
        return rc;
    rc = xs_predict(dev, s, &flat, p, err);
    xs_wl_free(&flat);
    if (rc)
        return rc;
    xs_estimate *est = calloc(wl->n ? wl->n : 1, sizeof *est);
    if (!est) {
        xs_prediction_free(p);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    for (size_t j = 0, k = 0; j < wl->nspans; j++) { /* each op's first repetition */
        const struct xs_wl_span *sp = &wl->spans[j];
        for (uint32_t i = 0; i < sp->len; i++)
            est[sp->first + i] = p->est[k + i];
        k += (size_t)sp->len * sp->repeat;
    }
    free(p->est);
    p->est = est;
    return XS_OK;
}

int xs_predict(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
               xs_prediction *p, xs_error *err)
{
    if (needs_order(dev, s, wl))
        return predict_expanded(dev, s, wl, p, err);
    xs_device d = *dev;
    int rc;
    if (s->power_limit_w > 0 && (rc = xs_power_set_limit(&d, s->power_limit_w, err))) {
        memset(p, 0, sizeof *p);
        return rc;
    }
    rc = xs_dev_power_limit(&d) == d.tdp_w ? predict_at(&d, s, wl, p, err) /* the file's clock */
                                             : fit_clock(&d, s, wl, p, err);
    if (!rc && (rc = xs_memory_predict(dev, s, wl, &p->mem, err)))
        xs_prediction_free(p);
    if (!rc && s->devices > 1 && (rc = single_device(dev, s, p, err)))
        xs_prediction_free(p);
    return rc;
}

void xs_prediction_free(xs_prediction *p)
{
    free(p->est);
    p->est = NULL;
}

int xs_predict_band(const xs_device *dev, const xs_scenario *s, const xs_workload *wl,
                    xs_prediction *p, xs_error *err)
{
    if (needs_order(dev, s, wl)) {
        xs_workload flat;
        int rc = xs_wl_expand(wl, &flat, err);
        if (!rc)
            rc = xs_predict_band(dev, s, &flat, p, err);
        xs_wl_free(&flat);
        return rc;
    }
    xs_prediction corner[2];
    /* At the default limit the corners are the model's uncertainty at the
     * file's clocks. Under a set limit the board's power manager caps each
     * corner too: a faster or more efficient corner draws more and is held
     * to its own, lower clock, so each corner fits its clock to the limit
     * as xs_predict does (else the fast corner would pass the cap). */
    int capped = p->power_limit_w > 0 && p->power_limit_w != dev->tdp_w;
    for (int i = 0; i < 2; i++) {
        xs_device d;
        xs_dev_corner(dev, i == 0 ? -1 : +1, &d);
        int rc = capped ? xs_power_set_limit(&d, p->power_limit_w, err) : XS_OK;
        if (!rc)
            rc = capped ? fit_clock(&d, s, wl, &corner[i], err)
                        : predict_at(&d, s, wl, &corner[i], err);
        if (rc)
            return rc;
        xs_prediction_free(&corner[i]);
    }
    p->step_time_high_s = corner[0].step_time_s; /* the slow corner */
    p->step_time_low_s = corner[1].step_time_s;
    p->samples_per_s_low = corner[0].samples_per_s;
    p->samples_per_s_high = corner[1].samples_per_s;
    p->run_cost_high_usd = corner[0].run_cost_usd;
    p->run_cost_low_usd = corner[1].run_cost_usd;
    p->avg_power_low_w = fmin(corner[0].avg_power_w, corner[1].avg_power_w);
    p->avg_power_high_w = fmax(corner[0].avg_power_w, corner[1].avg_power_w);
    return XS_OK;
}
