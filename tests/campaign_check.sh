#!/usr/bin/env bash
# campaign_check.sh — the GPU campaign (calibrate/gpu/campaign.sh) and its
# importer on a host without a GPU. Fake tools (nvidia-smi, the bundle's
# xpusim and CUDA binaries, the PyTorch kit) stand in for the GPU machine:
#   - the bundle: xpusim with every library but the system's, running on them;
#   - no GPU: every part but prov skipped with the reason, exit 0, a summary;
#   - a fake GPU whose parts fail, hang and write too much: each failure
#     recorded and the next part run, the tarball within 16 MiB by dropping
#     the largest trace first, long logs cut, at most 8 legal files;
#   - tools that say there is no GPU (exit 77, exit 3): skipped, not failed;
#   - SIGTERM during a part: the part ended, what exists packed, exit 143;
#   - a budget too small: parts skipped for time and the second call named;
#   - no bundle: the tree's xpusim used, a failing make recorded (or, where
#     nvcc built them, the real xs_cuda_tests saying there is no GPU);
#   - usage errors: one line, exit 2;
#   - import.sh: the tarball into a measured folder with PROVENANCE.md, the
#     measured-run CSV xpusim predicts at the top, the others not; a second
#     import, a tarball climbing out of its folder or holding a link refused.
# Run by `make test-campaign` (part of `make test`); XPUSIM_BIN names the
# real binary (import.sh checks CSVs with it).
set -u
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
XPUSIM_REAL=$(cd "$(dirname "${XPUSIM_BIN:-./xpusim}")" && pwd)/$(basename "${XPUSIM_BIN:-./xpusim}")
CAMPAIGN=$root/calibrate/gpu/campaign.sh
IMPORT=$root/calibrate/gpu/import.sh
tmp=$(mktemp -d)
[ "${KEEP_TMP:-0}" = 1 ] && echo "campaign_check: keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "campaign_check: FAIL: $*"; fails=$((fails + 1)); }
has() { grep -qE -- "$2" "$1" || fail "$3: '$2' not in $1"; }
hasnt() { ! grep -qE -- "$2" "$1" || fail "$3: '$2' in $1"; }

# limits DIR: what the device tool brings back (README.md of the tool):
# at most 8 files, each <= 16 MiB, 64 MiB in all, legal names, no folders
limits() {
    local n=0 total=0 f size
    for f in "$1"/* "$1"/.[!.]*; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        [ -f "$f" ] || fail "$1: $(basename "$f") is not a plain file"
        size=$(stat -c %s "$f")
        total=$((total + size))
        [ "$size" -le $((16 * 1024 * 1024)) ] || fail "$1: $(basename "$f") is $size bytes"
        [[ $(basename "$f") =~ ^[A-Za-z0-9._-]+$ ]] || fail "$1: illegal name $(basename "$f")"
    done
    [ "$n" -ge 2 ] && [ "$n" -le 8 ] || fail "$1: $n files (want 2..8)"
    [ "$total" -le $((64 * 1024 * 1024)) ] || fail "$1: $total bytes in all"
    [ -f "$1/summary.txt" ] || fail "$1: no summary.txt"
    [ "$(ls "$1"/campaign-*.tar.gz 2>/dev/null | wc -l)" = 1 ] || fail "$1: not one campaign tarball"
}

# the status line of PART in the tarball's status.tsv under DIR
status_of() {
    tar -xzOf "$1"/campaign-*.tar.gz --wildcards '*/status.tsv' | awk -F'\t' -v p="$2" '$1 == p { print $2 "\t" $6 }' | tail -n 1
}

# --- 0. the bundle (make gpu-bundle) ----------------------------------------------
b=$tmp/bundle
XPUSIM_BUNDLE_BIN=$XPUSIM_REAL calibrate/gpu/bundle.sh "$b" >"$tmp/bundle.log" 2>&1 ||
    fail "bundle: exit $?: $(tail -n 3 "$tmp/bundle.log")"
[ -x "$b/xpusim" ] && [ -f "$b/env.sh" ] && [ -f "$b/BUNDLE.txt" ] || fail "bundle: xpusim, env.sh or BUNDLE.txt missing"
for lib in $(ldd "$XPUSIM_REAL" | awk '$2 == "=>" { print $1 }'); do
    case $lib in
        libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libstdc++.so* | libgcc_s.so*)
            [ ! -e "$b/lib/$lib" ] || fail "bundle: carries the system's $lib" ;;
        *) [ -f "$b/lib/$lib" ] || fail "bundle: does not carry $lib" ;;
    esac
done
(. "$b/env.sh" && ldd "$b/xpusim" | grep -q "=> $b/lib/" && "$b/xpusim" --version >/dev/null) ||
    fail "bundle: xpusim does not run on the bundle's libraries"
has "$tmp/bundle.log" 'of the 64 MiB a run carries' "bundle: its size"
XPUSIM_BUNDLE_BIN=$tmp/none calibrate/gpu/bundle.sh "$tmp/b2" >"$tmp/bundle2.log" 2>&1
[ $? = 1 ] && [ "$(wc -l <"$tmp/bundle2.log")" = 1 ] || fail "bundle without a binary: $(cat "$tmp/bundle2.log")"

# --- the fakes ------------------------------------------------------------------
fake=$tmp/fake
mkdir -p "$fake/bin" "$fake/bundle/cuda" "$fake/bundle/lib"
cat >"$fake/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
# fake nvidia-smi: one H100; clocks_event_reasons.active unknown (an older
# driver), so the campaign's sampler falls back to its basic fields
value() {
    case $1 in
        name) echo "NVIDIA H100 80GB HBM3" ;;
        compute_cap) echo "9.0" ;;
        driver_version) echo "580.00.01" ;;
        pci.bus_id) echo "00000000:01:00.0" ;;
        power.limit | enforced.power.limit | power.default_limit | power.max_limit) echo "700.00 W" ;;
        clocks.max.sm) echo "1980 MHz" ;;
        clocks.max.mem) echo "2619 MHz" ;;
        timestamp) date '+%Y/%m/%d %H:%M:%S.000' ;;
        clocks.sm) echo "1755" ;;
        clocks.mem) echo "2619" ;;
        power.draw) echo "412.5" ;;
        temperature.gpu) echo "45" ;;
        clocks_event_reasons.active) echo "Field \"$1\" is not a valid field to query." >&2; return 2 ;;
        *) echo "N/A" ;;
    esac
}
[ "$1" = -q ] && { echo "==== fake nvidia-smi -q ===="; exit 0; }
[ "$1" = -L ] && { echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-fake)"; exit 0; }
q="" lms="" noheader=0
for a in "$@"; do
    case $a in
        --query-gpu=*) q=${a#--query-gpu=} ;;
        --format=*noheader*) noheader=1 ;;
    esac
done
while [ $# -gt 0 ]; do [ "$1" = -lms ] && lms=$2; shift; done
line() { local out="" f v; for f in ${q//,/ }; do v=$(value "$f") || exit 2; out="$out${out:+, }$v"; done; echo "$out"; }
[ "$noheader" = 1 ] || echo "${q//,/, }"
if [ -n "$lms" ]; then
    while :; do line; sleep 0.2; done
fi
line
EOF
cat >"$fake/bundle/xpusim" <<'EOF'
#!/usr/bin/env bash
# fake xpusim: --version; calibrate writes a calibrated file (the H100's
# datasheet file, mem_bw_efficiency changed, a calibration object) and a
# measurement CSV; validate writes rows for a calibrated file and hangs for
# the datasheet device; with FAKE_NOGPU=1 the one-line refusal and exit 3
[ "$1" = --version ] && { echo "xpusim 0.1.0 (fake)"; exit 0; }
if [ "${FAKE_NOGPU:-0}" = 1 ]; then
    echo "xpusim: error: no CUDA GPU: cudaGetDeviceCount: no CUDA-capable device is detected" >&2
    exit 3
fi
cmd=$1; shift
out="" meas="" dev=""
while [ $# -gt 0 ]; do
    case $1 in -o) out=$2; shift ;; --measurements) meas=$2; shift ;; -d) dev=$2; shift ;; esac
    shift
done
case $cmd in
    calibrate)
        [ -n "${XS_CUDA_LIB:-}" ] || { echo "fake xpusim: XS_CUDA_LIB not set (env.sh not sourced)" >&2; exit 1; }
        python3 - "$XPUSIM_DATA/devices/h100-sxm5-80gb.json" "$out" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
d["id"] = "h100-sxm5-80gb-cal"
d["model"]["mem_bw_efficiency"] = 0.8765
d["calibration"] = {"fits": {"copy": {"points": 6, "rms_residual_pct": 1.5}}, "energy_pj_per_flop": 0.42}
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
        printf 'kind,bytes,time_s\ncopy,1e9,0.0004\n' >"$meas"
        echo "calibrate: wrote $out" ;;
    validate)
        if [ "${dev%.json}" != "$dev" ]; then
            printf 'file,line,device,scenario,set,metric,measured,predicted,low,high,error_pct,status\n' >"$out"
            printf -- '-,1,x,-,op=gemm;m=4096,time_s,1e-3,1.1e-3,,,10.0,ok\n' >>"$out"
            printf -- '-,2,x,-,op=copy;elems=1e8,time_s,2e-3,1.9e-3,,,-5.0,ok\n' >>"$out"
        else
            sleep 100
        fi ;;
esac
EOF
cat >"$fake/bundle/cuda/xs_cuda_tests" <<'EOF'
#!/usr/bin/env bash
if [ "${FAKE_NOGPU:-0}" = 1 ]; then
    echo "xs_cuda_tests: skipped: no CUDA GPU: no CUDA-capable device is detected"
    exit 77
fi
echo "PASS copy fp32 n=1000003 max_err 0"
echo "FAIL adan_fused fp16 n=3 max_err 3.2"
echo "xs_cuda_tests: 1 of 2 checks failed"
exit 1
EOF
cat >"$fake/bundle/cuda/xs_cuda_bench" <<'EOF'
#!/usr/bin/env bash
echo $$ >"${FAKE_PIDFILE:-/dev/null}"
[ "${FAKE_BENCH_SLEEP:-0}" = 0 ] || sleep "$FAKE_BENCH_SLEEP"
[ -n "${XS_CUDA_LIB:-}" ] || { echo "fake bench: XS_CUDA_LIB not set (env.sh not sourced)"; exit 1; }
case " $* " in *" --adan-params 1300000000 "*) ;; *) echo "fake bench: no --adan-params 1300000000 in: $*"; exit 1 ;; esac
ldd "$XS_CUDA_LIB" | grep -q 'libxsfakedep.so.1 => /' || { echo "fake bench: libxscuda.so's dependency not found: LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; exit 1; }
echo "bench: adan_cuda_fused_vs_copy 0.93"
echo "bench: adan_cuda_fused_vs_eager 4.1"
echo "bench: gemm_cuda_vs_cublas 0.74"
EOF
# libxscuda.so needs a library the loader does not find by itself (cuBLAS,
# where the build machine's rpath does not hold on the GPU machine): the
# build part must find it beside nvcc (../lib64) and put it on the path
mkdir -p "$fake/toolkit/bin" "$fake/toolkit/lib64"
printf 'int xs_fake_dep(void) { return 1; }\n' >"$tmp/dep.c"
printf 'int xs_fake_dep(void);\nint xs_fake_api(void) { return xs_fake_dep(); }\n' >"$tmp/api.c"
cc -shared -fPIC -Wl,-soname,libxsfakedep.so.1 -o "$fake/toolkit/lib64/libxsfakedep.so.1" "$tmp/dep.c" &&
    cc -shared -fPIC -o "$fake/bundle/cuda/libxscuda.so" "$tmp/api.c" -L"$fake/toolkit/lib64" -l:libxsfakedep.so.1 ||
    fail "cannot build the fake libxscuda.so"
printf '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.0 (fake)"\n' >"$fake/toolkit/bin/nvcc"
chmod +x "$fake/toolkit/bin/nvcc"
cat >"$fake/bundle/env.sh" <<EOF
export XS_CUDA_LIB="$fake/bundle/cuda/libxscuda.so"
export XPUSIM_DATA="$root"
EOF
echo "source: fake-bundle" >"$fake/bundle/BUNDLE.txt"
# the kit: measured-run rows (one file xpusim predicts, one naming no
# device), a file of another format, two incompressible traces (together
# past 16 MiB) and a long log
cat >"$fake/kit.sh" <<'EOF'
#!/usr/bin/env bash
h="device,scenario,set,metric,value,source"
printf '%s\n%s\n' "$h" "h100-sxm5-80gb,-,op=gemm;m=4096;n=1024;k=1024;ta=N;tb=N;dtype=fp16,time_s,0.00012,fake kit" >"$OUT/gemm-h100-sxm5-80gb.csv"
printf '%s\n%s\n' "$h" "no-such-board,bert-base-squad,train.batch=32,samples_per_s,400,fake kit" >"$OUT/bert-steps-h100-sxm5-80gb.csv"
printf 'kernel,dtype,gbs\ncopy,fp16,2900\n' >"$OUT/kernels-h100-sxm5-80gb.csv"
head -c $((9 * 1024 * 1024)) /dev/urandom >"$OUT/trace-bert-base-squad-tf32-b32.json"
head -c $((8 * 1024 * 1024)) /dev/urandom >"$OUT/trace-bert-base-squad-amp_fp16-b32.json"
{ echo "== kernel_bench"; yes "kernel_bench: a line of output" | head -c $((5 * 1024 * 1024)); echo; echo "== bert_step"; } >"$OUT/run.log"
echo "kit: BUDGET_S=$BUDGET_S"
EOF
chmod +x "$fake/bin/nvidia-smi" "$fake/bundle/xpusim" "$fake/bundle/cuda/"* "$fake/kit.sh"
gpu_env=(NVIDIA_SMI="$fake/bin/nvidia-smi" CAMPAIGN_BUNDLE="$fake/bundle" CAMPAIGN_KIT="$fake/kit.sh"
         PATH="$fake/toolkit/bin:$PATH")

# --- 1. no GPU ---------------------------------------------------------------------
out=$tmp/nogpu
NVIDIA_SMI=$tmp/none/nvidia-smi CAMPAIGN_BUNDLE=$fake/bundle "$CAMPAIGN" "$out" >"$tmp/nogpu.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "no GPU: exit $rc: $(tail -n 5 "$tmp/nogpu.log")"
limits "$out"
has "$out/summary.txt" '^== prov: ok' "no GPU"
for p in build cudatests calibrate validate bench kit; do
    has "$out/summary.txt" "^== $p: skipped .*no GPU \\(nvidia-smi not found\\)" "no GPU"
done
has "$out/summary.txt" 'import.sh "\$FILES_AT/campaign-nogpu-[0-9]{8}T[0-9]{6}Z.tar.gz"' "no GPU: commit commands"
[ "$(tail -n 1 "$out/summary.txt" | cut -c1-12)" = "  git commit" ] || fail "no GPU: the summary does not end with the commit command"

# --- 2. a fake GPU: failing, hanging and oversized parts ------------------------------
out=$tmp/gpu
env "${gpu_env[@]}" CAMPAIGN_T_validate=6 "$CAMPAIGN" "$out" >"$tmp/gpu.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "fake GPU: exit $rc: $(tail -n 5 "$tmp/gpu.log")"
limits "$out"
s=$out/summary.txt
has "$s" '^GPU: NVIDIA H100 80GB HBM3 \(xpusim device h100-sxm5-80gb\), sm_90' "fake GPU"
has "$s" '^== build: ok' "fake GPU"
has "$s" "build: libxsfakedep.so.1 from $fake/toolkit/lib64" "fake GPU: a CUDA library found beside nvcc"
has "$s" '^== cudatests: failed .*exit 1' "fake GPU: a failing part"
has "$s" 'FAIL adan_fused fp16' "fake GPU: the failed check's line"
has "$s" '^== calibrate: ok' "fake GPU: the part after a failing one"
has "$s" 'model.mem_bw_efficiency: [0-9.]+ -> 0.8765' "fake GPU: fitted figures against the datasheet"
has "$s" 'energy_pj_per_flop: 0.42' "fake GPU: calibration figures"
has "$s" '^== validate: timed-out \(([6-9]|1[0-9]) s of 6 s\)' "fake GPU: a hanging part"
has "$s" 'validate-calibrated.csv: 2 rows, 2 predicted' "fake GPU: what the hung part wrote first"
has "$s" 'time_s: n=2, median \|error\| 7.5%' "fake GPU: validate summary"
has "$s" '^== bench: ok' "fake GPU: the part after a hanging one"
has "$s" '^   bench: adan_cuda_fused_vs_eager 4.1' "fake GPU: bench lines"
has "$s" '^== kit: ok' "fake GPU"
has "$s" 'gemm-h100-sxm5-80gb.csv: 1 rows' "fake GPU: kit files"
has "$s" 'clock/power sampler: [1-9][0-9]* samples' "fake GPU: sampler"
has "$s" 'SM clock MHz: min 1755' "fake GPU: sampler"
has "$s" 'kit/trace-bert-base-squad-tf32-b32.json \([0-9]+ bytes\)' "fake GPU: the largest trace dropped"
hasnt "$s" 'kit/trace-bert-base-squad-amp_fp16-b32.json \(' "fake GPU: only as many traces dropped as needed"
has "$s" 'no memory measurements exist yet' "fake GPU"
tgz=$(ls "$out"/campaign-h100-sxm5-80gb-*.tar.gz 2>/dev/null | head -n 1)
if [ -n "$tgz" ]; then
    tar -tzf "$tgz" >"$tmp/list"
    has "$tmp/list" 'kit/trace-bert-base-squad-amp_fp16-b32.json$' "fake GPU: the smaller trace kept"
    hasnt "$tmp/list" 'kit/trace-bert-base-squad-tf32-b32.json$' "fake GPU: the dropped trace"
    has "$tmp/list" '/DROPPED.txt$' "fake GPU"
    has "$tmp/list" '/clocks-power.csv$' "fake GPU"
    for p in prov build cudatests calibrate validate bench kit; do
        has "$tmp/list" "/$p/$p.log\$" "fake GPU: each part's log"
    done
    size=$(tar -xzOf "$tgz" --wildcards '*/kit/run.log' | wc -c)
    [ "$size" -lt $((4 * 1024 * 1024)) ] || fail "fake GPU: run.log not cut ($size bytes)"
    tar -xzOf "$tgz" --wildcards '*/kit/run.log' | grep -q 'bytes cut' || fail "fake GPU: run.log has no cut mark"
    order=$(tar -xzOf "$tgz" --wildcards '*/status.tsv' | tail -n +2 | cut -f1 | paste -sd' ' -)
    [ "$order" = "prov build cudatests calibrate validate bench kit" ] || fail "fake GPU: parts ran as '$order'"
else
    fail "fake GPU: no tarball"
fi
[ -f "$out/h100-sxm5-80gb-cal.json" ] || fail "fake GPU: the calibrated file is not beside the tarball"
[ -f "$out/validate-calibrated.csv" ] || fail "fake GPU: the validate table is not beside the tarball"

# --- 3. tools that say there is no GPU ---------------------------------------------
out=$tmp/toolnogpu
env "${gpu_env[@]}" FAKE_NOGPU=1 PARTS="cudatests,calibrate" "$CAMPAIGN" "$out" >"$tmp/toolnogpu.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "tool without GPU: exit $rc"
limits "$out"
[ "$(status_of "$out" cudatests)" = "$(printf 'skipped\txs_cuda_tests: skipped: no CUDA GPU: no CUDA-capable device is detected')" ] ||
    fail "tool without GPU: cudatests: '$(status_of "$out" cudatests)'"
has "$out/summary.txt" '^== calibrate: skipped .*: xpusim: error: no CUDA GPU' "tool without GPU: exit 3"
hasnt "$out/summary.txt" '^== (validate|bench|kit):' "PARTS chooses"

# --- 4. SIGTERM while a part runs ---------------------------------------------------
out=$tmp/term
env "${gpu_env[@]}" PARTS=bench FAKE_BENCH_SLEEP=60 FAKE_PIDFILE="$tmp/bench.pid" \
    "$CAMPAIGN" "$out" >"$tmp/term.log" 2>&1 &
cpid=$!
for _ in $(seq 1 100); do
    [ -s "$tmp/bench.pid" ] && break
    sleep 0.1
done
t0=$(date +%s)
kill -TERM "$cpid"
wait "$cpid"
rc=$?
[ $(( $(date +%s) - t0 )) -le 10 ] || fail "SIGTERM: the campaign took $(( $(date +%s) - t0 )) s to stop (the part was not ended)"
[ $rc = 143 ] || fail "SIGTERM: exit $rc (want 143): $(tail -n 5 "$tmp/term.log")"
limits "$out"
has "$out/summary.txt" 'INTERRUPTED by SIGTERM' "SIGTERM"
has "$out/summary.txt" '^== bench: interrupted' "SIGTERM"
# alive PID: running or sleeping, not gone nor a zombie (an orphan's parent
# here may be an init that reaps late)
alive() { [ -r "/proc/$1/stat" ] && ! awk '{ exit !($3 == "Z") }' "/proc/$1/stat" 2>/dev/null; }
if [ -s "$tmp/bench.pid" ]; then
    sleep 0.5
    bpid=$(cat "$tmp/bench.pid")
    ! alive "$bpid" || { fail "SIGTERM: the part's process lives on"; kill "$bpid"; }
else
    fail "SIGTERM: the part never started"
fi

# --- 5. a budget too small -------------------------------------------------------------
out=$tmp/budget
env "${gpu_env[@]}" CAMPAIGN_BUDGET_S=40 PARTS="bench kit" "$CAMPAIGN" "$out" >"$tmp/budget.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "budget: exit $rc"
limits "$out"
has "$out/summary.txt" '^== kit: skipped .*out of time' "budget"
has "$out/summary.txt" '^  PARTS="bench kit" CAMPAIGN_BUDGET_S=570 bash calibrate/gpu/campaign.sh "\$OUT"$' "budget: the second call"

# --- 5b. no bundle: the tree's own xpusim, and make for the CUDA binaries --------
# make is a fake that fails (a test must not build here); where the tree
# has the CUDA binaries (nvcc was here), the real xs_cuda_tests runs and
# says there is no GPU
mkdir -p "$fake/failmake"
printf '#!/bin/sh\necho "make: fake make, refusing: $*"\nexit 2\n' >"$fake/failmake/make"
chmod +x "$fake/failmake/make"
out=$tmp/nobundle
env "${gpu_env[@]}" CAMPAIGN_BUNDLE="$tmp/no-bundle" PATH="$fake/failmake:$PATH" PARTS=cudatests \
    "$CAMPAIGN" "$out" >"$tmp/nobundle.log" 2>&1
rc=$?
[ $rc = 0 ] || fail "no bundle: exit $rc"
limits "$out"
has "$out/summary.txt" 'build: xpusim found built in the tree' "no bundle"
if [ -f build/cuda/libxscuda.so ] && [ -x build/cuda/xs_cuda_tests ] && [ -x build/cuda/xs_cuda_bench ]; then
    has "$out/summary.txt" 'build: CUDA binaries found built in the tree' "no bundle"
    has "$out/summary.txt" '^== cudatests: skipped .*no CUDA GPU' "no bundle: the real xs_cuda_tests without a GPU"
else
    has "$out/summary.txt" '^== build: failed .*no CUDA binaries \(make cuda built none\)' "no bundle: make failing"
    has "$out/summary.txt" '^== cudatests: skipped .*no CUDA binaries \(see build\)' "no bundle"
fi

# --- 6. usage errors ---------------------------------------------------------------------
mkdir -p "$tmp/full" && touch "$tmp/full/x"
for args in "full" "unknown-part" "bad-budget" "none"; do
    case $args in
        full) "$CAMPAIGN" "$tmp/full" >"$tmp/u.out" 2>&1 ;;
        unknown-part) PARTS="prov gemm" "$CAMPAIGN" "$tmp/u1" >"$tmp/u.out" 2>&1 ;;
        bad-budget) CAMPAIGN_T_bench=10m "$CAMPAIGN" "$tmp/u2" >"$tmp/u.out" 2>&1 ;;
        none) "$CAMPAIGN" >"$tmp/u.out" 2>&1 ;;
    esac
    rc=$?
    [ $rc = 2 ] || fail "usage $args: exit $rc"
    [ "$(wc -l <"$tmp/u.out")" = 1 ] || fail "usage $args: not one line: $(cat "$tmp/u.out")"
done
[ ! -e "$tmp/u1" ] || [ -z "$(ls -A "$tmp/u1")" ] || fail "usage: a refused campaign wrote files"
"$CAMPAIGN" --help >"$tmp/help.out" 2>&1 || fail "--help: exit $?"
has "$tmp/help.out" '^Parts, in this order' "--help"
[ "$(grep -v '^ ' "$tmp/help.out" | tail -n 1)" = "Examples:" ] || fail "--help does not end with Examples"
"$IMPORT" --help >"$tmp/help.out" 2>&1 || fail "import --help: exit $?"
[ "$(grep -v '^ ' "$tmp/help.out" | tail -n 1)" = "Examples:" ] || fail "import --help does not end with Examples"

# --- 7. import.sh ------------------------------------------------------------------------
m=$tmp/measured
if [ -n "${tgz:-}" ]; then
    XPUSIM=$XPUSIM_REAL "$IMPORT" --into "$m" "$tgz" >"$tmp/imp.log" 2>&1 || fail "import: exit $?: $(cat "$tmp/imp.log")"
    stamp=$(basename "$tgz" .tar.gz | sed 's/^campaign-h100-sxm5-80gb-//')
    day=$(echo "$stamp" | sed -E 's/^([0-9]{4})([0-9]{2})([0-9]{2}).*/\1-\2-\3/')
    d=$m/$day-h100-sxm5-80gb
    [ -f "$d/$stamp/summary.txt" ] || fail "import: no $d/$stamp/summary.txt"
    pm=$d/PROVENANCE.md
    if [ -f "$pm" ]; then
        has "$pm" '^- GPU: NVIDIA H100 80GB HBM3 \(PCI 00000000:01:00.0' "import"
        has "$pm" '^- driver: 580.00.01' "import"
        has "$pm" 'max SM 1980 MHz' "import"
        has "$pm" '^- power limit: 700.00 W' "import"
        has "$pm" '^- date: [0-9]{4}-[0-9]{2}-[0-9]{2}T' "import"
        has "$pm" '^- command: calibrate/gpu/campaign.sh' "import"
        has "$pm" '^- source: ' "import"
        has "$pm" '^\| cudatests \| failed \|' "import: part table"
        has "$pm" 'trace-bert-base-squad-tf32-b32.json' "import: dropped files named"
        has "$pm" 'bert-steps-h100-sxm5-80gb.csv: kept in the folder only: xpusim validate does not predict' "import"
    else
        fail "import: no PROVENANCE.md in $d"
    fi
    top=$(cd "$m" && ls *.csv 2>/dev/null | paste -sd' ' -)
    [ "$top" = "$day-gemm-h100-sxm5-80gb.csv" ] || fail "import: top-level CSVs are '$top'"
    "$XPUSIM_REAL" validate --measured "$m/$day-gemm-h100-sxm5-80gb.csv" >/dev/null 2>&1 ||
        fail "import: xpusim validate does not read the imported file"
    XPUSIM=$XPUSIM_REAL "$IMPORT" --into "$m" "$tgz" >"$tmp/imp2.log" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q 'already imported' "$tmp/imp2.log" || fail "import twice: exit $rc: $(cat "$tmp/imp2.log")"
    XPUSIM=$XPUSIM_REAL "$IMPORT" --into "$m" --force "$tgz" >"$tmp/imp3.log" 2>&1 || fail "import --force: $(cat "$tmp/imp3.log")"
    [ "$(grep -c '^## campaign-' "$pm")" = 1 ] || fail "import --force: PROVENANCE.md holds the campaign $(grep -c '^## campaign-' "$pm") times"
    has "$pm" '^\| kit \| ok \|' "import --force: the section written again"
fi
# tarballs that must be refused, and leave nothing behind
mkdir -p "$tmp/climb" "$tmp/link" "$tmp/name"
python3 - "$tmp" <<'EOF'
import io, sys, tarfile
d = sys.argv[1]
top = "campaign-h100-sxm5-80gb-20260101T000000Z"
def make(path, entries):
    with tarfile.open(path, "w:gz") as t:
        for name, kind in entries:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type = tarfile.SYMTYPE
                info.linkname = "/etc/passwd"
                t.addfile(info)
            else:
                data = b"x\n"
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
make(f"{d}/climb/{top}.tar.gz", [(f"{top}/status.tsv", "file"), (f"{top}/../../evil", "file")])
make(f"{d}/link/{top}.tar.gz", [(f"{top}/status.tsv", "file"), (f"{top}/x", "link")])
make(f"{d}/name/not-a-campaign.tar.gz", [("not-a-campaign/status.tsv", "file")])
EOF
for case in climb link name; do
    XPUSIM=$XPUSIM_REAL "$IMPORT" --into "$tmp/m-$case" "$tmp/$case"/*.tar.gz >"$tmp/bad.log" 2>&1
    rc=$?
    [ $rc = 1 ] || fail "import of a bad tarball ($case): exit $rc"
    [ "$(wc -l <"$tmp/bad.log")" = 1 ] || fail "import of a bad tarball ($case): $(cat "$tmp/bad.log")"
    [ -z "$(ls -A "$tmp/m-$case" 2>/dev/null)" ] || fail "import of a bad tarball ($case) wrote files"
done
[ ! -e "$tmp/evil" ] && [ ! -e "$tmp/climb/evil" ] || fail "import: an entry climbed out"

if [ $fails -gt 0 ]; then
    echo "campaign_check: $fails failure(s)"
    exit 1
fi
echo "campaign_check: the no-GPU path, failing/hanging/oversized parts, SIGTERM, the budget, usage errors and import.sh all behave"
