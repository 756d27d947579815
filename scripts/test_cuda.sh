#!/usr/bin/env bash
# scripts/test_cuda.sh [BUILD_DIR] — build lakerun against an installed CUDA PyTorch's libtorch and run the whole test
# suite on this machine's GPU(s).
#
# The CUDA paths (NCCL process groups, each rank's device, pinned batches, autocast and the grad scaler on CUDA,
# CUDA generator state in checkpoints, models logged from a GPU) only compile against a libtorch built with CUDA and
# only run where a GPU is. Debian's libtorch is CPU-only, so the usual build skips those tests; here they run.
#
#   PYTHON (default: python3 on PATH)  the interpreter whose `torch` to build against; it also runs the Python peers
#                                      (LAKERUN_PYTHON), so the interop tests compare against the same PyTorch.
#   LAKERUN_DEPS_PREFIX                an extra install prefix (DIR/usr/include, DIR/usr/lib/...) searched first for
#                                      lakerun's other dependencies, e.g. Debian packages unpacked with `dpkg -x`.
#   CUDA_HOME (default /usr/local/cuda) the CUDA toolkit that PyTorch's CMake package looks for.
#   CTEST_ARGS, LAKERUN_TEST_JOBS      passed on to ctest (default jobs: half the cores).
#
# Besides PyTorch it needs what scripts/setup.sh installs on Debian, under any name: a C++17 compiler, CMake, ninja,
# Snappy, zstd, LZ4, Brotli, zlib, libjpeg(-turbo), libpng, libcurl's headers, nlohmann-json, CLI11, GoogleTest and
# GoogleMock, and Gloo's headers. PyTorch's wheels carry Gloo compiled into libtorch_cpu but not its headers, which
# ProcessGroupGloo.hpp includes: install libgloo-dev (lakerun calls only what libtorch exports, so the headers of
# another Gloo snapshot do). cpp-httplib is optional (the REST tracking tests are built when pkg-config finds it); the
# Parquet interop tests need Node.js and are skipped here (LAKERUN_SKIP_INTEROP=1).
#
# Exits with ctest's status. Checked on an H100 with PyTorch 2.11.0+cu130 and NCCL 2.28.9 (docs/dist.md, "GPUs").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build-cuda}"
PY="${PYTHON:-$(command -v python3 || true)}"
CUDA="${CUDA_HOME:-/usr/local/cuda}"
log() { echo "[test_cuda] $*" >&2; }

[[ -n "$PY" ]] || { log "no python3 on PATH: set PYTHON to the interpreter that has a CUDA PyTorch"; exit 2; }
read -r TORCH_VERSION TORCH_CUDA GPUS TORCH_CMAKE < <("$PY" -c '
import torch
print(torch.__version__, torch.version.cuda, torch.cuda.device_count(), torch.utils.cmake_prefix_path)' ||
  echo "- - - -")
[[ "$TORCH_VERSION" != "-" ]] || { log "$PY cannot import torch"; exit 2; }
[[ "$TORCH_CUDA" != "None" ]] || { log "$PY's torch $TORCH_VERSION is a CPU build; scripts/test.sh covers that"; exit 2; }
((GPUS > 0)) || log "warning: torch $TORCH_VERSION sees no GPU: the CUDA tests will skip"
log "torch $TORCH_VERSION (CUDA $TORCH_CUDA, $GPUS GPU(s)) from $PY"

PREFIXES="$TORCH_CMAKE"
FLAGS=""
if [[ -n "${LAKERUN_DEPS_PREFIX:-}" ]]; then
  PREFIXES="$LAKERUN_DEPS_PREFIX/usr;$PREFIXES"
  FLAGS="-isystem $LAKERUN_DEPS_PREFIX/usr/include"
fi
gloo_found=0
for dir in ${LAKERUN_DEPS_PREFIX:+$LAKERUN_DEPS_PREFIX/usr/include} /usr/include /usr/local/include; do
  [[ -f "$dir/gloo/transport/device.h" ]] && gloo_found=1
done
((gloo_found)) || { log "Gloo's headers (gloo/transport/device.h) are missing: PyTorch's wheels do not ship them; "\
"install libgloo-dev or point LAKERUN_DEPS_PREFIX at a tree that has them"; exit 2; }

export PATH="$CUDA/bin:$PATH" CUDAToolkit_ROOT="$CUDA"
GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
start=$(date +%s)
cmake -S "$ROOT" -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIXES" \
  -DCMAKE_CXX_FLAGS="$FLAGS" -DLAKERUN_BUILD_TESTS=ON -DLAKERUN_BUILD_BENCHMARKS=ON -DLAKERUN_BUILD_EXAMPLES=ON >&2
cmake --build "$BUILD_DIR" -j "${LAKERUN_JOBS:-$(nproc)}"
built=$(date +%s)
log "configured and built in $((built - start)) s"

# The Python peers (interop and crosscheck tests) use the same PyTorch; Node.js oracles are not assumed.
export LAKERUN_PYTHON="$PY" LAKERUN_SKIP_INTEROP="${LAKERUN_SKIP_INTEROP:-1}"
rc=0
ctest --test-dir "$BUILD_DIR" -j "${LAKERUN_TEST_JOBS:-$(( ($(nproc) + 1) / 2 ))}" --output-on-failure --timeout 600 \
  ${CTEST_ARGS:-} || rc=$?
log "tests in $(( $(date +%s) - built )) s, exit $rc"
exit $rc
