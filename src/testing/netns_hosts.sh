# netns_hosts.sh — sourced by the tests and benchmarks that emulate hosts with network namespaces (src/dist/testdata,
# src/launch/testdata, bench/launch/multinode.sh). After `netns_hosts TAG NET N`:
#   - namespaces ${TAG}h1 .. ${TAG}hN are hosts, each with eth0 = NET.i/24, all on one bridge in ${TAG}sw;
#   - HOSTS holds their names, NET the network (three octets), WORK a temporary directory, and PIDS the processes
#     the test starts (appended by it);
#   - on exit every process in PIDS and every process left in the namespaces is killed, the namespaces are deleted
#     and WORK is removed.
# `netns_host_names` then gives each host a name of its own (below).
# Where namespaces cannot be made (not root, no ip(8), no CAP_SYS_ADMIN) the test exits 77: skipped, saying why.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

netns_cleanup() {
  local pid ns
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2> /dev/null; done
  for ns in "${HOSTS[@]}"; do
    for pid in $(ip netns pids "$ns" 2> /dev/null); do kill -9 "$pid" 2> /dev/null; done
  done
  wait 2> /dev/null
  for ns in "${HOSTS[@]}" "$SW"; do ip netns del "$ns" 2> /dev/null; done
  for ns in "${NAMED[@]}"; do rm -rf "/etc/netns/$ns"; done
  [[ -n $ETC_NETNS_MADE ]] && rmdir /etc/netns 2> /dev/null
  rm -rf "$WORK"
}

netns_hosts() {
  local tag=$1 count=$3 i ns
  NET=$2
  [[ $(id -u) -eq 0 ]] || skip "creating network namespaces needs root"
  command -v ip > /dev/null || skip "ip(8) is not installed"
  SW="${tag}sw"
  HOSTS=()
  for ((i = 1; i <= count; i++)); do HOSTS+=("${tag}h$i"); done
  WORK=$(mktemp -d)
  PIDS=()
  NAMED=()
  ETC_NETNS_MADE=
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
    ip -n "$ns" addr add "$NET.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
}

# netns_host_names: each host gets its namespace's name as its own, and every host resolves every name to its
# address (/etc/netns/NS/hosts, which `ip netns exec` mounts over /etc/hosts; removed on exit). Run a program under
# its host's name with netns_on_host.sh: for programs that find their own address through the host name, as
# torchrun's c10d rendezvous does (which node hosts the store, the MASTER_ADDR it gives its workers).
netns_host_names() {
  local i ns
  [[ -d /etc/netns ]] || { mkdir /etc/netns && ETC_NETNS_MADE=1; } || skip "cannot create /etc/netns"
  for ns in "${HOSTS[@]}"; do
    mkdir "/etc/netns/$ns" || fail "mkdir /etc/netns/$ns"
    NAMED+=("$ns")
    {
      echo "127.0.0.1 localhost"
      for ((i = 1; i <= ${#HOSTS[@]}; i++)); do echo "$NET.$i ${HOSTS[$((i - 1))]}"; done
    } > "/etc/netns/$ns/hosts"
  done
}
