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

}  // namespace

struct CollectorConnection::Impl {
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
    const ConnectTimeouts& timeouts) {
  auto impl = std::make_unique<Impl>();
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

TlsCollectorConnector::TlsCollectorConnector(CollectorEndpoint endpoint, TlsCredentials credentials,
                                             ConnectTimeouts timeouts)
    : endpoint_(std::move(endpoint)), credentials_(std::move(credentials)), timeouts_(timeouts) {}

Result<std::unique_ptr<CollectorSession>> TlsCollectorConnector::connect() {
  auto c = CollectorConnection::open(endpoint_, credentials_, timeouts_);
  if (!c.ok()) return c.error();
  return std::unique_ptr<CollectorSession>(std::move(*c));
}

}  // namespace ibc::client
