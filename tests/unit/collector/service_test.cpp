#include "ibc/collector/service/service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "ibc/collector/service/requests.h"
#include "service_fixture.h"

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using namespace ibc::test;  // the test PKI and the collector these tests run
using std::chrono::hours;
using test::kNow;
using test::peerFor;
using test::ServiceTest;
using test::signWith;
using test::uploadFrame;

TEST_F(ServiceTest, AnAgentUploadIsAcknowledgedWithItsIdOnceStored) {
  const auto env = signWith(agent_, test::makeSnapshot("node01", "77", 1000));
  const auto r = call(peerFor(agent_), uploadFrame(env, 42));
  ASSERT_TRUE(r.has_ack()) << r.DebugString();
  EXPECT_EQ(r.request_id(), 42u);
  EXPECT_EQ(r.ack().snapshot_id(), core::snapshotId(env));
  EXPECT_FALSE(r.ack().already_stored());
  auto stored = store_->get(core::snapshotId(env));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->envelope, env.SerializeAsString());
  EXPECT_EQ((*stored)->info.tenant(), "acme");
  EXPECT_EQ((*stored)->info.job_id(), "77");
  EXPECT_EQ((*stored)->info.node(), "node01");
  EXPECT_EQ((*stored)->info.collected_at_unix_ms(), 1000);
  EXPECT_THAT((*stored)->info.signer(), HasSubstr("CN=node01"));
  EXPECT_EQ(service_->stats().uploads_stored(), 1u);
}

TEST_F(ServiceTest, TheSameSnapshotTwiceIsAcknowledgedAsAlreadyStored) {
  const auto env = signWith(agent_, test::makeSnapshot("node01", "77", 1000));
  ASSERT_TRUE(call(peerFor(agent_), uploadFrame(env)).has_ack());
  const auto again = call(peerFor(agent_), uploadFrame(env));
  ASSERT_TRUE(again.has_ack());
  EXPECT_TRUE(again.ack().already_stored());
  EXPECT_EQ(service_->stats().uploads_stored(), 1u);
  EXPECT_EQ(service_->stats().uploads_duplicate(), 1u);
}

TEST_F(ServiceTest, EveryBadUploadIsRejectedWithItsReasonLoggedAndCounted) {
  const Peer agent = peerFor(agent_);
  const auto snapshot = test::makeSnapshot("node01", "77", 1000);

  auto tampered = signWith(agent_, snapshot);
  tampered.mutable_snapshot()->back() ^= 1;
  expectRejected(agent, uploadFrame(tampered), v1::REJECT_REASON_BAD_SIGNATURE, "does not match");

  TestCa other = TestCa::create("other");
  expectRejected(agent, uploadFrame(signWith(other.issue(agentSpec("acme", "node01")), snapshot)),
                 v1::REJECT_REASON_UNKNOWN_CA, "issuer");

  auto spec = agentSpec("acme", "old");
  spec.not_before = kNow - hours(48);
  spec.not_after = kNow - hours(1);
  expectRejected(agent, uploadFrame(signWith(ca_.issue(spec), snapshot)),
                 v1::REJECT_REASON_CERTIFICATE_EXPIRED, "expired");

  expectRejected(agent, uploadFrame(core::wrapUnsigned(snapshot)), v1::REJECT_REASON_UNSIGNED,
                 "not signed");

  expectRejected(agent, uploadFrame(signWith(ca_.issue(agentSpec("globex", "g1")), snapshot)),
                 v1::REJECT_REASON_TENANT_MISMATCH, "'globex'");

  expectRejected(agent, uploadFrame(signWith(support_, snapshot)),
                 v1::REJECT_REASON_SIGNER_NOT_AN_AGENT, "not an agent");

  expectRejected(peerFor(support_), uploadFrame(signWith(agent_, snapshot)),
                 v1::REJECT_REASON_FORBIDDEN, "only agent certificates upload");

  v1::CollectorRequest not_an_envelope;
  not_an_envelope.mutable_upload()->set_signed_snapshot("\xff\xff\xff");
  expectRejected(agent, not_an_envelope.SerializeAsString(), v1::REJECT_REASON_MALFORMED_REQUEST,
                 "envelope");
  expectRejected(agent, std::string("\xff\x01garbage", 9), v1::REJECT_REASON_MALFORMED_REQUEST,
                 "not a CollectorRequest");
  expectRejected(agent, v1::CollectorRequest().SerializeAsString(),
                 v1::REJECT_REASON_UNSUPPORTED_REQUEST, "unknown request kind");

  EXPECT_EQ(service_->stats().uploads_stored(), 0u);
  const std::string line = service_->statsLine();
  for (const char* name : {"bad_signature=1", "unknown_ca=1", "certificate_expired=1", "unsigned=1",
                           "tenant_mismatch=1", "signer_not_an_agent=1", "forbidden=1",
                           "malformed_request=2", "unsupported_request=1"}) {
    EXPECT_THAT(line, HasSubstr(name)) << name << " in " << line;
  }
}

// Issue 11 #1: the id names the whole signed envelope. A tenant holding a copy of another
// tenant's snapshot that re-signs its inner bytes (with a certificate of the same node
// name) and uploads first gets its own id; the victim's later upload is stored for the
// victim, not acknowledged "already stored", and fetch by each id returns its own envelope.
TEST_F(ServiceTest, AReSignedCopyOfAnotherTenantsSnapshotCannotTakeOverItsId) {
  const auto inner = test::makeSnapshot("node01", "77", 1000);
  const auto victim = signWith(agent_, inner);
  const auto thief_agent = ca_.issue(agentSpec("globex", "node01"));
  const auto copy = signWith(thief_agent, inner);
  ASSERT_EQ(copy.snapshot(), victim.snapshot());
  const auto first = call(peerFor(thief_agent), uploadFrame(copy));
  ASSERT_TRUE(first.has_ack()) << first.DebugString();
  const auto second = call(peerFor(agent_), uploadFrame(victim));
  ASSERT_TRUE(second.has_ack()) << second.DebugString();
  EXPECT_FALSE(second.ack().already_stored()) << "the victim's snapshot was not stored";
  EXPECT_NE(first.ack().snapshot_id(), second.ack().snapshot_id());
  EXPECT_EQ(second.ack().snapshot_id(), core::snapshotId(victim));
  auto stored = store_->get(second.ack().snapshot_id());
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->info.tenant(), "acme");
  EXPECT_EQ((*stored)->envelope, victim.SerializeAsString());
  // A support fetch naming the tenant never returns another tenant's envelope by id.
  v1::CollectorRequest fetch;
  fetch.mutable_fetch()->set_snapshot_id(first.ack().snapshot_id());
  fetch.mutable_fetch()->set_tenant("acme");
  const auto cross = call(peerFor(support_), fetch.SerializeAsString());
  ASSERT_TRUE(cross.has_rejection()) << cross.DebugString();
  EXPECT_EQ(cross.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  fetch.mutable_fetch()->set_tenant("globex");
  const auto own = call(peerFor(support_), fetch.SerializeAsString());
  ASSERT_TRUE(own.has_snapshot()) << own.DebugString();
  EXPECT_EQ(own.snapshot().signed_snapshot(), copy.SerializeAsString());
}

// Issue 11 #7: only a node's own certificate signs its snapshot.
TEST_F(ServiceTest, ASnapshotOfAnotherNodeIsRefusedAsNodeMismatch) {
  for (const std::string node :
       {"node02", "../../x", "/abs", "node01\x1b[31m", "", "node01/../node02", "xnode01"}) {
    expectRejected(peerFor(agent_),
                   uploadFrame(signWith(agent_, test::makeSnapshot(node, "77", 1000))),
                   v1::REJECT_REASON_NODE_MISMATCH, "only a node's own certificate");
  }
  // The node's fully qualified name is the same node.
  const auto fqdn =
      call(peerFor(agent_),
           uploadFrame(signWith(agent_, test::makeSnapshot("node01.cluster.local", "77", 1000))));
  EXPECT_TRUE(fqdn.has_ack()) << fqdn.DebugString();
}

// Issue 11 #8: bytes nobody signed are never stored or served.
TEST_F(ServiceTest, UnknownFieldsOrANonCanonicalEnvelopeAreRefused) {
  const auto env = signWith(agent_, test::makeSnapshot("node01", "77", 1000));
  std::string extra = env.SerializeAsString();
  // Field 15, length-delimited, 1 MiB: unknown to SignedSnapshot.
  extra += '\x7a';
  const std::size_t n = 1u << 20;
  extra += static_cast<char>(0x80 | (n & 0x7f));
  extra += static_cast<char>(0x80 | ((n >> 7) & 0x7f));
  extra += static_cast<char>((n >> 14) & 0x7f);
  extra.append(n, 'x');
  v1::CollectorRequest with_extra;
  with_extra.mutable_upload()->set_signed_snapshot(extra);
  expectRejected(peerFor(agent_), with_extra.SerializeAsString(),
                 v1::REJECT_REASON_MALFORMED_REQUEST, "unknown field");
  // The signature field given twice: parses to the same envelope, but is another byte
  // string (and would be another id).
  std::string twice = env.SerializeAsString();
  v1::SignedSnapshot sig_only;
  sig_only.set_signature(env.signature());
  twice += sig_only.SerializeAsString();
  v1::CollectorRequest repeated;
  repeated.mutable_upload()->set_signed_snapshot(twice);
  expectRejected(peerFor(agent_), repeated.SerializeAsString(), v1::REJECT_REASON_MALFORMED_REQUEST,
                 "canonical");
  EXPECT_EQ(service_->stats().uploads_stored(), 0u);
}

// The table decides who may send what: every kind refuses every role its row does not
// allow, FORBIDDEN, counted and logged, with the message the service gave before the table.
TEST_F(ServiceTest, EveryKindRefusesTheRolesItsRowDoesNotAllow) {
  const auto* kinds = v1::CollectorRequest::descriptor()->FindOneofByName("kind");
  for (int i = 0; i < kinds->field_count(); ++i) {
    const auto* field = kinds->field(i);
    v1::CollectorRequest request;
    request.set_request_id(42);
    request.GetReflection()->MutableMessage(&request, field);  // selects the kind
    const auto* row = findRequestKind(static_cast<v1::CollectorRequest::KindCase>(field->number()));
    ASSERT_NE(row, nullptr) << field->name();
    const bool upload = field->name() == "upload";
    for (auto role : {core::CertificateRole::Agent, core::CertificateRole::Support,
                      core::CertificateRole::Provider, core::CertificateRole::Collector,
                      core::CertificateRole::Other}) {
      if (row->allowed.contains(role)) continue;
      const std::string role_name(core::certificateRoleName(role));
      Peer peer{core::CertificateIdentity{}, "127.0.0.1:4000"};
      peer.identity.role = role;
      peer.identity.tenant = "acme";
      peer.identity.name = "someone";
      const uint64_t before = rejected(v1::REJECT_REASON_FORBIDDEN);
      const auto r = query(peer, request);
      ASSERT_TRUE(r.has_rejection()) << field->name() << " as " << role_name;
      EXPECT_EQ(r.request_id(), 42u);
      EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_FORBIDDEN);
      EXPECT_EQ(r.rejection().message(),
                upload ? "only agent certificates upload snapshots; this is a " + role_name +
                             " certificate"
                       : "only support certificates read and work on cases; " + role_name +
                             " certificates read nothing");
      EXPECT_EQ(rejected(v1::REJECT_REASON_FORBIDDEN), before + 1);
      const std::string event = upload ? "event=upload_rejected" : "event=request_rejected";
      EXPECT_TRUE(
          log_.contains(event + " reason=" + core::rejectReasonName(v1::REJECT_REASON_FORBIDDEN)));
      if (!upload) EXPECT_TRUE(log_.contains("request=" + field->name()));
    }
  }
}

TEST_F(ServiceTest, AFullIngestQueueAnswersOverloadedAndRetryable) {
  service_.reset();
  options_.max_queued_uploads = 0;
  service_ = std::make_unique<Service>(
      *store_, *verifier_, log_, [] { return kNow; }, options_);
  const auto r =
      call(peerFor(agent_), uploadFrame(signWith(agent_, test::makeSnapshot("node01", "1", 1))));
  ASSERT_TRUE(r.has_rejection());
  EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_OVERLOADED);
  EXPECT_TRUE(r.rejection().retryable());
}

TEST_F(ServiceTest, AfterADrainUploadsAreAnsweredShuttingDown) {
  const auto first = signWith(agent_, test::makeSnapshot("node01", "1", 1));
  ASSERT_TRUE(call(peerFor(agent_), uploadFrame(first)).has_ack());
  service_->drain();
  const auto r =
      call(peerFor(agent_), uploadFrame(signWith(agent_, test::makeSnapshot("node01", "1", 2))));
  ASSERT_TRUE(r.has_rejection());
  EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_SHUTTING_DOWN);
  EXPECT_TRUE(r.rejection().retryable());
  EXPECT_TRUE((*store_->get(core::snapshotId(first)))->envelope.size() > 0);
}

TEST_F(ServiceTest, ConcurrentUploadsAreAllAcknowledgedAndStored) {
  std::vector<v1::SignedSnapshot> envs;
  for (int i = 0; i < 60; ++i) {
    envs.push_back(signWith(agent_, test::makeSnapshot("node01", "9", i)));
  }
  std::vector<std::future<v1::CollectorResponse>> replies;
  std::vector<std::thread> threads;
  std::mutex m;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 60; i += 3) {
        auto p = std::make_shared<std::promise<v1::CollectorResponse>>();
        {
          std::lock_guard<std::mutex> lock(m);
          replies.push_back(p->get_future());
        }
        service_->handle(peerFor(agent_), uploadFrame(envs[static_cast<std::size_t>(i)]),
                         [p](v1::CollectorResponse r) { p->set_value(r); });
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& f : replies) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    EXPECT_TRUE(f.get().has_ack());
  }
  const auto stats = service_->stats();
  EXPECT_EQ(stats.uploads_stored(), 60u);
  EXPECT_LE(stats.write_batches(), 60u);
  v1::ListSnapshotsRequest q;
  q.set_tenant("acme");
  q.set_job_id("9");
  EXPECT_EQ(store_->listSnapshots(q, 100)->snapshots_size(), 60);
}

}  // namespace
}  // namespace ibc::collector
