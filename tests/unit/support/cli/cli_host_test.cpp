// `host-inspect` (cli_host.cpp) in-process through runSupportCli on the synthetic host trees
// and the real PF captures: usage errors, exit codes of the PF verdict, a bundle verified
// before it is believed, and a provider's result attached to the bundle and shown by it.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli_run.h"
#include "host_trees.h"
#include "ibc/core/findings.h"
#include "ibc/support/support_cli.h"
#include "signed_job.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::agent {
namespace {

using ibc::test::CliHarness;
using ibc::test::hostTree;
using ibc::test::parsedJson;
using ibc::test::pfCapture;

std::string vfMapField(const google::protobuf::Struct& doc, const std::string& name) {
  const auto& m = doc.fields().at("vf_map").list_value().values(0).struct_value();
  const auto& v = m.fields().at(name);
  return v.has_string_value() ? v.string_value()
                              : std::to_string(static_cast<int>(v.number_value()));
}

TEST(HostInspectCommand, NeedsExactlyOneOfBundleAndVf) {
  CliHarness h;
  const auto none = h.run(&runSupportCli, {"host-inspect"});
  EXPECT_EQ(none.code, core::kExitUsage);
  EXPECT_THAT(none.err, HasSubstr("host-inspect needs the VFs to look for: --bundle BUNDLE or "
                                  "--vf GUID|MAC|PCI (one of them), or only --paste FILE"));
  const auto bad = h.run(&runSupportCli, {"host-inspect", "--vf", "not-an-id"});
  EXPECT_EQ(bad.code, core::kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("not-an-id"));
  EXPECT_EQ(bad.out, "");
}

TEST(HostInspectCommand, APasteOnItsOwnIsJudgedWithoutLookingForAVf) {
  CliHarness h;
  const auto r = h.run(&runSupportCli, {"host-inspect", "--paste", pfCapture("ethtool-m_cx3pro"),
                                        "--format", "json"});
  EXPECT_EQ(r.code, 2) << r.err;  // the module's alarms are critical
  const auto doc = parsedJson(r.out);
  EXPECT_EQ(doc.fields().at("vf_map").list_value().values_size(), 0) << r.out.substr(0, 400);
  EXPECT_THAT(r.out, HasSubstr("\"PF_MODULE\""));
  EXPECT_THAT(r.out, Not(HasSubstr("PF_NOT_FOUND")));
  EXPECT_THAT(r.out, HasSubstr("no host state was read"));
  const auto t = h.run(&runSupportCli, {"host-inspect", "--paste", pfCapture("ethtool-m_cx3pro")});
  EXPECT_THAT(t.out, HasSubstr("PF    PF PCI  SOURCE"));
  EXPECT_THAT(t.out, HasSubstr("eth2"));
}

TEST(HostInspectCommand, ACleanPfExitsZeroAndTheJsonMapsTheVfByPci) {
  CliHarness h;
  const auto r =
      h.run(&runSupportCli, {"host-inspect", "--root", hostTree("pf-clean"), "--vf", "0000:42:00.3",
                             "--paste", pfCapture("mlxlink-m-c_bf3"), "--format", "json"});
  EXPECT_EQ(r.code, core::kExitOk) << r.err;
  const auto doc = parsedJson(r.out);
  EXPECT_EQ(vfMapField(doc, "pf_pci"), "0000:42:00.0");
  EXPECT_EQ(vfMapField(doc, "vf_index"), "1");
  EXPECT_EQ(vfMapField(doc, "matched_by"), "pci (virtfn1)");
  EXPECT_EQ(doc.fields()
                .at("findings")
                .list_value()
                .values(0)
                .struct_value()
                .fields()
                .at("code")
                .string_value(),
            "PF_CLEAN");
}

TEST(HostInspectCommand, TextFitsTheWidthAndNamesTheVerdict) {
  CliHarness h;
  const auto t = h.run(&runSupportCli, {"host-inspect", "--root", hostTree("pf-clean"), "--vf",
                                        "42:00.3", "--width", "80"});
  EXPECT_EQ(t.code, core::kExitOk) << t.err;
  EXPECT_THAT(t.out, HasSubstr("(virtfn1)"));
  EXPECT_THAT(t.out, HasSubstr("PF_CLEAN"));
  std::istringstream lines(t.out);
  for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 80u) << l;
}

TEST(HostInspectCommand, PhysicalErrorsAreCriticalAndAnUnrecognisedPasteIsExitFourOtherwise) {
  CliHarness h;
  const auto r =
      h.run(&runSupportCli,
            {"host-inspect", "--root", hostTree("pf-errors"), "--vf", "0x2244330033110033",
             "--paste", pfCapture("dmesg-pf_mlx5-health-synd"), "--format", "json"});
  EXPECT_EQ(r.code, core::kExitCritical) << r.err;
  EXPECT_EQ(vfMapField(parsedJson(r.out), "matched_by"), "node_guid (sriov/0/node)");
  const std::string junk =
      ibc::test::writeTestFile(ibc::test::makeTempDir("host-cli") + "/junk.txt", "hello\n");
  const auto j = h.run(&runSupportCli, {"host-inspect", "--root", hostTree("pf-clean"), "--vf",
                                        "0000:42:00.3", "--paste", junk});
  EXPECT_EQ(j.code, core::kExitCollectFailed);
  EXPECT_THAT(j.err, HasSubstr(junk + ": nothing recognised"));
}

class HostInspectBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.clock = &h_.system_clock;
    h_.writer = &h_.disk;
    bundle_ = job_.dir + "/job.ibbundle";
    const auto r =
        h_.run(&runSupportCli, {"bundle", "export", job_.node01_snapshot, job_.node02_snapshot,
                                "-o", bundle_, "--cert", job_.alice.cert, "--key", job_.alice.key});
    ASSERT_EQ(r.code, core::kExitOk) << r.err;
  }

  ibc::test::SignedJob job_ = ibc::test::makeSignedJob("host-bundle");
  CliHarness h_;
  std::string bundle_;
};

TEST_F(HostInspectBundle, ABundleNeedsACaBeforeItIsRead) {
  const std::string empty = ibc::test::writeTestFile(job_.dir + "/empty.conf", "");
  const auto r = h_.run(&runSupportCli, {"host-inspect", "--bundle", bundle_, "--root",
                                         hostTree("bundle-pf-errors"), "--config", empty});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("host-inspect verifies the bundle first: give --ca CA.pem"));
  EXPECT_EQ(r.out, "");
}

TEST_F(HostInspectBundle, TheBundlesSuspectVfIsFoundByItsNodeGuid) {
  const auto r =
      h_.run(&runSupportCli, {"host-inspect", "--bundle", bundle_, "--ca", job_.ca_pem, "--root",
                              hostTree("bundle-pf-errors"), "--format", "json"});
  EXPECT_LE(r.code, core::kExitCritical) << r.err;
  const auto doc = parsedJson(r.out);
  EXPECT_EQ(vfMapField(doc, "node"), "node01");
  EXPECT_EQ(vfMapField(doc, "pf_pci"), "0001:19:00.0");
  EXPECT_EQ(vfMapField(doc, "vf_index"), "1");
}

TEST_F(HostInspectBundle, ABundleSignedUnderAnotherCaIsRefusedWithExitFive) {
  const std::string other = ibc::test::writeTestFile(
      job_.dir + "/other-ca.pem", ibc::test::TestCa::create("other").certificatePem());
  const auto r = h_.run(&runSupportCli, {"host-inspect", "--bundle", bundle_, "--ca", other,
                                         "--root", hostTree("bundle-pf-errors")});
  EXPECT_EQ(r.code, core::kExitVerifyFailed);
  EXPECT_THAT(r.err, HasSubstr("not inspecting for a bundle that does not verify"));
  EXPECT_EQ(r.out, "");
}

TEST_F(HostInspectBundle, AProvidersResultIsAttachedAndTheBundleStillVerifies) {
  const auto agent =
      h_.run(&runSupportCli, {"host-inspect", "--bundle", bundle_, "--attach-to", bundle_, "--ca",
                              job_.ca_pem, "--cert", job_.node01.cert, "--key", job_.node01.key,
                              "--root", hostTree("bundle-pf-errors")});
  EXPECT_EQ(agent.code, core::kExitUsage);
  EXPECT_THAT(agent.err, HasSubstr("give --cert/--key of your provider or support certificate"));
  const auto r =
      h_.run(&runSupportCli, {"host-inspect", "--bundle", bundle_, "--attach-to", bundle_, "--ca",
                              job_.ca_pem, "--cert", job_.hank.cert, "--key", job_.hank.key,
                              "--root", hostTree("bundle-pf-errors"), "-q"});
  EXPECT_LE(r.code, core::kExitCritical) << r.err;
  EXPECT_THAT(r.err, HasSubstr("ibcollect: attached host/"));
  EXPECT_THAT(r.err, HasSubstr("signed by CN=hank,OU=provider,O=ibcollect (provider)"));
  const auto v = h_.run(&runSupportCli, {"bundle", "verify", bundle_, "--ca", job_.ca_pem});
  EXPECT_EQ(v.code, core::kExitOk) << v.out;
  EXPECT_THAT(v.out, HasSubstr("signers (2):"));
  const auto s = h_.run(&runSupportCli, {"bundle", "show", bundle_});
  EXPECT_THAT(s.out, HasSubstr("host results attached (1):"));
  EXPECT_THAT(s.out, HasSubstr("attached by CN=hank,OU=provider,O=ibcollect (provider)"));
}

}  // namespace
}  // namespace ibc::agent
