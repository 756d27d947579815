#!/usr/bin/env bash
# netns_stranger_test.sh PROBE CLIENT — a 2-rank job across two emulated hosts (network namespaces), attacked from a
# third host that is not part of it.
#
# Rank 0 (dist_init_probe, torchrun's variables, LAKERUN_RDZV_SECRET) hosts the rendezvous store on host 1; from
# host 3 a raw c10d client forges the verdict key that would make every rank abort, a lakerun client with another
# secret and one with none try to write a key (rdzv_store_client_probe); then rank 1 starts on host 2. Passes when
# every stranger was refused, rank 0 logged each refusal with host 3's address, the job trained (sum=3) and no log
# shows the secret. Exits 77 (skipped) when namespaces cannot be made. The namespaces, named after this shell's pid,
# and every process are removed on exit; the addresses (10.231.0.x) exist only inside them.
set -uo pipefail
PROBE=${1:?usage: netns_stranger_test.sh PROBE CLIENT}
CLIENT=${2:?usage: netns_stranger_test.sh PROBE CLIENT}
source "$(dirname "$0")/../../testing/netns_hosts.sh"

NET=10.231.0
PORT=29500
SECRET="netns test secret $(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
netns_hosts "lrz$$" "$NET" 3

# A rank on host I: torchrun's variables and nothing inherited from the test's own environment.
rank() {
  local i=$1 rank=$2
  env -i PATH="$PATH" HOME="${HOME:-/root}" RANK="$rank" WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
    MASTER_ADDR="$NET.1" MASTER_PORT="$PORT" GLOO_SOCKET_IFNAME=eth0 LAKERUN_RDZV_SECRET="$SECRET" \
    LAKERUN_PROBE_TIMEOUT_MS=30000 timeout 60 ip netns exec "${HOSTS[$((i - 1))]}" "$PROBE" \
    > "$WORK/rank$rank.log" 2>&1 &
  PIDS+=($!)
}
# A stranger on host 3: [VAR=VALUE...] MODE HOST PORT KEY VALUE.
stranger() {
  local vars=()
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  timeout 30 ip netns exec "${HOSTS[2]}" env -i PATH="$PATH" "${vars[@]}" "$CLIENT" "$@"
}

rank 1 0
for _ in $(seq 100); do  # rank 0 listens within 10 s
  ip netns exec "${HOSTS[2]}" bash -c "exec 3<>/dev/tcp/$NET.1/$PORT" 2> /dev/null && break
  sleep 0.1
done
outcome() { "$@" > "$WORK/stranger.out" 2>&1; local rc=$?; cat "$WORK/stranger.out"; return $rc; }
outcome stranger c10d "$NET.1" "$PORT" lakerun/arrival_timeout "a stranger's text"
[[ $? -eq 20 ]] || fail "a raw c10d client from host 3 was not refused"
outcome stranger LAKERUN_RDZV_SECRET="another job's secret, long enough" lakerun "$NET.1" "$PORT" forged x
[[ $? -eq 20 ]] || fail "a client with another secret from host 3 was not refused"
outcome stranger lakerun "$NET.1" "$PORT" forged x
[[ $? -eq 20 ]] || fail "a client without a secret from host 3 was not refused"
rank 2 1

status=0
for pid in "${PIDS[@]}"; do wait "$pid" || status=$?; done
PIDS=()
cat "$WORK/rank0.log" "$WORK/rank1.log"
[[ $status -eq 0 ]] || fail "the job did not finish (exit status $status)"
for r in 0 1; do grep -q "sum=3" "$WORK/rank$r.log" || fail "rank $r did not all-reduce"; done
[[ $(grep -c "refused the connection from $NET.3:" "$WORK/rank0.log") -eq 3 ]] ||
  fail "rank 0 did not log three refusals naming host 3 ($NET.3)"
grep -q "stranger" "$WORK/rank0.log" "$WORK/rank1.log" && fail "a stranger's text reached a rank"
grep -qF "$SECRET" "$WORK/rank0.log" "$WORK/rank1.log" "$WORK/stranger.out" && fail "a log shows the secret"
echo "PASS: three strangers on host 3 refused; the job on hosts 1 and 2 finished"
