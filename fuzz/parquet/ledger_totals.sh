#!/usr/bin/env bash
# fuzz/parquet/ledger_totals.sh [LEDGER]
#
# Totals fuzz-out/ledger.tsv (written by run_long.sh): per target, the number of runs, executions, seconds and
# crashes over all of them. Executions of separate runs add up because every run resumes from the same working
# corpus (fuzz-out/corpus/<target>).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LEDGER="${1:-$ROOT/fuzz-out/ledger.tsv}"
[[ -f "$LEDGER" ]] || { echo "ledger_totals: no ledger at $LEDGER (run fuzz/parquet/run_long.sh first)" >&2; exit 1; }
awk -F'\t' '
  { runs[$3]++; execs[$3] += $4; if ($5 ~ /^[0-9]+$/) secs[$3] += $5; if ($6 != "0") crash[$3] += ($6 ~ /^[0-9]+$/ ? $6 : 1) }
  END {
    printf "%-28s %5s %14s %8s %8s\n", "target", "runs", "executions", "seconds", "crashes"
    for (t in runs) printf "%-28s %5d %14d %8d %8d\n", t, runs[t], execs[t], secs[t], crash[t] + 0 | "sort"
  }' "$LEDGER"
