/* multi_tensor.h — how a multi-tensor kernel's work is cut into launches,
 * the plan of apex's multi_tensor_apply (NVIDIA/apex@123854c
 * csrc/multi_tensor_apply.cuh) with PyTorch's skip of empty tensors
 * (aten/src/ATen/native/cuda/MultiTensorApply.cuh): tensors are cut into
 * chunks of `chunk` elements, one block a chunk; a launch goes out when its
 * block table is full, when it holds its most tensors and the last of them
 * has all its chunks in it, or at the last chunk of the list; a tensor cut
 * by a full block table starts the next launch as its slot 0. Plain C: the
 * CUDA launcher and the CPU tests run the same plan. */
#ifndef XS_MULTI_TENSOR_H
#define XS_MULTI_TENSOR_H

#include <limits.h>
#include <stddef.h>

#include "xs_hd.h"

/* apex's defaults: chunk_size 65536 (apex/optimizers/fused_adam.py,
 * multi_tensor_applier(..., 2048 * 32, ...)), depth_to_max_blocks 320 and
 * depth_to_max_tensors {110, 64, 48, 36, 30, 26, 22, 20} for 1..8 tensor
 * lists, sized so the kernel argument stays under the 4 KB limit. */
#define XS_MT_CHUNK 65536
#define XS_MT_MAX_BLOCKS 320
#define XS_MT_MAX_TENSORS 110
#define XS_MT_MAX_DEPTH 8

/* The most tensors one launch holds with `depth` lists (1..8), else 0. */
XS_HD int xs_mt_max_tensors(int depth)
{
    switch (depth) { /* a switch: device code has no function-scope tables */
    case 1: return 110;
    case 2: return 64;
    case 3: return 48;
    case 4: return 36;
    case 5: return 30;
    case 6: return 26;
    case 7: return 22;
    case 8: return 20;
    default: return 0;
    }
}

/* One launch: the caller's tensors it holds (slot s is tensor[s] of the
 * list) and its blocks, each a (slot, chunk index) pair. */
typedef struct {
    int ntensors;
    size_t tensor[XS_MT_MAX_TENSORS];
    int nblocks;
    unsigned char block_slot[XS_MT_MAX_BLOCKS];
    int block_chunk[XS_MT_MAX_BLOCKS];
} xs_mt_launch;

/* The plan's position in a tensor list; the list is the caller's and must
 * outlive the plan. */
typedef struct {
    const long long *sizes;
    size_t n;
    long long chunk;
    int max_tensors, max_blocks;
    size_t t;    /* next tensor to place */
    long long c; /* its next chunk */
} xs_mt_plan;

/* 0, or -1 when a limit is out of range (chunk < 1; max_tensors 1..110;
 * max_blocks 1..320), a size is negative, or a tensor has more chunks than
 * an int indexes (apex's block_to_chunk is an int). */
static inline int xs_mt_plan_init(xs_mt_plan *p, const long long *sizes, size_t n,
                                  long long chunk, int max_tensors, int max_blocks)
{
    if (!p || (n > 0 && !sizes) || chunk < 1 || max_tensors < 1 ||
        max_tensors > XS_MT_MAX_TENSORS || max_blocks < 1 || max_blocks > XS_MT_MAX_BLOCKS)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (sizes[i] < 0 || sizes[i] / chunk >= (long long)INT_MAX)
            return -1;
    p->sizes = sizes;
    p->n = n;
    p->chunk = chunk;
    p->max_tensors = max_tensors;
    p->max_blocks = max_blocks;
    p->t = 0;
    p->c = 0;
    return 0;
}

/* Fill *L with the next launch: 1, or 0 when the list is done (L then holds
 * no block). */
static inline int xs_mt_next(xs_mt_plan *p, xs_mt_launch *L)
{
    L->ntensors = 0;
    L->nblocks = 0;
    while (p->t < p->n) {
        long long chunks = (p->sizes[p->t] + p->chunk - 1) / p->chunk;
        if (chunks == 0) { /* an empty tensor has no block and takes no slot */
            p->t++;
            p->c = 0;
            continue;
        }
        int slot = L->ntensors++;
        L->tensor[slot] = p->t;
        int blocks_full = 0;
        while (p->c < chunks && !blocks_full) {
            L->block_slot[L->nblocks] = (unsigned char)slot;
            L->block_chunk[L->nblocks] = (int)p->c;
            L->nblocks++;
            p->c++;
            blocks_full = L->nblocks == p->max_blocks;
        }
        int tensor_done = p->c == chunks;
        if (tensor_done) {
            p->t++;
            p->c = 0;
        }
        if (blocks_full || (tensor_done && L->ntensors == p->max_tensors))
            return 1;
    }
    return L->nblocks > 0;
}

/* Elements of the tensor's chunk a block covers: [*first, *first + return). */
XS_HD long long xs_mt_chunk_span(long long size, long long chunk, int chunk_index,
                                 long long *first)
{
    long long lo = (long long)chunk_index * chunk;
    long long left = size - lo;
    *first = lo;
    return left < 0 ? 0 : left < chunk ? left : chunk;
}

/* The parameter tensors of a Transformer of hidden size h, layer by layer
 * (xs_cuda.h's `hidden`): per layer Q, K, V, O weights (h x h) each followed
 * by its bias (h), the first LayerNorm's weight and bias (h, h), the MLP's
 * up projection (h x 4h, BERT's and GPT's intermediate size: Devlin et al.
 * 2019 sec. 3, Radford et al. 2018 sec. 4.1) and its bias (4h), its down
 * projection (4h x h) and bias (h), the second LayerNorm's weight and bias:
 * 12 h^2 + 13 h per layer. Tensors follow until `elems` parameters; the last
 * one is cut so the total is exactly elems. hidden 0: one tensor of elems.
 * Writes at most `cap` sizes (sizes may be NULL with cap 0, to count) and
 * returns how many tensors the list has, or -1 for elems < 1 or hidden
 * outside 0..2^24 (4 h^2 must not overflow). */
static inline long long xs_mt_transformer_sizes(long long elems, long long hidden,
                                                long long *sizes, long long cap)
{
    if (elems < 1 || hidden < 0 || hidden > (1LL << 24))
        return -1;
    if (hidden == 0) {
        if (cap > 0)
            sizes[0] = elems;
        return 1;
    }
    const long long h = hidden;
    const long long layer[16] = {h * h, h, h * h, h, h * h, h, h * h, h,
                                 h,     h, 4 * h * h, 4 * h, 4 * h * h, h, h, h};
    long long count = 0, left = elems;
    for (int i = 0; left > 0; i = (i + 1) % 16) {
        long long s = layer[i] < left ? layer[i] : left;
        if (count < cap)
            sizes[count] = s;
        count++;
        left -= s;
    }
    return count;
}

#endif
