"""Tests of the GPU kit's helpers that need neither a GPU nor PyTorch.

  python3 -m unittest discover -s calibrate/gpu -p 'test_*.py'

The trace test also runs ./xpusim (XPUSIM_BIN) on the synthetic test trace
before and after trimming: trimming must not change what validate reads,
nor what `calibrate --backend trace` fits from the kit's trace of a step.
"""

import csv
import json
import os
import re
import subprocess
import tempfile
import unittest

from xsgpu_common import (DEVICE_IDS, MEASURED_HEADER, adamw_set, device_id, gemm_set, quantiles,
                          set_string, step_set, trim_trace, write_csv)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
XPUSIM = os.environ.get("XPUSIM_BIN", os.path.join(ROOT, "xpusim"))
TRACE = os.path.join(ROOT, "tests", "data", "traces", "synthetic-a100-step.json")
STEPS_TRACE = os.path.join(ROOT, "tests", "data", "traces", "synthetic-a100-3steps.json")


class DeviceIdTest(unittest.TestCase):
    def test_names_map_to_device_files(self):
        cases = {
            "NVIDIA H100 80GB HBM3": "h100-sxm5-80gb",
            "NVIDIA H100 PCIe": "h100-pcie-80gb",
            "NVIDIA H200": "h200-sxm-141gb",
            "NVIDIA H200 NVL": "h200-nvl-141gb",
            "NVIDIA A100-SXM4-80GB": "a100-sxm4-80gb",
            "NVIDIA A10": "a10",
            "Tesla V100-SXM2-16GB": "v100-sxm2-16gb",
        }
        for name, dev in cases.items():
            self.assertEqual(device_id(name), dev, name)
            self.assertTrue(os.path.exists(os.path.join(ROOT, "devices", dev + ".json")), dev)

    def test_unknown_board_has_no_id(self):
        self.assertIsNone(device_id("NVIDIA GeForce RTX 4090"))
        self.assertIsNone(device_id("NVIDIA L40S"))  # not the L4
        self.assertIsNone(device_id("NVIDIA GeForce RTX 3090 Ti"))

    def test_rows_are_those_calibrate_backend_cuda_uses(self):
        # the same table as NAMES in calibrate/cuda_calibrate.c, row for row
        with open(os.path.join(ROOT, "calibrate", "cuda_calibrate.c")) as f:
            src = f.read()
        body = src[src.index("} NAMES[] = {"):]
        body = body[:body.index("};")]
        rows = []
        for words, not_, dev in re.findall(r'\{\{([^}]*)\}, (NULL|"[^"]*"), "([^"]+)"\}', body):
            ws = tuple(w.strip().strip('"') for w in words.split(",") if w.strip() != "NULL")
            rows.append((ws, None if not_ == "NULL" else not_.strip('"'), dev))
        self.assertGreater(len(rows), 10)
        self.assertEqual(rows, DEVICE_IDS)


class SetStringTest(unittest.TestCase):
    def test_keys_in_order_and_booleans_spelled_for_xpusim(self):
        s = set_string([("train.batch", 32), ("train.grad_clip", False), ("op", "gemm")])
        self.assertEqual(s, "train.batch=32;train.grad_clip=false;op=gemm")

    def test_separators_in_a_value_are_refused(self):
        with self.assertRaises(ValueError):
            set_string([("train.precision", "a;b")])
        with self.assertRaises(ValueError):
            set_string([("k=v", 1)])


class WriteCsvTest(unittest.TestCase):
    def test_rows_round_trip_and_no_temporary_is_left(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.csv")
            row = ["h100-sxm5-80gb", "-", "op=gemm;m=1;n=2;k=3", "time_s", "1e-05", "a, b"]
            write_csv(path, MEASURED_HEADER, [row])
            with open(path) as f:
                got = list(csv.reader(f))
            self.assertEqual(got, [MEASURED_HEADER, row])
            self.assertEqual(os.listdir(d), ["m.csv"])

    def test_a_short_row_is_refused_and_the_old_file_kept(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.csv")
            write_csv(path, ["a", "b"], [["1", "2"]])
            with self.assertRaises(ValueError):
                write_csv(path, ["a", "b"], [["1"]])
            with open(path) as f:
                self.assertEqual(f.read(), "a,b\n1,2\n")


class RowsXpusimReadsTest(unittest.TestCase):
    """A key the model does not know would make every GPU row unpredictable;
    these are the rows the kit writes, read back by xpusim itself."""

    def test_step_gemm_and_optimizer_rows_are_all_predicted(self):
        if not os.path.exists(XPUSIM):
            self.skipTest("no xpusim binary (make first)")
        src = "xpusim calibrate/gpu test; NVIDIA H100 80GB HBM3 (132 SMs); a, b"
        rows = [["h100-sxm5-80gb", scen, step_set(p, 32, 384, sdpa), "samples_per_s", "500", src]
                for scen in ("bert-base-squad", "bert-large-squad")
                for p in ("fp32", "tf32", "amp_fp16", "amp_bf16") for sdpa in (False, True)]
        rows.append(["h100-sxm5-80gb", "-", gemm_set(49152, 768, 768, 1, "N", "T", "fp16"),
                     "time_s", "1e-4", src])
        rows.append(["h100-sxm5-80gb", "-", gemm_set(384, 384, 64, 1536, "N", "N", "tf32"),
                     "time_s", "1e-4", src])
        rows.append(["h100-sxm5-80gb", "-", adamw_set(110_000_000, 200), "time_s", "1e-3", src])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kit.csv")
            write_csv(path, MEASURED_HEADER, rows)
            r = subprocess.run([XPUSIM, "validate", "--measured", path, "--format", "json"],
                               cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr)
            summary = json.loads(r.stdout)["summary"]
            self.assertEqual(summary["n"], len(rows))
            self.assertEqual(summary["failed"], 0)


class QuantilesTest(unittest.TestCase):
    def test_median_and_tails(self):
        med, p10, p90 = quantiles([5, 1, 4, 2, 3, 10, 6, 7, 8, 9, 0])
        self.assertEqual(med, 5)
        self.assertAlmostEqual(p10, 1)
        self.assertAlmostEqual(p90, 9)

    def test_no_samples_is_an_error(self):
        with self.assertRaises(ValueError):
            quantiles([])


class TrimTraceTest(unittest.TestCase):
    def test_keeps_gpu_events_and_provenance(self):
        with tempfile.TemporaryDirectory() as d:
            dst = os.path.join(d, "t.json")
            meta = {"device": "a100-sxm4-80gb", "scenario": "tiny", "set": "", "made_by": "test"}
            n = trim_trace(TRACE, dst, meta)
            with open(dst) as f:
                out = json.load(f)
            self.assertEqual(n, 21)  # 20 kernels and a memcpy; not the CPU op or instant
            self.assertEqual(out["xpusim"], meta)
            self.assertTrue(all(e["ph"] == "X" for e in out["traceEvents"]))
            self.assertIn("deviceProperties", out)

    def test_not_a_trace_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "x.json")
            with open(src, "w") as f:
                json.dump({"events": []}, f)
            with self.assertRaises(ValueError):
                trim_trace(src, os.path.join(d, "y.json"), {})

    def rows(self, trace):
        args = ["-d", "a100-sxm4-80gb", "-s", "tests/data/scenarios/tiny.json", "--format", "csv"]
        r = subprocess.run([XPUSIM, "validate", "--trace", trace] + args, cwd=ROOT,
                           capture_output=True, text=True)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        # the file column differs; everything after it must not
        return [line.split(",", 1)[1] for line in r.stdout.splitlines()[1:]]

    def test_validate_reads_the_trimmed_trace_as_the_original(self):
        if not os.path.exists(XPUSIM):
            self.skipTest("no xpusim binary (make first)")
        for src in (TRACE, STEPS_TRACE):
            with tempfile.TemporaryDirectory() as d:
                dst = os.path.join(d, "t.json")
                trim_trace(src, dst, {"made_by": "test"})
                self.assertEqual(self.rows(src), self.rows(dst))
                self.assertGreater(len(self.rows(dst)), 5)

    def test_trimmed_steps_keep_their_spans_and_launches(self):
        with tempfile.TemporaryDirectory() as d:
            dst = os.path.join(d, "t.json")
            n = trim_trace(STEPS_TRACE, dst, {"made_by": "test"})
            with open(dst) as f:
                out = json.load(f)["traceEvents"]
            cats = [e["cat"] for e in out]
            self.assertEqual(n, 73)  # 24 GPU events in each of 3 steps, one after them
            self.assertEqual(cats.count("user_annotation"), 3)
            self.assertEqual(cats.count("gpu_user_annotation"), 3)
            self.assertEqual(cats.count("cuda_runtime"), 73)  # the launches, not the syncs
            self.assertNotIn("cpu_op", cats)

    def test_calibrate_fits_the_trimmed_trace_as_the_original(self):
        """The kit's trace, as bert_step.py writes it (trimmed, with its
        device, scenario and set), calibrates a device file: here a trace
        xpusim simulates for the kit's own step settings, 1.2x slower GEMMs."""
        if not os.path.exists(XPUSIM):
            self.skipTest("no xpusim binary (make first)")
        dev, scen = "h100-sxm5-80gb", "bert-base-squad"
        sets = step_set("amp_fp16", 32, 384, False)
        set_args = [a for kv in sets.split(";") for a in ("--set", kv)]
        with tempfile.TemporaryDirectory() as d:
            raw, trimmed = os.path.join(d, "raw.json"), os.path.join(d, "trace.json")
            r = subprocess.run([XPUSIM, "calibrate", "--backend", "trace", "--simulate-trace", raw,
                                "-d", dev, "-s", scen, "--class-factor", "gemm=1.2"] + set_args,
                               cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            trim_trace(raw, trimmed, {"device": dev, "scenario": scen, "set": sets})
            factors, shapes = [], []
            for i, t in enumerate((raw, trimmed)):
                with open(t) as f:
                    meta = json.load(f).get("xpusim", {"device": dev, "scenario": scen, "set": sets})
                out = os.path.join(d, f"cal{i}.json")
                args = [a for kv in meta["set"].split(";") for a in ("--set", kv)]
                r = subprocess.run([XPUSIM, "calibrate", "--backend", "trace", "--trace", t,
                                    "-d", meta["device"], "-s", meta["scenario"], "-o", out] + args,
                                   cwd=ROOT, capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    doc = json.load(f)
                factors.append(doc["model"]["class_time_factor"])
                shapes.append(doc["calibration"]["classes"]["gemm"]["per_shape"])
            self.assertEqual(factors[0], factors[1])
            self.assertEqual(shapes[0], shapes[1])  # the GEMM ops' shapes survive trimming
            self.assertGreaterEqual(shapes[1]["n"], 4)
            self.assertAlmostEqual(shapes[1]["multiplier"], 1.2, places=5)
            self.assertAlmostEqual(factors[1]["gemm"], 1.2, places=5)
            self.assertAlmostEqual(factors[1]["norm"], 1.0, places=5)


if __name__ == "__main__":
    unittest.main()
