#!/bin/sh
# api_check.sh header LIB | install — the public interface as a user gets it.
#   header:  include/xpusim.h compiles alone as C11 (-pedantic) and C++11
#            (gcc, g++, clang), and LIB exports exactly the functions the
#            header declares (nm -D), nothing internal.
#   install: make install into a temporary prefix; the example built there
#            with the documented command (pkg-config) against the shared
#            library and run from elsewhere with no LD_LIBRARY_PATH nor
#            XPUSIM_DATA, and against the static one; a staged install
#            (DESTDIR) that still finds its data; the man page; the Python
#            package pip-installed as a user does (a fresh venv, `pip
#            install ./python`, no flags, no index), a prediction with no
#            environment variable, its unit tests; make uninstall leaving
#            no file behind. As root, the same into the default /usr/local
#            (skipped, with a line saying why, when not root or when
#            /usr/local already has an xpusim), uninstalled afterwards.
set -eu
MAKE=${MAKE:-make}
# Debian's python3 (its pip, setuptools and wheel: python3-pip, -setuptools, -wheel)
PYTHON=${PYTHON:-/usr/bin/python3}
fail() { echo "api_check: FAILED: $*" >&2; exit 1; }
tmp=$(mktemp -d)
cleanup=""  # run on exit too: what undoes the /usr/local install
trap 'eval "$cleanup"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
root=$(pwd)
# what a user's shell would not have set: the checks run without them
keep_pc="-u LD_LIBRARY_PATH -u XPUSIM_LIB -u XPUSIM_DATA -u PYTHONPATH -u PYTHONHOME"
noenv="$keep_pc -u PKG_CONFIG_PATH"

# venv VENV: a fresh venv, `pip install ./python` into it with no flag and
# no index (PIP_NO_INDEX: nothing downloaded), in a clean environment but
# PKG_CONFIG_PATH (kept: the docs set it for another PREFIX than /usr/local)
venv() {
    "$PYTHON" -m venv "$1" > "$tmp/venv.log" 2>&1 ||
        { cat "$tmp/venv.log"; fail "$PYTHON -m venv (Debian: apt-get install python3-venv)"; }
    before=$(git status --porcelain --ignored python 2>/dev/null || true)
    # shellcheck disable=SC2086
    env $keep_pc PIP_NO_INDEX=1 "$1/bin/pip" install ./python \
        > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip install ./python in a fresh venv (offline)"; }
    [ "$(git status --porcelain --ignored python 2>/dev/null || true)" = "$before" ] ||
        fail "pip install ./python wrote into python/"
}
# predict_py VENV LIBFILE: import xpusim and predict from another folder
# with no environment variable; the library loaded must be LIBFILE
predict_py() {
    # shellcheck disable=SC2086
    (cd "$tmp/elsewhere" && env $noenv "$1/bin/python" -c '
import sys, xpusim
s = xpusim.summary("a100-sxm4-80gb", "bert-large-squad", train__batch=32)
assert s["samples_per_s"] > 0 and s["fits"], s
if xpusim._LIB_PATH != sys.argv[1]:
    sys.exit("xpusim loaded %s, not %s" % (xpusim._LIB_PATH, sys.argv[1]))
' "$2") || fail "import xpusim and predict with no environment variable ($1)"
}

case ${1:-} in
header)
    lib=$2
    printf '#include <xpusim.h>\nint main(void) { return xs_lib_version() == 0; }\n' > "$tmp/alone.c"
    cp "$tmp/alone.c" "$tmp/alone.cc"
    gcc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only "$tmp/alone.c" ||
        fail "xpusim.h does not compile alone as C11"
    g++ -std=c++11 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only "$tmp/alone.cc" ||
        fail "xpusim.h does not compile alone as C++11"
    if command -v clang >/dev/null; then
        clang -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only "$tmp/alone.c" ||
            fail "xpusim.h does not compile alone with clang"
    fi
    # the functions the header declares: a name followed by '(' at the
    # start of a declaration line (return type first)
    sed -n 's/^[a-z][a-z_ *]*[ *]\(xs_[a-z_]*\)(.*/\1/p' include/xpusim.h | sort -u > "$tmp/declared"
    nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort -u > "$tmp/exported"
    [ -s "$tmp/declared" ] || fail "no function found in include/xpusim.h"
    diff "$tmp/declared" "$tmp/exported" > "$tmp/diff" ||
        { cat "$tmp/diff" >&2; fail "$lib exports other functions than xpusim.h declares (< header, > library)"; }
    other=$(nm -D --defined-only "$lib" | awk '$2 != "T" && $2 != "A" { print $3 }')
    [ -z "$other" ] || fail "$lib exports data symbols: $other"
    soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    major=$(sed -n 's/^#define XS_LIB_VERSION_MAJOR //p' include/xpusim.h)
    [ "$soname" = "libxpusim.so.$major" ] || fail "soname '$soname', expected libxpusim.so.$major"
    echo "api_check: header alone compiles (C11, C++11); $(wc -l < "$tmp/declared") functions exported, no others; soname $soname"
    ;;
install)
    prefix=$tmp/prefix
    $MAKE -s install PREFIX="$prefix" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "make install"; }
    ver=$(sed -n 's/^#define XS_LIB_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' include/xpusim.h | paste -sd.)
    major=${ver%%.*}
    for f in bin/xpusim lib/libxpusim.so.$ver lib/libxpusim.so.$major lib/libxpusim.so lib/libxpusim.a \
             include/xpusim.h lib/pkgconfig/xpusim.pc share/man/man1/xpusim.1 \
             share/xpusim/devices/a100-sxm4-80gb.json share/xpusim/scenarios/bert-large-squad.json \
             share/xpusim/scenarios/models/bert-large-uncased.json \
             share/xpusim/data/published/zeus-v100-bert-base-squad.csv share/xpusim/plots/roofline.gp; do
        [ -e "$prefix/$f" ] || fail "make install did not install $f"
    done
    [ "$(readlink "$prefix/lib/libxpusim.so.$major")" = "libxpusim.so.$ver" ] || fail "libxpusim.so.$major is not a link to libxpusim.so.$ver"
    # From elsewhere, no XPUSIM_DATA: the data come from PREFIX/share/xpusim.
    unset XPUSIM_DATA
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    mkdir "$tmp/elsewhere"
    # The example with the command the docs give (for a PREFIX the loader
    # does not search, the .pc's rpath finds the library), run from
    # elsewhere with no LD_LIBRARY_PATH
    # shellcheck disable=SC2046
    (cd "$tmp/elsewhere" && cc "$root/examples/predict.c" $(pkg-config --cflags --libs xpusim) -o predict) ||
        fail "the example does not build with the documented command"
    cp "$tmp/elsewhere/predict" "$tmp/predict"
    # shellcheck disable=SC2086
    (cd "$tmp/elsewhere" && env $noenv ./predict) > "$tmp/predict.out" || { cat "$tmp/predict.out"; fail "the example failed"; }
    grep -q "^bert-large-squad on a100-sxm4-80gb, train.batch=32: step" "$tmp/predict.out" || fail "the example printed no prediction"
    ldd "$tmp/predict" | grep -q "libxpusim.so.$major => $prefix/lib/" || fail "the example is not linked against the installed library"
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags xpusim) -fsyntax-only examples/predict.c ||
        fail "the example does not compile cleanly (C11, -Wall -Wextra -pedantic)"
    # The static library with what pkg-config --static says it needs.
    # shellcheck disable=SC2046
    cc -std=c11 examples/predict.c $(pkg-config --cflags xpusim) "$prefix/lib/libxpusim.a" \
        $(pkg-config --static --libs xpusim | sed 's/-L[^ ]*//; s/-lxpusim//') -o "$tmp/predict-static" ||
        fail "the example does not link statically with pkg-config --static's libraries"
    ! ldd "$tmp/predict-static" | grep -q libxpusim || fail "the static example loads libxpusim.so"
    # linked in, the library is the program: it finds the data through
    # XPUSIM_DATA, which pkg-config names
    (cd "$tmp/elsewhere" && XPUSIM_DATA=$(pkg-config --variable=datadir xpusim) "$tmp/predict-static") \
        > "$tmp/static.out" || fail "the static example failed"
    cmp -s "$tmp/predict.out" "$tmp/static.out" || fail "the static and shared examples print differently"
    (cd "$tmp/elsewhere" && "$prefix/bin/xpusim" predict --summary) > "$tmp/cli.out" ||
        fail "the installed xpusim does not find its data"
    # run by its name from PATH, as a user runs it (argv[0] has no folder then)
    (cd "$tmp/elsewhere" && PATH="$prefix/bin:$PATH" env $noenv xpusim predict --summary) \
        > "$tmp/path.out" 2>&1 || { cat "$tmp/path.out"; fail "xpusim run from PATH does not find its data"; }
    cmp -s "$tmp/cli.out" "$tmp/path.out" || fail "xpusim from PATH prints differently"
    # plot finds its gnuplot scripts in PREFIX/share/xpusim/plots
    (cd "$tmp/elsewhere" && "$prefix/bin/xpusim" plot waterfall -d a100-sxm4-80gb -s bert-large-squad \
        -o "$tmp/figs") > "$tmp/plot.out" 2>&1 || { cat "$tmp/plot.out"; fail "the installed xpusim plot"; }
    [ -s "$tmp/figs/waterfall.png" ] || fail "the installed xpusim plot drew no waterfall.png"
    man -l "$prefix/share/man/man1/xpusim.1" > /dev/null 2>&1 || fail "man cannot format xpusim.1"
    warn=$(groff -man -ww -z "$prefix/share/man/man1/xpusim.1" 2>&1)
    [ -z "$warn" ] || fail "xpusim.1: $warn"
    for c in predict compare sweep validate; do
        grep -q "^\.SS xpusim $c" "$prefix/share/man/man1/xpusim.1" || fail "xpusim.1 lacks the $c section"
    done
    # Python as a user installs it: a fresh venv, pip install ./python with
    # PKG_CONFIG_PATH naming PREFIX (as the docs say for another PREFIX than
    # /usr/local), then no environment variable at all
    venv "$tmp/venv"
    predict_py "$tmp/venv" "$prefix/lib/libxpusim.so.$major"
    site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    # shellcheck disable=SC2086
    (cd "$tmp/elsewhere" && env $noenv PYTHONDONTWRITEBYTECODE=1 XPUSIM_BIN="$prefix/bin/xpusim" XPUSIM_SHARE="$prefix/share/xpusim" \
        XPUSIM_PKG="$site" "$tmp/venv/bin/python" -m unittest discover -s "$root/python/tests" -p 'test_*.py') ||
        fail "the Python tests"
    # the one line it says when it finds no library
    # shellcheck disable=SC2086
    msg=$(cd "$tmp/elsewhere" && env $noenv XPUSIM_LIB="$tmp/none.so" "$tmp/venv/bin/python" -c 'import xpusim' 2>&1 | tail -n 1)
    case $msg in "ImportError: xpusim: XPUSIM_LIB=$tmp/none.so: "*) ;; *) fail "a bad XPUSIM_LIB says: $msg" ;; esac
    # A staged install (DESTDIR) is relocatable: run where it was staged.
    $MAKE -s install DESTDIR="$tmp/stage" PREFIX=/opt/xpusim > "$tmp/stage.log" 2>&1 || { cat "$tmp/stage.log"; fail "make install DESTDIR"; }
    (cd "$tmp/elsewhere" && "$tmp/stage/opt/xpusim/bin/xpusim" predict -d t4 -s bert-base-squad --summary) \
        > /dev/null || fail "the staged xpusim does not find its data"
    grep -q '^prefix=/opt/xpusim$' "$tmp/stage/opt/xpusim/lib/pkgconfig/xpusim.pc" || fail "xpusim.pc names the stage, not PREFIX"
    $MAKE -s uninstall PREFIX="$prefix" > /dev/null || fail "make uninstall"
    left=$(find "$prefix" -type f -o -type l)
    [ -z "$left" ] || fail "make uninstall left $left"
    echo "api_check: installed in a temporary prefix, the example built with the documented command and run with no LD_LIBRARY_PATH (and statically), pip install ./python in a fresh venv offline, a prediction with no environment variable, the Python tests passed, uninstalled clean"

    # The default PREFIX, /usr/local, as root installs it: the ld.so cache
    # refreshed, pkg-config finding xpusim.pc with no PKG_CONFIG_PATH
    usr=/usr/local
    unset PKG_CONFIG_PATH
    if [ "$(id -u)" != 0 ]; then
        echo "api_check: skipped: make install into /usr/local (needs root; CI runs as root)"
    elif [ -n "$(ls -d $usr/bin/xpusim $usr/lib/libxpusim.* $usr/share/xpusim 2>/dev/null)" ]; then
        echo "api_check: skipped: make install into /usr/local (an xpusim is installed there already: left as it is)"
    else
        created=""
        for d in bin lib lib/pkgconfig include share share/man share/man/man1; do
            [ -d "$usr/$d" ] || created="$usr/$d $created"   # deepest first
        done
        # undone on any exit from here on
        # shellcheck disable=SC2016
        cleanup='$MAKE -s uninstall PREFIX=/usr/local DESTDIR= > /dev/null 2>&1; rmdir $created 2>/dev/null || true'
        # shellcheck disable=SC2086
        env $noenv $MAKE -s install PREFIX=$usr DESTDIR= > "$tmp/usr.log" 2>&1 || { cat "$tmp/usr.log"; fail "make install (/usr/local)"; }
        ldconfig -p | grep -q "libxpusim.so.$major .*=> $usr/lib/libxpusim.so.$major" ||
            fail "make install did not refresh the ld.so cache"
        mkdir "$tmp/usr"
        # shellcheck disable=SC2046,SC2086
        (cd "$tmp/usr" && env $noenv sh -c "cc '$root/examples/predict.c' \$(pkg-config --cflags --libs xpusim) -o predict && ./predict") \
            > "$tmp/usr.out" 2>&1 || { cat "$tmp/usr.out"; fail "the documented command against /usr/local"; }
        cmp -s "$tmp/predict.out" "$tmp/usr.out" || fail "the example against /usr/local prints differently"
        # without the .pc's rpath, the loader finds it through its cache
        # shellcheck disable=SC2046,SC2086
        (cd "$tmp/usr" && env $noenv sh -c "cc '$root/examples/predict.c' \$(pkg-config --cflags --libs xpusim | sed 's/-Wl,-rpath,[^ ]*//') -o bare && ./bare") \
            > "$tmp/bare.out" 2>&1 || { cat "$tmp/bare.out"; fail "the example with no rpath against /usr/local"; }
        # Python with no PKG_CONFIG_PATH at all
        venv "$tmp/venv-usr"
        predict_py "$tmp/venv-usr" "$usr/lib/libxpusim.so.$major"
        eval "$cleanup"
        cleanup=""
        for f in bin/xpusim lib/libxpusim.so.$ver lib/libxpusim.so.$major lib/libxpusim.so lib/libxpusim.a \
                 include/xpusim.h lib/pkgconfig/xpusim.pc share/man/man1/xpusim.1 share/xpusim; do
            [ ! -e "$usr/$f" ] || fail "make uninstall left $usr/$f"
        done
        ! ldconfig -p | grep -q libxpusim || fail "make uninstall left libxpusim in the ld.so cache"
        echo "api_check: installed into /usr/local as root: the ld.so cache refreshed, the documented command built and ran the example, pip install ./python in a fresh venv with no PKG_CONFIG_PATH, a prediction with no environment variable; uninstalled clean"
    fi
    ;;
*)
    echo "usage: api_check.sh header LIB | install" >&2
    exit 2
    ;;
esac
