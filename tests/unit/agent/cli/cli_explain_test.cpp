// `ibcollect explain` (cli_explain.cpp) over the whole finding registry, through runCli (what
// main() runs) with string streams.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "cli_run.h"
#include "ibc/agent/cli.h"
#include "ibc/core/findings.h"
#include "ibc/core/rules.h"
#include "ibc/core/text.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

using ibc::test::CliRun;

CliRun run(CliRunner program, const std::vector<std::string>& args) {
  return ibc::test::runWritingNothing(program, args);
}

CliRun explain(const std::vector<std::string>& args) {
  std::vector<std::string> all{"explain"};
  all.insert(all.end(), args.begin(), args.end());
  return run(&runCli, all);
}

// The text after `heading` up to the next blank line.
std::string section(const std::string& text, const std::string& heading) {
  const auto at = text.find("\n" + heading);
  if (at == std::string::npos) return {};
  const auto start = text.find('\n', at + 1);
  const auto end = text.find("\n\n", start);
  return std::string(core::trim(text.substr(start, end == std::string::npos ? end : end - start)));
}

TEST(Explain, EveryCodeOfTheRegistryIsExplainedWithItsClassEscalationAndNextStep) {
  for (const auto& t : core::findingRegistry()) {
    const std::string name(t.name);
    SCOPED_TRACE(name);
    EXPECT_FALSE(t.evidence.empty());
    EXPECT_FALSE(t.next_step.empty());
    const CliRun r = explain({name});
    ASSERT_EQ(r.code, core::kExitOk) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_EQ(r.out.rfind(name + "\n", 0), 0u) << r.out;
    EXPECT_THAT(r.out, HasSubstr("class " + std::string(core::findingClassName(t.finding_class))));
    // The escalation line follows core's escalation, never a list of explain's own.
    const auto kind = core::escalationKindFor({name});
    const std::string answer =
        kind ? "yes (" + std::string(core::escalationKindName(*kind)) + ")"
             : (t.finding_class == core::FindingClass::Escalation ? "it is the escalation" : "no");
    EXPECT_THAT(r.out, HasSubstr("\nEscalates to the provider: " + answer + "\n"));
    EXPECT_FALSE(section(r.out, "What it means:").empty()) << r.out;
    EXPECT_FALSE(section(r.out, "What raises it:").empty()) << r.out;
    EXPECT_FALSE(section(r.out, "Escalates to the provider:").empty()) << r.out;
    const std::string next = section(r.out, "Next step:");
    EXPECT_FALSE(next.empty()) << r.out;
    EXPECT_EQ(next.substr(0, 12), std::string(t.next_step.substr(0, 12))) << r.out;
    for (const auto line : core::splitLines(r.out)) EXPECT_LE(line.size(), 80u) << line;
  }
}

TEST(Explain, CodesAreMatchedInAnyCaseAndWithDashes) {
  const CliRun lower = explain({"port_not_active_sm"});
  EXPECT_EQ(lower.code, core::kExitOk) << lower.err;
  EXPECT_EQ(lower.out, explain({"PORT_NOT_ACTIVE_SM"}).out);
  EXPECT_EQ(explain({"Nccl-Socket-Fallback"}).out, explain({"NCCL_SOCKET_FALLBACK"}).out);
}

TEST(Explain, TheClassDecidesTheEscalationLine) {
  EXPECT_NE(explain({"PORT_NOT_ACTIVE_SM"}).out.find("yes (subnet_manager)"), std::string::npos);
  EXPECT_NE(explain({"PHY_ERRORS"}).out.find("yes (physical)"), std::string::npos);
  const std::string retries = explain({"TRANSPORT_RETRIES"}).out;
  EXPECT_THAT(retries, HasSubstr("yes (transport_path)"));
  EXPECT_THAT(retries, HasSubstr("Only when the VF side is clean"));
  const std::string memlock = explain({"MEMLOCK_LIMIT"}).out;
  EXPECT_THAT(memlock, HasSubstr("Escalates to the provider: no\n  Never: tenant configuration"));
  EXPECT_NE(explain({"NCCL_COLLECTIVE_TIMEOUT"}).out.find("Never: the application"),
            std::string::npos);
}

TEST(Explain, AnUnknownCodeExitsThreeNamingTheNearestCodes) {
  const CliRun typo = explain({"PORT_DWN"});
  EXPECT_EQ(typo.code, core::kExitUsage);
  EXPECT_TRUE(typo.out.empty()) << typo.out;
  EXPECT_THAT(typo.err, HasSubstr("no finding code \"PORT_DWN\"; did you mean PORT_DOWN"));
  const CliRun lower = explain({"nccl_socket_fallbak"});
  EXPECT_EQ(lower.code, core::kExitUsage);
  EXPECT_THAT(lower.err, HasSubstr("did you mean NCCL_SOCKET_FALLBACK"));
  const CliRun prefix = explain({"pf_"});
  EXPECT_EQ(prefix.code, core::kExitUsage);
  EXPECT_THAT(prefix.err, HasSubstr("PF_NOT_FOUND"));
  const CliRun nothing = explain({"ZZZZZZZZZZZZ"});
  EXPECT_EQ(nothing.code, core::kExitUsage);
  EXPECT_THAT(nothing.err, Not(HasSubstr("did you mean")));
  EXPECT_THAT(nothing.err, HasSubstr("ibcollect explain --list"));
}

TEST(Explain, NeitherOrBothACodeAndListIsAUsageError) {
  EXPECT_EQ(explain({}).code, core::kExitUsage);
  const CliRun both = explain({"PORT_DOWN", "--list"});
  EXPECT_EQ(both.code, core::kExitUsage);
  EXPECT_THAT(both.err, HasSubstr("give one finding CODE or --list"));
  EXPECT_EQ(explain({"PORT_DOWN", "--format", "yaml"}).code, core::kExitUsage);
}

TEST(Explain, ListNamesEveryCodeOnceWithItsSeverityClassAndEscalation) {
  const CliRun r = explain({"--list"});
  ASSERT_EQ(r.code, core::kExitOk) << r.err;
  std::set<std::string> listed;
  for (const auto line : core::splitLines(r.out)) {
    const auto words = core::splitWhitespace(line);
    if (words.size() < 4 || core::findingTraits(words[0]) == nullptr) continue;
    EXPECT_TRUE(listed.insert(std::string(words[0])).second) << line;
    const auto* t = core::findingTraits(words[0]);
    EXPECT_EQ(words[1], core::severityName(t->default_severity)) << line;
    EXPECT_EQ(words[2], core::findingClassName(t->finding_class)) << line;
  }
  EXPECT_EQ(listed.size(), core::findingRegistry().size()) << r.out;
  for (const auto line : core::splitLines(r.out)) EXPECT_LE(line.size(), 80u) << line;
}

TEST(Explain, JsonHoldsEveryColumnOfEveryCode) {
  const CliRun r = explain({"--list", "--format", "json"});
  ASSERT_EQ(r.code, core::kExitOk) << r.err;
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &doc).ok()) << r.out;
  const auto& codes = doc.fields().at("codes").list_value();
  ASSERT_EQ(static_cast<std::size_t>(codes.values_size()), core::findingRegistry().size());
  for (int i = 0; i < codes.values_size(); ++i) {
    const auto& f = codes.values(i).struct_value().fields();
    const auto& t = core::findingRegistry()[static_cast<std::size_t>(i)];
    EXPECT_EQ(f.at("code").string_value(), t.name);
    EXPECT_EQ(f.at("class").string_value(), core::findingClassName(t.finding_class));
    EXPECT_EQ(f.at("evidence").string_value(), t.evidence);
    EXPECT_EQ(f.at("next_step").string_value(), t.next_step);
    const auto& e = f.at("escalation").struct_value().fields();
    EXPECT_EQ(e.at("escalates").bool_value(),
              core::escalationKindFor({std::string(t.name)}).has_value())
        << t.name;
  }
  const CliRun one = explain({"cqe_errors", "--format", "json"});
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(one.out, &doc).ok()) << one.out;
  EXPECT_EQ(doc.fields().at("code").string_value(), "CQE_ERRORS");
}

TEST(Explain, MarkdownHasASectionPerCodeAndNoStrayMarkup) {
  const CliRun r = explain({"--list", "--format", "markdown"});
  ASSERT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("# Finding codes\n", 0), 0u);
  for (const auto& t : core::findingRegistry()) {
    EXPECT_THAT(r.out, HasSubstr("\n### " + std::string(t.name) + "\n")) << t.name;
    EXPECT_THAT(r.out, HasSubstr("(#" + core::toLower(t.name) + ")")) << t.name;
  }
  // Placeholders such as <pci> stay inside code spans or are escaped: never raw HTML.
  bool code = false;
  for (const char c : r.out.substr(r.out.find("\n## "))) {
    if (c == '`') code = !code;
    if (c == '<' && !code) {
      EXPECT_TRUE(false) << "a raw '<' outside a code span";
      break;
    }
  }
}

}  // namespace
}  // namespace ibc::agent
