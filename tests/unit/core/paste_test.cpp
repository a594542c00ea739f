// The paste-proof layer (paste.cpp): what each addition looks like, what is kept of it, and
// the data's own shapes that look like one and must stay.

#include "ibc/core/paste.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ibc::core {
namespace {

std::vector<std::string> texts(const std::vector<PasteLine>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text);
  return out;
}

TEST(Paste, ALogCollapsedIntoOneLineIsExpanded) {
  EXPECT_EQ(expandCollapsedLines("> \"a: 1\\nb: 2\\nc:\\t3\\n\"\n"), "> \"a: 1\nb: 2\nc:\t3\n\"\n");
  // Two literal \n in a normal log are its own text.
  const std::string own = "printf(\"x\\n\");\nputs(\"y\\n\");\nline\n";
  EXPECT_EQ(expandCollapsedLines(own), own);
}

TEST(Paste, AnsiCrAndQuotesAreTakenOff) {
  EXPECT_EQ(withoutAnsi("\x1b[1;31mState:\x1b[0m Down\x1b]0;title\x07"), "State: Down");
  EXPECT_EQ(texts(readPaste("> > \x1b[32mCA 'mlx5_0'\x1b[0m\r\n>> \tState: Down\r\n")),
            (std::vector<std::string>{"CA 'mlx5_0'", "\tState: Down"}));
}

TEST(Paste, LauncherRanksAreTakenOffAndKept) {
  const auto lines = readPaste(
      "[0] NCCL WARN a\n[rank3]: NCCL WARN b\n[1,2]<stdout>:NCCL WARN c\n[0]: NCCL WARN d\n");
  EXPECT_EQ(texts(lines),
            (std::vector<std::string>{"NCCL WARN a", "NCCL WARN b", "NCCL WARN c", "NCCL WARN d"}));
  EXPECT_EQ(lines[0].rank, "0");
  EXPECT_EQ(lines[1].rank, "3");
  EXPECT_EQ(lines[2].rank, "2");
  EXPECT_EQ(lines[1].source_line, 2u);
}

TEST(Paste, SrunLabelsAreRanksAndIncreasingNumbersAreAGutter) {
  const auto srun = readPaste("0: CA 'mlx5_0'\n1: CA 'mlx5_0'\n0: \tState: Active\n");
  EXPECT_EQ(srun[2].text, "\tState: Active");
  EXPECT_EQ(srun[1].rank, "1");
  const auto grep_n = readPaste("10:CA 'mlx5_0'\n11:\tState: Down\n12:\tRate: 100\n");
  EXPECT_EQ(grep_n[1].text, "\tState: Down");
  EXPECT_EQ(grep_n[1].rank, "");
  const auto cat_n = readPaste("     1\tCA 'mlx5_0'\n     2\t\tState: Down\n");
  EXPECT_EQ(cat_n[1].text, "\tState: Down");
}

TEST(Paste, TimestampsOfLoggersAreTakenOffAndKept) {
  const auto lines = readPaste(
      "2024-05-01T12:00:00.123Z CA 'mlx5_0'\n"
      "[2024-05-01 12:00:01,456] State: Down\n"
      "May  1 12:00:02 gpu07 collect[4242]: Rate: 100\n"
      "2024-05-01 12:00:03 - INFO - Physical state: Polling\n");
  EXPECT_EQ(texts(lines), (std::vector<std::string>{"CA 'mlx5_0'", "State: Down", "Rate: 100",
                                                    "INFO - Physical state: Polling"}));
  EXPECT_EQ(lines[0].time, "2024-05-01T12:00:00.123Z");
  EXPECT_EQ(lines[1].time, "2024-05-01 12:00:01,456");
  EXPECT_EQ(lines[2].host, "gpu07");
  EXPECT_EQ(lines[2].pid, "4242");
  // Kernel logs keep theirs for their own parser.
  PasteOptions kernel;
  kernel.timestamps = false;
  EXPECT_EQ(readPaste("May  1 12:00:02 gpu07 kernel: mlx5_core x\n", kernel)[0].text,
            "May  1 12:00:02 gpu07 kernel: mlx5_core x");
}

TEST(Paste, AHostOnEveryLineIsAPrefixButKeysOfNameValueDataAreNot) {
  const auto pdsh = readPaste("gpu1: State: Down\ngpu1: Rate: 100\ngpu2: State: Active\n");
  EXPECT_EQ(pdsh[0].text, "State: Down");
  EXPECT_EQ(pdsh[2].host, "gpu2");
  // ethtool -S without its indentation: every key differs.
  const std::string stats = "rx_packets: 1\ntx_packets: 2\nrx_errors: 3\ntx_errors: 4\n";
  EXPECT_EQ(texts(readPaste(stats)), (std::vector<std::string>{"rx_packets: 1", "tx_packets: 2",
                                                               "rx_errors: 3", "tx_errors: 4"}));
  PasteOptions no_host;
  no_host.host_prefix = false;
  EXPECT_EQ(readPaste("gpu1: a\ngpu1: b\ngpu1: c\n", no_host)[0].text, "gpu1: a");
}

TEST(Paste, TheDatasOwnNumberedLinesStay) {
  // ip link numbers its interfaces on their header lines only.
  const std::string ip =
      "2: ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 state UP\n"
      "    link/infiniband 80:00:02:08:fe:80 brd 00:ff:ff:ff:ff:12\n"
      "3: ib1: <BROADCAST,MULTICAST> mtu 4092 state DOWN\n"
      "    link/infiniband 80:00:02:09:fe:80 brd 00:ff:ff:ff:ff:12\n";
  EXPECT_EQ(pasteText(ip), ip);
  // One header line alone is not enough to call "2: " a launcher's.
  EXPECT_EQ(pasteText("2: ib0: <UP> mtu 2044\n"), "2: ib0: <UP> mtu 2044\n");
  // A time of day is not a line number.
  EXPECT_EQ(readPaste("12:30 a\n12:31 b\n12:32 c\n")[0].text, "12:30 a");
}

TEST(Paste, PrefixesStackInAnyOrder) {
  const auto lines = readPaste(
      "> 2024-05-01T12:00:00Z [rank1]: NCCL WARN x\n> 2024-05-01T12:00:01Z [rank1]: NCCL INFO y\n");
  EXPECT_EQ(lines[0].text, "NCCL WARN x");
  EXPECT_EQ(lines[0].rank, "1");
  EXPECT_EQ(lines[0].time, "2024-05-01T12:00:00Z");
  PasteOptions none;
  none.prefixes = false;
  EXPECT_EQ(readPaste("[0] a\n[1] b\n", none)[0].text, "[0] a");
}

}  // namespace
}  // namespace ibc::core

namespace ibc::core {
namespace {

// A record of these SYNTHETIC logs: a line starting with "node1:".
bool startsWithNode(std::string_view l) { return l.rfind("node1:", 0) == 0; }

TEST(PasteRejoin, ATerminalsCutsAtOneColumnAreJoinedAsTheyAre) {
  const std::string a = "node1: " + std::string(53, 'a');  // 60 columns
  const std::string b = "node1: " + std::string(53, 'b');
  // Three lines cut at 60 columns, mid-word; the rest of each below it.
  const auto joined = rejoinWrapped(
      readPaste(a + "\nxx tail\n" + b + "\nyy\n" + a + "\nzz end\nnode1: short\n"), startsWithNode);
  EXPECT_EQ(texts(joined),
            (std::vector<std::string>{a + "xx tail", b + "yy", a + "zz end", "node1: short"}));
  EXPECT_EQ(joined[1].source_line, 3u);  // the first piece's line
}

TEST(PasteRejoin, AMailClientsCutsAtABlankAreJoinedWithOne) {
  const std::string t =
      "node1: the link went down on mlx5_0 port 1 while the job ran its\n"
      "allreduce\n"
      "node1: the link came back on mlx5_0 port 1 after a few seconds and\n"
      "the job went on\n"
      "node1: the same port went down again after twenty minutes of work\n"
      "node1: done\n";
  EXPECT_EQ(
      texts(rejoinWrapped(readPaste(t), startsWithNode)),
      (std::vector<std::string>{
          "node1: the link went down on mlx5_0 port 1 while the job ran its allreduce",
          "node1: the link came back on mlx5_0 port 1 after a few seconds and the job "
          "went on",
          "node1: the same port went down again after twenty minutes of work", "node1: done"}));
}

TEST(PasteRejoin, LinesOfOneLengthOrShortLinesWithoutRecordsAreNotAWrap) {
  // A message repeated whole: every line at the longest length, no rest below any.
  const std::string repeated(90, 'r');
  const std::string same = repeated + "\n" + repeated + "\n" + repeated + "\n" + repeated + "\n";
  EXPECT_EQ(rejoinWrapped(readPaste(same), startsWithNode).size(), 4u);
  // Short lines (a report, a table) with no record cut near the longest: nothing joined.
  const std::string table =
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status\n"
      "  Communicator ranks have different AllGather operation counts\n"
      "  30 ranks have launched up to operation 640\n"
      "  Rank 12 -- GPU 4 managed by process 323032 on node 10.0.0.1\n";
  EXPECT_EQ(rejoinWrapped(readPaste(table), startsWithNode).size(), 4u);
}

}  // namespace
}  // namespace ibc::core
