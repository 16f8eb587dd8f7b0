/* test_memory.c — the memory model: each term against a hand computation
 * for a tiny model, Korthikanti et al.'s activations per GPT layer in its
 * own assumptions, what flash attention removes, monotony in batch and
 * sequence, the bookkeeping of kept tensors and gradients, the largest
 * batch at its boundary, and every published run predicted to fit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "batch_fit.h"
#include "job.h"
#include "memory.h"
#include "paths.h"
#include "scenario.h"
#include "test_util.h"
#include "workload.h"

static xs_memory memory_of(const char *dev_id, const char *id, const char *const *sets, int n,
                           xs_workload *keep_wl)
{
    xs_scenario s;
    xs_workload wl;
    xs_memory m;
    memset(&m, 0, sizeof m);
    CU_ASSERT_EQUAL_FATAL(tu_build(id, sets, n, &s, &wl), XS_OK);
    xs_device dev = tu_device(dev_id);
    xs_error err;
    CU_ASSERT_EQUAL(xs_memory_predict(&dev, &s, &wl, &m, &err), XS_OK);
    if (keep_wl)
        *keep_wl = wl;
    else
        xs_wl_free(&wl);
    return m;
}

/* Bytes the forward ops of layer 0 keep for the backward. */
static double layer0_saved(const xs_workload *wl)
{
    double b = 0;
    for (size_t i = 0; i < wl->n; i++)
        if (wl->ops[i].layer == 0 && wl->ops[i].phase == XS_PH_FWD)
            b += wl->ops[i].mem.saved;
    return b;
}

#define TINY "tests/data/scenarios/tiny.json"

/* Korthikanti et al. 2022 (arXiv 2205.05198, section 4.1): a GPT layer keeps
 * s b h (34 + 5 a s / h) bytes with 16-bit activations, 1-byte dropout
 * masks, an FFN of 4h, unfused attention with dropout; they leave out the
 * LayerNorms' mean and rstd (2 x 8 bytes a token here). apex O2 is that
 * setting: every activation in half, no fp32 islands. */
static void gpt_layer_should_keep_korthikanti_bytes(void)
{
    const char *sets[] = {"model.arch=decoder", "model.head=lm", "train.amp_mode=o2",
                          "model.activation=gelu"};
    xs_scenario s;
    xs_workload wl;
    CU_ASSERT_EQUAL_FATAL(tu_build(TINY, sets, 4, &s, &wl), XS_OK);
    double sb = (double)(s.train.seq * s.train.batch), h = (double)s.model.hidden;
    double a = (double)s.model.heads, sq = (double)s.train.seq;
    double want = sb * h * (34 + 5 * a * sq / h) + 2 * sb * 8;
    CU_ASSERT_DOUBLE_EQUAL(layer0_saved(&wl), want, 1e-9 * want);
    xs_wl_free(&wl);
}

/* Under torch.autocast the same layer keeps more: softmax and LayerNorm run
 * in fp32 (their kept tensors in 4 bytes), each linear keeps the half copy
 * of its weight, and the fp32 island inputs are cast (and kept) per linear. */
static void autocast_should_keep_more_than_o2(void)
{
    const char *o2[] = {"model.arch=decoder", "model.head=lm", "train.amp_mode=o2",
                        "model.activation=gelu"};
    const char *ac[] = {"model.arch=decoder", "model.head=lm", "train.amp_mode=autocast",
                        "model.activation=gelu"};
    xs_scenario s;
    xs_workload w1, w2;
    CU_ASSERT_EQUAL_FATAL(tu_build(TINY, o2, 4, &s, &w1), XS_OK);
    CU_ASSERT_EQUAL_FATAL(tu_build(TINY, ac, 4, &s, &w2), XS_OK);
    double h = (double)s.model.hidden, f = (double)s.model.ffn;
    double weights_half = 2 * (3 * h * h + h * h + h * f + f * h); /* qkv, out, up, down */
    double S2 = (double)(s.train.batch * s.model.heads * s.train.seq * s.train.seq);
    double T = (double)(s.train.batch * s.train.seq);
    /* + weight copies; softmax output 4 bytes not 2; both LayerNorm inputs
     * 4 bytes not 2 (the residual stream is fp32) */
    double want = layer0_saved(&w1) + weights_half + 2 * S2 + 2 * (2 * T * h);
    CU_ASSERT_DOUBLE_EQUAL(layer0_saved(&w2), want, 1e-9 * want);
    xs_wl_free(&w1);
    xs_wl_free(&w2);
}

/* Flash attention keeps q, k, v, its output and a logsumexp a row: every
 * kept byte of a layer is linear in the sequence; unfused attention keeps
 * the s x s scores and probabilities, which grow faster. */
static void flash_should_remove_the_s2_term(void)
{
    /* apex O2: no weight copies kept (they do not grow with the sequence) */
    const char *f16[] = {"train.attention=flash", "train.seq=16", "train.amp_mode=o2"};
    const char *f32[] = {"train.attention=flash", "train.seq=32", "train.amp_mode=o2"};
    const char *u16[] = {"train.attention=unfused", "train.seq=16", "train.amp_mode=o2"};
    const char *u32[] = {"train.attention=unfused", "train.seq=32", "train.amp_mode=o2"};
    xs_scenario s;
    xs_workload a, b, c, d;
    CU_ASSERT_EQUAL_FATAL(tu_build(TINY, f16, 3, &s, &a), XS_OK);
    CU_ASSERT_EQUAL_FATAL(tu_build(TINY, f32, 3, &s, &b), XS_OK);
    CU_ASSERT_EQUAL_FATAL(tu_build(TINY, u16, 3, &s, &c), XS_OK);
    CU_ASSERT_EQUAL_FATAL(tu_build(TINY, u32, 3, &s, &d), XS_OK);
    CU_ASSERT_DOUBLE_EQUAL(layer0_saved(&b), 2 * layer0_saved(&a), 1e-9 * layer0_saved(&b));
    CU_ASSERT(layer0_saved(&d) > 2 * layer0_saved(&c) * 1.05);
    CU_ASSERT(layer0_saved(&a) < layer0_saved(&c));
    xs_wl_free(&a);
    xs_wl_free(&b);
    xs_wl_free(&c);
    xs_wl_free(&d);
}

/* What lives across the step, per parameter: weights (and master copies),
 * optimizer state; gradients that persist when zero_grad zero-fills. */
static void persistent_terms_should_match_bytes_per_parameter(void)
{
    static const struct {
        const char *sets[3];
        double weights, optimizer; /* bytes a parameter */
    } cases[] = {
        {{"train.precision=fp32", "train.optimizer=adamw", "train.zero_grad=zero"}, 4, 8},
        {{"train.precision=amp_fp16", "train.optimizer=adamw", "train.zero_grad=zero"}, 4, 8},
        {{"train.precision=bf16", "train.optimizer=adamw", "train.zero_grad=zero"}, 2, 4},
        {{"train.precision=fp32", "train.optimizer=sgd", "train.zero_grad=zero"}, 4, 4},
        {{"train.precision=fp32", "train.optimizer=adan", "train.zero_grad=zero"}, 4, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xs_workload wl;
        xs_memory m = memory_of("a100-sxm4-80gb", TINY, cases[i].sets, 3, &wl);
        double P = wl.params;
        CU_ASSERT_DOUBLE_EQUAL(m.weights, cases[i].weights * P, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(m.optimizer, cases[i].optimizer * P, 1e-6);
        /* zero-filled gradients in the weights' format exist all step */
        CU_ASSERT_DOUBLE_EQUAL(m.grads, (cases[i].weights == 2 ? 2 : 4) * P, 1e-6);
        xs_wl_free(&wl);
    }
    /* apex O2: a half model and an fp32 master copy */
    const char *o2[] = {"train.amp_mode=o2"};
    xs_workload wl;
    xs_memory m = memory_of("a100-sxm4-80gb", TINY, o2, 1, &wl);
    CU_ASSERT_DOUBLE_EQUAL(m.weights, 6 * wl.params, 1e-6);
    xs_wl_free(&wl);
    /* its fp32 master gradients live from the first micro-batch's unscale
     * on when micro-batches accumulate into them */
    const char *o2acc[] = {"train.amp_mode=o2", "train.grad_accum=2"};
    m = memory_of("a100-sxm4-80gb", TINY, o2acc, 2, &wl);
    CU_ASSERT(m.grads >= 4 * wl.params);
    CU_ASSERT_EQUAL(m.peak_phase, XS_PH_BWD);
    xs_wl_free(&wl);
}

/* The parts add up, the workspace is the era's CUDA context plus two cuBLAS
 * and cuBLASLt workspaces, and the capacity is what nvidia-smi reports. */
static void total_should_be_the_sum_of_its_parts(void)
{
    const char *sets[] = {"device.cuda_context_mib=500"};
    xs_memory m = memory_of("t4", TINY, sets, 1, NULL);
    double sum = m.weights + m.grads + m.optimizer + m.activations + m.transient +
                 m.fragmentation + m.workspace;
    CU_ASSERT_DOUBLE_EQUAL(m.total, sum, 1e-6 * sum);
    double ws = 500 * 1048576.0 + 2 * ((4096.0 * 2 + 16 * 8) * 1024 + 1048576.0);
    CU_ASSERT_DOUBLE_EQUAL(m.workspace, ws, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(m.capacity, 15109 * 1048576.0, 1); /* t4's memory.usable_mib */
    CU_ASSERT_TRUE(m.fits);
    /* a host CPU has no CUDA context */
    xs_memory c = memory_of("xeon-amx-2c", TINY, NULL, 0, NULL);
    CU_ASSERT_DOUBLE_EQUAL(c.workspace, 0, 0);
}

/* Every tensor kept is released by the backward, every gradient created
 * once: for id built with sets. */
static void check_balance(const char *id, const char *const *sets)
{
    int n = 0;
    while (n < 3 && sets[n])
        n++;
    xs_scenario s;
    xs_workload wl;
    CU_ASSERT_EQUAL_FATAL(tu_build(id, sets, n, &s, &wl), XS_OK);
    tu_check_memory_balance(&s, &wl);
    xs_wl_free(&wl);
}

/* ... for the shipped scenarios and the options that change what is kept. */
static void kept_and_released_should_balance(void)
{
    static const char *const variants[][3] = {
        {"train.attention=flash", NULL, NULL},
        {"train.kernels=fused", NULL, NULL},
        {"train.precision=fp32", NULL, NULL},
        {"train.precision=bf16", "train.grad_accum=3", NULL},
        {"model.head=cls", "train.amp_mode=autocast", NULL},
        {"train.checkpointing=layer", NULL, NULL},
        {"train.lora.rank=8", "train.lora.targets=all-linear", "train.lora.dropout=0.1"},
        {"train.lora.rank=8", "train.checkpointing=layer", "train.precision=fp32"},
        {"train.lora.rank=16", "train.quant=nf4", "train.kernels=eager"},
        {NULL, NULL, NULL},
    };
    static const char *const ids[] = {"bert-large-squad", "bert-base-squad-hf",
                                      "gpt2-medium-finetune"};
    for (size_t i = 0; i < 3; i++)
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
            check_balance(ids[i], variants[v]);
    /* the Llama family, with and without LoRA, QLoRA and checkpointing */
    static const char *const llama_variants[][3] = {
        {NULL, NULL, NULL},
        {"train.attention=unfused", NULL, NULL},
        {"train.checkpointing=none", NULL, NULL},
        {"train.lora.rank=16", "train.lora.targets=all-linear", "train.checkpointing=layer"},
        {"train.lora.rank=8", "train.quant=nf4", "train.precision=amp_bf16"},
        {"train.precision=fp32", NULL, NULL},
    };
    static const char *const llama_ids[] = {"tinyllama-1.1b-finetune", "llama2-7b-lora",
                                            "mistral-7b-qlora"};
    for (size_t i = 0; i < 3; i++)
        for (size_t v = 0; v < sizeof llama_variants / sizeof llama_variants[0]; v++)
            check_balance(llama_ids[i], llama_variants[v]);
}

/* More samples or longer sequences never need less memory. */
static void memory_should_grow_with_batch_and_seq(void)
{
    double last = 0;
    for (int b = 1; b <= 64; b *= 2) {
        char set[32];
        snprintf(set, sizeof set, "train.batch=%d", b);
        const char *sets[] = {set};
        xs_memory m = memory_of("a100-sxm4-80gb", "gpt2-medium-finetune", sets, 1, NULL);
        CU_ASSERT(m.total > last);
        last = m.total;
    }
    last = 0;
    for (int q = 64; q <= 512; q *= 2) { /* its max_positions */
        char set[32];
        snprintf(set, sizeof set, "train.seq=%d", q);
        const char *sets[] = {set};
        xs_memory m = memory_of("a100-sxm4-80gb", "bert-base-squad", sets, 1, NULL);
        CU_ASSERT(m.total > last);
        last = m.total;
    }
}

/* The fit search stops at the boundary: its batch fits, one more does not. */
static void fit_search_should_stop_at_the_boundary(void)
{
    static const char *const cases[][2] = {
        {"t4", "bert-large-squad"}, {"a10", "gpt2-medium-finetune"}, {"l4", "bert-base-squad"}};
    for (size_t i = 0; i < 3; i++) {
        xs_device dev = tu_device(cases[i][0]);
        xs_scenario s;
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_scn_open(cases[i][1], NULL, 0, &s, &err), XS_OK);
        int64_t b;
        xs_memory at, next, m;
        CU_ASSERT_EQUAL_FATAL(xs_fit_max_batch(&dev, &s, &b, &at, &next, &err), XS_OK);
        CU_ASSERT(b >= 1);
        CU_ASSERT_EQUAL(xs_fit_memory_at(&dev, &s, b, &m, &err), XS_OK);
        CU_ASSERT_TRUE(m.fits);
        CU_ASSERT_DOUBLE_EQUAL(m.total, at.total, 1e-6);
        CU_ASSERT_EQUAL(xs_fit_memory_at(&dev, &s, b + 1, &m, &err), XS_OK);
        CU_ASSERT_FALSE(m.fits);
        CU_ASSERT_DOUBLE_EQUAL(m.total, next.total, 1e-6);
    }
    /* too big for any batch: 0, the memory at 1 */
    xs_device t4 = tu_device("t4");
    xs_scenario s;
    xs_error err;
    const char *big[] = {"model.layers=400"};
    CU_ASSERT_EQUAL_FATAL(xs_scn_open("gpt2-medium-finetune", big, 1, &s, &err), XS_OK);
    int64_t b = -1;
    xs_memory at, next;
    CU_ASSERT_EQUAL(xs_fit_max_batch(&t4, &s, &b, &at, &next, &err), XS_OK);
    CU_ASSERT_EQUAL(b, 0);
    CU_ASSERT(at.total > at.capacity);
}

/* The splits of a global batch: each multiplies out, fits, and they come
 * fastest first. */
static void splits_should_reach_the_global_batch_fastest_first(void)
{
    xs_device dev = tu_device("a10");
    xs_scenario s;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_scn_open("bert-base-squad", NULL, 0, &s, &err), XS_OK);
    xs_fit_split *v;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(xs_fit_splits(&dev, &s, 96, &v, &n, &err), XS_OK);
    CU_ASSERT(n >= 5); /* of 1 2 3 4 6 8 12 16 24 32 48 96, those that fit */
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(v[i].batch * v[i].grad_accum, 96);
        CU_ASSERT_TRUE(v[i].mem.fits);
        if (i)
            CU_ASSERT(v[i].samples_per_s <= v[i - 1].samples_per_s);
    }
    free(v);
    /* one micro-batch keeps no gradients across micro-batches: GPT-2 medium
     * on an A10 fits 6 x 1 though 6 does not fit at grad_accum 4 */
    xs_scenario g;
    CU_ASSERT_EQUAL_FATAL(xs_scn_open("gpt2-medium-finetune", NULL, 0, &g, &err), XS_OK);
    int64_t mb;
    xs_memory at, next;
    CU_ASSERT_EQUAL_FATAL(xs_fit_max_batch(&dev, &g, &mb, &at, &next, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_fit_splits(&dev, &g, mb + 1, &v, &n, &err), XS_OK);
    CU_ASSERT(n >= 1);
    int alone = 0;
    for (size_t i = 0; i < n; i++)
        alone |= v[i].grad_accum == 1 && v[i].batch == mb + 1;
    CU_ASSERT_TRUE(alone);
    free(v);
}

/* One CSV line's fields, in place: RFC 4180 quotes ("a,b" and "" inside
 * one) as the measured-run files use them. */
static int split_row(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        char *out = p;
        f[n++] = p;
        if (*p == '"') {
            for (char *q = p + 1; *q; q++) {
                if (*q == '"' && q[1] == '"')
                    *out++ = *q++;
                else if (*q == '"') {
                    p = q + 1;
                    break;
                } else
                    *out++ = *q;
            }
            *out = '\0';
            if (*p != ',')
                break;
            p++;
            continue;
        }
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

/* Every scenario row of file fits its device (they all ran). Returns the
 * rows checked. */
static int check_file_fits(const char *rel)
{
    FILE *f = fopen(rel, "r"); /* the suites run in the source root */
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[8192];
    int rows = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        char *fld[6];
        if (lineno++ == 0 || split_row(line, fld, 6) < 4 || strcmp(fld[1], "-") == 0)
            continue;
        char setbuf[1024];
        const char *sets[64];
        int n = 0;
        snprintf(setbuf, sizeof setbuf, "%s", fld[2]);
        for (char *save = NULL, *t = strtok_r(setbuf, ";", &save); t && n < 64;
             t = strtok_r(NULL, ";", &save))
            sets[n++] = t;
        xs_scenario s;
        xs_workload wl;
        xs_error err;
        xs_memory m;
        xs_device dev = tu_device(fld[0]);
        int rc = xs_scn_open(fld[1], sets, n, &s, &err);
        if (!rc)
            rc = xs_wl_build(&s, &wl, &err);
        if (!rc) {
            rc = xs_memory_predict(&dev, &s, &wl, &m, &err);
            xs_wl_free(&wl);
        }
        CU_ASSERT_EQUAL(rc, XS_OK);
        if (!rc && !m.fits)
            fprintf(stderr, "\n%s:%d: %s %s %s needs %.2f GB of %.2f GB, yet it ran\n", rel,
                    lineno, fld[0], fld[1], fld[2], m.total / XS_GIB, m.capacity / XS_GIB);
        CU_ASSERT_TRUE(!rc && m.fits);
        rows++;
    }
    fclose(f);
    return rows;
}

static void every_published_run_should_fit(void)
{
    static const char *const files[] = {
        "data/measured/dev-bert-finetune-lambda.csv",
        "data/measured/dev-bert-finetune-lambda-multigpu.csv",
        "data/published/zeus-v100-bert-base-squad.csv",
        "data/published/memory-hf-bert-large-v100.csv",
        "data/published/lora-qlora.csv",
        "data/published/vit-timm-rtx3090.csv",
        "data/published/te-llama-h100.csv",
        "data/fits/batch-fits.csv",
    };
    int rows = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        rows += check_file_fits(files[i]);
    CU_ASSERT(rows > 150);
}


/* predict of a step that does not fit: the report, a line saying so, exit
 * 4; --ignore-memory: exit 0. JSON carries the memory object. */
static void predict_should_exit_4_when_the_step_does_not_fit(void)
{
    tu_result r = tu_run("predict -d t4 --set train.batch=4096 --summary");
    CU_ASSERT_EQUAL(r.status, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "does NOT fit: needs"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "does not fit on t4"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "step ")); /* still predicted */
    tu_run_free(&r);
    r = tu_run("predict -d t4 --set train.batch=4096 --summary --ignore-memory");
    CU_ASSERT_EQUAL(r.status, 0);
    tu_run_free(&r);
    r = tu_run("predict -d t4 --set train.batch=4 --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    cJSON *m = cJSON_GetObjectItem(doc, "memory");
    static const char *keys[] = {"weights_gb",    "grads_gb",    "optimizer_gb",
                                 "activations_gb", "transient_gb", "workspace_gb",
                                 "total_gb",       "capacity_gb"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItem(m, keys[i])));
    CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(m, "fits")));
    cJSON_Delete(doc);
    tu_run_free(&r);
}

/* fit --format json: the largest batch, its speed, the splits of the
 * global batch asked for, each multiplying out. */
static void fit_json_should_give_max_batch_and_combinations(void)
{
    tu_result r = tu_run("fit -d t4 -s bert-large-squad --global-batch 48 --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    double mb = cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "max_batch"));
    CU_ASSERT(mb >= 1);
    CU_ASSERT(cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "samples_per_s")) > 0);
    cJSON *c = cJSON_GetObjectItem(doc, "combinations"), *x;
    CU_ASSERT(cJSON_GetArraySize(c) >= 3);
    cJSON_ArrayForEach(x, c)
    {
        double b = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "batch"));
        CU_ASSERT_EQUAL(b * cJSON_GetNumberValue(cJSON_GetObjectItem(x, "grad_accum")), 48);
        CU_ASSERT(b <= mb);
    }
    cJSON_Delete(doc);
    tu_run_free(&r);
    r = tu_run("fit -d t4 -s gpt2-medium-finetune --set model.layers=400");
    CU_ASSERT_EQUAL(r.status, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "does NOT fit even at micro-batch 1"));
    tu_run_free(&r);
    r = tu_run("fit --global-batch 0");
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_free(&r);
}

/* compare: runs that do not fit come after those that do, unpriced. */
static void compare_should_put_runs_that_do_not_fit_last_unpriced(void)
{
    tu_result r = tu_run("compare -s gpt2-medium-finetune -d t4,a100-sxm4-80gb,l4 --format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    const char *a100 = strstr(r.out, "\na100-sxm4-80gb,"), *t4 = strstr(r.out, "\nt4,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t4);
    CU_ASSERT(a100 < t4);
    const char *end = strchr(t4 + 1, '\n');
    CU_ASSERT(end && strncmp(end - 2, ",0", 2) == 0); /* fits 0 */
    /* no run time, energy or cost on its row: the 8th-10th fields empty */
    int commas = 0;
    const char *p = t4 + 1;
    while (commas < 7 && *p)
        commas += *p++ == ',';
    CU_ASSERT(strncmp(p, ",,,", 3) == 0);
    tu_run_free(&r);
    r = tu_run("compare -s gpt2-medium-finetune -d t4,a100-sxm4-80gb");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "does NOT fit: needs"));
    tu_run_free(&r);
}

/* advise proposes nothing that does not fit: every row's --set, applied to
 * predict, exits 0 (4 would be a step that does not fit). */
static void advise_should_propose_only_changes_that_fit(void)
{
    tu_result r = tu_run("advise -d t4 -s bert-large-squad --set train.batch=12 --format json");
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out), *row;
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT(cJSON_GetArraySize(doc) >= 1);
    cJSON_ArrayForEach(row, doc)
    {
        char cmd[1024];
        int used = snprintf(cmd, sizeof cmd,
                            "predict -d t4 -s bert-large-squad --set train.batch=12 --summary");
        cJSON *set;
        cJSON_ArrayForEach(set, cJSON_GetObjectItem(row, "set"))
            used += snprintf(cmd + used, sizeof cmd - (size_t)used, " --set %s",
                             cJSON_GetStringValue(set));
        tu_result p = tu_run(cmd);
        if (p.status != 0)
            fprintf(stderr, "\n`xpusim %s` exits %d\n", cmd, p.status);
        CU_ASSERT_EQUAL(p.status, 0);
        tu_run_free(&p);
    }
    cJSON_Delete(doc);
    tu_run_free(&r);
}

/* validate: memory_gb is what nvidia-smi shows, memory_allocated_gb what
 * torch.cuda.max_memory_allocated counts: the same less the CUDA context. */
static void validate_should_predict_both_memory_metrics(void)
{
    const char *csv = tu_write("mem.csv",
                               "device,scenario,set,metric,value,source\n"
                               "t4,bert-base-squad,train.batch=8;device.cuda_context_mib=1024,"
                               "memory_gb,9,test\n"
                               "t4,bert-base-squad,train.batch=8;device.cuda_context_mib=1024,"
                               "memory_allocated_gb,8,test\n");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "validate --measured '%s' --format json", csv);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    cJSON *doc = cJSON_Parse(r.out);
    cJSON *rows = cJSON_GetObjectItem(doc, "rows");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(rows), 2);
    double smi = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 0), "predicted"));
    double alloc =
        cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), "predicted"));
    CU_ASSERT(alloc > 0);
    CU_ASSERT_DOUBLE_EQUAL(smi - alloc, 1.0, 1e-9); /* 1024 MiB */
    cJSON_Delete(doc);
    tu_run_free(&r);
}

/* A tensor is a transient or a kept tensor, not both: the GELU's output is
 * what ffn.down keeps, the LayerNorm's input what the residual add wrote,
 * under autocast the weight copy what its cast wrote. */
static void a_kept_tensor_should_not_count_as_transient(void)
{
    static const char *const precisions[] = {"train.precision=fp32", "train.precision=amp_fp16"};
    for (int i = 0; i < 2; i++) {
        const char *sets[] = {precisions[i], "train.amp_mode=autocast"};
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build("bert-base-squad", sets, 2, &s, &wl), XS_OK);
        int seen = 0;
        for (size_t k = 0; k < wl.n; k++) {
            const xs_op *op = &wl.ops[k];
            if (op->layer != 0 || op->phase != XS_PH_FWD)
                continue;
            if (strcmp(op->name, "ffn.gelu") == 0 || strcmp(op->name, "attn.residual") == 0 ||
                strstr(op->name, ".cast_w")) {
                CU_ASSERT_DOUBLE_EQUAL(op->mem.temp, 0, 0);
                seen++;
            }
        }
        CU_ASSERT(seen >= 2);
        xs_wl_free(&wl);
    }
}

/* Activation checkpointing runs each layer's forward again: more time and
 * hardware FLOPs, the same model FLOPs (MFU's numerator). */
static void checkpointing_should_keep_the_model_flops(void)
{
    double flops[2], time[2];
    for (int i = 0; i < 2; i++) {
        const char *sets[] = {i ? "train.checkpointing=layer" : "train.checkpointing=none"};
        xs_job j;
        xs_error err;
        xs_job_init(&j);
        j.dev = tu_device("a100-sxm4-80gb");
        CU_ASSERT_EQUAL_FATAL(xs_job_scenario(&j, "tinyllama-1.1b-finetune", sets, 1, &err), XS_OK);
        CU_ASSERT_EQUAL_FATAL(xs_job_predict(&j, 0, &err), XS_OK);
        flops[i] = j.p.matmul_flops;
        time[i] = j.p.step_time_s;
        xs_job_free(&j);
    }
    CU_ASSERT_DOUBLE_EQUAL(flops[1], flops[0], 1e-9 * flops[0]);
    CU_ASSERT(time[1] > time[0]);
}

int tu_add_memory_suite(void)
{
    CU_pSuite s = CU_add_suite("memory", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, gpt_layer_should_keep_korthikanti_bytes);
    CU_ADD_TEST(s, autocast_should_keep_more_than_o2);
    CU_ADD_TEST(s, flash_should_remove_the_s2_term);
    CU_ADD_TEST(s, persistent_terms_should_match_bytes_per_parameter);
    CU_ADD_TEST(s, total_should_be_the_sum_of_its_parts);
    CU_ADD_TEST(s, kept_and_released_should_balance);
    CU_ADD_TEST(s, memory_should_grow_with_batch_and_seq);
    CU_ADD_TEST(s, fit_search_should_stop_at_the_boundary);
    CU_ADD_TEST(s, splits_should_reach_the_global_batch_fastest_first);
    CU_ADD_TEST(s, every_published_run_should_fit);
    CU_ADD_TEST(s, predict_should_exit_4_when_the_step_does_not_fit);
    CU_ADD_TEST(s, fit_json_should_give_max_batch_and_combinations);
    CU_ADD_TEST(s, compare_should_put_runs_that_do_not_fit_last_unpriced);
    CU_ADD_TEST(s, advise_should_propose_only_changes_that_fit);
    CU_ADD_TEST(s, validate_should_predict_both_memory_metrics);
    CU_ADD_TEST(s, a_kept_tensor_should_not_count_as_transient);
    CU_ADD_TEST(s, checkpointing_should_keep_the_model_flops);
    return 0;
}
