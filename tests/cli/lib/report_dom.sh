# report_dom DIR LABEL: headless Chromium's DOM of DIR/report.html into DIR/dom.html, for
# the cluster-report checks (tests/cli/report.sh, report_minhash.sh, crawl_report.sh;
# sourced by them, with cli_test.sh's ok and bad). One check: it rendered something. A
# machine without chromium fails the check, naming LABEL, and returns 1: the DOM checks
# are then not run (make test installs chromium: Makefile TEST_DEB_PKGS).
report_dom() {
    if ! command -v chromium >/dev/null 2>&1; then
        bad "$2: chromium is not installed (make test installs it: apt-get install chromium)"
        return 1
    fi
    (cd "$1" && timeout 120 chromium --headless --no-sandbox --disable-gpu \
        --user-data-dir="$1/profile" --dump-dom "file://$1/report.html" >"$1/dom.html" 2>"$1/chromium.err")
    if [ -s "$1/dom.html" ]; then ok; else bad "$2: chromium rendered nothing: $(tail -c 300 "$1/chromium.err")"; fi
    return 0
}
