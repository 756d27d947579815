#!/usr/bin/env bash
# scripts/setup.sh — install every build, test and benchmark dependency from Debian's archive.
# Idempotent: installs only what is missing and runs `apt-get update` only then. Uses sudo when not root.
# Never runs `apt-get autoremove`.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
PKGS=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang
  # libraries
  libtorch-dev libgloo-dev libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev libbrotli-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libjpeg62-turbo-dev libpng-dev
  libcurl4-openssl-dev libcli11-dev libcpp-httplib-dev
  # optimized BLAS for libtorch (selected through Debian's alternatives)
  libopenblas0-pthread
  # data
  dataset-fashion-mnist
  # peers measured by the benchmarks and the interop tests
  python3-torch python3-numpy
  # the lakerun Python package (LAKERUN_PYTHON) and its tests
  pybind11-dev python3-pytest python3-cloudpickle
  # launchers exercised by the tests
  openmpi-bin libopenmpi-dev
  # misc tools used by tests
  procps psmisc
  # the launcher's user-space stacks of a hung rank (optional at run time; tested)
  gdb
)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
missing=()
for p in "${PKGS[@]}"; do installed "$p" || missing+=("$p"); done
# Node.js and npm run the interop tests' Parquet oracles (tests/interop, node >= 18). Debian's packages are installed
# only when no npm is on PATH: a machine may carry a newer Node.js build (which ships its own npm) instead.
if ! command -v npm >/dev/null; then
  for p in nodejs npm; do installed "$p" || missing+=("$p"); done
fi
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}" >&2
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "[setup] all system packages present" >&2
fi
# libtorch on Debian calls BLAS through the libblas.so.3 alternative; the reference BLAS is ~25% slower for the
# example CNN than OpenBLAS (see docs/results-fashion-mnist.md). Select OpenBLAS explicitly (idempotent).
for lib in libblas.so.3 liblapack.so.3; do
  alt="${lib}-x86_64-linux-gnu"
  want="/usr/lib/x86_64-linux-gnu/openblas-pthread/${lib}"
  if [[ -e "$want" ]] && [[ "$(readlink -f "/etc/alternatives/$alt" 2>/dev/null)" != "$(readlink -f "$want")" ]]; then
    $SUDO update-alternatives --set "$alt" "$want" >/dev/null
    echo "[setup] $alt -> OpenBLAS" >&2
  fi
done

# Independent Parquet implementations used as test oracles and benchmark peers (npm registry; lock file committed).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -f "$ROOT/tests/interop/package-lock.json" ]] && command -v npm >/dev/null; then
  if [[ ! -d "$ROOT/tests/interop/node_modules" || "$ROOT/tests/interop/package-lock.json" -nt "$ROOT/tests/interop/node_modules" ]]; then
    echo "[setup] npm ci in tests/interop" >&2
    # `npm ci` installs exactly the lock file. It refuses a lock that lacks optional per-platform packages, and
    # this registry serves DuckDB's bindings for linux-x64 only, so such a lock cannot be completed here; then
    # install from the same lock without rewriting it (every dependency is pinned to an exact version).
    (cd "$ROOT/tests/interop" &&
      { npm ci --no-audit --no-fund --loglevel=error 2>/dev/null ||
        { echo "[setup] npm ci refused the lock file; npm install --no-save from it" >&2;
          npm install --no-save --no-audit --no-fund --loglevel=error; }; } && touch node_modules)
  fi
fi
