#!/bin/sh
# api_check.sh header LIB | install — the public interface as a user gets it.
#   header:  include/xpusim.h compiles alone as C11 (-pedantic) and C++11
#            (gcc, g++, clang), and LIB exports exactly the functions the
#            header declares (nm -D), nothing internal.
#   install: make install into a temporary prefix; the example built there
#            with pkg-config against the shared and the static library and
#            run from elsewhere without XPUSIM_DATA; a staged install
#            (DESTDIR) that still finds its data; the man page; the Python
#            package pip-installed offline and its unit tests; make
#            uninstall leaving no file behind.
set -eu
MAKE=${MAKE:-make}
# Debian's python3 (its pip, setuptools and wheel: python3-pip, -setuptools, -wheel)
PYTHON=${PYTHON:-/usr/bin/python3}
fail() { echo "api_check: FAILED: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

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
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror examples/predict.c $(pkg-config --cflags --libs xpusim) \
        -Wl,-rpath,"$prefix/lib" -o "$tmp/predict" || fail "the example does not build with pkg-config"
    (cd "$tmp/elsewhere" && "$tmp/predict") > "$tmp/predict.out" || { cat "$tmp/predict.out"; fail "the example failed"; }
    grep -q "^bert-large-squad on a100-sxm4-80gb, train.batch=32: step" "$tmp/predict.out" || fail "the example printed no prediction"
    ldd "$tmp/predict" | grep -q "libxpusim.so.$major => $prefix/lib/" || fail "the example is not linked against the installed library"
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
    # Python: pip offline from a copy (a build writes beside the sources).
    cp -R python "$tmp/pysrc"
    rm -rf "$tmp/pysrc/build" "$tmp/pysrc"/*.egg-info
    "$PYTHON" -m pip install --quiet --no-build-isolation --no-index --no-deps --target "$tmp/py" \
        "$tmp/pysrc" > "$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip install ./python (offline)"; }
    (cd "$tmp/elsewhere" && PYTHONPATH="$tmp/py" LD_LIBRARY_PATH="$prefix/lib" \
        XPUSIM_BIN="$prefix/bin/xpusim" XPUSIM_SHARE="$prefix/share/xpusim" XPUSIM_PKG="$tmp/py" \
        "$PYTHON" -m unittest discover -s "$OLDPWD/python/tests" -p 'test_*.py') ||
        fail "the Python tests"
    # A staged install (DESTDIR) is relocatable: run where it was staged.
    $MAKE -s install DESTDIR="$tmp/stage" PREFIX=/opt/xpusim > "$tmp/stage.log" 2>&1 || { cat "$tmp/stage.log"; fail "make install DESTDIR"; }
    (cd "$tmp/elsewhere" && "$tmp/stage/opt/xpusim/bin/xpusim" predict -d t4 -s bert-base-squad --summary) \
        > /dev/null || fail "the staged xpusim does not find its data"
    grep -q '^prefix=/opt/xpusim$' "$tmp/stage/opt/xpusim/lib/pkgconfig/xpusim.pc" || fail "xpusim.pc names the stage, not PREFIX"
    $MAKE -s uninstall PREFIX="$prefix" > /dev/null || fail "make uninstall"
    left=$(find "$prefix" -type f -o -type l)
    [ -z "$left" ] || fail "make uninstall left $left"
    echo "api_check: installed, the example built with pkg-config (shared and static) and run, the Python tests passed, uninstalled clean"
    ;;
*)
    echo "usage: api_check.sh header LIB | install" >&2
    exit 2
    ;;
esac
