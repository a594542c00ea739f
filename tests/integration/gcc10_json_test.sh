#!/usr/bin/env bash
# core's JSON pin test and number tests built as the portable programs are (Debian 11's GCC 10,
# whose libstdc++ lacks floating-point std::from_chars/std::to_chars, so core uses the C
# library's conversions: docs/operations.md "Supported images"), run in the Debian 11 root.
#   tests/integration/gcc10_json_test.sh CACHE PORTABLE_X86_64_BUILD
# CACHE is what scripts/portable-deps.sh printed. GoogleTest and nlohmann-json are compiled
# from Debian 12's sources (libgtest-dev, nlohmann-json3-dev: sources and headers only).
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=$1
BUILD=$2
W=$(mktemp -d "$CACHE/root-amd64/tmp/ibc-gcc10.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/include"
ln -s /usr/include/nlohmann "$W/include/nlohmann"
G=/usr/src/googletest
deps=$CACHE/deps/x86_64
nice -n 19 "$CACHE/toolchain/x86_64/c++" -std=c++2a -O1 -pthread -isystem "$W/include" \
  -isystem "$deps/include" -I$G/googletest/include -I$G/googletest -I$G/googlemock/include \
  -I$G/googlemock -Icore/include -I"$BUILD/proto/gen" $G/googletest/src/gtest-all.cc \
  $G/googlemock/src/gmock-all.cc $G/googletest/src/gtest_main.cc tests/unit/core/json_test.cpp \
  tests/unit/core/text_test.cpp "$BUILD/core/libibc_core.a" "$BUILD/proto/libibc_proto.a" \
  "$deps/lib/libprotobuf.a" "$deps/lib/libcrypto.a" -ldl -static-libstdc++ -static-libgcc \
  -o "$W/json_test"
chroot "$CACHE/root-amd64" "${W#"$CACHE/root-amd64"}/json_test"
