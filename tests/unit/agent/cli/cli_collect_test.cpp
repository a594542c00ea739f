// `ibcollect snapshot` and `ibcollect analyze` (cli_collect.cpp) through runCli on the real
// fixture trees and pastes: what is kept where, what is refused before collecting, and the
// exit code (the verdict before a delivery or input problem).

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli_run.h"
#include "fixtures.h"
#include "ibc/agent/cli.h"
#include "ibc/core/findings.h"
#include "ibc/core/snapshot_file.h"
#include "sysfs_json.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;
using ibc::test::CliRun;
using ibc::test::fixturePath;
using ibc::test::parsedJson;

// mlx5_0 VF with hw_counters errors (warnings), and mlx4_0 with two clean QDR ports.
const std::string kBrokenTree =
    "real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures";
const std::string kHealthyTree =
    "real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures";
const std::string kIbstat =
    "real/ibtools/ibstat_roce-cx6dx-2port-active-rate100_l2fwd-nv-issue-6.txt";

TEST(SnapshotCommand, SavesWhereMinusOSaysAndExitsWithTheVerdict) {
  CliHarness h;
  const std::string out = ibc::test::makeTempDir("snap-o") + "/node.ibsnap";
  const auto r = h.run(&runCli, {"snapshot", "--root", fixturePath(kBrokenTree), "-o", out, "-q"});
  EXPECT_EQ(r.code, core::kExitWarnings) << r.err;
  EXPECT_EQ(h.recording.written, std::vector<std::string>{out});
  EXPECT_THAT(r.err, HasSubstr("ibcollect: snapshot saved to " + out + "\n"));
  EXPECT_THAT(r.out, HasSubstr("mlx5_0 (VF)"));
  EXPECT_THAT(r.out, HasSubstr("WARNING"));
}

TEST(SnapshotCommand, WithoutMinusOTheFileIsNamedByNodeAndUtcTime) {
  CliHarness h;
  const auto r = h.run(&runCli, {"snapshot", "--root", fixturePath(kHealthyTree), "-q"});
  EXPECT_EQ(r.code, core::kExitOk) << r.err;
  ASSERT_EQ(h.recording.written.size(), 1u);
  const std::string& name = h.recording.written[0];
  EXPECT_EQ(name.rfind("ibcollect-", 0), 0u) << name;
  // FixedClock: 1'800'000'000 s after the epoch.
  EXPECT_THAT(name, testing::EndsWith("-20270115T080000Z.ibsnap"));
  EXPECT_EQ(name.find('/'), std::string::npos);
}

TEST(SnapshotCommand, AnExistingOutputIsRefusedBeforeCollectingUnlessForced) {
  CliHarness h;
  const std::string existing = fixturePath(kIbstat);
  const auto r = h.run(&runCli, {"snapshot", "--root", fixturePath(kHealthyTree), "-o", existing});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err, "ibcollect: " + existing +
                       " already exists; choose another -o FILE or add --force to overwrite it\n");
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(h.recording.written.empty());
  const auto forced = h.run(
      &runCli, {"snapshot", "--root", fixturePath(kHealthyTree), "-o", existing, "--force", "-q"});
  EXPECT_EQ(forced.code, core::kExitOk) << forced.err;
  EXPECT_EQ(h.recording.written, std::vector<std::string>{existing});
}

TEST(SnapshotCommand, AFullDiskKeepsNothingSaysSoAndIsExitFourOnAHealthyNode) {
  CliHarness h;
  ibc::test::FullDiskWriter full;
  h.writer = &full;
  const std::string out = ibc::test::makeTempDir("snap-full") + "/node.ibsnap";
  const auto r = h.run(&runCli, {"snapshot", "--root", fixturePath(kHealthyTree), "-o", out});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_EQ(full.writes, 1);
  EXPECT_THAT(r.err, HasSubstr("could not write the snapshot to " + out));
  EXPECT_THAT(r.err, HasSubstr("nothing was kept; the report below is all there is"));
  EXPECT_THAT(r.err, Not(HasSubstr("snapshot saved")));
  // The report is printed all the same.
  EXPECT_THAT(r.out, HasSubstr("mlx4_0"));
}

TEST(SnapshotCommand, AJobIdIsRecordedInTheSnapshot) {
  CliHarness h;
  h.writer = &h.disk;
  const std::string out = ibc::test::makeTempDir("snap-job") + "/node.ibsnap";
  ASSERT_EQ(h.run(&runCli, {"snapshot", "--root", fixturePath(kHealthyTree), "--job", "4242", "-o",
                            out, "-q"})
                .code,
            core::kExitOk);
  auto bytes = h.files.readFile(out, core::kMaxSnapshotFileBytes);
  ASSERT_TRUE(bytes.ok());
  auto envelope = core::decodeSnapshotFile(*bytes);
  ASSERT_TRUE(envelope.ok());
  EXPECT_TRUE(envelope->signature().empty());  // no certificate: unsigned
  auto snap = core::openSnapshot(*envelope);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->node().job_id(), "4242");
  EXPECT_EQ(snap->node().source(), fixturePath(kHealthyTree));
}

TEST(AnalyzeCommand, ASavedSnapshotIsJudgedAgainAndNamedAsItsSource) {
  CliHarness h;
  h.writer = &h.disk;
  const std::string dir = ibc::test::makeTempDir("analyze-saved");
  ASSERT_EQ(h.run(&runCli, {"snapshot", "--root", fixturePath(kBrokenTree), "-o",
                            dir + "/broken.ibsnap", "-q"})
                .code,
            core::kExitWarnings);
  const auto r = h.run(&runCli, {"analyze", dir + "/broken.ibsnap", "--format", "json"});
  EXPECT_EQ(r.code, core::kExitWarnings) << r.err;
  const auto doc = parsedJson(r.out);
  const auto& nodes = doc.fields().at("nodes").list_value();
  ASSERT_EQ(nodes.values_size(), 1);
  EXPECT_EQ(nodes.values(0).struct_value().fields().at("source").string_value(),
            dir + "/broken.ibsnap");
  EXPECT_GT(doc.fields().at("findings").list_value().values_size(), 0);
}

TEST(AnalyzeCommand, APasteIsDiagnosedAndCanBeSavedAsOneUnsignedSnapshot) {
  CliHarness h;
  const std::string out = ibc::test::makeTempDir("analyze-o") + "/paste.ibsnap";
  const auto r = h.run(&runCli, {"analyze", "--tool-output", fixturePath(kIbstat), "-o", out});
  EXPECT_LE(r.code, core::kExitWarnings) << r.err;
  EXPECT_EQ(h.recording.written, std::vector<std::string>{out});
  EXPECT_THAT(r.err, HasSubstr("ibcollect: snapshot saved to " + out + "\n"));
  EXPECT_THAT(r.out, HasSubstr("mlx5"));
}

TEST(AnalyzeCommand, MinusOSavesOneNodeAndTwoNodesAreAUsageError) {
  CliHarness h;
  h.writer = &h.disk;
  const std::string dir = ibc::test::makeTempDir("analyze-two");
  for (const auto& [name, tree] :
       {std::pair<std::string, std::string>{"a", kBrokenTree}, {"b", kHealthyTree}}) {
    ASSERT_LE(h.run(&runCli,
                    {"snapshot", "--root", fixturePath(tree), "-o", dir + "/" + name + ".ibsnap"})
                  .code,
              core::kExitWarnings);
  }
  const auto r =
      h.run(&runCli, {"analyze", dir + "/a.ibsnap", dir + "/b.ibsnap", "-o", dir + "/both.ibsnap"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("-o saves one node's snapshot, and these inputs describe 2 nodes"));
  EXPECT_FALSE(h.files.exists(dir + "/both.ibsnap"));
}

TEST(AnalyzeCommand, AHostSideToolsOutputNamesHostInspectAsItsCommandWithExitThree) {
  CliHarness h;
  const std::string flint = fixturePath(
      "real/pf/flint-q_cx4lx-ibm-oem-fw14.26.0226-psid-IBM0000000034_netdev-lore-20200421.txt");
  const auto r = h.run(&runCli, {"analyze", "--tool-output", flint});
  EXPECT_EQ(r.code, core::kExitUsage) << r.err;
  EXPECT_THAT(r.err, HasSubstr("host-side (PF) tool"));
  EXPECT_THAT(r.err, HasSubstr("`ibcollect host-inspect --paste " + flint + "`"));
  EXPECT_THAT(r.err, Not(HasSubstr("no known tool output recognised")));
  EXPECT_EQ(r.out, "");
  // A host's kernel log alone: --dmesg-file is for kernel logs, host-inspect for the host's.
  const std::string dmesg = fixturePath(
      "real/pf/dmesg-pf_mlx5-health-synd-0x7-irisc-not-responding-mail-wrapped_netdev-lore-"
      "20200421.txt");
  const auto k = h.run(&runCli, {"analyze", "--tool-output", dmesg});
  EXPECT_EQ(k.code, core::kExitUsage) << k.err;
  EXPECT_THAT(k.err, HasSubstr("give it with --dmesg-file " + dmesg));
}

TEST(AnalyzeCommand, APastedNcclTestsTableWithoutItsHeaderOrAnNcclLogIsReadForWhatItIs) {
  CliHarness h;
  h.writer = &h.disk;
  const std::string dir = ibc::test::makeTempDir("analyze-routed");
  // The rows of a real capture without its '#' header and footer lines, as pasted in a chat.
  std::string rows;
  std::istringstream capture(ibc::test::readFixture(
      "real/nccl-tests/"
      "nccl-tests_all_reduce_perf_ring-large-sizes-busbw95_nccl-tests-issue-252.txt"));
  for (std::string line; std::getline(capture, line);) {
    if (line.rfind('#', 0) != 0) rows += line + "\n";
  }
  ASSERT_TRUE(h.disk.writeFileAtomic(dir + "/rows.txt", rows).ok());
  const auto t = h.run(&runCli, {"analyze", "--tool-output", dir + "/rows.txt", "--expect-busbw",
                                 "200", "--format", "json"});
  EXPECT_EQ(t.code, core::kExitWarnings) << t.err;
  EXPECT_THAT(t.out, HasSubstr("\"NCCL_TEST_LOW_BUSBW\""));
  EXPECT_THAT(t.err, HasSubstr("nccl-tests output, read as --nccl-tests"));
  const std::string log = fixturePath(
      "real/nccl-logs/nccl-log_bootstrap-socket-abort-chain-2-ib1-linklocal_nccl-issue-975.txt");
  const auto l = h.run(&runCli, {"analyze", "--tool-output", log, "--format", "json"});
  EXPECT_EQ(l.code, core::kExitCritical) << l.err;
  EXPECT_THAT(l.out, HasSubstr("\"NCCL_CONNECT_FAILED\""));
  EXPECT_THAT(l.err, HasSubstr("an NCCL log, read as --nccl-log"));
}

TEST(AnalyzeCommand, OnlyUnreadableInputsIsNothingToAnalyzeAndExitFour) {
  CliHarness h;
  const std::string dir = ibc::test::makeTempDir("analyze-bad");
  h.writer = &h.disk;
  ASSERT_TRUE(h.disk.writeFileAtomic(dir + "/junk.ibsnap", "not a snapshot").ok());
  const auto r = h.run(&runCli, {"analyze", dir + "/junk.ibsnap"});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr(dir + "/junk.ibsnap"));
  EXPECT_THAT(r.err, HasSubstr("ibcollect: nothing to analyze: every input failed (see above)\n"));
  EXPECT_EQ(r.out, "");
}

TEST(AnalyzeCommand, AnUnreadableExtraInputIsCountedButTheVerdictWins) {
  CliHarness h;
  const std::string dir = ibc::test::makeTempDir("analyze-extra");
  h.writer = &h.disk;
  ASSERT_TRUE(h.disk.writeFileAtomic(dir + "/junk.ibsnap", "not a snapshot").ok());
  ASSERT_EQ(h.run(&runCli, {"snapshot", "--root", fixturePath(kBrokenTree), "-o",
                            dir + "/broken.ibsnap", "-q"})
                .code,
            core::kExitWarnings);
  const auto r = h.run(&runCli, {"analyze", dir + "/broken.ibsnap", dir + "/junk.ibsnap", "-q"});
  EXPECT_EQ(r.code, core::kExitWarnings);
  EXPECT_THAT(r.err, HasSubstr("1 input(s) could not be read or were not recognised; the report "
                               "covers the rest"));
}

}  // namespace
}  // namespace ibc::agent
