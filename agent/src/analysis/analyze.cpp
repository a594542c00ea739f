#include "ibc/agent/analyze.h"

#include <algorithm>
#include <set>

#include "ibc/core/job_verdict.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/nccl_tests.h"
#include "ibc/core/pf/pf_tools.h"
#include "ibc/core/proto_text.h"
#include "ibc/core/rules.h"
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

// The node --root (or the running host) gives, with what the user's own files said: a file
// that could not be read, or in which nothing was recognised, never passes as part of "OK".
core::AnalyzedNode collectRootNode(
    const AnalyzeInputs& in, const HostSeams& seams,
    const std::function<std::unique_ptr<Filesystem>(const std::string&)>& open_root,
    const std::string& agent_version, AnalyzeOutcome& out) {
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
  for (const auto& e : n.snapshot.probe_errors()) {
    if (!isUserFileError(e, in.dmesg_file)) continue;
    if (e.error() == core::errorCodeName(core::ErrorCode::TooLarge)) {
      out.notices.push_back(namingThePath(e.path(), e.message()));
    } else {
      out.input_errors.push_back(namingThePath(e.path(), e.message()));
    }
  }
  return n;
}

// A --tool-output file that holds no tool's output but an nccl-tests table (headerless rows
// included) or an NCCL log: read as --nccl-tests / --nccl-log would read it, and said so.
// False when it is neither.
bool readAsLogOrTable(const std::string& p, const std::string& text, const HostSeams& seams,
                      const CollectLimits& limits, v1::Snapshot& target, AnalyzeOutcome& out) {
  std::vector<v1::ProbeError> errors;
  if (core::parseNcclTests(text).rows_size() > 0) {
    *target.add_nccl_tests() = readNcclTests(seams.files, p, limits, errors);
    out.notices.push_back(p + ": nccl-tests output, read as --nccl-tests " + p + " would be");
  } else if (core::parseNcclLog(text).lines_nccl() > 0) {
    *target.add_nccl_logs() = readNcclLog(seams.files, p, limits, target.node().hostname(), errors);
    out.notices.push_back(p + ": an NCCL log, read as --nccl-log " + p + " would be");
  } else {
    return false;
  }
  for (const auto& e : errors) out.input_errors.push_back(namingThePath(e.path(), e.message()));
  return true;
}

// One --tool-output file merged into `target`; false when it could not be read or nothing in
// it was recognised (said in out.input_errors). Values that contradict what `target` already
// held (`kept` names where from) are said, and the paste's own findings are kept aside.
bool mergeToolOutputFile(
    const std::string& p, const HostSeams& seams, const CollectLimits& limits,
    const core::RuleOptions& rules, v1::Snapshot& target, const std::string& kept,
    AnalyzeOutcome& out,
    std::vector<std::pair<std::string, std::vector<v1::Finding>>>& own_findings) {
  bool truncated = false;
  auto text = seams.files.readFile(p, limits.artifact_read_bytes, &truncated);
  if (!text.ok()) {
    out.input_errors.push_back(namingThePath(p, text.error().message));
    return false;
  }
  if (truncated) {
    out.notices.push_back(p + ": larger than the " +
                          std::to_string(limits.artifact_read_bytes >> 20) +
                          " MiB read bound: only its beginning was analysed");
  }
  const auto evidence = core::parseToolOutput(*text);
  if (evidence.kinds.empty() && readAsLogOrTable(p, *text, seams, limits, target, out)) return true;
  if (const auto pf =
          evidence.kinds.empty() ? core::parsePfToolOutput(*text) : core::PfToolEvidence{};
      !pf.empty()) {
    const bool only_kernel_log = pf.mlxlink.empty() && pf.modules.empty() && pf.links.empty() &&
                                 pf.aer.empty() && pf.flint.empty() && pf.mlxconfig.empty() &&
                                 pf.pci_functions.empty();
    out.host_side_pastes.push_back(
        only_kernel_log
            ? p + ": this is a kernel log, not a tool's output: give it with --dmesg-file " + p +
                  " (this node's or a VM's log), or, when it is the physical host's, read it "
                  "with `ibcollect host-inspect --paste " +
                  p + "` (package ibcollect-support)"
            : p +
                  ": this is the output of a host-side (PF) tool (mlxlink, ethtool -m, flint, "
                  "mlxconfig, lspci, ip link with VF lines), which the VF side does not judge: "
                  "read it with `ibcollect host-inspect --paste " +
                  p + "` (package ibcollect-support)");
    return false;
  }
  if (evidence.kinds.empty()) {
    out.input_errors.push_back(p +
                               ": no known tool output recognised (expected ibstat, ibstatus, "
                               "ibv_devinfo, perfquery, ibdev2netdev, rdma link, ethtool -S, "
                               "ip -s link, perftest (ib_write_bw ...), nvidia-smi topo -m or a "
                               "`grep . /sys/...` listing)");
    return false;
  }
  std::vector<core::EvidenceConflict> conflicts;
  mergeToolEvidence(evidence, p, *text, limits, target, &conflicts);
  if (!conflicts.empty()) {
    // Said, never dropped: both values in a note, and below, the paste's own findings
    // beside the merged node's.
    const std::size_t shown = std::min<std::size_t>(conflicts.size(), 10);
    for (std::size_t i = 0; i < shown; ++i)
      out.notices.push_back("conflicting evidence: " +
                            core::describeConflict(conflicts[i], kept, p));
    if (conflicts.size() > shown) {
      out.notices.push_back(std::to_string(conflicts.size() - shown) +
                            " more conflicting values between " + kept + " and " + p);
    }
    v1::Snapshot alone;
    alone.set_schema_version(core::kSnapshotSchemaVersion);
    *alone.mutable_node() = target.node();
    mergeToolEvidence(evidence, p, *text, limits, alone);
    own_findings.push_back({p, core::diagnoseNode(alone, rules)});
  }
  return true;
}

// A paste that contradicts the snapshot keeps its own findings (PORT_DOWN from a paste taken
// after the snapshot), marked with where they came from.
void keepPasteFindings(
    std::vector<core::AnalyzedNode>& nodes, const v1::Snapshot* target,
    std::vector<std::pair<std::string, std::vector<v1::Finding>>>& own_findings) {
  if (own_findings.empty() || nodes.empty()) return;
  // The node the pastes were merged into (the pasted node was moved to the back).
  auto owner = std::find_if(nodes.begin(), nodes.end(),
                            [&](const core::AnalyzedNode& n) { return &n.snapshot == target; });
  auto& node = owner != nodes.end() ? *owner : nodes.back();
  for (auto& [source, findings] : own_findings) {
    for (auto& f : findings) {
      const bool have =
          std::any_of(node.findings.begin(), node.findings.end(), [&](const v1::Finding& g) {
            return g.code() == f.code() && g.device() == f.device() && g.port() == f.port();
          });
      if (have) continue;
      f.set_node(core::nodeName(node.snapshot));
      f.set_source(source);
      f.set_summary(f.summary() + " (per " + source + "; the other input says otherwise)");
      node.findings.push_back(std::move(f));
    }
  }
}

}  // namespace

Result<v1::Snapshot> readSnapshotFile(const Filesystem& files, const std::string& path) {
  auto bytes = files.readFile(path, core::kMaxSnapshotFileBytes);
  if (!bytes.ok()) return Error{bytes.error().code, path + ": " + bytes.error().message};
  return core::readSnapshotFile(path, *bytes);
}

Result<core::AnalyzedNode> readSavedNode(const Filesystem& files, const std::string& path) {
  auto snap = readSnapshotFile(files, path);
  if (!snap.ok()) return snap.error();
  core::AnalyzedNode n;
  n.snapshot = std::move(snap).value();
  n.snapshot_file = path;
  return n;
}

namespace {

// Saved snapshots alone (`analyze A.ibsnap B.ibsnap ...`): judged as they are read and kept
// slim, as `compare` does (nothing is merged into them and none is saved again).
AnalyzeOutcome judgeSavedSnapshots(const std::vector<std::string>& files,
                                   const core::RuleOptions& rules, const HostSeams& seams) {
  AnalyzeOutcome out;
  core::JobJudgement judgement({rules, {}});
  for (const auto& path : files) {
    if (auto n = readSavedNode(seams.files, path); n.ok()) {
      judgement.add(std::move(n).value(), core::Keep::Report);
    } else {
      out.input_errors.push_back(n.error().message);
    }
  }
  out.nodes = judgement.finish();
  return out;
}

}  // namespace

AnalyzeOutcome analyzeInputs(
    const AnalyzeInputs& in, const core::RuleOptions& rules, const HostSeams& seams,
    const std::function<std::unique_ptr<Filesystem>(const std::string&)>& open_root,
    const std::string& agent_version) {
  const bool have_evidence = !in.nccl_logs.empty() || !in.nccl_tests.empty() ||
                             !in.tool_outputs.empty() || !in.dmesg_file.empty();
  if (!in.root && !have_evidence && in.snapshot_files.size() >= 2)
    return judgeSavedSnapshots(in.snapshot_files, rules, seams);
  AnalyzeOutcome out;
  std::vector<core::AnalyzedNode> nodes;
  // The findings of each paste that contradicted the node it was merged into.
  std::vector<std::pair<std::string, std::vector<v1::Finding>>> own_findings;
  for (const auto& path : in.snapshot_files) {
    if (auto n = readSavedNode(seams.files, path); n.ok()) {
      nodes.push_back(std::move(n).value());
    } else {
      out.input_errors.push_back(n.error().message);
    }
  }
  if (in.root || (in.snapshot_files.empty() && !have_evidence)) {
    nodes.push_back(collectRootNode(in, seams, open_root, agent_version, out));
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
    // What a paste's conflicting values are set against, for the notices.
    const auto conflictKeeper = [&] {
      return target == &pasted                      ? std::string("an earlier --tool-output")
             : !nodes.front().snapshot_file.empty() ? nodes.front().snapshot_file
                                                    : std::string("the collected snapshot");
    };
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
      if (!mergeToolOutputFile(p, seams, limits, rules, *target, conflictKeeper(), out,
                               own_findings))
        ++failed;
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
  // One verdict over every input, as `compare` and a bundle judge them (job_verdict.h).
  core::judgeJob(nodes, {rules, {}});
  keepPasteFindings(nodes, target, own_findings);
  // What core could not judge is said, never left to look fine (a run without a rate).
  for (const auto& n : nodes) {
    for (auto& line : core::rdmaTestNotices(n.snapshot, rules))
      out.notices.push_back(std::move(line));
  }
  out.nodes = std::move(nodes);
  return out;
}

}  // namespace ibc::agent
