// `fetch --job` (cli_fetch.cpp) in-process through runSupportCli: a job's snapshots from an
// in-process collector written as files that hash to their ids, a job the collector does not
// have, a collector that cannot be reached, and `bundle export --job` fetching the same way.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "collector_job.h"
#include "ibc/core/findings.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/support/support_cli.h"

using ::testing::HasSubstr;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;
using ibc::test::CliRun;

class FetchCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.clock = &h_.system_clock;
    h_.writer = &h_.disk;
  }
  CliRun run(std::vector<std::string> args) {
    return h_.run(&runSupportCli, setup_.withSupportFlags(std::move(args)));
  }
  std::string file(const std::string& name) const { return setup_.job().dir + "/" + name; }

  ibc::test::CollectorWithJob setup_;
  CliHarness h_;
};

TEST_F(FetchCommand, WritesEachSnapshotNamedByTenantNodeAndIdAndListsThePaths) {
  const auto r = run({"fetch", "--job", "77", "-o", file("job77")});
  EXPECT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("ibcollect: fetched 2 snapshot(s) of job 77 into " + file("job77") + "\n"));
  std::istringstream lines(r.out);
  std::set<std::string> nodes;
  for (std::string path; std::getline(lines, path);) {
    EXPECT_EQ(path.rfind(file("job77") + "/acme_node0", 0), 0u) << path;
    auto bytes = h_.files.readFile(path, core::kMaxSnapshotFileBytes);
    ASSERT_TRUE(bytes.ok()) << path;
    auto envelope = core::decodeSnapshotFile(*bytes);
    ASSERT_TRUE(envelope.ok()) << path;
    // acme_<node>_<the first 12 hex digits of the id>.ibsnap
    const std::string id = core::snapshotId(*envelope);
    EXPECT_EQ(path.substr(path.rfind('_') + 1), id.substr(0, 12) + ".ibsnap");
    nodes.insert(path.substr(path.find("acme_") + 5, 6));
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"node01", "node02"}));
}

TEST_F(FetchCommand, AJobTheCollectorDoesNotHaveIsExitFour) {
  const auto r = run({"fetch", "--job", "99", "--tenant", "acme", "-o", file("job99")});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr("fetched 0 snapshot(s) of job 99 (tenant acme)"));
  EXPECT_THAT(r.err, HasSubstr("ibcollect: the collector has no snapshot of job 99\n"));
  EXPECT_EQ(r.out, "");
}

TEST_F(FetchCommand, ADirectoryThatCannotBeMadeIsNamed) {
  const std::string under_a_file = setup_.job().node01_snapshot + "/job77";
  const auto r = run({"fetch", "--job", "77", "-o", under_a_file});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr("ibcollect: cannot create " + under_a_file + ": "));
}

TEST_F(FetchCommand, BundleExportOfAJobFetchesItsSnapshots) {
  const auto r = run({"bundle", "export", "--job", "77", "-o", file("job77.ibbundle")});
  EXPECT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr("ibcollect: fetched 2 snapshot(s) of job 77\n"));
  EXPECT_THAT(r.out, HasSubstr(file("job77.ibbundle") + ": 2 snapshot(s), "));
}

TEST(FetchCommandOffline, WithoutASupportCertificateOrACollectorNothingIsFetched) {
  const auto job = ibc::test::makeSignedJob("fetch-offline");
  const std::string empty = ibc::test::writeTestFile(job.dir + "/empty.conf", "");
  CliHarness h;
  h.clock = &h.system_clock;
  const auto no_cert = h.run(&runSupportCli, {"fetch", "--job", "77", "-o", job.dir + "/out",
                                              "--config", empty, "--collector", "127.0.0.1:1"});
  EXPECT_EQ(no_cert.code, core::kExitUsage);
  EXPECT_THAT(no_cert.err, HasSubstr("talking to the collector needs --ca"));
  EXPECT_TRUE(h.recording.dirs.empty());
  const auto down =
      h.run(&runSupportCli,
            {"fetch", "--job", "77", "-o", job.dir + "/out", "--config", empty, "--collector",
             "127.0.0.1:1", "--ca", job.ca_pem, "--cert", job.alice.cert, "--key", job.alice.key});
  EXPECT_EQ(down.code, core::kExitCollectFailed);
  EXPECT_THAT(down.err, HasSubstr("127.0.0.1:1"));
  EXPECT_EQ(down.out, "");
}

}  // namespace
}  // namespace ibc::agent
