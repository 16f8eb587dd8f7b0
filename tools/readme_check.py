#!/usr/bin/env python3
"""readme_check.py — re-run the README's example commands and compare what
they print with the output block under each, so that the README shows real
output and says when it no longer does.

A case is a ```sh block whose lines are `./xpusim ...` commands (an
`; echo "exit $?"` tail allowed) and `cat FILE` of what they wrote,
followed directly by a plain ``` block:
the expected stdout and stderr, in order. In an expected block a line `...`
stands for any number of lines. Commands that time this host's kernels or
need what a user has (calibrate, --run, my-*.json files, step.json) are
left out and listed, as are blocks without an output block.

Each case runs in a scratch folder that links the repository's top-level
entries, so files the commands write (figs/, batch.csv) stay out of the
tree. Exit 0 when every case matches, 1 otherwise, with a unified diff per
mismatch. --update writes what the commands print now into the blocks
that differ and hold no `...` (those are trimmed by hand), atomically.

    tools/readme_check.py [--readme README.md] [--bin ./xpusim] [-v] [--update]
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = re.compile(r"calibrate|--run\b|--backend cpu|my-[a-z0-9-]+\.json|step\.json")


def host_specific(cmd):
    """Timing this host, a user's files, or this CPU model's device file
    (`threads` without -d)."""
    return bool(SKIP.search(cmd)) or (" threads " in cmd and " -d " not in cmd)


def cases(lines):
    """(line number, commands, expected lines or None, index of the expected
    block's first line) per ```sh block."""
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```sh":
            i += 1
            continue
        start = i + 1
        j = start
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        cmds = [l for l in lines[start:j] if l.strip()]
        expected = None
        if j + 1 < len(lines) and lines[j + 1].strip() == "```":
            k = j + 2
            while k < len(lines) and lines[k].strip() != "```":
                k += 1
            expected = lines[j + 2:k]
            i = k + 1
        else:
            i = j + 1
        yield start, cmds, expected, j + 2


def matches(expected, actual):
    """Whether actual fits expected, `...` lines matching any run of lines."""
    memo = {}

    def go(e, a):
        if (e, a) in memo:
            return memo[e, a]
        if e == len(expected):
            r = a == len(actual)
        elif expected[e].strip() == "...":
            r = any(go(e + 1, k) for k in range(a, len(actual) + 1))
        else:
            r = a < len(actual) and expected[e].rstrip() == actual[a].rstrip() and go(e + 1, a + 1)
        memo[e, a] = r
        return r

    sys.setrecursionlimit(100000)
    return go(0, 0)


def scratch(root):
    d = tempfile.mkdtemp(prefix="readme-check-")
    for name in os.listdir(root):
        if name.startswith(".") or name in ("figs", "batch.csv"):
            continue
        os.symlink(os.path.join(root, name), os.path.join(d, name))
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readme", default="README.md")
    ap.add_argument("--bin", default="./xpusim")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    root = os.path.dirname(os.path.abspath(args.readme))
    xpusim = os.path.abspath(args.bin)
    if not os.access(xpusim, os.X_OK):
        sys.exit(f"readme_check: {args.bin}: not an executable (run make first)")
    with open(args.readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    env = dict(os.environ, XPUSIM_DATA=root)
    ok = bad = 0
    left = []
    updates = []
    for at, cmds, expected, first in cases(lines):
        cmds = [re.sub(r"\s+#.*$", "", c) for c in cmds]
        runnable = cmds and cmds[0].startswith("./xpusim ") and all(
            c.startswith(("./xpusim ", "cat ")) for c in cmds)
        if not runnable or expected is None or any(host_specific(c) for c in cmds):
            if cmds and any("xpusim" in c for c in cmds):
                why = "no output block" if expected is None else "host- or user-specific"
                left.append(f"  README.md:{at}: {cmds[0][:70]} ({why})")
            continue
        d = scratch(root)
        out = []
        for c in cmds:
            c = c.replace("./xpusim", xpusim, 1)
            p = subprocess.run(c, shell=True, cwd=d, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            out += p.stdout.rstrip("\n").split("\n") if p.stdout else []
        shutil.rmtree(d)
        if matches(expected, out):
            ok += 1
            if args.verbose:
                print(f"ok   README.md:{at}: {cmds[0][:70]}")
            continue
        bad += 1
        if args.update and not any(l.strip() == "..." for l in expected):
            updates.append((first, len(expected), out))
            print(f"UPDATED README.md:{at}: {cmds[0]}")
            continue
        print(f"DIFF README.md:{at}: {cmds[0]}")
        for l in difflib.unified_diff(expected, out, "README", "now", lineterm="", n=1):
            print("    " + l)
    for first, n, out in reversed(updates):
        lines[first:first + n] = out
    if updates:
        tmp = args.readme + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.replace(tmp, args.readme)
        bad -= len(updates)
    print(f"readme_check: {ok} blocks match, {bad} differ, {len(updates)} updated, "
          f"{len(left)} not run:")
    print("\n".join(left))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
