// Summary: the parser's result (events ranked, ranks filled, progress), the public entry
// points, and merging the summaries of several logs.
#include "ibc/core/nccl_log.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ibc/core/launcher_prefix.h"
#include "ibc/core/paste.h"
#include "ibc/core/text.h"
#include "nccl_log_internal.h"

namespace ibc::core {

namespace nccl_log_internal {

v1::NcclLogSummary NcclLogParser::finish() {
  if (pending_chain_) {
    bool error = false;
    for (const auto& r : events_) {
      const Kind k = r.event.kind();
      error = error || k == v1::NcclEvent::IB_COMPLETION_ERROR ||
              k == v1::NcclEvent::IB_ASYNC_EVENT || k == v1::NcclEvent::REG_MR_FAILED ||
              k == v1::NcclEvent::CONNECT_FAILED || k == v1::NcclEvent::QP_SETUP_FAILED ||
              k == v1::NcclEvent::COLLECTIVE_TIMEOUT || k == v1::NcclEvent::NCCL_ERROR;
    }
    if (!error) {
      ++events_seen_;
      if (events_.size() < options_.max_events) {
        const uint32_t line = pending_chain_->event.line_number();
        auto at = std::find_if(events_.begin(), events_.end(), [line](const EventRecord& r) {
          return r.event.line_number() > line;
        });
        events_.insert(at, std::move(*pending_chain_));
        addHost(pending_chain_host_);
      } else {
        events_truncated_ = true;
      }
    }
  }
  v1::NcclLogSummary s;
  s.set_nccl_version(version_);
  for (const auto& h : hosts_.values()) s.add_hosts(h);
  std::string network;
  for (const auto& n : networks_.values()) {
    if (!network.empty()) network += ',';
    network += n;
  }
  s.set_network(network);
  for (const auto& d : ib_devices_.values()) s.add_ib_devices(d);
  for (const auto& i : socket_interfaces_.values()) s.add_socket_interfaces(i);
  for (const auto& t : transports_) {
    v1::NcclTransportUse* u = s.add_transports();
    u->set_transport(t.name);
    u->set_channel_lines(t.lines);
    u->set_gdr(t.gdr);
  }
  for (auto& r : events_) {
    if (r.event.rank() < 0) {
      auto it = rank_of_.find(r.rank_key);
      if (it != rank_of_.end()) {
        r.event.set_rank(it->second.rank);
      } else if (r.launcher_rank >= 0) {
        r.event.set_rank(r.launcher_rank);
      }
    }
    *s.add_events() = std::move(r.event);
  }
  s.set_events_truncated(events_truncated_);

  std::vector<v1::NcclRankProgress> ranks;
  for (const auto& [key, p] : torch_progress_) ranks.push_back(p);
  for (const auto& p : ras_progress_) ranks.push_back(p);
  for (const auto& [key, p] : coll_progress_) {
    if (p.comm_nranks != coll_nranks_) continue;  // only the largest communicator
    int rank = -1;
    if (auto c = comms_.find(p.comm_key); c != comms_.end()) {
      rank = c->second.rank;
    } else if (auto r = rank_of_.find(p.rank_key); r != rank_of_.end()) {
      rank = r->second.rank;
    }
    v1::NcclRankProgress& out = ranks.emplace_back();
    out.set_host(printable(p.host, 256));
    out.set_rank(rank);
    out.set_op_count(p.op_count);
    out.set_sequence(v1::NcclRankProgress::NCCL_OP_COUNT);
    out.set_line_number(p.line_number);
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.rank(), a.host()) < std::make_pair(b.rank(), b.host());
  });
  for (auto& r : ranks) *s.add_ranks() = std::move(r);

  int nranks = init_nranks_;
  if (nranks <= 0) {
    nranks = std::max({coll_nranks_, ring_nranks_, tests_rank_max_ + 1, channel_rank_max_ + 1});
  }
  s.set_nranks(nranks > 0 ? nranks : -1);
  s.set_lines_total(lines_total_);
  s.set_lines_nccl(lines_nccl_);
  for (const auto& e : env_settings_.values()) s.add_env_settings(e);
  return s;
}

}  // namespace nccl_log_internal

using nccl_log_internal::Kind;
using nccl_log_internal::NcclLogParser;
using nccl_log_internal::OrderedSet;
using nccl_log_internal::TransportUse;

v1::NcclLogSummary parseNcclLog(std::string_view pasted, const NcclLogOptions& options) {
  // The launcher prefixes (host:pid:tid, srun labels, ranks) are this parser's to read.
  PasteOptions paste;
  paste.prefixes = false;
  NcclLogParser parser(options);
  for (const auto& l : rejoinWrapped(readPaste(pasted, paste), nccl_log_internal::startsNcclRecord))
    parser.line(l.text, l.source_line);
  return parser.finish();
}

v1::NcclLogSummary mergeNcclLogs(std::span<const v1::NcclLogSummary> parts,
                                 std::size_t max_events) {
  v1::NcclLogSummary out;
  OrderedSet hosts;
  OrderedSet networks;
  OrderedSet ib_devices;
  OrderedSet socket_interfaces;
  OrderedSet env_settings;
  std::vector<TransportUse> transports;
  // (rank, host, sequence): an opCount and a SeqNum of one rank are different counts.
  std::map<std::tuple<int, std::string, int>, v1::NcclRankProgress> ranks;
  std::vector<v1::NcclRankProgress> unranked;
  int nranks = -1;
  bool truncated = false;
  for (const auto& p : parts) {
    if (out.nccl_version().empty()) out.set_nccl_version(p.nccl_version());
    for (const auto& h : p.hosts()) hosts.add(h);
    for (std::string_view n : split(p.network(), ',')) networks.add(std::string(n));
    for (const auto& d : p.ib_devices()) ib_devices.add(d);
    for (const auto& i : p.socket_interfaces()) socket_interfaces.add(i);
    for (const auto& e : p.env_settings()) env_settings.add(e);
    for (const auto& t : p.transports()) {
      auto it = std::find_if(transports.begin(), transports.end(),
                             [&t](const TransportUse& u) { return u.name == t.transport(); });
      if (it == transports.end()) {
        transports.push_back({t.transport(), 0, false});
        it = transports.end() - 1;
      }
      it->lines += t.channel_lines();
      it->gdr = it->gdr || t.gdr();
    }
    for (const auto& e : p.events()) {
      if (static_cast<std::size_t>(out.events_size()) >= max_events) {
        truncated = true;
        break;
      }
      *out.add_events() = e;
    }
    truncated = truncated || p.events_truncated();
    for (const auto& r : p.ranks()) {
      if (r.rank() < 0) {
        unranked.push_back(r);
        continue;
      }
      auto [it, inserted] =
          ranks.try_emplace({r.rank(), r.host(), static_cast<int>(r.sequence())}, r);
      if (!inserted && r.op_count() > it->second.op_count()) it->second = r;
    }
    nranks = std::max(nranks, p.nranks());
    out.set_lines_total(out.lines_total() + p.lines_total());
    out.set_lines_nccl(out.lines_nccl() + p.lines_nccl());
  }
  for (const auto& h : hosts.values()) out.add_hosts(h);
  std::string network;
  for (const auto& n : networks.values()) {
    if (!network.empty()) network += ',';
    network += n;
  }
  out.set_network(network);
  for (const auto& d : ib_devices.values()) out.add_ib_devices(d);
  for (const auto& i : socket_interfaces.values()) out.add_socket_interfaces(i);
  for (const auto& e : env_settings.values()) out.add_env_settings(e);
  for (const auto& t : transports) {
    v1::NcclTransportUse* u = out.add_transports();
    u->set_transport(t.name);
    u->set_channel_lines(t.lines);
    u->set_gdr(t.gdr);
  }
  for (const auto& r : unranked) *out.add_ranks() = r;
  for (const auto& [key, r] : ranks) *out.add_ranks() = r;
  out.set_nranks(nranks);
  out.set_events_truncated(truncated);
  return out;
}

std::string formatRankProgress(v1::NcclRankProgress::Sequence sequence, uint64_t value) {
  char buf[48];
  if (sequence == v1::NcclRankProgress::RAS_OPERATION) {
    std::snprintf(buf, sizeof buf, "operation %llu", static_cast<unsigned long long>(value));
  } else if (sequence == v1::NcclRankProgress::TORCH_SEQ_NUM) {
    std::snprintf(buf, sizeof buf, "SeqNum %llu", static_cast<unsigned long long>(value));
  } else {
    std::snprintf(buf, sizeof buf, "opCount %llx", static_cast<unsigned long long>(value));
  }
  return buf;
}

std::string_view ncclEventKindName(v1::NcclEvent::Kind kind) {
  switch (kind) {
    case v1::NcclEvent::IB_NO_DEVICE: return "IB_NO_DEVICE";
    case v1::NcclEvent::IB_DISABLED_BY_ENV: return "IB_DISABLED_BY_ENV";
    case v1::NcclEvent::IBVERBS_MISSING: return "IBVERBS_MISSING";
    case v1::NcclEvent::GDR_DISABLED: return "GDR_DISABLED";
    case v1::NcclEvent::IB_COMPLETION_ERROR: return "IB_COMPLETION_ERROR";
    case v1::NcclEvent::IB_ASYNC_EVENT: return "IB_ASYNC_EVENT";
    case v1::NcclEvent::REG_MR_FAILED: return "REG_MR_FAILED";
    case v1::NcclEvent::CONNECT_FAILED: return "CONNECT_FAILED";
    case v1::NcclEvent::QP_SETUP_FAILED: return "QP_SETUP_FAILED";
    case v1::NcclEvent::COLLECTIVE_TIMEOUT: return "COLLECTIVE_TIMEOUT";
    case v1::NcclEvent::SOCKET_TRANSPORT: return "SOCKET_TRANSPORT";
    case v1::NcclEvent::NCCL_ERROR: return "NCCL_ERROR";
    case v1::NcclEvent::IB_OPEN_FAILED: return "IB_OPEN_FAILED";
    default: return "KIND_UNSPECIFIED";
  }
}

}  // namespace ibc::core
