// bundle_export.h: the escalate page's "Export bundle...": the checked nodes' signed .ibsnap
// files (the real job, each signed by its node's agent certificate of a test CA) written as
// the bundle `ibcollect bundle verify` accepts, signed by a support certificate; redacted,
// with the pseudonym map beside it; refused when a file changed or nothing can sign.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "console_fixtures.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/console/bundle_export.h"
#include "ibc/core/bundle.h"
#include "ibc/core/snapshot_file.h"
#include "sysfs_json.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::console {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The real job's four snapshots signed by their nodes, as .ibsnap files in a fresh directory,
// and alice's support certificate and key as PEM files beside them.
struct SignedFiles {
  ibc::test::TestCa ca = ibc::test::TestCa::create("console export CA");
  std::string dir = ibc::test::makeTempDir("console-export");
  std::vector<std::string> files;
  BundleExportSettings settings;

  SignedFiles() {
    for (std::size_t i = 0; i < 4; ++i) {
      const v1::Snapshot s = wholeSnapshot(job(), i);
      const auto cred = ca.issue(ibc::test::agentSpec("acme", core::snapshotNodeName(s.node())));
      auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
      EXPECT_TRUE(signer.ok());
      auto env = signer->sign(s);
      EXPECT_TRUE(env.ok());
      files.push_back(dir + "/gpu0" + std::to_string(i + 1) + ".ibsnap");
      std::ofstream(files.back(), std::ios::binary) << core::encodeSnapshotFile(*env);
    }
    const auto alice = ca.issue(ibc::test::supportSpec("alice"));
    settings.cert_file = dir + "/alice.pem";
    settings.key_file = dir + "/alice.key";
    std::ofstream(settings.cert_file) << alice.certificate_pem;
    std::ofstream(settings.key_file) << alice.key_pem;
    settings.ibcollect_version = "test";
  }
  JobData load() const {
    auto verifier = core::SignatureVerifier::fromPem(ca.certificatePem());
    EXPECT_TRUE(verifier.ok());
    return loadSnapshotFiles(files, {}, {}, nullptr, verifier->get());
  }
  core::BundleMembers read(const std::string& bundle) const {
    auto members = bundle::readBundleArchive(slurp(bundle));
    EXPECT_TRUE(members.ok()) << members.error().message;
    return members.ok() ? *members : core::BundleMembers{};
  }
};

int snapshotMembers(const core::BundleMembers& members) {
  int n = 0;
  for (const auto& [name, bytes] : members) n += name.rfind("snapshots/", 0) == 0 ? 1 : 0;
  return n;
}

TEST(BundleExport, TheCheckedNodesFilesBecomeABundleThatVerifiesAgainstTheCa) {
  SignedFiles f;
  const JobData j = f.load();
  ASSERT_EQ(j.report.nodes_size(), 4) << (j.errors.empty() ? "" : j.errors.front());
  auto inputs = bundleExportInputs(j, {0, 2});
  ASSERT_TRUE(inputs.ok()) << inputs.error().message;
  ASSERT_EQ(inputs->nodes.size(), 2u);
  EXPECT_EQ(inputs->nodes[0].file, f.files[0]);
  EXPECT_EQ(inputs->nodes[1].file, f.files[2]);
  f.settings.case_id = "CASE-7";
  const std::string out = f.dir + "/job.ibbundle";
  const auto written = writeBundleExport(*inputs, f.settings, out);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->path, out);
  EXPECT_EQ(written->snapshots, 2);
  EXPECT_THAT(written->signer, HasSubstr("CN=alice"));
  EXPECT_TRUE(written->pseudonym_map.empty());
  EXPECT_FALSE(std::filesystem::exists(out + ".part"));

  const core::BundleMembers members = f.read(out);
  EXPECT_EQ(snapshotMembers(members), 2);
  ASSERT_TRUE(members.count("manifest.json"));
  EXPECT_THAT(members.at("manifest.json"), HasSubstr("CASE-7"));
  auto verifier = core::SignatureVerifier::fromPem(f.ca.certificatePem());
  ASSERT_TRUE(verifier.ok());
  const auto check = core::verifyBundle(members, **verifier, std::chrono::system_clock::now());
  EXPECT_TRUE(check.ok()) << (check.problems.empty() ? "" : check.problems.front().message);
}

TEST(BundleExport, RedactedLeavesTheSnapshotsOutAndWritesThePseudonymMapBesideTheBundle) {
  SignedFiles f;
  const JobData j = f.load();
  auto inputs = bundleExportInputs(j, {1, 3});
  ASSERT_TRUE(inputs.ok());
  f.settings.redact = true;
  const std::string out = f.dir + "/redacted.ibbundle";
  const auto written = writeBundleExport(*inputs, f.settings, out);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->pseudonym_map, out + ".pseudonyms.tsv");
  const std::string map = slurp(written->pseudonym_map);
  EXPECT_THAT(map, HasSubstr("node1661"));  // the names stay with the engineer
  EXPECT_EQ(
      std::filesystem::status(written->pseudonym_map).permissions() & std::filesystem::perms::all,
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const core::BundleMembers members = f.read(out);
  EXPECT_EQ(snapshotMembers(members), 0);
  for (const auto& [name, bytes] : members) {
    EXPECT_THAT(name, Not(HasSubstr("pseudonyms"))) << name;
    EXPECT_THAT(bytes, Not(HasSubstr("node1661"))) << name;
  }
}

TEST(BundleExport, AFileChangedSinceItWasOpenedIsRefusedByNameAndNothingIsWritten) {
  SignedFiles f;
  const JobData j = f.load();
  auto inputs = bundleExportInputs(j, {0, 1});
  ASSERT_TRUE(inputs.ok());
  std::filesystem::copy_file(f.files[3], f.files[0],
                             std::filesystem::copy_options::overwrite_existing);
  const std::string out = f.dir + "/changed.ibbundle";
  const auto written = writeBundleExport(*inputs, f.settings, out);
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code, core::ErrorCode::Malformed);
  EXPECT_THAT(written.error().message, HasSubstr(f.files[0] + " changed since it was opened"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(BundleExport, WithoutANodeItsSignedBytesOrACertificateTheErrorSaysWhy) {
  SignedFiles f;
  const JobData j = f.load();
  const auto none = bundleExportInputs(j, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, core::ErrorCode::InvalidArgument);
  const auto unknown = bundleExportInputs(j, {0, 7});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "no node 7 in the job");
  // Diagnosed in memory: no file and no signed bytes to put in a bundle.
  const JobData in_memory = diagnoseSnapshots({wholeSnapshot(job(), 0)}, {""});
  const auto not_at_hand = bundleExportInputs(in_memory, {0});
  ASSERT_FALSE(not_at_hand.ok());
  EXPECT_EQ(not_at_hand.error().code, core::ErrorCode::NotFound);
  EXPECT_THAT(not_at_hand.error().message, HasSubstr("its signed bytes are not at hand"));

  auto inputs = bundleExportInputs(j, {0});
  ASSERT_TRUE(inputs.ok());
  const std::string out = f.dir + "/unsigned.ibbundle";
  const auto no_cert = writeBundleExport(*inputs, {}, out);
  ASSERT_FALSE(no_cert.ok());
  EXPECT_EQ(no_cert.error().code, core::ErrorCode::InvalidArgument);
  EXPECT_THAT(no_cert.error().message, HasSubstr("--cert/--key"));
  BundleExportSettings missing = f.settings;
  missing.cert_file = f.dir + "/nobody.pem";
  const auto gone = writeBundleExport(*inputs, missing, out);
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.error().message, HasSubstr("--cert " + missing.cert_file));
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace ibc::console
