#include "ibc/core/sysfs_values.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "ibc/core/text.h"

namespace ibc::core {

std::string_view stripOneNewline(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

Result<v1::EnumValue> parseEnumValue(std::string_view text) {
  const std::string_view raw = stripOneNewline(text);
  const std::string_view t = trim(raw);
  if (t.empty()) return Error{ErrorCode::Malformed, "empty value"};
  // Values come from files and pastes: kept printable (valid UTF-8, no control bytes), so a
  // snapshot always serialises and a terminal never receives an escape sequence.
  constexpr std::size_t kMaxEnumText = 256;
  v1::EnumValue out;
  out.set_raw(printable(raw, kMaxEnumText));
  out.set_code(-1);
  const auto colon = t.find(':');
  if (colon != std::string_view::npos) {
    if (auto n = parseUnsigned(trim(t.substr(0, colon))); n && *n < 1000) {
      out.set_code(static_cast<int32_t>(*n));
      out.set_name(printable(trim(t.substr(colon + 1)), kMaxEnumText));
      return out;
    }
  }
  if (auto n = parseUnsigned(t); n && *n < 1000) {
    out.set_code(static_cast<int32_t>(*n));
    return out;
  }
  out.set_name(printable(t, kMaxEnumText));
  return out;
}

namespace {

std::string normaliseName(std::string_view name) {
  // "PORT_ACTIVE (4)" → "active"; "LINK_UP" → "linkup"; "Link Up" → "linkup".
  std::string out;
  std::string_view n = name;
  if (auto paren = n.find('('); paren != std::string_view::npos) n = n.substr(0, paren);
  if (startsWithIgnoreCase(n, "PORT_")) n.remove_prefix(5);
  for (char c : n) {
    if (c == '_' || c == ' ' || c == '-' || c == '\t') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

PortState portStateFromName(std::string_view name) {
  const std::string n = normaliseName(name);
  if (n == "nop") return PortState::Nop;
  if (n == "down") return PortState::Down;
  if (n == "init" || n == "initialize" || n == "initializing") return PortState::Init;
  if (n == "armed") return PortState::Armed;
  if (n == "active") return PortState::Active;
  if (n == "activedefer") return PortState::ActiveDefer;
  return PortState::Unknown;
}

PhysState physStateFromName(std::string_view name) {
  const std::string n = normaliseName(name);
  if (n == "sleep") return PhysState::Sleep;
  if (n == "polling") return PhysState::Polling;
  if (n == "disabled") return PhysState::Disabled;
  // ibv_devinfo prints "PORT_CONFIGURATION TRAINNING" (sic).
  if (n == "portconfigurationtraining" || n == "configurationtraining" || n == "training" ||
      n == "configurationtrainning") {
    return PhysState::PortConfigurationTraining;
  }
  if (n == "linkup") return PhysState::LinkUp;
  if (n == "linkerrorrecovery") return PhysState::LinkErrorRecovery;
  if (n == "phytest" || n == "phytestmode") return PhysState::PhyTest;
  if (n == "nostatechange") return PhysState::NoStateChange;
  return PhysState::Unknown;
}

}  // namespace

PortState portStateOf(const v1::EnumValue& value) {
  if (value.raw().empty() && value.name().empty()) return PortState::Unknown;  // never read
  if (value.code() >= 0 && value.code() <= 5) {
    const PortState by_code = static_cast<PortState>(value.code());
    const PortState by_name = portStateFromName(value.name());
    if (value.name().empty() || by_name == by_code) return by_code;
    return PortState::Unknown;  // number and name disagree: trust neither
  }
  return portStateFromName(value.name());
}

PhysState physStateOf(const v1::EnumValue& value) {
  if (value.raw().empty() && value.name().empty()) return PhysState::Unknown;  // never read
  if (value.code() >= 0 && value.code() <= 7) {
    const PhysState by_code = static_cast<PhysState>(value.code());
    const PhysState by_name = physStateFromName(value.name());
    if (value.name().empty() || by_name == by_code) return by_code;
    return PhysState::Unknown;
  }
  return physStateFromName(value.name());
}

std::string_view portStateName(PortState state) {
  switch (state) {
    case PortState::Nop: return "NOP";
    case PortState::Down: return "DOWN";
    case PortState::Init: return "INIT";
    case PortState::Armed: return "ARMED";
    case PortState::Active: return "ACTIVE";
    case PortState::ActiveDefer: return "ACTIVE_DEFER";
    case PortState::Unknown: break;
  }
  return "UNKNOWN";
}

std::string_view physStateName(PhysState state) {
  switch (state) {
    case PhysState::NoStateChange: return "NoStateChange";
    case PhysState::Sleep: return "Sleep";
    case PhysState::Polling: return "Polling";
    case PhysState::Disabled: return "Disabled";
    case PhysState::PortConfigurationTraining: return "PortConfigurationTraining";
    case PhysState::LinkUp: return "LinkUp";
    case PhysState::LinkErrorRecovery: return "LinkErrorRecovery";
    case PhysState::PhyTest: return "PhyTest";
    case PhysState::Unknown: break;
  }
  return "Unknown";
}

Result<LinkRate> parseRate(std::string_view text) {
  std::string_view t = trim(stripOneNewline(text));
  const auto number = parseLeadingDouble(t);
  if (!number || *number < 0) return Error{ErrorCode::Malformed, "rate has no number"};
  LinkRate rate;
  rate.gbps = *number;
  const auto open = t.find('(');
  const auto close = t.find(')', open == std::string_view::npos ? 0 : open);
  if (open != std::string_view::npos && close != std::string_view::npos) {
    std::string_view inner = trim(t.substr(open + 1, close - open - 1));
    // "4X HDR", "4X", "1X EDR"
    const auto x = inner.find_first_of("xX");
    if (x != std::string_view::npos) {
      if (auto lanes = parseUnsigned(inner.substr(0, x)); lanes && *lanes <= 32) {
        rate.width_lanes = static_cast<uint32_t>(*lanes);
      }
      rate.speed_name = std::string(trim(inner.substr(x + 1)));
    }
  }
  return rate;
}

std::optional<uint64_t> parseUnsigned(std::string_view text) {
  std::string_view t = trim(text);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    t.remove_prefix(2);
    base = 16;
  }
  if (t.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

Result<uint64_t> parseCounterValue(std::string_view text) {
  const std::string_view t = trim(stripOneNewline(text));
  if (t.empty()) return Error{ErrorCode::Unavailable, "empty"};
  if (std::isdigit(static_cast<unsigned char>(t[0]))) {
    if (auto v = parseUnsigned(t)) return *v;
    // All digits but too long → overflow; digits then junk → not a counter.
    if (std::all_of(t.begin(), t.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      return Error{ErrorCode::Malformed, "value exceeds 64 bits"};
    }
  }
  return Error{ErrorCode::Unavailable, std::string(t.substr(0, 64))};
}

std::string_view counterGroupName(CounterGroup group) {
  switch (group) {
    case CounterGroup::PortCounters: return "counters";
    case CounterGroup::PortCountersExt: return "counters_ext";
    case CounterGroup::HwCounters: return "hw_counters";
    case CounterGroup::Ethtool: return "ethtool";
    case CounterGroup::NetdevStats: return "stats";
  }
  return "counters";
}

uint32_t counterWidthBits(std::string_view name, CounterSet set) {
  if (set == CounterSet::PortCountersExt) return 64;
  if (set == CounterSet::HwCounters || set == CounterSet::Ethtool ||
      set == CounterSet::NetdevStats) {
    return 64;
  }
  // IB PMA PortCounters attribute widths (IBTA vol 1, 16.1.3.5). The kernel serves the
  // data/packet counters from PortCountersExtended when the HCA supports it, so those
  // are 64-bit in practice; a legacy-only PMA pins them at 2^32-1 (caught as saturated by
  // the 32-bit check in rules when the value equals it).
  struct Width {
    std::string_view name;
    uint32_t bits;
  };
  static constexpr std::array<Width, 18> kWidths{{
      {"symbol_error", 16},
      {"link_error_recovery", 8},
      {"link_downed", 8},
      {"port_rcv_errors", 16},
      {"port_rcv_remote_physical_errors", 16},
      {"port_rcv_switch_relay_errors", 16},
      {"port_xmit_discards", 16},
      {"port_xmit_constraint_errors", 8},
      {"port_rcv_constraint_errors", 8},
      {"local_link_integrity_errors", 4},
      {"excessive_buffer_overrun_errors", 4},
      {"VL15_dropped", 16},
      {"port_xmit_wait", 32},
      {"port_xmit_data", 64},
      {"port_rcv_data", 64},
      {"port_xmit_packets", 64},
      {"port_rcv_packets", 64},
      {"unicast_xmit_packets", 64},
  }};
  for (const auto& w : kWidths) {
    if (w.name == name) return w.bits;
  }
  return 0;
}

bool isSaturated(uint64_t value, uint32_t width_bits) {
  if (width_bits == 0 || width_bits > 64) return false;
  const uint64_t max =
      width_bits == 64 ? std::numeric_limits<uint64_t>::max() : ((uint64_t{1} << width_bits) - 1);
  return value == max;
}

v1::Counter makeCounter(std::string_view name, std::string_view text, CounterSet set) {
  v1::Counter c;
  c.set_name(printable(name, 128));
  c.set_width_bits(counterWidthBits(name, set));
  auto v = parseCounterValue(text);
  if (v.ok()) {
    c.set_value(*v);
  } else {
    c.set_unavailable_reason(printable(v.error().message));  // it quotes the file's bytes
  }
  return c;
}

std::optional<double> parsePcieSpeedGts(std::string_view text) {
  auto v = parseLeadingDouble(trim(stripOneNewline(text)));
  if (!v || *v <= 0) return std::nullopt;
  return v;
}

std::optional<uint32_t> parsePcieWidth(std::string_view text) {
  std::string_view t = trim(stripOneNewline(text));
  if (!t.empty() && (t[0] == 'x' || t[0] == 'X')) t.remove_prefix(1);
  auto v = parseUnsigned(t);
  if (!v || *v == 0 || *v > 64) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

bool isZeroGid(std::string_view gid) {
  bool any_digit = false;
  for (char c : trim(gid)) {
    if (c == ':') continue;
    if (c != '0') return false;
    any_digit = true;
  }
  return any_digit;
}

bool isZeroGuid(std::string_view guid) {
  std::string_view g = trim(guid);
  if (startsWithIgnoreCase(g, "0x")) g.remove_prefix(2);
  return isZeroGid(g);
}

namespace {
bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
}  // namespace

bool isGuidShaped(std::string_view text) {
  std::string_view g = trim(text);
  if (startsWithIgnoreCase(g, "0x")) g.remove_prefix(2);
  std::size_t digits = 0;
  std::size_t run = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (isHex(g[i])) {
      ++digits;
      ++run;
    } else if (g[i] == ':' && (run == 2 || run == 4) && i + 1 < g.size()) {
      run = 0;
    } else {
      return false;
    }
  }
  return digits == 16;
}

bool isMacShaped(std::string_view text) {
  const std::string_view m = trim(text);
  const auto octets = (m.size() + 1) / 3;
  if ((octets != 6 && octets != 20) || m.size() != octets * 3 - 1) return false;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (i % 3 == 2 ? m[i] != ':' : !isHex(m[i])) return false;
  }
  return true;
}

bool isFirmwareVersionShaped(std::string_view text) {
  const std::string_view v = trim(text);
  std::size_t i = 0;
  int parts = 0;
  while (i < v.size()) {
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) return false;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
    ++parts;
    if (i == v.size() || v[i] != '.') break;
    ++i;
  }
  if (parts < 2) return false;
  const std::string_view rest = trim(v.substr(i));
  return rest.empty() || (rest.front() == '(' && rest.back() == ')');
}

std::string_view mellanoxVirtualFunctionName(std::string_view device_id) {
  // From the mlx4/mlx5 drivers' PCI tables (entries flagged as VFs) and pci.ids.
  struct Vf {
    uint32_t id;
    std::string_view name;
  };
  static constexpr std::array<Vf, 11> kVfs{{
      {0x1002, "ConnectX-2 VF"},
      {0x1004, "ConnectX-3 VF"},
      {0x1012, "Connect-IB VF"},
      {0x1014, "ConnectX-4 VF"},
      {0x1016, "ConnectX-4 Lx VF"},
      {0x1018, "ConnectX-5 VF"},
      {0x101a, "ConnectX-5 Ex VF"},
      {0x101c, "ConnectX-6 VF"},
      {0x101e, "ConnectX family mlx5Gen VF"},
      {0xa2d3, "BlueField VF"},
      {0xa2d7, "BlueField-2 VF"},
  }};
  std::string_view t = trim(device_id);
  std::optional<uint64_t> id;
  if (startsWithIgnoreCase(t, "0x")) {
    id = parseUnsigned(t);
  } else if (auto dec = parseUnsigned(t)) {
    id = dec;  // ibv_devinfo vendor_part_id is decimal
  }
  if (!id) return {};
  for (const auto& vf : kVfs) {
    if (vf.id == *id) return vf.name;
  }
  return {};
}

std::string hcaTypeToDeviceId(std::string_view hca_type) {
  std::string_view t = trim(stripOneNewline(hca_type));
  if (!startsWithIgnoreCase(t, "MT")) return {};
  auto n = parseUnsigned(t.substr(2));
  if (!n || *n > 0xffff) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "0x0000";
  uint64_t v = *n;
  for (int i = 5; i >= 2; --i) {
    out[static_cast<size_t>(i)] = kHex[v & 0xf];
    v >>= 4;
  }
  return out;
}

bool isVmIdShaped(std::string_view id) {
  if (id.size() < 6 || id == "product_uuid" || id == "product_serial") return false;
  if (id.find_first_not_of("0-") == std::string_view::npos) return false;
  if (id.find_first_not_of("fF-") == std::string_view::npos) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace ibc::core
