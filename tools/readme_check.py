#!/usr/bin/env python3
"""readme_check.py — re-run the examples of README.md and docs/*.md and
compare what they print with the output block under each, so that the
documentation shows real output and says when it no longer does.

A case is a ```sh block whose lines are `./xpusim ...` commands (an
`; echo "exit $?"` tail allowed) and `cat FILE` of what they wrote,
followed directly by a plain ``` block:
the expected stdout and stderr, in order. In an expected block a line `...`
stands for any number of lines. Commands that time this host's kernels or
need what a user has (calibrate, --run, my-*.json files, step.json) are
left out and listed, as are blocks without an output block.

Each case runs in a scratch folder that links the repository's top-level
entries, so files the commands write (figs/, batch.csv) stay out of the
tree; commands in docs/ run from the repository root too, as a user types
them there. Every relative link [text](path) of a file must name a file
that exists (and, for path#anchor into a Markdown file, one of its
headings), so that moving a section cannot leave a dead link behind.

Exit 0 when every case matches and every link resolves, 1 otherwise, with
a unified diff per mismatch. --update writes what the commands print now
into the blocks that differ and hold no `...` (those are trimmed by hand),
atomically.

    tools/readme_check.py [--readme FILE]... [--bin ./xpusim] [-v] [--update]

--readme may be repeated; without it: README.md, then docs/*.md sorted.
"""
import argparse
import difflib
import glob
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


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but - and _
    dropped, spaces to -."""
    h = heading.strip().lstrip("#").strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a shell comment is no heading
    return {slug(l) for l in text.split("\n") if l.startswith("#")}


def dead_links(path, lines):
    """'FILE:LINE: target (why)' for each relative link that names no file
    or no heading of the file it names; links out of the tree (http:,
    mailto:) are not followed."""
    dead = []
    fence = False
    here = os.path.dirname(os.path.abspath(path))
    for n, line in enumerate(lines, 1):
        if line.strip().startswith("```"):
            fence = not fence
        if fence:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(here, file)) if file else os.path.abspath(path)
            if not os.path.exists(full):
                dead.append(f"{path}:{n}: {target} (no such file)")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                dead.append(f"{path}:{n}: {target} (no such heading)")
    return dead


def check_file(path, name, xpusim, env, root, args):
    """Runs the cases of one file: (matched, differed, updated, not run)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
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
                left.append(f"  {name}:{at}: {cmds[0][:70]} ({why})")
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
                print(f"ok   {name}:{at}: {cmds[0][:70]}")
            continue
        bad += 1
        if args.update and not any(l.strip() == "..." for l in expected):
            updates.append((first, len(expected), out))
            print(f"UPDATED {name}:{at}: {cmds[0]}")
            continue
        print(f"DIFF {name}:{at}: {cmds[0]}")
        for l in difflib.unified_diff(expected, out, name, "now", lineterm="", n=1):
            print("    " + l)
    for first, n, out in reversed(updates):
        lines[first:first + n] = out
    if updates:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.replace(tmp, path)
        bad -= len(updates)
    return ok, bad, len(updates), left, dead_links(name, lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readme", action="append",
                    help="a Markdown file to check (repeatable; default README.md and docs/*.md)")
    ap.add_argument("--bin", default="./xpusim")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    # The repository this script lives in: the commands' data and the
    # default files are found there wherever it is run from.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = args.readme or [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "*.md")))
    xpusim = os.path.abspath(args.bin)
    if not os.access(xpusim, os.X_OK):
        sys.exit(f"readme_check: {args.bin}: not an executable (run make first)")
    env = dict(os.environ, XPUSIM_DATA=root)
    ok = bad = updated = 0
    left = []
    dead = []
    for path in files:
        name = os.path.relpath(path, root) if os.path.abspath(path).startswith(root + os.sep) else path
        o, b, u, lft, dd = check_file(path, name, xpusim, env, root, args)
        ok, bad, updated = ok + o, bad + b, updated + u
        left += lft
        dead += dd
    for d in dead:
        print(f"DEAD LINK {d}")
    print(f"readme_check: {ok + bad + updated} cases in {len(files)} files: {ok} match, "
          f"{bad} differ, {updated} updated; {len(left)} blocks not run; {len(dead)} dead links")
    if left:
        print("\n".join(left))
    return 1 if bad or dead else 0


if __name__ == "__main__":
    sys.exit(main())
