/* test_compact.c — a compact op list (xs_wl_build_compact: each run of
 * identical layers built once) is the step xs_wl_build lists, op for op,
 * and every device predicts it to the same bits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "gate.h"
#include "memory.h"
#include "predict.h"
#include "test_util.h"

/* Every shipped scenario under recipes that change the layers' ops. */
static const char *const SCENARIOS[] = {
    "bert-base-squad",      "bert-base-squad-hf",      "bert-large-squad",
    "bert-base-lora-sst2",  "distilbert-sst2",         "gpt2-medium-finetune",
    "llama2-7b-fp8",        "llama2-7b-lora",          "mistral-7b-qlora",
    "t5-base-summarization", "tinyllama-1.1b-finetune", "vit-base-finetune",
};

static const char *const RECIPES[][3] = {
    {NULL},
    {"train.checkpointing=layer", NULL},
    {"train.grad_accum=3", "train.batch=2", NULL},
    {"train.precision=fp32", NULL},
    {"train.lora.rank=8", NULL},
    {"train.lora.rank=8", "train.checkpointing=layer", NULL},
    {"train.kernels=fused", "train.attention=flash", NULL},
    {"train.precision=amp_bf16", "train.amp_mode=o2", NULL},
};

static int open_scenario(const char *id, const char *const *sets, xs_scenario *s)
{
    int n = 0;
    while (n < 3 && sets[n])
        n++;
    xs_error err;
    return xs_scn_open(id, sets, n, s, &err);
}

static void expect_same_workload(const xs_workload *flat, const xs_workload *ex, const char *what)
{
    CU_ASSERT_EQUAL(ex->n, flat->n);
    size_t bad = flat->n;
    for (size_t i = 0; i < flat->n && i < ex->n && bad == flat->n; i++)
        if (memcmp(&flat->ops[i], &ex->ops[i], sizeof flat->ops[i]) != 0)
            bad = i;
    if (bad < flat->n)
        fprintf(stderr, "\n  %s: op %zu differs (%s layer %d vs %s layer %d)\n", what, bad,
                flat->ops[bad].name, flat->ops[bad].layer, ex->ops[bad].name,
                ex->ops[bad].layer);
    CU_ASSERT_EQUAL(bad, flat->n);
    const double a[] = {flat->params, flat->trainable_params, flat->params_matmul,
                        flat->quant_params, flat->quant_bytes, (double)flat->tensors,
                        (double)flat->fp8_linears, (double)flat->tokens_per_step};
    const double b[] = {ex->params, ex->trainable_params, ex->params_matmul,
                        ex->quant_params, ex->quant_bytes, (double)ex->tensors,
                        (double)ex->fp8_linears, (double)ex->tokens_per_step};
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
}

/* The figures of two predictions, the per-op estimates (whose count is
 * the list's) left out. */
static int same_prediction(const xs_prediction *p, const xs_prediction *q)
{
    xs_prediction a = *p, b = *q;
    a.est = b.est = NULL;
    return memcmp(&a, &b, sizeof a) == 0;
}

static void compact_should_list_the_same_step(void)
{
    int compacted = 0, cases = 0;
    /* one scratch for every build: what one build leaves in it must not
     * change the next (a sweep's thread builds point after point) */
    xs_wl_scratch *scratch = xs_wl_scratch_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(scratch);
    for (size_t i = 0; i < sizeof SCENARIOS / sizeof SCENARIOS[0]; i++)
        for (size_t r = 0; r < sizeof RECIPES / sizeof RECIPES[0]; r++) {
            xs_scenario s;
            if (open_scenario(SCENARIOS[i], RECIPES[r], &s) != XS_OK)
                continue; /* a recipe the scenario refuses (LoRA twice, ...) */
            xs_workload flat, compact, ex;
            xs_error err;
            if (xs_wl_build(&s, &flat, &err) != XS_OK)
                continue; /* refused for this recipe: nothing to compare */
            CU_ASSERT_EQUAL_FATAL(xs_wl_build_compact(&s, &compact, scratch, &err), XS_OK);
            CU_ASSERT_EQUAL_FATAL(xs_wl_expand(&compact, &ex, &err), XS_OK);
            char what[160];
            snprintf(what, sizeof what, "%s %s", SCENARIOS[i],
                     RECIPES[r][0] ? RECIPES[r][0] : "(as shipped)");
            expect_same_workload(&flat, &ex, what);
            cases++;
            compacted += compact.spans != NULL && compact.n < flat.n / 2;
            xs_wl_free(&flat);
            xs_wl_free(&compact);
            xs_wl_free(&ex);
        }
    xs_wl_scratch_free(scratch);
    CU_ASSERT(cases >= 60);
    /* every family compacts: the speed is the point */
    CU_ASSERT(compacted >= cases * 3 / 4);
}

static void compact_should_predict_the_same_bits(void)
{
    const char *const devs[] = {"a100-sxm4-80gb", "t4", "h100-sxm5-80gb", "tpu-v3", "tpu-v5e"};
    for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++) {
        xs_device dev = tu_device(devs[d]);
        for (size_t i = 0; i < sizeof SCENARIOS / sizeof SCENARIOS[0]; i++)
            for (size_t r = 0; r < 3; r++) {
                xs_scenario s;
                xs_workload flat, compact;
                xs_prediction p, q;
                xs_error e1, e2;
                if (open_scenario(SCENARIOS[i], RECIPES[r], &s) != XS_OK ||
                    xs_wl_build(&s, &flat, &e1) != XS_OK)
                    continue;
                CU_ASSERT_EQUAL_FATAL(xs_wl_build_compact(&s, &compact, NULL, &e1), XS_OK);
                int rp = xs_predict(&dev, &s, &flat, &p, &e1);
                int rq = xs_predict(&dev, &s, &compact, &q, &e2);
                CU_ASSERT_EQUAL(rp, rq);
                if (rp == XS_OK && rq == XS_OK) {
                    int same = same_prediction(&p, &q);
                    if (!same)
                        fprintf(stderr, "\n  %s %s on %s: step %.17g vs %.17g, mem %.17g vs %.17g\n",
                                SCENARIOS[i], RECIPES[r][0] ? RECIPES[r][0] : "", devs[d],
                                p.step_time_s, q.step_time_s, p.mem.total, q.mem.total);
                    CU_ASSERT(same);
                    CU_ASSERT_EQUAL_FATAL(xs_predict_band(&dev, &s, &flat, &p, &e1), XS_OK);
                    CU_ASSERT_EQUAL_FATAL(xs_predict_band(&dev, &s, &compact, &q, &e2), XS_OK);
                    CU_ASSERT(same_prediction(&p, &q));
                } else if (rp != XS_OK && rq != XS_OK) {
                    CU_ASSERT_STRING_EQUAL(e1.msg, e2.msg);
                }
                if (rp == XS_OK)
                    xs_prediction_free(&p);
                if (rq == XS_OK)
                    xs_prediction_free(&q);
                xs_wl_free(&flat);
                xs_wl_free(&compact);
            }
    }
}

/* A LoRA target that names one layer's module tells the layers apart: no
 * run is repeated, and the list is xs_wl_build's. */
static void layer_named_target_should_build_flat(void)
{
    const char *const sets[] = {"train.lora.rank=8",
                                "train.lora.targets=layer.3.attention.self.query", NULL};
    xs_scenario s;
    CU_ASSERT_EQUAL_FATAL(open_scenario("bert-base-squad", sets, &s), XS_OK);
    xs_workload flat, compact;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_wl_build(&s, &flat, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(xs_wl_build_compact(&s, &compact, NULL, &err), XS_OK);
    CU_ASSERT_PTR_NULL(compact.spans);
    CU_ASSERT_EQUAL(compact.n, flat.n);
    xs_wl_free(&flat);
    xs_wl_free(&compact);
}

/* A sweep's point from the scenario loaded once: the same scenario as a
 * whole load with every override, for keys that set only their field
 * (stored into the base's scenario) and for keys the completion reads and
 * model keys (the base's document, in memory); a value the loader
 * refuses is left to the whole load, for its message. */
static void variant_should_equal_a_whole_load(void)
{
    const char *const fixed[] = {"train.grad_accum=2"};
    const char *const plain[] = {"train.batch=7",        "data.samples=1234",
                                 "train.kernels=fused",  "train.precision=bf16",
                                 "cluster.devices=4",    "train.checkpointing=layer",
                                 "train.attention=flash"};
    /* keys that other keys derive from, model keys, and values the loader
     * refuses (nadam) or the gate does (a width 16 heads do not divide, a
     * sequence past the positions): from the base's document in memory,
     * or XS_EARG */
    const char *const derived[] = {"train.seq=128",     "model.layers=3",
                                   "train.optimizer=sgd", "train.lora.rank=8",
                                   "model.hidden=1000", "train.seq=100000",
                                   "train.optimizer=nadam"};
    const char *const ids[] = {"bert-large-squad", "gpt2-medium-finetune", "t5-base-summarization"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        xs_scn_base *b = malloc(sizeof *b);
        xs_error err;
        CU_ASSERT_EQUAL_FATAL(xs_scn_base_open(ids[i], fixed, 1, b, &err), XS_OK);
        size_t np = sizeof plain / sizeof plain[0], nd = sizeof derived / sizeof derived[0];
        int derived_same = 0, refused = 0;
        for (size_t k = 0; k < np + nd; k++) {
            const char *kv = k < np ? plain[k] : derived[k - np];
            const char *all[] = {fixed[0], kv};
            xs_scenario whole, fast;
            memset(&whole, 0, sizeof whole);
            memset(&fast, 0, sizeof fast);
            int rw = xs_scn_open(ids[i], all, 2, &whole, &err);
            int rf = xs_scn_variant(b, &kv, 1, &fast, &err);
            if (rw == XS_OK) {
                CU_ASSERT_EQUAL(rf, XS_OK);
                CU_ASSERT_EQUAL(memcmp(&whole, &fast, sizeof whole), 0);
                derived_same += k >= np && rf == XS_OK && !memcmp(&whole, &fast, sizeof whole);
                /* the same scenario: the gate refuses both or neither */
                refused += rf == XS_OK && xs_wl_gate(&fast, &err) != XS_OK;
            } else { /* the whole load's refusal is the caller's to give */
                CU_ASSERT_EQUAL(rf, XS_EARG);
                refused++;
            }
        }
        /* the derived keys went the document's way, and the bad values
         * were refused, by the loader or by the gate (neither list empty
         * by accident) */
        CU_ASSERT(derived_same >= 4);
        CU_ASSERT(refused >= 2);
        xs_scn_base_free(b);
        free(b);
    }
}

/* A hand-made compact list for the memory walk: one forward op, a forward
 * span of two ops run 5 times, a backward span of two run 5 times, the
 * optimizer. Each forward repetition keeps `kept` bytes, each backward one
 * frees `freed`. */
static void walk_list(xs_workload *wl, xs_op *ops, struct xs_wl_span *spans, double kept,
                      double freed)
{
    memset(wl, 0, sizeof *wl);
    const int phase[6] = {XS_PH_FWD, XS_PH_FWD, XS_PH_FWD, XS_PH_BWD, XS_PH_BWD, XS_PH_OPT};
    for (int i = 0; i < 6; i++) {
        xs_op_init(&ops[i], XS_OP_ELTWISE, phase[i], XS_FP32, "op");
        ops[i].name[0] = (char)('a' + i);
        ops[i].mem.temp = 70.0 * (i + 1);
    }
    ops[0].mem.saved = 1000;
    ops[1].mem.saved = kept;
    ops[3].mem.freed = freed;
    ops[4].mem.grads = 7;
    wl->ops = ops;
    wl->n = wl->cap = 6;
    wl->trainable_params = 35;
    spans[0] = (struct xs_wl_span){0, 1, 1, 0};
    spans[1] = (struct xs_wl_span){1, 2, 5, 0};
    spans[2] = (struct xs_wl_span){3, 2, 5, 1};
    spans[3] = (struct xs_wl_span){5, 1, 1, 0};
    wl->spans = spans;
    wl->nspans = 4;
    wl->norder = 22;
}

/* The walk over a compact list takes the repetitions of a span in one
 * step where its sums are exact: the same figures, bit for bit, as the
 * walk op by op over the list expanded, whether the peak is in the last
 * forward repetition (kept grows it), a backward op would go below 0 (the
 * clamp: walked op by op), or a term is no whole number of bytes. */
static void compact_memory_walk_should_match_the_flat_walk(void)
{
    const double cases[][2] = {{300, 300}, {300, 800}, {300.5, 300}, {0, 0}, {1e6, 2e5}};
    xs_device dev = tu_device("a100-sxm4-80gb");
    const char *const recipes[][1] = {{"train.zero_grad=none"}, {"train.zero_grad=zero"},
                                      {"train.grad_accum=2"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t r = 0; r < sizeof recipes / sizeof recipes[0]; r++) {
            xs_scenario s;
            xs_error err;
            CU_ASSERT_EQUAL_FATAL(xs_scn_open("bert-base-squad", recipes[r], 1, &s, &err), XS_OK);
            xs_op ops[6];
            struct xs_wl_span spans[4];
            xs_workload wl, flat;
            walk_list(&wl, ops, spans, cases[c][0], cases[c][1]);
            CU_ASSERT_EQUAL_FATAL(xs_wl_expand(&wl, &flat, &err), XS_OK);
            xs_memory a, b;
            CU_ASSERT_EQUAL_FATAL(xs_memory_predict(&dev, &s, &flat, &a, &err), XS_OK);
            CU_ASSERT_EQUAL_FATAL(xs_memory_predict(&dev, &s, &wl, &b, &err), XS_OK);
            if (memcmp(&a, &b, sizeof a) != 0)
                fprintf(stderr, "\n  case %zu recipe %zu: peak %s %.17g vs %s %.17g\n", c, r,
                        a.peak_op, a.total, b.peak_op, b.total);
            CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
            if (c == 0) /* the peak is the last forward repetition's first op */
                CU_ASSERT_STRING_EQUAL(b.peak_op, "bp");
            xs_wl_free(&flat);
        }
}

int tu_add_compact_suite(void)
{
    CU_pSuite s = CU_add_suite("compact", NULL, NULL);
    if (!s)
        return -1;
    CU_ADD_TEST(s, compact_should_list_the_same_step);
    CU_ADD_TEST(s, compact_should_predict_the_same_bits);
    CU_ADD_TEST(s, layer_named_target_should_build_flat);
    CU_ADD_TEST(s, variant_should_equal_a_whole_load);
    CU_ADD_TEST(s, compact_memory_walk_should_match_the_flat_walk);
    return 0;
}
