#pragma once

// The collector's network layer (the only code with Asio): accepts TCP connections, runs
// TLS 1.3 with mutual authentication, reads length-prefixed request frames and writes the
// service's answers. Every read and write has a deadline; a connection idle between
// frames is closed after `idle_timeout`; a frame must arrive whole within `read_timeout`
// of its first byte (a client sending one byte a second is cut off).
//
// Admission control turns overload into backpressure rather than latency, and keeps one
// source or one tenant from starving the others (issue 11 #3-#5):
// - a connection must send its first byte within `first_byte_timeout` and its whole
//   ClientHello within `handshake_timeout`; only then does it take one of `max_handshakes`
//   slots, and the handshake must then finish within `handshake_stall_timeout` (TLS 1.3 needs
//   one round trip after the hello: a stalled client loses its slot quickly);
// - one source address holds at most `max_handshakes_per_source` slots, and
//   `reserved_handshakes` slots are kept for sources that completed a handshake recently,
//   so a flood of hellos from unknown sources never locks out known agents;
// - one source holds at most `max_unauthenticated_per_source` connections that have not
//   authenticated yet; more from it wait, their hello unread, in that source's queue (up to
//   `max_waiting_connections` in all, each at most `handshake_timeout`) and start in
//   arrival order as its earlier ones authenticate or close: a tenant's nodes behind one
//   NAT address or a --job launcher are served, a flooding source delays only itself; at
//   `max_connections` the oldest unauthenticated connection of the source holding the most
//   is closed to make room (authenticated agents are never evicted);
// - frame payloads are admitted as their bytes arrive (at most kReadStepBytes ahead of
//   them), against `max_inflight_bytes` overall and `max_inflight_per_tenant_bytes` per
//   tenant, so a tenant's half-sent frames cannot block another tenant; a frame that waits
//   longer than `admission_timeout` for room is answered OVERLOADED;
// - a frame's announced size is bounded by its kind: only an agent's upload may be large
//   (`max_frame_bytes`), every other request `max_query_frame_bytes`.
//
// Requests are pipelined (issue 24): a connection's reader reads the next request while
// earlier ones are in the service (verification, group commit), up to
// `max_pipelined_requests` read and not yet answered, and a writer answers them in request
// order (each answer carries its request_id). Each request is still answered on its own —
// an upload refused for its signature between two accepted ones gets its rejection, the
// others their acknowledgements, each only once durable. The bytes of requests read ahead
// count against the in-flight budgets above until the service has answered them. An answer
// that ends the connection (a frame that is not a request, one too large, no room to read
// one, a drain) is sent after every answer before it; what was read after it is not
// answered (an upload among those may have been stored: the client retries it, and uploads
// are idempotent). A connection is idle (idle_timeout) only while nothing is in flight.
//
// TLS 1.3 sessions are resumed from tickets (one per handshake, valid kTicketLifetime in
// server.cpp): the resumed session carries the client certificate verified in the full
// handshake, which names the peer as before; one that has expired since is refused.
//
// Threads: one io_context thread runs every connection; signature checks and store reads
// run on `worker_threads` (Service::handle); the service's writer thread syncs the store.
// SIGTERM/SIGINT (or stop()) drain: stop accepting, close connections between frames,
// let requests read be answered, then return from run(). Every 250 ms the io thread has
// the service write the accepted-upload count of a second that ended (Service::tick).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ibc/collector/service/service.h"
#include "ibc/core/frame.h"
#include "ibc/core/result.h"

namespace ibc::collector {

struct ServerOptions {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;  // 0: any free port (see Server::localAddress)
  // PEM text: CA certificates that client certificates must chain to; this server's
  // certificate chain and private key.
  std::string ca_pem;
  std::string certificate_pem;
  std::string key_pem;

  std::size_t max_connections = 10000;
  // Few handshakes at once keep the io thread free to read the frames of connections
  // already established: at 1,000 agents 8 kept ack p99 near 60 ms at the same
  // throughput where 64 let it reach ~280 ms (bench/collector_ingest.sh).
  std::size_t max_handshakes = 8;
  std::size_t max_handshakes_per_source = 2;
  std::size_t reserved_handshakes = 2;  // of max_handshakes, for recently known sources
  std::size_t max_unauthenticated_per_source = 64;
  // Connections waiting for their source's share (a socket each, nothing read).
  std::size_t max_waiting_connections = 8192;
  std::size_t max_frame_bytes = core::kDefaultMaxFrameBytes;
  std::size_t max_query_frame_bytes = 64u << 10;
  std::size_t max_inflight_bytes = 256u << 20;
  std::size_t max_inflight_per_tenant_bytes = 64u << 20;
  // Requests one connection may have read and not yet answered (at least 1). 16 keeps a
  // launcher's uploads in verification and group commit at once: a 2,000-node job is a
  // few group commits, not 2,000 round trips.
  std::size_t max_pipelined_requests = 16;
  std::chrono::milliseconds first_byte_timeout{3000};
  std::chrono::milliseconds handshake_stall_timeout{2000};
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::milliseconds read_timeout{30000};
  std::chrono::milliseconds write_timeout{30000};
  // How long a frame may wait for room in max_inflight_bytes before it is answered
  // OVERLOADED.
  std::chrono::milliseconds admission_timeout{10000};
  // How long a drain waits for requests in progress before closing everything.
  std::chrono::milliseconds drain_timeout{30000};
  unsigned worker_threads = 1;
  // Handle SIGTERM and SIGINT (off when a test or benchmark runs a server in-process).
  bool handle_signals = true;
};

class Server {
 public:
  // Sets up TLS and binds the listening socket (so localAddress() is known before run()).
  // Errors: InvalidArgument (bad certificate, key or CA PEM), Io (cannot bind).
  static core::Result<std::unique_ptr<Server>> create(const ServerOptions& options,
                                                      Service& service, EventLog& log);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // "127.0.0.1:40123": the address actually bound.
  std::string localAddress() const;
  // Serves until a signal or stop(), drains, and returns. Call once.
  void run();
  // Starts the drain from any thread.
  void stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibc::collector
