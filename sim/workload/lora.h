/* lora.h — which linears a LoRA fine-tune adapts: the one table that maps
 * the workload's linear names (attn.q, ffn.up, ...) to each model family's
 * Hugging Face module paths, and PEFT's matching of train.lora.targets
 * against them. */
#ifndef XS_LORA_H
#define XS_LORA_H

#include "error.h"
#include "scenario.h"

/* Model families whose module names the table knows: model.family picks
 * Llama, DistilBERT or T5, else the arch picks BERT (encoder) or GPT-2
 * (decoder). */
typedef enum {
    XS_LORA_BERT,
    XS_LORA_GPT2,
    XS_LORA_LLAMA,
    XS_LORA_DISTILBERT,
    XS_LORA_VIT,
    XS_LORA_T5,
    XS_LORA_FAMILY_COUNT
} xs_lora_family_id;

/* The family of s's model. */
int xs_lora_family(const xs_scenario *s);

/* The module path (from the model's root, as named_modules() gives it) of
 * the workload linear `linear` in layer `layer` (-1 outside the layers),
 * into buf; 0, or -1 when the family has no such linear. */
int xs_lora_module(int family, const char *linear, int layer, char *buf, size_t size);

/* 1 when the linear is a task head (the output embedding or the
 * classification / QA head): all-linear leaves it out, as PEFT does. */
int xs_lora_is_head(const char *linear);

/* 1 when LoRA (train.lora.rank > 0) puts an adapter on this linear: a
 * target equal to its module path or a '.'-separated suffix of it (PEFT's
 * check_target_module_exists), or all-linear and not a head. */
int xs_lora_targeted(const xs_scenario *s, const char *linear, int layer);
/* 1 when xs_lora_targeted cannot tell one layer from another: no LoRA, or
 * no target holds a digit. Module paths differ between layers only in the
 * layer's number, and a target matches a path's suffix at a '.', so a
 * target without digits matches the same linears in every layer. */
int xs_lora_layer_blind(const xs_scenario *s);

/* Check train.lora.* and train.quant of s: every target names a module the
 * family has (PEFT refuses a target it finds nowhere), and the keys agree
 * with one another. where names the scenario in messages. */
int xs_lora_check(const xs_scenario *s, const char *where, xs_error *err);

/* Bytes a base weight of k_in x n_out parameters takes in storage format
 * quant (xs_quant), quantization constants included. */
double xs_quant_bytes(int quant, double k_in, double n_out);

#endif
