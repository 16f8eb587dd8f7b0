#!/usr/bin/env python3
"""neusight_rows.py: NeuSight's per-kernel measurements as measured-run rows.

Reads the raw files of data/measured/neusight/ (kernels-gemm.csv,
kernels-rowwise.csv, kernels-elementwise.csv; their columns are described in
that folder's README) and writes one `device,scenario,set,metric,value,source`
row per measurement, for `xpusim validate`:

  linear   op=gemm;layout=row;m=M;n=K;k=N;ta=N;tb=T;dtype=fp32;bias=1
           (nn.Linear: C[M x K] = X[M x N] W^T + b; N is the reduction)
  bmm      op=gemm;layout=row;batch=B;m=M;n=K;k=N;ta=N;tb=N;dtype=fp32
  softmax  op=softmax;rows=B;cols=H;dtype=fp32;dir=fwd
  ln       op=layernorm;rows=B;cols=H;dtype=fp32;dir=fwd
  add mul div pow        op=pointwise;fn=add|mul|div|pow;elems=B*H (two tensors)
  addu mulu divu powu    op=pointwise;fn=add_scalar|mul_scalar|mul_scalar|pow_scalar
                         (divu runs PyTorch's multiply kernel: the README)
  relu gelu tanh         op=pointwise;fn=relu|gelu|tanh

GEMM rows also carry what the profiler recorded: tile=MxN of the cuBLAS kernel
(volta_sgemm_128x64_tn: 128x64) and split_k=1 where a splitKreduce_kernel ran.

Every row is one eager PyTorch call timed by CUDA events on an idle stream
(the README's method), so its figure holds the host's dispatch of that call
as well as the kernel. Each row says so with host_us=F, F the
harness floor of that op on that GPU's host: the smallest latency the file
holds for the op on the GPU (the README's caveat 1 lists the same figures).
That is a property of the measuring host and script, taken from the same file
the rows come from, so the conversion of any other GPU's file in this format
gets its own floor; the kernels themselves are predicted by the model alone.

train-nodes-v100.csv (NeuSight's V100 training runs, one row per FX node, each
node run alone and timed the same way) goes to its own file, --nodes OUT.csv.
A node gives its forward (fw_ms, dir=fwd) and its backward (bw_ms, dir=bwd),
fp32 nodes only, zero times skipped, shapes from input_shapes:

  softmax       op=softmax;rows=R;cols=C;dtype=fp32;dir=fwd|bwd
  layernorm     op=layernorm;rows=R;cols=C;dtype=fp32;dir=fwd|bwd
                (C the last dim, R the product of the others)
  dropout       op=dropout;elems=N;dtype=fp32;dir=fwd (the per-node backward
                is a slower form than loss.backward() runs: the README)
  activation    op=gelu;elems=N;dtype=fp32;dir=fwd|bwd, gelu targets only
                (GPT-2's mul/pow/tanh chain and the pooler tanh are skipped)
  embedding     op=embedding;vocab=V;dim=D;lookups=N;dtype=fp32, forward only
                (the ids are all ones: a pathological backward), V and D the
                model's table named by the node (EMBEDDING below)
  add_residual  op=pointwise;fn=add;elems=N;dtype=fp32, forward only, two
                inputs of one shape
  every other class is skipped.

Their host_us is that run's floor: the median fw_ms of its view_noop nodes
(which launch nothing but record 10-24 us of event overhead), in us, to 0.1.
Every node is kept, however many layers share it (repeat is ignored).

Usage: neusight_rows.py [--dir data/measured/neusight] [-o OUT.csv] [--nodes OUT.csv]
(with --nodes and no -o only the node rows are written; a failed run leaves
no output and no temporary file)
"""

import argparse
import csv
import json
import os
import re
import statistics
import sys
import tempfile

POINTWISE = {
    "add": "add", "mul": "mul", "div": "div", "pow": "pow",
    "addu": "add_scalar", "mulu": "mul_scalar", "divu": "mul_scalar", "powu": "pow_scalar",
    "relu": "relu", "gelu": "gelu", "tanh": "tanh",
}
TILE = re.compile(r"sgemm_(\d+)x(\d+)")
SOURCE = ("sitar-lab/NeuSight@6945927d9afcca2b9daf021f8395e53edc5b4eef:"
          "scripts/asplos/data/dataset/")


DEVICE = {"Tesla_T4": "t4", "Tesla_V100-PCIE-32GB": "v100-pcie-32gb",
          "NVIDIA_A100-PCIE-40GB": "a100-pcie-40gb"}
# (model, node_name) -> (vocab, dim) of the embedding table the node looks up
EMBEDDING = {
    ("bert_large", "bert_embeddings_word_embeddings"): (30522, 1024),
    ("bert_large", "bert_embeddings_token_type_embeddings"): (2, 1024),
    ("bert_large", "bert_embeddings_position_embeddings"): (512, 1024),
    ("gpt2_large", "transformer_wte"): (50257, 1280),
    ("gpt2_large", "transformer_wpe"): (1024, 1280),
}
GELU = re.compile(r"\bgelu\b")
NODE_COLUMNS = ["source", "device_neusight", "model", "node_name", "op_class", "target",
                "input_shapes", "dtype", "fw_ms", "bw_ms"]


def die(msg):
    sys.stderr.write("neusight_rows.py: %s\n" % msg)
    sys.exit(2)


def read(path, need):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        die("%s: %s" % (path, e.strerror))
    if not rows:
        die("%s: no rows" % path)
    missing = [c for c in need if c not in rows[0]]
    if missing:
        die("%s: column %s missing (see data/measured/neusight/README.md)" % (path, missing[0]))
    return rows


def positive_int(path, line, row, key):
    v = row[key]
    if not v.isdigit() or int(v) < 1:
        die("%s:%d: %s must be a positive integer, got '%s'" % (path, line, key, v))
    return int(v)


def latency_s(path, line, row):
    try:
        v = float(row["latency_ms"])
    except ValueError:
        v = -1
    if not v > 0:
        die("%s:%d: latency_ms must be a positive number, got '%s'" % (path, line, row["latency_ms"]))
    return v / 1000.0


def gemm_set(path, line, r):
    B, M, N, K = (positive_int(path, line, r, k) for k in "BMNK")
    tile = TILE.search(r["kernel_name"])
    extra = r.get("extra_kernels", "")
    if r["op"] == "linear":
        s = "op=gemm;layout=row;m=%d;n=%d;k=%d;ta=N;tb=T;dtype=fp32;bias=1" % (M, K, N)
    elif r["op"] == "bmm":
        s = "op=gemm;layout=row;batch=%d;m=%d;n=%d;k=%d;ta=N;tb=N;dtype=fp32" % (B, M, K, N)
    else:
        die("%s:%d: op '%s' is not linear or bmm" % (path, line, r["op"]))
    if tile:
        s += ";tile=%sx%s" % tile.groups()
    if "splitKreduce" in extra:
        s += ";split_k=1"
    return s


def row_set(path, line, r):
    B, H = positive_int(path, line, r, "B"), positive_int(path, line, r, "H")
    op = r["op"]
    if op == "softmax":
        return "op=softmax;rows=%d;cols=%d;dtype=fp32;dir=fwd" % (B, H)
    if op == "ln":
        return "op=layernorm;rows=%d;cols=%d;dtype=fp32;dir=fwd" % (B, H)
    if op in POINTWISE:
        return "op=pointwise;fn=%s;elems=%d;dtype=fp32" % (POINTWISE[op], B * H)
    die("%s:%d: op '%s' is not one this script converts" % (path, line, op))


def convert(path, need, to_set, out):
    rows = read(path, need + ["source", "device_xpusim", "op", "latency_ms"])
    sets, floors = [], {}
    for i, r in enumerate(rows):
        line = i + 2
        s, t = to_set(path, line, r), latency_s(path, line, r)
        key = (r["device_xpusim"], r["op"])
        floors[key] = min(floors.get(key, t), t)
        sets.append((r, s, t, line))
    for r, s, t, line in sets:
        floor_us = floors[(r["device_xpusim"], r["op"])] * 1e6
        out.writerow([r["device_xpusim"], "-",
                      "%s;host_us=%.4g" % (s, floor_us), "time_s", "%.7g" % t,
                      "%s%s (NeuSight op %s, mean of the 5 fastest of 25 event-timed calls; "
                      "%s line %d)" % (SOURCE, r["source"], r["op"], os.path.basename(path), line)])
    return len(sets)


def node_ms(path, line, row, key):
    try:
        v = float(row[key])
    except ValueError:
        v = -1
    if not v >= 0:
        die("%s:%d: %s must be a number of ms, at least 0, got '%s'" % (path, line, key, row[key]))
    return v


def node_shapes(path, line, row):
    try:
        v = json.loads(row["input_shapes"])
    except ValueError:
        v = None
    if not isinstance(v, list) or not v or not all(
            isinstance(d, list) and all(type(n) is int and n >= 1 for n in d) for d in v):
        die("%s:%d: input_shapes must be a list of shapes of positive integers, got '%s'"
            % (path, line, row["input_shapes"]))
    return v


def elems(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def node_sets(path, line, r):
    """The (set, dir) pairs a node converts to: [] when it is not converted.
    dir is 'fwd' or 'bwd', the time the row takes (fw_ms or bw_ms)."""
    c = r["op_class"]
    if c not in ("softmax", "layernorm", "dropout", "activation", "embedding", "add_residual"):
        return []
    if r["dtype"] != "torch.float32":
        return []
    if c == "activation" and not GELU.search(r["target"]):
        return []
    shapes = node_shapes(path, line, r)
    x = shapes[0]
    if c in ("softmax", "layernorm"):
        if len(x) < 2:
            die("%s:%d: a %s node needs an input of 2 or more dims, got %s"
                % (path, line, c, r["input_shapes"]))
        s = "op=%s;rows=%d;cols=%d;dtype=fp32" % (c, elems(x[:-1]), x[-1])
        return [(s + ";dir=fwd", "fwd"), (s + ";dir=bwd", "bwd")]
    if c == "activation":
        s = "op=gelu;elems=%d;dtype=fp32" % elems(x)
        return [(s + ";dir=fwd", "fwd"), (s + ";dir=bwd", "bwd")]
    if c == "dropout":
        return [("op=dropout;elems=%d;dtype=fp32;dir=fwd" % elems(x), "fwd")]
    if c == "embedding":
        table = EMBEDDING.get((r["model"], r["node_name"]))
        if not table:
            die("%s:%d: embedding node '%s' of model '%s' has no known table size (add it to "
                "EMBEDDING)" % (path, line, r["node_name"], r["model"]))
        return [("op=embedding;vocab=%d;dim=%d;lookups=%d;dtype=fp32" % (table + (elems(x),)),
                 "fwd")]
    if len(shapes) != 2 or shapes[0] != shapes[1]:  # add_residual: a broadcast add is left out
        return []
    return [("op=pointwise;fn=add;elems=%d;dtype=fp32" % elems(x), "fwd")]


def convert_nodes(path, out):
    rows = read(path, NODE_COLUMNS)
    found, noop = [], {}
    for i, r in enumerate(rows):
        line = i + 2
        if r["device_neusight"] not in DEVICE:
            die("%s:%d: device_neusight '%s' is not one of %s"
                % (path, line, r["device_neusight"], ", ".join(sorted(DEVICE))))
        fw, bw = node_ms(path, line, r, "fw_ms"), node_ms(path, line, r, "bw_ms")
        if r["op_class"] == "view_noop":
            noop.setdefault(r["source"], []).append(fw)
        for s, d in node_sets(path, line, r):
            ms = fw if d == "fwd" else bw
            if ms > 0:
                found.append((r, s, d, ms, line))
    for r, s, d, ms, line in found:
        if r["source"] not in noop:
            die("%s:%d: run '%s' has no view_noop node to take its harness floor from"
                % (path, line, r["source"]))
        floor_us = statistics.median(noop[r["source"]]) * 1e3
        key = "fw_ms" if d == "fwd" else "bw_ms"
        out.writerow([DEVICE[r["device_neusight"]], "-", "%s;host_us=%.1f" % (s, floor_us),
                      "time_s", "%.7g" % (ms / 1000.0),
                      "%s: node %s, %s %s (NeuSight's FX node run alone, mean of the 5 fastest "
                      "of 25 event-timed calls; %s line %d)"
                      % (r["source"], r["node_name"], key, r[key], os.path.basename(path), line)])
    return len(found)


def open_out(path, tmps):
    """A writer on a temporary beside path (stdout for '-'), renamed by main."""
    if path == "-":
        return sys.stdout
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".neusight_rows.")
    os.fchmod(fd, 0o644)
    f = os.fdopen(fd, "w", newline="")
    tmps.append((f, tmp, path))
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="data/measured/neusight")
    ap.add_argument("-o", dest="out")
    ap.add_argument("--nodes", metavar="OUT.csv")
    a = ap.parse_args()
    kernels = a.out if a.out is not None else (None if a.nodes else "-")
    if kernels == "-" and a.nodes == "-":
        die("-o and --nodes cannot both be stdout")
    header = ["device", "scenario", "set", "metric", "value", "source"]
    tmps, n, nn = [], 0, 0
    try:
        if kernels:
            w = csv.writer(open_out(kernels, tmps), lineterminator="\n")
            w.writerow(header)
            n = convert(os.path.join(a.dir, "kernels-gemm.csv"), ["B", "M", "N", "K", "kernel_name"],
                        gemm_set, w)
            n += convert(os.path.join(a.dir, "kernels-rowwise.csv"), ["B", "H"], row_set, w)
            n += convert(os.path.join(a.dir, "kernels-elementwise.csv"), ["B", "H"], row_set, w)
        if a.nodes:
            w = csv.writer(open_out(a.nodes, tmps), lineterminator="\n")
            w.writerow(header)
            nn = convert_nodes(os.path.join(a.dir, "train-nodes-v100.csv"), w)
    except BaseException:
        for f, tmp, _ in tmps:  # a failed run leaves nothing behind, not even the temporary
            f.close()
            os.unlink(tmp)
        raise
    for f, tmp, path in tmps:
        f.close()
        os.replace(tmp, path)
    if kernels:
        sys.stderr.write("neusight_rows.py: %d rows\n" % n)
    if a.nodes:
        sys.stderr.write("neusight_rows.py: %d node rows\n" % nn)


if __name__ == "__main__":
    main()
