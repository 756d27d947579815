#!/usr/bin/env bash
# Keeps lakerun C++17: fails on a designated initializer (`Foo{.a = 1}`, `{.a{1}}`, or `{` ending a line and the
# next starting with `.a = `), which is C++20. GCC accepts it in C++17 mode as an extension and reports it only under
# -Wpedantic (as -Wc++20-extensions, which alone does not enable it), so no compiler flag can target just this.
# Scans the C/C++ sources and the C++ code blocks of the Markdown docs.
set -uo pipefail
ROOT="${1:?usage: check_designated_initializers.sh REPO_ROOT}"
cd "$ROOT"

files=()
while IFS= read -r f; do files+=("$f"); done < <(
  find src include tests examples bench fuzz cmake -type f -not -path '*/node_modules/*' \
    \( -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \
       -o -name '*.inc' \) 2>/dev/null | sort
  { ls ./*.md; find docs examples -name '*.md' -not -path '*/node_modules/*'; } 2>/dev/null | sed 's|^\./||' | sort)
((${#files[@]})) || { echo "designated initializers: no sources under $ROOT"; exit 1; }

awk '
  FNR == 1 { prev = ""; md = (FILENAME ~ /[.]md$/); in_fence = 0; cpp = !md }
  md && /^[[:space:]]*```/ {
    # Markdown: only the code blocks marked as C++.
    cpp = !in_fence && $0 ~ /^[[:space:]]*```[[:space:]]*(cpp|c[+][+]|cxx|cc)[[:space:]]*$/
    in_fence = !in_fence
    prev = ""
    next
  }
  !cpp { next }
  {
    designator = "[.][A-Za-z_][A-Za-z0-9_]*[[:space:]]*(=([^=]|$)|[{])"
    if ($0 ~ ("[{][[:space:]]*" designator) || (prev ~ /[{][[:space:]]*$/ && $0 ~ ("^[[:space:]]*" designator))) {
      text = $0
      sub(/^[[:space:]]+/, "", text)
      printf "%s:%d: designated initializer (C++20, lakerun is C++17): %s\n", FILENAME, FNR, text
      found = 1
    }
    prev = $0
  }
  END { exit found }
' "${files[@]}"
if (($? != 0)); then
  echo "designated initializers: assign the fields of a named variable, or use a helper or a constructor"
  exit 1
fi
echo "designated initializers: none in ${#files[@]} files"
