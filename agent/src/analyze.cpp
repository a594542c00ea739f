#include "ibc/agent/analyze.h"

#include <set>

#include "ibc/core/proto_text.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"

namespace ibc::agent {

namespace {

// "PATH: message", unless the message (an OS error) already starts with the path.
std::string namingThePath(std::string_view path, std::string_view message) {
  if (message.starts_with(path)) return std::string(message);
  return std::string(path) + ": " + std::string(message);
}

// Hostname for evidence that came without a node: the single host the logs name.
std::string hostFromLogs(const v1::Snapshot& snap) {
  std::set<std::string> hosts;
  for (const auto& l : snap.nccl_logs()) {
    for (const auto& h : l.parsed().hosts()) hosts.insert(h);
  }
  for (const auto& t : snap.nccl_tests()) {
    for (const auto& h : t.parsed().hosts()) hosts.insert(h);
  }
  std::set<std::string> kernel_hosts;
  for (const auto& line : snap.kernel_log().lines()) {
    if (!line.host().empty()) kernel_hosts.insert(line.host());
  }
  if (hosts.empty()) hosts = kernel_hosts;
  if (hosts.size() == 1) return *hosts.begin();
  return "pasted-evidence";
}

}  // namespace

Result<v1::Snapshot> readSnapshotFile(const Filesystem& files, const std::string& path) {
  auto bytes = files.readFile(path, core::kMaxSnapshotFileBytes);
  if (!bytes.ok()) return Error{bytes.error().code, path + ": " + bytes.error().message};
  auto env = core::decodeSnapshotFile(*bytes);
  if (!env.ok()) return Error{env.error().code, path + ": " + env.error().message};
  auto snap = core::openSnapshot(*env);
  if (!snap.ok()) return Error{snap.error().code, path + ": " + snap.error().message};
  return snap;
}

AnalyzeOutcome analyzeInputs(
    const AnalyzeInputs& in, const core::RuleOptions& rules, const HostSeams& seams,
    const std::function<std::unique_ptr<Filesystem>(const std::string&)>& open_root,
    const std::string& agent_version) {
  AnalyzeOutcome out;
  std::vector<core::AnalyzedNode> nodes;
  for (const auto& path : in.snapshot_files) {
    auto snap = readSnapshotFile(seams.files, path);
    if (!snap.ok()) {
      out.input_errors.push_back(snap.error().message);
      continue;
    }
    core::AnalyzedNode n;
    n.snapshot = std::move(snap).value();
    n.snapshot_file = path;
    nodes.push_back(std::move(n));
  }
  const bool have_evidence = !in.nccl_logs.empty() || !in.nccl_tests.empty() ||
                             !in.tool_outputs.empty() || !in.dmesg_file.empty();
  if (in.root || (in.snapshot_files.empty() && !have_evidence)) {
    const std::string root = in.root.value_or("/");
    auto fs = open_root(root);
    CollectOptions co;
    co.root = root;
    co.agent_version = agent_version;
    co.dmesg_file = in.dmesg_file;
    co.nccl_logs = in.nccl_logs;
    co.nccl_tests = in.nccl_tests;
    HostSeams s{*fs,       seams.files,         seams.runner,  seams.clock,
                seams.env, seams.process_facts, seams.progress};
    core::AnalyzedNode n;
    n.snapshot = collectSnapshot(co, s);
    nodes.push_back(std::move(n));
  }
  // Evidence files attach to the one node there is, or form a node of their own.
  const bool attach = nodes.size() == 1 && !in.root.has_value() ? have_evidence : false;
  const bool collected_with_root =
      in.root.has_value() || (in.snapshot_files.empty() && !have_evidence);
  v1::Snapshot* target = nullptr;
  v1::Snapshot pasted;
  if (have_evidence) {
    if (collected_with_root) {
      target = &nodes.back().snapshot;  // logs were read by collectSnapshot already
    } else if (attach) {
      target = &nodes.front().snapshot;
    } else {
      pasted.set_schema_version(core::kSnapshotSchemaVersion);
      pasted.mutable_node()->set_source("pasted");
      pasted.mutable_node()->set_agent_version(agent_version);
      target = &pasted;
    }
    const CollectLimits limits;
    std::vector<v1::ProbeError> errors;
    std::size_t failed = 0;  // evidence inputs that could not be read or recognised
    if (!collected_with_root) {
      const std::string host = target->node().hostname();
      for (const auto& p : in.nccl_logs)
        *target->add_nccl_logs() = readNcclLog(seams.files, p, limits, host, errors);
      for (const auto& p : in.nccl_tests)
        *target->add_nccl_tests() = readNcclTests(seams.files, p, limits, errors);
      if (!in.dmesg_file.empty())
        readKernelLogFile(seams.files, in.dmesg_file, limits, *target->mutable_kernel_log(),
                          errors);
    }
    for (const auto& p : in.tool_outputs) {
      bool truncated = false;
      auto text = seams.files.readFile(p, limits.artifact_read_bytes, &truncated);
      if (!text.ok()) {
        out.input_errors.push_back(namingThePath(p, text.error().message));
        ++failed;
        continue;
      }
      if (truncated) {
        out.notices.push_back(p + ": larger than the " +
                              std::to_string(limits.artifact_read_bytes >> 20) +
                              " MiB read bound: only its beginning was analysed");
      }
      const auto evidence = core::parseToolOutput(*text);
      if (evidence.kinds.empty()) {
        out.input_errors.push_back(p +
                                   ": no known tool output recognised (expected ibstat, ibstatus, "
                                   "ibv_devinfo, perfquery, ethtool -S, ip -s link or a "
                                   "`grep . /sys/...` listing)");
        ++failed;
        continue;
      }
      mergeToolEvidence(evidence, p, *text, limits, *target);
    }
    for (const auto& e : errors) {
      if (e.error() == core::errorCodeName(core::ErrorCode::TooLarge)) {
        out.notices.push_back(namingThePath(e.path(), e.message()));  // read in part, not failed
      } else {
        out.input_errors.push_back(namingThePath(e.path(), e.message()));
        ++failed;
      }
    }
    const std::size_t inputs = in.nccl_logs.size() + in.nccl_tests.size() + in.tool_outputs.size() +
                               (in.dmesg_file.empty() ? 0 : 1);
    // A node made only of inputs that all failed would print as a clean "OK": leave it out.
    // Pastes are anyone's bytes: the parsers keep text printable, this guarantees it.
    core::sanitizeStringFields(*target);
    if (target == &pasted && failed < inputs) {
      if (pasted.node().hostname().empty())
        pasted.mutable_node()->set_hostname(hostFromLogs(pasted));
      core::AnalyzedNode n;
      n.snapshot = std::move(pasted);
      nodes.push_back(std::move(n));
    }
  }
  for (auto& n : nodes) n.findings = core::diagnoseNode(n.snapshot, rules);
  out.nodes = std::move(nodes);
  return out;
}

}  // namespace ibc::agent
