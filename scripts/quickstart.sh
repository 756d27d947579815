#!/usr/bin/env bash
# scripts/quickstart.sh — set everything up, build, and run the main job on the embedded defaults:
# the Fashion-MNIST CNN trained with data-parallel SGD on 2 local ranks under `lakerun launch`, tracked in the
# MLflow file store ./mlruns (or MLFLOW_TRACKING_URI), with a checkpoint per epoch.
#   LAKERUN_BUILD_DIR   build directory (default ./build)
#   QUICKSTART_RANKS    number of ranks (default 2)
#   extra arguments are passed to the training program (e.g. --epochs 1)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$LAKERUN_ROOT"
BUILD_DIR="${LAKERUN_BUILD_DIR:-$LAKERUN_ROOT/build}"
bash scripts/setup.sh
bash scripts/build.sh "$BUILD_DIR"
RANKS="${QUICKSTART_RANKS:-2}"
RUN_DIR="${QUICKSTART_DIR:-$LAKERUN_ROOT/runs/quickstart}"
mkdir -p "$RUN_DIR"
echo "[quickstart] training on $RANKS ranks; checkpoints in $RUN_DIR/checkpoints" >&2
"$BUILD_DIR/bin/lakerun" launch -n "$RANKS" -- \
  "$BUILD_DIR/examples/fashion_mnist/fashion_mnist" --checkpoint-dir "$RUN_DIR/checkpoints" "$@"
echo >&2
echo "[quickstart] checkpoints: $RUN_DIR/checkpoints" >&2
echo "[quickstart] tracked runs (lakerun runs list --experiment fashion-mnist):" >&2
"$BUILD_DIR/bin/lakerun" runs list --experiment fashion-mnist
