#!/usr/bin/env bash
# bench/launch/rdzv_scale.sh BUILD_DIR [--nodes N] [--ranks-per-node N]   (RDZV_SCALE_REPEATS=3 by default)
# Rendezvous at scale by simulation, in one run: 1,024 client threads (128 nodes x 8 ranks) through
#   1. lakerun's authenticated store with lakerun's C++ clients (rdzv_scale.cc),
#   2. c10d's TCPStore (Debian's python3-torch) with c10d's Python clients (rdzv_scale_c10d.py),
#   3. lakerun's store (open, as the compatibility listener) with the same c10d Python clients;
# each RDZV_SCALE_REPEATS times, interleaved; then the medians, their ratios, and the handshake's cost per
# connection. Builds nothing (target bench_rdzv_scale). On a shared machine single runs vary by several times (a
# dropped SYN costs a client 1 s): read the medians, and the load average printed beside them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(cd "${1:?usage: rdzv_scale.sh BUILD_DIR [--nodes N] [--ranks-per-node N]}" && pwd)"
shift
python="${LAKERUN_PYTHON:-/usr/bin/python3}"
bin="$build/bench/launch/bench_rdzv_scale"
[[ -x "$bin" ]] || { echo "rdzv_scale.sh: $bin is missing; build target bench_rdzv_scale" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "${RDZV_SCALE_REPEATS:-3}"); do
  "$bin" "$@" | tee -a "$out"
  "$python" "$here/rdzv_scale_c10d.py" "$@" | tee -a "$out"
  "$python" "$here/rdzv_scale_c10d.py" "$@" --server-cmd "$bin --serve-open" | tee -a "$out"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
"$python" - "$out" <<'PY'
import statistics
import sys
runs = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        fields = dict(kv.split("=", 1) for kv in line.split()[1:])
        runs.setdefault(fields["impl"], []).append(fields)
# The median of each number over the repeats.
def median(values):
    try:
        return str(statistics.median(float(v) for v in values))
    except ValueError:  # not a number (impl, torch, verified)
        return values[0]
rows = {impl: {key: median([r[key] for r in rs]) for key in rs[0]} for impl, rs in runs.items()}
lk, c10d, mixed, auth = rows["lakerun"], rows["c10d"], rows["c10d_clients_lakerun_server"], rows["auth"]
f = lambda row, key: float(row[key])
print(f"medians of {len(runs['lakerun'])} runs")
print(f"time to a complete world of {int(f(lk, 'clients'))} clients: lakerun (authenticated, C++ clients) "
      f"{f(lk, 'world_ms'):.0f} ms, c10d TCPStore (Python clients) {f(c10d, 'world_ms'):.0f} ms: "
      f"c10d / lakerun = {f(c10d, 'world_ms') / f(lk, 'world_ms'):.2f}")
print(f"same Python c10d clients, lakerun's store vs c10d's: {f(mixed, 'world_ms'):.0f} ms vs "
      f"{f(c10d, 'world_ms'):.0f} ms: c10d / lakerun = {f(c10d, 'world_ms') / f(mixed, 'world_ms'):.2f}")
print(f"store memory growth during the rendezvous: lakerun {f(lk, 'store_growth_kb'):.0f} kB, c10d "
      f"{f(c10d, 'store_growth_kb'):.0f} kB (c10d / lakerun = "
      f"{f(c10d, 'store_growth_kb') / max(1.0, f(lk, 'store_growth_kb')):.2f}); whole store process at its peak: "
      f"lakerun {f(lk, 'store_peak_kb'):.0f} kB, c10d (a Python process with torch) {f(c10d, 'store_peak_kb'):.0f} kB")
print(f"authentication per connection (connect, one request, close; loopback): open {f(auth, 'open_us_per_connection'):.0f} us, "
      f"authenticated {f(auth, 'authenticated_us_per_connection'):.0f} us, difference "
      f"{f(auth, 'auth_cost_us_per_connection'):.0f} us; the handshake's HMACs alone {f(auth, 'handshake_crypto_us'):.1f} us")
failed = sum(int(float(r["failed"])) for rs in runs.values() for r in rs if "failed" in r)
if failed:
    print(f"WARNING: {failed} clients failed")
    sys.exit(1)
PY
