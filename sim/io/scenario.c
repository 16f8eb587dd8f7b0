/* scenario.c — loads scenarios, imports Hugging Face config.json files and
 * applies --set overrides, all through one schema table. */
#include "scenario.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "fileio.h"
#include "paths.h"
#include "suggest.h"

#define INT(path, req, lo, hi, member, help) \
    {path, XS_F_INT, req, lo, hi, 0, NULL, offsetof(xs_scenario, member), 0, help, NULL}
#define INT_DEF(path, lo, hi, member, def, help) \
    {path, XS_F_INT, 0, lo, hi, 0, NULL, offsetof(xs_scenario, member), 0, help, def}
#define ENUM(path, choices, member, help) \
    {path, XS_F_ENUM, 1, 0, 0, 0, choices, offsetof(xs_scenario, member), 0, help, NULL}
#define ENUM_DEF(path, choices, member, def, help) \
    {path, XS_F_ENUM, 0, 0, 0, 0, choices, offsetof(xs_scenario, member), 0, help, def}
#define HOST(path, member, hi, help) \
    {path, XS_F_NUM, 0, 0, hi, 1, NULL, offsetof(xs_scenario, member), 0, help, NULL}
#define PROB(path, member, help) \
    {path, XS_F_NUM, 1, 0, 0.99, 0, NULL, offsetof(xs_scenario, member), 0, help, NULL}

/* Upper bounds keep every shape product exact in a double and in int64. */
static const xs_field SCENARIO_FIELDS[] = {
    {"id", XS_F_STR, 1, 0, 0, 0, NULL, offsetof(xs_scenario, id), 64,
     "scenario id, equal to the file name without .json", NULL},
    {"description", XS_F_STR, 0, 0, 0, 0, NULL, offsetof(xs_scenario, description), 256,
     "one line for people", NULL},
    {"source", XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096, "where the figures come from", NULL},
    {"model.hf_config", XS_F_STR, 0, 0, 0, 0, NULL, offsetof(xs_scenario, model.hf_config), 256,
     "Hugging Face config.json, relative to the scenario; keys beside it override it", NULL},
    ENUM("model.arch", XS_MODEL_ARCH_CHOICES, model.arch, "encoder (BERT), decoder (GPT-2) or encoder_decoder (T5: model.family t5)"),
    INT("model.layers", 1, 1, 4096, model.layers, "Transformer layers"),
    INT("model.hidden", 1, 1, 131072, model.hidden, "hidden size h"),
    INT("model.heads", 1, 1, 4096, model.heads, "attention heads a (h/a = head size)"),
    INT("model.ffn", 1, 1, 1048576, model.ffn, "FFN inner size f"),
    INT("model.vocab", 1, 1, 16777216, model.vocab, "vocabulary size V"),
    INT("model.max_positions", 1, 1, 1048576, model.max_positions, "learned positions"),
    INT("model.type_vocab", 0, 0, 1024, model.type_vocab, "token-type embeddings (BERT: 2)"),
    ENUM("model.activation", XS_ACT_CHOICES, model.activation,
         "FFN activation; gelu_new is GPT-2's tanh form"),
    PROB("model.dropout", model.dropout, "hidden dropout probability"),
    PROB("model.attn_dropout", model.attn_dropout, "attention-probability dropout"),
    ENUM("model.head", XS_HEAD_CHOICES, model.head,
         "task head: span (SQuAD start/end), lm (LM head: tied unless model.tied false), cls"),
    ENUM_DEF("model.family", XS_FAMILY_CHOICES, model.family, "classic",
             "the layer: classic (BERT encoder or GPT-2 decoder, as model.arch says; the "
             "default), llama (transformers' LlamaDecoderLayer, also Mistral's and Qwen2's: "
             "RMSNorm, rotary positions, grouped-query attention, gated SiLU MLP; needs "
             "model.arch decoder and model.activation silu), distilbert (transformers' "
             "DistilBERT: BERT's post-LN encoder layer with no token types and no dropout "
             "after the attention's output projection; cls head pre_classifier, ReLU, "
             "dropout, classifier; span head dropout, qa_outputs; needs model.arch encoder "
             "and model.type_vocab 0), vit (transformers' "
             "ViTForImageClassification: patch embedding, class token, pre-LN encoder layers, "
             "a classifier on the class token; needs model.arch encoder, model.head cls and "
             "model.image_size / model.patch_size) or t5 (transformers' "
             "T5ForConditionalGeneration: encoder and decoder stacks, T5LayerNorm, relative "
             "position bias, cross-attention; needs model.arch encoder_decoder and model.head "
             "lm)"),
    INT_DEF("model.kv_heads", 0, 4096, model.kv_heads, "0",
            "llama family: key/value heads (grouped-query attention; config "
            "num_key_value_heads); 0 (the default): model.heads"),
    {"model.tied", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(xs_scenario, model.tied), 0,
     "the LM head's weight is the token embedding (config tie_word_embeddings; default true, "
     "transformers' PretrainedConfig default; the classic family is always tied, a Llama "
     "config.json that omits it means false)",
     "true"},
    ENUM_DEF("model.attention_bias", XS_ATTN_BIAS_CHOICES, model.attention_bias, "none",
             "llama family: which attention projections have a bias: none (Llama, Mistral; the "
             "default), qkv (Qwen2), all (a Llama config's attention_bias true)"),
    {"model.mlp_bias", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(xs_scenario, model.mlp_bias), 0,
     "llama family: gate, up and down projections have biases (config mlp_bias; default false)",
     "false"},
    INT_DEF("model.sliding_window", 0, 1048576, model.sliding_window, "0",
            "llama family: a query attends to at most this many tokens (Mistral's "
            "sliding_window); 0 (the default): all. Only a window of at least train.seq is "
            "modelled (it changes no work there)"),
    INT_DEF("model.decoder_layers", 0, 4096, model.decoder_layers, "0",
            "t5 family: decoder layers (config num_decoder_layers); 0 (the default): "
            "model.layers, as T5Config does"),
    INT_DEF("model.relative_buckets", 0, 65536, model.relative_buckets, "0",
            "t5 family: relative position buckets, the rows of each stack's position-bias "
            "table (config relative_attention_num_buckets; a T5 config.json that omits it means "
            "32, T5Config's default); must be 0 for the other families"),
    {"model.gated_ffn", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(xs_scenario, model.gated_ffn), 0,
     "t5 family: the FFN is gated, act(wi_0 x) * wi_1 x (config feed_forward_proj "
     "\"gated-gelu\", T5 v1.1 and Flan-T5); default false: wi, act, wo (\"relu\", the "
     "original T5)",
     "false"},
    {"model.head_dropout", XS_F_NUM, 0, 0, 0.99, 0, NULL, offsetof(xs_scenario, model.head_dropout),
     0,
     "distilbert family: dropout probability in the task head (config seq_classif_dropout "
     "for model.head cls, after the pre_classifier's ReLU; qa_dropout for span, on the "
     "encoder's output); default 0; only the distilbert family has this key",
     "0"},
    INT_DEF("model.labels", 2, 1000000, model.labels, "2",
            "cls head: the classes its classifier scores, the cross-entropy's width (config "
            "num_labels, or the length of id2label; default 2, PretrainedConfig's; 1, a "
            "regression, is not modelled)"),
    INT_DEF("model.image_size", 0, 16384, model.image_size, "0",
            "vit family: side of the square input image in pixels (config image_size); the "
            "sequence is (image_size / patch_size)^2 patches + 1 class token, so train.seq "
            "follows from it and may not be set to anything else"),
    INT_DEF("model.patch_size", 0, 16384, model.patch_size, "0",
            "vit family: side of the square patch in pixels (config patch_size): the patch "
            "embedding is a convolution with kernel = stride = patch_size, a GEMM over patches"),
    INT_DEF("model.channels", 1, 64, model.channels, "3",
            "vit family: channels of the input image (config num_channels; default 3)"),
    {"model.qkv_bias", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(xs_scenario, model.qkv_bias), 0,
     "vit family: query, key and value carry biases (config qkv_bias; default true)", "true"},
    {"model.notes", XS_F_OBJ, 0, 0, 0, 0, NULL, XS_NOSTORE, 0, "free text for people, any keys",
     NULL},
    /* train, data and cluster: every key but data.samples has a default,
     * what a fine-tune with the Hugging Face Trainer on PyTorch 2.0-2.7
     * does when given no flags (`xpusim scenarios --help` lists them with
     * their sources; the shipped scenarios still write each key out).
     *   [args]    huggingface/transformers@00349ae87eddc872ffa21a8a54f264375a0056a8
     *             src/transformers/training_args.py (TrainingArguments)
     *   [trainer] huggingface/transformers@000945a9b726d87a93e61e873b88ff8f3cd411b5
     *             src/transformers/trainer.py (_inner_training_loop)
     *   [optim]   pytorch/pytorch@002d2f0bb40cf08beb74bce80f52ce4f2eda46a0
     *             torch/optim/optimizer.py (foreach unless asked for fused)
     * train.seq and train.optimizer_impl depend on other keys: see
     * xs_scn_complete(). */
    INT_DEF("train.batch", 1, 1048576, train.batch, "8",
            "micro-batch per device (default 8: the Trainer's per_device_train_batch_size)"),
    {"train.seq", XS_F_INT, 0, 1, 1048576, 0, NULL, offsetof(xs_scenario, train.seq), 0,
     "sequence length (default by model.head, as the Hugging Face example scripts pad or cut "
     "every sample, capped at model.max_positions: lm 1024, run_clm.py's block_size; span 384, "
     "run_qa.py's max_seq_length; cls 128, run_glue.py's max_seq_length; model.family vit: "
     "the patches and the class token, (model.image_size / model.patch_size)^2 + 1, and "
     "nothing else)",
     NULL},
    INT("train.target_seq", 0, 0, 1048576, train.target_seq,
        "t5 family: target (decoder) tokens a sample, the labels the decoder is taught to "
        "produce; train.seq is the source (encoder) length. Absent: 128 for t5 "
        "(run_summarization.py's max_target_length); other families leave it out"),
    ENUM_DEF("train.precision", XS_PRECISION_CHOICES, train.precision, "fp32",
             "fp32, tf32 matmuls, AMP fp16/bf16 (fp32 master weights), pure bf16, or fp8 "
             "(Transformer Engine's default DelayedScaling recipe on Ada and Hopper: pure bf16 "
             "but the layers' linears run as te.Linear, fp8 GEMMs with bf16 outputs) (default "
             "fp32: the Trainer trains in fp32 unless given --fp16 or --bf16, and PyTorch >= "
             "1.12 leaves TF32 matmuls off; AMP is one --set away and then runs as "
             "train.amp_mode autocast)"),
    ENUM_DEF("train.optimizer", XS_OPTIMIZER_CHOICES, train.optimizer, "adamw",
             "optimizer (default adamw: the Trainer's optim adamw_torch, torch.optim.AdamW)"),
    {"train.fused_optimizer", XS_F_BOOL, 0, 0, 0, 0, NULL,
     offsetof(xs_scenario, train.fused_optimizer), 0,
     "true: one multi-tensor kernel; false: one kernel per tensor op (default false: "
     "torch.optim.AdamW runs fused only when asked, fused=True or the Trainer's "
     "adamw_torch_fused, its default from PyTorch 2.8)",
     "false"},
    ENUM_DEF("train.kernels", XS_KERNELS_CHOICES, train.kernels, "eager",
             "eager framework ops or LightSeq-style fused layer kernels (default eager: "
             "transformers' modules, no torch.compile, the Trainer's torch_compile false)"),
    ENUM_DEF("train.attention", XS_ATTENTION_CHOICES, train.attention, "flash",
             "unfused (s x s scores in memory) or flash (fused, no s x s traffic) (default "
             "flash: transformers >= 4.36 loads a model that has one with its "
             "scaled_dot_product_attention implementation under PyTorch >= 2.1.1, "
             "huggingface/transformers#27940, a fused kernel; set unfused for a model "
             "without one)"),
    INT_DEF("train.grad_accum", 1, 65536, train.grad_accum, "1",
            "micro-batches per optimizer step (default 1: the Trainer's "
            "gradient_accumulation_steps)"),
    ENUM_DEF("train.amp_mode", XS_AMP_MODE_CHOICES, train.amp_mode, "autocast",
             "AMP as torch.autocast (fp32 norm/softmax/loss, casts) or o2 (apex O2: half model, "
             "fp32 master weights) (default autocast: what the Trainer's --fp16/--bf16 run)"),
    {"train.grad_clip", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(xs_scenario, train.grad_clip), 0,
     "clip the global gradient norm every step (a norm pass read back to the host, then a "
     "scale pass), as NVIDIA's GradientClipper and a logged grad norm do (default true: the "
     "Trainer's max_grad_norm is 1.0, and it clips whenever that is > 0)",
     "true"},
    ENUM_DEF("train.fp32_optimizer", XS_FP32_OPTIMIZER_CHOICES, train.fp32_optimizer, "same",
             "optimizer the recipe uses instead when precision is fp32 or tf32 (same: "
             "train.optimizer, the default: the Trainer keeps its optimizer); NVIDIA's "
             "run_squad.py uses bertadam there"),
    {"train.loss_sync", XS_F_BOOL, 0, 0, 0, 0, NULL, offsetof(xs_scenario, train.loss_sync), 0,
     "the loop reads the loss back every step (loss.item()): the GPU drains at each step's "
     "end and waits while the host issues the next step's first kernels (default true: the "
     "Trainer's logging_nan_inf_filter, on by default, tests each micro-batch's loss with "
     "torch.isnan(loss) or torch.isinf(loss), a host read of a GPU value)",
     "true"},
    {"train.host_op_us", XS_F_NUM, 0, 0, 1000, 1, NULL, offsetof(xs_scenario, train.host_op_us),
     0,
     "optional override: host microseconds to issue any one kernel, whoever issues it "
     "(Python, dispatcher, autograd, driver all in one figure); absent (the default), the host "
     "model (the host section) prices each launch by who issues it",
     NULL},
    /* at least 0.01: it divides the bandwidth, and a loop 100 times slower
     * than the vectorized one (PyTorch's: 0.78 of it) is none a framework ships */
    {"train.generic_loop_efficiency", XS_F_NUM, 0, 0.01, 1, 0, NULL,
     offsetof(xs_scenario, train.generic_loop_efficiency), 0,
     "share of the vectorized loop's DRAM bandwidth that the framework's generic elementwise "
     "loop reaches; eager ops with a broadcast operand, permuted or strided copies and dtype "
     "conversions run it (default 0.78, PyTorch up to 2.5: fp32-to-half casts before and "
     "after pytorch/pytorch#137053 vectorized them)",
     "0.78"},
    INT_DEF("train.loop_elems", 1, 64, train.loop_elems, "4",
            "elements each thread of the framework's elementwise loops loads before it waits on "
            "memory (default 4: PyTorch up to 2.6, its thread_work_size); on a GPU whose "
            "bandwidth outruns the loads its threads keep in flight, this bounds those kernels"),
    ENUM_DEF("train.ffn_bias", XS_FFN_BIAS_CHOICES, train.ffn_bias, "gemm",
             "where the FFN up-projection adds its bias: in the GEMM (nn.Linear, the default: "
             "transformers' BERT and GPT-2 modules) or in a separate broadcast add before the "
             "activation (NVIDIA's BERT LinearActivation)"),
    {"train.optimizer_impl", XS_F_ENUM, 0, 0, 0, 0, XS_OPT_IMPL_CHOICES,
     offsetof(xs_scenario, train.optimizer_impl), 0,
     "the optimizer's kernels: multi_tensor (one kernel a param group: apex FusedAdam, torch "
     "fused=True), per_tensor (one fused kernel a tensor: the older apex FusedAdam), foreach "
     "(torch's _foreach ops, adam/adamw), for_loop (Python ops a tensor); auto: "
     "train.fused_optimizer decides, multi_tensor or for_loop; a value must agree with "
     "train.fused_optimizer. Default: foreach for adam and adamw when train.fused_optimizer "
     "is absent too (torch.optim's default on CUDA), else auto",
     NULL},
    ENUM_DEF("train.grad_clip_impl", XS_CLIP_CHOICES, train.grad_clip_impl, "torch",
             "how train.grad_clip runs: apex (NVIDIA's GradientClipper: multi_tensor_l2norm, "
             ".item(), multi_tensor_scale, after every micro-batch's backward) or torch "
             "(torch.nn.utils.clip_grad_norm_ once a step: foreach norm, clamped coefficient, "
             "foreach mul; the default: the Trainer's accelerator.clip_grad_norm_ calls it)"),
    ENUM_DEF("train.zero_grad", XS_ZERO_GRAD_CHOICES, train.zero_grad, "none",
             "what optimizer.zero_grad() leaves: none (set_to_none, the default: PyTorch >= "
             "2.0, pytorch/pytorch#92731; the Trainer calls model.zero_grad()): the next "
             "backward hands each gradient over; or zero (PyTorch < 2.0's default and "
             "apex amp's: a fill kernel per parameter tensor, then autograd adds every new "
             "gradient into the zeroed one, grad += new; apex O2 sets its half gradients to "
             "None before the backward, so there only the fill)"),
    INT_DEF("train.lora.rank", 0, 65536, train.lora_rank, "0",
            "LoRA rank r (PEFT LoraConfig.r): > 0 freezes every base weight (no weight "
            "gradients or optimizer state) and adds an adapter x -> dropout -> A (r x in) -> "
            "B (out x r) -> * alpha/r, added to each targeted linear's output; 0 (the default): "
            "a full fine-tune"),
    {"train.lora.alpha", XS_F_NUM, 0, 0, 1e6, 1, NULL, offsetof(xs_scenario, train.lora_alpha), 0,
     "LoRA alpha: the adapter's output is scaled by alpha / r, one multiply whatever its "
     "value (default 8: PEFT's lora_alpha)",
     "8"},
    {"train.lora.targets", XS_F_STR, 0, 0, 0, 0, NULL, offsetof(xs_scenario, train.lora_targets),
     256,
     "comma-separated Hugging Face module names the adapters go on, matched as PEFT does (a "
     "module whose path is the name or ends with '.' + it): BERT query, key, value, dense "
     "(attention output, FFN up and down, pooler), output.dense (both outputs), "
     "intermediate.dense; GPT-2 c_attn, c_proj (attention and MLP out), c_fc; ViT the same "
     "names as BERT (no pooler; its patch embedding is a convolution, not adapted); "
     "DistilBERT q_lin, k_lin, v_lin, out_lin, lin1, lin2; T5 q, k, v, o, wi (wi_0, "
     "wi_1), wo, or a longer suffix (SelfAttention.q, EncDecAttention.v); or all-linear "
     "(every linear but the task head). Absent: PEFT's default for the model type (bert "
     "query,value; gpt2 c_attn; vit query,value; t5 q,v; PEFT has none for distilbert, "
     "so there it is required)",
     NULL},
    {"train.lora.dropout", XS_F_NUM, 0, 0, 0.99, 0, NULL, offsetof(xs_scenario, train.lora_dropout),
     0, "dropout on each adapter's input (PEFT lora_dropout; default 0: nn.Identity, no kernel)",
     "0"},
    {"train.lora.train_head", XS_F_BOOL, 0, 0, 0, 0, NULL,
     offsetof(xs_scenario, train.lora_train_head), 0,
     "under LoRA, the task head trains whole (PEFT's modules_to_save); default by model.head: "
     "true for cls and span (PEFT's SEQ_CLS and QUESTION_ANS tasks add classifier / score / "
     "qa_outputs), false for lm",
     NULL},
    ENUM_DEF("train.quant", XS_QUANT_CHOICES, train.quant, "none",
             "storage of the frozen base weights of the layers under LoRA: none (the model's "
             "format), nf4 (QLoRA, bitsandbytes Linear4bit: 4-bit NormalFloat, blockwise "
             "absmax with double quantization, dequantized to the matmul format for every "
             "forward and every input-gradient matmul) or int8 (load_in_8bit, bitsandbytes "
             "Linear8bitLt, threshold 6: int8 rows with one fp32 absmax each; each forward "
             "quantizes its input row-wise and runs an int8 GEMM plus a 16-bit one over the "
             "outlier columns; the input gradient dequantizes the weight to 16 bits)"),
    ENUM_DEF("train.checkpointing", XS_CKPT_CHOICES, train.checkpointing, "none",
             "activation checkpointing: none (the default: the Trainer's gradient_checkpointing "
             "false) or layer (gradient_checkpointing_enable: each Transformer layer runs its "
             "forward under torch.utils.checkpoint, keeping only its input; its forward runs "
             "again in the backward, just before its backward)"),
    {"train.notes", XS_F_OBJ, 0, 0, 0, 0, NULL, XS_NOSTORE, 0,
     "free text for people, any keys (the template explains each key here)", NULL},
    INT("data.samples", 1, 1, 1e12, samples,
        "training samples per epoch (no default: it is the data set's size)"),
    INT_DEF("data.epochs", 1, 1e6, epochs, "3", "epochs (default 3: the Trainer's num_train_epochs)"),
    {"data.loader_us", XS_F_NUM, 0, 0, 1e6, 0, NULL, offsetof(xs_scenario, loader_us), 0,
     "host microseconds to fetch and collate one sample in the training loop's own thread "
     "(DataLoader, num_workers=0); the GPU waits for it after a step-end sync. 0 (the "
     "default): loading overlaps (workers, prefetch), or no per-sample cost is known",
     "0"},
    {"data.notes", XS_F_OBJ, 0, 0, 0, 0, NULL, XS_NOSTORE, 0, "free text for people, any keys",
     NULL},
    INT_DEF("cluster.devices", 1, 65536, devices, "1",
            "devices (data parallel): GPUs in nodes (the keys below), or a TPU slice of "
            "4 chips or more as the device file offers them, its torus from the file (a "
            "chip is one device, two on v2/v3) (default 1: one process, one device)"),
    INT_DEF("cluster.per_node", 0, 65536, per_node, "0",
            "devices in each node; cluster.devices must be a multiple of it (default 0: "
            "the device file's interconnect.gpus_per_node, the usual server's or instance's "
            "GPUs (8 on most boards: the HGX/DGX baseboard and the cloud's 8-GPU instances), "
            "at most cluster.devices; a node of more than 8 needs this key)"),
    ENUM_DEF("cluster.interconnect", XS_INTERCONNECT_CHOICES, interconnect, "auto",
             "the link between the GPUs of a node: nvlink (the device file's NVLink, "
             "interconnect.nvlink, at its full per-GPU bandwidth: NVSwitch, the V100 SXM2 "
             "hybrid cube-mesh that NCCL rings over, or a PCIe card's bridge for as many GPUs "
             "as it joins), pcie (the device file's host link, through the host bridge) or "
             "auto (the default: nvlink where interconnect.nvlink is switch or mesh, whose "
             "baseboard links all GPUs of a node; pcie otherwise, a bridge being optional)"),
    {"cluster.network_gbs", XS_F_NUM, 0, 0, 1e5, 0, NULL, offsetof(xs_scenario, network_gbs), 0,
     "one node's network bandwidth each way in GB/s (1e9 B/s), all its NICs together "
     "(8 x 200 Gb/s HDR InfiniBand = 200); required when the job spans several nodes "
     "(default 0: none, one node)",
     "0"},
    ENUM_DEF("cluster.sharding", XS_SHARDING_CHOICES, sharding, "none",
             "none (the default: DDP, every device keeps all gradients and optimizer state), "
             "zero1 (optimizer state and master weights split over the devices; gradients "
             "all-reduced, each device updates its shard, then the weights all-gathered), "
             "zero2 (gradients too: reduce-scattered in the buckets instead of all-reduced), "
             "fsdp (PyTorch FSDP, FULL_SHARD: parameters too; each Transformer layer is a unit "
             "whose parameters are all-gathered before its forward and again before its "
             "backward, its gradients reduce-scattered after) or fsdp_grad_op (SHARD_GRAD_OP: "
             "the parameters gathered once, kept from the forward through the backward)"),
    {"cluster.fsdp_mixed_precision", XS_F_BOOL, 0, 0, 0, 0, NULL,
     offsetof(xs_scenario, fsdp_mixed_precision), 0,
     "under cluster.sharding fsdp|fsdp_grad_op with train.precision amp_fp16|amp_bf16: "
     "FSDP's MixedPrecision(param_dtype, reduce_dtype) in the AMP format, as accelerate "
     "and the Trainer set it, so parameters are gathered and gradients reduced in 16 "
     "bits and autocast has no weight to cast (default true); false: fp32 parameters "
     "gathered, fp32 gradients reduced, autocast casting each weight",
     "true"},
    ENUM_DEF("cluster.ddp", XS_DDP_CHOICES, ddp, "torch",
             "whose DistributedDataParallel buckets the gradients: torch (the default: "
             "bucket_cap_mb 25, the first bucket 1 MB, buckets copied out of and back into "
             "the gradients, gradient_as_bucket_view false) or apex (apex.parallel, as "
             "NVIDIA's BERT run_squad.py wraps the model: buckets of message_size 1e7 "
             "elements, flattened and copied back)"),
    {"cluster.notes", XS_F_OBJ, 0, 0, 0, 0, NULL, XS_NOSTORE, 0,
     "free text for people, any keys", NULL},
    {"device.power_limit_w", XS_F_NUM, 0, 0, 1e6, 1, NULL, offsetof(xs_scenario, power_limit_w),
     0,
     "the board's power limit in W (nvidia-smi -pl): the step runs at the highest clock whose "
     "average power fits it; within the device's power.limit_min_w..limit_max_w. Absent: the default "
     "limit (power.tdp_w)", NULL},
    {"device.cuda_context_mib", XS_F_NUM, 0, 0, 65536, 1, NULL,
     offsetof(xs_scenario, cuda_context_mib), 0,
     "device memory in MiB the framework's CUDA context and loaded kernels take before the "
     "first tensor, outside PyTorch's allocator (nvidia-smi's 'used' after torch.ones(1).cuda()); "
     "absent: by host.framework, 1343 for pytorch-1.8 (CUDA < 11.7: every kernel loaded at "
     "start; huggingface/transformers docs model_memory_anatomy.md, a V100), 636 for "
     "pytorch-1.13 (eager module loading, pytorch/pytorch#86509), 400 for pytorch-2 or "
     "unstated (lazy loading, pytorch/pytorch#109888)", NULL},
    {"host.framework", XS_F_ENUM, 0, 0, 0, 0, XS_FRAMEWORK_CHOICES,
     offsetof(xs_scenario, host.framework), 0,
     "optional: the PyTorch era the host figures default to (sim/host.c): pytorch-1.8 "
     "(1.5-1.8: every nn.Module call walks its hook dicts, 2.17 us a call, "
     "pytorch/pytorch#50431), pytorch-1.13 (1.9-1.13) or pytorch-2 (2.x eager): the no-hooks "
     "fast path (pytorch/pytorch#52576), its time unpublished, so module calls are not "
     "priced unless host.module_us says; unstated (or absent): the era-free per-op figures", NULL},
    HOST("host.module_us", host.module_us, 1000,
         "host us of one nn.Module call around its forward's ops (default by host.framework: "
         "2.17 for pytorch-1.8, pytorch/pytorch#50431; 0, not priced, for later eras)"),
    HOST("host.python_us", host.python_us, 1000,
         "host us of the Python call and argument parsing of one torch op (default 1.0: "
         "pytorch/pytorch#41383)"),
    HOST("host.dispatch_us", host.dispatch_us, 1000,
         "host us of the C++ dispatcher and op set-up of one op, no Python (default 1.0: "
         "pytorch/pytorch#41383)"),
    HOST("host.autograd_us", host.autograd_us, 1000,
         "host us to record the autograd node of a forward op (default 1.8: 6.8 - 5.0 us, "
         "pytorch/pytorch#41383)"),
    HOST("host.launch_us", host.launch_us, 1000,
         "host us of one cudaLaunchKernel (default 1.3: meta-pytorch/tritonbench#1016)"),
    /* every host cost divides by it: a floor keeps 1e-320 from making them
     * infinite; a hundredfold either way is past any CPU of the era */
    {"host.cpu_scale", XS_F_NUM, 0, 0.01, 100, 0, NULL, offsetof(xs_scenario, host.cpu_scale), 0,
         "the host CPU's single-thread speed relative to the CPUs the defaults were measured "
         "on (default 1, from 0.01 to 100; those CPUs are unpublished, so no class has a "
         "sourced default); every host cost divides by it. Same PyTorch code on two hosts: a Grace (GH200, GB200) "
         "host ran an nn.Linear forward at 0.41 and 0.36 of a Xeon Platinum 8480C's speed "
         "(NVIDIA/TransformerEngine#2053)", NULL},
    {"host.note", XS_F_STR, 0, 0, 0, 0, NULL, XS_NOSTORE, 4096,
     "where the host figures come from", NULL},
};

const xs_field *xs_scn_fields(size_t *n)
{
    *n = sizeof SCENARIO_FIELDS / sizeof SCENARIO_FIELDS[0];
    return SCENARIO_FIELDS;
}

int64_t xs_model_vit_seq(const xs_model *m)
{
    if (m->image_size < 1 || m->patch_size < 1)
        return 0;
    int64_t side = m->image_size / m->patch_size;
    return side * side + 1;
}

int64_t xs_model_kv_heads(const xs_model *m)
{
    return m->kv_heads > 0 ? m->kv_heads : m->heads;
}

int64_t xs_model_decoder_layers(const xs_model *m)
{
    return m->decoder_layers > 0 ? m->decoder_layers : m->layers;
}

const char *xs_precision_name(int p)
{
    static const char *names[] = {"fp32", "tf32", "amp_fp16", "amp_bf16", "bf16", "fp8"};
    return p >= 0 && p < 6 ? names[p] : "?";
}

int xs_train_optimizer(const xs_train *t, int *fused)
{
    int o = t->optimizer;
    if ((t->precision == XS_P_FP32 || t->precision == XS_P_TF32) && t->fp32_optimizer > 0)
        o = t->fp32_optimizer - 1;
    *fused = o == XS_OPT_BERTADAM ? 0 : t->fused_optimizer;
    return o;
}

void xs_scn_host(const xs_scenario *s, xs_host *h)
{
    xs_host given = s->host;
    given.flat_us = s->train.host_op_us;
    xs_host_resolve(&given, h);
}

int xs_train_optimizer_impl(const xs_train *t)
{
    int fused;
    int o = xs_train_optimizer(t, &fused);
    if (o == XS_OPT_BERTADAM)
        return XS_OPT_IMPL_FOR_LOOP;
    if (t->optimizer_impl != XS_OPT_IMPL_AUTO)
        return t->optimizer_impl;
    return fused ? XS_OPT_IMPL_MULTI_TENSOR : XS_OPT_IMPL_FOR_LOOP;
}

const char *xs_optimizer_name(int o)
{
    static const char *names[] = {"sgd", "adam", "adamw", "adan", "bertadam"};
    return o >= 0 && o <= XS_OPT_BERTADAM ? names[o] : "?";
}

const char *xs_sharding_name(int sharding)
{
    static const char *names[] = {"none", "zero1", "zero2", "fsdp", "fsdp_grad_op"};
    return sharding >= 0 && sharding <= XS_SHARD_FSDP_GRAD_OP ? names[sharding] : "?";
}

static const xs_field *find_field(const char *path)
{
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].path, path) == 0)
            return &f[i];
    return NULL;
}

/* Put value at dotted path in root, creating objects on the way. */
static int set_path(cJSON *root, const char *path, cJSON *value)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    cJSON *cur = root;
    char *part = buf;
    for (char *dot; (dot = strchr(part, '.')); part = dot + 1) {
        *dot = '\0';
        cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, part);
        if (!next) {
            next = cJSON_AddObjectToObject(cur, part);
            if (!next)
                return -1;
        } else if (!cJSON_IsObject(next)) {
            return -1;
        }
        cur = next;
    }
    if (cJSON_GetObjectItemCaseSensitive(cur, part))
        return cJSON_ReplaceItemInObjectCaseSensitive(cur, part, value) ? 0 : -1;
    return cJSON_AddItemToObject(cur, part, value) ? 0 : -1;
}

/* An unknown --set key, with the nearest known key when one is close. */
static int unknown_key(const char *kv, const char *key, xs_error *err)
{
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    const char **paths = malloc(n * sizeof *paths);
    const char *near = NULL;
    if (paths) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(f[i].path, "id") != 0 && f[i].type != XS_F_OBJ)
                paths[k++] = f[i].path;
        near = xs_suggest(key, paths, k);
    }
    free(paths);
    if (near)
        return xs_error_set(err, XS_EARG,
                            "--set %s: unknown key '%s'; did you mean '%s'? (see `xpusim "
                            "predict --help` for the keys)",
                            kv, key, near);
    return xs_error_set(err, XS_EARG,
                        "--set %s: unknown key '%s' (see `xpusim predict --help` for the keys)",
                        kv, key);
}

/* [-]digits and nothing else: no blanks, exponent, point or hex. */
static int is_decimal_integer(const char *text)
{
    const char *p = text + (*text == '-');
    if (!*p)
        return 0;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* One override "key=value" read and checked as its field takes it: the
 * field, and the value (owned by the caller). */
static int parse_override(const char *kv, const xs_field **field, cJSON **parsed,
                          xs_error *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return xs_error_set(err, XS_EARG, "--set %s: expected key=value, e.g. train.batch=32",
                            kv);
    char key[128];
    size_t klen = (size_t)(eq - kv);
    if (klen >= sizeof key)
        return xs_error_set(err, XS_EARG, "--set %s: key too long", kv);
    memcpy(key, kv, klen);
    key[klen] = '\0';
    const xs_field *f = find_field(key);
    if (!f || strcmp(key, "id") == 0 || f->type == XS_F_OBJ) /* notes are for files */
        return unknown_key(kv, key, err);
    /* A value is JSON when all of it parses as JSON (32, true, 0.1);
     * otherwise it is a bare string (amp_fp16), so users need no quotes,
     * and a number with anything after it ("64abc", "64,128") stays text
     * that the schema refuses. */
    const char *text = eq + 1;
    const char *end = NULL;
    cJSON *value = cJSON_ParseWithOpts(text, &end, 1);
    if (!value || cJSON_IsObject(value) || cJSON_IsArray(value)) {
        cJSON_Delete(value);
        value = cJSON_CreateString(text);
    }
    if (value && f->type == XS_F_INT && !is_decimal_integer(text)) {
        /* 6.4e1 or 64.0 for a count is a slip, not a way to write 64 */
        cJSON_Delete(value);
        char want[160];
        xs_schema_expect(f, want, sizeof want);
        return xs_error_set(err, XS_EFIELD, "--set %s: '%s' expects %s written in decimal digits, "
                                          "got '%s'",
                            kv, key, want, text);
    }
    if (!value)
        return xs_error_set(err, XS_ENOMEM, "--set %s: out of memory", kv);
    /* a file named on the command line is relative to where the user is,
     * not to the scenario file (which is what a path inside the file is
     * relative to) */
    char cwd[PATH_MAX], abs[2 * PATH_MAX];
    if (strcmp(key, "model.hf_config") == 0 && cJSON_IsString(value) && text[0] &&
        text[0] != '/' && getcwd(cwd, sizeof cwd)) {
        snprintf(abs, sizeof abs, "%s/%s", cwd, text);
        cJSON_Delete(value);
        if (!(value = cJSON_CreateString(abs)))
            return xs_error_set(err, XS_ENOMEM, "--set %s: out of memory", kv);
    }
    char where[160];
    snprintf(where, sizeof where, "--set %s", kv);
    int rc = xs_schema_check(f, value, where, err);
    if (rc) {
        cJSON_Delete(value);
        return rc;
    }
    *field = f;
    *parsed = value;
    return XS_OK;
}

static int apply_override(cJSON *root, const char *kv, xs_error *err)
{
    const xs_field *f;
    cJSON *value;
    int rc = parse_override(kv, &f, &value, err);
    if (rc)
        return rc;
    const char *key = f->path;
    if (set_path(root, key, value) != 0) {
        cJSON_Delete(value);
        return xs_error_set(err, XS_EARG, "--set %s: cannot set '%s' in the scenario", kv, key);
    }
    return XS_OK;
}

/* One Hugging Face key mapped onto a canonical model field. */
typedef struct {
    const char *canon;
    const char *hf;
    int required;
} hf_map;

static const hf_map HF_BERT[] = {
    {"layers", "num_hidden_layers", 1},   {"hidden", "hidden_size", 1},
    {"heads", "num_attention_heads", 1},  {"ffn", "intermediate_size", 1},
    {"vocab", "vocab_size", 1},           {"max_positions", "max_position_embeddings", 1},
    {"type_vocab", "type_vocab_size", 0}, {"activation", "hidden_act", 0},
    {"dropout", "hidden_dropout_prob", 0}, {"attn_dropout", "attention_probs_dropout_prob", 0},
};
static const hf_map HF_GPT2[] = {
    {"layers", "n_layer", 1},       {"hidden", "n_embd", 1},
    {"heads", "n_head", 1},         {"ffn", "n_inner", 0},
    {"vocab", "vocab_size", 1},     {"max_positions", "n_positions", 1},
    {"activation", "activation_function", 0}, {"dropout", "resid_pdrop", 0},
    {"attn_dropout", "attn_pdrop", 0},
};

/* LlamaConfig, MistralConfig and Qwen2Config (transformers'
 * models/{llama,mistral,qwen2}/configuration_*.py): the same shape keys.
 * rms_norm_eps, rope_theta and rope_scaling change values, not work, and
 * are not read. */
static const hf_map HF_LLAMA[] = {
    {"layers", "num_hidden_layers", 1},     {"hidden", "hidden_size", 1},
    {"heads", "num_attention_heads", 1},    {"ffn", "intermediate_size", 1},
    {"vocab", "vocab_size", 1},             {"max_positions", "max_position_embeddings", 1},
    {"kv_heads", "num_key_value_heads", 0}, {"activation", "hidden_act", 0},
    {"attn_dropout", "attention_dropout", 0}, {"tied", "tie_word_embeddings", 0},
    {"mlp_bias", "mlp_bias", 0},
};

/* ViTConfig (transformers' models/vit/configuration_vit.py,
 * huggingface/transformers@04ae75715f2cca2d87bbaf07c1d8e9fb2ab20bfd): every
 * key has a default (hf_default). num_labels and id2label are read by
 * vit_import. */
static const hf_map HF_VIT[] = {
    {"layers", "num_hidden_layers", 0},   {"hidden", "hidden_size", 0},
    {"heads", "num_attention_heads", 0},  {"ffn", "intermediate_size", 0},
    {"activation", "hidden_act", 0},      {"dropout", "hidden_dropout_prob", 0},
    {"attn_dropout", "attention_probs_dropout_prob", 0},
    {"image_size", "image_size", 0},      {"patch_size", "patch_size", 0},
    {"channels", "num_channels", 0},      {"qkv_bias", "qkv_bias", 0},
};

/* T5Config (huggingface/transformers@2678947a26f82a3cfed465026a0f5a7798ba84b2:
 * src/transformers/models/t5/configuration_t5.py: its __init__ defaults).
 * n_positions is no T5Config parameter and the model does not use it
 * (relative positions); the original checkpoints' configs carry 512, kept
 * as model.max_positions for the record (absent: 512).
 * relative_attention_max_distance, layer_norm_epsilon and
 * initializer_factor change values, not work, and are not read. */
static const hf_map HF_T5[] = {
    {"layers", "num_layers", 1},
    {"hidden", "d_model", 1},
    {"heads", "num_heads", 1},
    {"ffn", "d_ff", 1},
    {"vocab", "vocab_size", 1},
    {"max_positions", "n_positions", 0},
    {"decoder_layers", "num_decoder_layers", 0},
    {"relative_buckets", "relative_attention_num_buckets", 0},
    {"dropout", "dropout_rate", 0},
    {"attn_dropout", "dropout_rate", 0}, /* T5Attention drops its probabilities at dropout_rate */
    {"tied", "tie_word_embeddings", 0},
};

/* The model_types import_hf reads, the family each builds. */
static const struct {
    const char *type;
    int gpt2, llama, vit, t5;
} HF_TYPES[] = {
    {"bert", 0, 0, 0, 0},  {"roberta", 0, 0, 0, 0}, {"gpt2", 1, 0, 0, 0},
    {"llama", 0, 1, 0, 0}, {"mistral", 0, 1, 0, 0}, {"qwen2", 0, 1, 0, 0},
    {"vit", 0, 0, 1, 0},   {"t5", 0, 0, 0, 1},
};
#define HF_TYPE_LIST "bert|roberta|gpt2|llama|mistral|qwen2|distilbert|vit|t5"

/* Defaults of the transformers library for keys a config.json may omit, so
 * that an imported config means what it means to transformers. */
static cJSON *hf_default(const char *canon, const cJSON *hf, int gpt2, int llama, int vit,
                         int t5)
{
    if (vit) { /* ViTConfig.__init__'s defaults */
        static const struct {
            const char *canon;
            double v;
        } num[] = {{"layers", 12},        {"hidden", 768},      {"heads", 12},
                   {"ffn", 3072},         {"dropout", 0},       {"attn_dropout", 0},
                   {"image_size", 224},   {"patch_size", 16},   {"channels", 3}};
        for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
            if (strcmp(canon, num[i].canon) == 0)
                return cJSON_CreateNumber(num[i].v);
        if (strcmp(canon, "activation") == 0)
            return cJSON_CreateString("gelu");
        if (strcmp(canon, "qkv_bias") == 0)
            return cJSON_CreateTrue();
        return NULL;
    }
    if (t5) { /* T5Config.__init__'s defaults */
        if (strcmp(canon, "max_positions") == 0) /* the original configs' n_positions */
            return cJSON_CreateNumber(512);
        if (strcmp(canon, "decoder_layers") == 0) /* None: num_layers */
            return cJSON_CreateNumber(0);
        if (strcmp(canon, "relative_buckets") == 0)
            return cJSON_CreateNumber(32);
        if (strcmp(canon, "dropout") == 0 || strcmp(canon, "attn_dropout") == 0)
            return cJSON_CreateNumber(0.1);
        if (strcmp(canon, "tied") == 0) /* PretrainedConfig's tie_word_embeddings */
            return cJSON_CreateTrue();
        return NULL;
    }
    if (llama) { /* LlamaConfig.__init__'s defaults (Qwen2's and Mistral's agree) */
        if (strcmp(canon, "kv_heads") == 0) /* None: num_attention_heads */
            return cJSON_CreateNumber(0);
        if (strcmp(canon, "activation") == 0)
            return cJSON_CreateString("silu");
        if (strcmp(canon, "attn_dropout") == 0)
            return cJSON_CreateNumber(0);
        if (strcmp(canon, "tied") == 0 || strcmp(canon, "mlp_bias") == 0)
            return cJSON_CreateFalse();
        return NULL;
    }
    if (strcmp(canon, "ffn") == 0) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(hf, "n_embd");
        return cJSON_IsNumber(h) ? cJSON_CreateNumber(4 * h->valuedouble) : NULL;
    }
    if (strcmp(canon, "activation") == 0)
        return cJSON_CreateString(gpt2 ? "gelu_new" : "gelu");
    if (strcmp(canon, "dropout") == 0 || strcmp(canon, "attn_dropout") == 0)
        return cJSON_CreateNumber(0.1);
    if (strcmp(canon, "type_vocab") == 0)
        return cJSON_CreateNumber(2);
    return NULL;
}

/* Put key into model unless the scenario (or a --set) gives it. */
static int put_default(cJSON *model, const char *key, cJSON *v)
{
    if (!v)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(model, key)) {
        cJSON_Delete(v);
        return 0;
    }
    cJSON_AddItemToObject(model, key, v);
    return 0;
}

/* The llama family's keys that are not plain copies, and those that would
 * change the op list in ways not modelled, refused by name (a config.json
 * is never half-read). Read against transformers' modeling_llama.py,
 * modeling_mistral.py and modeling_qwen2.py
 * (huggingface/transformers@5dd4a63548857797727ae73eeb6a6e886ea02a3e):
 * Qwen2Attention builds q_proj, k_proj and v_proj with bias=True and o_proj
 * without, whatever the config says; Llama's attention_bias puts a bias on
 * all four; Mistral has none. */
static int llama_import(cJSON *model, const cJSON *hf, const char *type, const char *path,
                        xs_error *err)
{
    const cJSON *v;
    double heads = 0, hidden = 0;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "num_attention_heads")))
        heads = v->valuedouble;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "hidden_size")))
        hidden = v->valuedouble;
    v = cJSON_GetObjectItemCaseSensitive(hf, "head_dim");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && heads > 0 && v->valuedouble * heads == hidden))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'head_dim' must equal hidden_size / num_attention_heads "
                            "(a head size of its own is not modelled)",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "pretraining_tp");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble == 1))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'pretraining_tp' must be 1 (the sliced projections "
                            "of pretraining_tp > 1 are not modelled)",
                            path);
    /* newer configs list each layer's attention; all full is the plain layer */
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "layer_types")) && !cJSON_IsNull(v)) {
        int plain = cJSON_IsArray(v);
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        plain = plain && cJSON_IsString(e) && strcmp(e->valuestring, "full_attention") == 0;
        if (!plain)
            return xs_error_set(err, XS_EUNSUPPORTED,
                                "%s: field 'layer_types' must list only \"full_attention\" "
                                "(per-layer sliding windows are not modelled)",
                                path);
    }
    static const char *const refused[] = {"quantization_config", "num_local_experts",
                                          "num_experts"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if ((v = cJSON_GetObjectItemCaseSensitive(hf, refused[i])) && !cJSON_IsNull(v))
            return xs_error_set(err, XS_EUNSUPPORTED,
                                "%s: field '%s' is not modelled (it changes the op list); "
                                "remove it to model the plain %s layer",
                                path, refused[i], type);
    const char *hidden_act = "silu";
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "hidden_act")) && cJSON_IsString(v))
        hidden_act = v->valuestring;
    if (strcmp(hidden_act, "silu") != 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'hidden_act' must be \"silu\" (the gated MLP is "
                            "modelled with SiLU), got \"%s\"",
                            path, hidden_act);
    const char *bias = "none";
    if (strcmp(type, "qwen2") == 0) {
        bias = "qkv";
    } else if (strcmp(type, "llama") == 0) {
        v = cJSON_GetObjectItemCaseSensitive(hf, "attention_bias");
        if (v && !cJSON_IsNull(v) && !cJSON_IsBool(v))
            return xs_error_set(err, XS_EFIELD, "%s: field 'attention_bias' must be true or false",
                                path);
        bias = cJSON_IsTrue(v) ? "all" : "none";
    }
    /* Mistral's sliding_window bounds every layer's attention; Qwen2's
     * only where use_sliding_window is true, from max_window_layers on */
    double window = 0;
    v = cJSON_GetObjectItemCaseSensitive(hf, "use_sliding_window");
    if (strcmp(type, "qwen2") == 0 && cJSON_IsTrue(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'use_sliding_window' true is not modelled (Qwen2's "
                            "per-layer windows); set it false",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "sliding_window");
    if (strcmp(type, "mistral") == 0 && v && !cJSON_IsNull(v)) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 1)
            return xs_error_set(err, XS_EFIELD,
                                "%s: field 'sliding_window' must be a positive integer or null",
                                path);
        window = v->valuedouble;
    }
    if (put_default(model, "family", cJSON_CreateString("llama")) ||
        put_default(model, "attention_bias", cJSON_CreateString(bias)) ||
        put_default(model, "sliding_window", cJSON_CreateNumber(window)) ||
        put_default(model, "dropout", cJSON_CreateNumber(0)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    return XS_OK;
}

/* T5's keys that are not plain copies, and those that would change the op
 * list in ways not modelled, refused by name. Read against transformers'
 * configuration_t5.py and modeling_t5.py
 * (huggingface/transformers@6b8b757dfcb582379a64f013cdce46c43629f2b0):
 * feed_forward_proj is "[gated-]act"; "gated-gelu" means gelu_new (newer
 * configuration_t5.py, "for backwards compatibility"; team code index,
 * find_string id 3755908106); the
 * attention projects d_model onto num_heads x d_kv (inner_dim), which is
 * modelled only where it equals d_model (t5-small to t5-large, v1.1 base
 * and large; not t5-3b or t5-11b). */
static int t5_import(cJSON *model, const cJSON *hf, const char *path, xs_error *err)
{
    const cJSON *v;
    double heads = 0, d_model = 0, d_kv = 64; /* T5Config's d_kv default */
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "num_heads")))
        heads = v->valuedouble;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(hf, "d_model")))
        d_model = v->valuedouble;
    v = cJSON_GetObjectItemCaseSensitive(hf, "d_kv");
    if (v && !cJSON_IsNull(v)) {
        if (!cJSON_IsNumber(v))
            return xs_error_set(err, XS_EFIELD, "%s: field 'd_kv' must be a positive integer",
                                path);
        d_kv = v->valuedouble;
    }
    if (heads > 0 && d_model > 0 && d_kv * heads != d_model)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'd_kv' x num_heads (%g x %g) must equal d_model (%g) "
                            "(an attention width of its own is not modelled)",
                            path, d_kv, heads, d_model);
    const char *proj = "relu";
    v = cJSON_GetObjectItemCaseSensitive(hf, "feed_forward_proj");
    if (v && !cJSON_IsNull(v)) {
        if (!cJSON_IsString(v))
            return xs_error_set(err, XS_EFIELD, "%s: field 'feed_forward_proj' must be a string",
                                path);
        proj = v->valuestring;
    }
    const char *act = strcmp(proj, "relu") == 0         ? "relu"
                      : strcmp(proj, "gelu") == 0       ? "gelu"
                      : strcmp(proj, "gated-gelu") == 0 ? "gelu_new"
                                                        : NULL;
    if (!act)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'feed_forward_proj' must be \"relu\", \"gelu\" or "
                            "\"gated-gelu\" (the FFNs modelled), got \"%s\"",
                            path, proj);
    int gated = strncmp(proj, "gated-", 6) == 0;
    /* configs saved by newer transformers also hold what T5Config derives */
    v = cJSON_GetObjectItemCaseSensitive(hf, "dense_act_fn");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsString(v) && strcmp(v->valuestring, act) == 0))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'dense_act_fn' must be \"%s\", what feed_forward_proj "
                            "\"%s\" implies (another activation is not modelled)",
                            path, act, proj);
    v = cJSON_GetObjectItemCaseSensitive(hf, "is_gated_act");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsBool(v) && cJSON_IsTrue(v) == gated))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'is_gated_act' must be %s, what feed_forward_proj \"%s\" "
                            "implies",
                            path, gated ? "true" : "false", proj);
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "quantization_config")) && !cJSON_IsNull(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'quantization_config' is not modelled (it changes the op "
                            "list); remove it to model the plain t5 layers",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "is_encoder_decoder");
    if (v && !cJSON_IsNull(v) && !cJSON_IsTrue(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'is_encoder_decoder' must be true (T5ForConditionalGeneration; "
                            "an encoder alone is not modelled)",
                            path);
    if (put_default(model, "family", cJSON_CreateString("t5")) ||
        put_default(model, "arch", cJSON_CreateString("encoder_decoder")) ||
        put_default(model, "type_vocab", cJSON_CreateNumber(0)) ||
        put_default(model, "activation", cJSON_CreateString(act)) ||
        put_default(model, "gated_ffn", cJSON_CreateBool(gated)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    return XS_OK;
}

/* DistilBertConfig (transformers' models/distilbert/configuration_distilbert.py,
 * huggingface/transformers@e04dc16368f2d155dab81a0914c2277c5bf02a26): its
 * own key names, and its defaults for the optional ones. */
static const hf_map HF_DISTILBERT[] = {
    {"layers", "n_layers", 1},   {"hidden", "dim", 1},
    {"heads", "n_heads", 1},     {"ffn", "hidden_dim", 1},
    {"vocab", "vocab_size", 1},  {"max_positions", "max_position_embeddings", 1},
    {"activation", "activation", 0}, {"dropout", "dropout", 0},
    {"attn_dropout", "attention_dropout", 0},
};

static cJSON *distilbert_default(const char *canon)
{
    if (strcmp(canon, "activation") == 0)
        return cJSON_CreateString("gelu");
    if (strcmp(canon, "dropout") == 0 || strcmp(canon, "attn_dropout") == 0)
        return cJSON_CreateNumber(0.1);
    return NULL;
}

/* A DistilBERT config.json, read as transformers' modeling_distilbert.py
 * builds the model (huggingface/transformers@e368c1a8819d54720956961ea7cd47d99239bd39
 * and, for transformers 5, modular_distilbert.py @c27dd37e008f45528388f6cac5df486f3d5d176e):
 * word and learned position embeddings, no token types. The task head's
 * dropout is seq_classif_dropout (DistilBertForSequenceClassification,
 * default 0.2) or qa_dropout (DistilBertForQuestionAnswering, default 0.1),
 * by model.head. sinusoidal_pos_embds true fills the position table with
 * fixed values that transformers' versions disagree on freezing, and
 * chunk_size_feed_forward splits the FFN into chunks: both refused by
 * name. tie_weights_ and initializer_range change values, not work. */
static int distilbert_import(cJSON *model, const cJSON *hf, const char *path, xs_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, "sinusoidal_pos_embds");
    if (v && !cJSON_IsNull(v) && !cJSON_IsBool(v))
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'sinusoidal_pos_embds' must be true or false", path);
    if (cJSON_IsTrue(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'sinusoidal_pos_embds' true is not modelled (a fixed "
                            "sinusoidal position table); set it false (learned positions)",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "chunk_size_feed_forward");
    if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'chunk_size_feed_forward' must be 0 (an FFN run in "
                            "chunks is not modelled)",
                            path);
    const cJSON *head = cJSON_GetObjectItemCaseSensitive(model, "head");
    const char *h = cJSON_IsString(head) ? head->valuestring : "";
    const char *drop_key = strcmp(h, "cls") == 0 ? "seq_classif_dropout"
                           : strcmp(h, "span") == 0 ? "qa_dropout"
                                                    : NULL;
    if (drop_key && !cJSON_GetObjectItemCaseSensitive(model, "head_dropout")) {
        v = cJSON_GetObjectItemCaseSensitive(hf, drop_key);
        if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble >= 0 &&
                                       v->valuedouble <= 0.99))
            return xs_error_set(err, XS_EFIELD,
                                "%s: field '%s' must be a number from 0 to 0.99", path,
                                drop_key);
        double p = v && !cJSON_IsNull(v) ? v->valuedouble : strcmp(h, "cls") == 0 ? 0.2 : 0.1;
        cJSON_AddNumberToObject(model, "head_dropout", p);
    }
    if (put_default(model, "family", cJSON_CreateString("distilbert")) ||
        put_default(model, "arch", cJSON_CreateString("encoder")) ||
        put_default(model, "type_vocab", cJSON_CreateNumber(0)))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    size_t n = sizeof HF_DISTILBERT / sizeof HF_DISTILBERT[0];
    for (size_t i = 0; i < n; i++) {
        if (cJSON_GetObjectItemCaseSensitive(model, HF_DISTILBERT[i].canon))
            continue; /* a key beside hf_config (or a --set) wins */
        v = cJSON_GetObjectItemCaseSensitive(hf, HF_DISTILBERT[i].hf);
        cJSON *copy = v && !cJSON_IsNull(v) ? cJSON_Duplicate(v, 1)
                                             : distilbert_default(HF_DISTILBERT[i].canon);
        if (!copy)
            return xs_error_set(err, XS_EFIELD, "%s: missing required field '%s' (model.%s)",
                                path, HF_DISTILBERT[i].hf, HF_DISTILBERT[i].canon);
        cJSON_AddItemToObject(model, HF_DISTILBERT[i].canon, copy);
    }
    return XS_OK;
}

/* A ViTConfig size: an integer, or transformers' [height, width] pair
 * when both are equal (non-square images and patches are not modelled). */
static int vit_size(cJSON *model, const cJSON *hf, const char *key, const char *canon,
                    const char *path, xs_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, key);
    if (!v || cJSON_IsNull(v) || cJSON_IsNumber(v))
        return XS_OK; /* the map copies it; the schema checks it */
    const cJSON *a = cJSON_GetArrayItem(v, 0), *b = cJSON_GetArrayItem(v, 1);
    if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 && cJSON_IsNumber(a) &&
        cJSON_IsNumber(b) && a->valuedouble == b->valuedouble) {
        if (put_default(model, canon, cJSON_CreateNumber(a->valuedouble)))
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        return XS_OK;
    }
    return xs_error_set(err, XS_EUNSUPPORTED,
                        "%s: field '%s' must be an integer or an [n, n] pair (non-square "
                        "images and patches are not modelled)",
                        path, key);
}

/* ViTForImageClassification as transformers' modeling_vit.py builds it
 * (huggingface/transformers@005db8208dee358fe8fe63ae3cc49dd054aad48d):
 * what the scenario needs besides the plain copies, and the keys that
 * would change the op list in ways not modelled, refused by name.
 * layer_norm_eps and initializer_range change values, not work;
 * encoder_stride sizes only ViTForMaskedImageModeling's decoder, and
 * pooler_output_size / pooler_act only ViTPooler, which the classification
 * model does not build (add_pooling_layer=False): all accepted unread. The
 * classifier's width is num_labels, which PretrainedConfig derives from
 * id2label when the file lists labels. */
static int vit_import(cJSON *model, const cJSON *hf, const char *path, xs_error *err)
{
    const cJSON *v;
    int rc = vit_size(model, hf, "image_size", "image_size", path, err);
    if (!rc)
        rc = vit_size(model, hf, "patch_size", "patch_size", path, err);
    if (rc)
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(hf, "quantization_config")) && !cJSON_IsNull(v))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'quantization_config' is not modelled (it changes the op "
                            "list); remove it to model the plain vit layer",
                            path);
    v = cJSON_GetObjectItemCaseSensitive(hf, "problem_type");
    if (v && !cJSON_IsNull(v) &&
        !(cJSON_IsString(v) && strcmp(v->valuestring, "single_label_classification") == 0))
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'problem_type' must be \"single_label_classification\" "
                            "or null (cross-entropy; regression and multi-label losses are "
                            "not modelled)",
                            path);
    double labels = 0;
    const cJSON *id2label = cJSON_GetObjectItemCaseSensitive(hf, "id2label");
    const cJSON *num = cJSON_GetObjectItemCaseSensitive(hf, "num_labels");
    if (id2label && !cJSON_IsNull(id2label)) {
        if (!cJSON_IsObject(id2label))
            return xs_error_set(err, XS_EFIELD,
                                "%s: field 'id2label' must be an object of labels", path);
        labels = cJSON_GetArraySize(id2label);
    }
    if (num && !cJSON_IsNull(num)) {
        if (!cJSON_IsNumber(num))
            return xs_error_set(err, XS_EFIELD, "%s: field 'num_labels' must be an integer",
                                path);
        if (labels > 0 && num->valuedouble != labels)
            return xs_error_set(err, XS_EFIELD,
                                "%s: field 'num_labels' (%g) must equal the %g labels of "
                                "'id2label'",
                                path, num->valuedouble, labels);
        labels = num->valuedouble;
    }
    if (labels == 1)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: one label is a regression (MSELoss), not modelled; the "
                            "classifier needs 2 or more labels",
                            path);
    if (put_default(model, "family", cJSON_CreateString("vit")) ||
        put_default(model, "head", cJSON_CreateString("cls")) ||
        (labels > 0 && put_default(model, "labels", cJSON_CreateNumber(labels))))
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    return XS_OK;
}

/* The model keys of hf (a Hugging Face config.json read from path) put
 * into model where the scenario does not give them. */
static int import_hf_doc(cJSON *model, const cJSON *hf, const char *path, xs_error *err)
{
    int rc = XS_OK;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(hf, "model_type");
    const char *t = cJSON_IsString(type) ? type->valuestring : NULL;
    if (t && strcmp(t, "distilbert") == 0)
        return distilbert_import(model, hf, path, err);
    int known = -1;
    for (size_t i = 0; t && i < sizeof HF_TYPES / sizeof HF_TYPES[0]; i++)
        if (strcmp(t, HF_TYPES[i].type) == 0)
            known = (int)i;
    if (known < 0)
        return xs_error_set(err, XS_EUNSUPPORTED,
                            "%s: field 'model_type' must be one of " HF_TYPE_LIST ", got %s%s%s",
                            path, t ? "\"" : "", t ? t : "nothing", t ? "\"" : "");
    int gpt2 = HF_TYPES[known].gpt2, llama = HF_TYPES[known].llama;
    int vit = HF_TYPES[known].vit, t5 = HF_TYPES[known].t5;
    if ((llama && (rc = llama_import(model, hf, t, path, err)) != XS_OK) ||
        (vit && (rc = vit_import(model, hf, path, err)) != XS_OK) ||
        (t5 && (rc = t5_import(model, hf, path, err)) != XS_OK))
        return rc;
    const hf_map *map = vit ? HF_VIT : t5 ? HF_T5 : llama ? HF_LLAMA : gpt2 ? HF_GPT2 : HF_BERT;
    size_t n = vit    ? sizeof HF_VIT / sizeof *map
               : t5    ? sizeof HF_T5 / sizeof *map
               : llama ? sizeof HF_LLAMA / sizeof *map
               : gpt2  ? sizeof HF_GPT2 / sizeof *map
                       : sizeof HF_BERT / sizeof *map;
    if (!cJSON_GetObjectItemCaseSensitive(model, "arch"))
        cJSON_AddStringToObject(model, "arch", gpt2 || llama ? "decoder" : "encoder");
    if ((gpt2 || llama || vit) && !cJSON_GetObjectItemCaseSensitive(model, "type_vocab"))
        cJSON_AddNumberToObject(model, "type_vocab", 0);
    for (size_t i = 0; i < n && rc == XS_OK; i++) {
        if (cJSON_GetObjectItemCaseSensitive(model, map[i].canon))
            continue; /* a key beside hf_config (or a --set) wins */
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(hf, map[i].hf);
        cJSON *copy = v && !cJSON_IsNull(v) ? cJSON_Duplicate(v, 1)
                                             : hf_default(map[i].canon, hf, gpt2, llama, vit, t5);
        if (!copy) {
            rc = xs_error_set(err, XS_EFIELD, "%s: missing required field '%s' (model.%s)",
                              path, map[i].hf, map[i].canon);
            break;
        }
        cJSON_AddItemToObject(model, map[i].canon, copy);
    }
    return rc;
}

/* Import model.hf_config (relative to the scenario's folder). lend, a
 * cache holding that file's document, stands in for the file (read only,
 * so threads share it); an empty fill keeps the document read. */
static int import_hf(cJSON *model, const char *scn_path, const xs_hf_cache *lend,
                     xs_hf_cache *fill, xs_error *err)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(model, "hf_config");
    if (!ref)
        return XS_OK;
    if (!cJSON_IsString(ref) || !ref->valuestring[0])
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'model.hf_config' must be a path to a config.json",
                            scn_path);
    char dir[1024], path[sizeof((xs_hf_cache *)0)->path];
    xs_dirname(scn_path, dir, sizeof dir);
    if (ref->valuestring[0] == '/')
        snprintf(path, sizeof path, "%s", ref->valuestring);
    else
        snprintf(path, sizeof path, "%s/%s", dir, ref->valuestring);
    if (lend && lend->doc && strcmp(lend->path, path) == 0)
        return import_hf_doc(model, lend->doc, path, err);
    cJSON *hf = NULL;
    int rc = xs_json_load(path, &hf, err);
    if (rc)
        return rc;
    rc = import_hf_doc(model, hf, path, err);
    if (fill && !fill->doc) {
        fill->doc = hf;
        snprintf(fill->path, sizeof fill->path, "%s", path);
    } else {
        cJSON_Delete(hf);
    }
    return rc;
}

/* The value at path when the schema would take it, else NULL (the schema
 * then reports it). */
static const cJSON *valid_value(const cJSON *root, const char *path)
{
    const xs_field *f = find_field(path);
    const cJSON *v = xs_json_path(root, path);
    xs_error ignored;
    return f && v && xs_schema_check(f, v, "", &ignored) == XS_OK ? v : NULL;
}

/* The vit family's sequence is its patches and the class token: train.seq
 * and model.max_positions (ViTEmbeddings' position table, num_patches + 1
 * rows) follow from model.image_size and model.patch_size when absent
 * (check_family refuses other values), and model.vocab, which no table of
 * a ViT has, is 1 when absent. */
static int vit_complete(cJSON *root, xs_error *err)
{
    const cJSON *family = valid_value(root, "model.family");
    const cJSON *image = valid_value(root, "model.image_size");
    const cJSON *patch = valid_value(root, "model.patch_size");
    if (!family || strcmp(family->valuestring, "vit") != 0 || !image || !patch ||
        patch->valuedouble < 1)
        return XS_OK;
    double side = floor(image->valuedouble / patch->valuedouble), seq = side * side + 1;
    static const char *const keys[] = {"train.seq", "model.max_positions", "model.vocab"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (xs_json_path(root, keys[i]))
            continue;
        cJSON *v = cJSON_CreateNumber(i < 2 ? seq : 1);
        if (!v || set_path(root, keys[i], v)) {
            cJSON_Delete(v);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
    }
    return XS_OK;
}

/* The defaults that depend on other keys (scenario.h), put into the
 * document before it is checked, so that --set and an imported
 * config.json count:
 * train.seq: what the Hugging Face example script of model.head pads or
 * cuts every sample to (run_clm.py's block_size min(1024, the positions),
 * huggingface/transformers@00d481d18f914b55e65faa31e82321629691eadb; run_qa.py's
 * max_seq_length 384 @03ea97ae17f461340572ce7c7250b22d7a146893; run_glue.py's 128
 * @0055f834470c4662897181543b27d8cf8c50b9d6), within model.max_positions;
 * train.optimizer_impl: foreach, torch.optim's choice on CUDA, when neither
 * it nor train.fused_optimizer is given and the optimizer is adam or adamw
 * (a file that states fused_optimizer keeps auto, its meaning before). A
 * key they need that is absent or bad is left for the schema to report. */
int xs_scn_complete(cJSON *root, xs_error *err)
{
    const cJSON *train = cJSON_GetObjectItemCaseSensitive(root, "train");
    if (train && !cJSON_IsObject(train))
        return XS_OK;
    int rc = vit_complete(root, err);
    if (rc)
        return rc;
    const cJSON *head = valid_value(root, "model.head");
    const cJSON *maxpos = valid_value(root, "model.max_positions");
    const cJSON *family = valid_value(root, "model.family");
    int t5 = family && strcmp(family->valuestring, "t5") == 0;
    cJSON *add_seq = NULL, *add_impl = NULL;
    if (!xs_json_path(root, "train.seq") && t5) {
        /* run_summarization.py's max_source_length 1024 (relative positions:
         * n_positions does not cap it) */
        if (!(add_seq = cJSON_CreateNumber(1024)))
            return xs_error_set(err, XS_ENOMEM, "out of memory");
    } else if (!xs_json_path(root, "train.seq") && head && maxpos) {
        static const double by_head[] = {384, 1024, 128}; /* XS_HEAD_CHOICES order */
        double seq = by_head[xs_choice_index(XS_HEAD_CHOICES, head->valuestring)];
        add_seq = cJSON_CreateNumber(seq < maxpos->valuedouble ? seq : maxpos->valuedouble);
        if (!add_seq)
            return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    /* run_summarization.py's max_target_length 128
     * (huggingface/transformers@2520420bd460a1bf5518b21bfe7f4b5ecd981a81:
     * examples/pytorch/summarization/run_summarization.py, DataTrainingArguments) */
    if (!xs_json_path(root, "train.target_seq") && t5) {
        cJSON *tq = cJSON_CreateNumber(128);
        if (!tq || set_path(root, "train.target_seq", tq)) {
            cJSON_Delete(tq);
            cJSON_Delete(add_seq);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
    }
    const cJSON *opt = valid_value(root, "train.optimizer");
    const char *o = opt ? opt->valuestring : find_field("train.optimizer")->def;
    if (!xs_json_path(root, "train.optimizer_impl") &&
        !xs_json_path(root, "train.fused_optimizer") &&
        (opt || !xs_json_path(root, "train.optimizer")) &&
        (strcmp(o, "adam") == 0 || strcmp(o, "adamw") == 0)) {
        add_impl = cJSON_CreateString("foreach");
        if (!add_impl) {
            cJSON_Delete(add_seq);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
    }
    /* train.lora.train_head: PEFT's task models add the head to
     * modules_to_save for sequence classification (classifier_module_names
     * ["classifier", "score"]) and question answering ({"qa_outputs"})
     * (huggingface/peft src/peft/peft_model.py, PeftModelForSequenceClassification
     * and PeftModelForQuestionAnswering; team code index, find_string ids
     * 270209158 and 43280701); a causal LM's head stays frozen */
    const cJSON *rank = valid_value(root, "train.lora.rank");
    if (!xs_json_path(root, "train.lora.train_head") && head && rank && rank->valuedouble > 0) {
        cJSON *th = cJSON_CreateBool(strcmp(head->valuestring, "lm") != 0);
        if (!th || set_path(root, "train.lora.train_head", th)) {
            cJSON_Delete(th);
            cJSON_Delete(add_seq);
            cJSON_Delete(add_impl);
            return xs_error_set(err, XS_ENOMEM, "out of memory");
        }
    }
    int failed = 0;
    if (add_seq && set_path(root, "train.seq", add_seq)) {
        cJSON_Delete(add_seq);
        failed = 1;
    }
    if (add_impl && set_path(root, "train.optimizer_impl", add_impl)) {
        cJSON_Delete(add_impl);
        failed = 1;
    }
    return failed ? xs_error_set(err, XS_ENOMEM, "out of memory") : XS_OK;
}

static int check_id(const xs_scenario *s, const char *path, xs_error *err)
{
    if (xs_is_stdin(path)) /* no file name to match */
        return XS_OK;
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strrchr(stem, '.');
    if (dot && strcmp(dot, ".json") == 0)
        *dot = '\0';
    if (strcmp(stem, s->id) != 0)
        return xs_error_set(err, XS_EFIELD,
                            "%s: field 'id' must equal the file name '%s', got \"%s\"", path,
                            stem, s->id);
    return XS_OK;
}

/* See scenario.h: the user looks at the right place. */
void xs_scn_name_sets(const char *const *overrides, int n, xs_error *err)
{
    if (!err || strncmp(err->msg, "--set ", 6) == 0)
        return; /* the override's own error already names it */
    char prefix[sizeof err->msg] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof prefix; i++) {
        const char *eq = strchr(overrides[i], '=');
        if (!eq)
            continue;
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - overrides[i]), overrides[i]);
        const char *leaf = strrchr(key, '.');
        const char *value = eq + 1; /* a file it names, say */
        if (strstr(err->msg, key) || (leaf && strstr(err->msg, leaf + 1)) ||
            (strlen(value) >= 4 && strstr(err->msg, value)))
            used += (size_t)snprintf(prefix + used, sizeof prefix - used, "--set %s: ",
                                     overrides[i]);
    }
    if (used == 0 || used >= sizeof prefix)
        return;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s%s", prefix, err->msg);
    memcpy(err->msg, msg, sizeof msg);
}

/* The keys that completing a scenario read (xs_json_path's hook): the
 * values its derived defaults depend on. */
static void note_read(const char *path, void *ctx)
{
    xs_scn_base *b = ctx;
    for (size_t i = 0; i < b->nread; i++)
        if (strcmp(b->read[i], path) == 0)
            return;
    if (b->nread == sizeof b->read / sizeof b->read[0] || strlen(path) >= sizeof b->read[0])
        b->read_all = 1; /* too many to tell: none is plain */
    else
        snprintf(b->read[b->nread++], sizeof b->read[0], "%s", path);
}

/* The scenario document at path with the n overrides applied. */
static int read_doc(const char *path, const char *const *overrides, int n, cJSON **out,
                    xs_error *err)
{
    cJSON *root = NULL;
    int rc = xs_json_load(path, &root, err);
    if (rc)
        return rc;
    if (!cJSON_IsObject(root))
        rc = xs_error_set(err, XS_EFIELD, "%s: the document must be a JSON object", path);
    else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "inference")))
        rc = xs_error_set(err, XS_EUNSUPPORTED,
                          "%s: an inference scenario (it has an \"inference\" section): "
                          "`xpusim threads -s %s` plans its thread counts; the other commands "
                          "take training scenarios",
                          path, path);
    for (int i = 0; i < n && rc == XS_OK; i++)
        rc = apply_override(root, overrides[i], err);
    if (rc == XS_OK) {
        *out = root;
    } else {
        cJSON_Delete(root);
        xs_scn_name_sets(overrides, n, err);
    }
    return rc;
}

/* A document with its overrides (taken: deleted here) to the scenario:
 * the Hugging Face config, the completion, the schema, the checks. reads:
 * the base whose completion reads are noted and whose hf cache is filled
 * (one thread); hf: a cache lent read only (any thread). */
static int finish(cJSON *root, const char *path, xs_scn_base *reads, const xs_hf_cache *hf,
                  xs_scenario *scn, xs_error *err)
{
    int rc = XS_OK;
    if (reads)
        xs_json_path_watch(note_read, reads);
    cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (cJSON_IsObject(model))
        rc = import_hf(model, path, hf, reads ? &reads->hf : NULL, err);
    if (rc == XS_OK)
        rc = xs_scn_complete(root, err);
    if (reads)
        xs_json_path_watch(NULL, NULL);
    xs_scenario s;
    memset(&s, 0, sizeof s);
    if (rc == XS_OK) {
        size_t nf;
        const xs_field *fields = xs_scn_fields(&nf);
        rc = xs_schema_apply_all(fields, nf, root, path, &s, err);
    }
    cJSON_Delete(root);
    if (rc == XS_OK)
        rc = check_id(&s, path, err);
    if (rc == XS_OK) {
        if (strlen(path) < sizeof s.source) /* else the gate names it by its id */
            memcpy(s.source, path, strlen(path) + 1);
        *scn = s;
    }
    return rc;
}

static int load(const char *path, const char *const *overrides, int n, xs_scenario *scn,
                xs_scn_base *reads, xs_error *err)
{
    cJSON *root = NULL;
    int rc = read_doc(path, overrides, n, &root, err);
    if (rc)
        return rc;
    if (reads && !(reads->doc = cJSON_Duplicate(root, 1))) {
        cJSON_Delete(root);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    rc = finish(root, path, reads, NULL, scn, err);
    if (rc != XS_OK)
        xs_scn_name_sets(overrides, n, err);
    return rc;
}

int xs_scn_load(const char *path, const char *const *overrides, int n, xs_scenario *scn,
                xs_error *err)
{
    return load(path, overrides, n, scn, NULL, err);
}

int xs_scn_open(const char *id_or_path, const char *const *overrides, int n, xs_scenario *scn,
                xs_error *err)
{
    char path[PATH_MAX];
    int rc = xs_resolve("scenarios", id_or_path, path, sizeof path, err);
    return rc ? rc : xs_scn_load(path, overrides, n, scn, err);
}

int xs_scn_base_open(const char *id_or_path, const char *const *overrides, int n,
                     xs_scn_base *b, xs_error *err)
{
    memset(b, 0, sizeof *b);
    int rc = xs_resolve("scenarios", id_or_path, b->path, sizeof b->path, err);
    if (rc == XS_OK && (rc = load(b->path, overrides, n, &b->s, b, err)) != XS_OK)
        xs_scn_base_free(b);
    return rc;
}

/* A key whose value is only its own field: not read by the completion
 * (which derives other keys' defaults from what it reads), not a model
 * key (a model's keys come from its Hugging Face config too), stored. */
static int plain_key(const xs_scn_base *b, const xs_field *f)
{
    if (b->read_all || f->offset == XS_NOSTORE || strncmp(f->path, "model.", 6) == 0)
        return 0;
    for (size_t i = 0; i < b->nread; i++)
        if (strcmp(b->read[i], f->path) == 0)
            return 0;
    return 1;
}

/* A variant whose keys other keys derive from (or model keys): the
 * base's document again, from memory, the overrides applied after its
 * own, and the rest of a load (the Hugging Face config from the base's
 * copy when it names the same file). Any refusal is XS_EARG: the caller
 * loads it whole for the loader's message. */
static int derived_variant(const xs_scn_base *b, const char *const *vary, int n,
                           xs_scenario *out)
{
    cJSON *root = b->doc ? cJSON_Duplicate(b->doc, 1) : NULL;
    xs_error ignored;
    int rc = root ? XS_OK : XS_EARG;
    for (int i = 0; i < n && rc == XS_OK; i++)
        rc = apply_override(root, vary[i], &ignored);
    if (rc != XS_OK) {
        cJSON_Delete(root);
        return XS_EARG;
    }
    return finish(root, b->path, NULL, &b->hf, out, &ignored) == XS_OK ? XS_OK : XS_EARG;
}

int xs_scn_variant(const xs_scn_base *b, const char *const *vary, int n, xs_scenario *out,
                   xs_error *err)
{
    xs_scenario s = b->s;
    int plain = 1;
    for (int i = 0; i < n && plain; i++) {
        const xs_field *f;
        cJSON *v;
        xs_error ignored;
        if (parse_override(vary[i], &f, &v, &ignored) != XS_OK)
            return XS_EARG; /* the caller loads it whole: the loader's message */
        if ((plain = plain_key(b, f)))
            xs_schema_store(f, v, &s);
        cJSON_Delete(v);
    }
    if (!plain)
        return derived_variant(b, vary, n, out);
    *out = s;
    (void)err;
    return XS_OK;
}

void xs_scn_base_free(xs_scn_base *b)
{
    if (!b)
        return;
    cJSON_Delete(b->doc);
    cJSON_Delete(b->hf.doc);
    b->doc = b->hf.doc = NULL;
}

int xs_scn_check_set(const char *kv, xs_error *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    int rc = apply_override(root, kv, err);
    cJSON_Delete(root);
    return rc;
}
