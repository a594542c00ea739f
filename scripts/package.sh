#!/usr/bin/env bash
# Builds the Debian packages ibcollect, ibcollect-support, ibcollect-collector and ibcollect-console
# (packaging/) and prints the directory that holds the four .deb files (the only line on
# stdout; progress goes to stderr).
#   scripts/package.sh
# Installs what is missing and builds build/package through `scripts/setup.sh package`
# (RelWithDebInfo with Debian's hardening flags, ccache, only the four programs and their
# man pages). Idempotent: when no program, man page or packaging file changed since the
# .deb files were made it rebuilds nothing and returns in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh package >&2
BUILD=build/package
OUT=$PWD/$BUILD/deb
PACKAGES=(ibcollect ibcollect-support ibcollect-collector ibcollect-console)

# Everything a package is made of; a change in any of them remakes the packages.
inputs=("$BUILD/agent/ibcollect" "$BUILD/agent/ibcollect-support" "$BUILD/collector/ibcollect-collector"
  "$BUILD/console/ibcollect-console" "$BUILD/packaging/man" "$BUILD/packaging/completions"
  "$BUILD/CPackConfig.cmake"
  "$BUILD/packaging/changelog.Debian.gz" packaging)
up_to_date=1
for p in "${PACKAGES[@]}"; do
  debs=("$OUT/${p}"_*.deb)
  if [ ! -f "${debs[0]}" ] || [ -n "$(find "${inputs[@]}" -newer "${debs[0]}" -print -quit)" ]; then
    up_to_date=0
  fi
done

if [ "$up_to_date" = 0 ]; then
  echo "== cpack (DEB) into $OUT" >&2
  rm -rf "$OUT"
  mkdir -p "$OUT"
  (cd "$BUILD" && cpack -G DEB -B "$OUT" >&2)
  rm -rf "$OUT/_CPack_Packages"
else
  echo "== packages up to date in $OUT" >&2
fi
for p in "${PACKAGES[@]}"; do
  debs=("$OUT/${p}"_*.deb)
  [ -f "${debs[0]}" ] || { echo "package.sh: $p was not built" >&2; exit 1; }
  echo "   $(basename "${debs[0]}")  $(du -k "${debs[0]}" | cut -f1) KiB" >&2
done
echo "$OUT"
