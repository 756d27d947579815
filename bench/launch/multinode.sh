#!/usr/bin/env bash
# bench/launch/multinode.sh BUILD_DIR [multinode_bench.py flags, e.g. --repeats 5 --step-nproc-per-node 2]
# Multi-node `lakerun launch` on emulated hosts: makes two network namespaces on one bridge (src/testing/
# netns_hosts.sh; root), each with a host name of its own, and runs multinode_bench.py there: the start to every rank
# past its first all-reduce against torchrun's c10d rendezvous, and the cost per step of the node agents against
# ranks started by hand. Builds nothing: needs BUILD_DIR/bin/lakerun, bench_launch_rank_dist and bench_launch_steps,
# and a python3 with torch (LAKERUN_PYTHON, default /usr/bin/python3). Exits 77 (skipped) when namespaces cannot be
# made or that python has no torch. The namespaces, named after this shell's pid, and every process on them are
# removed on exit; the addresses (10.233.0.x) exist only inside them.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:?usage: multinode.sh BUILD_DIR [multinode_bench.py flags]}" && pwd)"
shift
python="${LAKERUN_PYTHON:-/usr/bin/python3}"
testing="$here/../../src/testing"
source "$testing/netns_hosts.sh"
need() { [[ -x "$1" ]] || { echo "multinode.sh: $1 is missing; build target $(basename "$1") first" >&2; exit 2; }; }
for p in bin/lakerun bench/launch/bench_launch_rank_dist bench/launch/bench_launch_steps; do need "$build/$p"; done
"$python" -c 'import torch.distributed.run' 2> /dev/null || skip "$python cannot import torch.distributed.run"
command -v unshare > /dev/null || skip "unshare(1) is not installed"
trap 'exit 130' INT TERM  # the EXIT trap (netns_cleanup) then runs

netns_hosts "lmb$$" 10.233.0 2
netns_host_names
hosts=$(IFS=,; echo "${HOSTS[*]}")
"$python" "$here/multinode_bench.py" --lakerun "$build/bin/lakerun" \
  --rank "$build/bench/launch/bench_launch_rank_dist" --steps-rank "$build/bench/launch/bench_launch_steps" \
  --python "$python" --on-host "$testing/netns_on_host.sh" --hosts "$hosts" --net "$NET" --work "$WORK" "$@" &
PIDS+=($!)
wait $!
