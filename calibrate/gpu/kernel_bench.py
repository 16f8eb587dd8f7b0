"""Time, one by one, the kernels of a BERT training step on a CUDA GPU at the
shapes of the BERT development set (SQuAD, seq 384).

Two outputs:
- kernels-DEVICE.csv: every memory-bound kernel class the model costs
  (copies, scale, mask adds, softmax, dropout, casts, head split, LayerNorm,
  GELU, bias add and bias gradient, residual add) with its compulsory DRAM
  traffic (each operand read once, each result written once) and the
  effective bandwidth it reached, beside a plain copy of the same size.
  This is what xpusim's memory-bound model assumes (a share of DRAM
  bandwidth per kernel) and cannot check without a GPU.
- gemm-DEVICE.csv: the GEMMs and batched GEMMs of a BERT-base layer and a
  fused AdamW step, as measured-run rows (op=gemm / op=optimizer, metric
  time_s) that `xpusim validate --measured` predicts directly.

Each time is the median of 7 CUDA-event-timed batches of back-to-back calls
(each batch at least 5 ms), after a warm-up call.

  python3 calibrate/gpu/kernel_bench.py --out DIR [--batch 128]
"""

import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xsgpu_common import MEASURED_HEADER, adamw_set, gemm_set, quantiles, write_csv  # noqa: E402
from xsgpu_torch import open_device  # noqa: E402

KERNEL_HEADER = ["device", "kernel", "dtype", "shape", "elems", "bytes", "time_us_median",
                 "time_us_p10", "time_us_p90", "gbs", "vs_copy"]
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
ES = {"fp32": 4, "fp16": 2, "bf16": 2}


def timed(fn, repeats=7, min_batch_s=5e-3):
    """(median, p10, p90) seconds of one call of fn."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one = max(time.perf_counter() - t0, 1e-6)
    reps = max(1, min(1000, int(min_batch_s / one)))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(repeats):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e-3 / reps)
    return quantiles(samples)


class Bench:
    def __init__(self, dev):
        self.dev = dev
        self.rows = []
        self.copy_gbs = {}

    def add(self, kernel, dtype, shape, elems, nbytes, fn):
        med, p10, p90 = timed(fn)
        gbs = nbytes / med / 1e9
        if kernel == "copy":
            self.copy_gbs[(dtype, shape)] = gbs
        ref = self.copy_gbs.get((dtype, shape))
        vs = f"{gbs / ref:.3f}" if ref else ""
        self.rows.append([self.dev, kernel, dtype, shape, f"{elems:.0f}", f"{nbytes:.0f}",
                          f"{med * 1e6:.2f}", f"{p10 * 1e6:.2f}", f"{p90 * 1e6:.2f}",
                          f"{gbs:.1f}", vs])
        print(f"{kernel:22s} {dtype} {shape:18s} {med * 1e6:10.1f} us {gbs:8.1f} GB/s {vs}",
              flush=True)


def scores_kernels(bn, b, a, s, name):
    """The s x s attention-score kernels of an unfused attention."""
    cuda = torch.device("cuda")
    shape = f"{b}x{a}x{s}x{s}"
    n = b * a * s * s
    mask32 = torch.zeros(b, 1, 1, s, device=cuda)
    for dt in ("fp16", "fp32"):
        t, es = DTYPES[dt], ES[dt]
        x = torch.randn(b, a, s, s, device=cuda, dtype=t)
        g = torch.randn_like(x)
        y = torch.softmax(x, -1)
        keep = torch.rand(b, a, s, s, device=cuda) > 0.1
        mask_t = mask32.to(t)
        bn.add("copy", dt, shape, n, 2 * es * n, lambda: x.clone())
        bn.add("scale", dt, shape, n, 2 * es * n, lambda: x / 8.0)
        bn.add("mask_add", dt, shape, n, 2 * es * n, lambda: x + mask_t)
        if dt != "fp32":  # half scores + fp32 mask: the sum is fp32 (autocast BERT)
            bn.add("mask_add_to_fp32", dt, shape, n, (es + 4) * n, lambda: x + mask32)
            bn.add("cast_to_fp32", dt, shape, n, (es + 4) * n, lambda: x.float())
        bn.add("softmax_fwd", dt, shape, n, 2 * es * n, lambda: torch._softmax(x, -1, False))
        bn.add("softmax_bwd", dt, shape, n, 3 * es * n,
               lambda: torch._softmax_backward_data(g, y, -1, t))
        bn.add("dropout_fwd", dt, shape, n, (2 * es + 1) * n,
               lambda: torch.native_dropout(x, 0.1, True))
        bn.add("dropout_bwd", dt, shape, n, (2 * es + 1) * n,
               lambda: torch.ops.aten.native_dropout_backward(g, keep, 1 / 0.9))
        del x, g, y, keep
        torch.cuda.empty_cache()
    print(f"{name}: done", flush=True)


def hidden_kernels(bn, b, s, a, h, f):
    """Kernels over [tokens, h] and [tokens, f]: head split, LayerNorm, GELU,
    bias add and its gradient, residual add."""
    cuda = torch.device("cuda")
    T = b * s
    for dt in ("fp16", "fp32"):
        t, es = DTYPES[dt], ES[dt]
        xh = torch.randn(T, h, device=cuda, dtype=t)
        gh = torch.randn_like(xh)
        sh = f"{T}x{h}"
        bn.add("copy", dt, sh, T * h, 2 * es * T * h, lambda: xh.clone())
        bn.add("heads_split", dt, sh, T * h, 2 * es * T * h,
               lambda: xh.view(b, s, a, h // a).permute(0, 2, 1, 3).contiguous())
        # the key as Q K^T reads it: [b, a, d, s], the copy xpusim charges
        # one L2 sector per element read (attn.heads.kT)
        bn.add("heads_split_kT", dt, sh, T * h, 2 * es * T * h,
               lambda: xh.view(b, s, a, h // a).permute(0, 2, 3, 1).contiguous())
        bn.add("residual_add", dt, sh, T * h, 3 * es * T * h, lambda: xh + gh)
        w, bias = torch.ones(h, device=cuda, dtype=t), torch.zeros(h, device=cuda, dtype=t)
        out, mean, rstd = torch.native_layer_norm(xh, [h], w, bias, 1e-12)
        bn.add("layernorm_fwd", dt, sh, T * h, 2 * es * T * h,
               lambda: torch.native_layer_norm(xh, [h], w, bias, 1e-12))
        bn.add("layernorm_bwd", dt, sh, T * h, 3 * es * T * h,
               lambda: torch.ops.aten.native_layer_norm_backward(
                   gh, xh, [h], mean, rstd, w, bias, [True, True, True]))
        xf = torch.randn(T, f, device=cuda, dtype=t)
        gf = torch.randn_like(xf)
        bf = torch.zeros(f, device=cuda, dtype=t)
        sf = f"{T}x{f}"
        bn.add("copy", dt, sf, T * f, 2 * es * T * f, lambda: xf.clone())
        bn.add("gelu_fwd", dt, sf, T * f, 2 * es * T * f, lambda: F.gelu(xf))
        bn.add("gelu_bwd", dt, sf, T * f, 3 * es * T * f,
               lambda: torch.ops.aten.gelu_backward(gf, xf))
        bn.add("bias_add", dt, sf, T * f, 2 * es * T * f, lambda: xf + bf)
        bn.add("bias_grad", dt, sf, T * f, es * T * f, lambda: gf.sum(0))
        del xh, gh, xf, gf, out
        torch.cuda.empty_cache()


def gemm_rows(dev, source, b, s, a, h, f):
    """BERT-base GEMMs (row-major, as PyTorch stores them) as measured rows."""
    cuda = torch.device("cuda")
    T, d, B = b * s, h // a, b * a
    # (label, m, n, k, batch, ta, tb): C[m x n] = op(A) op(B)
    shapes = [
        ("linear h->h fwd", T, h, h, 1, "N", "T"),
        ("linear h->h dX", T, h, h, 1, "N", "N"),
        ("linear h->h dW", h, h, T, 1, "T", "N"),
        ("ffn up fwd", T, f, h, 1, "N", "T"),
        ("ffn down fwd", T, h, f, 1, "N", "T"),
        ("ffn up dW", f, h, T, 1, "T", "N"),
        ("scores Q.K^T", s, s, d, B, "N", "N"),
        ("context P.V", s, d, s, B, "N", "N"),
        ("context dP = dC.V^T", s, s, d, B, "N", "T"),
        ("context dV = P^T.dC", s, d, s, B, "T", "N"),
    ]
    rows = []
    for dt, t, tf32 in (("fp16", torch.float16, False), ("bf16", torch.bfloat16, False),
                        ("tf32", torch.float32, True), ("fp32", torch.float32, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for label, m, n, k, batch, ta, tb in shapes:
            A = torch.randn(batch, k, m, device=cuda, dtype=t).transpose(-1, -2) if ta == "T" \
                else torch.randn(batch, m, k, device=cuda, dtype=t)
            Bm = torch.randn(batch, n, k, device=cuda, dtype=t).transpose(-1, -2) if tb == "T" \
                else torch.randn(batch, k, n, device=cuda, dtype=t)
            if batch == 1:
                A2, B2 = A[0], Bm[0]
                fn = lambda: torch.mm(A2, B2)  # noqa: E731
            else:
                fn = lambda: torch.bmm(A, Bm)  # noqa: E731
            med, p10, p90 = timed(fn)
            sets = gemm_set(m, n, k, batch, ta, tb, dt)
            rows.append([dev, "-", sets, "time_s", f"{med:.6g}",
                         f"{source}; BERT-base b={b} {label}; median of 7 (p10 {p10:.4g} s; "
                         f"p90 {p90:.4g} s)"])
            print(f"gemm {dt} {label:22s} {med * 1e6:10.1f} us "
                  f"{2 * m * n * k * batch / med / 1e12:7.1f} TFLOP/s", flush=True)
            del A, Bm
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.empty_cache()
    return rows


def adamw_row(dev, source, params, tensors):
    """One fused AdamW step over `params` fp32 parameters in `tensors` tensors."""
    cuda = torch.device("cuda")
    per = params // tensors
    ps = [torch.nn.Parameter(torch.randn(per, device=cuda)) for _ in range(tensors)]
    for p in ps:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(ps, lr=1e-5, fused=True)
    med, p10, p90 = timed(opt.step)
    sets = adamw_set(per * tensors, tensors)
    print(f"adamw fused {per * tensors} params: {med * 1e6:.1f} us", flush=True)
    return [dev, "-", sets, "time_s", f"{med:.6g}",
            f"{source}; torch.optim.AdamW(fused=True); median of 7 (p10 {p10:.4g} s; p90 {p90:.4g} s)"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=128, help="BERT-base batch of the shapes")
    ap.add_argument("--seq", type=int, default=384)
    args = ap.parse_args(argv)
    opened = open_device("kernel_bench.py", args.out)
    if opened is None:
        return 2
    dev, source = opened
    b, s, a, h, f = args.batch, args.seq, 12, 768, 3072
    bn = Bench(dev)
    scores_kernels(bn, b, a, s, "scores")
    hidden_kernels(bn, b, s, a, h, f)
    write_csv(os.path.join(args.out, f"kernels-{dev}.csv"), KERNEL_HEADER, bn.rows)
    rows = gemm_rows(dev, source, b, s, a, h, f)
    rows.append(adamw_row(dev, source, 110_000_000, 200))
    write_csv(os.path.join(args.out, f"gemm-{dev}.csv"), MEASURED_HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
