#pragma once

// The client side of the collector protocol, shared by the agent (uploads, fetch) and the
// console (queries from a worker thread) (DESIGN §6, proto/ibcollect/v1/collector.proto):
// a mutually authenticated TLS 1.3 connection carrying length-prefixed request and
// response frames. Every step (resolve, connect, handshake, each request) has a deadline.
//
// CollectorConnector / CollectorSession are the seam delivery code talks through; tests
// substitute doubles, the CLI uses TlsCollectorConnector.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

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

// One request, one answer, in order. Errors: Timeout, Io (connection lost; the request
// may or may not have been processed), Malformed (an answer that is not a
// CollectorResponse or answers another request).
class CollectorSession {
 public:
  virtual ~CollectorSession() = default;
  virtual core::Result<::ibcollect::v1::CollectorResponse> call(
      ::ibcollect::v1::CollectorRequest request) = 0;
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
  static core::Result<std::unique_ptr<CollectorConnection>> open(const CollectorEndpoint& endpoint,
                                                                 const TlsCredentials& credentials,
                                                                 const ConnectTimeouts& timeouts);
  ~CollectorConnection() override;

  core::Result<::ibcollect::v1::CollectorResponse> call(
      ::ibcollect::v1::CollectorRequest request) override;

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
};

}  // namespace ibc::client
