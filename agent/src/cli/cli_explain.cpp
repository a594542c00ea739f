// `ibcollect explain CODE | --list` (docs/commands.md, docs/codes.md): what a finding code means,
// what raises it, its class, whether it escalates to the provider and the next step — all read from
// core's finding registry (findings.h) and escalation (rules.h), never a table of its own.
// `explain --list --format markdown` is docs/codes.md (scripts/update-codes-md.sh).

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <sstream>

#include "ibc/agent/cli_common.h"
#include "ibc/core/findings.h"
#include "ibc/core/rules.h"
#include "ibc/core/text.h"

namespace ibc::agent::cli {

namespace {

constexpr std::size_t kTextWidth = 80;
constexpr std::size_t kSuggestions = 4;

struct ExplainArgs {
  std::string code;
  bool list = false;
  std::string format = "text";
};

// Codes are typed in any case, with '-' for '_' ("port-down").
std::string normalized(std::string_view typed) {
  std::string s(core::trim(typed));
  for (char& c : s)
    c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The names closest to what was typed: names it begins, then names holding it, then names
// within a few edits (a third of the name), in registry order among equals.
std::vector<std::string_view> nearestNames(const std::string& typed) {
  std::vector<std::pair<std::size_t, std::string_view>> scored;
  for (const auto& t : core::findingRegistry()) {
    std::size_t score = 0;
    if (t.name.rfind(typed, 0) == 0) {
      score = 0;
    } else if (typed.size() >= 3 && t.name.find(typed) != std::string_view::npos) {
      score = 1;
    } else {
      const std::size_t d = editDistance(typed, t.name);
      if (d > std::max<std::size_t>(2, t.name.size() / 3)) continue;
      score = 2 + d;
    }
    scored.emplace_back(score, t.name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < scored.size() && i < kSuggestions; ++i)
    out.push_back(scored[i].second);
  return out;
}

struct Escalation {
  std::string kind;  // escalationKindName; empty when it does not escalate
  std::string text;
  bool itself = false;  // a code of the escalation (class escalation)
  bool escalates() const { return !kind.empty(); }
  // The short answer: the kind, "no", or "it is the escalation".
  std::string answer() const { return escalates() ? kind : itself ? "it is the escalation" : "no"; }
};

// What escalation does with a code: core's escalationKindFor decides the kind; the words
// say when (docs/codes.md: transport symptoms only with a clean VF side).
Escalation escalationOf(const core::FindingTraits& t) {
  const std::string name(t.name);
  if (const auto kind = core::escalationKindFor({name})) {
    const std::string raises = " warning or critical " + name +
                               " on a VF, or on any RDMA device in a VM (its PF is the "
                               "provider's), raises ESCALATE_HOST_INSPECTION with the ";
    switch (*kind) {
      case core::EscalationKind::Physical:
        return {"physical", "A" + raises + "physical runbook: the PF, the cable, the switch port."};
      case core::EscalationKind::SubnetManager:
        return {"subnet_manager",
                "A" + raises +
                    "subnet manager runbook: the VF's GUIDs on the PF, its SR-IOV "
                    "policy, SM virtualization, pkey membership."};
      case core::EscalationKind::TransportPath:
        return {"transport_path",
                "Only when the VF side is clean (no physical or device evidence, no unknown port "
                "state): then a" +
                    raises + "transport path runbook: the PF and the path beyond it."};
    }
  }
  switch (t.finding_class) {
    case core::FindingClass::TenantConfig:
      return {"", "Never: tenant configuration, which the tenant fixes."};
    case core::FindingClass::Application: return {"", "Never: the application (the job itself)."};
    case core::FindingClass::Escalation:
      return {"",
              "It is part of the escalation: what the verdict asks of the provider, raised from "
              "other codes and never a reason for an escalation itself.",
              true};
    case core::FindingClass::HostSide:
      return {"",
              "Raised on the physical host by `ibcollect host-inspect`: already the provider's "
              "side."};
    default: return {"", "Never: an observation, no fault by itself; it supports other findings."};
  }
}

// `text` as an indented paragraph of kTextWidth columns.
std::string paragraph(std::string_view text) {
  std::string out;
  const std::string wrapped = core::wrapWords(text, kTextWidth - 2);
  for (const auto line : core::splitLines(wrapped)) out += "  " + std::string(line) + "\n";
  return out;
}

std::string explainText(const core::FindingTraits& t) {
  const Escalation e = escalationOf(t);
  std::ostringstream out;
  out << t.name << "\n"
      << paragraph("Area " + std::string(t.area) + ", " +
                   std::string(core::severityName(t.default_severity)) + " by default, class " +
                   std::string(core::findingClassName(t.finding_class)) + ".")
      << "\n"
      << "What it means:\n"
      << paragraph(t.meaning) << "\nWhat raises it:\n"
      << paragraph(t.evidence)
      << "\nEscalates to the provider: " << (e.escalates() ? "yes (" + e.kind + ")" : e.answer())
      << "\n"
      << paragraph(e.text) << "\nNext step:\n"
      << paragraph(t.next_step);
  return out.str();
}

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string explainJson(const core::FindingTraits& t, const std::string& indent) {
  const Escalation e = escalationOf(t);
  const std::string in = indent + "  ";
  std::ostringstream out;
  out << indent << "{\n"
      << in << "\"code\": " << jsonString(t.name) << ",\n"
      << in << "\"area\": " << jsonString(t.area) << ",\n"
      << in << "\"default_severity\": " << jsonString(core::severityName(t.default_severity))
      << ",\n"
      << in << "\"class\": " << jsonString(core::findingClassName(t.finding_class)) << ",\n"
      << in << "\"specificity\": " << t.specificity << ",\n"
      << in << "\"meaning\": " << jsonString(t.meaning) << ",\n"
      << in << "\"evidence\": " << jsonString(t.evidence) << ",\n"
      << in << "\"escalation\": {\"escalates\": " << (e.escalates() ? "true" : "false")
      << ", \"kind\": " << (e.escalates() ? jsonString(e.kind) : std::string("null"))
      << ", \"text\": " << jsonString(e.text) << "},\n"
      << in << "\"next_step\": " << jsonString(t.next_step) << "\n"
      << indent << "}";
  return out.str();
}

// Markdown of registry text: backticks stay code spans; outside them '<' and '*' would be
// markup, and so would a '_' that is not inside a word (NCCL_IB_HCA is not emphasis).
std::string markdownText(std::string_view text) {
  const auto inWord = [&](std::size_t i) {
    return i < text.size() && std::isalnum(static_cast<unsigned char>(text[i])) != 0;
  };
  std::string out;
  bool code = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '`') code = !code;
    if (!code && c == '<') {
      out += "&lt;";
      continue;
    }
    if (!code && (c == '*' || (c == '_' && !(i > 0 && inWord(i - 1) && inWord(i + 1)))))
      out += '\\';
    out += c;
  }
  return out;
}

std::string explainMarkdown(const core::FindingTraits& t) {
  const Escalation e = escalationOf(t);
  std::ostringstream out;
  out << "### " << t.name << "\n\n"
      << "Area " << t.area << ", " << core::severityName(t.default_severity)
      << " by default, class `" << core::findingClassName(t.finding_class) << "`.\n\n"
      << "- **What it means.** " << markdownText(t.meaning) << "\n"
      << "- **What raises it.** " << markdownText(t.evidence) << "\n"
      << "- **Escalates to the provider:** "
      << (e.escalates() ? "yes (`" + e.kind + "`)." : e.answer() + ".") << " "
      << markdownText(e.text) << "\n"
      << "- **Next step.** " << markdownText(t.next_step) << "\n";
  return out.str();
}

// The registry's areas in the order they first appear, each with its codes.
std::vector<std::pair<std::string_view, std::vector<const core::FindingTraits*>>> byArea() {
  std::vector<std::pair<std::string_view, std::vector<const core::FindingTraits*>>> areas;
  for (const auto& t : core::findingRegistry()) {
    auto it =
        std::find_if(areas.begin(), areas.end(), [&](const auto& a) { return a.first == t.area; });
    if (it == areas.end()) it = areas.insert(areas.end(), {t.area, {}});
    it->second.push_back(&t);
  }
  return areas;
}

std::string padded(std::string_view s, std::size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

std::string listText() {
  std::ostringstream out;
  out << core::findingRegistry().size() << " finding codes; 'ibcollect explain CODE' tells one.\n";
  out << "\n  " << padded("CODE", 26) << padded("SEVERITY", 10) << padded("CLASS", 19)
      << "ESCALATES\n";
  for (const auto& [area, codes] : byArea()) {
    out << "\n" << area << "\n";
    for (const auto* t : codes) {
      const Escalation e = escalationOf(*t);
      out << "  " << padded(t->name, 26) << padded(core::severityName(t->default_severity), 10)
          << padded(core::findingClassName(t->finding_class), 19) << e.answer() << "\n";
    }
  }
  return out.str();
}

std::string listJson() {
  std::string out = "{\"codes\": [\n";
  const auto& all = core::findingRegistry();
  for (std::size_t i = 0; i < all.size(); ++i)
    out += explainJson(all[i], "  ") + (i + 1 < all.size() ? ",\n" : "\n");
  return out + "]}\n";
}

std::string listMarkdown() {
  std::ostringstream out;
  out << "# Finding codes\n\n"
      << "<!-- Generated from core's finding registry by `ibcollect explain --list --format "
         "markdown`\n     (scripts/update-codes-md.sh); do not edit by hand. -->\n\n"
      << "Every finding ibcollect reports carries one of these stable codes. "
         "`ibcollect explain CODE` prints the same text. A finding's own summary, evidence and "
         "action are fitted to what it saw; this page says what each code means in general.\n\n"
      << "| code | area | default severity | class | escalates |\n|---|---|---|---|---|\n";
  for (const auto& t : core::findingRegistry()) {
    const Escalation e = escalationOf(t);
    out << "| [`" << t.name << "`](#" << core::toLower(t.name) << ") | " << t.area << " | "
        << core::severityName(t.default_severity) << " | `"
        << core::findingClassName(t.finding_class) << "` | "
        << (e.escalates() ? "yes (`" + e.kind + "`)" : e.answer()) << " |\n";
  }
  for (const auto& [area, codes] : byArea()) {
    out << "\n## " << area << "\n";
    for (const auto* t : codes) out << "\n" << explainMarkdown(*t);
  }
  return out.str();
}

int unknownCode(CliEnvironment& env, const std::string& typed) {
  env.err << "ibcollect explain: no finding code \"" << typed << "\"";
  const auto near = nearestNames(normalized(typed));
  for (std::size_t i = 0; i < near.size(); ++i)
    env.err << (i == 0 ? "; did you mean " : ", ") << near[i];
  env.err << (near.empty() ? "" : "?") << "\nRun 'ibcollect explain --list' for every code.\n";
  return core::kExitUsage;
}

int runExplain(CliEnvironment& env, const ExplainArgs& a) {
  if (a.list == !a.code.empty()) {
    env.err << "ibcollect explain: give one finding CODE or --list\n"
            << "Run 'ibcollect explain --help' for usage.\n";
    return core::kExitUsage;
  }
  if (a.list) {
    env.out << (a.format == "json"       ? listJson()
                : a.format == "markdown" ? listMarkdown()
                                         : listText());
    return core::kExitOk;
  }
  const auto* t = core::findingTraits(normalized(a.code));
  if (t == nullptr) return unknownCode(env, a.code);
  if (a.format == "json") {
    env.out << explainJson(*t, "") << "\n";
  } else {
    env.out << (a.format == "markdown" ? explainMarkdown(*t) : explainText(*t));
  }
  return core::kExitOk;
}

}  // namespace

void addExplainCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* ex = app.add_subcommand(
      "explain", "What a finding code means, what raises it, whether it escalates, the next step");
  std::vector<std::string> names;
  for (const auto& t : core::findingRegistry()) names.emplace_back(t.name);
  ex->add_option("code", args->code, "Finding code, in any case (e.g. port_not_active_sm)")
      ->check(suggestedValues(names))
      ->option_text("CODE");
  ex->add_flag("--list", args->list, "List every code with its severity, class and escalation");
  ex->add_option("--format", args->format,
                 "Output: text, json, or markdown (--list --format markdown is docs/codes.md)")
      ->check(CLI::IsMember({"text", "json", "markdown"}))
      ->capture_default_str();
  ex->footer("Exits 0 when explained, 3 on a usage error (an unknown code names the nearest).");
  commands.push_back(
      {[ex] { return ex->parsed(); }, [&env, args] { return runExplain(env, *args); }});
}

}  // namespace ibc::agent::cli
