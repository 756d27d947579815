#!/usr/bin/env bash
# scripts/test_torch2.sh [CHROOT_DIR] — build lakerun against libtorch 2.6.0 and run the whole test suite on it.
#
# Debian 12 ships libtorch 1.13; trixie (Debian 13) ships libtorch 2.6.0, whose libraries need glibc 2.38 and GCC 14's
# libstdc++, so they cannot be linked on Debian 12 (scripts/check_torch2.sh compiles against them only). This script
# runs the suite on a Debian trixie userland instead:
#   1. debootstrap a minimal trixie into CHROOT_DIR (default /var/tmp/lakerun-trixie; kept for the next run);
#   2. bind-mount /proc, /sys, /dev and /dev/pts into it (unmounted on exit), share the host's network (loopback),
#      its local certificate authorities and its proxy variables;
#   3. copy the working tree's files that git tracks or would track (uncommitted changes included, modification
#      times kept) to CHROOT_DIR/root/lakerun, replacing everything there but the build directory;
#   4. run scripts/test.sh there: scripts/setup.sh installs trixie's packages (libtorch-dev 2.6, libgloo-dev, GCC 14,
#      python3-torch 2.6, ...) with apt-get, then the build and every ctest test, against libtorch 2.6.
# The build directory (CHROOT_DIR/root/lakerun/build) and ccache (CHROOT_DIR/root/.ccache) persist between runs, so
# a second run rebuilds only what changed.
#
# Needs root (debootstrap, chroot, mount) and Debian's archive (about 1.5 GB of packages on the first run). A first
# run takes about 40 minutes on 2 cores, most of it the cold build. Exits with the test suite's status.
# Environment: TRIXIE_MIRROR (default http://deb.debian.org/debian); CTEST_ARGS and LAKERUN_TEST_JOBS are passed on.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHROOT="${1:-/var/tmp/lakerun-trixie}"
MIRROR="${TRIXIE_MIRROR:-http://deb.debian.org/debian}"
log() { echo "[test_torch2] $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
  log "needs root (debootstrap, chroot and bind mounts); run it with sudo"
  exit 2
fi
if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
fi

if [[ ! -x "$CHROOT/usr/bin/apt-get" ]]; then
  log "debootstrap trixie into $CHROOT from $MIRROR"
  debootstrap --variant=minbase --include=ca-certificates trixie "$CHROOT" "$MIRROR" >&2
fi
if ! grep -q '^VERSION_CODENAME=trixie' "$CHROOT/etc/os-release" 2>/dev/null; then
  log "$CHROOT is not a Debian trixie tree; give an empty or a trixie directory"
  exit 2
fi

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
}
trap cleanup EXIT
for m in proc sys dev dev/pts; do
  mkdir -p "$CHROOT/$m"
  if ! mountpoint -q "$CHROOT/$m"; then
    mount --bind "/$m" "$CHROOT/$m"
    mounted+=("$CHROOT/$m")
  fi
done
cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
# The host's local certificate authorities (a TLS-inspecting proxy's, say) for setup.sh's npm step.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$CHROOT/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$CHROOT/usr/local/share/ca-certificates/"
  chroot "$CHROOT" update-ca-certificates >/dev/null 2>&1 || log "update-ca-certificates failed inside $CHROOT"
fi
passed_env=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY NODE_EXTRA_CA_CERTS SSL_CERT_FILE; do
  if [[ -n "${!v:-}" ]]; then passed_env+=("$v=${!v}"); fi
done

log "copying the working tree of $ROOT"
mkdir -p "$CHROOT/root/lakerun"
find "$CHROOT/root/lakerun" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
  (cd "$ROOT" && tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) |
  tar -xf - -C "$CHROOT/root/lakerun"

log "scripts/test.sh inside trixie"
status=0
chroot "$CHROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 CTEST_ARGS="${CTEST_ARGS:-}" LAKERUN_TEST_JOBS="${LAKERUN_TEST_JOBS:-2}" "${passed_env[@]}" \
  /bin/bash -c 'cd /root/lakerun && s=0 && { bash scripts/test.sh || s=$?; }
                dpkg-query -W -f="[test_torch2] ran on libtorch-dev \${Version}\n" libtorch-dev >&2
                exit $s' || status=$?
log "exit status $status"
exit "$status"
