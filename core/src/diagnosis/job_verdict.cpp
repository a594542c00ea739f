#include "ibc/core/job_verdict.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "ibc/core/findings.h"
#include "ibc/core/slurm.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

// Whether `host` (as a finding or a log line names it) is node `n` itself.
bool isSelf(const AnalyzedNode& n, std::string_view host) {
  if (host.empty()) return true;
  const auto& s = n.snapshot;
  for (const std::string& name : {nodeName(s), s.node().hostname()}) {
    if (name.empty()) continue;
    if (host == name || shortHostName(host) == shortHostName(name)) return true;
  }
  return false;
}

// A finding's words: what makes two snapshots' findings the same line of one shared log.
std::string wordsOf(const v1::Finding& f) {
  std::string key = f.code() + '\0' + f.severity() + '\0' + f.node() + '\0' + f.device() + '\0' +
                    std::to_string(f.port()) + '\0' + f.summary();
  for (const auto& e : f.evidence()) key += '\0' + e;
  return key;
}

// A notice on each node whose evidence names other hosts (a log line of another host): whose
// it is counted as, and which of those hosts are nodes of this job.
void noticeForeignHosts(std::vector<AnalyzedNode>& nodes,
                        const std::map<std::size_t, std::vector<std::string>>& foreign,
                        const JobNodeIndex& index) {
  for (const auto& [owner, hosts] : foreign) {
    const std::string name = nodeName(nodes[owner].snapshot);
    std::string list;
    std::vector<std::string> of_job;
    for (const auto& h : hosts) {
      list += (list.empty() ? "'" : ", '") + h + "'";
      if (const auto j = index.find(h); j && *j != owner) of_job.push_back(h);
    }
    std::string note = "evidence of " + nodes[owner].label + " names host" +
                       (hosts.size() > 1 ? "s " : " ") + list + ", not " + name +
                       ": it is counted as " + name + "'s";
    if (!of_job.empty()) {
      note += " (";
      for (std::size_t k = 0; k < of_job.size(); ++k) note += (k ? ", " : "") + of_job[k];
      note += of_job.size() > 1 ? " are other nodes" : " is another node";
      note += " of this job; their own inputs carry their evidence)";
    }
    nodes[owner].notices.push_back(std::move(note));
  }
}

// Phase 3: escalation by class over each judged node's whole findings.
void escalateJudged(std::vector<AnalyzedNode>& nodes, const std::vector<std::size_t>& judged) {
  for (std::size_t i : judged) {
    auto& n = nodes[i];
    // Escalations a caller's findings brought are judged again over the whole node.
    n.findings.erase(std::remove_if(n.findings.begin(), n.findings.end(),
                                    [](const v1::Finding& f) {
                                      return findingClassOf(f.code()) == FindingClass::Escalation;
                                    }),
                     n.findings.end());
    for (auto& f : escalationFindings(n.snapshot, n.findings)) {
      f.set_source(nodeSource(n));
      n.findings.push_back(std::move(f));
    }
  }
}

}  // namespace

void judgeJob(std::vector<AnalyzedNode>& nodes, const JobVerdictOptions& options) {
  labelNodes(nodes);
  if (nodes.empty()) return;
  const JobNodeIndex index(nodes);
  std::vector<std::size_t> answered;
  std::vector<const v1::Snapshot*> snaps;
  std::vector<std::string> labels;
  std::unordered_map<std::string, std::size_t> by_label;
  // An unreachable node whose NCCL logs the launcher read is judged on those: they are its
  // logs, whatever host name they print.
  std::vector<std::size_t> judged;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& s = nodes[i].snapshot;
    if (nodes[i].unreachable_reason.empty() || s.nccl_logs_size() > 0 || s.nccl_tests_size() > 0)
      judged.push_back(i);
    if (!nodes[i].unreachable_reason.empty()) continue;
    answered.push_back(i);
    snaps.push_back(&nodes[i].snapshot);
    labels.push_back(nodes[i].label);
    by_label.emplace(nodes[i].label, i);
  }
  // Inputs that share a host name (before/after, two fetches) are different snapshots of
  // one host: the same words on both are two findings, not one log read twice.
  std::unordered_map<std::string, std::size_t> name_count;
  for (std::size_t i : judged) ++name_count[nodeName(nodes[i].snapshot)];

  // 1. Every node's evidence rules. A finding several inputs carry word for word is one
  // finding with several carriers.
  struct Carried {
    v1::Finding finding;
    std::vector<std::size_t> carriers;
  };
  std::vector<Carried> carried;
  std::unordered_map<std::string, std::size_t> by_words;
  for (std::size_t i : judged) {
    for (auto& f : diagnoseNodeEvidence(nodes[i].snapshot, options.rules)) {
      std::string key = wordsOf(f);
      if (name_count[nodeName(nodes[i].snapshot)] > 1) key += '\0' + std::to_string(i);
      const auto [it, fresh] = by_words.emplace(std::move(key), carried.size());
      if (fresh) {
        carried.push_back({std::move(f), {i}});
      } else {
        carried[it->second].carriers.push_back(i);
      }
    }
  }
  std::set<std::tuple<std::string, std::size_t, std::string, uint32_t>> seen;
  std::set<std::pair<std::size_t, std::string>> noticed;
  std::map<std::size_t, std::vector<std::string>> foreign;  // node → host names, in order
  const auto give = [&](std::size_t owner, v1::Finding f) {
    f.set_node(nodeName(nodes[owner].snapshot));
    f.set_source(nodeSource(nodes[owner]));
    nodes[owner].findings.push_back(std::move(f));
  };
  for (auto& c : carried) {
    // The carrier the line names, when one does; else the first that brought it.
    std::size_t owner = c.carriers.front();
    for (std::size_t i : c.carriers) {
      if (isSelf(nodes[i], c.finding.node())) {
        owner = i;
        break;
      }
    }
    const std::string host = c.finding.node();
    if (!isSelf(nodes[owner], host) && noticed.emplace(owner, host).second) {
      foreign[owner].push_back(host);
    }
    seen.emplace(c.finding.code(), owner, c.finding.device(), c.finding.port());
    give(owner, std::move(c.finding));
  }

  noticeForeignHosts(nodes, foreign, index);

  // 2. Findings only the job's peers show; one a node's own rules already made (a port below
  // both --expect-rate and its peers) is told once. Cross-node findings never hide each
  // other (a node with fewer active ports and a low busbw has two NODE_OUTLIERs).
  JobVerdictOptions o = options;
  o.compare.expect_rate_gbps = options.rules.expect_rate_gbps;
  for (auto& f : compareNodes(snaps, o.compare, &labels)) {
    std::size_t owner = answered.empty() ? 0 : answered.front();
    if (const auto it = by_label.find(f.node()); it != by_label.end()) {
      owner = it->second;
    } else if (const auto j = index.find(f.node())) {
      owner = *j;
    }
    if (seen.count({f.code(), owner, f.device(), f.port()}) != 0) continue;
    give(owner, std::move(f));
  }

  // 3. Escalation by class over each node's whole findings.
  escalateJudged(nodes, judged);
  for (auto& n : nodes) sortFindings(n.findings);
}

}  // namespace ibc::core
