#include "ibc/core/slurm.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace ibc::core {
namespace {

TEST(ScontrolShowJob, ParsesTheRunning8NodeJob) {
  auto job = parseScontrolShowJob(ibc::test::readFixture(
      "real/slurm/scontrol-show-job_8node-64gpu-running_gcm-shelper-testdata.txt"));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->job_id, "8401413");
  EXPECT_EQ(job->job_state, "RUNNING");
  EXPECT_EQ(job->reason, "None");
  EXPECT_EQ(job->node_list, "node[1433,1787,1795,1854,1889-1890,1968-1969]");
  EXPECT_EQ(job->num_nodes, 8u);
  EXPECT_EQ(job->num_tasks, 64u);
  EXPECT_EQ(job->batch_host, "node1433");
  EXPECT_EQ(job->partition, "learn");
  EXPECT_TRUE(jobStateIsActive(job->job_state));
  auto hosts = expandHostlist(job->node_list);
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(*hosts, (std::vector<std::string>{"node1433", "node1787", "node1795", "node1854",
                                              "node1889", "node1890", "node1968", "node1969"}));
}

TEST(ScontrolShowNodes, ReadsBothFormsOfARealCapture) {
  // Multi-line records (node1, node2) and `scontrol -o` (node1), both from the test cluster.
  const std::vector<std::pair<std::string, std::vector<std::string>>> captures{
      {"scontrol-show-node_2node-x86_64_ibcollect-test-cluster.txt", {"node1", "node2"}},
      {"scontrol-o-show-node_1node-oneline_ibcollect-test-cluster.txt", {"node1"}}};
  for (const auto& [file, names] : captures) {
    const auto nodes = parseScontrolShowNodes(ibc::test::readFixture("real/slurm/" + file));
    std::vector<std::string> got;
    for (const auto& n : nodes) {
      got.push_back(n.name);
      EXPECT_EQ(n.arch, "x86_64") << file << " " << n.name;
      EXPECT_EQ(n.state, "IDLE") << file << " " << n.name;
    }
    EXPECT_EQ(got, names) << file;
  }
}

TEST(ScontrolShowNodes, MixedArchitecturesANodeNeverRegisteredAndNoiseAround) {
  // Synthetic, in the shape of the captures above: a GH200 node, a node whose slurmd never
  // registered (Slurm prints Arch=(null)), markdown a poster added, and text that is not a
  // node record before the first one.
  const auto nodes = parseScontrolShowNodes(
      "$ scontrol show node gpu[01-03]\n"
      "Partitions=gpu State=UP\n"
      "**NodeName=gpu01 Arch=aarch64 CoresPerSocket=72**\n"
      "   State=MIXED ThreadsPerCore=1\n"
      "\n"
      "NodeName=gpu02 Arch=(null) CoresPerSocket=1\n"
      "   State=DOWN*+NOT_RESPONDING ThreadsPerCore=1\n"
      "NodeName=gpu03 Arch=x86_64 CoresPerSocket=32 State=IDLE\n");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "gpu01");
  EXPECT_EQ(nodes[0].arch, "aarch64");
  EXPECT_EQ(nodes[0].state, "MIXED");
  EXPECT_EQ(nodes[1].arch, "");
  EXPECT_EQ(nodes[1].state, "DOWN*+NOT_RESPONDING");
  EXPECT_EQ(nodes[2].arch, "x86_64");
  EXPECT_TRUE(parseScontrolShowNodes("Node gpu01 not found\n").empty());
}

TEST(CanonicalArch, SpellsArchitecturesAsUnameDoes) {
  for (const auto& [given, spelled] :
       std::vector<std::pair<std::string, std::string>>{{"x86_64", "x86_64"},
                                                        {"amd64", "x86_64"},
                                                        {"arm64", "aarch64"},
                                                        {"aarch64", "aarch64"},
                                                        {"ppc64le", "ppc64le"}}) {
    EXPECT_EQ(canonicalArch(given), spelled) << given;
  }
}

TEST(ScontrolShowJob, ParsesTheArrayTask) {
  auto job = parseScontrolShowJob(ibc::test::readFixture(
      "real/slurm/scontrol-show-job_array-task-1node-8gpu_gcm-shelper-testdata.txt"));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->job_id, "30214");
  EXPECT_EQ(job->array_job_id, "30185");
  EXPECT_EQ(job->array_task_id, "28");
  EXPECT_EQ(job->node_list, "node1751");
  EXPECT_EQ(job->num_nodes, 1u);
}

TEST(ScontrolShowJob, ReadsAFailedJobDespiteMarkdownAndAMissingJobIdLine) {
  auto job = parseScontrolShowJob(ibc::test::readFixture(
      "real/slurm/"
      "scontrol-show-job_failed-nonzeroexitcode-markdown-bold-partial_ubuntu-slurm-issue-5.txt"));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->job_id, "");
  EXPECT_EQ(job->job_state, "FAILED");
  EXPECT_EQ(job->reason, "NonZeroExitCode");
  EXPECT_EQ(job->node_list, "asus");
  EXPECT_FALSE(jobStateIsActive(job->job_state));
}

TEST(ScontrolShowJob, ReqNodeListIsNotTheAllocation) {
  auto job = parseScontrolShowJob(
      "JobId=7 JobState=PENDING\n   ReqNodeList=node[1-4] ExcNodeList=(null)\n   "
      "NodeList=(null)\n");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->node_list, "");
}

TEST(ScontrolShowJob, RejectsOtherText) {
  EXPECT_FALSE(parseScontrolShowJob("").ok());
  EXPECT_FALSE(parseScontrolShowJob("slurm_load_jobs error: Invalid job id specified\n").ok());
  EXPECT_FALSE(parseScontrolShowJob(std::string("\x00\xff garbage", 10)).ok());
  EXPECT_FALSE(parseScontrolShowJob(std::string(10 << 20, 'x')).ok());  // huge
}

struct HostlistCase {
  std::string in;
  std::vector<std::string> out;
};

class HostlistTable : public ::testing::TestWithParam<HostlistCase> {};

TEST_P(HostlistTable, Expands) {
  auto r = expandHostlist(GetParam().in);
  ASSERT_TRUE(r.ok()) << GetParam().in << ": " << r.error().message;
  EXPECT_EQ(*r, GetParam().out);
}

INSTANTIATE_TEST_SUITE_P(
    Values, HostlistTable,
    ::testing::Values(HostlistCase{"login1", {"login1"}}, HostlistCase{"", {}},
                      HostlistCase{"node[1-3]", {"node1", "node2", "node3"}},
                      HostlistCase{"gpu[01-02],gpu10", {"gpu01", "gpu02", "gpu10"}},
                      HostlistCase{"a[1-2]b[3-4]", {"a1b3", "a1b4", "a2b3", "a2b4"}},
                      HostlistCase{"node[1-3],gpu[01-02]",
                                   {"node1", "node2", "node3", "gpu01", "gpu02"}},
                      HostlistCase{"n[9-11]", {"n9", "n10", "n11"}},
                      HostlistCase{"rack1-node[7,9]", {"rack1-node7", "rack1-node9"}}));

TEST(Hostlist, MalformedExpressionsSayWhy) {
  for (const char* bad :
       {"node[1-3", "node1-3]", "node[3-1]", "node[a-b]", "node[]", "node[1,,2]", "n[[1]]"}) {
    auto r = expandHostlist(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().code, ErrorCode::Malformed) << bad;
    }
  }
}

TEST(Hostlist, HugeRangesAreBounded) {
  auto r = expandHostlist("n[0-99999999]", 1000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::TooLarge);
  auto r2 = expandHostlist("a[0-99]b[0-99]", 1000);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().code, ErrorCode::TooLarge);
}

TEST(Hostlist, CompressIsTheInverse) {
  const std::vector<std::string> hosts{"node1433", "node1787", "node1795", "node1854",
                                       "node1889", "node1890", "node1968", "node1969"};
  const std::string c = compressHostlist(hosts);
  EXPECT_EQ(c, "node[1433,1787,1795,1854,1889-1890,1968-1969]");
  EXPECT_EQ(*expandHostlist(c), hosts);
  EXPECT_EQ(compressHostlist({"gpu01", "gpu02", "login"}), "gpu[01-02],login");
}

TEST(Hostlist, ZeroPaddedNamesPastThePaddingStayOneRange) {
  // sim[0000-1999] expands to sim0998, sim0999, sim1000, ...: 1000 has no leading zero but
  // the same width, and must not start a second range printed before the first.
  std::vector<std::string> hosts;
  for (int i = 998; i <= 1001; ++i)
    hosts.push_back((i < 1000 ? "sim0" : "sim") + std::to_string(i));
  const std::string c = compressHostlist(hosts);
  EXPECT_EQ(c, "sim[0998-1001]");
  EXPECT_EQ(*expandHostlist(c), hosts);
  EXPECT_EQ(compressHostlist({"n1", "n10", "n2"}), "n[1-2,10]");
}

TEST(HostNames, ShortAndFullyQualifiedNamesOfOneMachineAreTheSameHost) {
  EXPECT_TRUE(sameHostName("node7", "node7"));
  EXPECT_TRUE(sameHostName("node7.cluster.local", "node7"));
  EXPECT_TRUE(sameHostName("node7", "node7.other.domain"));
  EXPECT_FALSE(sameHostName("node7", "node70"));
  EXPECT_FALSE(sameHostName("", ""));
  EXPECT_FALSE(sameHostName("node7", ""));
  // Addresses are compared whole: 10.0.0.1 and 10.0.0.2 share no more than "10".
  EXPECT_EQ(shortHostName("10.0.0.1"), "10.0.0.1");
  EXPECT_FALSE(sameHostName("10.0.0.1", "10.0.0.2"));
  EXPECT_TRUE(sameHostName("10.0.0.1", "10.0.0.1"));
}

}  // namespace
}  // namespace ibc::core
