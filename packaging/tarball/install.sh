#!/bin/sh
# Installs ibcollect and ibcollect-support from this tarball (docs/operations.md, "Supported
# images"): the programs, their man pages and shell completion, the sample agent config (kept
# when one exists) and the snapshot units (not enabled), whose ExecStart and config paths are
# rewritten to where they are installed.
#   ./install.sh [--prefix DIR] [--sysconfdir DIR] [--unitdir DIR] [--destdir DIR]
#     --prefix      default /usr/local (programs in PREFIX/bin, pages in PREFIX/share/man)
#     --sysconfdir  default PREFIX/etc, /etc when PREFIX is /usr
#     --unitdir     default PREFIX/lib/systemd/system (systemd reads /usr/local/lib/systemd/system)
#     --destdir     stage under DIR (packagers); paths inside the files stay without it
set -eu
prefix=/usr/local
sysconfdir=""
unitdir=""
destdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --sysconfdir) sysconfdir=$2; shift 2 ;;
    --unitdir) unitdir=$2; shift 2 ;;
    --destdir) destdir=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (--help)" >&2; exit 3 ;;
  esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be absolute" >&2; exit 3 ;; esac
if [ -z "$sysconfdir" ]; then
  if [ "$prefix" = /usr ]; then sysconfdir=/etc; else sysconfdir=$prefix/etc; fi
fi
[ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
here=$(cd "$(dirname "$0")" && pwd)
d=$destdir

install -d "$d$prefix/bin" "$d$prefix/share/man/man1" "$d$sysconfdir/ibcollect" "$d$unitdir" \
  "$d$prefix/share/bash-completion/completions" "$d$prefix/share/zsh/vendor-completions" \
  "$d$prefix/share/fish/vendor_completions.d" "$d$prefix/share/doc/ibcollect/examples"
# ibcollect runs ibcollect-support from its own directory (`ibcollect bundle ...`).
install -m 0755 "$here/bin/ibcollect" "$here/bin/ibcollect-support" "$d$prefix/bin/"
install -m 0644 "$here"/share/man/man1/*.1.gz "$d$prefix/share/man/man1/"
install -m 0644 "$here"/share/bash-completion/completions/* "$d$prefix/share/bash-completion/completions/"
install -m 0644 "$here"/share/zsh/vendor-completions/* "$d$prefix/share/zsh/vendor-completions/"
install -m 0644 "$here"/share/fish/vendor_completions.d/* "$d$prefix/share/fish/vendor_completions.d/"
install -m 0644 "$here/share/doc/ibcollect/copyright" "$d$prefix/share/doc/ibcollect/"
install -m 0644 "$here/etc/ibcollect/agent.conf" "$d$prefix/share/doc/ibcollect/examples/"
if [ ! -e "$d$sysconfdir/ibcollect/agent.conf" ]; then
  install -m 0644 "$here/etc/ibcollect/agent.conf" "$d$sysconfdir/ibcollect/"
fi
for unit in "$here"/lib/systemd/system/*; do
  sed -e "s|/usr/bin/ibcollect|$prefix/bin/ibcollect|g" \
    -e "s|/etc/ibcollect/|$sysconfdir/ibcollect/|g" "$unit" >"$d$unitdir/$(basename "$unit")"
  chmod 0644 "$d$unitdir/$(basename "$unit")"
done
echo "installed ibcollect $(cat "$here/VERSION") under $prefix (config $sysconfdir/ibcollect," \
  "units $unitdir, not enabled)"
