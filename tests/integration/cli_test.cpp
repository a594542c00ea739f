// The real `ibcollect` binary on fixture trees and bad input: exit codes, messages, the
// JSON shape of docs/commands.md, files written, bounded reads.

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <sstream>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "ibc/os/os.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using ibc::os::CommandResult;
using ibc::os::ProcessRunner;

const std::string kMlx5Tree =
    std::string(IBC_FIXTURES_DIR) +
    "/real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/fixtures";

std::string ibcFixture(const std::string& relative) {
  std::ifstream in(std::string(IBC_FIXTURES_DIR) + "/" + relative, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ibc-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs in the test's own directory: `snapshot` keeps a file in the working directory.
  CommandResult run(std::vector<std::string> args) {
    args.insert(args.begin(), {"env", "-C", dir_.string(), IBC_BINARY});
    ProcessRunner runner;
    auto r = runner.run(args, std::chrono::seconds(120));
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : CommandResult{};
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  void write(const std::string& name, const std::string& bytes) {
    std::ofstream out(path(name), std::ios::binary);
    out << bytes;
  }

  std::filesystem::path dir_;
};

google::protobuf::Struct parseJson(const std::string& text) {
  google::protobuf::Struct s;
  const auto st = google::protobuf::util::JsonStringToMessage(text, &s);
  EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << text.substr(0, 500);
  return s;
}

TEST_F(Cli, VersionAndHelpExitZero) {
  auto v = run({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.out, HasSubstr("ibcollect 0."));
  auto h = run({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_THAT(h.out, HasSubstr("snapshot"));
  EXPECT_THAT(h.out, HasSubstr("analyze"));
  EXPECT_THAT(h.out, HasSubstr("Exit codes"));
  // --job takes the report's judgement options, --expect-busbw too (issue 23).
  EXPECT_THAT(h.out, HasSubstr("--expect-busbw"));
  auto sh = run({"snapshot", "--help"});
  EXPECT_EQ(sh.exit_code, 0);
  EXPECT_THAT(sh.out, HasSubstr("--window"));
}

TEST_F(Cli, UsageErrorsExitThreeAndSayWhy) {
  auto none = run({});
  EXPECT_EQ(none.exit_code, 3);
  auto bad_cmd = run({"frobnicate"});
  EXPECT_EQ(bad_cmd.exit_code, 3);
  auto missing_root = run({"snapshot", "--root", path("does-not-exist")});
  EXPECT_EQ(missing_root.exit_code, 3);
  EXPECT_THAT(missing_root.err, HasSubstr("does-not-exist"));
  auto bad_format = run({"analyze", "--root", kMlx5Tree, "--format", "xml"});
  EXPECT_EQ(bad_format.exit_code, 3);
  EXPECT_THAT(bad_format.err, HasSubstr("xml"));
  auto bad_window = run({"snapshot", "--root", kMlx5Tree, "--window", "-1"});
  EXPECT_EQ(bad_window.exit_code, 3);
}

// Each command's --help shows examples of that command (never the top level's), fits 80
// columns, and a usage error names the help of the command as typed, nested ones too.
TEST_F(Cli, EachCommandsHelpShowsItsOwnExamplesAndUsageErrorsPointToIt) {
  const std::vector<std::vector<std::string>> commands = {{"snapshot"},
                                                          {"analyze"},
                                                          {"compare"},
                                                          {"upload"},
                                                          {"flush"},
                                                          {"verify"},
                                                          {"fetch"},
                                                          {"case"},
                                                          {"case", "create"},
                                                          {"case", "list"},
                                                          {"case", "show"},
                                                          {"case", "update"},
                                                          {"case", "attach"},
                                                          {"bundle"},
                                                          {"bundle", "export"},
                                                          {"bundle", "verify"},
                                                          {"bundle", "show"},
                                                          {"host-inspect"}};
  for (const auto& command : commands) {
    std::string name;
    for (const auto& w : command) name += (name.empty() ? "" : " ") + w;
    auto args = command;
    args.push_back("--help");
    const auto h = run(args);
    ASSERT_EQ(h.exit_code, 0) << name << ": " << h.err;
    const std::string own = "  ibcollect " + command.front();
    EXPECT_THAT(h.out, HasSubstr("Example")) << name << ":\n" << h.out;
    EXPECT_THAT(h.out, HasSubstr(own)) << name << ":\n" << h.out;
    EXPECT_THAT(h.out, Not(HasSubstr("ibcollect --job 1234"))) << name << ":\n" << h.out;
    std::istringstream lines(h.out);
    for (std::string l; std::getline(lines, l);) EXPECT_LE(l.size(), 80u) << name << ": " << l;
  }
  const auto nested = run({"case", "update"});
  EXPECT_EQ(nested.exit_code, 3);
  EXPECT_THAT(nested.err, HasSubstr("Run 'ibcollect case update --help' for usage."));
  const auto create = run({"case", "create", "--help"});
  EXPECT_THAT(create.out, Not(HasSubstr("to download from")));
}

TEST_F(Cli, SnapshotWritesAFileThatAnalyzeReadsBackWithTheSameFindings) {
  auto snap = run({"snapshot", "--root", kMlx5Tree, "-o", path("node.ibsnap"), "--format", "json"});
  ASSERT_EQ(snap.exit_code, 1) << snap.err;  // warnings only (CQE errors, retries, escalate)
  ASSERT_TRUE(std::filesystem::exists(path("node.ibsnap")));
  const auto doc = parseJson(snap.out);
  ASSERT_TRUE(doc.fields().contains("nodes"));
  ASSERT_TRUE(doc.fields().contains("findings"));
  const auto& findings = doc.fields().at("findings").list_value();
  ASSERT_GT(findings.values_size(), 0);
  for (const auto& f : findings.values()) {
    for (const char* key :
         {"code", "severity", "node", "device", "port", "summary", "evidence", "action"}) {
      EXPECT_TRUE(f.struct_value().fields().contains(key)) << key;
    }
  }
  const auto& node = doc.fields().at("nodes").list_value().values(0).struct_value();
  EXPECT_TRUE(node.fields().at("snapshot").struct_value().fields().contains("devices"));

  auto again = run({"analyze", path("node.ibsnap"), "--format", "json"});
  EXPECT_EQ(again.exit_code, 1) << again.err;
  const auto doc2 = parseJson(again.out);
  std::multiset<std::string> a, b;
  for (const auto& f : findings.values())
    a.insert(f.struct_value().fields().at("code").string_value());
  for (const auto& f : doc2.fields().at("findings").list_value().values()) {
    b.insert(f.struct_value().fields().at("code").string_value());
  }
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.count("CQE_ERRORS") == 1 && a.count("ESCALATE_HOST_INSPECTION") == 1);
}

// Issue 10: `snapshot` always keeps what it collected, in a file it names; a second run in
// the same second does not overwrite the first; -o refuses an existing file without --force.
TEST_F(Cli, SnapshotAlwaysKeepsAFileAndNeverOverwritesWithoutForce) {
  auto first = run({"snapshot", "--root", kMlx5Tree});
  auto second = run({"snapshot", "--root", kMlx5Tree});
  EXPECT_EQ(first.exit_code, 1) << first.err;
  EXPECT_EQ(second.exit_code, 1) << second.err;
  std::vector<std::string> kept;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ibcollect-", 0) == 0 && e.path().extension() == ".ibsnap") kept.push_back(name);
  }
  ASSERT_EQ(kept.size(), 2u) << first.err << second.err;
  for (const auto& name : kept) {
    EXPECT_THAT(name, HasSubstr("sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree-20"));
    EXPECT_TRUE(first.err.find("snapshot saved to " + name) != std::string::npos ||
                second.err.find("snapshot saved to " + name) != std::string::npos)
        << name;
  }
  auto analyzed = run({"analyze", path(kept[0])});
  EXPECT_EQ(analyzed.exit_code, 1) << analyzed.err;

  write("taken.ibsnap", "precious");
  auto refused = run({"snapshot", "--root", kMlx5Tree, "-o", path("taken.ibsnap")});
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_THAT(refused.err, HasSubstr("already exists"));
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  auto forced = run({"snapshot", "--root", kMlx5Tree, "-o", path("taken.ibsnap"), "--force"});
  EXPECT_EQ(forced.exit_code, 1) << forced.err;
  EXPECT_GT(std::filesystem::file_size(path("taken.ibsnap")), 1000u);
}

// Issue 10: what cannot be known is said in words that fit the evidence: the real ibstat
// paste has no "Link layer" line for port 2, and there is no sysfs file to speak of.
TEST_F(Cli, AnUnknownLinkLayerInAPasteIsNotBlamedOnAMissingFile) {
  const std::string paste =
      std::string(IBC_FIXTURES_DIR) +
      "/real/ibtools/"
      "ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-847.txt";
  auto r = run({"analyze", "--tool-output", paste});
  EXPECT_THAT(r.out, Not(HasSubstr("no link_layer file")));
  EXPECT_THAT(r.out, HasSubstr("mlx4_0 port 2: link layer unknown (the evidence does not say it)"));
}

// Issue 10: `analyze` of pasted output can save it as a snapshot that reads back the same.
TEST_F(Cli, AnalyzeOfAPasteSavesASnapshotThatReadsBackWithTheSameFindings) {
  const std::string paste =
      std::string(IBC_FIXTURES_DIR) +
      "/real/ibtools/"
      "ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-847.txt";
  auto first =
      run({"analyze", "--tool-output", paste, "-o", path("paste.ibsnap"), "--format", "json"});
  ASSERT_EQ(first.exit_code, 2) << first.err;  // port 1 is down
  EXPECT_THAT(first.err, HasSubstr("snapshot saved to " + path("paste.ibsnap")));
  auto again = run({"analyze", path("paste.ibsnap"), "--format", "json"});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  const auto codes = [](const std::string& json) {
    std::multiset<std::string> out;
    const auto doc = parseJson(json);
    for (const auto& f : doc.fields().at("findings").list_value().values())
      out.insert(f.struct_value().fields().at("code").string_value());
    return out;
  };
  EXPECT_EQ(codes(first.out), codes(again.out));
  EXPECT_EQ(codes(first.out).count("PORT_DOWN") + codes(first.out).count("PHYS_LINK_NOT_UP"),
            codes(again.out).count("PORT_DOWN") + codes(again.out).count("PHYS_LINK_NOT_UP"));
  auto refused = run({"analyze", "--tool-output", paste, "-o", path("paste.ibsnap")});
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_THAT(refused.err, HasSubstr("--force"));
}

// Issue 11 #10: an empty kernel log given on purpose is said, not a collection failure.
TEST_F(Cli, AnEmptyDmesgFileIsANoteAndTheVerdictIsTheExitCode) {
  auto r =
      run({"snapshot", "--root", kMlx5Tree, "--dmesg-file", "/dev/null", "-o", path("n.ibsnap")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("note: /dev/null: empty file"));
  EXPECT_THAT(r.err, Not(HasSubstr("cannot read")));
}

// Issue 10: the real mlx5 capture is a ConnectX-4 Lx VF (PCI 0x1016, Ethernet only) whose
// tree says InfiniBand at "25 Gb/sec (1X EDR)": the report says so instead of passing it on.
TEST_F(Cli, AnEthernetOnlyAdapterClaimingInfiniBandGetsARemark) {
  auto r = run({"analyze", "--root", kMlx5Tree});
  EXPECT_THAT(r.out,
              HasSubstr("mlx5_0 port 1: ConnectX-4 Lx VF (PCI device 0x1016) is an Ethernet-only "
                        "adapter, yet link_layer says InfiniBand"));
}

// Issue 10: evidence from two sources merges in one place, in core. A paste that says port 1
// is down keeps its findings next to a snapshot that said ACTIVE, and the conflict is
// printed with both values; nothing is dropped.
TEST_F(Cli, APasteContradictingASnapshotKeepsItsFindingsAndTheConflictIsSaid) {
  const std::string tree = std::string(IBC_FIXTURES_DIR) +
                           "/real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures";
  const std::string paste =
      std::string(IBC_FIXTURES_DIR) +
      "/real/ibtools/"
      "ibportstate-and-ibstat_mlx4-port1-down-disabled-port2-active56_rdma-core-pr-847.txt";
  ASSERT_EQ(run({"snapshot", "--root", tree, "-o", path("n.ibsnap")}).exit_code, 0);
  auto r = run({"analyze", path("n.ibsnap"), "--tool-output", paste, "--format", "json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("conflicting evidence: devices[mlx4_0].ports[1].state: '4: ACTIVE' (" +
                        path("n.ibsnap") + ", kept) vs 'Down' (" + paste + ")"));
  // The same state in two spellings is not a conflict.
  EXPECT_THAT(r.err, Not(HasSubstr("ports[2].state")));
  const auto doc = parseJson(r.out);
  bool kept = false;
  for (const auto& v : doc.fields().at("findings").list_value().values()) {
    const auto& f = v.struct_value().fields();
    if ((f.at("code").string_value() == "PORT_DOWN" ||
         f.at("code").string_value() == "PHYS_LINK_NOT_UP") &&
        f.at("port").number_value() == 1) {
      kept = true;
      EXPECT_EQ(f.at("source").string_value(), paste);
    }
  }
  EXPECT_TRUE(kept) << r.out.substr(0, 3000);
}

// Issue 10: two --tool-output files find what one file with the same bytes finds (the real
// capture split where its second tool starts).
TEST_F(Cli, TwoPastesFindWhatOneFileWithTheSameBytesFinds) {
  const std::string whole = ibcFixture(
      "real/ibtools/"
      "ibdev2netdev-and-ibv_devinfo_mixed-ib-roce-ib0-down-mlx5_0-port-down_ucx-issue-2534.txt");
  const auto cut = whole.find("$ ibv_devinfo");
  ASSERT_NE(cut, std::string::npos);
  write("whole.txt", whole);
  write("first.txt", whole.substr(0, cut));
  write("second.txt", whole.substr(cut));
  auto one = run({"analyze", "--tool-output", path("whole.txt"), "--format", "json"});
  auto two = run({"analyze", "--tool-output", path("first.txt"), "--tool-output",
                  path("second.txt"), "--format", "json"});
  EXPECT_EQ(one.exit_code, two.exit_code) << one.err << two.err;
  const auto codes = [](const std::string& json) {
    std::multiset<std::string> out;
    const auto doc = parseJson(json);
    for (const auto& v : doc.fields().at("findings").list_value().values()) {
      const auto& f = v.struct_value().fields();
      out.insert(f.at("code").string_value() + " " + f.at("device").string_value() + " " +
                 std::to_string(static_cast<int>(f.at("port").number_value())));
    }
    return out;
  };
  EXPECT_EQ(codes(one.out), codes(two.out)) << one.out.substr(0, 2000) << "\n---\n"
                                            << two.out.substr(0, 2000);
}

TEST_F(Cli, TextReportHasTheTableFindingsAndNextSteps) {
  auto r = run({"analyze", "--root", kMlx5Tree});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("NODE"));
  EXPECT_THAT(r.out, HasSubstr("mlx5_0 (VF)"));
  EXPECT_THAT(r.out, HasSubstr("WARNING  CQE_ERRORS"));
  EXPECT_THAT(r.out, HasSubstr("next step:"));
}

TEST_F(Cli, GarbageAndTruncatedSnapshotsAreRejectedByNameWithExitFour) {
  std::mt19937 rng(7);
  std::string garbage(4096, '\0');
  for (auto& c : garbage) c = static_cast<char>(rng());
  write("garbage.ibsnap", garbage);
  write("empty.ibsnap", "");
  auto snap = run({"snapshot", "--root", kMlx5Tree, "-o", path("good.ibsnap")});
  ASSERT_LE(snap.exit_code, 2);
  std::ifstream in(path("good.ibsnap"), std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write("truncated.ibsnap", good.substr(0, good.size() / 2));

  for (const char* name : {"garbage.ibsnap", "empty.ibsnap", "truncated.ibsnap"}) {
    auto r = run({"analyze", path(name)});
    EXPECT_EQ(r.exit_code, 4) << name;
    EXPECT_THAT(r.err, HasSubstr(name));
  }
  // A bad file next to a good one: the good one is still reported, and its verdict is the
  // exit code (docs/commands.md: a verdict wins over an input problem, 2 beats 1 beats 4).
  const int verdict = run({"analyze", path("good.ibsnap")}).exit_code;
  ASSERT_TRUE(verdict == 1 || verdict == 2) << verdict;
  auto mixed = run({"analyze", path("good.ibsnap"), path("garbage.ibsnap")});
  EXPECT_EQ(mixed.exit_code, verdict);
  EXPECT_THAT(mixed.out, HasSubstr("CQE_ERRORS"));
  EXPECT_THAT(mixed.err, HasSubstr("not an ibcollect snapshot"));
}

TEST_F(Cli, UnrecognisedToolOutputIsAnInputError) {
  std::mt19937 rng(11);
  std::string garbage(1 << 16, '\0');
  for (auto& c : garbage) c = static_cast<char>(rng());
  write("garbage.txt", garbage);
  write("empty.txt", "");
  for (const char* name : {"garbage.txt", "empty.txt"}) {
    auto r = run({"analyze", "--tool-output", path(name)});
    EXPECT_EQ(r.exit_code, 4) << name << r.err;
    EXPECT_THAT(r.err, HasSubstr("no known tool output"));
  }
}

TEST_F(Cli, EmptyOrUnrecognisedLogsAreInputErrorsNeverAQuietOk) {
  std::mt19937 rng(12);
  std::string binary(1 << 14, '\0');
  for (auto& c : binary) c = static_cast<char>(rng());
  write("binary.bin", binary);
  write("empty.txt", "");
  write("prose.txt", "the job hung at step 4000, no idea why\nplease help\n");
  struct Case {
    const char* option;
    const char* file;
    const char* says;
  };
  for (const Case& c : {Case{"--nccl-log", "empty.txt", "empty file"},
                        Case{"--nccl-log", "prose.txt", "no NCCL debug lines recognised"},
                        Case{"--nccl-log", "binary.bin", "no NCCL debug lines recognised"},
                        Case{"--nccl-tests", "empty.txt", "empty file"},
                        Case{"--nccl-tests", "prose.txt", "no nccl-tests output recognised"},
                        Case{"--nccl-tests", "binary.bin", "no nccl-tests output recognised"},
                        Case{"--dmesg-file", "empty.txt", "empty file"},
                        Case{"--dmesg-file", "binary.bin", "binary data, not a kernel log"},
                        Case{"--dmesg-file", "prose.txt", "no kernel log lines recognised"}}) {
    auto r = run({"analyze", c.option, path(c.file)});
    EXPECT_EQ(r.exit_code, 4) << c.option << " " << c.file << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(path(c.file) + ": " + c.says)) << c.option << " " << c.file << "\n"
                                                                << r.err;
    EXPECT_THAT(r.err, HasSubstr("nothing to analyze"));
    EXPECT_THAT(r.out, Not(HasSubstr("OK")));
  }
}

// Issue 10: beside a tree (--root), a log in which nothing was recognised is an input error
// as it is alone: named, counted, and the tree's report still printed; the exit code is the
// tree's verdict when it has warnings or critical findings, else 4 (docs/commands.md).
TEST_F(Cli, AnUnrecognisedLogBesideATreeIsAnInputErrorNotAQuietOk) {
  write("prose.txt", "the job hung at step 4000, no idea why\nplease help\n");
  const std::string qdr = std::string(IBC_FIXTURES_DIR) +
                          "/real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures";
  const int verdict = run({"analyze", "--root", qdr}).exit_code;
  for (const char* option : {"--nccl-log", "--nccl-tests", "--dmesg-file"}) {
    auto r = run({"analyze", "--root", qdr, option, path("prose.txt")});
    EXPECT_EQ(r.exit_code, verdict == 1 || verdict == 2 ? verdict : 4) << option << "\n"
                                                                       << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(path("prose.txt") + ": no ")) << option << r.err;
    EXPECT_THAT(r.err, HasSubstr("1 input(s) could not be read or were not recognised"))
        << option << r.err;
    EXPECT_THAT(r.out, HasSubstr("mlx4_0")) << option << r.out;
  }
  // A real kernel log without RDMA lines is a kernel log: no error.
  write("quiet-dmesg.txt",
        "[    0.000000] Linux version 6.1.0-27-amd64\n[    1.234567] clocksource: Switched to "
        "clocksource tsc\n");
  auto r = run({"analyze", "--root", qdr, "--dmesg-file", path("quiet-dmesg.txt")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("quiet-dmesg.txt")));
}

TEST_F(Cli, AnUnrecognisedLogBesideAGoodOneKeepsTheGoodOnesFindings) {
  const std::string good = std::string(IBC_FIXTURES_DIR) +
                           "/real/nccl-logs/nccl-log_ib-no-device-socket-admin0-1rank_vissl-"
                           "issue-480.txt";
  write("prose.txt", "not a log\n");
  const int verdict = run({"analyze", "--nccl-log", good}).exit_code;
  ASSERT_TRUE(verdict == 1 || verdict == 2) << verdict;
  auto r = run({"analyze", "--nccl-log", good, "--nccl-log", path("prose.txt")});
  // The good log's verdict wins over the unrecognised one (docs/commands.md).
  EXPECT_EQ(r.exit_code, verdict) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NCCL_IB_UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr("1 input(s) could not be read or were not recognised"));
}

TEST_F(Cli, AnUnreadableInputIsNamedOnceWithTheOsReason) {
  // Reading /proc/self/mem at offset 0 fails with EIO: a file that exists but cannot be read.
  const std::string unreadable = "/proc/self/mem";
  auto r = run({"analyze", "--nccl-log", unreadable});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  const auto first = r.err.find(unreadable);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(unreadable, first + 1), std::string::npos) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Input/output error"));
}

TEST_F(Cli, UnwritableOutputSaysNothingWasKeptAndTheVerdictStaysTheExitCode) {
  auto r = run({"snapshot", "--root", kMlx5Tree, "-o", path("no-such-dir/node.ibsnap")});
  EXPECT_EQ(r.exit_code, 1) << "the tree's WARNING wins over the write failure";
  EXPECT_THAT(r.err, HasSubstr("could not write the snapshot"));
  EXPECT_THAT(r.err, HasSubstr("nothing was kept"));
  EXPECT_THAT(r.out, HasSubstr("CQE_ERRORS"));  // the report is still printed
}

TEST_F(Cli, FullDiskLeavesNoPartialSnapshot) {
  if (::geteuid() != 0 || ::access("/usr/bin/unshare", X_OK) != 0) {
    GTEST_SKIP() << "needs root and unshare to mount a tiny tmpfs";
  }
  const std::string mnt = path("full");
  std::filesystem::create_directories(mnt);
  ProcessRunner runner;
  auto r = runner.run(
      {"unshare", "--mount", "sh", "-c",
       "mount -t tmpfs -o size=64k tmpfs '" + mnt + "' && (dd if=/dev/zero of='" + mnt +
           "/fill' bs=4k 2>/dev/null; true) && '" + IBC_BINARY + "' snapshot --root '" + kMlx5Tree +
           "' -o '" + mnt + "/node.ibsnap' >/dev/null; rc=$?; echo LEFT: $(ls -A '" + mnt +
           "'); exit $rc"},
      std::chrono::seconds(60));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 1) << r->err;  // the tree's WARNING; the failure is printed
  EXPECT_THAT(r->err, HasSubstr("No space left on device"));
  EXPECT_THAT(r->out, HasSubstr("LEFT: fill\n")) << "partial or temporary file left: " << r->out;
}

TEST_F(Cli, AGibibyteLogIsReadBoundedAndStillAnalysed) {
  {
    std::ofstream out(path("huge.log"), std::ios::binary);
    out << "host1:1:1 [0] NCCL INFO NET/IB : No device found.\n";
  }
  std::filesystem::resize_file(path("huge.log"), 1ull << 30);  // sparse: 1 GiB of zeros
  {
    std::ofstream out(path("huge.log"), std::ios::binary | std::ios::app);
    out << "\nhost1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n";
  }
  auto r = run({"analyze", "--nccl-log", path("huge.log"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NCCL_IB_UNAVAILABLE"));   // from the head
  EXPECT_THAT(r.out, HasSubstr("NCCL_SOCKET_FALLBACK"));  // from the tail
  // Said, so nobody believes the middle was read.
  EXPECT_THAT(r.err,
              HasSubstr("note: " + path("huge.log") + ": larger than the 64 MiB read bound"));
}

TEST_F(Cli, BytesThatAreNotTextInSysfsNeitherBreakTheSnapshotNorReachTheTerminal) {
  // A copy of the real tree whose port state holds an escape sequence and whose counters
  // hold bytes that are not UTF-8: the signed-to-be snapshot must read back, the text
  // report must carry no control byte, and the unreadable state must not read as OK.
  const std::string tree = path("tree");
  std::filesystem::copy(kMlx5Tree, tree, std::filesystem::copy_options::recursive);
  const std::string port = tree + "/sys/class/infiniband/mlx5_0/ports/1";
  std::ofstream(port + "/state", std::ios::trunc | std::ios::binary) << "Act\x1b[31mive\xff\n";
  std::ofstream(port + "/counters/symbol_error", std::ios::trunc | std::ios::binary)
      << "12\xff\xfe\n";
  std::ofstream(port + "/hw_counters/out_of_buffer", std::ios::trunc | std::ios::binary)
      << "\xc3(\n";
  auto snap = run({"snapshot", "--root", tree, "-o", path("odd.ibsnap")});
  EXPECT_EQ(snap.exit_code, 1) << snap.err;
  EXPECT_THAT(snap.err, Not(HasSubstr("invalid UTF-8")));  // protobuf's complaint
  auto text = run({"analyze", path("odd.ibsnap")});
  EXPECT_EQ(text.exit_code, 1) << text.err;
  EXPECT_THAT(text.out, HasSubstr("PORT_STATE_UNKNOWN"));
  EXPECT_THAT(text.out, HasSubstr("Act?[31mive?"));
  for (const char c : text.out) {
    const auto u = static_cast<unsigned char>(c);
    ASSERT_TRUE(u >= 0x20 || c == '\n' || c == '\t') << "control byte " << int(u) << " in\n"
                                                     << text.out;
  }
  auto json = run({"analyze", path("odd.ibsnap"), "--format", "json"});
  EXPECT_EQ(json.exit_code, 1) << json.err;
  parseJson(json.out);
}

TEST_F(Cli, UnreadableAndOddSysfsFilesNeverAbortTheSnapshot) {
  // A copy of the real tree where one counter is a dangling link (open fails with ENOENT),
  // one is a directory (read fails with EISDIR) and the port's rate file is empty.
  const std::string tree = path("tree");
  std::filesystem::copy(kMlx5Tree, tree, std::filesystem::copy_options::recursive);
  const std::string port = tree + "/sys/class/infiniband/mlx5_0/ports/1";
  std::filesystem::remove(port + "/counters/symbol_error");
  std::filesystem::create_symlink("/nonexistent/ibc-test", port + "/counters/symbol_error");
  std::filesystem::remove(port + "/state");
  std::filesystem::create_directory(port + "/state");
  std::ofstream(port + "/rate", std::ios::trunc).close();
  auto r = run({"snapshot", "--root", tree, "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"unavailable_reason\": \"ENOENT\""));
  EXPECT_THAT(r.out, HasSubstr("\"probe\": \"sysfs.port\""));  // state: EISDIR recorded
  EXPECT_THAT(r.out, HasSubstr("CQE_ERRORS"));
}

}  // namespace

// Issue 10: output a person can read.
CommandResult runWithEnv(const std::vector<std::string>& vars, std::vector<std::string> args) {
  std::vector<std::string> argv{"env"};
  argv.insert(argv.end(), vars.begin(), vars.end());
  argv.push_back(IBC_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessRunner runner;
  auto r = runner.run(argv, std::chrono::seconds(120));
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : CommandResult{};
}

std::size_t longestLine(const std::string& text) {
  std::size_t longest = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    longest = std::max(longest, end - start);
    start = end + 1;
  }
  return longest;
}

TEST_F(Cli, EveryHelpFitsEightyColumnsAndFetchSaysWhoseCertificate) {
  for (const std::string c : {"", "snapshot", "analyze", "compare", "upload", "flush", "fetch",
                              "verify", "explain", "completion"}) {
    auto h = c.empty() ? run({"--help"}) : run({c, "--help"});
    EXPECT_EQ(h.exit_code, 0) << c;
    EXPECT_LE(longestLine(h.out), 80u) << c << "\n" << h.out;
  }
  auto fetch = run({"fetch", "--help"});
  EXPECT_THAT(fetch.out, HasSubstr("support certificate"));
  EXPECT_THAT(fetch.out, Not(HasSubstr("This node's certificate")));
  EXPECT_THAT(fetch.out, Not(HasSubstr("--spool")));
  EXPECT_THAT(fetch.out, Not(HasSubstr("--retries")));
}

TEST_F(Cli, ExplainSaysWhatACodeMeansAndATypoNamesTheNearestCodes) {
  auto sm = run({"explain", "port_not_active_sm"});
  EXPECT_EQ(sm.exit_code, 0) << sm.err;
  EXPECT_EQ(sm.out.rfind("PORT_NOT_ACTIVE_SM\n", 0), 0u) << sm.out;
  EXPECT_THAT(sm.out, HasSubstr("Escalates to the provider: yes (subnet_manager)"));
  EXPECT_THAT(sm.out, HasSubstr("Next step:\n  Check that a subnet manager runs"));
  auto typo = run({"explain", "PORT_DWN"});
  EXPECT_EQ(typo.exit_code, 3);
  EXPECT_THAT(typo.err, HasSubstr("did you mean PORT_DOWN"));
  auto list = run({"explain", "--list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("NCCL_SOCKET_FALLBACK"));
}

TEST_F(Cli, AParseErrorPrintsOneUsageLineNamingTheCommand) {
  auto r = run({"snapshot", "--bogus"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("--bogus"));
  std::size_t usage = 0;
  for (auto p = r.err.find("--help"); p != std::string::npos; p = r.err.find("--help", p + 1))
    ++usage;
  EXPECT_EQ(usage, 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Run 'ibcollect snapshot --help' for usage."));
}

TEST_F(Cli, TextFitsTheWidthFromTheFlagOrColumns) {
  auto wide = runWithEnv({}, {"analyze", "--root", kMlx5Tree});
  EXPECT_GT(longestLine(wide.out), 80u) << "not a terminal, no COLUMNS: not wrapped";
  auto flag = runWithEnv({}, {"analyze", "--root", kMlx5Tree, "--width", "80"});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_LE(longestLine(flag.out), 80u) << flag.out;
  EXPECT_THAT(flag.out, HasSubstr("next step:"));
  auto columns = runWithEnv({"COLUMNS=80"}, {"analyze", "--root", kMlx5Tree});
  EXPECT_LE(longestLine(columns.out), 80u) << columns.out;
  EXPECT_EQ(columns.out, flag.out);
}

TEST_F(Cli, QuietShowsTheVerdictOnlyAndColourIsForTerminalsOrWhenAsked) {
  auto q = run({"analyze", "--root", kMlx5Tree, "-q"});
  EXPECT_EQ(q.exit_code, 1);
  EXPECT_THAT(q.out, HasSubstr("WARNING"));
  EXPECT_THAT(q.out, Not(HasSubstr("next step:")));
  auto v = run({"analyze", "--root", kMlx5Tree, "-v"});
  EXPECT_GE(v.out.size(), run({"analyze", "--root", kMlx5Tree}).out.size());
  auto plain = run({"analyze", "--root", kMlx5Tree, "--color", "auto"});
  EXPECT_THAT(plain.out, Not(HasSubstr("\x1b"))) << "auto: stdout is not a terminal";
  auto always = run({"analyze", "--root", kMlx5Tree, "--color", "always"});
  EXPECT_THAT(always.out, HasSubstr("\x1b[33mWARNING\x1b[0m"));
  auto bad = run({"analyze", "--root", kMlx5Tree, "--color", "sometimes"});
  EXPECT_EQ(bad.exit_code, 3);
}

TEST_F(Cli, NcclTestsResultsAreShownAndExpectBusbwJudgesThem) {
  const std::string nt =
      std::string(IBC_FIXTURES_DIR) +
      "/real/nccl-tests/"
      "nccl-tests_all_reduce_perf_ring-large-sizes-busbw95_nccl-tests-issue-252.txt";
  auto shown = run({"analyze", "--root", kMlx5Tree, "--nccl-tests", nt});
  EXPECT_THAT(shown.out, HasSubstr("SIZE (B)    ALGBW GB/s  BUSBW GB/s"));
  EXPECT_THAT(shown.out, HasSubstr("4294967296  55.64       97.37"));
  EXPECT_THAT(shown.out, HasSubstr("average busbw 95.30 GB/s"));
  EXPECT_THAT(shown.out, Not(HasSubstr("NCCL_TEST_LOW_BUSBW")));
  auto low = run({"analyze", "--root", kMlx5Tree, "--nccl-tests", nt, "--expect-busbw", "150"});
  EXPECT_THAT(low.out, HasSubstr("expected busbw 150.00 GB/s"));
  EXPECT_THAT(low.out, HasSubstr("NCCL_TEST_LOW_BUSBW"));
  EXPECT_THAT(low.out, HasSubstr("below the expected 150 GB/s"));
  auto fine = run({"analyze", "--root", kMlx5Tree, "--nccl-tests", nt, "--expect-busbw", "90"});
  EXPECT_THAT(fine.out, Not(HasSubstr("NCCL_TEST_LOW_BUSBW")));
}

// `--color auto` on a real terminal: script(1) gives the binary a pseudo-terminal.
TEST_F(Cli, ColourAutoOnATerminalHonoursNoColor) {
  ProcessRunner probe;
  if (!probe.available("script")) GTEST_SKIP() << "script(1) (bsdutils) is not installed";
  const auto onTerminal = [&](const std::string& env_and_args) {
    ProcessRunner runner;
    auto r = runner.run(
        {"script", "-qec",
         "env " + env_and_args + " " + IBC_BINARY + " analyze -q --root " + kMlx5Tree, "/dev/null"},
        std::chrono::seconds(120));
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->out : std::string();
  };
  EXPECT_NE(onTerminal("TERM=xterm").find("\x1b[33mWARNING\x1b[0m"), std::string::npos);
  const std::string no_color = onTerminal("NO_COLOR=1");
  EXPECT_THAT(no_color, Not(HasSubstr("\x1b[")));
  EXPECT_THAT(no_color, HasSubstr("WARNING"));
}

TEST_F(Cli, JobTakesTheTextFlagsToo) {
  // No Slurm here (or no such job): the flags must parse, so the exit is not a usage error.
  auto r = run({"--job", "999999999", "-q", "-v", "--width", "80", "--color", "never"});
  EXPECT_NE(r.exit_code, 3) << r.err;
}
