// `completion bash|zsh|fish` (docs/commands.md, docs/operations.md): a program's shell completion
// script, made from the CLI11 definitions it parses with, so it never disagrees with --help. The
// command tree (subcommands, options, what each option's value is) is read from the CLI::App; the
// scripts hold it as tables and one small walker per shell. `ibcollect`'s support commands
// run `ibcollect-support`: its scripts hand those words to ibcollect-support's completion.

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "ibc/agent/cli_common.h"
#include "ibc/core/text.h"

namespace ibc::agent::cli {

namespace {

// What an option's value (or a command's positional arguments) can complete to.
enum class ValueKind {
  Flag,       // no value
  Choices,    // one of a set (CLI::IsMember, suggestedValues)
  File,       // a path (CLI::ExistingFile, or any text: files are the shell's usual guess)
  Directory,  // CLI::ExistingDirectory
  Number,     // nothing to offer
};

struct ValueSpec {
  ValueKind kind = ValueKind::Flag;
  std::vector<std::string> choices;
};

struct OptionSpec {
  std::vector<std::string> names;  // "-o", "--output"
  std::string description;
  ValueSpec value;
};

struct CommandSpec {
  std::string path;  // "" for the program itself, "bundle export"
  std::string description;
  std::vector<std::string> subcommands;  // names, visible ones only
  std::vector<OptionSpec> options;
  std::optional<ValueSpec> positional;
  bool delegated = false;  // passes its words on to another program (a prefix command)
};

// "TEXT:{text,json}", "TEXT:FILE", "FLOAT:FLOAT in [0 - 3600]": CLI11's type name, then
// the description of each check.
ValueSpec valueOf(const CLI::Option& o) {
  ValueSpec v;
  if (o.get_expected_max() == 0) return v;  // a flag
  const std::string type = o.get_type_name();
  const auto parts = core::split(type, ':');
  v.kind = ValueKind::File;
  const std::string_view base = parts.empty() ? std::string_view() : parts.front();
  if (base == "INT" || base == "UINT" || base == "FLOAT" || base == "NUMBER")
    v.kind = ValueKind::Number;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (p == "FILE") v.kind = ValueKind::File;
    if (p == "DIR") v.kind = ValueKind::Directory;
    if (p.size() >= 2 && p.front() == '{' && p.back() == '}') {
      v.kind = ValueKind::Choices;
      for (const auto c : core::split(p.substr(1, p.size() - 2), ',')) v.choices.emplace_back(c);
    }
  }
  return v;
}

std::string oneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

void collect(const CLI::App& app, const std::string& path, std::vector<CommandSpec>& out) {
  CommandSpec c;
  c.path = path;
  c.description = oneLine(app.get_description());
  c.delegated = app.get_prefix_command() && app.get_options().empty();
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    if (o->get_positional() && !o->nonpositional()) {
      c.positional = valueOf(*o);
      continue;
    }
    OptionSpec s;
    for (const auto& n : o->get_snames()) s.names.push_back("-" + n);
    for (const auto& n : o->get_lnames()) s.names.push_back("--" + n);
    s.description = oneLine(o->get_description());
    s.value = valueOf(*o);
    c.options.push_back(std::move(s));
  }
  const auto subs = app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
  for (const CLI::App* s : subs) c.subcommands.push_back(s->get_name());
  out.push_back(std::move(c));
  for (const CLI::App* s : subs)
    collect(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

// Single-quoted for sh, bash, zsh.
std::string shQuote(std::string_view s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Single-quoted for fish.
std::string fishQuote(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// A description short enough for a completion menu.
std::string shortDescription(const std::string& d) {
  constexpr std::size_t kMax = 60;
  if (d.size() <= kMax) return d;
  const auto cut = d.rfind(' ', kMax - 3);
  return d.substr(0, cut == std::string::npos ? kMax - 3 : cut) + "...";
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// How the scripts name what a value takes: "choices A B", "file", "dir", "none"; "" a flag.
std::string valueWord(const ValueSpec& v) {
  switch (v.kind) {
    case ValueKind::Flag: return "";
    case ValueKind::Choices: return "choices " + joined(v.choices);
    case ValueKind::File: return "file";
    case ValueKind::Directory: return "dir";
    case ValueKind::Number: return "none";
  }
  return "";
}

// The value-takes, positional and delegated tables, the same for bash and zsh:
// PREFIX_value PATH OPTION, PREFIX_positional PATH → REPLY.
std::string valueTables(const std::vector<CommandSpec>& tree, const std::string& prefix) {
  std::ostringstream out;
  out << "# What option $2 of command $1 takes: choices WORDS, file, dir, none; '' a flag.\n"
      << prefix << "_value() {\n  case \"$1|$2\" in\n";
  for (const auto& c : tree) {
    for (const auto& o : c.options) {
      const std::string w = valueWord(o.value);
      if (w.empty()) continue;
      std::vector<std::string> keys;
      for (const auto& n : o.names) keys.push_back(shQuote(c.path + "|" + n));
      std::string pattern;
      for (const auto& k : keys) pattern += (pattern.empty() ? "" : " | ") + k;
      out << "    " << pattern << ") REPLY=" << shQuote(w) << " ;;\n";
    }
  }
  out << "    *) REPLY='' ;;\n  esac\n}\n"
      << "# What the positional arguments of command $1 take ('' none).\n"
      << prefix << "_positional() {\n  case $1 in\n";
  for (const auto& c : tree) {
    if (c.positional)
      out << "    " << shQuote(c.path) << ") REPLY=" << shQuote(valueWord(*c.positional))
          << " ;;\n";
  }
  out << "    *) REPLY='' ;;\n  esac\n}\n";
  return out.str();
}

std::vector<std::string> delegatedPaths(const std::vector<CommandSpec>& tree) {
  std::vector<std::string> out;
  for (const auto& c : tree) {
    if (c.delegated) out.push_back(c.path);
  }
  return out;
}

// Bash: a function per program, `_ibcollect` / `_ibcollect_support`.
std::string functionName(const std::string& program) {
  std::string f = "_" + program;
  std::replace(f.begin(), f.end(), '-', '_');
  return f;
}

std::string replaced(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  }
  return text;
}

const char* const kBashWalker =
    R"SH(# The command before the cursor; returns 1 after handing the line to a delegate.
@F@_walk() {
  local i word
  cmd=''
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ $word == -* ]]; then
      @F@_value "$cmd" "$word"
      if [[ -n $REPLY && $word != *=* ]]; then ((i++)); fi
      continue
    fi
    @F@_commands "$cmd"
    if [[ " $REPLY " == *" $word "* ]]; then
      cmd=${cmd:+$cmd }$word
      @F@_delegated "$cmd" && return 1
    fi
  done
  return 0
}

@F@_offer() {  # $1: choices WORDS | file | dir | none, $2: the word to complete
  local IFS=$'\n'
  case $1 in
    choices\ *)
      local words=${1#choices }
      COMPREPLY+=($(compgen -W "${words// /$'\n'}" -- "$2")) ;;
    file) COMPREPLY+=($(compgen -f -- "$2")); compopt -o filenames 2>/dev/null ;;
    dir) COMPREPLY+=($(compgen -d -- "$2")); compopt -o filenames 2>/dev/null ;;
  esac
}

@F@() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd REPLY
  COMPREPLY=()
  @F@_walk || return 0
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # --format=json: bash splits it at '=' (COMP_WORDBREAKS).
  if [[ $cur == = ]]; then
    cur=''
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  if [[ $prev == -* ]]; then
    @F@_value "$cmd" "$prev"
    if [[ -n $REPLY ]]; then
      @F@_offer "$REPLY" "$cur"
      return 0
    fi
  fi
  if [[ $cur == -* ]]; then
    @F@_options "$cmd"
    COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
    return 0
  fi
  @F@_commands "$cmd"
  COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
  @F@_positional "$cmd"
  @F@_offer "$REPLY" "$cur"
  return 0
}
complete -F @F@ @PROG@
)SH";

// Hands `ibcollect bundle ...` to ibcollect-support's completion: bash-completion loads it on
// demand; without bash-completion, the file beside this one.
const char* const kBashDelegate = R"SH(@F@_dir=${BASH_SOURCE[0]%/*}
[[ ${BASH_SOURCE[0]} == */* ]] || @F@_dir=.
@F@_delegated() {
  case $1 in
    @DELEGATED@)
      if ! declare -F @D@ >/dev/null && declare -F __load_completion >/dev/null; then
        __load_completion @DPROG@
      fi
      if ! declare -F @D@ >/dev/null && [[ -r $@F@_dir/@DPROG@ ]]; then
        . "$@F@_dir/@DPROG@"
      fi
      if declare -F @D@ >/dev/null; then @D@; fi
      return 0 ;;
  esac
  return 1
}
)SH";

std::string bashScript(const std::vector<CommandSpec>& tree, const std::string& program,
                       const std::string& delegate) {
  const std::string f = functionName(program);
  std::ostringstream out;
  out << "# bash completion for " << program << ", made by `" << program
      << " completion bash` from its\n# command-line definitions. Installed as "
         "/usr/share/bash-completion/completions/"
      << program << ";\n# or: source <(" << program << " completion bash)\n\n"
      << f << "_commands() {\n  case $1 in\n";
  for (const auto& c : tree) {
    if (!c.subcommands.empty())
      out << "    " << shQuote(c.path) << ") REPLY=" << shQuote(joined(c.subcommands)) << " ;;\n";
  }
  out << "    *) REPLY='' ;;\n  esac\n}\n" << f << "_options() {\n  case $1 in\n";
  for (const auto& c : tree) {
    std::vector<std::string> names;
    for (const auto& o : c.options) names.insert(names.end(), o.names.begin(), o.names.end());
    if (!names.empty())
      out << "    " << shQuote(c.path) << ") REPLY=" << shQuote(joined(names)) << " ;;\n";
  }
  out << "    *) REPLY='' ;;\n  esac\n}\n" << valueTables(tree, f);
  const auto delegated = delegatedPaths(tree);
  if (delegated.empty() || delegate.empty()) {
    out << f << "_delegated() { return 1; }\n";
  } else {
    std::string patterns;
    for (const auto& d : delegated) patterns += (patterns.empty() ? "" : " | ") + shQuote(d);
    out << replaced(kBashDelegate, {{"@DELEGATED@", patterns},
                                    {"@DPROG@", delegate},
                                    {"@D@", functionName(delegate)},
                                    {"@F@", f}});
  }
  out << "\n" << replaced(kBashWalker, {{"@PROG@", program}, {"@F@", f}});
  return out.str();
}

const char* const kZshWalker = R"SH(
@F@() {
  local cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd='' word i REPLY
  local -a reply names
  for ((i = 2; i < CURRENT; i++)); do
    word=${words[i]}
    if [[ $word == -* ]]; then
      @F@_value "$cmd" "$word"
      if [[ -n $REPLY && $word != *=* ]]; then ((i++)); fi
      continue
    fi
    @F@_commands "$cmd"
    names=(${reply%%:*})
    if (( ${names[(Ie)$word]} )); then
      cmd=${cmd:+$cmd }$word
      if @F@_delegated "$cmd"; then
        words[1]=@DPROG@
        _normal
        return
      fi
    fi
  done
  if [[ $prev == -* ]]; then
    @F@_value "$cmd" "$prev"
    case $REPLY in
      choices\ *) compadd -- ${=REPLY#choices }; return ;;
      file) _files; return ;;
      dir) _files -/; return ;;
      none) _message 'a number'; return ;;
    esac
  fi
  if [[ $cur == -* ]]; then
    @F@_options "$cmd"
    _describe -t options option reply
    return
  fi
  local ret=1
  @F@_commands "$cmd"
  (( $#reply )) && _describe -t commands command reply && ret=0
  @F@_positional "$cmd"
  case $REPLY in
    choices\ *) compadd -- ${=REPLY#choices } && ret=0 ;;
    file) _files && ret=0 ;;
    dir) _files -/ && ret=0 ;;
  esac
  return ret
}

if [[ $funcstack[1] == @F@ ]]; then
  @F@ "$@"
else
  compdef @F@ @PROG@
fi
)SH";

// An entry of _describe: "name:description" (names hold no colon).
std::string describeEntry(const std::string& name, const std::string& description) {
  return shQuote(name + ":" + shortDescription(description));
}

std::string zshScript(const std::vector<CommandSpec>& tree, const std::string& program,
                      const std::string& delegate) {
  const std::string f = "_" + program;
  const std::string h = "_" + functionName(program);  // helpers: __ibcollect_commands
  std::ostringstream out;
  out << "#compdef " << program << "\n# zsh completion for " << program << ", made by `" << program
      << " completion zsh` from its\n# command-line definitions. Installed as "
         "/usr/share/zsh/vendor-completions/_"
      << program << ";\n# or: source <(" << program << " completion zsh)\n\n"
      << h << "_commands() {\n  case $1 in\n";
  std::map<std::string, std::string> descriptions;
  for (const auto& c : tree) descriptions[c.path] = c.description;
  for (const auto& c : tree) {
    if (c.subcommands.empty()) continue;
    out << "    " << shQuote(c.path) << ") reply=(";
    for (const auto& s : c.subcommands)
      out << " " << describeEntry(s, descriptions[c.path.empty() ? s : c.path + " " + s]);
    out << " ) ;;\n";
  }
  out << "    *) reply=() ;;\n  esac\n}\n" << h << "_options() {\n  case $1 in\n";
  for (const auto& c : tree) {
    if (c.options.empty()) continue;
    out << "    " << shQuote(c.path) << ") reply=(";
    for (const auto& o : c.options) {
      for (const auto& n : o.names) out << " " << describeEntry(n, o.description);
    }
    out << " ) ;;\n";
  }
  out << "    *) reply=() ;;\n  esac\n}\n" << valueTables(tree, h);
  const auto delegated = delegatedPaths(tree);
  std::string patterns;
  for (const auto& d : delegated) patterns += (patterns.empty() ? "" : " | ") + shQuote(d);
  if (patterns.empty() || delegate.empty()) {
    out << h << "_delegated() { return 1; }\n";
  } else {
    out << h << "_delegated() {\n  case $1 in\n    " << patterns
        << ") return 0 ;;\n  esac\n  return 1\n}\n";
  }
  std::string walker =
      replaced(kZshWalker, {{"@F@_", h + "_"}, {"@DPROG@", delegate}, {"@PROG@", program}});
  return out.str() + replaced(walker, {{"@F@", f}});
}

const char* const kFishWalker =
    R"SH(function @H@_path --description 'The @PROG@ command before the cursor'
    set -l words (commandline -opc)
    set -l cmd ''
    set -l skip 0
    for word in $words[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $word
            if not string match -q -- '*=*' $word; and contains -- "$cmd|$word" $@H@_valued
                set skip 1
            end
            continue
        end
        set -l next (string trim -- "$cmd $word")
        if contains -- $next $@H@_paths
            set cmd $next
            contains -- $cmd $@H@_delegated; and break
        end
    end
    echo $cmd
end

function @H@_at --description 'Whether the command before the cursor is $argv[1]'
    set -l cmd (@H@_path)
    test "$cmd" = "$argv[1]"
end

function @H@_delegating
    set -l cmd (@H@_path)
    contains -- "$cmd" $@H@_delegated
end

function @H@_delegate --description 'Completes the line as @DPROG@'
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    complete -C (string join ' ' -- @DPROG@ $words[2..-1])" $cur"
end
)SH";

std::string fishOption(const std::string& program, const std::string& h, const CommandSpec& c,
                       const OptionSpec& o) {
  std::ostringstream out;
  out << "complete -c " << program << " -n " << fishQuote(h + "_at " + shQuote(c.path));
  for (const auto& n : o.names)
    out << (n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1));
  switch (o.value.kind) {
    case ValueKind::Flag: break;
    case ValueKind::Choices: out << " -x -a " << fishQuote(joined(o.value.choices)); break;
    case ValueKind::File: out << " -r -F"; break;
    case ValueKind::Directory: out << " -x -a '(__fish_complete_directories)'"; break;
    case ValueKind::Number: out << " -x"; break;
  }
  out << " -d " << fishQuote(shortDescription(o.description)) << "\n";
  return out.str();
}

std::string fishScript(const std::vector<CommandSpec>& tree, const std::string& program,
                       const std::string& delegate) {
  const std::string h = "_" + functionName(program);
  std::ostringstream out;
  out << "# fish completion for " << program << ", made by `" << program
      << " completion fish` from its\n# command-line definitions. Installed as "
         "/usr/share/fish/vendor_completions.d/"
      << program << ".fish;\n# or: " << program << " completion fish | source\n\n";
  std::vector<std::string> paths, valued;
  for (const auto& c : tree) {
    if (!c.path.empty()) paths.push_back(fishQuote(c.path));
    for (const auto& o : c.options) {
      if (o.value.kind == ValueKind::Flag) continue;
      for (const auto& n : o.names) valued.push_back(fishQuote(c.path + "|" + n));
    }
  }
  std::vector<std::string> delegated;
  if (!delegate.empty()) {
    for (const auto& d : delegatedPaths(tree)) delegated.push_back(fishQuote(d));
  }
  out << "set -g " << h << "_paths " << joined(paths) << "\nset -g " << h << "_valued "
      << joined(valued) << "\nset -g " << h << "_delegated " << joined(delegated) << "\n\n"
      << replaced(kFishWalker, {{"@H@", h}, {"@PROG@", program}, {"@DPROG@", delegate}}) << "\n";
  std::map<std::string, std::string> descriptions;
  for (const auto& c : tree) descriptions[c.path] = c.description;
  for (const auto& c : tree) {
    const std::string at = fishQuote(h + "_at " + shQuote(c.path));
    if (!c.positional || c.positional->kind != ValueKind::File) {
      out << "complete -c " << program << " -n " << at << " -f";
      if (c.positional && c.positional->kind == ValueKind::Choices)
        out << " -a " << fishQuote(joined(c.positional->choices));
      if (c.positional && c.positional->kind == ValueKind::Directory)
        out << " -a '(__fish_complete_directories)'";
      out << "\n";
    }
    for (const auto& s : c.subcommands) {
      out << "complete -c " << program << " -n " << at << " -a " << fishQuote(s) << " -d "
          << fishQuote(shortDescription(descriptions[c.path.empty() ? s : c.path + " " + s]))
          << "\n";
    }
    for (const auto& o : c.options) out << fishOption(program, h, c, o);
  }
  if (!delegated.empty())
    out << "complete -c " << program << " -f -n " << h << "_delegating -a '(" << h
        << "_delegate)'\n";
  return out.str();
}

struct CompletionArgs {
  std::string shell;
};

}  // namespace

CLI::Validator suggestedValues(const std::vector<std::string>& values) {
  std::string set = "{";
  for (const auto& v : values) set += (set.size() > 1 ? "," : "") + v;
  return CLI::Validator(set + "}");
}

void addCompletionCommand(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands,
                          const std::string& program, const std::string& delegate) {
  auto args = std::make_shared<CompletionArgs>();
  CLI::App* cmd = app.add_subcommand(
      "completion", "Print the shell completion script for " + program + " (bash, zsh or fish)");
  cmd->add_option("shell", args->shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->footer("Example: source <(" + program + " completion bash)");
  commands.push_back({[cmd] { return cmd->parsed(); },
                      [&env, &app, args, program, delegate] {
                        std::vector<CommandSpec> tree;
                        collect(app, "", tree);
                        if (args->shell == "bash") env.out << bashScript(tree, program, delegate);
                        if (args->shell == "zsh") env.out << zshScript(tree, program, delegate);
                        if (args->shell == "fish") env.out << fishScript(tree, program, delegate);
                        env.out.flush();
                        return env.out.good() ? core::kExitOk : core::kExitCollectFailed;
                      }});
}

}  // namespace ibc::agent::cli
