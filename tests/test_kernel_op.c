/* test_kernel_op.c — single-kernel rows of every class (op=softmax,
 * layernorm, ...): their keys and reasons, that each is the op a training
 * step builds (same bytes, launches and hints), the summary by class, and
 * the two PyTorch mechanisms the cross-entropy rows brought in (a softmax
 * row read three times, the one-block nll_loss). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "device.h"
#include "gpu.h"
#include "kernel_op.h"
#include "paths.h"
#include "scenario.h"
#include "test_util.h"
#include "validate.h"
#include "workload.h"

#define HEADER "device,scenario,set,metric,value,source\n"

/* One row of every class, each predicted finite and positive. */
static const char *GOOD[] = {
    "op=softmax;rows=4608;cols=384;dtype=fp16;dir=fwd",
    "op=softmax;rows=4608;cols=384;dtype=fp32;dir=bwd;log=1",
    "op=layernorm;rows=4096;cols=1024;dtype=fp32;dir=fwd",
    "op=layernorm;rows=4096;cols=1024;dtype=fp16;out_dtype=fp32;dir=both",
    "op=dropout;elems=1048576;dtype=fp16;dir=fwd",
    "op=gelu;elems=1048576;dtype=bf16;dir=bwd",
    "op=bias_gelu;elems=1048576;dtype=fp16;dir=fwd",
    "op=add;elems=1048576;dtype=fp16;b_dtype=fp32;out_dtype=fp32",
    "op=copy;elems=1048576;dtype=fp32;out_dtype=fp16",
    "op=copy;elems=1048576;dtype=bf16;out_dtype=fp32",
    "op=transpose;elems=1048576;dtype=fp16;dir=fwd",
    "op=transpose;elems=1048576;dtype=fp16;dir=bwd;inner=strided",
    "op=reduce;rows=4096;cols=1024;dtype=fp16",
    "op=embedding;vocab=30522;dim=768;lookups=4096;dtype=fp32",
    "op=embedding_bwd;vocab=30522;dim=768;lookups=4096;dtype=fp16",
    "op=cross_entropy;rows=4096;classes=50257;dtype=fp32;dir=both",
    "op=multi_tensor_l2norm;params=110000000;tensors=200;dtype=fp32",
    "op=multi_tensor_scale;params=110000000;tensors=200;dtype=fp32",
    "op=multi_tensor_unscale;params=110000000;tensors=200;dtype=fp16",
    "op=multi_tensor_unscale;params=110000000;dtype=fp32",
    "op=embedding;vocab=32000;dim=4096;lookups=16384;dtype=bf16;dir=bwd",
    "op=rmsnorm;rows=16384;cols=4096;dtype=bf16;dir=both",
    "op=attention;impl=flash;batch=8;heads=16;seq=2048;head_dim=128;causal=1;dtype=bf16;dir=both",
    "op=attention;impl=sdpa;batch=8;heads=16;seq=2048;head_dim=64;causal=0;dtype=fp16;dir=fwd",
    "op=attention;impl=unfused;batch=4;heads=12;seq=512;head_dim=64;causal=0;dropout=0.1;dir=bwd;dtype=fp32",
};

/* Bad rows and the reason each must carry. */
static const struct {
    const char *set, *reason;
} BAD[] = {
    {"op=softmax;rows=4;cols=8;dtype=fp16", "'dir' is required"},
    {"op=softmax;rows=4;cols=8;dtype=fp16;dir=sideways", "'dir' must be one of fwd|bwd|both"},
    {"op=softmax;rows=0;cols=8;dtype=fp16;dir=fwd", "'rows' must be an integer in [1,"},
    {"op=softmax;cols=8;dtype=fp16;dir=fwd", "'rows' is required"},
    {"op=softmax;rows=4;cols=8;dtype=fp16;dir=fwd;log=2", "'log' must be an integer in [0, 1]"},
    {"op=layernorm;rows=4;cols=8;dtype=int8;dir=fwd", "'dtype' must be one of fp32|fp16|bf16"},
    {"op=layernorm;rows=4;cols=8;dir=fwd", "'dtype' is required"},
    {"op=layernorm;rows=4;cols=8;dtype=fp32;dir=fwd;elems=3", "unknown key 'elems'"},
    {"op=softmax;rows=4;cols=4;rows=5;dtype=fp32;dir=fwd", "key 'rows' is given twice"},
    {"op=softmax;rows=4;cols=40000000000000000000000000000000000000000000000000000000000000004;"
     "dtype=fp32;dir=fwd",
     "the value of 'cols' is 65 characters long; at most 63"},
    {"op=dropout;elems=x;dtype=fp16;dir=fwd", "'elems' must be an integer"},
    {"op=gelu;elems=8;dtype=fp16;dir=fwd;loop_elems=0", "'loop_elems' must be an integer in [1, 64]"},
    {"op=gelu;elems=8;dtype=fp16;dir=fwd;generic_loop_efficiency=1.5",
     "'generic_loop_efficiency' must be a number in (0, 1]"},
    {"op=add;elems=8;dtype=fp16;dir=bwd", "op=add has no backward kernel"},
    {"op=copy;elems=8;dtype=fp16;out_dtype=bf16", "op=copy is a format conversion"},
    {"op=copy;elems=8;dtype=fp16", "'out_dtype' is required"},
    {"op=transpose;elems=8;dtype=fp16;dir=fwd;inner=diagonal",
     "'inner' must be one of contiguous|strided"},
    {"op=reduce;rows=4;cols=8;dtype=fp16;dir=bwd", "unknown key 'dir'"},
    {"op=embedding;vocab=10;dim=8;dtype=fp32", "'lookups' is required"},
    {"op=cross_entropy;rows=4;cols=8;dtype=fp32;dir=fwd", "unknown key 'cols'"},
    {"op=multi_tensor_l2norm;dtype=fp32", "'params' is required"},
    {"op=multi_tensor_unscale;params=10;dtype=bf16", "takes dtype fp32"},
    {"op=conv;m=1", "op must be one of gemm|optimizer|softmax|"},
    {"rows=4", "needs op= in its set"},
    {"op=attention;impl=flash;batch=1;heads=1;seq=64;head_dim=64;causal=0;dtype=fp32;dir=fwd",
     "the flash kernel has no fp32 form"},
    {"op=attention;impl=flash;batch=1;heads=1;seq=64;head_dim=64;dtype=fp16;dir=fwd",
     "'causal' is required"},
    {"op=attention;impl=fused;batch=1;heads=1;seq=64;head_dim=64;causal=0;dtype=fp16;dir=fwd",
     "'impl' must be one of flash|unfused|sdpa"},
    {"op=attention;impl=unfused;batch=1;heads=1;seq=64;head_dim=64;causal=0;dropout=1;"
     "dtype=fp16;dir=fwd", "'dropout' must be a probability in [0, 1)"},
    {"op=attention;impl=unfused;batch=65536;heads=128;seq=131072;head_dim=1024;causal=0;"
     "dtype=fp16;dir=fwd", "past the"},
    {"op=rmsnorm;rows=4;cols=8;dtype=bf16", "'dir' is required"},
    {"op=attention;impl=unfused;batch=1;heads=1;seq=100000000;head_dim=64;causal=0;"
     "dtype=fp16;dir=fwd", "its scores, batch x heads x seq x seq"},
};

static xs_vrow *validate_text(const char *csv, size_t *n)
{
    const char *files[] = {tu_write("kernel_rows.csv", csv)};
    xs_vrow *rows = NULL;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, n, &err), XS_OK);
    return rows;
}

static void every_class_should_parse_and_predict(void)
{
    size_t ng = sizeof GOOD / sizeof *GOOD, nb = sizeof BAD / sizeof *BAD;
    enum { CAP = 32768 };
    char *csv = malloc(CAP);
    CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
    size_t used = (size_t)snprintf(csv, CAP, HEADER);
    for (size_t i = 0; i < ng; i++)
        used += (size_t)snprintf(csv + used, CAP - used, "a100-sxm4-80gb,-,%s,time_s,1e-4,x\n",
                                 GOOD[i]);
    for (size_t i = 0; i < nb; i++)
        used += (size_t)snprintf(csv + used, CAP - used, "a100-sxm4-80gb,-,%s,time_s,1e-4,x\n",
                                 BAD[i].set);
    CU_ASSERT_FATAL(used < CAP);
    size_t n;
    xs_vrow *rows = validate_text(csv, &n);
    free(csv);
    CU_ASSERT_EQUAL_FATAL(n, ng + nb);
    for (size_t i = 0; i < ng; i++) {
        if (!rows[i].ok)
            fprintf(stderr, "\n%s: %s\n", GOOD[i], xs_vrow_reason(&rows[i]));
        CU_ASSERT(rows[i].ok);
        CU_ASSERT(isfinite(rows[i].predicted) && rows[i].predicted > 0);
        CU_ASSERT(rows[i].low <= rows[i].predicted && rows[i].predicted <= rows[i].high);
    }
    for (size_t i = 0; i < nb; i++) {
        const xs_vrow *r = &rows[ng + i];
        CU_ASSERT_FALSE(r->ok);
        if (!strstr(xs_vrow_reason(r), BAD[i].reason))
            fprintf(stderr, "\n%s: '%s' lacks '%s'\n", BAD[i].set, xs_vrow_reason(r), BAD[i].reason);
        CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(r), BAD[i].reason));
    }
    xs_vrows_free(rows, n);
}

static void build(const char *id, const char *const *sets, int nsets, xs_workload *wl)
{
    char path[512];
    xs_scenario s;
    xs_error err;
    int rc = xs_resolve("scenarios", id, path, sizeof path, &err);
    if (!rc)
        rc = xs_scn_load(path, sets, nsets, &s, &err);
    if (!rc)
        rc = xs_wl_build(&s, wl, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, XS_OK);
}

static const xs_op *find(const xs_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->n; i++)
        if (strcmp(wl->ops[i].name, name) == 0 && wl->ops[i].layer <= 0)
            return &wl->ops[i];
    return NULL;
}

static void kernel_ops(const char *set, xs_op *ops, int *n)
{
    xs_kernel_spec k;
    char reason[256];
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_kernel_spec_parse(set, &k, reason, sizeof reason), 0);
    CU_ASSERT_EQUAL_FATAL(xs_kernel_ops(&k, ops, n, &err), XS_OK);
}

/* A kernel row's op against the step's: same traffic, launches, kind and
 * hints (the name differs: the row's op is not in a layer). */
static void same_as_step(const char *set, const xs_op *op, const xs_op *w)
{
    int same = fabs(op->bytes - w->bytes) <= 1e-9 * w->bytes && op->launches == w->launches &&
               op->kind == w->kind && fabs(op->flops - w->flops) <= 1e-9 * w->flops &&
               op->hints.bw_scale == w->hints.bw_scale &&
               op->hints.loop_elems == w->hints.loop_elems &&
               op->hints.strided_elems == w->hints.strided_elems &&
               op->hints.serial_trips == w->hints.serial_trips;
    if (!same)
        fprintf(stderr, "\n%s vs %s: bytes %g/%g launches %lld/%lld\n", set, w->name, op->bytes,
                w->bytes, (long long)op->launches, (long long)w->launches);
    CU_ASSERT(same);
}

/* The kernel row's ops are the step's ops names[], in order. */
static void same_op(const char *set, const xs_workload *wl, const char *const *names, int nnames)
{
    xs_op ops[XS_KERNEL_OPS_MAX];
    int n;
    kernel_ops(set, ops, &n);
    CU_ASSERT_EQUAL_FATAL(n, nnames);
    for (int i = 0; i < n; i++) {
        const xs_op *w = find(wl, names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        same_as_step(set, &ops[i], w);
    }
}

/* bert-base-squad: batch 32 x seq 384, hidden 768, 12 heads, apex O2 (the
 * half model: LayerNorm and softmax in fp16), BERT's fp32 embedding table
 * becomes fp16 under O2 too. */
static void kernel_rows_should_be_the_steps_own_ops(void)
{
    xs_workload wl;
    build("bert-base-squad", NULL, 0, &wl);
    double T = 32 * 384.0;
    char set[256];
    snprintf(set, sizeof set, "op=layernorm;rows=%.0f;cols=768;dtype=fp16;dir=fwd", T);
    same_op(set, &wl, (const char *[]){"attn.ln"}, 1);
    snprintf(set, sizeof set, "op=layernorm;rows=%.0f;cols=768;dtype=fp16;dir=bwd", T);
    same_op(set, &wl, (const char *[]){"attn.ln.bwd"}, 1);
    snprintf(set, sizeof set, "op=softmax;rows=%.0f;cols=384;dtype=fp16;dir=fwd", 32 * 12 * 384.0);
    same_op(set, &wl, (const char *[]){"attn.softmax"}, 1);
    snprintf(set, sizeof set, "op=softmax;rows=%.0f;cols=384;dtype=fp16;dir=bwd", 32 * 12 * 384.0);
    same_op(set, &wl, (const char *[]){"attn.softmax.bwd.mul", "attn.softmax.bwd"}, 2);
    snprintf(set, sizeof set, "op=dropout;elems=%.0f;dtype=fp16;dir=both", T * 768);
    same_op(set, &wl, (const char *[]){"attn.dropout", "attn.dropout.bwd"}, 2);
    snprintf(set, sizeof set, "op=bias_gelu;elems=%.0f;dtype=fp16;dir=fwd", T * 3072);
    same_op(set, &wl, (const char *[]){"ffn.bias_add", "ffn.gelu"}, 2);
    snprintf(set, sizeof set, "op=gelu;elems=%.0f;dtype=fp16;dir=bwd", T * 3072);
    same_op(set, &wl, (const char *[]){"ffn.gelu.bwd"}, 1);
    snprintf(set, sizeof set, "op=add;elems=%.0f;dtype=fp16", T * 768);
    same_op(set, &wl, (const char *[]){"attn.residual"}, 1);
    snprintf(set, sizeof set, "op=transpose;elems=%.0f;dtype=fp16;dir=fwd;inner=strided", T * 768);
    same_op(set, &wl, (const char *[]){"attn.heads.kT"}, 1);
    snprintf(set, sizeof set, "op=transpose;elems=%.0f;dtype=fp16;dir=bwd", T * 768);
    same_op(set, &wl, (const char *[]){"attn.merge.bwd"}, 1);
    snprintf(set, sizeof set, "op=reduce;rows=%.0f;cols=3072;dtype=fp16", T);
    same_op(set, &wl, (const char *[]){"ffn.up.db"}, 1);
    snprintf(set, sizeof set, "op=embedding;vocab=30522;dim=768;lookups=%.0f;dtype=fp16", T);
    same_op(set, &wl, (const char *[]){"embed.word"}, 1);
    snprintf(set, sizeof set, "op=embedding_bwd;vocab=30522;dim=768;lookups=%.0f;dtype=fp16", T);
    same_op(set, &wl, (const char *[]){"embed.word.bwd.zero", "embed.word.bwd"}, 2);
    snprintf(set, sizeof set, "op=multi_tensor_l2norm;params=%.0f;tensors=%lld;dtype=fp32",
             wl.params, (long long)wl.tensors);
    same_op(set, &wl, (const char *[]){"grad_clip.norm"}, 1);
    snprintf(set, sizeof set, "op=multi_tensor_scale;params=%.0f;tensors=%lld;dtype=fp32",
             wl.params, (long long)wl.tensors);
    same_op(set, &wl, (const char *[]){"grad_clip.scale"}, 1);
    snprintf(set, sizeof set, "op=multi_tensor_unscale;params=%.0f;tensors=%lld;dtype=fp16",
             wl.params, (long long)wl.tensors);
    same_op(set, &wl, (const char *[]){"amp.master_grads"}, 1);
    xs_wl_free(&wl);

    /* torch.autocast: the fp32 island casts; GPT-2's LM head cross-entropy
     * in fp32 over b (s - 1) rows of its 50257-token vocabulary */
    build("gpt2-medium-finetune", NULL, 0, &wl);
    const xs_op *ln = find(&wl, "ln1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ln);
    double rows = ln->elems / 1024; /* b s tokens */
    snprintf(set, sizeof set, "op=copy;elems=%.0f;dtype=fp32;out_dtype=fp16", rows * 1024);
    same_op(set, &wl, (const char *[]){"attn.qkv.cast_x"}, 1);
    const xs_op *nll = find(&wl, "head.nll");
    CU_ASSERT_PTR_NOT_NULL_FATAL(nll);
    snprintf(set, sizeof set, "op=cross_entropy;rows=%.0f;classes=50257;dtype=fp32;dir=fwd",
             nll->elems);
    same_op(set, &wl, (const char *[]){"head.log_softmax", "head.nll"}, 2);
    snprintf(set, sizeof set, "op=cross_entropy;rows=%.0f;classes=50257;dtype=fp32;dir=bwd",
             nll->elems);
    same_op(set, &wl, (const char *[]){"head.nll.bwd", "head.log_softmax.bwd"}, 2);
    xs_wl_free(&wl);
}

/* Each op of a kernel row is the step's op of the same name (the row's
 * name prefix `row` read as the step's `step`); n: how many the row has. */
static int same_ops_by_name(const char *set, const xs_workload *wl, const char *row,
                            const char *step)
{
    xs_op ops[XS_KERNEL_OPS_MAX];
    int n;
    kernel_ops(set, ops, &n);
    size_t lr = strlen(row);
    for (int i = 0; i < n; i++) {
        char name[96];
        CU_ASSERT_FATAL(strncmp(ops[i].name, row, lr) == 0);
        snprintf(name, sizeof name, "%s%s", step, ops[i].name + lr);
        const xs_op *w = find(wl, name);
        if (!w)
            fprintf(stderr, "\n%s: the step has no %s\n", set, ops[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        same_as_step(set, &ops[i], w);
    }
    return n;
}

/* An attention row is the layer's attention: GPT-2 medium's flash kernel
 * (causal, 16 heads of 64, batch 8 x 1024, bf16 under autocast) and BERT's
 * eager chain under apex O2 (the half model: softmax in fp16). An RMSNorm
 * row is LlamaRMSNorm's Python chain. */
static void attention_and_norm_rows_should_be_the_steps_own(void)
{
    xs_workload wl;
    build("gpt2-medium-finetune", (const char *[]){"train.attention=flash"}, 1, &wl);
    CU_ASSERT_EQUAL(same_ops_by_name("op=attention;impl=flash;batch=8;heads=16;seq=1024;"
                                     "head_dim=64;causal=1;dtype=bf16;dir=both", &wl, "attn", "attn"), 2);
    xs_wl_free(&wl);
    build("bert-base-squad", NULL, 0, &wl);
    int n = same_ops_by_name("op=attention;impl=unfused;batch=32;heads=12;seq=384;head_dim=64;"
                             "causal=0;dropout=0.1;dtype=fp16;dir=fwd", &wl, "attn", "attn");
    CU_ASSERT(n >= 6); /* head copies, scores, scale, mask, softmax, dropout, context */
    xs_wl_free(&wl);
    build("tinyllama-1.1b-finetune", (const char *[]){"train.precision=bf16"}, 1, &wl);
    CU_ASSERT_EQUAL(same_ops_by_name("op=rmsnorm;rows=8192;cols=2048;dtype=bf16;dir=fwd", &wl,
                                     "rmsnorm", "input_norm"), 7);
    xs_wl_free(&wl);
}

/* dir=both is the forward kernels, then the backward ones. */
static void both_should_be_forward_plus_backward(void)
{
    size_t n;
    xs_vrow *rows = validate_text(
        HEADER "h100-sxm5-80gb,-,op=layernorm;rows=8192;cols=4096;dtype=bf16;dir=fwd,time_s,1e-4,x\n"
               "h100-sxm5-80gb,-,op=layernorm;rows=8192;cols=4096;dtype=bf16;dir=bwd,time_s,1e-4,x\n"
               "h100-sxm5-80gb,-,op=layernorm;rows=8192;cols=4096;dtype=bf16;dir=both,time_s,1e-4,x\n",
        &n);
    CU_ASSERT_FATAL(n == 3 && rows[0].ok && rows[1].ok && rows[2].ok);
    CU_ASSERT_DOUBLE_EQUAL(rows[2].predicted, rows[0].predicted + rows[1].predicted,
                           1e-12 * rows[2].predicted);
    CU_ASSERT_STRING_EQUAL(rows[0].kclass, "layernorm");
    CU_ASSERT_STRING_EQUAL(rows[1].kclass, "layernorm.bwd");
    CU_ASSERT_STRING_EQUAL(rows[2].kclass, "layernorm.fwdbwd");
    xs_vrows_free(rows, n);
}

static int same_class(const xs_vrow *r, const void *arg)
{
    return strcmp(r->kclass, (const char *)arg) == 0;
}

/* Kernel rows group by op (and direction), runs by scenario, in the
 * summary, the CSV and the JSON. */
static void summaries_should_group_rows_by_class(void)
{
    const char *csv =
        HEADER "a100-sxm4-80gb,-,op=softmax;rows=4096;cols=512;dtype=fp16;dir=fwd,time_s,1e-5,x\n"
               "h100-sxm5-80gb,-,op=softmax;rows=4096;cols=512;dtype=fp16;dir=fwd,time_s,1e-5,x\n"
               "a100-sxm4-80gb,-,op=softmax;rows=4096;cols=512;dtype=fp16;dir=bwd,time_s,1e-5,x\n"
               "a100-sxm4-80gb,-,op=gemm;m=512;n=512;k=512;dtype=fp16,time_s,1e-5,x\n"
               "a100-sxm4-80gb,bert-base-squad,,samples_per_s,400,x\n";
    size_t n;
    xs_vrow *rows = validate_text(csv, &n);
    CU_ASSERT_EQUAL_FATAL(n, 5);
    static const char *cls[] = {"softmax", "softmax", "softmax.bwd", "gemm.large", "bert-base-squad"};
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(rows[i].ok);
        CU_ASSERT_STRING_EQUAL(rows[i].kclass, cls[i]);
    }
    xs_vsummary v;
    xs_vsummarize(rows, n, same_class, "softmax", &v);
    CU_ASSERT_EQUAL(v.n, 2);
    CU_ASSERT_DOUBLE_EQUAL(v.mape_pct, 0.5 * (fabs(rows[0].error_pct) + fabs(rows[1].error_pct)),
                           1e-9);
    xs_vrows_free(rows, n);

    const char *path = tu_write("classes.csv", csv);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "validate --measured '%s'", path);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    const char *by = strstr(r.out, "\nby class\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(by);
    static const struct {
        const char *name;
        int n;
    } want[] = {{"softmax", 2}, {"softmax.bwd", 1}, {"gemm.large", 1}, {"bert-base-squad", 1}};
    for (int i = 0; i < 4; i++) {
        char line[96];
        snprintf(line, sizeof line, "\n  %-40s n %3d   MAPE", want[i].name, want[i].n);
        CU_ASSERT_PTR_NOT_NULL(strstr(by, line));
    }
    tu_run_free(&r);

    snprintf(cmd, sizeof cmd, "validate --measured '%s' --format json", path);
    r = tu_run(cmd);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *by_class = cJSON_GetObjectItem(doc, "by_class");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(by_class), 4);
    cJSON *sm = cJSON_GetObjectItem(by_class, "softmax");
    CU_ASSERT_EQUAL_FATAL(cJSON_IsObject(sm), 1);
    CU_ASSERT_EQUAL((int)cJSON_GetObjectItem(sm, "n")->valuedouble, 2);
    cJSON *row2 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), 2);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(row2, "class")->valuestring, "softmax.bwd");
    cJSON_Delete(doc);
    tu_run_free(&r);

    snprintf(cmd, sizeof cmd, "validate --measured '%s' --format csv", path);
    r = tu_run(cmd);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ",kernels_predicted,class\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ",softmax.bwd\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ",bert-base-squad\n"));
    tu_run_free(&r);
}

/* PyTorch's softmax keeps a row on chip up to what a block's 48 KiB of
 * shared memory holds (whole 16-byte vectors); a longer row is read three
 * times forward. The same elements in short rows move half the bytes. */
static void long_softmax_rows_should_be_read_three_times(void)
{
    xs_op ops[XS_KERNEL_OPS_MAX];
    int n;
    kernel_ops("op=softmax;rows=65536;cols=1024;dtype=fp32;dir=fwd;log=1", ops, &n);
    double elems = 65536.0 * 1024;
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 2 * 4 * elems, 1);
    kernel_ops("op=softmax;rows=5461;cols=12252;dtype=fp32;dir=fwd;log=1", ops, &n);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 2 * 4 * 5461.0 * 12252, 1); /* 49008 B: fits */
    kernel_ops("op=softmax;rows=5461;cols=12256;dtype=fp32;dir=fwd;log=1", ops, &n);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 4 * 4 * 5461.0 * 12256, 1); /* 49024 B: does not */
    kernel_ops("op=softmax;rows=4096;cols=16384;dtype=fp32;dir=fwd;log=1", ops, &n);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 4 * 4 * elems, 1);
    kernel_ops("op=softmax;rows=4096;cols=16384;dtype=fp16;dir=fwd", ops, &n);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 2 * 2 * elems, 1); /* 32 KiB in fp16: fits */
    kernel_ops("op=softmax;rows=4096;cols=4099;dtype=fp32;dir=fwd", ops, &n);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 4 * 4 * 4096.0 * 4099, 1); /* not whole vectors */
    /* softmax's backward: tmp = dy * y first, then the row kernel on tmp
     * and y, which reads a row it cannot hold twice for tmp; log_softmax's
     * is the row kernel alone */
    kernel_ops("op=softmax;rows=4096;cols=16384;dtype=fp32;dir=bwd", ops, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(ops[0].name, "softmax.bwd.mul");
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 3 * 4 * elems, 1);
    CU_ASSERT_DOUBLE_EQUAL(ops[1].bytes, 4 * 4 * elems, 1);
    kernel_ops("op=softmax;rows=4096;cols=16384;dtype=fp32;dir=bwd;log=1", ops, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 4 * 4 * elems, 1);
    kernel_ops("op=softmax;rows=65536;cols=1024;dtype=fp32;dir=bwd", ops, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes + ops[1].bytes, 6 * 4 * 65536.0 * 1024, 1);
}

/* nll_loss's mean is one block of 32 threads, each loading a target and
 * then the logit it names: 2 dependent round trips for every 32 rows, at
 * the unloaded latency, longer than the few bytes it moves. */
static void nll_loss_should_wait_on_its_gathers(void)
{
    xs_op ops[XS_KERNEL_OPS_MAX];
    int n;
    kernel_ops("op=cross_entropy;rows=16384;classes=4096;dtype=fp32;dir=fwd", ops, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(ops[1].name, "head.nll");
    CU_ASSERT_DOUBLE_EQUAL(ops[1].hints.serial_trips, 2 * 16384 / 32.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].hints.serial_trips, 0, 0);
    kernel_ops("op=cross_entropy;rows=33;classes=4096;dtype=fp32;dir=fwd", ops, &n);
    CU_ASSERT_DOUBLE_EQUAL(ops[1].hints.serial_trips, 4, 1e-9);
    xs_device dev;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("a100-sxm4-80gb", &dev, &err), XS_OK);
    kernel_ops("op=cross_entropy;rows=16384;classes=4096;dtype=fp32;dir=fwd", ops, &n);
    xs_estimate e;
    CU_ASSERT_EQUAL_FATAL(xs_dev_estimate(&dev, &ops[1], &e, &err), XS_OK);
    double chain = 1024 * xs_gpu_of(&dev)->mem_latency_ns * 1e-9;
    CU_ASSERT_DOUBLE_EQUAL(e.time_s, chain + e.overhead_s, 1e-12);
    CU_ASSERT_EQUAL(e.bound, XS_BOUND_LATENCY);
    CU_ASSERT(e.memory_s < 0.01 * chain);
}

/* nn.Embedding's forward (index_select) is paced by its index arithmetic,
 * one element a thread at a time, not by DRAM; its backward is a chain of
 * kernels whose count follows the ids: after the zero fill, one kernel up
 * to 3072 ids, CUB's single-tile sort up to 4864, its 8 onesweep passes
 * past that. */
static void embedding_should_pay_for_its_index_math_and_its_sort(void)
{
    xs_op ops[XS_KERNEL_OPS_MAX];
    int n;
    xs_device dev;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_dev_open("a100-sxm4-80gb", &dev, &err), XS_OK);
    kernel_ops("op=embedding;vocab=32768;dim=768;lookups=16384;dtype=fp32", ops, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    xs_estimate e768, e4096;
    CU_ASSERT_EQUAL_FATAL(xs_dev_estimate(&dev, &ops[0], &e768, &err), XS_OK);
    CU_ASSERT_EQUAL(e768.bound, XS_BOUND_COMPUTE);
    CU_ASSERT(e768.memory_s < 0.5 * e768.compute_s);
    kernel_ops("op=embedding;vocab=32768;dim=4096;lookups=16384;dtype=fp32", ops, &n);
    CU_ASSERT_EQUAL_FATAL(xs_dev_estimate(&dev, &ops[0], &e4096, &err), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(e4096.compute_s / e768.compute_s, 4096 / 768.0, 1e-9);
    /* the zero fill of the table, then the kernels that add into it; the
     * small path's one kernel waits on two round trips a chunk of 32 ids */
    static const struct {
        int ids, launches, trips;
    } chain[] = {{3072, 1, 192}, {3073, 11, 0}, {4864, 11, 0}, {4865, 30, 0}, {16384, 30, 0}};
    double last = 0;
    for (size_t i = 0; i < sizeof chain / sizeof *chain; i++) {
        char set[128];
        snprintf(set, sizeof set, "op=embedding;vocab=32768;dim=768;lookups=%d;dtype=fp32;dir=bwd",
                 chain[i].ids);
        kernel_ops(set, ops, &n);
        CU_ASSERT_EQUAL_FATAL(n, 2);
        CU_ASSERT_STRING_EQUAL(ops[0].name, "embedding.bwd.zero");
        CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 32768 * 768 * 4.0, 1);
        CU_ASSERT_EQUAL(ops[1].launches, chain[i].launches);
        CU_ASSERT_DOUBLE_EQUAL(ops[1].hints.serial_trips, chain[i].trips, 0);
        CU_ASSERT(ops[1].bytes > last);
        last = ops[1].bytes;
    }
    /* a larger vocabulary: a larger fill, the same kernels */
    kernel_ops("op=embedding;vocab=131072;dim=768;lookups=16384;dtype=fp32;dir=bwd", ops, &n);
    CU_ASSERT_DOUBLE_EQUAL(ops[0].bytes, 131072 * 768 * 4.0, 1);
    CU_ASSERT_DOUBLE_EQUAL(ops[1].bytes, last, 1e-9 * last);
}

int tu_add_kernel_op_suite(void)
{
    CU_pSuite s = CU_add_suite("kernel_op", NULL, NULL);
    if (!s)
        return -1;
    return !CU_add_test(s, "every_class_should_parse_and_predict",
                        every_class_should_parse_and_predict) ||
           !CU_add_test(s, "kernel_rows_should_be_the_steps_own_ops",
                        kernel_rows_should_be_the_steps_own_ops) ||
           !CU_add_test(s, "attention_and_norm_rows_should_be_the_steps_own",
                        attention_and_norm_rows_should_be_the_steps_own) ||
           !CU_add_test(s, "both_should_be_forward_plus_backward",
                        both_should_be_forward_plus_backward) ||
           !CU_add_test(s, "summaries_should_group_rows_by_class",
                        summaries_should_group_rows_by_class) ||
           !CU_add_test(s, "long_softmax_rows_should_be_read_three_times",
                        long_softmax_rows_should_be_read_three_times) ||
           !CU_add_test(s, "embedding_should_pay_for_its_index_math_and_its_sort",
                        embedding_should_pay_for_its_index_math_and_its_sort) ||
           !CU_add_test(s, "nll_loss_should_wait_on_its_gathers",
                        nll_loss_should_wait_on_its_gathers);
}
