// `verify`, `upload`, `flush` and the transport half of `snapshot` (cli_transport.cpp) through
// runCli, with a test PKI written to a temp dir: what verifies and what does not (each file
// named with its reason), config and credential mistakes as usage errors, and what happens to
// a snapshot when no collector answers.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"
#include "fixtures.h"
#include "ibc/agent/cli.h"
#include "ibc/core/findings.h"
#include "ibc/core/snapshot_file.h"
#include "signed_files.h"
#include "sysfs_json.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;
using ibc::test::CredentialFiles;
using ibc::test::TestCa;

// An acme CA with node01's agent and alice's support credentials in a fresh directory; a
// harness on the system clock (the certificates are valid now).
class TransportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ibc::test::makeTempDir("transport");
    ca_pem_ = ibc::test::writeTestFile(dir_ + "/ca.pem", ca_.certificatePem());
    node01_cred_ = ca_.issue(ibc::test::agentSpec("acme", "node01"));
    node01_ = ibc::test::writeCredential(dir_, "node01", node01_cred_);
    alice_ = ibc::test::writeCredential(dir_, "alice", ca_.issue(ibc::test::supportSpec("alice")));
    empty_config_ = ibc::test::writeTestFile(dir_ + "/empty.conf", "");
    h_.clock = &h_.system_clock;
  }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  // A signed .ibsnap of `node`, signed by node01.
  std::string signedFile(const std::string& name, const std::string& node) {
    return ibc::test::writeSnapshotFile(
        file(name), ibc::test::signedSnapshot(node01_cred_, node, "77", 1'700'000'000'000));
  }

  TestCa ca_ = TestCa::create();
  std::string dir_, ca_pem_, empty_config_;
  ibc::test::TestCredential node01_cred_;
  CredentialFiles node01_, alice_;
  CliHarness h_;
};

TEST_F(TransportCli, VerifySaysWhoSignedEachGoodFileAndItsSnapshotId) {
  const std::string good = signedFile("good.ibsnap", "node01");
  const auto r = h_.run(&runCli, {"verify", good, "--ca", ca_pem_});
  EXPECT_EQ(r.code, core::kExitOk) << r.out << r.err;
  auto envelope = core::decodeSnapshotFile(*h_.files.readFile(good, 1 << 20));
  ASSERT_TRUE(envelope.ok());
  EXPECT_THAT(r.out, HasSubstr(good + ": OK signed by "));
  EXPECT_THAT(r.out,
              HasSubstr("(agent, tenant acme), snapshot " + core::snapshotId(*envelope) + "\n"));
}

TEST_F(TransportCli, VerifyNamesASnapshotOfAnotherNodeAndExitsFive) {
  const std::string good = signedFile("good.ibsnap", "node01");
  const std::string other = signedFile("other.ibsnap", "node02");
  const auto r = h_.run(&runCli, {"verify", good, other, "--ca", ca_pem_});
  EXPECT_EQ(r.code, core::kExitVerifyFailed);
  EXPECT_THAT(r.out, HasSubstr(good + ": OK"));
  EXPECT_THAT(r.out, HasSubstr(other + ": FAILED node_mismatch: "));
}

TEST_F(TransportCli, VerifyAgainstAnotherCaAndOfAMalformedFileFail) {
  const std::string good = signedFile("good.ibsnap", "node01");
  const std::string other_ca =
      ibc::test::writeTestFile(file("other-ca.pem"), TestCa::create("other").certificatePem());
  const auto r = h_.run(&runCli, {"verify", good, "--ca", other_ca});
  EXPECT_EQ(r.code, core::kExitVerifyFailed);
  EXPECT_THAT(r.out, HasSubstr(good + ": FAILED "));
  EXPECT_THAT(r.out, Not(HasSubstr("OK")));
  const std::string junk = ibc::test::writeTestFile(file("junk.ibsnap"), "IBSNAP? no");
  const auto m = h_.run(&runCli, {"verify", junk, "--ca", ca_pem_});
  EXPECT_EQ(m.code, core::kExitVerifyFailed);
  EXPECT_THAT(m.out, HasSubstr(junk + ": FAILED malformed: "));
}

TEST_F(TransportCli, VerifyWithoutACaOrWithABadConfigIsAUsageError) {
  const std::string good = signedFile("good.ibsnap", "node01");
  const auto none = h_.run(&runCli, {"verify", good, "--config", empty_config_});
  EXPECT_EQ(none.code, core::kExitUsage);
  EXPECT_EQ(none.err, "ibcollect: verify needs --ca CA.pem\n");
  const std::string bad = ibc::test::writeTestFile(file("bad.conf"), "colector = c:7443\n");
  const auto unknown = h_.run(&runCli, {"verify", good, "--config", bad});
  EXPECT_EQ(unknown.code, core::kExitUsage);
  EXPECT_THAT(unknown.err, HasSubstr(bad));
  EXPECT_THAT(unknown.err, HasSubstr("colector"));
  const auto missing = h_.run(&runCli, {"verify", good, "--config", file("nowhere.conf")});
  EXPECT_EQ(missing.code, core::kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("ibcollect: agent config: "));
  // The config's ca = ... is used when --ca is not given.
  const std::string with_ca = ibc::test::writeTestFile(file("ca.conf"), "ca = " + ca_pem_ + "\n");
  EXPECT_EQ(h_.run(&runCli, {"verify", good, "--config", with_ca}).code, core::kExitOk);
}

TEST_F(TransportCli, UploadWithoutACollectorSaysHowToNameOne) {
  const std::string good = signedFile("good.ibsnap", "node01");
  const auto r = h_.run(&runCli, {"upload", good, "--config", empty_config_});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err,
            "ibcollect: no collector configured (--collector HOST:PORT or collector = ... in "
            "/etc/ibcollect/agent.conf)\n");
}

TEST_F(TransportCli, UploadNeedsTheNodesCertificateNotASupportOne) {
  const std::string good = signedFile("good.ibsnap", "node01");
  const auto r =
      h_.run(&runCli, {"upload", good, "--config", empty_config_, "--collector", "127.0.0.1:1",
                       "--ca", ca_pem_, "--cert", alice_.cert, "--key", alice_.key});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr(alice_.cert + " is a support certificate"));
  const auto no_key = h_.run(&runCli, {"upload", good, "--config", empty_config_, "--collector",
                                       "127.0.0.1:1", "--ca", ca_pem_, "--cert", node01_.cert});
  EXPECT_EQ(no_key.code, core::kExitUsage);
  EXPECT_THAT(no_key.err, HasSubstr("talking to the collector needs --key"));
}

TEST_F(TransportCli, AnUnsignedFileIsNotUploadedAndSaysHowToSignOne) {
  ibcollect::v1::Snapshot s;
  s.mutable_node()->set_hostname("node01");
  const std::string unsigned_file =
      ibc::test::writeSnapshotFile(file("unsigned.ibsnap"), core::wrapUnsigned(s));
  h_.writer = &h_.disk;
  const auto r = h_.run(&runCli, {"upload", unsigned_file, "--config", empty_config_, "--collector",
                                  "127.0.0.1:1", "--ca", ca_pem_, "--cert", node01_.cert, "--key",
                                  node01_.key, "--spool", file("spool")});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr(unsigned_file + ": unsigned; the collector takes signed snapshots "
                                               "only"));
  EXPECT_FALSE(h_.files.exists(file("spool")));
}

TEST_F(TransportCli, ASnapshotNoCollectorTakesIsSpooledAndFlushSaysWhatIsLeft) {
  const std::string good = signedFile("good.ibsnap", "node01");
  h_.writer = &h_.disk;
  const std::vector<std::string> transport{"--config",    empty_config_,
                                           "--collector", "127.0.0.1:1",
                                           "--ca",        ca_pem_,
                                           "--cert",      node01_.cert,
                                           "--key",       node01_.key,
                                           "--spool",     file("spool"),
                                           "--retries",   "0"};
  std::vector<std::string> upload{"upload", good};
  upload.insert(upload.end(), transport.begin(), transport.end());
  const auto r = h_.run(&runCli, upload);
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr("could not deliver " + good + " to 127.0.0.1:1 after 1 attempt(s)"));
  EXPECT_THAT(r.err, HasSubstr("kept in the spool: " + file("spool")));
  std::vector<std::string> flush{"flush"};
  flush.insert(flush.end(), transport.begin(), transport.end());
  const auto f = h_.run(&runCli, flush);
  EXPECT_EQ(f.code, core::kExitCollectFailed);
  EXPECT_THAT(f.out, HasSubstr("0 delivered, 0 already stored, 0 refused (kept in " +
                               file("spool") + "/rejected), 1 still in " + file("spool")));
}

TEST_F(TransportCli, FlushOfAnEmptySpoolHasNothingToSend) {
  h_.writer = &h_.disk;
  const auto f = h_.run(
      &runCli, {"flush", "--config", empty_config_, "--collector", "127.0.0.1:1", "--ca", ca_pem_,
                "--cert", node01_.cert, "--key", node01_.key, "--spool", file("empty-spool")});
  EXPECT_EQ(f.code, core::kExitOk) << f.err;
  EXPECT_EQ(f.out, "spool " + file("empty-spool") + " is empty: nothing to send\n");
}

TEST_F(TransportCli, SnapshotSigningNeedsBothCertAndKey) {
  const auto r = h_.run(&runCli, {"snapshot", "--root", ibc::test::fixturePath("real/sysfs"),
                                  "--config", empty_config_, "--cert", node01_.cert});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err, "ibcollect: signing needs both --cert and --key\n");
  EXPECT_TRUE(h_.recording.written.empty());
}

TEST_F(TransportCli, SnapshotIsNeverSignedWithAnotherNodesCertificate) {
  // The healthy tree's host name is not node01.
  const auto r = h_.run(
      &runCli,
      {"snapshot", "--root",
       ibc::test::fixturePath("real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures"),
       "--config", empty_config_, "--cert", node01_.cert, "--key", node01_.key});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_THAT(r.err, HasSubstr("ibcollect: not signing: "));
  EXPECT_THAT(r.err, HasSubstr("use the certificate issued for this node, or none"));
  EXPECT_TRUE(h_.recording.written.empty());
}

}  // namespace
}  // namespace ibc::agent
