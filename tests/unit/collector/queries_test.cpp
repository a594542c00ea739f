// Reads (service/queries.cpp): only support certificates list jobs, nodes and snapshots,
// fetch one snapshot and read the counters; every listing and fetch is scoped by the tenant
// it names, and a read of a tenant's snapshot is logged with who read it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "service_fixture.h"

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using namespace ibc::test;  // the test PKI
using test::peerFor;
using test::ServiceTest;
using test::signWith;
using test::uploadFrame;

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

// acme (job 77: node01, node02; job 78: node01) and globex (job 77: g1, whose job id and
// collection times equal acme's).
class Queries : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    const auto node02 = ca_.issue(agentSpec("acme", "node02"));
    const auto g1 = ca_.issue(agentSpec("globex", "g1"));
    for (const auto& [cred, node, job, t] :
         {std::tuple{agent_, "node01", "77", 1000}, std::tuple{node02, "node02", "77", 1000},
          std::tuple{agent_, "node01", "78", 2000}, std::tuple{g1, "g1", "77", 1000}}) {
      const auto env = signWith(cred, test::makeSnapshot(node, job, t));
      ASSERT_TRUE(call(peerFor(cred), uploadFrame(env)).has_ack());
      ids_.push_back(core::snapshotId(env));
    }
  }

  v1::CollectorResponse ask(const std::function<void(v1::CollectorRequest&)>& fill) {
    v1::CollectorRequest r;
    fill(r);
    return query(peerFor(support_), r);
  }

  std::vector<std::string> ids_;  // acme node01@77, node02@77, node01@78, globex g1@77
};

TEST_F(Queries, ListingsOfATenantHoldOnlyThatTenantsJobsNodesAndSnapshots) {
  const auto jobs = ask([](auto& r) { r.mutable_list_jobs()->set_tenant("globex"); });
  ASSERT_TRUE(jobs.has_jobs()) << jobs.DebugString();
  ASSERT_EQ(jobs.jobs().jobs_size(), 1);
  EXPECT_EQ(jobs.jobs().jobs(0).job_id(), "77");

  const auto nodes = ask([](auto& r) {
    r.mutable_list_nodes()->set_tenant("acme");
    r.mutable_list_nodes()->set_job_id("77");
  });
  ASSERT_TRUE(nodes.has_nodes()) << nodes.DebugString();
  std::vector<std::string> names;
  for (const auto& n : nodes.nodes().nodes()) names.push_back(n.node());
  EXPECT_EQ(names, (std::vector<std::string>{"node01", "node02"}));

  const auto snapshots = ask([](auto& r) {
    r.mutable_list_snapshots()->set_tenant("acme");
    r.mutable_list_snapshots()->set_job_id("77");
  });
  ASSERT_TRUE(snapshots.has_snapshots()) << snapshots.DebugString();
  std::vector<std::string> listed;
  for (const auto& s : snapshots.snapshots().snapshots()) {
    EXPECT_EQ(s.tenant(), "acme");
    listed.push_back(s.snapshot_id());
  }
  std::sort(listed.begin(), listed.end());
  std::vector<std::string> want = {ids_[0], ids_[1]};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(listed, want);

  const auto none = ask([](auto& r) { r.mutable_list_nodes()->set_tenant("initech"); });
  ASSERT_TRUE(none.has_nodes()) << none.DebugString();
  EXPECT_EQ(none.nodes().nodes_size(), 0);
}

TEST_F(Queries, ListingNodesWithoutATenantIsMalformed) {
  const auto r = ask([](auto& q) { q.mutable_list_nodes()->set_job_id("77"); });
  ASSERT_TRUE(r.has_rejection()) << r.DebugString();
  EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
  EXPECT_EQ(r.rejection().message(), "name a tenant");
  EXPECT_TRUE(log_.contains("event=request_rejected reason=" +
                            core::rejectReasonName(v1::REJECT_REASON_MALFORMED_REQUEST)));
}

TEST_F(Queries, AFetchNamingAnotherTenantIsNotFoundAndAReadIsLoggedWithItsReader) {
  const auto crossed = ask([&](auto& r) {
    r.mutable_fetch()->set_snapshot_id(ids_[3]);
    r.mutable_fetch()->set_tenant("acme");
  });
  ASSERT_TRUE(crossed.has_rejection()) << crossed.DebugString();
  EXPECT_EQ(crossed.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  EXPECT_EQ(crossed.rejection().message(), "no snapshot " + ids_[3] + " of tenant acme");
  EXPECT_FALSE(log_.contains("event=snapshot_read snapshot=" + ids_[3]));

  const auto own = ask([&](auto& r) {
    r.mutable_fetch()->set_snapshot_id(ids_[3]);
    r.mutable_fetch()->set_tenant("globex");
  });
  ASSERT_TRUE(own.has_snapshot()) << own.DebugString();
  EXPECT_EQ(own.snapshot().info().tenant(), "globex");
  v1::SignedSnapshot envelope;
  ASSERT_TRUE(envelope.ParseFromString(own.snapshot().signed_snapshot()));
  EXPECT_EQ(core::snapshotId(envelope), ids_[3]);
  EXPECT_TRUE(log_.contains("event=snapshot_read snapshot=" + ids_[3] +
                            " tenant=globex reader_peer=127.0.0.1:4000 reader_role=support "
                            "reader_cn=alice"));
}

TEST_F(Queries, AListLimitOfZeroTakesTheDefaultAndALargerOneIsCutToTheMaximum) {
  service_.reset();
  options_.default_list_limit = 1;
  options_.max_list_limit = 2;
  service_ = std::make_unique<Service>(
      *store_, *verifier_, log_, [] { return test::kNow; }, options_);
  const auto count = [&](uint32_t limit) {
    const auto r = ask([&](auto& q) {
      q.mutable_list_snapshots()->set_tenant("acme");
      q.mutable_list_snapshots()->set_limit(limit);
    });
    EXPECT_TRUE(r.has_snapshots()) << r.DebugString();
    return r.snapshots().snapshots_size();
  };
  EXPECT_EQ(count(0), 1);
  EXPECT_EQ(count(2), 2);
  EXPECT_EQ(count(1000), 2);
}

TEST_F(Queries, StatsAnswerTheServicesCounters) {
  ASSERT_TRUE(ask([](auto& r) { r.mutable_list_nodes(); }).has_rejection());
  const auto r = ask([](auto& q) { q.mutable_stats(); });
  ASSERT_TRUE(r.has_stats()) << r.DebugString();
  EXPECT_EQ(r.stats().uploads_stored(), 4u);
  EXPECT_EQ(r.stats().uploads_duplicate(), 0u);
  uint64_t malformed = 0;
  for (const auto& x : r.stats().rejections()) {
    if (x.reason() == v1::REJECT_REASON_MALFORMED_REQUEST) malformed = x.count();
  }
  EXPECT_EQ(malformed, 1u);
}

}  // namespace
}  // namespace ibc::collector
