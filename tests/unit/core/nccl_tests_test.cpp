#include "ibc/core/nccl_tests.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/text.h"

namespace ibc::core {
namespace {

const std::string kTestsDir = "real/nccl-tests";

std::string testsFixture(const std::string& name) {
  return ibc::test::readFixture(kTestsDir + "/" + name);
}

v1::NcclTestsResult parseFixture(const std::string& name) {
  const std::string text = testsFixture(name);
  EXPECT_FALSE(text.empty()) << name;
  return parseNcclTests(text);
}

const v1::NcclTestsRow& peakRow(const v1::NcclTestsResult& r) {
  return *std::max_element(r.rows().begin(), r.rows().end(), [](const auto& a, const auto& b) {
    return a.oop_busbw_gbs() < b.oop_busbw_gbs();
  });
}

std::vector<std::string> toVector(const google::protobuf::RepeatedPtrField<std::string>& f) {
  return {f.begin(), f.end()};
}

// ---- real captures (tests/fixtures/real/nccl-tests/PROVENANCE.md) ----------------------

TEST(NcclTestsRealCaptures, EveryCaptureHasRowsAndAFormat) {
  const auto files = ibc::test::fixtureFiles(kTestsDir, ".txt");
  ASSERT_EQ(files.size(), 15u);
  for (const auto& f : files) {
    const auto r = parseNcclTests(ibc::test::readFixture(f));
    EXPECT_GT(r.rows_size(), 0) << f;
    EXPECT_TRUE(r.format() == "modern" || r.format() == "legacy") << f;
    for (const auto& row : r.rows()) {
      EXPECT_GE(row.oop_busbw_gbs(), 0) << f;
      EXPECT_GE(row.ip_busbw_gbs(), 0) << f;
      EXPECT_EQ(row.type(), "float") << f;
    }
  }
}

TEST(NcclTestsRealCaptures, A3megaSixteenRanksPeakAt8GiBWithNoWrongResults) {
  const auto r = parseFixture(
      "nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt");
  EXPECT_EQ(r.format(), "modern");
  EXPECT_EQ(r.nranks(), 16);
  EXPECT_EQ(toVector(r.hosts()), (std::vector<std::string>{"ztan-mig-235z", "ztan-mig-gq73"}));
  ASSERT_EQ(r.rows_size(), 31);  // 8 B .. 8 GiB
  EXPECT_EQ(r.rows(0).size_bytes(), 8u);
  EXPECT_EQ(r.rows(30).size_bytes(), 8589934592u);
  for (const auto& row : r.rows()) {
    EXPECT_EQ(row.oop_wrong(), 0);
    EXPECT_EQ(row.ip_wrong(), 0);
    EXPECT_EQ(row.redop(), "sum");
    EXPECT_EQ(row.root(), -1);
    EXPECT_FALSE(row.has_error_column());
    EXPECT_FALSE(row.over_threshold());
  }
  const auto& peak = peakRow(r);
  EXPECT_EQ(peak.size_bytes(), 8589934592u);
  EXPECT_DOUBLE_EQ(peak.oop_busbw_gbs(), 338.82);
  EXPECT_DOUBLE_EQ(peak.ip_busbw_gbs(), 337.35);
  EXPECT_DOUBLE_EQ(peak.oop_algbw_gbs(), 180.71);
  EXPECT_DOUBLE_EQ(peak.oop_time_us(), 47535);
  EXPECT_EQ(peak.count(), 2147483648u);
  EXPECT_TRUE(r.has_out_of_bounds());
  EXPECT_EQ(r.out_of_bounds(), 0u);
  EXPECT_TRUE(r.out_of_bounds_ok());
  EXPECT_TRUE(r.has_avg_busbw());
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), 70.742);
  EXPECT_FALSE(r.validation_off());  // "validation: 1"
  EXPECT_EQ(r.lines_unparsed(), 0u);
  EXPECT_EQ(r.test_name(), "");  // the mpirun command was trimmed from the capture
}

struct SuperbenchCase {
  std::string file;
  double avg;
  double peak_oop;
  double peak_ip;
  std::string redop;
  int root;
  uint64_t unparsed;  // the interleaved "NCCL INFO Launch mode Parallel" line
};

class NcclTestsSuperbench : public ::testing::TestWithParam<SuperbenchCase> {};

TEST_P(NcclTestsSuperbench, ValidationOffLegacyTablesGiveNaChecksAndAverage) {
  const auto& c = GetParam();
  const auto r = parseFixture(c.file);
  EXPECT_EQ(r.format(), "legacy");
  EXPECT_TRUE(r.validation_off());
  EXPECT_EQ(r.nranks(), 8);
  EXPECT_EQ(toVector(r.hosts()), std::vector<std::string>{"localhost"});
  ASSERT_EQ(r.rows_size(), 34);
  for (const auto& row : r.rows()) {
    EXPECT_EQ(row.oop_wrong(), -1);
    EXPECT_EQ(row.ip_wrong(), -1);
    EXPECT_FALSE(row.has_error_column());
    EXPECT_EQ(row.redop(), c.redop);
    EXPECT_EQ(row.root(), c.root);
  }
  const auto& last = r.rows(33);
  EXPECT_EQ(last.size_bytes(), 8589934592u);
  EXPECT_DOUBLE_EQ(last.oop_busbw_gbs(), c.peak_oop);
  EXPECT_DOUBLE_EQ(last.ip_busbw_gbs(), c.peak_ip);
  EXPECT_TRUE(r.has_avg_busbw());
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), c.avg);
  EXPECT_TRUE(r.out_of_bounds_ok());
  EXPECT_EQ(r.lines_unparsed(), c.unparsed);
}

INSTANTIATE_TEST_SUITE_P(
    Files, NcclTestsSuperbench,
    ::testing::Values(
        SuperbenchCase{"nccl-tests_all_reduce_perf_1node-8xa100-validation-off-legacy-format_"
                       "superbenchmark-tests-data.txt",
                       68.4048, 235.26, 235.03, "sum", -1, 1},
        SuperbenchCase{"nccl-tests_alltoall_perf_1node-8xa100-validation-off-legacy-format_"
                       "superbenchmark-tests-data.txt",
                       58.6481, 224.31, 226.16, "", -1, 0},
        SuperbenchCase{"nccl-tests_broadcast_perf_1node-8xa100-validation-off-legacy-format_"
                       "superbenchmark-tests-data.txt",
                       64.8653, 232.81, 234.70, "", 0, 1},
        SuperbenchCase{"nccl-tests_reduce_scatter_perf_1node-8xa100-validation-off-legacy-format_"
                       "superbenchmark-tests-data.txt",
                       60.168, 231.52, 231.25, "sum", -1, 1}));

TEST(NcclTestsRealCaptures, LegacyFloatErrorColumnWithoutHashHeader) {
  const auto r =
      parseFixture("nccl-tests_all_reduce_perf_legacy-float-error-column_nccl-issue-392.txt");
  EXPECT_EQ(r.format(), "legacy");
  ASSERT_EQ(r.rows_size(), 9);  // 8 B .. 2048 B
  EXPECT_EQ(r.rows(0).size_bytes(), 8u);
  EXPECT_TRUE(r.rows(0).has_error_column());
  EXPECT_DOUBLE_EQ(r.rows(0).oop_error(), 2e-07);
  EXPECT_DOUBLE_EQ(r.rows(1).ip_error(), 1e-07);
  EXPECT_DOUBLE_EQ(r.rows(0).oop_time_us(), 43.22);
  EXPECT_EQ(r.rows(0).oop_wrong(), -1);
  EXPECT_EQ(r.rows(8).size_bytes(), 2048u);
  EXPECT_DOUBLE_EQ(r.rows(8).oop_busbw_gbs(), 0.09);
  EXPECT_FALSE(r.has_avg_busbw());  // excerpt has no footer
  EXPECT_FALSE(r.has_out_of_bounds());
  EXPECT_FALSE(r.validation_off());
  EXPECT_EQ(r.nranks(), -1);
  EXPECT_EQ(r.lines_unparsed(), 0u);
}

TEST(NcclTestsRealCaptures, RcclTailWithoutHeaderIsModernAndNamedByTheConclusion) {
  const auto r =
      parseFixture("nccl-tests_all_reduce_perf_rccl-tail-asterisk-footer_rccl-pr-2078.txt");
  EXPECT_EQ(r.test_name(), "all_reduce_perf");
  EXPECT_EQ(r.format(), "modern");
  ASSERT_EQ(r.rows_size(), 4);
  for (const auto& row : r.rows()) {
    EXPECT_EQ(row.oop_wrong(), 0);
    EXPECT_EQ(row.ip_wrong(), 0);
    EXPECT_FALSE(row.over_threshold());
  }
  EXPECT_EQ(r.rows(3).size_bytes(), 17179869184u);
  EXPECT_DOUBLE_EQ(r.rows(3).oop_busbw_gbs(), 360.98);
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), 142.652);
  EXPECT_TRUE(r.out_of_bounds_ok());
  EXPECT_FALSE(r.validation_off());
  EXPECT_EQ(r.lines_unparsed(), 0u);
}

TEST(NcclTestsRealCaptures, CutOffHeaderTailDoesNotStopTheRingTable) {
  const auto r =
      parseFixture("nccl-tests_all_reduce_perf_ring-large-sizes-busbw95_nccl-tests-issue-252.txt");
  EXPECT_EQ(r.format(), "modern");
  ASSERT_EQ(r.rows_size(), 5);  // 512 MiB .. 8 GiB
  EXPECT_EQ(r.rows(0).size_bytes(), 536870912u);
  for (const auto& row : r.rows()) {
    EXPECT_GE(row.oop_busbw_gbs(), 93.0);
    EXPECT_LE(row.oop_busbw_gbs(), 98.0);
    EXPECT_EQ(row.oop_wrong(), 0);
  }
  EXPECT_DOUBLE_EQ(r.rows(0).ip_time_us(), 9676.9);
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), 95.3009);
  EXPECT_EQ(r.lines_unparsed(), 0u);  // "     in-place" is the tail of the header
}

TEST(NcclTestsRealCaptures, TwoHostsWithAVersionLineAndAWiderWrongColumn) {
  const auto r = parseFixture(
      "nccl-tests_all_reduce_perf_2node-gb10-spark-rank-header-version-line_dgx-spark-playbooks-"
      "pr-103.txt");
  EXPECT_EQ(r.format(), "modern");
  EXPECT_EQ(r.test_name(), "all_reduce_perf");  // "# Collective test starting: ..."
  EXPECT_EQ(r.nranks(), 2);
  EXPECT_EQ(toVector(r.hosts()), (std::vector<std::string>{"spark-d708", "spark-dbf4"}));
  ASSERT_EQ(r.rows_size(), 4);  // 8 KiB .. 64 KiB
  EXPECT_EQ(r.rows(3).size_bytes(), 65536u);
  EXPECT_DOUBLE_EQ(r.rows(3).ip_busbw_gbs(), 1.01);
  EXPECT_EQ(r.rows(3).ip_wrong(), 0);
  EXPECT_FALSE(r.validation_off());
  EXPECT_EQ(r.lines_unparsed(), 0u);
}

TEST(NcclTestsRealCaptures, MpirunTaggedHeaderWithTrailingBlanksAndRows) {
  const auto r = parseFixture(
      "nccl-tests_all_reduce_perf_mpirun-tag-output-p5-header-rows_aws-k8s-tester-pr-503.txt");
  EXPECT_EQ(r.format(), "modern");
  ASSERT_EQ(r.rows_size(), 3);
  EXPECT_EQ(r.rows(2).size_bytes(), 32u);
  EXPECT_DOUBLE_EQ(r.rows(2).oop_time_us(), 22.25);
  EXPECT_DOUBLE_EQ(r.rows(2).ip_time_us(), 13.34);
  EXPECT_EQ(r.lines_unparsed(), 0u);
}

TEST(NcclTestsRealCaptures, TreeRunOfTwoNodesPeaksAt41GBs) {
  const auto r = parseFixture(
      "nccl-tests_all_reduce_perf_2node-1gpu-tree-4nic-busbw41-expected-200_nccl-tests-issue-"
      "232.txt");
  ASSERT_EQ(r.rows_size(), 5);  // 2 MiB .. 32 MiB
  const auto& peak = peakRow(r);
  EXPECT_EQ(peak.size_bytes(), 33554432u);
  EXPECT_DOUBLE_EQ(peak.oop_busbw_gbs(), 41.31);
  EXPECT_EQ(r.nranks(), -1);  // the rank lines were not in the excerpt
  EXPECT_EQ(r.lines_unparsed(), 0u);
}

TEST(NcclTestsRealCaptures, LegacyBroadcastOfTwoHostsWithNcclWarningsBeforeTheTable) {
  const auto r = parseFixture(
      "nccl-tests_broadcast_perf_2node-v100-legacy-na-libibverbs-warn-interleaved_nccl-tests-"
      "issue-82.txt");
  EXPECT_EQ(r.format(), "legacy");
  EXPECT_TRUE(r.validation_off());
  EXPECT_EQ(r.nranks(), 2);
  EXPECT_EQ(toVector(r.hosts()), (std::vector<std::string>{"v100-gpu-1", "v100-gpu-5"}));
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).root(), 0);
  EXPECT_EQ(r.rows(0).oop_wrong(), -1);
  EXPECT_DOUBLE_EQ(r.rows(0).ip_time_us(), 38.17);
  EXPECT_EQ(r.lines_unparsed(), 3u);  // two NCCL WARN lines and "NCCL version 2.9.6+cuda11.2"
}

TEST(NcclTestsRealCaptures, Nvl72TailNamesRank71sHostAndSeventyTwoRanks) {
  const auto r = parseFixture(
      "nccl-tests_all_reduce_perf_gb200-nvl72-72rank-tail-busbw834_coreweave-nccl-tests-pr-43.txt");
  EXPECT_EQ(r.nranks(), 72);
  EXPECT_EQ(toVector(r.hosts()), std::vector<std::string>{"slurm-gb200-207-171"});
  ASSERT_EQ(r.rows_size(), 5);
  EXPECT_DOUBLE_EQ(peakRow(r).oop_busbw_gbs(), 839.16);
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), 745.53);
  EXPECT_TRUE(r.out_of_bounds_ok());
}

TEST(NcclTestsRealCaptures, RowsOfTwoInterleavedRunsAreAllKept) {
  const auto r = parseFixture(
      "nccl-tests_all_reduce_perf_two-processes-rows-interleaved-ib_nccl-tests-issue-182.txt");
  ASSERT_EQ(r.rows_size(), 10);
  EXPECT_EQ(r.rows(6).size_bytes(), 8u);  // the second run's first row, after 256 B
  EXPECT_EQ(r.rows(7).size_bytes(), 512u);
  for (const auto& row : r.rows()) EXPECT_EQ(row.oop_wrong(), 0);
  EXPECT_EQ(r.lines_unparsed(), 0u);
}

TEST(NcclTestsRealCaptures, InPlaceWrongPrintedAsNaIsUnchecked) {
  const auto r = parseFixture(
      "nccl-tests_alltoall_perf_1rank-rtx5090-inplace-wrong-na-avg-0_nccl-tests-issue-287.txt");
  EXPECT_EQ(r.nranks(), 1);
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).redop(), "none");
  EXPECT_EQ(r.rows(0).oop_wrong(), 0);
  EXPECT_EQ(r.rows(0).ip_wrong(), -1);
  EXPECT_DOUBLE_EQ(r.rows(0).ip_algbw_gbs(), 43046.10);
  EXPECT_TRUE(r.has_avg_busbw());
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), 0);
  EXPECT_FALSE(r.validation_off());
}

// ---- synthetic shapes ---------------------------------------------------------------------

// Rows and footers below are synthetic, printed with nccl-tests' own formats:
//   Reporter::parameters "%12li  %12li  %8s  %6s  %6i", result "  %7s  %6.2f  %6.2f  %5li"
//   (or "%5s" "N/A"), legacy result "  %7s  %6.2f  %6.2f  %5.0le%s" ('*' over threshold),
//   footers "# Out of bounds values : %d %s", "# Avg bus bandwidth    : %g".
const std::string kModernHeader =
    "#                                                              out-of-place                "
    "       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)       \n";

TEST(NcclTestsParser, WrongResultsAreCountedAndTheFooterFails) {
  const std::string text =
      "# Collective test starting: all_reduce_perf\n" + kModernHeader +
      "     1048576        262144     float     sum      -1    74.78   14.02   26.29      0    "
      "76.17   13.77   25.81      0\n"
      "     2097152        524288     float     sum      -1    93.48   22.43   42.06    123    "
      "96.10   21.82   40.92    N/A\n"
      "# Out of bounds values : 123 FAILED\n"
      "# Avg bus bandwidth    : 33.77 \n";
  const auto r = parseNcclTests(text);
  EXPECT_EQ(r.test_name(), "all_reduce_perf");
  ASSERT_EQ(r.rows_size(), 2);
  EXPECT_EQ(r.rows(0).oop_wrong(), 0);
  EXPECT_EQ(r.rows(1).oop_wrong(), 123);
  EXPECT_EQ(r.rows(1).ip_wrong(), -1);
  EXPECT_TRUE(r.has_out_of_bounds());
  EXPECT_EQ(r.out_of_bounds(), 123u);
  EXPECT_FALSE(r.out_of_bounds_ok());
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), 33.77);
  EXPECT_FALSE(r.validation_off());
}

TEST(NcclTestsParser, AsteriskMarksAnErrorOverTheThreshold) {
  const std::string text =
      "#       size         count    type   redop     time   algbw   busbw  error     time   "
      "algbw   busbw  error\n"
      "        1024           256   float     sum    40.59    0.03    0.05  2e-07    40.28    "
      "0.03    0.05  2e-07\n"
      "        2048           512   float     sum    43.55    0.05    0.09  5e-01*    43.05    "
      "0.05    0.09  2e-07\n";
  const auto r = parseNcclTests(text);
  EXPECT_EQ(r.format(), "legacy");
  ASSERT_EQ(r.rows_size(), 2);
  EXPECT_FALSE(r.rows(0).over_threshold());
  EXPECT_TRUE(r.rows(1).over_threshold());
  EXPECT_DOUBLE_EQ(r.rows(1).oop_error(), 0.5);
  EXPECT_EQ(r.rows(1).oop_wrong(), -1);
}

TEST(NcclTestsParser, RowsFromSeveralProcessesAndInterleavedLinesAreRead) {
  // Synthetic: pdsh- and mpirun-prefixed copies of real a3mega rows between NCCL INFO lines.
  const std::string text =
      "[1,0]<stdout>:#  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] "
      "NVIDIA H100 80GB HBM3\n"
      "[1,8]<stdout>:#  Rank  8 Group  0 Pid   6733 on ztan-mig-gq73 device  0 [0000:04:00] "
      "NVIDIA H100 80GB HBM3\n" +
      kModernHeader +
      "ztan-mig-235z:6899:6899 [0] NCCL INFO Launch mode Parallel\n"
      "[1,0]<stdout>:           8             2     float     sum      -1    135.8    0.00    "
      "0.00      0    123.5    0.00    0.00      0\n"
      "ztan-mig-235z:           16             4     float     sum      -1    123.2    0.00    "
      "0.00      0    122.3    0.00    0.00      0\n"
      "0:          32             8     float     sum      -1    123.3    0.00    0.00      0    "
      "122.7    0.00    0.00      0\n";
  const auto r = parseNcclTests(text);
  ASSERT_EQ(r.rows_size(), 3);
  EXPECT_EQ(r.rows(0).size_bytes(), 8u);
  EXPECT_EQ(r.rows(1).size_bytes(), 16u);
  EXPECT_EQ(r.rows(2).size_bytes(), 32u);
  EXPECT_EQ(r.nranks(), 9);
  EXPECT_EQ(toVector(r.hosts()), (std::vector<std::string>{"ztan-mig-235z", "ztan-mig-gq73"}));
  EXPECT_EQ(r.lines_unparsed(), 1u);  // the NCCL INFO line
}

TEST(NcclTestsParser, CommandLineNamesTheTest) {
  // The a3mega capture with the mpirun command its provenance file quotes.
  const std::string text =
      "mpirun -v --mca btl self,tcp -np 16 -npernode 8 /opt/src/nccl-tests/build/all_reduce_perf "
      "-b 8 -e 8G -f 2 -g 1\n" +
      testsFixture(
          "nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt");
  const auto r = parseNcclTests(text);
  EXPECT_EQ(r.test_name(), "all_reduce_perf");
  EXPECT_EQ(r.rows_size(), 31);
  EXPECT_EQ(r.lines_unparsed(), 0u);
}

TEST(NcclTestsParser, ModernRowsWithoutHeaderWithNaChecksMeanValidationOff) {
  const auto r = parseNcclTests(
      "  8589934592     268435456     float    none      -1    20839  412.20  360.67    N/A    "
      "20893  411.14  359.75    N/A\n");
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.format(), "modern");
  EXPECT_TRUE(r.validation_off());
  EXPECT_EQ(r.rows(0).redop(), "none");
  EXPECT_EQ(r.rows(0).oop_wrong(), -1);
}

TEST(NcclTestsParser, EmptyInputGivesNoRows) {
  const auto r = parseNcclTests("");
  EXPECT_EQ(r.rows_size(), 0);
  EXPECT_EQ(r.nranks(), -1);
  EXPECT_EQ(r.format(), "");
  EXPECT_FALSE(r.validation_off());
  EXPECT_FALSE(r.has_avg_busbw());
  EXPECT_EQ(r.lines_unparsed(), 0u);
  EXPECT_EQ(parseNcclTests("\n\n   \n").rows_size(), 0);
}

TEST(NcclTestsParser, TruncatedLastRowIsNotTakenForData) {
  std::string text = testsFixture(
      "nccl-tests_all_reduce_perf_16rank-2node-h100-gcp-a3mega_create-a3mega-ztan-fork.txt");
  // Cut the capture in the middle of the 8 GiB row.
  text = text.substr(0, text.find("  8589934592") + 60);
  const auto r = parseNcclTests(text);
  EXPECT_EQ(r.rows_size(), 30);
  EXPECT_EQ(r.rows(29).size_bytes(), 4294967296u);
  EXPECT_EQ(r.lines_unparsed(), 1u);
  EXPECT_FALSE(r.has_avg_busbw());
}

TEST(NcclTestsParser, GarbageBytesGiveNoRows) {
  std::mt19937 rng(99);
  std::string text(1 << 16, '\0');
  for (char& c : text) c = static_cast<char>(rng() & 0xff);
  const auto r = parseNcclTests(text);
  EXPECT_EQ(r.rows_size(), 0);
  EXPECT_EQ(r.nranks(), -1);
  EXPECT_GT(r.lines_unparsed(), 0u);
  EXPECT_EQ(r.format(), "");
}

TEST(NcclTestsParser, HugeOutputKeepsBoundedRows) {
  // 50 MB of the real RCCL rows repeated.
  const std::string one =
      testsFixture("nccl-tests_all_reduce_perf_rccl-tail-asterisk-footer_rccl-pr-2078.txt");
  std::string rows;
  forEachLine(one, [&rows](std::string_view line, uint32_t) {
    if (!line.empty() && line[0] != '#') {
      rows += line;
      rows += '\n';
    }
  });
  ASSERT_FALSE(rows.empty());
  const std::size_t reps = (50u << 20) / rows.size() + 1;
  std::string huge;
  huge.reserve(reps * rows.size());
  for (std::size_t i = 0; i < reps; ++i) huge += rows;
  const auto r = parseNcclTests(huge);
  ASSERT_EQ(r.rows_size(), 10000);
  EXPECT_EQ(r.lines_unparsed(), 4 * reps - 10000);
  EXPECT_DOUBLE_EQ(r.rows(9999).oop_busbw_gbs(), 360.98);
  EXPECT_EQ(r.format(), "modern");
}

TEST(NcclTestsParser, AbsurdWrongCountsAreClampedNotOverflowed) {
  // Found by fuzzing: a "#wrong" cell far beyond int64 used to overflow the conversion.
  const auto r = parseNcclTests(
      "  2147483648     536870912     float     sum      -1    11186  191.99  359.98  "
      "5555555555555555555555555555555555555555555555555    11199  191.75  359.53  1e+300\n");
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).oop_wrong(), INT64_MAX);
  EXPECT_EQ(r.rows(0).ip_wrong(), INT64_MAX);
}

TEST(NcclTestsParser, HeaderWithoutRedopOrRootMapsColumnsByName) {
  // Legacy broadcast-style header (root, no redop) without the leading '#'.
  const auto r = parseNcclTests(
      "       size         count    type    root     time   algbw   busbw  error     time   algbw "
      "  busbw  error\n"
      "     8388608       2097152   float       3    97.20   86.30   86.30    N/A    96.09   "
      "87.30   87.30    N/A\n");
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_EQ(r.rows(0).root(), 3);
  EXPECT_EQ(r.rows(0).redop(), "");
  EXPECT_DOUBLE_EQ(r.rows(0).oop_time_us(), 97.20);
  EXPECT_TRUE(r.validation_off());
}

// Synthetic, in the layout of nccl-tests releases that printed the footer without '#'
// (issue 10: older releases are recognised).
TEST(NcclTestsFooter, FooterWithoutHashIsRead) {
  const auto r = parseNcclTests(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "   134217728      33554432     float     sum      -1   1590.1   84.41  158.26      0   "
      "1589.3   84.45  158.35      0\n"
      " Out of bounds values : 0 OK\n"
      " Avg bus bandwidth    : 158.305 \n");
  ASSERT_EQ(r.rows_size(), 1);
  EXPECT_TRUE(r.has_out_of_bounds());
  EXPECT_EQ(r.out_of_bounds(), 0u);
  EXPECT_TRUE(r.out_of_bounds_ok());
  EXPECT_TRUE(r.has_avg_busbw());
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbs(), 158.305);
}

}  // namespace
}  // namespace ibc::core
