#include "ibc/core/job_verdict.h"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "ibc/core/findings.h"
#include "ibc/core/slurm.h"
#include "ibc/core/sysfs_values.h"

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

// A peer as NCCL prints it ("10.2.0.7<43211>", "[fe80::1%ib0]<5>", a GID
// "fd00:1148:9000:5000:4:200:3:ff1f"), as the 16 bytes of an IPv6 address (IPv4 mapped to
// ::ffff:a.b.c.d, as a RoCE v2 GID of that address is); "" when it is no address.
std::string addressKey(std::string_view text) {
  text = text.substr(0, text.find('<'));
  if (!text.empty() && text.front() == '[') text = text.substr(1, text.find(']') - 1);
  text = text.substr(0, text.find('%'));
  if (text.empty() || text.size() > 45) return {};
  const std::string z(text);
  unsigned char bytes[16] = {};
  if (inet_pton(AF_INET6, z.c_str(), bytes) == 1)
    return std::string(reinterpret_cast<const char*>(bytes), 16);
  unsigned char v4[4];
  if (inet_pton(AF_INET, z.c_str(), v4) != 1) return {};
  bytes[10] = bytes[11] = 0xff;
  std::copy(v4, v4 + 4, bytes + 12);
  return std::string(reinterpret_cast<const char*>(bytes), 16);
}

// The peers an NCCL failure event names: its peer address and the remote GIDs of the line.
std::vector<std::string> peersOf(const v1::NcclEvent& e) {
  std::vector<std::string> out;
  if (!e.peer().empty()) out.push_back(e.peer().substr(0, e.peer().find('<')));
  for (const std::string_view key : {"remoteGids", "remoteGid "}) {
    const std::size_t at = e.text().find(key);
    if (at == std::string::npos) continue;
    std::string_view rest = std::string_view(e.text()).substr(at + key.size());
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
    out.emplace_back(rest.substr(0, rest.find_first_of(" ,;)")));
  }
  return out;
}

// The code of an NCCL failure that names its peer (a completion error, connect or QP failure),
// which joinPeers joins to the peer's node; nullptr for other events.
const std::string* peerFailureCode(v1::NcclEvent::Kind kind) {
  static const std::map<v1::NcclEvent::Kind, std::string> kCodeOf = {
      {v1::NcclEvent::IB_COMPLETION_ERROR, "NCCL_IB_COMPLETION_ERROR"},
      {v1::NcclEvent::CONNECT_FAILED, "NCCL_CONNECT_FAILED"},
      {v1::NcclEvent::QP_SETUP_FAILED, "NCCL_QP_SETUP_FAILED"}};
  const auto it = kCodeOf.find(kind);
  return it == kCodeOf.end() ? nullptr : &it->second;
}

// NCCL failures joined to the job's fabric evidence: a completion error, connect or QP failure
// that names a peer address or GID which a port (its GIDs) or an interface (its addresses) of
// another node of the job holds gets that peer's node, port and port findings beside it; so
// does NCCL_RANK_LAGGING for the nodes NCCL's RAS report names by address.
void joinPeers(std::vector<AnalyzedNode>& nodes, const std::vector<std::size_t>& answered) {
  struct Place {
    std::size_t node;
    std::string device;
    uint32_t port;
  };
  std::unordered_map<std::string, Place> by_address;
  for (std::size_t i : answered) {
    for (const auto& d : nodes[i].snapshot.devices()) {
      for (const auto& p : d.ports()) {
        for (const auto& gid : p.gids()) {
          if (auto key = addressKey(gid); !key.empty() && !isZeroGid(gid))
            by_address.emplace(std::move(key), Place{i, d.name(), p.port()});
        }
      }
    }
  }
  // An interface's own addresses (IPoIB, RoCE netdevs): the RDMA port it is bound to, else
  // the interface.
  for (std::size_t i : answered) {
    for (const auto& nd : nodes[i].snapshot.netdevs()) {
      for (const auto& a : nd.addresses()) {
        if (auto key = addressKey(a); !key.empty())
          by_address.emplace(std::move(key),
                             Place{i, nd.rdma_device().empty() ? nd.name() : nd.rdma_device(),
                                   nd.rdma_device().empty() ? 0 : nd.rdma_port()});
      }
    }
  }
  if (by_address.empty()) return;
  for (auto& n : nodes) {
    std::map<std::string, std::vector<std::string>> lines;  // code -> evidence to add
    std::set<std::pair<std::string, std::string>> told;     // code, peer node/port
    for (const auto& log : n.snapshot.nccl_logs()) {
      // What names another node: a failure's peer; the RAS report's node of a rank (which
      // may be this node itself).
      struct Named {
        const std::string* code;
        std::string address;
        bool ras;
      };
      static const std::string kLagging = "NCCL_RANK_LAGGING";
      std::vector<Named> named;
      for (const auto& e : log.parsed().events()) {
        const std::string* code = peerFailureCode(e.kind());
        if (code == nullptr) continue;
        for (auto& peer : peersOf(e)) named.push_back({code, std::move(peer), false});
      }
      for (const auto& r : log.parsed().ranks()) {
        if (r.sequence() == v1::NcclRankProgress::RAS_OPERATION && !r.host().empty())
          named.push_back({&kLagging, r.host(), true});
      }
      for (const auto& [code, peer, ras] : named) {
        const auto at = by_address.find(addressKey(peer));
        if (at == by_address.end() || (!ras && &nodes[at->second.node] == &n)) continue;
        const Place& pl = at->second;
        const AnalyzedNode& other = nodes[pl.node];
        const std::string where = other.label + " " + pl.device +
                                  (pl.port != 0 ? " port " + std::to_string(pl.port) : "");
        if (!told.emplace(*code, where).second || told.size() > 16) continue;
        std::string said;
        for (const auto& f : other.findings) {
          if (f.device() != pl.device || f.port() != pl.port || f.severity() == "info" ||
              findingClassOf(f.code()) == FindingClass::Escalation)
            continue;
          said += (said.empty() ? "" : "; ") + f.code() + ": " + f.summary();
        }
        lines[*code].push_back(
            (ras ? "RAS's node " : "peer ") + peer + " is " + where +
            (said.empty() ? ", with no finding on that port" : ", which shows " + said));
      }
    }
    for (auto& f : n.findings) {
      const auto it = lines.find(f.code());
      if (it == lines.end()) continue;
      for (const auto& l : it->second) f.add_evidence(l);
      lines.erase(it);  // once per code, on the node's first finding of it
    }
  }
}

// A node's own finding and the inputs that carry it word for word (a shared log directory).
struct Carried {
  v1::Finding finding;
  std::vector<std::size_t> carriers;
};

// Phase 1: the judged nodes' own findings (`evidence`, moved out), each finding several inputs
// carry word for word once, with its carriers in order. A node that shares its host name with
// another input (`apart`) keeps its findings apart. Keys are hashed, not kept: a key is every
// word of a finding (thousands of nodes' worth are tens of MiB); a hash seen before is checked
// word for word.
std::vector<Carried> carryFindings(std::vector<std::vector<v1::Finding>>& evidence,
                                   const std::vector<std::size_t>& judged,
                                   const std::vector<bool>& apart) {
  const auto keyOf = [&apart](const v1::Finding& f, std::size_t node) {
    std::string key = wordsOf(f);
    if (apart[node]) key += '\0' + std::to_string(node);
    return key;
  };
  std::vector<Carried> carried;
  std::unordered_multimap<std::size_t, std::size_t> by_hash;  // hash of a key -> carried
  for (std::size_t i : judged) {
    for (auto& f : evidence[i]) {
      const std::string key = keyOf(f, i);
      const std::size_t hash = std::hash<std::string>{}(key);
      std::size_t same = carried.size();
      for (auto [at, end] = by_hash.equal_range(hash); at != end; ++at) {
        const Carried& c = carried[at->second];
        if (keyOf(c.finding, c.carriers.front()) == key) {
          same = at->second;
          break;
        }
      }
      if (same == carried.size()) {
        by_hash.emplace(hash, carried.size());
        carried.push_back({std::move(f), {i}});
      } else {
        carried[same].carriers.push_back(i);
      }
    }
  }
  return carried;
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

// Whether the verdict judges a node's evidence: every node that answered, and an unreachable
// node whose NCCL logs or nccl-tests output the launcher read (they are its logs, whatever
// host name they print).
bool judgedNode(const AnalyzedNode& n) {
  const auto& s = n.snapshot;
  return n.unreachable_reason.empty() || s.nccl_logs_size() > 0 || s.nccl_tests_size() > 0;
}

// Empties `field` and frees its elements (a RepeatedPtrField's Clear() keeps them for reuse).
template <typename T>
void release(google::protobuf::RepeatedPtrField<T>* field) {
  google::protobuf::RepeatedPtrField<T> empty;
  field->Swap(&empty);
}

// The answered nodes' counter movement for compareNodes when a node is slim (its counters
// were measured when it was added; the others' are measured into `measured`); empty when no
// node is slim (compareNodes reads the snapshots) or fewer than two answered.
std::vector<const NodeCounterMetrics*> countersOf(
    const std::vector<AnalyzedNode>& nodes, const std::vector<std::size_t>& answered,
    const std::vector<std::optional<NodeCounterMetrics>>& taken,
    std::vector<NodeCounterMetrics>& measured) {
  std::vector<const NodeCounterMetrics*> out;
  const bool any_slim =
      std::any_of(taken.begin(), taken.end(), [](const auto& m) { return m.has_value(); });
  if (!any_slim || answered.size() < 2) return out;
  measured.reserve(answered.size());  // no reallocation: `out` points into it
  for (std::size_t i : answered) {
    if (!taken[i]) measured.push_back(nodeCounterMetrics(nodes[i].snapshot));
  }
  std::size_t next = 0;
  for (std::size_t i : answered) out.push_back(taken[i] ? &*taken[i] : &measured[next++]);
  return out;
}

}  // namespace

void slimSnapshot(v1::Snapshot& snapshot) {
  for (auto& d : *snapshot.mutable_devices()) {
    release(d.mutable_hw_counters());
    for (auto& p : *d.mutable_ports()) {
      release(p.mutable_counters());
      release(p.mutable_hw_counters());
      release(p.mutable_counters_ext());
    }
  }
  for (auto& n : *snapshot.mutable_netdevs()) {
    release(n.mutable_stats());
    release(n.mutable_ethtool());
  }
  release(snapshot.mutable_window());
  release(snapshot.mutable_kernel_log()->mutable_lines());
  // set_allocated_raw(nullptr) frees the text; clear_raw() would keep its capacity.
  for (auto& log : *snapshot.mutable_nccl_logs()) {
    log.set_allocated_raw(nullptr);
    // What the cross-node steps read of a log: its ranks' progress (NCCL_RANK_LAGGING) and
    // the failures that name a peer (joinPeers).
    v1::NcclLogSummary kept;
    kept.mutable_ranks()->Swap(log.mutable_parsed()->mutable_ranks());
    for (auto& e : *log.mutable_parsed()->mutable_events()) {
      if (peerFailureCode(e.kind()) != nullptr) kept.add_events()->Swap(&e);
    }
    log.mutable_parsed()->Swap(&kept);
  }
  for (auto& t : *snapshot.mutable_tool_outputs()) t.set_allocated_raw(nullptr);
}

JobJudgement::JobJudgement(JobVerdictOptions options) : options_(std::move(options)) {}

void JobJudgement::add(AnalyzedNode node, Keep keep) {
  // 1. The node's own evidence rules, now, while its whole snapshot is at hand.
  judged_.push_back(judgedNode(node));
  evidence_.push_back(judged_.back() ? diagnoseNodeEvidence(node.snapshot, options_.rules)
                                     : std::vector<v1::Finding>{});
  metrics_.emplace_back();
  slim_.emplace_back();
  if (keep != Keep::Whole) {
    metrics_.back() = nodeCounterMetrics(node.snapshot);
    slimSnapshot(node.snapshot);
    if (keep == Keep::Verdict) release(node.snapshot.mutable_nccl_tests());
    slim_.back() = node.snapshot.SerializeAsString();
    node.snapshot = v1::Snapshot();  // frees it (Clear() would keep its elements)
  }
  nodes_.push_back(std::move(node));
}

void judgeJob(std::vector<AnalyzedNode>& nodes, const JobVerdictOptions& options) {
  JobJudgement judgement(options);
  for (auto& n : nodes) judgement.add(std::move(n), Keep::Whole);
  nodes = judgement.finish();
}

std::vector<AnalyzedNode> JobJudgement::takeNodes() {
  std::vector<AnalyzedNode> nodes = std::move(nodes_);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (slim_[i].empty()) continue;
    nodes[i].snapshot.ParseFromString(slim_[i]);  // its own serialization
    std::string().swap(slim_[i]);
  }
  return nodes;
}

std::vector<AnalyzedNode> JobJudgement::finish() {
  std::vector<AnalyzedNode> nodes = takeNodes();
  const auto& options = options_;
  labelNodes(nodes);
  if (nodes.empty()) return nodes;
  const JobNodeIndex index(nodes);
  std::vector<std::size_t> answered;
  std::vector<const v1::Snapshot*> snaps;
  std::vector<std::string> labels;
  std::unordered_map<std::string, std::size_t> by_label;
  std::vector<std::size_t> judged;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (judged_[i]) judged.push_back(i);
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
  std::vector<bool> apart(nodes.size(), false);
  for (std::size_t i : judged) apart[i] = name_count[nodeName(nodes[i].snapshot)] > 1;
  std::vector<Carried> carried = carryFindings(evidence_, judged, apart);
  std::vector<std::vector<v1::Finding>>().swap(evidence_);  // moved out: their shells go too
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
  std::vector<NodeCounterMetrics> measured;
  const auto metrics = countersOf(nodes, answered, metrics_, measured);
  for (auto& f : compareNodes(snaps, o.compare, &labels, metrics.empty() ? nullptr : &metrics)) {
    std::size_t owner = answered.empty() ? 0 : answered.front();
    if (const auto it = by_label.find(f.node()); it != by_label.end()) {
      owner = it->second;
    } else if (const auto j = index.find(f.node())) {
      owner = *j;
    }
    if (seen.count({f.code(), owner, f.device(), f.port()}) != 0) continue;
    give(owner, std::move(f));
  }

  // The peers NCCL failures name, joined to their node's port and its findings.
  joinPeers(nodes, answered);

  // 3. Escalation by class over each node's whole findings.
  escalateJudged(nodes, judged);
  for (auto& n : nodes) sortFindings(n.findings);
  evidence_.clear();
  metrics_.clear();
  return nodes;
}

}  // namespace ibc::core
