// `ibcollect host-inspect` (the real binary) on the labelled-synthetic host trees that
// tests/fixtures/synthetic/make_host_trees.py composes from real parts, with the real PF
// captures as --paste: mapping (vf_map) and judgement per tree, exit codes. The in-process
// tests of the mapping are tests/unit/support/host/host_inspect_test.cpp.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ibc/os/os.h"
#include "ibcollect_run.h"

using ::testing::HasSubstr;

namespace {

using ibc::os::CommandResult;
using ibc::os::ProcessRunner;

std::string pfFixture(const std::string& prefix) {
  const std::string dir = std::string(IBC_FIXTURES_DIR) + "/real/pf";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path().string();
  }
  ADD_FAILURE() << "no fixture " << prefix;
  return {};
}

class HostInspect : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    trees_ =
        std::filesystem::temp_directory_path() / ("ibc-host-trees-" + std::to_string(::getpid()));
    std::filesystem::remove_all(trees_);
    ProcessRunner runner;
    auto r = runner.run({"python3", IBC_HOST_TREES_SCRIPT, IBC_FIXTURES_DIR, trees_.string()},
                        std::chrono::seconds(60));
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->exit_code, 0) << r->err;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(trees_); }

  CommandResult run(std::vector<std::string> args) {
    return ibc::test::runIbcollect(std::move(args));
  }
  static std::string tree(const std::string& name) { return (trees_ / name).string(); }

  static google::protobuf::Struct json(const std::string& text) {
    google::protobuf::Struct s;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << text.substr(0, 400);
    return s;
  }
  static std::vector<std::string> codes(const google::protobuf::Struct& doc) {
    std::vector<std::string> out;
    for (const auto& f : doc.fields().at("findings").list_value().values())
      out.push_back(f.struct_value().fields().at("code").string_value() + ":" +
                    f.struct_value().fields().at("severity").string_value());
    std::sort(out.begin(), out.end());
    return out;
  }
  static const google::protobuf::Struct& vfMap(const google::protobuf::Struct& doc, int i) {
    return doc.fields().at("vf_map").list_value().values(i).struct_value();
  }
  static std::string field(const google::protobuf::Struct& s, const std::string& name) {
    const auto& v = s.fields().at(name);
    return v.has_string_value() ? v.string_value()
                                : std::to_string(static_cast<int>(v.number_value()));
  }

  static std::filesystem::path trees_;
};
std::filesystem::path HostInspect::trees_;

TEST_F(HostInspect, PhysicalErrorsTreeMapsByNodeGuidAndJudgesTheRealPastes) {
  auto r =
      run({"host-inspect", "--root", tree("pf-errors"), "--vf", "0x2244330033110033", "--paste",
           pfFixture("dmesg-pf_mlx5-health-synd"), "--paste", pfFixture("ethtool-m_sfp"), "--paste",
           pfFixture("iplink-pf_cx5-eth-p4p1"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto doc = json(r.out);
  ASSERT_EQ(doc.fields().at("vf_map").list_value().values_size(), 1);
  const auto& m = vfMap(doc, 0);
  EXPECT_EQ(field(m, "pf_pci"), "0001:19:00.0");
  EXPECT_EQ(field(m, "pf_device"), "mlx5_0");
  EXPECT_EQ(field(m, "vf_pci"), "0001:19:00.2");
  EXPECT_EQ(field(m, "vf_index"), "0");
  EXPECT_EQ(field(m, "matched_by"), "node_guid (sriov/0/node)");
  EXPECT_EQ(codes(doc), (std::vector<std::string>{"PF_FW:critical", "PF_MODULE:critical",
                                                  "PF_PORT_DOWN:critical"}));
  EXPECT_EQ(doc.fields().at("nodes").list_value().values_size(), 1);
}

TEST_F(HostInspect, CleanTreeMapsByPciAndIsPfClean) {
  auto r = run({"host-inspect", "--root", tree("pf-clean"), "--vf", "0000:42:00.3", "--paste",
                pfFixture("mlxlink-m-c_bf3"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto doc = json(r.out);
  const auto& m = vfMap(doc, 0);
  EXPECT_EQ(field(m, "pf_pci"), "0000:42:00.0");
  EXPECT_EQ(field(m, "vf_index"), "1");
  EXPECT_EQ(field(m, "matched_by"), "pci (virtfn1)");
  EXPECT_EQ(codes(doc), std::vector<std::string>{"PF_CLEAN:info"});
  // Text: the VF table and the verdict, fitted to 80 columns.
  auto t = run({"host-inspect", "--root", tree("pf-clean"), "--vf", "42:00.3", "--width", "80"});
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_THAT(t.out, HasSubstr("(virtfn1)"));
  EXPECT_THAT(t.out, HasSubstr("PF_CLEAN"));
  std::istringstream lines(t.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
}

TEST_F(HostInspect, AbsentVfIsPfNotFoundWithWhatWasCompared) {
  auto r = run({"host-inspect", "--root", tree("vf-absent"), "--vf", "0000:42:00.7", "--vf",
                "22:44:33:00:33:11:00:99", "--format", "json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto doc = json(r.out);
  ASSERT_EQ(doc.fields().at("vf_map").list_value().values_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(field(vfMap(doc, i), "vf_index"), "-1");
    EXPECT_EQ(field(vfMap(doc, i), "matched_by"), "");
    EXPECT_GE(vfMap(doc, i).fields().at("compared").list_value().values_size(), 5);
  }
  EXPECT_EQ(codes(doc),
            (std::vector<std::string>{"PF_NOT_FOUND:critical", "PF_NOT_FOUND:critical"}));
  // The same tree finds the VF that is there.
  auto ok = run({"host-inspect", "--root", tree("vf-absent"), "--vf", "22:44:33:00:33:11:00:33",
                 "--format", "json"});
  EXPECT_EQ(field(vfMap(json(ok.out), 0), "vf_index"), "0");
}

TEST_F(HostInspect, UsageErrorsAndUnrecognisedPastes) {
  EXPECT_EQ(run({"host-inspect"}).exit_code, 3);
  EXPECT_EQ(run({"host-inspect", "--vf", "not-an-id"}).exit_code, 3);
  const auto junk =
      (std::filesystem::temp_directory_path() / ("ibc-junk-" + std::to_string(::getpid()) + ".txt"))
          .string();
  std::ofstream(junk) << "hello\nnothing to see\n";
  auto r =
      run({"host-inspect", "--root", tree("pf-clean"), "--vf", "0000:42:00.3", "--paste", junk});
  std::filesystem::remove(junk);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_THAT(r.err, HasSubstr("nothing recognised"));
}

// A bundle is verified before its pf-inspection.json is believed (issue 21): without a CA
// (no --ca, a config without one) there is nothing to verify against, so nothing is read.
TEST_F(HostInspect, ABundleNeedsACaToBeVerifiedAgainstBeforeItIsRead) {
  const auto fake = (std::filesystem::temp_directory_path() /
                     ("ibc-unsigned-" + std::to_string(::getpid()) + ".ibbundle"))
                        .string();
  std::ofstream(fake) << "not even an archive\n";
  auto r =
      run({"host-inspect", "--bundle", fake, "--root", tree("pf-clean"), "--config", "/dev/null"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("host-inspect verifies the bundle first: give --ca CA.pem"));
  EXPECT_EQ(r.out, "");
  // --attach-to signs: without a certificate it is a usage error before anything else.
  r = run({"host-inspect", "--vf", "0000:42:00.3", "--root", tree("pf-clean"), "--attach-to", fake,
           "--config", "/dev/null"});
  std::filesystem::remove(fake);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("your provider or support certificate"));
  EXPECT_EQ(r.out, "");
  auto help = run({"host-inspect", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--ca"));
}

}  // namespace
