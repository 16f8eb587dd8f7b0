#!/bin/sh
# effects.sh REV... — each revision's validate summary lines on the kept and
# on the held-out part of the development data (data/holdout/README.md), so
# a closing note can give every mechanism's effect on both. Builds each
# revision in a temporary worktree; the data and the split rule are this
# tree's, so every revision is judged on the same rows.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'for w in "$tmp"/wt-*; do [ -d "$w" ] && git -C "$here" worktree remove --force "$w"; done; rm -rf "$tmp"' EXIT
for part in kept held; do
    mkdir -p "$tmp/$part"
    for f in "$here"/data/measured/dev-*.csv "$here"/data/published/*.csv; do
        [ -f "$f" ] || continue
        awk -v part=$part -f "$here/data/holdout/split.awk" "$f" > "$tmp/$part/${f##*/}"
    done
done
for rev in "$@"; do
    w="$tmp/wt-$(echo "$rev" | tr -c 'A-Za-z0-9\n' _)"
    git -C "$here" worktree add -q --detach "$w" "$rev"
    make -s -C "$w" xpusim >/dev/null 2>&1 || { echo "$rev: build failed"; continue; }
    for part in ${PARTS:-kept held}; do
        echo "== $rev ($(git -C "$here" log -1 --format=%s "$rev" | cut -c1-60)) — $part"
        args=""
        for f in "$tmp/$part"/*.csv; do args="$args --measured $f"; done
        # shellcheck disable=SC2086
        (cd "$w" && ./xpusim validate $args 2>/dev/null || true) |
            sed -n '/^summary/,$p' | grep -E '^  (all rows|samples_per_s|time_s|epoch_time_s|avg_power_w|dev-|zeus|gemm|kernels)' || true
    done
done
