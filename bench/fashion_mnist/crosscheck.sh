#!/usr/bin/env bash
# bench/fashion_mnist/crosscheck.sh — does the 2-rank lakerun example train exactly like Python PyTorch DDP?
#
#   bench/fashion_mnist/crosscheck.sh [BUILD_DIR] [STEPS]      (defaults: ./build, 20 steps)
#
# Runs examples/fashion_mnist's hand-written DDP loop (fashion_mnist_ddp) on 2 ranks under `lakerun launch` and
# bench/fashion_mnist/ddp_peer.py on 2 ranks
# (torch.nn.parallel.DistributedDataParallel, Gloo) with the same seed, the same initial weights (the C++ program
# saves them, Python loads them), the same DistributedSampler order and lr 0.01, then compares every step's loss on
# both ranks and the final test accuracy. Dropout is switched off (--no-dropout) on both sides for this check only:
# the two programs draw dropout masks from different RNG streams.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
STEPS="${2:-20}"
PY="${LAKERUN_PYTHON:-/usr/bin/python3}"
PROGRAM="$BUILD/examples/fashion_mnist/fashion_mnist_ddp"
LAUNCHER="$BUILD/bin/lakerun"
[[ -x "$PROGRAM" ]] || { echo "crosscheck: $PROGRAM not built (cmake --build $BUILD --target fashion_mnist_ddp)" >&2; exit 2; }
[[ -x "$LAUNCHER" ]] || { echo "crosscheck: $LAUNCHER not built (cmake --build $BUILD --target lakerun)" >&2; exit 2; }
"$PY" -c "import torch" 2>/dev/null || { echo "crosscheck: $PY cannot import torch (apt-get install python3-torch)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/fashion-crosscheck.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
COMMON=(--no-dropout --max-steps "$STEPS" --lr 0.01 --seed 1 --sampler-seed 0 --log-interval 10)

echo "== lakerun: lakerun launch -n 2 -- fashion_mnist_ddp ${COMMON[*]}"
timeout -k 5 240 "$LAUNCHER" launch -n 2 -- "$PROGRAM" "${COMMON[@]}" \
  --save-initial-weights "$WORK/init.pt" --metrics-file "$WORK/cpp.{rank}.jsonl" > "$WORK/cpp.log" 2>&1 \
  || { cat "$WORK/cpp.log" >&2; echo "crosscheck: the lakerun run failed" >&2; exit 1; }
grep -E "Test set|RESULT" "$WORK/cpp.log" | sed 's/^/  /' || true

echo "== Python: ddp_peer.py --nproc 2 --launcher spawn ${COMMON[*]} --init-weights init.pt"
timeout -k 5 240 "$PY" "$HERE/ddp_peer.py" --nproc 2 --launcher spawn "${COMMON[@]}" \
  --init-weights "$WORK/init.pt" --metrics-file "$WORK/py.{rank}.jsonl" > "$WORK/py.log" 2>&1 \
  || { cat "$WORK/py.log" >&2; echo "crosscheck: the Python run failed" >&2; exit 1; }
grep -E "Test set|RESULT" "$WORK/py.log" | sed 's/^/  /' || true

echo "== comparison"
"$PY" "$HERE/crosscheck_report.py" --world 2 --cpp "$WORK/cpp.{rank}.jsonl" --py "$WORK/py.{rank}.jsonl" \
  --init-weights "$WORK/init.pt"
