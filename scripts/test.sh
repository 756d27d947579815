#!/usr/bin/env bash
# scripts/test.sh — the whole test suite: set up (idempotent), build, run every ctest test.
#   LAKERUN_BUILD_DIR  build directory (default ./build)
#   CTEST_ARGS         extra ctest arguments, e.g. "-R Parquet"
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$LAKERUN_ROOT"
BUILD_DIR="${LAKERUN_BUILD_DIR:-$LAKERUN_ROOT/build}"
t0=$(date +%s)
bash scripts/setup.sh
bash scripts/build.sh "$BUILD_DIR"
t1=$(date +%s)
# Tests bound their own waits; --timeout is a last resort against a hang.
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" -j "${LAKERUN_TEST_JOBS:-2}" --output-on-failure --timeout 600 ${CTEST_ARGS:-}
t2=$(date +%s)
echo "[test] setup+build $((t1 - t0)) s, tests $((t2 - t1)) s" >&2
