#pragma once

// The client side of the collector protocol, shared by the agent (uploads, fetch) and the
// console (queries from a worker thread) (docs/security.md, proto/ibcollect/v1/collector.proto):
// a mutually authenticated TLS 1.3 connection carrying length-prefixed request and
// response frames. Every step (resolve, connect, handshake, each request) has a deadline.
//
// CollectorConnector / CollectorSession are the seam delivery code talks through; tests
// substitute doubles, the CLI uses TlsCollectorConnector.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/protocol.h"
#include "ibc/core/result.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::client {

// The protocol's pure parts (endpoint parsing, rejection names) are core's
// (ibc/core/protocol.h); named here too for the code that reaches them through the client.
using core::CollectorEndpoint;
using core::describeRejection;
using core::parseCollectorEndpoint;

// PEM text: the CA the collector's certificate must chain to, and this client's
// certificate chain and private key.
struct TlsCredentials {
  std::string ca_pem;
  std::string certificate_pem;
  std::string key_pem;
};

struct ConnectTimeouts {
  std::chrono::milliseconds connect{5000};     // name resolution and TCP connect
  std::chrono::milliseconds handshake{10000};  // TLS
  std::chrono::milliseconds request{60000};    // writing a request and reading its answer
};

// How many pipelined requests may be unanswered at once: at most `window` requests and,
// beyond the first, at most `max_unanswered_bytes` of request frames (a single request
// larger than that is still sent, alone). The collector reads ahead up to its own window
// (ServerOptions::max_pipelined_requests, 16 by default) and stops reading beyond it,
// which TCP turns into backpressure.
struct PipelineLimits {
  std::size_t window = 16;
  std::size_t max_unanswered_bytes = 8u << 20;
};

// Requests and answers over one connection. Errors: Timeout, Io (connection lost; the
// request may or may not have been processed), Malformed (an answer that is not a
// CollectorResponse or answers another request).
class CollectorSession {
 public:
  virtual ~CollectorSession() = default;
  // One request, one answer. Sets the request_id.
  virtual core::Result<::ibcollect::v1::CollectorResponse> call(
      ::ibcollect::v1::CollectorRequest request) = 0;
  // Sends `requests` with several in flight (within `limits`) and returns one result per
  // request, in the requests' order; the collector answers in request order, and each
  // answer is matched by its request_id (set here). Each request gets its own answer — a
  // rejection of one does not fail the others — except when the connection fails: then
  // every request not answered yet gets that error (Io, Timeout, Malformed) and may or may
  // not have been processed (retry it on a new connection; uploads are idempotent). The
  // collector closes the connection after a MALFORMED_REQUEST rejection, so the requests
  // after one fail with Io. This default sends one request at a time through call().
  virtual std::vector<core::Result<::ibcollect::v1::CollectorResponse>> callPipelined(
      std::vector<::ibcollect::v1::CollectorRequest> requests, PipelineLimits limits = {});
};

// The TLS session of a connection, kept to be offered by the next connection of the same
// client (TLS 1.3 resumption from the collector's session ticket): the next handshake
// skips the certificate exchange and its signatures, and the collector still knows this
// client by the certificate it verified in the full handshake (it travels in the ticket).
// TLS 1.3 tickets arrive after the handshake, with the first answer: a connection that
// read nothing leaves no session. Holds the newest ticket only (each is meant for one
// use). Shared by a connector and the connections it opens; not thread-safe.
class TlsSessionCache {
 public:
  bool empty() const { return session_der_.empty(); }
  void clear() { session_der_.clear(); }
  // The session as OpenSSL serializes it (i2d_SSL_SESSION); opaque to others.
  const std::string& sessionDer() const { return session_der_; }
  void keep(std::string session_der) { session_der_ = std::move(session_der); }

 private:
  std::string session_der_;
};

class CollectorConnector {
 public:
  virtual ~CollectorConnector() = default;
  // Errors: Unavailable (refused, unreachable, unresolvable), Timeout, PermissionDenied
  // (TLS: certificate rejected by either side), InvalidArgument (bad local credentials).
  virtual core::Result<std::unique_ptr<CollectorSession>> connect() = 0;
  // The collector's address, for messages.
  virtual std::string describe() const = 0;
};

// A TLS connection to the collector. Also gives raw access to the stream (tests send
// garbage through it). Not thread-safe: one thread uses a connection.
class CollectorConnection final : public CollectorSession {
 public:
  // Errors: as CollectorConnector::connect().
  // With `sessions`, offers the session it holds (when any) and keeps this connection's
  // newest one there.
  static core::Result<std::unique_ptr<CollectorConnection>> open(
      const CollectorEndpoint& endpoint, const TlsCredentials& credentials,
      const ConnectTimeouts& timeouts, std::shared_ptr<TlsSessionCache> sessions = nullptr);
  ~CollectorConnection() override;

  core::Result<::ibcollect::v1::CollectorResponse> call(
      ::ibcollect::v1::CollectorRequest request) override;
  // Writes and reads at once (one thread), so neither side waits on a full socket buffer.
  // An answer must come within the request timeout of the previous progress.
  std::vector<core::Result<::ibcollect::v1::CollectorResponse>> callPipelined(
      std::vector<::ibcollect::v1::CollectorRequest> requests, PipelineLimits limits = {}) override;
  // True when the handshake resumed an earlier session.
  bool resumedSession() const;

  // Writes raw bytes. Errors: Io, Timeout.
  core::Status sendBytes(std::string_view bytes, std::chrono::milliseconds timeout);
  // Reads the next frame's payload. Errors: Io (closed by the collector), Timeout,
  // TooLarge (a frame above `max_frame_bytes`).
  core::Result<std::string> readFrame(std::chrono::milliseconds timeout);
  // True once the collector closed the connection (an EOF was read).
  bool closedByPeer() const;

 private:
  struct Impl;
  explicit CollectorConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Opens TLS connections to one collector, each resuming the session of the previous one
// when it can (a resumption the collector declines is a full handshake, not an error).
class TlsCollectorConnector final : public CollectorConnector {
 public:
  TlsCollectorConnector(CollectorEndpoint endpoint, TlsCredentials credentials,
                        ConnectTimeouts timeouts = {});
  core::Result<std::unique_ptr<CollectorSession>> connect() override;
  std::string describe() const override { return endpoint_.text(); }

 private:
  CollectorEndpoint endpoint_;
  TlsCredentials credentials_;
  ConnectTimeouts timeouts_;
  std::shared_ptr<TlsSessionCache> sessions_ = std::make_shared<TlsSessionCache>();
};

}  // namespace ibc::client
