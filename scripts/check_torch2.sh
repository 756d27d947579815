#!/usr/bin/env bash
# scripts/check_torch2.sh [WORK_DIR] — compile-check every torch-using translation unit against libtorch 2.6.0.
#
# lakerun builds against Debian 12's libtorch 1.13 and must also build against a PyTorch 2.x libtorch (c10d API
# differences live in src/dist/c10d_compat.h). Debian 12 has no libtorch 2.x, so this script fetches Debian trixie's
# libtorch-dev + libtorch2.6 (and trixie's libgloo-dev, which 2.6's ProcessGroupGloo.hpp is built against) with
# `apt-get download` through a private apt configuration under WORK_DIR (nothing is installed, no system file is
# touched, no root needed) and unpacks them with `dpkg -x`.
#
# This is a COMPILE check only (-fsyntax-only, templates instantiated, no code generation): trixie's libtorch 2.6
# shared libraries need glibc 2.38 and libstdc++ from GCC 14 (GLIBC_2.38 / GLIBCXX_3.4.33 symbol versions), while
# Debian 12 ships glibc 2.36 and GCC 12, so nothing can be linked against them, let alone run, on Debian 12.
#
# How: configure a scratch build of lakerun against the system libtorch 1.13 (the only one whose CMake package works
# here) to get compile_commands.json, keep every translation unit of src/ bench/ examples/ tests/ fuzz/ that includes
# torch/ATen/c10/caffe2 headers (directly or through project headers), and rerun its exact command with the 1.13
# torch include directory and definitions replaced by 2.6's. Debian 12's /usr/include also holds 1.13's ATen/c10/
# torch trees, so 2.6's directories go first (-isystem) and every compile's dependency list is checked: a header
# taken from /usr/include/{torch,ATen,c10,caffe2} fails the check. Torch targets reuse one precompiled header (as
# the real build does), built once from cmake/torch_pch.h against 2.6.
#
# Prints "N translation units compile against libtorch 2.6.0" and exits 0, or lists the failures and exits 1.
# Logs: WORK_DIR/logs/. Reruns with the same WORK_DIR reuse the downloaded packages.
# Environment: LAKERUN_JOBS (default 2) parallel compiles; TRIXIE_MIRROR (default http://deb.debian.org/debian);
# LAKERUN_TORCH_PCH=OFF compiles every unit without the precompiled header (slower: as -DLAKERUN_USE_TORCH_PCH=OFF);
# LAKERUN_TORCH2_ONLY=REGEX checks only the units whose path matches; LAKERUN_TORCH2_EXTRA_FLAGS adds compiler flags
# to every command, the precompiled header's included (scripts/check_nccl.sh turns the NCCL branch on this way).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${1:-$(mktemp -d /tmp/lakerun-torch2.XXXXXX)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
JOBS="${LAKERUN_JOBS:-2}"
MIRROR="${TRIXIE_MIRROR:-http://deb.debian.org/debian}"
PACKAGES=(libtorch-dev libtorch2.6 libgloo-dev)
start=$(date +%s)
log() { echo "[check_torch2] $*" >&2; }

# 1. Trixie's packages, through a private apt configuration (own sources.list, lists, cache and status file).
APT="$WORK/apt"
T="$WORK/root"
apt_opts=(-o "Dir::Etc::SourceList=$APT/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::Etc::Preferences=/dev/null" -o Dir::Etc::PreferencesParts=/dev/null
          -o "Dir::State=$APT/state" -o "Dir::State::Lists=$APT/lists" -o "Dir::State::status=$APT/status"
          -o "Dir::Cache=$APT/cache" -o APT::Architecture=amd64 -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
if [[ ! -f "$T/.complete" ]]; then
  mkdir -p "$APT/lists/partial" "$APT/state" "$APT/cache/archives/partial" "$APT/debs"
  : > "$APT/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main" > "$APT/sources.list"
  log "apt-get update (trixie, private lists in $APT)"
  apt-get "${apt_opts[@]}" -qq update
  log "apt-get download ${PACKAGES[*]}"
  (cd "$APT/debs" && apt-get "${apt_opts[@]}" -qq download "${PACKAGES[@]}")
  rm -rf "$T"; mkdir -p "$T"
  for deb in "$APT"/debs/*.deb; do dpkg -x "$deb" "$T"; done
  touch "$T/.complete"
fi
T_INC="$T/usr/include"
T_DEFS="$(sed -n 's/.*INTERFACE_COMPILE_DEFINITIONS "\(USE_[^"$]*\)".*/\1/p' \
  "$T/usr/lib/x86_64-linux-gnu/cmake/Caffe2/Caffe2Targets.cmake" | head -1)"
T_VERSION="$(sed -n 's/^#define TORCH_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' \
  "$T_INC/torch/csrc/api/include/torch/version.h" | paste -sd.)"
[[ -n "$T_DEFS" && -n "$T_VERSION" ]] || { log "unexpected libtorch-dev layout under $T"; exit 1; }
log "libtorch $T_VERSION headers in $T_INC; torch definitions: $T_DEFS"

# 2. Compile commands of a scratch build against the system libtorch 1.13 (configure only, nothing is built).
BUILD="$WORK/build"
GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DLAKERUN_USE_CCACHE=OFF -DLAKERUN_USE_TORCH_PCH=ON -DLAKERUN_BUILD_TESTS=ON -DLAKERUN_BUILD_BENCHMARKS=ON \
  -DLAKERUN_BUILD_EXAMPLES=ON > "$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; exit 1; }

# 3. The torch-using translation units, their commands rewritten for 2.6: one shell command per line.
mkdir -p "$WORK/cmds" "$WORK/logs" "$WORK/deps"
rm -f "$WORK"/cmds/* "$WORK"/logs/* "$WORK"/deps/*
USE_PCH="${LAKERUN_TORCH_PCH:-ON}"
python3 - "$ROOT" "$BUILD" "$WORK" "$T_INC" "$T_DEFS" "$USE_PCH" "${LAKERUN_TORCH2_ONLY:-}" \
  "${LAKERUN_TORCH2_EXTRA_FLAGS:-}" <<'EOF'
import json, os, re, shlex, sys
root, build, work, t_inc, t_defs, use_pch, only, extra = sys.argv[1:9]
entries = json.load(open(os.path.join(build, 'compile_commands.json')))
include_re = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
torch_re = re.compile(r'^(torch|ATen|c10|c10d|caffe2)/')
memo = {}
def uses_torch(path, stack=()):  # the file, or a project header it includes, includes a libtorch header
    if path in memo: return memo[path]
    if path in stack: return False
    try: text = open(path, errors='replace').read()
    except OSError: return False
    res = False
    for name in include_re.findall(text):
        if torch_re.match(name): res = True
        else:
            for base in (os.path.dirname(path), root + '/include', root + '/src'):
                p = os.path.normpath(os.path.join(base, name))
                if p.startswith(root + '/') and os.path.isfile(p):
                    res = uses_torch(p, stack + (path,)); break
        if res: break
    memo[path] = res
    return res
# 1.13's torch interface: its include directory (/usr/include itself is implicit) and definitions (with glog's).
old_defs = {'-DGFLAGS_IS_A_DLL=0', '-DGLOG_CUSTOM_PREFIX_SUPPORT', '-DUSE_C10D_GLOO', '-DUSE_DISTRIBUTED',
            '-DUSE_RPC', '-DUSE_TENSORPIPE', '-DUSE_C10D_MPI'}
new_defs = ['-D' + d for d in t_defs.split(';')] + shlex.split(extra)
def rewrite(args, out_args):
    out, i, seen_torch = [args[0]] + new_defs, 1, False
    while i < len(args):
        a = args[i]
        if a in old_defs: i += 1; continue
        if a == '-isystem' and args[i + 1] == '/usr/include/torch/csrc/api/include':
            out += ['-isystem', t_inc, '-isystem', t_inc + '/torch/csrc/api/include']; seen_torch = True; i += 2; continue
        if a == '-o': i += 2; continue
        if a == '-c': i += 1; continue
        if use_pch == 'OFF' and a == '-include' and args[i + 1].endswith('/cmake_pch.hxx'): i += 2; continue
        if a.startswith('-I/usr/include/torch') or a.startswith('-isystem/usr/include/torch'):
            raise SystemExit('unexpected 1.13 include flag: ' + a)
        out.append(a); i += 1
    if not seen_torch: raise SystemExit('no torch include directory in: ' + ' '.join(args))
    return out[:-1] + out_args + out[-1:]
pch, tus, seen = None, [], set()
for e in entries:
    f, args = e['file'], shlex.split(e['command'])
    if f.endswith('cmake_pch.hxx.cxx') and 'lakerun_torch_pch_host' in f:
        gch = args[args.index('-o') + 1]
        pch = 'cd %s && %s' % (shlex.quote(e['directory']), ' '.join(map(shlex.quote, rewrite(
            args, ['-o', gch, '-MD', '-MF', work + '/deps/pch.d', '-c']))))
        continue
    rel = os.path.relpath(f, root)
    if rel.split('/')[0] not in ('src', 'bench', 'examples', 'tests', 'fuzz') or not uses_torch(f): continue
    if only and not re.search(only, rel): continue
    key = (f, ' '.join(a for a in args if a not in ('-o',) and not a.endswith('.o')))
    if key in seen: continue   # the same file with the same flags in two targets
    seen.add(key)
    n = len(tus)
    cmd = rewrite(args, ['-fsyntax-only', '-MD', '-MF', '%s/deps/%03d.d' % (work, n)])
    tus.append('%03d %s cd %s && %s' % (n, rel, shlex.quote(e['directory']), ' '.join(map(shlex.quote, cmd))))
if pch is None: raise SystemExit('no lakerun_torch_pch_host precompiled header in compile_commands.json')
open(os.path.join(work, 'cmds', 'pch.sh'), 'w').write(pch + '\n')
open(os.path.join(work, 'cmds', 'tus.txt'), 'w').write('\n'.join(tus) + '\n')
EOF
ntu=$(wc -l < "$WORK/cmds/tus.txt")

# 4. The probe: with 2.6's directories first, <torch/version.h> is 2.x (each compile's dependencies are checked too).
printf '#include <torch/version.h>\nstatic_assert(TORCH_VERSION_MAJOR == 2, "not libtorch 2.x");\n' > "$WORK/probe.cc"
c++ -std=gnu++17 -isystem "$T_INC" -isystem "$T_INC/torch/csrc/api/include" -fsyntax-only "$WORK/probe.cc" ||
  { log "probe: <torch/version.h> is not libtorch 2.x"; exit 1; }

old_headers() { tr ' \\' '\n\n' < "$1" | grep -qE '^/usr/include/(torch|ATen|c10|caffe2)/'; }
export -f old_headers
if [[ "$USE_PCH" != OFF ]]; then
  log "precompiled header (cmake/torch_pch.h) against $T_VERSION"
  pch_start=$(date +%s)
  if ! nice -n 10 bash -c "$(cat "$WORK/cmds/pch.sh")" > "$WORK/logs/pch.log" 2>&1; then
    cat "$WORK/logs/pch.log"; log "the precompiled header does not compile against libtorch $T_VERSION"; exit 1
  fi
  if old_headers "$WORK/deps/pch.d"; then log "the precompiled header uses libtorch 1.13 headers"; exit 1; fi
  log "precompiled header: $(( $(date +%s) - pch_start )) s"
fi
log "compiling $ntu translation units, $JOBS at a time"

# 5. Every torch-using translation unit; a failure or a 1.13 header in its dependencies fails it.
check_one() {
  local line="$1" n rel cmd
  n="${line%% *}"; line="${line#* }"; rel="${line%% *}"; cmd="${line#* }"
  if ! nice -n 10 bash -c "$cmd" > "$WORK/logs/$n.log" 2>&1; then
    echo "FAIL $rel (log: $WORK/logs/$n.log)"; return 0
  fi
  if old_headers "$WORK/deps/$n.d"; then
    echo "FAIL $rel (uses a libtorch 1.13 header from /usr/include: $WORK/deps/$n.d)"; return 0
  fi
  if grep -q 'warning:' "$WORK/logs/$n.log"; then echo "ok (warnings) $rel"; else echo "ok $rel"; fi
}
export -f check_one
export WORK
tr '\n' '\0' < "$WORK/cmds/tus.txt" | xargs -0 -P "$JOBS" -I{} bash -c 'check_one "$1"' _ {} | tee "$WORK/results.txt"

failed=$(grep -c '^FAIL' "$WORK/results.txt" || true)
warned=$(grep -c '^ok (warnings)' "$WORK/results.txt" || true)
log "$(( $(date +%s) - start )) s in all; logs in $WORK/logs"
if (( failed )); then
  echo "$failed of $ntu translation units fail to compile against libtorch $T_VERSION"
  exit 1
fi
note=""
if (( warned )); then note=" ($warned with warnings)"; fi
echo "$ntu translation units compile against libtorch $T_VERSION$note"
