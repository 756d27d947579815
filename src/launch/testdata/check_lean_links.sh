#!/usr/bin/env bash
# Fails if any of the given executables loads libtorch, libc10, libtorch_cpu or libcurl, directly (ELF NEEDED
# entries) or through the shared libraries it loads (ldd): `lakerun launch` never pays libtorch's load time (about a
# second here), nor the ~6 ms of libcurl's ~27 libraries, which lakerun::track loads only when a REST store needs it.
set -uo pipefail
fail=0
for exe in "$@"; do
  [[ -n $exe ]] || continue
  if [[ ! -x $exe ]]; then echo "check_lean_links: $exe is not an executable"; fail=1; continue; fi
  hits=$(ldd "$exe" 2>/dev/null | grep -E 'lib(torch|c10|caffe2|curl)[^ ]*\.so' || true)
  if [[ -n $hits ]]; then
    echo "check_lean_links: $exe loads:"; echo "$hits"; fail=1
  else
    echo "check_lean_links: $exe: no torch, no curl"
  fi
done
exit $fail
