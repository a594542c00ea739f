#!/usr/bin/env bash
# Shell completion works in the shells themselves (docs/operations.md): the scripts the
# built programs print (`ibcollect completion bash`, as the packages install them side by
# side) are sourced
# into a bare bash (no bash-completion package) and asked what they complete: subcommands,
# options, option values, files, and the support commands through ibcollect-support's script.
# zsh and fish, when installed, check their scripts' syntax and completions too.
#   completion_test.sh BUILD_DIR
set -euo pipefail
BUILD=$(realpath "${1:?usage: completion_test.sh BUILD_DIR}")
AGENT=$BUILD/agent
OUT=$(mktemp -d /tmp/ibc-completion-test-XXXXXX)
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/bash" "$OUT/files" "$OUT/fish"
for program in ibcollect ibcollect-support; do
  "$AGENT/$program" completion bash >"$OUT/bash/$program"
  "$AGENT/$program" completion zsh >"$OUT/_$program"
  "$AGENT/$program" completion fish >"$OUT/fish/$program.fish"
done
touch "$OUT/files/node1.ibsnap" "$OUT/files/node2.ibsnap"
mkdir "$OUT/files/tree"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# ---- bash ---------------------------------------------------------------------------------
# complete WORDS...: what the completion function offers for the last word, one per line.
cat >"$OUT/complete.bash" <<'EOF'
source "$1/bash/ibcollect"
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_ibcollect
printf '%s\n' "${COMPREPLY[@]}"
EOF
bash_offers() {
  (cd "$OUT/files" && bash --norc --noprofile "$OUT/complete.bash" "$OUT" "$@")
}
expect_bash() {  # expect_bash "WANTED WORDS" WORDS... : exactly those, in any order
  local want=$1
  shift
  local got
  got=$(bash_offers "$@" | sort | tr '\n' ' ')
  want=$(tr ' ' '\n' <<<"$want" | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "bash: [$*] offers '$got', expected '$want'"
}
expect_bash_has() {  # expect_bash_has WORD WORDS... : WORD among the offers
  local want=$1
  shift
  local got
  got=$(bash_offers "$@")
  grep -qx -- "$want" <<<"$got" || fail "bash: [$*] does not offer $want: $(tr '\n' ' ' <<<"$got")"
}

expect_bash "snapshot" ibcollect sn
expect_bash_has explain ibcollect ''
expect_bash_has completion ibcollect ''
expect_bash_has host-inspect ibcollect ''
expect_bash "text json" ibcollect snapshot --format ''
expect_bash "json" ibcollect snapshot --format = j
expect_bash "auto always never" ibcollect analyze --color ''
expect_bash "srun ssh" ibcollect --launcher ''
expect_bash "--force --format" ibcollect snapshot --fo
expect_bash "text json markdown" ibcollect explain --format ''
expect_bash "PORT_DOWN PORT_NOT_ACTIVE_SM PORT_STATE_UNKNOWN" ibcollect explain PORT_
expect_bash "bash zsh fish" ibcollect completion ''
# A value already given is skipped: the next word is an option or a file again.
expect_bash "--force --format" ibcollect snapshot --window 5 --fo
# Files where the command takes files, directories for --root, nothing for a number.
expect_bash "node1.ibsnap node2.ibsnap" ibcollect analyze node
expect_bash "node1.ibsnap node2.ibsnap" ibcollect compare node1.ibsnap node
expect_bash "tree" ibcollect snapshot --root t
expect_bash "" ibcollect snapshot --window ''
# The support commands complete through ibcollect-support's script beside this one.
expect_bash "export verify show" ibcollect bundle ''
expect_bash "--redact" ibcollect bundle export --re
expect_bash "open escalated closed" ibcollect case update --state ''
expect_bash "text json" ibcollect host-inspect --format ''

# ---- zsh: syntax, and the walker with zsh's completion builtins replaced by printers -------
if command -v zsh >/dev/null; then
  for program in ibcollect ibcollect-support; do
    zsh -n "$OUT/_$program" || fail "zsh: _$program does not parse"
  done
  cat >"$OUT/complete.zsh" <<'EOF'
compadd() { print -r -- "compadd $*" }
_describe() { local -a entries=("${(@P)4}"); print -r -- "describe ${(j: :)${(@)entries%%:*}}" }
_files() { print -r -- "files $*" }
_message() { print -r -- "message $*" }
_normal() { print -r -- "normal $words" }
compdef() { : }
source "$1/_ibcollect"
shift
words=("$@")
CURRENT=$#words
_ibcollect
EOF
  zsh_offers() { zsh -f "$OUT/complete.zsh" "$OUT" "$@"; }
  expect_zsh() {  # expect_zsh "OUTPUT" WORDS...
    local want=$1 got
    shift
    got=$(zsh_offers "$@")
    [ "$got" = "$want" ] || fail "zsh: [$*] gives '$got', expected '$want'"
  }
  expect_zsh "compadd -- text json" ibcollect snapshot --format ''
  expect_zsh "files -/" ibcollect snapshot --root ''
  expect_zsh "message a number" ibcollect snapshot --window ''
  expect_zsh "files " ibcollect analyze ''
  expect_zsh "normal ibcollect-support bundle export " ibcollect bundle export ''
  got=$(zsh_offers ibcollect '')
  grep -q "^describe snapshot analyze " <<<"$got" || fail "zsh: ibcollect's subcommands: $got"
  got=$(zsh_offers ibcollect snapshot --f)
  grep -q -- " --format " <<<"$got" || fail "zsh: snapshot's options: $got"
else
  echo "zsh is not installed: its script is not checked" >&2
fi

# ---- fish: syntax, and `complete -C` with both scripts where fish looks for them ----------
if command -v fish >/dev/null; then
  for program in ibcollect ibcollect-support; do
    fish -n "$OUT/fish/$program.fish" || fail "fish: $program.fish does not parse"
  done
  fish_offers() {
    (cd "$OUT/files" && PATH="$AGENT:$PATH" fish --no-config -c \
      'set -p fish_complete_path $argv[1]; complete -C "$argv[2]" | string replace -r "\t.*" ""; true' \
      "$OUT/fish" "$1" | sort | tr '\n' ' ')
  }
  expect_fish() {  # expect_fish "WANTED WORDS" "COMMAND LINE"
    local want got
    want=$(tr ' ' '\n' <<<"$1" | sort | tr '\n' ' ')
    got=$(fish_offers "$2")
    [ "$got" = "$want" ] || fail "fish: [$2] offers '$got', expected '$want'"
  }
  expect_fish "snapshot" "ibcollect sn"
  expect_fish "json text" "ibcollect snapshot --format "
  expect_fish "srun ssh" "ibcollect --launcher "
  expect_fish "PORT_DOWN PORT_NOT_ACTIVE_SM PORT_STATE_UNKNOWN" "ibcollect explain PORT_"
  expect_fish "node1.ibsnap node2.ibsnap" "ibcollect analyze node"
  expect_fish "export show verify" "ibcollect bundle "
  expect_fish "--redact" "ibcollect bundle export --re"
else
  echo "fish is not installed: its script is not checked" >&2
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures completion check(s) failed" >&2
  exit 1
fi
echo "completion: every check passed"
