// The collector client (client/collector_client.h) against a real collector in the test
// process: pipelined calls and TLS 1.3 session resumption.

#include "ibc/client/collector_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "ibc/core/snapshot_file.h"
#include "in_process_collector.h"

namespace ibc::client {
namespace {

namespace v1 = ::ibcollect::v1;
using namespace ibc::test;  // the test PKI and the collector these tests run

// A collector in the test process and acme's node01, whose agent certificate it trusts.
class CollectorClient : public ::testing::Test {
 protected:
  InProcessCollector collector;
  const TestCredential node01 = collector.ca().issue(agentSpec("acme", "node01"));
};

TEST_F(CollectorClient, APipelinedCallReturnsEachRequestsOwnAnswerInOrder) {
  auto c = collector.connect(node01);
  ASSERT_NE(c, nullptr);
  std::vector<v1::CollectorRequest> requests;
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    auto env = signedSnapshot(node01, "node01", "501", 1000 + i);
    if (i == 17) env.mutable_snapshot()->back() ^= 1;  // its signature no longer holds
    ids.push_back(core::snapshotId(env));
    requests.push_back(uploadOf(env));
  }
  const auto results = c->callPipelined(requests, {8, 1u << 20});
  ASSERT_EQ(results.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].error().message;
    if (i == 17) {
      EXPECT_EQ(results[i]->rejection().reason(), v1::REJECT_REASON_BAD_SIGNATURE);
    } else {
      EXPECT_EQ(results[i]->ack().snapshot_id(), ids[i]) << i;
    }
  }
  EXPECT_EQ(collector.service().stats().uploads_stored(), 49u);
  // Request ids go on from there: a plain call on the same connection is matched too.
  auto after = c->call(uploadOf(signedSnapshot(node01, "node01", "501", 5000)));
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(after->has_ack());
}

TEST_F(CollectorClient, TightLimitsStillDeliverEveryRequestOneAtATime) {
  auto c = collector.connect(node01);
  ASSERT_NE(c, nullptr);
  std::vector<v1::CollectorRequest> requests;
  for (int i = 0; i < 5; ++i) {
    requests.push_back(uploadOf(signedSnapshot(node01, "node01", "502", i, 64u << 10)));
  }
  // Each request is larger than the byte limit: it is sent alone, never not at all.
  const auto results = c->callPipelined(requests, {4, 1024});
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->has_ack());
  }
  EXPECT_TRUE(c->callPipelined({}).empty());
}

TEST_F(CollectorClient, AfterAFrameRejectionTheRequestsNotAnsweredFailWithTheConnection) {
  auto c = collector.connect(node01);
  ASSERT_NE(c, nullptr);
  v1::CollectorRequest empty_upload;
  empty_upload.mutable_upload();  // carries no envelope: MALFORMED_REQUEST ends the connection
  const auto results =
      c->callPipelined({uploadOf(signedSnapshot(node01, "node01", "503", 1)), empty_upload,
                        uploadOf(signedSnapshot(node01, "node01", "503", 2))});
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0].ok());
  EXPECT_TRUE(results[0]->has_ack());
  ASSERT_TRUE(results[1].ok());
  EXPECT_EQ(results[1]->rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
  ASSERT_FALSE(results[2].ok());
  EXPECT_EQ(results[2].error().code, core::ErrorCode::Io);
}

// The collector authorises by the client certificate; a resumed TLS 1.3 session exchanges
// none, so the collector must know the peer from the ticket: the upload is accepted as
// acme's node01 (the signer's tenant must be the peer's), logged with that identity.
TEST_F(CollectorClient, ASecondConnectionResumesTheSessionAndTheCollectorStillKnowsThePeer) {
  TlsCollectorConnector connector(collector.endpoint(), collector.credentials(node01));
  std::string second_id;
  for (int round = 0; round < 2; ++round) {
    auto session = connector.connect();
    ASSERT_TRUE(session.ok()) << session.error().message;
    auto* connection = dynamic_cast<CollectorConnection*>(session->get());
    ASSERT_NE(connection, nullptr);
    EXPECT_EQ(connection->resumedSession(), round == 1);
    const auto env = signedSnapshot(node01, "node01", "504", round);
    auto ack = (*session)->call(uploadOf(env));
    ASSERT_TRUE(ack.ok()) << ack.error().message;
    ASSERT_TRUE(ack->has_ack()) << ack->DebugString();
    if (round == 1) second_id = ack->ack().snapshot_id();
  }
  const auto lines = collector.log().matching(
      {"event=upload_accepted", "snapshot=" + second_id, "tenant=acme", "role=agent", "cn=node01"});
  EXPECT_EQ(lines.size(), 1u);
}

TEST_F(CollectorClient, AResumedSessionKeepsItsRoleSupportReadsAgentsDoNot) {
  const auto alice = collector.ca().issue(ibc::test::supportSpec("alice"));
  v1::CollectorRequest jobs;
  jobs.mutable_list_jobs()->set_tenant("acme");
  for (const auto* who : {&alice, &node01}) {
    auto sessions = std::make_shared<TlsSessionCache>();
    for (int round = 0; round < 2; ++round) {
      auto c = collector.connect(*who, sessions);
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(c->resumedSession(), round == 1);
      auto r = c->call(jobs);
      ASSERT_TRUE(r.ok()) << r.error().message;
      if (who == &alice) {
        EXPECT_TRUE(r->has_jobs()) << r->DebugString();
      } else {
        EXPECT_EQ(r->rejection().reason(), v1::REJECT_REASON_FORBIDDEN) << r->DebugString();
      }
    }
  }
}

// A resumed session exchanges no certificate, so OpenSSL checks none: the collector refuses
// one whose certificate has expired since the full handshake.
TEST_F(CollectorClient, AResumedSessionWhoseCertificateHasExpiredSinceIsRefused) {
  auto spec = agentSpec("acme", "node01");
  spec.not_after = std::chrono::system_clock::now() + std::chrono::seconds(2);
  const auto short_lived = collector.ca().issue(spec);
  auto sessions = std::make_shared<TlsSessionCache>();
  {
    auto c = collector.connect(short_lived, sessions);
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->call(uploadOf(signedSnapshot(short_lived, "node01", "506", 1))).ok());
  }
  ASSERT_FALSE(sessions->empty());
  // Certificate times have a resolution of one second: wait until it is past for sure (the
  // test waits for the clock, not for another thread).
  std::this_thread::sleep_until(spec.not_after + std::chrono::milliseconds(1100));
  auto c = CollectorConnection::open(collector.endpoint(), collector.credentials(short_lived), {},
                                     sessions);
  if (c.ok()) {
    // TLS 1.3: the handshake ends on the client's side before the collector has judged the
    // identity; the collector then closes the connection.
    EXPECT_TRUE((*c)->resumedSession());
    auto r = (*c)->call(uploadOf(signedSnapshot(short_lived, "node01", "506", 2)));
    EXPECT_FALSE(r.ok());
  }
  EXPECT_EQ(collector.log()
                .matching({"event=connection_rejected", "reason=certificate_expired",
                           "has expired since the session it resumes was established"})
                .size(),
            1u);
  EXPECT_EQ(collector.service().stats().uploads_stored(), 1u);
}

// Its own two collectors (one CA): a restart between the connections.
TEST(CollectorClientRestart, ATicketTheCollectorCannotUseIsAFullHandshakeNotAnError) {
  auto sessions = std::make_shared<TlsSessionCache>();
  ibc::test::TestCa ca = ibc::test::TestCa::create();
  const auto node01 = ca.issue(agentSpec("acme", "node01"));
  {
    InProcessCollector first({}, ca);
    auto c = first.connect(node01, sessions);
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->call(uploadOf(signedSnapshot(node01, "node01", "505", 1))).ok());
  }
  ASSERT_FALSE(sessions->empty());
  // A restarted collector has new ticket keys.
  InProcessCollector second({}, ca);
  auto c = second.connect(node01, sessions);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->resumedSession());
  auto ack = c->call(uploadOf(signedSnapshot(node01, "node01", "505", 2)));
  ASSERT_TRUE(ack.ok()) << ack.error().message;
  EXPECT_TRUE(ack->has_ack());
}

}  // namespace
}  // namespace ibc::client
