/* scenario.h — what is being fine-tuned and how: the model shape (inline or
 * from a Hugging Face config.json), the training recipe, the data set size
 * and the cluster. Loaded from scenarios/<id>.json; --set key=value
 * overrides go through the same validation as the file. */
#ifndef XS_SCENARIO_H
#define XS_SCENARIO_H

#include <limits.h>
#include <stdint.h>

#include "error.h"
#include "stack.h"
#include "schema.h"

/* encoder_decoder: T5's two stacks (model.family t5) */
#define XS_MODEL_ARCH_CHOICES "encoder|decoder|encoder_decoder"
typedef enum { XS_ENCODER, XS_DECODER, XS_ENCODER_DECODER } xs_model_arch;
#define XS_HEAD_CHOICES "span|lm|cls"
typedef enum { XS_HEAD_SPAN, XS_HEAD_LM, XS_HEAD_CLS } xs_head;
#define XS_ACT_CHOICES "gelu|gelu_new|relu|silu"
typedef enum { XS_ACT_GELU, XS_ACT_GELU_NEW, XS_ACT_RELU, XS_ACT_SILU } xs_act;
/* which layer the model stacks: classic (BERT's post-LN encoder layer or
 * GPT-2's pre-LN block, as model.arch says: LayerNorm, learned positions,
 * one FFN activation), llama (transformers' LlamaDecoderLayer, which
 * Mistral and Qwen2 share: RMSNorm, rotary positions, grouped-query
 * attention, a gated SiLU MLP, no dropout but the attention's),
 * distilbert (transformers' DistilBERT TransformerBlock: BERT's post-LN
 * encoder without token types, without the dropout after the attention's
 * output projection, with its own task heads), vit (transformers'
 * ViTForImageClassification: a patch embedding of the image, a class token,
 * pre-LN encoder layers, a classifier on the class token) or t5 (transformers'
 * T5ForConditionalGeneration: an encoder stack and a decoder stack with
 * cross-attention, T5LayerNorm, relative position bias, an FFN with ReLU or
 * gated GELU) */
#define XS_FAMILY_CHOICES "classic|llama|distilbert|vit|t5"
typedef enum {
    XS_FAMILY_CLASSIC,
    XS_FAMILY_LLAMA,
    XS_FAMILY_DISTILBERT,
    XS_FAMILY_VIT,
    XS_FAMILY_T5
} xs_family_id;
/* which attention projections carry a bias in the llama family: none
 * (Llama, Mistral), qkv (Qwen2: q, k and v but not o) or all (Llama's
 * attention_bias true) */
#define XS_ATTN_BIAS_CHOICES "none|qkv|all"
typedef enum { XS_ATTN_BIAS_NONE, XS_ATTN_BIAS_QKV, XS_ATTN_BIAS_ALL } xs_attn_bias;
/* fp8: Transformer Engine's recipe (fp8.h): the model, its gradients and the
 * optimizer state in bf16 as in pure bf16, the layers' linears as te.Linear
 * running fp8 GEMMs */
#define XS_PRECISION_CHOICES "fp32|tf32|amp_fp16|amp_bf16|bf16|fp8"
typedef enum {
    XS_P_FP32,
    XS_P_TF32,
    XS_P_AMP_FP16,
    XS_P_AMP_BF16,
    XS_P_BF16,
    XS_P_FP8
} xs_precision;
#define XS_OPTIMIZER_CHOICES "sgd|adam|adamw|adan|bertadam"
/* bertadam: NVIDIA's BERT recipes' Python Adam (DeepLearningExamples
 * optimization.py): a global gradient norm read back to the host, then a
 * dozen eager tensor ops per parameter tensor; it has no fused form. */
typedef enum { XS_OPT_SGD, XS_OPT_ADAM, XS_OPT_ADAMW, XS_OPT_ADAN, XS_OPT_BERTADAM } xs_optimizer;
/* train.fp32_optimizer: "same", or the optimizer the recipe switches to
 * when it trains in fp32/tf32 (index = xs_optimizer + 1) */
#define XS_FP32_OPTIMIZER_CHOICES "same|sgd|adam|adamw|adan|bertadam"
#define XS_KERNELS_CHOICES "eager|fused"
typedef enum { XS_K_EAGER, XS_K_FUSED } xs_kernels;
#define XS_ATTENTION_CHOICES "unfused|flash"
#define XS_AMP_MODE_CHOICES "autocast|o2"
typedef enum { XS_AMP_AUTOCAST, XS_AMP_O2 } xs_amp_mode;
typedef enum { XS_ATT_UNFUSED, XS_ATT_FLASH } xs_attention;
/* where the FFN up-projection's bias is added: in the GEMM's epilogue
 * (nn.Linear) or by a broadcast add kernel before the activation (NVIDIA's
 * LinearActivation: F.linear without bias, then bias + y, then gelu) */
#define XS_FFN_BIAS_CHOICES "gemm|separate"
typedef enum { XS_FFN_BIAS_GEMM, XS_FFN_BIAS_SEPARATE } xs_ffn_bias;
/* what the loop's zero_grad leaves behind: no gradient tensors (set_to_none,
 * PyTorch >= 2.0's default), or zero-filled ones (PyTorch < 2.0's default and
 * apex amp's patched zero_grad) that autograd must then add into */
/* how the global gradient norm is clipped: apex multi_tensor_l2norm +
 * .item() + a conditional multi_tensor_scale after every backward
 * (NVIDIA's GradientClipper), or torch.nn.utils.clip_grad_norm_ once a step
 * (foreach norm, clamped coefficient, foreach mul) */
#define XS_CLIP_CHOICES "apex|torch"
typedef enum { XS_CLIP_APEX, XS_CLIP_TORCH } xs_clip_impl;
/* which kernels the optimizer step launches: auto (train.fused_optimizer
 * decides: multi_tensor or for_loop), one multi-tensor kernel a param group
 * (apex FusedAdam since 2019, torch fused=True), one fused kernel a tensor
 * (the older apex FusedAdam, DeepLearningExamples' fused_adam_local.py),
 * torch's foreach ops (a multi-tensor kernel per elementwise op), or a
 * Python loop of elementwise ops a tensor (torch's for-loop, Hugging Face's
 * AdamW of 2022) */
#define XS_OPT_IMPL_CHOICES "auto|multi_tensor|per_tensor|foreach|for_loop"
typedef enum {
    XS_OPT_IMPL_AUTO,
    XS_OPT_IMPL_MULTI_TENSOR,
    XS_OPT_IMPL_PER_TENSOR,
    XS_OPT_IMPL_FOREACH,
    XS_OPT_IMPL_FOR_LOOP
} xs_opt_impl;
/* bitsandbytes storage of the frozen base weights under LoRA: none, 4-bit
 * NormalFloat with double-quantized blockwise constants (QLoRA), or
 * LLM.int8 (Linear8bitLt: int8 rows, one fp32 absmax a row, outlier
 * columns of the input in 16 bits) */
#define XS_QUANT_CHOICES "none|nf4|int8"
typedef enum { XS_QUANT_NONE, XS_QUANT_NF4, XS_QUANT_INT8 } xs_quant;
/* activation checkpointing: none, or torch.utils.checkpoint around each
 * Transformer layer (transformers' gradient_checkpointing_enable) */
#define XS_CKPT_CHOICES "none|layer"
typedef enum { XS_CKPT_NONE, XS_CKPT_LAYER } xs_ckpt;
/* data parallel (comm.h): the link inside a node, how gradients, optimizer
 * state and weights are split over the devices, and whose DDP buckets */
#define XS_INTERCONNECT_CHOICES "auto|nvlink|pcie"
typedef enum { XS_IC_AUTO, XS_IC_NVLINK, XS_IC_PCIE } xs_interconnect;
#define XS_SHARDING_CHOICES "none|zero1|zero2|fsdp|fsdp_grad_op"
typedef enum {
    XS_SHARD_NONE,
    XS_SHARD_ZERO1,
    XS_SHARD_ZERO2,
    XS_SHARD_FSDP,        /* PyTorch FSDP, ShardingStrategy.FULL_SHARD (fsdp.h) */
    XS_SHARD_FSDP_GRAD_OP /* ShardingStrategy.SHARD_GRAD_OP */
} xs_sharding;
#define XS_DDP_CHOICES "torch|apex"
typedef enum { XS_DDP_TORCH, XS_DDP_APEX } xs_ddp;
#define XS_ZERO_GRAD_CHOICES "none|zero"
typedef enum { XS_ZERO_GRAD_NONE, XS_ZERO_GRAD_ZERO } xs_zero_grad;
/* what a measurement timed: the whole optimizer step, or (fwd_bwd) only
 * the model's forward and loss.backward(), as a kernel-level training
 * benchmark times them (NeuSight's: no optimizer step, no zero_grad, so
 * every backward adds into the gradients; the loss's forward, the loss
 * read-back and the input loading outside the timed region) */
#define XS_TIMED_CHOICES "step|fwd_bwd"
typedef enum { XS_TIMED_STEP, XS_TIMED_FWD_BWD } xs_timed;

typedef struct {
    int arch, head, activation; /* xs_model_arch, xs_head, xs_act */
    int64_t layers, hidden, heads, ffn, vocab, max_positions, type_vocab;
    double dropout, attn_dropout;
    char hf_config[256]; /* "" when the model is inline */
    int family;             /* xs_family_id (family.h: its record) */
    int64_t kv_heads;       /* key/value heads (GQA); 0: model.heads */
    int tied;               /* the LM head's weight is the token embedding */
    int attention_bias;     /* xs_attn_bias (llama family) */
    int mlp_bias;           /* the gated MLP's projections carry biases */
    int64_t sliding_window; /* tokens a query attends to at most; 0: all */
    double head_dropout;    /* dropout in the task head (distilbert family) */
    int64_t labels;         /* classes the cls head scores */
    /* vit family: the square input image's side and the square patch's, in
     * pixels, the image's channels, and whether q, k and v carry biases */
    int64_t image_size, patch_size, channels;
    int qkv_bias;
    /* t5 family: decoder layers (0: model.layers), relative position
     * buckets, and whether the FFN is gated (wi_0, wi_1, wo) */
    int64_t decoder_layers, relative_buckets;
    int gated_ffn;
} xs_model;

typedef struct {
    int64_t batch, seq, grad_accum;
    int64_t target_seq; /* t5 family: decoder (target) tokens a sample; 0 otherwise */
    int precision, optimizer, fused_optimizer, kernels, attention;
    int amp_mode;  /* xs_amp_mode: how amp_fp16/amp_bf16 is implemented */
    int grad_clip; /* clip the global gradient norm every step */
    int fp32_optimizer; /* XS_FP32_OPTIMIZER_CHOICES index */
    int loss_sync;      /* the loop reads the loss back to the host every step */
    double host_op_us;  /* > 0: host time to issue any kernel, overriding the host
                           model (scenario `host`); 0: the model */
    double generic_loop_efficiency; /* DRAM efficiency of the framework's generic
                                       elementwise loop relative to its vectorized one */
    int ffn_bias;                   /* xs_ffn_bias */
    int64_t loop_elems; /* elements a thread of the elementwise loops loads at once */
    int zero_grad;      /* xs_zero_grad */
    int timed;          /* xs_timed */
    int grad_clip_impl; /* xs_clip_impl */
    int optimizer_impl; /* xs_opt_impl */
    /* LoRA (PEFT): rank 0 is a full fine-tune; targets "" is the family's
     * PEFT default (lora.h) */
    int64_t lora_rank;
    double lora_alpha, lora_dropout;
    char lora_targets[256];
    int lora_train_head; /* the task head is trained (PEFT modules_to_save) */
    int quant;           /* xs_quant */
    int checkpointing;   /* xs_ckpt */
} xs_train;

typedef struct {
    char id[64];
    char description[256];
    xs_model model;
    xs_train train;
    int64_t samples, epochs;
    double loader_us; /* host time to fetch and collate one sample */
    int64_t devices;
    /* data parallel over devices > 1 (comm.h): GPUs per node (0: min(devices,
     * 8)), the link inside a node (xs_interconnect), a node's network
     * bandwidth each way in GB/s (0: none given), xs_sharding, xs_ddp;
     * under FSDP, whether its MixedPrecision gathers and reduces in the
     * AMP format (fsdp.h) */
    int64_t per_node;
    int interconnect;
    double network_gbs;
    int sharding;
    int ddp;
    int fsdp_mixed_precision;
    /* the devices' power limit the run sets (--set device.power_limit_w),
     * applied to whichever device predicts it (power.h); 0: the default */
    double power_limit_w;
    /* device memory the framework's CUDA context takes before the first
     * tensor (--set device.cuda_context_mib); 0: the default of the era
     * (memory.c) */
    double cuda_context_mib;
    xs_host host; /* the `host` section as given: 0 = the default (stack.c);
                     flat_us unused here (train.host_op_us) */
    /* the file it was loaded from, as its errors name it; "" for one made
     * in code (or a path too long for it: then its errors name its id) */
    char source[512];
} xs_scenario;

/* Load path, apply the n overrides ("train.batch=64"), resolve hf_config
 * (relative to the scenario's folder) and validate every field; the
 * relations between them are the workload's gate's (gate.h), checked when
 * the workload is built. */
int xs_scn_load(const char *path, const char *const *overrides, int n, xs_scenario *scn,
                xs_error *err);

/* xs_resolve("scenarios", id_or_path) then xs_scn_load. */
int xs_scn_open(const char *id_or_path, const char *const *overrides, int n, xs_scenario *scn,
                xs_error *err);

/* A Hugging Face config.json read once: its path as the scenario names it
 * (resolved) and its document (owned by the base holding it). */
typedef struct {
    char path[2048];
    cJSON *doc;
} xs_hf_cache;

/* A scenario loaded once for many variants (a sweep's grid points): the
 * scenario with its fixed overrides, its file, and the keys completing it
 * read (the defaults of other keys depend on them); its document with the
 * fixed overrides and its Hugging Face config, so that a variant of a
 * derived key reads no file. Free with xs_scn_base_free. */
typedef struct {
    xs_scenario s;
    char path[PATH_MAX];
    char read[64][64];
    size_t nread;
    int read_all; /* more keys read than the list holds */
    cJSON *doc;
    xs_hf_cache hf;
} xs_scn_base;

/* Load id_or_path with overrides as xs_scn_open does, noting what the
 * completion reads. */
int xs_scn_base_open(const char *id_or_path, const char *const *overrides, int n,
                     xs_scn_base *b, xs_error *err);

/* The base with the n overrides vary applied after its own: the scenario
 * xs_scn_open would load with all of them. Plain keys (only their own
 * field: no completion reads them, no model key) are stored into the
 * base's scenario; others go through the rest of a load from the base's
 * document in memory (no file read). XS_EARG where the result does not
 * pass the loader's checks: then the caller loads it whole (xs_scn_open),
 * which gives the loader's message. Safe on many threads at once. */
int xs_scn_variant(const xs_scn_base *b, const char *const *vary, int n, xs_scenario *out,
                   xs_error *err);
/* What xs_scn_base_open kept (not b itself). */
void xs_scn_base_free(xs_scn_base *b);

/* Prefix err's message with each of the n overrides ("--set KEY=VALUE: ")
 * whose key or value it mentions: an error found after they were applied
 * (a relation between fields, a Hugging Face import, the workload's gate)
 * is about the file as changed. Done by the loader for its own errors and
 * by whoever builds the workload of a scenario it loaded with overrides. */
void xs_scn_name_sets(const char *const *overrides, int n, xs_error *err);

/* Check one override "key=value" on its own, as xs_scn_load would (a known
 * key, a value its field accepts), with the same error; relations between
 * fields are the workload's gate's (gate.h), when the workload is built. */
int xs_scn_check_set(const char *kv, xs_error *err);

/* Put into root (a scenario document, --set overrides and hf_config
 * applied) the defaults that depend on other keys: train.seq by
 * model.head, train.optimizer_impl foreach for a default AdamW. A key
 * they need that is absent or bad is left for the schema to report. */
int xs_scn_complete(cJSON *root, xs_error *err);

/* 0 if id can name a scenario (1 to 63 letters, digits, '-', '_', '.',
 * the first a letter or digit), else an error naming it. */
int xs_scn_check_id(const char *id, xs_error *err);

/* What `scenarios --new` writes (*out, caller frees): the minimal scenario
 * id (a model and data.samples) with every train, data and cluster key at
 * its default and a "notes" object in each section explaining them. */
int xs_scn_template(const char *id, cJSON **out, xs_error *err);

/* The schema table, for `--help` and documentation. */
const xs_field *xs_scn_fields(size_t *n);
/* The row of the key at path ("train.batch"), or NULL. */
const xs_field *xs_scn_field(const char *path);
/* In a scenario document (the loader's, before the schema reads it): the
 * value at path when its row would take it, else NULL (the schema then
 * reports it); value put at path, objects made on the way (0, or -1: a
 * non-object in the way, or out of memory; value is then the caller's). */
const cJSON *xs_scn_doc_value(const cJSON *root, const char *path);
int xs_scn_doc_put(cJSON *root, const char *path, cJSON *value);
/* The number value at path unless the document gives the key (a default
 * that follows from other keys); XS_OK, or XS_ENOMEM. */
int xs_scn_doc_default(cJSON *root, const char *path, double value, xs_error *err);

/* The vit family's sequence: one token a patch, (image_size /
 * patch_size)^2, and the class token; 0 when the sizes are not set. */
int64_t xs_model_vit_seq(const xs_model *m);

/* Key/value heads of m: model.kv_heads, or model.heads when 0. */
int64_t xs_model_kv_heads(const xs_model *m);

/* Decoder layers of a t5 model: model.decoder_layers, or model.layers when 0. */
int64_t xs_model_decoder_layers(const xs_model *m);

/* Names for reports. */
const char *xs_precision_name(int p);
const char *xs_optimizer_name(int o);
const char *xs_sharding_name(int sharding);
const char *xs_activation_name(int activation);

/* The optimizer t runs (train.fp32_optimizer applies in fp32/tf32) and
 * whether it runs as fused kernels (multi-tensor, or one a tensor). */
int xs_train_optimizer(const xs_train *t, int *fused);

/* The optimizer's kernels (never XS_OPT_IMPL_AUTO): train.optimizer_impl,
 * or what train.fused_optimizer implies; bertadam is its own for-loop. */
int xs_train_optimizer_impl(const xs_train *t);

/* The host model s runs with: its `host` section over the defaults, and
 * train.host_op_us as a flat per-launch override when given. */
void xs_scn_host(const xs_scenario *s, xs_host *h);

#endif
