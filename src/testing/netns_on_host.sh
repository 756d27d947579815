#!/bin/sh
# netns_on_host.sh HOST COMMAND [ARGS...] — COMMAND on an emulated host of netns_hosts.sh: in network namespace HOST,
# with HOST as its host name (a UTS namespace of its own; netns_host_names makes every host resolve it). Execs all
# the way, so the caller's pid is COMMAND's.
[ $# -ge 2 ] || { echo "usage: netns_on_host.sh HOST COMMAND [ARGS...]" >&2; exit 2; }
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
