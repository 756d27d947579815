#!/usr/bin/env bash
# netns_multinode_test.sh LAUNCHER PROBE RANK [FASHION_MNIST_DDP] — `lakerun launch` across two emulated hosts
# (network namespaces), one node agent per host, two ranks per node.
#
# LAUNCHER is `lakerun launch` (launch_test_launcher), PROBE dist_init_probe (a real Gloo job: all-reduce, then DDP
# steps), RANK launch_test_rank (a rank that sleeps, fails or writes its pid on request), FASHION_MNIST_DDP the
# example (optional). Checks, each bounded:
#   1. a 2-node x 2-rank DDP job trains, and its parameters are bit-identical to a 4-rank run on one host; so does
#      one epoch of the Fashion-MNIST example on 2,000 rows, gradients through Gloo (its parameter checksum);
#   2. kill -9 of rank 3 (node 1, host 2): both agents exit naming node 1, rank 3 and its pid, within 10 s;
#   3. kill -9 of node 1's agent: node 0's agent names it through its heartbeat within --heartbeat-timeout + 5 s;
#   4. host 2 cut off the network (its link down): each side names the other within --heartbeat-timeout + 5 s;
#   5. --max-restarts 1 after rank 3 fails in attempt 0: both nodes restart together and complete (the agents given no
#      --node-rank: host 1's listens at the store's address and is node 0, host 2's joins as node 1);
#   6. a second job's node 0 on the same port, and a node of another --rdzv-id, are refused; the job completes;
#   7. SIGSTOP of rank 3 (node 1) in the middle of DDP steps: both agents name it as hanging the job, with its state
#      and the collective it last entered, within --hang-timeout + 10 s (+ gdb's bound for its stacks).
# Exits 77 (skipped) when namespaces cannot be made. The namespaces, named after this shell's pid, and every
# process are removed on exit; the addresses (10.232.0.x) exist only inside them.
set -uo pipefail
LAUNCHER=${1:?usage: netns_multinode_test.sh LAUNCHER PROBE RANK}
PROBE=${2:?usage: netns_multinode_test.sh LAUNCHER PROBE RANK}
RANK_PROGRAM=${3:?usage: netns_multinode_test.sh LAUNCHER PROBE RANK}
FASHION_MNIST=${4:-}
source "$(dirname "$0")/../../testing/netns_hosts.sh"

NET=10.232.0
PORT=29500
netns_hosts "lmn$$" "$NET" 2
printf 'multinode netns test secret %s\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$WORK/secret"
chmod 600 "$WORK/secret"

now() { date +%s.%N; }
elapsed() { echo "$(now) - $1" | bc; }
# agent NODE OUT [LAUNCH FLAGS...] -- PROGRAM [ARGS...]: node NODE's agent on host NODE+1, in the background; its
# pid (the launcher's own: ip netns exec execs it) in AGENT. Nothing of the test's environment but PATH and HOME.
# With NODE_RANKS=no the agents get no --node-rank: the rendezvous numbers them.
agent() {
  local node=$1 out=$2 rank_flags=(--node-rank "$1")
  shift 2
  [[ ${NODE_RANKS:-yes} == no ]] && rank_flags=()
  env -i PATH="$PATH" HOME="${HOME:-/root}" GLOO_SOCKET_IFNAME=eth0 LAKERUN_PROBE_TIMEOUT_MS=30000 \
    ip netns exec "${HOSTS[$node]}" "$LAUNCHER" --nnodes 2 "${rank_flags[@]}" --master-addr "$NET.1" \
    --master-port "$PORT" --rdzv-secret-file "$WORK/secret" --join-timeout 30 -n 2 "$@" > "$WORK/$out" 2>&1 &
  AGENT=$!
  PIDS+=("$AGENT")
}
# finish PID SECONDS: waits for PID (bounded; killed past it) and sets RC to its exit status (124: it did not end).
finish() {
  local pid=$1 deadline=$(($(date +%s) + $2))
  while kill -0 "$pid" 2> /dev/null && [[ $(date +%s) -lt $deadline ]]; do sleep 0.05; done
  if kill -0 "$pid" 2> /dev/null; then
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    RC=124
  else
    wait "$pid"
    RC=$?
  fi
}
# wait_for FILE TEXT SECONDS: until FILE contains TEXT.
wait_for() {
  local deadline=$(($(date +%s) + $3))
  until grep -qF -- "$2" "$1" 2> /dev/null; do
    [[ $(date +%s) -lt $deadline ]] || fail "'$2' did not appear in $1 within $3 s"
    sleep 0.05
  done
}
show() { for f in "$@"; do echo "--- $f"; cat "$WORK/$f"; done; }

echo "== 1. a 2-node x 2-rank DDP job, against 4 ranks on one host"
export_probe=(-- env LAKERUN_PROBE_DDP_STEPS=20 LAKERUN_PROBE_DDP_SHM=0 "$PROBE")
agent 0 ddp0.log "${export_probe[@]}"; a0=$AGENT
agent 1 ddp1.log "${export_probe[@]}"; a1=$AGENT
finish "$a0" 120; rc0=$RC
finish "$a1" 120; rc1=$RC
show ddp0.log ddp1.log
[[ $rc0 -eq 0 && $rc1 -eq 0 ]] || fail "the 2-node job failed (exit codes $rc0, $rc1)"
for r in 0 1 2 3; do
  grep -qE "^\[rank$r\] probe launcher=lakerun rank=$r world=4 .* sum=10$" "$WORK/ddp0.log" "$WORK/ddp1.log" ||
    fail "rank $r did not all-reduce across both hosts"
done
env -i PATH="$PATH" HOME="${HOME:-/root}" LAKERUN_PROBE_TIMEOUT_MS=30000 timeout 120 \
  ip netns exec "${HOSTS[0]}" "$LAUNCHER" -n 4 "${export_probe[@]}" > "$WORK/one.log" 2>&1 ||
  { show one.log; fail "the 4-rank run on one host failed"; }
multi=$(grep -ho 'checksum=.*' "$WORK/ddp0.log" "$WORK/ddp1.log" | sort -u)
single=$(grep -ho 'checksum=.*' "$WORK/one.log" | sort -u)
echo "2 nodes: $multi; 1 host: $single"
[[ $(echo "$multi" | wc -l) -eq 1 && -n $multi && $multi == "$single" ]] ||
  fail "the parameters after 20 DDP steps differ: 2 nodes '$multi', one host '$single'"

if [[ -n $FASHION_MNIST ]]; then
  echo "== 1b. one epoch of the Fashion-MNIST example, 2 nodes x 2 ranks against 4 ranks on one host"
  fm() { echo -- "$FASHION_MNIST" --epochs 1 --train-limit 2000 --test-limit 500 --gradients-via-gloo \
    --tracking-uri "$WORK/mlruns-$1" \
    --metrics-file "$WORK/fm-$1.{rank}.jsonl"; }
  # shellcheck disable=SC2046
  agent 0 fm0.log $(fm nodes); a0=$AGENT
  # shellcheck disable=SC2046
  agent 1 fm1.log $(fm nodes); a1=$AGENT
  finish "$a0" 180; rc0=$RC
  finish "$a1" 180; rc1=$RC
  [[ $rc0 -eq 0 && $rc1 -eq 0 ]] || { show fm0.log fm1.log; fail "the 2-node example failed (exit codes $rc0, $rc1)"; }
  # shellcheck disable=SC2046
  env -i PATH="$PATH" HOME="${HOME:-/root}" timeout 180 ip netns exec "${HOSTS[0]}" "$LAUNCHER" -n 4 $(fm one) \
    > "$WORK/fm-one.log" 2>&1 || { show fm-one.log; fail "the 4-rank example on one host failed"; }
  result() { grep -ho '"type":"final".*' "$WORK"/fm-"$1".*.jsonl | sort -u; }
  multi=$(result nodes)
  single=$(result one)
  echo "2 nodes: $multi"
  echo "1 host:  $single"
  [[ -n $multi && $multi == "$single" ]] || fail "one epoch of the example differs between 2 nodes and one host"
fi

echo "== 2. kill -9 of rank 3 on node 1"
ranks=(-- "$RANK_PROGRAM" --pidfile "$WORK" --sleep 60)
agent 0 kill0.log "${ranks[@]}"; a0=$AGENT
agent 1 kill1.log "${ranks[@]}"; a1=$AGENT
for r in 0 1 2 3; do wait_for "$WORK/rank$r.attempt0.pid" "" 30; done
sleep 0.2
victim=$(head -1 "$WORK/rank3.attempt0.pid")
kill -9 "$victim"
t0=$(now)
finish "$a0" 30; rc0=$RC; t_a0=$(elapsed "$t0")
finish "$a1" 30; rc1=$RC; t_all=$(elapsed "$t0")
show kill0.log kill1.log
echo "rank 3 (pid $victim) killed: node 0's agent exited after ${t_a0} s, both after ${t_all} s"
for f in kill0.log kill1.log; do
  grep -qF "error: node 1 (" "$WORK/$f" && grep -qF "rank 3 (pid $victim) was killed by signal 9" "$WORK/$f" ||
    fail "$f does not name node 1, rank 3 and pid $victim"
done
[[ $rc0 -eq 137 && $rc1 -eq 137 ]] || fail "exit codes $rc0, $rc1 (expected 137 on both nodes)"
(($(echo "$t_all < 10" | bc))) || fail "the agents took ${t_all} s to stop"
rm -f "$WORK"/rank*.pid

echo "== 3. kill -9 of node 1's agent"
agent 0 lost0.log --heartbeat-timeout 5 "${ranks[@]}"; a0=$AGENT
agent 1 lost1.log --heartbeat-timeout 5 "${ranks[@]}"; a1=$AGENT
for r in 0 1 2 3; do wait_for "$WORK/rank$r.attempt0.pid" "" 30; done
kill -9 "$a1"
t0=$(now)
finish "$a0" 30; rc0=$RC; t_lost=$(elapsed "$t0")
finish "$a1" 5
show lost0.log
echo "node 1's agent (pid $a1) killed: node 0's agent named it after ${t_lost} s (--heartbeat-timeout 5)"
grep -qF "error: node 1 (" "$WORK/lost0.log" && grep -qF "'s agent (pid $a1) is lost: no heartbeat" "$WORK/lost0.log" ||
  fail "node 0 did not name node 1's agent (pid $a1) as lost"
[[ $rc0 -eq 1 ]] || fail "node 0 exited $rc0 (expected 1)"
(($(echo "$t_lost < 10" | bc))) || fail "node 0 took ${t_lost} s to find node 1 lost"
for r in 2 3; do
  pid=$(head -1 "$WORK/rank$r.attempt0.pid")
  for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
  kill -0 "$pid" 2> /dev/null && fail "rank $r (pid $pid) outlived its agent"
done
rm -f "$WORK"/rank*.pid

echo "== 4. host 2 cut off the network"
agent 0 cut0.log --heartbeat-timeout 5 "${ranks[@]}"; a0=$AGENT
agent 1 cut1.log --heartbeat-timeout 5 "${ranks[@]}"; a1=$AGENT
for r in 0 1 2 3; do wait_for "$WORK/rank$r.attempt0.pid" "" 30; done
ip -n "${HOSTS[1]}" link set eth0 down
t0=$(now)
finish "$a0" 30; rc0=$RC; t_cut0=$(elapsed "$t0")
finish "$a1" 90; rc1=$RC; t_cut1=$(elapsed "$t0")
ip -n "${HOSTS[1]}" link set eth0 up
show cut0.log cut1.log
echo "host 2 cut off: node 0 named node 1 after ${t_cut0} s, node 1 named node 0 after ${t_cut1} s"
grep -qF "error: node 1 (" "$WORK/cut0.log" || fail "node 0 did not name node 1"
grep -qF "error: node 0 (" "$WORK/cut1.log" || fail "node 1 did not name node 0"
[[ $rc0 -eq 1 && $rc1 -eq 1 ]] || fail "exit codes $rc0, $rc1 (expected 1 on both nodes)"
(($(echo "$t_cut0 < 10 && $t_cut1 < 10" | bc))) || fail "a side took more than 10 s to notice"
rm -f "$WORK"/rank*.pid

echo "== 5. --max-restarts 1, the nodes numbered by the rendezvous (no --node-rank)"
NODE_RANKS=no
agent 0 again0.log --max-restarts 1 -- "$RANK_PROGRAM" --fail-rank 3 --fail-attempt 0 --fail-how kill9 --sleep 1
a0=$AGENT
agent 1 again1.log --max-restarts 1 -- "$RANK_PROGRAM" --fail-rank 3 --fail-attempt 0 --fail-how kill9 --sleep 1
a1=$AGENT
finish "$a0" 60; rc0=$RC
finish "$a1" 60; rc1=$RC
show again0.log again1.log
[[ $rc0 -eq 0 && $rc1 -eq 0 ]] || fail "the restarted job failed (exit codes $rc0, $rc1)"
for f in again0.log again1.log; do
  grep -qF "restarting all 4 ranks of 2 nodes (restart 1 of 1) after: node 1 (" "$WORK/$f" ||
    fail "$f does not show the restart after node 1's failure"
done
grep -qF "[rank3]" "$WORK/again1.log" || fail "host 2's agent was not numbered node 1"
NODE_RANKS=yes

echo "== 6. a second job on the port; a node of another job"
agent 0 job0.log --rdzv-id job-a -- "$RANK_PROGRAM" --sleep 3; a0=$AGENT
for _ in $(seq 200); do
  ip netns exec "${HOSTS[1]}" bash -c "exec 3<>/dev/tcp/$NET.1/$PORT" 2> /dev/null && break
  sleep 0.05
done
agent 0 second.log --rdzv-id job-b -- "$RANK_PROGRAM"; finish "$AGENT" 30; rc_second=$RC
agent 1 other.log --rdzv-id job-b -- "$RANK_PROGRAM"; finish "$AGENT" 30; rc_other=$RC
agent 1 job1.log --rdzv-id job-a -- "$RANK_PROGRAM" --sleep 3; a1=$AGENT
finish "$a0" 60; rc0=$RC
finish "$a1" 60; rc1=$RC
show second.log other.log
[[ $rc_second -ne 0 ]] && grep -qF "node 0 cannot host the job's store" "$WORK/second.log" ||
  fail "a second node 0 on $NET.1:$PORT was not refused"
[[ $rc_other -ne 0 ]] && grep -qF "refusing to join another job: --rdzv-id 'job-b' here, 'job-a' there" \
  "$WORK/other.log" || fail "a node of another job was not refused"
[[ $rc0 -eq 0 && $rc1 -eq 0 ]] || { show job0.log job1.log; fail "the job failed after the refusals"; }

echo "== 7. SIGSTOP of rank 3 on node 1 in the middle of DDP training"
hung=(--hang-timeout 5 -- env LAKERUN_PROBE_DDP_STEPS=100000000 LAKERUN_PROBE_DDP_SHM=0 "$PROBE")
agent 0 hang0.log "${hung[@]}"; a0=$AGENT
agent 1 hang1.log "${hung[@]}"; a1=$AGENT
victim=""
for _ in $(seq 600); do
  for pid in $(pgrep -P "$a1"); do
    tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | grep -qx RANK=3 && victim=$pid
  done
  [[ -n $victim ]] && break
  sleep 0.05
done
[[ -n $victim ]] || { show hang0.log hang1.log; fail "rank 3 did not start on node 1"; }
sleep 4  # past the rendezvous, into the steps
kill -STOP "$victim"
t0=$(now)
wait_for "$WORK/hang0.log" "hangs the job" 30; t_named=$(elapsed "$t0")
finish "$a0" 60; rc0=$RC
finish "$a1" 60; rc1=$RC; t_all=$(elapsed "$t0")
show hang0.log hang1.log
echo "rank 3 (pid $victim) stopped: named on node 0 after ${t_named} s, both agents exited after ${t_all} s" \
  "(--hang-timeout 5; node 1 takes the stacks first)"
for f in hang0.log hang1.log; do
  grep -qF "error: node 1 (" "$WORK/$f" &&
    grep -qF "rank 3 (pid $victim) hangs the job: stopped (SIGSTOP or SIGTSTP), no progress for" "$WORK/$f" ||
    fail "$f does not name node 1, rank 3 and pid $victim as hanging the job"
done
grep -qF "stacks of rank 3 (pid $victim)" "$WORK/hang1.log" || fail "node 1 printed no stacks of rank 3"
[[ $rc0 -eq 124 && $rc1 -eq 124 ]] || fail "exit codes $rc0, $rc1 (expected 124 on both nodes)"
(($(echo "$t_named < 5 + 10" | bc))) || fail "node 0's agent took ${t_named} s to name rank 3 (hang timeout 5 s)"
(($(echo "$t_all < 5 + 10 + 15 + 10" | bc))) || fail "the agents took ${t_all} s to stop (hang timeout 5 s, gdb 15 s)"
PIDS=()
echo "PASS: a 2-node job across two hosts trains as one host does; failures, lost agents, hung ranks and strangers" \
  "are named"
