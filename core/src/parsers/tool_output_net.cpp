// Block parsers for netdev tools: ethtool -S, ethtool -i and ip [-s [-s]] link. Formats
// follow ethtool's "     %s: %llu" statistics and "key: value" driver info, and iproute2
// ip/ipaddress.c (print_linkinfo, print_link_stats*), old and new column headers alike.

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_set>

#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "tool_output_internal.h"

namespace ibc::core::tool_output {

namespace {

// ---- ethtool -S --------------------------------------------------------------------------

struct StatLine {
  std::string_view name;
  std::string_view value;
};

// "     rx_packets: 845320277". Names never hold ':'; outside a block with a header they
// must not hold spaces either, which keeps ibstat's "SM lid: 0" and friends out.
std::optional<StatLine> statLine(std::string_view line, bool allow_spaces) {
  const std::string_view t = trim(line);
  const auto colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= t.size() ||
      t[colon + 1] != ' ') {
    return std::nullopt;
  }
  const std::string_view name = trim(t.substr(0, colon));
  const std::string_view value = trim(t.substr(colon + 1));
  if (name.empty() || !isDecimal(value)) return std::nullopt;
  if (!allow_spaces && name.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
  return StatLine{name, value};
}

void consumeStats(LineCursor& cursor, bool allow_spaces, v1::NetDevice& netdev,
                  EvidenceBuilder& out) {
  // A name printed twice in one block keeps its first value (and does not use up the bound).
  std::unordered_set<std::string_view> names;
  while (!cursor.atEnd()) {
    const auto stat = statLine(cursor.line(), allow_spaces);
    if (!stat) break;
    cursor.next();
    if (static_cast<std::size_t>(netdev.ethtool_size()) >= kMaxToolCounters) {
      if (names.count(stat->name) == 0) out.markTruncated();
      continue;
    }
    if (!names.insert(stat->name).second) continue;
    *netdev.add_ethtool() = makeCounter(stat->name, stat->value, CounterSet::Ethtool);
  }
}

// ---- ethtool -i --------------------------------------------------------------------------

constexpr std::array<std::string_view, 10> kDriverInfoKeys{{
    "driver",
    "version",
    "firmware-version",
    "expansion-rom-version",
    "bus-info",
    "supports-statistics",
    "supports-test",
    "supports-eeprom-access",
    "supports-register-dump",
    "supports-priv-flags",
}};

bool isDriverInfoLine(std::string_view line) {
  const auto kv = splitKeyValue(trim(line));
  return kv && std::find(kDriverInfoKeys.begin(), kDriverInfoKeys.end(), kv->key) !=
                   kDriverInfoKeys.end();
}

// ---- ip link -----------------------------------------------------------------------------

struct IpHeader {
  std::string_view name;
  std::string_view rest;  // from '<' on
};

// "2: enp1s0f0: <BROADCAST,...> mtu 1500 ..." and "7: ib0.8001@ib0: <...> ...".
std::optional<IpHeader> ipHeader(std::string_view line) {
  const std::string_view t = trimLeft(line);
  std::size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0 || i + 1 >= t.size() || t[i] != ':' || t[i + 1] != ' ') return std::nullopt;
  const std::size_t name_start = i + 2;
  const auto name_end = t.find(": ", name_start);
  if (name_end == std::string_view::npos || name_end == name_start) return std::nullopt;
  std::string_view name = t.substr(name_start, name_end - name_start);
  if (name.find_first_of(" \t") != std::string_view::npos) return std::nullopt;
  const std::string_view rest = trimLeft(t.substr(name_end + 1));
  if (!startsWith(rest, "<")) return std::nullopt;
  name = name.substr(0, name.find('@'));
  if (name.empty()) return std::nullopt;
  return IpHeader{name, rest};
}

void applyIpHeader(const IpHeader& h, v1::NetDevice& netdev) {
  netdev.set_name(std::string(h.name));
  const auto close = h.rest.find('>');
  if (close == std::string_view::npos) return;  // cut inside the flags: trust nothing more
  const std::string_view flags = h.rest.substr(1, close - 1);
  netdev.set_flags_raw(std::string(flags));
  bool up = false;
  for (std::string_view f : split(flags, ',')) {
    if (f == "UP") up = true;
    if (f == "LOWER_UP") netdev.set_carrier(true);
    if (f == "NO-CARRIER") netdev.set_carrier(false);
  }
  netdev.set_admin_up(up);
  // "mtu 4092 qdisc noop state DOWN mode DEFAULT group default qlen 256". A value that
  // ends the line may have been cut ("mtu 40"): only values followed by more text count.
  const auto words = splitWhitespace(h.rest.substr(close + 1));
  for (std::size_t i = 0; i + 2 < words.size(); ++i) {
    if (words[i] == "mtu") {
      if (auto mtu = parseU32(words[i + 1])) netdev.set_mtu(*mtu);
    } else if (words[i] == "qdisc") {
      netdev.set_qdisc(std::string(words[i + 1]));
    } else if (words[i] == "state") {
      netdev.set_operstate(toLower(words[i + 1]));
    } else {
      continue;
    }
    ++i;
  }
}

void applyLinkLine(std::string_view t, v1::NetDevice& netdev) {
  const auto words = splitWhitespace(t);
  if (words.empty()) return;
  if (words[0] == "link/ether") netdev.set_type(1);
  if (words[0] == "link/infiniband") netdev.set_type(32);
  if (words[0] == "link/loopback") netdev.set_type(772);
  if (words[0] == "link/none") netdev.set_type(65534);
  // The address counts only when followed by more ("brd ..."): it may have been cut.
  if (words.size() > 2 && words[1].find(':') != std::string_view::npos) {
    netdev.set_address(std::string(words[1]));
  }
}

enum class StatsRow { Rx, Tx, RxErrors, TxErrors };

// Column words of iproute2's statistics headers → kernel statistics/* names.
std::string_view statName(StatsRow row, std::string_view column) {
  struct Column {
    StatsRow row;
    std::string_view word;
    std::string_view name;
  };
  static constexpr std::array<Column, 27> kColumns{{
      {StatsRow::Rx, "bytes", "rx_bytes"},
      {StatsRow::Rx, "packets", "rx_packets"},
      {StatsRow::Rx, "errors", "rx_errors"},
      {StatsRow::Rx, "dropped", "rx_dropped"},
      {StatsRow::Rx, "overrun", "rx_over_errors"},
      {StatsRow::Rx, "missed", "rx_missed_errors"},
      {StatsRow::Rx, "mcast", "multicast"},
      {StatsRow::Rx, "compressed", "rx_compressed"},
      {StatsRow::Tx, "bytes", "tx_bytes"},
      {StatsRow::Tx, "packets", "tx_packets"},
      {StatsRow::Tx, "errors", "tx_errors"},
      {StatsRow::Tx, "dropped", "tx_dropped"},
      {StatsRow::Tx, "carrier", "tx_carrier_errors"},
      {StatsRow::Tx, "collsns", "collisions"},
      {StatsRow::Tx, "compressed", "tx_compressed"},
      {StatsRow::RxErrors, "length", "rx_length_errors"},
      {StatsRow::RxErrors, "crc", "rx_crc_errors"},
      {StatsRow::RxErrors, "frame", "rx_frame_errors"},
      {StatsRow::RxErrors, "fifo", "rx_fifo_errors"},
      {StatsRow::RxErrors, "missed", "rx_missed_errors"},
      {StatsRow::RxErrors, "overrun", "rx_over_errors"},
      {StatsRow::RxErrors, "nohandler", "rx_nohandler"},
      {StatsRow::RxErrors, "otherhost", "rx_otherhost_dropped"},
      {StatsRow::TxErrors, "aborted", "tx_aborted_errors"},
      {StatsRow::TxErrors, "fifo", "tx_fifo_errors"},
      {StatsRow::TxErrors, "window", "tx_window_errors"},
      {StatsRow::TxErrors, "heartbeat", "tx_heartbeat_errors"},
  }};
  if (row == StatsRow::TxErrors && column == "heartbt") column = "heartbeat";
  for (const auto& c : kColumns) {
    if (c.row == row && c.word == column) return c.name;
  }
  return {};
}

std::optional<StatsRow> statsHeader(std::string_view t, std::string_view* columns) {
  struct Prefix {
    std::string_view text;
    StatsRow row;
  };
  static constexpr std::array<Prefix, 4> kPrefixes{{
      {"RX errors:", StatsRow::RxErrors},
      {"TX errors:", StatsRow::TxErrors},
      {"RX:", StatsRow::Rx},
      {"TX:", StatsRow::Tx},
  }};
  for (const auto& p : kPrefixes) {
    if (startsWith(t, p.text)) {
      *columns = t.substr(p.text.size());
      return p.row;
    }
  }
  return std::nullopt;
}

// Maps one values row onto the header's columns. A row with fewer values than columns was
// cut: its last value may be partial, so it is dropped too.
void applyStatsRow(StatsRow row, std::string_view columns, std::string_view values,
                   v1::NetDevice& netdev) {
  const auto cols = splitWhitespace(columns);
  const auto vals = splitWhitespace(values);
  std::size_t usable = std::min(cols.size(), vals.size());
  if (vals.size() < cols.size() && usable > 0) --usable;
  for (std::size_t i = 0; i < usable; ++i) {
    if (!isDecimal(vals[i])) continue;  // -h human-readable values are not exact
    if (row == StatsRow::TxErrors && cols[i] == "transns") {
      if (auto v = parseUnsigned(vals[i])) netdev.set_carrier_changes(*v);
      continue;
    }
    const std::string_view name = statName(row, cols[i]);
    if (name.empty()) continue;
    const bool seen = std::any_of(netdev.stats().begin(), netdev.stats().end(),
                                  [&](const v1::Counter& c) { return c.name() == name; });
    if (!seen) *netdev.add_stats() = makeCounter(name, vals[i], CounterSet::NetdevStats);
  }
}

bool isValuesRow(std::string_view t) {
  const auto words = splitWhitespace(t);
  return !words.empty() && std::all_of(words.begin(), words.end(), [](std::string_view w) {
    return std::isdigit(static_cast<unsigned char>(w.front())) != 0;
  });
}

}  // namespace

bool parseEthtoolStatsBlock(LineCursor& cursor, EvidenceBuilder& out) {
  CommandContext& ctx = out.context();
  const std::string_view t = trim(cursor.line());
  v1::NetDevice netdev;
  if (ctx.ethtool_stats_pending) netdev.set_name(ctx.ethtool_stats_dev);
  bool allow_spaces = true;
  if (t == "NIC statistics:") {
    cursor.next();
  } else if (ctx.ethtool_stats_pending && statLine(t, true)) {
    // the block follows its command line
  } else if (ctx.ethtool_stats_pending &&
             (t == "no stats available" || startsWith(t, "Cannot get stats"))) {
    if (startsWith(t, "Cannot")) out.addError(t);
    netdev.set_ethtool_unavailable_reason(std::string(t));
    ctx.ethtool_stats_pending = false;
    if (!netdev.name().empty()) out.addNetdev(std::move(netdev));
    cursor.next();
    return true;
  } else {
    LineCursor look = cursor;
    look.next();
    if (!statLine(t, false) || look.atEnd() || !statLine(look.line(), false)) return false;
    allow_spaces = false;
  }
  ctx.ethtool_stats_pending = false;
  consumeStats(cursor, allow_spaces, netdev, out);
  out.addNetdev(std::move(netdev));
  return true;
}

bool parseEthtoolInfoBlock(LineCursor& cursor, EvidenceBuilder& out) {
  CommandContext& ctx = out.context();
  const std::string_view t = trim(cursor.line());
  if (ctx.ethtool_info_pending && startsWith(t, "Cannot get driver information")) {
    out.addError(t);
    ctx.ethtool_info_pending = false;
    cursor.next();
    return true;
  }
  const auto first = splitKeyValue(t);
  if (!first || first->key != "driver") return false;
  if (!ctx.ethtool_info_pending) {
    LineCursor look = cursor;
    look.next();
    if (look.atEnd() || !isDriverInfoLine(look.line())) return false;
  }
  EthtoolDriverInfo info;
  if (ctx.ethtool_info_pending) info.netdev = ctx.ethtool_info_dev;
  ctx.ethtool_info_pending = false;
  while (!cursor.atEnd() && isDriverInfoLine(cursor.line())) {
    const auto kv = splitKeyValue(trim(cursor.line()));
    const std::string value(kv->value);
    if (kv->key == "driver") {
      if (!info.driver.empty()) break;  // the next device's block
      info.driver = value;
    } else if (kv->key == "version") {
      info.version = value;
    } else if (kv->key == "firmware-version") {
      info.firmware_version = value;
    } else if (kv->key == "bus-info") {
      info.bus_info = value;
    }
    cursor.next();
  }
  if (!info.netdev.empty() && looksLikePciAddress(info.bus_info)) {
    v1::NetDevice netdev;
    netdev.set_name(info.netdev);
    netdev.set_pci_address(info.bus_info);
    out.addNetdev(std::move(netdev));
  }
  out.addDriverInfo(std::move(info));
  return true;
}

bool parseIpLinkBlock(LineCursor& cursor, EvidenceBuilder& out) {
  const auto header = ipHeader(cursor.line());
  if (!header) return false;
  v1::NetDevice netdev;
  applyIpHeader(*header, netdev);
  cursor.next();
  while (!cursor.atEnd()) {
    const std::string_view line = cursor.line();
    const std::string_view t = trim(line);
    std::string_view columns;
    const auto row = statsHeader(t, &columns);
    if (!isIndented(line) && !startsWith(t, "link/") && !row) break;
    if (t.empty() || statLine(t, false)) break;  // not ip output: an ethtool -S block
    cursor.next();
    if (startsWith(t, "link/")) {
      applyLinkLine(t, netdev);
    } else if (row && !cursor.atEnd() && isValuesRow(trim(cursor.line()))) {
      applyStatsRow(*row, columns, trim(cursor.line()), netdev);
      cursor.next();
    } else if (startsWith(t, "inet ") || startsWith(t, "inet6 ")) {  // ip addr
      const auto words = splitWhitespace(t);
      const std::string_view a =
          words.size() > 1 ? words[1].substr(0, words[1].find('/')) : std::string_view{};
      if (!a.empty() && netdev.addresses_size() < 64) netdev.add_addresses(std::string(a));
    } else if (startsWith(t, "ipoib ")) {  // ip -d: "ipoib pkey  0xffff mode  datagram ..."
      const auto words = splitWhitespace(t);
      for (std::size_t i = 0; i + 2 < words.size(); ++i) {
        if (words[i] == "mode") netdev.set_mode(std::string(words[i + 1]));
      }
    }
  }
  out.addNetdev(std::move(netdev));
  return true;
}

}  // namespace ibc::core::tool_output
