#include "ibc/collector/service/service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <tuple>

#include "collector_test_support.h"
#include "ibc/collector/service/requests.h"
#include "ibc/core/frame.h"
#include "ibc/core/snapshot_file.h"
#include "test_pki.h"

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using namespace ibc::test;  // the test PKI and the collector these tests run
using std::chrono::hours;

const auto kNow = std::chrono::system_clock::now();

Peer peerFor(const ibc::test::TestCredential& cred) {
  auto id = core::certificateIdentity(cred.certificate_der);
  EXPECT_TRUE(id.ok());
  return Peer{*id, "127.0.0.1:4000"};
}

v1::SignedSnapshot signWith(const ibc::test::TestCredential& cred, const v1::Snapshot& s) {
  auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
  EXPECT_TRUE(signer.ok());
  return *signer->sign(s);
}

std::string uploadFrame(const v1::SignedSnapshot& env, uint64_t id = 7) {
  v1::CollectorRequest r;
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

  v1::CollectorResponse call(const Peer& peer, std::string frame) {
    auto done = std::make_shared<std::promise<v1::CollectorResponse>>();
    auto future = done->get_future();
    service_->handle(peer, std::move(frame),
                     [done](v1::CollectorResponse r) { done->set_value(r); });
    EXPECT_EQ(future.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    return future.get();
  }

  v1::CollectorResponse query(const Peer& peer, v1::CollectorRequest r) {
    return call(peer, r.SerializeAsString());
  }

  uint64_t rejected(v1::RejectReason reason) const {
    const auto stats = service_->stats();
    for (const auto& r : stats.rejections()) {
      if (r.reason() == reason) return r.count();
    }
    return 0;
  }

  // Uploads `env` as `peer` and expects a rejection for `reason`, logged and counted.
  void expectRejected(const Peer& peer, const std::string& frame, v1::RejectReason reason,
                      const std::string& message_part) {
    const uint64_t before = rejected(reason);
    const auto r = call(peer, frame);
    ASSERT_TRUE(r.has_rejection()) << r.DebugString();
    EXPECT_EQ(r.rejection().reason(), reason) << r.rejection().message();
    EXPECT_FALSE(r.rejection().retryable());
    EXPECT_THAT(r.rejection().message(), HasSubstr(message_part));
    EXPECT_EQ(rejected(reason), before + 1);
    EXPECT_TRUE(log_.contains("_rejected reason=" + core::rejectReasonName(reason)));
  }

  test::TempDir dir_;
  TestCa ca_ = TestCa::create();
  ibc::test::TestCredential agent_ = ca_.issue(agentSpec("acme", "node01"));
  ibc::test::TestCredential support_ = ca_.issue(ibc::test::supportSpec("alice"));
  test::CapturedLog log_;
  ServiceOptions options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<core::SignatureVerifier> verifier_;
  std::unique_ptr<Service> service_;
};

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

TEST_F(ServiceTest, AgentsReadNothingAndSupportReadsEveryTenant) {
  const auto acme = signWith(agent_, test::makeSnapshot("node01", "77", 1000));
  const auto globex_agent = ca_.issue(agentSpec("globex", "g1"));
  const auto globex = signWith(globex_agent, test::makeSnapshot("g1", "77", 1000));
  ASSERT_TRUE(call(peerFor(agent_), uploadFrame(acme)).has_ack());
  ASSERT_TRUE(call(peerFor(globex_agent), uploadFrame(globex)).has_ack());

  v1::CollectorRequest jobs;
  jobs.mutable_list_jobs()->set_tenant("acme");
  v1::CollectorRequest fetch;
  fetch.mutable_fetch()->set_snapshot_id(core::snapshotId(acme));
  v1::CollectorRequest stats;
  stats.mutable_stats();
  for (const auto& request : {jobs, fetch, stats}) {
    const auto r = query(peerFor(agent_), request);
    ASSERT_TRUE(r.has_rejection());
    EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_FORBIDDEN);
  }

  const Peer support = peerFor(support_);
  const auto listed = query(support, jobs);
  ASSERT_TRUE(listed.has_jobs());
  ASSERT_EQ(listed.jobs().jobs_size(), 1);
  EXPECT_EQ(listed.jobs().jobs(0).job_id(), "77");

  v1::CollectorRequest every_tenant;
  every_tenant.mutable_list_snapshots()->set_job_id("77");
  const auto both = query(support, every_tenant);
  ASSERT_TRUE(both.has_snapshots());
  EXPECT_EQ(both.snapshots().snapshots_size(), 2);

  const auto got = query(support, fetch);
  ASSERT_TRUE(got.has_snapshot());
  EXPECT_EQ(got.snapshot().signed_snapshot(), acme.SerializeAsString());
  EXPECT_EQ(got.snapshot().info().tenant(), "acme");
  EXPECT_TRUE(log_.contains("event=snapshot_read snapshot=" + core::snapshotId(acme)));

  v1::CollectorRequest nodes;
  nodes.mutable_list_nodes()->set_tenant("globex");
  const auto gn = query(support, nodes);
  ASSERT_TRUE(gn.has_nodes());
  ASSERT_EQ(gn.nodes().nodes_size(), 1);
  EXPECT_EQ(gn.nodes().nodes(0).node(), "g1");

  const auto st = query(support, stats);
  ASSERT_TRUE(st.has_stats());
  EXPECT_EQ(st.stats().uploads_stored(), 2u);
  EXPECT_GE(st.stats().write_batches(), 1u);
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

TEST_F(ServiceTest, UnknownIdsAreNotFoundAndBadIdsMalformed) {
  const Peer support = peerFor(support_);
  v1::CollectorRequest fetch;
  fetch.mutable_fetch()->set_snapshot_id(std::string(64, 'a'));
  auto r = query(support, fetch);
  ASSERT_TRUE(r.has_rejection());
  EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  fetch.mutable_fetch()->set_snapshot_id("zz");
  r = query(support, fetch);
  EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
  v1::CollectorRequest jobs;
  jobs.mutable_list_jobs();
  EXPECT_EQ(query(support, jobs).rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
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

// --- Cases (docs/security.md) ---

class CaseTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    const auto node02 = ca_.issue(agentSpec("acme", "node02"));
    for (const auto& [cred, node, t] :
         {std::tuple{agent_, "node01", 1000}, std::tuple{agent_, "node01", 2000},
          std::tuple{node02, "node02", 1500}}) {
      const auto env = signWith(cred, test::makeSnapshot(node, "77", t));
      ASSERT_TRUE(call(peerFor(cred), uploadFrame(env)).has_ack());
      ids_[std::string(node) + "@" + std::to_string(t)] = core::snapshotId(env);
    }
    const auto globex_agent = ca_.issue(agentSpec("globex", "g1"));
    const auto globex = signWith(globex_agent, test::makeSnapshot("g1", "77", 1000));
    ASSERT_TRUE(call(peerFor(globex_agent), uploadFrame(globex)).has_ack());
    globex_id_ = core::snapshotId(globex);
  }

  v1::CollectorResponse createForJob(const std::string& tenant, const std::string& job) {
    v1::CollectorRequest r;
    r.mutable_create_case()->set_tenant(tenant);
    r.mutable_create_case()->set_job_id(job);
    r.mutable_create_case()->set_title("slow all_reduce on node02");
    r.mutable_create_case()->add_nodes("node02");
    r.mutable_create_case()->add_finding_codes("PHY_ERRORS");
    r.mutable_create_case()->set_note("customer reports 40% lower busbw");
    return query(peerFor(support_), r);
  }

  v1::CollectorResponse update(const std::function<void(v1::UpdateCaseRequest&)>& fill,
                               const Peer* as = nullptr) {
    v1::CollectorRequest r;
    fill(*r.mutable_update_case());
    return query(as != nullptr ? *as : peerFor(support_), r);
  }

  std::map<std::string, std::string> ids_;
  std::string globex_id_;
};

TEST_F(CaseTest, ACaseForAJobCoversTheNewestSnapshotOfEveryNode) {
  const auto r = createForJob("acme", "77");
  ASSERT_TRUE(r.has_case_info()) << r.DebugString();
  const auto& c = r.case_info();
  EXPECT_EQ(c.case_id().rfind("case-", 0), 0u) << c.case_id();
  EXPECT_EQ(c.tenant(), "acme");
  EXPECT_EQ(c.state(), v1::CASE_STATE_OPEN);
  EXPECT_EQ(c.revision(), 1u);
  EXPECT_EQ(c.created_by(), "alice");
  std::vector<std::string> want = {ids_["node01@2000"], ids_["node02@1500"]};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(std::vector<std::string>(c.snapshot_ids().begin(), c.snapshot_ids().end()), want);
  ASSERT_EQ(c.notes_size(), 1);
  EXPECT_EQ(c.notes(0).author(), "alice");
  EXPECT_TRUE(log_.contains("event=case_created case=" + c.case_id() + " tenant=acme job=77"));

  // Stored: fetch by id alone and with its tenant; another tenant does not see it.
  v1::CollectorRequest fetch;
  fetch.mutable_fetch_case()->set_case_id(c.case_id());
  const auto got = query(peerFor(support_), fetch);
  ASSERT_TRUE(got.has_case_info());
  EXPECT_EQ(got.case_info().SerializeAsString(), c.SerializeAsString());
  fetch.mutable_fetch_case()->set_tenant("globex");
  const auto other = query(peerFor(support_), fetch);
  ASSERT_TRUE(other.has_rejection());
  EXPECT_EQ(other.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
}

TEST_F(CaseTest, OnlySupportCertificatesWorkOnCases) {
  v1::CollectorRequest create;
  create.mutable_create_case()->set_tenant("acme");
  create.mutable_create_case()->set_job_id("77");
  v1::CollectorRequest list;
  list.mutable_list_cases();
  for (const auto& request : {create, list}) {
    const auto r = query(peerFor(agent_), request);
    ASSERT_TRUE(r.has_rejection());
    EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_FORBIDDEN);
  }
  EXPECT_EQ(store_->listCases(v1::ListCasesRequest(), 10)->cases_size(), 0);
}

TEST_F(CaseTest, ACaseNeverCoversAnotherTenantsSnapshot) {
  v1::CollectorRequest r;
  r.mutable_create_case()->set_tenant("acme");
  r.mutable_create_case()->add_snapshot_ids(ids_["node01@1000"]);
  r.mutable_create_case()->add_snapshot_ids(globex_id_);
  const auto refused = query(peerFor(support_), r);
  ASSERT_TRUE(refused.has_rejection());
  EXPECT_EQ(refused.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  EXPECT_THAT(refused.rejection().message(), HasSubstr("of tenant acme"));

  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  const auto added = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(made.case_info().case_id());
    u.add_add_snapshot_ids(globex_id_);
  });
  ASSERT_TRUE(added.has_rejection());
  EXPECT_EQ(added.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  EXPECT_EQ((*store_->getCase("acme", made.case_info().case_id()))->revision(), 1u);
}

TEST_F(CaseTest, UpdatesChangeStateAddNotesAttachHostResultsAndDetectConflicts) {
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  const std::string id = made.case_info().case_id();

  const auto escalated = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(id);
    u.set_tenant("acme");
    u.set_expected_revision(1);
    u.set_state(v1::CASE_STATE_ESCALATED);
    u.set_add_note("handed to the host team");
    u.add_add_snapshot_ids(ids_["node01@1000"]);
    auto* h = u.mutable_attach_host_result();
    h->set_host("hv-17");
    h->set_report_json(R"({"nodes":[],"findings":[]})");
  });
  ASSERT_TRUE(escalated.has_case_info()) << escalated.DebugString();
  const auto& c = escalated.case_info();
  EXPECT_EQ(c.revision(), 2u);
  EXPECT_EQ(c.state(), v1::CASE_STATE_ESCALATED);
  EXPECT_EQ(c.notes_size(), 2);
  EXPECT_EQ(c.snapshot_ids_size(), 3);
  ASSERT_EQ(c.host_results_size(), 1);
  EXPECT_EQ(c.host_results(0).attached_by(), "alice");
  EXPECT_TRUE(log_.contains("event=case_updated case=" + id + " tenant=acme revision=2"));

  // Attaching for the same host again replaces that host's result.
  const auto again = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(id);
    u.mutable_attach_host_result()->set_host("hv-17");
    u.mutable_attach_host_result()->set_report_json(R"({"nodes":[1]})");
  });
  ASSERT_TRUE(again.has_case_info());
  ASSERT_EQ(again.case_info().host_results_size(), 1);
  EXPECT_EQ(again.case_info().host_results(0).report_json(), R"({"nodes":[1]})");

  // A writer that read revision 1 lost the race: CONFLICT, nothing written.
  const auto stale = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(id);
    u.set_expected_revision(1);
    u.set_state(v1::CASE_STATE_CLOSED);
  });
  ASSERT_TRUE(stale.has_rejection());
  EXPECT_EQ(stale.rejection().reason(), v1::REJECT_REASON_CONFLICT);
  EXPECT_EQ((*store_->getCase("", id))->state(), v1::CASE_STATE_ESCALATED);

  // Open and escalated cases protect their snapshots from retention; closed ones do not.
  EXPECT_EQ(store_->snapshotsOfOpenCases()->size(), 3u);
  ASSERT_TRUE(update([&](v1::UpdateCaseRequest& u) {
                u.set_case_id(id);
                u.set_state(v1::CASE_STATE_CLOSED);
              }).has_case_info());
  EXPECT_TRUE(store_->snapshotsOfOpenCases()->empty());
}

TEST_F(CaseTest, BadCaseRequestsAreRefusedWithWhatIsWrong) {
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  const std::string id = made.case_info().case_id();
  struct Bad {
    std::function<void(v1::UpdateCaseRequest&)> fill;
    v1::RejectReason reason;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {[&](auto& u) { u.set_case_id("case-nope"); }, v1::REJECT_REASON_NOT_FOUND, "no case"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_tenant("globex");
       },
       v1::REJECT_REASON_NOT_FOUND, "of tenant globex"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_add_note(std::string("bell\x07"));
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "control character"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_add_note(std::string(20000, 'x'));
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "at most"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.add_add_nodes("../etc");
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "node"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_state(static_cast<v1::CaseState>(42));
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "unknown case state"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.mutable_attach_host_result()->set_host("hv-1");
         u.mutable_attach_host_result()->set_report_json("not json");
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "host-inspect"},
  };
  for (const auto& b : bad) {
    const auto r = update(b.fill);
    ASSERT_TRUE(r.has_rejection()) << b.message;
    EXPECT_EQ(r.rejection().reason(), b.reason) << r.rejection().message();
    EXPECT_THAT(r.rejection().message(), HasSubstr(b.message));
  }
  EXPECT_EQ((*store_->getCase("acme", id))->revision(), 1u);

  const auto no_job = createForJob("acme", "404");
  ASSERT_TRUE(no_job.has_rejection());
  EXPECT_EQ(no_job.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  EXPECT_THAT(no_job.rejection().message(), HasSubstr("has no snapshots"));
}

TEST_F(CaseTest, CasesListByTenantJobAndStateWithPaging) {
  std::vector<std::string> acme_ids;
  for (int i = 0; i < 5; ++i) {
    const auto r = createForJob("acme", "77");
    ASSERT_TRUE(r.has_case_info());
    acme_ids.push_back(r.case_info().case_id());
  }
  ASSERT_TRUE(createForJob("globex", "77").has_case_info());
  ASSERT_TRUE(update([&](v1::UpdateCaseRequest& u) {
                u.set_case_id(acme_ids[0]);
                u.set_state(v1::CASE_STATE_CLOSED);
              }).has_case_info());

  v1::CollectorRequest list;
  list.mutable_list_cases()->set_tenant("acme");
  list.mutable_list_cases()->set_limit(2);
  std::vector<std::string> seen;
  for (int page = 0; page < 10; ++page) {
    const auto r = query(peerFor(support_), list);
    ASSERT_TRUE(r.has_cases());
    for (const auto& c : r.cases().cases()) {
      EXPECT_EQ(c.tenant(), "acme");
      EXPECT_EQ(c.notes_size(), 0);  // listings leave notes out
      seen.push_back(c.case_id());
    }
    if (!r.cases().more()) break;
    list.mutable_list_cases()->set_after_case("acme/" + seen.back());
  }
  std::sort(acme_ids.begin(), acme_ids.end());
  EXPECT_EQ(seen, acme_ids);

  v1::CollectorRequest open;
  open.mutable_list_cases()->set_state(v1::CASE_STATE_OPEN);
  const auto r = query(peerFor(support_), open);
  ASSERT_TRUE(r.has_cases());
  EXPECT_EQ(r.cases().cases_size(), 5);  // 4 of acme, 1 of globex
}

TEST_F(CaseTest, CasesSurviveARestartOfTheStore) {
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  service_.reset();
  store_.reset();
  auto reopened = Store::open(dir_.path());
  ASSERT_TRUE(reopened.ok());
  auto got = (*reopened)->getCase("acme", made.case_info().case_id());
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->SerializeAsString(), made.case_info().SerializeAsString());
}

}  // namespace
}  // namespace ibc::collector
