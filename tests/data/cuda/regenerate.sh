#!/bin/sh
# Rewrites tests/data/cuda/fake-h100.measurements.csv: a quick
# `calibrate --backend cuda` run against tests/fake_gpu.c (no GPU needed),
# its measurement file with two provenance lines added saying what made it.
# Run from the repository root; then `make fuzz-seeds` (the cudameas seeds
# are copies of it) and commit both.
set -eu
test -f tests/fake_gpu.c || { echo "regenerate.sh: run from the repository root" >&2; exit 2; }
make -s xpusim build/rel/libxs_fake_gpu.so
out=build/fake-h100.json
meas=build/fake-h100.measurements.csv
rm -f "$out" "$meas"
XS_CUDA_LIB=build/rel/libxs_fake_gpu.so XS_NVML_LIB=build/rel/libxs_fake_gpu.so \
    ./xpusim calibrate --backend cuda --quick -o "$out" 2>/dev/null
eff=$(sed -n 's/^#define FAKE_GEMM_EFF \([0-9.]*\).*/\1/p' tests/fake_gpu.c)
test -n "$eff" || { echo "regenerate.sh: no FAKE_GEMM_EFF in tests/fake_gpu.c" >&2; exit 1; }
dst=tests/data/cuda/fake-h100.measurements.csv
tmp=$dst.tmp.$$
# the provenance lines go after the last one the run wrote
awk -v eff="$eff" '
    !done && NR > 1 && !/^# / {
        print "# note=synthesized by tests/fake_gpu.c, a test double with known parameters, not a GPU; GEMMs by xpusim'"'"'s GEMM model of h100-sxm5-80gb at gemm_efficiency " eff
        print "# regenerate=sh tests/data/cuda/regenerate.sh (from the repository root), then make fuzz-seeds"
        done = 1
    }
    { print }' "$meas" > "$tmp"
mv "$tmp" "$dst"
rm -f "$out" "$meas"
echo "regenerate.sh: wrote $dst ($(grep -vc '^#' "$dst") lines with the header)"
