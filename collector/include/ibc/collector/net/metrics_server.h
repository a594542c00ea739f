#pragma once

// `--metrics ADDR:PORT` (docs/operations.md): a minimal HTTP/1.1 server for Prometheus scrapes,
// on its own thread and io_context so a slow scraper never delays ingest and a busy ingest
// never delays a scrape. `GET /metrics` (or HEAD) answers 200 with the text `render()`
// returns (Content-Type text/plain; version=0.0.4); another path 404, another method 405,
// a request that is not HTTP 400, a request head over `max_request_bytes` 431. Every
// answer closes the connection. A connection must deliver its request head and take the
// answer within `deadline`; at most `max_connections` are served at once and at most
// `max_connections_per_source` from one address (slow clients from one place cannot starve
// a scraper elsewhere); beyond that new ones are closed at once and counted in a
// metrics_connection_refused line (at most one every 10 s).
//
// Plain HTTP only on a loopback address (docs/operations.md): bound anywhere else the server speaks
// HTTPS (TLS 1.2 or 1.3) with the collector's certificate, and with
// `require_client_certificate` a scraper must present a certificate from the collector's
// CA. A scrape that does not complete the TLS handshake gets nothing.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ibc/collector/event_log.h"
#include "ibc/core/result.h"

namespace ibc::collector {

// The collector's certificate and key (PEM), and the CA a scraper's certificate must chain
// to when one is required.
struct MetricsTls {
  std::string certificate_pem;
  std::string key_pem;
  std::string ca_pem;
  bool require_client_certificate = false;
};

struct MetricsServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see localAddress)
  // HTTPS when set. Required on a non-loopback host (start() refuses plain HTTP there).
  std::optional<MetricsTls> tls;
  std::chrono::milliseconds deadline{5000};
  std::size_t max_request_bytes = 8192;
  std::size_t max_connections = 16;
  std::size_t max_connections_per_source = 4;
};

class MetricsServer {
 public:
  using Render = std::function<std::string()>;
  // Binds and starts serving on a new thread. `render` runs on that thread, once per
  // scrape; it and `log` must outlive the server. Errors: InvalidArgument (bad host; plain
  // HTTP asked on a non-loopback host, refused before binding; unusable certificate or
  // key), Io (cannot bind).
  static core::Result<std::unique_ptr<MetricsServer>> start(const MetricsServerOptions& options,
                                                            Render render, EventLog& log);
  // Stops serving and joins the thread.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  std::string localAddress() const;
  // "https" or "http".
  std::string scheme() const;

 private:
  struct Impl;
  explicit MetricsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// True for 127.0.0.0/8 and ::1 (and "localhost"); false for anything else, malformed too.
bool isLoopbackHost(const std::string& host);

// "host:port", "[v6]:port" → host and port. False when malformed.
bool splitHostPort(const std::string& text, std::string& host, uint16_t& port);

}  // namespace ibc::collector
