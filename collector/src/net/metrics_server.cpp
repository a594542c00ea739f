#include "ibc/collector/net/metrics_server.h"

#include <openssl/ssl.h>

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <map>
#include <thread>

namespace ibc::collector {

using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;
using asio::ip::tcp;
using core::Error;
using core::ErrorCode;

bool splitHostPort(const std::string& text, std::string& host, uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return false;
  host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string digits = text.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  const unsigned long p = std::stoul(digits);
  if (p > 65535) return false;
  port = static_cast<uint16_t>(p);
  return !host.empty();
}

bool isLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  asio::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

namespace {

std::string endpointText(const tcp::endpoint& e) {
  const auto a = e.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(e.port());
}

std::string response(const char* status, const std::string& content_type, const std::string& body,
                     bool head, const char* extra = "") {
  std::string out = std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + content_type +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n" + extra + "\r\n";
  if (!head) out += body;
  return out;
}

}  // namespace

struct MetricsServer::Impl {
  Impl(const MetricsServerOptions& o, Render r, EventLog& l)
      : options(o), render(std::move(r)), log(l), acceptor(io) {}

  awaitable<void> acceptLoop();
  awaitable<void> serve(tcp::socket socket);
  template <typename Stream>
  awaitable<void> exchange(Stream& stream);
  std::string answer(const std::string& head);
  core::Status setUpTls(const MetricsTls& tls);

  MetricsServerOptions options;
  std::optional<asio::ssl::context> tls;
  Render render;
  EventLog& log;
  // Before io: the sessions' frames, destroyed with io, still count themselves out.
  std::size_t open = 0;
  std::map<asio::ip::address, std::size_t> open_by_source;
  // Refused connections not logged yet, and when the last line about them was written.
  std::size_t refused_unlogged = 0;
  std::chrono::steady_clock::time_point refused_logged{};
  asio::io_context io{1};
  tcp::acceptor acceptor;
  std::thread thread;
  void refuse(tcp::socket& socket, const char* why);
};

std::string MetricsServer::Impl::answer(const std::string& head) {
  const std::string text = "text/plain; charset=utf-8";
  // Request line: METHOD SP TARGET SP HTTP/1.x
  const auto line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 7, "HTTP/1.") != 0) {
    return response("400 Bad Request", text, "not an HTTP/1.x request\n", false);
  }
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    return response("405 Method Not Allowed", text, "only GET and HEAD\n", false,
                    "Allow: GET, HEAD\r\n");
  }
  if (target != "/metrics") {
    return response("404 Not Found", text, "the metrics are at /metrics\n", head_only);
  }
  return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render(), head_only);
}

// Closes a connection over a limit; logged at most every 10 s with how many were refused, so
// a flood of them is seen without flooding the log.
void MetricsServer::Impl::refuse(tcp::socket& socket, const char* why) {
  asio::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  socket.close(ec);
  ++refused_unlogged;
  const auto now = std::chrono::steady_clock::now();
  if (now - refused_logged < std::chrono::seconds(10)) return;
  log.event(LogLevel::Warn, "metrics_connection_refused",
            {{"reason", why},
             {"peer", peer.address().to_string()},
             {"refused", std::to_string(refused_unlogged)},
             {"since", "the last line like this"}});
  refused_unlogged = 0;
  refused_logged = now;
}

awaitable<void> MetricsServer::Impl::serve(tcp::socket accepted) {
  asio::error_code peer_ec;
  const asio::ip::address source = accepted.remote_endpoint(peer_ec).address();
  // Shared with the deadline's handler, which may already be queued when the exchange ends.
  auto socket_ptr = std::make_shared<tcp::socket>(std::move(accepted));
  ++open;
  ++open_by_source[source];
  struct Closed {
    Impl& impl;
    asio::ip::address source;
    ~Closed() {
      --impl.open;
      if (--impl.open_by_source[source] == 0) impl.open_by_source.erase(source);
    }
  } closed{*this, source};
  // One deadline for the whole exchange (the TLS handshake included): a slow client only
  // holds its own connection.
  asio::steady_timer deadline(io);
  deadline.expires_after(options.deadline);
  deadline.async_wait([socket_ptr](const asio::error_code& e) {
    if (e) return;
    asio::error_code ignored;
    socket_ptr->close(ignored);
  });
  asio::error_code ec;
  if (tls) {
    asio::ssl::stream<tcp::socket&> stream(*socket_ptr, *tls);
    co_await stream.async_handshake(asio::ssl::stream_base::server,
                                    redirect_error(use_awaitable, ec));
    if (!ec) co_await exchange(stream);
  } else {
    co_await exchange(*socket_ptr);
  }
  deadline.cancel();
  socket_ptr->shutdown(tcp::socket::shutdown_both, ec);
  socket_ptr->close(ec);
}

// Reads one request head and writes its answer.
template <typename Stream>
awaitable<void> MetricsServer::Impl::exchange(Stream& stream) {
  std::string head;
  asio::error_code ec;
  bool complete = false;
  while (head.size() <= options.max_request_bytes) {
    char buf[1024];
    const std::size_t n =
        co_await stream.async_read_some(asio::buffer(buf), redirect_error(use_awaitable, ec));
    if (ec) break;
    head.append(buf, n);
    if (head.find("\r\n\r\n") != std::string::npos) {
      complete = true;
      break;
    }
  }
  std::string out;
  if (complete && head.find("\r\n\r\n") <= options.max_request_bytes) {
    out = answer(head);
  } else if (!ec) {
    out = response("431 Request Header Fields Too Large", "text/plain; charset=utf-8",
                   "request head over " + std::to_string(options.max_request_bytes) + " bytes\n",
                   false);
  }
  if (!out.empty()) {
    co_await asio::async_write(stream, asio::buffer(out), redirect_error(use_awaitable, ec));
  }
}

core::Status MetricsServer::Impl::setUpTls(const MetricsTls& t) {
  tls.emplace(asio::ssl::context::tls_server);
  SSL_CTX* ctx = tls->native_handle();
  // Prometheus and curl speak TLS 1.2 and 1.3.
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  asio::error_code ec;
  tls->use_certificate_chain(asio::buffer(t.certificate_pem), ec);
  if (!ec) tls->use_private_key(asio::buffer(t.key_pem), asio::ssl::context::pem, ec);
  if (ec || SSL_CTX_check_private_key(ctx) != 1) {
    return Error{ErrorCode::InvalidArgument,
                 "--metrics: the collector's certificate or key is unusable for HTTPS" +
                     (ec ? ": " + ec.message() : std::string())};
  }
  if (t.require_client_certificate) {
    tls->add_certificate_authority(asio::buffer(t.ca_pem), ec);
    if (ec) return Error{ErrorCode::InvalidArgument, "--metrics: the CA: " + ec.message()};
    tls->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
  }
  return {};
}

awaitable<void> MetricsServer::Impl::acceptLoop() {
  while (true) {
    asio::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(redirect_error(use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      log.event(LogLevel::Warn, "metrics_accept_failed", {{"detail", ec.message()}});
      asio::steady_timer pause(io);
      pause.expires_after(std::chrono::milliseconds(50));
      co_await pause.async_wait(redirect_error(use_awaitable, ec));
      continue;
    }
    // One source (a slow or hostile client) holds at most its share, so a scraper from
    // elsewhere is still answered.
    const auto source = socket.remote_endpoint(ec).address();
    if (ec) {
      socket.close(ec);
      continue;
    }
    if (open >= options.max_connections) {
      refuse(socket, "max_connections");
      continue;
    }
    if (auto it = open_by_source.find(source);
        it != open_by_source.end() && it->second >= options.max_connections_per_source) {
      refuse(socket, "max_connections_per_source");
      continue;
    }
    asio::co_spawn(io, serve(std::move(socket)), asio::detached);
  }
}

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() {
  asio::post(impl_->io, [impl = impl_.get()] {
    asio::error_code ec;
    impl->acceptor.close(ec);
    impl->io.stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

core::Result<std::unique_ptr<MetricsServer>> MetricsServer::start(
    const MetricsServerOptions& options, Render render, EventLog& log) {
  auto impl = std::make_unique<Impl>(options, std::move(render), log);
  asio::error_code ec;
  const auto address = asio::ip::make_address(options.host, ec);
  if (ec) return Error{ErrorCode::InvalidArgument, "--metrics: not an IP address: " + options.host};
  const tcp::endpoint endpoint(address, options.port);
  if (!options.tls && !address.is_loopback()) {
    return Error{ErrorCode::InvalidArgument,
                 "--metrics " + endpointText(endpoint) +
                     ": plain HTTP is served on loopback only; elsewhere the metrics are HTTPS "
                     "with the collector's certificate"};
  }
  if (options.tls) {
    if (auto st = impl->setUpTls(*options.tls); !st.ok()) return st.error();
  }
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(64, ec);
  if (ec) {
    return Error{ErrorCode::Io,
                 "--metrics: cannot listen on " + endpointText(endpoint) + ": " + ec.message()};
  }
  Impl* p = impl.get();
  asio::co_spawn(p->io, p->acceptLoop(), asio::detached);
  p->thread = std::thread([p] { p->io.run(); });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

std::string MetricsServer::scheme() const { return impl_->tls ? "https" : "http"; }

std::string MetricsServer::localAddress() const {
  asio::error_code ec;
  const auto e = impl_->acceptor.local_endpoint(ec);
  return ec ? std::string() : endpointText(e);
}

}  // namespace ibc::collector
