#!/usr/bin/env bash
# fuzz/parquet/run_long.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Builds every Parquet libFuzzer target with clang + ASan/UBSan (all lakerun code coverage-instrumented) in
# build-fuzz/, then fuzzes each target for SECONDS_PER_TARGET (default 60) seconds, one after another, starting
# from the committed seeds (fuzz/parquet/corpus/<target>) plus a working corpus in fuzz-out/corpus/<target>.
# Prints executions, exec/s, new corpus size and crashes per target; crash inputs are saved under
# fuzz-out/crashes/<target>/ with the libFuzzer log beside them. Exit status 1 when any target crashed.
#
# Environment: LAKERUN_FUZZ_JOBS (build parallelism, default 2), LAKERUN_FUZZ_BUILD (build dir, default build-fuzz),
# LAKERUN_FUZZ_RSS_MB (per-input memory limit, default 2048), LAKERUN_FUZZ_MAX_LEN (default 65536),
# LAKERUN_FUZZ_RUNS (stop a target after this many executions, e.g. 10000000; SECONDS_PER_TARGET still caps it),
# LAKERUN_FUZZ_INSTANCE (a name: lets several runs fuzz one target's working corpus at once, each with its own log
# and ledger line; a crash file found meanwhile is counted by every instance running then),
# LAKERUN_FUZZ_TIMEOUT (seconds one input may take, default 10: libFuzzer measures wall time, so a fuzzer that is
# starved at nice 19 or stopped with SIGSTOP for a quiet benchmark needs more). Every timeout input is replayed
# alone: one that then finishes within the limit is listed as not reproduced, not counted as a crash. slow-unit-*
# files (inputs slower than 10 s, which do not stop the run) are never counted.
#
# Every run appends one line per target to fuzz-out/ledger.tsv (UTC time, commit, target, executions, seconds,
# crashes), so executions across several runs on the same working corpus can be totalled with
# fuzz/parquet/ledger_totals.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/env.sh"
SECS="${1:-60}"
shift || true
BUILD="${LAKERUN_FUZZ_BUILD:-$ROOT/build-fuzz}"
OUT="$ROOT/fuzz-out"
JOBS="${LAKERUN_FUZZ_JOBS:-2}"

ALL=(file footer page_header column_chunk rle_hybrid dict_indices
     plain_boolean plain_int32 plain_int64 plain_int96 plain_float plain_double plain_byte_array plain_flba
     delta_binary_packed_int32 delta_binary_packed_int64 delta_length_byte_array delta_byte_array
     byte_stream_split_float byte_stream_split_double byte_stream_split_int32 byte_stream_split_int64
     byte_stream_split_flba
     decompress_snappy decompress_gzip decompress_brotli decompress_lz4 decompress_zstd decompress_lz4_raw)
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then TARGETS=("${ALL[@]}"); fi

if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
    -DLAKERUN_SANITIZE=address,undefined -DLAKERUN_BUILD_FUZZERS=ON \
    -DLAKERUN_BUILD_TESTS=OFF -DLAKERUN_BUILD_BENCHMARKS=OFF -DLAKERUN_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$BUILD" -j "$JOBS" --target $(printf 'fuzz_parquet_%s ' "${TARGETS[@]}") >/dev/null

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
printf '%-28s %12s %10s %8s %8s\n' target executions exec/s corpus crashes
total_crashes=0
for t in "${TARGETS[@]}"; do
  instance="${LAKERUN_FUZZ_INSTANCE:+.$LAKERUN_FUZZ_INSTANCE}"
  work="$OUT/corpus/$t"; crashes="$OUT/crashes/$t"; log="$OUT/logs/$t$instance.log"
  mkdir -p "$work" "$crashes" "$(dirname "$log")"
  started="$OUT/.started-$t$instance"; touch "$started"  # crash files of earlier runs do not count again
  began=$SECONDS
  set +e
  # -fork would survive crashes, but one process gives exact exec counts; timeout bounds a wedged run.
  timeout --kill-after=30 $((SECS + 120)) "$BUILD/fuzz/parquet/fuzz_parquet_$t" \
    -max_total_time="$SECS" -timeout="${LAKERUN_FUZZ_TIMEOUT:-10}" -rss_limit_mb="${LAKERUN_FUZZ_RSS_MB:-2048}" \
    -max_len="${LAKERUN_FUZZ_MAX_LEN:-65536}" -runs="${LAKERUN_FUZZ_RUNS:--1}" -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$work" "$ROOT/fuzz/parquet/corpus/$t" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  n_crash=0
  not_reproduced=0
  while IFS= read -r artifact; do
    case "$(basename "$artifact")" in
      timeout-*)
        # Replayed alone, with the same limit: a real hang hangs again.
        if timeout "${LAKERUN_FUZZ_TIMEOUT:-10}" "$BUILD/fuzz/parquet/fuzz_parquet_$t" "$artifact" >/dev/null 2>&1; then
          not_reproduced=$((not_reproduced + 1))
          mv "$artifact" "$crashes/not-reproduced-$(basename "$artifact")"
        else
          n_crash=$((n_crash + 1))
        fi ;;
      crash-*|leak-*|oom-*) n_crash=$((n_crash + 1)) ;;
    esac
  done < <(find "$crashes" -type f -newer "$started")
  if [[ $rc -ne 0 && $n_crash -eq 0 && $not_reproduced -eq 0 ]]; then n_crash="rc=$rc"; fi
  printf '%-28s %12s %10s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$(ls "$work" | wc -l)" "$n_crash"
  if ((not_reproduced > 0)); then
    echo "    $not_reproduced timeout(s) did not reproduce when replayed alone (the fuzzer was starved or stopped)"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo -)" \
    "$t" "${execs:-0}" "$((SECONDS - began))" "$n_crash" >>"$OUT/ledger.tsv"
  if [[ "$n_crash" != 0 ]]; then
    total_crashes=$((total_crashes + 1))
    grep -m1 -A12 'ERROR: \|runtime error\|terminate called\|deadly signal' "$log" | sed 's/^/    /' || true
  fi
done
echo "logs: $OUT/logs  crashes: $OUT/crashes"
((total_crashes == 0))
