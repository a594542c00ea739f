#include "ibc/core/step_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ibc/core/encoding.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

std::string bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Base64, RoundTripsEveryLengthAndRejectsGarbage) {
  for (std::size_t n = 0; n < 70; ++n) {
    const std::string b = bytes(n, static_cast<unsigned>(n));
    auto d = base64Decode(base64Encode(b));
    ASSERT_TRUE(d.ok()) << n;
    EXPECT_EQ(*d, b);
  }
  EXPECT_EQ(base64Encode("abc"), "YWJj");
  EXPECT_EQ(base64Encode("ab"), "YWI=");
  EXPECT_FALSE(base64Decode("YWJ").ok());
  EXPECT_FALSE(base64Decode("YW!j").ok());
  EXPECT_FALSE(base64Decode("Y=Jj").ok());
}

TEST(StepOutput, LinesStayUnderSrunsLineLimitAndReassemble) {
  const std::string env = bytes(200000, 1);
  const auto lines = encodeStepOutput("node1433", env);
  ASSERT_GT(lines.size(), 100u);
  for (const auto& l : lines) EXPECT_LT(l.size(), 1024u);
  StepOutputCollector c;
  std::string done;
  for (const auto& l : lines) {
    const std::string n = c.addLine("3: " + l.substr(0, l.size() - 1));  // srun --label prefix
    if (!n.empty()) done = n;
  }
  EXPECT_EQ(done, "node1433");
  ASSERT_EQ(c.results().count("node1433"), 1u);
  EXPECT_EQ(c.results().at("node1433").envelope, env);
  EXPECT_TRUE(c.results().at("node1433").error.empty());
}

TEST(StepOutput, InterleavedAndReorderedChunksFromSeveralNodes) {
  const std::string a = bytes(50000, 2), b = bytes(70000, 3);
  auto la = encodeStepOutput("a", a), lb = encodeStepOutput("b", b);
  // Chunks of one node may arrive in any order before its end line.
  std::vector<std::string> mixed;
  std::mt19937 rng(4);
  std::shuffle(la.begin(), la.end() - 1, rng);
  std::shuffle(lb.begin(), lb.end() - 1, rng);
  std::size_t i = 0, j = 0;
  while (i < la.size() || j < lb.size()) {
    if (i < la.size()) mixed.push_back(la[i++]);
    if (j < lb.size()) mixed.push_back(lb[j++]);
    mixed.push_back("srun: some notice\n");
  }
  StepOutputCollector c;
  for (const auto& l : mixed) c.addLine(l.substr(0, l.size() - 1));
  EXPECT_EQ(c.results().at("a").envelope, a);
  EXPECT_EQ(c.results().at("b").envelope, b);
  EXPECT_GT(c.ignoredLines(), 0u);
}

TEST(StepOutput, MissingOrDamagedChunksAreReportedNotDecoded) {
  auto lines = encodeStepOutput("n1", bytes(10000, 5));
  StepOutputCollector missing;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (k == 3) continue;
    missing.addLine(lines[k].substr(0, lines[k].size() - 1));
  }
  EXPECT_THAT(missing.results().at("n1").error, HasSubstr("incomplete"));
  EXPECT_TRUE(missing.results().at("n1").envelope.empty());

  StepOutputCollector damaged;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::string l = lines[k].substr(0, lines[k].size() - 1);
    if (k == 1) l[l.size() - 5] = l[l.size() - 5] == 'A' ? 'B' : 'A';
    damaged.addLine(l);
  }
  EXPECT_THAT(damaged.results().at("n1").error, HasSubstr("digest mismatch"));

  StepOutputCollector cut;
  for (std::size_t k = 0; k + 1 < lines.size(); ++k)
    cut.addLine(lines[k].substr(0, lines[k].size() - 1));
  EXPECT_EQ(cut.results().count("n1"), 0u);
  EXPECT_EQ(cut.incomplete(), std::vector<std::string>{"n1"});
}

TEST(StepOutput, AStepErrorIsAResultWithItsMessage) {
  StepOutputCollector c;
  const auto line = encodeStepError("node7", "the collector was killed by signal 9\nsecond line");
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  EXPECT_EQ(c.addLine(line.substr(0, line.size() - 1)), "node7");
  EXPECT_EQ(c.results().at("node7").error, "the collector was killed by signal 9 second line");
}

TEST(StepOutput, GarbageEmptyAndHugeLinesAreIgnored) {
  StepOutputCollector c;
  EXPECT_EQ(c.addLine(""), "");
  EXPECT_EQ(c.addLine(bytes(4096, 6)), "");
  EXPECT_EQ(c.addLine("IBCSTEP1"), "");
  EXPECT_EQ(c.addLine("IBCSTEP1 n 0/5 AAAA"), "");
  EXPECT_EQ(c.addLine("IBCSTEP1 n 2/1 AAAA"), "");
  EXPECT_EQ(c.addLine("IBCSTEP1 n 1/99999999999 AAAA"), "");
  EXPECT_EQ(c.addLine("IBCSTEP1 n 1/1 " + std::string(10 << 20, 'A')),
            "");  // huge chunk: accepted as text
  EXPECT_EQ(c.addLine("IBCSTEP1 n end 00"), "n");
  EXPECT_THAT(c.results().at("n").error, HasSubstr("digest"));
}

}  // namespace
}  // namespace ibc::core
