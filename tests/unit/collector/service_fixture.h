#pragma once

// A Service on a real RocksDB store in a temp dir, judged by a TestCa, with an agent and a
// support certificate: the fixture of the service, query and case tests
// (service_test.cpp, queries_test.cpp, cases_test.cpp). One definition in a named
// namespace, so every test file's ServiceTest is the same fixture type (gtest requires it).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "collector_test_support.h"
#include "ibc/collector/service/service.h"
#include "ibc/core/frame.h"
#include "ibc/core/snapshot_file.h"
#include "test_pki.h"

namespace ibc::collector::test {

// The time the service judges certificates at and stamps receipts with.
inline const std::chrono::system_clock::time_point kNow = std::chrono::system_clock::now();

inline Peer peerFor(const ibc::test::TestCredential& cred) {
  auto id = core::certificateIdentity(cred.certificate_der);
  EXPECT_TRUE(id.ok());
  return Peer{*id, "127.0.0.1:4000"};
}

inline ::ibcollect::v1::SignedSnapshot signWith(const ibc::test::TestCredential& cred,
                                                const ::ibcollect::v1::Snapshot& s) {
  auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
  EXPECT_TRUE(signer.ok());
  return *signer->sign(s);
}

inline std::string uploadFrame(const ::ibcollect::v1::SignedSnapshot& env, uint64_t id = 7) {
  ::ibcollect::v1::CollectorRequest r;
  r.set_request_id(id);
  r.mutable_upload()->set_signed_snapshot(env.SerializeAsString());
  return r.SerializeAsString();
}

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open(dir_.path());
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
    verifier_ = core::SignatureVerifier::fromPem(ca_.certificatePem()).value();
    service_ = std::make_unique<Service>(
        *store_, *verifier_, log_, [] { return kNow; }, options_);
  }

  ::ibcollect::v1::CollectorResponse call(const Peer& peer, std::string frame) {
    auto done = std::make_shared<std::promise<::ibcollect::v1::CollectorResponse>>();
    auto future = done->get_future();
    service_->handle(peer, std::move(frame),
                     [done](::ibcollect::v1::CollectorResponse r) { done->set_value(r); });
    EXPECT_EQ(future.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    return future.get();
  }

  ::ibcollect::v1::CollectorResponse query(const Peer& peer, ::ibcollect::v1::CollectorRequest r) {
    return call(peer, r.SerializeAsString());
  }

  uint64_t rejected(::ibcollect::v1::RejectReason reason) const {
    const auto stats = service_->stats();
    for (const auto& r : stats.rejections()) {
      if (r.reason() == reason) return r.count();
    }
    return 0;
  }

  // Uploads `env` as `peer` and expects a rejection for `reason`, logged and counted.
  void expectRejected(const Peer& peer, const std::string& frame,
                      ::ibcollect::v1::RejectReason reason, const std::string& message_part) {
    const uint64_t before = rejected(reason);
    const auto r = call(peer, frame);
    ASSERT_TRUE(r.has_rejection()) << r.DebugString();
    EXPECT_EQ(r.rejection().reason(), reason) << r.rejection().message();
    EXPECT_FALSE(r.rejection().retryable());
    EXPECT_THAT(r.rejection().message(), ::testing::HasSubstr(message_part));
    EXPECT_EQ(rejected(reason), before + 1);
    EXPECT_TRUE(log_.contains("_rejected reason=" + core::rejectReasonName(reason)));
  }

  TempDir dir_;
  ibc::test::TestCa ca_ = ibc::test::TestCa::create();
  ibc::test::TestCredential agent_ = ca_.issue(ibc::test::agentSpec("acme", "node01"));
  ibc::test::TestCredential support_ = ca_.issue(ibc::test::supportSpec("alice"));
  CapturedLog log_;
  ServiceOptions options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<core::SignatureVerifier> verifier_;
  std::unique_ptr<Service> service_;
};

}  // namespace ibc::collector::test
