#pragma once

// Parsers for command output a customer pasted into a ticket (`ibcollect analyze
// --tool-output PATH`, docs/commands.md): ibstat, ibstatus, ibv_devinfo [-v|-l], perfquery [-x],
// ibportstate, ibdev2netdev [-v], ethtool -S, ethtool -i, ip [-s [-s]] link|addr [show] and
// `grep . /sys/...` style PATH:VALUE listings.
//
// Every parser is pure: it takes the pasted text, never a path, and never fails. Pastes are
// messy, so each parser skips what it does not understand and says what it consumed:
//   * what the paste picked up around the data is removed first (unwrapPasteMarkup): quotes,
//     HTML tags, `# comments`, `<--` arrows and notes in another script after a value;
//     elision lines (`...`, `[...]`) are noise.
//   * shell prompts (`[root@n1 ~]# ibstat`, `user@host:~$ ...`, `$ ...`), bare command lines
//     (`ethtool -S eth0`), `+ cmd` shell traces, ``` fences, blank lines and infiniband-diags
//     `ibwarn:` debug lines are noise: recognised, never counted as unrecognised. A command
//     line also gives context (the netdev an `ethtool -S eth0` block belongs to).
//   * lines that belong to no recognised block count in `lines_unrecognised`.
//   * `spans` lists the line ranges each tool's blocks covered.
//
// All parsers return the same evidence model, so the output of one tool, of several, or of
// the recogniser can be analysed alike. `parseToolOutput` runs every parser over one text
// (pastes mix tools) and merges what they found: RDMA devices by name, their ports by
// number, netdevs by name. When two tools disagree about a field, the first value seen is
// kept; repeated fields (GIDs, netdevs, counters by name) are unioned in first-seen order.
//
// Value conventions (chosen so rules treat pasted and collected evidence the same):
//   * States are `v1::EnumValue` with the text as printed: ibstat "Active" → {code -1,
//     name "Active", raw "Active"}; ibv_devinfo "PORT_ACTIVE (4)" → {4, "PORT_ACTIVE",
//     raw}; ibstatus "4: ACTIVE" → {4, "ACTIVE", raw}. Resolve with portStateOf() /
//     physStateOf() (sysfs_values.h).
//   * Rates are total Gb/s as the kernel reports them (lanes × nominal lane speed, so
//     FDR 4 × 14.0625 Gb/s is 56, EDR 4 × 25.78125 Gb/s is 100); `rate_raw` keeps the text.
//   * GUIDs, firmware versions, addresses are kept as printed (ibstat "0xf452...",
//     ibv_devinfo "f452:1403:..."); LIDs are numbers with the printed text in *_raw.
//   * An ibstat excerpt that starts at "Port N:" without its "CA '...'" header gives its
//     ports to a device called kUnnamedIbstatDevice ("ca:unknown").
//   * Devices that only perfquery or ibportstate name are called "lid:N" (the LID queried);
//     their port number is the one in the header, else PortInfo's LocalPort, else 0.
//   * Counter names are the kernel's sysfs/statistics names (perfquery PortXmitData →
//     port_xmit_data, in 4-byte words like sysfs); widths as in sysfs_values.h, except that
//     perfquery data/packet counters are 64-bit in an extended (-x) block and 32-bit in a
//     legacy PortCounters block (the IB PMA attribute widths).
//   * A line cut off mid-way yields the values it holds in full and nothing else: a last
//     token that may be truncated (e.g. "mtu 40" at the end of a cut `ip link` line) is
//     dropped rather than reported.
//
// Bounds: output stays proportional to what is useful, whatever the input size: at most
// kMaxToolDevices devices, kMaxToolPortsPerDevice ports per device, kMaxToolNetdevs netdevs,
// kMaxToolCounters counters per list and kMaxToolCountersTotal in all, kMaxToolSysfsEntries
// sysfs entries, kMaxToolErrors error lines (each kept to kMaxToolLineBytes bytes). Input beyond a
// bound is still consumed (so it is not "unrecognised") and `truncated` is set. Runs in time linear
// in the input. Thread-safe: no shared state.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

// Kind names, as reported in ToolEvidence::kinds and ToolOutput.kinds.
inline constexpr std::string_view kKindIbstat = "ibstat";
inline constexpr std::string_view kKindIbstatus = "ibstatus";
inline constexpr std::string_view kKindIbvDevinfo = "ibv_devinfo";
inline constexpr std::string_view kKindPerfquery = "perfquery";
inline constexpr std::string_view kKindIbportstate = "ibportstate";
inline constexpr std::string_view kKindIbdev2netdev = "ibdev2netdev";
inline constexpr std::string_view kKindRdmaLink = "rdma-link";
inline constexpr std::string_view kKindEthtoolStats = "ethtool-S";
inline constexpr std::string_view kKindEthtoolInfo = "ethtool-i";
inline constexpr std::string_view kKindIpLink = "ip-link";
inline constexpr std::string_view kKindSysfsListing = "sysfs-listing";
inline constexpr std::string_view kKindPerftest = "perftest";
inline constexpr std::string_view kKindNvidiaSmiTopo = "nvidia-smi-topo";

// The device an ibstat excerpt without its CA header is filed under.
inline constexpr std::string_view kUnnamedIbstatDevice = "ca:unknown";

inline constexpr std::size_t kMaxToolDevices = 4096;
inline constexpr std::size_t kMaxToolPortsPerDevice = 256;
inline constexpr std::size_t kMaxToolNetdevs = 4096;
inline constexpr std::size_t kMaxToolCounters = 16384;
inline constexpr std::size_t kMaxToolCountersTotal = 262144;
inline constexpr std::size_t kMaxToolSysfsEntries = 262144;
inline constexpr std::size_t kMaxToolErrors = 1024;
inline constexpr std::size_t kMaxToolDriverInfos = 1024;
inline constexpr std::size_t kMaxToolLineBytes = 4096;
inline constexpr std::size_t kMaxToolRdmaTests = 1024;
inline constexpr std::size_t kMaxRdmaTestErrors = 16;
// Messages this large fill a link: of an `-a` sweep, the best row among them is kept (smaller
// ones are bound by message rate), and a run without one is not judged against the rate.
inline constexpr uint64_t kRdmaTestFillBytes = 65536;
// perftest's MB/sec is MiB/s (2^20 bytes/s); in Gb/s (10^9 bit/s) one is this much.
inline constexpr double kPerftestMiBpsToGbps = 1048576.0 * 8.0 / 1e9;

// One `PATH:VALUE` line of a `grep . /sys/...` listing. The path may itself contain ':'
// (PCI addresses such as "pci0000:05/0000:05:02.0"); the value is everything after the
// separator, verbatim ("4: ACTIVE", a GID, "N/A (no PMA)").
struct SysfsEntry {
  std::string path;
  std::string value;
};

// `ethtool -i` output. `netdev` comes from a preceding `ethtool -i NAME` command line and
// is empty when the paste does not show it. Fields are verbatim ("14.23.1020
// (MT_2420110034)"); absent ones are empty.
struct EthtoolDriverInfo {
  std::string netdev;
  std::string driver;
  std::string version;
  std::string firmware_version;
  std::string bus_info;
};

// Lines [first_line, last_line] (1-based, inclusive) consumed as output of `kind`.
struct ToolOutputSpan {
  std::string kind;
  uint64_t first_line = 0;
  uint64_t last_line = 0;
};

struct ToolEvidence {
  // Recognised kinds in first-seen order ("ibstat", "ibv_devinfo", ...).
  std::vector<std::string> kinds;
  // Merged by name across tools; `seen_in` lists the kinds that named the device
  // ("ibdev2netdev,ibv_devinfo"). A device a tool listed but could not find has
  // `missing_reason` set to the tool's error line.
  std::vector<v1::RdmaDevice> devices;
  // Merged by name; netdevs without a known name (an `ethtool -S` paste without its
  // command line) are kept apart, one per block.
  std::vector<v1::NetDevice> netdevs;
  std::vector<SysfsEntry> sysfs_entries;  // in input order
  std::vector<EthtoolDriverInfo> driver_infos;
  // perftest runs, in input order (`source` empty: the caller knows the file).
  std::vector<v1::RdmaTest> rdma_tests;
  // `nvidia-smi topo -m` matrices, in input order.
  std::vector<v1::GpuTopology> gpu_topologies;
  // A tool said there are no RDMA devices at all (ibv_devinfo "No IB devices found",
  // ibstatus "Fatal error: device '*': sys files not found", ibstat "can't list IB
  // device names", "0 HCAs found").
  bool no_rdma_devices = false;
  // Verbatim error lines (ibpanic, iberror, "Fatal error", libibverbs warnings, ethtool
  // "Cannot get ...", grep errors on sysfs files, ...), in input order.
  std::vector<std::string> tool_errors;
  // Lines in the text (a final newline does not start another line) and lines that were
  // neither noise nor part of a recognised block.
  uint64_t lines_total = 0;
  uint64_t lines_unrecognised = 0;
  // What was consumed, in input order; adjacent spans of one kind are joined.
  std::vector<ToolOutputSpan> spans;
  // A bound was hit and some entities or values were dropped.
  bool truncated = false;
};

// Finds every kind of tool output in `text` and merges the evidence.
ToolEvidence parseToolOutput(std::string_view text);

// The text of a paste without the markup it picked up on its way (parseToolOutput applies
// it first): markdown block quotes ("> ", nested) and code fences, HTML formatting tags
// (<pre>, <code>, <br>, ...; data in brackets such as "<BROADCAST,UP>" stays) and the
// entities &lt; &gt; &amp; &quot;, HTML tags with attributes (<font color="red">), "# comments"
// after a value (a line starting with '#' is kept), and annotations after the data: arrows
// ("<----", "<=="), "// notes" and notes in another script (from the first non-ASCII byte that
// follows whitespace). One output line per input line.
std::string unwrapPasteMarkup(std::string_view text);

// One tool's parser (`kind`, a kKind* name): takes the whole paste, picks out that tool's
// blocks, treats the rest as noise or unrecognised (counted), and returns only what that
// tool printed (an unknown kind: only the tools' error lines). What each tool's parser reads:
//
// ibstat: `CA 'mlx5_0'` (or `CA: 'mlx5_0'` for one port) blocks, tab or space indented;
//   `ibpanic: ... stat of IB device 'X' failed: ...` → device X with missing_reason.
// ibstatus: `Infiniband device 'X' port N status:` blocks; `Fatal error:` lines.
// ibv_devinfo [-v]: `hca_id:` blocks (tabs, spaces or no indentation), ibv_devinfo -l
//   lists, "No IB devices found" and the other errors it prints.
// perfquery [-x]: `# Port [extended ]counters: Lid L port P ...` headers (also wrapped
//   over two lines) and `Name:.....value` counters.
// ibportstate: `# Port info: Lid L port P` blocks and bare PortInfo dumps.
// ibdev2netdev [-v]: `mlx5_0 port 1 ==> ib0 (Up)`.
// rdma link [show]: `link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ib0`, also
//   with `link mlx5_0/1:` and an index (`8/1: mlx5_bond_0/1: state ...`), IB fields
//   (subnet_prefix, lid, sm_lid, lmc) between, netdev absent; `rdma -j [-p] link` JSON.
// ethtool -S: `NIC statistics:` and `name: value` lines, any indentation.
// ethtool -i: `driver:`, `version:`, `firmware-version:`, `bus-info:`, `supports-*:`.
// ip [-d] [-s [-s]] link|addr [show]: interface headers, link/* lines and statistics.
// sysfs listing: `grep . /sys/...` PATH:VALUE lines and grep's own errors on sysfs files.
// perftest (ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw, ib_*_lat): a run's banner,
//   title ("RDMA_Write BW Test"), settings (Device, Link type), addresses, the result table
//   (its header names the unit: MB/sec is MiB/s by perftest's definition, Gb/sec 10^9 bit/s)
//   and the errors it prints when it cannot connect or run; `--out_json` files (keys
//   unquoted, as perftest writes them). The command line before it gives the tool, -d, -i,
//   the server address (a client), -b, --use_cuda and --report_gbits.
// nvidia-smi topo -m [-p]: the matrix (header "GPU0 ... NIC0 ... CPU Affinity", one row per
//   GPU and NIC, tabs or spaces), its Legend and NIC Legend ("NIC0: mlx5_0").
ToolEvidence parseToolOutputAs(std::string_view kind, std::string_view text);

}  // namespace ibc::core
