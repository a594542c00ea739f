// escalation.h: the suspects core escalates (on the real job as VMs see it), their reasons in
// words, the PF runbook for the checked nodes and the part the page renders, the case request,
// and the command lines with the real job id and case.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "console_fixtures.h"
#include "ibc/console/bundle_plan.h"
#include "ibc/console/escalation.h"
#include "ibc/console/job_data.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::console {
namespace {

TEST(Escalation, ACaseRequestCoversTheCheckedNodesSnapshotIdsAndCodes) {
  JobData j = job();
  // Opened files are not in the collector: no case can cover them.
  EXPECT_EQ(caseRequestFor(j, {0}, {}).tenant(), "");
  // As if fetched from the collector: a tenant and one id per snapshot.
  j.tenant = "acme";
  for (int i = 0; i < j.report.nodes_size(); ++i) {
    j.snapshot_ids.push_back(std::string(63, 'a') + static_cast<char>('0' + i));
  }
  const int down = nodeLabelled(j, "node2183");
  std::set<int> flaps;
  for (int i = 0; i < j.report.findings_size(); ++i) {
    if (j.report.findings(i).code() == "KERNEL_LINK_FLAP") flaps.insert(i);
  }
  const auto r = caseRequestFor(j, {down}, flaps);
  EXPECT_EQ(r.tenant(), "acme");
  ASSERT_EQ(r.snapshot_ids_size(), 1);
  EXPECT_EQ(r.snapshot_ids(0), j.snapshot_ids[static_cast<std::size_t>(down)]);
  ASSERT_EQ(r.nodes_size(), 1);
  EXPECT_EQ(r.nodes(0), "node2183");
  ASSERT_EQ(r.finding_codes_size(), 1);
  EXPECT_EQ(r.finding_codes(0), "KERNEL_LINK_FLAP");
  EXPECT_THAT(r.title(), HasSubstr("KERNEL_LINK_FLAP on 1 node(s)"));

  // Every node, every finding: plain node names (never a label with the file), codes sorted.
  std::vector<int> all;
  for (int i = 0; i < j.report.nodes_size(); ++i) all.push_back(i);
  const auto every = caseRequestFor(j, all, {});
  EXPECT_EQ(every.snapshot_ids_size(), j.report.nodes_size());
  for (const auto& n : every.nodes()) EXPECT_THAT(n, Not(HasSubstr(" ")));
  EXPECT_TRUE(std::is_sorted(every.finding_codes().begin(), every.finding_codes().end()));
  EXPECT_GT(every.finding_codes_size(), 1);
}

TEST(Escalation, SuspectsAreWhatTheJobVerdictEscalatedAndTheRunbookCoversOnlyTheCheckedOnes) {
  // Bare metal: nothing is the provider's to inspect.
  EXPECT_TRUE(suspectNodes(job()).empty());
  const JobData& j = vmJob();
  const int slow = nodeLabelled(j, "node1720 (gpu02.ibsnap)");
  const int down = nodeLabelled(j, "node2183");
  const int stuck = nodeLabelled(j, "node1661");
  const auto suspects = suspectNodes(j);
  // Links at 100 Gb/s and a port down are the PF's to inspect; ports stuck in INIT go to the
  // subnet manager's runbook; the healthy node is nobody's.
  EXPECT_EQ(std::set<int>(suspects.begin(), suspects.end()), (std::set<int>{slow, down, stuck}));
  const auto sm = pfInspectionFor(j, {stuck}, {}, "4242");
  EXPECT_GT(sm.suspects_size(), 0);
  for (const auto& vf : sm.suspects()) EXPECT_EQ(vf.escalation(), "subnet_manager") << vf.device();
  const auto physical = pfInspectionFor(j, {slow}, {}, "4242");
  EXPECT_GT(physical.suspects_size(), 0);
  for (const auto& vf : physical.suspects()) EXPECT_EQ(vf.escalation(), "physical") << vf.device();
  const auto all = pfInspectionFor(j, suspects, {}, "4242");
  std::set<std::string> nodes;
  for (const auto& s : all.suspects()) nodes.insert(s.node());
  EXPECT_EQ(nodes, (std::set<std::string>{"node1720 (gpu02.ibsnap)", "node2183", "node1661"}));
  EXPECT_EQ(all.job_id(), "4242");

  // Only node2183's link flaps handed over: its one port, nothing of the other node.
  std::set<int> flaps;
  for (int i = 0; i < j.report.findings_size(); ++i) {
    if (j.report.findings(i).code() == "KERNEL_LINK_FLAP") flaps.insert(i);
  }
  ASSERT_EQ(flaps.size(), 1u);
  const auto one = pfInspectionFor(j, {down}, flaps, "4242");
  ASSERT_EQ(one.suspects_size(), 1);
  EXPECT_EQ(one.suspects(0).node(), "node2183");
  EXPECT_EQ(one.suspects(0).device(), "mlx5_6");
}

TEST(BundlePlan, TheRunbookPaneRendersOnlyTheSelectedNodesVfSections) {
  // core's pf-inspection.md of two real VM nodes (SYNTHETIC DMI on real captures).
  const SignedJob s = signedVmJob();
  const int slow = nodeLabelled(s.job, "node1720 (gpu02.ibsnap)");
  const int stuck = nodeLabelled(s.job, "node1661");
  const BundlePlan plan = planBundle(bundlePlanInputs(s.job, {slow, stuck}, ""), false);
  const std::string& md = plan.pf_inspection_md;
  const auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const int total = count(md, "\n## ");
  ASSERT_GT(count(md, "\n## node1661 "), 0);
  ASSERT_GT(count(md, "\n## node1720 "), 0);
  ASSERT_EQ(total, count(md, "\n## node1661 ") + count(md, "\n## node1720 "));

  const RunbookPart stuck_part = runbookOfNode(md, "node1661");
  EXPECT_EQ(stuck_part.total, total);
  EXPECT_EQ(stuck_part.shown, count(md, "\n## node1661 "));
  EXPECT_EQ(count(stuck_part.markdown, "\n## node1720 "), 0);
  EXPECT_EQ(stuck_part.markdown.rfind("# PF inspection\n", 0), 0u);  // the preamble stays
  // Each section shown is the runbook's own, word for word.
  const auto first = stuck_part.markdown.find("\n## ");
  ASSERT_NE(first, std::string::npos);
  EXPECT_THAT(md, HasSubstr(stuck_part.markdown.substr(first)));

  // A node without a section (or none selected): the first section, said to be one of many.
  const RunbookPart none = runbookOfNode(md, "");
  EXPECT_EQ(none.shown, 1);
  EXPECT_EQ(count(none.markdown, "\n## "), 1);
  EXPECT_EQ(runbookOfNode(md, "node17").shown, 1);  // a prefix is not the node
  // A runbook without suspects is shown whole.
  const RunbookPart empty = runbookOfNode("# PF inspection\n\nNothing to inspect.\n", "x");
  EXPECT_EQ(empty.total, 0);
  EXPECT_EQ(empty.markdown, "# PF inspection\n\nNothing to inspect.\n");
}

TEST(Escalation, EachSuspectSaysItsKindInWordsAndAVfNothingIdentifiesIsMarked) {
  const SignedJob s = signedVmJob();
  const auto reasons = suspectReasons(s.job);
  const int slow = nodeLabelled(s.job, "node1720 (gpu02.ibsnap)");
  const int stuck = nodeLabelled(s.job, "node1661");
  std::map<int, SuspectReason> by_node;
  for (const auto& r : reasons) by_node[r.node] = r;
  ASSERT_TRUE(by_node.count(stuck) && by_node.count(slow));
  ASSERT_FALSE(by_node[stuck].lines.empty());
  EXPECT_EQ(by_node[stuck].lines[0].rfind("subnet manager: PORT_NOT_ACTIVE_SM on mlx5_", 0), 0u)
      << by_node[stuck].lines[0];
  EXPECT_EQ(by_node[stuck].codes, std::vector<std::string>{"PORT_NOT_ACTIVE_SM"});
  ASSERT_FALSE(by_node[slow].lines.empty());
  EXPECT_EQ(by_node[slow].lines[0].rfind("physical link or device: ", 0), 0u)
      << by_node[slow].lines[0];
  // The VFs marked are exactly the ones core raised VF_IDENTITY_MISSING for (these real
  // captures' GUID files hold their own names: unknown).
  int marked = 0;
  for (const auto& [node, r] : by_node) {
    std::set<std::string> raised;
    for (const int f : findingsOfNode(s.job, node)) {
      const auto& finding = s.job.report.findings(f);
      if (finding.code() == "VF_IDENTITY_MISSING") raised.insert(finding.device());
    }
    std::set<std::string> devices;
    for (const auto& vf : r.identity_missing) devices.insert(vf.substr(0, vf.find('/')));
    EXPECT_EQ(devices, raised) << node;
    marked += static_cast<int>(r.identity_missing.size());
  }
  EXPECT_GT(marked, 0);
  EXPECT_EQ(escalationWords("transport_path"), "transport path");
  // The order is suspectNodes'.
  std::vector<int> order;
  for (const auto& r : reasons) order.push_back(r.node);
  EXPECT_EQ(order, suspectNodes(s.job));
}

TEST(Escalation, TheCommandCarriesTheRealJobIdAndTheJobsCaseInsteadOfCreatingAnother) {
  const SignedJob s = signedVmJob();
  JobData j = s.job;
  // Opened files: named, and the bundle named after the job.
  const auto files = escalationCommands(j, {0, 1}, nullptr, false);
  EXPECT_THAT(files.export_line, HasSubstr(jobFiles()[0]));
  EXPECT_THAT(files.export_line, HasSubstr("-o job4242.ibbundle"));
  EXPECT_THAT(files.export_line, Not(HasSubstr("<JOB>")));
  EXPECT_THAT(files.host_line, HasSubstr("--bundle job4242.ibbundle"));
  EXPECT_NE(escalationCommands(j, {0}, nullptr, true).export_line.find(" --redact"),
            std::string::npos);
  EXPECT_EQ(jobIdOf(j, {0, 3}), "4242");

  // From the collector.
  j.tenant = "acme";
  for (int i = 0; i < j.report.nodes_size(); ++i)
    j.snapshot_ids.push_back(std::string(63, 'a') + char('0' + i));
  const auto by_job = escalationCommands(j, {0, 1}, nullptr, false);
  EXPECT_THAT(by_job.export_line, HasSubstr("--job 4242 --tenant acme"));
  EXPECT_THAT(by_job.note, HasSubstr("every node of the job (4)"));
  EXPECT_TRUE(escalationCommands(j, {0, 1, 2, 3}, nullptr, false).note.empty());

  std::vector<v1::Case> cases(3);
  cases[0].set_case_id("case-old");
  cases[0].set_tenant("acme");
  cases[0].set_job_id("4242");
  cases[0].set_state(v1::CASE_STATE_CLOSED);
  cases[0].set_updated_at_unix_ms(900);
  cases[1].set_case_id("case-other-job");
  cases[1].set_tenant("acme");
  cases[1].set_job_id("77");
  cases[2].set_case_id("case-open");
  cases[2].set_tenant("acme");
  cases[2].set_job_id("4242");
  cases[2].set_state(v1::CASE_STATE_OPEN);
  cases[2].set_updated_at_unix_ms(100);
  cases[2].add_snapshot_ids(j.snapshot_ids[0]);
  cases[2].add_snapshot_ids(j.snapshot_ids[1]);
  const v1::Case* found = caseOfJob(cases, "acme", "4242");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->case_id(), "case-open");
  EXPECT_EQ(caseOfJob(cases, "globex", "4242"), nullptr);
  EXPECT_EQ(caseOfJob(cases, "acme", ""), nullptr);
  const auto by_case = escalationCommands(j, {0, 1}, found, false);
  EXPECT_THAT(by_case.export_line, HasSubstr("--case case-open --tenant acme"));
  EXPECT_TRUE(by_case.note.empty()) << by_case.note;
  EXPECT_NE(escalationCommands(j, {0}, found, false).note.find("case's 2 snapshot(s)"),
            std::string::npos);
}

}  // namespace
}  // namespace ibc::console
