"""The xpusim Python module against an installed library (make
test-install runs this with the installed tree on LD_LIBRARY_PATH,
XPUSIM_BIN the installed command, no XPUSIM_DATA): its answers are the
command's."""
import json
import os
import subprocess
import unittest

import xpusim

BIN = os.environ.get("XPUSIM_BIN", "xpusim")
SHARE = os.environ.get("XPUSIM_SHARE")


def cli(*args, ok=(0,)):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    if r.returncode not in ok:
        raise AssertionError("xpusim %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


class Module(unittest.TestCase):
    def test_loads_the_installed_package_and_library(self):
        pkg = os.environ.get("XPUSIM_PKG")
        if pkg:
            self.assertTrue(xpusim.__file__.startswith(pkg), xpusim.__file__)
        self.assertNotIn("XPUSIM_DATA", os.environ)
        self.assertEqual(xpusim.version(), "0.1.0")
        self.assertIn("a100-sxm4-80gb", xpusim.devices())
        self.assertIn("bert-large-squad", xpusim.scenarios())


class Predict(unittest.TestCase):
    def test_predict_is_the_commands_json(self):
        got = xpusim.predict("l4", "bert-base-squad", {"train.precision": "amp_bf16"},
                             train__batch=16)
        want = json.loads(cli("predict", "-d", "l4", "-s", "bert-base-squad", "--set",
                              "train.batch=16", "--set", "train.precision=amp_bf16",
                              "--format", "json"))
        self.assertEqual(got, want)
        self.assertEqual(got["scenario"]["train"]["batch"], 16)

    def test_set_as_dict_and_as_keywords_agree(self):
        a = xpusim.summary("t4", "bert-base-squad", {"train.batch": 8})
        b = xpusim.summary("t4", "bert-base-squad", train__batch=8)
        c = xpusim.summary("t4", "bert-base-squad", train__batch=32)
        self.assertEqual(a, b)
        self.assertGreater(c["step_time_s"], a["step_time_s"])

    def test_ops_add_up_to_the_step(self):
        s = xpusim.summary("a100-sxm4-80gb", "bert-large-squad")
        ops = xpusim.ops("a100-sxm4-80gb", "bert-large-squad")
        self.assertEqual(len(ops), s["nops"])
        self.assertAlmostEqual(sum(o["time_s"] for o in ops) + s["host_wait_s"],
                               s["step_time_s"], delta=1e-9 * s["step_time_s"])
        self.assertEqual({o["phase"] for o in ops}, {"fwd", "bwd", "opt"})
        self.assertTrue(s["fits"])

    def test_errors_raise_with_the_commands_message(self):
        with self.assertRaises(xpusim.Error) as e:
            xpusim.predict("a100-sxm9", "bert-base-squad")
        self.assertEqual(e.exception.code, -7)
        self.assertIn("unknown device 'a100-sxm9'", str(e.exception))
        with self.assertRaises(xpusim.Error) as e:
            xpusim.predict("l4", "bert-base-squad", train__batchsize=8)
        r = subprocess.run([BIN, "predict", "-d", "l4", "-s", "bert-base-squad", "--set",
                            "train.batchsize=8"], capture_output=True, text=True)
        self.assertEqual(r.stderr.splitlines()[0], "xpusim: error: " + str(e.exception))
        with self.assertRaises(xpusim.Error):
            xpusim.summary("l4", "no-such-scenario")


    def test_a_nul_inside_a_string_is_refused(self):
        # ctypes would hand the C library the text before the NUL: the
        # A100 for "a100-sxm4-80gb\0evil", batch 8 for "8\0abc"
        with self.assertRaises(ValueError):
            xpusim.predict("a100-sxm4-80gb\0evil", "bert-base-squad")
        with self.assertRaises(ValueError):
            xpusim.predict("t4", "bert-base-squad", train__batch="8\0abc")
        with self.assertRaises(ValueError):
            xpusim.sweep("bert-base-squad", "t4", vary={"train.batch": "8\0,16"})
        with self.assertRaises(ValueError):
            xpusim.validate(["data/measured\0/x.csv"])


class Grids(unittest.TestCase):
    def test_compare_ranks_as_the_command_does(self):
        rows = xpusim.compare("bert-base-squad", ["l4", "t4", "a10"],
                              vary={"train.batch": [8, 32]}, weights="time=1,cost=2")
        want = json.loads(cli("compare", "-s", "bert-base-squad", "-d", "l4,t4,a10", "--vary",
                              "train.batch=8,32", "--weights", "time=1,cost=2", "--format",
                              "json"))["rows"]
        self.assertEqual(len(rows), 6)
        self.assertEqual([(r["device"], r["point"]["train.batch"]) for r in rows],
                         [(w["device"], str(w["point"]["train.batch"])) for w in want])
        for r, w in zip(rows, want):
            self.assertAlmostEqual(r["score"], w["score"], places=12)
            self.assertEqual(r["pareto"], w["pareto"])
        self.assertTrue(rows[0]["pareto"])

    def test_compare_defaults_to_every_accelerator(self):
        rows = xpusim.compare("bert-base-squad")
        devs = {r["device"] for r in rows}
        self.assertIn("h100-sxm5-80gb", devs)
        self.assertFalse(any(d.startswith("xeon") for d in devs))
        with self.assertRaises(xpusim.Error) as e:
            xpusim.compare("bert-base-squad", ["l4"], budget_usd=1e-6)
        self.assertIn("the cheapest run costs", str(e.exception))

    def test_sweep_gives_a_row_a_point_and_device(self):
        rows = xpusim.sweep("gpt2-medium-finetune", ["t4", "a100-sxm4-80gb"],
                            vary={"train.batch": "8:32:8",
                                  "train.attention": ["unfused", "flash"]})
        self.assertEqual(len(rows), 4 * 2 * 2)
        self.assertEqual(rows[0]["point"], {"train.batch": "8", "train.attention": "unfused"})
        self.assertEqual([r["device"] for r in rows[:2]], ["t4", "a100-sxm4-80gb"])
        self.assertTrue(any(not r["fits"] and r["reason"] for r in rows))
        self.assertNotIn("score", rows[0])
        with self.assertRaises(xpusim.Error):
            xpusim.sweep("gpt2-medium-finetune", ["t4"], vary={"train.batch": "0:4"})


class Validate(unittest.TestCase):
    def test_validate_is_the_commands_json(self):
        if not SHARE:
            self.skipTest("XPUSIM_SHARE not set")
        f = os.path.join(SHARE, "data", "published", "zeus-v100-bert-base-squad.csv")
        got = xpusim.validate(f)
        self.assertEqual(got, json.loads(cli("validate", "--measured", f, "--format", "json")))
        self.assertGreater(got["summary"]["n"], 10)
        with self.assertRaises(xpusim.Error):
            xpusim.validate("/no/such.csv")


if __name__ == "__main__":
    unittest.main()
