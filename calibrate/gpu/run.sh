#!/usr/bin/env bash
# One call on a GPU machine (the `device` tool's run): samples the clocks in
# the background, runs the kernel benchmarks, then the whole BERT steps and
# their traces. Everything lands in $OUT (7 files, within the tool's 8):
#   run.log, clocks.csv, kernels-DEV.csv, gemm-DEV.csv, bert-steps-DEV.csv,
#   trace-bert-base-squad-{tf32,amp_fp16}-bN.json
# A failing part does not stop the next one. BUDGET_S bounds the whole-step
# runs (seconds after which no new run starts; default 300).
set -u
out=${OUT:-calibrate/gpu/out}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
log="$out/run.log"
{
  date -u +"start %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} >"$log" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv,nounits -lms 500 >"$out/clocks.csv" 2>/dev/null &
smi=$!
echo "== kernel_bench" >>"$log"
python3 "$here/kernel_bench.py" --out "$out" >>"$log" 2>&1 || echo "kernel_bench: exit $?" >>"$log"
echo "== bert_step" >>"$log"
python3 "$here/bert_step.py" --out "$out" --budget-s "${BUDGET_S:-300}" >>"$log" 2>&1 \
  || echo "bert_step: exit $?" >>"$log"
kill "$smi" 2>/dev/null
date -u +"end %Y-%m-%dT%H:%M:%SZ" >>"$log"
tail -n 60 "$log"
