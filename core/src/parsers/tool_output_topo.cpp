// `nvidia-smi topo -m` (and -mp): the matrix of how GPUs and NICs connect, as the driver
// prints it (tab-separated; pastes often turn the tabs into spaces):
//
//           GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
//   GPU0     X      NV4     PIX     SYS     0-15,64-79      0               N/A
//   NIC0    PIX     SYS      X      SYS
//
//   Legend:
//     X    = Self
//     SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes ...
//   NIC Legend:
//     NIC0: mlx5_0
//
// Older drivers name the NIC columns by device ("mlx5_0") and print no NIC Legend. Each cell is
// one word ("X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"), so words, not tabs, are read.

#include <algorithm>
#include <array>
#include <map>

#include "ibc/core/text.h"
#include "tool_output_internal.h"

namespace ibc::core::tool_output {

namespace {

// PCIe relations, nearest first; other cells (X, NV#) are none.
constexpr std::array<std::string_view, 5> kOrder{{"PIX", "PXB", "PHB", "NODE", "SYS"}};

int relationRank(std::string_view cell) {
  const auto it = std::find(kOrder.begin(), kOrder.end(), cell);
  return it == kOrder.end() ? -1 : static_cast<int>(it - kOrder.begin());
}

// The device columns of a header line ("GPU0 GPU1 NIC0 ... CPU Affinity ..."): the words
// before "CPU"; empty when the line is no topo header.
std::vector<std::string> headerColumns(std::string_view line) {
  const auto words = splitWhitespace(trim(line));
  if (words.empty() || words.front() != "GPU0") return {};
  std::vector<std::string> cols;
  for (const auto w : words) {
    if (w == "CPU" || w == "NUMA" || w == "Affinity") break;
    cols.emplace_back(w);
  }
  return cols;
}

bool isLegendLine(std::string_view line) {
  const std::string_view t = trim(line);
  if (t == "Legend:" || t == "NIC Legend:") return true;
  const auto eq = t.find('=');
  if (eq != std::string_view::npos && eq < 8) {
    const std::string_view key = trim(t.substr(0, eq));
    return key == "X" || key == "NV#" || relationRank(key) >= 0;
  }
  // "NIC0: mlx5_0"
  const auto colon = t.find(": ");
  return startsWith(t, "NIC") && colon != std::string_view::npos && splitWhitespace(t).size() == 2;
}

struct Matrix {
  std::vector<std::string> cols;
  std::vector<std::vector<std::string>> rows;  // name, cells..., affinities...
  std::map<std::string, std::string> nic_names;
};

// Rows, then the legends after them (blank lines between allowed).
void readMatrix(LineCursor& cursor, Matrix& m) {
  cursor.next();  // the header
  while (!cursor.atEnd()) {
    const auto words = splitWhitespace(trim(cursor.line()));
    if (words.empty() || std::find(m.cols.begin(), m.cols.end(), words.front()) == m.cols.end())
      break;
    m.rows.emplace_back(words.begin(), words.end());
    cursor.next();
  }
  while (!cursor.atEnd()) {
    const std::string_view line = cursor.line();
    if (isBlank(line)) {
      LineCursor ahead = cursor;
      ahead.next();
      if (ahead.atEnd() || !(isBlank(ahead.line()) || isLegendLine(ahead.line()))) break;
    } else if (!isLegendLine(line)) {
      break;
    } else if (const auto t = trim(line);
               startsWith(t, "NIC") && endsWith(splitWhitespace(t)[0], ":")) {
      const auto words = splitWhitespace(t);
      if (words.size() == 2)
        m.nic_names[std::string(words[0].substr(0, words[0].size() - 1))] = std::string(words[1]);
    }
    cursor.next();
  }
}

v1::GpuTopology topologyOf(const Matrix& m) {
  v1::GpuTopology topo;
  std::vector<std::size_t> nic_cols;
  for (std::size_t c = 0; c < m.cols.size(); ++c) {
    if (startsWith(m.cols[c], "GPU")) continue;
    nic_cols.push_back(c);
    const auto named = m.nic_names.find(m.cols[c]);
    topo.add_nics(printable(named != m.nic_names.end() ? named->second : m.cols[c], 64));
  }
  for (const auto& row : m.rows) {
    if (!startsWith(row.front(), "GPU")) continue;
    v1::GpuNics* g = topo.add_gpus();
    g->set_gpu(printable(row.front(), 32));
    int best = -1;
    for (std::size_t k = 0; k < nic_cols.size(); ++k) {
      const std::size_t cell = nic_cols[k] + 1;
      const int rank = cell < row.size() ? relationRank(row[cell]) : -1;
      if (rank < 0 || (best >= 0 && rank > best)) continue;
      if (rank != best) g->clear_nearest();
      best = rank;
      g->add_nearest(topo.nics(static_cast<int>(k)));
    }
    if (best >= 0) {
      g->set_relation(std::string(kOrder[static_cast<std::size_t>(best)]));
    }
    const std::size_t after = m.cols.size() + 1;
    if (after < row.size()) g->set_cpu_affinity(printable(row[after], 128));
    if (after + 1 < row.size()) g->set_numa_affinity(printable(row[after + 1], 32));
  }
  return topo;
}

}  // namespace

bool parseNvidiaSmiTopoBlock(LineCursor& cursor, EvidenceBuilder& out) {
  Matrix m;
  m.cols = headerColumns(cursor.line());
  if (m.cols.size() < 2) return false;
  LineCursor ahead = cursor;
  ahead.next();
  if (ahead.atEnd() || splitWhitespace(trim(ahead.line())).empty() ||
      splitWhitespace(trim(ahead.line())).front() != "GPU0")
    return false;
  readMatrix(cursor, m);
  out.addGpuTopology(topologyOf(m));
  return true;
}

}  // namespace ibc::core::tool_output
