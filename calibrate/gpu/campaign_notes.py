"""The key lines of a GPU campaign's summary, read from what its parts wrote.

campaign.sh calls this after the parts ran (also after one failed, hung or
was cut short), so every reader accepts a missing or partial file and says
so in its line instead of failing. Standard library only: it runs on the GPU
machine and on the build machine alike.

  campaign_notes.py device-id NAME           xpusim device id of a CUDA device name ("" if none)
  campaign_notes.py fitted CAL.json [BASE]   the calibrated file's figures, against the base device's
  campaign_notes.py validate CSV...          per file: rows predicted, error by metric
  campaign_notes.py clocks CSV               the sampler's clocks, power, temperature, event reasons
"""

import csv
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xsgpu_common import device_id  # noqa: E402

# Lines of calibration figures printed before "... N more": the summary is
# read at a glance; the file itself is in the tarball (and beside it).
MAX_CAL_LINES = 30


def slug(name):
    """A GPU name as a file-name part: lower case, [a-z0-9-] only, without
    the vendor ("NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3")."""
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    s = re.sub(r"^(nvidia|tesla)-", "", s)
    return s[:48].strip("-") or "gpu"


def leaves(obj, prefix=""):
    """(dotted path, value) of every number in a JSON object; a list is one
    leaf holding its length, so long tables do not flood the summary."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from leaves(value, f"{prefix}{key}.")
    elif isinstance(obj, list):
        yield prefix[:-1], f"[{len(obj)} entries]"
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield prefix[:-1], obj


def fmt(v):
    return f"{v:.6g}" if isinstance(v, (int, float)) else str(v)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"{path}: {e}"


def fitted(cal_path, base_path=None):
    """The figures the calibration changed (base -> fitted, or new), then the
    numbers of its `calibration` object (fits, residuals, energies)."""
    cal, err = load_json(cal_path)
    if cal is None:
        return [f"no calibrated file ({err})"]
    base = {}
    if base_path:
        b, berr = load_json(base_path)
        if b is None:
            return [f"base device unreadable ({berr})"]
        base = dict(leaves({k: v for k, v in b.items() if k != "calibration"}))
    lines = [f"calibrated file {os.path.basename(cal_path)} (id {cal.get('id', '?')}):"]
    changed = 0
    for path, value in leaves({k: v for k, v in cal.items() if k != "calibration"}):
        if path not in base:
            if base_path:
                lines.append(f"  {path}: {fmt(value)} (new; not in the base device)")
                changed += 1
        elif base[path] != value:
            lines.append(f"  {path}: {fmt(base[path])} -> {fmt(value)}")
            changed += 1
    if base_path and not changed:
        lines.append("  no figure differs from the base device")
    calib = cal.get("calibration")
    if isinstance(calib, dict):
        items = list(leaves(calib))
        lines.append(f"  calibration ({len(items)} figures):")
        for path, value in items[:MAX_CAL_LINES]:
            lines.append(f"    {path}: {fmt(value)}")
        if len(items) > MAX_CAL_LINES:
            lines.append(f"    ... {len(items) - MAX_CAL_LINES} more in the file")
    else:
        lines.append("  no calibration object in the file")
    return lines


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def validate_summary(path):
    """One line for the file and one per metric: rows predicted, median and
    mean error, the worst row (xpusim validate's CSV: error_pct, status)."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        return [f"{os.path.basename(path)}: not written ({e.strerror})"]
    name = os.path.basename(path)
    if not rows:
        return [f"{name}: no rows"]
    if "error_pct" not in rows[0] or "status" not in rows[0]:
        return [f"{name}: {len(rows)} rows, columns {', '.join(rows[0].keys())} "
                "(no error_pct/status: not xpusim validate's CSV)"]
    ok = [r for r in rows if r.get("status") == "ok" and number(r.get("error_pct")) is not None]
    lines = [f"{name}: {len(rows)} rows, {len(ok)} predicted"]
    bad = [r for r in rows if r not in ok]
    if bad:
        lines.append(f"  not predicted: {len(bad)}, e.g. {bad[0].get('set', '')}: "
                     f"{bad[0].get('status', '')}")
    by_metric = {}
    for r in ok:
        by_metric.setdefault(r.get("metric", "?"), []).append(r)
    for metric, rs in sorted(by_metric.items()):
        errs = [number(r["error_pct"]) for r in rs]
        worst = max(rs, key=lambda r: abs(number(r["error_pct"])))
        lines.append(f"  {metric}: n={len(rs)}, median |error| "
                     f"{statistics.median(abs(e) for e in errs):.1f}%, mean error "
                     f"{statistics.mean(errs):+.1f}%, worst {number(worst['error_pct']):+.1f}% "
                     f"({worst.get('set', '')})")
    return lines


def clocks(path):
    """The sampler's rows: how many, over how long, and the spread of each
    clock, power and temperature; the clock event (throttle) reasons seen."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        return [f"clock/power sampler: no file ({e.strerror})"]
    if len(rows) < 2:
        return ["clock/power sampler: no samples"]
    # nvidia-smi names a column by its long name with the unit in brackets
    # ("clocks.current.sm [MHz]") whether or not `nounits` is given
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in rows[0]]
    body = [r for r in rows[1:] if len(r) == len(header)]
    lines = [f"clock/power sampler: {len(body)} samples"]
    for cols, label in ((("clocks.current.sm", "clocks.sm"), "SM clock MHz"),
                        (("clocks.current.memory", "clocks.mem"), "memory clock MHz"),
                        (("power.draw",), "power W"),
                        (("temperature.gpu",), "temperature C")):
        col = next((c for c in cols if c in header), None)
        if col is None:
            continue
        vals = [number(r[header.index(col)]) for r in body]
        vals = [v for v in vals if v is not None]
        if vals:
            lines.append(f"  {label}: min {min(vals):.0f}, median "
                         f"{statistics.median(vals):.0f}, max {max(vals):.0f}")
    for col in header:
        if col.startswith("clocks_event_reasons") or col.startswith("clocks_throttle_reasons"):
            seen = sorted({r[header.index(col)].strip() for r in body})
            lines.append(f"  {col}: {', '.join(seen)}")
    return lines


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "device-id" and len(args) == 1:
        print(device_id(args[0]) or "")
    elif cmd == "slug" and len(args) == 1:
        print(slug(args[0]))
    elif cmd == "fitted" and len(args) in (1, 2):
        print("\n".join(fitted(*args)))
    elif cmd == "validate" and args:
        for path in args:
            print("\n".join(validate_summary(path)))
    elif cmd == "clocks" and len(args) == 1:
        print("\n".join(clocks(args[0])))
    else:
        print(f"campaign_notes.py: unknown command or arguments: {' '.join(argv[1:])}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
