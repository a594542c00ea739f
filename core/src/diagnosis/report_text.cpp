// Text layout of a report: tables, findings with evidence and next step, wrapped to the
// terminal width. What the report contains is decided in report.cpp; this file only lays it out.

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ibc/core/findings.h"
#include "ibc/core/report.h"
#include "ibc/core/rules.h"
#include "ibc/core/slurm.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

std::string severityWord(std::string_view severity) {
  std::string word(severity);
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

namespace {

// Severity words in colour. The renderer marks them with a private-use character pair and
// turns the marks into ANSI colours only after the text was sanitized, so no byte of a log
// line or a pasted value can ever reach the terminal as an escape sequence; a forged mark
// in hostile text can at most colour a word.
constexpr std::string_view kMarkOpen = "\xEE\x80\x80";   // U+E000
constexpr std::string_view kMarkClose = "\xEE\x80\x81";  // U+E001

std::string paint(const std::string& word, bool color) {
  if (!color) return word;
  const char code = word == "CRITICAL"      ? 'c'
                    : word == "WARNING"     ? 'w'
                    : word == "INFO"        ? 'i'
                    : word == "OK"          ? 'o'
                    : word == "UNREACHABLE" ? 'u'
                                            : 0;
  if (code == 0) return word;
  return std::string(kMarkOpen) + code + word + std::string(kMarkClose);
}

// Columns a table cell takes on screen: colour marks take none.
std::size_t visibleColumns(const std::string& cell) {
  std::size_t cols = 0;
  for (unsigned char c : cell) cols += (c & 0xC0) != 0x80 ? 1 : 0;
  std::size_t marks = 0;
  for (auto p = cell.find(kMarkOpen); p != std::string::npos; p = cell.find(kMarkOpen, p + 1))
    ++marks;
  return cols - 3 * marks;  // open mark, code letter, close mark
}

std::string wrap(std::string_view text, std::size_t width, const std::string& first,
                 const std::string& indent);

// Left-aligned columns sized to their widest cell. When the rows are wider than max_width
// (0: no limit), the widest columns are narrowed, down to their longest word, and their
// cells wrapped at word boundaries onto continuation lines.
std::string table(const std::vector<std::vector<std::string>>& rows, std::size_t max_width = 0) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], visibleColumns(row[i]));
  }
  const auto total = [&] {
    std::size_t t = 0;
    for (std::size_t w : width) t += w + 2;
    return t - 2;
  };
  // A column is never narrower than its longest word (up to kCut columns: a longer word, such
  // as a node named after its tree, is cut onto the next lines).
  constexpr std::size_t kCut = 12;
  std::vector<std::size_t> narrowest(width.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      for (const auto word : splitWhitespace(row[i]))
        narrowest[i] = std::max(narrowest[i], std::min(kCut, visibleColumns(std::string(word))));
    }
  }
  while (max_width > 0 && !width.empty() && total() > max_width) {
    std::size_t widest = width.size();
    for (std::size_t i = 0; i < width.size(); ++i) {
      if (width[i] > narrowest[i] && (widest == width.size() || width[i] > width[widest]))
        widest = i;
    }
    if (widest == width.size()) break;  // as narrow as it gets
    --width[widest];
  }
  std::string out;
  for (const auto& row : rows) {
    std::vector<std::vector<std::string>> cells(row.size());
    std::size_t height = 1;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (visibleColumns(row[i]) <= width[i]) {
        cells[i].push_back(row[i]);
        continue;
      }
      std::istringstream parts(wrap(row[i], width[i], "", ""));
      for (std::string l; std::getline(parts, l);) cells[i].push_back(l);
      height = std::max(height, cells[i].size());
    }
    for (std::size_t k = 0; k < height; ++k) {
      std::string line;
      for (std::size_t i = 0; i < row.size(); ++i) {
        const std::string cell = k < cells[i].size() ? cells[i][k] : std::string();
        line += cell;
        const std::size_t cols = visibleColumns(cell);
        if (i + 1 < row.size()) line.append((width[i] > cols ? width[i] - cols : 0) + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace

namespace {

std::string portTable(const v1::Report& report, bool color, std::size_t max_width) {
  std::vector<std::vector<std::string>> rows{
      {"NODE", "DEVICE", "PORT", "STATE", "PHYS", "RATE", "LINK", "FW", "NETDEV", "VERDICT"}};
  for (const auto& n : report.nodes()) {
    if (n.ports_size() == 0) {
      rows.push_back({n.label(), "-", "-", "-", "-", "-", "-", "-", "-",
                      paint(severityWord(n.worst_severity()), color)});
      continue;
    }
    for (const auto& p : n.ports()) {
      std::string netdevs;
      for (const auto& nd : p.netdevs()) netdevs += (netdevs.empty() ? "" : ",") + nd;
      rows.push_back(
          {n.label(), p.device() + (p.virtual_function() ? " (VF)" : ""),
           p.port() == 0 ? "-" : std::to_string(p.port()), p.state(),
           p.phys_state().empty() ? "-" : p.phys_state(), p.rate().empty() ? "-" : p.rate(),
           p.link_layer().empty() ? "-" : p.link_layer(), p.fw_ver().empty() ? "-" : p.fw_ver(),
           netdevs.empty() ? "-" : netdevs, paint(severityWord(p.worst_severity()), color)});
    }
  }
  if (max_width > 0) {
    // Ten columns do not fit 80: the link layer in its short name, and a column that says
    // nothing on any row ("-" everywhere, e.g. no netdevs) left out.
    for (std::size_t r = 1; r < rows.size(); ++r) {
      if (rows[r][6] == "InfiniBand") rows[r][6] = "IB";
      if (rows[r][6] == "Ethernet") rows[r][6] = "Eth";
    }
    for (std::size_t c = rows[0].size() - 1; c-- > 1;) {
      bool empty = true;
      for (std::size_t r = 1; r < rows.size(); ++r) empty = empty && rows[r][c] == "-";
      if (!empty || rows.size() == 1) continue;
      for (auto& row : rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    }
  }
  std::string out = table(rows, max_width);
  for (const auto& n : report.nodes()) {
    for (const auto& p : n.ports()) {
      if (p.remark().empty()) continue;
      out += wrap(n.label() + " " + p.device() +
                      (p.port() == 0 ? std::string() : " port " + std::to_string(p.port())) + ": " +
                      p.remark(),
                  max_width, "remark: ", "  ");
    }
  }
  return out;
}

// One row per node: what a job owner scans first.
std::string nodeTable(const v1::Report& report, bool color, std::size_t max_width) {
  std::vector<std::vector<std::string>> rows{
      {"NODE", "PORTS", "RATES", "FW", "VERDICT", "WORST FINDING"}};
  for (const auto& n : report.nodes()) {
    if (!n.unreachable_reason().empty()) {
      rows.push_back(
          {n.label(), "-", "-", "-", paint("UNREACHABLE", color), n.unreachable_reason()});
      continue;
    }
    std::map<std::string, int> rates;
    std::map<std::string, int> fws;
    for (const auto& p : n.ports()) {
      if (p.state() == "ACTIVE" && p.rate_gbps() > 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", p.rate_gbps());
        rates[buf]++;
      }
      if (!p.fw_ver().empty()) fws[p.fw_ver()]++;
    }
    std::string rate_text, fw_text;
    for (const auto& [r, k] : rates)
      rate_text += (rate_text.empty() ? "" : ",") + std::to_string(k) + "x" + r;
    for (const auto& [f, k] : fws) fw_text += (fw_text.empty() ? "" : ",") + f;
    rows.push_back({n.label(),
                    std::to_string(n.ports_active()) + "/" + std::to_string(n.ports_total()),
                    rate_text.empty() ? "-" : rate_text, fw_text.empty() ? "-" : fw_text,
                    paint(severityWord(n.worst_severity()), color),
                    n.worst_code().empty() ? "-" : n.worst_code()});
  }
  return table(rows, max_width);
}

// The row label of the node a finding belongs to (its node name unless names collide),
// found by (node, source); built once per report.
class RowLabels {
 public:
  explicit RowLabels(const v1::Report& report) {
    for (const auto& n : report.nodes()) {
      const std::string label = n.label().empty() ? n.node() : n.label();
      by_source_.emplace(n.node() + '\0' + n.source(), label);
      if (!n.snapshot_file().empty())
        by_source_.emplace(n.node() + '\0' + n.snapshot_file(), label);
      by_node_.emplace(n.node(), label);
    }
  }
  const std::string& of(const v1::Finding& f) const {
    if (auto it = by_source_.find(f.node() + '\0' + f.source()); it != by_source_.end())
      return it->second;
    if (auto it = by_node_.find(f.node()); it != by_node_.end()) return it->second;
    return f.node();
  }

 private:
  std::unordered_map<std::string, std::string> by_source_;
  std::unordered_map<std::string, std::string> by_node_;
};

// Display columns of UTF-8 text (continuation bytes take none).
std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// `text` on lines of at most `width` columns: the first prefixed by `first`, the others by
// `indent`, broken at spaces; a word longer than a line is cut. Ends with a newline.
std::string wrap(std::string_view text, std::size_t width, const std::string& first,
                 const std::string& indent) {
  if (width == 0) return first + std::string(text) + "\n";
  std::string out;
  std::string line = first;
  std::size_t line_cols = visibleColumns(first);
  bool line_has_word = false;
  std::size_t i = 0;
  while (i < text.size()) {
    // Spaces between words on one line are kept as written ("CODE  place").
    const std::size_t gap_start = i;
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t gap = std::max<std::size_t>(1, i - gap_start);
    if (i >= text.size()) break;
    std::size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view word = text.substr(i, j - i);
    i = j;
    const std::size_t need = (line_has_word ? gap : 0) + columns(word);
    if (line_has_word && line_cols + need > width) {
      out += line + "\n";
      line = indent;
      line_cols = columns(indent);
      line_has_word = false;
    }
    // A word that cannot fit on a line of its own is cut where the line ends.
    while (!line_has_word && line_cols + columns(word) > width && width >= line_cols + 4) {
      std::size_t take = 0, cols = 0;
      while (take < word.size() && cols < width - line_cols) {
        ++take;
        while (take < word.size() && (static_cast<unsigned char>(word[take]) & 0xC0) == 0x80)
          ++take;
        ++cols;
      }
      out += line + std::string(word.substr(0, take)) + "\n";
      word.remove_prefix(take);
      line = indent;
      line_cols = columns(indent);
    }
    if (word.empty()) continue;
    if (line_has_word) {
      line.append(gap, ' ');
      line_cols += gap;
    }
    line += word;
    line_cols += columns(word);
    line_has_word = true;
  }
  out += line + "\n";
  return out;
}

std::string applyColors(std::string s) {
  std::string out;
  out.reserve(s.size() + 64);
  std::size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, kMarkOpen.size(), kMarkOpen) == 0 && i + kMarkOpen.size() < s.size()) {
      const char code = s[i + kMarkOpen.size()];
      const char* sgr = code == 'c'   ? "1;31"
                        : code == 'w' ? "33"
                        : code == 'i' ? "36"
                        : code == 'o' ? "32"
                        : code == 'u' ? "1;35"
                                      : nullptr;
      if (sgr != nullptr) {
        out += "\x1b[" + std::string(sgr) + "m";
        i += kMarkOpen.size() + 1;
        continue;
      }
    }
    if (s.compare(i, kMarkClose.size(), kMarkClose) == 0) {
      out += "\x1b[0m";
      i += kMarkClose.size();
      continue;
    }
    out += s[i++];
  }
  return out;
}

// Findings that say the same thing in different places: one entry, the places listed once.
struct FindingGroup {
  std::vector<const v1::Finding*> members;
  std::vector<std::string> labels;  // row label of each member's node
};

// "1 finding", "7 findings".
std::string counted(uint32_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "mlx5_0..mlx5_7" for a run of three or more numbered devices, else the names one by one.
std::string deviceRanges(std::vector<std::string> devices) {
  const auto split = [](const std::string& d) {
    std::size_t k = d.size();
    while (k > 0 && d[k - 1] >= '0' && d[k - 1] <= '9') --k;
    const bool numbered = k < d.size() && d.size() - k < 10;
    return std::pair<std::string, long>{d.substr(0, k), numbered ? std::stol(d.substr(k)) : -1};
  };
  std::sort(devices.begin(), devices.end(), [&](const std::string& x, const std::string& y) {
    return std::make_pair(split(x), x) < std::make_pair(split(y), y);
  });
  std::string out;
  for (std::size_t i = 0; i < devices.size();) {
    std::size_t j = i;
    const auto [prefix, n] = split(devices[i]);
    while (j + 1 < devices.size() && n >= 0 &&
           split(devices[j + 1]) == std::pair<std::string, long>{prefix, n + long(j + 1 - i)})
      ++j;
    if (!out.empty()) out += ",";
    out += j >= i + 2 ? devices[i] + ".." + devices[j] : devices[i];
    i = j >= i + 2 ? j + 1 : i + 1;
  }
  return out;
}

// Where a group of findings holds: per node its devices and ports ("mlx5_0..mlx5_7 port 1"),
// nodes with the same places compressed as a Slurm hostlist ("node[2-5,9] mlx5_0 port 1"),
// different places separated by "; ".
std::string placesOf(const FindingGroup& g) {
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::set<uint32_t>>> by_label;
  for (std::size_t i = 0; i < g.members.size(); ++i) {
    if (by_label.find(g.labels[i]) == by_label.end()) order.push_back(g.labels[i]);
    auto& devices = by_label[g.labels[i]];
    if (!g.members[i]->device().empty())
      devices[g.members[i]->device()].insert(g.members[i]->port());
  }
  std::vector<std::string> locations;
  std::map<std::string, std::vector<std::string>> labels_at;
  for (const auto& label : order) {
    std::map<std::set<uint32_t>, std::vector<std::string>> devices_with;
    for (const auto& [device, ports] : by_label[label]) devices_with[ports].push_back(device);
    std::string loc;
    for (const auto& [ports, devices] : devices_with) {
      std::string p;
      for (uint32_t n : ports) {
        if (n != 0) p += (p.empty() ? "" : ",") + std::to_string(n);
      }
      loc += (loc.empty() ? "" : ", ") + deviceRanges(devices) +
             (p.empty() ? "" : (p.find(',') == std::string::npos ? " port " : " ports ") + p);
    }
    if (labels_at.find(loc) == labels_at.end()) locations.push_back(loc);
    labels_at[loc].push_back(label);
  }
  std::string where;
  for (const auto& loc : locations) {
    const auto& labels = labels_at[loc];
    where += (where.empty() ? "" : "; ") +
             (labels.size() == 1 ? labels[0] : compressHostlist(labels)) +
             (loc.empty() ? "" : " " + loc);
  }
  return where;
}

// A summary that starts with its own place ("mlx4_0 port 1: ...") says the wrong place for
// the other members of a group: the place goes, the header lists them all.
std::string groupSummary(const FindingGroup& g) {
  const v1::Finding& f = *g.members.front();
  return g.members.size() == 1 ? f.summary() : summaryWithoutPlace(f);
}

void findingText(std::string& out, const FindingGroup& g, const TextOptions& options) {
  const v1::Finding& f = *g.members.front();
  const std::size_t w = options.width;
  std::string where = g.members.size() == 1 ? g.labels[0] : placesOf(g);
  if (f.scope() == "job") {
    where = jobWideWhere(f);  // one finding for (nearly) every node: the job's or the image's
  } else if (g.members.size() == 1) {
    if (!f.device().empty()) where += " " + f.device();
    if (f.port() != 0) where += " port " + std::to_string(f.port());
  } else {
    where += " (" + std::to_string(g.members.size()) + " places)";
  }
  out += "\n" + wrap(f.code() + "  " + where, w,
                     paint(severityWord(f.severity()), options.color) + "  ", "    ");
  out += wrap(groupSummary(g), w, "  ", "    ");
  if (f.evidence_size() > 0) {
    out += g.members.size() == 1
               ? "  evidence:\n"
               : wrap("evidence of " + g.labels[0] + (f.device().empty() ? "" : " " + f.device()) +
                          (f.port() ? " port " + std::to_string(f.port()) : "") +
                          " (-v: every place):",
                      w, "  ", "    ");
    const std::size_t limit =
        options.verbose ? static_cast<std::size_t>(f.evidence_size()) : options.max_evidence;
    const int shown =
        static_cast<int>(std::min<std::size_t>(limit, static_cast<std::size_t>(f.evidence_size())));
    for (int i = 0; i < shown; ++i) out += wrap(f.evidence(i), w, "    - ", "      ");
    if (f.evidence_size() > shown) {
      out += "    ... " + std::to_string(f.evidence_size() - shown) + " more (-v, --format json)\n";
    }
  }
  if (!f.action().empty()) out += wrap(f.action(), w, "  next step: ", "    ");
}

// What makes two nodes' nccl-tests outputs one output (a launcher's table read for every
// node): the test, its rows as printed and its average.
std::string ncclTestsKey(const v1::NcclTestsResult& r) {
  std::string key = r.test_name() + '\n';
  char buf[96];
  for (const auto& row : r.rows()) {
    std::snprintf(buf, sizeof buf, "%llu %.4f %.4f\n",
                  static_cast<unsigned long long>(row.size_bytes()), row.oop_algbw_gbs(),
                  row.oop_busbw_gbs());
    key += buf;
  }
  if (r.has_avg_busbw()) key += "avg " + std::to_string(r.avg_busbw_gbs());
  return key;
}

std::string gbs(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// One output's table: bandwidth per size (out-of-place, as nccl-tests' own average uses), the
// average bus bandwidth, and what the user expects (--expect-busbw).
void ncclTestsTable(std::string& out, const v1::NcclTestsOutput& t,
                    const std::vector<std::string>& labels, const TextOptions& options) {
  const auto& r = t.parsed();
  std::string on = labels.size() == 1
                       ? labels.front() + " (" + t.source() + ")"
                       : compressHostlist(labels) + " (" + std::to_string(labels.size()) +
                             " nodes carry this same output)";
  out +=
      "\n" + wrap("nccl-tests " + (r.test_name().empty() ? std::string("result") : r.test_name()) +
                      " on " + on + ":",
                  options.width, "", "  ");
  std::vector<std::vector<std::string>> rows{{"SIZE (B)", "ALGBW GB/s", "BUSBW GB/s"}};
  for (const auto& row : r.rows()) {
    rows.push_back(
        {std::to_string(row.size_bytes()), gbs(row.oop_algbw_gbs()), gbs(row.oop_busbw_gbs())});
  }
  if (r.rows_size() > 0) {
    std::istringstream lines(table(rows, options.width > 2 ? options.width - 2 : 0));
    for (std::string l; std::getline(lines, l);) out += "  " + l + "\n";
  }
  if (r.has_avg_busbw()) out += "  average busbw " + gbs(r.avg_busbw_gbs()) + " GB/s\n";
  if (options.expect_busbw_gbs > 0)
    out += "  expected busbw " + gbs(options.expect_busbw_gbs) + " GB/s (--expect-busbw)\n";
}

// nccl-tests results: each distinct output's table once (with the nodes that carry it), then
// every node's peak busbw against its own links and the verdict (NCCL_TEST_LOW_BUSBW).
void ncclTestsText(std::string& out, const v1::Report& report, const TextOptions& options) {
  struct Output {
    const v1::NcclTestsOutput* output;
    std::vector<std::string> labels;
  };
  std::vector<Output> outputs;
  std::map<std::string, std::size_t> by_key;
  std::set<std::pair<std::string, std::string>> low;  // node, source with the finding
  for (const auto& f : report.findings()) {
    if (f.code() == "NCCL_TEST_LOW_BUSBW") low.emplace(f.node(), f.source());
  }
  std::vector<std::vector<std::string>> busbw{
      {"NODE", "TEST", "PEAK BUSBW GB/s", "LINK BUDGET GB/s", "OF LINKS", "VERDICT"}};
  for (const auto& n : report.nodes()) {
    for (int i = 0; i < n.nccl_tests_size(); ++i) {
      const auto& t = n.nccl_tests(i);
      const auto& r = t.parsed();
      if (r.rows_size() == 0 && !r.has_avg_busbw()) continue;
      const auto [it, fresh] = by_key.emplace(ncclTestsKey(r), outputs.size());
      if (fresh) outputs.push_back({&t, {}});
      outputs[it->second].labels.push_back(n.label());
      if (i >= n.busbw_size() || n.busbw(i).peak_busbw_gbs() <= 0) continue;
      const auto& b = n.busbw(i);
      const bool budget = b.link_budget_gbs() > 0;
      busbw.push_back(
          {n.label(), r.test_name().empty() ? "nccl-tests" : r.test_name(), gbs(b.peak_busbw_gbs()),
           budget ? gbs(b.link_budget_gbs()) : "-",
           budget ? std::to_string(static_cast<int>(100 * b.fraction() + 0.5)) + "%" : "-",
           low.count({n.node(), n.source()}) ? "LOW" : "ok"});
    }
  }
  for (const auto& o : outputs) ncclTestsTable(out, *o.output, o.labels, options);
  if (busbw.size() > 1 && (report.nodes_size() > 1 || busbw[1][3] != "-")) {
    out +=
        "\n" + wrap("nccl-tests busbw per node, against the node's active RDMA links (low under " +
                        std::to_string(static_cast<int>(100 * kLowBusbwFraction)) +
                        "% of them, or under --expect-busbw):",
                    options.width, "", "  ");
    std::istringstream lines(table(busbw, options.width > 2 ? options.width - 2 : 0));
    for (std::string l; std::getline(lines, l);) out += "  " + l + "\n";
  }
}

}  // namespace

namespace {

// Everything after the table: notices, per-node verdicts, counts, findings, nccl-tests.
void reportBody(std::string& out, const v1::Report& report, const TextOptions& options) {
  const RowLabels labels(report);
  const std::size_t w = options.width;

  // Entries, as the findings below list them (the same finding on several ports or nodes is
  // one entry unless -v), by severity; places are the findings themselves.
  uint32_t crit = 0, warn = 0, info = 0;
  std::unordered_set<std::string> seen;
  for (const auto& f : report.findings()) {
    if (!options.verbose && !seen.insert(findingGroupKey(f)).second) continue;
    const Severity s = severityOf(f);
    (s == Severity::Critical ? crit : s == Severity::Warning ? warn : info)++;
  }
  const uint32_t entries = crit + warn + info;
  out += "\n";
  for (const auto& notice : report.notices()) out += wrap(notice, w, "note: ", "  ");
  uint32_t unreachable = 0;
  for (const auto& n : report.nodes()) {
    if (!n.unreachable_reason().empty()) ++unreachable;
    if (options.node_table) continue;  // the table already has one line per node
    if (report.nodes_size() > 1 || n.critical() + n.warning() > 0 || n.probe_errors() > 0) {
      std::string line =
          "node " + n.label() + ": " + paint(severityWord(n.worst_severity()), options.color) +
          " (" + std::to_string(n.critical()) + " critical, " + std::to_string(n.warning()) +
          " warning, " + std::to_string(n.info()) + " info)";
      if (n.probe_errors() > 0) {
        line += ", " + std::to_string(n.probe_errors()) + " probe(s) failed" +
                (options.verbose ? ":" : " (-v names them)");
      }
      out += wrap(line, w, "", "  ");
      if (options.verbose) {
        for (const auto& p : n.failed_probes()) {
          out += wrap(p.probe() + (p.path().empty() ? "" : " " + p.path()) + ": " +
                          (p.error().empty() ? "" : p.error() + ": ") + p.message(),
                      w, "  - ", "    ");
        }
        if (n.probe_errors() > static_cast<uint32_t>(n.failed_probes_size()))
          out += "  - ... " + std::to_string(n.probe_errors() - n.failed_probes_size()) + " more\n";
      }
    }
  }
  std::string counts;
  if (options.node_table) {
    counts =
        counted(static_cast<uint32_t>(report.nodes_size()), "node") +
        (unreachable > 0 ? ", " + std::to_string(unreachable) + " unreachable" : std::string()) +
        "; ";
  }
  counts += counted(entries, "finding") +
            (static_cast<int>(entries) == report.findings_size()
                 ? std::string()
                 : " in " + counted(static_cast<uint32_t>(report.findings_size()), "place")) +
            ": " + std::to_string(crit) + " critical, " + std::to_string(warn) + " warning, " +
            std::to_string(info) + " info";
  out += wrap(counts, w, "", "  ");

  if (!options.quiet) {
    // Findings worst first; the same finding on several ports or nodes is one entry with
    // where it holds (unless -v), in the order its first place comes.
    std::vector<FindingGroup> groups;
    std::unordered_map<std::string, std::size_t> by_key;
    for (const auto& f : report.findings()) {
      if (!options.show_info && severityOf(f) == Severity::Info) continue;
      const std::string label = labels.of(f);
      if (!options.verbose) {
        const std::string key = findingGroupKey(f);
        if (auto it = by_key.find(key); it != by_key.end()) {
          groups[it->second].members.push_back(&f);
          groups[it->second].labels.push_back(label);
          continue;
        }
        by_key.emplace(key, groups.size());
      }
      groups.push_back({{&f}, {label}});
    }
    for (const auto& g : groups) findingText(out, g, options);
    ncclTestsText(out, report, options);
    if (!options.node_table) {
      for (const auto& n : report.nodes()) {
        if (!n.snapshot_file().empty())
          out += "\n" + wrap(n.snapshot_file(), w, "snapshot of " + n.label() + ": ", "  ");
      }
    }
  }
}

// Node names, values and log lines come from other machines and from pastes: no byte of
// them may reach a terminal as an escape sequence (our own colours are added after).
std::string finishText(std::string out, const TextOptions& options) {
  out = sanitizeUtf8(out);
  return options.color ? applyColors(std::move(out)) : out;
}

}  // namespace

std::string jobWideWhere(const v1::Finding& f) {
  const std::size_t all = f.nodes_count() + static_cast<std::size_t>(f.except_size());
  if (f.except_size() == 0) return "job-wide: all " + std::to_string(all) + " nodes";
  return "job-wide: all but " + compressHostlist({f.except().begin(), f.except().end()}) + " (" +
         std::to_string(f.nodes_count()) + " of " + std::to_string(all) + " nodes)";
}

std::string renderText(const v1::Report& report, const TextOptions& options) {
  std::string out = options.node_table ? nodeTable(report, options.color, options.width)
                                       : portTable(report, options.color, options.width);
  reportBody(out, report, options);
  return finishText(std::move(out), options);
}

std::string renderTextWithTable(const v1::Report& report, std::string_view heading,
                                const TextTable& head, const TextOptions& options) {
  std::string out;
  if (!heading.empty()) out += wrap(heading, options.width, "", "  ");
  std::vector<std::vector<std::string>> rows = head.rows;
  if (const auto column = head.severity_column) {
    for (std::size_t r = 1; r < rows.size(); ++r) {
      if (*column < rows[r].size()) rows[r][*column] = paint(rows[r][*column], options.color);
    }
  }
  out += table(rows, options.width);
  reportBody(out, report, options);
  return finishText(std::move(out), options);
}

}  // namespace ibc::core
