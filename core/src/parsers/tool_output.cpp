// Recogniser and shared machinery of the tool-output parsers: line cursor, noise and
// command lines, the evidence builder that merges across tools, and the public entry
// points. The per-tool block parsers live in tool_output_ib.cpp, tool_output_net.cpp
// and tool_output_sysfs.cpp.

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <unordered_set>
#include <utility>

#include "ibc/core/paste.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "ibc/core/virtual_function.h"
#include "tool_output_internal.h"

namespace ibc::core {
namespace tool_output {

// ---- LineCursor --------------------------------------------------------------------------

LineCursor::LineCursor(std::string_view text) : text_(text) { load(); }

void LineCursor::next() {
  if (atEnd()) return;
  pos_ = next_;
  ++number_;
  load();
}

void LineCursor::load() {
  if (pos_ >= text_.size()) {
    line_ = {};
    next_ = pos_;
    return;
  }
  std::size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  line_ = text_.substr(pos_, end - pos_);
  if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
  next_ = end + 1;
}

// ---- helpers -----------------------------------------------------------------------------

bool isIndented(std::string_view line) {
  return !line.empty() && (line.front() == ' ' || line.front() == '\t');
}

bool isBlank(std::string_view line) { return trim(line).empty(); }

std::optional<KeyValue> splitKeyValue(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return KeyValue{trim(line.substr(0, colon)), trim(line.substr(colon + 1))};
}

std::optional<KeyValue> splitDotted(std::string_view line, bool allow_no_dots) {
  const std::string_view t = trimRight(line);
  if (t.empty() || !std::isalpha(static_cast<unsigned char>(t[0]))) return std::nullopt;
  std::size_t i = 0;
  while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_')) ++i;
  if (i >= t.size() || t[i] != ':') return std::nullopt;
  const std::string_view key = t.substr(0, i);
  std::size_t v = i + 1;
  const std::size_t dots_start = v;
  while (v < t.size() && t[v] == '.') ++v;
  // libibmad pads "Name:" with dots to column 33; only a name that long has none.
  if (v == dots_start && !(allow_no_dots && key.size() >= 31)) return std::nullopt;
  return KeyValue{key, trim(t.substr(v))};
}

std::optional<std::string_view> quoted(std::string_view text) {
  const auto open = text.find('\'');
  if (open == std::string_view::npos) return std::nullopt;
  const auto close = text.find('\'', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  return text.substr(open + 1, close - open - 1);
}

bool isDecimal(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

std::optional<uint32_t> parseU32(std::string_view text) {
  const std::string_view t = trim(text);
  if (!isDecimal(t) || t.size() > 10) return std::nullopt;
  const auto v = parseUnsigned(t);
  if (!v || *v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

bool looksLikePciAddress(std::string_view s) {
  // "0000:05:00.0": domain:bus:device.function
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  constexpr std::array<std::size_t, 9> kHexAt{{0, 1, 2, 3, 5, 6, 8, 9, 11}};
  return std::all_of(kHexAt.begin(), kHexAt.end(), [&](std::size_t i) {
    return std::isxdigit(static_cast<unsigned char>(s[i]));
  });
}

std::string boundedLine(std::string_view line) {
  return std::string(line.substr(0, std::min(line.size(), kMaxToolLineBytes)));
}

namespace {
struct LaneSpeed {
  double signalling;  // per-lane Gb/s as PortInfo/ibv_devinfo may print it
  double nominal;     // per-lane Gb/s the kernel's `rate` uses
  std::string_view name;
};
// IBTA lane speeds. The kernel's rate attribute (and ibstat) reports the nominal figure:
// 4X FDR is "56", 4X EDR "100", 4X HDR "200".
constexpr std::array<LaneSpeed, 14> kLaneSpeeds{{
    {2.5, 2.5, "SDR"},
    {5.0, 5.0, "DDR"},
    {10.0, 10.0, "QDR"},
    {10.3125, 10.0, "FDR10"},
    {14.0625, 14.0, "FDR"},
    {14.0, 14.0, "FDR"},
    {25.78125, 25.0, "EDR"},
    {25.0, 25.0, "EDR"},
    {53.125, 50.0, "HDR"},
    {50.0, 50.0, "HDR"},
    {106.25, 100.0, "NDR"},
    {100.0, 100.0, "NDR"},
    {212.5, 200.0, "XDR"},
    {200.0, 200.0, "XDR"},
}};
const LaneSpeed* findLane(double gbps) {
  for (const auto& l : kLaneSpeeds) {
    if (std::fabs(l.signalling - gbps) < 1e-6) return &l;
  }
  return nullptr;
}
}  // namespace

double nominalLaneGbps(double lane_gbps) {
  const LaneSpeed* l = findLane(lane_gbps);
  return l ? l->nominal : lane_gbps;
}

std::string_view speedNameForLane(double lane_gbps) {
  const LaneSpeed* l = findLane(lane_gbps);
  return l ? l->name : std::string_view{};
}

v1::EnumValue namedEnum(std::string_view text) {
  v1::EnumValue e;
  e.set_code(-1);
  e.set_name(printable(trim(text), 256));
  e.set_raw(printable(text, 256));
  return e;
}

std::string_view withoutAnnotation(std::string_view line) {
  // Annotations start after whitespace: an arrow ("<--", "<==", "<-", "\u2190"), a "//"
  // comment, or a note in another script (the first non-ASCII byte). Tool output is ASCII.
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i - 1] != ' ' && line[i - 1] != '\t') continue;
    const std::string_view rest = line.substr(i);
    const bool arrow = startsWith(rest, "<-") || startsWith(rest, "<=") ||
                       startsWith(rest, "\xe2\x86\x90") || startsWith(rest, "//");
    const bool foreign = static_cast<unsigned char>(line[i]) >= 0x80;
    if ((arrow || foreign) && !trim(line.substr(0, i)).empty()) {
      return trimRight(line.substr(0, i));
    }
  }
  return line;
}

bool isElision(std::string_view line) {
  std::string_view t = trim(line);
  if (startsWith(t, "[") && endsWith(t, "]")) t = t.substr(1, t.size() - 2);
  if (startsWith(t, "(") && endsWith(t, ")")) t = t.substr(1, t.size() - 2);
  if (t == "\xe2\x80\xa6") return true;  // U+2026 HORIZONTAL ELLIPSIS
  return t.size() >= 3 && std::all_of(t.begin(), t.end(), [](char c) { return c == '.'; });
}

// ---- EvidenceBuilder ---------------------------------------------------------------------

namespace {
void fill(std::string* dst, const std::string& src) {
  if (dst->empty() && !src.empty()) *dst = src;
}

bool enumEmpty(const v1::EnumValue& e) { return e.raw().empty() && e.name().empty(); }

void addToCommaList(std::string* list, std::string_view item) {
  if (item.empty()) return;
  std::string_view rest = *list;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (rest.substr(0, comma) == item) return;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!list->empty()) list->push_back(',');
  list->append(item);
}
}  // namespace

void EvidenceBuilder::addKind(std::string_view kind) {
  if (kind.empty()) return;
  if (std::find(ev_.kinds.begin(), ev_.kinds.end(), kind) == ev_.kinds.end()) {
    ev_.kinds.emplace_back(kind);
  }
}

void EvidenceBuilder::addSpan(std::string_view kind, uint64_t first, uint64_t last) {
  if (!ev_.spans.empty() && ev_.spans.back().kind == kind && ev_.spans.back().last_line < first &&
      joinable_) {
    ev_.spans.back().last_line = last;
  } else {
    ev_.spans.push_back(ToolOutputSpan{std::string(kind), first, last});
  }
  joinable_ = true;
}

void EvidenceBuilder::countLines(uint64_t n, bool unrecognised) {
  ev_.lines_total += n;
  if (unrecognised) {
    ev_.lines_unrecognised += n;
    joinable_ = false;
  }
}

void EvidenceBuilder::addError(std::string_view line) {
  if (ev_.tool_errors.size() >= kMaxToolErrors) {
    markTruncated();
    return;
  }
  ev_.tool_errors.push_back(boundedLine(trim(line)));
}

void EvidenceBuilder::addRdmaTest(v1::RdmaTest test) {
  if (ev_.rdma_tests.size() >= kMaxToolRdmaTests) {
    markTruncated();
    return;
  }
  ev_.rdma_tests.push_back(std::move(test));
}

void EvidenceBuilder::addGpuTopology(v1::GpuTopology topology) {
  if (ev_.gpu_topologies.size() >= kMaxToolRdmaTests) {
    markTruncated();
    return;
  }
  ev_.gpu_topologies.push_back(std::move(topology));
}

void EvidenceBuilder::addSysfsEntry(std::string_view path, std::string_view value) {
  if (ev_.sysfs_entries.size() >= kMaxToolSysfsEntries) {
    markTruncated();
    return;
  }
  ev_.sysfs_entries.push_back(SysfsEntry{std::string(path), std::string(value)});
}

void EvidenceBuilder::addDriverInfo(EthtoolDriverInfo info) {
  if (ev_.driver_infos.size() >= kMaxToolDriverInfos) {
    markTruncated();
    return;
  }
  ev_.driver_infos.push_back(std::move(info));
}

void EvidenceBuilder::addDevice(v1::RdmaDevice device, std::string_view kind) {
  if (device.name().empty()) return;
  std::size_t idx = 0;
  if (auto it = device_index_.find(device.name()); it != device_index_.end()) {
    idx = it->second;
  } else {
    if (ev_.devices.size() >= kMaxToolDevices) {
      markTruncated();
      return;
    }
    idx = ev_.devices.size();
    ev_.devices.emplace_back().set_name(device.name());
    device_slots_.emplace_back();
    device_index_.emplace(device.name(), idx);
  }
  v1::RdmaDevice& dst = ev_.devices[idx];
  addToCommaList(dst.mutable_seen_in(), kind);
  mergeDevice(dst, device_slots_[idx], device);
}

void EvidenceBuilder::addNetdev(v1::NetDevice netdev) {
  if (netdev.name().empty()) {
    if (ev_.netdevs.size() >= kMaxToolNetdevs) {
      markTruncated();
      return;
    }
    ev_.netdevs.emplace_back();
    mergeNetdev(ev_.netdevs.back(), netdev);
    return;
  }
  std::size_t idx = 0;
  if (auto it = netdev_index_.find(netdev.name()); it != netdev_index_.end()) {
    idx = it->second;
  } else {
    if (ev_.netdevs.size() >= kMaxToolNetdevs) {
      markTruncated();
      return;
    }
    idx = ev_.netdevs.size();
    ev_.netdevs.emplace_back().set_name(netdev.name());
    netdev_index_.emplace(netdev.name(), idx);
  }
  mergeNetdev(ev_.netdevs[idx], netdev);
}

void EvidenceBuilder::mergeStrings(google::protobuf::RepeatedPtrField<std::string>* dst,
                                   const google::protobuf::RepeatedPtrField<std::string>& src,
                                   std::size_t limit) {
  for (const std::string& s : src) {
    if (std::find(dst->begin(), dst->end(), s) != dst->end()) continue;
    if (static_cast<std::size_t>(dst->size()) >= limit) {
      markTruncated();
      return;
    }
    dst->Add()->assign(s);
  }
}

void EvidenceBuilder::mergeCounters(google::protobuf::RepeatedPtrField<v1::Counter>* dst,
                                    google::protobuf::RepeatedPtrField<v1::Counter>* src) {
  if (src->empty()) return;
  std::unordered_set<std::string> names;
  for (const auto& c : *dst) names.insert(c.name());
  for (auto& c : *src) {
    if (!names.insert(c.name()).second) continue;
    if (static_cast<std::size_t>(dst->size()) >= kMaxToolCounters ||
        counters_total_ >= kMaxToolCountersTotal) {
      markTruncated();
      return;
    }
    dst->Add(std::move(c));
    ++counters_total_;
  }
}

void EvidenceBuilder::mergePort(v1::RdmaPort& dst, v1::RdmaPort& src) {
  if (src.has_state() && (!dst.has_state() || enumEmpty(dst.state()))) {
    *dst.mutable_state() = src.state();
  }
  if (src.has_phys_state() && (!dst.has_phys_state() || enumEmpty(dst.phys_state()))) {
    *dst.mutable_phys_state() = src.phys_state();
  }
  // Rate fields travel together so a port never mixes one tool's width with another's speed.
  if (dst.rate_raw().empty() && dst.rate_gbps() == 0 && dst.width_lanes() == 0 &&
      (!src.rate_raw().empty() || src.rate_gbps() != 0)) {
    dst.set_rate_raw(src.rate_raw());
    dst.set_rate_gbps(src.rate_gbps());
    dst.set_width_lanes(src.width_lanes());
    dst.set_speed_name(src.speed_name());
  }
  fill(dst.mutable_link_layer(), src.link_layer());
  if (!dst.has_lid() && src.has_lid()) dst.set_lid(src.lid());
  fill(dst.mutable_lid_raw(), src.lid_raw());
  if (!dst.has_sm_lid() && src.has_sm_lid()) dst.set_sm_lid(src.sm_lid());
  fill(dst.mutable_sm_lid_raw(), src.sm_lid_raw());
  mergeStrings(dst.mutable_gids(), src.gids(), 1024);
  mergeStrings(dst.mutable_pkeys(), src.pkeys(), 1024);
  mergeStrings(dst.mutable_netdevs(), src.netdevs(), 64);
  mergeCounters(dst.mutable_counters(), src.mutable_counters());
  mergeCounters(dst.mutable_hw_counters(), src.mutable_hw_counters());
  mergeCounters(dst.mutable_counters_ext(), src.mutable_counters_ext());
  if (!dst.has_active_mtu() && src.has_active_mtu()) dst.set_active_mtu(src.active_mtu());
  fill(dst.mutable_port_guid(), src.port_guid());
}

void EvidenceBuilder::mergeDevice(v1::RdmaDevice& dst, DeviceSlot& slot, v1::RdmaDevice& src) {
  fill(dst.mutable_fw_ver(), src.fw_ver());
  fill(dst.mutable_board_id(), src.board_id());
  fill(dst.mutable_hca_type(), src.hca_type());
  fill(dst.mutable_node_guid(), src.node_guid());
  fill(dst.mutable_sys_image_guid(), src.sys_image_guid());
  fill(dst.mutable_node_desc(), src.node_desc());
  fill(dst.mutable_node_type(), src.node_type());
  fill(dst.mutable_missing_reason(), src.missing_reason());
  if (src.has_pci()) {
    const v1::PciFunction& s = src.pci();
    v1::PciFunction* d = dst.mutable_pci();
    fill(d->mutable_address(), s.address());
    fill(d->mutable_vendor_id(), s.vendor_id());
    fill(d->mutable_device_id(), s.device_id());
    fill(d->mutable_driver(), s.driver());
    if (s.is_virtual_function() && !d->is_virtual_function()) {
      d->set_is_virtual_function(true);
      d->set_virtual_function_evidence(s.virtual_function_evidence());
    }
  }
  if (src.is_virtual_function() && !dst.is_virtual_function()) {
    dst.set_is_virtual_function(true);
    dst.set_virtual_function_evidence(src.virtual_function_evidence());
  }
  mergeCounters(dst.mutable_hw_counters(), src.mutable_hw_counters());
  for (auto& port : *src.mutable_ports()) {
    auto it = slot.ports.find(port.port());
    if (it == slot.ports.end()) {
      if (static_cast<std::size_t>(dst.ports_size()) >= kMaxToolPortsPerDevice) {
        markTruncated();
        continue;
      }
      it = slot.ports.emplace(port.port(), dst.ports_size()).first;
      dst.add_ports()->set_port(port.port());
    }
    mergePort(*dst.mutable_ports(it->second), port);
  }
}

void EvidenceBuilder::mergeNetdev(v1::NetDevice& dst, v1::NetDevice& src) {
  if (dst.rdma_device().empty() && !src.rdma_device().empty()) {
    dst.set_rdma_device(src.rdma_device());
    dst.set_rdma_port(src.rdma_port());
  }
  if (!dst.has_mtu() && src.has_mtu()) dst.set_mtu(src.mtu());
  fill(dst.mutable_operstate(), src.operstate());
  if (!dst.has_carrier() && src.has_carrier()) dst.set_carrier(src.carrier());
  if (!dst.has_carrier_changes() && src.has_carrier_changes()) {
    dst.set_carrier_changes(src.carrier_changes());
  }
  if (!dst.has_speed_mbps() && src.has_speed_mbps()) dst.set_speed_mbps(src.speed_mbps());
  fill(dst.mutable_address(), src.address());
  mergeStrings(dst.mutable_addresses(), src.addresses(), 64);
  if (dst.type() == 0) dst.set_type(src.type());
  if (!dst.has_admin_up() && src.has_admin_up()) dst.set_admin_up(src.admin_up());
  fill(dst.mutable_flags_raw(), src.flags_raw());
  mergeCounters(dst.mutable_stats(), src.mutable_stats());
  mergeCounters(dst.mutable_ethtool(), src.mutable_ethtool());
  fill(dst.mutable_ethtool_unavailable_reason(), src.ethtool_unavailable_reason());
  fill(dst.mutable_mode(), src.mode());
  fill(dst.mutable_pci_address(), src.pci_address());
  fill(dst.mutable_qdisc(), src.qdisc());
}

ToolEvidence EvidenceBuilder::finish() && {
  // A VF is a VF whichever tool showed it (ibstat's CA type, ibv_devinfo's part id).
  for (auto& dev : ev_.devices) classifyVirtualFunction(dev);
  return std::move(ev_);
}

// ---- noise and command lines -------------------------------------------------------------

namespace {

bool isHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
         c == '\\';
}

// Commands whose output we parse or which commonly appear in the same pastes. A bare line
// starting with one of these words (no prompt) is a command line.
bool isKnownCommand(std::string_view word) {
  static constexpr std::array<std::string_view, 27> kCommands{{
      "ibstat",     "ibstatus",      "ibv_devinfo",   "ibv_devices",
      "perfquery",  "ibportstate",   "ibdev2netdev",  "ethtool",
      "ip",         "grep",          "cat",           "ibaddr",
      "iblinkinfo", "ibnetdiscover", "ibqueryerrors", "ibdiagnet",
      "rdma",       "lspci",         "mst",           "mlxlink",
      "sleep",      "dmesg",         "show_gids",     "ibswitches",
      "ibhosts",    "smpquery",      "nvidia-smi",
  }};
  return std::find(kCommands.begin(), kCommands.end(), word) != kCommands.end() ||
         isPerftestTool(word);
}

// "[root@node045 ~]# cmd", "root@host:/etc/apt# cmd", "(venv) user@h:~$ cmd", "$ cmd".
// Returns the command text after the prompt, or nullopt when the line is not a prompt.
std::optional<std::string_view> afterPrompt(std::string_view line) {
  std::string_view t = trimLeft(line);
  if (startsWith(t, "(")) {  // virtualenv / conda prefix
    const auto close = t.find(") ");
    if (close != std::string_view::npos && close < 64) t = trimLeft(t.substr(close + 2));
  }
  if (startsWith(t, "[")) {
    const auto close = t.find(']');
    if (close == std::string_view::npos || close > 256 || close + 1 >= t.size() ||
        (t[close + 1] != '#' && t[close + 1] != '$')) {
      return std::nullopt;
    }
    const std::string_view inside = t.substr(1, close - 1);
    if (inside.find('@') == std::string_view::npos && inside.find(' ') == std::string_view::npos) {
      return std::nullopt;
    }
    return trim(t.substr(close + 2));
  }
  if (t == "$" || startsWith(t, "$ ")) return trim(t.substr(1));
  // A shell's own prompt: "sh-5.1# cmd", "bash-4.2$ cmd".
  if (const auto sep = t.find_first_of("#$");
      sep != std::string_view::npos && sep < 16 && sep + 1 < t.size() && t[sep + 1] == ' ') {
    const std::string_view shell = t.substr(0, sep);
    const auto dash = shell.find('-');
    if (dash != std::string_view::npos && dash > 0 && dash + 1 < shell.size() &&
        std::all_of(shell.begin(), shell.begin() + static_cast<std::ptrdiff_t>(dash),
                    [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; }) &&
        std::all_of(shell.begin() + static_cast<std::ptrdiff_t>(dash) + 1, shell.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }))
      return trim(t.substr(sep + 1));
  }
  // user@host[:path](#|$)
  std::size_t i = 0;
  while (i < t.size() && isHostChar(t[i]) && t[i] != '\\') ++i;
  if (i == 0 || i >= t.size() || t[i] != '@') return std::nullopt;
  ++i;
  const std::size_t host_start = i;
  while (i < t.size() && isHostChar(t[i])) ++i;
  if (i == host_start || i >= t.size()) return std::nullopt;
  if (t[i] == ':') {
    ++i;
    while (i < t.size() && t[i] != '#' && t[i] != '$' && t[i] != ' ' && t[i] != '\t') ++i;
  }
  if (i >= t.size() || (t[i] != '#' && t[i] != '$')) return std::nullopt;
  return trim(t.substr(i + 1));
}

std::string_view basename(std::string_view word) {
  const auto slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

// The words of a command up to a pipe, `;`, `&` or redirection, without `sudo` and
// environment assignments; the first is the program's basename.
std::vector<std::string_view> commandWords(std::string_view command) {
  const auto cut = command.find_first_of("|;&>");
  if (cut != std::string_view::npos) command = command.substr(0, cut);
  std::vector<std::string_view> words = splitWhitespace(command);
  std::size_t skip = 0;
  while (skip < words.size() &&
         (words[skip] == "sudo" || words[skip].find('=') != std::string_view::npos)) {
    ++skip;
  }
  words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(skip));
  if (!words.empty()) words.front() = basename(words.front());
  return words;
}

void applyCommand(std::string_view command, EvidenceBuilder& out) {
  const auto words = commandWords(command);
  CommandContext& ctx = out.context();
  ctx = CommandContext{};
  if (words.empty()) return;
  ctx.tool = std::string(words.front());
  if (isPerftestTool(ctx.tool)) {
    for (std::size_t i = 0; i < words.size() && i < 64; ++i)
      ctx.perftest_words.emplace_back(words[i]);
    return;
  }
  if (ctx.tool != "ethtool") return;
  bool stats = false;
  bool info = false;
  std::string_view dev;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (w == "-S" || w == "--statistics") {
      stats = true;
    } else if (w == "-i" || w == "--driver") {
      info = true;
    } else if (!startsWith(w, "-")) {
      dev = w;  // ethtool takes the device last
    }
  }
  if (stats) {
    ctx.ethtool_stats_pending = true;
    ctx.ethtool_stats_dev = std::string(dev);
  } else if (info) {
    ctx.ethtool_info_pending = true;
    ctx.ethtool_info_dev = std::string(dev);
  }
}

bool looksLikeFailure(std::string_view line) {
  static constexpr std::array<std::string_view, 6> kWords{
      {"can't", "cannot", "failed", "error", "timeout", "timed out"}};
  return std::any_of(kWords.begin(), kWords.end(),
                     [&](std::string_view w) { return containsIgnoreCase(line, w); });
}

// Handles a noise line (blank, prompt, command, trace, fence, ibwarn). Returns false when
// the line is not noise.
bool handleNoise(std::string_view line, EvidenceBuilder& out) {
  const std::string_view t = trim(line);
  if (t.empty() || startsWith(t, "```") || isElision(t)) return true;
  if (startsWith(t, "ibwarn:")) {
    if (looksLikeFailure(t)) out.addError(t);
    return true;
  }
  if (startsWith(t, "+")) {  // `set -x` trace: "+ cmd", "++ cmd"
    std::size_t i = 0;
    while (i < t.size() && t[i] == '+') ++i;
    if (i < t.size() && t[i] == ' ' && !trim(t.substr(i)).empty()) {
      applyCommand(trim(t.substr(i)), out);
      return true;
    }
    return false;
  }
  if (auto command = afterPrompt(line)) {
    applyCommand(*command, out);
    return true;
  }
  // "# grep . /sys/..." (root prompt) — but never "# Port info: ..." (ibportstate).
  if (startsWith(t, "# ")) {
    const auto words = commandWords(t.substr(2));
    if (!words.empty() && isKnownCommand(words.front())) {
      applyCommand(t.substr(2), out);
      return true;
    }
    return false;
  }
  // A bare command line: "ethtool -S eth0", "ibv_devinfo -v". Most lines are data, so
  // look at the first word before splitting the whole line.
  const std::string_view first = t.substr(0, t.find_first_of(" \t"));
  if (first != "sudo" && first.find('=') == std::string_view::npos &&
      !isKnownCommand(basename(first))) {
    return false;
  }
  const auto words = commandWords(t);
  if (!words.empty() && isKnownCommand(words.front()) &&
      (t.find(':') == std::string_view::npos || words.front() == "grep" ||
       words.front() == "cat")) {
    applyCommand(t, out);
    return true;
  }
  return false;
}

}  // namespace

bool parseErrorLine(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  const bool error = t.find("ibpanic:") != std::string_view::npos ||
                     t.find("iberror:") != std::string_view::npos || startsWith(t, "libibverbs:") ||
                     startsWith(t, "Fatal error") || startsWith(t, "Cannot get ") ||
                     startsWith(t, "Failed to ") ||
                     (startsWith(t, "Device \"") && endsWith(t, "does not exist."));
  if (!error) return false;
  out.addError(t);
  cursor.next();
  return true;
}

ToolEvidence runBlockParsers(std::string_view text, const std::vector<BlockParserEntry>& parsers) {
  EvidenceBuilder out;
  LineCursor cursor(text);
  while (!cursor.atEnd()) {
    if (handleNoise(cursor.line(), out)) {
      out.countLines(1, false);
      cursor.next();
      continue;
    }
    bool consumed = false;
    for (const auto& p : parsers) {
      const uint64_t first = cursor.number();
      if (!p.parse(cursor, out)) continue;
      // A parser that claims a block always moves on; guard against one that does not.
      if (cursor.number() == first) cursor.next();
      const uint64_t last = cursor.number() - 1;
      out.countLines(last - first + 1, false);
      if (!p.kind.empty()) {
        out.addKind(p.kind);
        out.addSpan(p.kind, first, last);
      }
      consumed = true;
      break;
    }
    if (!consumed) {
      out.countLines(1, true);
      cursor.next();
    }
  }
  return std::move(out).finish();
}

}  // namespace tool_output

using tool_output::BlockParserEntry;
using tool_output::runBlockParsers;

namespace {
ToolEvidence runOne(std::string_view text, std::string_view kind, tool_output::BlockParser p) {
  return runBlockParsers(
      text, {BlockParserEntry{kind, p}, BlockParserEntry{{}, tool_output::parseErrorLine}});
}
}  // namespace

std::string unwrapPasteMarkup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const bool has_nl = nl != std::string_view::npos;
    if (!has_nl) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    // Markdown block quotes, possibly nested ("> > ").
    while (!line.empty() && line[0] == '>') {
      line.remove_prefix(1);
      if (!line.empty() && line[0] == ' ') line.remove_prefix(1);
    }
    // Markdown code fences carry nothing.
    if (startsWith(trimLeft(line), "```") || startsWith(trimLeft(line), "~~~")) line = {};
    // HTML formatting tags and entities (the paste layer's reading of them).
    std::string clean = withoutHtml(line);
    // "# comment" after a value ("port_rcv_errors:12   # after reseat"). A line that starts
    // with '#' is a tool's own header (perfquery "# Port counters: ...") and stays.
    const std::string_view cv = clean;
    if (!trimLeft(cv).empty() && trimLeft(cv)[0] != '#') {
      for (std::size_t h = cv.find('#'); h != std::string_view::npos; h = cv.find('#', h + 1)) {
        if (h > 0 && (cv[h - 1] == ' ' || cv[h - 1] == '\t') && h + 1 < cv.size() &&
            cv[h + 1] == ' ' && !trim(cv.substr(0, h)).empty()) {
          clean.resize(trimRight(cv.substr(0, h)).size());
          break;
        }
      }
    }
    clean.resize(tool_output::withoutAnnotation(clean).size());
    out += clean;
    if (has_nl) out.push_back('\n');
  }
  return out;
}

namespace {

// Every tool's block parser by kind. Order matters only where two kinds could claim the same
// line: specific headers first, the loosest shape (headerless `name: value` ethtool lines)
// last.
const std::vector<BlockParserEntry>& toolParsers() {
  static const std::vector<BlockParserEntry> kAll{
      {kKindSysfsListing, tool_output::parseSysfsListingBlock},
      {kKindPerftest, tool_output::parsePerftestBlock},
      {kKindNvidiaSmiTopo, tool_output::parseNvidiaSmiTopoBlock},
      {kKindIbstat, tool_output::parseIbstatBlock},
      {kKindIbstatus, tool_output::parseIbstatusBlock},
      {kKindIbvDevinfo, tool_output::parseIbvDevinfoBlock},
      {kKindPerfquery, tool_output::parsePerfqueryBlock},
      {kKindIbportstate, tool_output::parseIbportstateBlock},
      {kKindIbdev2netdev, tool_output::parseIbdev2netdevBlock},
      {kKindRdmaLink, tool_output::parseRdmaLinkBlock},
      {kKindIpLink, tool_output::parseIpLinkBlock},
      {kKindEthtoolInfo, tool_output::parseEthtoolInfoBlock},
      {kKindEthtoolStats, tool_output::parseEthtoolStatsBlock},
      {{}, tool_output::parseErrorLine},
  };
  return kAll;
}

}  // namespace

ToolEvidence parseToolOutput(std::string_view text) {
  // Pasted text is often quoted or marked up: unwrap it first, one line per line so that
  // line-based evidence still matches the paste.
  const std::string unwrapped = unwrapPasteMarkup(pasteText(text));
  return runBlockParsers(unwrapped, toolParsers());
}

ToolEvidence parseToolOutputAs(std::string_view kind, std::string_view text) {
  for (const auto& entry : toolParsers()) {
    if (!kind.empty() && entry.kind == kind) return runOne(text, kind, entry.parse);
  }
  return runBlockParsers(text, {BlockParserEntry{{}, tool_output::parseErrorLine}});
}

}  // namespace ibc::core
