#!/usr/bin/env bash
# Enforces the dependency direction of docs/design.md on the sources:
#  - format, launch, rdzv and track public headers, and format, rdzv and track sources, never include
#    torch/ATen/c10 (rdzv's one test with real c10d clients excepted);
#  - no public header includes Thrift, curl, httplib, nlohmann or torch/csrc internals (torch's public C++ API
#    headers, <torch/nn/...>, <ATen/...>, <c10/...>, are allowed where torch is);
#  - base includes nothing from other lakerun modules; a module never includes a module that depends on it,
#    whether the include is written with quotes or angle brackets.
set -uo pipefail
ROOT="${1:?usage: check_layering.sh REPO_ROOT}"
cd "$ROOT"
fail=0
report() { echo "layering violation: $*"; fail=1; }

torch_re='#include *[<"](torch/|ATen/|c10/|caffe2/)'
for dir in include/lakerun/format include/lakerun/launch include/lakerun/rdzv include/lakerun/base src/format src/base \
           src/rdzv; do
  [[ -d $dir ]] || continue
  while IFS= read -r hit; do report "$hit (torch is not allowed here)"; done < <(
    grep -rnE "$torch_re" "$dir" | grep -v '^src/rdzv/store_c10d_test.cc:')
done
# track's torch-free core: everything in include/lakerun/track and src/track except the files of its optional
# torch library (track_torch: model logging), whose names contain "torch".
for dir in include/lakerun/track src/track; do
  [[ -d $dir ]] || continue
  while IFS= read -r hit; do
    file=${hit%%:*}
    case "$(basename "$file")" in *torch*) ;; *) report "$hit (lakerun::track core must not include torch)";; esac
  done < <(grep -rnE "$torch_re" "$dir")
done
while IFS= read -r hit; do report "$hit (third-party internals in a public header)"; done < <(
  grep -rnE '#include *[<"](thrift/|curl/|httplib|nlohmann/|CLI/|gloo/|torch/csrc/)' include/ 2>/dev/null)
# Module order: a module may include only modules before it in this list (train may include all but cli).
order=(base objstore rdzv format launch track dist data train cli python)
for i in "${!order[@]}"; do
  mod=${order[$i]}
  for j in "${!order[@]}"; do
    ((j > i)) || continue
    later=${order[$j]}
    for dir in "include/lakerun/$mod" "src/$mod"; do
      [[ -d $dir ]] || continue
      while IFS= read -r hit; do report "$hit ($mod must not depend on $later)"; done < <(
        grep -rnE "#include *[\"<]lakerun/$later/" "$dir")
    done
  done
done
# Sideways edges that the order above does not forbid: launch, track and dist are independent of each other,
# and data learns its rank as two integers instead of including dist.
for pair in "rdzv:objstore" "launch:track" "track:launch" "dist:track" "dist:launch" "dist:format" "data:dist" "data:track" \
            "launch:format" "track:format"; do
  mod=${pair%%:*}; other=${pair##*:}
  for dir in "include/lakerun/$mod" "src/$mod"; do
    [[ -d $dir ]] || continue
    while IFS= read -r hit; do report "$hit ($mod must not depend on $other)"; done < <(
      grep -rnE "#include *[\"<]lakerun/$other/" "$dir")
  done
done
if ((fail)); then exit 1; fi
echo "layering: ok"
