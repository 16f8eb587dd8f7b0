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

Usage: neusight_rows.py [--dir data/measured/neusight] [-o OUT.csv]
"""

import argparse
import csv
import os
import re
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="data/measured/neusight")
    ap.add_argument("-o", dest="out", default="-")
    a = ap.parse_args()
    tmp = None
    if a.out == "-":
        f = sys.stdout
    else:
        d = os.path.dirname(os.path.abspath(a.out))
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".neusight_rows.")
        os.fchmod(fd, 0o644)
        f = os.fdopen(fd, "w", newline="")
    w = csv.writer(f, lineterminator="\n")
    try:
        w.writerow(["device", "scenario", "set", "metric", "value", "source"])
        n = convert(os.path.join(a.dir, "kernels-gemm.csv"), ["B", "M", "N", "K", "kernel_name"],
                    gemm_set, w)
        n += convert(os.path.join(a.dir, "kernels-rowwise.csv"), ["B", "H"], row_set, w)
        n += convert(os.path.join(a.dir, "kernels-elementwise.csv"), ["B", "H"], row_set, w)
    except BaseException:
        if tmp:  # a failed run leaves nothing behind, not even the temporary
            f.close()
            os.unlink(tmp)
        raise
    if tmp:
        f.close()
        os.replace(tmp, a.out)
    sys.stderr.write("neusight_rows.py: %d rows\n" % n)


if __name__ == "__main__":
    main()
