// The typed collector calls (client/collector_api.h) against a real collector in the test
// process: every list paged through to its end, answers of the kind asked, rejections as
// errors that leave the connection usable.

#include "ibc/client/collector_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ibc/core/snapshot_file.h"
#include "in_process_collector.h"

using ::testing::HasSubstr;

namespace ibc::client {
namespace {

namespace v1 = ::ibcollect::v1;
using namespace ibc::test;  // the test PKI and the collector these tests run

// Pages of two: every list below takes several requests.
InProcessCollector smallPages() {
  collector::ServiceOptions options;
  options.default_list_limit = 2;
  return InProcessCollector({}, ibc::test::TestCa::create(), options);
}

// Five snapshots of acme: node01..node05, node i in job 70i, uploaded by each node.
std::vector<std::string> uploadFive(InProcessCollector& collector) {
  std::vector<std::string> ids;
  for (int i = 1; i <= 5; ++i) {
    const std::string node = "node0" + std::to_string(i);
    const auto who = collector.ca().issue(agentSpec("acme", node));
    auto c = collector.connect(who);
    const auto env = signedSnapshot(who, node, "70" + std::to_string(i), 1000 + i);
    auto ack = c->call(uploadOf(env));
    EXPECT_TRUE(ack.ok() && ack->has_ack());
    ids.push_back(core::snapshotId(env));
  }
  return ids;
}

TEST(CollectorApi, ListsPageThroughToTheEndAndFetchReturnsTheUploadedBytes) {
  InProcessCollector collector = smallPages();
  const auto ids = uploadFive(collector);
  auto c = collector.connect(collector.ca().issue(supportSpec("alice")));
  CollectorApi api(*c);

  auto jobs = api.listJobs("acme");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 5u);  // three pages of two
  EXPECT_EQ(jobs->front().job_id(), "701");
  EXPECT_EQ(jobs->back().job_id(), "705");

  v1::ListSnapshotsRequest filter;
  filter.set_tenant("acme");
  auto infos = api.listSnapshots(filter);
  ASSERT_TRUE(infos.ok()) << infos.error().message;
  EXPECT_EQ(infos->size(), 5u);

  auto nodes = api.listNodes("acme", "703");
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(nodes->front().node(), "node03");

  auto got = api.fetchSnapshot(ids[2], "acme");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->info().node(), "node03");
  auto envelope = core::parseSignedEnvelope(got->signed_snapshot());
  ASSERT_TRUE(envelope.ok());
  EXPECT_EQ(core::snapshotId(*envelope), ids[2]);

  auto stats = api.stats();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->uploads_stored(), 5u);
}

TEST(CollectorApi, CasesAreCreatedUpdatedFetchedAndListedPageByPage) {
  InProcessCollector collector = smallPages();
  const auto ids = uploadFive(collector);
  auto c = collector.connect(collector.ca().issue(supportSpec("alice")));
  CollectorApi api(*c);
  std::vector<std::string> made;
  for (int i = 1; i <= 5; ++i) {
    v1::CreateCaseRequest q;
    q.set_tenant("acme");
    q.set_job_id("70" + std::to_string(i));
    q.set_title("case " + std::to_string(i));
    auto one = api.createCase(q);
    ASSERT_TRUE(one.ok()) << one.error().message;
    ASSERT_EQ(one->snapshot_ids_size(), 1);
    EXPECT_EQ(one->snapshot_ids(0), ids[i - 1]);
    made.push_back(one->case_id());
  }
  v1::UpdateCaseRequest change;
  change.set_case_id(made[0]);
  change.set_tenant("acme");
  change.set_add_note("looked at it");
  auto updated = api.updateCase(change);
  ASSERT_TRUE(updated.ok()) << updated.error().message;
  EXPECT_EQ(updated->revision(), 2u);
  auto fetched = api.fetchCase(made[0], "acme");
  ASSERT_TRUE(fetched.ok()) << fetched.error().message;
  ASSERT_EQ(fetched->notes_size(), 1);  // created without a note
  EXPECT_EQ(fetched->notes(0).text(), "looked at it");

  auto all = api.listCases({});
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(all->cases.size(), 5u);
  EXPECT_FALSE(all->more);
  auto first = api.listCases({}, 3);  // stops at the page that reaches 3
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->cases.size(), 4u);
  EXPECT_TRUE(first->more);
}

TEST(CollectorApi, ARejectionIsAnErrorNamingTheReasonAndTheConnectionGoesOn) {
  InProcessCollector collector;
  const auto ids = uploadFive(collector);
  auto c = collector.connect(collector.ca().issue(supportSpec("alice")));
  CollectorApi api(*c);
  auto missing = api.fetchSnapshot(ids[0], "globex");  // acme's snapshot, asked as globex's
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(isRejection(missing.error()));
  EXPECT_THAT(missing.error().message, HasSubstr("not_found"));
  auto still = api.fetchSnapshot(ids[0], "acme");
  EXPECT_TRUE(still.ok()) << still.error().message;

  // An agent certificate reads nothing.
  auto agent = collector.connect(collector.ca().issue(agentSpec("acme", "node01")));
  CollectorApi as_agent(*agent);
  auto jobs = as_agent.listJobs("acme");
  ASSERT_FALSE(jobs.ok());
  EXPECT_TRUE(isRejection(jobs.error()));
  EXPECT_THAT(jobs.error().message, HasSubstr("forbidden"));
}

TEST(CollectorApi, AConnectionTheCollectorClosedIsNotARejection) {
  InProcessCollector collector;
  auto c = collector.connect(collector.ca().issue(supportSpec("alice")));
  // A frame that is no CollectorRequest: the collector answers MALFORMED_REQUEST and closes.
  ASSERT_TRUE(c->sendBytes(std::string("\0\0\0\3abc", 7), std::chrono::seconds(5)).ok());
  ASSERT_TRUE(c->readFrame(std::chrono::seconds(5)).ok());
  CollectorApi api(*c);
  auto jobs = api.listJobs("acme");
  ASSERT_FALSE(jobs.ok());
  EXPECT_FALSE(isRejection(jobs.error())) << jobs.error().message;
}

}  // namespace
}  // namespace ibc::client
