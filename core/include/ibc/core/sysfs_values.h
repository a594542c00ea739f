#pragma once

// Parsers for single sysfs attribute values of /sys/class/infiniband and PCI devices.
// Pure functions over the file's text: callers read the file (agent probes) and pass the
// content. Every parser keeps working on values real kernels and real fixtures produce,
// including odd ones ("4: ACTIVE" as a phys_state, placeholders such as "lid").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ibc/core/result.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

// Removes exactly one trailing "\n" (sysfs adds one; a value may legitimately end in
// whitespace or have no newline at all, e.g. some node_guid files).
std::string_view stripOneNewline(std::string_view text);

// Logical port state, numbering of the IB spec / kernel (`state` attribute).
enum class PortState {
  Unknown = -1,
  Nop = 0,
  Down = 1,
  Init = 2,
  Armed = 3,
  Active = 4,
  ActiveDefer = 5
};
// Physical port state (`phys_state` attribute).
enum class PhysState {
  Unknown = -1,
  NoStateChange = 0,
  Sleep = 1,
  Polling = 2,
  Disabled = 3,
  PortConfigurationTraining = 4,
  LinkUp = 5,
  LinkErrorRecovery = 6,
  PhyTest = 7
};

// "4: ACTIVE" → {code 4, name "ACTIVE", raw "4: ACTIVE"}. A value without a number
// ("Active", as ibstat prints) gets code -1 and the name. Empty or whitespace-only text
// is Malformed.
Result<v1::EnumValue> parseEnumValue(std::string_view text);

// The logical state of an EnumValue: by number when present, else by name (ibstat's
// "Active", ibv_devinfo's "PORT_ACTIVE"). Unknown when neither is recognised, and for an
// EnumValue that was never filled (no raw text, no name).
PortState portStateOf(const v1::EnumValue& value);
// The physical state by number when present and consistent with a known name, else by
// name ("LinkUp", "LINK_UP", "Polling", "Disabled"). A number whose name contradicts it
// (e.g. "4: ACTIVE" — a logical name in phys_state) yields Unknown.
PhysState physStateOf(const v1::EnumValue& value);
std::string_view portStateName(PortState state);
std::string_view physStateName(PhysState state);

struct LinkRate {
  double gbps = 0;           // total data rate the kernel reports, Gb/s
  uint32_t width_lanes = 0;  // 1, 2, 4, 8, 12; 0 when not printed
  std::string speed_name;    // "SDR".."XDR"; empty when not printed (e.g. RoCE "(4X)")
};

// "200 Gb/sec (4X HDR)", "2.5 Gb/sec (1X SDR)", "10 Gb/sec (4X)", "25 Gb/sec (1X EDR)",
// "100" (ibstat). Malformed when there is no leading number.
Result<LinkRate> parseRate(std::string_view text);

// A counter file's content: a decimal (or 0x hex) unsigned value. "N/A (no PMA)" and any
// other non-numeric text is Unavailable with the text as message; values above 2^64-1
// are Malformed.
Result<uint64_t> parseCounterValue(std::string_view text);

// Where a counter lives, which also says which table judges it and how wide it is: a
// port's counters/, counters_ext/ and hw_counters/ (a device's own hw_counters/ are
// HwCounters of port 0), a netdev's `ethtool -S` and statistics/. counters.h walks them
// (forEachCounter).
enum class CounterGroup { PortCounters, PortCountersExt, HwCounters, Ethtool, NetdevStats };
// The name the probes and parsers know it by.
using CounterSet = CounterGroup;

// "counters", "counters_ext", "hw_counters", "ethtool", "stats": the directory (or tool) a
// group comes from, as evidence lines and unavailable-counter lists name it.
std::string_view counterGroupName(CounterGroup group);

// Hardware width in bits of a counter as the kernel exposes it (IB PMA PortCounters
// widths for the legacy attributes), 0 when unknown. Saturation = 2^width - 1.
uint32_t counterWidthBits(std::string_view name, CounterSet set);
bool isSaturated(uint64_t value, uint32_t width_bits);

// Builds a Counter entry from a file's content: value or unavailable reason, plus width.
v1::Counter makeCounter(std::string_view name, std::string_view text, CounterSet set);

// An unsigned decimal or 0x-hex integer (lid "0x1a", sm_lid "1"). nullopt otherwise.
std::optional<uint64_t> parseUnsigned(std::string_view text);

// PCIe current/max_link_speed: "16.0 GT/s PCIe", "8 GT/s", "8.0 GT/s PCIe". nullopt
// for "Unknown" or garbage.
std::optional<double> parsePcieSpeedGts(std::string_view text);
// current/max_link_width: "16", "x16". nullopt for 0 or garbage.
std::optional<uint32_t> parsePcieWidth(std::string_view text);

// GID "fe80:0000:0000:0000:0a7f:bc12:45ef:d23b": true when all zero (unused entry).
bool isZeroGid(std::string_view gid);

// True for a GUID made only of zero digits ("0000:0000:0000:0000", "0x0000000000000000").
bool isZeroGuid(std::string_view guid);

// Shape checks for identities the host side searches for (pf-inspection, host-inspect): a
// value of the wrong shape (a capture's placeholder such as a file holding its own name,
// "node_guid"; a truncated read) is never put into a host-side command.
// GUID: 16 hex digits, optionally "0x"-prefixed or grouped by colons ("0a7f:bc12:45ef:d23b",
// "0a:7f:bc:12:45:ef:d2:3b", "0x0a7fbc1245efd23b").
bool isGuidShaped(std::string_view text);
// Hardware address: 6 (Ethernet) or 20 (IPoIB) octets of two hex digits joined by ':'.
bool isMacShaped(std::string_view text);
// VM id as DMI (product_uuid, product_serial) or cloud metadata give it: a UUID or an
// instance id of [A-Za-z0-9._-], at least 6 long; never a file's own name left in a copied
// tree, nor all zeros or all F's (an unset product_uuid).
bool isVmIdShaped(std::string_view text);
// Firmware version: dotted numbers ("14.28.2006"), optionally followed by text in brackets.
bool isFirmwareVersionShaped(std::string_view text);

// Mellanox/NVIDIA PCI device ids (as "0x1016" or decimal vendor_part_id "4118") of SR-IOV
// virtual functions. Returns the family name ("ConnectX-4 Lx VF") or empty when the id is
// not a known VF id.
std::string_view mellanoxVirtualFunctionName(std::string_view device_id);
// hca_type "MT4118" → "0x1016" (hex PCI device id); empty when not of that shape.
std::string hcaTypeToDeviceId(std::string_view hca_type);

}  // namespace ibc::core
