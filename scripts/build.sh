#!/usr/bin/env bash
# scripts/build.sh [BUILD_DIR] [extra cmake args...] — configure and build lakerun (Release, ccache, shared PCH).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
BUILD_DIR="${1:-$LAKERUN_ROOT/build}"
shift || true
JOBS="${LAKERUN_JOBS:-$(nproc)}"
GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$LAKERUN_ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif (($#)); then
  cmake -S "$LAKERUN_ROOT" -B "$BUILD_DIR" "$@"
fi
start=$(date +%s)
cmake --build "$BUILD_DIR" -j "$JOBS"
echo "[build] done in $(( $(date +%s) - start )) s ($BUILD_DIR)" >&2
