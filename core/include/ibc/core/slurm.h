#pragma once

// Slurm text the `--job` launcher reads: `scontrol show job JOBID` and hostlist
// expressions ("node[1433,1787,1889-1890]"). Pure parsers over text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/result.h"

namespace ibc::core {

struct SlurmJob {
  std::string job_id;  // "8401413" ("" when the text lacks the JobId line)
  std::string job_name;
  std::string job_state;  // "RUNNING", "PENDING", "COMPLETED", "FAILED", ...
  std::string reason;     // "None", "NonZeroExitCode", ...
  std::string node_list;  // hostlist expression as printed, "" for "(null)"
  std::string batch_host;
  std::string partition;
  std::string user;  // "test_username(1472000020)"
  uint32_t num_nodes = 0;
  uint32_t num_tasks = 0;
  std::string run_time;  // "2-05:32:24"
  std::string array_job_id;
  std::string array_task_id;
};

// Parses `scontrol show job` output for one job. Tolerates a missing JobId line,
// markdown emphasis (`**JobState=...**`) and continuation lines; `NodeList=` is the
// allocated list (ReqNodeList=/ExcNodeList= are not). Malformed when no JobState and no
// NodeList is found (not scontrol output).
Result<SlurmJob> parseScontrolShowJob(std::string_view text);

// One node of `scontrol show node [HOSTLIST]` (multi-line records or `scontrol -o` lines).
struct SlurmNode {
  std::string name;   // NodeName=
  std::string arch;   // Arch= as slurmd reported `uname -m` ("x86_64", "aarch64"); "" when
                      // Slurm does not know it yet ("(null)": the node never registered)
  std::string state;  // State= ("IDLE", "MIXED+DRAIN", "DOWN*", ...)
};

// Every NodeName= record in the text, in order. Tolerates markdown emphasis and any
// indentation; keys other than NodeName/Arch/State are ignored. Empty when none.
std::vector<SlurmNode> parseScontrolShowNodes(std::string_view text);

// An architecture name as ibcollect's per-architecture programs spell it (`uname -m` on
// Linux): "x86_64" or "aarch64"; "amd64"/"arm64" (Debian's, macOS's) map to them. Anything
// else is returned unchanged.
std::string canonicalArch(std::string_view arch);

// True for states whose nodes are allocated to the job right now.
bool jobStateIsActive(std::string_view state);

// Expands a Slurm hostlist ("node[1433,1787,1889-1890],gpu[01-02]", "a[1-2]b[3-4]",
// "login1") into host names, keeping zero padding ("gpu[01-02]" → gpu01, gpu02). Errors:
// Malformed (unbalanced brackets, bad ranges), TooLarge (more than max_hosts names).
Result<std::vector<std::string>> expandHostlist(std::string_view hostlist,
                                                std::size_t max_hosts = 100000);

// The inverse for display: compresses names into a hostlist expression.
std::string compressHostlist(const std::vector<std::string>& hosts);

// A host name's short form: up to the first dot ("node7.cluster.local" → "node7"). An IPv4
// address stays whole: its first label says nothing about which machine it is.
std::string_view shortHostName(std::string_view name);

// Whether two host names name the same machine: equal, or equal short forms (a log may
// print the FQDN, Slurm the short name). Empty names name nothing.
bool sameHostName(std::string_view a, std::string_view b);

}  // namespace ibc::core
