#!/usr/bin/env bash
# Checks the portable programs of each build directory (docs/operations.md, "Supported images")
# from their ELF headers (readelf reads any architecture):
#   - glibc symbol versions: none above GLIBC_2.31 (Debian 11, Ubuntu 20.04) or the build
#     fails; those above GLIBC_2.28 (RHEL 8) are listed with the symbols that need them
#   - shared libraries: glibc's only (libc, libm, libpthread, libdl, librt, the loader)
#   - hardening: PIE (ELF type DYN), BIND_NOW, a GNU_RELRO segment, FORTIFY (__*_chk symbols),
#     stack protector (__stack_chk_fail)
#   - stripped sizes: ibcollect <= 12 MB, ibcollect-support <= 16 MB
# Writes BUILD_DIR/glibc-floor: the highest glibc version either program needs (the .deb's
# `Depends: libc6 (>= ...)`, packaging/portable.cmake).
#   scripts/check-portable.sh BUILD_DIR...   (prints what it found; exit 1 on a failure)
set -euo pipefail
FLOOR=2.31
AIM=2.28
declare -A MAX_MB=([ibcollect]=12 [ibcollect-support]=16)
failed=0

fail() {
  echo "  FAIL: $*" >&2
  failed=1
}

# version_above A B: A > B as versions.
version_above() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$1" ] && [ "$1" != "$2" ]; }

check_versions() { # FILE FLOOR_FILE
  local file=$1 versions highest v
  versions=$(readelf -W -V "$file" | grep -o 'Name: GLIBC_[0-9.]*' | sed 's/Name: GLIBC_//' | sort -uV)
  highest=$(tail -1 <<<"$versions")
  echo "  glibc versions: $(tr '\n' ' ' <<<"$versions")(highest $highest)"
  echo "$highest" >>"$2"
  for v in $versions; do
    if version_above "$v" "$AIM"; then
      echo "  above GLIBC_$AIM: GLIBC_$v:" \
        "$(readelf -W --dyn-syms "$file" | awk -v v="@GLIBC_$v" 'index($8, v) {print $8}' | tr '\n' ' ')"
    fi
    if version_above "$v" "$FLOOR"; then fail "$file needs GLIBC_$v (the floor is GLIBC_$FLOOR)"; fi
  done
}

check_needed() { # FILE
  local lib
  for lib in $(readelf -W -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case "$lib" in
      libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-*.so.*) ;;
      *) fail "$1 needs $lib (only glibc may be shared)" ;;
    esac
  done
}

check_hardening() { # FILE
  local file=$1 dynamic symbols
  readelf -W -h "$file" | grep -q 'Type: *DYN' || fail "$file is not PIE (ELF type is not DYN)"
  dynamic=$(readelf -W -d "$file")
  grep -Eq '\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' <<<"$dynamic" || fail "$file has no BIND_NOW"
  readelf -W -l "$file" | grep -q GNU_RELRO || fail "$file has no GNU_RELRO segment"
  symbols=$(readelf -W --dyn-syms "$file")
  grep -q '__[a-z_]*_chk@' <<<"$symbols" || fail "$file calls no __*_chk function (FORTIFY)"
  grep -q '__stack_chk_fail@' <<<"$symbols" || fail "$file has no stack protector"
  readelf -W -S "$file" | grep -q '\.symtab' && fail "$file is not stripped"
  echo "  hardening: PIE, BIND_NOW, GNU_RELRO, FORTIFY ($(grep -o '__[a-z_]*_chk@' <<<"$symbols" |
    sort -u | wc -l) *_chk functions), stack protector, stripped"
}

for build in "$@"; do
  rm -f "$build/glibc-floor.tmp"
  for path in agent/ibcollect agent/ibcollect-support; do
    program=$(basename "$path")
    file=$build/$path
    [ -f "$file" ] || { fail "$file is missing"; continue; }
    size=$(stat -c %s "$file")
    echo "$file: $(readelf -W -h "$file" | sed -n 's/ *Machine: *//p'), $((size / 1024)) KiB"
    [ "$size" -le $((MAX_MB[$program] * 1024 * 1024)) ] ||
      fail "$file is $((size / 1024)) KiB, over ${MAX_MB[$program]} MB"
    check_versions "$file" "$build/glibc-floor.tmp"
    check_needed "$file"
    check_hardening "$file"
  done
  if [ -f "$build/glibc-floor.tmp" ]; then
    sort -V "$build/glibc-floor.tmp" | tail -1 >"$build/glibc-floor"
    rm "$build/glibc-floor.tmp"
  fi
done
exit $failed
