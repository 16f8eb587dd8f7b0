#!/usr/bin/env bash
# bundle.sh DIR — what a GPU campaign needs that the GPU machine lacks, in one
# folder that the `device` tool's run can carry (`make gpu-bundle` calls it
# with DIR=build/gpu-bundle, after building xpusim and the CUDA parts).
#
# The GPU machine has the CUDA toolkit, PyTorch and nvcc but no Debian dev
# packages: xpusim cannot be built there (no cJSON, GSL or CUnit headers) and
# its shared libraries are not installed. DIR gets:
#   xpusim            this tree's binary (XPUSIM_BUNDLE_BIN, default ./xpusim;
#                     the Makefile passes one built without oneDNN, ~39 MB of
#                     CPU-GEMM reference the GPU machine has no use for),
#                     host debug info stripped
#   cuda/             libxscuda.so, xs_cuda_tests, xs_cuda_bench (when built)
#   lib/              the shared libraries xpusim needs beyond the base system
#   env.sh            sourced before running them: LD_LIBRARY_PATH, XS_CUDA_LIB
#   BUNDLE.txt        where and from what it was built, each library's package
#
# Libraries carried: everything ldd lists except glibc's own (libc, libm,
# libpthread, libdl, librt, the loader: they must be the machine's, matching
# its loader) and the C++ runtime (libstdc++, libgcc_s: wherever nvcc runs, a
# g++ and its runtime are installed, same or newer, and an older copy first on
# the path would hide the newer one from whatever else loads it). libgomp is
# carried although gcc brings one too: it is 0.3 MB, only xpusim sees the
# path (env.sh is sourced by the campaign's xpusim and CUDA parts, never by
# PyTorch), and an image without gcc's OpenMP runtime would otherwise leave
# xpusim unable to start. CUDA's own libraries (cuBLAS, cuBLASLt: hundreds of
# MB) are never carried: the GPU machine's toolkit provides them.
#
# Fails (exit 1) when a library xpusim needs is not found here, or when the
# bundle and the working tree together pass the carry limit (64 MiB).
set -u
dir=${1:?usage: bundle.sh DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
CARRY_LIMIT=$((64 * 1024 * 1024))
# glibc and the C++ runtime: the machine's own (see above)
SYSTEM_LIBS='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libutil\.so|libstdc\+\+\.so|libgcc_s\.so)'
# CUDA's libraries: the GPU machine's toolkit
CUDA_LIBS='^(libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libnvidia-|libnvrtc\.so|libnvJitLink\.so)'

die() { echo "gpu-bundle: $*" >&2; exit 1; }

bin=${XPUSIM_BUNDLE_BIN:-./xpusim}
[ -x "$bin" ] || die "$bin not built (run make xpusim first)"
rm -rf "$dir" && mkdir -p "$dir/lib" "$dir/cuda" || die "cannot create $dir"

# copy_stripped SRC DST: the file without host debug sections (-g builds
# carry them; the CUDA fat binary and its line info stay as they are)
copy_stripped() {
    if command -v objcopy >/dev/null 2>&1; then
        objcopy --strip-debug "$1" "$2" || die "objcopy --strip-debug $1 failed"
    else
        cp "$1" "$2" || die "cannot copy $1"
    fi
    chmod +x "$2"
}

copy_stripped "$bin" "$dir/xpusim"
cuda_note="not built here (no build/cuda/libxscuda.so: nvcc missing or no CUDA sources); the campaign builds them on the GPU machine for its own GPU"
if [ -f build/cuda/libxscuda.so ]; then
    have=()
    for f in libxscuda.so xs_cuda_tests xs_cuda_bench; do
        [ -f "build/cuda/$f" ] || continue
        copy_stripped "build/cuda/$f" "$dir/cuda/$f"
        have+=("$f")
    done
    archs=${CUDA_ARCHS:-"the Makefile default"}
    cuda_note="${have[*]} from build/cuda (CUDA_ARCHS: $archs); cuBLAS from the GPU machine toolkit"
fi

# The libraries of every carried binary, but the system's and CUDA's.
notes=()
missing=()
for f in "$dir/xpusim" "$dir"/cuda/*; do
    [ -f "$f" ] || continue
    while read -r name arrow path _; do
        [ "$arrow" = "=>" ] || continue
        if [[ $name =~ $SYSTEM_LIBS ]] || [[ $name =~ $CUDA_LIBS ]] || [ -f "$dir/lib/$name" ]; then
            continue
        fi
        if [ "$path" = "not" ]; then
            missing+=("$name (for $(basename "$f"))")
            continue
        fi
        cp -L "$path" "$dir/lib/$name" || die "cannot copy $path"
        # dpkg knows a file by the path its package installed (/usr/lib/... on
        # a merged-/usr system, where ldd says /lib/...)
        pkg=$(for p in "$path" "/usr$path" "$(readlink -f "$path")"; do
                  dpkg -S "$p" 2>/dev/null
              done | head -n 1 | cut -d: -f1)
        ver=${pkg:+$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)}
        notes+=("  $name from $path (${pkg:-no package} ${ver})")
    done < <(ldd "$f")
done
[ ${#missing[@]} -eq 0 ] || die "not found on this host: ${missing[*]}"

cat >"$dir/env.sh" <<'EOF'
# Sourced before running the bundle's binaries (calibrate/gpu/campaign.sh
# does): its libraries first on the loader's path, the CUDA library xpusim
# dlopens, and the source folder xpusim reads devices/ and scenarios/ from.
xs_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$xs_bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -f "$xs_bundle/cuda/libxscuda.so" ]; then
    export XS_CUDA_LIB="$xs_bundle/cuda/libxscuda.so"
fi
if [ -d "$xs_bundle/../../devices" ]; then
    XPUSIM_DATA=$(cd "$xs_bundle/../.." && pwd)
    export XPUSIM_DATA
fi
EOF

# The newest glibc symbol version any carried file needs: the GPU machine's
# glibc must be at least that (the campaign checks by running xpusim).
glibc=$(for f in "$dir/xpusim" "$dir"/lib/* "$dir"/cuda/*; do
            [ -f "$f" ] && objdump -T "$f" 2>/dev/null
        done | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tail -n 1)

bundle_bytes=$(du -sb "$dir" | cut -f1)
# The tree that travels with a run: tracked files and untracked ones git
# does not ignore (the device tool's rule).
tree_bytes=$(git ls-files -z --cached --others --exclude-standard 2>/dev/null |
             xargs -0 -r du -cb 2>/dev/null | tail -n 1 | cut -f1)
tree_bytes=${tree_bytes:-0}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

{
    echo "xpusim GPU bundle"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n) ($(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown OS}"), $(uname -m))"
    echo "xpusim: $bin"
    echo "source: $(git describe --always --dirty 2>/dev/null || echo 'no git') ($(git rev-parse HEAD 2>/dev/null || echo unknown))"
    echo "compiler: $(${CC:-cc} --version 2>/dev/null | head -n 1)"
    echo "nvcc: $( { command -v nvcc || ls /usr/local/cuda/bin/nvcc; } 2>/dev/null | head -n 1)"
    echo "needs glibc: ${glibc:-unknown} or newer"
    echo "libraries carried (lib/):"
    printf '%s\n' "${notes[@]}"
    echo "cuda/: $cuda_note"
    echo "size: $(mib "$bundle_bytes") MiB; with the working tree ($(mib "$tree_bytes") MiB): $(mib $((bundle_bytes + tree_bytes))) MiB of the 64 MiB a run carries"
} >"$dir/BUNDLE.txt"
cat "$dir/BUNDLE.txt"
if [ $((bundle_bytes + tree_bytes)) -gt $CARRY_LIMIT ]; then
    die "bundle ($(mib "$bundle_bytes") MiB) and working tree ($(mib "$tree_bytes") MiB) pass the 64 MiB a device run carries; build the CUDA parts for the lent GPU only: make gpu-bundle CUDA_ARCHS=90"
fi
# It must run from where it lies, as it will on the GPU machine.
(. "$dir/env.sh" && "$dir/xpusim" --version >/dev/null) || die "$dir/xpusim does not start with env.sh"
echo "gpu-bundle: $dir ready; carry it: \"carry\": [\"$dir\"]"
