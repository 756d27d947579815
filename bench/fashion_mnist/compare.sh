#!/usr/bin/env bash
# bench/fashion_mnist/compare.sh — fashion_mnist_ddp (the example's hand-written DDP loop) vs the same model in
# Python PyTorch DDP.
#
#   bench/fashion_mnist/compare.sh [BUILD_DIR]          (default ./build; needs targets fashion_mnist_ddp and lakerun)
#
# One run of each configuration, printed as a table with ratios (this box is shared: read the CPU-pressure column).
#   speed:     1 and 2 ranks in each language, SPEED_STEPS steps (default 300), lr 0.001, batch 100 per rank,
#              1 intra-op thread per rank, whole dataset in memory, steady samples/s skipping 20 warm-up steps;
#              C++ 2 ranks under `lakerun launch --start-method $START` (default fork: the ranks are forked from one
#              process at lakerun::dist::Init(); START=exec execs each), Python 2 ranks under torch's elastic_launch
#              (torchrun's engine). The C++ example keeps activations channels-last; the Python peer runs as the
#              seed wrote it (NCHW) and again with --channels-last (py_*_cl), like for like. C++ 2 ranks all-reduce
#              through shared memory (both ranks are on this host), and again through Gloo (cpp_2_gloo).
#   accuracy:  2 ranks in each language, lr TTA_LR (default 0.05), evaluated every 100 steps until test accuracy 0.85
#              (at most TTA_EPOCHS epochs, default 15): wall time from the command's start.
#   BLAS:      1 rank, C++ and Python, with the reference BLAS vs OpenBLAS first on LD_LIBRARY_PATH.
# Results (one JSON per run) also go to $OUT (default: a temp file, printed at the end).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
PY="${LAKERUN_PYTHON:-/usr/bin/python3}"
PROGRAM="$BUILD/examples/fashion_mnist/fashion_mnist_ddp"
LAUNCHER="$BUILD/bin/lakerun"
SPEED_STEPS="${SPEED_STEPS:-300}"
TTA_LR="${TTA_LR:-0.05}"
TTA_EPOCHS="${TTA_EPOCHS:-15}"
TARGET="${TARGET:-0.85}"
SKIP_TTA="${SKIP_TTA:-0}"
SKIP_BLAS="${SKIP_BLAS:-0}"
START="${START:-fork}"
REF_BLAS=/usr/lib/x86_64-linux-gnu/blas
OPENBLAS=/usr/lib/x86_64-linux-gnu/openblas-pthread
for f in "$PROGRAM" "$LAUNCHER"; do
  [[ -x "$f" ]] || { echo "compare: $f not built (cmake --build $BUILD --target fashion_mnist_ddp lakerun)" >&2; exit 2; }
done
WORK="$(mktemp -d "${TMPDIR:-/tmp}/fashion-compare.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
OUT="${OUT:-$WORK/results.jsonl}"
: > "$OUT"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

psi() { awk '/^some/ { split($2, a, "="); print a[2] }' /proc/pressure/cpu 2>/dev/null || echo nan; }

# run NAME -- COMMAND...: times the command, keeps its log, appends its RESULT json plus wall time, the max RSS of
# any process of the command (GNU time), load average and CPU pressure (avg10 at the end, percent) to $OUT.
run() {
  local name="$1"; shift; shift
  local log="$WORK/$name.log" load0
  load0="$(cut -d' ' -f1 /proc/loadavg)"
  echo "-- $name: $*" >&2
  local t0 t1
  t0="$(date +%s.%N)"
  if ! BENCH_T0="$t0" timeout -k 10 1200 /usr/bin/time -f "TIME maxrss_kb=%M wall=%e" "$@" > "$log" 2>&1; then
    tail -20 "$log" >&2
    echo "compare: $name failed (log above)" >&2
    exit 1
  fi
  t1="$(date +%s.%N)"
  local result rss
  result="$(grep -o 'RESULT {.*}' "$log" | tail -1 | cut -c8-)"
  rss="$(grep -o 'maxrss_kb=[0-9]*' "$log" | tail -1 | cut -d= -f2)"
  "$PY" - "$name" "$t0" "$t1" "$rss" "$load0" "$(cut -d' ' -f1 /proc/loadavg)" "$(psi)" "$result" >> "$OUT" <<'PYEOF'
import json, sys
name, t0, t1, rss, load0, load1, psi, result = sys.argv[1:]
rec = json.loads(result)
rec.update(name=name, wall_s=float(t1) - float(t0), tree_max_rss_mb=int(rss) / 1024, load_start=float(load0),
           load_end=float(load1), cpu_psi_avg10=float(psi) if psi != "nan" else None)
print(json.dumps(rec))
PYEOF
}

COMMON=(--epochs 1 --max-steps "$SPEED_STEPS" --log-interval 100)
echo "== speed: $SPEED_STEPS steps, lr 0.001, batch 100 per rank, 1 thread per rank" >&2
run cpp_1 -- "$PROGRAM" "${COMMON[@]}"
run py_1 -- "$PY" "$HERE/ddp_peer.py" "${COMMON[@]}"
run cpp_2 -- "$LAUNCHER" launch -n 2 --start-method "$START" -- "$PROGRAM" "${COMMON[@]}"
# The same with gradients through Gloo, as Python's DDP sends them (cpp_2 uses shared memory: both ranks are local).
run cpp_2_gloo -- "$LAUNCHER" launch -n 2 --start-method "$START" -- "$PROGRAM" "${COMMON[@]}" --gradients-via-gloo
run py_2 -- "$PY" "$HERE/ddp_peer.py" --nproc 2 --launcher elastic "${COMMON[@]}"
# Like for like: the C++ example keeps activations channels-last (NetOptions::channels_last); so does this peer run.
run py_1_cl -- "$PY" "$HERE/ddp_peer.py" --channels-last "${COMMON[@]}"
run py_2_cl -- "$PY" "$HERE/ddp_peer.py" --channels-last --nproc 2 --launcher elastic "${COMMON[@]}"

if [[ "$SKIP_TTA" != 1 ]]; then
  TTA=(--lr "$TTA_LR" --epochs "$TTA_EPOCHS" --eval-every 100 --target-accuracy "$TARGET" --log-interval 300)
  echo "== time to test accuracy $TARGET: 2 ranks, lr $TTA_LR" >&2
  run cpp_2_tta -- "$LAUNCHER" launch -n 2 --start-method "$START" -- "$PROGRAM" "${TTA[@]}"
  run py_2_tta -- "$PY" "$HERE/ddp_peer.py" --nproc 2 --launcher elastic "${TTA[@]}"
fi

if [[ "$SKIP_BLAS" != 1 ]]; then
  echo "== BLAS: 1 rank, reference BLAS vs OpenBLAS" >&2
  run cpp_1_refblas -- env LD_LIBRARY_PATH="$REF_BLAS" "$PROGRAM" "${COMMON[@]}"
  run cpp_1_openblas -- env LD_LIBRARY_PATH="$OPENBLAS" "$PROGRAM" "${COMMON[@]}"
  run py_1_refblas -- env LD_LIBRARY_PATH="$REF_BLAS" "$PY" "$HERE/ddp_peer.py" "${COMMON[@]}"
  run py_1_openblas -- env LD_LIBRARY_PATH="$OPENBLAS" "$PY" "$HERE/ddp_peer.py" "${COMMON[@]}"
fi

"$PY" "$HERE/compare_report.py" "$OUT" --target "$TARGET"
echo "(raw results: $OUT)" >&2
if [[ "$OUT" == "$WORK/results.jsonl" ]]; then cat "$OUT"; fi
