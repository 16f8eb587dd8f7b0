#!/bin/sh
# trace_dev_check.sh — what one traced step buys on the development set.
# For every board with single-GPU BERT-base rows in the KEPT part of the
# development data (make validate-kept writes it to build/holdout/kept/;
# BERT-large rows are held out and never read here), take the board's
# first amp_fp16 row in file order (a fixed rule, not a choice), simulate
# the trace of that run (xpusim calibrate --backend trace --simulate-trace:
# the model's kernel timeline scaled to the measured step), calibrate the
# board's device file from it, and validate the shipped and the calibrated
# file on the board's OTHER kept rows (the same recipe at other precisions
# and batch sizes, and repeat runs). The calibration row itself is left out:
# it matches by construction.
#   usage: calibrate/trace_dev_check.sh [KEPT_CSV] [WORK_DIR]
set -eu
XPUSIM=${XPUSIM:-./xpusim}
KEPT=${1:-build/holdout/kept/dev-bert-finetune-lambda.csv}
WORK=${2:-build/tracecal}
[ -f "$KEPT" ] || { echo "trace_dev_check: $KEPT not found (run make validate-kept first)" >&2; exit 2; }
mkdir -p "$WORK"
boards=$(awk -F, 'NR > 1 && $2 == "bert-base-squad" && $3 ~ /cluster.devices=1/ && $3 ~ /precision=amp_fp16/ { print $1 }' "$KEPT" | awk '!seen[$0]++')
printf '%-16s %-44s %5s  %-28s  %-28s\n' board "calibrated on (samples/s)" rows "shipped file: MAPE / signed" "calibrated: MAPE / signed"
for b in $boards; do
    row=$(awk -F, -v b="$b" 'NR > 1 && $1 == b && $2 == "bert-base-squad" && $3 ~ /cluster.devices=1/ && $3 ~ /precision=amp_fp16/ { print NR; exit }' "$KEPT")
    set_field=$(awk -F, -v r="$row" 'NR == r { print $3 }' "$KEPT")
    rate=$(awk -F, -v r="$row" 'NR == r { print $5 }' "$KEPT")
    sets=$(echo "$set_field" | tr ';' '\n' | sed 's/^/--set /' | tr '\n' ' ')
    rm -f "$WORK/$b-sim.json" "$WORK/$b-cal.json"
    # shellcheck disable=SC2086
    "$XPUSIM" calibrate --backend trace --simulate-trace "$WORK/$b-sim.json" -d "$b" \
        -s bert-base-squad $sets --samples-per-s "$rate" 2>/dev/null
    # shellcheck disable=SC2086
    "$XPUSIM" calibrate --backend trace --trace "$WORK/$b-sim.json" -d "$b" \
        -s bert-base-squad $sets -o "$WORK/$b-cal.json" 2>/dev/null
    awk -F, -v b="$b" -v r="$row" 'NR == 1 || (NR != r && $1 == b && $2 == "bert-base-squad" && $3 ~ /cluster.devices=1/)' \
        "$KEPT" > "$WORK/$b-shipped.csv"
    n=$(($(wc -l < "$WORK/$b-shipped.csv") - 1))
    if [ "$n" -eq 0 ]; then
        printf '%-16s %-44s %5s  no other row of this board\n' "$b" "$set_field" 0
        continue
    fi
    awk -F, -v OFS=, -v p="$WORK/$b-cal.json" 'NR > 1 { $1 = p } { print }' "$WORK/$b-shipped.csv" > "$WORK/$b-cal.csv"
    before=$("$XPUSIM" validate --measured "$WORK/$b-shipped.csv" | awk '/^  all rows/ { print $6 " / " $12 }')
    after=$("$XPUSIM" validate --measured "$WORK/$b-cal.csv" | awk '/^  all rows/ { print $6 " / " $12 }')
    printf '%-16s %-44s %5s  %-28s  %-28s\n' "$b" "$(echo "$set_field" | sed 's/train\.//g; s/;cluster.devices=1//') ($rate)" "$n" "$before" "$after"
done
