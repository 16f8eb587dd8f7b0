/* lora.h — which linears a LoRA fine-tune adapts: PEFT's matching of
 * train.lora.targets against the Hugging Face module paths of the model's
 * linears, which each family names (xs_lora_names, in its file). */
#ifndef XS_LORA_H
#define XS_LORA_H

#include <stddef.h>

#include "error.h"
#include "scenario.h"

/* How PEFT names the linears of one model (its family's record gives it,
 * family.h): each workload linear name (attn.q, ffn.up, ...) with its
 * module path from the model's root as named_modules() gives it (%d: the
 * layer), PEFT's default targets for the model type (NULL: PEFT has none),
 * and what an error calls the model and offers as targets. */
typedef struct {
    const char *linear, *path;
} xs_lora_module_path;
typedef struct xs_lora_names {
    const char *model;    /* "BERT", "Llama-family" */
    const char *defaults; /* "query,value"; NULL: none */
    const char *examples; /* "query, key, value, dense, ..., all-linear" */
    const xs_lora_module_path *modules;
    size_t n;
} xs_lora_names;

/* The module path of the workload linear `linear` in layer `layer` (-1
 * outside the layers), into buf; 0, or -1 when the model has no such
 * linear. */
int xs_lora_module(const xs_lora_names *names, const char *linear, int layer, char *buf,
                   size_t size);

/* 1 when the linear is a task head (the output embedding or the
 * classification / QA head): all-linear leaves it out, as PEFT does. */
int xs_lora_is_head(const char *linear);

/* 1 when LoRA (train.lora.rank > 0) puts an adapter on this linear: a
 * target equal to its module path or a '.'-separated suffix of it (PEFT's
 * check_target_module_exists), or all-linear and not a head. */
int xs_lora_targeted(const xs_scenario *s, const xs_lora_names *names, const char *linear,
                     int layer);
/* 1 when xs_lora_targeted cannot tell one layer from another: no LoRA, or
 * no target holds a digit. Module paths differ between layers only in the
 * layer's number, and a target matches a path's suffix at a '.', so a
 * target without digits matches the same linears in every layer. */
int xs_lora_layer_blind(const xs_scenario *s, const xs_lora_names *names);

/* Check train.lora.* and train.quant of s: every target names a module the
 * model has (PEFT refuses a target it finds nowhere), and the keys agree
 * with one another. where names the scenario in messages. */
int xs_lora_check(const xs_scenario *s, const xs_lora_names *names, const char *where,
                  xs_error *err);

/* Bytes a base weight of k_in x n_out parameters takes in storage format
 * quant (xs_quant), quantization constants included. */
double xs_quant_bytes(int quant, double k_in, double n_out);

#endif
