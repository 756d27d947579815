#!/usr/bin/env bash
# bench/launch/run.sh BUILD_DIR [extra launch_bench.py flags, e.g. --repeats 5 --ns 2,4,8]
# Runs the launch benchmark from an existing build (builds nothing). Uses BUILD_DIR/bin/lakerun if it was built,
# else the stand-alone launcher of src/launch (the same code).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:?usage: run.sh BUILD_DIR [launch_bench.py flags]}" && pwd)"
shift
python="${LAKERUN_PYTHON:-/usr/bin/python3}"
need() { [[ -x "$1" ]] || { echo "run.sh: $1 is missing; build target $(basename "$1") first" >&2; exit 2; }; }
if [[ -x "$build/bin/lakerun" ]]; then
  launcher=("$build/bin/lakerun" --launcher-args launch)
else
  need "$build/src/launch/launch_test_launcher"
  launcher=("$build/src/launch/launch_test_launcher" --launcher-args "")
fi
for p in bench_launch_trivial_torch bench_launch_trivial_plain; do need "$build/bench/launch/$p"; done
# The C++ rank: on lakerun::dist if that target was built, else raw c10d with the same environment contract.
rank="$build/bench/launch/bench_launch_rank_dist"
[[ -x "$rank" ]] || { rank="$build/bench/launch/bench_launch_rank"; need "$rank"; }
exec "$python" "$here/launch_bench.py" --launcher "${launcher[0]}" "${launcher[@]:1}" \
  --rank "$rank" \
  --trivial-torch "$build/bench/launch/bench_launch_trivial_torch" \
  --trivial-plain "$build/bench/launch/bench_launch_trivial_plain" \
  --python "$python" "$@"
