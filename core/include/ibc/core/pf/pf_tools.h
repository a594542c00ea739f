#pragma once

// Parsers for the PF-side tools a support engineer runs on the physical host (`ibcollect
// host-inspect --paste FILE`, docs/formats.md): mlxlink [-m] [-c] [-e], mlxconfig q, flint/mstflint
// q, ethtool -m, `ip link show` of a PF with its `vf N` lines, the PCIe AER statistics files
// (aer_dev_correctable/fatal/nonfatal), `lspci [-nn] [-vvv]` and the host kernel log.
// One header for the set (they share the bounds and PfToolEvidence); one source per tool in
// core/src/parsers/pf/ (mlxlink.cpp, mlxconfig.cpp, flint.cpp, ethtool_module.cpp,
// pf_ip_link.cpp, aer_counters.cpp, pf_kernel_log.cpp, lspci.cpp), and pf_tools.cpp
// for a whole paste. Judging what they return is escalation's (pf_judge.h).
//
// Every parser is pure (text in, messages out), never fails and runs in time linear in the
// input. Real pastes are mangled (markdown quotes and fences, shell prompts, web pages that
// collapsed column alignment or put a blank line between every line, mail clients that
// wrapped long lines): a line is recognised by its own shape, never by its column. What a
// parser did not recognise is skipped; `parsePfToolOutput` says when nothing at all was.
//
// Values are kept as printed beside the parsed number; a value printed "N/A" leaves the
// number unset (a passive copper cable has no DDM: that is "not applicable", not zero).
// Bounds: at most kMaxPfReports reports per tool, kMaxPfFields fields per report, every
// string made printable and capped (text.h printable).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ibcollect/v1/host.pb.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

inline constexpr std::string_view kKindMlxlink = "mlxlink";
inline constexpr std::string_view kKindMlxconfig = "mlxconfig";
inline constexpr std::string_view kKindFlint = "flint";
inline constexpr std::string_view kKindEthtoolModule = "ethtool-m";
inline constexpr std::string_view kKindPfIpLink = "ip-link-vf";
inline constexpr std::string_view kKindAer = "aer";
inline constexpr std::string_view kKindPfKernelLog = "kernel-log";
inline constexpr std::string_view kKindLspci = "lspci";

inline constexpr std::size_t kMaxPfReports = 256;
inline constexpr std::size_t kMaxPfFields = 1024;
inline constexpr std::size_t kMaxPfVfs = 4096;
inline constexpr std::size_t kMaxPfKernelLines = 2000;

// mlxlink/mstlink output, one report per port shown. A report starts at an `mlxlink ... -d
// DEV [-p N]` command line (device and port taken from it) or at an "Operational Info"
// section when the current report already has one. Sections are a title line followed by a
// line of dashes (blank lines between allowed) or one of mlxlink's known titles; fields
// are "Key : value" lines in any alignment.
std::vector<v1::MlxlinkReport> parseMlxlink(std::string_view text);

// `mlxconfig [-d DEV] q[uery]`: "Device type:", "Device:" and the configuration lines
// ("SRIOV_EN    True(1)") after "Configurations:" (or anywhere for SRIOV_EN, NUM_OF_VFS and
// LINK_TYPE_P<n>, which only mlxconfig prints).
std::vector<v1::MlxconfigReport> parseMlxconfig(std::string_view text);

// `flint|mstflint [-d DEV] q[uery] [full]`: a report needs "FW Version:" or "PSID:" printed
// flint's way (the colon right after the key; mlxlink's "FW Version : N/A" module line is
// not flint's). Words after the version ("14.32.1010 <---latest version") are dropped.
std::vector<v1::FlintQuery> parseFlintQuery(std::string_view text);

// `ethtool -m NETDEV` decoded module EEPROM (SFF-8472, SFF-8636, CMIS): a report starts at
// "Identifier : 0x..". DDM values in their units (°C, V, mA, dBm); flags whose value is
// "On" are listed as alarms or warnings by their name, whatever the module's vendor or
// layout. Quoted-printable soft breaks ("185.0=" + "0 degrees F") are joined; one stray
// line (a wrapped value, a "(...)" elision) stays inside the module, two end it; "<--"
// annotations after a value are dropped.
std::vector<v1::ModuleDiagnostics> parseEthtoolModule(std::string_view text);

// `ip [-d] link show [DEV]` of PFs: "[N: ]name: <FLAGS> ... state S", "link/TYPE ADDR" and
// the VF table, old ("vf 0 MAC 00:.., vlan 10, spoof checking off, link-state auto") and new
// ("vf 0     link/infiniband ... , NODE_GUID .., PORT_GUID .., link-state disable") forms,
// also when a record was wrapped onto the next line or wrapped in markdown bold. Netdevs
// without `vf` lines are kept (a PF with SR-IOV off lists none).
std::vector<v1::PfNetdevLink> parsePfIpLink(std::string_view text);

// One AER statistics file as sysfs prints it ("RxErr 0" ... "TOTAL_ERR_COR 0"); `kind` is
// "correctable", "fatal" or "nonfatal" (the file's name without "aer_dev_"). Lines that are
// not "Name Count" are skipped.
std::vector<v1::AerCount> parseAerCounters(std::string_view text, std::string_view kind);

// Kernel log lines (dmesg, journalctl -k, ...: kernel_log.h) that are RDMA/PCIe relevant,
// with a line the mail client or terminal wrapped joined back to the record it belongs to
// (a line without a timestamp after a record that ends in a space, ',', ':', '(' or '-').
// The PCI core's "available PCIe bandwidth, limited by ..." line is kept without a
// timestamp too (it is often pasted alone).
std::vector<v1::KernelLogLine> parsePfKernelLog(std::string_view text);

// `lspci`, `lspci -nn`, `lspci -vvv` (also `-D`, `-s ADDR`, `| grep` excerpts): one record per
// function, started by its first line ("[DOMAIN:]BB:DD.F <class>: <description>", address
// kept as printed). A function whose configuration space reads all ones ("(rev ff)" on its
// first line, "!!! Unknown header type 7f") is marked unreadable with the line that shows
// it. "LnkCap:"/"LnkSta:" give speed (GT/s) and width (lanes); the link is downgraded when
// lspci says "(downgraded)" or LnkSta is below LnkCap, never for a LnkSta without a speed or
// width ("Speed unknown, Width x0": a VF has no link of its own). "UESta:"/"CESta:" entries
// marked '+' (also when lspci wrapped the register onto more lines) are the AER status bits
// set, less those their mask register (UEMsk/CEMsk) marks '+'; UESvrt's '+' marks which
// uncorrectable ones are fatal.
// Lnk/AER lines with no first line before them (a `lspci -vvv -s ADDR | grep Lnk` excerpt)
// make a record of their own, its address taken from the `-s` of a command line shown.
// Keys are recognised at the start of a line whatever its indentation.
std::vector<v1::PciFunctionStatus> parseLspci(std::string_view text);

// What a paste held: every kind found, merged. `kinds` in first-seen order.
struct PfToolEvidence {
  std::vector<std::string> kinds;
  std::vector<v1::MlxlinkReport> mlxlink;
  std::vector<v1::MlxconfigReport> mlxconfig;
  std::vector<v1::FlintQuery> flint;
  std::vector<v1::ModuleDiagnostics> modules;
  std::vector<v1::PfNetdevLink> links;
  std::vector<v1::AerCount> aer;  // from `grep . .../aer_dev_*` listings or bare files
  std::vector<v1::KernelLogLine> kernel_log;
  std::vector<v1::PciFunctionStatus> pci_functions;  // lspci
  bool empty() const { return kinds.empty(); }
};

// Unwraps paste markup (tool_output.h unwrapPasteMarkup) and runs every parser above; AER
// counters are recognised in `grep . /sys/.../aer_dev_KIND` listings (kind from the path)
// and as bare files (kind from their TOTAL_ERR_* line).
PfToolEvidence parsePfToolOutput(std::string_view text);

// Everything in `ev` added to `pf`, as the evidence of that one PF (a paste of one adapter).
void addAllToPf(const PfToolEvidence& ev, v1::PfEvidence& pf);

}  // namespace ibc::core
