/* trace_calibrate.c — see trace_calibrate.h. */
#include "trace_calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "fileio.h"
#include "fit.h"
#include "gpu.h"
#include "job.h"
#include "paths.h"
#include "schema.h"
#include "targets.h"
#include "trace.h"
#include "xs_version.h"

/* The schema's bounds of model.class_time_factor (gpu_device.c). */
#define FACTOR_MIN 0.1
#define FACTOR_MAX 10.0

/* Names PyTorch 2.x prints on an A100 (the ones tests/data/traces uses and
 * tests/test_kernel_class.c sources); test_trace_calibrate checks each
 * classifies back into its class. */
static const char *const SIM_NAMES[XS_KC_COUNT] = {
    [XS_KC_GEMM] = "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_"
                   "tensor16x8x16_kernel",
    [XS_KC_ATTENTION] = "void flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, "
                        "false, cutlass::half_t> >(Flash_fwd_params)",
    [XS_KC_SOFTMAX] = "void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, "
                      "float, 9, false, false>(c10::Half*, c10::Half const*, int, int, int, bool "
                      "const*, int, bool)",
    [XS_KC_NORM] = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, "
                   "float>(int, float, c10::Half const*, c10::Half const*, c10::Half const*, "
                   "float*, float*, c10::Half*)",
    [XS_KC_ELEMENTWISE] = "void at::native::vectorized_elementwise_kernel<4, "
                          "at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, "
                          "at::native::AddFunctor<float>, at::detail::Array<char*, 3>)",
    [XS_KC_COPY] = "void at::native::vectorized_elementwise_kernel<4, "
                   "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&), "
                   "at::detail::Array<char*, 2> >(int, at::native::direct_copy_kernel_cuda("
                   "at::TensorIteratorBase&), at::detail::Array<char*, 2>)",
    [XS_KC_REDUCE] = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                     "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
                     "float> >, unsigned int, float, 4> >(at::native::ReduceOp<float, "
                     "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
                     "float> >, unsigned int, float, 4>)",
    [XS_KC_EMBED] = "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, "
                    "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned "
                    "int>, at::cuda::detail::TensorInfo<float const, unsigned int>, "
                    "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned "
                    "int, unsigned int, long)",
    [XS_KC_LOSS] = "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<"
                   "float, float, long>(float*, float*, float const*, long const*, float const*, "
                   "bool, long, long, long, long)",
    [XS_KC_OPTIMIZER] = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
                        "at::native::(anonymous namespace)::TensorListMetadata<4>, "
                        "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4> >("
                        "at::native::(anonymous namespace)::TensorListMetadata<4>, "
                        "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>)",
    [XS_KC_COMM] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, "
                   "ncclWork*)",
};

const char *xs_trace_sim_kernel_name(int cls)
{
    return cls >= 0 && cls < XS_KC_COUNT ? SIM_NAMES[cls] : NULL;
}

/* What the model says a step of each class costs. */
typedef struct {
    double body_s[XS_KC_COUNT];   /* kernel bodies: time less the launch cost */
    double launches[XS_KC_COUNT]; /* kernels */
    double flops[XS_KC_COUNT], bytes[XS_KC_COUNT];
} class_sums;

static void sum_classes(const xs_workload *wl, const xs_prediction *p, class_sums *cs)
{
    memset(cs, 0, sizeof *cs);
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        const xs_estimate *e = &p->est[i];
        int c = xs_kclass_of_op(op->kind);
        double n = (double)op->count;
        cs->body_s[c] += fmax(0, e->time_s - e->overhead_s) * n;
        cs->launches[c] += (double)op->launches * n;
        cs->flops[c] += op->flops * n;
        cs->bytes[c] += op->bytes * n;
    }
}

static double factor_of(const xs_device *dev, int c)
{
    double f = xs_gpu_of(dev)->class_time_factor[c];
    return f > 0 ? f : 1.0;
}

/* The device, its scenario, the workload and one prediction. */
static int open_job(const char *device, const char *scenario, const char *const *sets, int nsets,
                    xs_job *j, char *dev_path, size_t dev_path_size, xs_error *err)
{
    xs_job_init(j);
    int rc = xs_resolve("devices", device, dev_path, dev_path_size, err);
    if (!rc)
        rc = xs_dev_load(dev_path, &j->dev, err);
    if (!rc && strcmp(xs_backend_of(&j->dev)->name, "gpu") != 0)
        rc = xs_error_set(err, XS_EARG,
                          "calibrate --backend trace: %s is a %s device; traces calibrate class "
                          "gpu device files",
                          dev_path, xs_backend_of(&j->dev)->name);
    if (!rc)
        rc = xs_job_scenario(j, scenario, sets, nsets, err);
    if (!rc)
        rc = xs_job_predict(j, 0, err);
    if (rc)
        xs_job_free(j);
    return rc;
}

/* The step on dev with every class's bodies scaled by scale x factor[c]. */
static int scaled_step(const xs_job *j, double scale, const double *factor, xs_prediction *p,
                       xs_error *err)
{
    xs_device d = j->dev;
    for (int c = 0; c < XS_KC_COUNT; c++)
        xs_gpu_of(&d)->class_time_factor[c] =
            factor_of(&j->dev, c) * scale * (factor[c] > 0 ? factor[c] : 1.0);
    return xs_predict(&d, &j->s, &j->wl, p, err);
}

static void join_sets(const char *const *sets, int n, char *dst, size_t size)
{
    size_t used = 0;
    dst[0] = '\0';
    for (int i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(dst + used, size - used, "%s%s", i ? ";" : "", sets[i]);
}

/* ---- the simulated trace ------------------------------------------------ */

static cJSON *event(const char *cat, const char *name, double ts, double dur, int pid, int tid)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "ph", "X");
    cJSON_AddStringToObject(e, "cat", cat);
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddNumberToObject(e, "pid", pid);
    cJSON_AddNumberToObject(e, "tid", tid);
    cJSON_AddNumberToObject(e, "ts", ts);
    cJSON_AddNumberToObject(e, "dur", dur);
    return e;
}

#define SIM_PID 4242 /* the host process, as in tests/data/traces */
#define SIM_STREAM 7
#define SIM_T0_US 5000.0
#define SIM_STEP_GAP_US 10.0 /* between one step's span and the next */

/* The ATen op of one call of a GEMM op, as record_shapes writes it:
 * mm([m, k], [k, n]) or bmm([b, m, k], [b, k, n]). */
static cJSON *gemm_op_event(const xs_op *op, double ts, double dur)
{
    int batched = op->batch > 1;
    cJSON *e = event("cpu_op", batched ? "aten::bmm" : "aten::mm", ts, dur, SIM_PID, SIM_PID);
    cJSON *dims = cJSON_AddArrayToObject(cJSON_AddObjectToObject(e, "args"), "Input Dims");
    const double a[3] = {(double)op->batch, (double)op->m, (double)op->k};
    const double b[3] = {(double)op->batch, (double)op->k, (double)op->n};
    cJSON_AddItemToArray(dims, cJSON_CreateDoubleArray(a + !batched, 3 - !batched));
    cJSON_AddItemToArray(dims, cJSON_CreateDoubleArray(b + !batched, 3 - !batched));
    return e;
}

/* Solve for the scale of every body that makes the predicted step step_s
 * (the step grows with it: bisection on a log scale). */
static int solve_scale(const xs_job *j, const double *factor, double step_s, double *scale,
                       xs_error *err)
{
    double lo = 1e-3, hi = 1e3, s_lo, s_hi;
    xs_prediction p;
    int rc = scaled_step(j, lo, factor, &p, err);
    if (rc)
        return rc;
    s_lo = p.step_time_s;
    xs_prediction_free(&p);
    if ((rc = scaled_step(j, hi, factor, &p, err)))
        return rc;
    s_hi = p.step_time_s;
    xs_prediction_free(&p);
    if (!(step_s > s_lo && step_s < s_hi))
        return xs_error_set(err, XS_ERANGE,
                            "calibrate --simulate-trace: a step of %.6g s is outside what %s can "
                            "reach on %s by scaling its kernel bodies (%.6g to %.6g s: launches "
                            "and host time alone take the first)",
                            step_s, j->s.id, j->dev.id, s_lo, s_hi);
    for (int it = 0; it < 80; it++) {
        double mid = sqrt(lo * hi);
        if ((rc = scaled_step(j, mid, factor, &p, err)))
            return rc;
        if (p.step_time_s < step_s)
            lo = mid;
        else
            hi = mid;
        xs_prediction_free(&p);
    }
    *scale = sqrt(lo * hi);
    return XS_OK;
}

int xs_trace_simulate(const xs_trace_sim_opts *o, xs_error *err)
{
    if (o->steps < 1 || o->steps > 100)
        return xs_error_set(err, XS_EARG,
                            "calibrate --simulate-trace: --steps must be in 1..100, got %d",
                            o->steps);
    for (int c = 0; c < XS_KC_COUNT; c++)
        if (o->factor[c] < 0 || (c == XS_KC_OTHER && o->factor[c] > 0))
            return xs_error_set(err, XS_EARG,
                                "calibrate --simulate-trace: --class-factor %s must be > 0 and "
                                "name a costed class",
                                xs_kclass_name(c));
    xs_job j;
    char dev_path[4096];
    int rc = open_job(o->device, o->scenario, o->sets, o->nsets, &j, dev_path, sizeof dev_path,
                      err);
    if (rc)
        return rc;
    double step_s = o->step_s;
    if (!(step_s > 0) && o->samples_per_s > 0)
        step_s = (double)j.wl.samples_per_step / o->samples_per_s;
    double scale = 1.0;
    if (step_s > 0)
        rc = solve_scale(&j, o->factor, step_s, &scale, err);
    xs_prediction p;
    if (!rc)
        rc = scaled_step(&j, scale, o->factor, &p, err);
    if (rc) {
        xs_job_free(&j);
        return rc;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "schemaVersion", 1);
    cJSON *props = cJSON_AddArrayToObject(doc, "deviceProperties");
    cJSON *gpu = cJSON_CreateObject();
    cJSON_AddNumberToObject(gpu, "id", 0);
    cJSON_AddStringToObject(gpu, "name", j.dev.name);
    cJSON_AddItemToArray(props, gpu);
    char setline[2048];
    join_sets(o->sets, o->nsets, setline, sizeof setline);
    cJSON *sim = cJSON_AddObjectToObject(doc, "xpusim_simulated");
    cJSON_AddStringToObject(sim, "note",
                            "not a measurement: xpusim's predicted kernel timeline of the "
                            "scenario on the device, each kernel body scaled by body_scale x "
                            "the class factor (calibrate/README.md)");
    cJSON_AddStringToObject(sim, "device", j.dev.id);
    cJSON_AddStringToObject(sim, "scenario", j.s.id);
    cJSON_AddStringToObject(sim, "set", setline);
    cJSON_AddNumberToObject(sim, "step_time_s", p.step_time_s);
    cJSON_AddNumberToObject(sim, "body_scale", scale);
    cJSON *fs = cJSON_AddObjectToObject(sim, "class_factor");
    for (int c = 0; c < XS_KC_OTHER; c++)
        if (o->factor[c] > 0)
            cJSON_AddNumberToObject(fs, xs_kclass_name(c), o->factor[c]);
    cJSON_AddStringToObject(sim, "command", o->command ? o->command : "xpusim calibrate");
    cJSON_AddStringToObject(sim, "xpusim_version", XS_VERSION);
    cJSON *events = cJSON_AddArrayToObject(doc, "traceEvents");
    /* the host: each kernel's launch (cudaLaunchKernel, args.correlation)
     * and around a GEMM's launches its ATen op with the shapes that
     * record_shapes writes, so the trace names each GEMM kernel's shape */
    double launches_per_step = 0;
    for (size_t i = 0; i < j.wl.n; i++)
        launches_per_step += (double)(j.wl.ops[i].launches > 0 ? j.wl.ops[i].launches : 1) *
                             (double)j.wl.ops[i].count;
    double host_dt = fmin(1.0, p.step_time_s * 1e6 / (4 * launches_per_step + 4));
    double t0 = SIM_T0_US, kernels = 0, corr = 1;
    for (int k = 0; k < o->steps; k++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", k + 1);
        double step_us = p.step_time_s * 1e6, t = t0, h = t0 + host_dt;
        cJSON_AddItemToArray(events, event("user_annotation", name, t0, step_us, SIM_PID,
                                           SIM_PID));
        cJSON *gspan = event("gpu_user_annotation", name, t0, 0, 0, SIM_STREAM);
        cJSON_AddItemToArray(events, gspan);
        for (size_t i = 0; i < j.wl.n; i++) {
            const xs_op *op = &j.wl.ops[i];
            const xs_estimate *e = &p.est[i];
            int c = xs_kclass_of_op(op->kind);
            int64_t launches = op->launches > 0 ? op->launches : 1;
            double gap_us = e->overhead_s * 1e6 / (double)launches;
            double body_us = fmax(0, e->time_s - e->overhead_s) * 1e6 / (double)launches;
            if (!(body_us > 0))
                continue;
            for (int64_t call = 0; call < op->count; call++) {
                if (c == XS_KC_GEMM)
                    cJSON_AddItemToArray(events, gemm_op_event(op, h, (2 * (double)launches + 1) *
                                                                          host_dt));
                h += host_dt;
                for (int64_t l = 0; l < launches; l++) {
                    cJSON *ev = event("cuda_runtime", "cudaLaunchKernel", h, host_dt, SIM_PID,
                                      SIM_PID);
                    cJSON_AddNumberToObject(cJSON_AddObjectToObject(ev, "args"), "correlation",
                                            corr);
                    cJSON_AddItemToArray(events, ev);
                    h += 2 * host_dt;
                    t = fmax(t + gap_us, h);
                    ev = event("kernel", SIM_NAMES[c], t, body_us, 0, SIM_STREAM);
                    cJSON *args = cJSON_AddObjectToObject(ev, "args");
                    cJSON_AddNumberToObject(args, "device", 0);
                    cJSON_AddNumberToObject(args, "stream", SIM_STREAM);
                    cJSON_AddNumberToObject(args, "correlation", corr++);
                    cJSON_AddItemToArray(events, ev);
                    t += body_us;
                    kernels++;
                }
            }
        }
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(gspan, "dur"), t - t0);
        t0 += fmax(step_us, t - t0) + SIM_STEP_GAP_US;
    }
    rc = xs_write_json(o->out, doc, 0, "the trace", err);
    if (!rc && o->log)
        fprintf(o->log,
                "calibrate: wrote %s, a simulated trace of %s on %s: %d step(s) of %.6g s, %.0f "
                "kernels, bodies x%.4g\n",
                o->out, j.s.id, j.dev.id, o->steps, p.step_time_s, kernels / o->steps, scale);
    cJSON_Delete(doc);
    xs_prediction_free(&p);
    xs_job_free(&j);
    return rc;
}

/* ---- the calibration ---------------------------------------------------- */

/* What one class's fit found. */
typedef struct {
    int fitted;
    xs_fit fit;
    double factor;          /* the new class_time_factor: old x fit */
    double residual_pct[1024]; /* per step used */
    int nres;
    char reason[200];       /* why not fitted */
} class_fit;

/* Fit class c: the class's time in each step with any (y) against the
 * model's bodies of the step (x), one multiplier. */
static int fit_class(const xs_trace *t, const class_sums *cs, int c, const xs_device *dev,
                     class_fit *out, xs_error *err)
{
    memset(out, 0, sizeof *out);
    const char *name = xs_kclass_name(c);
    if (!t->seen[c] && !(cs->body_s[c] > 0))
        return XS_OK;
    if (!t->seen[c]) {
        snprintf(out->reason, sizeof out->reason,
                 "no %s kernels in the trace, %.0f predicted: factor kept", name,
                 cs->launches[c]);
        return XS_OK;
    }
    if (!(cs->body_s[c] > 0)) {
        snprintf(out->reason, sizeof out->reason,
                 "%.0f %s kernels a step in the trace (%.3g s) that the model does not cost",
                 t->events[c], name, t->measured_s[c]);
        return XS_OK;
    }
    size_t n = 0;
    double *X = malloc(t->nsteps * sizeof *X), *y = malloc(t->nsteps * sizeof *y);
    if (!X || !y) {
        free(X);
        free(y);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->nsteps; i++)
        if (t->steps[i].time_s[c] > 0) {
            X[n] = cs->body_s[c];
            y[n++] = t->steps[i].time_s[c];
        }
    if (n == 0) { /* kernels of the class, each of zero duration in every step */
        free(X);
        free(y);
        return xs_error_set(err, XS_EFIELD,
                            "calibrate: every %s kernel of the trace lasts 0 us in every step; "
                            "a profiler writes a duration for each kernel it times, so the "
                            "trace is damaged or was edited",
                            name);
    }
    char what[64];
    snprintf(what, sizeof what, "class %s", name);
    int rc = xs_fit_nonneg(X, y, (int)n, 1, what, &out->fit, err);
    if (!rc) {
        out->fitted = 1;
        out->factor = factor_of(dev, c) * out->fit.coef[0];
        for (size_t i = 0; i < n && i < sizeof out->residual_pct / sizeof *out->residual_pct;
             i++)
            out->residual_pct[out->nres++] = 100 * (out->fit.coef[0] * X[i] - y[i]) / y[i];
        if (!(out->factor >= FACTOR_MIN && out->factor <= FACTOR_MAX))
            rc = xs_error_set(err, XS_ERANGE,
                              "calibrate: the trace's %s kernels take %.4g s a step, %.3gx the "
                              "%.4g s predicted for the scenario; outside [%g, %g] the trace is "
                              "not this scenario (check -s and --set: batch, seq, precision)",
                              name, t->measured_s[c], out->fit.coef[0], cs->body_s[c],
                              FACTOR_MIN, FACTOR_MAX);
    }
    free(X);
    free(y);
    return rc;
}

/* The finer look at the GEMMs where the trace recorded shapes: each shape's
 * kernel time a step against the model's bodies of the ops of that shape
 * (m <= n, as the trace keeps them), one multiplier over the shapes both
 * have. Its residuals say whether one factor fits every shape or the
 * tile/wave model misses how time grows with shape. NULL: no shape in
 * common. */
static cJSON *gemm_shapes_json(const xs_trace *t, const xs_workload *wl, const xs_prediction *p,
                               xs_error *err, int *rc)
{
    *rc = XS_OK;
    if (!t->nshapes || !t->nsteps)
        return NULL;
    size_t ns = t->nshapes;
    double *x = calloc(ns, sizeof *x), *y = calloc(ns, sizeof *y), *calls = calloc(ns, sizeof *calls);
    int *at = calloc(ns, sizeof *at);
    if (!x || !y || !calls || !at) {
        free(x), free(y), free(calls), free(at);
        *rc = xs_error_set(err, XS_ENOMEM, "out of memory");
        return NULL;
    }
    double model_unmatched_s = 0;
    for (size_t i = 0; i < wl->n; i++) {
        const xs_op *op = &wl->ops[i];
        if (xs_kclass_of_op(op->kind) != XS_KC_GEMM)
            continue;
        int64_t lo = op->m < op->n ? op->m : op->n, hi = op->m < op->n ? op->n : op->m;
        int64_t b = op->batch > 0 ? op->batch : 1;
        double body = fmax(0, p->est[i].time_s - p->est[i].overhead_s) * (double)op->count;
        size_t s = 0;
        while (s < ns && !(t->shapes[s].m == lo && t->shapes[s].n == hi &&
                           t->shapes[s].k == op->k && t->shapes[s].batch == b))
            s++;
        if (s == ns) {
            model_unmatched_s += body;
            continue;
        }
        x[s] += body;
        calls[s] += (double)(op->count * (op->launches > 0 ? op->launches : 1));
    }
    int n = 0;
    double trace_unmatched_s = 0;
    for (size_t s = 0; s < ns; s++) {
        double per_step = t->shapes[s].time_s / (double)t->nsteps;
        if (x[s] > 0 && per_step > 0) {
            at[n] = (int)s;
            y[n] = per_step;
            x[n++] = x[s];
        } else {
            trace_unmatched_s += per_step;
        }
    }
    if (n == 0) {
        /* the trace recorded its GEMMs' shapes and not one is a GEMM of the
         * step predicted: another batch, sequence length or model ran */
        *rc = xs_error_set(err, XS_EFIELD,
                           "calibrate: none of the trace's %zu GEMM shapes (the first: %lld x "
                           "%lld x %lld, batch %lld) is a GEMM of the scenario as --set gives "
                           "it; the trace ran another batch, sequence length or model (give "
                           "the --set it ran with)",
                           ns, (long long)t->shapes[0].m, (long long)t->shapes[0].n,
                           (long long)t->shapes[0].k, (long long)t->shapes[0].batch);
        free(x), free(y), free(calls), free(at);
        return NULL;
    }
    cJSON *o = NULL;
    xs_fit f;
    if (xs_fit_nonneg(x, y, n, 1, "gemm shapes", &f, err) == XS_OK) {
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "method",
                                "per GEMM shape (m x n x k, batch; m <= n) of the kernels "
                                "launched inside aten::mm/addmm/bmm/baddbmm ops with Input "
                                "Dims: the shape's kernel time a step (mean over the steps) "
                                "against the model's bodies of its ops; one multiplier, "
                                "relative least squares over the shapes; not used as the "
                                "factor (the class fit covers every GEMM kernel)");
        cJSON_AddNumberToObject(o, "multiplier", xs_fit_round(f.coef[0], 6));
        cJSON_AddNumberToObject(o, "sd", xs_fit_round(f.sd[0], 3));
        cJSON_AddNumberToObject(o, "n", f.n);
        cJSON_AddNumberToObject(o, "rms_rel_pct", xs_fit_round(f.rms_rel_pct, 3));
        cJSON_AddNumberToObject(o, "max_rel_pct", xs_fit_round(f.max_rel_pct, 3));
        double unshaped_s = t->gemm_unshaped_s / (double)t->nsteps + trace_unmatched_s;
        cJSON_AddNumberToObject(o, "trace_s_without_shape", xs_fit_round(unshaped_s, 4));
        cJSON_AddNumberToObject(o, "model_s_without_trace_shape",
                                xs_fit_round(model_unmatched_s, 4));
        cJSON *arr = cJSON_AddArrayToObject(o, "shapes");
        for (int i = 0; i < n; i++) {
            const xs_trace_shape *h = &t->shapes[at[i]];
            cJSON *r = cJSON_CreateObject();
            cJSON_AddNumberToObject(r, "m", (double)h->m);
            cJSON_AddNumberToObject(r, "n", (double)h->n);
            cJSON_AddNumberToObject(r, "k", (double)h->k);
            cJSON_AddNumberToObject(r, "batch", (double)h->batch);
            cJSON_AddNumberToObject(r, "trace_kernels_per_step",
                                    xs_fit_round((double)h->events / (double)t->nsteps, 4));
            cJSON_AddNumberToObject(r, "predicted_kernels_per_step", calls[at[i]]);
            cJSON_AddNumberToObject(r, "trace_s", xs_fit_round(y[i], 6));
            cJSON_AddNumberToObject(r, "predicted_body_s", xs_fit_round(x[i], 6));
            double residual_pct = 100 * (f.coef[0] * x[i] - y[i]) / y[i];
            cJSON_AddNumberToObject(r, "residual_pct", xs_fit_round(residual_pct, 3));
            cJSON_AddItemToArray(arr, r);
        }
    }
    free(x), free(y), free(calls), free(at);
    return o;
}

/* Replace (or add) doc[obj][key] with text. */
static void set_note(cJSON *doc, const char *obj, const char *key, const char *text)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, obj);
    if (!cJSON_IsObject(o))
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    cJSON_AddStringToObject(o, key, text);
}

static cJSON *calibration_json(const xs_cal_run_opts *o, const xs_job *j, const xs_trace *t,
                               const class_sums *cs, const class_fit *fits, double after_s,
                               const char *dev_path, cJSON *per_shape)
{
    char date[16], setline[2048];
    time_t now = time(NULL);
    struct tm utc;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime_r(&now, &utc));
    join_sets(o->sets, o->nsets, setline, sizeof setline);
    cJSON *ca = cJSON_CreateObject();
    cJSON_AddStringToObject(ca, "backend", "trace");
    cJSON_AddStringToObject(ca, "date", date);
    cJSON_AddStringToObject(ca, "command", o->command ? o->command : "xpusim calibrate");
    cJSON_AddStringToObject(ca, "xpusim_version", XS_VERSION);
    cJSON_AddStringToObject(ca, "trace", o->trace);
    cJSON_AddStringToObject(ca, "trace_gpu", t->gpu_name[0] ? t->gpu_name : "not stated");
    cJSON_AddStringToObject(ca, "base_device", dev_path);
    cJSON_AddStringToObject(ca, "scenario", j->s.id);
    cJSON_AddStringToObject(ca, "set", setline);
    cJSON_AddNumberToObject(ca, "steps", (double)t->nsteps);
    cJSON_AddStringToObject(
        ca, "method",
        "per kernel class (sim/core/kernel_class.c), one weighted least-squares multiplier (GSL, "
        "relative residuals, calibrate/fit.c) of the class's kernel time in each traced step "
        "against the model's kernel bodies of the class (time less launch cost) for the "
        "scenario on the base device; factor = the base file's factor x the multiplier. "
        "residuals_pct: (fit - step) / step per step; rms/max over the steps; sd: the "
        "multiplier's standard deviation from the residual variance");
    cJSON *st = cJSON_AddObjectToObject(ca, "step_time_s");
    cJSON_AddNumberToObject(st, "trace", xs_fit_round(t->step_s, 6));
    cJSON_AddStringToObject(st, "trace_measures",
                            t->step_is_host ? "host span of ProfilerStep" : "GPU activity span");
    cJSON_AddNumberToObject(st, "trace_iqr_pct", xs_fit_round(t->step_spread_pct, 3));
    cJSON_AddNumberToObject(st, "predicted_before", xs_fit_round(j->p.step_time_s, 6));
    cJSON_AddNumberToObject(st, "predicted_after", xs_fit_round(after_s, 6));
    cJSON *cl = cJSON_AddObjectToObject(ca, "classes");
    cJSON *un = cJSON_AddObjectToObject(ca, "not_fitted");
    for (int c = 0; c < XS_KC_OTHER; c++) {
        const class_fit *f = &fits[c];
        if (f->reason[0])
            cJSON_AddStringToObject(un, xs_kclass_name(c), f->reason);
        if (!f->fitted)
            continue;
        cJSON *k = cJSON_AddObjectToObject(cl, xs_kclass_name(c));
        cJSON_AddNumberToObject(k, "factor", xs_fit_round(f->factor, 6));
        cJSON_AddNumberToObject(k, "multiplier", xs_fit_round(f->fit.coef[0], 6));
        cJSON_AddNumberToObject(k, "sd", xs_fit_round(f->fit.sd[0], 3));
        cJSON_AddNumberToObject(k, "n", f->fit.n);
        cJSON_AddNumberToObject(k, "rms_rel_pct", xs_fit_round(f->fit.rms_rel_pct, 3));
        cJSON_AddNumberToObject(k, "max_rel_pct", xs_fit_round(f->fit.max_rel_pct, 3));
        cJSON *r = cJSON_AddArrayToObject(k, "residuals_pct");
        for (int i = 0; i < f->nres; i++)
            cJSON_AddItemToArray(r, cJSON_CreateNumber(xs_fit_round(f->residual_pct[i], 3)));
        cJSON_AddNumberToObject(k, "trace_median_s", xs_fit_round(t->measured_s[c], 6));
        cJSON_AddNumberToObject(k, "trace_iqr_pct", xs_fit_round(t->spread_pct[c], 3));
        cJSON_AddNumberToObject(k, "predicted_body_s", xs_fit_round(cs->body_s[c], 6));
        cJSON_AddNumberToObject(k, "trace_kernels_per_step", t->events[c]);
        cJSON_AddNumberToObject(k, "predicted_kernels_per_step", cs->launches[c]);
        /* what the traced kernels reached on the model's work: FLOP/s for
         * the matrix classes, DRAM bytes/s (and the datasheet share) else */
        double m = t->measured_s[c] > 0 ? t->measured_s[c] : 1;
        cJSON_AddNumberToObject(k, "model_gflop", xs_fit_round(cs->flops[c] / 1e9, 4));
        cJSON_AddNumberToObject(k, "model_gb", xs_fit_round(cs->bytes[c] / 1e9, 4));
        cJSON_AddNumberToObject(k, "achieved_tflops", xs_fit_round(cs->flops[c] / m / 1e12, 4));
        cJSON_AddNumberToObject(k, "achieved_gbs", xs_fit_round(cs->bytes[c] / m / 1e9, 4));
        cJSON_AddNumberToObject(k, "achieved_bw_frac",
                                xs_fit_round(cs->bytes[c] / m / (j->dev.mem_bw_gbs * 1e9), 3));
        if (c == XS_KC_GEMM && per_shape) {
            cJSON_AddItemToObject(k, "per_shape", per_shape);
            per_shape = NULL;
        }
    }
    cJSON_Delete(per_shape);
    if (t->seen[XS_KC_OTHER]) {
        cJSON *ot = cJSON_AddObjectToObject(ca, "other");
        cJSON_AddStringToObject(ot, "note", "kernels the model does not cost or the class "
                                            "table does not know: not fitted");
        cJSON_AddNumberToObject(ot, "time_s_per_step", xs_fit_round(t->measured_s[XS_KC_OTHER], 4));
        cJSON *names = cJSON_AddArrayToObject(ot, "largest");
        for (size_t i = 0; i < t->nunknown; i++)
            cJSON_AddItemToArray(names, cJSON_CreateString(t->unknown[i].name));
    }
    return ca;
}

int xs_trace_calibrate(const xs_cal_run_opts *o, xs_error *err)
{
    if (!o->trace || !o->device || !o->scenario)
        return xs_error_set(err, XS_EARG,
                            "calibrate --backend trace: give --trace T.json, -d DEVICE and -s "
                            "SCENARIO (the run the trace recorded)");
    char id[256];
    int rc = xs_cal_device_id(o->out, id, sizeof id, err);
    if (rc)
        return rc;
    xs_job j;
    char dev_path[4096];
    rc = open_job(o->device, o->scenario, o->sets, o->nsets, &j, dev_path, sizeof dev_path,
                      err);
    if (rc)
        return rc;
    xs_trace t;
    if ((rc = xs_trace_load(o->trace, &t, err))) {
        xs_job_free(&j);
        return rc;
    }
    if (t.gpu_name[0] && !xs_gpu_name_matches(t.gpu_name, j.dev.name))
        rc = xs_error_set(err, XS_EARG,
                          "calibrate: %s ran on %s (deviceProperties), not on %s (%s); "
                          "calibrate the device file of that GPU",
                          o->trace, t.gpu_name, j.dev.id, j.dev.name);
    class_sums cs;
    sum_classes(&j.wl, &j.p, &cs);
    class_fit *fits = calloc(XS_KC_COUNT, sizeof *fits);
    if (!rc && !fits)
        rc = xs_error_set(err, XS_ENOMEM, "out of memory");
    int nfit = 0;
    for (int c = 0; !rc && c < XS_KC_OTHER; c++) {
        rc = fit_class(&t, &cs, c, &j.dev, &fits[c], err);
        nfit += fits[c].fitted;
    }
    if (!rc && nfit == 0)
        rc = xs_error_set(err, XS_EFIELD,
                          "calibrate: %s has no GPU kernel of a class the model costs for %s "
                          "(%zu GPU events, all copies to or from the host or unknown kernels)",
                          o->trace, j.s.id, t.total);
    xs_device dev = j.dev;
    if (!rc) {
        /* xs_cal_device_id checked that it fits */
        snprintf(dev.id, sizeof dev.id, "%.*s", (int)sizeof dev.id - 1, id);
        for (int c = 0; c < XS_KC_OTHER; c++)
            if (fits[c].fitted)
                xs_gpu_of(&dev)->class_time_factor[c] = xs_fit_round(fits[c].factor, 6);
    }
    xs_prediction after;
    memset(&after, 0, sizeof after);
    if (!rc)
        rc = xs_predict(&dev, &j.s, &j.wl, &after, err);
    cJSON *notes = NULL, *per_shape = NULL;
    if (!rc)
        per_shape = gemm_shapes_json(&t, &j.wl, &j.p, err, &rc);
    if (!rc)
        rc = xs_json_load(dev_path, &notes, err);
    if (!rc) {
        cJSON_DeleteItemFromObjectCaseSensitive(notes, "calibration");
        cJSON_AddItemToObject(notes, "calibration",
                              calibration_json(o, &j, &t, &cs, fits, after.step_time_s, dev_path,
                                               per_shape));
        per_shape = NULL;
        char note[4096];
        const cJSON *old = xs_json_path(notes, "model.note");
        snprintf(note, sizeof note,
                 "model.class_time_factor fitted by xpusim calibrate --backend trace to %s "
                 "(%s, %s on %s; see calibration)%s%s",
                 o->trace, j.s.id, xs_precision_name(j.s.train.precision), j.dev.id,
                 cJSON_IsString(old) ? ". " : "", cJSON_IsString(old) ? old->valuestring : "");
        set_note(notes, "model", "note", note);
        rc = xs_dev_write(&dev, notes, o->out, err);
    }
    if (!rc && o->log) {
        for (int c = 0; c < XS_KC_OTHER; c++) {
            const class_fit *f = &fits[c];
            if (f->fitted)
                fprintf(o->log,
                        "calibrate: %-11s x%.4g (sd %.2g, n %d, rms %.2g%%, max %.2g%%): %.4g s "
                        "a step traced, %.4g s predicted\n",
                        xs_kclass_name(c), f->factor, f->fit.sd[0], f->fit.n,
                        f->fit.rms_rel_pct, f->fit.max_rel_pct, t.measured_s[c], cs.body_s[c]);
            else if (f->reason[0])
                fprintf(o->log, "calibrate: %-11s not fitted: %s\n", xs_kclass_name(c),
                        f->reason);
        }
        const cJSON *ps = notes ? xs_json_path(notes, "calibration.classes.gemm.per_shape") : NULL;
        if (ps)
            fprintf(o->log,
                    "calibrate: gemm shapes x%.4g over %d shapes (rms %.2g%%, max %.2g%%)\n",
                    cJSON_GetObjectItem(ps, "multiplier")->valuedouble,
                    cJSON_GetObjectItem(ps, "n")->valueint,
                    cJSON_GetObjectItem(ps, "rms_rel_pct")->valuedouble,
                    cJSON_GetObjectItem(ps, "max_rel_pct")->valuedouble);
        if (!t.gpu_name[0])
            fprintf(o->log,
                    "calibrate: %s does not name its GPU (no deviceProperties); taken as %s\n",
                    o->trace, j.dev.name);
        fprintf(o->log,
                "calibrate: wrote %s; step %.4g s in the trace, predicted %.4g s before, %.4g s "
                "after\n",
                o->out, t.step_s, j.p.step_time_s, after.step_time_s);
    }
    cJSON_Delete(notes);
    cJSON_Delete(per_shape);
    xs_prediction_free(&after);
    free(fits);
    xs_trace_free(&t);
    xs_job_free(&j);
    return rc;
}
