#!/usr/bin/env bash
# The Debian packages on this machine, end to end (docs/operations.md, issue 14):
#   scripts/package.sh builds ibcollect, ibcollect-collector and ibcollect-console (ibcollect and
#   ibcollect-support: the portable amd64 ones); lintian
#   reports no error or warning; `dpkg-deb -c` lists exactly the expected files; `dpkg -i`
#   installs them; the programs answer --version, `man -w` finds their pages and every long
#   flag of every --help is in its page; the installed bash completion completes the support
#   commands through ibcollect-support's; `systemd-analyze verify` accepts every unit; the
#   annotated example configs hold exactly the long flags' keys and a bad key or value names
#   file, line and key. Then the installed collector is started exactly as its unit's
#   ExecStart says (as the unit's User, in its StateDirectory, UMask; a real PKI from
#   certs/make-pki; 127.0.0.1 port 0), the snapshot unit's ExecStart snapshots this machine
#   and uploads with the node's identity from /etc/ibcollect/agent.conf (bind-mounted for that
#   process only, so other ibcollect runs on a shared machine are not affected), the collector
#   is stopped by PID and acknowledges the snapshot as stored. Last: remove, reinstall, purge,
#   reinstall, purge; after a purge nothing is left but the "ibcollect" system user and group
#   (kept, as Debian daemons do).
# Needs root (skipped otherwise, exit 77) and none of the packages installed before (fails:
# it would purge a real installation). ctest runs it alone (RUN_SERIAL): it installs
# /usr/bin/ibcollect and /etc/ibcollect/agent.conf (all commented) into this machine.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
cd "$SRC"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the package test installs and purges Debian packages with dpkg: it needs root"
  exit 77
fi

PKGS=(ibcollect ibcollect-collector ibcollect-console ibcollect-support)
COLLECTOR_UNIT=/lib/systemd/system/ibcollect-collector.service
SNAPSHOT_UNIT=/lib/systemd/system/ibcollect-snapshot.service
TIMER_UNIT=/lib/systemd/system/ibcollect-snapshot.timer
# Everything the packages or their services create; none of it may exist before the test
# (it would be destroyed) and none of it may be left after a purge.
OWNED=(/usr/bin/ibcollect /usr/bin/ibcollect-support /usr/sbin/ibcollect-collector /usr/bin/ibcollect-console /etc/ibcollect
  /var/lib/ibcollect /var/lib/ibcollect-agent /var/spool/ibcollect)

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }

for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  case "$st" in
    "" | "un "* | "pn "*) ;;
    *) fail "$p is already known to dpkg (status '$st'); this test installs and purges it: purge it first (dpkg --purge $p)" ;;
  esac
done
for path in "${OWNED[@]}"; do
  [ ! -e "$path" ] || fail "$path exists before the packages are installed; the test's purge would delete it: move it away first"
done

TMP=$(mktemp -d /tmp/ibc-package-test-XXXXXX)
chmod 755 "$TMP"
INSTALLED=0
COLLECTOR_PID=
cleanup() {
  local rc=$?
  if [ -n "$COLLECTOR_PID" ]; then kill -TERM "$COLLECTOR_PID" 2>/dev/null || true; fi
  if [ "$INSTALLED" = 1 ]; then
    echo "== cleanup: dpkg --purge ${PKGS[*]}" >&2
    dpkg --purge "${PKGS[@]}" >/dev/null 2>&1 || true
  fi
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT

# ---- build -------------------------------------------------------------------------------
step "scripts/package.sh"
if ! DEB_DIR=$(scripts/package.sh 2>"$TMP/package.log"); then
  cat "$TMP/package.log" >&2
  fail "scripts/package.sh failed"
fi
DEBS=()
for p in "${PKGS[@]}"; do
  deb=$(ls "$DEB_DIR/${p}"_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "no ${p}_*.deb in $DEB_DIR"
  DEBS+=("$deb")
  echo "   $(basename "$deb"): $(stat -c %s "$deb") bytes, Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB"
done
DEB_VERSION=$(dpkg-deb -f "${DEBS[0]}" Version)
VERSION=${DEB_VERSION%-*}

# ---- lintian -----------------------------------------------------------------------------
step "lintian (no error, no warning; overrides are in packaging/debian/*/lintian-overrides)"
if ! lintian --info --pedantic --fail-on error,warning "${DEBS[@]}" 2>&1 | tee "$TMP/lintian.txt"; then
  fail "lintian reports errors or warnings (above)"
fi
grep -E '^[EW]: ' "$TMP/lintian.txt" && fail "lintian printed an E: or W: tag"

# ---- contents ----------------------------------------------------------------------------
step "dpkg-deb -c: exactly the expected files, modes and owners"
expect_files() {
  local deb=$1
  shift
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $1, $2, $6}' | sort >"$TMP/got"
  printf '%s\n' "$@" | sort >"$TMP/want"
  diff -u "$TMP/want" "$TMP/got" || fail "$(basename "$deb") holds other files than expected (diff above: - expected, + found)"
}
R="-rw-r--r-- root/root"
X="-rwxr-xr-x root/root"
expect_files "${DEBS[0]}" \
  "$R ./etc/ibcollect/agent.conf" \
  "$R ./lib/systemd/system/ibcollect-snapshot.service" \
  "$R ./lib/systemd/system/ibcollect-snapshot.timer" \
  "$X ./usr/bin/ibcollect" \
  "$R ./usr/share/doc/ibcollect/changelog.Debian.gz" \
  "$R ./usr/share/doc/ibcollect/copyright" \
  "$R ./usr/share/doc/ibcollect/examples/agent.conf" \
  "$R ./usr/share/bash-completion/completions/ibcollect" \
  "$R ./usr/share/fish/vendor_completions.d/ibcollect.fish" \
  "$R ./usr/share/lintian/overrides/ibcollect" \
  "$R ./usr/share/man/man1/ibcollect.1.gz" \
  "$R ./usr/share/zsh/vendor-completions/_ibcollect"
expect_files "${DEBS[1]}" \
  "$R ./etc/ibcollect/collector.conf" \
  "$R ./lib/systemd/system/ibcollect-collector.service" \
  "$X ./usr/sbin/ibcollect-collector" \
  "$R ./usr/share/doc/ibcollect-collector/changelog.Debian.gz" \
  "$R ./usr/share/doc/ibcollect-collector/copyright" \
  "$R ./usr/share/doc/ibcollect-collector/examples/collector.conf" \
  "$R ./usr/share/lintian/overrides/ibcollect-collector" \
  "$R ./usr/share/man/man8/ibcollect-collector.8.gz"
expect_files "${DEBS[2]}" \
  "$X ./usr/bin/ibcollect-console" \
  "$R ./usr/share/applications/ibcollect-console.desktop" \
  "$R ./usr/share/doc/ibcollect-console/changelog.Debian.gz" \
  "$R ./usr/share/doc/ibcollect-console/copyright" \
  "$R ./usr/share/lintian/overrides/ibcollect-console" \
  "$R ./usr/share/man/man1/ibcollect-console.1.gz"
expect_files "${DEBS[3]}" \
  "$X ./usr/bin/ibcollect-support" \
  "$R ./usr/share/doc/ibcollect-support/changelog.Debian.gz" \
  "$R ./usr/share/doc/ibcollect-support/copyright" \
  "$R ./usr/share/bash-completion/completions/ibcollect-support" \
  "$R ./usr/share/fish/vendor_completions.d/ibcollect-support.fish" \
  "$R ./usr/share/lintian/overrides/ibcollect-support" \
  "$R ./usr/share/man/man1/ibcollect-support.1.gz" \
  "$R ./usr/share/zsh/vendor-completions/_ibcollect-support"
[ "$(dpkg-deb -I "${DEBS[0]}" conffiles)" = /etc/ibcollect/agent.conf ] || fail "ibcollect: conffiles"
[ "$(dpkg-deb -I "${DEBS[1]}" conffiles)" = /etc/ibcollect/collector.conf ] ||
  fail "ibcollect-collector: conffiles"
for i in 0 1 2 3; do
  deps=$(dpkg-deb -f "${DEBS[$i]}" Depends)
  echo "   ${PKGS[$i]} Depends: $deps"
  [[ "$deps" == *"libc6 (>="* ]] || fail "${PKGS[$i]}: Depends lacks what dpkg-shlibdeps computes (libc6)"
done
[[ "$(dpkg-deb -f "${DEBS[1]}" Depends)" == *librocksdb* ]] || fail "ibcollect-collector: no librocksdb in Depends"
[[ "$(dpkg-deb -f "${DEBS[2]}" Depends)" == *libqt6widgets6* ]] || fail "ibcollect-console: no libqt6widgets6 in Depends"
[[ "$(dpkg-deb -f "${DEBS[0]}" Depends)" != *libqt6* && "$(dpkg-deb -f "${DEBS[0]}" Depends)" != *rocksdb* ]] ||
  fail "ibcollect (the agent) must not depend on Qt or RocksDB"
[[ "$(dpkg-deb -f "${DEBS[0]}" Depends)" != *libarchive* ]] ||
  fail "ibcollect (the agent) must not depend on libarchive (bundles are ibcollect-support's)"
# The portable programs (docs/operations.md "Supported images") link protobuf, OpenSSL and
# (support) libarchive in and say so in Built-Using.
[[ "$(dpkg-deb -f "${DEBS[3]}" Depends)" != *libarchive* && "$(dpkg-deb -f "${DEBS[3]}" Depends)" == *"ibcollect (= "* ]] ||
  fail "ibcollect-support: Depends names libarchive (linked in) or lacks the ibcollect of its version"
[[ "$(dpkg-deb -f "${DEBS[0]}" Built-Using)" == *"openssl (= "*"protobuf (= "* ]] ||
  fail "ibcollect: Built-Using lacks openssl or protobuf"
[[ "$(dpkg-deb -f "${DEBS[3]}" Built-Using)" == *"libarchive (= "* ]] ||
  fail "ibcollect-support: Built-Using lacks libarchive"

# ---- install -----------------------------------------------------------------------------
step "dpkg -i (apt-get install -f for missing dependencies)"
INSTALLED=1
if ! dpkg -i "${DEBS[@]}" >"$TMP/dpkg-i.log" 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -f -y --no-install-recommends >>"$TMP/dpkg-i.log" 2>&1 ||
    { cat "$TMP/dpkg-i.log" >&2; fail "dpkg -i / apt-get install -f failed"; }
fi
for p in "${PKGS[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p")" = "ii " ] || { cat "$TMP/dpkg-i.log"; fail "$p is not installed"; }
done
# What the packages own (their files, not the directories they share with others): a purge
# must remove all of it. Caches other tools keep (man-db's cat pages of our man pages,
# ...) are theirs, not the packages'.
for p in "${PKGS[@]}"; do dpkg -L "$p"; done | while read -r f; do
  [ -d "$f" ] || echo "$f"
done | sort -u >"$TMP/package-files"
[ -s "$TMP/package-files" ] || fail "dpkg -L lists no files of the packages"

step "--version, man -w, every --help flag in the man page"
[ "$(ibcollect --version)" = "ibcollect $VERSION" ] || fail "ibcollect --version: $(ibcollect --version)"
[ "$(ibcollect-collector --version)" = "ibcollect-collector $VERSION" ] ||
  fail "ibcollect-collector --version: $(ibcollect-collector --version)"
console_version=$(QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$TMP ibcollect-console --version 2>/dev/null)
[ "$console_version" = "ibcollect-console $VERSION" ] || fail "ibcollect-console --version: $console_version"
[ "$(man -w ibcollect)" = /usr/share/man/man1/ibcollect.1.gz ] || fail "man -w ibcollect: $(man -w ibcollect)"
# Reading a page may leave man-db's cat page in /var/cache/man: the purge below must not
# count what man-db keeps as the packages' (a reader of the man page once failed this test).
man ibcollect-collector >/dev/null 2>&1 || true
[ "$(man -w 8 ibcollect-collector)" = /usr/share/man/man8/ibcollect-collector.8.gz ] || fail "man -w 8 ibcollect-collector"
[ "$(man -w ibcollect-console)" = /usr/share/man/man1/ibcollect-console.1.gz ] || fail "man -w ibcollect-console"
[ "$(man -w ibcollect-support)" = /usr/share/man/man1/ibcollect-support.1.gz ] || fail "man -w ibcollect-support"
[ "$(ibcollect-support --version)" = "ibcollect-support $VERSION" ] || fail "ibcollect-support --version"
ibcollect bundle --help | grep -q export || fail "ibcollect bundle --help does not reach ibcollect-support"
packaging/man/check-man-flags.py /usr/bin/ibcollect /usr/share/man/man1/ibcollect.1.gz
packaging/man/check-man-flags.py /usr/sbin/ibcollect-collector /usr/share/man/man8/ibcollect-collector.8.gz
packaging/man/check-man-flags.py /usr/bin/ibcollect-console /usr/share/man/man1/ibcollect-console.1.gz
packaging/man/check-man-flags.py /usr/bin/ibcollect-support /usr/share/man/man1/ibcollect-support.1.gz

step "shell completion where bash-completion, zsh and fish look"
got=$(bash --norc --noprofile -c 'source /usr/share/bash-completion/completions/ibcollect
  COMP_WORDS=(ibcollect bundle ""); COMP_CWORD=2; _ibcollect; echo "${COMPREPLY[*]}"')
[ "$got" = "export verify show" ] || fail "installed bash completion of 'ibcollect bundle ': '$got'"

step "system user, units verified and not enabled"
IFS=: read -r _ _ uid _ _ home shell < <(getent passwd ibcollect) || fail "no ibcollect user after install"
getent group ibcollect >/dev/null || fail "no ibcollect group after install"
[ "$uid" -lt 1000 ] && [ "$home" = /var/lib/ibcollect ] && [ "$shell" = /usr/sbin/nologin ] ||
  fail "ibcollect user: uid $uid home $home shell $shell (want a system user, /var/lib/ibcollect, nologin)"
for unit in "$COLLECTOR_UNIT" "$SNAPSHOT_UNIT" "$TIMER_UNIT"; do
  if ! systemd-analyze verify --man=no "$unit" >"$TMP/verify.txt" 2>&1 || grep -q ibcollect "$TMP/verify.txt"; then
    cat "$TMP/verify.txt" >&2
    fail "systemd-analyze verify $unit"
  fi
  echo "   systemd-analyze verify $unit: OK"
done
for unit in "$COLLECTOR_UNIT" "$SNAPSHOT_UNIT"; do
  echo "   $(systemd-analyze security --offline=true "$unit" 2>/dev/null | grep -i 'overall exposure' || true)"
done
for link in /etc/systemd/system/timers.target.wants/ibcollect-snapshot.timer \
  /etc/systemd/system/multi-user.target.wants/ibcollect-collector.service; do
  [ ! -e "$link" ] && [ ! -L "$link" ] || fail "$link: installing must not enable the unit"
done

# ---- config files ------------------------------------------------------------------------
# derive EXAMPLE OUT KEY=VALUE...: EXAMPLE with every key (commented or not) set, to its
# shown value unless given. Prints the keys, one a line.
derive() {
  python3 - "$@" <<'PY'
import re, sys
example, out, *pairs = sys.argv[1:]
want = dict(p.split("=", 1) for p in pairs)
lines, keys = [], []
for line in open(example):
    m = re.match(r"^#?([a-z][a-z0-9-]*) = (.*)$", line.rstrip("\n"))
    if m:
        key = m.group(1)
        keys.append(key)
        line = "%s = %s\n" % (key, want.pop(key, m.group(2)))
    lines.append(line)
if want:
    sys.exit("derive: %s has no key %s" % (example, ", ".join(want)))
open(out, "w").write("".join(lines))
print("\n".join(keys))
PY
}
# The long flags of a --help's own options (not its subcommands'), without help/version/config.
long_flags() {
  python3 -c '
import re, sys
flags = []
for line in sys.stdin:
    if line.startswith("Subcommands:"):
        break
    m = re.match(r"^\s+(?:-\w,\s?)?--([a-z][a-z0-9-]*)", line)
    if m and m.group(1) not in ("help", "version", "config"):
        flags.append(m.group(1))
print("\n".join(sorted(set(flags))))'
}

step "certs/make-pki: CA, collector, this node's agent certificate"
NODE=$(cut -d. -f1 /proc/sys/kernel/hostname)
certs/make-pki "$TMP/pki" --agent "acme/$NODE" --support alice >/dev/null
chgrp ibcollect "$TMP/pki/collector.key"
chmod 640 "$TMP/pki/collector.key"
chmod 755 "$TMP/pki"

step "config files: the annotated examples hold exactly the long flags' keys, and work"
conf_example=/usr/share/doc/ibcollect-collector/examples/collector.conf
cmp -s "$conf_example" /etc/ibcollect/collector.conf || fail "/etc/ibcollect/collector.conf differs from $conf_example"
derive "$conf_example" "$TMP/collector.conf" listen=127.0.0.1:0 "ca=$TMP/pki/ca.pem" \
  "cert=$TMP/pki/collector.pem" "key=$TMP/pki/collector.key" | sort >"$TMP/collector.keys"
ibcollect-collector --help | long_flags >"$TMP/collector.flags"
diff -u "$TMP/collector.flags" "$TMP/collector.keys" ||
  fail "$conf_example: its keys (+) differ from ibcollect-collector's long flags (-)"
agent_example=/usr/share/doc/ibcollect/examples/agent.conf
cmp -s "$agent_example" /etc/ibcollect/agent.conf || fail "/etc/ibcollect/agent.conf differs from $agent_example"
ibcollect upload --help | long_flags >"$TMP/agent.flags"
derive "$agent_example" "$TMP/agent.keys.conf" | sort >"$TMP/agent.keys"
diff -u "$TMP/agent.flags" "$TMP/agent.keys" ||
  fail "$agent_example: its keys (+) differ from the transport flags of ibcollect upload (-)"

# A mistake names the file, the line and the key (installed binaries, derived configs).
bad_line() { # FILE KEY NEW_LINE: replaces KEY's line, prints its number
  local n
  n=$(grep -n "^$2 = " "$1" | cut -d: -f1)
  sed -i "${n}s/.*/$3/" "$1"
  echo "$n"
}
# Runs COMMAND... and expects exit 3 with TEXT in its stderr; else fails saying WHAT.
refused() { # WHAT TEXT COMMAND...
  local what=$1 text=$2 rc=0
  shift 2
  "$@" >/dev/null 2>"$TMP/err" || rc=$?
  [ "$rc" = 3 ] && grep -qF "$text" "$TMP/err" || fail "$what: exit $rc, $(cat "$TMP/err")"
}
cp "$TMP/collector.conf" "$TMP/typo.conf"
n=$(bad_line "$TMP/typo.conf" max-connections "max-conections = 10")
refused "collector, unknown key" "$TMP/typo.conf:$n: unknown key 'max-conections'" \
  ibcollect-collector --config "$TMP/typo.conf"
cp "$TMP/collector.conf" "$TMP/value.conf"
n=$(bad_line "$TMP/value.conf" max-connections "max-connections = lots")
refused "collector, bad value" "$TMP/value.conf:$n: max-connections:" \
  ibcollect-collector --config "$TMP/value.conf"
derive "$agent_example" "$TMP/agent-bad.conf" retries=many >/dev/null
n=$(grep -n "^retries = " "$TMP/agent-bad.conf" | cut -d: -f1)
refused "agent, bad value" "$TMP/agent-bad.conf:$n: retries wants" \
  ibcollect upload /dev/null --config "$TMP/agent-bad.conf"
echo "   bad key and bad values: FILE:LINE: KEY, exit 3"

# ---- the collector as its unit runs it ---------------------------------------------------
unit_value() { sed -n "s/^$2=//p" "$1" | tail -1; }
step "start the collector: $COLLECTOR_UNIT's ExecStart, User, StateDirectory, UMask"
exec_start=$(unit_value "$COLLECTOR_UNIT" ExecStart)
[[ "$exec_start" != *[\"\'\$%\\]* ]] || fail "ExecStart uses quoting or specifiers the test does not expand: $exec_start"
read -ra argv <<<"$exec_start"
user=$(unit_value "$COLLECTOR_UNIT" User)
group=$(unit_value "$COLLECTOR_UNIT" Group)
state=/var/lib/$(unit_value "$COLLECTOR_UNIT" StateDirectory)
[ "$user" = ibcollect ] && [ "$state" = /var/lib/ibcollect ] || fail "unit: User=$user state $state"
[ "${argv[*]}" = "/usr/sbin/ibcollect-collector --config /etc/ibcollect/collector.conf" ] ||
  fail "unexpected ExecStart: $exec_start"
# The unit reads /etc/ibcollect/collector.conf: the example with the test's PKI and port 0.
grep -q "^data = $state\$" "$TMP/collector.conf" || fail "collector.conf's data is not the unit's StateDirectory $state"
cp "$TMP/collector.conf" /etc/ibcollect/collector.conf
install -d -o "$user" -g "$group" -m "$(unit_value "$COLLECTOR_UNIT" StateDirectoryMode)" "$state"
mkfifo "$TMP/collector.out"
(
  umask "$(unit_value "$COLLECTOR_UNIT" UMask)"
  exec setpriv --reuid="$user" --regid="$group" --init-groups --no-new-privs -- "${argv[@]}"
) >"$TMP/collector.out" 2>"$TMP/collector.log" &
COLLECTOR_PID=$!
exec 3<"$TMP/collector.out"
if ! read -r -t 60 -u 3 first; then
  cat "$TMP/collector.log" >&2
  fail "the collector printed no first line"
fi
[[ "$first" =~ ^listening\ on\ (127\.0\.0\.1:[0-9]+)$ ]] || fail "first line: $first"
ADDR=${BASH_REMATCH[1]}
echo "   pid $COLLECTOR_PID as $(ps -o user= -p "$COLLECTOR_PID"), $first"
[ "$(ps -o user= -p "$COLLECTOR_PID")" = ibcollect ] || fail "the collector does not run as ibcollect"

step "snapshot this node as $SNAPSHOT_UNIT's ExecStart does (its /etc/ibcollect/agent.conf: this node's identity)"
derive "$agent_example" "$TMP/agent.conf" "collector=$ADDR" "ca=$TMP/pki/ca.pem" \
  "cert=$TMP/pki/agents/acme/$NODE.pem" "key=$TMP/pki/agents/acme/$NODE.key" retries=0 >/dev/null
snap_exec=$(unit_value "$SNAPSHOT_UNIT" ExecStart)
[[ "$snap_exec" != *[\"\'\$%\\]* ]] || fail "ExecStart uses quoting or specifiers the test does not expand: $snap_exec"
read -ra snap_argv <<<"$snap_exec"
snap_state=/var/lib/$(unit_value "$SNAPSHOT_UNIT" StateDirectory)
install -d -m "$(unit_value "$SNAPSHOT_UNIT" StateDirectoryMode)" "$snap_state"
snap_umask=$(unit_value "$SNAPSHOT_UNIT" UMask)
# Only the snapshot sees the configured /etc/ibcollect/agent.conf (bind-mounted in a private
# mount namespace): every other ibcollect on this machine keeps reading the installed,
# all-commented file, and does not upload its snapshots here signed as this node. Where
# mount namespaces are not allowed, the file itself is replaced for the run.
set +e
if unshare --mount --propagation private true 2>/dev/null; then
  unshare --mount --propagation private sh -c \
    'mount --bind "$0" /etc/ibcollect/agent.conf && umask "$1" && shift && exec "$@"' \
    "$TMP/agent.conf" "$snap_umask" env -u SLURM_JOB_ID -u SLURMD_NODENAME "${snap_argv[@]}" \
    >"$TMP/snapshot.out" 2>"$TMP/snapshot.err"
  rc=$?
else
  cp /etc/ibcollect/agent.conf "$TMP/agent.conf.installed"
  cp "$TMP/agent.conf" /etc/ibcollect/agent.conf
  (
    umask "$snap_umask"
    exec env -u SLURM_JOB_ID -u SLURMD_NODENAME "${snap_argv[@]}"
  ) >"$TMP/snapshot.out" 2>"$TMP/snapshot.err"
  rc=$?
  cp "$TMP/agent.conf.installed" /etc/ibcollect/agent.conf
fi
set -e
cmp -s "$agent_example" /etc/ibcollect/agent.conf || fail "the configured agent.conf leaked out of the snapshot run"
ok_codes=" 0 $(unit_value "$SNAPSHOT_UNIT" SuccessExitStatus) "
[[ "$ok_codes" == *" $rc "* ]] || { cat "$TMP/snapshot.out" "$TMP/snapshot.err" >&2; fail "snapshot unit: exit $rc"; }
grep -qF "delivered the snapshot to $ADDR" "$TMP/snapshot.err" ||
  { cat "$TMP/snapshot.err" >&2; fail "the snapshot unit did not deliver to $ADDR"; }
[ -s "$snap_state/latest.ibsnap" ] || fail "no $snap_state/latest.ibsnap"
echo "   exit $rc (verdict), $(grep -F "delivered" "$TMP/snapshot.err")"
ibcollect verify "$snap_state/latest.ibsnap" --ca "$TMP/pki/ca.pem" | grep -F ": OK signed by" ||
  fail "ibcollect verify $snap_state/latest.ibsnap"
# Uploads are idempotent: the collector acknowledges the same snapshot as one it has stored.
ibcollect upload "$snap_state/latest.ibsnap" --config "$TMP/agent.conf" >/dev/null 2>"$TMP/upload.err" ||
  { cat "$TMP/upload.err" >&2; fail "ibcollect upload of the same snapshot"; }
grep -F "$ADDR already had" "$TMP/upload.err" ||
  { cat "$TMP/upload.err" >&2; fail "the collector does not say it stored the snapshot"; }

step "stop the collector by PID (SIGTERM)"
kill -TERM "$COLLECTOR_PID"
set +e
wait "$COLLECTOR_PID"
rc=$?
set -e
COLLECTOR_PID=
exec 3<&-
[ "$rc" = 0 ] || { cat "$TMP/collector.log" >&2; fail "the collector exited $rc on SIGTERM"; }
tail -1 "$TMP/collector.log"
[ -f "$state/CURRENT" ] || fail "no RocksDB store in $state"
[ -z "$(find "$state" ! -user ibcollect)" ] || fail "files in $state not owned by ibcollect"

# ---- remove, reinstall, purge ------------------------------------------------------------
left_behind() {
  {
    for path in "${OWNED[@]}"; do
      if [ -e "$path" ]; then echo "$path"; fi
    done
    while read -r path; do
      if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi
    done <"$TMP/package-files"
  } | sort -u >"$TMP/left"
  sed 's/^/   left: /' "$TMP/left" >&2
  [ ! -s "$TMP/left" ]
}
step "dpkg -r: data and configuration stay"
dpkg -r "${PKGS[@]}" >/dev/null
[ ! -e /usr/bin/ibcollect ] || fail "dpkg -r left /usr/bin/ibcollect"
[ -f "$state/CURRENT" ] || fail "dpkg -r removed the collector's store"
grep -q "^listen = 127.0.0.1:0$" /etc/ibcollect/collector.conf || fail "dpkg -r lost the edited collector.conf"
step "dpkg -i again: the edited conffile and the user are kept"
dpkg -i "${DEBS[@]}" >/dev/null
grep -q "^listen = 127.0.0.1:0$" /etc/ibcollect/collector.conf || fail "reinstall replaced the edited collector.conf"
[ "$(id -u ibcollect)" = "$uid" ] || fail "reinstall changed the ibcollect uid"
step "dpkg --purge: nothing left but the system user and group"
dpkg --purge "${PKGS[@]}" >/dev/null
left_behind || fail "dpkg --purge left files behind (above)"
getent passwd ibcollect >/dev/null || fail "the ibcollect user is expected to stay after a purge"
step "dpkg -i after the purge (the user exists), then --purge again"
dpkg -i "${DEBS[@]}" >/dev/null
[ "$(id -u ibcollect)" = "$uid" ] || fail "reinstall after purge changed the ibcollect uid"
[ -d /var/spool/ibcollect ] && [ "$(stat -c %a /var/spool/ibcollect)" = 700 ] || fail "no /var/spool/ibcollect 0700 after install"
dpkg --purge "${PKGS[@]}" >/dev/null
INSTALLED=0
left_behind || fail "the second purge left files behind (above)"
echo "   kept by policy: $(getent passwd ibcollect)"
echo "PASS"
