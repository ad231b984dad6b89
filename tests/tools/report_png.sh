#!/bin/sh
# docs/report.png, the README's picture of `clusters --format html`: the report of the Clang
# 15 and 16 manuals (Debian clang-15-doc and clang-16-doc, unpacked where
# ../shared/tools/neardup-score keeps them) in headless Chromium, the first near-duplicate's
# word diff opened. Usage: sh tests/tools/report_png.sh [SIMCRAWL] [OUT.png]
set -eu
bin=$(realpath "${1:-./simcrawl}")
out=$(realpath "${2:-docs/report.png}")
cache=${SIMCRAWL_CACHE:-$HOME/.cache/simcrawl-dev}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in 15 16; do
    root=$cache/clang-$v-doc/usr/share/doc/clang-$v/html
    if [ ! -d "$root" ]; then
        echo "report_png.sh: $root not found (run ../shared/tools/neardup-score once, or:" \
            "apt-get download clang-$v-doc && dpkg -x clang-$v-doc_*.deb $cache/clang-$v-doc)" >&2
        exit 1
    fi
    ln -s "$root" "$tmp/clang-$v"
done
cd "$tmp"
"$bin" clusters --format html clang-15 clang-16 >report.html
# the second <details> is the first member's word diff (the first is the cluster list)
awk '/<details>/ && ++n == 2 { sub(/<details>/, "<details open>") } { print }' report.html >shot.html
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,1150 \
    --screenshot="$out" "file://$tmp/shot.html" >/dev/null 2>&1
echo "report_png.sh: wrote $out" >&2
