#include "ibc/console/bundle_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "ibc/core/bundle.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/json.h"
#include "ibc/core/redact.h"
#include "ibc/core/report.h"
#include "ibc/core/signing.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What a signed snapshot carries inside, for people: the logs travel in it.
std::string snapshotContents(const v1::Snapshot& s, const std::string& label) {
  std::string out = "signed snapshot of " + label + ": " +
                    plural(static_cast<std::size_t>(s.nccl_logs_size()), "NCCL log", "NCCL logs");
  std::uint64_t nccl_lines = 0;
  for (const auto& log : s.nccl_logs()) nccl_lines += log.parsed().lines_total();
  if (nccl_lines > 0) out += " (" + std::to_string(nccl_lines) + " lines)";
  out += ", " + plural(static_cast<std::size_t>(s.kernel_log().lines_size()), "kernel log line",
                       "kernel log lines");
  if (s.nccl_tests_size() > 0)
    out += ", " + plural(static_cast<std::size_t>(s.nccl_tests_size()), "nccl-tests output",
                         "nccl-tests outputs");
  if (s.tool_outputs_size() > 0)
    out += ", " +
           plural(static_cast<std::size_t>(s.tool_outputs_size()), "tool output", "tool outputs");
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

BundlePlanInputs bundlePlanInputs(const JobData& job, const std::vector<int>& nodes,
                                  const std::string& case_id) {
  BundlePlanInputs in;
  in.case_id = case_id;
  std::vector<int> sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (const int n : sorted) {
    if (n < 0 || n >= job.report.nodes_size() || n >= static_cast<int>(job.snapshots.size()))
      continue;
    const auto i = static_cast<std::size_t>(n);
    auto ref = snapshotRef(job, n);
    if (!ref.ok()) {
      SnapshotRef unreadable;  // planBundle says why
      unreadable.where = ref.error().message;
      in.checked.push_back(std::move(unreadable));
    } else {
      in.checked.push_back(std::move(*ref));
    }
    in.labels.push_back(job.report.nodes(n).label());
    std::uint64_t size = 0;
    if (i < job.signed_files.size() && !job.signed_files[i].empty()) {
      size = job.signed_files[i].size();
    } else if (i < job.signed_sizes.size()) {
      size = job.signed_sizes[i];
    }
    in.signed_sizes.push_back(size);
    std::set<std::string> codes;
    for (const int f : findingsOfNode(job, n)) codes.insert(job.report.findings(f).code());
    in.job_codes.emplace_back(codes.begin(), codes.end());
  }
  return in;
}

namespace {

// The checked snapshots as core judges them, under the member names buildBundle gives them.
struct PlannedNodes {
  std::vector<core::AnalyzedNode> nodes;
  std::vector<std::string> member_names;  // snapshots/<stem>.ibsnap, one per snapshot
  std::vector<std::string> contents;      // what each snapshot carries, for people
  // Each snapshot's node name and hostname (the pseudonyms a redacted bundle gives).
  std::vector<std::pair<std::string, std::string>> names;
  std::string job_id;           // the snapshots' job id when they agree, else empty
  int64_t first = 0, last = 0;  // collection window (unix ms; 0 when unknown)
};

// Takes the snapshots: each is judged once, as its node (the plan keeps no other copy).
PlannedNodes planNodes(std::vector<v1::Snapshot> snapshots,
                       const std::vector<std::string>& labels) {
  // Member names as core gives them: core's host-member naming applies the same safe stem
  // and "-2" suffixes that buildBundle gives snapshots/<node>.ibsnap.
  PlannedNodes p;
  core::BundleMembers taken;
  std::set<std::string> job_ids;
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    auto& s = snapshots[i];
    p.contents.push_back(snapshotContents(s, labels[i]));
    p.names.emplace_back(core::snapshotNodeName(s.node()), s.node().hostname());
    const std::string probe = core::hostMemberName(taken, core::snapshotNodeName(s.node()));
    taken.emplace(probe, std::string());
    const std::string stem = probe.substr(core::kHostDir.size(),
                                          probe.size() - core::kHostDir.size() - 5);  // ".json"
    p.member_names.push_back(std::string(core::kSnapshotsDir) + stem + ".ibsnap");
    if (!s.node().job_id().empty()) job_ids.insert(s.node().job_id());
    const int64_t at = s.node().collected_at_unix_ms();
    if (at > 0) {
      p.first = p.first == 0 ? at : std::min(p.first, at);
      p.last = std::max(p.last, at);
    }
    core::AnalyzedNode a;
    a.snapshot = std::move(s);
    a.snapshot_file = p.member_names.back();
    p.nodes.push_back(std::move(a));
  }
  p.job_id = job_ids.size() == 1 ? *job_ids.begin() : std::string();
  // The bundle's verdict: the checked snapshots judged again, as buildBundle does.
  core::judgeJob(p.nodes, {});
  return p;
}

void learnNames(core::Redactor& redactor, const std::vector<core::AnalyzedNode>& nodes) {
  for (const auto& n : nodes) {
    redactor.addHost(n.label);
    redactor.addHost(n.snapshot.node().hostname());
  }
  for (const auto& n : nodes) redactor.learn(n.snapshot);
}

v1::BundleManifest planManifest(const BundlePlanInputs& in, const PlannedNodes& p,
                                const v1::PfInspection& inspection, bool redact,
                                core::Redactor& redactor) {
  v1::BundleManifest manifest;
  manifest.set_format(std::string(core::kBundleFormat));
  manifest.set_format_version(core::kBundleFormatVersion);
  manifest.set_case_id(in.case_id);
  manifest.set_job_id(p.job_id);
  manifest.set_window_start_unix_ms(p.first);
  manifest.set_window_end_unix_ms(p.last);
  manifest.set_redacted(redact);
  std::set<std::string> suspects;
  for (const auto& s : inspection.suspects()) suspects.insert(s.node());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const auto summary = core::summarizeNode(p.nodes[i]);
    auto* bn = manifest.add_nodes();
    bn->set_node(redact ? redactor.redact(p.nodes[i].label) : p.nodes[i].label);
    bn->set_member(redact ? std::string() : p.member_names[i]);
    bn->set_snapshot_id(std::string(64, '0'));  // SHA-256 hex: same length
    bn->set_worst_severity(summary.worst_severity());
    bn->set_worst_code(summary.worst_code());
    bn->set_suspect(suspects.count(p.nodes[i].label) != 0);
  }
  return manifest;
}

// Code → worst severity rank among the node's findings in the bundle's verdict.
std::map<std::string, int> carriedCodes(const JobData& judged, int node) {
  std::map<std::string, int> codes;
  for (const int f : findingsOfNode(judged, node)) {
    const auto& finding = judged.report.findings(f);
    int& rank = codes[finding.code()];
    rank = std::max(rank, severityRank(finding.severity()));
  }
  return codes;
}

// "node1661: CRITICAL PORT_NOT_ACTIVE_SM, ESCALATE_HOST_INSPECTION": worst first, each
// severity word once before its codes.
std::string carriedLine(const std::string& label, const std::map<std::string, int>& codes) {
  std::vector<std::pair<std::string, int>> ordered(codes.begin(), codes.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string line = label + ": ";
  if (ordered.empty()) line += "no finding (OK)";
  static const char* const kWords[] = {"OK", "INFO", "WARNING", "CRITICAL"};
  int shown_rank = -1;
  for (std::size_t c = 0; c < ordered.size(); ++c) {
    if (c > 0) line += ", ";
    if (ordered[c].second != shown_rank) {
      shown_rank = ordered[c].second;
      line += std::string(kWords[std::clamp(shown_rank, 0, 3)]) + " ";
    }
    line += ordered[c].first;
  }
  return line;
}

// Empty when the bundle carries exactly the codes the job verdict showed for the node.
std::string codeDifference(const std::string& label, const std::vector<std::string>& job_codes,
                           const std::map<std::string, int>& codes) {
  std::vector<std::string> missing, added;
  for (const auto& c : job_codes) {
    if (codes.count(c) == 0) missing.push_back(c);
  }
  for (const auto& [c, rank] : codes) {
    if (std::find(job_codes.begin(), job_codes.end(), c) == job_codes.end()) added.push_back(c);
  }
  if (missing.empty() && added.empty()) return {};
  std::string d = label + ":";
  if (!missing.empty()) d += " not carried " + joined(missing);
  if (!added.empty()) d += std::string(missing.empty() ? "" : ";") + " added " + joined(added);
  return d;
}

// Per node, what the bundle carries against what the job showed.
void planCarried(const BundlePlanInputs& in, const JobData& judged, BundlePlan& plan) {
  for (int n = 0; n < judged.report.nodes_size(); ++n) {
    const auto k = static_cast<std::size_t>(n);
    const auto codes = carriedCodes(judged, n);
    plan.carried.push_back(carriedLine(in.labels[k], codes));
    std::string d = codeDifference(in.labels[k], in.job_codes[k], codes);
    if (!d.empty()) plan.differences.push_back(std::move(d));
  }
}

// The signed snapshots: members when plain, left out when redacted (their signed bytes cannot
// be). Returns the members as placeholders of their size, for the manifest.
// Each member as the manifest describes it (SHA-256 and size), by name as the manifest lists them:
// the plan describes a member when it is made and keeps no member's bytes.
using DescribedMembers = std::map<std::string, v1::BundleMember, std::less<>>;

DescribedMembers planSnapshotMembers(const BundlePlanInputs& in, const PlannedNodes& planned,
                                     bool redact, BundlePlan& plan) {
  DescribedMembers members;
  for (std::size_t i = 0; i < planned.member_names.size(); ++i) {
    PlannedMember m{planned.member_names[i], in.signed_sizes[i], in.signed_sizes[i] > 0,
                    planned.contents[i]};
    if (redact) {
      m.contents += " (its signed bytes cannot be redacted)";
      plan.left_out.push_back(std::move(m));
    } else {
      // Placeholder bytes of the same size: the manifest lists the size, never the content.
      members.emplace(m.name, core::describeMember(
                                  m.name, std::string(static_cast<std::size_t>(m.bytes), '\0')));
      plan.members.push_back(std::move(m));
    }
  }
  return members;
}

// The members core renders (verdict, report, runbook), then the manifest over every member
// and the signature. The redactor's calls keep buildBundle's order, so the pseudonyms agree.
void planRenderedMembers(const BundlePlanInputs& in, const JobData& judged,
                         const v1::PfInspection& inspection, v1::BundleManifest& manifest,
                         DescribedMembers& members, core::Redactor& redactor, BundlePlan& plan) {
  const bool redact = plan.redact;
  // Returning `text` itself moves it (a conditional expression would copy it).
  const auto scrub = [&](std::string text) {
    if (!redact) return text;
    return redactor.redact(text);
  };
  auto findings_json = core::renderJson(judged.report);
  const auto add = [&](std::string_view name, std::string bytes, std::string contents,
                       bool exact = true) {
    plan.members.push_back({std::string(name), bytes.size(), exact, std::move(contents)});
    members.emplace(std::string(name), core::describeMember(name, bytes));
  };
  add(core::kFindingsMember, scrub(findings_json.ok() ? std::move(*findings_json) : std::string()),
      "the bundle's verdict: " +
          plural(static_cast<std::size_t>(plan.findings), "finding", "findings") + " of " +
          plural(in.labels.size(), "node", "nodes") + " (judged again by core)");
  // report.md names the exporter and the time: known once signed.
  add(core::kReportMember, scrub(core::renderBundleReport(judged.report, manifest, inspection)),
      "for people: verdict per node, port table, findings with evidence and next steps", false);
  plan.pf_inspection_md = core::renderPfInspectionMarkdown(inspection);
  add(core::kPfInspectionMdMember, scrub(plan.pf_inspection_md),
      "PF runbook: " +
          plural(static_cast<std::size_t>(plan.suspects), "suspect VF", "suspect VFs") +
          ", the identity the host needs and the steps there");
  add(core::kPfInspectionJsonMember, scrub(core::messageToJson(inspection, 2) + "\n"),
      "the same runbook for host-inspect (PfInspection)");
  if (redact) plan.pf_inspection_md = redactor.redact(plan.pf_inspection_md);
  for (auto& [name, described] : members) *manifest.add_members() = std::move(described);
  add(core::kManifestMember, core::renderManifest(manifest),
      "SHA-256 and size of every member, nodes, job, case" +
          std::string(redact ? ", redacted: true" : "") + "; names you as exporter",
      false);
  // An Ed25519 signature (64 bytes) and a certificate of a few hundred bytes.
  plan.members.push_back({std::string(core::kManifestSignatureMember), 512, false,
                          "your Ed25519 signature over manifest.json, with your certificate"});
}

void planPseudonyms(const PlannedNodes& planned, core::Redactor& redactor, BundlePlan& plan) {
  std::set<std::string> seen;
  for (const auto& [node_name, hostname] : planned.names) {
    for (const std::string& name : {node_name, hostname}) {
      if (name.empty() || !seen.insert(name).second) continue;
      plan.host_pseudonyms.emplace_back(redactor.hostPseudonym(name), name);
    }
  }
  std::sort(plan.host_pseudonyms.begin(), plan.host_pseudonyms.end());
  plan.left_out.push_back(
      {"<bundle>.pseudonyms.tsv", 0, false,
       "which pseudonym (node-001, ip-001, user-001) is which name: written beside the "
       "bundle for you, never inside it"});
}

}  // namespace

BundlePlan planBundle(BundlePlanInputs in, bool redact) {
  BundlePlan plan;
  plan.redact = redact;
  std::vector<v1::Snapshot> snapshots;
  for (const auto& ref : in.checked) {
    if (ref.file.empty() && ref.signed_bytes.empty() && ref.kept_bytes.empty()) {
      plan.error = ref.where;
      return plan;
    }
    auto whole = readFullSnapshot(ref);
    if (!whole.ok()) {
      plan.error = whole.error().message;
      return plan;
    }
    snapshots.push_back(std::move(*whole));
  }
  if (snapshots.empty()) return plan;

  PlannedNodes planned = planNodes(std::move(snapshots), in.labels);
  plan.job_id = planned.job_id;
  core::Redactor redactor;
  if (redact) learnNames(redactor, planned.nodes);
  const auto inspection = core::buildPfInspection(planned.nodes, in.case_id, plan.job_id);
  plan.suspects = inspection.suspects_size();
  auto manifest = planManifest(in, planned, inspection, redact, redactor);

  JobData judged;
  judged.report = core::buildReport(std::move(planned.nodes));
  indexFindings(judged);
  plan.findings = judged.report.findings_size();
  planCarried(in, judged, plan);

  auto members = planSnapshotMembers(in, planned, redact, plan);
  planRenderedMembers(in, judged, inspection, manifest, members, redactor, plan);
  for (const auto& m : plan.members) plan.total_bytes += m.bytes;
  if (redact) planPseudonyms(planned, redactor, plan);
  return plan;
}

std::string sizeWords(std::uint64_t bytes, bool exact) {
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  } else if (bytes < (1u << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return exact ? std::string(buf) : "about " + std::string(buf);
}

void BundleMembersModel::setPlan(BundlePlan plan) {
  beginResetModel();
  plan_ = std::move(plan);
  endResetModel();
}

int BundleMembersModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  return static_cast<int>(plan_.members.size() + plan_.left_out.size());
}

int BundleMembersModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

const PlannedMember& BundleMembersModel::row(int r) const {
  const auto i = static_cast<std::size_t>(r);
  return i < plan_.members.size() ? plan_.members[i] : plan_.left_out[i - plan_.members.size()];
}

QVariant BundleMembersModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const PlannedMember& m = row(index.row());
  const bool left_out = static_cast<std::size_t>(index.row()) >= plan_.members.size();
  if (role == LeftOutRole) return left_out;
  if (role == SortRole)
    return index.column() == Size ? QVariant(static_cast<qulonglong>(m.bytes))
                                  : data(index, Qt::DisplayRole);
  if (role == Qt::ToolTipRole && index.column() == Contents)
    return QString::fromStdString(m.contents);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Member: return QString::fromStdString(m.name);
    case Size:
      if (left_out) {
        return m.bytes > 0 ? tr("left out (%1)").arg(QString::fromStdString(sizeWords(m.bytes)))
                           : tr("beside the bundle");
      }
      return QString::fromStdString(sizeWords(m.bytes, m.exact));
    case Contents: return QString::fromStdString(m.contents);
    default: return {};
  }
}

QVariant BundleMembersModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Member: return tr("Member");
    case Size: return tr("Size");
    case Contents: return tr("What it holds");
    default: return {};
  }
}

}  // namespace ibc::console
