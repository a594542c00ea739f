// Block parsers for infiniband-diags and libibverbs output: ibstat, ibstatus, ibv_devinfo,
// perfquery, ibportstate, ibdev2netdev. Formats follow the tools' printf calls
// (rdma-core infiniband-diags/ibstat.c, scripts/ibstatus, libibverbs/examples/devinfo.c,
// libibmad mad_dump_field "Name:....value") and the real pastes in
// tests/fixtures/real/ibtools.

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "tool_output_internal.h"

namespace ibc::core::tool_output {

namespace {

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& set, std::string_view key) {
  return std::find(set.begin(), set.end(), key) != set.end();
}

v1::RdmaPort* portOf(v1::RdmaDevice& device, uint32_t number) {
  for (auto& p : *device.mutable_ports()) {
    if (p.port() == number) return &p;
  }
  if (static_cast<std::size_t>(device.ports_size()) >= kMaxToolPortsPerDevice) return nullptr;
  v1::RdmaPort* p = device.add_ports();
  p->set_port(number);
  return p;
}

void setLid(std::string_view text, std::string* raw, v1::RdmaPort& port, bool sm) {
  *raw = std::string(text);
  const auto v = parseUnsigned(text);
  if (!v || *v > UINT32_MAX) return;
  if (sm) {
    port.set_sm_lid(static_cast<uint32_t>(*v));
  } else {
    port.set_lid(static_cast<uint32_t>(*v));
  }
}

// "PORT_ACTIVE (4)", "LINK_UP (5)" → {4, "PORT_ACTIVE", raw}; no "(N)" → {-1, text, raw}.
v1::EnumValue codedEnum(std::string_view text) {
  v1::EnumValue e = namedEnum(text);
  const std::string_view t = trim(text);
  const auto open = t.rfind('(');
  if (open != std::string_view::npos && endsWith(t, ")")) {
    if (auto code = parseInt(t.substr(open + 1, t.size() - open - 2));
        code && *code >= 0 && *code < 1000) {
      e.set_code(static_cast<int32_t>(*code));
      e.set_name(printable(trim(t.substr(0, open)), 256));
    }
  }
  return e;
}

// "4X", "4X (2)", "12X" → lanes.
std::optional<uint32_t> widthLanes(std::string_view text) {
  const std::string_view t = trim(text);
  const auto x = t.find_first_of("xX");
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  auto lanes = parseU32(t.substr(0, x));
  if (!lanes || *lanes == 0 || *lanes > 32) return std::nullopt;
  return lanes;
}

std::optional<double> laneGbps(std::string_view text) {
  const auto v = parseLeadingDouble(text);
  if (!v || !(*v > 0) || *v > 10000) return std::nullopt;
  return v;
}

void setRate(v1::RdmaPort& port, uint32_t lanes, double lane, std::string_view speed_name,
             std::string raw) {
  port.set_width_lanes(lanes);
  port.set_rate_gbps(lanes * nominalLaneGbps(lane));
  port.set_speed_name(std::string(speed_name.empty() ? speedNameForLane(lane) : speed_name));
  port.set_rate_raw(std::move(raw));
}

std::string hex4(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

// ---- ibstat ------------------------------------------------------------------------------

constexpr std::array<std::string_view, 5> kIbstatNodeTypes{
    {"CA", "Switch", "Router", "iWARP RNIC", "???"}};
constexpr std::array<std::string_view, 5> kIbstatDeviceKeys{
    {"Number of ports", "Firmware version", "Hardware version", "Node GUID", "System image GUID"}};
constexpr std::array<std::string_view, 9> kIbstatPortKeys{
    {"State", "Physical state", "Rate", "Base lid", "LMC", "SM lid", "Capability mask", "Port GUID",
     "Link layer"}};

struct IbstatHeader {
  std::string_view node_type;
  std::string_view name;
};

// "CA 'mlx5_0'" (ca_dump) or "CA: 'mlx5_0'" (one port asked for).
std::optional<IbstatHeader> ibstatHeader(std::string_view line) {
  const std::string_view t = trim(line);
  for (std::string_view type : kIbstatNodeTypes) {
    if (!startsWith(t, type)) continue;
    std::string_view rest = t.substr(type.size());
    if (startsWith(rest, ":")) rest.remove_prefix(1);
    if (rest.empty() || (rest.front() != ' ' && rest.front() != '\t')) continue;
    rest = trimLeft(rest);
    if (rest.size() < 2 || rest.front() != '\'' || rest.back() != '\'') continue;
    const std::string_view name = rest.substr(1, rest.size() - 2);
    if (name.find('\'') != std::string_view::npos) continue;
    return IbstatHeader{type, name};
  }
  return std::nullopt;
}

// "Port 1:" → 1.
std::optional<uint32_t> ibstatPortHeader(std::string_view t) {
  if (!startsWith(t, "Port ") || !endsWith(t, ":")) return std::nullopt;
  return parseU32(t.substr(5, t.size() - 6));
}

bool isIbstatDeviceKey(std::string_view key) {
  if (contains(kIbstatDeviceKeys, key)) return true;
  return endsWith(key, " type") &&
         contains(kIbstatNodeTypes, key.substr(0, key.size() - std::string_view(" type").size()));
}

void applyIbstatField(v1::RdmaDevice& dev, v1::RdmaPort* port, const KeyValue& kv) {
  const std::string value(kv.value);
  if (endsWith(kv.key, " type")) {
    dev.set_hca_type(value);
  } else if (kv.key == "Firmware version") {
    dev.set_fw_ver(value);
  } else if (kv.key == "Node GUID") {
    dev.set_node_guid(value);
  } else if (kv.key == "System image GUID") {
    dev.set_sys_image_guid(value);
  }
  if (port == nullptr || value.empty()) return;
  if (kv.key == "State") {
    *port->mutable_state() = namedEnum(kv.value);
  } else if (kv.key == "Physical state") {
    *port->mutable_phys_state() = namedEnum(kv.value);
  } else if (kv.key == "Rate") {
    port->set_rate_raw(value);
    if (auto rate = parseRate(kv.value); rate.ok()) {
      port->set_rate_gbps(rate->gbps);
      port->set_width_lanes(rate->width_lanes);
      port->set_speed_name(rate->speed_name);
    }
    if (value.find("(FDR10)") != std::string::npos) port->set_speed_name("FDR10");
  } else if (kv.key == "Base lid") {
    setLid(kv.value, port->mutable_lid_raw(), *port, false);
  } else if (kv.key == "SM lid") {
    setLid(kv.value, port->mutable_sm_lid_raw(), *port, true);
  } else if (kv.key == "Port GUID") {
    port->set_port_guid(value);
  } else if (kv.key == "Link layer") {
    port->set_link_layer(std::string(trim(value)));
  }
}

// ibpanic lines ibstat itself prints (ibstat.c main()).
bool parseIbstatPanic(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  if (t.find("ibpanic:") == std::string_view::npos) return false;
  const bool stat_failed = t.find("stat of IB device '") != std::string_view::npos;
  const bool not_found = t.find("IB device can't be found") != std::string_view::npos;
  const bool cant_list = t.find("can't list IB device names") != std::string_view::npos;
  if (!stat_failed && !not_found && !cant_list) return false;
  out.addError(t);
  if (cant_list) {
    out.setNoRdmaDevices();
  } else if (auto name = quoted(t.substr(t.find("ibpanic:")))) {
    v1::RdmaDevice dev;
    dev.set_name(std::string(*name));
    dev.set_missing_reason(boundedLine(t));
    out.addDevice(std::move(dev), kKindIbstat);
  }
  cursor.next();
  return true;
}

// ---- ibv_devinfo -------------------------------------------------------------------------

constexpr std::array<std::string_view, 34> kDevinfoKeys{{
    "transport",       "fw_ver",      "node_guid",      "sys_image_guid",  "vendor_id",
    "vendor_part_id",  "hw_ver",      "board_id",       "phys_port_cnt",   "port",
    "state",           "max_mtu",     "active_mtu",     "sm_lid",          "port_lid",
    "port_id",         "port_lmc",    "link_layer",     "max_msg_sz",      "port_cap_flags",
    "port_cap_flags2", "max_vl_num",  "bad_pkey_cntr",  "qkey_viol_cntr",  "sm_sl",
    "pkey_tbl_len",    "gid_tbl_len", "subnet_timeout", "init_type_reply", "active_width",
    "active_speed",    "phys_state",  "Device ports",   "max_qp",
}};

// 1 SDR, 2 DDR, 4 QDR, 8 FDR10, 16 FDR, 32 EDR, 64 HDR, 128 NDR, 256 XDR (ibv_port_attr).
std::string_view verbsSpeedName(int64_t code) {
  switch (code) {
    case 1: return "SDR";
    case 2: return "DDR";
    case 4: return "QDR";
    case 8: return "FDR10";
    case 16: return "FDR";
    case 32: return "EDR";
    case 64: return "HDR";
    case 128: return "NDR";
    case 256: return "XDR";
    default: return {};
  }
}

struct DevinfoLink {
  std::string width_raw;
  std::string speed_raw;
};

bool isMellanoxVendor(std::string_view vendor_id) {
  const auto v = parseUnsigned(vendor_id);
  return !v || *v == 0x02c9 || *v == 0x15b3;  // IEEE OUI (ibv_devinfo) or PCI vendor id
}

void finishDevinfoDevice(v1::RdmaDevice& dev,
                         const std::vector<std::pair<uint32_t, DevinfoLink>>& links,
                         std::optional<uint32_t> part_id) {
  if (part_id && isMellanoxVendor(dev.pci().vendor_id())) {
    const std::string hex = hex4(*part_id);
    const std::string_view vf = mellanoxVirtualFunctionName(hex);
    if (!vf.empty()) {
      const std::string evidence = "ibv_devinfo vendor_part_id " + std::to_string(*part_id) +
                                   " = device id " + hex + " (" + std::string(vf) + ")";
      dev.mutable_pci()->set_is_virtual_function(true);
      dev.mutable_pci()->set_virtual_function_evidence(evidence);
      dev.set_is_virtual_function(true);
      dev.set_virtual_function_evidence(evidence);
    }
  }
  for (const auto& [number, link] : links) {
    v1::RdmaPort* port = portOf(dev, number);
    if (port == nullptr) continue;
    const auto lanes = widthLanes(link.width_raw);
    const auto lane = laneGbps(link.speed_raw);
    if (lanes && lane) {
      const v1::EnumValue speed = codedEnum(link.speed_raw);
      setRate(*port, *lanes, *lane, verbsSpeedName(speed.code()),
              "active_width " + link.width_raw + ", active_speed " + link.speed_raw);
    } else if (lanes) {
      port->set_width_lanes(*lanes);
    }
  }
}

bool parseDevinfoErrors(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  if (t == "No IB devices found") {
    out.addError(t);
    out.setNoRdmaDevices();
  } else if (startsWith(t, "IB device '") && endsWith(t, "' wasn't found")) {
    out.addError(t);
    v1::RdmaDevice dev;
    dev.set_name(std::string(*quoted(t)));
    dev.set_missing_reason(boundedLine(t));
    out.addDevice(std::move(dev), kKindIbvDevinfo);
  } else if (startsWith(t, "Failed to get IB devices list") ||
             startsWith(t, "Failed to open device") || startsWith(t, "Failed to query device") ||
             startsWith(t, "Failed to query port") || startsWith(t, "Failed to query gid") ||
             t == "Invalid port requested for device") {
    out.addError(t);
  } else {
    return false;
  }
  cursor.next();
  return true;
}

// `ibv_devinfo -l`: "2 HCAs found:" then one indented name per line.
bool parseDevinfoList(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  if (!endsWith(t, " found:")) return false;
  const auto words = splitWhitespace(t);
  if (words.size() != 3 || (words[1] != "HCAs" && words[1] != "HCA") || words[2] != "found:") {
    return false;
  }
  const auto count = parseU32(words[0]);
  if (!count) return false;
  if (*count == 0) out.setNoRdmaDevices();
  cursor.next();
  while (!cursor.atEnd() && isIndented(cursor.line())) {
    const auto names = splitWhitespace(cursor.line());
    if (names.size() != 1) break;
    v1::RdmaDevice dev;
    dev.set_name(std::string(names[0]));
    out.addDevice(std::move(dev), kKindIbvDevinfo);
    cursor.next();
  }
  return true;
}

// ---- perfquery ---------------------------------------------------------------------------

struct PerfName {
  std::string_view tool;
  std::string_view sysfs;
};
constexpr std::array<PerfName, 21> kPerfNames{{
    {"PortXmitData", "port_xmit_data"},
    {"PortRcvData", "port_rcv_data"},
    {"PortXmitPkts", "port_xmit_packets"},
    {"PortRcvPkts", "port_rcv_packets"},
    {"PortUnicastXmitPkts", "unicast_xmit_packets"},
    {"PortUnicastRcvPkts", "unicast_rcv_packets"},
    {"PortMulticastXmitPkts", "multicast_xmit_packets"},
    {"PortMulticastRcvPkts", "multicast_rcv_packets"},
    {"SymbolErrorCounter", "symbol_error"},
    {"LinkErrorRecoveryCounter", "link_error_recovery"},
    {"LinkDownedCounter", "link_downed"},
    {"PortRcvErrors", "port_rcv_errors"},
    {"PortRcvRemotePhysicalErrors", "port_rcv_remote_physical_errors"},
    {"PortRcvSwitchRelayErrors", "port_rcv_switch_relay_errors"},
    {"PortXmitDiscards", "port_xmit_discards"},
    {"PortXmitConstraintErrors", "port_xmit_constraint_errors"},
    {"PortRcvConstraintErrors", "port_rcv_constraint_errors"},
    {"LocalLinkIntegrityErrors", "local_link_integrity_errors"},
    {"ExcessiveBufferOverrunErrors", "excessive_buffer_overrun_errors"},
    {"VL15Dropped", "VL15_dropped"},
    {"PortXmitWait", "port_xmit_wait"},
}};
constexpr std::array<std::string_view, 4> kPerfSelectors{
    {"PortSelect", "CounterSelect", "CounterSelect2", "PortSelect2"}};

// PortXmitData et al.: the data and packet counters, 64-bit in PortCountersExtended and
// 32-bit in the legacy PortCounters attribute.
bool isDataOrPacketCounter(std::string_view sysfs_name) {
  return endsWith(sysfs_name, "_data") || endsWith(sysfs_name, "_packets");
}

// "QP1Dropped" → "qp1_dropped", "PortLocalPhysicalErrors" → "port_local_physical_errors".
std::string snakeCase(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (std::isupper(c) && i > 0) {
      const auto prev = static_cast<unsigned char>(name[i - 1]);
      const bool next_lower =
          i + 1 < name.size() && std::islower(static_cast<unsigned char>(name[i + 1]));
      if (std::islower(prev) || std::isdigit(prev) || (std::isupper(prev) && next_lower)) {
        out.push_back('_');
      }
    }
    out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

std::string perfSysfsName(std::string_view tool_name) {
  for (const auto& n : kPerfNames) {
    if (n.tool == tool_name) return std::string(n.sysfs);
  }
  return snakeCase(tool_name);
}

bool isPerfqueryKey(std::string_view key) {
  if (contains(kPerfSelectors, key)) return true;
  return std::any_of(kPerfNames.begin(), kPerfNames.end(),
                     [&](const PerfName& n) { return n.tool == key; });
}

struct LidPort {
  std::optional<uint32_t> lid;
  std::optional<uint32_t> port;
};

// "... Lid 21 port 1 (CapMask: ...)" → {21, 1}. "port N" may end a complete header
// (ibportstate's does); "Lid N" never does, so a Lid ending the text may be cut short.
LidPort lidPortOf(std::string_view header) {
  LidPort out;
  const auto words = splitWhitespace(header);
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "Lid" && !out.lid && i + 2 < words.size()) out.lid = parseU32(words[i + 1]);
    if (words[i] == "port" && !out.port) out.port = parseU32(words[i + 1]);
  }
  return out;
}

std::string lidDeviceName(std::optional<uint32_t> lid) {
  return lid ? "lid:" + std::to_string(*lid) : std::string("lid:unknown");
}

// ---- ibportstate -------------------------------------------------------------------------

constexpr std::array<std::string_view, 40> kPortInfoKeys{{
    "Mkey",
    "GidPrefix",
    "Lid",
    "SMLid",
    "CapMask",
    "DiagCode",
    "MkeyLeasePeriod",
    "LocalPort",
    "LinkWidthEnabled",
    "LinkWidthSupported",
    "LinkWidthActive",
    "LinkSpeedSupported",
    "LinkState",
    "PhysLinkState",
    "LinkDownDefState",
    "ProtectBits",
    "LMC",
    "LinkSpeedActive",
    "LinkSpeedEnabled",
    "NeighborMTU",
    "SMSL",
    "VLCap",
    "InitType",
    "VLHighLimit",
    "VLArbHighCap",
    "VLArbLowCap",
    "InitReply",
    "MtuCap",
    "VLStallCount",
    "HoqLife",
    "OperVLs",
    "MkeyViolations",
    "PkeyViolations",
    "QkeyViolations",
    "GuidCap",
    "SubnetTimeout",
    "LinkSpeedExtActive",
    "LinkSpeedExtSupported",
    "LinkSpeedExtEnabled",
    "LinkSpeedExt2Active",
}};

struct PortInfoFields {
  std::string link_state, phys_state, width, speed, speed_ext, speed_ext2;
  std::string lid, sm_lid;
  std::optional<uint32_t> local_port;
};

void applyPortInfo(PortInfoFields& f, const KeyValue& kv) {
  const std::string value(kv.value);
  if (kv.key == "LinkState") f.link_state = value;
  if (kv.key == "PhysLinkState") f.phys_state = value;
  if (kv.key == "LinkWidthActive") f.width = value;
  if (kv.key == "LinkSpeedActive") f.speed = value;
  if (kv.key == "LinkSpeedExtActive") f.speed_ext = value;
  if (kv.key == "LinkSpeedExt2Active") f.speed_ext2 = value;
  if (kv.key == "Lid") f.lid = value;
  if (kv.key == "SMLid") f.sm_lid = value;
  if (kv.key == "LocalPort") f.local_port = parseU32(kv.value);
}

void emitPortInfo(const PortInfoFields& f, LidPort header, EvidenceBuilder& out) {
  std::optional<uint32_t> lid = header.lid;
  if (!lid && !f.lid.empty()) lid = parseU32(f.lid);
  const bool any_field = !f.link_state.empty() || !f.phys_state.empty() || !f.width.empty() ||
                         !f.speed.empty() || !f.speed_ext.empty() || !f.speed_ext2.empty() ||
                         !f.sm_lid.empty() || f.local_port;
  if (!lid && !any_field) return;  // e.g. a header cut before its LID
  v1::RdmaDevice dev;
  dev.set_name(lidDeviceName(lid));
  v1::RdmaPort* port = dev.add_ports();
  port->set_port(header.port.value_or(f.local_port.value_or(0)));
  if (!f.link_state.empty()) *port->mutable_state() = namedEnum(f.link_state);
  if (!f.phys_state.empty()) *port->mutable_phys_state() = namedEnum(f.phys_state);
  if (!f.lid.empty()) setLid(f.lid, port->mutable_lid_raw(), *port, false);
  if (!f.sm_lid.empty()) setLid(f.sm_lid, port->mutable_sm_lid_raw(), *port, true);
  // The active lane speed: the newest extended field that holds a speed wins (PortInfo
  // says LinkSpeedActive is superseded when LinkSpeedExtActive is non-zero).
  const std::array<std::pair<std::string_view, std::string_view>, 3> speeds{{
      {"LinkSpeedExt2Active", f.speed_ext2},
      {"LinkSpeedExtActive", f.speed_ext},
      {"LinkSpeedActive", f.speed},
  }};
  std::string_view speed_field;
  std::string_view speed_text;
  for (const auto& [field, text] : speeds) {
    if (laneGbps(text)) {
      speed_field = field;
      speed_text = text;
      break;
    }
  }
  const auto lanes = widthLanes(f.width);
  const auto lane = laneGbps(speed_text);
  if (lanes && lane) {
    setRate(*port, *lanes, *lane, {},
            "LinkWidthActive " + f.width + ", " + std::string(speed_field) + " " +
                std::string(speed_text));
  } else if (lanes) {
    port->set_width_lanes(*lanes);
  }
  out.addDevice(std::move(dev), kKindIbportstate);
}

// ---- block parsers -----------------------------------------------------------------------

// An excerpt that starts at "Port N:" (its "CA '...'" header left out) when the next line is
// one of ibstat's port fields.
bool startsHeaderlessPort(const LineCursor& cursor) {
  if (!ibstatPortHeader(trim(cursor.line()))) return false;
  LineCursor look = cursor;
  look.next();
  if (look.atEnd()) return false;
  const auto kv = splitKeyValue(trim(look.line()));
  return kv && contains(kIbstatPortKeys, kv->key);
}

}  // namespace

bool parseIbstatBlock(LineCursor& cursor, EvidenceBuilder& out) {
  if (parseIbstatPanic(cursor, out)) return true;
  const auto header = ibstatHeader(cursor.line());
  v1::RdmaDevice dev;
  v1::RdmaPort* port = nullptr;
  if (header) {
    dev.set_name(std::string(header->name));
    dev.set_node_type(std::string(header->node_type));
    cursor.next();
  } else if (startsHeaderlessPort(cursor)) {
    dev.set_name(std::string(kUnnamedIbstatDevice));
  } else {
    return false;
  }
  while (!cursor.atEnd()) {
    const std::string_view line = cursor.line();
    if (isBlank(line)) break;
    const std::string_view t = trim(line);
    if (auto number = ibstatPortHeader(t)) {
      port = portOf(dev, *number);
      if (port == nullptr) out.markTruncated();
      cursor.next();
      continue;
    }
    const auto kv = splitKeyValue(t);
    const bool known = kv && (isIbstatDeviceKey(kv->key) || contains(kIbstatPortKeys, kv->key));
    if (!known && !isIndented(line)) break;
    if (known) applyIbstatField(dev, port, *kv);
    cursor.next();
  }
  out.addDevice(std::move(dev), kKindIbstat);
  return true;
}

bool parseIbstatusBlock(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  if (startsWith(t, "Fatal error")) {  // the script's fatal(): "Fatal error:  ..."
    out.addError(t);
    if (t.find("sys files not found") != std::string_view::npos) {
      const auto name = quoted(t);
      if (!name || name->empty() || name->find('*') != std::string_view::npos) {
        out.setNoRdmaDevices();
      } else {
        v1::RdmaDevice dev;
        dev.set_name(std::string(*name));
        dev.set_missing_reason(boundedLine(t));
        out.addDevice(std::move(dev), kKindIbstatus);
      }
    } else if (t.find("No devices") != std::string_view::npos) {
      out.setNoRdmaDevices();
    }
    cursor.next();
    return true;
  }
  // "Infiniband device 'mlx4_0' port 1 status:"
  if (!startsWith(t, "Infiniband device '") || !endsWith(t, " status:")) return false;
  const auto name = quoted(t);
  const auto port_at = t.rfind("' port ");
  if (!name || port_at == std::string_view::npos) return false;
  const std::string_view port_text =
      t.substr(port_at + 7, t.size() - (port_at + 7) - std::string_view(" status:").size());
  const auto number = parseU32(port_text);
  if (!number) return false;
  static constexpr std::array<std::string_view, 7> kKeys{
      {"default gid", "base lid", "sm lid", "state", "phys state", "rate", "link_layer"}};
  v1::RdmaDevice dev;
  dev.set_name(std::string(*name));
  v1::RdmaPort& port = *dev.add_ports();
  port.set_port(*number);
  cursor.next();
  while (!cursor.atEnd()) {
    const std::string_view line = cursor.line();
    if (isBlank(line)) break;
    const auto kv = splitKeyValue(line);
    const bool known = kv && contains(kKeys, kv->key);
    if (!known && !isIndented(line)) break;
    cursor.next();
    // The script prints "unknown" when the sysfs file is unreadable.
    if (!known || kv->value.empty() || kv->value == "unknown") continue;
    if (kv->key == "default gid") {
      if (!isZeroGid(kv->value)) port.add_gids(std::string(kv->value));
    } else if (kv->key == "base lid") {
      setLid(kv->value, port.mutable_lid_raw(), port, false);
    } else if (kv->key == "sm lid") {
      setLid(kv->value, port.mutable_sm_lid_raw(), port, true);
    } else if (kv->key == "state") {
      if (auto e = parseEnumValue(kv->value); e.ok()) *port.mutable_state() = *e;
    } else if (kv->key == "phys state") {
      if (auto e = parseEnumValue(kv->value); e.ok()) *port.mutable_phys_state() = *e;
    } else if (kv->key == "rate") {
      port.set_rate_raw(std::string(kv->value));
      if (auto rate = parseRate(kv->value); rate.ok()) {
        port.set_rate_gbps(rate->gbps);
        port.set_width_lanes(rate->width_lanes);
        port.set_speed_name(rate->speed_name);
      }
    } else if (kv->key == "link_layer") {
      port.set_link_layer(std::string(trim(kv->value)));
    }
  }
  out.addDevice(std::move(dev), kKindIbstatus);
  return true;
}

bool parseIbvDevinfoBlock(LineCursor& cursor, EvidenceBuilder& out) {
  if (parseDevinfoErrors(cursor, out) || parseDevinfoList(cursor, out)) return true;
  const std::string_view t = trim(cursor.line());
  if (!startsWith(t, "hca_id:")) return false;
  v1::RdmaDevice dev;
  dev.set_name(std::string(trim(t.substr(7))));
  v1::RdmaPort* port = nullptr;
  std::optional<uint32_t> part_id;
  std::vector<std::pair<uint32_t, DevinfoLink>> links;
  auto link = [&]() -> DevinfoLink& {
    if (links.empty() || links.back().first != port->port())
      links.emplace_back(port->port(), DevinfoLink{});
    return links.back().second;
  };
  cursor.next();
  while (!cursor.atEnd()) {
    const std::string_view line = cursor.line();
    if (isBlank(line)) {
      // ibv_devinfo prints a blank line after each port (and inside -v device output);
      // the device goes on only with another port or a -v section.
      LineCursor look = cursor;
      while (!look.atEnd() && isBlank(look.line())) look.next();
      if (look.atEnd()) break;
      const std::string_view next = trim(look.line());
      if (!startsWith(next, "port:") && !startsWith(next, "cq moderation caps") &&
          !startsWith(next, "maximum available device memory")) {
        break;
      }
      cursor = look;
      continue;
    }
    const std::string_view lt = trim(line);
    if (startsWith(lt, "hca_id:")) break;
    const auto kv = splitKeyValue(lt);
    const bool known = kv && (contains(kDevinfoKeys, kv->key) || startsWith(kv->key, "GID["));
    if (!known && !isIndented(line)) break;
    cursor.next();
    if (!known) continue;
    const std::string_view key = kv->key;
    const std::string_view value = kv->value;
    if (key == "fw_ver") {
      dev.set_fw_ver(std::string(value));
    } else if (key == "node_guid") {
      dev.set_node_guid(std::string(value));
    } else if (key == "sys_image_guid") {
      dev.set_sys_image_guid(std::string(value));
    } else if (key == "board_id") {
      dev.set_board_id(std::string(value));
    } else if (key == "vendor_id") {
      dev.mutable_pci()->set_vendor_id(std::string(value));
    } else if (key == "vendor_part_id") {
      part_id = parseU32(value);
      if (part_id && *part_id <= 0xffff) {
        dev.mutable_pci()->set_device_id(hex4(*part_id));
      } else {
        part_id.reset();
      }
    } else if (key == "port") {
      const auto number = parseU32(value);
      port = number ? portOf(dev, *number) : nullptr;
      if (number && port == nullptr) out.markTruncated();
    } else if (port == nullptr || value.empty()) {
      continue;
    } else if (key == "state") {
      *port->mutable_state() = codedEnum(value);
    } else if (key == "phys_state") {
      *port->mutable_phys_state() = codedEnum(value);
    } else if (key == "active_mtu") {
      if (auto mtu = parseLeadingDouble(value); mtu && *mtu >= 256 && *mtu <= 65536) {
        port->set_active_mtu(static_cast<uint32_t>(*mtu));
      }
    } else if (key == "sm_lid") {
      setLid(value, port->mutable_sm_lid_raw(), *port, true);
    } else if (key == "port_lid" || key == "port_id") {
      setLid(value, port->mutable_lid_raw(), *port, false);
    } else if (key == "link_layer") {
      port->set_link_layer(std::string(trim(value)));
    } else if (key == "active_width") {
      link().width_raw = std::string(value);
    } else if (key == "active_speed") {
      link().speed_raw = std::string(value);
    } else if (startsWith(key, "GID[")) {
      // "fe80:0000:...", newer rdma-core adds ", RoCE v2".
      const std::string_view gid = trim(value.substr(0, value.find(',')));
      if (!gid.empty() && !isZeroGid(gid) && port->gids_size() < 1024) {
        port->add_gids(std::string(gid));
      }
    }
  }
  finishDevinfoDevice(dev, links, part_id);
  out.addDevice(std::move(dev), kKindIbvDevinfo);
  return true;
}

bool parsePerfqueryBlock(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  std::string header;
  bool extended = false;
  if (startsWith(t, "# Port ") && t.find("counters") != std::string_view::npos) {
    header = std::string(t);
    extended = t.find("extended counters") != std::string_view::npos;
    cursor.next();
    // A header wrapped by an e-mail client continues on the next line
    // ("... (CapMask: 0x1600 CapMask2:" / "0x0000000)").
    for (int i = 0; i < 2 && !cursor.atEnd(); ++i) {
      const auto opens = std::count(header.begin(), header.end(), '(');
      const auto closes = std::count(header.begin(), header.end(), ')');
      if (opens <= closes && lidPortOf(header).port) break;
      const std::string_view next = trim(cursor.line());
      if (next.empty() || startsWith(next, "#") || splitDotted(next, false)) break;
      header += ' ';
      header += next;
      cursor.next();
    }
  } else {
    const auto kv = splitDotted(t, false);
    if (!kv || !isPerfqueryKey(kv->key)) return false;
  }
  LidPort where = lidPortOf(header);
  v1::RdmaDevice dev;
  dev.set_name(lidDeviceName(where.lid));
  v1::RdmaPort port;
  while (!cursor.atEnd()) {
    const auto kv = splitDotted(cursor.line(), true);
    if (!kv) break;
    cursor.next();
    if (contains(kPerfSelectors, kv->key)) {
      if (kv->key == "PortSelect" && !where.port) where.port = parseU32(kv->value);
      continue;
    }
    if (static_cast<std::size_t>(port.counters_size()) >= kMaxToolCounters) {
      out.markTruncated();
      continue;
    }
    const std::string name = perfSysfsName(kv->key);
    v1::Counter c = makeCounter(name, kv->value, CounterSet::PortCounters);
    if (isDataOrPacketCounter(name)) c.set_width_bits(extended ? 64 : 32);
    *port.add_counters() = std::move(c);
  }
  // A header cut before its LID with no counters after it says nothing about any port.
  if (where.lid || port.counters_size() > 0) {
    port.set_port(where.port.value_or(0));
    *dev.add_ports() = std::move(port);
    out.addDevice(std::move(dev), kKindPerfquery);
  }
  return true;
}

bool parseIbportstateBlock(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  // "PortInfo:", "CA PortInfo:", "Switch PortInfo:", "CA/RT PortInfo:", "Peer PortInfo:"
  if (endsWith(t, "PortInfo:") && t.size() <= 32 && t.find_first_of(".:") == t.size() - 1) {
    cursor.next();
    return true;
  }
  LidPort header;
  if (startsWith(t, "# Port info:")) {
    header = lidPortOf(t);
    cursor.next();
  } else {
    const auto kv = splitDotted(t, false);
    if (!kv || !contains(kPortInfoKeys, kv->key)) return false;
  }
  PortInfoFields fields;
  while (!cursor.atEnd()) {
    const auto kv = splitDotted(cursor.line(), true);
    if (!kv) break;
    applyPortInfo(fields, *kv);
    cursor.next();
  }
  emitPortInfo(fields, header, out);
  return true;
}

bool parseIbdev2netdevBlock(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view t = trim(cursor.line());
  const auto arrow = t.find("==>");
  if (arrow == std::string_view::npos) return false;
  const auto left = splitWhitespace(t.substr(0, arrow));
  const auto right = splitWhitespace(t.substr(arrow + 3));
  if (left.size() < 3) return false;
  // "mlx5_0 port 1 ==> ib0 (Down)" or, with -v,
  // "0000:05:00.0 mlx5_0 (MT4115 - MT1515X03131) ... fw 12.20.1010 port 1 (ACTIVE) ==> ib0 (Up)"
  const bool verbose = looksLikePciAddress(left[0]);
  const std::string_view device = verbose ? left[1] : left[0];
  std::optional<uint32_t> number;
  std::size_t port_at = 0;
  for (std::size_t i = left.size() - 1; i > 0; --i) {
    if (left[i - 1] == "port") {
      number = parseU32(left[i]);
      port_at = i;
      break;
    }
  }
  if (!number || device.empty() || device == "port") return false;
  v1::RdmaDevice dev;
  dev.set_name(std::string(device));
  v1::RdmaPort& port = *dev.add_ports();
  port.set_port(*number);
  if (verbose) {
    dev.mutable_pci()->set_address(std::string(left[0]));
    for (std::size_t i = 2; i + 1 < left.size(); ++i) {
      if (left[i] == "fw") dev.set_fw_ver(std::string(left[i + 1]));
    }
    if (left.size() > 2 && startsWith(left[2], "(MT")) {
      dev.set_hca_type(std::string(left[2].substr(1)));
    }
    if (port_at + 1 < left.size() && startsWith(left[port_at + 1], "(") &&
        endsWith(left[port_at + 1], ")") && left[port_at + 1].size() > 2) {
      const std::string_view state = left[port_at + 1];
      *port.mutable_state() = namedEnum(state.substr(1, state.size() - 2));
    }
  }
  if (!right.empty() && right[0] != "N/A" && right[0] != "NA") {
    port.add_netdevs(std::string(right[0]));
    v1::NetDevice netdev;
    netdev.set_name(std::string(right[0]));
    netdev.set_rdma_device(std::string(device));
    netdev.set_rdma_port(*number);
    if (verbose) netdev.set_pci_address(std::string(left[0]));
    if (right.size() > 1 && startsWith(right[1], "(") && endsWith(right[1], ")") &&
        right[1].size() > 2) {
      netdev.set_operstate(toLower(right[1].substr(1, right[1].size() - 2)));
    }
    out.addNetdev(std::move(netdev));
  }
  out.addDevice(std::move(dev), kKindIbdev2netdev);
  cursor.next();
  return true;
}

namespace {

void addRdmaLink(EvidenceBuilder& out, std::string_view device, uint32_t number,
                 std::string_view state, std::string_view phys, std::string_view netdev) {
  v1::RdmaDevice dev;
  dev.set_name(std::string(device));
  v1::RdmaPort& port = *dev.add_ports();
  port.set_port(number);
  *port.mutable_state() = namedEnum(state);
  *port.mutable_phys_state() = namedEnum(phys);
  if (!netdev.empty()) {
    port.add_netdevs(std::string(netdev));
    v1::NetDevice nd;
    nd.set_name(std::string(netdev));
    nd.set_rdma_device(std::string(device));
    nd.set_rdma_port(number);
    out.addNetdev(std::move(nd));
  }
  out.addDevice(std::move(dev), kKindRdmaLink);
}

// The value of `"key":` in one flat JSON object as iproute2 writes it: a string's text or a
// number's digits; empty when absent.
std::string_view jsonValue(std::string_view object, std::string_view key) {
  const std::string quoted_key = "\"" + std::string(key) + "\"";
  std::size_t k = object.find(quoted_key);
  if (k == std::string_view::npos) return {};
  k = object.find(':', k + quoted_key.size());
  if (k == std::string_view::npos) return {};
  std::string_view v = trimLeft(object.substr(k + 1));
  if (startsWith(v, "\"")) {
    const auto close = v.find('"', 1);
    return close == std::string_view::npos ? std::string_view{} : v.substr(1, close - 1);
  }
  std::size_t n = 0;
  while (n < v.size() && std::isdigit(static_cast<unsigned char>(v[n]))) ++n;
  return v.substr(0, n);
}

// `rdma -j link [show]` (one line) or `rdma -j -p link` (pretty, over lines): objects with
// "ifname", "port", "state", "physical_state" and, when bound, "netdev".
bool parseRdmaLinkJson(LineCursor& cursor, EvidenceBuilder& out) {
  const std::string_view first = trim(cursor.line());
  if (!startsWith(first, "[") && !startsWith(first, "{")) return false;
  std::string text;
  LineCursor ahead = cursor;
  int lines = 0;
  for (; !ahead.atEnd() && lines < 4096; ahead.next(), ++lines) {
    const std::string_view t = trim(ahead.line());
    if (lines > 0 && t.empty()) break;
    text.append(t);
    if (lines == 0 && t.find("\"ifname\"") == std::string_view::npos && t.size() > 3) break;
    if (endsWith(t, "]") &&
        std::count(text.begin(), text.end(), '[') <= std::count(text.begin(), text.end(), ']'))
      break;
  }
  if (text.find("\"ifname\"") == std::string::npos ||
      text.find("\"physical_state\"") == std::string::npos)
    return false;
  bool any = false;
  for (std::size_t open = text.find('{'); open != std::string::npos;
       open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    const std::string_view object = std::string_view(text).substr(open, close - open + 1);
    const auto name = jsonValue(object, "ifname");
    const auto number = parseU32(jsonValue(object, "port"));
    const auto state = jsonValue(object, "state");
    const auto phys = jsonValue(object, "physical_state");
    if (name.empty() || !number || *number == 0 || state.empty() || phys.empty()) continue;
    addRdmaLink(out, name, *number, state, phys, jsonValue(object, "netdev"));
    any = true;
  }
  if (!any) return false;
  for (int i = 0; i <= lines && !cursor.atEnd(); ++i) cursor.next();
  return true;
}

}  // namespace

// One `rdma link` line: "[N/N: ][link ]DEV/PORT[:] state S physical_state P [netdev N] ...".
// Both states must be there: a line of prose naming "link x/1" is not the tool's. Or the
// tool's JSON (`rdma -j link`).
bool parseRdmaLinkBlock(LineCursor& cursor, EvidenceBuilder& out) {
  if (parseRdmaLinkJson(cursor, out)) return true;
  const auto words = splitWhitespace(trim(cursor.line()));
  std::size_t i = 0;
  if (i < words.size() && endsWith(words[i], ":") && words[i].find('/') != std::string_view::npos &&
      parseU32(words[i].substr(0, words[i].find('/')))) {
    ++i;  // "8/1:": the link's index
  }
  if (i < words.size() && words[i] == "link") ++i;
  if (i >= words.size()) return false;
  std::string_view devport = words[i];
  if (endsWith(devport, ":")) devport.remove_suffix(1);
  const auto slash = devport.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  const auto number = parseU32(devport.substr(slash + 1));
  if (!number || *number == 0) return false;
  std::string_view state, phys, netdev;
  for (std::size_t k = i + 1; k + 1 < words.size(); k += 2) {
    if (words[k] == "state")
      state = words[k + 1];
    else if (words[k] == "physical_state")
      phys = words[k + 1];
    else if (words[k] == "netdev")
      netdev = words[k + 1];
  }
  if (state.empty() || phys.empty()) return false;
  addRdmaLink(out, devport.substr(0, slash), *number, state, phys, netdev);
  cursor.next();
  return true;
}

}  // namespace ibc::core::tool_output
