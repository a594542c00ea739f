#include "ibc/agent/job.h"

#include "ibc/core/snapshot_file.h"

#include <glob.h>

#include <algorithm>
#include <atomic>
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
    return Error{ErrorCode::Unavailable, "scontrol did not answer within " +
                                             std::to_string(o.command_timeout.count() / 1000) +
                                             " s: is slurmctld up and reachable from here?"};
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

std::vector<std::string> stepArgv(const JobOptions& o, int64_t window_start_unix_ms) {
  char window[32];
  std::snprintf(window, sizeof window, "%.3f", static_cast<double>(o.window.count()) / 1000.0);
  char timeout[32];
  std::snprintf(timeout, sizeof timeout, "%.3f", static_cast<double>(o.timeout.count()) / 1000.0);
  std::vector<std::string> argv{
      o.agent_path, "job-step", "--job",          o.job_id,
      "--window",   window,     "--window-start", std::to_string(window_start_unix_ms),
      "--timeout",  timeout};
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

// Reasons srun gives on stderr, by node name ("srun: error: node4: task 3: ...",
// "... failed on node node4: Communication connection failure").
std::map<std::string, std::string> srunNodeErrors(const std::string& err,
                                                  const std::vector<std::string>& hosts) {
  std::map<std::string, std::string> out;
  core::forEachLine(err, [&](std::string_view line, uint32_t) {
    for (const auto& h : hosts) {
      if (line.find(h) == std::string_view::npos) continue;
      // Whole-word match: node1 must not match node10.
      const auto pos = line.find(h);
      const auto end = pos + h.size();
      const bool word =
          (pos == 0 || !std::isalnum(static_cast<unsigned char>(line[pos - 1]))) &&
          (end >= line.size() || !std::isalnum(static_cast<unsigned char>(line[end])));
      if (word && out.count(h) == 0) out[h] = core::printable(core::trim(line), 300);
    }
  });
  return out;
}

}  // namespace

JobCollection collectJob(const JobOptions& o, const std::vector<std::string>& hosts,
                         CommandRunner& runner, Clock& clock,
                         const std::function<void(std::size_t, std::size_t)>& progress) {
  JobCollection out;
  out.window_start = clock.now() + o.launch_slack;
  const auto budget = o.launch_slack + o.window + o.timeout;
  const std::set<std::string> expected(hosts.begin(), hosts.end());
  core::StepOutputCollector collector;
  std::mutex mu;
  std::size_t answered = 0;
  auto on_line = [&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    const std::string node = collector.addLine(line);
    if (!node.empty() && expected.count(node) != 0) {
      ++answered;
      if (progress) progress(answered, hosts.size());
    }
    return answered < hosts.size();
  };

  std::map<std::string, std::string> launcher_errors;
  if (o.launcher == Launcher::Srun) {
    const int64_t start_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(out.window_start.time_since_epoch())
            .count();
    std::vector<std::string> argv{"srun",
                                  "--jobid=" + o.job_id,
                                  "--overlap",
                                  "-N",
                                  std::to_string(hosts.size()),
                                  "--ntasks-per-node=1",
                                  "--nodelist=" + core::compressHostlist(hosts),
                                  "--kill-on-bad-exit=0",
                                  "--label"};
    for (auto& a : stepArgv(o, start_ms)) argv.push_back(std::move(a));
    auto r = runner.runStreaming(argv, budget, on_line);
    if (!r.ok()) {
      out.notices.push_back("srun could not be started: " + r.error().message);
    } else {
      launcher_errors = srunNodeErrors(r->err, hosts);
      if (r->timed_out) {
        out.notices.push_back("stopped srun after " + std::to_string(budget.count() / 1000) +
                              " s (launch + window + --timeout)");
      }
      if (answered == 0) out.launch_refused = srunRefusal(r->err, o.job_id, hosts);
      if (!r->err.empty() && answered < hosts.size() && !out.launch_refused) {
        out.notices.push_back(srunNotice(r->err));
      }
    }
  } else {
    // An ssh session lasts its host's whole counter window (the step prints its snapshot
    // at the end), so only ssh_parallelism hosts can be in their window at once. More
    // hosts than that go in waves: each wave gets its own window start (launch slack after
    // the wave is launched) and its own budget, so every host is launched before its
    // window starts and the run ends within waves × budget. Windows are aligned within a
    // wave, and each snapshot records the window it used. Rejected alternatives: one
    // window start far enough ahead for every wave cannot be chosen (a wave lasts up to
    // window + --timeout when hosts hang); one ssh per host at once does not scale past a
    // few hundred hosts (processes, descriptors, sshd start-up limits).
    const std::size_t per_wave = std::clamp<std::size_t>(o.ssh_parallelism, 1, kMaxSshParallelism);
    std::mutex err_mu;
    auto session = [&](const std::string& host, int64_t wave_start_ms) {
      std::string remote;
      for (const auto& a : stepArgv(o, wave_start_ms))
        remote += (remote.empty() ? "" : " ") + shellQuote(a);
      remote += " --node-name " + shellQuote(host);
      auto r = runner.runStreaming(
          {"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host, remote}, budget,
          [&](std::string_view line) {
            on_line(line);
            return true;
          });
      std::lock_guard<std::mutex> lock(err_mu);
      if (!r.ok()) {
        launcher_errors[host] = r.error().message;
      } else if (r->exit_code != 0 && !r->err.empty()) {
        launcher_errors[host] = "ssh: " + firstLine(r->err);
      } else if (r->timed_out) {
        launcher_errors[host] =
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

  const auto& results = collector.results();
  for (const auto& h : hosts) {
    NodeResult nr;
    nr.node = h;
    auto it = results.find(h);
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
    } else if (auto e = launcher_errors.find(h); e != launcher_errors.end()) {
      nr.unreachable_reason = e->second;
    } else {
      nr.unreachable_reason =
          "no answer within " + std::to_string(o.timeout.count() / 1000) +
          " s after the counter window (slurmd or sshd down, node hung, or the agent "
          "stuck in a kernel read)";
    }
    out.nodes.push_back(std::move(nr));
  }
  return out;
}

}  // namespace ibc::agent
