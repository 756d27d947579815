#!/usr/bin/env bash
# bench/launch/rank_variants.sh BUILD_DIR [rank_variants.py flags, e.g. --ns 1,4 --repeats 5]
# Measures start-up settings of a libtorch C++ rank under `lakerun launch` (see rank_variants.py). Builds nothing:
# needs bin/lakerun (or the stand-alone launcher) and bench_launch_rank[_now] in BUILD_DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:?usage: rank_variants.sh BUILD_DIR [flags]}" && pwd)"
shift
python="${LAKERUN_PYTHON:-/usr/bin/python3}"
if [[ -x "$build/bin/lakerun" ]]; then
  launcher=("$build/bin/lakerun" --launcher-args launch)
else
  launcher=("$build/src/launch/launch_test_launcher" --launcher-args "")
fi
extra=()
[[ -x "$build/bench/launch/bench_launch_rank_now" ]] && extra+=(--rank-now "$build/bench/launch/bench_launch_rank_now")
exec "$python" "$here/rank_variants.py" --launcher "${launcher[0]}" "${launcher[@]:1}" \
  --rank "$build/bench/launch/bench_launch_rank" "${extra[@]}" "$@"
