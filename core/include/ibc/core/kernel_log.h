#pragma once

// Kernel log parsing and classification (docs/formats.md "kernel log lines matching IB/mlx/link/
// PCIe patterns", §5 kernel-log findings). Pure functions over text: the agent reads
// /dev/kmsg, `dmesg` or a file and passes the content; nothing here touches the host.
//
// Line shapes understood (any of them behind one or more pdsh/clush "host: " prefixes):
//   plain message                          mlx5_core 0000:01:00.0: handle_hca_cap failed
//   dmesg                                  [    5.376443] msg
//   dmesg -T                               [Mon Jun  2 10:11:12 2025] msg
//   dmesg -x                               kern  :err   : [    5.376443] msg
//   dmesg --time-format=iso                2025-06-02T10:11:12,123456+00:00 msg
//   syslog priority (dmesg -r)             <3>[    5.376443] msg
//   journalctl -k (short, short-precise)   Feb 06 16:10:07 HOST kernel: msg
//   journalctl -o short-iso                2025-02-06T16:10:07+0000 HOST kernel: msg
//   /var/log/kern.log                      Feb  6 16:10:07 HOST kernel: [   12.3] msg
// A kernel message that itself starts with "word: " (e.g. "rdma_rxe: Failed sending ack",
// "mlx5_core 0000:01:00.0: ...") is never taken for a host prefix: a host prefix is only
// stripped when a recognised timestamp follows it, or the same host repeats.
// All functions are pure and thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

// One entry per non-blank line, oldest first. `text` is the message without its prefix
// (made printable, capped at 1024 bytes), `timestamp` the prefix as printed ("[    5.376443]",
// "[Mon Jun  2 10:11:12 2025]", "Feb 06 16:10:07", "2025-02-06T16:10:07+0000"),
// `monotonic_seconds` the seconds since boot when the prefix carried them (0 otherwise),
// `host` the journal host or pdsh prefix (journal host wins), `line_number` 1-based.
// Never fails: unrecognised lines are kept whole as plain messages.
std::vector<v1::KernelLogLine> parseKernelLogText(std::string_view text);

// One /dev/kmsg record, as returned by one read(): "PRI,SEQ,USEC[,FLAGS,...];message" then
// optional continuation lines " KEY=value" (ignored). USEC is microseconds since boot: it
// becomes `monotonic_seconds` and a dmesg-style `timestamp` ("[ 5678.901234]").
// `line_number` is 0 (records have no line). nullopt when the header is malformed.
std::optional<v1::KernelLogLine> parseKmsgRecord(std::string_view record);

// True when the message (prefix already stripped) is worth keeping in a bounded snapshot:
// RDMA drivers and devices (mlx4/mlx5, ib_*, rdma, rxe, irdma, bnxt_re, efa, hfi1, qib,
// i40iw, siw, ipoib, roce, infiniband, ibN netdevs), PCIe/AER, link state, NETDEV WATCHDOG /
// TX timeouts, cable and module-temperature events. "Modules linked in:" lists are not.
bool isRdmaRelevant(std::string_view message);

enum class KernelEvent {
  None,
  LinkDown,              // "Link down", "NIC Link is Down"
  LinkUp,                // "Link up", "link becomes ready"
  LinkNotReady,          // "ADDRCONF(NETDEV_UP): X: link is not ready"
  CableUnplugged,        // mlx5 "Port module event: module 0, Cable unplugged"
  ModuleError,           // mlx5 "Port module event[error]: ... Cable error, <reason>"
  ModuleTemperature,     // module/sensor high temperature
  FwCommandTimeout,      // mlx5 "... timeout. Will cause a leak", mlx4 "command 0x.. timed out"
  FwCommandFailed,       // mlx4 "command 0x5a failed: fw status = 0x2", mlx5 "op_mod(..) failed"
  DeviceFatal,           // health compromised, catastrophic, unrecoverable, error state
  TxTimeout,             // "NETDEV WATCHDOG: eth1 (mlx4_core): transmit queue 0 timed out"
  DriverLoadFailed,      // "probe of 0000:01:00.0 failed with error -22", "mlx5_load_one failed"
  PcieError,             // AER corrected/uncorrected errors, "PCIe Bus Error"
  PcieBandwidthLimited,  // "... available PCIe bandwidth, limited by 8.0 GT/s PCIe x4 link ..."
  RdmaSendFailure,       // rdma_rxe "Failed sending ack"
};

// Classifies one kernel message (prefix stripped) by the message formats of the mlx4/mlx5,
// ib_core, rxe, pcieport/AER, PCI core and net/sched drivers. None for healthy or unknown
// lines (e.g. "Port module event: module 0, Cable plugged", or a PCIe bandwidth line without
// "limited by").
KernelEvent classifyKernelMessage(std::string_view message);
// Stable name: "None", "LinkDown", ... (the enumerator spelled as in the enum).
std::string_view kernelEventName(KernelEvent event);
// True for events that indicate a fault (everything but None and LinkUp).
bool isKernelFault(KernelEvent event);

// The device a kernel message is about, as far as the message says.
struct KernelMessageSubject {
  std::string pci_address;  // "0000:01:00.0"
  std::string netdev;       // "eth1", "ens1f0", "bond0"
  std::string rdma_device;  // "mlx5_0", "rxe0"
};
KernelMessageSubject kernelMessageSubjectOf(std::string_view message);
// The most specific single name: PCI address, else RDMA device, else netdev; "" if none.
// AER lines name the device that reported the error ("... error received: 0000:41:00.0").
std::string kernelMessageSubject(std::string_view message);

struct KernelLogOptions {
  std::string source;            // copied to KernelLog.source ("dmesg", "file:PATH", ...)
  std::size_t max_lines = 2000;  // matching lines kept (the newest)
};

// Parses `text` and keeps the RDMA-relevant lines (isRdmaRelevant), newest `max_lines`,
// oldest first. lines_scanned counts non-blank lines, lines_matched every relevant one,
// lines_stamped those with a recognised timestamp prefix,
// truncated is set when older matching lines were dropped. Streams over the text: memory is
// bounded by max_lines, not by the input size.
v1::KernelLog filterKernelLog(std::string_view text, const KernelLogOptions& options);

}  // namespace ibc::core
