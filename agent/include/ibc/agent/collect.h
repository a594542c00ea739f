#pragma once

// Collection of one node's VF-side evidence into a Snapshot (docs/formats.md). Read-only: no
// probe writes to the host or resets a counter. A probe that fails is recorded in
// Snapshot.probe_errors with its reason and the collection goes on.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ibc/agent/seams.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::agent {

namespace v1 = ::ibcollect::v1;

// Bounds that keep a snapshot small whatever the host holds.
struct CollectLimits {
  std::size_t sysfs_file_bytes = 64 * 1024;     // any single sysfs attribute
  std::size_t kernel_log_bytes = 16u << 20;     // kernel log read (newest part)
  std::size_t kernel_lines_kept = 2000;         // matching lines kept, newest
  std::size_t artifact_read_bytes = 64u << 20;  // NCCL log / nccl-tests file read for parsing
  std::size_t artifact_raw_kept = 1u << 20;     // raw text kept in the snapshot per artifact
  std::size_t max_devices = 64;
  std::size_t max_netdevs = 512;
  std::size_t max_counters_per_dir = 1024;
  std::chrono::milliseconds command_timeout{5000};
};

struct CollectOptions {
  // "/" for the live host; anything else is a copied tree: no commands are run, no
  // process limits or /dev/kmsg are read, since they would describe this machine.
  std::string root = "/";
  std::chrono::milliseconds window{0};
  // When set (--job fan-out), the first sample is taken at this wall-clock time so all
  // nodes' windows line up.
  std::optional<std::chrono::system_clock::time_point> window_start;
  std::string job_id;
  std::vector<std::string> nccl_logs;  // paths on the invoking machine
  // NCCL logs in a place every node of a job reads (a --job --nccl-log pattern without
  // %h): each is kept only when it is this node's (ncclLogBelongsTo with node_names plus
  // the collected hostname), so one rank's log is not carried by every node.
  std::vector<std::string> shared_nccl_logs;
  std::vector<std::string> node_names;  // this node's other names (its Slurm name)
  std::vector<std::string> nccl_tests;
  std::string dmesg_file;
  std::string agent_version;
  CollectLimits limits;
};

struct HostSeams {
  const Filesystem& host;   // the node, rooted at CollectOptions::root
  const Filesystem& files;  // user-given files (--nccl-log, --dmesg-file), unrooted
  CommandRunner& runner;
  Clock& clock;
  const Environment& env;
  // Process facts of the live host (memlock, hostname); not called for trees.
  std::function<ProcessFacts()> process_facts;
  // Progress and notices for long operations (stderr in the CLI); may be empty.
  std::function<void(const std::string&)> progress;
};

v1::Snapshot collectSnapshot(const CollectOptions& options, const HostSeams& seams);

// Where collectRdmaDevices/collectNetdevs found things, for the second window sample.
struct SysfsLayout {
  std::map<std::string, std::string> device_dirs;  // RDMA device → sysfs directory
  std::map<std::string, std::string> netdev_dirs;  // netdev → sysfs directory
};

// Parts of the collection, exposed for tests and for `analyze --tool-output` (which
// runs the sysfs probe over a pasted `grep . /sys/...` listing).
void collectRdmaDevices(const Filesystem& fs, const CollectLimits& limits, v1::Snapshot& snap,
                        SysfsLayout& layout);
void collectNetdevs(const Filesystem& fs, const CollectLimits& limits, v1::Snapshot& snap,
                    SysfsLayout& layout);
// Another sample of every counter already in `snap`, appended to snap.window.
void sampleWindowCounters(const Filesystem& fs, const CollectLimits& limits,
                          const SysfsLayout& layout, v1::Snapshot& snap);
// Kernel log lines matching RDMA patterns from text (a file or `dmesg` output).
void collectKernelLogText(std::string_view text, std::string_view source,
                          const CollectLimits& limits, v1::KernelLog& out);
// Reads a saved kernel log (--dmesg-file; its newest part, bounded) into `out`. An unreadable,
// empty or binary file, or text in which no line is a kernel log line, leaves
// `out.unavailable_reason` set and adds an error.
// True when `e` is about a file the user named (--nccl-log, --nccl-tests, --dmesg-file
// `dmesg_file`) rather than a probe of the host.
bool isUserFileError(const v1::ProbeError& e, const std::string& dmesg_file);

void readKernelLogFile(const Filesystem& files, const std::string& path,
                       const CollectLimits& limits, v1::KernelLog& out,
                       std::vector<v1::ProbeError>& errors);
// Reads an NCCL log / nccl-tests file (bounded) and parses it. A file in which nothing of its
// kind is recognised is still returned (raw text kept) and adds an error.
v1::NcclLog readNcclLog(const Filesystem& files, const std::string& path,
                        const CollectLimits& limits, const std::string& default_host,
                        std::vector<v1::ProbeError>& errors);
// Whether an NCCL log is this node's, given the node's names (Slurm name, hostname): NCCL
// prefixes each line with the host that wrote it ("host:pid:tid"), so a log that names
// hosts, none of them this node (exactly or by short form), is another node's. A log
// that names no host is kept: nothing says whose it is.
bool ncclLogBelongsTo(const v1::NcclLogSummary& log, const std::vector<std::string>& node_names);
// readNcclLog for a log in a shared place: nullopt (and nothing added to `errors`) when
// the log belongs to another node by ncclLogBelongsTo (judged on the hosts NCCL printed,
// not on `default_host`). An unreadable file is returned with its error, as readNcclLog.
std::optional<v1::NcclLog> readSharedNcclLog(const Filesystem& files, const std::string& path,
                                             const CollectLimits& limits,
                                             const std::vector<std::string>& node_names,
                                             const std::string& default_host,
                                             std::vector<v1::ProbeError>& errors);
v1::NcclTestsOutput readNcclTests(const Filesystem& files, const std::string& path,
                                  const CollectLimits& limits, std::vector<v1::ProbeError>& errors);

}  // namespace ibc::agent
