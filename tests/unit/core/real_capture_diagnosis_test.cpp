// Every real NCCL log capture in tests/fixtures/real/nccl-logs, diagnosed as a node's only
// evidence: the exact set of NCCL_* codes its PROVENANCE.md entry labels ("Expected codes"),
// none for a healthy run. The count diagnosed right is printed (issue 10 asks for it).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/rules.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

const std::string kLogDir = "real/nccl-logs";

// Expected codes per capture, as labelled in PROVENANCE.md ("Expected codes: ..."; "none"
// for a healthy run).
std::set<std::string> labelledCodes(const std::string& provenance, const std::string& file) {
  const std::size_t head = provenance.find("## " + file + "\n");
  if (head == std::string::npos) return {"<no provenance entry>"};
  const std::size_t next = provenance.find("\n## ", head + 3);
  const std::string entry =
      provenance.substr(head, next == std::string::npos ? std::string::npos : next - head);
  const std::string key = "Expected codes:";
  const std::size_t at = entry.find(key);
  if (at == std::string::npos) return {"<no Expected codes label>"};
  std::string line = entry.substr(at + key.size(), entry.find('\n', at) - at - key.size());
  std::set<std::string> codes;
  std::string word;
  for (char c : line + " ") {
    if ((c >= 'A' && c <= 'Z') || c == '_') {
      word += c;
    } else {
      if (word.rfind("NCCL_", 0) == 0) codes.insert(word);
      word.clear();
    }
  }
  return codes;
}

std::set<std::string> diagnosedCodes(const std::string& file, const std::string& text) {
  v1::Snapshot snap;
  snap.mutable_node()->set_hostname("capture-node");
  v1::NcclLog* log = snap.add_nccl_logs();
  log->set_source(file);
  *log->mutable_parsed() = parseNcclLog(text);
  std::set<std::string> codes;
  for (const auto& f : diagnoseNode(snap, {})) {
    if (f.code().rfind("NCCL_", 0) == 0) codes.insert(f.code());
  }
  return codes;
}

std::set<std::string> ncclCodesOf(const v1::Snapshot& snap) {
  std::set<std::string> codes;
  for (const auto& f : diagnoseNode(snap, {})) {
    if (f.code().rfind("NCCL_", 0) == 0) codes.insert(f.code());
  }
  return codes;
}

std::string joined(const std::set<std::string>& codes) {
  std::string s;
  for (const auto& c : codes) s += (s.empty() ? "" : " ") + c;
  return s.empty() ? "none" : s;
}

TEST(NcclCaptureDiagnosis, EveryNcclLogCaptureGetsExactlyItsLabelledCodes) {
  const std::string provenance = ibc::test::readFixture(kLogDir + "/PROVENANCE.md");
  const auto files = ibc::test::fixtureFiles(kLogDir, ".txt");
  ASSERT_GE(files.size(), 19U);
  int right = 0;
  for (const auto& file : files) {
    const std::string name = file.substr(file.rfind('/') + 1);
    const std::string text = ibc::test::readFixture(kLogDir + "/" + name);
    const auto expected = labelledCodes(provenance, name);
    const auto got = diagnosedCodes(name, text);
    EXPECT_EQ(joined(got), joined(expected)) << name;
    if (got == expected) ++right;
  }
  std::printf("real NCCL log captures diagnosed right: %d of %zu\n", right, files.size());
  EXPECT_EQ(right, static_cast<int>(files.size()));
}

TEST(NcclCaptureDiagnosis, LabelsAreReadFromTheProvenanceEntry) {
  const std::string prov =
      "## a.txt\n* Expected codes: NCCL_CONNECT_FAILED, NCCL_COLLECTIVE_TIMEOUT\n"
      "## b.txt\n* Expected codes: none (healthy)\n";
  EXPECT_EQ(joined(labelledCodes(prov, "a.txt")), "NCCL_COLLECTIVE_TIMEOUT NCCL_CONNECT_FAILED");
  EXPECT_EQ(joined(labelledCodes(prov, "b.txt")), "none");
  EXPECT_EQ(joined(labelledCodes(prov, "c.txt")), "<no provenance entry>");
}

// Synthetic lines in PyTorch's watchdog format (as in the LlamaFactory 6269 capture), with
// ranks stopped at different SeqNums.
TEST(NcclCaptureDiagnosis, RanksAtDifferentSeqNumsNameWhoIsBehind) {
  const std::string log =
      "[rank0]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=120, OpType=ALLREDUCE, Timeout(ms)=600000) ran for "
      "600061 milliseconds before timing out.\n"
      "[rank2]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:607] [Rank 2] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=120, OpType=ALLREDUCE, Timeout(ms)=600000) ran for "
      "600070 milliseconds before timing out.\n"
      "[rank1]:[E1206 18:44:12.7 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=118, OpType=ALLREDUCE, Timeout(ms)=600000) ran for "
      "600090 milliseconds before timing out.\n";
  v1::Snapshot snap;
  snap.mutable_node()->set_hostname("n1");
  v1::NcclLog* l = snap.add_nccl_logs();
  l->set_source("train.log");
  *l->mutable_parsed() = parseNcclLog(log);
  const v1::Finding* lagging = nullptr;
  const v1::Finding* timeout = nullptr;
  const auto findings = diagnoseNode(snap, {});
  for (const auto& f : findings) {
    if (f.code() == "NCCL_RANK_LAGGING") lagging = &f;
    if (f.code() == "NCCL_COLLECTIVE_TIMEOUT") timeout = &f;
  }
  ASSERT_NE(timeout, nullptr);
  EXPECT_EQ(timeout->severity(), "critical");
  ASSERT_NE(lagging, nullptr);
  EXPECT_EQ(lagging->severity(), "critical");
  EXPECT_THAT(lagging->summary(), HasSubstr("behind: rank 1 (at SeqNum 118)"));
  ASSERT_EQ(lagging->evidence_size(), 2);
  EXPECT_EQ(lagging->evidence(0), "SeqNum 118: rank 1");
  EXPECT_EQ(lagging->evidence(1), "SeqNum 120: rank 0, rank 2");
}

TEST(NcclCaptureDiagnosis, TimeoutWithAllRanksAtOneSeqNumIsNoLagging) {
  v1::Snapshot snap;
  snap.mutable_node()->set_hostname("n1");
  *snap.add_nccl_logs()->mutable_parsed() = parseNcclLog(
      "[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600013 milliseconds before timing "
      "out.\n"
      "[rank1]:[E ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600013 milliseconds before timing "
      "out.\n");
  EXPECT_EQ(joined(ncclCodesOf(snap)), "NCCL_COLLECTIVE_TIMEOUT");
}

}  // namespace
}  // namespace ibc::core
