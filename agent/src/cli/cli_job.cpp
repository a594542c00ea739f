// `ibcollect --job JOBID`, `ibcollect compare`, and the node side `ibcollect job-step`.

#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "ibc/agent/analyze.h"
#include "ibc/agent/cli_common.h"
#include "ibc/agent/cli_transport.h"
#include "ibc/agent/job.h"
#include "ibc/core/compare.h"
#include "ibc/core/findings.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/slurm.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/step_output.h"
#include "ibc/core/text.h"

namespace ibc::agent::cli {

namespace {

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(s * 1000)));
}

struct JobArgs {
  std::string job;
  std::string launcher = "srun";
  std::string hosts;
  std::size_t ssh_parallelism = JobOptions{}.ssh_parallelism;
  double window = 10;
  double timeout = 15;
  std::vector<std::string> nccl_logs;
  std::vector<std::string> nccl_tests;
  std::string out;
  std::string agent;
  std::string ship_dir;   // --ship-dir; empty: kDefaultShipParent
  std::string agent_dir;  // --agent-dir; empty: this program's directory
  std::string node_config;
  ReportOptions report;
  TransportArgs transport;  // upload the nodes' snapshots when a collector is configured
};

// Who the launcher is to the collector (docs/security.md): what --job says when its transport
// settings are wrong, and what --help says.
constexpr const char* kLauncherIdentity =
    "With --collector, --job uploads the snapshots the nodes signed (each node with its own "
    "agent certificate, from its agent config: --node-config) over one connection it opens "
    "with an agent certificate of the job's tenant (OU=agent, O=<tenant>; --cert/--key or "
    "cert/key in this machine's agent config, e.g. the login node's own): the collector "
    "checks each snapshot's signer, not the connection's.";

// Where the nodes get this program's copy when no --ship-dir is given: every Linux node has
// it, local to the node.
constexpr const char* kDefaultShipParent = "/tmp";

// The ELF machine a program file is built for ("x86_64", "aarch64"), "" when it is not a
// 64-bit little-endian ELF file of either.
std::string elfArchitecture(const Filesystem& files, const std::string& path) {
  bool truncated = false;
  auto head = files.readFile(path, 20, &truncated);
  if (!head.ok() || head->size() < 20 ||
      head->compare(0, 4,
                    "\x7f"
                    "ELF") != 0 ||
      (*head)[4] != 2 || (*head)[5] != 1) {
    return {};
  }
  const unsigned machine = static_cast<unsigned char>((*head)[18]) |
                           (static_cast<unsigned>(static_cast<unsigned char>((*head)[19])) << 8);
  return machine == 62 ? "x86_64" : machine == 183 ? "aarch64" : "";
}

// The programs for nodes of each architecture: this one for its own, programFileName(ARCH)
// from `agent_dir` (default: this program's directory) for the others. A file there that is
// not the architecture its name says is a usage error (it would fail on every such node).
std::optional<std::string> findPrograms(const CliEnvironment& env, const std::string& agent_dir,
                                        JobOptions& o) {
  if (!agent_dir.empty() && (agent_dir.front() != '/' || !env.files.isDirectory(agent_dir))) {
    return "--agent-dir " + agent_dir +
           " is not a directory (an absolute path holding ibcollect-linux-ARCH programs)";
  }
  const auto slash = o.agent_path.find_last_of('/');
  o.programs_dir = !agent_dir.empty()           ? agent_dir
                   : slash == std::string::npos ? std::string(".")
                   : slash == 0                 ? std::string("/")
                                                : o.agent_path.substr(0, slash);
  while (o.programs_dir.size() > 1 && o.programs_dir.back() == '/') o.programs_dir.pop_back();
  o.programs[std::string(thisArchitecture())] = o.agent_path;
  for (const std::string arch : {"x86_64", "aarch64"}) {
    if (arch == thisArchitecture()) continue;
    const std::string path =
        (o.programs_dir == "/" ? "" : o.programs_dir) + "/" + programFileName(arch);
    if (!env.files.exists(path)) continue;
    const std::string built = elfArchitecture(env.files, path);
    if (built != arch) {
      return path + " is " +
             (built.empty() ? "not an x86_64 or aarch64 program" : "built for " + built) +
             ", not for " + arch + ": replace it with bin/ibcollect of ibcollect-VERSION-linux-" +
             arch + ".tar.gz, or pass --agent-dir DIR holding the right one";
    }
    o.programs[arch] = path;
  }
  return std::nullopt;
}

// What the nodes run. With srun and no --agent, this very program, shipped to them by srun
// --bcast: nothing has to be installed on the nodes, and the node side is always the version
// whose step protocol and verdict logic the launcher speaks (an older ibcollect installed on
// the nodes would answer in a format this one may misread). --agent PATH says "ibcollect is
// installed there, run it": no copy (a few MB per node per run saved on very large jobs).
// ssh cannot copy, so it runs this program's path (or --agent) and the nodes need it there.
// The copy goes into a directory no one can guess, made for this run (shipDirName).
// Nodes of another architecture than this program's run ibcollect-linux-ARCH from its
// directory or --agent-dir (findPrograms). Returns the usage error, if any.
std::optional<std::string> decideAgent(const CliEnvironment& env, const JobArgs& a, JobOptions& o) {
  o.agent_path = a.agent.empty() ? env.executable : a.agent;
  if (o.agent_path.empty()) {
    return "cannot tell where this ibcollect is installed: pass --agent PATH (the ibcollect path "
           "on the nodes)";
  }
  if (!a.agent.empty() && !a.agent_dir.empty()) {
    return "--agent and --agent-dir exclude each other: --agent runs the ibcollect installed on "
           "the nodes whatever their architecture; --agent-dir says where the programs for "
           "other architectures are";
  }
  if (a.agent.empty()) {
    if (auto usage = findPrograms(env, a.agent_dir, o)) return usage;
  }
  const bool ship = a.agent.empty() && o.launcher == Launcher::Srun;
  if (!a.ship_dir.empty() && !ship) {
    return "--ship-dir applies only when srun ships this program to the nodes (--launcher srun "
           "without --agent)";
  }
  if (!ship) return std::nullopt;
  const std::string parent = a.ship_dir.empty() ? kDefaultShipParent : a.ship_dir;
  if (parent.front() != '/') return "--ship-dir must be an absolute path on the nodes";
  std::random_device random;
  const uint64_t name = (uint64_t{random()} << 32) | random();
  o.ship_dir = shipDirName(parent, o.job_id, name);
  return std::nullopt;
}

std::string timestamp(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// Whether `name` appears in the file name of `path` as a whole word (nccl.node3.log,
// node3-rank5.log, but not node31.log).
bool fileNames(const std::string& path, const std::string& name) {
  if (name.empty()) return false;
  const auto slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (auto p = base.find(name); p != std::string::npos; p = base.find(name, p + 1)) {
    const std::size_t e = p + name.size();
    if ((p == 0 || !word(base[p - 1])) && (e == base.size() || !word(base[e]))) return true;
  }
  return false;
}

// NCCL logs the launcher can read itself (a shared filesystem), for logs no node brought.
// A log belongs to the node its lines name; else to the node whose name the pattern's %h
// or the file name carries; else (a container's or an address-based host name no node
// has) to a row of its own under the name the log uses, with a notice: never to whichever
// node came first.
void attachLauncherLogs(CliEnvironment& env, const JobArgs& a,
                        std::vector<core::AnalyzedNode>& nodes) {
  if (a.nccl_logs.empty() || nodes.empty()) return;
  std::set<std::string> carried;
  for (const auto& n : nodes) {
    for (const auto& l : n.snapshot.nccl_logs()) carried.insert(l.source());
  }
  const core::JobNodeIndex index(nodes);
  const std::size_t job_nodes = nodes.size();
  std::map<std::string, std::size_t> orphans;  // the log's host -> its own row
  const CollectLimits limits;
  for (const auto& pattern : a.nccl_logs) {
    // A pattern without %h names the same files for every node: expand it once.
    const bool per_host = pattern.find("%h") != std::string::npos;
    for (std::size_t i = 0; i < (per_host ? job_nodes : 1); ++i) {
      const std::string host = core::nodeName(nodes[i].snapshot);
      for (const auto& path : expandLogPattern(pattern, host)) {
        if (!carried.insert(path).second) continue;
        std::vector<v1::ProbeError> errors;
        auto log = readNcclLog(env.files, path, limits, per_host ? host : "", errors);
        for (const auto& e : errors) {
          const bool partly = e.error() == core::errorCodeName(core::ErrorCode::TooLarge);
          env.err << "ibcollect: " << (partly ? "note: " : "cannot read ") << e.path() << ": "
                  << e.message() << "\n";
        }
        std::optional<std::size_t> target;
        for (const auto& h : log.parsed().hosts()) {
          if ((target = index.find(h))) break;
        }
        if (!target && per_host) target = i;
        for (std::size_t k = 0; !target && k < job_nodes; ++k) {
          const auto& node = nodes[k].snapshot.node();
          if (fileNames(path, core::nodeName(nodes[k].snapshot)) ||
              fileNames(path, node.hostname()))
            target = k;
        }
        if (!target && log.parsed().hosts_size() == 0) {
          // No line names a host: nothing in it can be credited to a node. It still goes
          // somewhere, so what it says (or that nothing was recognised) is reported.
          target = 0;
        }
        if (!target) {
          const std::string& named = log.parsed().hosts(0);
          auto [it, fresh] = orphans.try_emplace(named, nodes.size());
          if (fresh) {
            core::AnalyzedNode row;
            row.snapshot.mutable_node()->set_hostname(named);
            row.input = path;
            row.notices.push_back("NCCL log " + path + " names host '" + named +
                                  "', which is not a node of the job (no Slurm name, "
                                  "hostname or file name matches): its findings are "
                                  "reported under that name");
            nodes.push_back(std::move(row));
          }
          target = it->second;
        }
        *nodes[*target].snapshot.add_nccl_logs() = std::move(log);
      }
    }
  }
}

// The job's nodes: Slurm's node list (a subset with --hosts), or --hosts for ssh. Prints
// what went wrong and returns the exit code when there are none to collect from.
struct JobHosts {
  std::vector<std::string> hosts;
  std::string job_state;                    // Slurm's, "" for ssh
  std::map<std::string, std::string> down;  // node -> why slurmctld says it is down
};

std::optional<int> resolveHosts(CliEnvironment& env, const JobArgs& a, const JobOptions& o,
                                JobHosts& out) {
  if (o.launcher == Launcher::Srun) {
    // scontrol retries a missing configuration for 60 s, saying so only on its stderr.
    const std::string conf = env.env.get("SLURM_CONF");
    if (!conf.empty() && !env.files.exists(conf)) {
      env.err << "ibcollect: SLURM_CONF=" << conf
              << " does not exist: Slurm's commands cannot find the cluster. Unset SLURM_CONF "
                 "or point it at the cluster's slurm.conf\n";
      return core::kExitUsage;
    }
    auto job = resolveSlurmJob(env.runner, o);
    if (!job.ok()) {
      env.err << "ibcollect: " << job.error().message << "\n";
      return job.error().code == ErrorCode::InvalidArgument ? core::kExitUsage
                                                            : core::kExitCollectFailed;
    }
    out.job_state = job->job_state;
    auto expanded = expandJobHosts(env.runner, job->node_list, o.command_timeout);
    if (!expanded.ok()) {
      env.err << "ibcollect: cannot expand the job's node list \"" << job->node_list
              << "\": " << expanded.error().message << "\n";
      return core::kExitCollectFailed;
    }
    out.hosts = std::move(expanded).value();
  }
  if (!a.hosts.empty()) {
    auto given = core::expandHostlist(a.hosts);
    if (!given.ok()) {
      env.err << "ibcollect: --hosts \"" << a.hosts << "\": " << given.error().message << "\n";
      return core::kExitUsage;
    }
    if (o.launcher == Launcher::Ssh) {
      out.hosts = std::move(given).value();
    } else {
      // A subset of the job's nodes.
      std::set<std::string> want(given->begin(), given->end());
      std::vector<std::string> kept;
      for (const auto& h : out.hosts) {
        if (want.count(h) != 0) kept.push_back(h);
      }
      out.hosts = std::move(kept);
    }
  }
  if (out.hosts.empty()) {
    env.err << "ibcollect: no nodes to collect from"
            << (o.launcher == Launcher::Ssh ? " (--launcher ssh needs --hosts H1,H2,...)" : "")
            << "\n";
    return core::kExitUsage;
  }
  if (o.launcher == Launcher::Srun)
    out.down = unresponsiveNodes(env.runner, out.hosts, o.command_timeout);
  return std::nullopt;
}

// Runs the collection on the nodes slurmctld does not already know to be down, saying what
// it is about to do and how many nodes answered.
JobCollection collectLiveNodes(CliEnvironment& env, const JobArgs& a, const JobOptions& o,
                               const JobHosts& job) {
  std::vector<std::string> live;
  for (const auto& h : job.hosts) {
    if (job.down.count(h) == 0) live.push_back(h);
  }
  env.err << "ibcollect: job " << o.job_id
          << (job.job_state.empty() ? "" : " (" + job.job_state + ")") << ": " << job.hosts.size()
          << " node(s) " << core::compressHostlist(job.hosts);
  if (!job.down.empty()) env.err << ", " << job.down.size() << " not responding per slurmctld";
  env.err << "; counter window " << a.window << " s, answers awaited up to " << a.timeout
          << " s after it";
  if (!o.ship_dir.empty())
    env.err << "; srun ships this program to the nodes (" << o.ship_dir << ")";
  for (const auto& [arch, program] : o.programs) {
    if (program != o.agent_path) env.err << "; " << arch << " nodes run " << program;
  }
  env.err << "\n";

  const bool chatty = live.size() <= 32;
  auto last_report = env.clock.steadyNow();
  auto progress = [&](std::size_t answered, std::size_t of) {
    const auto now = env.clock.steadyNow();
    if (chatty || answered == of || now - last_report > std::chrono::seconds(1)) {
      env.err << "ibcollect: " << answered << "/" << of << " nodes answered\n";
      last_report = now;
    }
  };
  JobCollection coll;
  if (!live.empty()) coll = collectJob(o, live, env.runner, env.clock, progress);
  for (const auto& n : coll.notices) env.err << "ibcollect: " << n << "\n";
  return coll;
}

// Where the nodes' snapshots are kept, and what was written there.
struct KeptSnapshots {
  std::string dir;
  std::map<std::string, std::string> files;  // node -> its .ibsnap
  std::size_t written = 0;
  bool write_failed = false;
};

// One AnalyzedNode per host to `take`, in the job's order: an unreachable one with why, else
// its snapshot, written into `kept.dir`.
void assembleNodes(CliEnvironment& env, const JobHosts& job,
                   const std::map<std::string, const NodeResult*>& by_host, KeptSnapshots& kept,
                   const std::function<void(core::AnalyzedNode)>& take) {
  for (const auto& h : job.hosts) {
    core::AnalyzedNode n;
    n.snapshot.mutable_node()->set_hostname(h);
    n.snapshot.mutable_node()->set_slurm_node(h);
    auto it = by_host.find(h);
    if (const auto down = job.down.find(h); down != job.down.end()) {
      n.unreachable_reason = down->second;
    } else if (it == by_host.end() || !it->second->answered) {
      n.unreachable_reason = it == by_host.end() ? "not launched" : it->second->unreachable_reason;
    } else if (auto snap = core::openSnapshot(it->second->envelope); !snap.ok()) {
      n.unreachable_reason = "the node's snapshot is unreadable: " + snap.error().message;
    } else {
      n.snapshot = std::move(snap).value();
      if (n.snapshot.node().slurm_node().empty()) n.snapshot.mutable_node()->set_slurm_node(h);
      if (!kept.write_failed) {
        const std::string path = kept.dir + "/" + h + ".ibsnap";
        if (auto st =
                env.writer.writeFileAtomic(path, core::encodeSnapshotFile(it->second->envelope));
            st.ok()) {
          n.snapshot_file = path;
          kept.files[h] = path;
          ++kept.written;
        } else {
          env.err << "ibcollect: cannot write " << path << ": " << st.error().message << "\n";
          kept.write_failed = true;
        }
      }
    }
    take(std::move(n));
  }
}

// Uploads what the nodes signed (each node signs with its own identity, the collector
// checks the signer's tenant against ours) over one connection with several uploads in
// flight; unsigned snapshots stay in the directory. Says when nothing was uploaded, and how
// to upload signed snapshots when no collector is configured. True when some snapshot that
// should have been delivered was not.
bool uploadSigned(CliEnvironment& env, const SnapshotTransport& transport,
                  const std::vector<std::string>& hosts,
                  const std::map<std::string, const NodeResult*>& by_host,
                  const KeptSnapshots& kept) {
  if (!transport.delivery) {
    std::size_t signed_count = 0;
    for (const auto& [h, r] : by_host) {
      if (r->answered && !r->envelope.signature().empty()) ++signed_count;
    }
    if (signed_count > 0) {
      env.err << "ibcollect: " << signed_count
              << " snapshot(s) signed by their nodes were not uploaded (no --collector): they are "
                 "in "
              << kept.dir << "; upload them with `ibcollect upload " << kept.dir
              << "/*.ibsnap --collector HOST:PORT`, or give --collector to --job\n";
    }
    return false;
  }
  bool failed = false;
  std::size_t unsigned_count = 0;
  std::vector<CollectedUpload> uploads;
  for (const auto& h : hosts) {
    auto it = by_host.find(h);
    if (it == by_host.end() || !it->second->answered) continue;
    if (it->second->envelope.signature().empty()) {
      ++unsigned_count;
      continue;
    }
    const auto file = kept.files.find(h);
    uploads.push_back({&it->second->envelope, h + "'s snapshot",
                       file == kept.files.end() ? std::string() : file->second});
  }
  if (deliverCollectedAll(env, transport, uploads, BatchReport::Summary) > 0) failed = true;
  if (unsigned_count > 0) {
    env.err << "ibcollect: " << unsigned_count
            << " node(s) have no agent identity (cert/key in their agent config), so their "
               "snapshots were not signed and not uploaded; they are in "
            << kept.dir << "\n";
    failed = true;
  }
  if (uploads.empty()) {
    env.err << "ibcollect: nothing was uploaded to " << transport.delivery->collector.text() << ": "
            << (unsigned_count > 0 ? "no node signed its snapshot" : "no node answered") << "\n";
  }
  return failed;
}

// Prints the judged job's report and where the snapshots are; the exit code.
int reportJob(CliEnvironment& env, const JobArgs& a, std::vector<core::AnalyzedNode> nodes,
              const KeptSnapshots& kept, bool delivery_failed) {
  const std::size_t total = nodes.size();
  std::size_t unreachable = 0;
  for (const auto& n : nodes) unreachable += n.unreachable_reason.empty() ? 0 : 1;
  const int code = printReport(env, std::move(nodes), a.report, /*node_table=*/true);
  if (a.report.format != "json") {
    env.out << "\n"
            << (kept.written > 0
                    ? "snapshots: " + kept.dir + " (" + std::to_string(kept.written) + " file(s))"
                    : "no snapshots kept")
            << "\n";
  } else {
    env.err << "ibcollect: snapshots in " << kept.dir << " (" << kept.written << " file(s))\n";
  }
  if (unreachable > 0) {
    env.err << "ibcollect: " << unreachable << " of " << total
            << " node(s) unreachable (named above); the report covers the others\n";
  }
  return verdictBeforeDelivery(code, unreachable > 0 || kept.write_failed || delivery_failed);
}

// --job: resolve the nodes, collect, keep the files, upload, report.
int runJob(CliEnvironment& env, const JobArgs& a) {
  auto transport = snapshotTransport(env, a.transport);
  if (!transport.ok()) {
    env.err << "ibcollect: " << transport.error().message << "\n" << kLauncherIdentity << "\n";
    return core::kExitUsage;
  }
  JobOptions o;
  o.job_id = a.job;
  o.launcher = a.launcher == "ssh" ? Launcher::Ssh : Launcher::Srun;
  o.window = seconds(a.window);
  o.timeout = seconds(a.timeout);
  o.ssh_parallelism = a.ssh_parallelism;
  o.nccl_logs = a.nccl_logs;
  o.nccl_tests = a.nccl_tests;
  o.node_config = a.node_config;
  if (auto usage = decideAgent(env, a, o)) {
    env.err << "ibcollect: " << *usage << "\n";
    return core::kExitUsage;
  }
  JobHosts job;
  if (auto code = resolveHosts(env, a, o, job)) return *code;
  const JobCollection coll = collectLiveNodes(env, a, o, job);
  if (coll.launch_refused) {
    // Nothing ran on any node: one message, no table of "unreachable" nodes.
    env.err << "ibcollect: " << *coll.launch_refused << "\n";
    return core::kExitCollectFailed;
  }
  // Not the working directory by default (often a repository or a shared home): the
  // user's state directory, and the path is printed at the end.
  KeptSnapshots kept;
  kept.dir = a.out.empty() ? userStateDir(env.env.get("XDG_STATE_HOME"), env.env.get("HOME")) +
                                 "/job" + o.job_id + "-" + timestamp(env.clock.now())
                           : a.out;
  if (auto st = env.writer.makeDirectories(kept.dir); !st.ok()) {
    env.err << "ibcollect: cannot create " << kept.dir << ": " << st.error().message
            << "; snapshots are not kept, the report below is all there is\n";
    kept.write_failed = true;
  }
  std::map<std::string, const NodeResult*> by_host;
  for (const auto& r : coll.nodes) by_host[r.node] = &r;
  // Each node is judged as it is assembled and kept slim (thousands fit in memory); logs the
  // launcher reads may belong to any node, so with them every node is assembled first.
  core::JobJudgement judgement({ruleOptions(a.report), {}});
  std::vector<core::AnalyzedNode> nodes;
  assembleNodes(env, job, by_host, kept, [&](core::AnalyzedNode n) {
    if (a.nccl_logs.empty()) {
      judgement.add(std::move(n), core::Keep::Report);
    } else {
      nodes.push_back(std::move(n));
    }
  });
  attachLauncherLogs(env, a, nodes);
  for (auto& n : nodes) judgement.add(std::move(n), core::Keep::Report);
  const bool delivery_failed = uploadSigned(env, *transport, job.hosts, by_host, kept);
  return reportJob(env, a, judgement.finish(), kept, delivery_failed);
}

int runCompare(CliEnvironment& env, const std::vector<std::string>& files,
               const ReportOptions& ro) {
  // Each snapshot is judged as it is read and kept slim: thousands of nodes fit in memory,
  // and the report reads nothing of what a slim snapshot let go (job_verdict.h).
  core::JobJudgement judgement({ruleOptions(ro), {}});
  std::size_t added = 0;
  int failed = 0;
  for (const auto& f : files) {
    auto n = readSavedNode(env.files, f);
    if (!n.ok()) {
      env.err << "ibcollect: " << n.error().message << "\n";
      ++failed;
      continue;
    }
    judgement.add(std::move(n).value(), core::Keep::Report);
    ++added;
  }
  if (added == 0) {
    env.err << "ibcollect: nothing to compare: every input failed\n";
    return core::kExitCollectFailed;
  }
  auto nodes = judgement.finish();
  const int code = printReport(env, std::move(nodes), ro, /*node_table=*/true);
  return failed > 0 ? core::kExitCollectFailed : code;
}

struct StepArgs {
  std::string config;  // the node's agent config (default /etc/ibcollect/agent.conf)
  std::string job;
  double window = 10;
  int64_t window_start_ms = 0;
  double timeout = 15;  // after the window: the step gives up and says so
  std::string node_name;
  std::vector<std::string> nccl_logs;
  std::vector<std::string> nccl_tests;
  bool shipped = false;  // this executable is a copy srun --bcast made for this step
};

// Runs on each node under srun/ssh: collect, then print the envelope as step lines.
int collectStep(CliEnvironment& env, const StepArgs& a, const std::string& node);

std::string stepNodeName(CliEnvironment& env, const StepArgs& a) {
  std::string node = a.node_name;
  if (node.empty()) node = env.env.get("SLURMD_NODENAME");
  if (node.empty() && env.process_facts) node = env.process_facts().hostname;
  return node.empty() ? "unknown-node" : node;
}

// The step itself only supervises: the collection runs in a child, so a collector that
// is killed, crashes or hangs past the deadline becomes an error line for this node and
// a normal exit for srun (which drops other nodes' output when a task dies by a signal).
int runStep(CliEnvironment& env, const StepArgs& a) {
  const std::string node = stepNodeName(env, a);
  if (a.shipped) {
    // The copy is not needed once it runs: the supervisor forks (never re-executes
    // itself), and the kernel keeps the running file until the step ends. Removing it
    // first leaves nothing behind even when the collector is killed.
    if (auto st = removeShippedCopy(env.executable, env.writer); !st.ok()) {
      env.err << "ibcollect: cannot remove the shipped copy: " << st.error().message << "\n";
    }
  }
  env.out.flush();
  auto deadline = env.clock.steadyNow() + seconds(a.window + a.timeout);
  if (a.window_start_ms > 0) {
    const auto start =
        std::chrono::system_clock::time_point(std::chrono::milliseconds(a.window_start_ms));
    deadline =
        env.clock.steadyNow() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(start - env.clock.now()) +
        seconds(a.window + a.timeout * 0.8);
  }
  auto r = runSupervised([&] { return collectStep(env, a, node); }, deadline);
  std::string why;
  if (!r.ok()) {
    why = "cannot start the collector: " + r.error().message;
  } else if (r->timed_out) {
    why = "the collector did not finish in time (hung in a kernel read?); stopped it";
  } else if (r->signal != 0) {
    why = "the collector was killed by signal " + std::to_string(r->signal) +
          (r->signal == 9 ? " (SIGKILL: out of memory?)" : "");
  } else if (r->exit_code != 0) {
    why = "the collector failed (exit code " + std::to_string(r->exit_code) + ")";
  }
  if (!why.empty()) {
    env.out << core::encodeStepError(node, why);
    env.out.flush();
  }
  return core::kExitOk;
}

int collectStep(CliEnvironment& env, const StepArgs& a, const std::string& node) {
  auto host = env.open_root("/");
  const ProcessFacts facts = env.process_facts ? env.process_facts() : ProcessFacts{};
  CollectOptions co;
  co.root = "/";
  co.window = seconds(a.window);
  if (a.window_start_ms > 0) {
    co.window_start =
        std::chrono::system_clock::time_point(std::chrono::milliseconds(a.window_start_ms));
  }
  co.job_id = a.job;
  co.agent_version = IBC_VERSION;
  // NCCL_DEBUG_FILE patterns: %h is this node's hostname (and its Slurm name). A pattern
  // without %h names a place every node reads (a shared filesystem): only the logs whose
  // NCCL lines name this node (or no host) are kept, or every node would carry, and the
  // launcher count, every rank's log.
  std::set<std::string> logs, shared, tests;
  for (const auto& name : std::set<std::string>{node, facts.hostname}) {
    if (name.empty()) continue;
    for (const auto& p : a.nccl_logs) {
      if (p.find("%h") == std::string::npos) continue;
      for (auto& f : expandLogPattern(p, name)) logs.insert(std::move(f));
    }
    for (const auto& p : a.nccl_tests) {
      for (auto& f : expandLogPattern(p, name)) tests.insert(std::move(f));
    }
  }
  for (const auto& p : a.nccl_logs) {
    if (p.find("%h") != std::string::npos) continue;
    for (auto& f : expandLogPattern(p, node)) {
      if (logs.count(f) == 0) shared.insert(std::move(f));
    }
  }
  co.nccl_logs.assign(logs.begin(), logs.end());
  co.shared_nccl_logs.assign(shared.begin(), shared.end());
  co.node_names = {node};
  if (!facts.hostname.empty()) co.node_names.push_back(facts.hostname);
  co.nccl_tests.assign(tests.begin(), tests.end());
  HostSeams seams{*host,  env.files, env.runner, env.clock, env.env, [facts] { return facts; },
                  nullptr};
  auto snap = collectSnapshot(co, seams);
  // Sign with this node's identity when its agent config names one; the launcher uploads.
  TransportArgs identity;
  for (std::size_t i = 0; i < a.config.size(); ++i) {  // %h = this node
    if (a.config[i] == '%' && i + 1 < a.config.size() && a.config[i + 1] == 'h') {
      identity.config += node;
      ++i;
    } else {
      identity.config += a.config[i];
    }
  }
  ::ibcollect::v1::SignedSnapshot envelope;
  auto t = snapshotTransport(env, identity);
  if (!t.ok()) {
    auto* pe = snap.add_probe_errors();
    pe->set_probe("identity");
    pe->set_error(std::string(core::errorCodeName(t.error().code)));
    pe->set_message(t.error().message + " (snapshot left unsigned)");
  }
  if (t.ok() && t->signer) {
    auto signed_env = envelopeFor(*t, snap);
    if (signed_env.ok()) {
      envelope = std::move(signed_env).value();
    } else {
      auto* pe = snap.add_probe_errors();
      pe->set_probe("identity");
      pe->set_error(std::string(core::errorCodeName(signed_env.error().code)));
      pe->set_message(signed_env.error().message + " (snapshot left unsigned)");
    }
  }
  if (envelope.snapshot().empty()) envelope = core::wrapUnsigned(snap);
  for (const auto& line : core::encodeStepOutput(node, envelope.SerializeAsString()))
    env.out << line;
  env.out.flush();
  return env.out.good() ? core::kExitOk : core::kExitCollectFailed;
}

// --job's report options (the top-level app's, in its "Job" group): what analyze and compare
// take through addReportOptions.
void addJobReportOptions(CLI::App& app, ReportOptions& report) {
  app.add_option("--format", report.format, "Output: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->group("Job");
  app.add_option("--expect-rate", report.expect_rate,
                 "Expected link rate, Gb/s (default: the peers' majority)")
      ->check(CLI::PositiveNumber)
      ->group("Job");
  app.add_option("--expect-busbw", report.expect_busbw,
                 "nccl-tests bus bandwidth a healthy run reaches, GB/s (default: half of each "
                 "node's active RDMA links)")
      ->check(CLI::PositiveNumber)
      ->group("Job");
  app.add_flag("--no-info", report.quiet_info, "Text output: hide info-level findings")
      ->group("Job");
  app.add_flag("-q,--quiet", report.quiet, "Text output: the verdict table and counts only")
      ->group("Job");
  app.add_flag("-v,--verbose", report.verbose,
               "Text output: every place and every evidence line of each finding")
      ->group("Job");
  app.add_option("--color", report.color,
                 "Colour the severity words: auto (a terminal, unless NO_COLOR is set), always, "
                 "never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->group("Job");
  app.add_option("--width", report.width,
                 "Text output: wrap at N columns (default: $COLUMNS, else the terminal's width, "
                 "else no wrapping)")
      ->check(CLI::Range(20, 1000))
      ->group("Job");
}

}  // namespace

void addJobCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands) {
  auto ja = std::make_shared<JobArgs>();
  app.add_option("--job", ja->job,
                 "Slurm job id: collect every node of the job through Slurm, compare them, print a "
                 "per-node verdict")
      ->group("Job");
  app.add_option("--launcher", ja->launcher, "How to reach the nodes: srun (default) or ssh")
      ->check(CLI::IsMember({"srun", "ssh"}))
      ->group("Job");
  app.add_option("--hosts", ja->hosts,
                 "Nodes for --launcher ssh, or a subset of the job's nodes (hostlist)")
      ->group("Job");
  app.add_option("--ssh-parallelism", ja->ssh_parallelism,
                 "--launcher ssh: hosts collected at once; more hosts go in waves, each wave "
                 "with its own counter window")
      ->check(CLI::Range(std::size_t{1}, kMaxSshParallelism))
      ->capture_default_str()
      ->group("Job");
  app.add_option("--window", ja->window,
                 "Counter window in seconds, started on every node at the same moment")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str()
      ->group("Job");
  app.add_option("--timeout", ja->timeout,
                 "Seconds to wait for nodes after the window; later ones are reported unreachable")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str()
      ->group("Job");
  app.add_option("--nccl-log", ja->nccl_logs,
                 "NCCL_DEBUG_FILE path or glob, %h = hostname, read on each node (repeatable)")
      ->group("Job");
  app.add_option("--nccl-tests", ja->nccl_tests,
                 "nccl-tests output path or glob, %h = hostname (repeatable)")
      ->group("Job");
  app.add_option("--out", ja->out,
                 "Directory for the nodes' snapshots (default "
                 "$XDG_STATE_HOME/ibcollect/job<ID>-<time>, else "
                 "~/.local/state/ibcollect/job<ID>-<time>; printed at the end)")
      ->group("Job");
  app.add_option("--agent", ja->agent,
                 "ibcollect installed on the nodes at PATH: run it there. Default: srun ships "
                 "this program to the nodes (srun --bcast) and runs that copy, so nothing needs "
                 "to be installed on them; --launcher ssh runs this program's path")
      ->group("Job");
  app.add_option("--agent-dir", ja->agent_dir,
                 "Directory holding ibcollect-linux-ARCH (ARCH as `uname -m` prints it: x86_64, "
                 "aarch64) for nodes of another architecture than this program's; default: this "
                 "program's own directory. Each node's architecture comes from Slurm (Arch=) or, "
                 "over ssh, from the node's uname -m")
      ->group("Job");
  app.add_option("--ship-dir", ja->ship_dir,
                 "Node-local directory in which srun puts the copy of this program (in a "
                 "private directory made for the run and removed after it); it must allow "
                 "execution (not noexec). Default /tmp")
      ->group("Job");
  addJobReportOptions(app, ja->report);
  app.add_option("--node-config", ja->node_config,
                 std::string("Agent config on the nodes (their signing identity), %h = node; "
                             "default: each node's /etc/ibcollect/agent.conf. ") +
                     kLauncherIdentity)
      ->group("Job");
  addTransportOptions(&app, ja->transport);

  auto files = std::make_shared<std::vector<std::string>>();
  auto cro = std::make_shared<ReportOptions>();
  CLI::App* cmp =
      app.add_subcommand("compare", "Compare saved snapshots of several nodes (as --job does)");
  cmp->add_option("files", *files, "Snapshots (FILE.ibsnap)")->required()->check(CLI::ExistingFile);
  addReportOptions(cmp, *cro);
  cmp->footer(helpFooter({"ibcollect compare run/*.ibsnap",
                          "ibcollect compare --format json before/*.ibsnap after/*.ibsnap"},
                         kExitCodes));

  auto sa = std::make_shared<StepArgs>();
  CLI::App* step =
      app.add_subcommand("job-step", "Node side of --job (run by srun/ssh; prints step lines)");
  step->group("");  // hidden from --help
  step->add_option("--job", sa->job);
  step->add_option("--config", sa->config);
  step->add_option("--window", sa->window)->check(CLI::Range(0.0, 3600.0));
  step->add_option("--window-start", sa->window_start_ms);
  step->add_option("--timeout", sa->timeout);
  step->add_option("--node-name", sa->node_name);
  step->add_option("--nccl-log", sa->nccl_logs);
  step->add_option("--nccl-tests", sa->nccl_tests);
  step->add_flag("--shipped", sa->shipped);

  commands.push_back({[cmp] { return cmp->parsed(); },
                      [&env, files, cro] { return runCompare(env, *files, *cro); }});
  commands.push_back({[step] { return step->parsed(); }, [&env, sa] { return runStep(env, *sa); }});
  // Last: --job applies only when no subcommand was given.
  commands.push_back({[ja] { return !ja->job.empty(); }, [&env, ja] { return runJob(env, *ja); }});
}

}  // namespace ibc::agent::cli
