#pragma once

// `ibcollect --job JOBID`: resolve a Slurm job's nodes, run one collection step per node
// through Slurm itself (srun --overlap) or OpenSSH, and bring every node's snapshot back
// over the launcher's stdout (no shared filesystem). All nodes start their counter
// window at the same wall-clock moment; a node that does not answer in time is reported
// by name as unreachable and the others are still reported.
//
// Zero-install: with srun and no --agent, the launcher ships its own executable to the
// nodes through Slurm (srun --bcast) and runs that copy, so nothing needs to be installed
// on them and the node side is always the version whose verdict logic the launcher runs.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ibc/agent/seams.h"
#include "ibc/core/slurm.h"
#include "ibcollect/v1/signed.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::agent {

namespace v1 = ::ibcollect::v1;

enum class Launcher { Srun, Ssh };

// Upper bound of JobOptions::ssh_parallelism: one ssh process, two pipes and one thread
// per host in flight on the launching machine.
inline constexpr std::size_t kMaxSshParallelism = 256;

struct JobOptions {
  std::string job_id;
  Launcher launcher = Launcher::Srun;
  std::vector<std::string> hosts;  // --hosts (ssh), or a subset of the job's nodes (srun)
  std::chrono::milliseconds window{10000};
  // How long to wait for answers after the counter window has ended.
  std::chrono::milliseconds timeout{15000};
  // The window starts this long after launch so every node is ready for it.
  std::chrono::milliseconds launch_slack{500};
  std::vector<std::string> nccl_logs;  // patterns, %h = the node's hostname
  std::vector<std::string> nccl_tests;
  // ibcollect on the nodes, or (ship_dir set) this program's own path, which srun copies.
  std::string agent_path;
  // srun only: ship agent_path to the nodes (srun --bcast) into this directory, made on each
  // node for this run (mode 0700, a name no one can guess: see shipDirName) and removed
  // again; empty: run agent_path as installed on the nodes.
  std::string ship_dir;
  // Without --agent: the program each node runs by the node's architecture (spelled as
  // `uname -m`, core::canonicalArch): this program for its own (thisArchitecture()), and
  // programFileName(ARCH) found beside it or in --agent-dir for the others. srun reads every
  // node's Arch= from `scontrol show node` and runs one step per architecture, all with one
  // window start; ssh sends each node a command that picks by `uname -m` there. A node whose
  // architecture has no program is named with the file to install (programs_dir). Empty:
  // agent_path on every node.
  std::map<std::string, std::string> programs;  // architecture -> path on this machine
  std::string programs_dir;
  // Added to launch_slack when shipping: the copy must have landed before the window opens.
  std::chrono::milliseconds ship_slack{1500};
  // The nodes' agent config (identity to sign with), a path on the nodes, %h = the node;
  // empty: each node's /etc/ibcollect/agent.conf when it exists.
  std::string node_config;
  // --launcher ssh: hosts in their window at once (--ssh-parallelism, clamped to
  // 1..kMaxSshParallelism). More hosts are collected in waves of this size, each wave with
  // its own counter window start (see collectJob).
  std::size_t ssh_parallelism = 64;
  std::chrono::milliseconds command_timeout{15000};  // scontrol / sinfo
};

// Error codes: InvalidArgument = no such job, or one PrivateData hides (Slurm says
// "Invalid job id specified" for both; usage); Unavailable = Slurm not installed
// or not answering; PermissionDenied = the job is not visible to this user; Unsupported =
// the job is not running (its nodes are no longer allocated to it). Messages say what to
// do next.
Result<core::SlurmJob> resolveSlurmJob(CommandRunner& runner, const JobOptions& options);

// Host names of a hostlist through `scontrol show hostnames` (falls back to the built-in
// expansion when scontrol cannot).
Result<std::vector<std::string>> expandJobHosts(CommandRunner& runner, const std::string& hostlist,
                                                std::chrono::milliseconds timeout);

// Nodes of `hosts` that slurmctld already knows it cannot reach (state with '*', down,
// fail), with the reason; empty when sinfo is not available.
std::map<std::string, std::string> unresponsiveNodes(CommandRunner& runner,
                                                     const std::vector<std::string>& hosts,
                                                     std::chrono::milliseconds timeout);

struct NodeResult {
  std::string node;
  bool answered = false;
  std::string unreachable_reason;  // when !answered
  v1::SignedSnapshot envelope;     // when answered
};

struct JobCollection {
  std::vector<NodeResult> nodes;  // in the job's host order
  // The counter window start the nodes were given (with ssh waves: the first wave's).
  std::chrono::system_clock::time_point window_start;
  std::size_t waves = 0;             // ssh: waves of ssh_parallelism hosts launched
  std::vector<std::string> notices;  // launcher messages worth showing (srun errors, ...)
  // srun refused the step before any node answered (the user may see the job but not
  // run steps in it; the job is gone or hidden by PrivateData): what to tell the user.
  // The nodes are then not at fault and must not be reported as unreachable.
  std::optional<std::string> launch_refused;
};

// Runs the collection step on `hosts`. `progress(answered, total)` is called as nodes
// answer. srun: one step on every host, one window start; never waits longer than
// launch_slack + window + timeout (+ a few seconds to stop the launcher). ssh: hosts in
// waves of ssh_parallelism, each wave with its own window start (launch_slack after it is
// launched) and that same bound, so at most ceil(hosts / ssh_parallelism) times it.
JobCollection collectJob(const JobOptions& options, const std::vector<std::string>& hosts,
                         CommandRunner& runner, Clock& clock,
                         const std::function<void(std::size_t, std::size_t)>& progress);

// The argv a node runs (exposed for tests and `--help`). When shipping, argv[0] is the
// launcher's own path: srun --bcast copies it and runs the copy instead.
std::vector<std::string> stepArgv(const JobOptions& options, int64_t window_start_unix_ms);

// The architecture this program was built for, as `uname -m` spells it ("x86_64",
// "aarch64").
std::string_view thisArchitecture();

// The file name --job looks for beside itself (or in --agent-dir) to ship to nodes of
// `arch`: "ibcollect-linux-aarch64" (the portable program, as the tarball of that
// architecture holds it in bin/).
std::string programFileName(std::string_view arch);

// Each host's architecture from `scontrol show node HOSTLIST` (canonicalArch spelling);
// hosts Slurm does not know the architecture of (never registered, scontrol failing) are
// absent.
std::map<std::string, std::string> nodeArchitectures(CommandRunner& runner,
                                                     const std::vector<std::string>& hosts,
                                                     std::chrono::milliseconds timeout);

// The private directory a run ships into: PARENT/ibcollect-job<JOB>-<16 hex digits of
// `random`>. Unguessable, so no other user of a node can create it (or a symlink by its
// name) first; `parent` must be node-local (each node gets its own copy) and not noexec.
std::string shipDirName(const std::string& parent, const std::string& job_id, uint64_t random);

// Node side of shipping: removes the running copy `executable` (it keeps running: Linux
// frees the file when the process ends) and then its directory when it is empty (other
// nodes' copies share it on a shared filesystem; the last one removes it). Only a path
// shaped like a shipped copy (shipDirName()/slurm_bcast_*) is touched: InvalidArgument
// otherwise. Errors: those of FileWriter::removeFile.
core::Status removeShippedCopy(const std::string& executable, FileWriter& writer);

// Expands a --nccl-log pattern for one host: "%h" → host; then shell-style globbing.
std::vector<std::string> expandLogPattern(const std::string& pattern, const std::string& host);

}  // namespace ibc::agent
