"""Helpers of the GPU measurement kit that need no GPU and no PyTorch.

They name the device the way xpusim's devices/ do, spell a run's settings as
the `set` column of the measured-run format, write CSV files atomically, and
trim a torch.profiler Chrome trace to its GPU activity. They are kept apart
from the PyTorch scripts so that the tests can run them on a machine without
a GPU (python3 -m unittest calibrate/gpu/test_xsgpu_common.py).
"""

import csv
import json
import os
import re
import statistics

# CUDA device names (as nvidia-smi and cudaDeviceProp show them) of the
# boards devices/ ships: (words that must all appear as whole words, a word
# that must not appear, id). The same rows and rule as NAMES and
# xs_cuda_base_for_name in calibrate/cuda_calibrate.c, which picks the base
# device of `calibrate --backend cuda`: the kit's rows must name the device
# that calibration starts from (test_xsgpu_common.py checks the rows agree).
DEVICE_IDS = [
    (("H100", "PCIe"), None, "h100-pcie-80gb"),
    (("H100", "HBM3"), "NVL", "h100-sxm5-80gb"),
    (("H100", "SXM"), None, "h100-sxm5-80gb"),
    (("H200", "NVL"), None, "h200-nvl-141gb"),
    (("H200",), "NVL", "h200-sxm-141gb"),
    (("A100", "SXM4", "80GB"), None, "a100-sxm4-80gb"),
    (("A100", "SXM4", "40GB"), None, "a100-sxm4-40gb"),
    (("A100", "80GB", "PCIe"), None, "a100-pcie-80gb"),
    (("A100", "PCIE", "40GB"), None, "a100-pcie-40gb"),
    (("A100", "PCIe"), "80GB", "a100-pcie-40gb"),
    (("A10",), "A100", "a10"),
    (("A40",), None, "a40"),
    (("L4",), "L40", "l4"),
    (("RTX 6000", "Quadro"), None, "quadro-rtx-6000"),
    (("RTX 3090",), "Ti", "rtx-3090"),
    (("T4",), None, "t4"),
    (("V100", "PCIE", "32GB"), None, "v100-pcie-32gb"),
    (("V100", "SXM2", "16GB"), None, "v100-sxm2-16gb"),
    (("V100", "SXM2", "32GB"), None, "v100-sxm2-32gb"),
]

MEASURED_HEADER = ["device", "scenario", "set", "metric", "value", "source"]


def _has_word(name, word):
    """word in name, case-insensitive, not inside a longer run of letters and
    digits; a word with a space only needs to appear (has_word in C)."""
    if " " in word:
        return word.lower() in name.lower()
    return re.search(r"(?<![A-Za-z0-9])" + re.escape(word) + r"(?![A-Za-z0-9])", name,
                     re.IGNORECASE) is not None


def device_id(name):
    """The xpusim device id of a CUDA device name, or None if there is none
    or two boards fit."""
    found = None
    for words, not_, dev in DEVICE_IDS:
        if all(_has_word(name, w) for w in words) and not (not_ and not_.lower() in name.lower()):
            if found and found != dev:
                return None
            found = dev
    return found


def set_string(overrides):
    """`key=value;key=value` in the order given; booleans as true/false."""
    parts = []
    for key, value in overrides:
        if isinstance(value, bool):
            value = "true" if value else "false"
        text = str(value)
        if not key or any(c in text for c in ";,\n") or any(c in key for c in ";=,\n"):
            raise ValueError(f"set: key {key!r} or value {text!r} cannot be written")
        parts.append(f"{key}={text}")
    return ";".join(parts)


def step_set(precision, batch, seq, sdpa):
    """The `set` of a whole-step row of bert_step.py: the scenario files hold
    NVIDIA's apex recipe, and these keys say what that script's loop does
    instead (autocast, fused AdamW, no clipping, loss.item() every step,
    nn.Linear biases, zero_grad(set_to_none=True), inputs already on the
    GPU)."""
    return set_string([
        ("train.batch", batch),
        ("train.seq", seq),
        ("train.precision", precision),
        ("train.amp_mode", "autocast"),
        ("train.optimizer", "adamw"),
        ("train.fused_optimizer", True),
        ("train.fp32_optimizer", "same"),
        ("train.grad_clip", False),
        ("train.loss_sync", True),
        ("train.ffn_bias", "gemm"),
        ("train.zero_grad", "none"),
        ("train.attention", "flash" if sdpa else "unfused"),
        ("train.kernels", "eager"),
        ("data.loader_us", 0),
        ("cluster.devices", 1),
    ])


def gemm_set(m, n, k, batch, ta, tb, dtype):
    """A single-GEMM row, row-major as PyTorch stores its matrices."""
    return set_string([("op", "gemm"), ("m", m), ("n", n), ("k", k), ("batch", batch),
                       ("ta", ta), ("tb", tb), ("dtype", dtype), ("layout", "row")])


def adamw_set(params, tensors):
    return set_string([("op", "optimizer"), ("optimizer", "adamw"), ("fused", 1),
                       ("params", params), ("tensors", tensors)])


def write_csv(path, header, rows):
    """Write rows (lists) under header to path through a temporary name, so
    that a run cut short never leaves a half-written file."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for row in rows:
            if len(row) != len(header):
                raise ValueError(f"{path}: row of {len(row)} fields under {len(header)} columns")
            w.writerow(row)
    os.replace(tmp, path)


def quantiles(samples):
    """(median, p10, p90) of a list of at least one number."""
    s = sorted(samples)
    if not s:
        raise ValueError("quantiles: no samples")

    def at(q):
        i = q * (len(s) - 1)
        lo = int(i)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (i - lo)

    return statistics.median(s), at(0.1), at(0.9)


# Chrome-trace categories of GPU activity in torch.profiler's export; the
# CPU side (Python, ATen ops, runtime calls) is what makes a trace large.
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
# Runtime calls that launch GPU work: xpusim gives a kernel to the training
# step whose ProfilerStep#N span holds its launch (matched by correlation id).
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
STEP_PREFIX = "ProfilerStep#"
# ATen's GEMM ops: with record_shapes their "Input Dims" give the shape of
# the GEMM kernels launched inside them (xpusim sim/studies/trace.c).
GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def trim_trace(src, dst, meta):
    """Copy what `xpusim validate --trace` reads of Chrome trace src to dst,
    with a provenance object `xpusim` (meta: device, scenario, set, how it
    was made): the GPU events, the ProfilerStep#N spans (host and GPU side)
    and, cut down to their correlation id, the runtime calls that launched
    the kept GPU events, and the GEMM ops (aten::mm, addmm, bmm, baddbmm)
    with their Input Dims. Returns the number of GPU events kept."""
    with open(src) as f:
        trace = json.load(f)
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        raise ValueError(f"{src}: no traceEvents array")
    complete = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]
    kept = [e for e in complete if e.get("cat") in GPU_CATEGORIES]
    launched = set()
    for e in kept:  # launch bookkeeping the comparison does not read
        args = e.get("args")
        if isinstance(args, dict):
            for k in ("External id", "queued", "context"):
                args.pop(k, None)
            if "correlation" in args:
                launched.add(args["correlation"])
    steps = [{k: e[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in e}
             for e in complete if str(e.get("name", "")).startswith(STEP_PREFIX)]
    launches = []
    for e in complete:
        args = e.get("args")
        if e.get("cat") in LAUNCH_CATEGORIES and isinstance(args, dict) \
                and args.get("correlation") in launched:
            slim = {k: e[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in e}
            slim["args"] = {"correlation": args["correlation"]}
            launches.append(slim)
    gemms = []
    for e in complete:
        args = e.get("args")
        if e.get("name") in GEMM_OPS and isinstance(args, dict) and "Input Dims" in args:
            slim = {k: e[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in e}
            slim["args"] = {"Input Dims": args["Input Dims"]}
            gemms.append(slim)
    out = {"xpusim": meta, "traceEvents": steps + gemms + launches + kept}
    for key in ("deviceProperties", "schemaVersion"):
        if isinstance(trace, dict) and key in trace:
            out[key] = trace[key]
    tmp = f"{dst}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    os.replace(tmp, dst)
    return len(kept)
