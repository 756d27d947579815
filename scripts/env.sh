# scripts/env.sh — sourced by the build and test scripts: ccache settings that let a fresh clone reuse the cache.
LAKERUN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CCACHE_BASEDIR="$LAKERUN_ROOT"
export CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-6G}"
# The Python peers in tests and benchmarks need Debian's python3 (with python3-torch), not another one on PATH.
export LAKERUN_PYTHON="${LAKERUN_PYTHON:-/usr/bin/python3}"
