#!/usr/bin/env bash
# Ingest benchmark (on demand, not in CI): builds the collector and the driver in Release
# (build/release) and runs N = 100, 500, 1000 concurrent agents, each uploading signed
# 64 KiB snapshots over fresh mutual-TLS connections. Extra arguments go to the driver,
# e.g. --agents 1000 --rounds 5.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh none
BUILD=build/release
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIBC_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$BUILD" -j1 --target ibcollect-collector collector_ingest_bench
exec "$BUILD/collector/collector_ingest_bench" --collector "$BUILD/collector/ibcollect-collector" \
  --make-pki certs/make-pki "$@"
