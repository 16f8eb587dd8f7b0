#!/bin/sh
# man.sh XPUSIM VERSION — the xpusim(1) man page, written to stdout from the
# --help texts themselves (the command's and each sub-command's), so the
# page says what the binary says. help2man is not in Debian's archive this
# build uses, so the page is assembled here: each text goes in as it is
# printed (no-fill), escaped for roff.
set -eu
bin=$1
version=$2
esc() {
    # roff: a backslash is \e; a line starting with . or ' would be a
    # request; the one non-ASCII character the texts use is the em dash
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/—/\\(em/g'
}
cmds=$("$bin" --help | sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ -n "$cmds" ] || { echo "man.sh: no command list in '$bin --help'" >&2; exit 1; }
# No date in .TH: the page changes only when the help does.
cat <<HEAD
.TH XPUSIM 1 "" "xpusim $version" "User Commands"
.SH NAME
xpusim \\- predict the time, energy and cost of Transformer fine-tuning, kernel by kernel
.SH SYNOPSIS
.B xpusim
.I COMMAND
[\\fIOPTIONS\\fR]
.SH DESCRIPTION
.nf
HEAD
"$bin" --help | esc
echo ".fi"
echo ".SH COMMANDS"
for c in $cmds; do
    echo ".SS xpusim $c"
    echo ".nf"
    "$bin" "$c" --help | esc
    echo ".fi"
done
cat <<TAIL
.SH ENVIRONMENT
.TP
.B XPUSIM_DATA
the folder holding devices/ and scenarios/; by default the folder of the
executable or one above it, then PREFIX/share/xpusim of an installed xpusim
.SH SEE ALSO
The library: <xpusim.h> (pkg-config xpusim); the Python module: import xpusim.
TAIL
