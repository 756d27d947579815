#!/usr/bin/env bash
# scripts/quickstart.sh — set everything up, build, and run the main job:
#   1. import Fashion-MNIST (Debian's dataset-fashion-mnist IDX files) into the Delta tables data/fashion-mnist/
#      {train,test} with `lakerun table import fashion-mnist` (skipped when they exist);
#   2. train the Fashion-MNIST CNN with lakerun::train::Trainer on 2 local ranks under `lakerun launch`, reading the
#      tables through lakerun::data::Loader, with EarlyStopping and ModelCheckpoint (best + last.ckpt), logging
#      params, metrics, checkpoints and the model to the MLflow file store ./mlruns (or MLFLOW_TRACKING_URI);
#   3. print the test accuracy, where the run and the checkpoints are, and `lakerun runs list`.
#   It also installs the Python package `lakerun` (cmake --install --component python) when it was built.
#   LAKERUN_BUILD_DIR   build directory (default ./build)
#   QUICKSTART_RANKS    number of ranks (default 2)
#   QUICKSTART_DIR      where checkpoints go (default ./runs/quickstart)
#   QUICKSTART_TABLE    the tables' directory (default ./data/fashion-mnist)
#   extra arguments are passed to the training program (e.g. --epochs 20 --stopping-threshold none; --help)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$LAKERUN_ROOT"
BUILD_DIR="${LAKERUN_BUILD_DIR:-$LAKERUN_ROOT/build}"
bash scripts/setup.sh
bash scripts/build.sh "$BUILD_DIR"
if [[ -f "$BUILD_DIR/python/lakerun/__init__.py" ]]; then
  # The Python package (built where Debian's python3-torch and pybind11 are found): `import lakerun` from now on.
  cmake --install "$BUILD_DIR" --component python > /dev/null
  echo "[quickstart] installed the Python package lakerun for /usr/bin/python3 (docs/python.md)" >&2
fi
RANKS="${QUICKSTART_RANKS:-2}"
RUN_DIR="${QUICKSTART_DIR:-$LAKERUN_ROOT/runs/quickstart}"
TABLE="${QUICKSTART_TABLE:-$LAKERUN_ROOT/data/fashion-mnist}"
LAKERUN="$BUILD_DIR/bin/lakerun"
mkdir -p "$RUN_DIR"
for split in train test; do
  if [[ ! -d "$TABLE/$split/_delta_log" ]]; then
    echo "[quickstart] importing Fashion-MNIST ($split) into the Delta table $TABLE/$split" >&2
    "$LAKERUN" table import fashion-mnist "$TABLE" --split "$split"
  fi
done
echo "[quickstart] training on $RANKS ranks with the Trainer; checkpoints in $RUN_DIR/checkpoints" >&2
# Fork start: the program is exec'd once and its ranks are forked at lakerun::dist::Init(), so libtorch loads once.
"$LAKERUN" launch -n "$RANKS" --start-method fork -- \
  "$BUILD_DIR/examples/fashion_mnist/fashion_mnist" --table "$TABLE" --checkpoint-dir "$RUN_DIR/checkpoints" "$@"
echo >&2
echo "[quickstart] checkpoints: $RUN_DIR/checkpoints" >&2
echo "[quickstart] tracked runs (lakerun runs list --experiment fashion-mnist):" >&2
"$LAKERUN" runs list --experiment fashion-mnist
