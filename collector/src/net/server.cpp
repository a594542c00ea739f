#include "ibc/collector/net/server.h"

#include <malloc.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <asio.hpp>
#include <asio/ssl.hpp>
#include <deque>
#include <list>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "admission.h"
#include "request_pipeline.h"

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;
using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;
using asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using core::Error;
using core::ErrorCode;

namespace {

// A frame's payload is admitted against the memory budgets at most this far ahead of the
// bytes that actually arrived: a client that announces 60 MiB and sends one byte holds 16 KiB.
constexpr std::size_t kReadStepBytes = 16u << 10;
// How long a session ticket resumes a session: long enough for a job's upload and its
// retries, short enough that a certificate's end is soon noticed (identify() also refuses a
// resumed session whose certificate has expired since).
constexpr std::chrono::seconds kTicketLifetime{3600};
// How often the accepted-upload count of a finished second is written (Service::tick).
constexpr std::chrono::milliseconds kLogTick{250};

// Waits until `gate` (an AdmissionBudget or HandshakeGate, admission.h) grants `waiter` or
// `deadline` passes: the grant wakes the coroutine by cancelling its timer.
template <typename Gate>
awaitable<bool> awaitGrant(Gate& gate, AdmissionWaiter& waiter, SteadyClock::time_point deadline) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_at(deadline);
  waiter.wake = [&timer] { timer.cancel(); };
  gate.enqueue(waiter);
  asio::error_code ec;
  co_await timer.async_wait(redirect_error(use_awaitable, ec));
  if (waiter.granted) co_return true;
  gate.forget(waiter);
  co_return false;
}

// `amount` of `budget`; false on timeout or after close().
awaitable<bool> acquire(AdmissionBudget& budget, std::size_t amount,
                        SteadyClock::time_point deadline) {
  if (budget.closed()) co_return false;
  if (budget.tryAcquire(amount)) co_return true;
  AdmissionWaiter waiter;
  waiter.amount = amount;
  co_return co_await awaitGrant(budget, waiter, deadline);
}

// A handshake slot for `source`; false on timeout or after close().
awaitable<bool> acquire(HandshakeGate& gate, const std::string& source, bool known,
                        SteadyClock::time_point deadline) {
  if (gate.closed()) co_return false;
  if (gate.tryAcquire(source, known)) co_return true;
  AdmissionWaiter waiter;
  waiter.source = source;
  waiter.known = known;
  co_return co_await awaitGrant(gate, waiter, deadline);
}

// The field number of a CollectorRequest's kind, read from the first bytes of its payload
// (the request_id, field 1, may come first): 0 while more bytes are needed, -1 when the
// bytes are not a request.
int requestKindField(std::string_view bytes) {
  std::size_t i = 0;
  const auto varint = [&](uint64_t& out) -> int {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i >= bytes.size()) return 0;
      const auto b = static_cast<unsigned char>(bytes[i++]);
      out |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80u) == 0) return 1;
    }
    return -1;
  };
  while (true) {
    uint64_t tag = 0;
    if (const int r = varint(tag); r <= 0) return r;
    const uint64_t field = tag >> 3;
    if (field == 1 && (tag & 7u) == 0) {
      uint64_t ignored = 0;
      if (const int r = varint(ignored); r <= 0) return r;
      continue;
    }
    return field == 0 || field > 1000 ? -1 : static_cast<int>(field);
  }
}

// What a connection's reader is doing (its writer answers meanwhile: RequestPipeline).
enum class Phase { Handshake, Idle, Reading, Waiting };

struct Connection {
  Connection(tcp::socket s, std::size_t window)
      : socket(std::move(s)),
        watchdog(socket.get_executor()),
        reader_wake(socket.get_executor()),
        writer_wake(socket.get_executor()),
        pipeline(window) {}

  // The TLS stream is made once the ClientHello is in and a handshake slot taken: until
  // then a connection (silent, trickling, or one of a flood) costs its socket and this
  // struct, not OpenSSL's session and record buffers (~50 KiB).
  void startTls(asio::ssl::context& tls) { tls_stream.emplace(std::move(socket), tls); }
  bool tlsStarted() const { return tls_stream.has_value(); }
  asio::ssl::stream<tcp::socket>& stream() { return *tls_stream; }
  tcp::socket& lowest() { return tls_stream ? tls_stream->next_layer() : socket; }

  // The reader's deadline (handshake, idle, a frame's bytes) and the writer's (an answer)
  // run at once; the watchdog closes the socket at the earlier. A later deadline is picked
  // up when the watchdog next wakes; an earlier one wakes it.
  void setReadDeadline(SteadyClock::time_point t) {
    read_deadline = t;
    deadlineChanged();
  }
  void setWriteDeadline(SteadyClock::time_point t) {
    write_deadline = t;
    deadlineChanged();
  }
  SteadyClock::time_point deadline() const { return std::min(read_deadline, write_deadline); }
  void deadlineChanged() {
    if (deadline() < watchdog.expiry()) watchdog.cancel();
  }
  void close() {
    asio::error_code ec;
    lowest().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close(ec);
  }
  // The reader waits on reader_wake for room in the window, the writer on writer_wake for
  // an answer; one io thread runs both, so a wake-up between a check and its wait is never
  // lost.
  static void wake(asio::steady_timer& t) { t.cancel(); }

  tcp::socket socket;  // until startTls moves it into the stream
  std::optional<asio::ssl::stream<tcp::socket>> tls_stream;
  asio::steady_timer watchdog;
  asio::steady_timer reader_wake;
  asio::steady_timer writer_wake;
  RequestPipeline pipeline;
  SteadyClock::time_point read_deadline = SteadyClock::time_point::max();
  SteadyClock::time_point write_deadline = SteadyClock::time_point::max();
  Phase phase = Phase::Handshake;
  bool expired = false;        // the watchdog closed the socket
  bool write_expired = false;  // ... because an answer was not taken in time
  bool reading_done = false;   // the reader ended: answer what was read, then close
  bool writer_done = false;
  bool finished = false;
  bool evicted = false;  // closed to make room for another connection
  std::string address;
  std::string source;         // the address without the port
  std::string deadline_what;  // what the current handshake-phase deadline is for
  SteadyClock::time_point accepted = SteadyClock::now();
  bool authenticated = false;  // past the TLS handshake with a usable identity
  std::list<Connection*>::iterator unauthenticated_at;
  // The subject of a client certificate that failed verification, for the rejection log
  // (OpenSSL keeps no peer certificate after a failed handshake).
  std::string rejected_subject;
  Peer peer;
};

// A request frame read off a connection, holding its bytes' share of the memory budgets
// until the service has answered it; or why it was not read.
struct FrameRead {
  enum class Outcome { Read, Refused, Failed } outcome = Outcome::Failed;
  std::string payload;
  std::unique_ptr<BudgetHold> hold;         // the collector's budget
  std::unique_ptr<BudgetHold> tenant_hold;  // the peer's tenant's
  v1::CollectorResponse refusal;            // Refused: the answer, after which the connection ends
};

std::string addressText(const asio::ip::address& a) { return a.to_string(); }

std::string endpointText(const tcp::endpoint& e) {
  const auto a = e.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(e.port());
}

v1::RejectReason reasonForVerifyError(long err) {
  switch (err) {
    case X509_V_ERR_CERT_HAS_EXPIRED: return v1::REJECT_REASON_CERTIFICATE_EXPIRED;
    case X509_V_ERR_CERT_NOT_YET_VALID: return v1::REJECT_REASON_CERTIFICATE_NOT_YET_VALID;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE: return v1::REJECT_REASON_UNKNOWN_CA;
    default: return v1::REJECT_REASON_CERTIFICATE_REJECTED;
  }
}

std::string subjectOf(X509* cert) {
  if (cert == nullptr) return "(no certificate)";
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof buf);
  return buf;
}

v1::CollectorResponse rejection(v1::RejectReason reason, std::string message) {
  v1::CollectorResponse r;
  r.mutable_rejection()->set_reason(reason);
  r.mutable_rejection()->set_message(std::move(message));
  r.mutable_rejection()->set_retryable(isRetryable(reason));
  return r;
}

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

struct Server::Impl {
  Impl(const ServerOptions& o, Service& s, EventLog& l)
      : options(o),
        service(s),
        log(l),
        io(1),
        tls(asio::ssl::context::tls_server),
        acceptor(io),
        signals(io),
        workers(std::max(1u, o.worker_threads)),
        handshakes(o.max_handshakes, o.max_handshakes_per_source, o.reserved_handshakes),
        inflight(o.max_inflight_bytes),
        tick_timer(io),
        drain_timer(io),
        unauthenticated_sources(o.max_unauthenticated_per_source) {}
  // The waiting sockets go while io lives; sessions destroyed with io admit nobody.
  ~Impl() {
    stopping = true;
    closeWaiting();
  }

  Status setUp();
  awaitable<void> acceptLoop();
  awaitable<void> tickLoop();
  awaitable<void> session(tcp::socket socket, bool counted);
  awaitable<bool> handshake(Connection& c);
  bool identify(Connection& c);
  awaitable<void> serve(std::shared_ptr<Connection> c);
  awaitable<void> readRequests(std::shared_ptr<Connection> c);
  awaitable<bool> waitForRoom(Connection& c);
  awaitable<FrameRead> readFrame(Connection& c,
                                 const unsigned char (&header)[core::kFrameHeaderBytes],
                                 SteadyClock::time_point frame_deadline);
  awaitable<bool> admit(Connection& c, FrameRead& frame, std::size_t step);
  std::optional<std::string> kindProblem(const Connection& c, std::string_view payload,
                                         std::size_t length) const;
  FrameRead refused(Connection& c, v1::RejectReason reason, const std::string& message);
  awaitable<void> process(std::shared_ptr<Connection> c, uint64_t seq, FrameRead frame);
  awaitable<void> writeAnswers(std::shared_ptr<Connection> c);
  awaitable<void> watch(std::shared_ptr<Connection> c);
  awaitable<asio::error_code> awaitClientHello(Connection& c);
  awaitable<bool> answer(Connection& c, const v1::CollectorResponse& response);
  awaitable<v1::CollectorResponse> dispatch(const Peer& peer, std::string frame);
  void handshakeFailed(Connection& c, const asio::error_code& ec);
  void readFailed(Connection& c, const asio::error_code& ec);
  void reject(v1::RejectReason reason, const std::string& address, const std::string& detail) {
    service.recordRejection(reason, Peer{{}, address}, detail);
  }
  void reject(v1::RejectReason reason, const Connection& c, const std::string& detail) {
    service.recordRejection(reason, c.authenticated ? c.peer : Peer{{}, c.address}, detail);
  }
  void beginDrain();
  void onException(std::exception_ptr e);
  void authenticated(Connection& c) {
    if (c.authenticated) return;
    c.authenticated = true;
    unauthenticated.erase(c.unauthenticated_at);
    unauthenticated_sources.authenticated(c.source);
    admitWaiting(c.source);
  }
  // Connections over their source's share of unauthenticated ones wait here, their TLS
  // hello unread, and start in arrival order as that source's earlier ones authenticate or
  // close: a source with many connections at once (a NAT, a --job launcher) is served, and a
  // flooding source delays only itself.
  struct WaitingSocket {
    tcp::socket socket;
    SteadyClock::time_point since;
    std::string who;
  };
  // `counted`: already counted among its source's unauthenticated connections.
  void startSession(tcp::socket socket, bool counted = false);
  void admitWaiting(const std::string& source);
  void expireWaiting(SteadyClock::time_point now);
  void closeWaiting();
  // After many connections closed (a flood ended), hands the freed heap back to the system:
  // glibc keeps it otherwise, and the collector's RSS would stay at the flood's peak.
  void returnMemoryAfterAFlood() {
    peak_connections = std::max(peak_connections, connections.size() + waiting_count);
    const std::size_t now = connections.size() + waiting_count;
    if (peak_connections - now < kTrimAfterClosed) return;
    ::malloc_trim(0);
    peak_connections = now;
  }
  static constexpr std::size_t kTrimAfterClosed = 1000;
  std::size_t peak_connections = 0;
  bool evictOneUnauthenticated();
  AdmissionBudget& tenantBudget(const std::string& tenant) {
    auto& b = tenant_budgets[tenant];
    if (!b) b = std::make_unique<AdmissionBudget>(options.max_inflight_per_tenant_bytes);
    return *b;
  }

  ServerOptions options;
  Service& service;
  EventLog& log;
  asio::io_context io;
  asio::ssl::context tls;
  tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::thread_pool workers;
  HandshakeGate handshakes;
  AdmissionBudget inflight;
  asio::steady_timer tick_timer;
  std::unordered_map<std::string, std::unique_ptr<AdmissionBudget>> tenant_budgets;
  asio::steady_timer drain_timer;
  std::unordered_set<Connection*> connections;
  // Connections not authenticated yet, oldest first, and their count per source address.
  std::list<Connection*> unauthenticated;
  UnauthenticatedSources unauthenticated_sources;
  KnownSources known_sources;
  std::unordered_map<std::string, std::deque<WaitingSocket>> waiting;
  std::size_t waiting_count = 0;
  bool stopping = false;
};

void Server::Impl::startSession(tcp::socket socket, bool counted) {
  asio::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  asio::co_spawn(io, session(std::move(socket), counted),
                 [this](std::exception_ptr e) { onException(e); });
}

void Server::Impl::admitWaiting(const std::string& source) {
  if (stopping) return;  // also while the members are destroyed (~Impl sets it)
  auto it = waiting.find(source);
  if (it == waiting.end()) return;
  auto& queue = it->second;
  while (!queue.empty() && unauthenticated_sources.atLimit(source) == 0) {
    WaitingSocket next = std::move(queue.front());
    queue.pop_front();
    --waiting_count;
    if (connections.size() >= options.max_connections && !evictOneUnauthenticated()) {
      reject(v1::REJECT_REASON_CONNECTION_LIMIT, next.who,
             std::to_string(connections.size()) + " connections open, all authenticated");
      asio::error_code ec;
      next.socket.close(ec);
      continue;
    }
    // Counted from here, before its session runs, so this loop stops at the limit.
    unauthenticated_sources.opened(source);
    startSession(std::move(next.socket), /*counted=*/true);
  }
  if (queue.empty()) waiting.erase(it);
}

// A connection that waited its whole handshake time is closed, as a slow hello would be.
void Server::Impl::expireWaiting(SteadyClock::time_point now) {
  for (auto it = waiting.begin(); it != waiting.end();) {
    auto& queue = it->second;
    while (!queue.empty() && now - queue.front().since >= options.handshake_timeout) {
      reject(v1::REJECT_REASON_HANDSHAKE_TIMEOUT, queue.front().who,
             "waited " + std::to_string(options.handshake_timeout.count()) +
                 " ms for its source's earlier connections to authenticate");
      asio::error_code ec;
      queue.front().socket.close(ec);
      queue.pop_front();
      --waiting_count;
    }
    it = queue.empty() ? waiting.erase(it) : std::next(it);
  }
}

void Server::Impl::closeWaiting() {
  for (auto& [source, queue] : waiting) {
    for (auto& w : queue) {
      asio::error_code ec;
      w.socket.close(ec);
    }
  }
  waiting.clear();
  waiting_count = 0;
}

// At the connection limit: close the oldest unauthenticated connection of the source that
// holds the most, so a flood of silent sockets from some sources cannot keep agents out.
bool Server::Impl::evictOneUnauthenticated() {
  const std::string* heaviest = unauthenticated_sources.heaviest();
  if (heaviest == nullptr) return false;
  for (Connection* c : unauthenticated) {
    if (c->source != *heaviest || c->evicted) continue;
    c->evicted = true;
    c->close();
    return true;
  }
  return false;
}

Status Server::Impl::setUp() {
  asio::error_code ec;
  SSL_CTX* ctx = tls.native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  // TLS 1.3 session resumption (issue 24): a client that reconnects (a launcher uploading
  // a job, an agent after a dropped connection) skips the certificate exchange, which is
  // the collector's costliest step per connection. One stateless ticket per handshake: the
  // session (the client certificate included, see identify()) travels encrypted inside the
  // ticket under keys this process made at start, so the server keeps no cache, and a
  // restart invalidates every ticket. OpenSSL refuses to resume without a session id
  // context when it verifies peers; resumption never skips the checks of identify().
  SSL_CTX_set_num_tickets(ctx, 1);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  static constexpr unsigned char kSessionContext[] = "ibcollect-collector";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  SSL_CTX_set_timeout(ctx, static_cast<long>(kTicketLifetime.count()));
  tls.use_certificate_chain(asio::buffer(options.certificate_pem), ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "collector certificate: " + ec.message()};
  tls.use_private_key(asio::buffer(options.key_pem), asio::ssl::context::pem, ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "collector key: " + ec.message()};
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Error{ErrorCode::InvalidArgument, "the collector key does not match its certificate"};
  }
  tls.add_certificate_authority(asio::buffer(options.ca_pem), ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "CA certificates: " + ec.message()};
  // Handshakes on several io threads verify against these CAs at once.
  core::precomputeCertificateCaches(SSL_CTX_get_cert_store(ctx));
  tls.set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);

  asio::ip::address address = asio::ip::make_address(options.listen_host, ec);
  if (ec) {
    tcp::resolver resolver(io);
    auto results = resolver.resolve(options.listen_host, std::to_string(options.listen_port), ec);
    if (ec || results.empty()) {
      return Error{ErrorCode::InvalidArgument, "cannot resolve " + options.listen_host};
    }
    address = results.begin()->endpoint().address();
  }
  const tcp::endpoint endpoint(address, options.listen_port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Error{ErrorCode::Io, "cannot listen on " + endpointText(endpoint) + ": " + ec.message()};
  return {};
}

void Server::Impl::onException(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    log.event(LogLevel::Error, "internal_error", {{"detail", x.what()}});
  }
}

awaitable<void> Server::Impl::acceptLoop() {
  asio::steady_timer backoff(io);
  while (!stopping) {
    asio::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(redirect_error(use_awaitable, ec));
    if (stopping || ec == asio::error::operation_aborted) co_return;
    if (ec) {
      // Out of descriptors or similar: say so, and give connections time to close.
      log.event(LogLevel::Warn, "accept_failed", {{"detail", ec.message()}});
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(redirect_error(use_awaitable, ec));
      continue;
    }
    asio::error_code peer_ec;
    const auto remote = socket.remote_endpoint(peer_ec);
    const std::string who = peer_ec ? "unknown" : endpointText(remote);
    const std::string source = peer_ec ? "unknown" : addressText(remote.address());
    if (const std::size_t held = unauthenticated_sources.atLimit(source); held > 0) {
      if (waiting_count < options.max_waiting_connections) {
        waiting[source].push_back({std::move(socket), SteadyClock::now(), who});
        ++waiting_count;
        continue;
      }
      reject(v1::REJECT_REASON_CONNECTION_LIMIT, who,
             std::to_string(held) + " connections from " + source +
                 " have not authenticated yet (limit per source " +
                 std::to_string(options.max_unauthenticated_per_source) + ") and " +
                 std::to_string(waiting_count) + " wait");
      socket.close(ec);
      continue;
    }
    if (connections.size() >= options.max_connections && !evictOneUnauthenticated()) {
      reject(v1::REJECT_REASON_CONNECTION_LIMIT, who,
             std::to_string(connections.size()) + " connections open, all authenticated");
      socket.close(ec);
      continue;
    }
    startSession(std::move(socket));
  }
}

awaitable<void> Server::Impl::tickLoop() {
  while (!stopping) {
    tick_timer.expires_after(kLogTick);
    asio::error_code ec;
    co_await tick_timer.async_wait(redirect_error(use_awaitable, ec));
    service.tick();
    expireWaiting(SteadyClock::now());
    returnMemoryAfterAFlood();
  }
}

awaitable<void> Server::Impl::watch(std::shared_ptr<Connection> c) {
  while (!c->finished) {
    const auto now = SteadyClock::now();
    if (now >= c->deadline()) {
      c->expired = true;
      c->write_expired = now >= c->write_deadline;
      c->close();
      co_return;
    }
    c->watchdog.expires_at(c->deadline());
    asio::error_code ec;
    co_await c->watchdog.async_wait(redirect_error(use_awaitable, ec));
  }
}

awaitable<asio::error_code> Server::Impl::awaitClientHello(Connection& c) {
  // A handshake slot reserves CPU for the key exchange and the certificate checks. Taken at
  // accept, eight silent TCP connections (or clients trickling their hello) held every slot
  // for the whole handshake timeout and no honest agent got through; so a connection takes
  // one only when its first TLS record, the ClientHello, is wholly in the receive buffer.
  // MSG_PEEK leaves the bytes for the handshake. Honest hellos arrive in one segment; a
  // partial one is looked at again after a growing pause, so a trickle costs few wake-ups.
  constexpr std::size_t kRecordHeaderBytes = 5;
  constexpr std::size_t kMaxRecordBytes = kRecordHeaderBytes + (16u << 10) + 2048;
  constexpr unsigned char kHandshakeRecord = 0x16;
  tcp::socket& socket = c.socket;
  asio::steady_timer pause(io);
  std::chrono::milliseconds backoff(2);
  for (;;) {
    asio::error_code ec;
    co_await socket.async_wait(tcp::socket::wait_read, redirect_error(use_awaitable, ec));
    if (ec) co_return ec;
    unsigned char header[kRecordHeaderBytes];
    const std::size_t peeked = socket.receive(asio::buffer(header), tcp::socket::message_peek, ec);
    if (ec) co_return ec;
    if (peeked == 0) co_return asio::error::eof;  // closed before saying anything
    if (c.deadline_what.rfind("first byte", 0) == 0) {
      // It spoke: the whole ClientHello may take until the handshake timeout.
      c.deadline_what =
          "whole ClientHello within " + ms(options.handshake_timeout) + " of connecting";
      c.setReadDeadline(c.accepted + options.handshake_timeout);
    }
    // Not a handshake record, or an impossible length: the handshake fails at once and
    // reports it the usual way.
    if (header[0] != kHandshakeRecord) co_return asio::error_code{};
    if (peeked == kRecordHeaderBytes) {
      const std::size_t record =
          kRecordHeaderBytes + (std::size_t{header[3]} << 8 | std::size_t{header[4]});
      if (record > kMaxRecordBytes || socket.available(ec) >= record) co_return ec;
    }
    pause.expires_after(backoff);
    co_await pause.async_wait(redirect_error(use_awaitable, ec));
    if (c.expired || stopping) co_return asio::error::operation_aborted;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(250));
  }
}

awaitable<void> Server::Impl::session(tcp::socket socket, bool counted) {
  auto c = std::make_shared<Connection>(std::move(socket), options.max_pipelined_requests);
  asio::error_code ec;
  const auto remote = c->lowest().remote_endpoint(ec);
  c->address = ec ? "unknown" : endpointText(remote);
  c->source = ec ? "unknown" : addressText(remote.address());
  connections.insert(c.get());
  c->unauthenticated_at = unauthenticated.insert(unauthenticated.end(), c.get());
  // A connection that waited was counted when admitted (admitWaiting).
  if (!counted) unauthenticated_sources.opened(c->source);
  service.connectionOpened();
  // Runs on every exit, exceptions included.
  struct Cleanup {
    Impl& impl;
    std::shared_ptr<Connection> c;
    ~Cleanup() {
      c->finished = true;
      c->watchdog.cancel();
      c->close();
      impl.authenticated(*c);  // leaves the unauthenticated list either way
      impl.connections.erase(c.get());
      impl.service.connectionClosed();
      if (impl.stopping && impl.connections.empty()) impl.drain_timer.cancel();
    }
  } cleanup{*this, c};
  asio::co_spawn(io, watch(c), asio::detached);
  if (co_await handshake(*c)) co_await serve(c);
}

void Server::Impl::handshakeFailed(Connection& c, const asio::error_code& ec) {
  if (stopping && !c.expired) return;  // cut by the drain: not the client's fault
  if (c.evicted) {
    reject(v1::REJECT_REASON_CONNECTION_LIMIT, c,
           "closed unauthenticated after " +
               ms(std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() -
                                                                        c.accepted)) +
               " to make room: the collector is at its connection limit");
    return;
  }
  if (c.expired) {
    reject(v1::REJECT_REASON_HANDSHAKE_TIMEOUT, c, "no " + c.deadline_what);
    return;
  }
  if (!c.tlsStarted()) {  // it ended before its ClientHello was in
    reject(v1::REJECT_REASON_TLS_HANDSHAKE_FAILED, c, "TLS handshake: " + ec.message());
    return;
  }
  SSL* ssl = c.stream().native_handle();
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    const std::string subject =
        c.rejected_subject.empty() ? subjectOf(SSL_get0_peer_certificate(ssl)) : c.rejected_subject;
    reject(reasonForVerifyError(verify), c,
           "TLS client certificate " + subject + ": " + X509_verify_cert_error_string(verify));
    return;
  }
  reject(v1::REJECT_REASON_TLS_HANDSHAKE_FAILED, c, "TLS handshake: " + ec.message());
}

void Server::Impl::readFailed(Connection& c, const asio::error_code& ec) {
  if (c.write_expired) return;  // the writer's timeout closed it, and says so
  if (c.expired) {
    reject(v1::REJECT_REASON_READ_TIMEOUT, c,
           "frame not complete within " + ms(options.read_timeout) + " of its first byte");
  } else if (!stopping && !c.writer_done) {
    reject(v1::REJECT_REASON_MALFORMED_REQUEST, c,
           "connection ended in the middle of a frame (" + ec.message() + ")");
  }
}

awaitable<v1::CollectorResponse> Server::Impl::dispatch(const Peer& peer, std::string frame) {
  // The service answers on a worker thread, or later on its writer thread; the answer is
  // posted back to the io thread, which the work guard keeps running meanwhile.
  return asio::async_initiate<decltype(use_awaitable), void(v1::CollectorResponse)>(
      [this, peer, frame = std::move(frame)](auto handler) mutable {
        auto done = std::make_shared<decltype(handler)>(std::move(handler));
        auto work = asio::make_work_guard(io);
        asio::post(workers, [this, peer, frame = std::move(frame), done, work]() mutable {
          service.handle(peer, std::move(frame), [done, work](v1::CollectorResponse r) {
            asio::post(work.get_executor(),
                       [done, r = std::move(r)]() mutable { (*done)(std::move(r)); });
          });
        });
      },
      use_awaitable);
}

awaitable<bool> Server::Impl::answer(Connection& c, const v1::CollectorResponse& response) {
  const std::string frame = core::encodeFrame(response.SerializeAsString());
  c.setWriteDeadline(SteadyClock::now() + options.write_timeout);
  asio::error_code ec;
  co_await asio::async_write(c.stream(), asio::buffer(frame), redirect_error(use_awaitable, ec));
  c.setWriteDeadline(SteadyClock::time_point::max());
  if (ec) {
    if (c.write_expired) {
      reject(v1::REJECT_REASON_WRITE_TIMEOUT, c,
             "answer not taken within " + ms(options.write_timeout));
    }
    co_return false;
  }
  co_return true;
}

// Up to the TLS handshake and the peer's identity; false when the connection ends there.
awaitable<bool> Server::Impl::handshake(Connection& c) {
  asio::error_code ec;
  c.phase = Phase::Handshake;
  const auto first_byte = std::min(options.first_byte_timeout, options.handshake_timeout);
  c.deadline_what = "first byte within " + ms(first_byte) + " of connecting";
  c.setReadDeadline(c.accepted + first_byte);
  if (ec = co_await awaitClientHello(c); ec) {
    handshakeFailed(c, ec);
    co_return false;
  }
  const bool known = known_sources.known(c.source, SteadyClock::now());
  if (!co_await acquire(handshakes, c.source, known, c.read_deadline)) {
    if (!stopping && !c.evicted) {
      reject(v1::REJECT_REASON_OVERLOADED, c,
             "no handshake slot within " + ms(options.handshake_timeout) +
                 (known ? "" : " (source not seen before)"));
    }
    co_return false;
  }
  // The hello is in: TLS 1.3 needs one round trip more. A client that stops here loses
  // its slot after the stall timeout, not the whole handshake timeout.
  c.deadline_what =
      "end to the TLS handshake within " + ms(options.handshake_stall_timeout) + " of its hello";
  c.setReadDeadline(
      std::min(c.read_deadline, SteadyClock::now() + options.handshake_stall_timeout));
  c.startTls(tls);
  c.stream().set_verify_callback([&c](bool preverified, asio::ssl::verify_context& ctx) {
    if (!preverified && c.rejected_subject.empty()) {
      c.rejected_subject = subjectOf(X509_STORE_CTX_get0_cert(ctx.native_handle()));
    }
    return preverified;
  });
  co_await c.stream().async_handshake(asio::ssl::stream_base::server,
                                      redirect_error(use_awaitable, ec));
  handshakes.release(c.source);
  if (ec) {
    handshakeFailed(c, ec);
    co_return false;
  }
  known_sources.remember(c.source, SteadyClock::now());
  co_return identify(c);
}

// The peer's identity from its client certificate. On a resumed session no certificate
// was exchanged: OpenSSL restores the one verified in the full handshake from the ticket
// (SSL_get0_peer_certificate reads the session), so tenant and role are the same as
// then; what may have changed since is the time, so an expired certificate is refused.
bool Server::Impl::identify(Connection& c) {
  SSL* ssl = c.stream().native_handle();
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert != nullptr && SSL_session_reused(ssl) == 1 &&
      X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0) {
    reject(v1::REJECT_REASON_CERTIFICATE_EXPIRED, c,
           "TLS client certificate " + subjectOf(cert) +
               " has expired since the session it resumes was established");
    return false;
  }
  std::string der;
  if (cert != nullptr) {
    const int n = i2d_X509(cert, nullptr);
    der.resize(static_cast<std::size_t>(std::max(n, 0)));
    auto* p = reinterpret_cast<unsigned char*>(der.data());
    if (n > 0) i2d_X509(cert, &p);
  }
  auto identity = core::certificateIdentity(der);
  if (!identity.ok()) {
    reject(v1::REJECT_REASON_PEER_IDENTITY, c.address, identity.error().message);
    return false;
  }
  c.peer = Peer{std::move(*identity), c.address};
  authenticated(c);
  return true;
}

// Requests of one connection are pipelined (issue 24): the reader reads ahead up to the
// window and hands each request to the service at once, the writer answers in request
// order. The session ends when both have.
awaitable<void> Server::Impl::serve(std::shared_ptr<Connection> c) {
  asio::co_spawn(io, writeAnswers(c), [this, c](std::exception_ptr e) {
    if (!e) return;  // writeAnswers ended by itself and closed the connection
    c->writer_done = true;
    c->close();  // ends the reader's read
    Connection::wake(c->reader_wake);
    onException(e);
  });
  co_await readRequests(c);
  c->reading_done = true;
  Connection::wake(c->writer_wake);
  while (!c->writer_done) {
    c->reader_wake.expires_at(SteadyClock::time_point::max());
    asio::error_code ec;
    co_await c->reader_wake.async_wait(redirect_error(use_awaitable, ec));
  }
}

// Waits until the window has room; false when the connection is ending instead.
awaitable<bool> Server::Impl::waitForRoom(Connection& c) {
  while (!c.pipeline.hasRoom()) {
    if (stopping || c.writer_done || c.pipeline.ended()) co_return false;
    c.phase = Phase::Waiting;
    c.setReadDeadline(SteadyClock::time_point::max());
    c.reader_wake.expires_at(SteadyClock::time_point::max());
    asio::error_code ec;
    co_await c.reader_wake.async_wait(redirect_error(use_awaitable, ec));
  }
  co_return !stopping && !c.writer_done;
}

awaitable<void> Server::Impl::readRequests(std::shared_ptr<Connection> c) {
  asio::error_code ec;
  while (!stopping && !c->writer_done) {
    if (!co_await waitForRoom(*c)) co_return;
    // Idle only when nothing is in flight: a client waiting for its answers is not idle.
    c->phase = Phase::Idle;
    c->setReadDeadline(c->pipeline.idle() ? SteadyClock::now() + options.idle_timeout
                                          : SteadyClock::time_point::max());
    unsigned char header[core::kFrameHeaderBytes];
    const std::size_t got = co_await c->stream().async_read_some(asio::buffer(header),
                                                                 redirect_error(use_awaitable, ec));
    if (ec) co_return;  // the client is done (or idle past idle_timeout): not a rejection
    c->phase = Phase::Reading;
    const auto frame_deadline = SteadyClock::now() + options.read_timeout;
    c->setReadDeadline(frame_deadline);
    if (got < sizeof header) {
      co_await asio::async_read(c->stream(), asio::buffer(header + got, sizeof header - got),
                                redirect_error(use_awaitable, ec));
      if (ec) {
        readFailed(*c, ec);
        co_return;
      }
    }
    FrameRead frame = co_await readFrame(*c, header, frame_deadline);
    if (frame.outcome == FrameRead::Outcome::Failed) co_return;
    if (frame.outcome == FrameRead::Outcome::Refused) {
      c->pipeline.refuse(std::move(frame.refusal));
      co_return;
    }
    service.bytesReceived(core::kFrameHeaderBytes + frame.payload.size());
    const uint64_t seq = c->pipeline.open();
    asio::co_spawn(io, process(c, seq, std::move(frame)),
                   [this](std::exception_ptr e) { onException(e); });
  }
}

// Memory follows the bytes that arrive: each step of at most kReadStepBytes is admitted
// against this tenant's budget and the collector's before it is read, and what a read did
// not fill is given back at once. A saturated collector stops reading, which TCP turns into
// backpressure on the client. Frames read ahead hold their bytes until answered by the
// service, so a pipeline is bounded by the budgets as much as by the window.
awaitable<FrameRead> Server::Impl::readFrame(Connection& c,
                                             const unsigned char (&header)[core::kFrameHeaderBytes],
                                             SteadyClock::time_point frame_deadline) {
  auto length = core::decodeFrameHeader(header, options.max_frame_bytes);
  // The stream cannot be trusted past such a header.
  if (!length.ok()) co_return refused(c, v1::REJECT_REASON_FRAME_TOO_LARGE, length.error().message);
  FrameRead frame;
  frame.hold = std::make_unique<BudgetHold>(inflight);
  frame.tenant_hold = std::make_unique<BudgetHold>(tenantBudget(c.peer.identity.tenant));
  std::string& payload = frame.payload;
  payload.reserve(std::min<std::size_t>(*length, kReadStepBytes));
  bool kind_checked = false;
  while (payload.size() < *length) {
    const std::size_t step = std::min(*length - payload.size(), kReadStepBytes);
    const auto waiting_since = SteadyClock::now();
    c.setReadDeadline(SteadyClock::time_point::max());
    if (!co_await admit(c, frame, step)) {
      const auto reason = stopping ? v1::REJECT_REASON_SHUTTING_DOWN : v1::REJECT_REASON_OVERLOADED;
      co_return refused(c, reason,
                        stopping ? "the collector is shutting down"
                                 : "no room to read the frame within " +
                                       ms(options.admission_timeout) + "; retry later");
    }
    // Waiting for room is not the client's delay.
    frame_deadline += SteadyClock::now() - waiting_since;
    c.setReadDeadline(frame_deadline);
    const std::size_t old = payload.size();
    payload.resize(old + step);
    asio::error_code ec;
    const std::size_t n = co_await c.stream().async_read_some(
        asio::buffer(payload.data() + old, step), redirect_error(use_awaitable, ec));
    payload.resize(old + n);
    frame.hold->give(step - n);
    frame.tenant_hold->give(step - n);
    if (ec) {
      readFailed(c, ec);
      frame.outcome = FrameRead::Outcome::Failed;
      co_return frame;
    }
    if (!kind_checked) {
      const int kind = requestKindField(payload);
      if (kind != 0 || payload.size() == *length) {
        kind_checked = true;
        if (auto problem = kindProblem(c, payload, *length)) {
          co_return refused(c, v1::REJECT_REASON_FRAME_TOO_LARGE, *problem);
        }
      }
    }
  }
  frame.outcome = FrameRead::Outcome::Read;
  co_return frame;
}

// Admits `step` more bytes of `frame` against its tenant's budget and the collector's,
// waiting at most admission_timeout for room; false when there was none.
awaitable<bool> Server::Impl::admit(Connection& c, FrameRead& frame, std::size_t step) {
  const auto deadline = SteadyClock::now() + options.admission_timeout;
  c.setReadDeadline(SteadyClock::time_point::max());
  if (!co_await acquire(frame.tenant_hold->budget(), step, deadline)) co_return false;
  frame.tenant_hold->add(step);
  if (!co_await acquire(frame.hold->budget(), step, deadline)) co_return false;
  frame.hold->add(step);
  co_return true;
}

// A frame's announced size is bounded by its kind: only an agent's upload may be large.
std::optional<std::string> Server::Impl::kindProblem(const Connection& c, std::string_view payload,
                                                     std::size_t length) const {
  const int kind = requestKindField(payload);
  const bool may_be_large = kind == v1::CollectorRequest::kUploadFieldNumber &&
                            c.peer.identity.role == core::CertificateRole::Agent;
  if (may_be_large || length <= options.max_query_frame_bytes) return std::nullopt;
  return "frame of " + std::to_string(length) + " bytes for a request that needs at most " +
         std::to_string(options.max_query_frame_bytes) + " (only an agent's upload may be larger)";
}

FrameRead Server::Impl::refused(Connection& c, v1::RejectReason reason,
                                const std::string& message) {
  reject(reason, c, message);
  FrameRead frame;
  frame.outcome = FrameRead::Outcome::Refused;
  frame.refusal = rejection(reason, message);
  return frame;
}

// One request through the service; its answer joins the pipeline in its place.
awaitable<void> Server::Impl::process(std::shared_ptr<Connection> c, uint64_t seq,
                                      FrameRead frame) {
  v1::CollectorResponse response = co_await dispatch(c->peer, std::move(frame.payload));
  frame.hold->releaseAll();
  frame.tenant_hold->releaseAll();
  c->pipeline.complete(seq, std::move(response));
  Connection::wake(c->writer_wake);
}

// Writes the answers in request order as they arrive. Ends after an answer that ends the
// connection, a failed write, when the reader is done and everything read is answered, or
// in a drain once everything read is answered; then closes the connection.
awaitable<void> Server::Impl::writeAnswers(std::shared_ptr<Connection> c) {
  while (true) {
    if (auto next = c->pipeline.next()) {
      const bool written = co_await answer(*c, next->response);
      c->pipeline.written();
      Connection::wake(c->reader_wake);
      if (!written || next->last) break;
      if (c->pipeline.idle() && c->phase == Phase::Idle) {
        c->setReadDeadline(SteadyClock::now() + options.idle_timeout);
      }
      continue;
    }
    if (c->pipeline.idle() && (c->reading_done || stopping)) break;
    c->writer_wake.expires_at(SteadyClock::time_point::max());
    asio::error_code ec;
    co_await c->writer_wake.async_wait(redirect_error(use_awaitable, ec));
  }
  c->writer_done = true;
  c->close();
  Connection::wake(c->reader_wake);
}

void Server::Impl::beginDrain() {
  if (stopping) return;
  stopping = true;
  log.event(LogLevel::Info, "draining", {{"connections", std::to_string(connections.size())}});
  asio::error_code ec;
  acceptor.close(ec);
  closeWaiting();
  signals.cancel(ec);
  tick_timer.cancel();
  handshakes.close();
  inflight.close();
  for (auto& [tenant, budget] : tenant_budgets) budget->close();
  // Nothing is lost by closing a connection between frames or in the middle of one: only
  // acknowledged snapshots count as delivered, and those are already durable.
  // Requests already read are answered first: their writer closes the connection after.
  for (Connection* c : connections) {
    if (c->phase == Phase::Handshake || c->pipeline.idle()) {
      c->close();
    } else {
      Connection::wake(c->reader_wake);
      Connection::wake(c->writer_wake);
    }
  }
  if (connections.empty()) return;
  drain_timer.expires_after(options.drain_timeout);
  drain_timer.async_wait([this](const asio::error_code& e) {
    if (e) return;
    log.event(LogLevel::Warn, "drain_timeout", {{"closing", std::to_string(connections.size())}});
    for (Connection* c : connections) c->close();
  });
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (impl_) impl_->workers.join();
}

core::Result<std::unique_ptr<Server>> Server::create(const ServerOptions& options, Service& service,
                                                     EventLog& log) {
  auto impl = std::make_unique<Impl>(options, service, log);
  if (auto st = impl->setUp(); !st.ok()) return st.error();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

std::string Server::localAddress() const {
  asio::error_code ec;
  const auto e = impl_->acceptor.local_endpoint(ec);
  return ec ? std::string() : endpointText(e);
}

void Server::run() {
  Impl& s = *impl_;
  asio::co_spawn(s.io, s.acceptLoop(), [&s](std::exception_ptr e) { s.onException(e); });
  asio::co_spawn(s.io, s.tickLoop(), [&s](std::exception_ptr e) { s.onException(e); });
  if (s.options.handle_signals) {
    asio::error_code ec;
    s.signals.add(SIGTERM, ec);
    if (!ec) s.signals.add(SIGINT, ec);
    if (ec) s.log.event(LogLevel::Error, "signals_unavailable", {{"detail", ec.message()}});
    s.signals.async_wait([&s](const asio::error_code& e, int signal) {
      if (e) return;
      s.log.event(LogLevel::Info, "signal_received",
                  {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
      s.beginDrain();
    });
  }
  s.io.run();
}

void Server::stop() {
  asio::post(impl_->io, [impl = impl_.get()] { impl->beginDrain(); });
}

}  // namespace ibc::collector
