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

#define ALL_LINEAR "all-linear"

int xs_lora_module(const xs_lora_names *names, const char *linear, int layer, char *buf,
                   size_t size)
{
    for (size_t i = 0; i < names->n; i++) {
        const xs_lora_module_path *m = &names->modules[i];
        if (strcmp(m->linear, linear) != 0)
            continue;
        int in_layer = strstr(m->path, "%d") != NULL;
        if (in_layer != (layer >= 0))
            return -1;
        if (in_layer)
            snprintf(buf, size, m->path, layer);
        else
            snprintf(buf, size, "%s", m->path);
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
static const char *targets_of(const xs_scenario *s, const xs_lora_names *names)
{
    const char *t = s->train.lora_targets, *def = names->defaults;
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

int xs_lora_targeted(const xs_scenario *s, const xs_lora_names *names, const char *linear,
                     int layer)
{
    if (s->train.lora_rank <= 0 || xs_lora_is_head(linear))
        return 0;
    char path[128];
    if (xs_lora_module(names, linear, layer, path, sizeof path))
        return 0;
    const char *list = targets_of(s, names);
    if (strcmp(list, ALL_LINEAR) == 0)
        return 1;
    return any_target(list, path);
}

int xs_lora_layer_blind(const xs_scenario *s, const xs_lora_names *names)
{
    if (s->train.lora_rank <= 0)
        return 1;
    for (const char *p = targets_of(s, names); *p; p++)
        if (*p >= '0' && *p <= '9')
            return 0;
    return 1;
}

/* The linears s's model has (by family and head) that a target may name. */
static int has_linear(const xs_scenario *s, const char *linear)
{
    int head = s->model.head, decoder = s->model.arch == XS_DECODER;
    size_t len = strlen(linear);
    if (len > 4 && strstr(linear, ".ffn.wi")) /* T5's FFN: wi_0 and wi_1 gated, else wi */
        return s->model.gated_ffn == (linear[len - 2] == '_');
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
static int target_found(const xs_scenario *s, const xs_lora_names *names, const char *target,
                        size_t tlen, int *head_only)
{
    int found = 0;
    *head_only = 1;
    for (size_t i = 0; i < names->n; i++) {
        const xs_lora_module_path *m = &names->modules[i];
        if (!has_linear(s, m->linear))
            continue;
        int in_layer = strstr(m->path, "%d") != NULL;
        int64_t layers = !in_layer ? 1
                         : strncmp(m->path, "decoder.", 8) == 0
                             ? xs_model_decoder_layers(&s->model)
                             : s->model.layers;
        for (int64_t l = 0; l < layers; l++) {
            char path[128];
            xs_lora_module(names, m->linear, in_layer ? (int)l : -1, path, sizeof path);
            if (matches(path, target, tlen)) {
                found = 1;
                if (!xs_lora_is_head(m->linear))
                    *head_only = 0;
                break;
            }
        }
    }
    return found;
}

int xs_lora_check(const xs_scenario *s, const xs_lora_names *names, const char *where,
                  xs_error *err)
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
    const char *list = targets_of(s, names);
    if (!list[0])
        return xs_error_set(err, XS_EFIELD,
                            "%s: train.lora.targets is required for a %s model: PEFT has no "
                            "default target modules for it (get_peft_model asks for "
                            "target_modules); e.g. q_lin,v_lin",
                            where, names->model);
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
        if (!target_found(s, names, p, len, &head_only))
            return xs_error_set(err, XS_EFIELD,
                                "%s: train.lora.targets: '%.*s' names no linear module of this "
                                "%s model (e.g. %s)",
                                where, (int)len, p, names->model, names->examples);
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
