#!/usr/bin/env bash
# A user's project built the way a user builds it: installs this build into a temporary prefix, imports a CSV with
# the installed `lakerun`, configures consumer/ with find_package(lakerun) (nothing of the source or build tree on
# its paths), builds it and runs it on 2 ranks under the installed `lakerun launch`. Every step is bounded; the
# temporary directory is removed on exit.
#   find_package_test.sh CMAKE BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
cmake=${1:?usage: find_package_test.sh CMAKE BUILD_DIR SOURCE_DIR VERSION}
build=${2:?} source=${3:?} version=${4:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/lakerun-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
step() { echo "[install.find_package] $*"; }
fail() { echo "[install.find_package] FAILED: $*"; exit 1; }
bounded() { local seconds=$1; shift; timeout --kill-after=10 "$seconds" "$@"; }

step "cmake --install $build --prefix $work/prefix"
bounded 120 "$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log" || {
  cat "$work/install.log"; fail "install"; }
lakerun="$work/prefix/bin/lakerun"
[[ -f $work/prefix/lib/cmake/lakerun/lakerunConfig.cmake ]] || fail "no lib/cmake/lakerun/lakerunConfig.cmake"
got=$(bounded 10 "$lakerun" --version) || fail "lakerun --version"
[[ $got == "lakerun $version" ]] || fail "lakerun --version printed '$got', expected 'lakerun $version'"
bounded 10 "$lakerun" --help >/dev/null || fail "lakerun --help"

step "lakerun table import csv"
{ echo "id,x"; for i in $(seq 1 12); do echo "$i,$((i * 10))"; done; } >"$work/rows.csv"
bounded 60 "$lakerun" table import csv "$work/rows.csv" "$work/table" >"$work/import.log" 2>&1 || {
  cat "$work/import.log"; fail "table import"; }

# The consumer is copied next to the prefix so that, with ccache's base directory set to the temporary directory,
# a rerun compiles nothing.
cp -r "$source/tests/install/consumer" "$work/src"
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$work" CCACHE_NOHASHDIR=1
fi
step "configure consumer/ with find_package(lakerun)"
bounded 180 "$cmake" -S "$work/src" -B "$work/build" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DTABLE_SUM_ARGS="$work/table;x" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
if grep -qF -e "$source/" -e "$build/" "$work/build/compile_commands.json"; then
  fail "the consumer's compile commands name the lakerun source or build tree"
fi
step "build consumer/"
bounded 400 "$cmake" --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }

# The consumer's test runs lakerun::cli, which must be the installed command.
grep -qF "$lakerun" "$work/build/CTestTestfile.cmake" || fail "lakerun::cli is not $lakerun"

step "lakerun launch -n 2 -- table_sum"
bounded 120 "$lakerun" launch -n 2 --timeout 90 -- "$work/build/table_sum" "$work/table" x >"$work/run.log" 2>&1 || {
  cat "$work/run.log"; fail "the 2-rank run"; }
cat "$work/run.log"
for expected in "[rank0] rank 0 of 2: 6 rows" "[rank1] rank 1 of 2: 6 rows" \
                "[rank0] table_sum: lakerun $version, 2 ranks, 12 rows, sum 780"; do
  grep -qxF "$expected" "$work/run.log" || fail "expected the line '$expected'"
done
step "ok"
