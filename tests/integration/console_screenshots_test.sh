#!/usr/bin/env bash
# The console renders every page offscreen from real snapshots (scripts/console-screenshots.sh;
# the jobs page lists and fetches the job from a real collector with a support certificate,
# and fails the script when nothing could be fetched), and each PNG is a real image of the
# window's size, not an empty file.
#   console_screenshots_test.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=$(realpath "${1:?usage: console_screenshots_test.sh BUILD_DIR}")
OUT=$(mktemp -d /tmp/ibc-console-test-XXXXXX)
trap 'rm -rf "$OUT"' EXIT
scripts/console-screenshots.sh "$OUT" "$BUILD"
# Without a display, --help prints the usage (exit 0) and a plain start says what to do
# (exit 3) instead of Qt's platform-plugin abort.
help=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$BUILD/console/ibcollect-console" --help)
grep -q -- "--screenshot" <<<"$help" || { echo "--help without a display: $help" >&2; exit 1; }
set +e
err=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$BUILD/console/ibcollect-console" 2>&1)
rc=$?
set -e
[ "$rc" = 3 ] && grep -q "no display" <<<"$err" || { echo "no display: rc $rc: $err" >&2; exit 1; }
python3 - "$OUT" <<'PY'
import struct, sys, os
for page in ("jobs", "grid", "node", "findings", "diff", "charts", "escalate"):
    path = os.path.join(sys.argv[1], page + ".png")
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path + ": not a PNG"
    w, h = struct.unpack(">II", data[16:24])
    assert (w, h) == (1400, 860), "%s: %dx%d, expected 1400x860" % (path, w, h)
    assert len(data) > 20000, path + ": %d bytes, too small to hold the page" % len(data)
    print(page, w, h, len(data))
PY
