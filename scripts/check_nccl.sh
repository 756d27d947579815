#!/usr/bin/env bash
# scripts/check_nccl.sh [WORK_DIR] — compile lakerun's NCCL/CUDA branch (`#ifdef USE_C10D_NCCL`) without a GPU.
#
# Debian's libtorch builds (1.13 here, 2.6 in trixie) are CPU-only, so a normal build never compiles the code that
# creates the NCCL process group and sets each rank's device: only a CUDA PyTorch's libtorch defines USE_C10D_NCCL.
# This script compiles that code against the libtorch headers at hand with NCCL on, taking cuda_runtime_api.h and
# nccl.h from a CUDA toolkit (CUDA_HOME, default /usr/local/cuda; NVIDIA's pip wheels install the same headers).
#
#   1. libtorch 1.13 (system): a scratch build under WORK_DIR/build-1.13 is configured with the NCCL definitions, and
#      the NCCL-sensitive translation units are compiled with its commands (code generated, nothing linked).
#   2. libtorch 2.6 (trixie's headers, fetched by scripts/check_torch2.sh into WORK_DIR/torch2): the same units,
#      compile-checked by check_torch2.sh with the NCCL definitions added. LAKERUN_NCCL_SKIP_TORCH2=1 skips this.
#
# NCCL-sensitive units: the sources under src/ bench/ tests/ examples/ fuzz/ that mention USE_C10D_NCCL or USE_CUDA,
# or include (through project headers) a file that does. Linking is out of reach: no CUDA libtorch is installed.
#
# A CPU-only libtorch lacks c10/cuda/impl/cuda_cmake_macros.h, which CUDA builds generate at configure time; the
# script writes the one definition it holds for a shared-library build into WORK_DIR/cuda-shim.
#
# Prints "N units compile with NCCL on against libtorch V" per pass and exits 0; exits 1 on a failure (with its log),
# 2 when no CUDA toolkit with nccl.h is found.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${1:-$(mktemp -d /tmp/lakerun-nccl.XXXXXX)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
CUDA="${CUDA_HOME:-/usr/local/cuda}"
log() { echo "[check_nccl] $*" >&2; }

for header in cuda_runtime_api.h nccl.h; do
  if [[ ! -f "$CUDA/include/$header" ]]; then
    log "no $CUDA/include/$header: set CUDA_HOME to a CUDA toolkit that has NCCL's headers"; exit 2
  fi
done
nccl_version="$(sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' "$CUDA/include/nccl.h" |
  paste -sd.)"
cuda_version="$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$CUDA/include/cuda_runtime_api.h")"
log "CUDA runtime $cuda_version, NCCL $nccl_version headers from $CUDA/include"

SHIM="$WORK/cuda-shim"
mkdir -p "$SHIM/c10/cuda/impl"
printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' > "$SHIM/c10/cuda/impl/cuda_cmake_macros.h"
FLAGS="-DUSE_C10D_NCCL -DUSE_CUDA -isystem $SHIM -isystem $CUDA/include"

# The NCCL-sensitive translation units, relative to ROOT, one per line.
mapfile -t UNITS < <(python3 - "$ROOT" <<'EOF'
import os, re, sys
root = sys.argv[1]
include_re = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
marker_re = re.compile(r'\bUSE_C10D_NCCL\b|\bUSE_CUDA\b')
memo = {}
def sensitive(path, stack=()):
    if path in memo: return memo[path]
    if path in stack: return False
    text = open(path, errors='replace').read()
    res = bool(marker_re.search(text))
    for name in include_re.findall(text) if not res else []:
        for base in (os.path.dirname(path), root + '/include', root + '/src'):
            p = os.path.normpath(os.path.join(base, name))
            if os.path.isfile(p):
                res = sensitive(p, stack + (path,)); break
        if res: break
    memo[path] = res
    return res
for top in ('src', 'bench', 'tests', 'examples', 'fuzz'):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            p = os.path.join(d, f)
            if f.endswith('.cc') and sensitive(p): print(os.path.relpath(p, root))
EOF
)
(( ${#UNITS[@]} )) || { log "no translation unit mentions USE_C10D_NCCL or USE_CUDA"; exit 1; }
log "${#UNITS[@]} NCCL-sensitive units: ${UNITS[*]}"

# 1. libtorch 1.13: a scratch build configured with the NCCL definitions; each unit is compiled with its own command
#    (building its target instead would first link the executables the target depends on, and nothing links without
#    a CUDA libtorch).
B="$WORK/build-1.13"
GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
cmake -S "$ROOT" -B "$B" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_CXX_FLAGS="$FLAGS" -DLAKERUN_USE_TORCH_PCH=OFF -DLAKERUN_BUILD_TESTS=ON -DLAKERUN_BUILD_BENCHMARKS=ON \
  -DLAKERUN_BUILD_EXAMPLES=ON > "$WORK/cmake-1.13.log" 2>&1 || { cat "$WORK/cmake-1.13.log"; exit 1; }
python3 - "$ROOT" "$B" "${UNITS[@]}" > "$WORK/commands-1.13.txt" <<'EOF'
import json, os, shlex, sys
root, build, units, seen = sys.argv[1], sys.argv[2], set(sys.argv[3:]), set()
for e in json.load(open(os.path.join(build, 'compile_commands.json'))):
    rel = os.path.relpath(e['file'], root)
    if rel in units and rel not in seen:   # a unit built by two targets is compiled once
        seen.add(rel)
        args = shlex.split(e['command'])
        out = os.path.dirname(os.path.join(e['directory'], args[args.index('-o') + 1]))
        print('%s cd %s && mkdir -p %s && %s' % (rel, shlex.quote(e['directory']), shlex.quote(out), e['command']))
EOF
torch_version="$(sed -n 's/^#define TORCH_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' \
  /usr/include/torch/csrc/api/include/torch/version.h | paste -sd.)"
ncompiled=$(wc -l < "$WORK/commands-1.13.txt")
log "libtorch $torch_version: compiling $ncompiled units"
: > "$WORK/build-1.13.log"
failed=0
while IFS= read -r line; do
  if ! bash -c "${line#* }" >> "$WORK/build-1.13.log" 2>&1; then echo "FAIL ${line%% *}"; failed=$((failed + 1)); fi
done < "$WORK/commands-1.13.txt"
if (( failed )); then
  grep -E 'error' "$WORK/build-1.13.log" | head -40
  log "$failed units fail against libtorch $torch_version (log: $WORK/build-1.13.log)"; exit 1
fi
if grep -q 'warning:' "$WORK/build-1.13.log"; then grep 'warning:' "$WORK/build-1.13.log" | head -20; fi
echo "$ncompiled units compile with NCCL on against libtorch $torch_version"

# 2. libtorch 2.6: check_torch2.sh with the same definitions, limited to the same units.
if [[ "${LAKERUN_NCCL_SKIP_TORCH2:-0}" == 1 ]]; then log "libtorch 2.6 pass skipped"; exit 0; fi
only="^($(printf '%s|' "${UNITS[@]}" | sed 's/[.]/[.]/g; s/|$//'))\$"
LAKERUN_TORCH2_EXTRA_FLAGS="$FLAGS" LAKERUN_TORCH2_ONLY="$only" \
  bash "$ROOT/scripts/check_torch2.sh" "$WORK/torch2" |
  sed 's/translation units compile against/units compile with NCCL on against/'
