#!/bin/bash
# A model whose DDP state exceeds a per-rank memory limit trains under ZeRO-3: 4 ranks of a 20 M-parameter MLP with
# Adam, each rank's private memory capped (RLIMIT_DATA) at 12 bytes per parameter above its baseline. DDP needs about
# 21 there and must fail to allocate; ZeRO-3 needs about 9 and must train.
#   memory_limit_test.sh BENCH_DIST_SHARDED_MEMORY
set -u
bench="$1"
run() { timeout 300 "$bench" --millions 20 --ranks 4 --steps 2 --limit-bytes-per-param 12 --contenders "$1" 2>&1; }

ddp_out="$(run ddp)"; ddp_rc=$?
echo "$ddp_out" | grep -v '^frame #'
if [ "$ddp_rc" -eq 0 ] || ! grep -q "can't allocate memory" <<<"$ddp_out"; then
  echo "FAIL: DDP trained under the limit (exit $ddp_rc) or failed for another reason"; exit 1
fi
zero3_out="$(run zero3)"; zero3_rc=$?
echo "$zero3_out" | grep -v '^frame #'
if [ "$zero3_rc" -ne 0 ] || ! grep -q "^zero3 .* held after the steps" <<<"$zero3_out"; then
  echo "FAIL: ZeRO-3 did not train under the limit (exit $zero3_rc)"; exit 1
fi
echo "PASS: under 12 bytes/parameter per rank DDP fails to allocate and ZeRO-3 trains"
