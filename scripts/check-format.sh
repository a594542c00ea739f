#!/usr/bin/env bash
# Fails when a tracked C++ file differs from clang-format 14 with the repo's .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.h' '*.cpp' | grep -v '^build/')
[ "${#files[@]}" -eq 0 ] && exit 0
clang-format-14 --dry-run --Werror "${files[@]}"
