// `--metrics` (net/metrics_server.h): plain HTTP on loopback only; HTTPS with the
// collector's certificate elsewhere, optionally with client certificates. Every server here
// listens on 127.0.0.1; a non-loopback address is refused before anything is bound.

#include "ibc/collector/net/metrics_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "collector_test_support.h"
#include "loopback.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::collector {
namespace {

using ibc::test::TestCa;
using ibc::test::TestCredential;

constexpr const char* kRequest = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

int portOf(const MetricsServer& server) {
  const std::string a = server.localAddress();
  return std::stoi(a.substr(a.rfind(':') + 1));
}

int connectWithTimeout(int port) {
  const int fd = ibc::test::connectLoopback(port);
  EXPECT_GE(fd, 0);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

// Everything the server answers to `request` over plain TCP, until it closes.
std::string plainExchange(int port, const std::string& request) {
  const int fd = connectWithTimeout(port);
  EXPECT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// The answer over TLS, checking the server's certificate against `ca_pem`; with `client`, the
// client presents that certificate. "" when the handshake fails.
std::string tlsExchange(int port, const std::string& ca_pem, const TestCredential* client) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  BIO* ca_bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  X509* ca = PEM_read_bio_X509(ca_bio, nullptr, nullptr, nullptr);
  BIO_free(ca_bio);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), ca);
  X509_free(ca);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (client != nullptr) {
    BIO* c = BIO_new_mem_buf(client->certificate_pem.data(),
                             static_cast<int>(client->certificate_pem.size()));
    X509* cert = PEM_read_bio_X509(c, nullptr, nullptr, nullptr);
    BIO_free(c);
    BIO* k = BIO_new_mem_buf(client->key_pem.data(), static_cast<int>(client->key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(k, nullptr, nullptr, nullptr);
    BIO_free(k);
    SSL_CTX_use_certificate(ctx.get(), cert);
    SSL_CTX_use_PrivateKey(ctx.get(), key);
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  const int fd = connectWithTimeout(port);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  SSL_set1_host(ssl.get(), "127.0.0.1");
  std::string out;
  if (SSL_connect(ssl.get()) == 1 &&
      SSL_write(ssl.get(), kRequest, static_cast<int>(std::strlen(kRequest))) > 0) {
    char buf[4096];
    for (int n; (n = SSL_read(ssl.get(), buf, sizeof buf)) > 0;) out.append(buf, n);
  }
  ERR_clear_error();
  ::close(fd);
  return out;
}

struct Pki {
  TestCa ca = TestCa::create();
  TestCredential collector = ca.issue([] {
    ibc::test::CertificateSpec spec;
    spec.name = "collector";
    spec.role = "collector";
    spec.server = true;
    spec.alt_names = {"IP:127.0.0.1"};
    return spec;
  }());
  MetricsTls tls(bool require_client) const {
    return {collector.certificate_pem, collector.key_pem, ca.certificatePem(), require_client};
  }
};

std::unique_ptr<MetricsServer> start(MetricsServerOptions options, EventLog& log);

// A metrics server on 127.0.0.1 speaking HTTPS with `pki`'s collector certificate.
std::unique_ptr<MetricsServer> startHttps(const Pki& pki, bool require_client, EventLog& log) {
  MetricsServerOptions o;
  o.tls = pki.tls(require_client);
  auto server = start(o, log);
  EXPECT_TRUE(server == nullptr || server->scheme() == "https");
  return server;
}

std::unique_ptr<MetricsServer> start(MetricsServerOptions options, EventLog& log) {
  auto server = MetricsServer::start(
      options, [] { return std::string("ibcollect_up 1\n"); }, log);
  EXPECT_TRUE(server.ok()) << (server.ok() ? "" : server.error().message);
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(MetricsServer, PlainHttpOnLoopbackAnswersTheMetrics) {
  test::CapturedLog log;
  auto server = start({}, log);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->scheme(), "http");
  const std::string answer = plainExchange(portOf(*server), kRequest);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_THAT(answer, HasSubstr("ibcollect_up 1"));
}

TEST(MetricsServer, PlainHttpOffLoopbackIsRefusedBeforeAnythingIsBound) {
  test::CapturedLog log;
  for (const char* host : {"10.255.255.1", "0.0.0.0", "::", "192.0.2.7"}) {
    MetricsServerOptions o;
    o.host = host;
    auto server = MetricsServer::start(
        o, [] { return std::string(); }, log);
    ASSERT_FALSE(server.ok()) << host;
    EXPECT_EQ(server.error().code, core::ErrorCode::InvalidArgument) << host;
    EXPECT_THAT(server.error().message, HasSubstr("plain HTTP is served on loopback only"));
  }
}

TEST(MetricsServer, HttpsServesTheMetricsAndAPlainRequestGetsNoMetrics) {
  test::CapturedLog log;
  const Pki pki;
  auto server = startHttps(pki, false, log);
  ASSERT_NE(server, nullptr);
  const std::string answer = tlsExchange(portOf(*server), pki.ca.certificatePem(), nullptr);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_THAT(answer, HasSubstr("ibcollect_up 1"));
  const std::string plain = plainExchange(portOf(*server), kRequest);
  EXPECT_THAT(plain, Not(HasSubstr("ibcollect_up")));
  EXPECT_THAT(plain, Not(HasSubstr("HTTP/1.1")));
}

TEST(MetricsServer, AClientCertificateCanBeRequired) {
  test::CapturedLog log;
  const Pki pki;
  auto server = startHttps(pki, true, log);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(tlsExchange(portOf(*server), pki.ca.certificatePem(), nullptr), "");
  const TestCredential scraper = pki.ca.issue(ibc::test::supportSpec("prometheus"));
  const std::string answer = tlsExchange(portOf(*server), pki.ca.certificatePem(), &scraper);
  EXPECT_THAT(answer, HasSubstr("ibcollect_up 1"));
  // A certificate of another CA is refused.
  const TestCa other = TestCa::create("other CA");
  const TestCredential stranger = other.issue(ibc::test::supportSpec("mallory"));
  EXPECT_EQ(tlsExchange(portOf(*server), pki.ca.certificatePem(), &stranger), "");
}

// Slow clients from one address hold at most their share: a scraper elsewhere is answered,
// and the refused connections are logged.
TEST(MetricsServer, SlowClientsFromOneAddressCannotStarveAScraperElsewhere) {
  test::CapturedLog log;
  MetricsServerOptions o;
  o.deadline = std::chrono::seconds(30);  // the slow clients stay for the whole test
  auto server = start(o, log);
  ASSERT_NE(server, nullptr);
  const int port = portOf(*server);
  std::vector<int> slow;
  for (int i = 0; i < 16; ++i) slow.push_back(ibc::test::connectLoopback(port, "127.0.0.2"));
  for (int i = 0; i < 10; ++i) {
    const std::string answer = plainExchange(port, kRequest);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << i << ": " << answer;
  }
  for (int fd : slow) ::close(fd);
  bool logged = false;
  for (const auto& l : log.lines()) {
    logged = logged || (l.find("event=metrics_connection_refused") != std::string::npos &&
                        l.find("reason=max_connections_per_source") != std::string::npos);
  }
  EXPECT_TRUE(logged);
}

TEST(MetricsServer, LoopbackHostsAreTheLoopbackNetworksOnly) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    EXPECT_TRUE(isLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "::ffff:10.0.0.1", "",
                           "localhost.example", "127.0.0.1 "}) {
    EXPECT_FALSE(isLoopbackHost(host)) << host;
  }
}

}  // namespace
}  // namespace ibc::collector
