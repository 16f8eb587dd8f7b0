#!/usr/bin/env bash
# campaign.sh DIR — every GPU measurement xpusim has, in one go on a GPU
# machine (the `device` tool's run; `make gpu-campaign OUT=DIR`), packed into
# at most 8 files under DIR, the form in which the device tool brings files
# back: campaign-GPU-DATE.tar.gz, summary.txt and a few small files worth
# reading at once. DEVELOPERS.md says when and how to run it.
#
# Parts, in this order, each under its own timeout and with its own log; a
# failing or hanging part is recorded and the next one runs:
#   prov       provenance (always runs): date, source revision, nvidia-smi -q,
#              nvcc, CPU, python and torch
#   build      the tools: the carried bundle (make gpu-bundle), else make
#              xpusim; the CUDA binaries for this GPU's sm if missing
#   cudatests  xs_cuda_tests: the kernels against their CPU references
#   calibrate  xpusim calibrate --backend cuda: calibrated device file and
#              its measurements
#   validate   xpusim validate --backend cuda, with the calibrated file and
#              with the datasheet device of this board
#   bench      xs_cuda_bench: fused Adan vs copy and vs eager at 1.3e9
#              parameters, own GEMM vs cuBLAS
#   kit        calibrate/gpu/run.sh: PyTorch kernel classes, GEMMs, whole BERT
#              steps, profiler traces
# A clock and power sampler (nvidia-smi, every 200 ms) runs across them all.
# No memory measurements exist yet (issue 20). A new part is a function
# part_NAME (runs in its own process, writes into $P), notes_NAME (its key
# lines for the summary, from its files) and its name in PARTS_ALL, with a
# budget in budget_of and what it needs in needs_of.
#
# Environment:
#   PARTS              parts to run, space- or comma-separated (default: all);
#                      build runs too when a chosen part needs the tools
#   CAMPAIGN_BUDGET_S  the whole campaign's wall-clock budget, packing
#                      included (default 1140 = 19 min); each part gets
#                      min(its budget, what is left) and is skipped when
#                      under 20 s would be left: the summary then names the
#                      PARTS of a second call
#   CAMPAIGN_T_<part>  a part's own budget in seconds (defaults: budget_of)
#   CAMPAIGN_QUICK=1   --quick for calibrate, validate and the bench
#   CAMPAIGN_BUNDLE    the carried bundle (default build/gpu-bundle)
#   CAMPAIGN_KIT       the PyTorch kit's driver (default calibrate/gpu/run.sh)
#   NVIDIA_SMI         nvidia-smi (default: the one on PATH)
# It only reads the GPU's settings: it never changes clocks, power limit,
# compute mode, MIG or persistence.
#
# Exit status: 0 when DIR holds the pack, whatever the parts did (their
# statuses are in summary.txt); 2 on a usage error; 1 when packing failed;
# 128+N after signal N (what exists is packed first).
set -u

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
here=$(dirname "$self")
root=$(cd "$here/../.." && pwd)
PARTS_ALL="prov build cudatests calibrate validate bench kit"
NVIDIA_SMI=${NVIDIA_SMI:-nvidia-smi}
BUNDLE=${CAMPAIGN_BUNDLE:-$root/build/gpu-bundle}
KIT=${CAMPAIGN_KIT:-$here/run.sh}
# What the device tool brings back from $OUT: at most 8 files, 16 MiB each,
# 64 MiB together, names of letters, digits, '.', '_' and '-'
# (/work/.library/device/README.md, Limits).
MAX_FILES=8
MAX_FILE_BYTES=$((16 * 1024 * 1024))
MAX_TOTAL_BYTES=$((64 * 1024 * 1024))
# A small file copied beside the tarball (the calibrated device file, the
# validate tables) is at most this; the tarball has everything anyway.
MAX_EXTRA_BYTES=$((1024 * 1024))
# A log over this is cut to its first and last megabytes before packing.
MAX_LOG_BYTES=$((4 * 1024 * 1024))
# Seconds kept for packing at the end of the budget, and the shortest
# budget worth starting a part with.
RESERVE_S=25
MIN_PART_S=20

budget_of() {
    local v
    v=$(printenv "CAMPAIGN_T_$1")
    if [ -n "$v" ]; then echo "$v"; return; fi
    case $1 in
        prov) echo 30 ;;
        build) echo 240 ;;     # only when the bundle lacks something: nvcc for one sm
        cudatests) echo 90 ;;
        calibrate) echo 240 ;;
        validate) echo 180 ;;  # two runs, half each
        bench) echo 120 ;;
        kit) echo 390 ;;       # run.sh: kernel_bench, then BERT steps until BUDGET_S
    esac
}

# What a part cannot run without: gpu (nvidia-smi lists one), xpusim and
# cuda (found or built by the build part).
needs_of() {
    case $1 in
        prov) echo "" ;;
        build) echo "gpu" ;;
        cudatests | bench) echo "gpu cuda" ;;
        calibrate | validate) echo "gpu xpusim" ;;
        kit) echo "gpu" ;;
    esac
}

# --- state shared by the driver and the part processes ------------------------
# $W/state.env: KEY=value lines (shell-quoted); a later line wins.
state_set() { printf '%s=%q\n' "$1" "$2" >>"$W/state.env"; }
state_load() { [ -f "$W/state.env" ] && . "$W/state.env"; }

# The tools in a part's environment: the bundle's env.sh (its libraries,
# XS_CUDA_LIB), then what the build part found beyond it.
use_tools() {
    if [ -n "${ENV_SH:-}" ] && [ -f "$ENV_SH" ]; then
        # shellcheck source=/dev/null
        . "$ENV_SH"
    fi
    [ -n "${CUDA_LIB:-}" ] && export XS_CUDA_LIB=$CUDA_LIB
    [ -n "${CUDA_LD:-}" ] && export LD_LIBRARY_PATH="$CUDA_LD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    return 0
}

# A part's verdict when its exit status does not say it: one line in
# $P/.status beginning "skipped:" or "failed:".
verdict() { printf '%s\n' "$*" >"$P/.status"; }

# The last non-empty line a part's tool printed (its one-line reason).
last_line() { grep -v '^[[:space:]]*$' "$P/$PART.log" 2>/dev/null | tail -n 1; }

quick_flag() { [ "${CAMPAIGN_QUICK:-0}" = 1 ] && echo --quick; }

# --- the parts -----------------------------------------------------------------
# Each runs as `campaign.sh --part NAME WORK` under timeout, cwd the source
# root, stdout and stderr to $P/NAME.log; exit 0 is ok unless $P/.status says
# otherwise.

part_prov() {
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "host: $(uname -n); $(uname -srm); $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown OS}")"
        echo "source: $(git -C "$root" describe --always --dirty 2>/dev/null ||
                        echo 'no git here (the device tool copies the tree without .git; see bundle)')"
        echo "cpu: $(grep -m 1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc)"
        echo "memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
        echo "campaign: PARTS=${PARTS_RUN:-?} budget ${CAMPAIGN_BUDGET:-?} s quick ${CAMPAIGN_QUICK:-0}"
        if [ -f "$BUNDLE/BUNDLE.txt" ]; then
            echo "bundle ($BUNDLE):"
            sed 's/^/  /' "$BUNDLE/BUNDLE.txt"
        else
            echo "bundle: none at $BUNDLE"
        fi
    } >"$P/host.txt"
    local nvcc
    nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
    if [ -n "$nvcc" ]; then
        "$nvcc" --version >"$P/nvcc.txt" 2>&1
    else
        echo "nvcc: not found" >"$P/nvcc.txt"
    fi
    if [ "$GPU" = 1 ]; then
        timeout --foreground 30 "$NVIDIA_SMI" -q >"$P/nvidia-smi-q.txt" 2>&1
        # one query a field: a field this driver does not know fails alone
        local f
        for f in name pci.bus_id driver_version vbios_version compute_cap memory.total \
                 clocks.max.sm clocks.max.mem clocks.applications.graphics clocks.sm clocks.mem \
                 power.limit power.default_limit power.max_limit enforced.power.limit \
                 persistence_mode mig.mode.current ecc.mode.current pstate temperature.gpu \
                 clocks_event_reasons.active; do
            printf '%s: %s\n' "$f" "$(timeout --foreground 10 "$NVIDIA_SMI" --query-gpu="$f" --format=csv,noheader -i 0 2>&1 | head -n 1)"
        done >"$P/gpu.txt"
    else
        echo "no GPU: $NO_GPU_REASON" >"$P/gpu.txt"
    fi
    timeout --foreground 90 python3 - >"$P/python.txt" 2>&1 <<'EOF'
import platform, sys
print("python", platform.python_version(), sys.executable)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "cudnn", torch.backends.cudnn.version())
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        print("torch device", p.name, "sm count", p.multi_processor_count,
              f"memory {p.total_memory / 2**30:.1f} GiB")
    else:
        print("torch: no CUDA device")
except Exception as e:
    print("torch: not usable:", e)
EOF
    timeout --foreground 60 python3 -m pip list >"$P/pip-list.txt" 2>&1
    cat "$P/host.txt" "$P/gpu.txt" "$P/python.txt"
    return 0
}

# ldd's missing libraries of FILE, under the current LD_LIBRARY_PATH.
missing_libs() { ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 == "not" { print $1 }'; }

# A folder holding library NAME: the CUDA toolkit's, then PyTorch's wheels'
# (nvidia/*/lib, which ship cuBLAS too).
find_lib_dir() {
    local d nvcc
    nvcc=$(command -v nvcc 2>/dev/null)
    for d in ${nvcc:+"$(dirname "$nvcc")/../lib64"} /usr/local/cuda/lib64 \
             /usr/local/cuda/targets/x86_64-linux/lib \
             $(python3 -c 'import glob, site; print(" ".join(d for p in site.getsitepackages() for d in glob.glob(p + "/nvidia/*/lib")))' 2>/dev/null); do
        if [ -e "$d/$1" ]; then
            (cd "$d" && pwd)
            return 0
        fi
    done
    return 1
}

part_build() {
    local ok=1 cuda="" jobs
    jobs=$(nproc 2>/dev/null || echo 4)
    if [ -x "$BUNDLE/xpusim" ] && [ -f "$BUNDLE/env.sh" ] &&
       (. "$BUNDLE/env.sh" && "$BUNDLE/xpusim" --version); then
        state_set XPUSIM "$BUNDLE/xpusim"
        state_set ENV_SH "$BUNDLE/env.sh"
        echo "build: xpusim from the carried bundle ($BUNDLE)"
    elif [ -x "$root/xpusim" ] && "$root/xpusim" --version; then
        state_set XPUSIM "$root/xpusim"
        echo "build: xpusim found built in the tree (no working bundle at $BUNDLE)"
    else
        echo "build: no working bundle at $BUNDLE; make xpusim"
        if make -C "$root" -j"$jobs" xpusim && "$root/xpusim" --version; then
            state_set XPUSIM "$root/xpusim"
            echo "build: xpusim built here"
        else
            echo "build: FAILED: no xpusim (this machine has no cJSON/GSL dev packages: run make gpu-bundle on the build machine and carry build/gpu-bundle)"
            ok=0
        fi
    fi
    if [ -f "$BUNDLE/cuda/libxscuda.so" ] && [ -x "$BUNDLE/cuda/xs_cuda_tests" ] &&
       [ -x "$BUNDLE/cuda/xs_cuda_bench" ]; then
        cuda=$BUNDLE/cuda
        echo "build: CUDA binaries from the carried bundle"
    elif [ -f "$root/build/cuda/libxscuda.so" ] && [ -x "$root/build/cuda/xs_cuda_tests" ] &&
         [ -x "$root/build/cuda/xs_cuda_bench" ]; then
        cuda=$root/build/cuda
        echo "build: CUDA binaries found built in the tree"
    else
        echo "build: CUDA binaries missing; make cuda CUDA_ARCHS=${GPU_SM:-default}"
        if make -C "$root" -j"$jobs" cuda ${GPU_SM:+CUDA_ARCHS="$GPU_SM"} &&
           [ -f "$root/build/cuda/libxscuda.so" ] && [ -x "$root/build/cuda/xs_cuda_tests" ] &&
           [ -x "$root/build/cuda/xs_cuda_bench" ]; then
            cuda=$root/build/cuda
            echo "build: CUDA binaries built here for sm_${GPU_SM:-?}"
        else
            echo "build: FAILED: no CUDA binaries (make cuda built none)"
            ok=0
        fi
    fi
    if [ -n "$cuda" ]; then
        state_set CUDA_DIR "$cuda"
        state_set CUDA_LIB "$cuda/libxscuda.so"
        # cuBLAS is the machine's: where the rpath of the build machine's
        # toolkit does not find it, look where this machine keeps it
        state_load
        use_tools
        local lib dir dirs=""
        for lib in $( (missing_libs "$cuda/libxscuda.so"; missing_libs "$cuda/xs_cuda_tests";
                       missing_libs "$cuda/xs_cuda_bench") | sort -u); do
            if dir=$(find_lib_dir "$lib"); then
                case ":$dirs:" in *":$dir:"*) ;; *) dirs=${dirs:+$dirs:}$dir ;; esac
                echo "build: $lib from $dir"
            else
                echo "build: FAILED: $lib (needed by the CUDA binaries) not found on this machine"
                ok=0
            fi
        done
        [ -n "$dirs" ] && state_set CUDA_LD "$dirs"
    fi
    [ "$ok" = 1 ] || verdict "failed: $(grep '^build: FAILED' "$P/$PART.log" | sed 's/^build: FAILED: //' | paste -sd ';' - | sed 's/;/; /g')"
    return 0
}

part_cudatests() {
    use_tools
    "$CUDA_DIR/xs_cuda_tests"
    local rc=$?
    [ $rc = 77 ] && verdict "skipped: $(last_line)"
    return $rc
}

part_calibrate() {
    use_tools
    local args=(--backend cuda -o "$P/$CAL_ID.json" --measurements "$P/$CAL_ID.measurements.csv")
    [ -n "$DEV" ] && [ -f "$root/devices/$DEV.json" ] && args+=(--base "$DEV")
    [ -n "$(quick_flag)" ] && args+=(--quick)
    echo "+ xpusim calibrate ${args[*]}"
    "$XPUSIM" calibrate "${args[@]}"
    local rc=$?
    [ $rc = 3 ] && verdict "skipped: $(last_line)"
    return $rc
}

part_validate() {
    use_tools
    local cal="$W/calibrate/$CAL_ID.json" half rc_cal="" rc_ds="" q
    q=$(quick_flag)
    half=$(( ${PART_TIMEOUT:-180} / 2 - 5 ))
    [ "$half" -ge 10 ] || half=10
    if [ -f "$cal" ]; then
        echo "+ xpusim validate --backend cuda -d $cal $q (at most $half s)"
        timeout --foreground --kill-after=5 "$half" "$XPUSIM" validate --backend cuda -d "$cal" $q \
            --format csv -o "$P/validate-calibrated.csv"
        rc_cal=$?
    else
        echo "validate: no calibrated file ($cal): calibrate failed or was skipped"
    fi
    if [ -n "$DEV" ] && [ -f "$root/devices/$DEV.json" ]; then
        echo "+ xpusim validate --backend cuda -d $DEV $q (at most $half s)"
        timeout --foreground --kill-after=5 "$half" "$XPUSIM" validate --backend cuda -d "$DEV" $q \
            --format csv -o "$P/validate-datasheet.csv"
        rc_ds=$?
    else
        echo "validate: no datasheet device for '$GPU_NAME' (calibrate/gpu/xsgpu_common.py DEVICE_IDS)"
    fi
    if [ "$rc_cal" = 3 ] || [ "$rc_ds" = 3 ]; then
        verdict "skipped: $(last_line)"
    elif [ -z "$rc_cal$rc_ds" ]; then
        verdict "skipped: neither a calibrated file nor a datasheet device to validate"
    elif [ "${rc_cal:-0}" != 0 ] || [ "${rc_ds:-0}" != 0 ]; then
        verdict "failed: calibrated file: ${rc_cal:-not run}${rc_cal:+ (exit $rc_cal)}; datasheet device: ${rc_ds:-not run}${rc_ds:+ (exit $rc_ds)} (124: timed out)"
    fi
    return 0
}

part_bench() {
    use_tools
    local args=(--adan-params 1300000000)
    [ -n "$(quick_flag)" ] && args+=(--quick)
    echo "+ xs_cuda_bench ${args[*]}"
    "$CUDA_DIR/xs_cuda_bench" "${args[@]}"
    local rc=$?
    [ $rc = 77 ] && verdict "skipped: $(last_line)"
    return $rc
}

part_kit() {
    # run.sh's BERT steps stop starting new runs after BUDGET_S; its kernel
    # benchmark comes first and takes a minute or two
    local budget=$(( ${PART_TIMEOUT:-390} - 150 ))
    [ "$budget" -ge 60 ] || budget=60
    echo "+ OUT=$P BUDGET_S=$budget bash $KIT"
    OUT="$P" BUDGET_S=$budget PYTHONUNBUFFERED=1 bash "$KIT"
    local rc=$? bad
    bad=$(grep -E '^(kernel_bench|bert_step): exit [0-9]+' "$P/run.log" 2>/dev/null | paste -sd ';' - | sed 's/;/; /g')
    [ -n "$bad" ] && verdict "failed: $bad (run.log)"
    return $rc
}

# --- key lines for the summary, read from each part's files -------------------
notes_prov() {
    local P=$W/prov
    [ -f "$P/gpu.txt" ] && grep -E '^(name|driver_version|compute_cap|clocks\.max\.(sm|mem)|power\.limit|enforced\.power\.limit|persistence_mode|mig\.mode\.current|no GPU):' "$P/gpu.txt"
    [ -f "$P/host.txt" ] && grep -E '^(source|cpu|host):' "$P/host.txt"
    [ -f "$P/python.txt" ] && grep -E '^(python|torch)' "$P/python.txt"
    [ -f "$P/nvcc.txt" ] && grep -m 1 -E 'release|not found' "$P/nvcc.txt" | sed 's/^/nvcc: /'
}
notes_build() { grep -E '^build: ' "$W/build/build.log" 2>/dev/null; }
notes_cudatests() {
    local log=$W/cudatests/cudatests.log
    grep -E '(^|[^A-Z])(FAIL|SKIP)' "$log" 2>/dev/null | head -n 12
    tail -n 1 "$log" 2>/dev/null | grep -vE '(^|[^A-Z])(FAIL|SKIP)' 
}
notes_calibrate() {
    local base=""
    [ -n "$DEV" ] && [ -f "$root/devices/$DEV.json" ] && base=$root/devices/$DEV.json
    [ -f "$W/calibrate/$CAL_ID.json" ] && notes_py fitted "$W/calibrate/$CAL_ID.json" $base
    [ -f "$W/calibrate/$CAL_ID.measurements.csv" ] &&
        echo "measurements: $(($(wc -l <"$W/calibrate/$CAL_ID.measurements.csv") - 1)) rows in $CAL_ID.measurements.csv"
}
notes_validate() {
    local f=()
    for x in "$W"/validate/validate-*.csv; do [ -f "$x" ] && f+=("$x"); done
    [ ${#f[@]} -gt 0 ] && notes_py validate "${f[@]}"
    grep -E '^validate: ' "$W/validate/validate.log" 2>/dev/null
}
notes_bench() { grep -E '^bench: ' "$W/bench/bench.log" 2>/dev/null; }
notes_kit() {
    local f
    local n
    for f in "$W"/kit/*.csv; do
        [ -f "$f" ] || continue
        n=$(($(wc -l <"$f") - 1))
        echo "$(basename "$f"): $((n > 0 ? n : 0)) rows"
    done
    for f in "$W"/kit/trace-*.json; do
        [ -f "$f" ] && echo "$(basename "$f"): $(du -k "$f" | cut -f1) KiB"
    done
    grep -E 'budget: skipped|out of memory|: exit [0-9]+|Error' "$W/kit/run.log" 2>/dev/null | head -n 10
}
notes_py() {
    if command -v python3 >/dev/null 2>&1; then
        python3 "$here/campaign_notes.py" "$@" 2>&1 | head -n 60
    else
        echo "(python3 not found: read the files in the tarball)"
    fi
}

# --- a part in its own process ---------------------------------------------------
if [ "${1:-}" = "--part" ]; then
    PART=$2 W=$3
    P=$W/$PART
    state_load
    cd "$root" || exit 1
    "part_$PART"
    exit $?
fi

# --- the driver --------------------------------------------------------------------
usage() { echo "usage: campaign.sh DIR   (an empty or new folder; PARTS=... to choose: $PARTS_ALL)"; }
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    sed -n '2,/^set -u$/p' "$self" | sed '$d' | sed 's/^# \{0,1\}//'
    cat <<'EOF'
Examples:
  bash calibrate/gpu/campaign.sh "$OUT"                          # everything (up to 19 min)
  PARTS="cudatests calibrate validate bench" CAMPAIGN_BUDGET_S=570 bash calibrate/gpu/campaign.sh "$OUT"
  PARTS=kit CAMPAIGN_T_kit=500 CAMPAIGN_BUDGET_S=570 bash calibrate/gpu/campaign.sh "$OUT"
  make gpu-campaign OUT=/tmp/campaign
EOF
    exit 0
fi
DIR=${1:-}
if [ -z "$DIR" ] || [ $# -ne 1 ] || [ "${DIR:0:1}" = "-" ]; then
    usage >&2
    exit 2
fi
if [ -e "$DIR" ] && [ ! -d "$DIR" ]; then
    echo "campaign: $DIR is not a folder" >&2
    exit 2
fi
if [ -d "$DIR" ] && [ -n "$(ls -A "$DIR")" ]; then
    echo "campaign: $DIR is not empty ($(ls -A "$DIR" | wc -l) entries): give an empty or new folder (the device tool brings back at most $MAX_FILES files from it)" >&2
    exit 2
fi
mkdir -p "$DIR" || { echo "campaign: cannot create $DIR" >&2; exit 2; }
DIR=$(cd "$DIR" && pwd)

CAMPAIGN_BUDGET=${CAMPAIGN_BUDGET_S:-1140}
case $CAMPAIGN_BUDGET in
    '' | *[!0-9]*) echo "campaign: CAMPAIGN_BUDGET_S=$CAMPAIGN_BUDGET: expected whole seconds" >&2; exit 2 ;;
esac
chosen=" "
for p in ${PARTS:-$PARTS_ALL}; do
    for q in ${p//,/ }; do
        case " $PARTS_ALL " in
            *" $q "*) chosen="$chosen$q " ;;
            *) echo "campaign: PARTS: unknown part '$q' (parts: $PARTS_ALL)" >&2; exit 2 ;;
        esac
        v=$(budget_of "$q")
        case $v in
            '' | *[!0-9]*) echo "campaign: CAMPAIGN_T_$q=$v: expected whole seconds" >&2; exit 2 ;;
        esac
    done
done
# prov always; build whenever a chosen part needs the tools
PARTS_RUN=""
for p in $PARTS_ALL; do
    want=0
    case "$chosen" in *" $p "*) want=1 ;; esac
    [ "$p" = prov ] && want=1
    if [ "$p" = build ]; then
        for q in $chosen; do
            case " $(needs_of "$q") " in *" xpusim "* | *" cuda "*) want=1 ;; esac
        done
    fi
    [ $want = 1 ] && PARTS_RUN="$PARTS_RUN $p"
done
PARTS_RUN=${PARTS_RUN# }
export PARTS_RUN CAMPAIGN_BUDGET BUNDLE KIT NVIDIA_SMI

START=$(date +%s)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
DAY=$(date -u +%Y-%m-%d)

# Is there a GPU? nvidia-smi answers for the board the parts will use (0).
GPU=0 GPU_NAME="" GPU_SM="" NO_GPU_REASON=""
if ! command -v "$NVIDIA_SMI" >/dev/null 2>&1; then
    NO_GPU_REASON="nvidia-smi not found"
else
    smi=$(timeout 30 "$NVIDIA_SMI" --query-gpu=name,compute_cap --format=csv,noheader -i 0 2>&1)
    rc=$?
    if [ $rc != 0 ] || [ -z "$smi" ]; then
        smi=$(timeout 30 "$NVIDIA_SMI" --query-gpu=name --format=csv,noheader -i 0 2>&1)
        rc=$?
    fi
    if [ $rc = 0 ] && [ -n "$smi" ]; then
        GPU=1
        GPU_NAME=$(echo "$smi" | head -n 1 | cut -d, -f1 | sed 's/ *$//')
        cap=$(echo "$smi" | head -n 1 | cut -s -d, -f2 | tr -d ' ')
        [[ $cap =~ ^[0-9]+\.[0-9]+$ ]] && GPU_SM=${cap/./}
    else
        NO_GPU_REASON="nvidia-smi: $(echo "$smi" | head -n 1)"
    fi
fi
DEV=""
SLUG=nogpu
if [ "$GPU" = 1 ]; then
    DEV=$(python3 "$here/campaign_notes.py" device-id "$GPU_NAME" 2>/dev/null)
    SLUG=${DEV:-$(python3 "$here/campaign_notes.py" slug "$GPU_NAME" 2>/dev/null)}
    [[ $SLUG =~ ^[a-z0-9-]+$ ]] || SLUG=gpu
fi
CAL_ID=$SLUG-cal
NAME=campaign-$SLUG-$STAMP
WP=$(mktemp -d "${TMPDIR:-/tmp}/xs-campaign.XXXXXX") || { echo "campaign: cannot make a work folder" >&2; exit 1; }
W=$WP/$NAME
mkdir -p "$W"
for p in $PARTS_ALL; do mkdir -p "$W/$p"; done
: >"$W/state.env"
state_set GPU "$GPU"; state_set GPU_NAME "$GPU_NAME"; state_set GPU_SM "$GPU_SM"
state_set NO_GPU_REASON "$NO_GPU_REASON"; state_set DEV "$DEV"; state_set CAL_ID "$CAL_ID"
printf 'part\tstatus\texit\tseconds\tlimit_s\tdetail\n' >"$W/status.tsv"
clog() { echo "campaign: $*" | tee -a "$W/campaign.log"; }
clog "started $STAMP; GPU: ${GPU_NAME:-none ($NO_GPU_REASON)}${DEV:+ = $DEV}; parts: $PARTS_RUN; budget ${CAMPAIGN_BUDGET} s"

SAMPLER="" CHILD="" CURRENT="" CURRENT_T0=0 CURRENT_LIMIT=0 PACKED=0 INTERRUPTED=""
TIME_SKIPPED="" EXTRAS=""
DROPPED=()
if [ "$GPU" = 1 ]; then
    fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,utilization.memory,pstate,clocks_event_reasons.active
    timeout 10 "$NVIDIA_SMI" --query-gpu=$fields --format=csv,nounits -i 0 >/dev/null 2>&1 ||
        fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu
    "$NVIDIA_SMI" --query-gpu=$fields --format=csv,nounits -i 0 -lms 200 \
        >"$W/clocks-power.csv" 2>"$W/clocks-power.err" </dev/null &
    SAMPLER=$!
fi

# record PART STATUS EXIT SECONDS LIMIT DETAIL
record() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$(printf '%s' "$6" | tr '\t\n' '  ')" >>"$W/status.tsv"
    clog "$1: $2${6:+: $6} (${4} s)"
}

# stop_child: end the part in flight and everything it started (timeout
# signals its whole process group), then its remains by force.
stop_child() {
    [ -n "$CHILD" ] || return 0
    kill -TERM "$CHILD" 2>/dev/null
    local _
    for _ in 1 2 3 4 5 6; do
        kill -0 "$CHILD" 2>/dev/null || break
        sleep 0.5
    done
    kill -KILL "$CHILD" 2>/dev/null
    wait "$CHILD" 2>/dev/null
    CHILD=""
}

run_part() {
    local name=$1 limit need left now rc
    now=$(date +%s)
    left=$((START + CAMPAIGN_BUDGET - RESERVE_S - now))
    limit=$(budget_of "$name")
    if [ "$left" -lt "$limit" ]; then
        if [ "$left" -lt "$MIN_PART_S" ]; then
            record "$name" skipped "" 0 "$limit" "out of time: $((left > 0 ? left : 0)) s of the ${CAMPAIGN_BUDGET} s budget left"
            # prov and build come by themselves in the next call
            case $name in prov | build) ;; *) TIME_SKIPPED="$TIME_SKIPPED $name" ;; esac
            return
        fi
        limit=$left
    fi
    state_load
    for need in $(needs_of "$name"); do
        case $need in
            gpu) [ "$GPU" = 1 ] || { record "$name" skipped "" 0 "$limit" "no GPU ($NO_GPU_REASON)"; return; } ;;
            xpusim) [ -n "${XPUSIM:-}" ] || { record "$name" skipped "" 0 "$limit" "no xpusim (see build)"; return; } ;;
            cuda) [ -n "${CUDA_DIR:-}" ] || { record "$name" skipped "" 0 "$limit" "no CUDA binaries (see build)"; return; } ;;
        esac
    done
    CURRENT=$name CURRENT_T0=$(date +%s) CURRENT_LIMIT=$limit
    clog "$name: running (at most $limit s)"
    PART_TIMEOUT=$limit timeout --kill-after=10 "$limit" bash "$self" --part "$name" "$W" \
        >"$W/$name/$name.log" 2>&1 </dev/null &
    CHILD=$!
    wait "$CHILD"
    rc=$?
    CHILD=""
    local secs=$(( $(date +%s) - CURRENT_T0 )) status=ok detail=""
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        status=timed-out detail="stopped after $limit s"
    elif [ -s "$W/$name/.status" ]; then
        detail=$(head -n 1 "$W/$name/.status")
        status=${detail%%:*} detail=${detail#*: }
    elif [ $rc != 0 ]; then
        status=failed detail="exit $rc"
    fi
    [ $rc != 0 ] && [ "$status" = failed ] && [ "$detail" != "exit $rc" ] && detail="$detail (exit $rc)"
    record "$name" "$status" "$rc" "$secs" "$limit" "$detail"
    CURRENT=""
}

# Logs over MAX_LOG_BYTES keep their first and last megabytes.
cut_logs() {
    local f size
    while IFS= read -r f; do
        size=$(stat -c %s "$f")
        [ "$size" -gt "$MAX_LOG_BYTES" ] || continue
        { head -c 1048576 "$f"; printf '\n[... campaign: %s bytes cut ...]\n' "$((size - 3145728))"; tail -c 2097152 "$f"; } >"$f.cut" &&
            mv "$f.cut" "$f"
    done < <(find "$W" -type f \( -name '*.log' -o -name '*.txt' -o -name '*.err' \))
}

# The file to drop when the tarball is too big: the largest trace first
# (traces are the kit's biggest files and the easiest to take again), then
# the largest of any other file except the summary, statuses and provenance.
next_victim() {
    local v
    v=$(find "$W/kit" -type f \( -name 'trace-*' -o -name '*.json.raw' \) -printf '%s %p\n' 2>/dev/null |
        sort -rn | head -n 1 | cut -d' ' -f2-)
    if [ -z "$v" ]; then
        v=$(find "$W" -type f ! -path "$W/prov/*" ! -name summary.txt ! -name status.tsv \
                 ! -name DROPPED.txt ! -name state.env -printf '%s %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
    fi
    [ -n "$v" ] && echo "$v"
}

write_summary() {
    local s=$W/summary.txt now p line st notes
    now=$(date +%s)
    {
        echo "xpusim GPU campaign $NAME"
        echo "GPU: ${GPU_NAME:-none ($NO_GPU_REASON)}${DEV:+ (xpusim device $DEV)}${GPU_SM:+, sm_$GPU_SM}"
        echo "started $STAMP, $((now - START)) s of the ${CAMPAIGN_BUDGET} s budget; parts run: $PARTS_RUN${CAMPAIGN_QUICK:+; CAMPAIGN_QUICK=$CAMPAIGN_QUICK}"
        [ -n "$INTERRUPTED" ] && echo "INTERRUPTED by SIG$INTERRUPTED: what existed then is packed"
        echo
        for p in $PARTS_ALL; do
            line=$(awk -F'\t' -v p="$p" '$1 == p' "$W/status.tsv" | tail -n 1)
            [ -n "$line" ] || continue
            st=$(echo "$line" | cut -f2)
            echo "== $p: $st ($(echo "$line" | cut -f4) s of $(echo "$line" | cut -f5) s)$(echo "$line" | awk -F'\t' '$6 != "" { print ": " $6 }')"
            notes=$("notes_$p" 2>/dev/null)
            [ -n "$notes" ] && echo "$notes" | sed 's/^/   /'
            if [ -z "$notes" ] && [ "$st" != ok ] && [ "$st" != skipped ] && [ -f "$W/$p/$p.log" ]; then
                echo "   last lines of $p/$p.log:"
                tail -n 5 "$W/$p/$p.log" | sed 's/^/     /'
            fi
        done
        echo "== memory: no memory measurements exist yet (issue 20 adds them); a part is one function part_NAME + notes_NAME in calibrate/gpu/campaign.sh and its name in PARTS_ALL"
        [ -f "$W/clocks-power.csv" ] && notes_py clocks "$W/clocks-power.csv" | sed 's/^/   /'
        if [ -n "${TIME_SKIPPED# }" ]; then
            echo
            echo "Out of time for:${TIME_SKIPPED}. Run them in one more device call (carry build/gpu-bundle):"
            echo "  PARTS=\"${TIME_SKIPPED# }\" CAMPAIGN_BUDGET_S=570 bash calibrate/gpu/campaign.sh \"\$OUT\""
        fi
        if [ ${#DROPPED[@]} -gt 0 ]; then
            echo
            echo "Dropped to keep the tarball within $((MAX_FILE_BYTES / 1048576)) MiB (largest traces first):"
            printf '  %s\n' "${DROPPED[@]}"
        fi
        echo
        echo "Files in the folder: $NAME.tar.gz (everything: each part's folder and log, status.tsv,"
        echo "the clock and power samples, campaign.log, this summary)${EXTRAS:+, and$EXTRAS}"
        echo
        echo "To commit the results, on the build machine in the repository root (FILES_AT: the"
        echo "folder the device tool put these files in, its reply's files_at):"
        echo "  calibrate/gpu/import.sh \"\$FILES_AT/$NAME.tar.gz\""
        echo "  git add calibrate/measured"
        echo "  git commit -m \"calibrate/measured: GPU campaign on ${GPU_NAME:-no GPU}, $DAY ($NAME)\""
    } >"$s"
}

pack() {
    [ "$PACKED" = 1 ] && return 0
    PACKED=1
    if [ -n "$SAMPLER" ]; then
        kill "$SAMPLER" 2>/dev/null
        wait "$SAMPLER" 2>/dev/null
        SAMPLER=""
    fi
    cut_logs
    DROPPED=()
    # the small files worth reading at once, copied beside the tarball
    local extras=() f size
    for f in "$W/calibrate/$CAL_ID.json" "$W"/validate/validate-*.csv; do
        [ -f "$f" ] || continue
        size=$(stat -c %s "$f")
        [ "$size" -le "$MAX_EXTRA_BYTES" ] && [ $((${#extras[@]} + 2)) -lt "$MAX_FILES" ] && extras+=("$f")
    done
    EXTRAS=""
    for f in "${extras[@]}"; do EXTRAS="$EXTRAS $(basename "$f")"; done
    local tgz=$WP/$NAME.tar.gz victim
    while :; do
        write_summary
        if ! tar -C "$WP" -czf "$tgz" "$NAME"; then
            echo "campaign: packing failed (tar)" >&2
            return 1
        fi
        size=$(stat -c %s "$tgz")
        [ "$size" -le "$MAX_FILE_BYTES" ] && break
        victim=$(next_victim)
        if [ -z "$victim" ]; then
            echo "campaign: packing failed: $size bytes with nothing left to drop" >&2
            return 1
        fi
        DROPPED+=("${victim#"$W"/} ($(stat -c %s "$victim") bytes)")
        printf '%s\n' "${DROPPED[@]}" >"$W/DROPPED.txt"
        rm -f "$victim"
    done
    mv "$tgz" "$DIR/" && cp "$W/summary.txt" "$DIR/summary.txt" || return 1
    for f in "${extras[@]}"; do
        # a dropped file is gone from the work folder too
        [ -f "$f" ] && cp "$f" "$DIR/"
    done
    check_dir
}

# The folder obeys what the device tool brings back, or the campaign says
# which rule it breaks.
check_dir() {
    local n=0 total=0 f size bad=""
    for f in "$DIR"/* "$DIR"/.[!.]*; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        [ -f "$f" ] || bad="$bad; $(basename "$f") is not a plain file"
        size=$(stat -c %s "$f")
        total=$((total + size))
        [ "$size" -le "$MAX_FILE_BYTES" ] || bad="$bad; $(basename "$f") is $size bytes"
        [[ $(basename "$f") =~ ^[A-Za-z0-9._-]+$ ]] || bad="$bad; name $(basename "$f")"
    done
    [ "$n" -le "$MAX_FILES" ] || bad="$bad; $n files"
    [ "$total" -le "$MAX_TOTAL_BYTES" ] || bad="$bad; $total bytes in all"
    if [ -n "$bad" ]; then
        echo "campaign: $DIR breaks the device tool's limits:${bad#;}" >&2
        return 1
    fi
    echo "campaign: packed $n files ($((total / 1024)) KiB) into $DIR: $(cd "$DIR" && ls | paste -sd' ' -)"
}

finish() {
    local code=$1
    trap '' TERM INT HUP
    stop_child
    if [ -n "$CURRENT" ]; then
        record "$CURRENT" interrupted "" "$(( $(date +%s) - CURRENT_T0 ))" "$CURRENT_LIMIT" "SIG$INTERRUPTED while running"
        CURRENT=""
    fi
    if ! pack; then
        code=1
    else
        cat "$DIR/summary.txt"
    fi
    [ "${CAMPAIGN_KEEP_WORK:-0}" = 1 ] || rm -rf "$WP"
    exit "$code"
}
on_signal() { INTERRUPTED=$1; finish $((128 + $2)); }
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT
trap 'on_signal HUP 1' HUP
trap '[ "$PACKED" = 1 ] || finish 1' EXIT

for p in $PARTS_RUN; do
    run_part "$p"
done
finish 0
