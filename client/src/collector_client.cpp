#include "ibc/client/collector_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <asio.hpp>
#include <asio/ssl.hpp>
#include <cctype>
#include <functional>
#include <optional>

#include "ibc/core/frame.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::client {

namespace v1 = ::ibcollect::v1;
using asio::ip::tcp;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

// A fetched snapshot (up to the largest .ibsnap) plus the answer around it.
constexpr std::size_t kMaxResponseFrameBytes = core::kMaxSnapshotFileBytes + (1u << 20);
constexpr std::size_t kReadBufferBytes = 64 * 1024;
using SteadyClock = std::chrono::steady_clock;

// Where a connection's SSL keeps its TlsSessionCache for onNewSession.
int sessionCacheIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// OpenSSL calls this when a session can be resumed later: for TLS 1.3 when a ticket
// arrives, which is after the handshake, while an answer is read.
int onNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* cache = static_cast<TlsSessionCache*>(SSL_get_ex_data(ssl, sessionCacheIndex()));
  if (cache == nullptr || SSL_SESSION_is_resumable(session) != 1) return 0;
  const int n = i2d_SSL_SESSION(session, nullptr);
  if (n <= 0) return 0;
  std::string der(static_cast<std::size_t>(n), '\0');
  auto* p = reinterpret_cast<unsigned char*>(der.data());
  i2d_SSL_SESSION(session, &p);
  cache->keep(std::move(der));
  return 0;  // the session itself is not kept: OpenSSL frees it
}

// Offers the cached session, if any, on the next handshake of `ssl`, and has the new ones
// of this connection kept in `cache`.
void useSessionCache(SSL_CTX* ctx, SSL* ssl, TlsSessionCache* cache) {
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, onNewSession);
  SSL_set_ex_data(ssl, sessionCacheIndex(), cache);
  if (cache->empty()) return;
  const auto* p = reinterpret_cast<const unsigned char*>(cache->sessionDer().data());
  SSL_SESSION* session =
      d2i_SSL_SESSION(nullptr, &p, static_cast<long>(cache->sessionDer().size()));
  if (session == nullptr) {
    // Not a session this OpenSSL reads back: a full handshake instead.
    ERR_clear_error();
    cache->clear();
    return;
  }
  SSL_set_session(ssl, session);
  SSL_SESSION_free(session);  // SSL_set_session took its own reference
}

// What a pipelined exchange drives of a connection.
struct Wire {
  asio::io_context& io;
  asio::ssl::stream<tcp::socket>& stream;
  core::FrameDecoder& decoder;
  bool& broken;
  bool& eof;
};

// One callPipelined(): writes requests and reads answers at once on the connection's io
// context, so a client that is still sending never stops reading (neither side can fill
// the other's socket buffer while waiting). Single-threaded: every handler runs in run().
class PipelinedExchange {
 public:
  PipelinedExchange(Wire wire, std::vector<v1::CollectorRequest> requests, PipelineLimits limits,
                    uint64_t first_id, std::chrono::milliseconds timeout)
      : w_(wire),
        requests_(std::move(requests)),
        limits_(limits),
        timeout_(timeout),
        watchdog_(wire.io),
        in_(kReadBufferBytes) {
    limits_.window = std::max<std::size_t>(1, limits_.window);
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      requests_[i].set_request_id(first_id + i);
      ids_.push_back(first_id + i);
      sizes_.push_back(core::kFrameHeaderBytes + requests_[i].ByteSizeLong());
    }
  }

  std::vector<Result<v1::CollectorResponse>> run() {
    progress_ = SteadyClock::now();
    if (w_.broken) fail(Error{ErrorCode::Io, "connection already failed"});
    if (!finished()) {
      armWatchdog();
      sendMore();
      if (!finished()) readMore();
    }
    w_.io.restart();
    w_.io.run();
    std::vector<Result<v1::CollectorResponse>> out;
    out.reserve(requests_.size());
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (i < answers_.size()) {
        out.push_back(std::move(answers_[i]));
      } else {
        out.push_back(failure_);
      }
    }
    return out;
  }

 private:
  bool finished() const { return failed_ || answers_.size() == requests_.size(); }

  // Sends the next request while the limits allow and no other write is in progress.
  void sendMore() {
    if (writing_ || failed_ || sent_ == requests_.size()) return;
    const std::size_t unanswered = sent_ - answers_.size();
    if (unanswered >= limits_.window) return;
    if (unanswered > 0 && unanswered_bytes_ + sizes_[sent_] > limits_.max_unanswered_bytes) return;
    out_ = core::encodeFrame(requests_[sent_].SerializeAsString());
    requests_[sent_].Clear();  // its bytes are in out_ now
    unanswered_bytes_ += sizes_[sent_];
    ++sent_;
    writing_ = true;
    asio::async_write(
        w_.stream, asio::buffer(out_), [this](const asio::error_code& e, std::size_t) {
          writing_ = false;
          out_ = std::string();
          if (e)
            return fail(Error{ErrorCode::Io, "sending to the collector failed: " + e.message()});
          progress_ = SteadyClock::now();
          sendMore();
          if (!reading_) readMore();
        });
  }

  void readMore() {
    if (reading_ || finished() || answers_.size() == sent_) return;
    reading_ = true;
    w_.stream.async_read_some(asio::buffer(in_), [this](const asio::error_code& e, std::size_t n) {
      reading_ = false;
      if (n > 0) {
        if (auto st = w_.decoder.feed(std::string_view(in_.data(), n)); !st.ok()) {
          return fail(st.error());
        }
      }
      while (!failed_ && answers_.size() < sent_) {
        auto frame = w_.decoder.next();
        if (!frame) break;
        take(*frame);
      }
      if (e && !finished()) {
        w_.eof = e == asio::error::eof || e == asio::ssl::error::stream_truncated;
        return fail(
            Error{ErrorCode::Io, "the collector closed the connection (" + e.message() + ")"});
      }
      if (finished()) {
        watchdog_.cancel();
        return;
      }
      sendMore();
      readMore();
    });
  }

  // One answer frame: it answers the oldest request not answered yet.
  void take(const std::string& payload) {
    v1::CollectorResponse response;
    if (!response.ParseFromString(payload)) {
      return fail(Error{ErrorCode::Malformed, "the collector's answer is not a CollectorResponse"});
    }
    const std::size_t k = answers_.size();
    // A rejection of the frame itself carries no request id.
    const bool frame_rejection = response.has_rejection() && response.request_id() == 0;
    if (response.request_id() != ids_[k] && !frame_rejection) {
      return fail(Error{ErrorCode::Malformed, "the collector answered another request"});
    }
    unanswered_bytes_ -= sizes_[k];
    answers_.push_back(std::move(response));
    progress_ = SteadyClock::now();
  }

  // Every request not answered yet fails with `e`; the connection is unusable.
  void fail(Error e) {
    if (failed_) return;
    failed_ = true;
    failure_ = std::move(e);
    w_.broken = true;
    asio::error_code ec;
    w_.stream.lowest_layer().close(ec);  // ends the read or write in progress
    watchdog_.cancel();
  }

  // An answer must come within the timeout of the previous progress (a write taken, an
  // answer read).
  void armWatchdog() {
    watchdog_.expires_at(progress_ + timeout_);
    watchdog_.async_wait([this](const asio::error_code& e) {
      if (e || finished()) return;
      if (SteadyClock::now() < progress_ + timeout_) return armWatchdog();
      fail(Error{ErrorCode::Timeout, "no answer from the collector in time"});
    });
  }

  Wire w_;
  std::vector<v1::CollectorRequest> requests_;
  std::vector<uint64_t> ids_;
  std::vector<std::size_t> sizes_;  // frame bytes of each request
  std::vector<Result<v1::CollectorResponse>> answers_;
  PipelineLimits limits_;
  std::chrono::milliseconds timeout_;
  asio::steady_timer watchdog_;
  std::vector<char> in_;
  std::string out_;  // the frame being written
  std::size_t sent_ = 0;
  std::size_t unanswered_bytes_ = 0;
  bool writing_ = false;
  bool reading_ = false;
  bool failed_ = false;
  Error failure_{ErrorCode::Io, "not sent"};
  SteadyClock::time_point progress_;
};

}  // namespace

std::vector<Result<v1::CollectorResponse>> CollectorSession::callPipelined(
    std::vector<v1::CollectorRequest> requests, PipelineLimits) {
  std::vector<Result<v1::CollectorResponse>> out;
  out.reserve(requests.size());
  for (auto& r : requests) out.push_back(call(std::move(r)));
  return out;
}

struct CollectorConnection::Impl {
  // Outlives the SSL that points to it (ex data): members are destroyed in reverse order.
  std::shared_ptr<TlsSessionCache> sessions;
  asio::io_context io{1};
  asio::ssl::context tls{asio::ssl::context::tls_client};
  // Made once `tls` holds the credentials: SSL_new copies them from the context.
  std::optional<asio::ssl::stream<tcp::socket>> tls_stream;
  core::FrameDecoder decoder{kMaxResponseFrameBytes};
  uint64_t next_request_id = 1;
  std::chrono::milliseconds request_timeout{60000};
  bool eof = false;
  bool broken = false;

  void close() {
    asio::error_code ec;
    if (tls_stream) tls_stream->lowest_layer().close(ec);
  }
  asio::ssl::stream<tcp::socket>& stream() { return *tls_stream; }

  // Runs the started operation until `done` or the timeout. On timeout `cancel` (a
  // pending name resolution) runs, the socket is closed, the operation completes as
  // aborted, and the connection is unusable.
  bool runUntilDone(const bool& done, std::chrono::milliseconds timeout,
                    const std::function<void()>& cancel = {}) {
    io.restart();
    io.run_for(timeout);
    if (done) return true;
    if (cancel) cancel();
    close();
    broken = true;
    io.restart();
    io.run();
    return false;
  }
};

CollectorConnection::CollectorConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CollectorConnection::~CollectorConnection() = default;

bool CollectorConnection::closedByPeer() const { return impl_->eof; }

Result<std::unique_ptr<CollectorConnection>> CollectorConnection::open(
    const CollectorEndpoint& endpoint, const TlsCredentials& credentials,
    const ConnectTimeouts& timeouts, std::shared_ptr<TlsSessionCache> sessions) {
  auto impl = std::make_unique<Impl>();
  impl->sessions = std::move(sessions);
  impl->request_timeout = timeouts.request;
  asio::error_code ec;
  SSL_CTX* ctx = impl->tls.native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  impl->tls.add_certificate_authority(asio::buffer(credentials.ca_pem), ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "CA certificate: " + ec.message()};
  impl->tls.use_certificate_chain(asio::buffer(credentials.certificate_pem), ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "client certificate: " + ec.message()};
  impl->tls.use_private_key(asio::buffer(credentials.key_pem), asio::ssl::context::pem, ec);
  if (ec || SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Error{ErrorCode::InvalidArgument, "client key unreadable or not the certificate's key" +
                                                 (ec ? ": " + ec.message() : std::string())};
  }
  impl->tls_stream.emplace(impl->io, impl->tls);
  if (impl->sessions) useSessionCache(ctx, impl->stream().native_handle(), impl->sessions.get());
  impl->stream().set_verify_mode(asio::ssl::verify_peer);
  impl->stream().set_verify_callback(asio::ssl::host_name_verification(endpoint.host));
  asio::ip::make_address(endpoint.host, ec);
  if (ec) {
    // SNI for a DNS name (SSL_set_tlsext_host_name, without the macro's C cast).
    SSL_ctrl(impl->stream().native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME,
             TLSEXT_NAMETYPE_host_name, const_cast<char*>(endpoint.host.c_str()));
  }

  // Resolve and connect.
  const std::string where = endpoint.text();
  tcp::resolver resolver(impl->io);
  bool done = false;
  asio::error_code result;
  resolver.async_resolve(endpoint.host, std::to_string(endpoint.port),
                         [&](const asio::error_code& e, const tcp::resolver::results_type& r) {
                           if (e) {
                             result = e;
                             done = true;
                             return;
                           }
                           asio::async_connect(
                               impl->stream().lowest_layer(), r,
                               [&](const asio::error_code& c, const tcp::endpoint&) {
                                 result = c;
                                 done = true;
                               });
                         });
  if (!impl->runUntilDone(done, timeouts.connect, [&resolver] { resolver.cancel(); })) {
    return Error{ErrorCode::Timeout, "collector " + where + ": no connection within " +
                                         std::to_string(timeouts.connect.count()) + " ms"};
  }
  if (result) {
    return Error{ErrorCode::Unavailable, "collector " + where + ": " + result.message()};
  }
  impl->stream().lowest_layer().set_option(tcp::no_delay(true), ec);

  done = false;
  impl->stream().async_handshake(asio::ssl::stream_base::client, [&](const asio::error_code& e) {
    result = e;
    done = true;
  });
  if (!impl->runUntilDone(done, timeouts.handshake)) {
    return Error{ErrorCode::Timeout, "collector " + where + ": no TLS handshake within " +
                                         std::to_string(timeouts.handshake.count()) + " ms"};
  }
  if (result) {
    const long verify = SSL_get_verify_result(impl->stream().native_handle());
    std::string why = verify != X509_V_OK ? std::string("collector certificate: ") +
                                                X509_verify_cert_error_string(verify)
                                          : result.message();
    ERR_clear_error();
    return Error{ErrorCode::PermissionDenied,
                 "collector " + where + ": TLS handshake failed: " + why};
  }
  return std::unique_ptr<CollectorConnection>(new CollectorConnection(std::move(impl)));
}

core::Status CollectorConnection::sendBytes(std::string_view bytes,
                                            std::chrono::milliseconds timeout) {
  if (impl_->broken) return Error{ErrorCode::Io, "connection already failed"};
  bool done = false;
  asio::error_code result;
  asio::async_write(impl_->stream(), asio::buffer(bytes.data(), bytes.size()),
                    [&](const asio::error_code& e, std::size_t) {
                      result = e;
                      done = true;
                    });
  if (!impl_->runUntilDone(done, timeout)) {
    return Error{ErrorCode::Timeout, "the collector did not take the request in time"};
  }
  if (result) {
    impl_->broken = true;
    return Error{ErrorCode::Io, "sending to the collector failed: " + result.message()};
  }
  return {};
}

Result<std::string> CollectorConnection::readFrame(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[64 * 1024];
  while (true) {
    if (auto frame = impl_->decoder.next()) return std::move(*frame);
    if (impl_->broken) return Error{ErrorCode::Io, "connection already failed"};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Error{ErrorCode::Timeout, "no answer from the collector in time"};
    bool done = false;
    asio::error_code result;
    std::size_t got = 0;
    impl_->stream().async_read_some(asio::buffer(buf),
                                    [&](const asio::error_code& e, std::size_t n) {
                                      result = e;
                                      got = n;
                                      done = true;
                                    });
    if (!impl_->runUntilDone(done, left)) {
      return Error{ErrorCode::Timeout, "no answer from the collector in time"};
    }
    if (got > 0) {
      if (auto st = impl_->decoder.feed(std::string_view(buf, got)); !st.ok()) {
        impl_->broken = true;
        return st.error();
      }
    }
    if (result) {
      impl_->broken = true;
      impl_->eof = result == asio::error::eof || result == asio::ssl::error::stream_truncated;
      if (auto frame = impl_->decoder.next()) return std::move(*frame);
      return Error{ErrorCode::Io, "the collector closed the connection (" + result.message() + ")"};
    }
  }
}

Result<v1::CollectorResponse> CollectorConnection::call(v1::CollectorRequest request) {
  const auto timeout = impl_->request_timeout;
  const uint64_t id = impl_->next_request_id++;
  request.set_request_id(id);
  if (auto st = sendBytes(core::encodeFrame(request.SerializeAsString()), timeout); !st.ok()) {
    return st.error();
  }
  auto frame = readFrame(timeout);
  if (!frame.ok()) return frame.error();
  v1::CollectorResponse response;
  if (!response.ParseFromString(*frame)) {
    impl_->broken = true;
    return Error{ErrorCode::Malformed, "the collector's answer is not a CollectorResponse"};
  }
  // A rejection of the frame itself carries no request id.
  if (response.request_id() != id && !(response.has_rejection() && response.request_id() == 0)) {
    impl_->broken = true;
    return Error{ErrorCode::Malformed, "the collector answered another request"};
  }
  return response;
}

bool CollectorConnection::resumedSession() const {
  return impl_->tls_stream && SSL_session_reused(impl_->tls_stream->native_handle()) == 1;
}

std::vector<Result<v1::CollectorResponse>> CollectorConnection::callPipelined(
    std::vector<v1::CollectorRequest> requests, PipelineLimits limits) {
  const uint64_t first_id = impl_->next_request_id;
  impl_->next_request_id += requests.size();
  PipelinedExchange exchange(
      Wire{impl_->io, impl_->stream(), impl_->decoder, impl_->broken, impl_->eof},
      std::move(requests), limits, first_id, impl_->request_timeout);
  return exchange.run();
}

TlsCollectorConnector::TlsCollectorConnector(CollectorEndpoint endpoint, TlsCredentials credentials,
                                             ConnectTimeouts timeouts)
    : endpoint_(std::move(endpoint)), credentials_(std::move(credentials)), timeouts_(timeouts) {}

Result<std::unique_ptr<CollectorSession>> TlsCollectorConnector::connect() {
  auto c = CollectorConnection::open(endpoint_, credentials_, timeouts_, sessions_);
  if (!c.ok()) return c.error();
  return std::unique_ptr<CollectorSession>(std::move(*c));
}

}  // namespace ibc::client
