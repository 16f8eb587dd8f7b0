/* scenario_fields.c — the scenario's schema table (one row a key: path,
 * type, range, default, help; read, --set, --help and the template all
 * come from it) and the lookups of a scenario document by those paths. */
#include "scenario.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
    ENUM_DEF("train.timed", XS_TIMED_CHOICES, train.timed, "step",
             "what the prediction times: step (the default: the whole optimizer step, as a "
             "training loop runs it) or fwd_bwd (the model's forward and loss.backward() "
             "alone, as a kernel-level benchmark times them, NeuSight's among them: no "
             "optimizer step and no zero_grad, so each backward adds into the gradients and no "
             "optimizer state exists; the loss function's forward kernels (cross-entropy's "
             "log_softmax and nll_loss, the span and classification losses; not the logits' "
             "casts or shifts), train.loss_sync's read-back and the input loading fall outside "
             "the timed region)"),
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
     "(8 x 200 Gb/s HDR InfiniBand = 200), at least 0.01; required when the job spans several "
     "nodes (default 0: none, one node)",
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
     "optional: the PyTorch era the host figures default to (sim/io/stack.c): pytorch-1.8 "
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

const xs_field *xs_scn_field(const char *path)
{
    size_t n;
    const xs_field *f = xs_scn_fields(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].path, path) == 0)
            return &f[i];
    return NULL;
}

int xs_scn_doc_put(cJSON *root, const char *path, cJSON *value)
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

const cJSON *xs_scn_doc_value(const cJSON *root, const char *path)
{
    const xs_field *f = xs_scn_field(path);
    const cJSON *v = xs_json_path(root, path);
    xs_error ignored;
    return f && v && xs_schema_check(f, v, "", &ignored) == XS_OK ? v : NULL;
}

int xs_scn_doc_default(cJSON *root, const char *path, double value, xs_error *err)
{
    if (xs_json_path(root, path))
        return XS_OK;
    cJSON *v = cJSON_CreateNumber(value);
    if (!v || xs_scn_doc_put(root, path, v)) {
        cJSON_Delete(v);
        return xs_error_set(err, XS_ENOMEM, "out of memory");
    }
    return XS_OK;
}
