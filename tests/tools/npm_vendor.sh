#!/bin/sh
# Fetches one npm package the tests use, pinned by its sha512, into a folder of its own
# (make test-npm: ReplayWeb.page, warcio.js). `npm pack` (from npm's own cache when it has
# it), the tarball checked against the pinned sha512, the files named copied flat into DIR
# with the package's LICENSE and package.json. Already there: nothing done. Without npm:
# said, exit 0 (the test that needs it counts itself skipped). npm present but the fetch or
# the check failing: said, exit 1 (make stops).
#   sh tests/tools/npm_vendor.sh LABEL PACKAGE VERSION SHA512 DIR WHAT FILE...
#   LABEL   the name in messages ("ReplayWeb.page")
#   WHAT    what is skipped without it ("the replay of the crawl's WARC in it")
#   FILE    a path inside the tarball ("package/dist/index.all.js"), copied as DIR/index.all.js
set -u
label=$1 pkg=$2 ver=$3 sha=$4 dir=$5 what=$6
shift 6
have=1
for f in "$@"; do [ -f "$dir/$(basename "$f")" ] || have=0; done
[ "$have" = 1 ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: $label (npm $pkg@$ver) is not fetched and $what is skipped (install Node.js and npm to run it)" >&2
    exit 0
fi
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
if ! npm pack --loglevel=error --ignore-scripts --prefer-offline --pack-destination "$t" "$pkg@$ver" >/dev/null; then
    echo "npm could not fetch $pkg@$ver (see above); the tests need it in $dir" >&2
    exit 1
fi
if ! echo "$sha  $t/$pkg-$ver.tgz" | sha512sum -c --quiet - >/dev/null 2>&1; then
    echo "$pkg-$ver.tgz from npm does not have the pinned sha512 (Makefile)" >&2
    exit 1
fi
mkdir -p "$t/x" "$t/v" &&
    tar -xzf "$t/$pkg-$ver.tgz" -C "$t/x" "$@" package/LICENSE package/package.json || exit 1
for f in "$@" package/LICENSE package/package.json; do
    cp "$t/x/$f" "$t/v/" || exit 1
done
mkdir -p "$(dirname "$dir")" && rm -rf "$dir" && mv "$t/v" "$dir" || exit 1
echo "$label $ver (npm, sha512 checked) in $dir"
