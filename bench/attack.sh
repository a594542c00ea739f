#!/usr/bin/env bash
# Attack benchmark (on demand, not in CI; needs root for 10,050 sockets): builds the
# collector and the driver in Release (build/release) and prints honest agents' upload
# latency (p50/p99/max) with no attack and under each of issue 11's attacks 3-5 at the
# red team's strength. Extra arguments go to the driver, e.g. --samples 200.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ulimit -n "$(ulimit -Hn)"
run_collector_driver collector_attack_bench "$@"
