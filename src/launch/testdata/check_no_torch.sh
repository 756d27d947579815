#!/usr/bin/env bash
# Fails if any of the given executables needs libtorch, libc10 or libtorch_cpu directly (ELF NEEDED entries) or
# through the shared libraries it loads (ldd), so `lakerun launch` never pays libtorch's load time.
set -uo pipefail
fail=0
for exe in "$@"; do
  [[ -n $exe ]] || continue
  if [[ ! -x $exe ]]; then echo "check_no_torch: $exe is not an executable"; fail=1; continue; fi
  hits=$(ldd "$exe" 2>/dev/null | grep -E 'lib(torch|c10|caffe2)[^ ]*\.so' || true)
  if [[ -n $hits ]]; then
    echo "check_no_torch: $exe loads torch:"; echo "$hits"; fail=1
  else
    echo "check_no_torch: $exe: no torch"
  fi
done
exit $fail
