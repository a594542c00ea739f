#include "ibc/core/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "ibc/core/counters.h"
#include "ibc/core/findings.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/node_metrics.h"
#include "ibc/core/rules.h"
#include "ibc/core/slurm.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

// The most frequent value and how often it occurs; ties go to the larger value (for
// rates and MTUs the intended configuration).
template <typename T>
std::pair<T, std::size_t> majority(const std::map<T, std::size_t>& counts) {
  std::pair<T, std::size_t> best{};
  for (const auto& [v, n] : counts) {
    if (n >= best.second) best = {v, n};
  }
  return best;
}

// Shorthand for a list of node names in evidence: first few, then a count.
std::string someNodes(const std::vector<std::string>& names, std::size_t max = 6) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max) s += ", ... " + std::to_string(names.size() - max) + " more";
  return s;
}

// A firmware version as drivers print it in fw_ver: "20.31.2354", "2.42.5000", "1.27.0",
// "0.2", possibly followed by more ("16.35.2000 (MT_0000000010)"). A placeholder left in
// a copied tree ("fw_ver"), an empty value or garbage is no version.
bool isFirmwareVersion(std::string_view v) {
  std::size_t i = 0;
  std::size_t groups = 0;
  while (true) {
    const std::size_t begin = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    if (i == begin) return false;
    ++groups;
    if (i < v.size() && v[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  if (groups < 2) return false;
  return i == v.size() || !std::isalnum(static_cast<unsigned char>(v[i]));
}

void firmware(const std::vector<NodeView>& nodes, std::vector<v1::Finding>& out) {
  // Model → fw → count of devices; a model is the HCA type (or PCI id, or board).
  struct Use {
    std::string node, device, fw;
  };
  std::map<std::string, std::map<std::string, std::size_t>> counts;
  std::map<std::string, std::vector<Use>> uses;
  // Devices whose fw_ver is no version: not compared, said (info) when peers have one.
  std::map<std::string, std::vector<Use>> unknown;
  for (const auto& n : nodes) {
    for (const auto& d : n.snap->devices()) {
      if (!d.missing_reason().empty()) continue;
      std::string model = !d.hca_type().empty()          ? d.hca_type()
                          : !d.pci().device_id().empty() ? "PCI " + d.pci().device_id()
                                                         : d.board_id();
      if (d.is_virtual_function()) model += " (VF)";
      if (!isFirmwareVersion(d.fw_ver())) {
        unknown[model].push_back({n.name, d.name(), d.fw_ver()});
        continue;
      }
      counts[model][d.fw_ver()]++;
      uses[model].push_back({n.name, d.name(), d.fw_ver()});
    }
  }
  for (const auto& [model, list] : unknown) {
    auto known = counts.find(model);
    if (known == counts.end()) continue;  // no version anywhere: nothing to compare with
    const auto [fw, nmaj] = majority(known->second);
    std::map<std::string, std::vector<std::string>> by_node;
    for (const auto& u : list) {
      by_node[u.node].push_back(u.device + " fw_ver " +
                                (u.fw.empty() ? std::string("empty") : "\"" + u.fw + "\""));
    }
    for (const auto& [node, devs] : by_node) {
      std::vector<std::string> ev = devs;
      ev.push_back("peers: fw " + fw + " on " + std::to_string(nmaj) + " " + model +
                   " devices in the job");
      out.push_back(makeFinding(
          {FindingCode::FwVersionMismatch, Severity::Info, node, "", 0,
           "Firmware version unknown on " + std::to_string(devs.size()) +
               " device(s) (fw_ver is not a version): not compared with the job's " + fw,
           std::move(ev),
           "Read the firmware on this node (`cat /sys/class/infiniband/*/fw_ver`, "
           "`ibv_devinfo`, `flint -d <pci> q`) to compare it with its peers."}));
    }
  }
  for (const auto& [model, fws] : counts) {
    if (fws.size() < 2) continue;
    const auto [fw, nmaj] = majority(fws);
    std::size_t total = 0;
    for (const auto& [v, k] : fws) total += k;
    std::map<std::string, std::vector<std::string>> odd_devices_by_node;
    for (const auto& u : uses[model]) {
      if (u.fw != fw) odd_devices_by_node[u.node].push_back(u.device + " fw " + u.fw);
    }
    for (const auto& [node, devs] : odd_devices_by_node) {
      std::vector<std::string> ev = devs;
      ev.push_back("majority: fw " + fw + " on " + std::to_string(nmaj) + " of " +
                   std::to_string(total) + " " + model + " devices in the job");
      out.push_back(makeFinding(
          {FindingCode::FwVersionMismatch, Severity::Warning, node, "", 0,
           "Firmware differs from the rest of the job (" + devs.front() + " vs " + fw + ")",
           std::move(ev),
           "Mixed firmware behaves differently under load (congestion control, "
           "adaptive routing, bug fixes): bring every " +
               model +
               " to the same firmware (`flint -d <pci> q`; on VFs the provider "
               "updates the PF)."}));
    }
  }
}

void mtu(const std::vector<NodeView>& nodes, std::vector<v1::Finding>& out) {
  // Per kind of RDMA interface (IPoIB, RoCE): MTU → nodes.
  std::map<std::string, std::map<uint32_t, std::size_t>> counts;
  std::map<std::string,
           std::vector<std::tuple<std::string, std::string, std::string, uint32_t, uint32_t>>>
      uses;
  for (const auto& n : nodes) {
    for (const auto& nd : n.snap->netdevs()) {
      if (!nd.has_mtu() || (nd.rdma_device().empty() && nd.type() != 32)) continue;
      const std::string kind = nd.type() == 32 ? "IPoIB" : "RoCE";
      counts[kind][nd.mtu()]++;
      uses[kind].emplace_back(n.name, nd.name(), nd.rdma_device(), nd.rdma_port(), nd.mtu());
    }
    for (const auto& d : n.snap->devices()) {
      for (const auto& p : d.ports()) {
        if (!p.has_active_mtu()) continue;
        counts["active_mtu"][p.active_mtu()]++;
        uses["active_mtu"].emplace_back(n.name, "", d.name(), p.port(), p.active_mtu());
      }
    }
  }
  for (const auto& [kind, mtus] : counts) {
    if (mtus.size() < 2) continue;
    const auto [maj, nmaj] = majority(mtus);
    std::size_t total = 0;
    for (const auto& [v, k] : mtus) total += k;
    for (const auto& [node, netdev, dev, port, value] : uses[kind]) {
      if (value == maj) continue;
      const std::string what =
          netdev.empty() ? dev + " port " + std::to_string(port) + " active_mtu" : netdev;
      out.push_back(makeFinding(
          {FindingCode::MtuMismatch,
           Severity::Warning,
           node,
           dev,
           dev.empty() ? 0 : std::max(1u, port),
           kind + " MTU " + std::to_string(value) + " on " + what + " differs from the job's " +
               std::to_string(maj),
           {what + " mtu " + std::to_string(value),
            "majority: " + std::to_string(maj) + " on " + std::to_string(nmaj) + " of " +
                std::to_string(total) + " " + kind + " interfaces"},
           kind == "RoCE"
               ? "RoCE path MTU follows the netdev MTU: a mismatch drops or fragments large "
                 "messages between these nodes. Set the same MTU everywhere (and on the switch)."
               : "Set the same MTU on every node's interface (IPoIB datagram 2044/4092, "
                 "connected up to 65520) so bootstrap and IP traffic behave the same."}));
    }
  }
}

void rates(const std::vector<NodeView>& nodes, const CompareOptions& o,
           std::vector<v1::Finding>& out) {
  std::map<std::string, std::map<double, std::size_t>> counts;  // link layer → rate → ports
  std::map<std::string, std::map<std::size_t, std::size_t>>
      active_ports;  // node count of active ports
  std::map<std::string, std::size_t> node_active;
  for (const auto& n : nodes) {
    std::size_t active = 0;
    for (const auto& d : n.snap->devices()) {
      for (const auto& p : d.ports()) {
        if (portStateOf(p.state()) != PortState::Active) continue;
        ++active;
        if (p.rate_gbps() > 0) counts[p.link_layer()][p.rate_gbps()]++;
      }
    }
    node_active[n.name] = active;
  }
  if (!o.expect_rate_gbps) {
    for (const auto& [layer, rs] : counts) {
      if (rs.size() < 2) continue;
      const auto [maj, nmaj] = majority(rs);
      std::size_t total = 0;
      for (const auto& [v, k] : rs) total += k;
      if (2 * nmaj <= total) continue;  // no rate most ports share: nothing to call "expected"
      for (const auto& n : nodes) {
        for (const auto& d : n.snap->devices()) {
          for (const auto& p : d.ports()) {
            if (portStateOf(p.state()) != PortState::Active || p.link_layer() != layer) continue;
            if (p.rate_gbps() <= 0 || p.rate_gbps() + 1e-6 >= maj) continue;
            out.push_back(makeFinding(
                {FindingCode::LinkRateBelowExpected,
                 Severity::Warning,
                 n.name,
                 d.name(),
                 p.port(),
                 d.name() + " port " + std::to_string(p.port()) + " runs at " +
                     formatNumber(p.rate_gbps(), 3) + " Gb/s while its peers run at " +
                     formatNumber(maj, 3) + " Gb/s",
                 {"rate \"" + p.rate_raw() + "\"",
                  "peers' majority: " + formatNumber(maj, 3) + " Gb/s on " + std::to_string(nmaj) +
                      " of " + std::to_string(total) + " active " + layer + " ports in the job"},
                 "The link trained below the rest of the job: a cable/transceiver rated lower, a "
                 "failed "
                 "lane or a limited switch port. `mlxlink -d <pci> -p " +
                     std::to_string(p.port()) +
                     "` compares supported and active speed; for a VF escalate."}));
          }
        }
      }
    }
  }
  // A node with fewer active ports than its peers.
  std::map<std::size_t, std::size_t> active_counts;
  for (const auto& [node, k] : node_active) active_counts[k]++;
  if (active_counts.size() >= 2) {
    const auto [maj, nmaj] = majority(active_counts);
    for (const auto& n : nodes) {
      const std::size_t k = node_active[n.name];
      if (k >= maj) continue;
      out.push_back(makeFinding(
          {FindingCode::NodeOutlier,
           Severity::Warning,
           n.name,
           "",
           0,
           "Node has " + std::to_string(k) + " active RDMA port(s) while its peers have " +
               std::to_string(maj),
           {"active ports " + std::to_string(k), "peers: " + std::to_string(maj) + " on " +
                                                     std::to_string(nmaj) + " of " +
                                                     std::to_string(nodes.size()) + " nodes"},
           "A port is down, unconfigured or missing on this node: see its port findings; "
           "NCCL will use fewer rails here and slow every collective."}));
    }
  }
}

// Window deltas per node and counter class (node_metrics.h), and data throughput.
void counterOutliers(const std::vector<NodeView>& nodes, const CompareOptions& o,
                     const std::vector<const NodeCounterMetrics*>* metrics,
                     std::vector<v1::Finding>& out) {
  std::vector<NodeCounterMetrics> totals;
  totals.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    totals.push_back(metrics != nullptr ? *(*metrics)[i] : nodeCounterMetrics(*nodes[i].snap));
  }
  for (const auto& x : core::counterOutliers(totals, o.outlier_factor)) {
    const CounterClass cls = x.cls;
    out.push_back(makeFinding(
        {FindingCode::NodeOutlier,
         cls == CounterClass::Congestion ? Severity::Warning : Severity::Critical,
         nodes[x.node].name,
         "",
         0,
         "Node stands out from its peers: " + std::string(counterClassName(cls)) + " +" +
             formatNumber(x.value, 3) + " during the window, the median node saw +" +
             formatNumber(x.median, 3),
         {"largest: " + totals[x.node].classes.at(cls).largest_where,
          "peers' median: +" + formatNumber(x.median, 3) + " over " +
              std::to_string(x.windowed_nodes) + " nodes"},
         "This node (or the switch port next to it) is the likely culprit for the job: inspect "
         "its "
         "link findings; for a VF escalate with its snapshot."}));
  }
  // Throughput: a node moving much less data than its peers while they are busy.
  std::vector<double> rates;
  for (const auto& t : totals) {
    if (t.windowed) rates.push_back(t.bytes_per_second);
  }
  const double med = medianOf(rates);
  if (med < 1e8) return;  // < 0.8 Gb/s: the job is idle, nothing to compare
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!totals[i].windowed || totals[i].bytes_per_second >= o.slow_fraction * med) continue;
    out.push_back(makeFinding(
        {FindingCode::NodeOutlier,
         Severity::Warning,
         nodes[i].name,
         "",
         0,
         "Node moved " + formatNumber(totals[i].bytes_per_second * 8 / 1e9, 3) +
             " Gb/s of RDMA data during the window, the "
             "median node " +
             formatNumber(med * 8 / 1e9, 3) + " Gb/s",
         {"port_xmit_data + port_rcv_data (4-byte words) over the window"},
         "A slow or stalled node holds every collective back: check its GPUs, PCIe, link rate and "
         "congestion findings, and the NCCL log of its ranks."}));
  }
}

void busbw(const std::vector<NodeView>& nodes,
           const std::vector<const NodeCounterMetrics*>* metrics, std::vector<v1::Finding>& out) {
  // The same values and marks the console's grid and charts show; a slim node's peak was
  // taken with its metrics (its nccl-tests tables may be gone).
  std::vector<std::optional<double>> peaks;
  peaks.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    peaks.push_back(metrics != nullptr ? (*metrics)[i]->peak_busbw_gbs
                                       : peakBusbwGbs(*nodes[i].snap));
  }
  const NodeOutliers judged = nodeBusbwOutliers(std::move(peaks));
  const double med = judged.marks.median;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!judged.outlier[i]) continue;
    const double p = *judged.value[i];
    out.push_back(
        makeFinding({FindingCode::NodeOutlier,
                     Severity::Warning,
                     nodes[i].name,
                     "",
                     0,
                     "nccl-tests bus bandwidth " + formatNumber(p, 3) +
                         " GB/s, the median node reached " + formatNumber(med, 3) + " GB/s",
                     {"peak busbw " + formatNumber(p, 3) + " GB/s",
                      "median over " + std::to_string(judged.judged()) + " nodes " +
                          formatNumber(med, 3) + " GB/s"},
                     "Compare this node's link rate, PCIe, GDR and congestion findings with its "
                     "peers'; rerun nccl-tests on pairs to isolate the link."}));
  }
}

void deviceLayout(const std::vector<NodeView>& nodes, std::vector<v1::Finding>& out) {
  // PCI address → device name per node; the naming most nodes share is the layout jobs
  // were written for (NCCL_IB_HCA lists, rail mappings).
  std::map<std::string, std::size_t> layouts;
  std::vector<std::string> layout_of(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> pairs;
    for (const auto& d : nodes[i].snap->devices()) {
      if (!d.pci().address().empty()) pairs.push_back(d.pci().address() + "=" + d.name());
    }
    if (pairs.empty()) continue;
    std::sort(pairs.begin(), pairs.end());
    std::string key;
    for (const auto& p : pairs) key += p + " ";
    layout_of[i] = key;
    layouts[key]++;
  }
  if (layouts.size() < 2) return;
  const auto [maj, nmaj] = majority(layouts);
  if (nmaj < 2) return;  // no majority to compare against
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (layout_of[i].empty() || layout_of[i] == maj) continue;
    out.push_back(
        makeFinding({FindingCode::NodeOutlier,
                     Severity::Warning,
                     nodes[i].name,
                     "",
                     0,
                     "RDMA device names map to PCI functions differently than on " +
                         std::to_string(nmaj) + " peer nodes",
                     {"this node: " + layout_of[i], "peers: " + maj},
                     "A device was re-registered (reset, hot-plug) or probed in another order: "
                     "NCCL_IB_HCA lists and rail mappings by name now point at other NICs here. "
                     "Reload the driver or reboot to restore the naming, or select HCAs by PCI."}));
  }
}

void rankLagging(const std::vector<NodeView>& nodes, std::vector<v1::Finding>& out) {
  // Progress per (count, host, rank) across every node's NCCL logs. NCCL opCounts and
  // PyTorch SeqNums count different things: ranks are compared with the same count only.
  using Sequence = v1::NcclRankProgress::Sequence;
  std::map<std::tuple<Sequence, std::string, int>, uint64_t> op;
  for (const auto& n : nodes) {
    for (const auto& log : n.snap->nccl_logs()) {
      for (const auto& r : log.parsed().ranks()) {
        const Sequence seq = r.sequence() == v1::NcclRankProgress::TORCH_SEQ_NUM
                                 ? v1::NcclRankProgress::TORCH_SEQ_NUM
                                 : v1::NcclRankProgress::NCCL_OP_COUNT;
        auto& v = op[{seq, r.host().empty() ? n.name : r.host(), r.rank()}];
        v = std::max(v, r.op_count());
      }
    }
  }
  std::map<Sequence, std::map<uint64_t, std::vector<std::string>>> at;
  for (const auto& [key, v] : op) {
    const auto& [seq, host, rank] = key;
    at[seq][v].push_back(host + " rank " + std::to_string(rank));
  }
  for (const auto& [seq, by_value] : at) {
    if (by_value.size() < 2) continue;
    std::set<std::string> behind_hosts;
    for (const auto& r : by_value.begin()->second) behind_hosts.insert(r.substr(0, r.find(' ')));
    std::vector<std::string> ev;
    for (const auto& [v, ranks] : by_value)
      ev.push_back(formatRankProgress(seq, v) + ": " + someNodes(ranks));
    for (const auto& host : behind_hosts) {
      out.push_back(
          makeFinding({FindingCode::NcclRankLagging, Severity::Warning, host, "", 0,
                       "Ranks on this node stopped at an earlier collective (" +
                           formatRankProgress(seq, by_value.begin()->first) + ") than their peers",
                       ev,
                       "The job waits for these ranks: check this node's link, GPU and process "
                       "state (a hung kernel read, a dead rank, a flapping port)."}));
    }
  }
}

}  // namespace

std::vector<v1::Finding> compareNodes(const std::vector<const v1::Snapshot*>& snaps,
                                      const CompareOptions& o,
                                      const std::vector<std::string>* labels,
                                      const std::vector<const NodeCounterMetrics*>* metrics) {
  std::vector<v1::Finding> out;
  if (snaps.size() < 2) return out;
  std::vector<NodeView> nodes;
  nodes.reserve(snaps.size());
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    nodes.push_back(
        {snaps[i], labels != nullptr && i < labels->size() ? (*labels)[i] : nodeName(*snaps[i])});
  }
  firmware(nodes, out);
  mtu(nodes, out);
  rates(nodes, o, out);
  counterOutliers(nodes, o, metrics, out);
  busbw(nodes, metrics, out);
  deviceLayout(nodes, out);
  rankLagging(nodes, out);
  return out;
}

JobNodeIndex::JobNodeIndex(const std::vector<AnalyzedNode>& nodes) {
  exact_.reserve(2 * nodes.size());
  short_.reserve(2 * nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& s = nodes[i].snapshot;
    for (const std::string& name : {nodeName(s), s.node().hostname()}) {
      if (name.empty()) continue;
      exact_.try_emplace(name, i);  // the first node with a name keeps it
      short_.try_emplace(std::string(shortHostName(name)), i);
    }
  }
}

std::optional<std::size_t> JobNodeIndex::find(std::string_view host) const {
  if (host.empty()) return std::nullopt;
  if (auto it = exact_.find(std::string(host)); it != exact_.end()) return it->second;
  if (auto it = short_.find(std::string(shortHostName(host))); it != short_.end())
    return it->second;
  return std::nullopt;
}

}  // namespace ibc::core
