#!/usr/bin/env bash
# scripts/check_deb.sh DEB [CHROOT_DIR] — the Debian package on a fresh Debian 12, as a user installs it:
#   1. debootstrap a minimal bookworm into CHROOT_DIR (default /var/tmp/lakerun-deb-check; removed at the end);
#   2. `apt-get install ./DEB` there (the package's Depends bring libtorch and the rest), then `lakerun --help` and
#      `lakerun --version`;
#   3. install cmake and g++, build tests/install/consumer with find_package(lakerun) (nothing else on its paths),
#      and run it on 2 ranks under `lakerun launch`, directly and through the consumer's ctest test (lakerun::cli).
# Needs root (debootstrap, chroot, bind mounts) and Debian's archive (about 250 MB of packages). About 4 minutes.
set -euo pipefail
DEB="$(realpath "${1:?usage: check_deb.sh DEB [CHROOT_DIR]}")"
CHROOT="${2:-/var/tmp/lakerun-deb-check}"
MIRROR="${BOOKWORM_MIRROR:-http://deb.debian.org/debian}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "[check_deb] $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
  log "needs root (debootstrap, chroot and bind mounts); run it with sudo"
  exit 2
fi
if [[ -e $CHROOT ]]; then
  log "$CHROOT exists; give a path that does not (it is created and removed)"
  exit 2
fi
if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
fi

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
  rm -rf --one-file-system "$CHROOT"
}
trap cleanup EXIT

log "debootstrap bookworm into $CHROOT"
timeout 1200 debootstrap --variant=minbase bookworm "$CHROOT" "$MIRROR" >/dev/null
for m in proc sys dev dev/pts; do
  mount --bind "/$m" "$CHROOT/$m"
  mounted+=("$CHROOT/$m")
done
cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
mkdir -p "$CHROOT/root/check"
cp "$DEB" "$CHROOT/root/check/"
cp -r "$ROOT/tests/install/consumer" "$CHROOT/root/check/consumer"

cat >"$CHROOT/root/check/run.sh" <<EOF
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
cd /root/check
apt-get update -q >/dev/null
start=\$(date +%s)
apt-get install -y -q --no-install-recommends ./$(basename "$DEB") >apt.log 2>&1 || { tail -30 apt.log; exit 1; }
echo "[check_deb] apt-get install ./$(basename "$DEB"): \$(( \$(date +%s) - start )) s; \$(grep -E 'newly installed' apt.log)"
lakerun --help >/dev/null && echo "[check_deb] lakerun --help: ok"
echo "[check_deb] lakerun --version: \$(lakerun --version)"
apt-get install -y -q --no-install-recommends cmake g++ make >tools.log 2>&1 || { tail -30 tools.log; exit 1; }
{ echo "id,x"; for i in \$(seq 1 12); do echo "\$i,\$i"; done; } >rows.csv
lakerun table import csv rows.csv table >/dev/null
cmake -S consumer -B build -DCMAKE_BUILD_TYPE=Release -DTABLE_SUM_ARGS="/root/check/table;x" >configure.log 2>&1 ||
  { cat configure.log; exit 1; }
grep -E "search order" configure.log || true
cmake --build build >build.log 2>&1 || { cat build.log; exit 1; }
timeout 120 lakerun launch -n 2 --timeout 90 -- build/table_sum table x
(cd build && timeout 180 ctest --output-on-failure)
EOF
log "installing the package, building and running the consumer inside the chroot"
timeout 1800 chroot "$CHROOT" bash /root/check/run.sh
log "ok"
