#include "ibc/core/report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "ibc/core/findings.h"
#include "ibc/core/json.h"
#include "ibc/core/rules.h"
#include "ibc/core/slurm.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

// Adapters that only speak Ethernet (RoCE), by PCI device id, else by the hca_type sysfs
// gives ("MT4118" is device 4118 = 0x1016). Returns the model and the id it was known by.
std::pair<std::string_view, std::string> ethernetOnlyModel(const v1::RdmaDevice& d) {
  std::string id = d.pci().device_id();
  if (id.empty() && d.hca_type().size() > 2 && d.hca_type().compare(0, 2, "MT") == 0) {
    const std::string digits = d.hca_type().substr(2);
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%04lx", std::strtoul(digits.c_str(), nullptr, 10));
      id = buf;
    }
  }
  if (id == "0x1015") return {"ConnectX-4 Lx", id};
  if (id == "0x1016") return {"ConnectX-4 Lx VF", id};
  if (id == "0x101f") return {"ConnectX-6 Lx", id};
  return {{}, id};
}

std::string rateText(const v1::RdmaPort& p) {
  if (p.rate_raw().empty()) return "-";
  // RoCE ports report their rate with InfiniBand speed names ("25 Gb/sec (1X EDR)"): on
  // Ethernet only the number means anything.
  if (p.link_layer() == "Ethernet" && p.rate_gbps() > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g Gb/s", p.rate_gbps());
    return buf;
  }
  return p.rate_raw();
}

std::string portRemark(const v1::RdmaDevice& d, const v1::RdmaPort& p) {
  const auto [model, id] = ethernetOnlyModel(d);
  if (!model.empty() && p.link_layer() == "InfiniBand") {
    // The rate is named only when it does name an InfiniBand speed ("(1X EDR)").
    const bool ib_rate = !p.speed_name().empty() || p.rate_raw().find('(') != std::string::npos;
    return std::string(model) + " (PCI device " + id +
           ") is an Ethernet-only adapter, yet link_layer says InfiniBand" +
           (ib_rate ? " and the rate \"" + p.rate_raw() + "\" names an InfiniBand speed"
                    : std::string()) +
           ": the evidence does not fit together (an edited or composed tree?)";
  }
  if (p.link_layer().empty() && !p.rate_raw().empty()) {
    // Neither a sysfs link_layer file nor a tool's "Link layer" line said it.
    return "link layer unknown (the evidence does not say it): InfiniBand or Ethernet cannot "
           "be told";
  }
  return {};
}

std::string stateShort(const v1::EnumValue& v, bool physical) {
  if (physical) {
    const PhysState s = physStateOf(v);
    if (s != PhysState::Unknown) return std::string(physStateName(s));
  } else {
    const PortState s = portStateOf(v);
    if (s != PortState::Unknown) return std::string(portStateName(s));
  }
  // What could not be understood is said in words, with the raw value beside it.
  if (!v.raw().empty()) return "unknown (\"" + v.raw() + "\")";
  return "-";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

namespace {
std::string utcTime(int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}
}  // namespace

int findingSpecificity(std::string_view c) {
  static const std::map<std::string_view, int> rank = {
      {"PORT_DOWN", 0},           {"PHYS_LINK_NOT_UP", 0},
      {"PORT_NOT_ACTIVE_SM", 0},  {"LINK_RATE_BELOW_EXPECTED", 0},
      {"NO_RDMA_DEVICES", 0},     {"PORT_STATE_UNKNOWN", 0},
      {"DEVICE_FATAL", 1},        {"FW_COMMAND_TIMEOUT", 1},
      {"FW_COMMAND_FAILED", 1},   {"PCIE_ERROR", 1},
      {"PCIE_LINK_DEGRADED", 1},  {"TX_TIMEOUT", 1},
      {"KERNEL_LINK_FLAP", 1},    {"MODULE_TEMPERATURE", 1},
      {"DRIVER_LOAD_FAILED", 1},  {"PHY_ERRORS", 2},
      {"LINK_DOWNED", 2},         {"BUFFER_OVERRUN", 2},
      {"XMIT_DISCARDS", 2},       {"TRANSPORT_RETRIES", 2},
      {"CQE_ERRORS", 2},          {"COUNTER_SATURATED", 2},
      {"CONGESTION", 2},          {"MTU_MISMATCH", 4},
      {"FW_VERSION_MISMATCH", 4}, {"NODE_OUTLIER", 4},
      {"MEMLOCK_LIMIT", 5},       {"UVERBS_ACCESS", 5},
      {"PEERMEM_MISSING", 5},     {"ESCALATE_HOST_INSPECTION", 6},
      {"COUNTER_UNAVAILABLE", 6}};
  if (const auto it = rank.find(c); it != rank.end()) return it->second;
  if (c.rfind("NCCL_", 0) == 0) return 3;
  return 5;
}

std::string nodeSource(const AnalyzedNode& node) {
  if (!node.snapshot_file.empty()) return node.snapshot_file;
  return !node.input.empty() ? node.input : node.snapshot.node().source();
}

std::vector<std::string> labelNodes(std::vector<AnalyzedNode>& nodes) {
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < nodes.size(); ++i) by_name[nodeName(nodes[i].snapshot)].push_back(i);
  std::vector<std::string> notices;
  for (const auto& [name, members] : by_name) {
    if (members.size() == 1) {
      nodes[members[0]].label = name;
      continue;
    }
    // The file's base name tells most collisions apart (before/after, two fetches); the
    // collection time the rest; a counter what is left.
    const auto base = [](const std::string& path) {
      const auto slash = path.find_last_of('/');
      return slash == std::string::npos ? path : path.substr(slash + 1);
    };
    std::map<std::string, int> seen;
    for (std::size_t i : members) seen[base(nodeSource(nodes[i]))]++;
    std::string how = "file";
    for (const auto& [b, k] : seen) {
      if (k > 1 || b.empty()) how = "time";
    }
    std::map<std::string, int> seen_time;
    if (how == "time") {
      for (std::size_t i : members)
        seen_time[utcTime(nodes[i].snapshot.node().collected_at_unix_ms())]++;
      for (const auto& [t, k] : seen_time) {
        if (k > 1) how = "order";
      }
    }
    int k = 0;
    for (std::size_t i : members) {
      ++k;
      const std::string tag = how == "file" ? base(nodeSource(nodes[i]))
                              : how == "time"
                                  ? utcTime(nodes[i].snapshot.node().collected_at_unix_ms())
                                  : "#" + std::to_string(k);
      nodes[i].label = name + " (" + tag + ")";
    }
    notices.push_back(std::to_string(members.size()) + " inputs name the same node '" + name +
                      "'; they are reported separately, told apart by " +
                      (how == "file"   ? std::string("file name")
                       : how == "time" ? std::string("collection time")
                                       : std::string("input order")));
  }
  return notices;
}

v1::NodeReport summarizeNode(const AnalyzedNode& node) {
  const v1::Snapshot& s = node.snapshot;
  v1::NodeReport r;
  r.set_node(nodeName(s));
  r.set_label(node.label.empty() ? nodeName(s) : node.label);
  // The input, as every finding of the node names it (DESIGN §3): two inputs may share a
  // host name, and a JSON reader joins findings to nodes by node and source.
  r.set_source(nodeSource(node));
  r.set_job_id(s.node().job_id());
  r.set_collected_at_unix_ms(s.node().collected_at_unix_ms());
  r.set_probe_errors(static_cast<uint32_t>(s.probe_errors_size()));
  r.set_snapshot_file(node.snapshot_file);
  std::map<std::pair<std::string, uint32_t>, Severity> port_worst;
  std::map<std::string, Severity> device_worst;
  for (const auto& f : node.findings) {
    const Severity sev = severityOf(f);
    switch (sev) {
      case Severity::Critical: r.set_critical(r.critical() + 1); break;
      case Severity::Warning: r.set_warning(r.warning() + 1); break;
      case Severity::Info: r.set_info(r.info() + 1); break;
    }
    if (f.device().empty()) continue;
    if (f.port() == 0) {
      auto& d = device_worst[f.device()];
      d = std::max(d, sev);
    } else {
      auto& p = port_worst[{f.device(), f.port()}];
      p = std::max(p, sev);
    }
  }
  r.set_worst_severity(!node.unreachable_reason.empty() ? "unreachable"
                       : r.critical() > 0               ? "critical"
                       : r.warning() > 0                ? "warning"
                                                        : "ok");
  r.set_unreachable_reason(node.unreachable_reason);
  Severity worst_seen = Severity::Info;
  for (const auto& f : node.findings) {
    const Severity sev = severityOf(f);
    if (sev == Severity::Info) continue;
    if (r.worst_code().empty() || sev > worst_seen ||
        (sev == worst_seen && findingSpecificity(f.code()) < findingSpecificity(r.worst_code()))) {
      r.set_worst_code(f.code());
      worst_seen = sev;
    }
  }
  for (const auto& d : s.devices()) {
    for (const auto& p : d.ports()) {
      r.set_ports_total(r.ports_total() + 1);
      if (portStateOf(p.state()) == PortState::Active) r.set_ports_active(r.ports_active() + 1);
    }
  }
  for (const auto& d : s.devices()) {
    auto add_port = [&](const v1::RdmaPort* p) {
      v1::PortSummary* ps = r.add_ports();
      ps->set_device(d.name());
      ps->set_fw_ver(d.fw_ver());
      ps->set_virtual_function(d.is_virtual_function());
      Severity worst = Severity::Info;
      if (auto it = device_worst.find(d.name()); it != device_worst.end()) worst = it->second;
      if (p == nullptr) {
        ps->set_state(d.missing_reason().empty() ? "-" : "MISSING");
      } else {
        ps->set_port(p->port());
        ps->set_state(stateShort(p->state(), false));
        ps->set_phys_state(stateShort(p->phys_state(), true));
        ps->set_rate_gbps(p->rate_gbps());
        ps->set_rate(rateText(*p));
        ps->set_link_layer(p->link_layer());
        ps->set_remark(portRemark(d, *p));
        std::string nds;
        for (const auto& n : p->netdevs()) nds += (nds.empty() ? "" : ",") + n;
        ps->set_netdevs(nds);
        if (auto it = port_worst.find({d.name(), p->port()}); it != port_worst.end()) {
          worst = std::max(worst, it->second);
        }
      }
      ps->set_worst_severity(worst == Severity::Info ? "ok" : std::string(severityName(worst)));
    };
    if (d.ports_size() == 0) {
      add_port(nullptr);
    } else {
      for (const auto& p : d.ports()) add_port(&p);
    }
  }
  if (node.include_snapshot) *r.mutable_snapshot() = s;
  return r;
}

v1::Report buildReport(std::vector<AnalyzedNode> nodes) {
  v1::Report report;
  for (auto& notice : labelNodes(nodes)) report.add_notices(std::move(notice));
  for (auto& n : nodes) {
    for (auto& notice : n.notices) report.add_notices(std::move(notice));
  }
  std::vector<v1::Finding> all;
  for (auto& n : nodes) {
    const bool include = n.include_snapshot;
    n.include_snapshot = false;
    // Every finding names the input it came from: host names are not unique.
    const std::string source = nodeSource(n);
    for (auto& f : n.findings) {
      if (f.source().empty()) f.set_source(source);
    }
    v1::NodeReport* r = report.add_nodes();
    *r = summarizeNode(n);
    if (include) r->mutable_snapshot()->Swap(&n.snapshot);
    std::move(n.findings.begin(), n.findings.end(), std::back_inserter(all));
  }
  sortFindings(all);
  for (auto& f : all) *report.add_findings() = std::move(f);
  return report;
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

// Left-aligned columns sized to their widest cell.
std::string wrap(std::string_view text, std::size_t width, const std::string& first,
                 const std::string& indent);

// Left-aligned columns; when they would be wider than `max_width` (0: no limit), each row
// becomes one wrapped line instead: its first `key_columns` cells, then "HEADER value" for
// the others, so a narrow terminal still reads every value.
std::string table(const std::vector<std::vector<std::string>>& rows, std::size_t max_width = 0,
                  std::size_t key_columns = 1) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], visibleColumns(row[i]));
  }
  std::size_t total = 0;
  for (std::size_t w : width) total += w + 2;
  if (max_width > 0 && total > max_width + 2 && rows.size() > 1) {
    std::string out;
    const auto& header = rows.front();
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      std::string key;
      for (std::size_t i = 0; i < row.size() && i < key_columns; ++i) {
        if (row[i] == "-" && i > 0) continue;
        key += (key.empty() ? "" : " ") +
               (i > 0 && i < header.size() && header[i] == "PORT" ? "port " + row[i] : row[i]);
      }
      // The verdict first, then the other columns by name.
      std::string rest;
      for (std::size_t i = key_columns; i < row.size(); ++i) {
        if (i < header.size() && header[i] == "VERDICT") rest = row[i] + ";";
      }
      for (std::size_t i = key_columns; i < row.size(); ++i) {
        if (row[i] == "-" || row[i].empty()) continue;
        const std::string head = i < header.size() ? header[i] : "";
        if (head == "VERDICT") continue;
        rest += (rest.empty() || rest.back() == ';' ? (rest.empty() ? "" : " ") : ", ") +
                (head.empty() ? row[i] : head + " " + row[i]);
      }
      out += wrap(rest, max_width, key + ": ", "    ");
    }
    return out;
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - visibleColumns(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
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
                      paint(upper(n.worst_severity()), color)});
      continue;
    }
    for (const auto& p : n.ports()) {
      rows.push_back(
          {n.label(), p.device() + (p.virtual_function() ? " (VF)" : ""),
           p.port() == 0 ? "-" : std::to_string(p.port()), p.state(),
           p.phys_state().empty() ? "-" : p.phys_state(), p.rate().empty() ? "-" : p.rate(),
           p.link_layer().empty() ? "-" : p.link_layer(), p.fw_ver().empty() ? "-" : p.fw_ver(),
           p.netdevs().empty() ? "-" : p.netdevs(), paint(upper(p.worst_severity()), color)});
    }
  }
  std::string out = table(rows, max_width, 3);
  for (const auto& n : report.nodes()) {
    for (const auto& p : n.ports()) {
      if (p.remark().empty()) continue;
      out += wrap(n.label() + " " + p.device() +
                      (p.port() == 0 ? std::string() : " port " + std::to_string(p.port())) + ": " +
                      p.remark(),
                  max_width, "remark: ", "    ");
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
    rows.push_back(
        {n.label(), std::to_string(n.ports_active()) + "/" + std::to_string(n.ports_total()),
         rate_text.empty() ? "-" : rate_text, fw_text.empty() ? "-" : fw_text,
         paint(upper(n.worst_severity()), color), n.worst_code().empty() ? "-" : n.worst_code()});
  }
  return table(rows, max_width, 1);
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
  std::size_t line_cols = columns(first);
  bool line_has_word = false;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) break;
    std::size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view word = text.substr(i, j - i);
    i = j;
    const std::size_t need = (line_has_word ? 1 : 0) + columns(word);
    if (line_has_word && line_cols + need > width) {
      out += line + "\n";
      line = indent;
      line_cols = columns(indent);
      line_has_word = false;
    }
    // A word that cannot fit on a line of its own is cut where the line ends.
    while (!line_has_word && line_cols + columns(word) > width && width > line_cols + 8) {
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
      line += ' ';
      ++line_cols;
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

std::string replaceAll(std::string s, const std::string& what, const std::string& with) {
  if (what.empty()) return s;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + with.size()))
    s.replace(p, what.size(), with);
  return s;
}

// What a finding says with its own node, device and port taken out.
std::string groupKey(const v1::Finding& f) {
  std::string summary = f.summary();
  std::string action = f.action();
  if (f.port() != 0) {
    const std::string port = "port " + std::to_string(f.port());
    summary = replaceAll(summary, port, "port #");
    action = replaceAll(action, port, "port #");
  }
  summary = replaceAll(replaceAll(summary, f.device(), "{device}"), f.node(), "{node}");
  action = replaceAll(replaceAll(action, f.device(), "{device}"), f.node(), "{node}");
  return f.code() + '\0' + f.severity() + '\0' + summary + '\0' + action;
}

std::string placesOf(const FindingGroup& g) {
  std::vector<std::string> nodes, devices;
  std::set<uint32_t> ports;
  for (std::size_t i = 0; i < g.members.size(); ++i) {
    if (std::find(nodes.begin(), nodes.end(), g.labels[i]) == nodes.end())
      nodes.push_back(g.labels[i]);
    const auto& d = g.members[i]->device();
    if (!d.empty() && std::find(devices.begin(), devices.end(), d) == devices.end())
      devices.push_back(d);
    if (g.members[i]->port() != 0) ports.insert(g.members[i]->port());
  }
  std::string where = nodes.size() == 1 ? nodes[0] : compressHostlist(nodes);
  if (!devices.empty())
    where += " " + (devices.size() == 1 ? devices[0] : compressHostlist(devices));
  if (!ports.empty()) {
    std::string p;
    for (auto n : ports) p += (p.empty() ? "" : ",") + std::to_string(n);
    where += (ports.size() == 1 ? " port " : " ports ") + p;
  }
  return where;
}

void findingText(std::string& out, const FindingGroup& g, const TextOptions& options) {
  const v1::Finding& f = *g.members.front();
  const std::size_t w = options.width;
  std::string where = g.members.size() == 1 ? g.labels[0] : placesOf(g);
  if (g.members.size() == 1) {
    if (!f.device().empty()) where += " " + f.device();
    if (f.port() != 0) where += " port " + std::to_string(f.port());
  } else {
    where += " (" + std::to_string(g.members.size()) + " places)";
  }
  out += "\n" +
         wrap(f.code() + "  " + where, w, paint(upper(f.severity()), options.color) + "  ", "    ");
  out += wrap(f.summary(), w, "  ", "    ");
  if (f.evidence_size() > 0) {
    out += g.members.size() == 1
               ? "  evidence:\n"
               : wrap("evidence of " + g.labels[0] + (f.device().empty() ? "" : " " + f.device()) +
                          (f.port() ? " port " + std::to_string(f.port()) : "") +
                          " (the others: --format json or -v):",
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

}  // namespace

std::string renderText(const v1::Report& report, const TextOptions& options) {
  std::string out = options.node_table ? nodeTable(report, options.color, options.width)
                                       : portTable(report, options.color, options.width);
  const RowLabels labels(report);
  const std::size_t w = options.width;

  uint32_t crit = 0, warn = 0, info = 0;
  for (const auto& f : report.findings()) {
    const Severity s = severityOf(f);
    (s == Severity::Critical ? crit : s == Severity::Warning ? warn : info)++;
  }
  out += "\n";
  for (const auto& notice : report.notices()) out += wrap(notice, w, "note: ", "  ");
  uint32_t unreachable = 0;
  for (const auto& n : report.nodes()) {
    if (!n.unreachable_reason().empty()) ++unreachable;
    if (options.node_table) continue;  // the table already has one line per node
    if (report.nodes_size() > 1 || n.critical() + n.warning() > 0 || n.probe_errors() > 0) {
      std::string line =
          "node " + n.label() + ": " + paint(upper(n.worst_severity()), options.color) + " (" +
          std::to_string(n.critical()) + " critical, " + std::to_string(n.warning()) +
          " warning, " + std::to_string(n.info()) + " info)";
      if (n.probe_errors() > 0) {
        line +=
            ", " + std::to_string(n.probe_errors()) + " probe(s) failed (details: --format json)";
      }
      out += wrap(line, w, "", "  ");
    }
  }
  std::string counts;
  if (options.node_table) {
    counts =
        std::to_string(report.nodes_size()) + " node(s)" +
        (unreachable > 0 ? ", " + std::to_string(unreachable) + " unreachable" : std::string()) +
        "; ";
  }
  counts += std::to_string(report.findings_size()) + " finding(s): " + std::to_string(crit) +
            " critical, " + std::to_string(warn) + " warning, " + std::to_string(info) + " info";
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
        const std::string key = groupKey(f);
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
    if (!options.node_table) {
      for (const auto& n : report.nodes()) {
        if (!n.snapshot_file().empty())
          out += "\n" + wrap(n.snapshot_file(), w, "snapshot of " + n.label() + ": ", "  ");
      }
    }
  }
  // Node names, values and log lines come from other machines and from pastes: no byte of
  // them may reach a terminal as an escape sequence (our own colours are added after).
  out = sanitizeUtf8(out);
  return options.color ? applyColors(std::move(out)) : out;
}

Result<std::string> renderJson(const v1::Report& report) {
  std::string out = messageToJson(report);
  out.push_back('\n');
  return out;
}

}  // namespace ibc::core
