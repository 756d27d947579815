#!/usr/bin/env bash
# scripts/test_zero_cuda.sh [BUILD_DIR] — build lakerun against an installed CUDA PyTorch (scripts/test_cuda.sh does
# the build, with the same variables: PYTHON, LAKERUN_DEPS_PREFIX, CUDA_HOME) and run the sharded data parallel
# (ZeRO levels 1 to 3) tests on this machine, then bench_dist_sharded.
#
# One GPU holds one NCCL rank, so the GPU part is a one-rank NCCL group: ShardedNcclTest runs every NCCL call that
# sharding makes (_reduce_scatter_base, _allgather_base) on CUDA tensors, trains a CUDA model under every level
# against a plain loop, and trains a transformer-style model under level 3 with bf16 units and autocast, printing its
# peak GPU memory against the unwrapped model's. The multi-rank tests (2 and 3 ranks, equivalence with DDP, checkpoints, the Trainer's
# strategies) run as threads over Gloo on the CPU, as the other multi-rank tests do there; they now run against the
# CUDA PyTorch's libtorch and its CPU kernels.
#
#   LAKERUN_ZERO_BENCH=0   skip the benchmark (CPU, 2 ranks on this host, about half a minute)
#   CTEST_ARGS             added after this script's test selection
#
# Exits with ctest's status (the benchmark's failure, if any, is reported but does not change it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build-cuda}"
log() { echo "[test_zero_cuda] $*" >&2; }

# gtest names of the sharded data parallel tests, their DDP reference, and the plain NCCL check (no glob characters:
# test_cuda.sh expands CTEST_ARGS unquoted).
TESTS='^(ShardLayoutTest|Worlds/ShardCollectivesTest|OptimizerStateTest|ShardedDataParallelTest'
TESTS+='|Transports/ShardedTransportTest|Cases/ShardedEquivalenceTest|ShardedCheckpointTest'
TESTS+='|Optimizers/ShardedCheckpointTest|ShardedNcclTest|LevelThreeTest|WrapPolicyTest|Worlds/LevelsOnATransformerTest'
TESTS+='|Optimizers/ShardedReshardTest|ShardedReshardLevel3Test|ShardedCheckpointFilesTest|ShardedCheckpointRefusalTest'
TESTS+='|StrategyTest|TrainerStrategyTest|DdpTest|WorldsAndBuckets/DdpEquivalenceTest|NcclBackendTest)\.'

rc=0
CTEST_ARGS="-R $TESTS ${CTEST_ARGS:-}" bash "$ROOT/scripts/test_cuda.sh" "$BUILD_DIR" || rc=$?
log "ctest exit $rc; the GPU part is ShardedNcclTest (a skip there means no GPU or no NCCL in this libtorch)"

if [[ "${LAKERUN_ZERO_BENCH:-1}" != 0 ]]; then
  bench="$BUILD_DIR/bench/dist/bench_dist_sharded"
  if [[ -x "$bench" ]]; then
    "$bench" --steps 150 || log "bench_dist_sharded failed (exit $?)"
  else
    log "no $bench: the build has no benchmarks"
  fi
fi
exit $rc
