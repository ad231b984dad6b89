# npm_vendored WHO LABEL PACKAGE WHAT DIR FILE...: 0 when DIR holds every FILE (an npm
# package make test-deps fetched: tests/tools/npm_vendor.sh). Otherwise said and 1: without
# npm the check is skipped (WHAT says what is not checked), with npm it fails (make
# test-deps should have fetched it). For crawl_replay.sh and warc_warcio.sh (sourced by
# them, with cli_test.sh's skip and bad).
npm_vendored() {
    nv_who=$1 nv_label=$2 nv_pkg=$3 nv_what=$4 nv_dir=$5
    shift 5
    nv_have=${nv_dir:+yes}
    for nv_f in "$@"; do [ -f "$nv_dir/$nv_f" ] || nv_have=; done
    [ "$nv_have" = yes ] && return 0
    if ! command -v npm >/dev/null 2>&1; then
        skip "$nv_who: npm is not installed, so neither is $nv_label (npm package $nv_pkg): $nv_what"
    else
        bad "$nv_who: $nv_label is not in '${nv_dir:-.cache/npm}' (make test-deps fetches it with npm)"
    fi
    return 1
}
