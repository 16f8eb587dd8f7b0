"""Time whole BERT fine-tuning steps on a CUDA GPU and write them as
measured-run rows that `xpusim validate --measured` reads; export one
torch.profiler Chrome trace per precision for `xpusim validate --trace`.

The model is BERT built from its config with random weights (nothing is
downloaded), written the way NVIDIA's DeepLearningExamples modeling.py and
Hugging Face's eager BertSelfAttention run it: separate q, k, v linears,
heads split by view + permute (torch.matmul copies them), scale, additive
mask, softmax, dropout, P.V, heads merged by permute + contiguous; FFN
nn.Linear (bias in the GEMM) + GELU; post-LayerNorm; a SQuAD span head with
two cross-entropies. The loop is a plain PyTorch one: torch.autocast +
GradScaler for fp16, autocast alone for bf16, fused AdamW, zero_grad to
None, loss.item() at each step's end, inputs already on the GPU. Each row's
`set` column says exactly that to xpusim.

Run on the GPU machine (see calibrate/gpu/README.md):
  python3 calibrate/gpu/bert_step.py --out DIR [--budget-s 300]
"""

import argparse
import gc
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xsgpu_common import MEASURED_HEADER, quantiles, step_set, trim_trace, write_csv  # noqa: E402
from xsgpu_torch import open_device  # noqa: E402

# scenarios/models/bert-{base,large}-uncased.json
MODELS = {
    "bert-base-squad": dict(layers=12, hidden=768, heads=12, ffn=3072),
    "bert-large-squad": dict(layers=24, hidden=1024, heads=16, ffn=4096),
}
VOCAB, POSITIONS, TYPES, DROPOUT, LN_EPS = 30522, 512, 2, 0.1, 1e-12

# precision -> (autocast dtype or None, allow TF32 matmuls)
PRECISIONS = {
    "fp32": (None, False),
    "tf32": (None, True),
    "amp_fp16": (torch.float16, True),
    "amp_bf16": (torch.bfloat16, True),
}


class SelfAttention(nn.Module):
    def __init__(self, h, a, sdpa):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.a, self.d, self.sdpa = a, h // a, sdpa
        self.drop = nn.Dropout(DROPOUT)

    def heads(self, x):  # [b, s, h] -> [b, a, s, d], a view
        b, s, _ = x.shape
        return x.view(b, s, self.a, self.d).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        if self.sdpa:  # fused attention: no s x s tensor in memory
            p = DROPOUT if self.training else 0.0
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype), dropout_p=p)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
            probs = self.drop(F.softmax(scores + mask, dim=-1))
            ctx = torch.matmul(probs, v)
        return ctx.permute(0, 2, 1, 3).contiguous().view(x.shape)


class Layer(nn.Module):
    def __init__(self, h, a, f, sdpa):
        super().__init__()
        self.attn = SelfAttention(h, a, sdpa)
        self.out, self.ln1 = nn.Linear(h, h), nn.LayerNorm(h, eps=LN_EPS)
        self.up, self.down, self.ln2 = nn.Linear(h, f), nn.Linear(f, h), nn.LayerNorm(h, eps=LN_EPS)
        self.drop1, self.drop2 = nn.Dropout(DROPOUT), nn.Dropout(DROPOUT)

    def forward(self, x, mask):
        x = self.ln1(x + self.drop1(self.out(self.attn(x, mask))))
        return self.ln2(x + self.drop2(self.down(F.gelu(self.up(x)))))


class BertForSpans(nn.Module):
    def __init__(self, layers, hidden, heads, ffn, sdpa):
        super().__init__()
        self.word, self.pos = nn.Embedding(VOCAB, hidden), nn.Embedding(POSITIONS, hidden)
        self.type = nn.Embedding(TYPES, hidden)
        self.ln, self.drop = nn.LayerNorm(hidden, eps=LN_EPS), nn.Dropout(DROPOUT)
        self.layers = nn.ModuleList(Layer(hidden, heads, ffn, sdpa) for _ in range(layers))
        self.qa = nn.Linear(hidden, 2)

    def forward(self, ids, types, input_mask, start, end):
        s = ids.shape[1]
        pos = torch.arange(s, device=ids.device).unsqueeze(0)
        x = self.drop(self.ln(self.word(ids) + self.pos(pos) + self.type(types)))
        # [b, 1, 1, s] additive mask in the parameters' format (fp32), as BERT
        # does; under autocast the half scores plus it give fp32 scores
        mask = (1.0 - input_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        start_logits, end_logits = self.qa(x).split(1, dim=-1)
        loss = F.cross_entropy(start_logits.squeeze(-1), start) + F.cross_entropy(
            end_logits.squeeze(-1), end
        )
        return loss / 2


def make_batch(b, s, dev, gen):
    ids = torch.randint(1, VOCAB, (b, s), device=dev, generator=gen)
    types = torch.randint(0, TYPES, (b, s), device=dev, generator=gen)
    # SQuAD features are padded to s; the mask's content does not change the work
    lengths = torch.randint(s // 2, s + 1, (b, 1), device=dev, generator=gen)
    input_mask = (torch.arange(s, device=dev)[None, :] < lengths).long()
    start = torch.randint(0, s, (b,), device=dev, generator=gen)
    end = torch.randint(0, s, (b,), device=dev, generator=gen)
    return ids, types, input_mask, start, end


class Run:
    """One model, precision and batch: the model, its optimizer and a step."""

    def __init__(self, scenario, precision, batch, seq, sdpa):
        self.amp_dtype, tf32 = PRECISIONS[precision]
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        dev = torch.device("cuda")
        self.model = BertForSpans(sdpa=sdpa, **MODELS[scenario]).to(dev).train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-5, weight_decay=0.01, fused=True)
        fp16 = self.amp_dtype is torch.float16
        self.scaler = torch.amp.GradScaler("cuda") if fp16 else None
        gen = torch.Generator(device=dev)
        gen.manual_seed(1234)
        self.batch = make_batch(batch, seq, dev, gen)

    def step(self):
        with torch.autocast("cuda", dtype=self.amp_dtype or torch.float32, enabled=self.amp_dtype is not None):
            loss = self.model(*self.batch)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return loss.item()  # the loop's read-back: the GPU drains here

    def close(self):
        del self.model, self.opt, self.scaler, self.batch
        torch.cuda.empty_cache()


def time_steps(run, warmup, steps):
    for _ in range(warmup):
        run.step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        run.step()
        times.append(time.perf_counter() - t0)
    return times


def export_trace(run, raw, dst, meta):
    from torch.profiler import ProfilerActivity, profile, schedule

    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    # three active steps: xpusim compares the median step, not one that happens to be slow;
    # record_shapes gives each GEMM op its Input Dims, so that calibrate --backend trace
    # can compare every GEMM shape with the model's time for it
    with profile(activities=acts, schedule=schedule(wait=0, warmup=2, active=3),
                 record_shapes=True,
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(5):
            run.step()
            prof.step()
    n = trim_trace(raw, dst, meta)
    os.remove(raw)
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for measured CSV, traces and log")
    ap.add_argument("--models", default="bert-base-squad,bert-large-squad")
    ap.add_argument("--precisions", default="tf32,amp_fp16,amp_bf16")
    ap.add_argument("--batches", default="bert-base-squad:32,128;bert-large-squad:16,32",
                    help="scenario:b1,b2;... batch sizes per model")
    ap.add_argument("--seq", type=int, default=384)
    ap.add_argument("--attention", default="unfused", help="unfused, flash (SDPA) or both")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--trace-precisions", default="tf32,amp_fp16",
                    help="one trace per precision, of the first model at its first batch")
    ap.add_argument("--budget-s", type=float, default=300, help="stop starting new runs after this")
    args = ap.parse_args(argv)

    opened = open_device("bert_step.py", args.out)
    if opened is None:
        return 2
    dev, source = opened
    batches = {}
    for item in args.batches.split(";"):
        scen, bs = item.split(":")
        batches[scen] = [int(b) for b in bs.split(",")]
    models = args.models.split(",")
    attn = {"unfused": [False], "flash": [True], "both": [False, True]}[args.attention]
    runs = [(scen, precision, sdpa, b) for scen in models
            for precision in args.precisions.split(",") for sdpa in attn for b in batches[scen]]
    traced = {(models[0], p, False, batches[models[0]][0]) for p in args.trace_precisions.split(",")}
    t_start = time.perf_counter()
    rows = []
    out_csv = os.path.join(args.out, f"bert-steps-{dev}.csv")
    print(f"xpusim device {dev}", flush=True)
    for scen, precision, sdpa, b in runs:
        label = f"{scen} {precision} {'sdpa' if sdpa else 'eager'} b={b}"
        if time.perf_counter() - t_start > args.budget_s:
            print(f"budget: skipped {label}", flush=True)
            continue
        run = None  # the last run's model goes before the next is built
        try:
            run = Run(scen, precision, b, args.seq, sdpa)
            times = time_steps(run, args.warmup, args.steps)
        except torch.cuda.OutOfMemoryError:
            print(f"{label}: out of memory, skipped", flush=True)
            run = None
            gc.collect()
            torch.cuda.empty_cache()
            continue
        med, p10, p90 = quantiles(times)
        sets = step_set(precision, b, args.seq, sdpa)
        src = (f"{source}; median of {args.steps} steps after {args.warmup} "
               f"warm-up (p10 {p10 * 1e3:.2f} ms; p90 {p90 * 1e3:.2f} ms)")
        rows.append([dev, scen, sets, "samples_per_s", f"{b / med:.4g}", src])
        print(f"{label}: {med * 1e3:.2f} ms/step, {b / med:.1f} samples/s, peak "
              f"{torch.cuda.max_memory_allocated() / 2**30:.1f} GiB", flush=True)
        write_csv(out_csv, MEASURED_HEADER, rows)
        if (scen, precision, sdpa, b) in traced:
            meta = {"device": dev, "scenario": scen, "set": sets,
                    "made_by": source + "; three steps after 2 profiled warm-up steps; "
                    "GPU events, ProfilerStep spans and the launches of the GPU events"}
            dst = os.path.join(args.out, f"trace-{scen}-{precision}-b{b}.json")
            n = export_trace(run, dst + ".raw", dst, meta)
            print(f"trace {dst}: {n} GPU events", flush=True)
        run.close()
        torch.cuda.reset_peak_memory_stats()
    return 0


if __name__ == "__main__":
    sys.exit(main())
