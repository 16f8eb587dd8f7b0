/* kernel_class.c — see kernel_class.h. A kernel name is read the way a
 * C++ demangler prints it: an optional return type ("void "), a qualified
 * name ("at::native::vectorized_elementwise_kernel"), template arguments
 * and a parameter list. Rules look at the kernel's own name, not at its
 * namespaces or template arguments, so a functor's namespace that happens
 * to say "gemm" or "cat" cannot pull a kernel into the wrong class; the
 * few rules that must read a template argument (which copy or loss a
 * generic ATen loop runs) match whole identifiers only. The kernels' real
 * names and where they were seen are listed in tests/test_kernel_class.c. */
#include "kernel_class.h"

#include <string.h>

#include "op.h"

const char *xs_kclass_name(int c)
{
    static const char *names[XS_KC_COUNT] = {"gemm",     "attention", "softmax", "norm",
                                             "elementwise", "copy",   "reduce",  "embed",
                                             "loss",     "optimizer", "comm",    "other"};
    return c >= 0 && c < XS_KC_COUNT ? names[c] : "?";
}

int xs_kclass_of_op(int kind)
{
    switch (kind) {
    case XS_OP_GEMM:
    case XS_OP_BGEMM: return XS_KC_GEMM;
    case XS_OP_ATTENTION: return XS_KC_ATTENTION;
    case XS_OP_SOFTMAX: return XS_KC_SOFTMAX;
    case XS_OP_NORM: return XS_KC_NORM;
    case XS_OP_CAST:
    case XS_OP_COPY: return XS_KC_COPY;
    case XS_OP_REDUCE: return XS_KC_REDUCE;
    case XS_OP_EMBED: return XS_KC_EMBED;
    case XS_OP_LOSS: return XS_KC_LOSS;
    case XS_OP_OPTIMIZER: return XS_KC_OPTIMIZER;
    case XS_OP_COMM: return XS_KC_COMM;
    default: return XS_KC_ELEMENTWISE;
    }
}

/* How a rule's pattern is compared... */
typedef enum {
    KM_PREFIX, /* the text starts with the pattern */
    KM_EXACT,  /* the text is the pattern */
    KM_TOKEN,  /* one '_'-separated word of the text is the pattern */
    KM_WORD_END /* one '_'-separated word ends with the pattern: cuBLAS spells
                   the math in one word (sgemm, h884gemm, s16816gemm) */
} match;

/* ...with what part of the kernel's name. */
typedef enum {
    ON_NAME,  /* the kernel's own name, without namespaces ("reduce_kernel") */
    ON_HEAD,  /* its qualified name ("cudnn::detail::implicit_convolve_sgemm") */
    ON_RAW,   /* the whole string: copies and memsets are not C++ names */
    ON_IDENT  /* any whole identifier in the string (template arguments) */
} scope;

typedef struct {
    const char *pattern;
    match how;
    scope on;
    int cls;
} rule;

/* First match wins, so the order is part of the table: what a template
 * argument says about a generic loop comes before the loop's own name;
 * attention and NCCL before GEMM (their names can hold GEMM words);
 * convolutions (not in the model) before the GEMM word rule, which their
 * implicit-GEMM kernels would otherwise satisfy. */
static const rule rules[] = {
    /* CUPTI's names of copies and fills (Kineto: "Memcpy HtoD (Pageable ->
     * Device)", "Memset (Device)"). Device-to-device copies are copy
     * kernels; host transfers are not costed by the model. */
    {"Memcpy DtoD", KM_PREFIX, ON_RAW, XS_KC_COPY},
    {"Memcpy", KM_PREFIX, ON_RAW, XS_KC_OTHER},
    {"Memset", KM_PREFIX, ON_RAW, XS_KC_ELEMENTWISE},
    /* log_softmax inside cross-entropy runs the softmax kernels with a
     * log epilogue: the model counts it in the loss */
    {"LogSoftMaxForwardEpilogue", KM_EXACT, ON_IDENT, XS_KC_LOSS},
    {"LogSoftMaxBackwardEpilogue", KM_EXACT, ON_IDENT, XS_KC_LOSS},
    /* ATen's copy (layout change or dtype cast) runs in the generic
     * elementwise loops; the functor names it */
    {"direct_copy_kernel_cuda", KM_EXACT, ON_IDENT, XS_KC_COPY},
    {"copy_device_to_device", KM_EXACT, ON_IDENT, XS_KC_COPY},
    {"bfloat16_copy_kernel_cuda", KM_EXACT, ON_IDENT, XS_KC_COPY},
    {"float16_copy_kernel_cuda", KM_EXACT, ON_IDENT, XS_KC_COPY},
    {"CopyOp", KM_EXACT, ON_IDENT, XS_KC_COPY}, /* THC's kernelPointwiseApply2<CopyOp> */
    /* collectives: ncclKernel_* (NCCL 2.x), ncclDevKernel_* (>= 2.19),
     * ncclAllReduceRingLLKernel_* (older) */
    {"nccl", KM_PREFIX, ON_NAME, XS_KC_COMM},
    /* fused attention: FlashAttention 2 (flash_fwd_kernel, flash_bwd_*,
     * also as pytorch_flash::), xFormers / PyTorch mem-efficient
     * (fmha_cutlassF_*, fmha_cutlassB_*, attention_kernel_batched*),
     * FlashAttention 3 (FlashAttnFwdSm90 inside cutlass::device_kernel),
     * cuDNN SDPA (cudnn_generated_fort_native_sdpa_*) */
    {"flash_", KM_PREFIX, ON_NAME, XS_KC_ATTENTION},
    {"fmha", KM_PREFIX, ON_NAME, XS_KC_ATTENTION},
    {"FlashAttn", KM_PREFIX, ON_NAME, XS_KC_ATTENTION},
    {"attention_kernel", KM_PREFIX, ON_NAME, XS_KC_ATTENTION},
    {"sdpa", KM_TOKEN, ON_NAME, XS_KC_ATTENTION},
    /* convolutions and their helpers: no Transformer op of the model */
    {"cudnn::", KM_PREFIX, ON_HEAD, XS_KC_OTHER},
    {"cask_cudnn::", KM_PREFIX, ON_HEAD, XS_KC_OTHER},
    {"cudnn", KM_WORD_END, ON_NAME, XS_KC_OTHER}, /* volta_fp16_s884cudnn_*, ampere_scudnn_* */
    /* cuBLAS / cuBLASLt / CUTLASS GEMMs: {volta,turing,ampere}_*{s,h}*gemm_*,
     * sm80/sm90_xmma_gemm_*, cutlass_80_tensorop_*gemm_*, nvjet_* (cuBLAS
     * 12.x on Hopper and later), gemv / gemmSN / gemmk1 small-shape kernels,
     * split-K reduction, CUTLASS 3 GemmUniversal */
    {"gemm", KM_WORD_END, ON_NAME, XS_KC_GEMM},
    {"gemm", KM_PREFIX, ON_NAME, XS_KC_GEMM},
    {"gemv", KM_PREFIX, ON_NAME, XS_KC_GEMM},
    {"internal::gemvx::", KM_PREFIX, ON_HEAD, XS_KC_GEMM},
    {"nvjet_", KM_PREFIX, ON_NAME, XS_KC_GEMM},
    {"splitKreduce_kernel", KM_PREFIX, ON_NAME, XS_KC_GEMM},
    {"GemmUniversal", KM_PREFIX, ON_NAME, XS_KC_GEMM},
    /* softmax: softmax_warp_forward/backward, (scaled_)masked_softmax_*,
     * cunn_SoftMaxForward/Backward(Smem) */
    {"softmax", KM_TOKEN, ON_NAME, XS_KC_SOFTMAX},
    {"cunn_SoftMax", KM_PREFIX, ON_NAME, XS_KC_SOFTMAX},
    /* LayerNorm: ATen's forward and backward kernels, apex's */
    {"vectorized_layer_norm", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"layer_norm_", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"LayerNorm", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"RowwiseMoments", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"ComputeInternalGradients", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"ComputeGradientFusedParams", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"GammaBetaBackward", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"cuApplyLayerNorm", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"cuApplyRMSNorm", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"cuComputeGradInput", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"cuComputePartGradGammaBeta", KM_PREFIX, ON_NAME, XS_KC_NORM},
    {"cuComputeGradGammaBeta", KM_PREFIX, ON_NAME, XS_KC_NORM},
    /* embedding forward (index_select) and backward: ATen sorts the token
     * ids (cub radix sort), scans segment offsets (cub scan) and sums the
     * rows per segment (EmbeddingBackwardKernel.cu); a BERT step has no
     * other sort or scan */
    {"indexSelect", KM_PREFIX, ON_NAME, XS_KC_EMBED},
    {"embedding_backward", KM_PREFIX, ON_NAME, XS_KC_EMBED},
    {"compute_grad_weight", KM_PREFIX, ON_NAME, XS_KC_EMBED},
    {"sum_and_scatter", KM_EXACT, ON_NAME, XS_KC_EMBED},
    {"krn_partial", KM_PREFIX, ON_NAME, XS_KC_EMBED},
    {"compute_num_of_partial_segments", KM_EXACT, ON_NAME, XS_KC_EMBED},
    {"segment_offsets_kernel", KM_EXACT, ON_NAME, XS_KC_EMBED},
    {"write_num_of_segments_for_legacy_thread_grid", KM_EXACT, ON_NAME, XS_KC_EMBED},
    {"DeviceRadixSort", KM_PREFIX, ON_NAME, XS_KC_EMBED},
    {"DeviceScan", KM_PREFIX, ON_NAME, XS_KC_EMBED},
    /* loss */
    {"nll_loss", KM_PREFIX, ON_NAME, XS_KC_LOSS},
    /* optimizers and AMP's unscale / inf check over every tensor: PyTorch
     * and apex multi_tensor_apply_kernel, Paddle / OneFlow MultiTensorApply*,
     * apex's older per-tensor adam_cuda_kernel */
    {"multi_tensor_apply", KM_PREFIX, ON_NAME, XS_KC_OPTIMIZER},
    {"MultiTensorApply", KM_PREFIX, ON_NAME, XS_KC_OPTIMIZER},
    {"adam", KM_TOKEN, ON_NAME, XS_KC_OPTIMIZER},
    /* concatenation copies (CatArrayBatchedCopy, _contig, _aligned16_contig) */
    {"CatArrayBatchedCopy", KM_PREFIX, ON_NAME, XS_KC_COPY},
    {"reduce_kernel", KM_PREFIX, ON_NAME, XS_KC_REDUCE},
    /* ATen's generic loops (vectorized_/unrolled_/index_elementwise_kernel,
     * elementwise_kernel, distribution_elementwise_grid_stride_kernel),
     * dropout, THC's pointwise loops */
    {"elementwise", KM_TOKEN, ON_NAME, XS_KC_ELEMENTWISE},
    {"fused_dropout", KM_PREFIX, ON_NAME, XS_KC_ELEMENTWISE},
    {"kernelPointwiseApply", KM_PREFIX, ON_NAME, XS_KC_ELEMENTWISE},
};

/* Kernels that only wrap the real one, named by their first template
 * argument (CUTLASS's launchers, FlashAttention 3's architecture guards);
 * fallback: the class when the wrapped name says nothing. */
static const struct {
    const char *head;
    int fallback;
} wrappers[] = {
    {"cutlass::Kernel", XS_KC_GEMM},
    {"cutlass::Kernel2", XS_KC_GEMM},
    {"cutlass::device_kernel", XS_KC_GEMM},
    {"flash::enable_sm80_to_sm89", XS_KC_ATTENTION},
    {"flash::enable_sm90_or_later", XS_KC_ATTENTION},
};

#define ANON "(anonymous namespace)::"

typedef struct {
    char head[256];    /* qualified name, namespaces kept, "(anonymous namespace)::" dropped */
    const char *name;  /* its last component (points into head) */
    const char *targs; /* first template argument in the source text, or NULL */
    size_t targs_len;
} kname;

/* Split s[0, len) into its qualified name and first template argument.
 * A space outside brackets ends a return type ("void ", "std::enable_if<
 * ..>::type "); '(' outside brackets starts the parameter list. */
static void parse(const char *s, size_t len, kname *k)
{
    size_t n = 0;
    int depth = 0;
    k->targs = NULL;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (depth == 0 && len - i >= sizeof ANON - 1 &&
            strncmp(s + i, ANON, sizeof ANON - 1) == 0) {
            i += sizeof ANON - 2;
            continue;
        }
        if (c == '<') {
            if (depth++ == 0 && !k->targs)
                k->targs = s + i + 1;
            continue;
        }
        if (c == '>') {
            depth -= depth > 0;
            continue;
        }
        if (depth > 0)
            continue;
        if (c == '(')
            break;
        if (c == ' ') { /* what came before was a return type */
            n = 0;
            k->targs = NULL;
            continue;
        }
        if (n + 1 < sizeof k->head)
            k->head[n++] = c;
    }
    k->head[n] = '\0';
    const char *last = k->head;
    for (const char *p = strstr(k->head, "::"); p; p = strstr(p + 2, "::"))
        last = p + 2;
    k->name = last;
    k->targs_len = 0;
    if (k->targs) { /* up to the first ',' or '>' at its own level */
        const char *end = s + len, *p = k->targs;
        int d = 0;
        for (; p < end; p++) {
            if (*p == '<')
                d++;
            else if (*p == '>' && d-- == 0)
                break;
            else if (*p == ',' && d == 0)
                break;
        }
        k->targs_len = (size_t)(p - k->targs);
    }
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Is pat one of the '_'-separated words of s (at_end: does a word end with it)? */
static int has_word(const char *s, const char *pat, int at_end)
{
    size_t pl = strlen(pat);
    while (*s) {
        size_t wl = strcspn(s, "_");
        if (at_end ? wl >= pl && memcmp(s + wl - pl, pat, pl) == 0
                   : wl == pl && memcmp(s, pat, pl) == 0)
            return 1;
        s += wl;
        s += *s == '_';
    }
    return 0;
}

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Does a whole identifier of raw match the pattern (exact or prefix)? */
static int has_ident(const char *raw, const char *pat, match how)
{
    size_t pl = strlen(pat);
    for (const char *p = raw; *p;) {
        if (!is_ident(*p)) {
            p++;
            continue;
        }
        const char *q = p;
        while (is_ident(*q))
            q++;
        size_t l = (size_t)(q - p);
        if (how == KM_PREFIX ? l >= pl && memcmp(p, pat, pl) == 0
                             : l == pl && memcmp(p, pat, pl) == 0)
            return 1;
        p = q;
    }
    return 0;
}

static int matches(const rule *r, const kname *k, const char *raw)
{
    if (r->on == ON_IDENT)
        return has_ident(raw, r->pattern, r->how);
    const char *text = r->on == ON_RAW ? raw : r->on == ON_HEAD ? k->head : k->name;
    switch (r->how) {
    case KM_PREFIX: return starts(text, r->pattern);
    case KM_EXACT: return strcmp(text, r->pattern) == 0;
    case KM_TOKEN: return has_word(text, r->pattern, 0);
    case KM_WORD_END: return has_word(text, r->pattern, 1);
    }
    return 0;
}

int xs_kclass_of_kernel(const char *raw)
{
    kname k;
    parse(raw, strlen(raw), &k);
    int fallback = XS_KC_OTHER;
    for (int depth = 0; depth < 3 && k.targs; depth++) {
        size_t w = 0, nw = sizeof wrappers / sizeof *wrappers;
        while (w < nw && strcmp(k.head, wrappers[w].head) != 0)
            w++;
        if (w == nw)
            break;
        fallback = wrappers[w].fallback;
        const char *arg = k.targs;
        size_t len = k.targs_len;
        parse(arg, len, &k);
    }
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (matches(&rules[i], &k, raw))
            return rules[i].cls;
    return fallback;
}
