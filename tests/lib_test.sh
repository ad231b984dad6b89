#!/bin/sh
# libsimcrawl as another program sees it (make lib-test, part of make test): a staged
# `make install DESTDIR=STAGE PREFIX=/usr`, then against the staged copy only: the files
# and links installed, the SONAME, the exported symbols (nm: simcrawl_* and nothing else,
# every function of the header), <simcrawl.h> compiled alone as C11 and as C++,
# simcrawl.pc, examples/check_pages.c built with pkg-config exactly as README "The C
# library" shows and linked dynamically and statically, its output on two near-duplicate
# pages, the version everywhere, the Scrapy middleware's package (installed where Debian's
# python3 finds it for PREFIX=/usr and PREFIX=/usr/local, importable from the stage, its
# ctypes binding on the staged library), and `make uninstall` leaving nothing behind.
# Environment (set by the Makefile): MAKE, BUILD, CC, CXX, VERSION, WGET2_PLUGIN,
# SCRAPY_PYTHON (the python3 that has python3-scrapy; default /usr/bin/python3).
# Prints "lib: N passed, N failed" and exits non-zero on any failure.
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
CC=${CC:-cc}
CXX=${CXX:-c++}
PY=${SCRAPY_PYTHON:-/usr/bin/python3}
build_dir=$(cd "$BUILD" && pwd) || exit 1
STAGE=$build_dir/stage
OUT=$build_dir/lib-test
rm -rf "$STAGE" "$OUT"
mkdir -p "$OUT"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# check DESCRIPTION -- COMMAND...: the command must succeed (its output in $OUT/out, err)
check() {
    what=$1; shift 2
    if "$@" >"$OUT/out" 2>"$OUT/err"; then ok; else bad "$what: $(head -c 600 "$OUT/err")"; fi
}
# same WANT GOT DESCRIPTION
same() {
    if [ "$1" = "$2" ]; then ok; else bad "$3: got '$2', want '$1'"; fi
}
PAGE1=tests/data/fingerprint/page1.html
PAGE2=tests/data/fingerprint/page1-edit.html
MAJOR=${VERSION%%.*}
LIB=$STAGE/usr/lib
PYDIR=$STAGE/usr/lib/python3/dist-packages

# ---- the staged install: exactly these files, these modes, these links ----
check "make install into a stage" -- $MAKE --no-print-directory BUILD="$BUILD" install \
    DESTDIR="$STAGE" PREFIX=/usr
want="usr/bin/simcrawl
usr/include/simcrawl.h
usr/lib/libsimcrawl.a
usr/lib/libsimcrawl.so
usr/lib/libsimcrawl.so.$MAJOR
usr/lib/libsimcrawl.so.$VERSION
usr/lib/pkgconfig/simcrawl.pc"
[ -n "$WGET2_PLUGIN" ] && want="$want
usr/lib/wget2/plugins/libsimcrawl.so"
for f in __init__.py library.py middleware.py service.py; do
    want="$want
usr/lib/python3/dist-packages/simcrawl_scrapy/$f"
done
got=$(cd "$STAGE" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
same "$(printf '%s\n' "$want" | LC_ALL=C sort)" "$got" "files installed"
modes=$(cd "$STAGE/usr" && stat -c '%a %n' bin/simcrawl include/simcrawl.h \
    lib/libsimcrawl.so.$VERSION lib/libsimcrawl.a lib/pkgconfig/simcrawl.pc 2>&1 | tr '\n' ' ')
same "755 bin/simcrawl 644 include/simcrawl.h 755 lib/libsimcrawl.so.$VERSION 644 lib/libsimcrawl.a 644 lib/pkgconfig/simcrawl.pc " \
    "$modes" "modes installed"
same "libsimcrawl.so.$VERSION" "$(readlink "$LIB/libsimcrawl.so.$MAJOR")" "SONAME link"
same "libsimcrawl.so.$VERSION" "$(readlink "$LIB/libsimcrawl.so")" "development link"
soname=$(readelf -d "$LIB/libsimcrawl.so.$VERSION" 2>&1 | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
same "libsimcrawl.so.$MAJOR" "$soname" "SONAME"
cmp -s filter/simcrawl.h "$STAGE/usr/include/simcrawl.h" && ok || bad "installed header differs"
modes=$(cd "$PYDIR" && stat -c '%a %n' simcrawl_scrapy simcrawl_scrapy/*.py 2>&1 | tr '\n' ' ')
same "755 simcrawl_scrapy 644 simcrawl_scrapy/__init__.py 644 simcrawl_scrapy/library.py 644 simcrawl_scrapy/middleware.py 644 simcrawl_scrapy/service.py " \
    "$modes" "modes of the Scrapy middleware's package"

# ---- the Scrapy middleware's package, imported from the stage ----
# PYTHONDONTWRITEBYTECODE: no __pycache__ in the stage. The library is found as the
# package finds it by default (its SONAME, here through LD_LIBRARY_PATH), not named.
cat >"$OUT/scrapy_pkg.py" <<'EOF'
import sys
import simcrawl_scrapy
from scrapy.exceptions import IgnoreRequest
from simcrawl_scrapy.library import Filter, Library
print(simcrawl_scrapy.__file__)
print(issubclass(simcrawl_scrapy.NearDuplicate, IgnoreRequest))
lib = Library()
print(lib.version_string)
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libsimcrawl" in l]
print(maps[0] if maps else "-")
f = Filter(lib, sys.argv[3], 3)
a = f.check(sys.argv[1], open(sys.argv[1], "rb").read(), "text/html")
b = f.check(sys.argv[2], open(sys.argv[2], "rb").read(), "text/html")
print(a.decision, b.decision, b.duplicate_of, b.distance)
f.close()
EOF
PYTHONPATH=$PYDIR PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH=$LIB "$PY" "$OUT/scrapy_pkg.py" \
    "$PAGE1" "$PAGE2" "$OUT/scrapy.idx" >"$OUT/scrapy_pkg.txt" 2>"$OUT/err"
same 0 $? "simcrawl_scrapy imported from the stage with $PY; stderr: $(tail -c 300 "$OUT/err")"
same "$PYDIR/simcrawl_scrapy/__init__.py" "$(sed -n 1p "$OUT/scrapy_pkg.txt")" "simcrawl_scrapy imported from the stage"
same True "$(sed -n 2p "$OUT/scrapy_pkg.txt")" "simcrawl_scrapy.NearDuplicate is a scrapy IgnoreRequest"
same "$VERSION" "$(sed -n 3p "$OUT/scrapy_pkg.txt")" "simcrawl_scrapy's libsimcrawl version"
same "$LIB/libsimcrawl.so.$VERSION" "$(sed -n 4p "$OUT/scrapy_pkg.txt")" \
    "simcrawl_scrapy loads the staged libsimcrawl.so.$MAJOR by default"
case "$(sed -n 5p "$OUT/scrapy_pkg.txt")" in
"new near-duplicate $PAGE1 "[1-3]) ok ;;
*) bad "simcrawl_scrapy's Filter on two near-duplicate pages: '$(sed -n 5p "$OUT/scrapy_pkg.txt")'" ;;
esac
[ -s "$OUT/scrapy.idx" ] && ok || bad "simcrawl_scrapy's Filter.close() saved no index"

# ---- exports: only simcrawl_*, and every function <simcrawl.h> declares ----
nm -D --defined-only "$LIB/libsimcrawl.so.$VERSION" | awk '{print $NF}' | LC_ALL=C sort >"$OUT/dynsym"
foreign=$(grep -v '^simcrawl_' "$OUT/dynsym" | tr '\n' ' ')
same "" "$foreign" "dynamic symbols of libsimcrawl.so that are not simcrawl_* (nm -D --defined-only)"
nm -g --defined-only "$LIB/libsimcrawl.a" | awk 'NF == 3 {print $3}' >"$OUT/arsym"
foreign=$(grep -v '^simcrawl_' "$OUT/arsym" | tr '\n' ' ')
same "" "$foreign" "global symbols of libsimcrawl.a that are not simcrawl_* (nm -g)"
# the kill tests' crash points (SIMCRAWL_CRASH_AT) are not in the library: a host program
# is never killed by an environment variable (dedup_crash_point, DEDUP_NO_CRASH_POINTS)
for f in "$LIB/libsimcrawl.so.$VERSION" "$LIB/libsimcrawl.a"; do
    if grep -q SIMCRAWL_CRASH_AT "$f"; then bad "$f reads SIMCRAWL_CRASH_AT"; else ok; fi
done
grep -o '\bsimcrawl_[a-z0-9_]*(' filter/simcrawl.h | tr -d '(' | LC_ALL=C sort -u >"$OUT/declared"
missing=$(LC_ALL=C comm -23 "$OUT/declared" "$OUT/dynsym" | tr '\n' ' ')
same "" "$missing" "functions of simcrawl.h not exported by libsimcrawl.so"
missing=$(LC_ALL=C sort -u "$OUT/arsym" | LC_ALL=C comm -23 "$OUT/declared" - | tr '\n' ' ')
same "" "$missing" "functions of simcrawl.h not in libsimcrawl.a"
[ -s "$OUT/declared" ] && ok || bad "no simcrawl_* function found in filter/simcrawl.h"

# ---- the header alone, as C11 and as C++ ----
printf '#include <simcrawl.h>\n' >"$OUT/alone.c"
check "simcrawl.h alone as C11 (-Wall -Wextra -Wpedantic -Werror)" -- \
    $CC -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$STAGE/usr/include" -c -o "$OUT/alone.o" "$OUT/alone.c"
check "simcrawl.h alone as C++ (-Wall -Wextra -Wpedantic -Werror)" -- \
    $CXX -x c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I"$STAGE/usr/include" -c \
    -o "$OUT/alone_cxx.o" "$OUT/alone.c"

# ---- simcrawl.pc, read through the stage as an installed copy would be ----
PKG_CONFIG_PATH=$LIB/pkgconfig
PKG_CONFIG_SYSROOT_DIR=$STAGE
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
same "$VERSION" "$(pkg-config --modversion simcrawl 2>&1)" "pkg-config --modversion simcrawl"
same "prefix=/usr" "$(sed -n 1p "$LIB/pkgconfig/simcrawl.pc")" "simcrawl.pc's prefix (install PREFIX=/usr)"
check "pkg-config --cflags --libs simcrawl" -- pkg-config --cflags --libs simcrawl
flags=$(cat "$OUT/out")
case " $flags " in
*" -I$STAGE/usr/include "*" -L$LIB "*"-lsimcrawl "*) ok ;;
*) bad "pkg-config --cflags --libs simcrawl does not name the stage: $flags" ;;
esac

# ---- C++: extern "C" links, and the version agrees everywhere ----
cat >"$OUT/version.cc" <<'EOF'
#include <simcrawl.h>
#include <cstdio>
int main()
{
    std::printf("%d.%d.%d %s\n", SIMCRAWL_VERSION_MAJOR, SIMCRAWL_VERSION_MINOR,
                SIMCRAWL_VERSION_PATCH, simcrawl_version());
    return 0;
}
EOF
# shellcheck disable=SC2086 # $flags is a list of words
check "a C++ program calling simcrawl_version() links (extern \"C\")" -- \
    $CXX -Wall -Wextra -Werror -o "$OUT/version_cxx" "$OUT/version.cc" $flags
got=$(LD_LIBRARY_PATH=$LIB "$OUT/version_cxx" 2>&1)
same "$VERSION $VERSION" "$got" "SIMCRAWL_VERSION_* macros and simcrawl_version()"
same "simcrawl $VERSION" "$("$STAGE/usr/bin/simcrawl" --version 2>&1)" "simcrawl --version"

# ---- the example, as README "The C library" builds it: dynamic, then static ----
check "cc -o check_pages examples/check_pages.c \$(pkg-config --cflags --libs simcrawl)" -- \
    sh -c "$CC -std=c11 -Wall -Wextra -Werror -o '$OUT/check_pages' examples/check_pages.c \$(pkg-config --cflags --libs simcrawl)"
readelf -d "$OUT/check_pages" 2>&1 | grep -q "NEEDED.*\[libsimcrawl.so.$MAJOR\]" && ok ||
    bad "check_pages does not need libsimcrawl.so.$MAJOR (dynamic link)"
LD_LIBRARY_PATH=$LIB ldd "$OUT/check_pages" 2>&1 | grep -q "libsimcrawl.so.$MAJOR => $LIB/libsimcrawl.so.$MAJOR " &&
    ok || bad "check_pages does not load the staged libsimcrawl: $(LD_LIBRARY_PATH=$LIB ldd "$OUT/check_pages" | grep simcrawl)"
fp1=$("$STAGE/usr/bin/simcrawl" fingerprint "$PAGE1" 2>&1 | cut -c1-16)
tab=$(printf '\t')
want="$PAGE1${tab}NEW$tab$fp1$tab-${tab}0"
LD_LIBRARY_PATH=$LIB "$OUT/check_pages" "$PAGE1" "$PAGE2" >"$OUT/dynamic.txt" 2>"$OUT/err"
same 0 $? "check_pages exit status (dynamic); stderr: $(head -c 300 "$OUT/err")"
same "$want" "$(sed -n 1p "$OUT/dynamic.txt")" "check_pages, first page: new, the fingerprint of simcrawl fingerprint"
line2=$(sed -n 2p "$OUT/dynamic.txt")
case "$line2" in
"$PAGE2${tab}NEAR_DUPLICATE$tab"????????????????"$tab$PAGE1$tab"[1-3]) ok ;;
*) bad "check_pages, second page: want a near-duplicate of $PAGE1 at distance 1..3, got '$line2'" ;;
esac
same 2 "$(wc -l <"$OUT/dynamic.txt" | tr -d ' ')" "check_pages prints one line per page"

# Static: libsimcrawl.a, then what simcrawl.pc says it needs (its Libs.private and the
# libraries of its Requires.private modules), those linked dynamically: a dependency
# missing from simcrawl.pc fails this link.
static_libs=$(pkg-config --static --libs simcrawl | sed 's/-lsimcrawl/-l:libsimcrawl.a/')
check "check_pages linked with libsimcrawl.a and pkg-config --static --libs" -- \
    sh -c "$CC -std=c11 -Wall -Wextra -Werror -o '$OUT/check_pages_static' examples/check_pages.c \$(pkg-config --cflags simcrawl) $static_libs"
readelf -d "$OUT/check_pages_static" 2>&1 | grep -q 'NEEDED.*libsimcrawl' &&
    bad "check_pages_static still needs libsimcrawl.so" || ok
env -u LD_LIBRARY_PATH "$OUT/check_pages_static" "$PAGE1" "$PAGE2" >"$OUT/static.txt" 2>"$OUT/err"
same 0 $? "check_pages exit status (static); stderr: $(head -c 300 "$OUT/err")"
cmp -s "$OUT/dynamic.txt" "$OUT/static.txt" && ok || bad "static and dynamic check_pages differ"

# ---- simcrawl.pc is written with the PREFIX of each install ----
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
check "make install PREFIX=/opt/simcrawl" -- $MAKE --no-print-directory BUILD="$BUILD" install \
    DESTDIR="$OUT/opt" PREFIX=/opt/simcrawl
same "prefix=/opt/simcrawl" "$(sed -n 1p "$OUT/opt/opt/simcrawl/lib/pkgconfig/simcrawl.pc")" \
    "simcrawl.pc of an install with PREFIX=/opt/simcrawl"

# ---- the Scrapy package's PYTHONDIR: on Debian's python3's sys.path for /usr and /usr/local ----
"$PY" -c 'import sys; print("\n".join(sys.path))' >"$OUT/syspath" 2>&1
grep -qx /usr/lib/python3/dist-packages "$OUT/syspath" && ok ||
    bad "PREFIX=/usr's PYTHONDIR /usr/lib/python3/dist-packages is not on $PY's sys.path"
check "make install PREFIX=/usr/local" -- $MAKE --no-print-directory BUILD="$BUILD" install \
    DESTDIR="$OUT/local" PREFIX=/usr/local
local_py=$(cd "$OUT/local" && find . -path '*/simcrawl_scrapy/__init__.py' | sed 's|^\.||; s|/simcrawl_scrapy/__init__.py$||')
case "$local_py" in
/usr/local/lib/python3.*/dist-packages) ok ;;
*) bad "PREFIX=/usr/local put simcrawl_scrapy in '$local_py'" ;;
esac
grep -qx "$local_py" "$OUT/syspath" && ok ||
    bad "PREFIX=/usr/local's PYTHONDIR '$local_py' is not on $PY's sys.path"

# ---- make uninstall removes every file install wrote ----
# and the __pycache__ python3 writes beside the package when root imports it
env -u PYTHONDONTWRITEBYTECODE PYTHONPATH="$PYDIR" "$PY" -c "import simcrawl_scrapy" 2>"$OUT/err"
[ -d "$PYDIR/simcrawl_scrapy/__pycache__" ] && ok ||
    bad "importing simcrawl_scrapy wrote no __pycache__ to remove: $(tail -c 300 "$OUT/err")"
check "make uninstall from the stage" -- $MAKE --no-print-directory BUILD="$BUILD" uninstall \
    DESTDIR="$STAGE" PREFIX=/usr
same "" "$(cd "$STAGE" && find . ! -type d | tr '\n' ' ')" "files left after make uninstall"
[ ! -e "$PYDIR/simcrawl_scrapy" ] && ok || bad "make uninstall left $PYDIR/simcrawl_scrapy"

echo "lib: $pass passed, $fail failed"
[ "$fail" = 0 ]
