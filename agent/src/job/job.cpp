#include "ibc/agent/job.h"

#include "ibc/core/snapshot_file.h"

#include <glob.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "ibc/core/step_output.h"
#include "ibc/core/text.h"

namespace ibc::agent {

namespace {

std::string firstLine(std::string_view s) {
  s = core::trim(s);
  return core::printable(s.substr(0, s.find('\n')), 300);
}

// POSIX single-quoting for the remote shell ssh hands its command to.
std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// The first `n` non-empty lines of a command's stderr, printable, joined by " / ".
std::string firstLines(std::string_view text, std::size_t n) {
  std::string out;
  std::size_t taken = 0;
  core::forEachLine(text, [&](std::string_view line, uint32_t) {
    line = core::trim(line);
    if (line.empty() || taken == n) return;
    out += (taken++ == 0 ? "" : " / ") + core::printable(line, 300);
  });
  return out;
}

}  // namespace

Result<core::SlurmJob> resolveSlurmJob(CommandRunner& runner, const JobOptions& o) {
  if (!runner.available("scontrol")) {
    return Error{ErrorCode::Unavailable,
                 "Slurm is not installed here (no scontrol on PATH): run `ibcollect --job` on a "
                 "login node of "
                 "the cluster, or collect over ssh with --launcher ssh --hosts H1,H2,..."};
  }
  auto r = runner.run({"scontrol", "show", "job", o.job_id}, o.command_timeout, 1u << 20);
  if (!r.ok()) return Error{ErrorCode::Unavailable, "cannot run scontrol: " + r.error().message};
  if (r->timed_out) {
    // What scontrol said while it waited (a configuration it cannot read, a controller it
    // retries) is the reason; without a word from it, the controller is the likely one.
    const std::string said = firstLines(r->err, 3);
    return Error{
        ErrorCode::Unavailable,
        "scontrol did not answer within " + std::to_string(o.command_timeout.count() / 1000) +
            " s" +
            (said.empty() ? ": is slurmctld up and reachable from here?" : "; it said: " + said)};
  }
  const std::string err = r->err + r->out;
  if (r->exit_code != 0 || core::containsIgnoreCase(r->err, "error")) {
    if (core::containsIgnoreCase(err, "Invalid job id")) {
      // Slurm gives the same answer for a job hidden by PrivateData=jobs.
      return Error{ErrorCode::InvalidArgument,
                   "job " + o.job_id +
                       " does not exist or is not visible to you (Slurm PrivateData): Slurm "
                       "answers \"Invalid job id specified\" for both. Check the id with "
                       "`squeue -u $USER` or `sacct -j " +
                       o.job_id + "`; another user's job needs its owner or a Slurm operator"};
    }
    if (core::containsIgnoreCase(err, "permission denied") ||
        core::containsIgnoreCase(err, "Access/permission")) {
      return Error{ErrorCode::PermissionDenied,
                   "Slurm does not let this user see job " + o.job_id +
                       " (PrivateData): run as the job's owner or an operator"};
    }
    if (r->exit_code != 0) {
      return Error{ErrorCode::Unavailable,
                   "scontrol show job " + o.job_id + " failed: " + firstLine(err)};
    }
  }
  auto job = core::parseScontrolShowJob(r->out);
  if (!job.ok()) {
    return Error{ErrorCode::Unavailable,
                 "unexpected `scontrol show job` output: " + firstLine(r->out)};
  }
  if (!core::jobStateIsActive(job->job_state)) {
    std::string why =
        job->job_state == "PENDING" ? "has no nodes yet" : "no longer holds its nodes";
    return Error{
        ErrorCode::Unsupported,
        "job " + o.job_id + " is " + job->job_state +
            (job->reason.empty() || job->reason == "None" ? "" : " (" + job->reason + ")") +
            " and " + why +
            ": nothing to collect through Slurm. Analyze saved snapshots (`ibcollect compare`), or "
            "collect from the nodes with --launcher ssh --hosts " +
            (job->node_list.empty() ? std::string("H1,H2,...") : job->node_list)};
  }
  if (job->node_list.empty()) {
    return Error{ErrorCode::Unsupported, "job " + o.job_id + " lists no allocated nodes"};
  }
  return job;
}

Result<std::vector<std::string>> expandJobHosts(CommandRunner& runner, const std::string& hostlist,
                                                std::chrono::milliseconds timeout) {
  if (runner.available("scontrol")) {
    auto r = runner.run({"scontrol", "show", "hostnames", hostlist}, timeout, 16u << 20);
    if (r.ok() && r->exit_code == 0 && !r->timed_out) {
      std::vector<std::string> hosts;
      core::forEachLine(r->out, [&](std::string_view line, uint32_t) {
        line = core::trim(line);
        if (!line.empty()) hosts.emplace_back(line);
      });
      if (!hosts.empty()) return hosts;
    }
  }
  return core::expandHostlist(hostlist);
}

std::map<std::string, std::string> unresponsiveNodes(CommandRunner& runner,
                                                     const std::vector<std::string>& hosts,
                                                     std::chrono::milliseconds timeout) {
  std::map<std::string, std::string> out;
  if (!runner.available("sinfo") || hosts.empty()) return out;
  auto r = runner.run({"sinfo", "-h", "-N", "-n", core::compressHostlist(hosts), "-o", "%N %t"},
                      timeout, 16u << 20);
  if (!r.ok() || r->exit_code != 0 || r->timed_out)
    return out;  // unknown: let the launcher find out
  core::forEachLine(r->out, [&](std::string_view line, uint32_t) {
    const auto f = core::splitWhitespace(line);
    if (f.size() < 2) return;
    const std::string state(f[1]);
    // '*' = slurmctld cannot reach the node's slurmd; down/fail: out of service.
    if (state.find('*') != std::string::npos || core::startsWith(state, "down") ||
        core::startsWith(state, "fail")) {
      out[std::string(f[0])] = "slurmctld reports the node as " + state +
                               (state.find('*') != std::string::npos ? " (not responding)" : "");
    }
  });
  return out;
}

std::string_view thisArchitecture() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
#error "ibcollect ships to x86_64 and aarch64 nodes: name this architecture as uname -m does"
#endif
}

std::string programFileName(std::string_view arch) {
  return "ibcollect-linux-" + std::string(arch);
}

std::map<std::string, std::string> nodeArchitectures(CommandRunner& runner,
                                                     const std::vector<std::string>& hosts,
                                                     std::chrono::milliseconds timeout) {
  std::map<std::string, std::string> out;
  if (!runner.available("scontrol") || hosts.empty()) return out;
  auto r =
      runner.run({"scontrol", "show", "node", core::compressHostlist(hosts)}, timeout, 64u << 20);
  // A node scontrol does not know makes it fail for the whole list; the others are still
  // printed, so whatever was printed is used.
  if (!r.ok() || r->timed_out) return out;
  const std::set<std::string> wanted(hosts.begin(), hosts.end());
  for (auto& n : core::parseScontrolShowNodes(r->out)) {
    if (!n.arch.empty() && wanted.count(n.name) != 0) out[n.name] = core::canonicalArch(n.arch);
  }
  return out;
}

std::vector<std::string> stepArgv(const JobOptions& o, int64_t window_start_unix_ms) {
  char window[32];
  std::snprintf(window, sizeof window, "%.3f", static_cast<double>(o.window.count()) / 1000.0);
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "%.3f", static_cast<double>(o.timeout.count()) / 1000.0);
  std::vector<std::string> argv{
      o.agent_path, "job-step", "--job",          o.job_id,
      "--window",   window,     "--window-start", std::to_string(window_start_unix_ms),
      "--timeout",  timeout};
  // The node removes its copy as soon as it runs (see removeShippedCopy).
  if (!o.ship_dir.empty()) argv.push_back("--shipped");
  if (!o.node_config.empty()) {
    argv.push_back("--config");
    argv.push_back(o.node_config);
  }
  for (const auto& p : o.nccl_logs) {
    argv.push_back("--nccl-log");
    argv.push_back(p);
  }
  for (const auto& p : o.nccl_tests) {
    argv.push_back("--nccl-tests");
    argv.push_back(p);
  }
  return argv;
}

std::vector<std::string> expandLogPattern(const std::string& pattern, const std::string& host) {
  std::string p;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'h') {
      p += host;
      ++i;
    } else {
      p += pattern[i];
    }
  }
  glob_t g{};
  std::vector<std::string> out;
  if (::glob(p.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

std::string shipDirName(const std::string& parent, const std::string& job_id, uint64_t random) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(random));
  std::string dir = parent;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return (dir == "/" ? "" : dir) + "/ibcollect-job" + job_id + "-" + hex;
}

core::Status removeShippedCopy(const std::string& executable, FileWriter& writer) {
  const auto slash = executable.find_last_of('/');
  if (slash == std::string::npos || slash == 0) {
    return Error{ErrorCode::InvalidArgument, "not a shipped copy: " + executable};
  }
  const std::string dir = executable.substr(0, slash);
  const std::string dir_name = dir.substr(dir.find_last_of('/') + 1);
  // srun --bcast=DIR/ names each node's copy slurm_bcast_<job>.<step>_<node>. Anything
  // else is an installed ibcollect run with --shipped by hand: never delete that.
  if (!core::startsWith(executable.substr(slash + 1), "slurm_bcast_") ||
      !core::startsWith(dir_name, "ibcollect-job")) {
    return Error{ErrorCode::InvalidArgument, "not a shipped copy: " + executable};
  }
  if (auto st = writer.removeFile(executable); !st.ok()) return st;
  // Other nodes' copies still in it (a shared filesystem): the last node removes it.
  (void)writer.removeEmptyDirectory(dir);
  return {};
}

namespace {

// The line of srun's stderr worth showing (its first error, else its first line), with
// srun's own "srun: " prefix once.
std::string srunNotice(const std::string& err) {
  std::string pick;
  core::forEachLine(err, [&](std::string_view line, uint32_t) {
    if (pick.empty() && core::containsIgnoreCase(line, "error")) pick = firstLine(line);
  });
  if (pick.empty()) pick = firstLine(err);
  return core::startsWith(pick, "srun:") ? pick : "srun: " + pick;
}

// srun refusing the whole step before any node ran it: the job is not this user's to
// step into, or it is gone (or hidden by PrivateData). Every node would otherwise be
// listed as unreachable for a reason that has nothing to do with the nodes.
std::optional<std::string> srunRefusal(const std::string& err, const std::string& job_id,
                                       const std::vector<std::string>& hosts) {
  const std::string said = srunNotice(err);
  // Slurm's text for ESLURM_ACCESS_DENIED; a plain "Permission denied" is a node's own
  // (execve of the agent), not Slurm refusing the step.
  if (core::containsIgnoreCase(err, "Access/permission denied")) {
    return "Slurm does not let this user run a step in job " + job_id + " (" + said +
           "): only the job's owner, or a Slurm operator or administrator, can. Run ibcollect "
           "--job as the job's owner, or collect over ssh with --launcher ssh --hosts " +
           core::compressHostlist(hosts);
  }
  if (core::containsIgnoreCase(err, "Invalid job id") ||
      core::containsIgnoreCase(err, "has expired") ||
      core::containsIgnoreCase(err, "already completing or completed")) {
    return "srun cannot attach to job " + job_id + " (" + said +
           "): the job ended after it was looked up, or Slurm PrivateData hides it from this "
           "user. Check it with `squeue -j " +
           job_id + "`";
  }
  return std::nullopt;
}

// Whether `name` occurs in `line` as a whole word (node1 must not match node10).
bool namesHost(std::string_view line, const std::string& name) {
  for (auto pos = line.find(name); pos != std::string_view::npos; pos = line.find(name, pos + 1)) {
    const auto end = pos + name.size();
    if ((pos == 0 || !std::isalnum(static_cast<unsigned char>(line[pos - 1]))) &&
        (end >= line.size() || !std::isalnum(static_cast<unsigned char>(line[end]))))
      return true;
  }
  return false;
}

// The task number srun's --label put before a task's own stderr line ("3: ..."), or -1.
int labelledTask(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == digits || i + 1 >= line.size() || line[i] != ':' || line[i + 1] != ' ') return -1;
  return std::atoi(std::string(line.substr(digits, i - digits)).c_str());
}

// Reasons srun gives on stderr, by node name ("srun: error: node4: task 3: ...",
// "... failed on node node4: Communication connection failure"), and a task's own stderr
// ("3: slurmstepd-node4: error: execve(): ...", "3: ibcollect: error while loading shared
// libraries: ...") for the node srun names as running that task. srun's bare "task 3:
// Exited with exit code N" is kept only when nothing says more.
std::map<std::string, std::string> srunNodeErrors(const std::string& err,
                                                  const std::vector<std::string>& hosts) {
  std::map<int, std::string> task_node;  // from "srun: error: NODE: task N: ..."
  std::vector<std::string_view> lines;
  core::forEachLine(err, [&](std::string_view line, uint32_t) {
    lines.push_back(line);
    const auto at = line.find(": task ");
    if (at == std::string_view::npos) return;
    for (const auto& h : hosts) {
      if (at >= h.size() && line.substr(at - h.size(), h.size()) == h) {
        task_node[std::atoi(std::string(line.substr(at + 7)).c_str())] = h;
      }
    }
  });
  std::map<std::string, std::string> detail, bare;
  for (const auto line : lines) {
    const bool exit_only = line.find("Exited with exit code") != std::string_view::npos;
    auto& into = exit_only ? bare : detail;
    bool named = false;
    for (const auto& h : hosts) {
      if (!namesHost(line, h)) continue;
      named = true;
      if (into.count(h) == 0) into[h] = core::printable(core::trim(line), 300);
    }
    const int task = named ? -1 : labelledTask(line);
    if (auto it = task_node.find(task); it != task_node.end() && detail.count(it->second) == 0) {
      detail[it->second] = core::printable(core::trim(line), 300);
    }
  }
  for (auto& [h, why] : bare) detail.emplace(h, std::move(why));
  return detail;
}

// What a node's srun error means for the user, with what to do about it.
std::string explainNodeError(const JobOptions& o, const std::string& said) {
  const bool shipped = !o.ship_dir.empty();
  if (core::containsIgnoreCase(said, "error while loading shared libraries")) {
    return "ibcollect cannot start on the node: a shared library it needs is missing there (" +
           said +
           "): install ibcollect's package dependencies on the nodes, or install ibcollect there "
           "and pass --agent PATH";
  }
  if (core::containsIgnoreCase(said, "execve()") && shipped &&
      core::containsIgnoreCase(said, "Permission denied")) {
    return "the copy of ibcollect srun shipped to the node cannot be run there (" + said +
           "): " + o.ship_dir.substr(0, o.ship_dir.find_last_of('/')) +
           " is probably mounted noexec on the node: pass --ship-dir DIR (a node-local directory "
           "that allows execution), or install ibcollect on the nodes and pass --agent PATH";
  }
  if (core::containsIgnoreCase(said, "execve()") && !shipped &&
      core::containsIgnoreCase(said, "No such file")) {
    return "ibcollect is not installed at " + o.agent_path + " on the node (" + said +
           "): install it there, or leave out --agent so that srun ships this program to the "
           "nodes";
  }
  return said;
}

// `srun --jobid=J --overlap` on exactly `hosts`, one task each.
std::vector<std::string> srunOn(const JobOptions& o, const std::vector<std::string>& hosts) {
  return {"srun",
          "--jobid=" + o.job_id,
          "--overlap",
          "-N",
          std::to_string(hosts.size()),
          "--ntasks-per-node=1",
          "--nodelist=" + core::compressHostlist(hosts),
          "--kill-on-bad-exit=0"};
}

// Every node's step lines as they arrive (the ssh fan-out feeds it from several threads).
class StepAnswers {
 public:
  StepAnswers(const std::vector<std::string>& hosts,
              const std::function<void(std::size_t, std::size_t)>& progress)
      : expected_(hosts.begin(), hosts.end()), total_(hosts.size()), progress_(progress) {}

  // Feeds one line; returns the node whose answer it completed, or "".
  std::string add(std::string_view line) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string node = collector_.addLine(line);
    if (node.empty() || expected_.count(node) == 0 || !answered_.insert(node).second) return {};
    if (progress_) progress_(answered_.size(), total_);
    return node;
  }
  std::size_t count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return answered_.size();
  }
  bool answered(const std::string& node) const {
    std::lock_guard<std::mutex> lock(mu_);
    return answered_.count(node) != 0;
  }
  const core::StepOutputCollector& collector() const { return collector_; }

 private:
  mutable std::mutex mu_;
  core::StepOutputCollector collector_;
  const std::set<std::string> expected_;
  const std::size_t total_;
  std::set<std::string> answered_;
  const std::function<void(std::size_t, std::size_t)> progress_;
};

// Makes the private directory the copies go to on every node (shipping): `mkdir -m 700`
// fails when the name exists, so a directory that someone else made first is never used;
// on a filesystem the nodes share, a node finds the one another node just made, which is
// accepted only as a real directory (not a symlink) owned by this user. The second mkdir
// only runs to print why the first failed. srun --bcast then writes into it with
// O_TRUNC, which follows symlinks: safe only in a directory no one else can write.
constexpr const char* kMakeShipDir =
    "mkdir -m 700 -- \"$1\" 2>/dev/null || { [ ! -L \"$1\" ] && [ -d \"$1\" ] && [ -O \"$1\" "
    "]; } || { echo \"$SLURMD_NODENAME: $(mkdir -m 700 -- \"$1\" 2>&1)\" >&2; exit 1; }; echo "
    "\"ready $SLURMD_NODENAME\"";
// Removes every copy from the directory, then the directory (another node sharing it may
// have removed it already).
constexpr const char* kRemoveShipDir =
    "rm -f -- \"$1\"/slurm_bcast_*; rmdir -- \"$1\" 2>/dev/null || [ ! -e \"$1\" ]";

struct ShipDirs {
  std::vector<std::string> ready;  // nodes holding the directory, in host order
  std::map<std::string, std::string> failed;
  std::optional<std::string> refused;  // srun refused the step: nothing ran anywhere
};

ShipDirs makeShipDirs(const JobOptions& o, const std::vector<std::string>& hosts,
                      CommandRunner& runner) {
  ShipDirs out;
  auto argv = srunOn(o, hosts);
  for (const char* a : {"/bin/sh", "-c", kMakeShipDir, "sh"}) argv.emplace_back(a);
  argv.push_back(o.ship_dir);
  std::set<std::string> ready;
  auto r = runner.runStreaming(argv, o.timeout, [&](std::string_view line) {
    line = core::trim(line);
    if (core::startsWith(line, "ready ")) ready.emplace(line.substr(6));
    return true;
  });
  std::map<std::string, std::string> said;
  if (r.ok()) said = srunNodeErrors(r->err, hosts);
  if (ready.empty() && r.ok()) out.refused = srunRefusal(r->err, o.job_id, hosts);
  for (const auto& h : hosts) {
    if (ready.count(h) != 0) {
      out.ready.push_back(h);
      continue;
    }
    std::string why = !r.ok()              ? "srun could not be started: " + r.error().message
                      : said.count(h) != 0 ? said[h]
                      : r->timed_out
                          ? "no answer within " + std::to_string(o.timeout.count() / 1000) + " s"
                      : r->err.empty() ? "no answer"
                                       : srunNotice(r->err);
    out.failed[h] = "could not make the directory " + o.ship_dir +
                    " for the copy of ibcollect on the node (" + why +
                    "): pass --ship-dir DIR (a writable node-local directory), or install "
                    "ibcollect on the nodes and pass --agent PATH";
  }
  return out;
}

// srun --bcast that could not copy the program: it then aborts the whole step ("Failed to
// broadcast ... Step launch aborted") and names the nodes ("REQUEST_FILE_BCAST(node3):
// ..."; slurmd logs the real cause, srun often just says "Unspecified error").
std::map<std::string, std::string> copyFailures(const std::string& err,
                                                const std::vector<std::string>& hosts,
                                                bool& aborted) {
  std::map<std::string, std::string> out;
  aborted = err.find("Failed to broadcast") != std::string::npos;
  const std::set<std::string> known(hosts.begin(), hosts.end());
  core::forEachLine(err, [&](std::string_view line, uint32_t) {
    const auto at = line.find("REQUEST_FILE_BCAST(");
    if (at == std::string_view::npos) return;
    const auto open = at + 19;
    const auto close = line.find(')', open);
    if (close == std::string_view::npos) return;
    const std::string node(line.substr(open, close - open));
    if (known.count(node) != 0 && out.count(node) == 0)
      out[node] = core::printable(core::trim(line), 300);
  });
  return out;
}

std::string copyFailed(const JobOptions& o, const std::string& said) {
  return "srun could not copy ibcollect to the node (" + said + ") into " + o.ship_dir +
         ": the node's disk there is probably full or not writable (its slurmd log names the "
         "cause): free space, or pass --ship-dir DIR, or install ibcollect on the nodes and pass "
         "--agent PATH";
}

// One collection step on `hosts` (shipping: srun --bcast copies this program first); srun
// is stopped once every one of them answered.
Result<CommandResult> runCollectionStep(const JobOptions& o, const std::vector<std::string>& hosts,
                                        int64_t window_start_ms, std::chrono::milliseconds budget,
                                        StepAnswers& answers, CommandRunner& runner) {
  auto argv = srunOn(o, hosts);
  argv.emplace_back("--label");
  if (!o.ship_dir.empty()) argv.push_back("--bcast=" + o.ship_dir + "/");
  for (auto& a : stepArgv(o, window_start_ms)) argv.push_back(std::move(a));
  const std::set<std::string> mine(hosts.begin(), hosts.end());
  std::size_t waiting = hosts.size();
  return runner.runStreaming(argv, budget, [&](std::string_view line) {
    const std::string node = answers.add(line);
    if (!node.empty() && mine.count(node) != 0) --waiting;
    return waiting > 0;
  });
}

// Removes the copies (and their directory) from nodes whose step may not have removed its
// own: best effort and bounded, the report does not wait long for it.
void removeShipDirs(const JobOptions& o, const std::vector<std::string>& nodes,
                    CommandRunner& runner, JobCollection& out) {
  if (nodes.empty()) return;
  auto argv = srunOn(o, nodes);
  for (const char* a : {"/bin/sh", "-c", kRemoveShipDir, "sh"}) argv.emplace_back(a);
  argv.push_back(o.ship_dir);
  auto r =
      runner.run(argv, std::min<std::chrono::milliseconds>(o.timeout, std::chrono::seconds(5)));
  if (!r.ok() || r->timed_out || r->exit_code != 0) {
    out.notices.push_back("could not remove " + o.ship_dir + " (the copy of ibcollect) from " +
                          core::compressHostlist(nodes) + " (" +
                          (!r.ok()        ? r.error().message
                           : r->timed_out ? std::string("srun did not finish")
                                          : srunNotice(r->err)) +
                          "): remove it there by hand");
  }
}

// What a node of architecture `arch` that has no program to run is told.
std::string noProgramFor(const JobOptions& o, const std::string& arch) {
  const std::string file = programFileName(arch);
  return "the node is " + arch + " and no ibcollect for " + arch + " was found (" + o.programs_dir +
         "/" + file + "): put the " + arch + " ibcollect there as " + file +
         " (bin/ibcollect of ibcollect-VERSION-linux-" + arch +
         ".tar.gz), or pass --agent-dir DIR holding it, or install ibcollect on the nodes and "
         "pass --agent PATH";
}

// The nodes of `hosts` by the program they run: o.programs by each node's Arch= in Slurm
// (agent_path where Slurm does not know it), or agent_path for all. A node whose
// architecture has no program goes to `node_errors`.
std::map<std::string, std::vector<std::string>> nodesByProgram(
    const JobOptions& o, const std::vector<std::string>& hosts, CommandRunner& runner,
    std::map<std::string, std::string>& node_errors) {
  std::map<std::string, std::vector<std::string>> out;
  if (o.programs.empty()) {
    out[o.agent_path] = hosts;
    return out;
  }
  const auto arch = nodeArchitectures(runner, hosts, o.command_timeout);
  for (const auto& h : hosts) {
    const auto a = arch.find(h);
    if (a == arch.end()) {
      out[o.agent_path].push_back(h);
    } else if (const auto p = o.programs.find(a->second); p != o.programs.end()) {
      out[p->second].push_back(h);
    } else {
      node_errors[h] = noProgramFor(o, a->second);
    }
  }
  return out;
}

// What one srun step (one architecture's program) brought: merged into the collection once
// every step has ended, since steps of several architectures run at once.
struct StepOutcome {
  std::chrono::system_clock::time_point window_start;
  std::vector<std::string> notices;
  std::map<std::string, std::string> node_errors;
  std::optional<std::string> launch_refused;
  bool copy_aborted = false;
};

// Runs the collection step of one program on `hosts`; when srun could not copy the program
// to some nodes, runs it once more on the others.
StepOutcome runProgramSteps(const JobOptions& o, const std::vector<std::string>& hosts,
                            CommandRunner& runner, Clock& clock, StepAnswers& answers) {
  StepOutcome out;
  const bool ship = !o.ship_dir.empty();
  std::vector<std::string> targets = hosts;
  // srun --bcast aborts the whole step when the copy fails on one node, and sometimes
  // names only the first of several such nodes: the others get a step of their own, a
  // bounded number of times.
  constexpr int kCopyAttempts = 3;
  bool last_aborted = false;
  for (int attempt = 0; attempt < kCopyAttempts && !targets.empty(); ++attempt) {
    const auto slack = o.launch_slack + (ship ? o.ship_slack : std::chrono::milliseconds(0));
    out.window_start = clock.now() + slack;
    const auto budget = slack + o.window + o.timeout;
    auto r = runCollectionStep(
        o, targets,
        std::chrono::duration_cast<std::chrono::milliseconds>(out.window_start.time_since_epoch())
            .count(),
        budget, answers, runner);
    if (!r.ok()) {
      out.notices.push_back("srun could not be started: " + r.error().message);
      break;
    }
    if (r->timed_out) {
      out.notices.push_back("stopped srun after " + std::to_string(budget.count() / 1000) +
                            " s (launch + window + --timeout)");
    }
    if (answers.count() == 0 && (out.launch_refused = srunRefusal(r->err, o.job_id, hosts))) {
      return out;
    }
    bool aborted = false;
    std::map<std::string, std::string> failed;
    if (ship) failed = copyFailures(r->err, targets, aborted);
    last_aborted = aborted;
    if (aborted) {
      // Nothing ran anywhere: the nodes srun could copy to get one more step of their own.
      out.copy_aborted = true;
      std::vector<std::string> rest;
      for (const auto& h : targets) {
        if (failed.count(h) != 0) {
          out.node_errors[h] = copyFailed(o, failed[h]);
        } else if (failed.empty()) {
          out.node_errors[h] = copyFailed(o, srunNotice(r->err));
        } else {
          rest.push_back(h);
        }
      }
      targets = std::move(rest);
      continue;
    }
    for (auto& [h, said] : srunNodeErrors(r->err, targets)) {
      out.node_errors.emplace(h, explainNodeError(o, said));
    }
    std::size_t answered = 0;
    for (const auto& h : hosts) answered += answers.answered(h) ? 1 : 0;
    if (!r->err.empty() && answered < hosts.size()) out.notices.push_back(srunNotice(r->err));
    break;
  }
  for (const auto& h : last_aborted ? targets : std::vector<std::string>{}) {
    out.node_errors[h] = "not collected: srun aborted the step " + std::to_string(kCopyAttempts) +
                         " times because it could not copy ibcollect to other nodes (named above)";
  }
  return out;
}

// The srun launcher: the nodes by the program their architecture runs; (shipping: make
// the directories,) one step per program, all at once; then (shipping) remove what the
// steps could not remove themselves.
void collectSrun(const JobOptions& o, const std::vector<std::string>& hosts, CommandRunner& runner,
                 Clock& clock, StepAnswers& answers, JobCollection& out,
                 std::map<std::string, std::string>& node_errors) {
  const bool ship = !o.ship_dir.empty();
  auto groups = nodesByProgram(o, hosts, runner, node_errors);
  std::vector<std::string> prepared;
  if (ship) {
    std::vector<std::string> runnable;
    for (const auto& h : hosts) {
      if (node_errors.count(h) == 0) runnable.push_back(h);
    }
    if (runnable.empty()) return;
    ShipDirs dirs = makeShipDirs(o, runnable, runner);
    if (dirs.refused) {
      out.launch_refused = dirs.refused;
      return;
    }
    node_errors.merge(dirs.failed);
    prepared = dirs.ready;
    const std::set<std::string> ready(dirs.ready.begin(), dirs.ready.end());
    for (auto& [program, nodes] : groups) {
      nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                                 [&](const std::string& h) { return ready.count(h) == 0; }),
                  nodes.end());
    }
  }
  std::vector<std::pair<JobOptions, std::vector<std::string>>> steps;
  for (auto& [program, nodes] : groups) {
    if (nodes.empty()) continue;
    JobOptions step = o;
    step.agent_path = program;
    steps.emplace_back(std::move(step), std::move(nodes));
  }
  std::vector<StepOutcome> outcomes(steps.size());
  if (steps.size() == 1) {
    outcomes[0] = runProgramSteps(steps[0].first, steps[0].second, runner, clock, answers);
  } else {
    // Each architecture's step at once: every node's window opens at the same moment.
    std::vector<std::thread> running;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      running.emplace_back([&, i] {
        outcomes[i] = runProgramSteps(steps[i].first, steps[i].second, runner, clock, answers);
      });
    }
    for (auto& t : running) t.join();
  }
  bool copy_aborted = false;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    auto& step = outcomes[i];
    if (i == 0) out.window_start = step.window_start;
    if (step.launch_refused) {
      out.launch_refused = step.launch_refused;
      return;
    }
    for (auto& n : step.notices) out.notices.push_back(std::move(n));
    for (auto& [h, why] : step.node_errors) node_errors.insert_or_assign(h, std::move(why));
    copy_aborted = copy_aborted || step.copy_aborted;
  }
  if (!ship) return;
  // Each step removes its own copy as it starts; these nodes may still hold one.
  std::vector<std::string> leftover;
  for (const auto& h : prepared) {
    if (copy_aborted || !answers.answered(h)) leftover.push_back(h);
  }
  removeShipDirs(o, leftover, runner, out);
}

// What the remote shell prints (then exit 127) for a node whose `uname -m` has no program,
// and for a program path missing on the node.
constexpr std::string_view kNoProgramMark = "ibcollect-no-program-for: ";
constexpr std::string_view kMissingProgramMark = "ibcollect-missing-program: ";

// The text after `mark` on the line of `err` that carries it, or "".
std::string markedValue(const std::string& err, std::string_view mark) {
  const auto at = err.find(mark);
  if (at == std::string::npos) return {};
  const auto begin = at + mark.size();
  return core::printable(core::trim(err.substr(begin, err.find('\n', begin) - begin)), 200);
}

// The command ssh runs on `host`: the step argv, quoted; with per-architecture programs, a
// `case` on the node's `uname -m` picks the path first (one session: no round trip to ask).
std::string sshRemoteCommand(const JobOptions& o, int64_t wave_start_ms, const std::string& host) {
  std::string args;
  const auto argv = stepArgv(o, wave_start_ms);
  for (std::size_t i = 1; i < argv.size(); ++i) args += " " + shellQuote(argv[i]);
  args += " --node-name " + shellQuote(host);
  if (o.programs.empty()) return shellQuote(argv[0]) + args;
  std::string pick = "m=$(uname -m); case \"$m\" in";
  for (const auto& [arch, path] : o.programs)
    pick += " " + shellQuote(arch) + ") p=" + shellQuote(path) + ";;";
  pick += " *) echo \"" + std::string(kNoProgramMark) +
          "$m\" >&2; exit 127;; esac; [ -x \"$p\" ] || { echo \"" +
          std::string(kMissingProgramMark) + "$p\" >&2; exit 127; }; exec \"$p\"";
  return pick + args;
}

// The ssh launcher: one session per host, in waves. ssh cannot copy the program the way
// srun --bcast does, so the nodes need ibcollect installed (at agent_path).
void collectSsh(const JobOptions& o, const std::vector<std::string>& hosts, CommandRunner& runner,
                Clock& clock, StepAnswers& answers, JobCollection& out,
                std::map<std::string, std::string>& node_errors) {
  // An ssh session lasts its host's whole counter window (the step prints its snapshot
  // at the end), so only ssh_parallelism hosts can be in their window at once. More
  // hosts than that go in waves: each wave gets its own window start (launch slack after
  // the wave is launched) and its own budget, so every host is launched before its
  // window starts and the run ends within waves × budget. Windows are aligned within a
  // wave, and each snapshot records the window it used. Rejected alternatives: one
  // window start far enough ahead for every wave cannot be chosen (a wave lasts up to
  // window + --timeout when hosts hang); one ssh per host at once does not scale past a
  // few hundred hosts (processes, descriptors, sshd start-up limits).
  const auto budget = o.launch_slack + o.window + o.timeout;
  const std::size_t per_wave = std::clamp<std::size_t>(o.ssh_parallelism, 1, kMaxSshParallelism);
  std::mutex err_mu;
  auto session = [&](const std::string& host, int64_t wave_start_ms) {
    const std::string remote = sshRemoteCommand(o, wave_start_ms, host);
    auto r =
        runner.runStreaming({"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host, remote},
                            budget, [&](std::string_view line) {
                              answers.add(line);
                              return true;
                            });
    std::lock_guard<std::mutex> lock(err_mu);
    if (!r.ok()) {
      node_errors[host] = r.error().message;
    } else if (const auto arch = markedValue(r->err, kNoProgramMark); !arch.empty()) {
      node_errors[host] = noProgramFor(o, arch);
    } else if (const auto missing = markedValue(r->err, kMissingProgramMark); !missing.empty()) {
      node_errors[host] = "ibcollect is not installed at " + missing +
                          " on the node: install it there (the directory may not be shared "
                          "with the nodes), or pass --agent PATH, or use --launcher srun, which "
                          "ships this program to the nodes";
    } else if (r->exit_code == 126 || r->exit_code == 127) {
      // The remote shell's "not found" / "cannot execute".
      node_errors[host] = "ibcollect is not installed at " + o.agent_path +
                          " on the node (ssh: " + firstLine(r->err) +
                          "): install ibcollect on the nodes (there, or pass --agent PATH), or "
                          "use --launcher srun, which ships this program to the nodes";
    } else if (r->exit_code != 0 && !r->err.empty()) {
      node_errors[host] = "ssh: " + firstLine(r->err);
    } else if (r->timed_out) {
      node_errors[host] =
          "ssh session stopped after " + std::to_string(budget.count() / 1000) + " s";
    }
  };
  for (std::size_t first = 0; first < hosts.size(); first += per_wave) {
    const std::size_t end = std::min(hosts.size(), first + per_wave);
    const auto wave_start = clock.now() + o.launch_slack;
    if (first == 0) out.window_start = wave_start;
    const int64_t wave_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(wave_start.time_since_epoch())
            .count();
    std::vector<std::thread> wave;
    wave.reserve(end - first);
    for (std::size_t i = first; i < end; ++i)
      wave.emplace_back([&, i, wave_ms] { session(hosts[i], wave_ms); });
    for (auto& t : wave) t.join();
    ++out.waves;
  }
  if (out.waves > 1) {
    out.notices.push_back(
        std::to_string(hosts.size()) + " hosts over ssh in " + std::to_string(out.waves) +
        " waves of up to " + std::to_string(per_wave) +
        " (--ssh-parallelism); each wave has its own counter window, aligned within the wave");
  }
}

NodeResult nodeResult(const JobOptions& o, const std::string& host, const StepAnswers& answers,
                      const std::map<std::string, std::string>& node_errors) {
  NodeResult nr;
  nr.node = host;
  const auto& results = answers.collector().results();
  auto it = results.find(host);
  if (it != results.end() && it->second.complete && it->second.error.empty()) {
    auto envelope = core::parseSignedEnvelope(it->second.envelope);
    if (envelope.ok()) {
      nr.envelope = std::move(*envelope);
      nr.answered = true;
    } else {
      nr.unreachable_reason =
          "the node's snapshot arrived damaged (" + envelope.error().message + ")";
    }
  } else if (it != results.end() && !it->second.error.empty()) {
    nr.unreachable_reason = "the node answered but could not collect: " + it->second.error;
  } else if (auto e = node_errors.find(host); e != node_errors.end()) {
    nr.unreachable_reason = e->second;
  } else {
    nr.unreachable_reason =
        "no answer within " + std::to_string(o.timeout.count() / 1000) +
        " s after the counter window (slurmd or sshd down, node hung, or the agent "
        "stuck in a kernel read)";
  }
  return nr;
}

}  // namespace

JobCollection collectJob(const JobOptions& o, const std::vector<std::string>& hosts,
                         CommandRunner& runner, Clock& clock,
                         const std::function<void(std::size_t, std::size_t)>& progress) {
  JobCollection out;
  out.window_start = clock.now() + o.launch_slack;
  StepAnswers answers(hosts, progress);
  std::map<std::string, std::string> node_errors;
  if (o.launcher == Launcher::Srun) {
    collectSrun(o, hosts, runner, clock, answers, out, node_errors);
  } else {
    collectSsh(o, hosts, runner, clock, answers, out, node_errors);
  }
  for (const auto& h : hosts) out.nodes.push_back(nodeResult(o, h, answers, node_errors));
  return out;
}

}  // namespace ibc::agent
