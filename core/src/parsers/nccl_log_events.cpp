// Event classifiers: what each NCCL line, framework message and error chain means (transport,
// configuration, communicators, progress, errors), recorded as events with their context.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ibc/core/launcher_prefix.h"
#include "ibc/core/text.h"
#include "nccl_log_internal.h"

namespace ibc::core::nccl_log_internal {

namespace {

// Decimal integer right after `key` (leading spaces allowed, optional '-').
std::optional<int64_t> intAfter(std::string_view s, std::string_view key) {
  const std::size_t pos = s.find(key);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = trimLeft(s.substr(pos + key.size()));
  std::size_t i = 0;
  if (!rest.empty() && rest[0] == '-') ++i;
  const std::size_t digits = i;
  while (i < rest.size() && isDigit(rest[i]) && i < 18) ++i;
  if (i == digits) return std::nullopt;
  return parseInt(rest.substr(0, i));
}

// Token right after `key`, up to a space (or one of `stops`).
std::string_view tokenAfter(std::string_view s, std::string_view key,
                            std::string_view stops = " ") {
  const std::size_t pos = s.find(key);
  if (pos == std::string_view::npos) return {};
  std::string_view rest = s.substr(pos + key.size());
  return rest.substr(0, rest.find_first_of(stops));
}

std::optional<uint64_t> parseHex(std::string_view s) {
  if (startsWith(s, "0x") || startsWith(s, "0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    const int d = std::isxdigit(static_cast<unsigned char>(c)) == 0 ? -1
                  : isDigit(c)                                      ? c - '0'
                                                                    : (std::tolower(c) - 'a' + 10);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// errno for the strerror() texts NCCL prints ("failed with error Connection timed out").
int errnoFromText(std::string_view s) {
  static constexpr std::pair<std::string_view, int> kErrnos[] = {
      {"Operation not permitted", 1},    {"Cannot allocate memory", 12},
      {"Permission denied", 13},         {"No such device", 19},
      {"Invalid argument", 22},          {"Broken pipe", 32},
      {"Network is unreachable", 101},   {"Software caused connection abort", 103},
      {"Connection reset by peer", 104}, {"Connection timed out", 110},
      {"Connection refused", 111},       {"No route to host", 113},
  };
  for (const auto& [text, value] : kErrnos) {
    if (has(s, text)) return value;
  }
  return -1;
}

// Socket/bootstrap connection failures (misc/socket.cc, bootstrap.cc, proxy.cc).
bool isConnectFailure(std::string_view msg) {
  return (has(msg, "Call to recv from") || has(msg, "Call to send to") ||
          has(msg, "Call to connect")) ||
         has(msg, "Connection closed by remote peer") ||
         has(msg, "Failed to execute operation Connect") || has(msg, "Connection refused") ||
         has(msg, "Connection reset") || has(msg, "Broken pipe") ||
         (has(msg, "onnect") &&
          (has(msg, "fail") || has(msg, "timed out") || has(msg, "timeout") ||
           has(msg, "exceeded") ||
           // socketPollConnect: "Connect to 10.0.0.4<56849> returned 113(No route to host)"
           errnoFromText(msg) > 0 ||
           // "socketPollConnect poll() returned 1, no POLLOUT events": the socket never became
           // writable (POLLERR/POLLHUP), NCCL gives up on the connection.
           has(msg, "POLLOUT")));
}

std::string versionAt(std::string_view s, std::string_view key) {
  std::string_view v = tokenAfter(s, key, " ,;)");
  while (!v.empty() && (v.back() == '.' || v.back() == ':')) v.remove_suffix(1);
  if (v.empty() || !isDigit(v[0])) return {};
  return printable(v, 64);
}

// ncclResult_t as NCCL numbers it (nccl.h).
std::string_view ncclResultName(int64_t r) {
  switch (r) {
    case 1: return "ncclUnhandledCudaError";
    case 2: return "ncclSystemError";
    case 3: return "ncclInternalError";
    case 4: return "ncclInvalidArgument";
    case 5: return "ncclInvalidUsage";
    case 6: return "ncclRemoteError";
    case 7: return "ncclInProgress";
    default: return "";
  }
}

}  // namespace

void NcclLogParser::line(std::string_view raw, uint32_t n) {
  ++lines_total_;
  Stripped st = stripLauncherPrefixes(raw);
  if (st.body.empty()) return;
  auto d = parseDebugLine(st.body);
  if (!d && (has(st.body, "INFO") || has(st.body, "WARN"))) {
    auto found = findDebugLine(st.body);
    if (!found) found = findBracketedDebugLine(st.body);
    if (found) {
      if (st.launcher_rank < 0) st.launcher_rank = rankInPrefix(st.body.substr(0, found->first));
      st.body = st.body.substr(found->first);
      d = found->second;
    }
  }
  if (has(st.body, "NCCL") || d) ++lines_nccl_;
  if (pending_last_error_) {
    pending_last_error_ = false;
    if (!d) {
      lastErrorEvent(st.body, frameworkContext(st, raw, n));
      return;
    }
  }
  if (d) {
    debugLine(*d, st, raw, n);
  } else {
    otherLine(st, raw, n);
  }
}

void NcclLogParser::debugLine(const DebugLine& d, const Stripped& st, std::string_view raw,
                              uint32_t n) {
  addHost(d.host);
  LineContext ctx{std::string(d.host), std::string(d.pid), d.device, st.launcher_rank, n, raw};
  if (has(d.message, "NCCL version ")) setVersion(versionAt(d.message, "NCCL version "));
  if (d.level == DebugLine::Level::Warn) {
    warned_.insert(ctx.host + "|" + ctx.pid);
    warnLine(d.message, d.file, ctx);
  } else {
    infoLine(d.message, ctx);
  }
}

void NcclLogParser::infoLine(std::string_view msg, const LineContext& ctx) {
  // Error propagation "transport/net_socket.cc:368 -> 6": a consequence, not an event, but
  // a stack through net_socket.cc shows the data path is the socket transport.
  if (const std::size_t arrow = msg.find(" -> "); arrow != std::string_view::npos) {
    const std::string_view site = msg.substr(0, arrow);
    if (site.find(' ') == std::string_view::npos && site.find(':') != std::string_view::npos) {
      if (has(site, "net_socket")) socketTransport(ctx);
      chainLine(site, intAfter(msg.substr(arrow), "-> "), ctx);
      return;
    }
  }
  if (startsWith(msg, "[Service thread]")) return;

  if (startsWith(msg, "NET/IB : No device found")) {
    configEvent(v1::NcclEvent::IB_NO_DEVICE, ctx);
    return;
  }
  if (startsWith(msg, "NET/IB : Using ") || startsWith(msg, "NET/IB: Using ")) {
    std::string_view list = msg.substr(msg.find("Using ") + 6);
    list = list.substr(0, list.find(';'));
    for (std::string_view tok : splitWhitespace(list)) {
      const std::size_t close = tok.find(']');
      if (tok.size() < 4 || tok[0] != '[' || close == std::string_view::npos || !isDigit(tok[1]) ||
          close + 1 >= tok.size()) {
        continue;
      }
      ib_devices_.add(printable(tok.substr(close + 1), 128));
    }
    return;
  }
  if (startsWith(msg, "NET/Socket : Using ")) {
    for (std::string_view tok : splitWhitespace(msg.substr(19))) {
      const std::size_t close = tok.find(']');
      if (tok.empty() || tok[0] != '[' || close == std::string_view::npos) continue;
      std::string_view iface = tok.substr(close + 1);
      if (const std::size_t lt = iface.rfind('<'); lt != std::string_view::npos && lt > 0) {
        iface = iface.substr(0, lt);
      }
      socket_interfaces_.add(printable(iface, 128));
    }
    return;
  }
  if (startsWith(msg, "Using network ")) {
    networks_.add(printable(trim(msg.substr(14)), 64));
    return;
  }
  if (startsWith(msg, "Using internal Network ")) {  // NCCL 2.2/2.3: "... Network Socket"
    networks_.add(printable(trim(msg.substr(23)), 64));
    return;
  }
  if (const std::size_t env = msg.find(" set by environment to "); env != std::string_view::npos) {
    std::string_view key = trim(msg.substr(0, env));
    if (const std::size_t sp = key.rfind(' '); sp != std::string_view::npos) {
      key = key.substr(sp + 1);
    }
    std::string_view value = trim(msg.substr(env + 23));
    if (!value.empty() && value.back() == '.') value.remove_suffix(1);
    env_settings_.add(printable(key, 128) + "=" + printable(value, 256));
    if (key == "NCCL_IB_DISABLE" && value != "0") {
      configEvent(v1::NcclEvent::IB_DISABLED_BY_ENV, ctx);
    }
    return;
  }
  if (has(msg, "GPU Direct RDMA Disabled") && !startsWith(msg, "NET/Socket")) {
    configEvent(v1::NcclEvent::GDR_DISABLED, ctx);
    return;
  }
  if (has(msg, "libibverbs") &&
      (has(msg, "Failed") || has(msg, "failed") || has(msg, "cannot") || has(msg, "Unable"))) {
    configEvent(v1::NcclEvent::IBVERBS_MISSING, ctx);
    return;
  }
  if (startsWith(msg, "Channel ") || startsWith(msg, "Ring ")) {
    channelLine(msg, ctx);
    return;
  }
  if (has(msg, ": opCount ")) {
    collLine(msg, ctx);
    return;
  }
  if (has(msg, "comm 0x") && (has(msg, " nranks ") || has(msg, " nRanks "))) {
    commLine(msg, ctx);
    return;
  }
}

void NcclLogParser::channelLine(std::string_view msg, const LineContext& ctx) {
  const std::size_t colon = msg.find(" : ");
  if (colon == std::string_view::npos) return;
  const std::string_view spec = msg.substr(colon + 3);
  const std::size_t via = spec.find(" via ");
  if (via == std::string_view::npos) {
    // Ring listing "Channel 00/32 :    0   1" (2.4: "Ring 00 :    0   1"): the ranks of
    // the ring, so its length is the communicator size.
    const auto tokens = splitWhitespace(spec);
    if (tokens.empty()) return;
    for (std::string_view t : tokens) {
      if (!parseInt(t)) return;
    }
    ring_nranks_ = std::max(ring_nranks_, static_cast<int>(tokens.size()));
    return;
  }
  std::string_view path = trim(spec.substr(via + 5));
  std::string name;
  if (startsWith(path, "NET/")) {
    const std::size_t slash = path.find('/', 4);
    name = printable(path.substr(0, slash), 64);
  } else {
    name = printable(path.substr(0, path.find_first_of("/ (")), 64);
  }
  if (name.empty()) return;
  auto it = std::find_if(transports_.begin(), transports_.end(),
                         [&name](const TransportUse& t) { return t.name == name; });
  if (it == transports_.end()) {
    transports_.push_back({name, 0, false});
    it = transports_.end() - 1;
  }
  ++it->lines;
  if (has(path, "GDRDMA")) it->gdr = true;
  if (name == "NET/Socket") socketTransport(ctx);

  // "A[x] -> B[y] [send]": this process is rank A; "[receive]": rank B.
  const std::size_t arrow = spec.find("->");
  if (arrow == std::string_view::npos || arrow > via) return;
  auto leading = [](std::string_view s) -> std::optional<int> {
    s = trimLeft(s);
    std::size_t i = 0;
    while (i < s.size() && isDigit(s[i]) && i < 9) ++i;
    if (i == 0) return std::nullopt;
    return static_cast<int>(*parseInt(s.substr(0, i)));
  };
  const auto from = leading(spec.substr(0, arrow));
  const auto to = leading(spec.substr(arrow + 2));
  if (!from || !to) return;
  channel_rank_max_ = std::max({channel_rank_max_, *from, *to});
  std::optional<int> local;
  if (has(spec.substr(0, via), "[send]")) local = from;
  if (has(spec.substr(0, via), "[receive]")) local = to;
  if (!local) return;
  const std::string key = key3(ctx.host, ctx.pid, std::to_string(ctx.device));
  if (rank_of_.find(key) == rank_of_.end()) rank_of_[key] = CommInfo{*local, 0};
}

void NcclLogParser::commLine(std::string_view msg, const LineContext& ctx) {
  // "comm 0x7efe60002250 rank 15 nranks 64 cudaDev 0 nvmlDev 0 - Init COMPLETE",
  // "ncclCommInitRank comm 0x.. rank 0 nranks 576 cudaDev 0 ...", "... nRanks 576 nNodes".
  const std::string_view comm = tokenAfter(msg, "comm 0x");
  const auto rank = intAfter(msg, " rank ");
  auto nranks = intAfter(msg, " nranks ");
  if (!nranks) nranks = intAfter(msg, " nRanks ");
  if (comm.empty() || !rank || !nranks || *rank < 0 || *nranks <= 0 || *nranks > 10'000'000) {
    return;
  }
  const int r = static_cast<int>(*rank);
  const int nr = static_cast<int>(*nranks);
  init_nranks_ = std::max(init_nranks_, nr);
  comms_[key3(ctx.host, ctx.pid, comm)] = CommInfo{r, nr};
  int device = ctx.device;
  if (auto cuda = intAfter(msg, "cudaDev ")) device = static_cast<int>(*cuda);
  const std::string key = key3(ctx.host, ctx.pid, std::to_string(device));
  auto it = rank_of_.find(key);
  if (it == rank_of_.end() || it->second.nranks <= nr) rank_of_[key] = CommInfo{r, nr};
}

void NcclLogParser::collLine(std::string_view msg, const LineContext& ctx) {
  // NCCL_DEBUG_SUBSYS=COLL (enqueue.cc): "%s: opCount %lx sendbuff %p recvbuff %p count %zu
  // datatype %d op %d root %d comm %p [nranks=%d] stream %p".
  const auto op_count = parseHex(tokenAfter(msg, ": opCount "));
  const std::string_view comm = tokenAfter(msg, " comm 0x");
  const auto nranks = intAfter(msg, "[nranks=");
  if (!op_count || comm.empty()) return;
  const int nr = nranks ? static_cast<int>(std::clamp<int64_t>(*nranks, 0, 10'000'000)) : 0;
  coll_nranks_ = std::max(coll_nranks_, nr);
  const std::string comm_key = key3(ctx.host, ctx.pid, comm);
  CollProgress& p = coll_progress_[comm_key];
  p.host = ctx.host;
  p.comm_key = comm_key;
  p.rank_key = key3(ctx.host, ctx.pid, std::to_string(ctx.device));
  p.comm_nranks = nr;
  p.op_count = *op_count;
  p.line_number = ctx.line_number;
}

void NcclLogParser::warnLine(std::string_view msg, std::string_view file, const LineContext& ctx) {
  if (startsWith(msg, "NET/IB : No device found")) {
    configEvent(v1::NcclEvent::IB_NO_DEVICE, ctx);
    return;
  }
  // net_ib.cc "NET/IB : Unable to open device mlx5_59", ibvwrap.cc "Call to ibv_open_device
  // failed" (the device's /dev/infiniband/uverbsN cannot be opened): once per host and device.
  if (has(msg, "ibv_open_device") || has(msg, "Unable to open device")) {
    const std::string device = printable(tokenAfter(msg, "open device ", " ,:"), 64);
    if (!config_seen_.insert("open|" + ctx.host + "|" + device).second) return;
    if (v1::NcclEvent* e = addEvent(v1::NcclEvent::IB_OPEN_FAILED, ctx)) {
      e->set_rdma_device(device);
      e->set_status(errnoFromText(msg));
    }
    return;
  }
  if (has(msg, "libibverbs")) {
    configEvent(v1::NcclEvent::IBVERBS_MISSING, ctx);
    return;
  }
  if (has(msg, "GPU Direct RDMA Disabled") && !startsWith(msg, "NET/Socket")) {
    configEvent(v1::NcclEvent::GDR_DISABLED, ctx);
    return;
  }
  errorEvent(msg, ctx);
  if (has(file, "net_socket")) socketTransport(ctx);
}

void NcclLogParser::errorEvent(std::string_view msg, const LineContext& ctx) {
  // net_ib.cc: "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d,
  // vendor err %d (%s)"; ib_plugin.c: "... with status=%d opcode=%d len=%d vendor err %d
  // (%s) localGid ..."; older: "Got completion with error %d, opcode %d, len %d, vendor err
  // %d".
  if (has(msg, "Got completion")) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::IB_COMPLETION_ERROR, ctx);
    if (e == nullptr) return;
    auto status = intAfter(msg, "with error ");
    if (!status) status = intAfter(msg, "with status=");
    if (status) e->set_status(static_cast<int32_t>(*status));
    if (auto vendor = intAfter(msg, "vendor err "))
      e->set_vendor_err(static_cast<int32_t>(*vendor));
    e->set_peer(printable(tokenAfter(msg, "from peer "), 256));
    const std::size_t vendor_at = msg.find("vendor err ");
    const std::size_t paren =
        vendor_at == std::string_view::npos ? std::string_view::npos : msg.find('(', vendor_at);
    if (paren != std::string_view::npos && msg.find(')', paren) != std::string_view::npos) {
      const std::string_view op = msg.substr(paren + 1, msg.find(')', paren) - paren - 1);
      e->set_opcode_or_op(printable(op, 32));
    } else {
      std::string_view opcode = tokenAfter(msg, "opcode ", " ,");
      if (opcode.empty()) opcode = tokenAfter(msg, "opcode=", " ,");
      e->set_opcode_or_op(printable(opcode, 32));
    }
    return;
  }
  // net_ib.cc: "NET/IB : Got async event : port error", "NET/IB : mlx5_1:1 async fatal event
  // on QP (0x..): invalid request local work queue error".
  if (has(msg, "async") && has(msg, "event")) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::IB_ASYNC_EVENT, ctx);
    if (e == nullptr) return;
    for (std::string_view tok : splitWhitespace(msg)) {
      const std::size_t c = tok.rfind(':');
      if (c == std::string_view::npos || c == 0 || c + 1 >= tok.size() || has(tok, "/") ||
          !parseInt(tok.substr(c + 1))) {
        continue;
      }
      e->set_rdma_device(printable(tok, 64));
      break;
    }
    if (const std::size_t c = msg.rfind(": "); c != std::string_view::npos) {
      e->set_opcode_or_op(printable(trim(msg.substr(c + 2)), 128));
    }
    return;
  }
  // ibvwrap: "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx_x:1,
  // curr state INIT, next state RTR, ..."; older "... failed with error Connection timed
  // out"; "ibv_create_qp failed".
  if ((has(msg, "ibv_modify_qp") || has(msg, "ibv_create_qp") || has(msg, "modify_qp")) &&
      (has(msg, "fail") || has(msg, "error"))) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::QP_SETUP_FAILED, ctx);
    if (e == nullptr) return;
    auto status = intAfter(msg, "failed with ");
    if (!status) status = intAfter(msg, "errno ");
    e->set_status(status ? static_cast<int32_t>(*status) : errnoFromText(msg));
    e->set_rdma_device(printable(tokenAfter(msg, "on dev ", " ,"), 64));
    return;
  }
  // "Call to ibv_reg_mr failed", "ibv_reg_dmabuf_mr failed", aws-ofi-nccl "NET/OFI Unable to
  // register memory (type = 1) for device 0. RC: 12, Error: Cannot allocate memory".
  if (has(msg, "ibv_reg_mr") || has(msg, "ibv_reg_dmabuf_mr") ||
      has(msg, "Unable to register memory") || has(msg, "regMr") || has(msg, "reg_mr")) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::REG_MR_FAILED, ctx);
    if (e == nullptr) return;
    auto status = intAfter(msg, "RC: ");
    if (!status) status = intAfter(msg, "errno ");
    if (!status) status = intAfter(msg, "failed with ");
    e->set_status(status ? static_cast<int32_t>(*status) : errnoFromText(msg));
    return;
  }
  if (isConnectFailure(msg)) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::CONNECT_FAILED, ctx);
    if (e == nullptr) return;
    std::string_view peer = tokenAfter(msg, "Call to recv from ");
    if (peer.empty()) peer = tokenAfter(msg, "Call to send to ");
    if (peer.empty()) peer = tokenAfter(msg, "remote peer ");
    if (peer.empty()) peer = tokenAfter(msg, "Connect to ");
    e->set_peer(printable(peer, 256));
    e->set_status(errnoFromText(msg));
    return;
  }
  if (has(msg, "collective operation timeout") || has(msg, "Timeout(ms)") ||
      has(msg, "Watchdog caught")) {
    addEvent(v1::NcclEvent::COLLECTIVE_TIMEOUT, ctx);
    return;
  }
  addEvent(v1::NcclEvent::NCCL_ERROR, ctx);
}

void NcclLogParser::testsRankLine(std::string_view body) {
  // nccl-tests: "#  Rank  1 Group  0 Pid   4940 on ai-worker03 device  0 [0x61] NVIDIA L40",
  // older "#   Rank  1 Pid 2152176 on  dgxh100-3 device  0 ...".
  const auto tokens = splitWhitespace(body);
  if (tokens.size() < 6 || tokens[0] != "#" || tokens[1] != "Rank") return;
  const auto rank = parseInt(tokens[2]);
  if (!rank || *rank < 0 || *rank > 10'000'000) return;
  for (std::size_t i = 3; i + 1 < tokens.size(); ++i) {
    if (tokens[i] == "on") {
      addHost(tokens[i + 1]);
      break;
    }
  }
  tests_rank_max_ = std::max(tests_rank_max_, static_cast<int>(*rank));
}

void NcclLogParser::chainLine(std::string_view site, std::optional<int64_t> result,
                              const LineContext& ctx) {
  // A propagation chain ("misc/socket.cc:567 -> 2", "bootstrap.cc:270 -> 2", "init.cc:1350
  // -> 2", ...) is one error travelling up a thread's stack: its first line names where it
  // started. One event per chain (host:pid and result), at its first line, attributed to the
  // cause: a socket or bootstrap site is a failed connection; the rest an NCCL error whose
  // ncclResult is decoded. A chain that follows a WARN of the same process is that WARN's
  // consequence and adds nothing.
  if (!result || *result <= 0) return;
  const std::string key = ctx.host + "|" + ctx.pid + "|" + std::to_string(*result);
  if (!chain_seen_.insert(key).second) return;
  if (warned_.count(ctx.host + "|" + ctx.pid) != 0) return;
  const bool connect = has(site, "socket.cc") || has(site, "bootstrap.cc") ||
                       has(site, "net_socket.cc") || has(site, "socket.h");
  const std::string_view name = ncclResultName(*result);
  const std::string op = name.empty() ? "ncclResult " + std::to_string(*result) : std::string(name);
  if (connect) {
    if (v1::NcclEvent* e = addEvent(v1::NcclEvent::CONNECT_FAILED, ctx)) {
      e->set_opcode_or_op(op);
      addHost(ctx.host);
    }
    return;
  }
  // Elsewhere ("proxy.cc:698 -> 6" on the peer of a failed rank) a chain is usually the echo
  // of an error another process printed: kept aside, and reported (the first one) only when
  // the log holds no other error.
  if (!pending_chain_) {
    pending_chain_.emplace();
    fillEvent(*pending_chain_, v1::NcclEvent::NCCL_ERROR, ctx)->set_opcode_or_op(op);
    pending_chain_host_ = ctx.host;
  }
}

void NcclLogParser::watchdogLine(std::string_view body, const LineContext& ctx) {
  // ProcessGroupNCCL: "[Rank 0] Watchdog caught collective operation timeout:
  // WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, ...) ran for 600061 milliseconds",
  // "[PG 1 Rank 0] Exception (...) detected by watchdog at work: 7753, last enqueued NCCL
  // work: 7755, last completed NCCL work: 7752."
  int rank = ctx.launcher_rank;
  if (auto r = intAfter(body, "Rank ")) rank = static_cast<int>(*r);
  std::optional<int64_t> seq = intAfter(body, "SeqNum=");
  const bool caught = has(body, "Watchdog caught");
  if (!caught)
    seq = has(body, "Timeout at NCCL work: ") ? intAfter(body, "Timeout at NCCL work: ")
                                              : intAfter(body, "at work: ");
  // PyTorch's heartbeat monitor: the watchdog itself made no progress (a NCCL/CUDA call
  // hung). One event per rank; the "watchdog got stuck" line that follows is the same event.
  const bool heartbeat = has(body, "Heartbeat monitor timed out");
  if (heartbeat || has(body, "watchdog got stuck for")) {
    if (heartbeat_seen_.insert(ctx.host + "|" + std::to_string(rank)).second) {
      if (v1::NcclEvent* e = addEvent(v1::NcclEvent::COLLECTIVE_TIMEOUT, ctx)) {
        e->set_rank(rank);
        e->set_opcode_or_op("heartbeat monitor");
        addHost(ctx.host);
      }
    }
    return;
  }
  if (caught) {
    if (v1::NcclEvent* e = addEvent(v1::NcclEvent::COLLECTIVE_TIMEOUT, ctx)) {
      e->set_rank(rank);
      if (seq && *seq >= 0) e->set_op_count(static_cast<uint64_t>(*seq));
      e->set_opcode_or_op(printable(tokenAfter(body, "OpType=", ",)"), 64));
    }
  }
  if (seq && *seq >= 0 && rank >= 0) {
    v1::NcclRankProgress& p = torch_progress_[{ctx.host, rank}];
    p.set_host(printable(ctx.host, 256));
    p.set_rank(rank);
    p.set_op_count(static_cast<uint64_t>(*seq));
    p.set_sequence(v1::NcclRankProgress::TORCH_SEQ_NUM);
    p.set_line_number(ctx.line_number);
    addHost(ctx.host);
  }
}

void NcclLogParser::otherLine(const Stripped& st, std::string_view raw, uint32_t n) {
  const std::string_view body = st.body;
  if (rasLine(body, n)) return;
  if (has(body, "NCCL version ")) setVersion(versionAt(body, "NCCL version "));
  if (version_.empty() && has(body, "RCCL version ")) setVersion(versionAt(body, "RCCL version "));
  if (startsWith(body, "#")) {
    testsRankLine(body);
    return;
  }
  const LineContext ctx = frameworkContext(st, raw, n);
  if (has(body, "Watchdog caught collective operation timeout") ||
      has(body, "detected by watchdog at work") || has(body, "Timeout at NCCL work: ") ||
      has(body, "Heartbeat monitor timed out") || has(body, "watchdog got stuck for")) {
    watchdogLine(body, ctx);
    return;
  }
  // Frameworks embed NCCL's last WARN. PyTorch (NCCLUtils) prints "...\nLast error:\n<text>",
  // so the text is on the next line; pasted one-liners have it inline: "ncclRemoteError: ...
  // Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, ...".
  if (const std::size_t last = body.find("Last error:"); last != std::string_view::npos) {
    const std::string_view tail = trim(body.substr(last + 11));
    if (tail.empty()) {
      pending_last_error_ = true;
      return;
    }
    lastErrorEvent(tail, ctx);
    return;
  }
  if (has(body, "ncclRemoteError") || has(body, "ncclSystemError") ||
      has(body, "ncclInternalError") || has(body, "ncclInvalidUsage") ||
      has(body, "unhandled system error") || has(body, "unhandled cuda error") ||
      has(body, "NCCL error") || has(body, "NCCL operations have failed")) {
    // The lines of one framework error message ("RuntimeError: NCCL error in: ...",
    // "ncclSystemError: System call ...") are one event.
    if (inFrameworkBlock(n)) return;
    if (addEvent(v1::NcclEvent::NCCL_ERROR, ctx) != nullptr) {
      addHost(ctx.host);
      framework_event_line_ = n;
    }
  }
}

bool NcclLogParser::inFrameworkBlock(uint32_t n) const {
  return framework_event_line_ > 0 && n - framework_event_line_ <= kFrameworkBlockLines &&
         !events_.empty() && events_.back().event.line_number() == framework_event_line_;
}

void NcclLogParser::lastErrorEvent(std::string_view text, const LineContext& ctx) {
  // The generic NCCL_ERROR of the same framework message is replaced by what NCCL said.
  if (inFrameworkBlock(ctx.line_number) &&
      events_.back().event.kind() == v1::NcclEvent::NCCL_ERROR) {
    events_.pop_back();
    --events_seen_;
  }
  framework_event_line_ = 0;
  const std::size_t before = events_.size();
  errorEvent(text, ctx);
  if (events_.size() > before) addHost(ctx.host);
}

}  // namespace ibc::core::nccl_log_internal
