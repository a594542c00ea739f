// NCCL's RAS report (NCCL 2.24+, `ncclras`): the MISMATCH block that says which ranks are at
// which collective operation, read into the ranks' progress (NcclRankProgress,
// RAS_OPERATION) that NCCL_RANK_LAGGING judges like opCounts and SeqNums. Its lines, as
// NCCL's src/ras/client_support.cc prints them:
//   #0-0 (27a079b828ff1a75) MISMATCH
//     Communicator ranks have different AllReduce operation counts
//     26 ranks have launched up to operation 6650
//     6 ranks have not launched any operations
//     Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210
//     Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 on node node1
//     Rank 9 -- [process information not found]
// "Rank N --" lines name the ranks of the group counted just above them (all of them: RAS
// lists an outlier group whole).

#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "ibc/core/text.h"
#include "nccl_log_internal.h"

namespace ibc::core::nccl_log_internal {

namespace {

// The unsigned decimal at the start of `s`, and what follows it.
std::optional<std::pair<uint64_t, std::string_view>> leadingNumber(std::string_view s) {
  std::size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && i < 19 && std::isdigit(static_cast<unsigned char>(s[i]))) {
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  return std::make_pair(v, s.substr(i));
}

// "#0-0 (27a079b828ff1a75) ..." : a communicator's block starts.
bool isCommunicatorHeader(std::string_view s) {
  if (!startsWith(s, "#")) return false;
  const auto group = leadingNumber(s.substr(1));
  if (!group || !startsWith(group->second, "-")) return false;
  const auto comm = leadingNumber(group->second.substr(1));
  return comm && startsWith(comm->second, " (");
}

// The node a "... on node HOST" line names, "" when none.
std::string nodeNamed(std::string_view s) {
  const std::size_t at = s.rfind(" on node ");
  if (at == std::string_view::npos) return {};
  return printable(trim(s.substr(at + 9)), 256);
}

bool digitAt(std::string_view s, std::size_t i) {
  return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
}

// Where a RAS line starts in `line`, whatever a launcher, logger or mail put before it (a
// rank tag, a timestamp, a quote, a gutter): found by the RAS line's own shape.
std::string_view rasPart(std::string_view line) {
  if (const std::size_t at = line.find("Communicator ranks have different ");
      at != std::string_view::npos)
    return line.substr(at);
  // "#0-0 (": a communicator's header.
  for (std::size_t at = line.find('#'); at != std::string_view::npos; at = line.find('#', at + 1)) {
    if (isCommunicatorHeader(line.substr(at))) return line.substr(at);
  }
  // "26 ranks have ...": back over the count.
  if (const std::size_t at = line.find(" ranks have "); at != std::string_view::npos) {
    std::size_t start = at;
    while (start > 0 && digitAt(line, start - 1)) --start;
    if (start < at) return line.substr(start);
  }
  // "Rank 7 -- ..." / "Rank 7 has ...".
  for (std::size_t at = line.find("Rank "); at != std::string_view::npos;
       at = line.find("Rank ", at + 1)) {
    std::size_t end = at + 5;
    while (digitAt(line, end)) ++end;
    const std::string_view rest = line.substr(end);
    if (end > at + 5 && (startsWith(rest, " -- ") || startsWith(rest, " has ")))
      return line.substr(at);
  }
  return {};
}

}  // namespace

bool NcclLogParser::rasLine(std::string_view body, uint32_t n) {
  if (trim(body).empty()) {
    ras_group_op_.reset();
    ras_group_entry_.reset();
    return false;
  }
  const std::string_view s = trim(rasPart(body));
  if (s.empty()) {
    ras_group_op_.reset();
    ras_group_entry_.reset();
    return false;
  }
  if (isCommunicatorHeader(s)) {
    ras_collective_.clear();
    ras_group_op_.reset();
    ras_group_entry_.reset();
    return true;
  }
  constexpr std::string_view kDifferent = "Communicator ranks have different ";
  constexpr std::string_view kCounts = " operation counts";
  if (startsWith(s, kDifferent) && s.size() > kDifferent.size() + kCounts.size() &&
      s.substr(s.size() - kCounts.size()) == kCounts) {
    ras_collective_ =
        printable(s.substr(kDifferent.size(), s.size() - kDifferent.size() - kCounts.size()), 32);
    ras_group_op_.reset();
    ras_group_entry_.reset();
    return true;
  }
  if (ras_collective_.empty()) return false;
  const auto progress = [&](int rank, uint32_t ranks, uint64_t op, std::string host) {
    v1::NcclRankProgress& p = ras_progress_.emplace_back();
    p.set_host(std::move(host));
    p.set_rank(rank);
    p.set_ranks(ranks);
    p.set_op_count(op);
    p.set_sequence(v1::NcclRankProgress::RAS_OPERATION);
    p.set_collective(ras_collective_);
    p.set_line_number(n);
  };
  // "26 ranks have launched up to operation 6650" / "6 ranks have not launched any operations"
  if (const auto count = leadingNumber(s)) {
    std::optional<uint64_t> op;
    if (startsWith(count->second, " ranks have launched up to operation ")) {
      if (const auto at = leadingNumber(count->second.substr(37))) op = at->first;
    } else if (startsWith(count->second, " ranks have not launched any operations")) {
      op = 0;
    }
    if (!op) return false;
    ras_group_op_ = op;
    ras_group_entry_ = ras_progress_.size();
    progress(-1, static_cast<uint32_t>(count->first), *op, "");
    return true;
  }
  if (!startsWith(s, "Rank ")) return false;
  const auto rank = leadingNumber(s.substr(5));
  if (!rank || rank->first > 1u << 24) return false;
  const std::string_view rest = rank->second;
  std::optional<uint64_t> op;
  if (startsWith(rest, " -- ")) {
    if (!ras_group_op_) return false;
    op = ras_group_op_;
    // The group's ranks are named now: its unnamed entry goes.
    if (ras_group_entry_) {
      ras_progress_.erase(ras_progress_.begin() + static_cast<std::ptrdiff_t>(*ras_group_entry_));
      ras_group_entry_.reset();
    }
  } else if (startsWith(rest, " has launched up to operation ")) {
    if (const auto at = leadingNumber(rest.substr(30))) op = at->first;
  } else if (startsWith(rest, " has not launched any operations")) {
    op = 0;
  }
  if (!op) return false;
  progress(static_cast<int>(rank->first), 0, *op, nodeNamed(rest));
  return true;
}

}  // namespace ibc::core::nccl_log_internal
