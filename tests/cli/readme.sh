# README.md's examples: every ``` block with "$ " lines runs and prints what the README
# shows (tests/readme_examples.py says what is set aside and which blocks other tests
# run). Sourced by tests/cli_test.sh (helpers ok, bad; $TMP).
if python3 tests/readme_examples.py README.md "$SIMCRAWL" >"$TMP/readme.out" 2>&1; then ok; else
    bad "README examples differ: $(grep -A12 DIFFERS "$TMP/readme.out" | head -40)"
fi
