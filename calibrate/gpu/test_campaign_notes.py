"""Tests of campaign_notes.py, the GPU campaign's summary lines (no GPU needed).

  python3 -m unittest discover -s calibrate/gpu -p 'test_*.py'

The validate reader is also run on a table ./xpusim (XPUSIM_BIN) writes, so
that it follows the columns xpusim really has.
"""

import copy
import csv
import json
import os
import subprocess
import tempfile
import unittest

from campaign_notes import clocks, fitted, slug, validate_summary

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
XPUSIM = os.environ.get("XPUSIM_BIN", os.path.join(ROOT, "xpusim"))
H100 = os.path.join(ROOT, "devices", "h100-sxm5-80gb.json")


class SlugTest(unittest.TestCase):
    def test_names_become_legal_file_name_parts(self):
        self.assertEqual(slug("NVIDIA H100 80GB HBM3"), "h100-80gb-hbm3")
        self.assertEqual(slug("Tesla V100-SXM2-16GB"), "v100-sxm2-16gb")
        self.assertEqual(slug("  ***  "), "gpu")


class FittedTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        with open(H100) as f:
            self.base = json.load(f)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, doc):
        path = os.path.join(self.dir.name, "h100-cal.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def test_changed_and_new_figures_against_the_base_then_the_calibration(self):
        cal = copy.deepcopy(self.base)
        old = cal["model"]["mem_bw_efficiency"]
        cal["model"]["mem_bw_efficiency"] = old * 0.5
        cal["model"]["new_figure"] = 3
        cal["calibration"] = {"fits": {"gemm": {"rms_residual_pct": 4.25}}, "rows": [1, 2, 3]}
        lines = fitted(self.write(cal), H100)
        text = "\n".join(lines)
        self.assertIn(f"model.mem_bw_efficiency: {old:.6g} -> {old * 0.5:.6g}", text)
        self.assertIn("model.new_figure: 3 (new; not in the base device)", text)
        self.assertIn("fits.gemm.rms_residual_pct: 4.25", text)
        self.assertIn("rows: [3 entries]", text)
        # figures the calibration left alone are not listed
        self.assertNotIn("memory.bandwidth_gbs", text)

    def test_a_file_equal_to_its_base_says_so(self):
        self.assertIn("no figure differs", "\n".join(fitted(self.write(self.base), H100)))

    def test_a_missing_or_broken_file_gives_one_line(self):
        self.assertEqual(len(fitted(os.path.join(self.dir.name, "none.json"))), 1)
        path = os.path.join(self.dir.name, "bad.json")
        with open(path, "w") as f:
            f.write("{ not json")
        self.assertTrue(fitted(path)[0].startswith("no calibrated file"))

    def test_long_calibrations_are_cut(self):
        cal = dict(self.base, calibration={f"k{i}": i for i in range(100)})
        text = "\n".join(fitted(self.write(cal)))
        self.assertIn("... 70 more in the file", text)


class ValidateSummaryTest(unittest.TestCase):
    def test_rows_by_metric_and_the_worst(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "v.csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["file", "line", "device", "scenario", "set", "metric", "measured",
                            "predicted", "low", "high", "error_pct", "status"])
                w.writerow(["-", 1, "d", "-", "op=a", "time_s", 1, 1.1, "", "", "10", "ok"])
                w.writerow(["-", 2, "d", "-", "op=b", "time_s", 1, 0.7, "", "", "-30", "ok"])
                w.writerow(["-", 3, "d", "-", "op=c", "time_s", 1, 1.0, "", "", "2", "ok"])
                w.writerow(["-", 4, "d", "-", "op=e", "energy_j", 1, "", "", "", "", "no power model"])
            lines = validate_summary(path)
        self.assertEqual(lines[0], "v.csv: 4 rows, 3 predicted")
        self.assertIn("not predicted: 1, e.g. op=e: no power model", lines[1])
        self.assertEqual(lines[2], "  time_s: n=3, median |error| 10.0%, mean error -6.0%, "
                                   "worst -30.0% (op=b)")

    def test_missing_file_and_foreign_table_are_said(self):
        self.assertIn("not written", validate_summary("/nonexistent/v.csv")[0])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.csv")
            with open(path, "w") as f:
                f.write("a,b\n1,2\n")
            self.assertIn("not xpusim validate's CSV", validate_summary(path)[0])

    @unittest.skipUnless(os.access(XPUSIM, os.X_OK), "xpusim not built")
    def test_reads_the_table_xpusim_validate_writes(self):
        measured = os.path.join(ROOT, "data", "measured", "dev-gemm-deepbench-v100.csv")
        with open(measured) as f:
            rows = sum(1 for _ in f) - 1
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "v.csv")
            subprocess.run([XPUSIM, "validate", "--measured", measured, "--format", "csv",
                            "-o", out], check=True, capture_output=True)
            lines = validate_summary(out)
        self.assertEqual(lines[0], f"v.csv: {rows} rows, {rows} predicted")
        self.assertTrue(lines[1].startswith(f"  time_s: n={rows}, median |error| "), lines)


class ClocksTest(unittest.TestCase):
    def test_nvidia_smi_columns_with_units_and_event_reasons(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "c.csv")
            with open(path, "w") as f:
                f.write("timestamp, clocks.current.sm [MHz], clocks.current.memory [MHz], "
                        "power.draw [W], temperature.gpu, clocks_event_reasons.active\n")
                f.write("2026/11/24 10:00:00.000, 1980, 2619, 120.5, 40, 0x0000000000000000\n")
                f.write("2026/11/24 10:00:00.200, 1755, 2619, 690.0, 61, 0x0000000000000004\n")
                f.write("2026/11/24 10:00:00.400, 1830, 2619, [N/A], 60, 0x0000000000000004\n")
                f.write("a cut-off last line\n")
            lines = clocks(path)
        self.assertEqual(lines[0], "clock/power sampler: 3 samples")
        self.assertIn("  SM clock MHz: min 1755, median 1830, max 1980", lines)
        self.assertIn("  power W: min 120, median 405, max 690", lines)
        self.assertIn("  clocks_event_reasons.active: 0x0000000000000000, 0x0000000000000004",
                      lines)

    def test_no_file_or_no_samples(self):
        self.assertIn("no file", clocks("/nonexistent/c.csv")[0])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "c.csv")
            with open(path, "w") as f:
                f.write("timestamp, power.draw [W]\n")
            self.assertEqual(clocks(path), ["clock/power sampler: no samples"])


if __name__ == "__main__":
    unittest.main()
