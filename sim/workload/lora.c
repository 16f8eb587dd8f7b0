/* lora.c — see lora.h.
 *
 * PEFT (huggingface/peft, src/peft/tuners/tuners_utils.py; read in the team
 * code index, find_string id 2440942144): a module is targeted when its
 * name is a target or ends with "." + a target
 * (check_target_module_exists), so
 * "dense" in BERT matches the attention output (attention.output.dense),
 * the FFN up (intermediate.dense) and down (output.dense) projections and
 * the pooler (pooler.dense) alike, "output.dense" both outputs, and
 * "c_proj" in GPT-2 both attn.c_proj and mlp.c_proj. "all-linear" takes
 * every nn.Linear / Conv1D but the output embedding (the LM head) or, for
 * sequence classification, the classifier (_maybe_include_all_linear_layers).
 * No targets: PEFT's default for the model type
 * (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING,
 * huggingface/peft@00073fe85ca790515f0b70caa69bea4c477d9db7
 * src/peft/utils/constants.py): bert ["query", "value"], gpt2 ["c_attn"],
 * llama ["q_proj", "v_proj"], vit ["query", "value"] (the same table; team
 * code index, find_string "\"vit\": [\"query\", \"value\"]"), t5 ["q", "v"];
 * distilbert has none there, and PEFT then refuses a config without
 * target_modules, so xpusim asks for them. ViT's patch embedding is an
 * nn.Conv2d, which all-linear leaves out and which no target here names
 * (LoRA on convolutions is not modelled). */
#include "lora.h"


#include <math.h>
#include <stdio.h>
#include <string.h>

/* Module paths as transformers names them: BertForSequenceClassification /
 * BertForQuestionAnswering / BertForMaskedLM (modeling_bert.py), GPT2 task
 * models (modeling_gpt2.py: Conv1D c_attn, c_proj, c_fc, c_proj), Llama
 * (modeling_llama.py). %d: the layer. */
static const struct {
    int family;
    const char *linear, *path;
} MODULES[] = {
    {XS_LORA_BERT, "attn.q", "bert.encoder.layer.%d.attention.self.query"},
    {XS_LORA_BERT, "attn.k", "bert.encoder.layer.%d.attention.self.key"},
    {XS_LORA_BERT, "attn.v", "bert.encoder.layer.%d.attention.self.value"},
    {XS_LORA_BERT, "attn.out", "bert.encoder.layer.%d.attention.output.dense"},
    {XS_LORA_BERT, "ffn.up", "bert.encoder.layer.%d.intermediate.dense"},
    {XS_LORA_BERT, "ffn.down", "bert.encoder.layer.%d.output.dense"},
    {XS_LORA_BERT, "head.pooler", "bert.pooler.dense"},
    {XS_LORA_BERT, "head.classifier", "classifier"},
    {XS_LORA_BERT, "head.qa", "qa_outputs"},
    {XS_LORA_BERT, "head.transform", "cls.predictions.transform.dense"},
    {XS_LORA_BERT, "head.lm", "cls.predictions.decoder"},
    {XS_LORA_GPT2, "attn.qkv", "transformer.h.%d.attn.c_attn"},
    {XS_LORA_GPT2, "attn.out", "transformer.h.%d.attn.c_proj"},
    {XS_LORA_GPT2, "ffn.up", "transformer.h.%d.mlp.c_fc"},
    {XS_LORA_GPT2, "ffn.down", "transformer.h.%d.mlp.c_proj"},
    {XS_LORA_GPT2, "head.score", "score"},
    {XS_LORA_GPT2, "head.lm", "lm_head"},
    {XS_LORA_LLAMA, "attn.q", "model.layers.%d.self_attn.q_proj"},
    {XS_LORA_LLAMA, "attn.k", "model.layers.%d.self_attn.k_proj"},
    {XS_LORA_LLAMA, "attn.v", "model.layers.%d.self_attn.v_proj"},
    {XS_LORA_LLAMA, "attn.out", "model.layers.%d.self_attn.o_proj"},
    {XS_LORA_LLAMA, "ffn.gate", "model.layers.%d.mlp.gate_proj"},
    {XS_LORA_LLAMA, "ffn.up", "model.layers.%d.mlp.up_proj"},
    {XS_LORA_LLAMA, "ffn.down", "model.layers.%d.mlp.down_proj"},
    {XS_LORA_LLAMA, "head.score", "score"},
    {XS_LORA_LLAMA, "head.lm", "lm_head"},
    /* DistilBertForSequenceClassification / DistilBertForQuestionAnswering
     * (modeling_distilbert.py: MultiHeadSelfAttention q_lin, k_lin, v_lin,
     * out_lin; FFN lin1, lin2; the heads' pre_classifier, classifier,
     * qa_outputs) */
    {XS_LORA_DISTILBERT, "attn.q", "distilbert.transformer.layer.%d.attention.q_lin"},
    {XS_LORA_DISTILBERT, "attn.k", "distilbert.transformer.layer.%d.attention.k_lin"},
    {XS_LORA_DISTILBERT, "attn.v", "distilbert.transformer.layer.%d.attention.v_lin"},
    {XS_LORA_DISTILBERT, "attn.out", "distilbert.transformer.layer.%d.attention.out_lin"},
    {XS_LORA_DISTILBERT, "ffn.up", "distilbert.transformer.layer.%d.ffn.lin1"},
    {XS_LORA_DISTILBERT, "ffn.down", "distilbert.transformer.layer.%d.ffn.lin2"},
    {XS_LORA_DISTILBERT, "head.pre_classifier", "pre_classifier"},
    {XS_LORA_DISTILBERT, "head.classifier", "classifier"},
    {XS_LORA_DISTILBERT, "head.qa", "qa_outputs"},
    /* ViTForImageClassification (modeling_vit.py: ViTSelfAttention's query,
     * key, value under ViTAttention.attention, ViTSelfOutput.dense,
     * ViTIntermediate.dense, ViTOutput.dense; the classifier) */
    {XS_LORA_VIT, "attn.q", "vit.encoder.layer.%d.attention.attention.query"},
    {XS_LORA_VIT, "attn.k", "vit.encoder.layer.%d.attention.attention.key"},
    {XS_LORA_VIT, "attn.v", "vit.encoder.layer.%d.attention.attention.value"},
    {XS_LORA_VIT, "attn.out", "vit.encoder.layer.%d.attention.output.dense"},
    {XS_LORA_VIT, "ffn.up", "vit.encoder.layer.%d.intermediate.dense"},
    {XS_LORA_VIT, "ffn.down", "vit.encoder.layer.%d.output.dense"},
    {XS_LORA_VIT, "head.classifier", "classifier"},
    /* T5ForConditionalGeneration (modeling_t5.py): block.N.layer is
     * [SelfAttention, (EncDecAttention,) FF]; the builder names each linear
     * with its stack */
    {XS_LORA_T5, "enc.attn.q", "encoder.block.%d.layer.0.SelfAttention.q"},
    {XS_LORA_T5, "enc.attn.k", "encoder.block.%d.layer.0.SelfAttention.k"},
    {XS_LORA_T5, "enc.attn.v", "encoder.block.%d.layer.0.SelfAttention.v"},
    {XS_LORA_T5, "enc.attn.o", "encoder.block.%d.layer.0.SelfAttention.o"},
    {XS_LORA_T5, "enc.ffn.wi", "encoder.block.%d.layer.1.DenseReluDense.wi"},
    {XS_LORA_T5, "enc.ffn.wi_0", "encoder.block.%d.layer.1.DenseReluDense.wi_0"},
    {XS_LORA_T5, "enc.ffn.wi_1", "encoder.block.%d.layer.1.DenseReluDense.wi_1"},
    {XS_LORA_T5, "enc.ffn.wo", "encoder.block.%d.layer.1.DenseReluDense.wo"},
    {XS_LORA_T5, "dec.attn.q", "decoder.block.%d.layer.0.SelfAttention.q"},
    {XS_LORA_T5, "dec.attn.k", "decoder.block.%d.layer.0.SelfAttention.k"},
    {XS_LORA_T5, "dec.attn.v", "decoder.block.%d.layer.0.SelfAttention.v"},
    {XS_LORA_T5, "dec.attn.o", "decoder.block.%d.layer.0.SelfAttention.o"},
    {XS_LORA_T5, "dec.xattn.q", "decoder.block.%d.layer.1.EncDecAttention.q"},
    {XS_LORA_T5, "dec.xattn.k", "decoder.block.%d.layer.1.EncDecAttention.k"},
    {XS_LORA_T5, "dec.xattn.v", "decoder.block.%d.layer.1.EncDecAttention.v"},
    {XS_LORA_T5, "dec.xattn.o", "decoder.block.%d.layer.1.EncDecAttention.o"},
    {XS_LORA_T5, "dec.ffn.wi", "decoder.block.%d.layer.2.DenseReluDense.wi"},
    {XS_LORA_T5, "dec.ffn.wi_0", "decoder.block.%d.layer.2.DenseReluDense.wi_0"},
    {XS_LORA_T5, "dec.ffn.wi_1", "decoder.block.%d.layer.2.DenseReluDense.wi_1"},
    {XS_LORA_T5, "dec.ffn.wo", "decoder.block.%d.layer.2.DenseReluDense.wo"},
    {XS_LORA_T5, "head.lm", "lm_head"},
};
#define N_MODULES (sizeof MODULES / sizeof MODULES[0])

static const char *const DEFAULT_TARGETS[XS_LORA_FAMILY_COUNT] = {
    [XS_LORA_BERT] = "query,value",
    [XS_LORA_GPT2] = "c_attn",
    [XS_LORA_LLAMA] = "q_proj,v_proj",
    [XS_LORA_DISTILBERT] = NULL,
    [XS_LORA_VIT] = "query,value",
    [XS_LORA_T5] = "q,v",
};

static const char *const FAMILY_NAMES[XS_LORA_FAMILY_COUNT] = {
    [XS_LORA_BERT] = "BERT", [XS_LORA_GPT2] = "GPT-2", [XS_LORA_LLAMA] = "Llama-family",
    [XS_LORA_DISTILBERT] = "DistilBERT",
    [XS_LORA_VIT] = "ViT",
    [XS_LORA_T5] = "T5"};
static const char *const FAMILY_EXAMPLES[XS_LORA_FAMILY_COUNT] = {
    [XS_LORA_BERT] = "query, key, value, dense, output.dense, intermediate.dense, all-linear",
    [XS_LORA_GPT2] = "c_attn, c_proj, c_fc, all-linear",
    [XS_LORA_LLAMA] = "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, all-linear",
    [XS_LORA_DISTILBERT] = "q_lin, k_lin, v_lin, out_lin, lin1, lin2, all-linear",
    [XS_LORA_VIT] = "query, key, value, dense, output.dense, intermediate.dense, all-linear",
    [XS_LORA_T5] = "q, k, v, o, wi (gated: wi_0, wi_1), wo, EncDecAttention.v, all-linear"};

#define ALL_LINEAR "all-linear"

int xs_lora_family(const xs_scenario *s)
{
    if (s->model.family == XS_FAMILY_LLAMA)
        return XS_LORA_LLAMA;
    if (s->model.family == XS_FAMILY_DISTILBERT)
        return XS_LORA_DISTILBERT;
    if (s->model.family == XS_FAMILY_VIT)
        return XS_LORA_VIT;
    if (s->model.family == XS_FAMILY_T5)
        return XS_LORA_T5;
    return s->model.arch == XS_DECODER ? XS_LORA_GPT2 : XS_LORA_BERT;
}

int xs_lora_module(int family, const char *linear, int layer, char *buf, size_t size)
{
    for (size_t i = 0; i < N_MODULES; i++) {
        if (MODULES[i].family != family || strcmp(MODULES[i].linear, linear) != 0)
            continue;
        int in_layer = strstr(MODULES[i].path, "%d") != NULL;
        if (in_layer != (layer >= 0))
            return -1;
        if (in_layer)
            snprintf(buf, size, MODULES[i].path, layer);
        else
            snprintf(buf, size, "%s", MODULES[i].path);
        return 0;
    }
    return -1;
}

/* DistilBERT's pre_classifier counts as the head: PEFT's modules_to_save
 * match is a suffix match (key.endswith), so the SEQ_CLS task's
 * "classifier" saves pre_classifier too, trained whole (its published
 * print_trainable_parameters line, tests/test_distilbert.c, counts it). */
int xs_lora_is_head(const char *linear)
{
    static const char *const heads[] = {"head.lm", "head.classifier", "head.qa", "head.score",
                                        "head.pre_classifier"};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        if (strcmp(linear, heads[i]) == 0)
            return 1;
    return 0;
}

/* PEFT's match of one target against a module path. */
static int matches(const char *path, const char *target, size_t tlen)
{
    size_t plen = strlen(path);
    if (tlen == 0 || tlen > plen)
        return 0;
    if (strncmp(path + plen - tlen, target, tlen) != 0)
        return 0;
    return plen == tlen || path[plen - tlen - 1] == '.';
}

/* The targets given, else the family's default ("" where PEFT has none,
 * which xs_lora_check refuses). */
static const char *targets_of(const xs_scenario *s)
{
    const char *t = s->train.lora_targets, *def = DEFAULT_TARGETS[xs_lora_family(s)];
    return t[0] ? t : def ? def : "";
}

/* Does any comma-separated target of list match path? */
static int any_target(const char *list, const char *path)
{
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (matches(path, p, len))
            return 1;
        p += len + (comma != NULL);
    }
    return 0;
}

int xs_lora_targeted(const xs_scenario *s, const char *linear, int layer)
{
    if (s->train.lora_rank <= 0 || xs_lora_is_head(linear))
        return 0;
    char path[128];
    if (xs_lora_module(xs_lora_family(s), linear, layer, path, sizeof path))
        return 0;
    const char *list = targets_of(s);
    if (strcmp(list, ALL_LINEAR) == 0)
        return 1;
    return any_target(list, path);
}

int xs_lora_layer_blind(const xs_scenario *s)
{
    if (s->train.lora_rank <= 0)
        return 1;
    for (const char *p = targets_of(s); *p; p++)
        if (*p >= '0' && *p <= '9')
            return 0;
    return 1;
}

/* The linears s's model has (by family and head) that a target may name. */
static int has_linear(const xs_scenario *s, const char *linear)
{
    int head = s->model.head, decoder = s->model.arch == XS_DECODER;
    size_t len = strlen(linear);
    if (s->model.family == XS_FAMILY_T5 && len > 4 && strstr(linear, ".ffn.wi"))
        return s->model.gated_ffn == (linear[len - 2] == '_'); /* wi_0, wi_1 or wi */
    if (strncmp(linear, "head.", 5) != 0)
        return 1;
    if (strcmp(linear, "head.lm") == 0)
        return head == XS_HEAD_LM;
    if (strcmp(linear, "head.transform") == 0)
        return head == XS_HEAD_LM && !decoder;
    if (strcmp(linear, "head.pooler") == 0 || strcmp(linear, "head.classifier") == 0)
        return head == XS_HEAD_CLS && !decoder;
    if (strcmp(linear, "head.score") == 0)
        return head == XS_HEAD_CLS && decoder;
    if (strcmp(linear, "head.pre_classifier") == 0)
        return head == XS_HEAD_CLS;
    if (strcmp(linear, "head.qa") == 0)
        return head == XS_HEAD_SPAN;
    return 0;
}

/* 1 when target (tlen chars) names a linear of s's model; *head_only: only
 * task heads. */
static int target_found(const xs_scenario *s, const char *target, size_t tlen, int *head_only)
{
    int family = xs_lora_family(s), found = 0;
    *head_only = 1;
    for (size_t i = 0; i < N_MODULES; i++) {
        if (MODULES[i].family != family || !has_linear(s, MODULES[i].linear))
            continue;
        int in_layer = strstr(MODULES[i].path, "%d") != NULL;
        int64_t layers = !in_layer ? 1
                         : strncmp(MODULES[i].path, "decoder.", 8) == 0
                             ? xs_model_decoder_layers(&s->model)
                             : s->model.layers;
        for (int64_t l = 0; l < layers; l++) {
            char path[128];
            xs_lora_module(family, MODULES[i].linear, in_layer ? (int)l : -1, path, sizeof path);
            if (matches(path, target, tlen)) {
                found = 1;
                if (!xs_lora_is_head(MODULES[i].linear))
                    *head_only = 0;
                break;
            }
        }
    }
    return found;
}

int xs_lora_check(const xs_scenario *s, const char *where, xs_error *err)
{
    const xs_train *t = &s->train;
    if (t->lora_rank <= 0) {
        if (t->lora_targets[0])
            return xs_error_set(err, XS_EFIELD,
                                "%s: train.lora.targets needs train.lora.rank > 0 (rank 0 is a "
                                "full fine-tune)",
                                where);
        if (t->lora_dropout > 0)
            return xs_error_set(err, XS_EFIELD,
                                "%s: train.lora.dropout %g needs train.lora.rank > 0 (it drops "
                                "out the adapters' input)",
                                where, t->lora_dropout);
        /* a quantized base is frozen: transformers' Trainer refuses a
         * quantized model without adapters ("You cannot perform fine-tuning
         * on purely quantized models", trainer.py; team code index,
         * find_string id 41367973904) */
        if (t->quant != XS_QUANT_NONE)
            return xs_error_set(err, XS_EFIELD,
                                "%s: train.quant %s needs train.lora.rank > 0 (only adapters "
                                "train on a quantized base: transformers' Trainer refuses a "
                                "purely quantized model)",
                                where, t->quant == XS_QUANT_NF4 ? "nf4" : "int8");
        return XS_OK;
    }
    /* Linear8bitLt hands its output back in its input's format and computes
     * the input gradient in it (MatMul8bitLt: ctx.dtype_A); modelled for a
     * model loaded in bf16, not for autocast's fp32 islands around it */
    if (t->quant == XS_QUANT_INT8 && t->precision != XS_P_BF16)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.quant int8 is modelled with train.precision bf16 (the "
                            "model loaded in bfloat16), got %s",
                            where, xs_precision_name(t->precision));
    if (t->kernels == XS_K_FUSED)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.lora.rank > 0 needs train.kernels eager (LightSeq's fused "
                            "layers have no Hugging Face module names to target)",
                            where);
    if (t->lora_train_head && s->model.head == XS_HEAD_LM)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: train.lora.train_head true with model.head lm is not modelled "
                            "(the LM head is the tied token embedding); set it false",
                            where);
    const char *list = targets_of(s);
    if (!list[0])
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.lora.targets is required for a %s model: PEFT has no "
                            "default target modules for it (get_peft_model asks for "
                            "target_modules); e.g. q_lin,v_lin",
                            where, FAMILY_NAMES[xs_lora_family(s)]);
    if (strcmp(list, ALL_LINEAR) == 0)
        return XS_OK;
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int head_only;
        if (len == 0 || strncmp(p, ALL_LINEAR, len) == 0)
            return xs_error_set(err, XS_EFIELD,
                                "%s: train.lora.targets must be comma-separated module names "
                                "without blanks (query,value) or all-linear alone, got \"%s\"",
                                where, list);
        if (!target_found(s, p, len, &head_only))
            return xs_error_set(err, XS_EFIELD,
                                "%s: train.lora.targets: '%.*s' names no linear module of this "
                                "%s model (e.g. %s)",
                                where, (int)len, p, FAMILY_NAMES[xs_lora_family(s)],
                                FAMILY_EXAMPLES[xs_lora_family(s)]);
        if (head_only)
            return xs_error_set(err, XS_EUNSUPPORTED,
                                "%s: train.lora.targets: '%.*s' names only the task head, which "
                                "is trained whole or frozen (train.lora.train_head), not adapted",
                                where, (int)len, p);
        p += len + (comma != NULL);
    }
    return XS_OK;
}

/* NF4 with double quantization (Dettmers et al. 2023, QLoRA, arXiv
 * 2305.14314, section 3, "Double Quantization"): 4 bits a weight; one
 * absmax a block of 64 weights, itself quantized to 8 bits in blocks of
 * 256 with one fp32 constant each: 4 + 8/64 + 32/(64 x 256) = 4.127 bits. */
double xs_quant_bytes(int quant, double k_in, double n_out)
{
    double n = k_in * n_out;
    if (quant == XS_QUANT_NF4)
        return n * (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;
    /* LLM.int8 (Dettmers et al. 2022, arXiv 2208.07339, section 3.2):
     * bitsandbytes' Int8Params holds CB, the int8 weight [n_out x k_in], and
     * SCB, one fp32 absmax per output row (bitsandbytes/autograd/
     * _functions.py, MatMul8bitLt: state.CB, state.SCB =
     * F.int8_vectorwise_quant(B); team code index, find_string id
     * 8479261646) */
    if (quant == XS_QUANT_INT8)
        return n + 4.0 * n_out;
    return NAN;
}
