# netns_hosts.sh — sourced by the tests that emulate hosts with network namespaces (src/dist/testdata,
# src/launch/testdata). After `netns_hosts TAG NET N`:
#   - namespaces ${TAG}h1 .. ${TAG}hN are hosts, each with eth0 = NET.i/24, all on one bridge in ${TAG}sw;
#   - HOSTS holds their names, WORK a temporary directory, and PIDS the processes the test starts (appended by it);
#   - on exit every process in PIDS is killed, the namespaces are deleted and WORK is removed.
# Where namespaces cannot be made (not root, no ip(8), no CAP_SYS_ADMIN) the test exits 77: skipped, saying why.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

netns_cleanup() {
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2> /dev/null; done
  wait 2> /dev/null
  for ns in "${HOSTS[@]}" "$SW"; do ip netns del "$ns" 2> /dev/null; done
  rm -rf "$WORK"
}

netns_hosts() {
  local tag=$1 net=$2 count=$3 i ns
  [[ $(id -u) -eq 0 ]] || skip "creating network namespaces needs root"
  command -v ip > /dev/null || skip "ip(8) is not installed"
  SW="${tag}sw"
  HOSTS=()
  for ((i = 1; i <= count; i++)); do HOSTS+=("${tag}h$i"); done
  WORK=$(mktemp -d)
  PIDS=()
  trap netns_cleanup EXIT
  ip netns add "$SW" 2> /dev/null || skip "ip netns add failed (no CAP_SYS_ADMIN, or namespaces are disabled)"
  ip -n "$SW" link add br0 type bridge && ip -n "$SW" link set br0 up || skip "cannot create a bridge"
  for ((i = 1; i <= count; i++)); do
    ns=${HOSTS[$((i - 1))]}
    ip netns add "$ns" || fail "ip netns add $ns"
    ip -n "$ns" link set lo up
    ip -n "$ns" link add eth0 type veth peer name "p$i" netns "$SW" || skip "cannot create veth pairs"
    ip -n "$SW" link set "p$i" master br0
    ip -n "$SW" link set "p$i" up
    ip -n "$ns" addr add "$net.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
}
