/* test_scenario.c — scenario files, Hugging Face import, --set overrides
 * and every error path of the loader. */
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "paths.h"
#include "scenario.h"
#include "suggest.h"
#include "test_util.h"

static int load(const char *id, const char *const *sets, int n, xs_scenario *s, xs_error *err)
{
    char path[512];
    int rc = xs_resolve("scenarios", id, path, sizeof path, err);
    return rc ? rc : xs_scn_load(path, sets, n, s, err);
}

static void shipped_scenarios_should_load_with_their_hf_configs(void)
{
    xs_scenario s;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(load("bert-large-squad", NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.arch, XS_ENCODER);
    CU_ASSERT_EQUAL(s.model.layers, 24);
    CU_ASSERT_EQUAL(s.model.hidden, 1024);
    CU_ASSERT_EQUAL(s.model.heads, 16);
    CU_ASSERT_EQUAL(s.model.ffn, 4096);
    CU_ASSERT_EQUAL(s.model.vocab, 30522);
    CU_ASSERT_EQUAL(s.model.type_vocab, 2);
    CU_ASSERT_EQUAL(s.samples, 88641);
    CU_ASSERT_EQUAL(s.epochs, 2);
    CU_ASSERT_EQUAL(s.train.seq, 384);
    CU_ASSERT_EQUAL_FATAL(load("bert-base-squad", NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.hidden, 768);
    CU_ASSERT_EQUAL_FATAL(load("gpt2-medium-finetune", NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.arch, XS_DECODER);
    CU_ASSERT_EQUAL(s.model.ffn, 4096); /* n_inner null: 4 x n_embd */
    CU_ASSERT_EQUAL(s.model.activation, XS_ACT_GELU_NEW);
    CU_ASSERT_EQUAL(s.model.max_positions, 1024);
    CU_ASSERT_EQUAL(s.model.type_vocab, 0);
}

static void overrides_should_change_values_and_be_validated(void)
{
    xs_scenario s;
    xs_error err;
    const char *ok[] = {"train.batch=112", "train.precision=tf32", "train.fused_optimizer=false",
                        "model.layers=2", "data.epochs=3"};
    CU_ASSERT_EQUAL_FATAL(load("bert-large-squad", ok, 5, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(s.train.batch, 112);
    CU_ASSERT_EQUAL(s.train.precision, XS_P_TF32);
    CU_ASSERT_EQUAL(s.train.fused_optimizer, 0);
    CU_ASSERT_EQUAL(s.model.layers, 2); /* beside hf_config, the override wins */
    CU_ASSERT_EQUAL(s.model.hidden, 1024);
    CU_ASSERT_EQUAL(s.epochs, 3);

    const char *zero[] = {"train.batch=0"};
    CU_ASSERT_EQUAL(load("bert-large-squad", zero, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_STRING_EQUAL(err.msg, "--set train.batch=0: field 'train.batch' must be an "
                                    "integer in [1, 1048576], got 0");
    const char *unknown[] = {"train.bach=8"};
    CU_ASSERT_EQUAL(load("bert-large-squad", unknown, 1, &s, &err), XS_EARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown key 'train.bach'"));
    const char *noeq[] = {"train.batch"};
    CU_ASSERT_EQUAL(load("bert-large-squad", noeq, 1, &s, &err), XS_EARG);
    const char *badenum[] = {"train.precision=fp64"};
    CU_ASSERT_EQUAL(load("bert-large-squad", badenum, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "one of fp32|tf32|amp_fp16|amp_bf16|bf16"));
    const char *badbool[] = {"train.fused_optimizer=yes"};
    CU_ASSERT_EQUAL(load("bert-large-squad", badbool, 1, &s, &err), XS_EFIELD);
    const char *noloop[] = {"train.generic_loop_efficiency=0"};
    CU_ASSERT_EQUAL(load("bert-large-squad", noloop, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.generic_loop_efficiency"));
    const char *faster[] = {"train.generic_loop_efficiency=1.2"};
    CU_ASSERT_EQUAL(load("bert-large-squad", faster, 1, &s, &err), XS_EFIELD);
    const char *noelems[] = {"train.loop_elems=0"};
    CU_ASSERT_EQUAL(load("bert-large-squad", noelems, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.loop_elems"));
    const char *halfelem[] = {"train.loop_elems=2.5"};
    CU_ASSERT_EQUAL(load("bert-large-squad", halfelem, 1, &s, &err), XS_EFIELD);
    const char *slowload[] = {"data.loader_us=-1"};
    CU_ASSERT_EQUAL(load("bert-large-squad", slowload, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "data.loader_us"));
    const char *bias[] = {"train.ffn_bias=epilogue"};
    CU_ASSERT_EQUAL(load("bert-large-squad", bias, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "one of gemm|separate"));
    const char *zg[] = {"train.zero_grad=false"};
    CU_ASSERT_EQUAL(load("bert-large-squad", zg, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.zero_grad"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "one of none|zero"));
    const char *id[] = {"id=other"};
    CU_ASSERT_EQUAL(load("bert-large-squad", id, 1, &s, &err), XS_EARG);
}

static void relations_and_overflow_should_be_rejected(void)
{
    xs_scenario s;
    xs_error err;
    const char *heads[] = {"model.heads=7"};
    CU_ASSERT_EQUAL(tu_scn_open_gated("bert-large-squad", heads, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.hidden (1024) must be divisible by "
                                           "model.heads (7)"));
    const char *seq[] = {"train.seq=1024"};
    CU_ASSERT_EQUAL(tu_scn_open_gated("bert-large-squad", seq, 1, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "must not exceed model.max_positions (512)"));
    const char *huge[] = {"train.batch=1048576", "model.max_positions=1048576",
                          "train.seq=1048576"};
    CU_ASSERT_EQUAL(tu_scn_open_gated("bert-large-squad", huge, 3, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.batch x train.seq x model.hidden x 3 = "
                                           "3.38e+15 elements in the q, k and v tensors, over "
                                           "the limit of 2^50"));
    /* every factor in range, the step's 2^63 tokens past int64 (fuzz_scenario) */
    const char *step[] = {"train.batch=1048576", "model.max_positions=2048", "train.seq=2048",
                          "train.grad_accum=65536", "cluster.devices=65536"};
    CU_ASSERT_EQUAL(tu_scn_open_gated("bert-large-squad", step, 5, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.batch x train.seq x train.grad_accum x "
                                           "cluster.devices = 9.22e+18 tokens a step"));
}

static const char *scenario_with_model(const char *name, const char *model)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"id\":\"%.*s\",\"model\":%s,\"train\":{\"batch\":8,\"seq\":128,"
             "\"precision\":\"amp_bf16\",\"optimizer\":\"adam\",\"fused_optimizer\":true,"
             "\"kernels\":\"eager\",\"attention\":\"flash\",\"grad_accum\":1,"
             "\"amp_mode\":\"autocast\",\"grad_clip\":false},"
             "\"data\":{\"samples\":1000,\"epochs\":1},\"cluster\":{\"devices\":1}}",
             (int)(strlen(name) - 5), name, model);
    return tu_write(name, text);
}

static void hf_import_should_report_the_config_file_and_key(void)
{
    xs_scenario s;
    xs_error err;
    tu_write("nohidden.json", "{\"model_type\":\"bert\",\"num_hidden_layers\":2,"
                              "\"num_attention_heads\":2,\"intermediate_size\":64,"
                              "\"vocab_size\":100,\"max_position_embeddings\":128}");
    const char *p = scenario_with_model("hf1.json", "{\"hf_config\":\"nohidden.json\","
                                                    "\"head\":\"span\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nohidden.json: missing required field "
                                           "'hidden_size'"));
    tu_write("falcon.json", "{\"model_type\":\"falcon\"}");
    p = scenario_with_model("hf2.json", "{\"hf_config\":\"falcon.json\",\"head\":\"lm\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'model_type' must be one of bert|roberta|gpt2"));
    p = scenario_with_model("hf3.json", "{\"hf_config\":\"absent.json\",\"head\":\"lm\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "absent.json: cannot open"));
}

/* a BERT config.json with extra (or repeated) members after the sizes */
static void write_bert_config(const char *name, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"model_type\":\"bert\",\"num_hidden_layers\":2,\"hidden_size\":64,"
             "\"num_attention_heads\":2,\"intermediate_size\":256,\"vocab_size\":100,"
             "\"max_position_embeddings\":128%s}",
             extra);
    tu_write(name, text);
}

static void hf_configs_should_be_read_as_transformers_reads_them(void)
{
    xs_scenario s;
    xs_error err;
    /* Python's json keeps a repeated key's last value, at any depth */
    write_bert_config("twice.json", ",\"hidden_size\":128,\"num_hidden_layers\":3");
    const char *p = scenario_with_model("hft1.json", "{\"hf_config\":\"twice.json\","
                                                     "\"head\":\"span\"}");
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(p, NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.hidden, 128);
    CU_ASSERT_EQUAL(s.model.layers, 3);
    /* a bad value is named by the config's file and its own key */
    write_bert_config("neg.json", ",\"hidden_size\":-1");
    p = scenario_with_model("hft2.json", "{\"hf_config\":\"neg.json\",\"head\":\"span\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "neg.json: field 'hidden_size' must be an integer in "
                                           "[1, 131072], got -1"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "model.hidden"));
    CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
    write_bert_config("drop.json", ",\"hidden_dropout_prob\":1.5");
    p = scenario_with_model("hft3.json", "{\"hf_config\":\"drop.json\",\"head\":\"span\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "drop.json: field 'hidden_dropout_prob' must be"));
    write_bert_config("act.json", ",\"hidden_act\":\"swish\"");
    p = scenario_with_model("hft4.json", "{\"hf_config\":\"act.json\",\"head\":\"span\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "act.json: field 'hidden_act' must be one of"));
    /* null is no default where transformers would build nn.Dropout(None) */
    write_bert_config("nulldrop.json", ",\"hidden_dropout_prob\":null");
    p = scenario_with_model("hft5.json", "{\"hf_config\":\"nulldrop.json\","
                                         "\"head\":\"span\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nulldrop.json: field 'hidden_dropout_prob' must be "
                                           "a value, got null"));
    /* ... but is where the config class turns None into one (n_inner) */
    tu_write("gpt2null.json", "{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,"
                              "\"n_head\":4,\"vocab_size\":100,\"n_positions\":256,"
                              "\"n_inner\":null}");
    p = scenario_with_model("hft6.json", "{\"hf_config\":\"gpt2null.json\","
                                         "\"head\":\"lm\"}");
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(p, NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(s.model.ffn, 256);
    /* a key beside hf_config still wins over a bad one in the file */
    p = scenario_with_model("hft7.json", "{\"hf_config\":\"neg.json\",\"hidden\":64,"
                                         "\"head\":\"span\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_OK);
}

static void scenario_loader_should_reject_bad_documents(void)
{
    xs_scenario s;
    xs_error err;
    const char *p = scenario_with_model("inl.json", "{\"arch\":\"encoder\",\"layers\":2}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing required field 'model.hidden'"));
    p = scenario_with_model("wrongid.json", "{\"hf_config\":\"x.json\"}");
    /* rename so the id no longer matches the file name */
    char other[600];
    snprintf(other, sizeof other, "%s/renamed.json", tu_tmpdir());
    CU_ASSERT_EQUAL(rename(p, other), 0);
    tu_write("x.json", "{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,\"n_head\":4,"
                       "\"vocab_size\":100,\"n_positions\":256}");
    CU_ASSERT_EQUAL(xs_scn_load(other, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "field 'model.head'"));
    p = tu_write("bad.json", "{\"id\": \"bad\", \"train\": {\"batch\": 8,,}}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EJSON);
    p = tu_write("arr.json", "[]");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
}

/* A scenario of an inline model with the given head and positions and
 * data.samples: nothing else, so every train/data/cluster key defaults. */
static const char *minimal(const char *name, const char *head, int max_positions,
                           const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"id\":\"%.*s\",\"model\":{\"arch\":\"encoder\",\"layers\":2,"
             "\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":1000,\"max_positions\":%d,"
             "\"type_vocab\":2,\"activation\":\"gelu\",\"dropout\":0.1,"
             "\"attn_dropout\":0.1,\"head\":\"%s\"},\"data\":{\"samples\":1000}%s}",
             (int)(strlen(name) - 5), name, max_positions, head, extra);
    return tu_write(name, text);
}

static void minimal_scenario_should_take_the_trainer_defaults(void)
{
    xs_scenario s;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min1.json", "lm", 2048, ""), NULL, 0, &s, &err),
                          XS_OK);
    const xs_train *t = &s.train;
    CU_ASSERT_EQUAL(t->batch, 8);
    CU_ASSERT_EQUAL(t->seq, 1024); /* run_clm.py: min(1024, positions) */
    CU_ASSERT_EQUAL(t->grad_accum, 1);
    CU_ASSERT_EQUAL(t->precision, XS_P_FP32);
    CU_ASSERT_EQUAL(t->optimizer, XS_OPT_ADAMW);
    CU_ASSERT_EQUAL(t->fused_optimizer, 0);
    CU_ASSERT_EQUAL(t->optimizer_impl, XS_OPT_IMPL_FOREACH);
    CU_ASSERT_EQUAL(xs_train_optimizer_impl(t), XS_OPT_IMPL_FOREACH);
    CU_ASSERT_EQUAL(t->kernels, XS_K_EAGER);
    CU_ASSERT_EQUAL(t->attention, XS_ATT_FLASH);
    CU_ASSERT_EQUAL(t->amp_mode, XS_AMP_AUTOCAST);
    CU_ASSERT_EQUAL(t->grad_clip, 1);
    CU_ASSERT_EQUAL(t->grad_clip_impl, XS_CLIP_TORCH);
    CU_ASSERT_EQUAL(t->fp32_optimizer, 0);
    CU_ASSERT_EQUAL(t->loss_sync, 1);
    CU_ASSERT_DOUBLE_EQUAL(t->host_op_us, 0, 0); /* absent: the host model */
    CU_ASSERT_DOUBLE_EQUAL(t->generic_loop_efficiency, 0.78, 0);
    CU_ASSERT_EQUAL(t->loop_elems, 4);
    CU_ASSERT_EQUAL(t->ffn_bias, XS_FFN_BIAS_GEMM);
    CU_ASSERT_EQUAL(t->zero_grad, XS_ZERO_GRAD_NONE);
    CU_ASSERT_EQUAL(s.samples, 1000);
    CU_ASSERT_EQUAL(s.epochs, 3);
    CU_ASSERT_DOUBLE_EQUAL(s.loader_us, 0, 0);
    CU_ASSERT_EQUAL(s.devices, 1);

    /* train.seq by head, within the positions: run_qa.py 384, run_glue.py 128 */
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min2.json", "span", 512, ""), NULL, 0, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(s.train.seq, 384);
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min3.json", "cls", 512, ""), NULL, 0, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(s.train.seq, 128);
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min4.json", "lm", 256, ""), NULL, 0, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(s.train.seq, 256);
    /* --set counts before the defaults: a head set there picks the length,
     * a length set there wins */
    const char *cls[] = {"model.head=cls"};
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min5.json", "lm", 2048, ""), cls, 1, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(s.train.seq, 128);
    const char *seq[] = {"train.seq=64", "train.batch=3"};
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min6.json", "lm", 2048, ""), seq, 2, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(s.train.seq, 64);
    CU_ASSERT_EQUAL(s.train.batch, 3);
    /* foreach only for the default AdamW: a file that states fused_optimizer
     * keeps auto, as it did before defaults; other optimizers too */
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min7.json", "lm", 2048,
                                              ",\"train\":{\"fused_optimizer\":false}"),
                                      NULL, 0, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(s.train.optimizer_impl, XS_OPT_IMPL_AUTO);
    CU_ASSERT_EQUAL(xs_train_optimizer_impl(&s.train), XS_OPT_IMPL_FOR_LOOP);
    const char *sgd[] = {"train.optimizer=sgd"};
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min8.json", "lm", 2048, ""), sgd, 1, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(s.train.optimizer_impl, XS_OPT_IMPL_AUTO);
    const char *fused[] = {"train.fused_optimizer=true"};
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("min9.json", "lm", 2048, ""), fused, 1, &s, &err),
                          XS_OK);
    CU_ASSERT_EQUAL(xs_train_optimizer_impl(&s.train), XS_OPT_IMPL_MULTI_TENSOR);
    /* the shipped scenarios write every key: a default never reaches them */
    CU_ASSERT_EQUAL_FATAL(load("bert-base-squad-hf", NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_train_optimizer_impl(&s.train), XS_OPT_IMPL_FOR_LOOP);
    CU_ASSERT_EQUAL(s.train.precision, XS_P_FP32);
    CU_ASSERT_EQUAL(s.epochs, 2);
}

static int lines_of(const char *s)
{
    int n = *s != '\0';
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void every_problem_of_a_scenario_should_be_reported_at_once(void)
{
    xs_scenario s;
    xs_error err;
    /* three problems: an unknown key, a bad value, a missing data.samples */
    const char *p = tu_write("three.json",
                             "{\"id\":\"three\",\"model\":{\"arch\":\"encoder\",\"layers\":2,"
                             "\"hidden\":64,\"heads\":4,\"ffn\":256,\"vocab\":1000,"
                             "\"max_positions\":128,\"type_vocab\":2,\"activation\":\"gelu\","
                             "\"dropout\":0.1,\"attn_dropout\":0.1,\"head\":\"cls\"},"
                             "\"train\":{\"batch\":0,\"learning_rate\":5e-5},\"data\":{}}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    char want[512];
    snprintf(want, sizeof want,
             "%s: unknown field 'train.learning_rate' (known here: batch, seq, target_seq, "
             "precision, "
             "optimizer, fused_optimizer, kernels, attention, grad_accum, amp_mode, grad_clip, "
             "fp32_optimizer, loss_sync, host_op_us, generic_loop_efficiency, loop_elems, "
             "ffn_bias, optimizer_impl, grad_clip_impl, zero_grad, timed, lora, quant, "
             "checkpointing, "
             "notes)",
             p);
    CU_ASSERT_STRING_EQUAL(err.msg, want);
    CU_ASSERT_EQUAL(lines_of(err.more), 2);
    snprintf(want, sizeof want, "%s: field 'train.batch' must be an integer in [1, 1048576], "
                                "got 0",
             p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.more, want));
    snprintf(want, sizeof want, "%s: missing required field 'data.samples'", p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.more, want));
    /* a file with one problem says it alone, as before */
    p = minimal("one.json", "cls", 128, ",\"cluster\":{\"devices\":0}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "field 'cluster.devices' must be an integer"));
    CU_ASSERT_STRING_EQUAL(err.more, "");
}

static void template_should_load_with_every_default_written_out(void)
{
    cJSON *doc = NULL;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_scn_template("tmpl", &doc, &err), XS_OK);
    /* every train, data and cluster key with a value is in the file */
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    for (size_t i = 0; i < n; i++) {
        int section = strncmp(f[i].path, "train.", 6) == 0 ||
                      strncmp(f[i].path, "data.", 5) == 0 ||
                      strncmp(f[i].path, "cluster.", 8) == 0;
        /* optional keys with no default: a flat host cost, LoRA's targets
         * (PEFT's per-model default) and train_head (by head, under LoRA),
         * t5's target length (by model.family) */
        int no_default = strcmp(f[i].path, "train.host_op_us") == 0 ||
                         strcmp(f[i].path, "train.target_seq") == 0 ||
                         strcmp(f[i].path, "train.lora.targets") == 0 ||
                         strcmp(f[i].path, "train.lora.train_head") == 0;
        if (section && f[i].type != XS_F_OBJ && !no_default &&
            !xs_json_path(doc, f[i].path)) {
            fprintf(stderr, "\ntemplate lacks %s\n", f[i].path);
            CU_FAIL("a key is missing from the template");
        }
    }
    CU_ASSERT_PTR_NOT_NULL(xs_json_path(doc, "train.notes.host_op_us"));
    const char *p = tu_write_json("tmpl.json", doc);
    cJSON_Delete(doc);
    xs_scenario s, m;
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(p, NULL, 0, &s, &err), XS_OK);
    CU_ASSERT_STRING_EQUAL(s.id, "tmpl");
    CU_ASSERT_EQUAL(s.samples, 67349);
    CU_ASSERT_EQUAL(s.model.hidden, 768);
    /* what it writes out is what a minimal scenario of that model takes */
    CU_ASSERT_EQUAL_FATAL(xs_scn_load(minimal("tmin.json", "cls", 512, ""), NULL, 0, &m, &err),
                          XS_OK);
    const xs_train *a = &s.train, *b = &m.train;
    CU_ASSERT(a->batch == b->batch && a->seq == b->seq && a->grad_accum == b->grad_accum &&
              a->precision == b->precision && a->optimizer == b->optimizer &&
              a->fused_optimizer == b->fused_optimizer && a->kernels == b->kernels &&
              a->attention == b->attention && a->amp_mode == b->amp_mode &&
              a->grad_clip == b->grad_clip && a->fp32_optimizer == b->fp32_optimizer &&
              a->loss_sync == b->loss_sync && a->host_op_us == b->host_op_us &&
              a->generic_loop_efficiency == b->generic_loop_efficiency &&
              a->ffn_bias == b->ffn_bias && a->loop_elems == b->loop_elems &&
              a->zero_grad == b->zero_grad && a->grad_clip_impl == b->grad_clip_impl &&
              a->optimizer_impl == b->optimizer_impl);
    CU_ASSERT_EQUAL(s.epochs, m.epochs);
    CU_ASSERT_EQUAL(s.devices, m.devices);
    CU_ASSERT_EQUAL(xs_scn_template("bad/name", &doc, &err), XS_EARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'bad/name' is not a scenario id"));
    CU_ASSERT_EQUAL(xs_scn_check_id(".hidden", &err), XS_EARG);
    CU_ASSERT_EQUAL(xs_scn_check_id("", &err), XS_EARG);
    CU_ASSERT_EQUAL(xs_scn_check_id("my-run_2.v1", &err), XS_OK);
    char long_id[80];
    memset(long_id, 'a', 64);
    long_id[64] = '\0';
    CU_ASSERT_EQUAL(xs_scn_check_id(long_id, &err), XS_EARG);
}

/* "did you mean": edit distance without case, a leaf name finds its key,
 * nothing far away is offered. */
static void suggestions_should_find_the_near_name_only(void)
{
    CU_ASSERT_EQUAL(xs_edit_distance("kitten", "sitting"), 3);
    CU_ASSERT_EQUAL(xs_edit_distance("A10", "a10"), 0);
    CU_ASSERT_EQUAL(xs_edit_distance("", "abc"), 3);
    const char *keys[] = {"train.batch", "train.seq", "data.epochs", "model.hidden"};
    CU_ASSERT_STRING_EQUAL(xs_suggest("train.bacth", keys, 4), "train.batch");
    CU_ASSERT_STRING_EQUAL(xs_suggest("epochs", keys, 4), "data.epochs");
    CU_ASSERT_STRING_EQUAL(xs_suggest("TRAIN.SEQ", keys, 4), "train.seq");
    CU_ASSERT_PTR_NULL(xs_suggest("learning_rate", keys, 4));
    CU_ASSERT_PTR_NULL(xs_suggest("x", keys, 0));
}

int tu_add_scenario_suite(void)
{
    CU_pSuite s = CU_add_suite("scenario", NULL, NULL);
    return !s ||
           !CU_add_test(s, "suggestions_should_find_the_near_name_only",
                        suggestions_should_find_the_near_name_only) ||
           !CU_add_test(s, "shipped_scenarios_should_load_with_their_hf_configs",
                        shipped_scenarios_should_load_with_their_hf_configs) ||
           !CU_add_test(s, "hf_configs_should_be_read_as_transformers_reads_them",
                        hf_configs_should_be_read_as_transformers_reads_them) ||
           !CU_add_test(s, "overrides_should_change_values_and_be_validated",
                        overrides_should_change_values_and_be_validated) ||
           !CU_add_test(s, "relations_and_overflow_should_be_rejected",
                        relations_and_overflow_should_be_rejected) ||
           !CU_add_test(s, "hf_import_should_report_the_config_file_and_key",
                        hf_import_should_report_the_config_file_and_key) ||
           !CU_add_test(s, "scenario_loader_should_reject_bad_documents",
                        scenario_loader_should_reject_bad_documents) ||
           !CU_add_test(s, "minimal_scenario_should_take_the_trainer_defaults",
                        minimal_scenario_should_take_the_trainer_defaults) ||
           !CU_add_test(s, "every_problem_of_a_scenario_should_be_reported_at_once",
                        every_problem_of_a_scenario_should_be_reported_at_once) ||
           !CU_add_test(s, "template_should_load_with_every_default_written_out",
                        template_should_load_with_every_default_written_out);
}
