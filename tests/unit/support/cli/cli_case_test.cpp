// `case create|list|show|update|attach` (cli_case.cpp) in-process through runSupportCli:
// usage errors before anything is sent, a collector that cannot be reached (exit 4 with the
// reason), and a case's life against an in-process collector holding a signed job.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.h"
#include "collector_job.h"
#include "ibc/core/findings.h"
#include "ibc/support/support_cli.h"

using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;
using ibc::test::CliRun;

class CaseCommand : public ::testing::Test {
 protected:
  void SetUp() override { h_.clock = &h_.system_clock; }
  CliRun run(std::vector<std::string> args) {
    return h_.run(&runSupportCli, setup_.withSupportFlags(std::move(args)));
  }
  // The id of a new case on job 77 ("case ID  open  revision N" is the first line).
  std::string createCase() {
    const auto r = run({"case", "create", "--tenant", "acme", "--job", "77", "--title", "slow"});
    EXPECT_EQ(r.code, core::kExitOk) << r.err;
    const auto start = r.out.find("case ") + 5;
    return r.out.substr(start, r.out.find(' ', start) - start);
  }
  std::string file(const std::string& name) const { return setup_.job().dir + "/" + name; }

  ibc::test::CollectorWithJob setup_;
  CliHarness h_;
};

TEST_F(CaseCommand, CreateCoversTheJobsNewestSnapshotOfEveryNode) {
  const auto r = run({"case", "create", "--tenant", "acme", "--job", "77", "--title",
                      "slow allreduce", "--node", "node01", "--code", "TRANSPORT_RETRIES"});
  EXPECT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("case case-"));
  EXPECT_THAT(r.out, HasSubstr("  open  revision 1\n"));
  EXPECT_THAT(r.out, HasSubstr("  tenant acme, job 77\n  title: slow allreduce\n"));
  EXPECT_THAT(r.out, HasSubstr("  created by alice at "));
  EXPECT_THAT(r.out, HasSubstr("  snapshots: 2\n"));
  EXPECT_THAT(r.out, HasSubstr("  nodes: node01\n  findings: TRANSPORT_RETRIES\n"));
}

TEST_F(CaseCommand, ListAndShowFindTheCase) {
  const std::string id = createCase();
  const auto list = run({"case", "list", "--tenant", "acme"});
  EXPECT_EQ(list.code, core::kExitOk) << list.err;
  EXPECT_THAT(list.out, HasSubstr(id + "  open  tenant acme  job 77  2 snapshot(s)  0 host "
                                       "result(s)  slow\n"));
  const auto closed = run({"case", "list", "--state", "closed"});
  EXPECT_EQ(closed.out, "no cases\n");
  const auto show = run({"case", "show", id, "--format", "json"});
  EXPECT_EQ(show.code, core::kExitOk) << show.err;
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(show.out, &doc).ok()) << show.out;
  EXPECT_EQ(doc.fields().at("case_id").string_value(), id);
}

TEST_F(CaseCommand, UpdateChangesStateAndAddsANoteAtTheNextRevision) {
  const std::string id = createCase();
  const auto r = run({"case", "update", id, "--state", "escalated", "--note", "cable?\nport 3"});
  EXPECT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("case " + id + "  escalated  revision 2\n"));
  EXPECT_THAT(r.out, HasSubstr("  notes: 1\n"));
  EXPECT_THAT(r.out, HasSubstr("      cable?\n      port 3\n"));
  // A stale revision is refused by the collector: exit 4 with its reason.
  const auto stale = run({"case", "update", id, "--title", "x", "--expect-revision", "1"});
  EXPECT_EQ(stale.code, core::kExitCollectFailed);
  EXPECT_THAT(stale.err, HasSubstr("ibcollect: case update at 127.0.0.1:"));
}

TEST_F(CaseCommand, AttachTakesHostInspectJsonAndNamesItsHost) {
  const std::string id = createCase();
  const std::string report = ibc::test::writeTestFile(
      file("hv17.json"), R"({"host": "hv17", "findings": [], "ibcollectVersion": "1"})");
  const auto r = run({"case", "attach", id, report});
  EXPECT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  host results: 1\n    hv17, attached by alice at "));
  // The whole document travels: 57 bytes here.
  EXPECT_THAT(r.out, HasSubstr(" (57 bytes)\n"));
}

TEST_F(CaseCommand, AttachRefusesWhatIsNotHostInspectJsonOrNamesNoHost) {
  const std::string text = ibc::test::writeTestFile(file("notes.txt"), "the cable was loose\n");
  const auto r = run({"case", "attach", "case-1", text});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err,
            "ibcollect: " + text + " is not the JSON of `ibcollect host-inspect --format json`\n");
  const std::string nameless = ibc::test::writeTestFile(file("nameless.json"), "{}");
  const auto n = run({"case", "attach", "case-1", nameless});
  EXPECT_EQ(n.code, core::kExitUsage);
  EXPECT_EQ(n.err, "ibcollect: " + nameless + " does not name its host: add --host NAME\n");
}

TEST_F(CaseCommand, CreateAndUpdateWithNothingToDoAreUsageErrors) {
  const auto c = run({"case", "create", "--tenant", "acme"});
  EXPECT_EQ(c.code, core::kExitUsage);
  EXPECT_THAT(c.err, HasSubstr("case create needs --job ID (its newest snapshot of every node) or "
                               "snapshot ids"));
  const auto u = run({"case", "update", "case-1"});
  EXPECT_EQ(u.code, core::kExitUsage);
  EXPECT_THAT(u.err, HasSubstr("case update needs something to change"));
  EXPECT_EQ(u.out, "");
}

TEST_F(CaseCommand, AnAgentCertificateMayNotReadCases) {
  CliHarness h;
  h.clock = &h.system_clock;
  auto args = setup_.flags(setup_.job().node01);
  args.insert(args.begin(), {"case", "list"});
  const auto r = h.run(&runSupportCli, args);
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("is an agent certificate"));
}

TEST(CaseCommandOffline, ACollectorThatCannotBeReachedIsExitFourWithTheReason) {
  const auto job = ibc::test::makeSignedJob("case-offline");
  const std::string empty = ibc::test::writeTestFile(job.dir + "/empty.conf", "");
  CliHarness h;
  h.clock = &h.system_clock;
  const auto r =
      h.run(&runSupportCli, {"case", "list", "--config", empty, "--collector", "127.0.0.1:1",
                             "--ca", job.ca_pem, "--cert", job.alice.cert, "--key", job.alice.key});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr("ibcollect: case list at 127.0.0.1:1: "));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace ibc::agent
