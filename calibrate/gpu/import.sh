#!/usr/bin/env bash
# import.sh [--into DIR] [--force] CAMPAIGN.tar.gz... — a GPU campaign that
# came back from a device run (calibrate/gpu/campaign.sh) into the
# repository, with its provenance, ready to commit:
#   DIR/DATE-GPU/STAMP/           everything the tarball holds
#   DIR/DATE-GPU/PROVENANCE.md    a section per campaign: GPU, driver, clocks,
#                                 power limit, date, command, source revision,
#                                 each part's status
#   DIR/DATE-NAME.csv             each measured-run CSV of the campaign
#                                 (device,scenario,set,metric,value,source)
#                                 that xpusim validate predicts row by row:
#                                 `make validate` reads DIR/*.csv, so only
#                                 such files go there
# DIR is calibrate/measured unless --into says otherwise. A campaign already
# imported, or a top-level CSV of the same name, is refused unless --force.
# XPUSIM names the binary that checks the CSVs (default ./xpusim).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/calibrate/gpu
into=$root/calibrate/measured
force=0
XPUSIM=${XPUSIM:-$root/xpusim}
MEASURED_HEADER="device,scenario,set,metric,value,source"

usage() { echo "usage: import.sh [--into DIR] [--force] CAMPAIGN.tar.gz..."; }
die() { echo "import: $*" >&2; exit 1; }

tarballs=()
while [ $# -gt 0 ]; do
    case $1 in
        --into) [ $# -ge 2 ] || { usage >&2; exit 2; }; into=$2; shift 2 ;;
        --force) force=1; shift ;;
        -h | --help)
            usage
            echo "Examples:"
            echo "  calibrate/gpu/import.sh /work/.device/out/campaign-h100-sxm5-80gb-20261124T210006Z.tar.gz"
            echo "  calibrate/gpu/import.sh --into /tmp/measured --force campaign-*.tar.gz"
            exit 0 ;;
        -*) echo "import: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) tarballs+=("$1"); shift ;;
    esac
done
[ ${#tarballs[@]} -gt 0 ] || { usage >&2; exit 2; }
mkdir -p "$into" || die "cannot create $into"
into=$(cd "$into" && pwd)
tmp=$(mktemp -d) || die "cannot make a temporary folder"
trap 'rm -rf "$tmp"' EXIT

# field FILE KEY: the value of a "KEY: value" line
field() { sed -n "s/^$2: //p" "$1" 2>/dev/null | head -n 1; }

import_one() {
    local tgz=$1 top stamp slug day dest x
    [ -f "$tgz" ] || die "$tgz: no such file"
    top=$(basename "$tgz" .tar.gz)
    [[ $top =~ ^campaign-([a-z0-9-]+)-([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{6})Z$ ]] ||
        die "$tgz: not a campaign tarball (expected campaign-GPU-YYYYMMDDTHHMMSSZ.tar.gz)"
    slug=${BASH_REMATCH[1]}
    day=${BASH_REMATCH[2]}-${BASH_REMATCH[3]}-${BASH_REMATCH[4]}
    stamp=${top#campaign-"$slug"-}
    # Only plain files and folders under the one top folder: nothing that
    # could write outside it.
    local listing
    listing=$(tar -tvzf "$tgz" 2>&1) || die "$tgz: not a readable .tar.gz ($(echo "$listing" | head -n 1))"
    x=$(echo "$listing" | awk '{ print substr($1, 1, 1) }' | grep -v '^[-d]$' | head -n 1)
    [ -z "$x" ] || die "$tgz: holds a link or special file; a campaign holds plain files only"
    while IFS= read -r x; do
        case $x in
            "$top" | "$top/" | "$top"/*) ;;
            *) die "$tgz: entry '$x' is outside $top/" ;;
        esac
        case "/$x/" in */../*) die "$tgz: entry '$x' climbs out with .." ;; esac
    done < <(tar -tzf "$tgz")
    dest=$into/$day-$slug/$stamp
    if [ -e "$dest" ]; then
        [ "$force" = 1 ] || die "$tgz: already imported into $dest (--force replaces it)"
        rm -rf "$dest"
    fi
    rm -rf "${tmp:?}/x" && mkdir -p "$tmp/x"
    tar -xzf "$tgz" -C "$tmp/x" --no-same-owner --no-same-permissions || die "$tgz: extraction failed"
    [ -f "$tmp/x/$top/status.tsv" ] || die "$tgz: no $top/status.tsv: not a campaign's tarball"

    # measured-run CSVs: the header, then xpusim must predict every row
    local csvs=() notes=() f name target why
    while IFS= read -r f; do
        [ "$(head -n 1 "$f" | tr -d '\r')" = "$MEASURED_HEADER" ] || continue
        name=$day-$(basename "$f")
        target=$into/$name
        why=""
        if [ -e "$target" ] && [ "$force" != 1 ]; then
            why="$name exists in $into (--force replaces it)"
        elif [ ! -x "$XPUSIM" ]; then
            why="no xpusim to check it ($XPUSIM; make xpusim)"
        elif ! "$XPUSIM" validate --measured "$f" --format csv -o "$tmp/check.csv" >"$tmp/check.out" 2>&1; then
            why="xpusim validate does not predict every row: $(grep -m 1 'error' "$tmp/check.out")"
        fi
        if [ -n "$why" ]; then
            notes+=("${f#"$tmp/x/$top/"}: kept in the folder only: $why")
        else
            csvs+=("$f")
            notes+=("${f#"$tmp/x/$top/"} -> $(basename "$into")/$name ($(($(wc -l <"$f") - 1)) rows, for make validate)")
        fi
    done < <(find "$tmp/x/$top" -type f -name '*.csv' | sort)

    local prov=$tmp/x/$top/prov host gpu
    host=$prov/host.txt
    gpu=$prov/gpu.txt
    local clocks=""
    if [ -f "$tmp/x/$top/clocks-power.csv" ] && command -v python3 >/dev/null 2>&1; then
        clocks=$(python3 "$here/campaign_notes.py" clocks "$tmp/x/$top/clocks-power.csv" | sed 's/^ */  /')
    fi
    mkdir -p "$(dirname "$dest")" || die "cannot create $(dirname "$dest")"
    local pmd=$into/$day-$slug/PROVENANCE.md
    if [ ! -f "$pmd" ]; then
        {
            echo "# GPU campaigns: $slug, $day"
            echo
            echo "What calibrate/gpu/campaign.sh measured on a lent GPU machine (the \`device\`"
            echo "tool), one section per campaign, each campaign's files in its STAMP folder"
            echo "(summary.txt first). Imported by calibrate/gpu/import.sh."
        } >"$pmd"
    fi
    if grep -qxF "## $top" "$pmd"; then
        # --force: the section of the earlier import goes
        awk -v h="## $top" '$0 == h { skip = 1; next } /^## / { skip = 0 } !skip' "$pmd" |
            cat -s >"$pmd.tmp" && mv "$pmd.tmp" "$pmd"
    fi
    {
        echo
        echo "## $top"
        echo
        echo "- GPU: $(field "$gpu" name || true) (PCI $(field "$gpu" pci.bus_id), VBIOS $(field "$gpu" vbios_version), compute capability $(field "$gpu" compute_cap), memory $(field "$gpu" memory.total))"
        [ -n "$(field "$gpu" 'no GPU')" ] && echo "- no GPU: $(field "$gpu" 'no GPU')"
        echo "- driver: $(field "$gpu" driver_version); nvcc: $(grep -m 1 release "$prov/nvcc.txt" 2>/dev/null | sed 's/.*release //')"
        echo "- clocks: max SM $(field "$gpu" clocks.max.sm), max memory $(field "$gpu" clocks.max.mem), application $(field "$gpu" clocks.applications.graphics); at the start SM $(field "$gpu" clocks.sm), memory $(field "$gpu" clocks.mem), $(field "$gpu" pstate)"
        [ -n "$clocks" ] && { echo "- during the campaign (nvidia-smi every 200 ms):"; echo "$clocks" | sed 's/^/  /'; }
        echo "- power limit: $(field "$gpu" power.limit) (default $(field "$gpu" power.default_limit), enforced $(field "$gpu" enforced.power.limit), max $(field "$gpu" power.max_limit))"
        echo "- persistence mode: $(field "$gpu" persistence_mode); MIG: $(field "$gpu" mig.mode.current); ECC: $(field "$gpu" ecc.mode.current)"
        echo "- date: $(field "$host" date) (UTC, start)"
        echo "- command: calibrate/gpu/campaign.sh \$OUT; $(field "$host" campaign)"
        echo "- source: $(field "$host" source); bundle: $(sed -n 's/^  source: //p' "$host" 2>/dev/null | head -n 1)"
        echo "- host: $(field "$host" host); $(field "$host" cpu); $(field "$host" memory)"
        echo "- python: $(grep -E '^(python|torch)' "$prov/python.txt" 2>/dev/null | paste -sd ';' - | sed 's/;/; /g')"
        echo
        echo "| part | status | seconds | limit s | detail |"
        echo "|---|---|---|---|---|"
        tail -n +2 "$tmp/x/$top/status.tsv" | awk -F'\t' '{ gsub(/\|/, "/", $6); printf "| %s | %s | %s | %s | %s |\n", $1, $2, $4, $5, $6 }'
        if [ -f "$tmp/x/$top/DROPPED.txt" ]; then
            echo
            echo "Dropped by the campaign to fit the device tool's 16 MiB a file:"
            sed 's/^/- /' "$tmp/x/$top/DROPPED.txt"
        fi
        if [ ${#notes[@]} -gt 0 ]; then
            echo
            echo "Measured-run files:"
            printf -- '- %s\n' "${notes[@]}"
        fi
    } >>"$pmd"
    mv "$tmp/x/$top" "$dest" || die "cannot move the campaign into $dest"
    for f in "${csvs[@]}"; do
        cp "$dest/${f#"$tmp/x/$top/"}" "$into/$day-$(basename "$f")" || die "cannot copy $f"
    done
    echo "import: $tgz -> $dest"
    [ ${#notes[@]} -gt 0 ] && printf '  %s\n' "${notes[@]}"
    return 0
}

for t in "${tarballs[@]}"; do
    import_one "$t"
done
rel=${into#"$root"/}
echo "import: now review $rel/*/PROVENANCE.md and commit:"
echo "  git add $rel && git commit -m \"$rel: GPU campaign (see PROVENANCE.md)\""
