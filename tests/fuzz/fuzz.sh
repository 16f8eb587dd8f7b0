#!/usr/bin/env bash
# fuzz.sh — runs the libFuzzer harnesses that fuzz.mk builds into build/fuzz/:
#   fuzz.sh ci SECONDS RSS_MB NAME...   fuzz each for SECONDS from its seeds, then
#                                       replay its saved regression inputs
#   fuzz.sh long RUNS RSS_MB NAME...    fuzz each for RUNS executions, then replay
#   fuzz.sh regress 0 RSS_MB NAME...    replay the regression inputs only
# The harnesses run FUZZ_JOBS at a time (one a core by default), each on
# its own core for SECONDS; their reports follow in the order named.
# Fails when any harness reports anything: a crash, a leak, an ASan or UBSan
# report, a timeout (10 s an input) or more than RSS_MB of memory. The input
# that did it is left in build/fuzz/artifacts/NAME/; the new corpus entries
# stay in build/fuzz/corpus/NAME/ for the next run.
set -uo pipefail
mode=$1 amount=$2 rss=$3
shift 3
cd "$(dirname "$0")/../.."
fz=build/fuzz
# Every execution writes its input to a scratch file: tmpfs when there is one.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
sym=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
if [ -n "$sym" ]; then export ASAN_SYMBOLIZER_PATH=$sym; fi
export UBSAN_OPTIONS=print_stacktrace=1
common=(-rss_limit_mb="$rss" -timeout=10)
# A report that did not end the run still fails it.
reported='ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error:|ERROR: libFuzzer'
# One harness: its lines and its verdict (ok or FAILED) in $fz/NAME.summary
# and $fz/NAME.status, so that several run side by side.
run_one() {
    local name=$1
    local bin=$fz/fuzz_$name
    local log=$fz/$name.log
    local regress=tests/fuzz/regressions/$name
    mkdir -p "$fz/artifacts/$name" "$fz/corpus/$name"
    local ok=1
    if [ "$mode" != regress ]; then
        local limit dict=()
        if [ "$mode" = long ]; then limit=-runs=$amount; else limit=-max_total_time=$amount; fi
        if [ -f "tests/fuzz/dicts/$name.dict" ]; then dict=(-dict="tests/fuzz/dicts/$name.dict"); fi
        echo "fuzz: $name $limit (log: $log)"
        "$bin" "${common[@]}" "${dict[@]}" "$limit" -print_final_stats=1 \
            -artifact_prefix="$fz/artifacts/$name/" "$fz/corpus/$name" "tests/fuzz/seeds/$name" \
            >"$log" 2>&1 || ok=0
        if grep -Eq "$reported" "$log"; then ok=0; fi
        grep -E '^(Done [0-9]+ runs|stat::average_exec_per_sec|stat::peak_rss_mb)' "$log" |
            sed "s/^/fuzz: $name: /"
    fi
    if [ $ok = 1 ] && [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
        log=$fz/$name.regress.log
        "$bin" "${common[@]}" "$regress"/* >"$log" 2>&1 || ok=0
        if grep -Eq "$reported" "$log"; then ok=0; fi
        echo "fuzz: $name: $(ls -A "$regress" | wc -l) regression inputs replayed"
    fi
    if [ $ok = 0 ]; then
        tail -n 80 "$log"
        echo "fuzz: $name: FAILED (log: $log, input: $fz/artifacts/$name/)"
    fi
    echo $ok >"$fz/$name.status"
}

# FUZZ_JOBS harnesses at a time (default: one a core); each reports in
# turn, in the order given.
jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
for name in "$@"; do
    rm -f "$fz/$name.status"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    run_one "$name" >"$fz/$name.summary" 2>&1 &
done
wait
failed=()
for name in "$@"; do
    cat "$fz/$name.summary"
    if [ "$(cat "$fz/$name.status" 2>/dev/null)" != 1 ]; then failed+=("$name"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}"
    exit 1
fi
echo "fuzz: $mode: $# harnesses clean"
