#include "ibc/collector/net/server.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <asio.hpp>
#include <asio/ssl.hpp>
#include <list>
#include <unordered_set>

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

constexpr std::size_t kReadChunkBytes = 256u << 10;

// A FIFO budget of units (payload bytes, handshake slots) shared by the connections of the
// io thread. An amount larger than the whole budget is admitted when nothing else holds
// any, so a single large frame can always make progress. io thread only.
class AdmissionBudget {
 public:
  explicit AdmissionBudget(std::size_t capacity) : capacity_(capacity) {}

  // Waits until `amount` fits or `deadline` passes; false on timeout or after close().
  awaitable<bool> acquire(std::size_t amount, SteadyClock::time_point deadline) {
    if (closed_) co_return false;
    if (waiters_.empty() && fits(amount)) {
      used_ += amount;
      co_return true;
    }
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_at(deadline);
    Waiter waiter{amount, &timer, false};
    waiters_.push_back(&waiter);
    asio::error_code ec;
    co_await timer.async_wait(redirect_error(use_awaitable, ec));
    if (waiter.granted) co_return true;
    waiters_.remove(&waiter);
    co_return false;
  }

  void release(std::size_t amount) {
    used_ -= std::min(used_, amount);
    while (!closed_ && !waiters_.empty() && fits(waiters_.front()->amount)) {
      Waiter* w = waiters_.front();
      waiters_.pop_front();
      used_ += w->amount;
      w->granted = true;
      w->timer->cancel();
    }
  }

  // Fails every waiter and every later acquire (drain).
  void close() {
    closed_ = true;
    for (Waiter* w : waiters_) w->timer->cancel();
  }

 private:
  struct Waiter {
    std::size_t amount;
    asio::steady_timer* timer;
    bool granted;
  };
  bool fits(std::size_t amount) const { return used_ == 0 || used_ + amount <= capacity_; }

  std::size_t capacity_;
  std::size_t used_ = 0;
  bool closed_ = false;
  std::list<Waiter*> waiters_;
};

// Returns what a frame holds of the budget when it is done, whichever way it ends.
class BudgetHold {
 public:
  explicit BudgetHold(AdmissionBudget& budget) : budget_(budget) {}
  ~BudgetHold() { releaseAll(); }
  BudgetHold(const BudgetHold&) = delete;
  BudgetHold& operator=(const BudgetHold&) = delete;
  void add(std::size_t amount) { held_ += amount; }
  void releaseAll() {
    budget_.release(held_);
    held_ = 0;
  }

 private:
  AdmissionBudget& budget_;
  std::size_t held_ = 0;
};

enum class Phase { Handshake, Idle, Reading, Processing, Writing };

struct Connection {
  Connection(tcp::socket socket, asio::ssl::context& tls)
      : stream(std::move(socket), tls), watchdog(stream.get_executor()) {}

  // A later deadline is picked up when the watchdog next wakes; an earlier one wakes it.
  void setDeadline(SteadyClock::time_point t) {
    deadline = t;
    if (t < watchdog.expiry()) watchdog.cancel();
  }
  void close() {
    asio::error_code ec;
    stream.lowest_layer().shutdown(tcp::socket::shutdown_both, ec);
    stream.lowest_layer().close(ec);
  }

  asio::ssl::stream<tcp::socket> stream;
  asio::steady_timer watchdog;
  SteadyClock::time_point deadline = SteadyClock::time_point::max();
  Phase phase = Phase::Handshake;
  bool expired = false;  // the watchdog closed the socket
  bool finished = false;
  std::string address;
  // The subject of a client certificate that failed verification, for the rejection log
  // (OpenSSL keeps no peer certificate after a failed handshake).
  std::string rejected_subject;
  Peer peer;
};

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
        handshakes(o.max_handshakes),
        inflight(o.max_inflight_bytes),
        drain_timer(io) {}

  Status setUp();
  awaitable<void> acceptLoop();
  awaitable<void> session(tcp::socket socket);
  awaitable<void> serve(Connection& c);
  awaitable<void> watch(std::shared_ptr<Connection> c);
  awaitable<asio::error_code> awaitClientHello(Connection& c);
  awaitable<bool> answer(Connection& c, const v1::CollectorResponse& response);
  awaitable<v1::CollectorResponse> dispatch(const Peer& peer, std::string frame);
  void handshakeFailed(Connection& c, const asio::error_code& ec);
  void readFailed(Connection& c, const asio::error_code& ec);
  void reject(v1::RejectReason reason, const std::string& who, const std::string& detail) {
    service.recordRejection(reason, who, detail);
  }
  void beginDrain();
  void onException(std::exception_ptr e);

  ServerOptions options;
  Service& service;
  EventLog& log;
  asio::io_context io;
  asio::ssl::context tls;
  tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::thread_pool workers;
  AdmissionBudget handshakes;
  AdmissionBudget inflight;
  asio::steady_timer drain_timer;
  std::unordered_set<Connection*> connections;
  bool stopping = false;
};

Status Server::Impl::setUp() {
  asio::error_code ec;
  SSL_CTX* ctx = tls.native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  // Agents are one-shot processes that never resume a session: tickets would only cost.
  SSL_CTX_set_num_tickets(ctx, 0);
  tls.use_certificate_chain(asio::buffer(options.certificate_pem), ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "collector certificate: " + ec.message()};
  tls.use_private_key(asio::buffer(options.key_pem), asio::ssl::context::pem, ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "collector key: " + ec.message()};
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Error{ErrorCode::InvalidArgument, "the collector key does not match its certificate"};
  }
  tls.add_certificate_authority(asio::buffer(options.ca_pem), ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "CA certificates: " + ec.message()};
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
    log.write(std::string("internal error in a connection: ") + x.what());
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
      log.write("accept failed: " + ec.message());
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(redirect_error(use_awaitable, ec));
      continue;
    }
    asio::error_code peer_ec;
    const auto remote = socket.remote_endpoint(peer_ec);
    const std::string who = peer_ec ? "unknown" : endpointText(remote);
    if (connections.size() >= options.max_connections) {
      reject(v1::REJECT_REASON_CONNECTION_LIMIT, who,
             std::to_string(connections.size()) + " connections open");
      socket.close(ec);
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    asio::co_spawn(io, session(std::move(socket)),
                   [this](std::exception_ptr e) { onException(e); });
  }
}

awaitable<void> Server::Impl::watch(std::shared_ptr<Connection> c) {
  while (!c->finished) {
    if (SteadyClock::now() >= c->deadline) {
      c->expired = true;
      c->close();
      co_return;
    }
    c->watchdog.expires_at(c->deadline);
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
  tcp::socket& socket = c.stream.next_layer();
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

awaitable<void> Server::Impl::session(tcp::socket socket) {
  auto c = std::make_shared<Connection>(std::move(socket), tls);
  asio::error_code ec;
  c->address = endpointText(c->stream.lowest_layer().remote_endpoint(ec));
  connections.insert(c.get());
  service.connectionOpened();
  // Runs on every exit, exceptions included.
  struct Cleanup {
    Impl& impl;
    std::shared_ptr<Connection> c;
    ~Cleanup() {
      c->finished = true;
      c->watchdog.cancel();
      c->close();
      impl.connections.erase(c.get());
      impl.service.connectionClosed();
      if (impl.stopping && impl.connections.empty()) impl.drain_timer.cancel();
    }
  } cleanup{*this, c};
  asio::co_spawn(io, watch(c), asio::detached);
  co_await serve(*c);
}

void Server::Impl::handshakeFailed(Connection& c, const asio::error_code& ec) {
  if (stopping && !c.expired) return;  // cut by the drain: not the client's fault
  if (c.expired) {
    reject(v1::REJECT_REASON_HANDSHAKE_TIMEOUT, c.address,
           "no TLS handshake within " + ms(options.handshake_timeout));
    return;
  }
  SSL* ssl = c.stream.native_handle();
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    const std::string subject =
        c.rejected_subject.empty() ? subjectOf(SSL_get0_peer_certificate(ssl)) : c.rejected_subject;
    reject(reasonForVerifyError(verify), c.address,
           "TLS client certificate " + subject + ": " + X509_verify_cert_error_string(verify));
    return;
  }
  reject(v1::REJECT_REASON_TLS_HANDSHAKE_FAILED, c.address, "TLS handshake: " + ec.message());
}

void Server::Impl::readFailed(Connection& c, const asio::error_code& ec) {
  const std::string who = describePeer(c.peer);
  if (c.expired) {
    reject(v1::REJECT_REASON_READ_TIMEOUT, who,
           "frame not complete within " + ms(options.read_timeout) + " of its first byte");
  } else if (!stopping) {
    reject(v1::REJECT_REASON_MALFORMED_REQUEST, who,
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
  c.phase = Phase::Writing;
  const std::string frame = core::encodeFrame(response.SerializeAsString());
  c.setDeadline(SteadyClock::now() + options.write_timeout);
  asio::error_code ec;
  co_await asio::async_write(c.stream, asio::buffer(frame), redirect_error(use_awaitable, ec));
  if (ec) {
    if (c.expired) {
      reject(v1::REJECT_REASON_WRITE_TIMEOUT, describePeer(c.peer),
             "answer not taken within " + ms(options.write_timeout));
    }
    co_return false;
  }
  co_return true;
}

awaitable<void> Server::Impl::serve(Connection& c) {
  asio::error_code ec;
  c.phase = Phase::Handshake;
  c.setDeadline(SteadyClock::now() + options.handshake_timeout);
  if (ec = co_await awaitClientHello(c); ec) {
    handshakeFailed(c, ec);
    co_return;
  }
  if (!co_await handshakes.acquire(1, c.deadline)) {
    if (!stopping) {
      reject(v1::REJECT_REASON_OVERLOADED, c.address,
             "no handshake slot within " + ms(options.handshake_timeout));
    }
    co_return;
  }
  c.stream.set_verify_callback([&c](bool preverified, asio::ssl::verify_context& ctx) {
    if (!preverified && c.rejected_subject.empty()) {
      c.rejected_subject = subjectOf(X509_STORE_CTX_get0_cert(ctx.native_handle()));
    }
    return preverified;
  });
  co_await c.stream.async_handshake(asio::ssl::stream_base::server,
                                    redirect_error(use_awaitable, ec));
  handshakes.release(1);
  if (ec) {
    handshakeFailed(c, ec);
    co_return;
  }
  X509* cert = SSL_get0_peer_certificate(c.stream.native_handle());
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
    co_return;
  }
  c.peer = Peer{std::move(*identity), c.address};

  while (!stopping) {
    c.phase = Phase::Idle;
    c.setDeadline(SteadyClock::now() + options.idle_timeout);
    unsigned char header[core::kFrameHeaderBytes];
    const std::size_t got =
        co_await c.stream.async_read_some(asio::buffer(header), redirect_error(use_awaitable, ec));
    if (ec) co_return;  // the client is done (or idle past idle_timeout): not a rejection
    c.phase = Phase::Reading;
    auto frame_deadline = SteadyClock::now() + options.read_timeout;
    c.setDeadline(frame_deadline);
    if (got < sizeof header) {
      co_await asio::async_read(c.stream, asio::buffer(header + got, sizeof header - got),
                                redirect_error(use_awaitable, ec));
      if (ec) {
        readFailed(c, ec);
        co_return;
      }
    }
    auto length = core::decodeFrameHeader(header, options.max_frame_bytes);
    if (!length.ok()) {
      reject(v1::REJECT_REASON_FRAME_TOO_LARGE, describePeer(c.peer), length.error().message);
      co_await answer(c, rejection(v1::REJECT_REASON_FRAME_TOO_LARGE, length.error().message));
      co_return;  // the stream cannot be trusted past such a header
    }
    // The payload is read in chunks, each admitted first: a slow client holds only what it
    // sent, and a saturated collector stops reading, which TCP turns into backpressure.
    BudgetHold hold(inflight);
    std::string payload;
    while (payload.size() < *length) {
      const std::size_t chunk = std::min(*length - payload.size(), kReadChunkBytes);
      const auto waiting_since = SteadyClock::now();
      c.setDeadline(SteadyClock::time_point::max());
      if (!co_await inflight.acquire(chunk, waiting_since + options.admission_timeout)) {
        const auto reason =
            stopping ? v1::REJECT_REASON_SHUTTING_DOWN : v1::REJECT_REASON_OVERLOADED;
        const std::string message = stopping ? "the collector is shutting down"
                                             : "no room to read the frame within " +
                                                   ms(options.admission_timeout) + "; retry later";
        reject(reason, describePeer(c.peer), message);
        co_await answer(c, rejection(reason, message));
        co_return;
      }
      hold.add(chunk);
      // Waiting for room is not the client's delay.
      frame_deadline += SteadyClock::now() - waiting_since;
      c.setDeadline(frame_deadline);
      const std::size_t old = payload.size();
      payload.resize(old + chunk);
      co_await asio::async_read(c.stream, asio::buffer(payload.data() + old, chunk),
                                redirect_error(use_awaitable, ec));
      if (ec) {
        readFailed(c, ec);
        co_return;
      }
    }
    c.phase = Phase::Processing;
    c.setDeadline(SteadyClock::time_point::max());
    const v1::CollectorResponse response = co_await dispatch(c.peer, std::move(payload));
    hold.releaseAll();
    if (!co_await answer(c, response)) co_return;
    // A client that sends something other than a request is broken: stop listening to it.
    if (response.has_rejection() &&
        response.rejection().reason() == v1::REJECT_REASON_MALFORMED_REQUEST) {
      co_return;
    }
  }
}

void Server::Impl::beginDrain() {
  if (stopping) return;
  stopping = true;
  log.write("draining: " + std::to_string(connections.size()) +
            " connection(s) open; answering requests in progress");
  asio::error_code ec;
  acceptor.close(ec);
  signals.cancel(ec);
  handshakes.close();
  inflight.close();
  // Nothing is lost by closing a connection between frames or in the middle of one: only
  // acknowledged snapshots count as delivered, and those are already durable.
  for (Connection* c : connections) {
    if (c->phase == Phase::Handshake || c->phase == Phase::Idle || c->phase == Phase::Reading) {
      c->close();
    }
  }
  if (connections.empty()) return;
  drain_timer.expires_after(options.drain_timeout);
  drain_timer.async_wait([this](const asio::error_code& e) {
    if (e) return;
    log.write("drain timeout: closing " + std::to_string(connections.size()) + " connection(s)");
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
  if (s.options.handle_signals) {
    asio::error_code ec;
    s.signals.add(SIGTERM, ec);
    if (!ec) s.signals.add(SIGINT, ec);
    if (ec) s.log.write("cannot handle SIGTERM/SIGINT: " + ec.message());
    s.signals.async_wait([&s](const asio::error_code& e, int signal) {
      if (e) return;
      s.log.write(std::string("received ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT"));
      s.beginDrain();
    });
  }
  s.io.run();
}

void Server::stop() {
  asio::post(impl_->io, [impl = impl_.get()] { impl->beginDrain(); });
}

}  // namespace ibc::collector
