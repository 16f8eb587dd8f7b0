#!/usr/bin/env python3
"""make_seeds.py — regenerate the fuzzers' seed corpora (tests/fuzz/seeds/)
and dictionaries (tests/fuzz/dicts/) from the shipped files, so that a clean
clone fuzzes from real inputs. Seeds are the shipped documents with their
prose notes cut short and printed compactly: a few KB each. Run from the
repository root: python3 tests/fuzz/make_seeds.py [MEASURED_DIR]."""
import csv
import io
import json
import os
import sys

MEASURED = sys.argv[1] if len(sys.argv) > 1 else "../shared/reference/measured"
OUT = "tests/fuzz"
NOTE_KEYS = {"source", "note", "notes", "description"}


def load(path):
    with open(path) as f:
        return json.load(f)


def shorten(doc):
    """Prose fields cut to a few words: the loaders only check them for being
    non-empty strings, and the seeds stay small."""
    if isinstance(doc, dict):
        return {k: (v[:40] if k in NOTE_KEYS and isinstance(v, str) else shorten(v))
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [shorten(v) for v in doc]
    return doc


def compact(doc):
    return json.dumps(shorten(doc), separators=(",", ":")) + "\n"


def write(fmt, name, text):
    os.makedirs(f"{OUT}/seeds/{fmt}", exist_ok=True)
    with open(f"{OUT}/seeds/{fmt}/{name}", "w") as f:
        f.write(text)


def scenario_input(sets, path):
    return "".join(f"set {s}\n" for s in sets) + compact(load(path))


def keys_and_words(doc, out):
    """Every key, and every short string value (enum words, ids, tiles)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.add(k)
            keys_and_words(v, out)
    elif isinstance(doc, list):
        for v in doc:
            keys_and_words(v, out)
    elif isinstance(doc, str) and len(doc) <= 32:
        out.add(doc)


def write_dict(fmt, words):
    os.makedirs(f"{OUT}/dicts", exist_ok=True)
    with open(f"{OUT}/dicts/{fmt}.dict", "w") as f:
        f.write(f"# {fmt}: tokens for libFuzzer (-dict), written by make_seeds.py\n")
        for w in sorted(words):
            esc = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else
                          "\\x%02x" % ord(c) for c in w)
            if esc:
                f.write(f'"{esc}"\n')


JSON_TOKENS = {"{", "}", "[", "]", ":", ",", '"', "true", "false", "null", "-0", "0.5",
               "1e308", "1e-308", "-1", "4096", "9007199254740993", "\\u0000", "\\"}

DEVICES = ["t4", "v100-sxm2-16gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "l4", "xeon-amx-2c"]
SCENARIOS = ["scenarios/bert-base-squad.json", "scenarios/bert-large-squad.json",
             "scenarios/gpt2-medium-finetune.json", "tests/data/scenarios/tiny.json"]
MODELS = ["bert-base-uncased", "bert-large-uncased", "gpt2-medium", "llama-2-7b",
          "mistral-7b-v0.1", "qwen2-0.5b", "tinyllama-1.1b"]


def inference_seeds():
    """xpusim threads' inference scenarios (sim/workload/infer.c), with and without sets."""
    words = set(JSON_TOKENS) | {"set ", "=", "\n", "inference.", "model.", "lstm", "encoder",
                                "precision", "bf16"}
    for name in INFERENCE:
        path = f"scenarios/{name}.json"
        write("inference", name, scenario_input([], path))
        keys_and_words(load(path), words)
    write("inference", "lstm-sets", scenario_input(
        ["inference.batch=1", "model.hidden=37", "model.layers=3"],
        "scenarios/lstm-inference.json"))
    write("inference", "lstm-bf16", scenario_input(
        ["inference.precision=bf16", "model.hidden=37"], "scenarios/lstm-inference.json"))
    write("inference", "encoder-bf16", scenario_input(
        ["inference.precision=bf16"], "scenarios/encoder-inference.json"))
    write("inference", "encoder-sets", scenario_input(
        ["inference.seq=512", "model.heads=16", "model.hidden=1024"],
        "scenarios/encoder-inference.json"))
    write_dict("inference", words)


INFERENCE = ["lstm-inference", "encoder-inference"]


def main():
    json_words = set(JSON_TOKENS)
    for d in DEVICES:
        write("device", d, compact(load(f"devices/{d}.json")))
        keys_and_words(load(f"devices/{d}.json"), json_words)
    write_dict("device", json_words)

    scn_words = set(JSON_TOKENS) | {"set ", "=", "\n", "train.", "model.", "data.", "notes",
                                    "cluster."}
    for path in SCENARIOS:
        write("scenario", os.path.basename(path), scenario_input([], path))
        keys_and_words(load(path), scn_words)
    write("scenario", "tiny-sets", scenario_input(
        ["train.batch=64", "train.precision=bf16", "model.head=lm", "cluster.devices=8"],
        "tests/data/scenarios/tiny.json"))
    write("scenario", "gpt2-sets", scenario_input(
        ["train.attention=unfused", "train.kernels=fused", "model.hf_config=models/gpt2-medium.json"],
        "scenarios/gpt2-medium-finetune.json"))
    # minimal scenarios: a model and data.samples, every other key taken
    # from its default (train.seq by model.head, foreach AdamW)
    tiny = load("tests/data/scenarios/tiny.json")
    write("scenario", "minimal-hf", compact(
        {"id": "minimal-hf", "model": {"hf_config": "models/gpt2-medium.json", "head": "lm"},
         "data": {"samples": 1000}}))
    write("scenario", "minimal-inline", compact(
        {"id": "minimal-inline", "model": dict(tiny["model"], head="cls"),
         "data": {"samples": 100}}))
    write("scenario", "minimal-sets", "set train.optimizer=sgd\nset model.head=span\n" + compact(
        {"id": "minimal-sets", "model": tiny["model"], "data": {"samples": 100},
         "train": {"notes": {"about": "free text"}}}))
    for path in [f"scenarios/models/{m}.json" for m in MODELS]:
        keys_and_words(load(path), scn_words)
    write_dict("scenario", scn_words)

    inference_seeds()

    hf_words = set(JSON_TOKENS) | {"bert", "roberta", "gpt2", "llama", "mistral", "qwen2"}
    for m in MODELS:
        write("hfconfig", m, compact(load(f"scenarios/models/{m}.json")))
        keys_and_words(load(f"scenarios/models/{m}.json"), hf_words)
    write_dict("hfconfig", hf_words)

    write("pipeline", "a100-bert-large",
          compact(load("devices/a100-sxm4-80gb.json")) + "%%\n" +
          scenario_input([], "scenarios/bert-large-squad.json"))
    write("pipeline", "t4-tiny-fp32",
          compact(load("devices/t4.json")) + "%%\n" +
          scenario_input(["train.precision=fp32"], "tests/data/scenarios/tiny.json"))
    write("pipeline", "xeon-tiny",
          compact(load("devices/xeon-amx-2c.json")) + "%%\n" +
          scenario_input([], "tests/data/scenarios/tiny.json"))
    write("pipeline", "h100-gpt2",
          compact(load("devices/h100-sxm5-80gb.json")) + "%%\n" +
          scenario_input([], "scenarios/gpt2-medium-finetune.json"))
    write("pipeline", "v100-bert-base-fp32",
          compact(load("devices/v100-sxm2-16gb.json")) + "%%\n" +
          scenario_input(["train.precision=fp32", "train.batch=16"],
                         "scenarios/bert-base-squad.json"))
    write_dict("pipeline", json_words | scn_words | {"%%\n"})

    csv_words = {",", "\"", "\"\"", "\n", "\r\n", ";", "=", "-", "device,scenario,set,metric,value,source",
                 "samples_per_s", "tokens_per_s", "step_time_s", "time_s", "op=gemm", "op=optimizer",
                 "m=", "n=", "k=", "batch=", "ta=N", "tb=T", "dtype=fp16", "dtype=bf16",
                 "layout=row", "optimizer=adan", "fused=1", "params=", "tensors=",
                 "state_bytes=2", "1e-5", "1e308", "nan", "inf"}
    csv_words |= set(DEVICES) | {os.path.basename(p)[:-5] for p in SCENARIOS[:3]}
    with open("tests/data/measured/mixed.csv") as f:
        write("measured", "mixed.csv", f.read())
    for name in ["dev-bert-finetune-lambda.csv", "dev-bert-finetune-lambda-multigpu.csv",
                 "dev-gemm-deepbench-v100.csv", "zeus-v100-bert-base-squad-power.csv"]:
        with open(f"{MEASURED}/{name}") as f:
            lines = f.readlines()
        rows = list(csv.reader(io.StringIO("".join(lines[1:]))))
        for r in rows[:40]:
            if len(r) == 6:
                csv_words |= {r[0], r[1], r[3]} | set(r[2].split(";"))
        write("measured", name, "".join(lines[:4]))
    # the team's own conversions (data/published): GEMMs on other boards,
    # single kernels of every class (op= keys), the power-limit sweep's
    # device.power_limit_w rows and their epoch_time_s / avg_power_w metrics
    csv_words |= {"epoch_time_s", "avg_power_w", "device.power_limit_w=", "dir=fwd", "dir=bwd",
                  "dir=both", "rows=", "cols=", "elems=", "vocab=", "dim=", "lookups=",
                  "classes=", "out_dtype=", "b_dtype=", "inner=strided", "log=1", "dtype=fp32"}
    csv_words |= {"op=" + k for k in ("softmax", "layernorm", "dropout", "gelu", "bias_gelu",
                                      "add", "copy", "transpose", "reduce", "embedding",
                                      "embedding_bwd", "cross_entropy", "multi_tensor_l2norm",
                                      "multi_tensor_scale", "multi_tensor_unscale")}
    for name in sorted(os.listdir("data/published")):
        if not name.endswith(".csv"):
            continue
        with open(f"data/published/{name}") as f:
            lines = f.readlines()
        # one row of each op class (and metric), the header first: small seeds
        seen, keep = set(), [lines[0]]
        for line in lines[1:]:
            r = next(csv.reader(io.StringIO(line)))
            tag = (r[3], next((kv for kv in r[2].split(";") if kv.startswith("op=")), ""))
            if tag not in seen:
                seen.add(tag)
                keep.append(line)
                csv_words |= {r[0], r[1]} | set(r[2].split(";"))
        write("measured", "published-" + name, "".join(keep[:12]))
    write_dict("measured", csv_words)

    # calibrate --backend cuda's measurement CSV: the recorded file, its head
    with open("tests/data/cuda/fake-h100.measurements.csv") as f:
        cuda = f.read()
    write("cudameas", "fake-h100.csv", cuda)
    write("cudameas", "head.csv", "".join(cuda.splitlines(True)[:24]))
    cuda_words = set()
    for line in cuda.splitlines():
        if line.startswith("# "):
            cuda_words.add(line.split("=")[0] + "=")
        else:
            cuda_words |= set(line.split(",")[:2]) | {line.split(",")[-1]}
    write_dict("cudameas", cuda_words | {",", "\n", "0x", "-", "counter", "samples"})

    trace = load("tests/data/traces/synthetic-a100-step.json")
    write("trace", "synthetic-a100-step", compact(trace))
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    write("trace", "array-of-events", compact(kernels[:6]))
    write("trace", "capital-kernel",
          compact({"traceEvents": [dict(e, cat="Kernel") for e in kernels[:4]]}))
    # a GEMM op with its Input Dims around a kernel's launch: the shape reader
    gemm = next(e for e in kernels if "gemm" in e["name"])
    shaped = {"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
         "ts": 0, "dur": 1000},
        {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10,
         "dur": 20, "args": {"Input Dims": [[3072], [512, 768], [768, 3072], [], []]}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 2, "ts": 12,
         "dur": 30, "args": {"Input Dims": [[12, 384, 64], [12, 64, 384]]}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 15, "dur": 2, "args": {"correlation": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
         "ts": 35, "dur": 2, "args": {"correlation": 2}},
        dict(gemm, ts=100, dur=40, args={"correlation": 1}),
        dict(gemm, ts=150, dur=10, args={"correlation": 2})]}
    write("trace", "gemm-shapes", compact(shaped))
    trace_words = set(JSON_TOKENS)
    keys_and_words(trace, trace_words)
    keys_and_words(shaped, trace_words)
    trace_words |= {"multi_tensor", "adam", "flash", "fmha", "gemm", "cutlass", "xmma", "nll_loss",
                    "softmax", "layer_norm", "embedding", "copy", "cat", "reduce", "Kernel",
                    "kernel", "X", "traceEvents", "Input Dims", "aten::mm", "aten::addmm",
                    "aten::bmm", "aten::baddbmm", "cpu_op", "cuda_runtime", "correlation", "tid"}
    write_dict("trace", trace_words)


if __name__ == "__main__":
    main()
