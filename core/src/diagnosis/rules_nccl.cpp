// NCCL log rules (NCCL_* codes) and nccl-tests rules (NCCL_TEST_*).
//
// The transport is what the channels use (`via NET/IB/...` vs `via NET/Socket/...`) and
// the network NCCL picked (`Using network X`); the bootstrap `NET/Socket : Using [0]ib0`
// line names the socket interface and is not a fallback. The first IB completion error is
// the root event; status-5 flushes after it are secondary.

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "ibc/core/nccl_log.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "rules_internal.h"

namespace ibc::core::rules {

namespace {

using Kind = v1::NcclEvent::Kind;

constexpr std::size_t kEvidenceLines = 8;

// ibv_wc_status names and what each means for a support engineer.
struct WcStatus {
  int code;
  const char* name;
  const char* meaning;
};
constexpr WcStatus kWcStatuses[] = {
    {1, "IBV_WC_LOC_LEN_ERR", "local length error: a message larger than the receive buffer"},
    {2, "IBV_WC_LOC_QP_OP_ERR", "local QP operation error: an invalid work request"},
    {4, "IBV_WC_LOC_PROT_ERR",
     "local protection error: the buffer's memory registration is invalid (GPU memory mapping, "
     "GDR/peermem, deregistered memory)"},
    {5, "IBV_WC_WR_FLUSH_ERR",
     "flushed: the QP was already in error; secondary to an earlier error"},
    {7, "IBV_WC_BAD_RESP_ERR", "bad response from the peer"},
    {8, "IBV_WC_LOC_ACCESS_ERR", "local access error: memory region permissions"},
    {9, "IBV_WC_REM_INV_REQ_ERR", "the peer rejected the request as invalid"},
    {10, "IBV_WC_REM_ACCESS_ERR", "remote access error: the peer's memory key or permissions"},
    {11, "IBV_WC_REM_OP_ERR", "the peer could not complete the operation"},
    {12, "IBV_WC_RETRY_EXC_ERR",
     "transport retry counter exceeded: the peer never acknowledged (link down or flapping, packet "
     "loss in the fabric, peer process or node gone)"},
    {13, "IBV_WC_RNR_RETRY_EXC_ERR",
     "receiver-not-ready retries exceeded: the peer posted no receive buffers"},
    {19, "IBV_WC_FATAL_ERR", "fatal device error"},
    {20, "IBV_WC_RESP_TIMEOUT_ERR", "response timeout"},
    {21, "IBV_WC_GENERAL_ERR", "general error"},
};

std::string decodeStatus(int status) {
  for (const auto& s : kWcStatuses) {
    if (s.code == status)
      return std::string(s.name) + " (" + std::to_string(status) + "): " + s.meaning;
  }
  return "status " + std::to_string(status);
}

std::string eventLine(const v1::NcclEvent& e, const std::string& source) {
  std::string s = source + ":" + std::to_string(e.line_number()) + ": " + e.text();
  return s;
}

std::string hostOf(const RuleContext& ctx, const v1::NcclEvent& e) {
  return e.host().empty() ? ctx.node : e.host();
}

// Pins an NCCL device string ("mlx5_1:1") to a device and port of this node.
std::pair<std::string, uint32_t> devicePort(std::string_view rdma_device) {
  const auto colon = rdma_device.rfind(':');
  if (colon == std::string_view::npos) return {std::string(rdma_device), 0};
  auto port = parseUnsigned(rdma_device.substr(colon + 1));
  return {std::string(rdma_device.substr(0, colon)), port ? static_cast<uint32_t>(*port) : 0};
}

bool socketTransport(const v1::NcclLogSummary& s, std::vector<std::string>& ev) {
  bool socket = false;
  // Hosts that disagree are listed comma-separated ("IB,Socket").
  for (const auto network : split(s.network(), ',')) {
    if (trim(network) == "Socket") {
      ev.push_back(
          "NCCL chose \"Using network Socket\"" +
          (s.network() == "Socket" ? std::string() : " on some hosts (" + s.network() + ")"));
      socket = true;
    }
  }
  for (const auto& t : s.transports()) {
    if (t.transport() == "NET/Socket") {
      ev.push_back(std::to_string(t.channel_lines()) + " channel/ring line(s) via NET/Socket");
      socket = true;
    }
  }
  for (const auto& e : s.events()) {
    if (e.kind() == v1::NcclEvent::SOCKET_TRANSPORT) {
      ev.push_back("socket transport in an error path: " + e.text());
      socket = true;
      break;
    }
  }
  return socket;
}

// One NCCL log's events by kind, and how its findings quote them: what every NCCL log rule
// reads.
class LogEvents {
 public:
  LogEvents(RuleContext& rule_context, const v1::NcclLog& log)
      : ctx(rule_context), summary(log.parsed()), source_(log.source()) {
    for (const auto& e : summary.events()) by_kind_[e.kind()].push_back(&e);
  }
  const std::vector<const v1::NcclEvent*>& events(Kind k) const {
    static const std::vector<const v1::NcclEvent*> none;
    const auto it = by_kind_.find(k);
    return it == by_kind_.end() ? none : it->second;
  }
  std::vector<std::string> evidence(const std::vector<const v1::NcclEvent*>& list) const {
    std::vector<std::string> ev;
    for (std::size_t i = 0; i < list.size() && i < kEvidenceLines; ++i)
      ev.push_back(eventLine(*list[i], source_));
    if (list.size() > kEvidenceLines)
      ev.push_back("... " + std::to_string(list.size() - kEvidenceLines) + " more");
    return ev;
  }
  std::string firstHost(const std::vector<const v1::NcclEvent*>& list) const {
    return list.empty() ? ctx.node : hostOf(ctx, *list.front());
  }
  std::string line(const v1::NcclEvent& e) const { return eventLine(e, source_); }

  RuleContext& ctx;
  const v1::NcclLogSummary& summary;

 private:
  const std::string& source_;
  std::map<Kind, std::vector<const v1::NcclEvent*>> by_kind_;
};

// NCCL_IB_UNAVAILABLE: no device found, libibverbs missing.
void ibUnavailable(const LogEvents& in) {
  const auto& no_dev = in.events(v1::NcclEvent::IB_NO_DEVICE);
  const auto& no_verbs = in.events(v1::NcclEvent::IBVERBS_MISSING);
  if (!no_dev.empty() || !no_verbs.empty()) {
    std::vector<const v1::NcclEvent*> all = no_dev;
    all.insert(all.end(), no_verbs.begin(), no_verbs.end());
    std::set<std::string> hosts;
    for (const auto* e : all) hosts.insert(hostOf(in.ctx, *e));
    auto ev = in.evidence(all);
    ev.insert(ev.begin(), std::to_string(hosts.size()) + " host(s) affected");
    in.ctx.add(
        {FindingCode::NcclIbUnavailable, Severity::Warning, in.firstHost(all), "", 0,
         !no_verbs.empty() ? "NCCL could not load libibverbs: no IB/RoCE transport"
                           : "NCCL found no usable IB/RoCE device (\"NET/IB : No device found\")",
         std::move(ev),
         "Make the RDMA devices visible to the job: rdma-core/libibverbs installed in the "
         "image, /dev/infiniband passed into the container, ib_uverbs loaded, the VF attached "
         "(`ibv_devices` must list it). Run `ibcollect snapshot` on the node for the device "
         "side."});
  }
}

// NCCL_IB_UNAVAILABLE: devices NCCL could not open.
void ibOpenFailed(const LogEvents& in) {
  if (const auto& open = in.events(v1::NcclEvent::IB_OPEN_FAILED); !open.empty()) {
    std::set<std::string> devices;
    for (const auto* e : open) {
      if (!e->rdma_device().empty()) devices.insert(e->rdma_device());
    }
    std::string named;
    for (const auto& d : devices) named += (named.empty() ? "" : ", ") + d;
    std::string used;
    for (const auto& d : in.summary.ib_devices()) used += (used.empty() ? "" : ", ") + d;
    auto ev = in.evidence(open);
    if (!used.empty()) ev.insert(ev.begin(), "NCCL uses the others: " + used);
    in.ctx.add({FindingCode::NcclIbUnavailable, Severity::Warning, in.firstHost(open), "", 0,
                "NCCL could not open RDMA device" + std::string(devices.size() > 1 ? "s " : " ") +
                    (named.empty() ? std::string("(ibv_open_device failed)")
                                   : named + " (ibv_open_device failed)") +
                    (used.empty() ? "" : ": it runs on fewer HCAs"),
                std::move(ev),
                "The device's /dev/infiniband/uverbsN could not be opened: compare `ls -l "
                "/dev/infiniband` with `ibv_devices` in the job's container (device list, cgroup, "
                "permissions: see UVERBS_ACCESS in the node snapshot), or leave the device out "
                "with NCCL_IB_HCA if it is not meant for the job."});
  }
}

// NCCL_SOCKET_FALLBACK: inter-node traffic over NET/Socket.
void socketFallback(const LogEvents& in) {
  const auto& disabled = in.events(v1::NcclEvent::IB_DISABLED_BY_ENV);
  std::vector<std::string> sock_ev;
  if (socketTransport(in.summary, sock_ev)) {
    for (const auto* e : disabled) sock_ev.push_back("forced: " + in.line(*e));
    for (const auto& env : in.summary.env_settings()) sock_ev.push_back("environment " + env);
    if (!in.summary.socket_interfaces().empty()) {
      std::string ifs;
      for (const auto& i : in.summary.socket_interfaces()) ifs += (ifs.empty() ? "" : " ") + i;
      sock_ev.push_back("socket interfaces " + ifs);
    }
    const bool single_rank = in.summary.nranks() == 1;
    if (single_rank) sock_ev.push_back("nranks 1: no inter-node traffic in this communicator");
    in.ctx.add({FindingCode::NcclSocketFallback, single_rank ? Severity::Info : Severity::Warning,
                in.summary.hosts_size() > 0 ? in.summary.hosts(0) : in.ctx.node, "", 0,
                single_rank
                    ? "NCCL selected the socket network, but this run has a single rank"
                    : "Inter-node NCCL traffic runs over TCP sockets (NET/Socket), not RDMA",
                std::move(sock_ev),
                !disabled.empty()
                    ? "NCCL_IB_DISABLE=1 forces sockets: unset it so NCCL uses the HCAs."
                    : "Socket transport is several times slower than RDMA: make NCCL find the HCAs "
                      "(see NCCL_IB_UNAVAILABLE; check NCCL_IB_HCA, the net plugin and "
                      "/dev/infiniband in the container)."});
  }
}

// NCCL_GDR_DISABLED.
void gdrDisabled(const LogEvents& in) {
  if (const auto& gdr = in.events(v1::NcclEvent::GDR_DISABLED); !gdr.empty()) {
    in.ctx.add({FindingCode::NcclGdrDisabled, Severity::Warning, in.firstHost(gdr), "", 0,
                "GPUDirect RDMA is disabled: NCCL stages network traffic through host memory",
                in.evidence(gdr),
                "Load nvidia_peermem (or use a driver/kernel with dma-buf support) and check "
                "NCCL_NET_GDR_LEVEL; see PEERMEM_MISSING in the node snapshot."});
  }
}

// NCCL_IB_COMPLETION_ERROR per host, decoded from its first root (non-flush) error.
void completionErrors(const LogEvents& in) {
  std::map<std::string, std::vector<const v1::NcclEvent*>> completion_by_host;
  for (const auto* e : in.events(v1::NcclEvent::IB_COMPLETION_ERROR)) {
    completion_by_host[hostOf(in.ctx, *e)].push_back(e);
  }
  for (const auto& [host, list] : completion_by_host) {
    const v1::NcclEvent* root = nullptr;
    for (const auto* e : list) {
      if (e->status() != 5) {
        root = e;
        break;
      }
    }
    std::vector<std::string> ev;
    std::string summary;
    std::string action;
    if (root != nullptr) {
      ev.push_back(
          "first error: " + decodeStatus(root->status()) +
          (root->vendor_err() >= 0 ? ", vendor err " + std::to_string(root->vendor_err()) : "") +
          (root->peer().empty() ? "" : ", peer " + root->peer()));
      summary = "IB work completion failed with " + decodeStatus(root->status());
      if (root->status() == 12 || root->status() == 13 || root->status() == 20) {
        action =
            "The peer did not answer: check the link on both ends (PHY_ERRORS, LINK_DOWNED, "
            "NCCL `port error` events) and whether the peer process/node died first; if both "
            "nodes' VF-side evidence is clean, escalate for PF/switch inspection.";
      } else if (root->status() == 4 || root->status() == 8 || root->status() == 10) {
        action =
            "A memory registration problem, not the fabric: check GPUDirect (nvidia_peermem/"
            "dma-buf), NCCL and driver versions, and memlock limits; try NCCL_NET_GDR_LEVEL=LOC "
            "to confirm.";
      } else {
        action =
            "Correlate with the peer's log and the node snapshot's CQE_ERRORS/TRANSPORT_RETRIES.";
      }
    } else {
      summary = "IB work completions were flushed (status 5): the root error happened elsewhere";
      action =
          "Flushes follow an earlier error on this QP: find the first non-5 completion error "
          "in the logs of the peer ranks/nodes.";
    }
    for (auto& line : in.evidence(list)) ev.push_back(std::move(line));
    in.ctx.add({FindingCode::NcclIbCompletionError, Severity::Critical, host, "", 0, summary,
                std::move(ev), action});
  }
}

// NCCL_IB_ASYNC_EVENT per host and device.
void asyncEvents(const LogEvents& in) {
  std::map<std::pair<std::string, std::string>, std::vector<const v1::NcclEvent*>> async_by;
  for (const auto* e : in.events(v1::NcclEvent::IB_ASYNC_EVENT)) {
    async_by[{hostOf(in.ctx, *e), e->rdma_device()}].push_back(e);
  }
  for (const auto& [key, list] : async_by) {
    const auto [dev, port] = devicePort(key.second);
    const bool port_error = containsIgnoreCase(list.front()->text(), "port error");
    in.ctx.add(
        {FindingCode::NcclIbAsyncEvent, Severity::Critical, key.first, dev, port,
         port_error ? "The HCA raised IB port error events: the link went down under NCCL (" +
                          std::to_string(list.size()) + " event(s))"
                    : "The HCA raised an asynchronous fatal event (" + std::to_string(list.size()) +
                          " event(s))",
         in.evidence(list),
         port_error
             ? "A physical link event: check PHY_ERRORS/LINK_DOWNED/KERNEL_LINK_FLAP on this "
               "node and the cable/switch port; for a VF escalate for PF inspection."
             : "A QP or device fatal event: check the kernel log for device errors and the "
               "application's use of the QP; report with the NCCL version."});
  }
}

// NCCL_REG_MR_FAILED, NCCL_CONNECT_FAILED, NCCL_QP_SETUP_FAILED.
void setupFailures(const LogEvents& in) {
  if (const auto& mr = in.events(v1::NcclEvent::REG_MR_FAILED); !mr.empty()) {
    in.ctx.add({FindingCode::NcclRegMrFailed, Severity::Critical, in.firstHost(mr), "", 0,
                "NCCL could not register memory with the NIC", in.evidence(mr),
                "Registration fails on a locked-memory limit (MEMLOCK_LIMIT: use `ulimit -l "
                "unlimited`), on missing GPUDirect support (nvidia_peermem/dma-buf) or out of NIC "
                "resources (ENOMEM): check the limits the job really gets and the driver stack."});
  }
  if (const auto& cf = in.events(v1::NcclEvent::CONNECT_FAILED); !cf.empty()) {
    in.ctx.add({FindingCode::NcclConnectFailed, Severity::Critical, in.firstHost(cf), "", 0,
                "NCCL connections between ranks failed or were closed by the peer", in.evidence(cf),
                "Often a consequence: a peer process crashed or was killed first — find the first "
                "failing rank's log. Otherwise check connectivity on the socket interface "
                "(NCCL_SOCKET_IFNAME) and firewalls between the nodes."});
  }
  if (const auto& qp = in.events(v1::NcclEvent::QP_SETUP_FAILED); !qp.empty()) {
    const auto [dev, port] = devicePort(qp.front()->rdma_device());
    const int st = qp.front()->status();
    in.ctx.add({FindingCode::NcclQpSetupFailed, Severity::Critical, in.firstHost(qp), dev, port,
                "Setting up the RDMA queue pair failed" +
                    (st == 110   ? std::string(" (connection timed out moving to RTR)")
                     : st == 101 ? std::string(" (network unreachable)")
                                 : std::string()),
                in.evidence(qp),
                "The path to the peer could not be resolved: on RoCE check the GID index "
                "(NCCL_IB_GID_INDEX must select a RoCE v2 GID with a routable IP on both ends), "
                "routing and MTU; on IB check that the SM gives a path (same partition). Rail-"
                "optimised fabrics may need NCCL_CROSS_NIC=0."});
  }
}

// NCCL_COLLECTIVE_TIMEOUT and NCCL_RANK_LAGGING: ranks stopped at different points.
void timeoutsAndLagging(const LogEvents& in) {
  // NCCL_RANK_LAGGING: ranks stopped at different points. NCCL opCounts, PyTorch SeqNums
  // and RAS's per-collective operation counts count different things: ranks are only
  // compared with ranks of the same count (and collective).
  using Count = std::pair<v1::NcclRankProgress::Sequence, std::string>;
  std::map<std::pair<Count, uint64_t>, std::vector<std::string>> ranks_at;
  std::map<Count, std::size_t> distinct;
  bool ras = false;
  for (const auto& r : in.summary.ranks()) {
    const auto seq = r.sequence() == v1::NcclRankProgress::SEQUENCE_UNSPECIFIED
                         ? v1::NcclRankProgress::NCCL_OP_COUNT
                         : r.sequence();
    ras = ras || seq == v1::NcclRankProgress::RAS_OPERATION;
    const Count count{seq, r.collective()};
    auto& list = ranks_at[{count, r.op_count()}];
    if (list.empty()) distinct[count]++;
    list.push_back(r.rank() < 0 && r.ranks() > 0 ? std::to_string(r.ranks()) + " ranks"
                                                 : (r.host().empty() ? "" : r.host() + " ") +
                                                       "rank " + std::to_string(r.rank()));
  }
  bool lagging = false;
  for (const auto& [seq, n] : distinct) lagging = lagging || n > 1;
  const auto& timeouts = in.events(v1::NcclEvent::COLLECTIVE_TIMEOUT);
  // NCCL_COLLECTIVE_TIMEOUT: PyTorch's watchdog caught a collective that never finished, or
  // its heartbeat monitor found the watchdog itself stuck in a NCCL/CUDA call.
  if (!timeouts.empty()) {
    std::set<std::string> reporters;
    for (const auto* e : timeouts) {
      reporters.insert((e->host().empty() ? "" : e->host() + " ") +
                       (e->rank() >= 0 ? "rank " + std::to_string(e->rank()) : "a rank"));
    }
    auto ev = in.evidence(timeouts);
    std::string who;
    for (const auto& r : reporters) who += (who.empty() ? "" : ", ") + r;
    ev.insert(ev.begin(), "timed out: " + who);
    in.ctx.add(
        {FindingCode::NcclCollectiveTimeout, Severity::Critical, in.firstHost(timeouts), "", 0,
         "A collective did not finish: " + std::to_string(reporters.size()) +
             " rank(s) timed out waiting (watchdog or heartbeat monitor)",
         std::move(ev),
         "The ranks missing from the timeout reports, or the ones behind (NCCL_RANK_LAGGING), "
         "are where the job is stuck (dead process, hung GPU or broken link): collect their "
         "logs and run `ibcollect --job` to compare the nodes; an earlier NCCL error in the "
         "log is the cause."});
  }
  // NCCL_RANK_LAGGING: several ranks' progress differs; the lowest ones are behind.
  if (lagging) {
    std::vector<std::string> ev;
    std::string behind;
    bool first = true;
    for (const auto& [at, ranks] : ranks_at) {
      if (distinct[at.first] < 2) continue;  // a count on which every rank agrees
      std::string list;
      for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) list += (i ? ", " : "") + ranks[i];
      if (ranks.size() > 8) list += ", ... " + std::to_string(ranks.size() - 8) + " more";
      const std::string where =
          (at.first.second.empty() || at.first.second == "collective" ? ""
                                                                      : at.first.second + " ") +
          formatRankProgress(at.first.first, at.second);
      if (first) behind = list + " (at " + where + ")";
      first = false;
      ev.push_back(where + ": " + list);
    }
    if (ras) {
      ev.push_back(
          "NCCL's RAS report samples counts that keep moving: a spread of one "
          "operation can be the sampling; the same ranks behind in reports taken "
          "10 s apart are stragglers");
    }
    in.ctx.add(
        {FindingCode::NcclRankLagging, timeouts.empty() ? Severity::Warning : Severity::Critical,
         in.ctx.node, "", 0, "Ranks stopped at different collective operations; behind: " + behind,
         std::move(ev),
         "The ranks at the lowest opCount/SeqNum are where the job is stuck: inspect those "
         "ranks' nodes (`ibcollect --job` compares all nodes) for link errors, a dead process "
         "or a slow GPU."});
  }
}

void ncclLogRules(RuleContext& ctx, const v1::NcclLog& log) {
  const LogEvents in(ctx, log);
  ibUnavailable(in);
  ibOpenFailed(in);
  socketFallback(in);
  gdrDisabled(in);
  completionErrors(in);
  asyncEvents(in);
  setupFailures(in);
  timeoutsAndLagging(in);
}

// The fastest other run in the snapshot of the same test on the same hosts (named by its
// rank lines; at least two), as busbwAgainstLinks reads it; an empty one when none.
v1::NcclTestsBusbw bestOtherRun(const v1::Snapshot& snap, const v1::NcclTestsOutput& out) {
  const auto hostsOf = [](const v1::NcclTestsResult& r) {
    return std::set<std::string>(r.hosts().begin(), r.hosts().end());
  };
  const auto& r = out.parsed();
  const auto hosts = hostsOf(r);
  v1::NcclTestsBusbw best;
  if (hosts.size() < 2) return best;
  for (const auto& other : snap.nccl_tests()) {
    if (&other == &out || other.parsed().test_name() != r.test_name() ||
        hostsOf(other.parsed()) != hosts)
      continue;
    auto b = busbwAgainstLinks(snap, other);
    if (b.peak_busbw_gbs() > best.peak_busbw_gbs()) best = std::move(b);
  }
  return best;
}

void ncclTestsRules(RuleContext& ctx, const v1::NcclTestsOutput& out) {
  const auto& r = out.parsed();
  const std::string name = r.test_name().empty() ? "nccl-tests" : r.test_name();
  // Wrong results.
  std::vector<std::string> wrong;
  for (const auto& row : r.rows()) {
    if (row.oop_wrong() > 0 || row.ip_wrong() > 0 || row.over_threshold()) {
      wrong.push_back("size " + std::to_string(row.size_bytes()) + " B: #wrong out-of-place " +
                      std::to_string(row.oop_wrong()) + ", in-place " +
                      std::to_string(row.ip_wrong()) +
                      (row.over_threshold() ? " (error over threshold)" : ""));
    }
  }
  if (r.has_out_of_bounds() && (r.out_of_bounds() > 0 || !r.out_of_bounds_ok())) {
    wrong.push_back("Out of bounds values : " + std::to_string(r.out_of_bounds()) +
                    (r.out_of_bounds_ok() ? " OK" : " FAILED"));
  }
  if (!wrong.empty()) {
    if (wrong.size() > kEvidenceLines) {
      const auto n = wrong.size() - kEvidenceLines;
      wrong.resize(kEvidenceLines);
      wrong.push_back("... " + std::to_string(n) + " more row(s)");
    }
    wrong.push_back("source " + out.source());
    ctx.add(
        {FindingCode::NcclTestWrongResults, Severity::Critical,
         r.hosts_size() > 0 ? r.hosts(0) : ctx.node, "", 0,
         name + " produced wrong results: data was corrupted in transit or in GPU memory",
         std::move(wrong),
         "Data corruption is never normal: rerun with NCCL_ALGO/NCCL_PROTO varied to isolate the "
         "path, check GPU memory errors (nvidia-smi -q -d ECC) and the links' PHY_ERRORS; take "
         "the node out of service until explained."});
  }
  const v1::NcclTestsBusbw b = busbwAgainstLinks(ctx.snap, out);
  if (b.peak_busbw_gbs() <= 0) return;
  const std::string peak_words = "peak busbw " + num(b.peak_busbw_gbs()) + " GB/s at " +
                                 std::to_string(b.peak_size_bytes()) + " B";
  const std::string next =
      "Check the transport in the NCCL log (NCCL_SOCKET_FALLBACK, GDR disabled), link rates "
      "(LINK_RATE_BELOW_EXPECTED), PCIe (PCIE_LINK_DEGRADED) and congestion; compare nodes "
      "with `ibcollect --job` to find a slow one.";
  if (ctx.opts.expect_busbw_gbs) {
    // The user said what a healthy run reaches: any run is judged against that.
    const double expected = *ctx.opts.expect_busbw_gbs;
    if (b.peak_busbw_gbs() >= expected) return;
    std::vector<std::string> ev{peak_words, "expected " + num(expected) + " GB/s (--expect-busbw)",
                                "hosts " + std::to_string(r.hosts_size()),
                                "source " + out.source()};
    if (b.link_budget_gbs() > 0)
      ev.insert(ev.begin() + 2, "link budget " + num(b.link_budget_gbs()) + " GB/s (" +
                                    std::to_string(b.active_ports()) + " active port(s), " +
                                    num(b.link_rate_gbps()) + " Gb/s): " + num(100 * b.fraction()) +
                                    "% of it");
    ctx.add({FindingCode::NcclTestLowBusbw, Severity::Warning, ctx.node, "", 0,
             name + " peaks at " + num(b.peak_busbw_gbs()) +
                 " GB/s bus bandwidth, below the expected " + num(expected) +
                 " GB/s (--expect-busbw)",
             std::move(ev), next});
    return;
  }
  // Against another run of the same test on the same hosts (the links are not in the evidence,
  // but what these nodes reached once they can reach again).
  if (const auto best = bestOtherRun(ctx.snap, out);
      best.peak_busbw_gbs() > 0 && b.peak_busbw_gbs() < kLowBusbwFraction * best.peak_busbw_gbs()) {
    ctx.add({FindingCode::NcclTestLowBusbw,
             Severity::Warning,
             ctx.node,
             "",
             0,
             name + " peaks at " + num(b.peak_busbw_gbs()) + " GB/s bus bandwidth, " +
                 num(100 * b.peak_busbw_gbs() / best.peak_busbw_gbs()) + "% of the " +
                 num(best.peak_busbw_gbs()) + " GB/s another run on the same hosts reached",
             {peak_words,
              "another run: peak busbw " + num(best.peak_busbw_gbs()) + " GB/s at " +
                  std::to_string(best.peak_size_bytes()) + " B (" + best.source() + ")",
              "hosts " + std::to_string(r.hosts_size()), "source " + out.source()},
             next});
    return;
  }
  // Against this node's links: only for multi-node runs (a single node's busbw is NVLink's).
  if (r.nranks() == 1 || r.hosts_size() < 2 || b.link_budget_gbs() <= 0) return;
  if (b.fraction() >= kLowBusbwFraction) return;
  ctx.add({FindingCode::NcclTestLowBusbw,
           Severity::Warning,
           ctx.node,
           "",
           0,
           name + " peaks at " + num(b.peak_busbw_gbs()) + " GB/s bus bandwidth, " +
               num(100 * b.fraction()) + "% of what this node's " +
               std::to_string(b.active_ports()) + " active RDMA port(s) carry (" +
               num(b.link_budget_gbs()) + " GB/s; under " + num(100 * kLowBusbwFraction) +
               "% is low)",
           {peak_words,
            "link budget " + num(b.link_budget_gbs()) + " GB/s = active ports total " +
                num(b.link_rate_gbps()) + " Gb/s / 8",
            "fraction " + num(100 * b.fraction()) + "% (low under " + num(100 * kLowBusbwFraction) +
                "%)",
            "hosts " + std::to_string(r.hosts_size()), "source " + out.source()},
           next});
}

}  // namespace

void runNcclRules(RuleContext& ctx) {
  for (const auto& log : ctx.snap.nccl_logs()) ncclLogRules(ctx, log);
}

void runNcclTestsRules(RuleContext& ctx) {
  for (const auto& out : ctx.snap.nccl_tests()) ncclTestsRules(ctx, out);
}

}  // namespace ibc::core::rules

namespace ibc::core {

v1::NcclTestsBusbw busbwAgainstLinks(const v1::Snapshot& snapshot,
                                     const v1::NcclTestsOutput& output) {
  v1::NcclTestsBusbw b;
  const auto& r = output.parsed();
  b.set_source(output.source());
  b.set_test_name(r.test_name());
  for (const auto& row : r.rows()) {
    const double v = std::max(row.oop_busbw_gbs(), row.ip_busbw_gbs());
    if (v > b.peak_busbw_gbs()) {
      b.set_peak_busbw_gbs(v);
      b.set_peak_size_bytes(row.size_bytes());
    }
  }
  for (const auto& d : snapshot.devices()) {
    for (const auto& p : d.ports()) {
      if (portStateOf(p.state()) == PortState::Active && p.rate_gbps() > 0) {
        b.set_link_rate_gbps(b.link_rate_gbps() + p.rate_gbps());
        b.set_active_ports(b.active_ports() + 1);
      }
    }
  }
  b.set_link_budget_gbs(b.link_rate_gbps() / 8.0);
  if (b.link_budget_gbs() > 0) b.set_fraction(b.peak_busbw_gbs() / b.link_budget_gbs());
  return b;
}

}  // namespace ibc::core
