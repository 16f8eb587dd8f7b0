#!/usr/bin/env bash
# same_outputs.sh — proof that a change kept behaviour: runs one fixed set
# of xpusim commands with the binary built from BASE (a git revision) and
# with this tree's, and compares their stdout, stderr and exit status
# byte for byte. Used for refactorings, where nothing a user sees may move.
#
#   tests/same_outputs.sh BASE            # build BASE in a worktree, compare
#   tests/same_outputs.sh --run BIN DIR   # only write BIN's outputs to DIR
#
# The set: predict (JSON, CSV, table) and workload CSV of every shipped
# scenario on h100-sxm5-80gb, a100-sxm4-80gb, t4 and the CPU device, under
# several recipes; compare; validate of the measured-run files (the dev sets
# in data/measured and the test file) and
# of a trace; gemm shapes and sweeps; advise; devices, scenarios, every
# --help, and a few bad inputs. Both binaries read this tree's devices/ and
# scenarios/ (XPUSIM_DATA), so only the code differs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

run_set() {
    local bin=$1 out=$2 n=0
    mkdir -p "$out"
    # one case: a name, then the arguments (word-split on purpose)
    case_() {
        local name=$1
        shift
        n=$((n + 1))
        local rc=0
        # one CUDA library for both: BASE's worktree builds only the binary
        XPUSIM_DATA=$root XS_CUDA_LIB=$root/build/cuda/libxscuda.so \
            "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
        echo "$rc" >"$out/$name.rc"
    }
    local scns="bert-base-squad bert-large-squad gpt2-medium-finetune"
    local devs="h100-sxm5-80gb a100-sxm4-80gb t4 xeon-amx-2c"
    for s in $scns; do
        case_ "workload-$s-csv" workload -s "$s" --format csv
        case_ "workload-$s-json" workload -s "$s" --format json
        case_ "workload-$s-table" workload -s "$s"
        for d in $devs; do
            case_ "predict-$s-$d-json" predict -s "$s" -d "$d" --format json
            case_ "predict-$s-$d-csv" predict -s "$s" -d "$d" --format csv
            case_ "predict-$s-$d-table" predict -s "$s" -d "$d"
        done
        for f in table json csv; do
            case_ "compare-$s-$f" compare -s "$s" --format "$f"
        done
    done
    # recipes that take other paths through the workload and the models
    local i=0
    while read -r sets; do
        i=$((i + 1))
        local args=()
        for kv in $sets; do args+=(--set "$kv"); done
        for d in $devs l4 v100-sxm2-16gb h200-sxm-141gb; do
            case_ "recipe$i-$d" predict -s bert-base-squad -d "$d" --format csv "${args[@]}"
        done
    done <<'EOF'
train.kernels=fused
train.attention=flash
train.precision=amp_fp16 train.amp_mode=o2 train.grad_accum=3
train.precision=fp32 train.fp32_optimizer=bertadam train.zero_grad=zero
train.precision=bf16 train.optimizer=adan train.fused_optimizer=false
train.precision=tf32 train.optimizer=sgd train.grad_clip=true train.loss_sync=true
train.batch=7 train.seq=129 model.hidden=1000 model.heads=10
EOF
    # several devices: DDP buckets, ZeRO, FSDP, the network, the TPU torus
    i=0
    while read -r scn sets; do
        i=$((i + 1))
        local args=()
        for kv in $sets; do args+=(--set "$kv"); done
        for d in a100-sxm4-80gb h100-sxm5-80gb v100-sxm2-16gb tpu-v4; do
            case_ "cluster$i-$d" predict -s "$scn" -d "$d" --format json "${args[@]}"
        done
    done <<'EOF2'
bert-large-squad cluster.devices=8
bert-base-squad cluster.devices=4 cluster.ddp=apex
bert-large-squad cluster.devices=8 cluster.sharding=zero1
bert-large-squad cluster.devices=8 cluster.sharding=zero2
gpt2-medium-finetune cluster.devices=4 cluster.sharding=fsdp train.batch=1
bert-large-squad cluster.devices=8 cluster.sharding=fsdp_grad_op train.amp_mode=autocast
gpt2-medium-finetune cluster.devices=32 cluster.network_gbs=3 train.grad_accum=2
EOF2
    case_ predict-default predict
    case_ compare-devs compare -d t4,l4,a10 -s bert-base-squad --format csv
    # sweeps whose keys are plain (one field each) and not (read by the
    # scenario's completion: train.seq, the optimizer; model keys), with
    # points the scenario or a device refuses
    case_ sweep-plain sweep -s bert-large-squad -d a100-sxm4-80gb,t4,tpu-v3 \
        --vary train.batch=1,8,24,4000 --vary data.samples=1000,88641 \
        --vary train.grad_accum=1,2 --band
    case_ sweep-derived sweep -s gpt2-medium-finetune -d h100-sxm5-80gb,l4 \
        --vary train.seq=128,1024,2048 --vary train.optimizer=adamw,sgd,adan \
        --vary train.precision=amp_fp16,bf16,fp8 --format json
    case_ sweep-model sweep -s llama2-7b-lora -d a100-sxm4-80gb --vary model.layers=2,32 \
        --vary train.lora.rank=0,8 --vary train.checkpointing=none,layer --set train.batch=2
    case_ compare-vary compare -s bert-base-squad -d t4,a10 --vary train.batch=8,32 \
        --weights time=1,cost=2 --format json
    for f in data/measured/dev-*.csv tests/data/measured/*.csv; do
        [ -f "$f" ] || continue
        local b
        b=$(basename "$f" .csv)
        case_ "validate-$b-csv" validate --measured "$f" --format csv
        case_ "validate-$b-json" validate --measured "$f" --format json
        case_ "validate-$b-table" validate --measured "$f"
    done
    case_ validate-trace validate --trace tests/data/traces/synthetic-a100-step.json \
        -d a100-sxm4-80gb -s tests/data/scenarios/tiny.json --format csv
    for d in a100-sxm4-80gb t4 h100-sxm5-80gb xeon-amx-2c; do
        case_ "gemm-$d" gemm -d "$d" --m 4096 --n 4096 --k 4096
        case_ "gemm-$d-odd" gemm -d "$d" --m 1000 --n 77 --k 3001 --dtype bf16 --ta --format json
        case_ "gemm-$d-fp32" gemm -d "$d" --m 512 --n 30522 --k 1024 --dtype fp32 --tb --batch 3
        case_ "gemm-$d-sweep" gemm -d "$d" --m 4096 --k 4096 --dtype fp16 --sweep n=1:4096
        case_ "gemm-$d-sweepk" gemm -d "$d" --m 384 --n 1024 --dtype tf32 --sweep k=64:8192:64 \
            --format json
    done
    for d in a100-sxm4-80gb t4 xeon-amx-2c; do
        case_ "advise-$d" advise -d "$d"
        case_ "advise-$d-json" advise -d "$d" -s bert-base-squad --format json
    done
    case_ advise-gpt2 advise -d h100-sxm5-80gb -s gpt2-medium-finetune --set train.attention=unfused
    for f in table json csv; do case_ "devices-$f" devices --format "$f"; done
    case_ scenarios scenarios
    case_ help
    case_ help-long --help
    for c in predict workload compare gemm advise validate calibrate devices scenarios; do
        case_ "help-$c" "$c" --help
    done
    case_ bad-device predict -d a100-sxm9
    case_ bad-set predict --set train.batch=-1
    case_ bad-key predict --set train.bach=8
    case_ bad-command frobnicate
    case_ bad-backend calibrate --backend cuda
    case_ bad-validate-backend validate --backend cpu -d a100-sxm4-80gb
    case_ bad-gemm gemm --m 0 --n 1 --k 1
    case_ missing-device-file predict -d tests/data/no-such-file.json
    # the relations between keys, the workload's gate's since issue 39
    case_ bad-heads predict --set model.heads=7
    case_ bad-seq predict -s bert-base-squad --set train.seq=100000
    case_ bad-lora predict -s bert-base-squad --set train.lora.rank=8 --set train.lora.targets=q_proj
    case_ bad-fp8 predict -s llama2-7b-fp8 -d a100-sxm4-80gb
    case_ bad-sweep-point sweep -s bert-base-squad -d t4 --vary train.seq=128,100000 \
        --vary model.heads=12,7
    case_ bad-fsdp predict -s bert-base-squad --set cluster.sharding=fsdp
    case_ bad-llama predict -s llama2-7b-lora --set model.activation=gelu
    echo "$n cases"
}

if [ "${1:-}" = "--run" ]; then
    run_set "$2" "$3"
    exit 0
fi
base=${1:?usage: tests/same_outputs.sh BASE-REVISION | --run BIN DIR}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/base" "$base" >/dev/null
make -s -C "$work/base" xpusim >/dev/null
make -s xpusim >/dev/null
echo "base $(git -C "$work/base" rev-parse --short HEAD): $(run_set "$work/base/xpusim" "$work/old")"
echo "this tree: $(run_set "$root/xpusim" "$work/new")"
if diff -r "$work/old" "$work/new" >"$work/diff"; then
    echo "same_outputs: identical (stdout, stderr and exit status of every case)"
else
    echo "same_outputs: DIFFERENT outputs:"
    grep -E '^(diff|Only)' "$work/diff" | sed 's/^/  /' | head -50
    head -80 "$work/diff"
    exit 1
fi
