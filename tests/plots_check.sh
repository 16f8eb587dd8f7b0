#!/usr/bin/env bash
# plots_check.sh — the figures' inputs stay what plots/*.gp expect.
# For each script: xpusim writes a small input of the kind the Makefile feeds
# it; every column the script reads by name (column("x"), strcol("x")) must be
# in that input's header; the rows the script leaves out by their numbers
# must be exactly the rows xpusim marks as not predicted; and gnuplot draws
# the figures from it (PNG and SVG, non-empty, nothing on stderr).
# Run by `make test-plots` (part of `make test`); XPUSIM_BIN names the binary.
set -u
cd "$(dirname "$0")/.."
XPUSIM=${XPUSIM_BIN:-./xpusim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "plots_check: FAIL: $*"; fails=$((fails + 1)); }

# names a script reads by name
names() { grep -oE '(column|strcol)\("[A-Za-z0-9_]+"\)' "$1" | sed -E 's/.*\("([^"]+)"\)/\1/' | sort -u; }

# check_header SCRIPT CSV: every name the script reads is a column of CSV
check_header() {
    local header n
    header=",$(head -n 1 "$2" | tr -d '\r'),"
    for n in $(names "$1"); do
        case "$header" in
            *",$n,"*) ;;
            *) fail "$1 reads column '$n', not in the header of $3: ${header:1:${#header}-2}" ;;
        esac
    done
}

# check_rows CSV REASON_COLUMN REASON_OK NUMBER_COLUMNS...: a row has all its
# numbers when REASON_COLUMN is REASON_OK, and none of them otherwise (the
# scripts tell the rows apart by their numbers)
check_rows() {
    python3 - "$@" <<'EOF' || fails=$((fails + 1))
import csv, sys
path, reason, ok, cols = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = list(csv.DictReader(open(path, newline='')))
bad = []
for i, r in enumerate(rows, 2):
    have = [r.get(c, '') != '' for c in cols]
    want = r.get(reason, '') == ok
    if (want and not all(have)) or (not want and any(have)):
        bad.append(i)
if not rows:
    bad.append('no rows')
if bad:
    print(f"plots_check: FAIL: {path}: rows {bad[:5]} break '{reason}' == '{ok}' <=> {cols} present")
    sys.exit(1)
EOF
}

# draw SCRIPT CSV OUT FIGURES...: gnuplot runs clean and writes every figure
draw() {
    local script=$1 csv=$2 out=$3 f
    shift 3
    if ! gnuplot -e "in='$csv'; out='$out'; title='plots_check'" "$script" >"$tmp/gp.out" 2>&1 ||
       [ -s "$tmp/gp.out" ]; then
        fail "gnuplot $script on $csv: $(head -c 600 "$tmp/gp.out")"
        return
    fi
    for f in "$@"; do
        [ -s "$out$f.png" ] && [ -s "$out$f.svg" ] || fail "$script did not draw $out$f.png and .svg"
    done
}

have_gnuplot=1
command -v gnuplot >/dev/null || { have_gnuplot=0; echo "plots_check: gnuplot not found, figures not drawn (headers still checked)"; }

# compare: --all so that one device (the CPU, no fused attention) is listed
# with a reason and no numbers, and devices too small for the step (fits 0)
# with their speed but no cost: the figure leaves both out
"$XPUSIM" compare -s gpt2-medium-finetune --all --format csv -o "$tmp/compare.csv" ||
    fail "xpusim compare --format csv failed"
grep -q 'attn\.flash' "$tmp/compare.csv" ||
    fail "compare --all on gpt2-medium-finetune lists no device without the fused-attention kernel (the unavailable row this check relies on)"
grep -q ',0$' "$tmp/compare.csv" ||
    fail "compare --all on gpt2-medium-finetune lists no device the step does not fit (the unpriced row this check relies on)"
check_header plots/compare.gp "$tmp/compare.csv" "xpusim compare --format csv"
check_rows "$tmp/compare.csv" unavailable '' samples_per_s samples_per_s_low samples_per_s_high
check_rows "$tmp/compare.csv" fits 1 run_cost_usd run_cost_low_usd run_cost_high_usd
[ $have_gnuplot = 1 ] && draw plots/compare.gp "$tmp/compare.csv" "$tmp/compare" ''

# gemm sweep: the first column is the swept dimension
"$XPUSIM" gemm -d a100-sxm4-80gb --m 256 --k 256 --dtype fp16 --sweep n=1:64 -o "$tmp/sweep.csv" ||
    fail "xpusim gemm --sweep failed"
[ "$(head -n 1 "$tmp/sweep.csv" | cut -d, -f1)" = n ] || fail "gemm --sweep n=...: first column is not 'n'"
check_header plots/gemm-sweep.gp "$tmp/sweep.csv" "xpusim gemm --sweep"
[ $have_gnuplot = 1 ] && draw plots/gemm-sweep.gp "$tmp/sweep.csv" "$tmp/sweep" ''

# validate: the development sets, with rows that cannot be predicted
# (multi-GPU runs) next to predicted ones of two metrics
"$XPUSIM" validate $(for f in data/measured/dev-*.csv; do printf -- '--measured %s ' "$f"; done) \
    --format csv -o "$tmp/validate.csv" 2>/dev/null
[ -s "$tmp/validate.csv" ] || fail "xpusim validate --format csv wrote nothing"
check_header plots/validate.gp "$tmp/validate.csv" "xpusim validate --format csv"
check_rows "$tmp/validate.csv" status ok predicted error_pct
[ $have_gnuplot = 1 ] && draw plots/validate.gp "$tmp/validate.csv" "$tmp/validate" '' -bias

# xpusim plot KIND: it writes DIR/KIND.csv, draws DIR/KIND.png and .svg
# itself, and fails in one line (exit 3) where gnuplot is not on PATH
# plot_kind KIND ARGS...: the figures are there and non-empty, and every
# column plots/KIND.gp reads is in the CSVs it wrote
plot_kind() {
    local kind=$1 header n
    shift
    rm -rf "$tmp/plot"
    if ! "$XPUSIM" plot "$kind" "$@" -o "$tmp/plot" >"$tmp/plot.out" 2>&1 ||
       grep -v '^plot: ' "$tmp/plot.out" | grep -q .; then
        fail "xpusim plot $kind $*: $(head -c 600 "$tmp/plot.out")"
        return
    fi
    for f in png svg csv; do
        [ -s "$tmp/plot/$kind.$f" ] || fail "xpusim plot $kind did not write $kind.$f"
    done
    header=","
    for f in "$tmp/plot/"*.csv; do header="$header$(head -n 1 "$f" | tr -d '\r'),"; done
    for n in $(names "plots/$kind.gp"); do
        case "$header" in
            *",$n,"*) ;;
            *) fail "plots/$kind.gp reads column '$n', not in what xpusim plot $kind wrote" ;;
        esac
    done
}
# rows CSV N: CSV has N data rows
rows() {
    local got
    got=$(($(wc -l <"$1") - 1))
    [ "$got" = "$2" ] || fail "$1: $got rows, expected $2"
}

if [ $have_gnuplot = 1 ]; then
    # t4 and v100-sxm2-16gb: the step does not fit (no cost, a reason); the
    # CPU cannot run flash attention (left out, a line on stderr)
    devs=h100-sxm5-80gb,a100-sxm4-80gb,a10,t4,v100-sxm2-16gb
    plot_kind time-by-kind -s bert-large-squad -d $devs
    rows "$tmp/plot/time-by-kind.csv" 5
    head -n 1 "$tmp/plot/time-by-kind.csv" | grep -q '^device,step_time_ms,fits,gemm,.*,host_wait$' ||
        fail "time-by-kind.csv: header is not device,step_time_ms,fits,<kinds>,host_wait"
    # the stack is the step: the kinds and the host wait add up to step_time_ms
    python3 - "$tmp/plot/time-by-kind.csv" <<'EOF2' || fails=$((fails + 1))
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    parts = sum(float(v) for k, v in r.items() if k not in ('device', 'step_time_ms', 'fits'))
    if abs(parts - float(r['step_time_ms'])) > 1e-4 * float(r['step_time_ms']):
        print(f"plots_check: FAIL: time-by-kind {r['device']}: kinds sum to {parts} ms, step {r['step_time_ms']} ms")
        sys.exit(1)
EOF2
    plot_kind cost-time -s bert-large-squad -d $devs
    rows "$tmp/plot/cost-time.csv" 5
    check_rows "$tmp/plot/cost-time.csv" reason '' run_time_h cost_usd pareto
    grep -q '^t4,,,,,,"does not fit' "$tmp/plot/cost-time.csv" || fail "cost-time.csv: t4 has no 'does not fit' reason"
    plot_kind roofline -s bert-base-squad -d a100-sxm4-80gb
    rows "$tmp/plot/roofline-device.csv" 1
    [ "$(wc -l <"$tmp/plot/roofline.csv")" -gt 20 ] || fail "roofline.csv: fewer than 20 ops"
    plot_kind waterfall -s bert-base-squad -d t4
    rows "$tmp/plot/waterfall.csv" 6
    check_rows "$tmp/plot/waterfall.csv" applied 1 samples_per_s cost_usd speedup_vs_start
    plot_kind waterfall -s tinyllama-1.1b-finetune -d a10 --order amp,fused_kernels,flash
    rows "$tmp/plot/waterfall.csv" 4
    check_rows "$tmp/plot/waterfall.csv" applied 1 samples_per_s cost_usd speedup_vs_start
    grep -q '^2,fused_kernels,0,' "$tmp/plot/waterfall.csv" || fail "waterfall.csv: fused_kernels on llama not skipped"
fi
# without gnuplot: one error line, exit 3, no file
rm -rf "$tmp/plot"
PATH=/nonexistent "$XPUSIM" plot waterfall -o "$tmp/plot" >"$tmp/plot.out" 2>&1
rc=$?
[ $rc = 3 ] || fail "xpusim plot without gnuplot on PATH: exit $rc, expected 3"
[ "$(wc -l <"$tmp/plot.out")" = 1 ] && grep -q 'gnuplot is not on PATH' "$tmp/plot.out" ||
    fail "xpusim plot without gnuplot: not one line naming gnuplot: $(head -c 300 "$tmp/plot.out")"
[ ! -e "$tmp/plot" ] || fail "xpusim plot without gnuplot made its folder"

if [ $fails -gt 0 ]; then
    echo "plots_check: $fails failure(s)"
    exit 1
fi
echo "plots_check: ok (compare, gemm-sweep, validate inputs and figures; xpusim plot time-by-kind, cost-time, roofline, waterfall)"
