/* test_scenario.c — scenario files, Hugging Face import, --set overrides
 * and every error path of the loader. */
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
    CU_ASSERT_EQUAL(load("bert-large-squad", heads, 1, &s, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.hidden (1024) must be divisible by "
                                           "model.heads (7)"));
    const char *seq[] = {"train.seq=1024"};
    CU_ASSERT_EQUAL(load("bert-large-squad", seq, 1, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "must not exceed model.max_positions (512)"));
    const char *huge[] = {"train.batch=1048576", "model.max_positions=1048576",
                          "train.seq=1048576"};
    CU_ASSERT_EQUAL(load("bert-large-squad", huge, 3, &s, &err), XS_ERANGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "train.batch x train.seq x model.hidden x 3 = "
                                           "3.38e+15 elements in the q, k and v tensors, over "
                                           "the limit of 2^50"));
    /* every factor in range, the step's 2^63 tokens past int64 (fuzz_scenario) */
    const char *step[] = {"train.batch=1048576", "model.max_positions=2048", "train.seq=2048",
                          "train.grad_accum=65536", "cluster.devices=65536"};
    CU_ASSERT_EQUAL(load("bert-large-squad", step, 5, &s, &err), XS_ERANGE);
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
    tu_write("llama.json", "{\"model_type\":\"llama\"}");
    p = scenario_with_model("hf2.json", "{\"hf_config\":\"llama.json\",\"head\":\"lm\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'model_type' must be one of bert|roberta|gpt2"));
    p = scenario_with_model("hf3.json", "{\"hf_config\":\"absent.json\",\"head\":\"lm\"}");
    CU_ASSERT_EQUAL(xs_scn_load(p, NULL, 0, &s, &err), XS_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "absent.json: cannot open"));
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
           !CU_add_test(s, "overrides_should_change_values_and_be_validated",
                        overrides_should_change_values_and_be_validated) ||
           !CU_add_test(s, "relations_and_overflow_should_be_rejected",
                        relations_and_overflow_should_be_rejected) ||
           !CU_add_test(s, "hf_import_should_report_the_config_file_and_key",
                        hf_import_should_report_the_config_file_and_key) ||
           !CU_add_test(s, "scenario_loader_should_reject_bad_documents",
                        scenario_loader_should_reject_bad_documents);
}
