#include "ibc/console/escalation.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "ibc/core/bundle_report.h"
#include "ibc/core/findings.h"
#include "ibc/core/report.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

std::vector<int> suspectNodes(const JobData& job) {
  // Core's rule decides (which findings make a VF the PF's business), node by node.
  std::vector<int> out;
  for (int n = 0; n < job.report.nodes_size(); ++n) {
    if (pfInspectionFor(job, {n}, {}, "").suspects_size() > 0) out.push_back(n);
  }
  return out;
}

v1::PfInspection pfInspectionFor(const JobData& job, const std::vector<int>& nodes,
                                 const std::set<int>& findings, const std::string& job_id) {
  std::vector<core::AnalyzedNode> analyzed;
  for (const int n : nodes) {
    if (n < 0 || n >= job.report.nodes_size() || n >= static_cast<int>(job.snapshots.size()))
      continue;
    core::AnalyzedNode a;
    a.snapshot = job.snapshots[static_cast<std::size_t>(n)];
    a.snapshot_file = job.report.nodes(n).snapshot_file();
    a.label = job.report.nodes(n).label();
    // The checked findings, and each escalation of the job verdict narrowed to them: an
    // escalation checked itself goes whole; one whose reasons were checked (a link flap on
    // its device) goes with those reasons only. Nothing is judged here.
    std::set<std::pair<std::string, std::string>> checked;  // (code, device)
    for (const int i : findingsOfNode(job, n)) {
      if (!findings.empty() && findings.count(i) == 0) continue;
      const auto& f = job.report.findings(i);
      checked.emplace(f.code(), f.device());
      a.findings.push_back(f);
    }
    for (const int i : findingsOfNode(job, n)) {
      const auto& f = job.report.findings(i);
      if (findings.empty() || findings.count(i) != 0) continue;
      if (f.code() != core::findingCodeName(core::FindingCode::EscalateHostInspection)) continue;
      ::ibcollect::v1::Finding narrowed = f;
      narrowed.clear_reasons();
      for (const auto& r : f.reasons()) {
        for (const auto& [code, device] : checked) {
          if (code == r && (f.device().empty() || device == f.device())) {
            narrowed.add_reasons(r);
            break;
          }
        }
      }
      if (narrowed.reasons_size() > 0) a.findings.push_back(std::move(narrowed));
    }
    analyzed.push_back(std::move(a));
  }
  return core::buildPfInspection(analyzed, "", job_id);
}

v1::CreateCaseRequest caseRequestFor(const JobData& job, const std::vector<int>& nodes,
                                     const std::set<int>& findings) {
  v1::CreateCaseRequest r;
  if (job.tenant.empty()) return r;
  r.set_tenant(job.tenant);
  std::set<std::string> ids, labels, codes, jobs;
  for (const int n : nodes) {
    if (n < 0 || n >= job.report.nodes_size()) continue;
    if (static_cast<std::size_t>(n) < job.snapshot_ids.size()) ids.insert(job.snapshot_ids[n]);
    // Case node names are plain host names (a label may add the file: "n1 (a.ibsnap)").
    std::string label = job.report.nodes(n).node();
    for (char& c : label) {
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f ||
          c == '/') {
        c = '_';
      }
    }
    labels.insert(label);
    if (!job.report.nodes(n).job_id().empty()) jobs.insert(job.report.nodes(n).job_id());
  }
  const v1::Finding* worst = nullptr;
  for (int i = 0; i < job.report.findings_size(); ++i) {
    const int owner = nodeOfFinding(job, i);
    if (std::find(nodes.begin(), nodes.end(), owner) == nodes.end()) continue;
    if (!findings.empty() && findings.count(i) == 0) continue;
    const auto& f = job.report.findings(i);
    codes.insert(f.code());
    if (worst == nullptr || severityRank(f.severity()) > severityRank(worst->severity())) {
      worst = &f;
    }
  }
  if (jobs.size() == 1) r.set_job_id(*jobs.begin());
  for (const auto& id : ids) r.add_snapshot_ids(id);
  for (const auto& l : labels) r.add_nodes(l);
  for (const auto& c : codes) r.add_finding_codes(c);
  std::string title = worst != nullptr ? worst->code() : std::string("escalation");
  title += " on " + std::to_string(labels.size()) + " node(s)";
  if (jobs.size() == 1) title += " of job " + *jobs.begin();
  r.set_title(title);
  return r;
}

std::string escalationWords(const std::string& kind) {
  if (kind == "physical") return "physical link or device";
  if (kind == "subnet_manager") return "subnet manager";
  if (kind == "transport_path") return "transport path";
  return kind;
}

std::vector<SuspectReason> suspectReasons(const JobData& job) {
  std::vector<SuspectReason> out;
  for (int n = 0; n < job.report.nodes_size(); ++n) {
    const auto inspection = pfInspectionFor(job, {n}, {}, "");
    if (inspection.suspects_size() == 0) continue;
    SuspectReason r;
    r.node = n;
    // (kind, reasons) → the VFs: eight ports slow for one reason read as one line.
    std::map<std::pair<std::string, std::vector<std::string>>, std::vector<std::string>> groups;
    std::set<std::string> codes;
    for (const auto& vf : inspection.suspects()) {
      std::vector<std::string> reasons(vf.reasons().begin(), vf.reasons().end());
      std::sort(reasons.begin(), reasons.end());
      const std::string where = vf.device() + "/" + std::to_string(vf.port());
      groups[{vf.escalation(), reasons}].push_back(where);
      codes.insert(reasons.begin(), reasons.end());
      if (vf.identity_missing()) r.identity_missing.push_back(where);
    }
    for (const auto& [key, vfs] : groups) {
      std::string line = escalationWords(key.first) + ": ";
      for (std::size_t i = 0; i < key.second.size(); ++i) line += (i ? ", " : "") + key.second[i];
      line += " on ";
      for (std::size_t i = 0; i < vfs.size(); ++i) line += (i ? ", " : "") + vfs[i];
      r.lines.push_back(std::move(line));
    }
    r.codes.assign(codes.begin(), codes.end());
    out.push_back(std::move(r));
  }
  return out;
}

std::string jobIdOf(const JobData& job, const std::vector<int>& nodes) {
  std::set<std::string> ids;
  for (const int n : nodes) {
    if (n < 0 || n >= job.report.nodes_size()) continue;
    if (!job.report.nodes(n).job_id().empty()) ids.insert(job.report.nodes(n).job_id());
  }
  return ids.size() == 1 ? *ids.begin() : std::string();
}

const v1::Case* caseOfJob(const std::vector<v1::Case>& cases, const std::string& tenant,
                          const std::string& job_id) {
  if (job_id.empty()) return nullptr;
  const v1::Case* best = nullptr;
  const auto open = [](const v1::Case& c) { return c.state() != v1::CASE_STATE_CLOSED; };
  for (const auto& c : cases) {
    if (c.job_id() != job_id || (!tenant.empty() && c.tenant() != tenant)) continue;
    if (best == nullptr || open(c) > open(*best) ||
        (open(c) == open(*best) && c.updated_at_unix_ms() > best->updated_at_unix_ms())) {
      best = &c;
    }
  }
  return best;
}

namespace {

std::string shellQuote(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_./:@%+=,-").find(c) != std::string_view::npos;
  });
  if (plain) return s;
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

EscalationCommands escalationCommands(const JobData& job, const std::vector<int>& nodes,
                                      const v1::Case* the_case, bool redact) {
  EscalationCommands out;
  std::string job_id = jobIdOf(job, nodes);
  if (job_id.empty() && nodes.empty()) {
    std::vector<int> all;
    for (int i = 0; i < job.report.nodes_size(); ++i) all.push_back(i);
    job_id = jobIdOf(job, all);
  }
  out.bundle_file = the_case != nullptr && job_id.empty() ? the_case->case_id() + ".ibbundle"
                    : !job_id.empty()                     ? "job" + job_id + ".ibbundle"
                                                          : std::string("case.ibbundle");
  std::string line = "ibcollect bundle export";
  if (!job.tenant.empty()) {
    // From the collector: the CLI fetches by case (its snapshots) or by job (every node).
    std::set<std::string> checked_ids;
    for (const int n : nodes) {
      if (n >= 0 && static_cast<std::size_t>(n) < job.snapshot_ids.size())
        checked_ids.insert(job.snapshot_ids[static_cast<std::size_t>(n)]);
    }
    if (the_case != nullptr) {
      line += " --case " + the_case->case_id() + " --tenant " + shellQuote(job.tenant);
      const std::set<std::string> case_ids(the_case->snapshot_ids().begin(),
                                           the_case->snapshot_ids().end());
      if (case_ids != checked_ids) {
        out.note = "--case exports the case's " + std::to_string(case_ids.size()) +
                   " snapshot(s); " + std::to_string(checked_ids.size()) +
                   " are checked here: update the case first, or use Export bundle (exactly "
                   "the checked nodes)";
      }
    } else {
      line += " --job " + (job_id.empty() ? std::string("<JOB>") : shellQuote(job_id)) +
              " --tenant " + shellQuote(job.tenant);
      if (static_cast<int>(checked_ids.size()) != job.report.nodes_size()) {
        out.note = "--job exports every node of the job (" +
                   std::to_string(job.report.nodes_size()) + "); " +
                   std::to_string(checked_ids.size()) +
                   " are checked here: create the case first, or use Export bundle (exactly "
                   "the checked nodes)";
      }
    }
  } else {
    int files = 0;
    for (const int n : nodes) {
      if (n < 0 || n >= job.report.nodes_size()) continue;
      const std::string& file = job.report.nodes(n).snapshot_file();
      // A member of an opened bundle ("x.ibbundle:snapshots/n.ibsnap") is no file to name.
      if (file.empty() || file.find(".ibbundle:") != std::string::npos) continue;
      line += " " + shellQuote(file);
      ++files;
    }
    if (files != static_cast<int>(nodes.size()))
      out.note = "only snapshot files can be named here; use Export bundle for the others";
  }
  if (redact) line += " --redact";
  line += " --cert ME.pem --key ME.key -o " + shellQuote(out.bundle_file);
  out.export_line = std::move(line);
  out.host_line = "sudo ibcollect host-inspect --bundle " + shellQuote(out.bundle_file) +
                  " --ca CA.pem --attach-to " + shellQuote(out.bundle_file) +
                  " --cert PROVIDER.pem --key PROVIDER.key";
  return out;
}

RunbookPart runbookOfNode(std::string_view md, std::string_view node) {
  RunbookPart out;
  // Sections start at a line "## "; the code blocks inside are indented, never at column 0.
  std::vector<std::size_t> starts;
  for (std::size_t at = 0; at < md.size();) {
    if (md.compare(at, 3, "## ") == 0) starts.push_back(at);
    const std::size_t nl = md.find('\n', at);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  out.total = static_cast<int>(starts.size());
  if (starts.empty()) {
    out.markdown = std::string(md);
    return out;
  }
  out.markdown = std::string(md.substr(0, starts[0]));
  const auto section = [&](std::size_t i) {
    const std::size_t end = i + 1 < starts.size() ? starts[i + 1] : md.size();
    return md.substr(starts[i], end - starts[i]);
  };
  const auto ofNode = [&](std::string_view s) {
    return s.size() > 3 + node.size() && s.compare(3, node.size(), node) == 0 &&
           s[3 + node.size()] == ' ';
  };
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::string_view s = section(i);
    if (!node.empty() && ofNode(s)) {
      out.markdown += s;
      ++out.shown;
    }
  }
  if (out.shown == 0) {
    out.markdown += section(0);
    out.shown = 1;
  }
  return out;
}

}  // namespace ibc::console
