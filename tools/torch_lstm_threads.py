#!/usr/bin/env python3
"""torch_lstm_threads.py -- a real client beside xpusim's LSTM kernel.

Runs `xpusim threads --run --save-io DIR` (xpusim's kernel under its
three thread settings, timed, with the weights, input and output saved),
then runs the same LSTM in PyTorch (torch.nn.LSTM, one module a layer with
those weights) with torch.set_num_threads set three ways: PyTorch's
default, xpusim's best fixed count, and xpusim's plan switched between
layers. nn.LSTM runs a layer's input projection and its recurrent steps in
one call, so the per-layer count is the one xpusim predicts best for the
layer's two groups together. Checks that PyTorch's output equals xpusim's
(within --atol) and prints both runtimes and the model's
prediction of each setting (the model describes xpusim's kernels; PyTorch's
differ, and the table says by how much).

With inference.precision bf16 the PyTorch LSTM is converted with
.to(torch.bfloat16) and fed bf16 input, as a user runs a bf16 LSTM.
PyTorch 1.13 then rounds every op's output to bf16 (the gates, the cell
state), where xpusim's kernel keeps its sums and the cell state in fp32, so
the two agree to a few bf16 roundings (default --atol 0.01, 2.5 bf16 ulps
near 1), not to fp32's.

Without PyTorch (Debian: apt-get install python3-torch) it prints
`skipped: REASON` and exits 0. Exit 1: the outputs disagree or xpusim
failed; 2: bad usage.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--xpusim", default=os.environ.get("XPUSIM_BIN", "./xpusim"),
                   help="the xpusim binary (default $XPUSIM_BIN or ./xpusim)")
    p.add_argument("-d", "--device", default="host", help="CPU device (default host)")
    p.add_argument("-s", "--scenario", default="lstm-inference",
                   help="an LSTM inference scenario (default lstm-inference)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="scenario overrides passed to xpusim (inference.batch=4)")
    p.add_argument("--reps", type=int, default=5, help="timed PyTorch runs a setting (median)")
    p.add_argument("--quick", action="store_true", help="xpusim --run --quick")
    p.add_argument("--atol", type=float, default=None,
                   help="largest |torch - xpusim| accepted (default 1e-4; bf16: 0.01)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    a = p.parse_args()
    if a.reps < 1:
        p.error("--reps must be at least 1")
    return a


def run_xpusim(a, io_dir):
    cmd = [a.xpusim, "threads", "-d", a.device, "-s", a.scenario, "--run", "--save-io", io_dir,
           "--format", "json"]
    for kv in a.set:
        cmd += ["--set", kv]
    if a.quick:
        cmd.append("--quick")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"torch_lstm_threads: {' '.join(cmd)} failed (exit {r.returncode})")
    return json.loads(r.stdout)


def fixed_sums(report, key):
    """Whole-run seconds at each fixed count: the groups' key ('time_s_by_threads' or
    'measured_time_s_by_threads') summed."""
    return {int(c): sum(g[key][str(c)] for g in report["groups"]) for c in report["counts"]}


def layer_plan(report):
    """Per layer, the count that minimises its input projection + recurrent steps, and
    the run's predicted and measured (xpusim's sweep) seconds under it."""
    groups = {g["name"]: g for g in report["groups"]}
    counts = [str(c) for c in report["counts"]]
    plan, predicted, measured = [], 0.0, 0.0
    layer = 0
    while f"l{layer}.input_proj" in groups:
        a, b = groups[f"l{layer}.input_proj"], groups[f"l{layer}.recurrent"]
        pa, pb = a["time_s_by_threads"], b["time_s_by_threads"]
        best = min(counts, key=lambda c: (pa[c] + pb[c], int(c)))
        plan.append(int(best))
        predicted += pa[best] + pb[best]
        measured += (a["measured_time_s_by_threads"][best] +
                     b["measured_time_s_by_threads"][best])
        layer += 1
    return plan, predicted, measured


def main():
    a = parse_args()
    try:
        import torch
        import numpy as np
    except ImportError as e:
        print(f"skipped: PyTorch is not importable by {sys.executable} ({e}); Debian's "
              "python3-torch (apt-get install python3-torch) is for /usr/bin/python3")
        return 0
    default_threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory(prefix="xs-torch-lstm-") as io_dir:
        report = run_xpusim(a, io_dir)
        with open(os.path.join(io_dir, "shape.json")) as f:
            shape = json.load(f)
        w = np.fromfile(os.path.join(io_dir, "weights.bin"), dtype="<f4")
        x = np.fromfile(os.path.join(io_dir, "input.bin"), dtype="<f4")
        y_xs = np.fromfile(os.path.join(io_dir, "output.bin"), dtype="<f4")
    L, I, H = shape["layers"], shape["input_size"], shape["hidden"]
    T, B = shape["seq"], shape["batch"]
    bf16 = shape.get("precision", "fp32") == "bf16"
    dtype = torch.bfloat16 if bf16 else torch.float32
    if a.atol is None:
        a.atol = 0.01 if bf16 else 1e-4
    layers, at = [], 0
    for layer in range(L):
        lstm = torch.nn.LSTM(I if layer == 0 else H, H, num_layers=1)
        with torch.no_grad():
            for p in (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0):
                n = p.numel()
                p.copy_(torch.from_numpy(w[at:at + n].copy()).view_as(p))
                at += n
        layers.append(lstm.to(dtype).eval())
    if at != w.size:
        raise SystemExit(f"torch_lstm_threads: weights.bin holds {w.size} floats, the "
                         f"layers take {at}")
    xt = torch.from_numpy(x.copy()).view(T, B, I).to(dtype)

    def forward(threads):
        y = xt
        with torch.no_grad():
            for lstm, t in zip(layers, threads):
                torch.set_num_threads(t)
                y = lstm(y)[0]
        return y

    def timed(threads):
        forward(threads)  # warm-up
        runs = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            forward(threads)
            runs.append(time.perf_counter() - t0)
        return statistics.median(runs)

    y = forward([default_threads] * L).float().numpy().reshape(-1)
    err = float(np.max(np.abs(y - y_xs)))
    plan, plan_pred, plan_meas = layer_plan(report)
    fixed = report["totals"]["best_fixed_threads"]
    tot, meas = report["totals"], report["measured"]
    cores = report["cores"]
    pred_at = fixed_sums(report, "time_s_by_threads")
    meas_at = fixed_sums(report, "measured_time_s_by_threads")
    rows = []
    if default_threads != cores and default_threads in pred_at:
        rows.append(("torch default", [default_threads] * L, timed([default_threads] * L),
                     meas_at[default_threads], pred_at[default_threads]))
    rows += [
        ("all cores", [cores] * L, timed([cores] * L), meas["default_s"], tot["default_s"]),
        ("best fixed", [fixed] * L, timed([fixed] * L), meas["best_fixed_s"],
         tot["best_fixed_s"]),
        ("per-layer", plan, timed(plan), plan_meas, plan_pred),
        ("dynamic", tot["dynamic_threads"], None, meas["dynamic_s"], tot["dynamic_s"]),
    ]
    torch.set_num_threads(default_threads)
    out = {"scenario": report["scenario"], "device": report["device"],
           "torch_version": torch.__version__, "torch_default_threads": default_threads,
           "precision": "bf16" if bf16 else "fp32",
           "max_abs_diff": err, "atol": a.atol, "agree": err <= a.atol,
           "settings": [{"name": n, "threads": t, "torch_s": ts, "xpusim_kernel_s": xk,
                         "predicted_s": p} for n, t, ts, xk, p in rows]}
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"torch_lstm_threads: {report['scenario']} on {report['device']}, "
              f"{'bf16' if bf16 else 'fp32'}, PyTorch {torch.__version__} "
              f"({default_threads} threads by default)")
        print(f"outputs: max |torch - xpusim| = {err:.3g} (allowed {a.atol:g}): "
              f"{'agree' if err <= a.atol else 'DISAGREE'}\n")
        print(f"{'setting':<13} {'threads (per layer)':<20} {'torch s':>9} {'xpusim s':>9} "
              f"{'predicted s':>12}")
        for n, t, ts, xk, p in rows:
            f = lambda v: f"{v:9.4f}" if v is not None else f"{'-':>9}"
            print(f"{n:<13} {','.join(map(str, t)):<20} {f(ts)} {f(xk)} {p:12.4f}")
        print("\nthreads: per layer (dynamic: per group, as xpusim's groups above); torch s: "
              "median of --reps runs of nn.LSTM; xpusim s: its kernel (all cores, best fixed, "
              "dynamic: timed runs; torch default, per-layer: the sum of its per-group sweep); "
              "predicted: xpusim's model of its own kernel. per-layer: one count a layer, as "
              "nn.LSTM runs a layer's projection and steps in one call (the count xpusim "
              "predicts best for both); dynamic switches per group, which nn.LSTM cannot.")
    return 0 if err <= a.atol else 1


if __name__ == "__main__":
    sys.exit(main())
