// `bundle export|verify|show` (cli_bundle.cpp) in-process through runSupportCli on two real
// snapshots signed by their nodes with a test PKI: what export writes and says, that only a
// support certificate exports, that verify names every failing member and judges the
// snapshots again, and what show prints without verifying.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/core/findings.h"
#include "ibc/support/support_cli.h"
#include "signed_job.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;
using ibc::test::CliRun;

class BundleCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.clock = &h_.system_clock;  // the certificates are valid now
    h_.writer = &h_.disk;
  }
  std::string file(const std::string& name) const { return job_.dir + "/" + name; }
  CliRun exportBundle(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"bundle",
                                  "export",
                                  job_.node01_snapshot,
                                  job_.node02_snapshot,
                                  "-o",
                                  file(name),
                                  "--cert",
                                  job_.alice.cert,
                                  "--key",
                                  job_.alice.key};
    args.insert(args.end(), extra.begin(), extra.end());
    return h_.run(&runSupportCli, args);
  }
  CliRun verify(const std::string& path) {
    return h_.run(&runSupportCli, {"bundle", "verify", path, "--ca", job_.ca_pem});
  }

  ibc::test::SignedJob job_ = ibc::test::makeSignedJob("bundle-cli");
  CliHarness h_;
};

TEST_F(BundleCommand, ExportSaysWhatItWroteAndWhoSignedIt) {
  const auto r = exportBundle("job.ibbundle", {"--case", "CASE-9"});
  ASSERT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(file("job.ibbundle") + ": 2 snapshot(s), 8 members, "));
  EXPECT_THAT(r.out, HasSubstr("signed by CN=alice,OU=support,O=ibcollect\n"));
  EXPECT_THAT(r.out, HasSubstr("  1 suspect node(s) for host inspection: see pf-inspection.md"));
  auto members = ibc::bundle::readBundleArchive(*h_.files.readFile(file("job.ibbundle"), 64 << 20));
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->count("snapshots/node01.ibsnap"), 1u);
  EXPECT_THAT(members->at("pf-inspection.md"), HasSubstr("## node01 mlx5_0 port 1"));
}

TEST_F(BundleCommand, AnExportedBundleVerifiesAndIsJudgedAgainTheSame) {
  ASSERT_EQ(exportBundle("job.ibbundle").code, core::kExitOk);
  const auto v = verify(file("job.ibbundle"));
  EXPECT_EQ(v.code, core::kExitOk) << v.out;
  EXPECT_THAT(v.out, HasSubstr(": OK 8 members; manifest signed by "
                               "CN=alice,OU=support,O=ibcollect; 2 snapshot(s) each signed by its "
                               "node\n"));
  EXPECT_THAT(v.out, HasSubstr("signers (1):\n  exporter  CN=alice,OU=support,O=ibcollect "
                               "(support)  signed manifest.json\n"));
  EXPECT_THAT(v.out, HasSubstr("  judged again: the snapshots give the same "));
}

TEST_F(BundleCommand, ATamperedMemberIsNamedAndVerifyExitsFive) {
  ASSERT_EQ(exportBundle("job.ibbundle").code, core::kExitOk);
  auto members = ibc::bundle::readBundleArchive(*h_.files.readFile(file("job.ibbundle"), 64 << 20));
  ASSERT_TRUE(members.ok());
  members->at("report.md") += "all is well\n";
  ibc::test::writeTestFile(file("tampered.ibbundle"), *ibc::bundle::writeBundleArchive(*members));
  const auto v = verify(file("tampered.ibbundle"));
  EXPECT_EQ(v.code, core::kExitVerifyFailed);
  EXPECT_THAT(v.out, HasSubstr(file("tampered.ibbundle") + ": FAILED report.md: "));
  EXPECT_THAT(v.out, HasSubstr("check(s) failed: do not trust this bundle"));
}

TEST_F(BundleCommand, VerifyNeedsACaAndSaysWhenTheFileIsNoArchive) {
  const std::string junk = ibc::test::writeTestFile(file("junk.ibbundle"), "not an archive");
  const std::string empty = ibc::test::writeTestFile(file("empty.conf"), "");
  const auto no_ca = h_.run(&runSupportCli, {"bundle", "verify", junk, "--config", empty});
  EXPECT_EQ(no_ca.code, core::kExitUsage);
  EXPECT_EQ(no_ca.err,
            "ibcollect: bundle verify needs --ca CA.pem (the CA the signers chain to)\n");
  const auto v = verify(junk);
  EXPECT_EQ(v.code, core::kExitCollectFailed);
  EXPECT_THAT(v.out, HasSubstr(junk + ": FAILED archive: "));
}

TEST_F(BundleCommand, OnlyASupportCertificateExportsAndNothingIsWrittenOtherwise) {
  const auto r = h_.run(&runSupportCli,
                        {"bundle", "export", job_.node01_snapshot, "-o", file("agent.ibbundle"),
                         "--cert", job_.node01.cert, "--key", job_.node01.key});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("ibcollect: bundle export: "));
  EXPECT_THAT(r.err, HasSubstr("give --cert/--key of your support certificate"));
  EXPECT_FALSE(h_.files.exists(file("agent.ibbundle")));
}

TEST_F(BundleCommand, ExportWithoutSnapshotsOrOverAnExistingFileIsAUsageError) {
  const auto none = h_.run(&runSupportCli, {"bundle", "export", "-o", file("none.ibbundle"),
                                            "--cert", job_.alice.cert, "--key", job_.alice.key});
  EXPECT_EQ(none.code, core::kExitUsage);
  EXPECT_THAT(none.err, HasSubstr("bundle export needs snapshots: FILE.ibsnap... or --job ID"));
  const auto exists = exportBundle("node01.ibsnap");  // the snapshot's own file
  EXPECT_EQ(exists.code, core::kExitUsage);
  EXPECT_THAT(exists.err, HasSubstr(" already exists; choose another -o FILE.ibbundle or add "
                                    "--force"));
}

TEST_F(BundleCommand, ARedactedExportKeepsThePseudonymMapBesideTheBundle) {
  const auto r = exportBundle("redacted.ibbundle", {"--redact"});
  ASSERT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(", redacted (snapshots left out)\n"));
  EXPECT_THAT(r.err, HasSubstr("pseudonym map (keep it; do not send it): " +
                               file("redacted.ibbundle.pseudonyms.tsv")));
  auto map = h_.files.readFile(file("redacted.ibbundle.pseudonyms.tsv"), 1 << 20);
  ASSERT_TRUE(map.ok());
  EXPECT_THAT(*map, HasSubstr("node01"));
  const auto v = verify(file("redacted.ibbundle"));
  EXPECT_EQ(v.code, core::kExitOk) << v.out;
  EXPECT_THAT(v.out, HasSubstr("(redacted: snapshots left out)"));
  const auto s = h_.run(&runSupportCli, {"bundle", "show", file("redacted.ibbundle")});
  EXPECT_THAT(s.out, Not(HasSubstr("node01")));
}

TEST_F(BundleCommand, ShowPrintsTheCaseNodesMembersAndSignersUnverified) {
  ASSERT_EQ(exportBundle("job.ibbundle", {"--case", "CASE-9"}).code, core::kExitOk);
  const auto s = h_.run(&runSupportCli, {"bundle", "show", file("job.ibbundle")});
  EXPECT_EQ(s.code, core::kExitOk) << s.err;
  EXPECT_THAT(s.out, HasSubstr("(not verified here: `ibcollect bundle verify "));
  EXPECT_THAT(s.out, HasSubstr("  case CASE-9, tenant acme, job 77\n"));
  EXPECT_THAT(s.out, HasSubstr("nodes (2):\n"));
  EXPECT_THAT(s.out, HasSubstr("(host inspection: see pf-inspection.md)"));
  EXPECT_THAT(s.out, HasSubstr("node02  ok        -\n"));
  EXPECT_THAT(s.out, HasSubstr("findings (findings.json, warning and critical):\n  node01:"));
  EXPECT_THAT(s.out, HasSubstr("members (8):\n"));
  EXPECT_THAT(s.out, HasSubstr("host results attached (0): none yet"));
  const auto j =
      h_.run(&runSupportCli, {"bundle", "show", file("job.ibbundle"), "--format", "json"});
  EXPECT_EQ(j.code, core::kExitOk);
  google::protobuf::Struct manifest;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(j.out, &manifest).ok()) << j.out;
  EXPECT_EQ(manifest.fields().at("tenant").string_value(), "acme");
}

TEST_F(BundleCommand, ShowOfSomethingThatIsNoBundleIsExitFour) {
  const auto s = h_.run(&runSupportCli, {"bundle", "show", job_.node01_snapshot});
  EXPECT_EQ(s.code, core::kExitCollectFailed);
  EXPECT_THAT(s.err, HasSubstr("ibcollect: " + job_.node01_snapshot));
  EXPECT_EQ(s.out, "");
}

}  // namespace
}  // namespace ibc::agent
