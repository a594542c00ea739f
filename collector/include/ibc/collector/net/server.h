#pragma once

// The collector's network layer (the only code with Asio): accepts TCP connections, runs
// TLS 1.3 with mutual authentication, reads length-prefixed request frames and writes the
// service's answers. Every read and write has a deadline; a connection idle between
// frames is closed after `idle_timeout`; a frame must arrive whole within `read_timeout`
// of its first byte (a client sending one byte a second is cut off).
//
// Admission control turns overload into backpressure rather than latency: at most
// `max_handshakes` handshakes run at once (a connection takes a slot only when its whole
// ClientHello has arrived, so silent or trickling clients hold none), the payloads of frames being
// read or processed hold at most `max_inflight_bytes` (a connection whose frame does not fit waits
// before reading it, so TCP pushes back on the client), and connections beyond `max_connections`
// are closed at once (counted, the client retries).
//
// Threads: one io_context thread runs every connection; signature checks and store reads
// run on `worker_threads` (Service::handle); the service's writer thread syncs the store.
// SIGTERM/SIGINT (or stop()) drain: stop accepting, close connections between frames,
// let requests being processed be answered, then return from run().

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
  std::size_t max_frame_bytes = core::kDefaultMaxFrameBytes;
  std::size_t max_inflight_bytes = 256u << 20;
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
