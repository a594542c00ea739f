#!/usr/bin/env bash
# Installs every Debian package ibcollect needs (build, tests, integration, benchmarks).
# Idempotent: when every package is already installed it returns in well under a second
# without touching apt. Needs root (or sudo) only when something is missing.
set -euo pipefail

PACKAGES=(
  # toolchain
  cmake ninja-build ccache g++ clang-14 lld pkg-config clang-format-14 git
  # libraries (DESIGN §2)
  libprotobuf-dev protobuf-compiler libasio-dev libssl-dev openssl librocksdb-dev libzstd-dev
  qt6-base-dev qt6-charts-dev libgl-dev
  libibverbs-dev libibumad-dev
  libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  # sanitizer and fuzzer runtimes for clang
  libclang-rt-14-dev
  # integration tests: a real Slurm cluster on one machine, network tools
  slurm-wlm slurmctld slurmd slurm-client munge iproute2 util-linux procps ethtool
  # GUI tests and screenshots
  xvfb xauth
  # benchmarks (run on demand): the peer we compare against, and timers
  prometheus-node-exporter hyperfine time python3
)

# One dpkg-query for all packages keeps the no-op case fast.
missing=()
# dpkg-query exits 1 when any package is unknown to dpkg (the fresh-machine case), so its
# status must not end the script under `set -e -o pipefail`.
installed=$({ dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${PACKAGES[@]}" 2>/dev/null || true; } |
  awk '$2 ~ /^ii/ {print $1}')
for p in "${PACKAGES[@]}"; do
  if ! grep -qx -- "$p" <<<"$installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
# Package post-install scripts must not start services (slurm, munge, node-exporter):
# tests start their own daemons on private ports. policy-rc.d exit 101 = "not allowed".
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  made_policy=1
fi
cleanup() { if [ "$made_policy" = 1 ]; then $SUDO rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
