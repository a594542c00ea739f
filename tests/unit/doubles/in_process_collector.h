#pragma once

// A real collector (Server + Service + a RocksDB Store in a temp dir) running in the test
// process on 127.0.0.1 port 0, with a TestCa PKI, for tests that drive it through the
// real TLS client (ibc_client): the collector's pipelining tests and the client's tests.
// Tests see the service's counters and the event log directly. Link ibc_collector,
// ibc_client and ibc_test_pki.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ibc/client/collector_client.h"
#include "ibc/collector/net/server.h"
#include "ibc/collector/service/service.h"
#include "ibc/collector/store/store.h"
#include "ibc/core/signing.h"
#include "ibcollect/v1/snapshot.pb.h"
#include "signed_files.h"
#include "test_pki.h"

namespace ibc::test {

// Keeps every event line (without the time stamp).
class RecordedLog final : public collector::EventLog {
 public:
  void event(collector::LogLevel level, std::string_view event,
             const collector::LogFields& fields) override {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.push_back(collector::formatEvent(level, event, fields));
  }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }
  // The lines that contain every one of `needles`.
  std::vector<std::string> matching(const std::vector<std::string>& needles) const {
    std::vector<std::string> out;
    for (const auto& l : lines()) {
      bool all = true;
      for (const auto& n : needles) all = all && l.find(n) != std::string::npos;
      if (all) out.push_back(l);
    }
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

class InProcessCollector {
 public:
  // `ca` issues the collector's certificate and is the CA clients must chain to (a new one
  // when not given).
  explicit InProcessCollector(collector::ServerOptions options = {}, TestCa ca = TestCa::create(),
                              collector::ServiceOptions service_options = {})
      : ca_(std::move(ca)) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ibc-in-process-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    CertificateSpec spec;
    spec.name = "collector";
    spec.role = "collector";
    spec.server = true;
    spec.alt_names = {"IP:127.0.0.1"};
    const TestCredential server = ca_.issue(spec);
    options.listen_host = "127.0.0.1";
    options.listen_port = 0;
    options.ca_pem = ca_.certificatePem();
    options.certificate_pem = server.certificate_pem;
    options.key_pem = server.key_pem;
    options.handle_signals = false;
    auto store = collector::Store::open(dir_ + "/data");
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    store_ = std::move(*store);
    verifier_ = core::SignatureVerifier::fromPem(ca_.certificatePem()).value();
    service_ = std::make_unique<collector::Service>(
        *store_, *verifier_, log_, [] { return std::chrono::system_clock::now(); },
        service_options);
    auto created = collector::Server::create(options, *service_, log_);
    EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
    server_ = std::move(*created);
    const std::string address = server_->localAddress();
    port_ = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
    thread_ = std::thread([this] { server_->run(); });
  }
  ~InProcessCollector() {
    server_->stop();
    thread_.join();
    service_->drain();
    server_.reset();
    service_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  InProcessCollector(const InProcessCollector&) = delete;
  InProcessCollector& operator=(const InProcessCollector&) = delete;

  uint16_t port() const { return port_; }
  client::CollectorEndpoint endpoint() const { return {"127.0.0.1", port_}; }
  collector::Service& service() { return *service_; }
  collector::Store& store() { return *store_; }
  const RecordedLog& log() const { return log_; }
  const TestCa& ca() const { return ca_; }

  client::TlsCredentials credentials(const TestCredential& who) const {
    return {ca_.certificatePem(), who.certificate_pem, who.key_pem};
  }
  std::unique_ptr<client::CollectorConnection> connect(
      const TestCredential& who, std::shared_ptr<client::TlsSessionCache> sessions = nullptr) {
    auto c = client::CollectorConnection::open(endpoint(), credentials(who), {}, sessions);
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return c.ok() ? std::move(*c) : nullptr;
  }

 private:
  std::string dir_;
  TestCa ca_;
  RecordedLog log_;
  std::unique_ptr<collector::Store> store_;
  std::unique_ptr<core::SignatureVerifier> verifier_;
  std::unique_ptr<collector::Service> service_;
  std::unique_ptr<collector::Server> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

inline ::ibcollect::v1::CollectorRequest uploadOf(const ::ibcollect::v1::SignedSnapshot& env) {
  ::ibcollect::v1::CollectorRequest r;
  r.mutable_upload()->set_signed_snapshot(env.SerializeAsString());
  return r;
}

}  // namespace ibc::test
